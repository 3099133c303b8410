/* SPDX-License-Identifier: MIT */
/* A fully static program (-static) with the static library: its malloc
 * is primalloc's (pm_free of what malloc returned would abort otherwise),
 * also for what the C library allocates for it (strdup), and in threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "primalloc.h"

static void *churn(void *arg)
{
    for (size_t i = 0; i < 20000; i++) {
        unsigned char *p = malloc(i % 3000 + 1);
        CHECK(p != NULL);
        p[i % 3000] = (unsigned char)i;
        free(p);
    }
    return arg;
}

int main(void)
{
    pm_free(malloc(100));
    char *s = strdup("static");
    CHECK(s != NULL && !strcmp(s, "static"));
    pm_free(s);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], 0, churn, 0) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(t[i], 0) == 0);
    return 0;
}
