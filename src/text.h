/* SPDX-License-Identifier: MIT */
/* Text written without stdio or malloc, in buffers the caller provides
 * (on its stack), two ways: pieces gathered by struct pm_text and handed
 * to a sink each time its buffer fills; or a line appended at a pointer,
 * each call returning the line's new end.
 * Promises: the sink receives the text in order, in pieces of at most the
 * buffer's size, and only from pm_text_put and pm_text_flush; the
 * appending calls write nothing past the room their caller leaves (or,
 * for pm_text_str_cut, past end), and no NUL. */
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

/* s, "0x" and v's hexadecimal digits, or v's decimal ones, appended at o;
 * each returns the new end.  Safe in a signal handler. */
char *pm_text_str(char *o, const char *s);
char *pm_text_hex(char *o, uintptr_t v);
char *pm_text_dec(char *o, uint64_t v);

/* s appended at o but cut at end: the new end, end at most. */
char *pm_text_str_cut(char *o, char *end, const char *s);

#endif
