/* SPDX-License-Identifier: MIT */
#include "exit_report.h"
#include "options.h"
#include "os.h"
#include "report.h"
#include "text.h"

static int format = -1;      /* none */
static struct pm_os_file err; /* stderr's file, when the report goes there */
/* The path (options.h keeps a copy: a program may rewrite its
 * environment's strings); "" for stderr. */
static const char *path = "";

static void warn(const char *what)
{
    char line[160];
    char *o = pm_text_str_cut(pm_text_str(line, "primalloc: "), line + sizeof line - 1, what);
    *o++ = '\n';
    pm_os_write(2, line, (size_t)(o - line));
}

void pm_exit_report_init(void)
{
    uint64_t f = pm_option(PM_OPT_STATS);
    path = pm_option_text(PM_OPT_STATS_FILE);
    if (f == PM_EXIT_NONE && !path[0])
        return;
    if (!path[0] && !pm_os_file_keep(2, &err))
        return;
    format = f == PM_EXIT_TABLE ? PM_REPORT_TABLE : PM_REPORT_JSON;
}

/* The path with each %p replaced by the process id; 0 if too long. */
static int expand(char *out, size_t room)
{
    char digits[24];
    const char *pid = pm_text_numeral(digits, (uint64_t)pm_os_pid(), 10);
    char *o = out, *end = out + room;
    for (const char *s = path; *s && o < end; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            o = pm_text_str_cut(o, end, pid);
            s++;
        } else {
            *o++ = *s;
        }
    }
    if (o == end)
        return 0;
    *o = 0;
    return 1;
}

__attribute__((destructor)) static void report_at_exit(void)
{
    if (format < 0)
        return;
    if (!path[0]) {
        int fd = pm_os_file_fd(&err);
        if (fd >= 0)
            pm_report(pm_report_to_fd, &fd, format);
        return;
    }
    char name[PM_OPTION_TEXT_BYTES + 64];
    int fd = expand(name, sizeof name) ? pm_os_create(name) : -1;
    if (fd < 0) {
        warn("cannot create PRIMALLOC_STATS_FILE; no report at exit");
        return;
    }
    pm_report(pm_report_to_fd, &fd, format);
    pm_os_close(fd);
}
