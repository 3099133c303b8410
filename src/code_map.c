/* SPDX-License-Identifier: MIT */
#include "code_map.h"
#include "os.h"
#include "text.h"

/* A maps line: "START-END PERMS OFFSET DEV INODE PATH".  Longer lines are
 * cut: the path is all that can be lost. */
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

/* Whether line (NUL-terminated) maps addr from a file; if so, fills the
 * answer. */
static int holds(const char *line, uintptr_t addr, char *name, size_t room, uintptr_t *in_file)
{
    const char *s = line;
    uintptr_t lo = hex(&s);
    if (*s++ != '-')
        return 0;
    uintptr_t hi = hex(&s);
    if (addr < lo || addr >= hi)
        return 0;
    s = next_field(s); /* perms */
    s = next_field(s); /* offset */
    uintptr_t offset = hex(&s);
    s = next_field(next_field(next_field(s))); /* dev, inode: the path */
    if (*s != '/')
        return 0;
    *pm_text_str_cut(name, name + room - 1, s) = 0;
    *in_file = addr - lo + offset;
    return 1;
}

int pm_code_place(uintptr_t addr, char *name, size_t room, uintptr_t *in_file)
{
    int fd = pm_os_open("/proc/self/maps");
    if (fd < 0)
        return 0;
    char buf[READ], line[LINE];
    size_t len = 0;
    long n;
    int found = 0;
    while (!found && (n = pm_os_read(fd, buf, sizeof buf)) > 0) {
        for (long i = 0; i < n && !found; i++) {
            if (buf[i] != '\n') {
                if (len < LINE - 1)
                    line[len++] = buf[i];
                continue;
            }
            line[len] = 0;
            len = 0;
            found = holds(line, addr, name, room, in_file);
        }
    }
    pm_os_close(fd);
    return found;
}

char *pm_code_put(char *o, uintptr_t addr)
{
    char name[160];
    uintptr_t in_file;
    if (!pm_code_place(addr, name, sizeof name, &in_file))
        return pm_text_hex(o, addr);
    o = pm_text_str(o, name);
    o = pm_text_str(o, "+");
    o = pm_text_hex(o, in_file);
    o = pm_text_str(o, " (");
    o = pm_text_hex(o, addr);
    return pm_text_str(o, ")");
}
