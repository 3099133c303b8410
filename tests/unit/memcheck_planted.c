/* SPDX-License-Identifier: MIT */
/* A program with one planted leak and one planted read of freed memory,
 * for memcheck_test.sh.  Other blocks are used correctly and freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *keep = malloc(40);
    strcpy(keep, "fine");
    char *leak = malloc(4321);
    memset(leak, 1, 4321);
    leak = NULL;
    int *gone = malloc(100 * sizeof(int));
    gone[10] = 7;
    int *volatile stale = gone; /* hides the planted bug from the compiler */
    free(gone);
    int seen = stale[10];
    char *big = calloc(1, 3 << 20);
    char *moved = realloc(keep, 20000);
    printf("%s %d %d\n", moved, seen > 0, big[12345]);
    free(moved);
    free(big);
    return 0;
}
