/* SPDX-License-Identifier: MIT */
#include "proc_maps.h"
#include "os.h"

/* A line: "START-END PERMS OFFSET DEV INODE PATH". */
#define LINE 384
#define READ 512

/* The hexadecimal number at *s, moving *s past it. */
static uintptr_t hex(const char **s)
{
    uintptr_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
        if (d == 16)
            return v;
        v = v << 4 | d;
    }
}

/* The field after the next run of spaces. */
static const char *next_field(const char *s)
{
    while (*s && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    return s;
}

/* line (NUL-terminated) as a mapping, handed to fn; 0 for a line that is
 * not one. */
static int parse(char *line, int (*fn)(void *ctx, const struct pm_mapping *m), void *ctx)
{
    const char *s = line;
    struct pm_mapping m;
    m.lo = hex(&s);
    if (*s++ != '-')
        return 0;
    m.hi = hex(&s);
    m.perms = s = next_field(s);
    s = next_field(s);
    m.offset = hex(&s);
    m.path = next_field(next_field(next_field(s))); /* dev, inode: the path */
    line[m.perms - line + 4] = 0;
    return fn(ctx, &m);
}

int pm_maps_each(int (*fn)(void *ctx, const struct pm_mapping *m), void *ctx)
{
    int fd = pm_os_open("/proc/self/maps");
    if (fd < 0)
        return -1;
    char buf[READ], line[LINE];
    size_t len = 0;
    long n;
    int stop = 0;
    while (!stop && (n = pm_os_read(fd, buf, sizeof buf)) > 0) {
        for (long i = 0; i < n && !stop; i++) {
            if (buf[i] != '\n') {
                if (len < LINE - 1)
                    line[len++] = buf[i];
                continue;
            }
            line[len] = 0;
            len = 0;
            stop = parse(line, fn, ctx);
        }
    }
    pm_os_close(fd);
    return stop;
}
