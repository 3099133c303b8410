/* SPDX-License-Identifier: MIT */
/* A program built against an installed primalloc, as its users build
 * theirs: its header from the install, its library linked.  It checks
 * that malloc is primalloc's (pm_free of a malloc'd object would abort
 * otherwise) and that pm_stats_print writes JSON that counts the objects,
 * then prints "consumer ok" and the file that holds pm_malloc (the
 * executable itself when linked statically). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <primalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char text[1 << 16];
static size_t len;

static void keep(void *opaque, const char *buf, size_t n)
{
    (void)opaque;
    if (len + n < sizeof text) {
        memcpy(text + len, buf, n);
        len += n;
    }
}

static int fail(const char *what)
{
    fprintf(stderr, "consumer: %s\n", what);
    return 1;
}

int main(void)
{
    void *p = malloc(100);
    if (!p || pm_malloc_usable_size(p) < 100)
        return fail("malloc is not primalloc's");
    pm_free(p);
    void *held[64];
    for (int i = 0; i < 64; i++)
        held[i] = pm_malloc(1000);
    if (pm_stats_print(keep, NULL, PM_STATS_JSON) || !strstr(text, "\"allocator\": \"primalloc\""))
        return fail("no JSON statistics");
    char bin[64];
    snprintf(bin, sizeof bin, "\"size\": %zu, ", pm_malloc_usable_size(held[0]));
    const char *row = strstr(text, bin), *in_use = row ? strstr(row, "\"in_use\": ") : NULL;
    if (!in_use || atol(in_use + strlen("\"in_use\": ")) < 64)
        return fail("the JSON does not count 64 objects in use");
    for (int i = 0; i < 64; i++)
        pm_free(held[i]);
    Dl_info info;
    if (!dladdr((void *)pm_malloc, &info) || !info.dli_fname)
        return fail("dladdr knows no pm_malloc");
    printf("consumer ok %s\n", info.dli_fname);
    return 0;
}
