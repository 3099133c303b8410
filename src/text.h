/* SPDX-License-Identifier: MIT */
/* Text written without stdio or malloc: pieces gathered in a buffer the
 * caller provides (on its stack) and handed to a sink each time it fills.
 * Promises: the sink receives the text in order, in pieces of at most the
 * buffer's size, and only from pm_text_put and pm_text_flush. */
#ifndef PM_TEXT_H
#define PM_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct pm_text {
    void (*sink)(void *opaque, const char *buf, size_t len);
    void *opaque;
    char *buf;
    size_t cap, n; /* the buffer's size, and the bytes held */
};

void pm_text_put(struct pm_text *t, const char *s);

/* Hands what the buffer holds to the sink. */
void pm_text_flush(struct pm_text *t);

/* v in base (up to 16) as a NUL-terminated numeral ending at digits[23];
 * returns its first digit. */
const char *pm_text_numeral(char digits[24], uint64_t v, unsigned base);

#endif
