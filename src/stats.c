/* Statistics: the pm_get_stats counters and glibc's mallinfo family. */
#define _GNU_SOURCE
#include "stats.h"
#include <malloc.h>
#include <unistd.h>
#include "layout.h"
#include "primalloc.h"

#define PM_API __attribute__((visibility("default")))

struct pm_counters pm_stats_global;

PM_API void pm_get_stats(struct pm_stats *out)
{
    out->chunks = __atomic_load_n(&pm_stats_global.chunks, __ATOMIC_RELAXED);
    out->folios_in_use = __atomic_load_n(&pm_stats_global.folios_in_use, __ATOMIC_RELAXED);
    out->huge_bytes = __atomic_load_n(&pm_stats_global.huge_bytes, __ATOMIC_RELAXED);
}

#ifdef PM_STD_NAMES
PM_API struct mallinfo2 mallinfo2(void)
{
    struct pm_stats s;
    pm_get_stats(&s);
    struct mallinfo2 m = {0};
    m.arena = s.chunks * PM_CHUNK;
    m.hblkhd = s.huge_bytes;
    m.hblks = s.huge_bytes ? 1 : 0;
    return m;
}

PM_API struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo m = {0};
    m.arena = (int)m2.arena;
    m.hblkhd = (int)m2.hblkhd;
    m.hblks = (int)m2.hblks;
    return m;
}

static char *put_dec(char *o, const char *label, size_t v)
{
    while (*label)
        *o++ = *label++;
    char digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10));
    while (n)
        *o++ = digits[--n];
    return o;
}

PM_API void malloc_stats(void)
{
    struct pm_stats s;
    pm_get_stats(&s);
    char buf[160], *o = buf;
    o = put_dec(o, "primalloc: chunks ", s.chunks);
    o = put_dec(o, ", folios in use ", s.folios_in_use);
    o = put_dec(o, ", huge bytes ", s.huge_bytes);
    *o++ = '\n';
    ssize_t ignored = write(2, buf, (size_t)(o - buf));
    (void)ignored;
}
#endif
