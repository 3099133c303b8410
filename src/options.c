/* SPDX-License-Identifier: MIT */
#include "options.h"
#include <signal.h>
#include <string.h>
#include "arch.h"
#include "os.h"
#include "text.h"

enum kind { FLAG, COUNT, CHOICE, TEXT, SIGNAL };

static const char *const exit_formats[] = {"none", "table", "json", 0};
static const char *const huge_places[] = {"never", "dense", "always", 0};

/* Every setting: its variable, kind, default (number or text), range
 * (counts) or words (choices), and what it trades. */
static const struct setting {
    const char *name;
    enum kind kind;
    uint64_t fallback, least, most;
    const char *fallback_text;
    const char *const *words;
    const char *trade;
} settings[PM_NOPTIONS] = {
    [PM_OPT_STATS] = {"PRIMALLOC_STATS", CHOICE, PM_EXIT_NONE, 0, 0, 0, exit_formats,
                      "statistics on stderr at exit, after the program's exit handlers"},
    [PM_OPT_STATS_FILE] = {"PRIMALLOC_STATS_FILE", TEXT, 0, 0, 0, "", 0,
                           "the report at exit goes to this file (%p: the process id), JSON "
                           "unless PRIMALLOC_STATS=table"},
    [PM_OPT_GUARD_RATE] = {"PRIMALLOC_GUARD_RATE", COUNT, 0, 0, UINT32_MAX, 0, 0,
                           "about one allocation in N gets guard pages, catching its overflows "
                           "and use after free, for three pages and a few system calls each"},
    [PM_OPT_PURGE_THREAD] = {"PRIMALLOC_PURGE_THREAD", FLAG, 0, 0, 1, 0, 0,
                             "a thread gives memory back while the program makes no call, at "
                             "the price of a thread the program did not start"},
    [PM_OPT_HUGE_PAGES] = {"PRIMALLOC_HUGE_PAGES", CHOICE, PM_HUGE_DENSE, 0, 0, 0, huge_places,
                           "transparent huge pages for dense bins and filled huge objects, or "
                           "never, or always: fewer faults and TLB misses against RSS"},
    [PM_OPT_PROF] = {"PRIMALLOC_PROF", FLAG, 0, 0, 1, 0, 0,
                     "a sampled heap profile with call stacks; each sample unwinds a stack"},
    [PM_OPT_PROF_RATE] = {"PRIMALLOC_PROF_RATE", COUNT, 512u << 10, 1, 1ull << 40, 0, 0,
                          "mean bytes allocated between samples: fewer is finer and slower"},
    [PM_OPT_PROF_FILE] = {"PRIMALLOC_PROF_FILE", TEXT, 0, 0, 0, "primalloc", 0,
                          "the profile dumps' path prefix: PREFIX.PID.SEQ.heap and .folded"},
    [PM_OPT_PROF_SIGNAL] = {"PRIMALLOC_PROF_SIGNAL", SIGNAL, 0, 0, 0, 0, 0,
                            "the signal (name or number) that dumps the profile; primalloc "
                            "takes over its handler"},
    [PM_OPT_LEAKS] = {"PRIMALLOC_LEAKS", FLAG, 0, 0, 1, 0, 0,
                      "at exit, the objects nothing points to, by stack or size class; "
                      "the check reads all writable memory once"},
    [PM_OPT_VERBOSE] = {"PRIMALLOC_VERBOSE", FLAG, 0, 0, 1, 0, 0,
                        "lists these settings on stderr at start"},
};

/* The signals a program may hand to primalloc, by name without "SIG";
 * their numbers are the architecture's. */
