/* SPDX-License-Identifier: MIT */
/* Text without stdio: numerals in both bases at their extremes, lines
 * appended at a pointer and cut at their end, and pieces handed to a
 * sink in order, none larger than the buffer. */
#include <stdint.h>
#include <string.h>
#include "text.h"
#include "unit.h"

static void test_append(void)
{
    char line[64];
    char *o = pm_text_str(line, "at ");
    o = pm_text_hex(o, 0);
    o = pm_text_str(o, " ");
    o = pm_text_hex(o, UINTPTR_MAX);
    o = pm_text_str(o, " ");
    o = pm_text_dec(o, 0);
    o = pm_text_str(o, " ");
    o = pm_text_dec(o, UINT64_MAX);
    *o = 0;
    CHECK(!strcmp(line, "at 0x0 0xffffffffffffffff 0 18446744073709551615"));

    memset(line, 'x', sizeof line);
    o = pm_text_str_cut(line, line + 4, "primalloc");
    CHECK(o == line + 4 && !memcmp(line, "primx", 5));
    o = pm_text_str_cut(line, line + 4, "pm");
    CHECK(o == line + 2 && !memcmp(line, "pmimx", 5));
    CHECK(pm_text_str_cut(line, line, "pm") == line && line[0] == 'p');
}

struct gathered {
    char all[256];
    size_t n, largest;
};

static void gather(void *opaque, const char *buf, size_t len)
{
    struct gathered *g = opaque;
    CHECK(g->n + len < sizeof g->all);
    memcpy(g->all + g->n, buf, len);
    g->n += len;
    g->largest = len > g->largest ? len : g->largest;
}

static void test_sink(void)
{
    char buf[5], digits[24];
    struct gathered g = {{0}, 0, 0};
    struct pm_text t = {gather, &g, buf, sizeof buf, 0};
    pm_text_put(&t, "0x");
    pm_text_put(&t, pm_text_numeral(digits, 0xbeef, 16));
    pm_text_put(&t, " is ");
    pm_text_put(&t, pm_text_numeral(digits, 0xbeef, 10));
    pm_text_flush(&t);
    pm_text_flush(&t);
    CHECK(g.n == strlen("0xbeef is 48879") && !memcmp(g.all, "0xbeef is 48879", g.n));
    CHECK(g.largest == sizeof buf);
}

int main(void)
{
    test_append();
    test_sink();
    printf("text ok\n");
    return 0;
}
