/* SPDX-License-Identifier: MIT */
/* Reports: pm_stats_print, malloc_stats and malloc_info.  Each takes a
 * snapshot first and formats it afterwards into a buffer on the stack,
 * handed to the sink whenever it fills: no lock is held while the sink
 * runs, and numbers are formatted here, not by stdio. */
#define _GNU_SOURCE
#include "report.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include "layout.h"
#include "options.h"
#include "os.h"
#include "primalloc.h"
#include "stats.h"
#include "text.h"

_Static_assert(PM_REPORT_TABLE == PM_STATS_TABLE && PM_REPORT_JSON == PM_STATS_JSON,
               "pm_stats_print's formats are the report's");

struct out {
    struct pm_text t;
    char buf[PM_REPORT_PIECE];
};

static void put(struct out *o, const char *s)
{
    pm_text_put(&o->t, s);
}

static void put_spaces(struct out *o, int n)
{
    for (; n > 0; n--)
        put(o, " ");
}

/* v in decimal, right-aligned in `width` columns. */
static void put_num(struct out *o, uint64_t v, int width)
{
    char s[24];
    const char *d = pm_text_numeral(s, v, 10);
    put_spaces(o, width - (int)(s + sizeof s - 1 - d));
    put(o, d);
}

/* s left-aligned in `width` columns. */
static void put_left(struct out *o, const char *s, int width)
{
    put(o, s);
    int n = 0;
    while (s[n])
        n++;
    put_spaces(o, width - n);
}

/* Bytes as people read them: one decimal and a binary unit (B, KiB, MiB,
 * ...), right-aligned in 10 columns. */
static void put_size(struct out *o, uint64_t v)
{
    static const char units[][4] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    uint64_t scale = 1;
    while (u + 1 < sizeof units / sizeof *units && v >= scale * 1024) {
        scale *= 1024;
        u++;
    }
    uint64_t tenths = (v * 10 + scale / 2) / scale;
    if (!u) {
        put_num(o, v, 6);
    } else {
        put_num(o, tenths / 10, 4);
        put(o, ".");
        put_num(o, tenths % 10, 1);
    }
    put(o, " ");
    put_left(o, units[u], 3);
}

#define NAME(name, what) #name,
#define WHAT(name, what) what,
static const char *const bin_event_names[] = {PM_BIN_EVENTS(NAME)};
static const char *const event_names[] = {PM_EVENTS(NAME)};
static const char *const bin_event_what[] = {PM_BIN_EVENTS(WHAT)};
static const char *const event_what[] = {PM_EVENTS(WHAT)};
#undef NAME
#undef WHAT

static const char *const kinds[] = {[PM_SMALL] = "small", [PM_MEDIUM] = "medium", [PM_POW2] = "pow2",
                                    [PM_LARGE] = "large"};

/* The totals every format but the XML gives, in bytes. */
struct amount {
    const char *name;
    size_t value;
    const char *what;
};
#define NAMOUNTS 10

static void amounts(const struct pm_totals *t, struct amount a[NAMOUNTS])
{
    struct amount all[NAMOUNTS] = {
        {"allocated", t->allocated, "objects in use: their slots, huge objects' pages"},
        {"active", t->active, "folios that hold objects, and huge objects"},
        {"dirty", t->dirty, "empty folios and free runs that may be committed"},
        {"committed", t->committed, "active + dirty: all that may be committed"},
        {"metadata", t->metadata, "bookkeeping: tables, chunk headers, caches"},
        {"mapped", t->mapped, "address space of chunks"},
        {"pooled", t->pooled, "free chunk runs, part of mapped"},
        {"huge", t->huge_bytes, "huge objects, part of allocated"},
        {"peak_active", t->peak_active, "high-water mark of active"},
        {"peak_mapped", t->peak_mapped, "high-water mark of mapped"},
    };
    for (int i = 0; i < NAMOUNTS; i++)
        a[i] = all[i];
}

