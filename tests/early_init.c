/* SPDX-License-Identifier: MIT */
/* Allocation before anything has been initialised: the executable's
 * preinit_array runs before any constructor, primalloc's included (the
 * shared library's, or those linked in from the static one), so the
 * allocator must set itself up on its first call.  Objects made then must
 * stay intact and freeable from main. */
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "check.h"

#define EARLY 16

static void *early[EARLY];
static size_t early_size[EARLY];
static int early_ran;

static void before_constructors(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    for (int i = 0; i < EARLY; i++) {
        /* Every category, from 1 byte to 8 MiB, and the other entry points. */
        size_t n = (size_t)1 << (i * 23 / (EARLY - 1));
        void *p;
        if (i % 4 == 1)
            p = API(calloc)(1, n);
        else if (i % 4 == 2)
            p = API(aligned_alloc)(64, n);
        else
            p = API(malloc)(n);
        if (!p)
            return;
        if (i % 4 == 3) {
            p = API(realloc)(p, n * 3);
            if (!p)
                return;
        }
        fill_pattern(p, n, i);
        early[i] = p;
        early_size[i] = n;
        API(free)(API(malloc)(n));
    }
    early_ran = 1;
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit)(int, char **, char **) = before_constructors;

int main(void)
{
    CHECK_MSG(early_ran, "allocation in preinit_array failed");
    for (int i = 0; i < EARLY; i++) {
        CHECK_PATTERN(early[i], early_size[i], i);
        API(free)(early[i]);
    }
    return 0;
}
