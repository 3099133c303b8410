/* SPDX-License-Identifier: MIT */
#include "code_map.h"
#include "os.h"
#include "proc_maps.h"
#include "text.h"

struct place {
    uintptr_t addr;
    char *name;
    size_t room;
    uintptr_t *in_file;
};

/* 1 when m maps the address from a file, the answer filled; -1 when m
 * maps it otherwise; 0 when m does not hold it. */
static int holds(void *ctx, const struct pm_mapping *m)
{
    struct place *q = ctx;
    if (q->addr < m->lo || q->addr >= m->hi)
        return 0;
    if (m->path[0] != '/')
        return -1;
    *pm_text_str_cut(q->name, q->name + q->room - 1, m->path) = 0;
    *q->in_file = q->addr - m->lo + m->offset;
    return 1;
}

int pm_code_place(uintptr_t addr, char *name, size_t room, uintptr_t *in_file)
{
    struct place q = {addr, name, room, in_file};
    return pm_maps_each(holds, &q) == 1;
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