/* A process-wide count of a bin event. */
static uint64_t bin_event_total(const struct pm_snapshot *s, unsigned e)
{
    uint64_t n = 0;
    for (unsigned bin = 0; bin < PM_NBINS; bin++)
        n += s->events.bins[bin][e];
    return n;
}

static int bin_used(const struct pm_snapshot *s, unsigned bin)
{
    const struct pm_bin_stats *b = &s->bins[bin];
    uint64_t events = 0;
    for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
        events |= s->events.bins[bin][e];
    return b->folios || b->cached_thread || b->cached_cpu || b->cached_global || events;
}

static void put_event_line(struct out *o, const char *name, uint64_t v, const char *what)
{
    put(o, "  ");
    put_left(o, name, 14);
    put_num(o, v, 14);
    put(o, "  ");
    put(o, what);
    put(o, "\n");
}

static void table(struct out *o, const struct pm_snapshot *s)
{
    put(o, "primalloc " PRIMALLOC_VERSION " statistics: pid ");
    put_num(o, (uint64_t)pm_os_pid(), 0);
    put(o, ", ");
    put_num(o, s->total.threads, 0);
    put(o, s->total.threads == 1 ? " thread" : " threads");
    put(o, " with a cache\n\nbytes\n");
    struct amount a[NAMOUNTS];
    amounts(&s->total, a);
    for (int i = 0; i < NAMOUNTS; i++) {
        put(o, "  ");
        put_left(o, a[i].name, 14);
        put_num(o, a[i].value, 14);
        put(o, "  ");
        put_size(o, a[i].value);
        put(o, "  ");
        put(o, a[i].what);
        put(o, "\n");
    }
    put(o, "\nsettings\n");
    for (int i = 0; i < PM_NOPTIONS; i++) {
        char digits[24];
        int quoted;
        put(o, "  ");
        put_left(o, pm_option_name(i), 24);
        put(o, pm_option_shown(i, digits, &quoted));
        put(o, "\n");
    }
    put(o, "\ncounts\n");
    put_event_line(o, "huge_objects", s->total.huge_objects, "huge objects in use");
    for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
        put_event_line(o, bin_event_names[e], bin_event_total(s, e), bin_event_what[e]);
    for (unsigned e = 0; e < PM_NEVENTS; e++)
        put_event_line(o, event_names[e], s->events.process[e], event_what[e]);

    put(o, "\nbins: objects in use, cached by threads, CPUs and the global level, and free in\n"
           "their folios; folios carved and used; bytes committed and dirty; counts\n");
    static const char *const heads[] = {"in_use", "thread", "cpu", "global", "free", "folios",
                                        "used", "chunks", "committed", "dirty"};
    static const int widths[] = {10, 8, 8, 8, 10, 8, 8, 7, 12, 11};
    put(o, "  bin     size  kind  ");
    for (unsigned i = 0; i < sizeof heads / sizeof *heads; i++) {
        put_spaces(o, widths[i] - (int)__builtin_strlen(heads[i]));
        put(o, heads[i]);
    }
    for (unsigned e = 0; e < PM_NBIN_EVENTS; e++) {
        put(o, "  ");
        put(o, bin_event_names[e]);
    }
    put(o, "\n");
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        if (!bin_used(s, bin))
            continue;
        const struct pm_bin_stats *b = &s->bins[bin];
        put_num(o, bin, 5);
        put_num(o, pm_bins[bin].size, 9);
        put(o, "  ");
        put_left(o, kinds[pm_bins[bin].kind], 6);
        const size_t v[] = {b->in_use, b->cached_thread, b->cached_cpu, b->cached_global, b->free,
                            b->folios, b->folios_in_use, b->chunks, b->committed, b->dirty};
        for (unsigned i = 0; i < sizeof v / sizeof *v; i++)
            put_num(o, v[i], widths[i]);
        for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
            put_num(o, s->events.bins[bin][e], 2 + (int)__builtin_strlen(bin_event_names[e]));
        put(o, "\n");
    }
}

/* "name": v, with a comma before every member but an object's first. */
static void json_num(struct out *o, int *first, const char *name, uint64_t v)
{
    put(o, *first ? "\"" : ", \"");
    *first = 0;
    put(o, name);
    put(o, "\": ");
    put_num(o, v, 0);
}

