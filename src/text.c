/* SPDX-License-Identifier: MIT */
#include "text.h"

void pm_text_flush(struct pm_text *t)
{
    if (t->n)
        t->sink(t->opaque, t->buf, t->n);
    t->n = 0;
}

void pm_text_put(struct pm_text *t, const char *s)
{
    for (; *s; s++) {
        if (t->n == t->cap)
            pm_text_flush(t);
        t->buf[t->n++] = *s;
    }
}

const char *pm_text_numeral(char digits[24], uint64_t v, unsigned base)
{
    char *d = digits + 23;
    *d = 0;
    do
        *--d = "0123456789abcdef"[v % base];
    while ((v /= base));
    return d;
}

char *pm_text_str(char *o, const char *s)
{
    while (*s)
        *o++ = *s++;
    return o;
}

char *pm_text_hex(char *o, uintptr_t v)
{
    char digits[24];
    return pm_text_str(pm_text_str(o, "0x"), pm_text_numeral(digits, v, 16));
}

char *pm_text_dec(char *o, uint64_t v)
{
    char digits[24];
    return pm_text_str(o, pm_text_numeral(digits, v, 10));
}

char *pm_text_str_cut(char *o, char *end, const char *s)
{
    while (*s && o < end)
        *o++ = *s++;
    return o;
}
