/* SPDX-License-Identifier: MIT */
/* phases: a program that changes what it allocates.  Each phase fills
 * `bytes` with objects of one size, writing one byte a page, then frees
 * them all; the next phase does the same with the next size, twelve sizes
 * from 24 B to 200 KB.  An allocator whose memory stays with the size it
 * was first used for grows by `bytes` a phase; one that passes freed
 * memory on reuses it, without new page faults while it keeps it
 * committed.  Reports the minor page faults and the virtual size left at
 * the end, with every object freed. */
#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define PAGE 4096

static const size_t sizes[] = {24, 40, 72, 136, 264, 520, 1032, 2056, 4104, 16400, 65560, 200000};

/* VmSize of this process, in KiB. */
static long vm_size_kib(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *line = strstr(buf, "VmSize:");
    return line ? strtol(line + 7, NULL, 10) : -1;
}

/* Objects of a phase are linked through their first word; the last byte
 * holds the object's number, checked before it is freed. */
static void phase(size_t size, size_t bytes, uint32_t seed, struct tally *t)
{
    void *head = NULL;
    size_t n = bytes / size;
    for (size_t i = 0; i < n; i++) {
        unsigned char *p = malloc(size);
        if (!p) {
            check_fail("malloc(%zu) returned NULL in phase of %zu", size, size);
            return;
        }
        for (size_t off = PAGE; off < size; off += PAGE)
            p[off] = 1;
        p[size - 1] = (unsigned char)(seed + i);
        *(void **)p = head;
        head = p;
        tally_alloc(t, seed + (uint32_t)i);
    }
    for (size_t i = n; i-- > 0;) {
        unsigned char *p = head;
        if (p[size - 1] != (unsigned char)(seed + i))
            check_fail("object %p of %zu bytes was overwritten while live", (void *)p, size);
        head = *(void **)p;
        free(p);
        tally_free(t, seed + (uint32_t)i);
    }
}

int main(int argc, char **argv)
{
    args_init(argc, argv, "bytes=512m");
    long bytes = arg_long("bytes", 512L << 20);
    args_done();
    if (bytes < (long)sizes[sizeof sizes / sizeof sizes[0] - 1]) {
        fprintf(stderr, "need bytes >= %zu\n", sizes[sizeof sizes / sizeof sizes[0] - 1]);
        return 2;
    }
    struct tally t = {0};
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    uint64_t t0 = now_ns();
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        phase(sizes[k], (size_t)bytes, (uint32_t)k << 24, &t);
    double secs = (double)(now_ns() - t0) / 1e9;
    getrusage(RUSAGE_SELF, &after);

    tally_merge(&t);
    metric("minor_faults", (double)(after.ru_minflt - before.ru_minflt), "1");
    metric("vm_size_end", (double)vm_size_kib() / 1024, "MiB");
    metric("phases_per_s", (double)(sizeof sizes / sizeof sizes[0]) / secs, "1/s");
    return bench_finish();
}