/* s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(struct out *o, const char *s)
{
    char piece[8];
    put(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            piece[0] = '\\', piece[1] = (char)c, piece[2] = 0;
        } else if (c < 0x20) {
            __builtin_memcpy(piece, "\\u00", 4);
            piece[4] = "0123456789abcdef"[c >> 4], piece[5] = "0123456789abcdef"[c & 15], piece[6] = 0;
        } else {
            piece[0] = (char)c, piece[1] = 0;
        }
        put(o, piece);
    }
    put(o, "\"");
}

/* "settings": {"NAME": value, ...}, each setting in force. */
static void json_settings(struct out *o)
{
    put(o, ",\n \"settings\": {");
    for (int i = 0; i < PM_NOPTIONS; i++) {
        char digits[24];
        int quoted;
        const char *v = pm_option_shown(i, digits, &quoted);
        put(o, i ? ", " : "");
        json_string(o, pm_option_name(i));
        put(o, ": ");
        if (quoted)
            json_string(o, v);
        else
            put(o, v);
    }
    put(o, "}");
}

static void json(struct out *o, const struct pm_snapshot *s)
{
    int first = 1;
    put(o, "{\"allocator\": \"primalloc\", \"version\": \"" PRIMALLOC_VERSION "\", ");
    json_num(o, &first, "pid", (uint64_t)pm_os_pid());
    json_num(o, &first, "threads", s->total.threads);
    json_num(o, &first, "huge_objects", s->total.huge_objects);
    json_settings(o);
    put(o, ",\n \"bytes\": {");
    struct amount a[NAMOUNTS];
    amounts(&s->total, a);
    first = 1;
    for (int i = 0; i < NAMOUNTS; i++)
        json_num(o, &first, a[i].name, a[i].value);
    put(o, "},\n \"events\": {");
    first = 1;
    for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
        json_num(o, &first, bin_event_names[e], bin_event_total(s, e));
    for (unsigned e = 0; e < PM_NEVENTS; e++)
        json_num(o, &first, event_names[e], s->events.process[e]);
    put(o, "},\n \"bins\": [");
    const char *sep = "\n  {";
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_bin_stats *b = &s->bins[bin];
        if (!bin_used(s, bin))
            continue;
        put(o, sep);
        sep = ",\n  {";
        first = 1;
        json_num(o, &first, "bin", bin);
        json_num(o, &first, "size", pm_bins[bin].size);
        put(o, ", \"kind\": \"");
        put(o, kinds[pm_bins[bin].kind]);
        put(o, "\"");
        json_num(o, &first, "in_use", b->in_use);
        put(o, ", \"cached\": {");
        int inner = 1;
        json_num(o, &inner, "thread", b->cached_thread);
        json_num(o, &inner, "cpu", b->cached_cpu);
        json_num(o, &inner, "global", b->cached_global);
        put(o, "}");
        json_num(o, &first, "free", b->free);
        json_num(o, &first, "folios", b->folios);
        json_num(o, &first, "folios_in_use", b->folios_in_use);
        json_num(o, &first, "chunks", b->chunks);
        json_num(o, &first, "committed", b->committed);
        json_num(o, &first, "dirty", b->dirty);
        put(o, ", \"events\": {");
        inner = 1;
        for (unsigned e = 0; e < PM_NBIN_EVENTS; e++)
            json_num(o, &inner, bin_event_names[e], s->events.bins[bin][e]);
        put(o, "}}");
    }
    put(o, "\n ]}\n");
}

static void xml_attr(struct out *o, const char *name, uint64_t v)
{
    put(o, " ");
    put(o, name);
    put(o, "=\"");
    put_num(o, v, 0);
    put(o, "\"");
}

static void xml_total(struct out *o, const char *type, uint64_t count, uint64_t size)
{
    put(o, "<total type=\"");
    put(o, type);
    put(o, "\"");
    xml_attr(o, "count", count);
    xml_attr(o, "size", size);
    put(o, "/>\n");
}