static const struct {
    char name[8];
    int sig;
} signal_names[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},     {"QUIT", SIGQUIT},   {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},     {"CONT", SIGCONT},   {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},     {"URG", SIGURG},     {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},   {"WINCH", SIGWINCH}, {"IO", SIGIO},
    {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

static uint64_t values[PM_NOPTIONS];
static char texts[PM_NOPTIONS][PM_OPTION_TEXT_BYTES];
/* A text setting in force: texts[o] once the environment sets it, else
 * the default ("" when there is none), which is not copied, so that a
 * process that sets no text touches none of texts' pages. */
static const char *text_in_force[PM_NOPTIONS];
static uint32_t state; /* UNREAD, READING or READ */
enum { UNREAD, READING, READ };

/* The number s spells in decimal digits alone, if it is at most `most`;
 * otherwise (empty, another character, or too big) most + 1. */
static uint64_t decimal(const char *s, uint64_t most)
{
    uint64_t n = 0;
    if (!*s)
        return most + 1;
    for (; *s; s++)
        if (*s < '0' || *s > '9' || (n = n * 10 + (uint64_t)(*s - '0')) > most)
            return most + 1;
    return n;
}

/* The signal v names ("SIGUSR2", "USR2" or "12") if a handler may be
 * installed for it; otherwise 0. */
static int signal_number(const char *v)
{
    int sig = 0;
    if (v[0] >= '0' && v[0] <= '9') {
        uint64_t n = decimal(v, NSIG - 1);
        sig = n < NSIG ? (int)n : 0;
    } else {
        if (v[0] == 'S' && v[1] == 'I' && v[2] == 'G')
            v += 3;
        for (size_t i = 0; i < sizeof signal_names / sizeof *signal_names; i++)
            if (!strcmp(signal_names[i].name, v))
                sig = signal_names[i].sig;
    }
    return sig && pm_os_signal_catchable(sig) ? sig : 0;
}

/* Sets option o from v; 0 if v is not a value the table allows. */
static int take(enum pm_option o, const char *v)
{
    const struct setting *s = &settings[o];
    uint64_t n;
    switch (s->kind) {
    case FLAG:
    case COUNT:
        n = decimal(v, s->most);
        if (n < s->least || n > s->most)
            return 0;
        values[o] = n;
        return 1;
    case CHOICE:
        for (n = 0; s->words[n]; n++)
            if (!strcmp(s->words[n], v)) {
                values[o] = n;
                return 1;
            }
        return 0;
    case SIGNAL:
        return (values[o] = (uint64_t)signal_number(v)) != 0;
    case TEXT:
        for (n = 0; v[n]; n++)
            if (n == PM_OPTION_TEXT_BYTES - 1)
                return 0;
        __builtin_memcpy(texts[o], v, n + 1);
        text_in_force[o] = texts[o];
        return 1;
    }
    return 0;
}

static void to_stderr(void *opaque, const char *buf, size_t len)
{
    (void)opaque;
    pm_os_write(2, buf, len);
}

/* What a setting allows, for the line about a value it does not. */
static void put_allowed(struct pm_text *t, const struct setting *s)
{
    char digits[24];
    switch (s->kind) {
    case FLAG:
        pm_text_put(t, "0 or 1");
        break;
    case COUNT:
        pm_text_put(t, "a decimal count from ");
        pm_text_put(t, pm_text_numeral(digits, s->least, 10));
        pm_text_put(t, " to ");
        pm_text_put(t, pm_text_numeral(digits, s->most, 10));
        break;
    case CHOICE:
        pm_text_put(t, "one of");
        for (const char *const *w = s->words; *w; w++) {
            pm_text_put(t, w == s->words ? " " : ", ");
            pm_text_put(t, *w);
        }
        break;
    case SIGNAL:
        pm_text_put(t, "a signal name or number whose handler may be replaced");
        break;
    case TEXT:
        pm_text_put(t, "at most ");
        pm_text_put(t, pm_text_numeral(digits, PM_OPTION_TEXT_BYTES - 1, 10));
        pm_text_put(t, " bytes");
        break;
    }
}

/* At most this much of a value a line quotes. */
#define QUOTED 80

static void put_quoted(struct pm_text *t, const char *v)
{
    char part[QUOTED + 4];
    char *end = pm_text_str_cut(part, part + QUOTED, v);
    const char *rest = v + (end - part);
    __builtin_memcpy(end, *rest ? "..." : "", *rest ? 4 : 1);
    pm_text_put(t, part);
}

static const char *shown(enum pm_option o, char digits[24], int *quoted)
{
    const struct setting *s = &settings[o];
    *quoted = s->kind == TEXT || s->kind == CHOICE;
    if (s->kind == TEXT)
        return text_in_force[o];
    if (s->kind == CHOICE)
        return s->words[values[o]];
    return pm_text_numeral(digits, values[o], 10);
}

/* "primalloc: NAME=VALUE: not ALLOWED; using DEFAULT", or with
 * PRIMALLOC_VERBOSE, "primalloc: NAME=VALUE: TRADE". */
static void say(enum pm_option o, const char *given, int refused)
{
    char buf[256], digits[24];
    int quoted;
    struct pm_text t = {to_stderr, 0, buf, sizeof buf, 0};
    pm_text_put(&t, "primalloc: ");
    pm_text_put(&t, settings[o].name);
    pm_text_put(&t, "=");
    put_quoted(&t, given ? given : shown(o, digits, &quoted));
    pm_text_put(&t, ": ");
    if (refused) {
        pm_text_put(&t, "not ");
        put_allowed(&t, &settings[o]);
        pm_text_put(&t, "; using ");
        put_quoted(&t, shown(o, digits, &quoted));
    } else {
        pm_text_put(&t, settings[o].trade);
    }
    pm_text_put(&t, "\n");
    pm_text_flush(&t);
}

static void read_all(void)
{
    for (int o = 0; o < PM_NOPTIONS; o++) {
        values[o] = settings[o].fallback;
        text_in_force[o] = settings[o].fallback_text ? settings[o].fallback_text : "";
        const char *v = pm_os_env(settings[o].name);
        if (v && *v && !take(o, v)) {
            values[o] = settings[o].fallback;
            say(o, v, 1);
        }
    }
    if (values[PM_OPT_VERBOSE])
        for (int o = 0; o < PM_NOPTIONS; o++)
            say(o, 0, 0);
}

/* One caller reads; any other waits for it, which takes no call that
 * could come back into primalloc. */
static void ensure_read(void)
{
    uint32_t s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (pm_likely(s == READ))
        return;
    if (s == UNREAD && __atomic_compare_exchange_n(&state, &s, READING, 0, __ATOMIC_ACQUIRE,
                                                   __ATOMIC_ACQUIRE)) {
        read_all();
        __atomic_store_n(&state, READ, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READ)
        pm_arch_pause();
}

uint64_t pm_option(enum pm_option o)
{
    ensure_read();
    return values[o];
}

const char *pm_option_text(enum pm_option o)
{
    ensure_read();
    return text_in_force[o];
}

const char *pm_option_name(enum pm_option o)
{
    return settings[o].name;
}

const char *pm_option_shown(enum pm_option o, char digits[24], int *quoted)
{
    ensure_read();
    return shown(o, digits, quoted);
}
