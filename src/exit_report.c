/* SPDX-License-Identifier: MIT */
#include "exit_report.h"
#include "os.h"
#include "report.h"
#include "text.h"

#define PATH_BYTES 4096

static int format = -1;      /* none */
static struct pm_os_file err; /* stderr's file, when the report goes there */
/* The path, copied: a program may rewrite its environment's strings. */
static char path[PATH_BYTES];

static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void warn(const char *what)
{
    char line[160], *o = line;
    for (const char *s = "primalloc: "; *s; s++)
        *o++ = *s;
    while (*what && o < line + sizeof line - 1)
        *o++ = *what++;
    *o++ = '\n';
    pm_os_write(2, line, (size_t)(o - line));
}

/* An empty variable counts as unset. */
static const char *env(const char *name)
{
    const char *v = pm_os_env(name);
    return v && *v ? v : 0;
}

void pm_exit_report_init(void)
{
    const char *f = env("PRIMALLOC_STATS"), *p = env("PRIMALLOC_STATS_FILE");
    if (!f && !p)
        return;
    int want = !f || same(f, "json") ? PM_REPORT_JSON : same(f, "table") ? PM_REPORT_TABLE : -1;
    if (want < 0) {
        warn("PRIMALLOC_STATS must be table or json; no report at exit");
        return;
    }
    if (p) {
        size_t n = 0;
        while (p[n] && n < sizeof path)
            n++;
        if (n == sizeof path) {
            warn("PRIMALLOC_STATS_FILE too long; no report at exit");
            return;
        }
        __builtin_memcpy(path, p, n + 1);
    } else if (!pm_os_file_keep(2, &err)) {
        return;
    }
    format = want;
}

/* The path with each %p replaced by the process id; 0 if too long. */
static int expand(char *out, size_t room)
{
    char digits[24];
    const char *pid = pm_text_numeral(digits, (uint64_t)pm_os_pid(), 10);
    size_t n = 0;
    for (const char *s = path; *s && n < room; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            for (const char *c = pid; *c && n < room; c++)
                out[n++] = *c;
            s++;
        } else {
            out[n++] = *s;
        }
    }
    if (n == room)
        return 0;
    out[n] = 0;
    return 1;
}

__attribute__((destructor)) static void report_at_exit(void)
{
    if (format < 0)
        return;
    if (!path[0]) {
        int fd = pm_os_file_is(err.fd, &err) ? err.fd : pm_os_file_is(2, &err) ? 2 : -1;
        if (fd >= 0)
            pm_report(pm_report_to_fd, &fd, format);
        return;
    }
    char name[PATH_BYTES + 64];
    int fd = expand(name, sizeof name) ? pm_os_create(name) : -1;
    if (fd < 0) {
        warn("cannot create PRIMALLOC_STATS_FILE; no report at exit");
        return;
    }
    pm_report(pm_report_to_fd, &fd, format);
    pm_os_close(fd);
}