static void xml_system(struct out *o, const struct pm_totals *t)
{
    static const char *const lines[] = {"<system type=\"current\"", "<system type=\"max\"",
                                        "<aspace type=\"total\"", "<aspace type=\"mprotect\""};
    const size_t sizes[] = {t->mapped, t->peak_mapped, t->mapped, t->mapped};
    for (int i = 0; i < 4; i++) {
        put(o, lines[i]);
        xml_attr(o, "size", sizes[i]);
        put(o, "/>\n");
    }
}

/* glibc's shape: one heap, the bins, whose free objects are listed by
 * size; cached ones count as glibc's "fast" blocks, those free in their
 * folios as the "rest"; huge objects as its mmapped chunks; the system's
 * memory is the chunks' address space. */
static void xml(struct out *o, const struct pm_snapshot *s)
{
    uint64_t cached = 0, cached_bytes = 0, free = 0, free_bytes = 0;
    put(o, "<malloc version=\"1\">\n<heap nr=\"0\">\n<sizes>\n");
    for (unsigned bin = 0; bin < PM_NBINS; bin++) {
        const struct pm_bin_stats *b = &s->bins[bin];
        uint64_t size = pm_bins[bin].size, c = b->cached_thread + b->cached_cpu + b->cached_global;
        cached += c;
        cached_bytes += c * size;
        free += b->free;
        free_bytes += b->free * size;
        if (!c && !b->free)
            continue;
        put(o, "  <size");
        xml_attr(o, "from", bin ? pm_bins[bin - 1].size + 1 : 1);
        xml_attr(o, "to", size);
        xml_attr(o, "total", (c + b->free) * size);
        xml_attr(o, "count", c + b->free);
        put(o, "/>\n");
    }
    put(o, "</sizes>\n");
    xml_total(o, "fast", cached, cached_bytes);
    xml_total(o, "rest", free, free_bytes);
    xml_system(o, &s->total);
    put(o, "</heap>\n");
    xml_total(o, "fast", cached, cached_bytes);
    xml_total(o, "rest", free, free_bytes);
    xml_total(o, "mmap", s->total.huge_objects, s->total.huge_bytes);
    xml_system(o, &s->total);
    put(o, "</malloc>\n");
}

int pm_report(pm_report_sink *sink, void *opaque, int format)
{
    static void (*const formats[])(struct out *, const struct pm_snapshot *) = {
        [PM_REPORT_TABLE] = table, [PM_REPORT_JSON] = json, [PM_REPORT_XML] = xml};
    if (format < 0 || format >= (int)(sizeof formats / sizeof *formats)) {
        errno = EINVAL;
        return -1;
    }
    struct pm_snapshot s;
    pm_stats_take(&s);
    struct out o;
    o.t = (struct pm_text){sink, opaque, o.buf, sizeof o.buf, 0};
    formats[format](&o, &s);
    pm_text_flush(&o.t);
    return 0;
}

void pm_report_to_fd(void *fd, const char *buf, size_t len)
{
    pm_os_write(*(int *)fd, buf, len);
}

PM_API int pm_stats_print(void (*write_fn)(void *, const char *, size_t), void *opaque, int format)
{
    int err = 2;
    if (format != PM_STATS_TABLE && format != PM_STATS_JSON)
        format = -1;
    return write_fn ? pm_report(write_fn, opaque, format) : pm_report(pm_report_to_fd, &err, format);
}

#ifdef PM_STD_NAMES
PM_API void malloc_stats(void)
{
    int err = 2;
    pm_report(pm_report_to_fd, &err, PM_REPORT_TABLE);
}

/* The caller's FILE may allocate its buffer on the first write: the
 * report holds no lock by then. */
static void to_file(void *fp, const char *buf, size_t len)
{
    fwrite(buf, 1, len, fp);
}

PM_API int malloc_info(int options, FILE *fp)
{
    if (options) {
        errno = EINVAL;
        return -1;
    }
    return pm_report(to_file, fp, PM_REPORT_XML);
}
#endif
