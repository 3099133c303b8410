/* SPDX-License-Identifier: MIT */
/* The options table through its header: each setting unset, with good
 * values and with bad ones.  The environment is read once a process, so
 * each case runs in a child whose stderr is captured: a good value is in
 * force and says nothing; a bad one gives exactly one line naming the
 * variable and the value, and the default stays in force. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "options.h"
#include "unit.h"

struct outcome {
    uint64_t value;
    char text[64];
    char err[4096];
};

/* Sets (or, with value NULL, unsets) the variable of o in a child, and
 * reads what o holds there and what the child wrote on stderr. */
static struct outcome run(enum pm_option o, const char *value, enum pm_option extra, const char *extra_value)
{
    int out[2], err[2];
    CHECK(pipe(out) == 0 && pipe(err) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(err[1], 2);
        for (int i = 0; i < PM_NOPTIONS; i++)
            unsetenv(pm_option_name(i));
        if (value)
            setenv(pm_option_name(o), value, 1);
        if (extra_value)
            setenv(pm_option_name(extra), extra_value, 1);
        struct outcome r = {pm_option(o), "", ""};
        snprintf(r.text, sizeof r.text, "%s", pm_option_text(o));
        CHECK(write(out[1], &r, sizeof r) == (ssize_t)sizeof r);
        _exit(0);
    }
    close(out[1]);
    close(err[1]);
    struct outcome r;
    CHECK(read(out[0], &r, sizeof r) == (ssize_t)sizeof r);
    size_t len = 0;
    ssize_t n;
    while (len < sizeof r.err - 1 && (n = read(err[0], r.err + len, sizeof r.err - 1 - len)) > 0)
        len += (size_t)n;
    r.err[len] = 0;
    close(out[0]);
    close(err[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return r;
}

static void good(enum pm_option o, const char *value, uint64_t want)
{
    struct outcome r = run(o, value, 0, 0);
    if (r.value != want || r.err[0]) {
        fprintf(stderr, "%s=%s: %llu, stderr \"%s\"\n", pm_option_name(o), value ? value : "(unset)",
                (unsigned long long)r.value, r.err);
        CHECK(0);
    }
}

/* A bad value: one line, "primalloc: NAME=VALUE: not ...; using DEFAULT",
 * and the default in force. */
static void bad(enum pm_option o, const char *value, uint64_t fallback, const char *shown)
{
    struct outcome r = run(o, value, 0, 0);
    char start[256], end[64];
    snprintf(start, sizeof start, "primalloc: %s=%s: not ", pm_option_name(o), value);
    snprintf(end, sizeof end, "; using %s\n", shown);
    size_t n = strlen(r.err), e = strlen(end);
    if (r.value != fallback || strncmp(r.err, start, strlen(start)) || n < e || strcmp(r.err + n - e, end) ||
        strchr(r.err, '\n') != r.err + n - 1) {
        fprintf(stderr, "%s=%s: %llu, stderr \"%s\"\n", pm_option_name(o), value, (unsigned long long)r.value,
                r.err);
        CHECK(0);
    }
}

static void test_numbers(void)
{
    good(PM_OPT_GUARD_RATE, 0, 0);
    good(PM_OPT_GUARD_RATE, "", 0);
    good(PM_OPT_GUARD_RATE, "0", 0);
    good(PM_OPT_GUARD_RATE, "7", 7);
    good(PM_OPT_GUARD_RATE, "4294967295", UINT32_MAX);
    bad(PM_OPT_GUARD_RATE, "4294967296", 0, "0");
    bad(PM_OPT_GUARD_RATE, "99999999999999999999", 0, "0");
    bad(PM_OPT_GUARD_RATE, "12x", 0, "0");
    bad(PM_OPT_GUARD_RATE, "-1", 0, "0");
    bad(PM_OPT_GUARD_RATE, " 5", 0, "0");
    good(PM_OPT_PROF_RATE, 0, 512 << 10);
    good(PM_OPT_PROF_RATE, "1", 1);
    good(PM_OPT_PROF_RATE, "1099511627776", 1ull << 40);
    bad(PM_OPT_PROF_RATE, "0", 512 << 10, "524288");
    bad(PM_OPT_PROF_RATE, "1099511627777", 512 << 10, "524288");
}

static void test_flags(void)
{
    static const enum pm_option flags[] = {PM_OPT_PURGE_THREAD, PM_OPT_PROF, PM_OPT_LEAKS, PM_OPT_VERBOSE};
    for (unsigned i = 0; i < sizeof flags / sizeof *flags; i++) {
        good(flags[i], 0, 0);
        good(flags[i], "0", 0);
        if (flags[i] != PM_OPT_VERBOSE)
            good(flags[i], "1", 1);
        bad(flags[i], "2", 0, "0");
        bad(flags[i], "yes", 0, "0");
    }
}

static void test_choices(void)
{
    good(PM_OPT_STATS, 0, PM_EXIT_NONE);
    good(PM_OPT_STATS, "none", PM_EXIT_NONE);
    good(PM_OPT_STATS, "table", PM_EXIT_TABLE);
    good(PM_OPT_STATS, "json", PM_EXIT_JSON);
    bad(PM_OPT_STATS, "tabel", PM_EXIT_NONE, "none");
    bad(PM_OPT_STATS, "JSON", PM_EXIT_NONE, "none");
    good(PM_OPT_HUGE_PAGES, 0, PM_HUGE_DENSE);
    good(PM_OPT_HUGE_PAGES, "never", PM_HUGE_NEVER);
    good(PM_OPT_HUGE_PAGES, "dense", PM_HUGE_DENSE);
    good(PM_OPT_HUGE_PAGES, "always", PM_HUGE_ALWAYS);
    bad(PM_OPT_HUGE_PAGES, "1", PM_HUGE_DENSE, "dense");
}

static void test_signals(void)
{
    good(PM_OPT_PROF_SIGNAL, 0, 0);
    good(PM_OPT_PROF_SIGNAL, "USR1", SIGUSR1);
    good(PM_OPT_PROF_SIGNAL, "SIGUSR2", SIGUSR2);
    good(PM_OPT_PROF_SIGNAL, "10", 10);
    bad(PM_OPT_PROF_SIGNAL, "0", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "KILL", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "9", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "19", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "65", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "1x", 0, "0");
    bad(PM_OPT_PROF_SIGNAL, "SIGNOPE", 0, "0");
}

/* Text is kept as given up to its room; longer text is refused, and the
 * line quotes only its start. */
static void test_texts(void)
{
    struct outcome r = run(PM_OPT_PROF_FILE, 0, 0, 0);
    CHECK(!strcmp(r.text, "primalloc") && !r.err[0]);
    r = run(PM_OPT_PROF_FILE, "/tmp/p", 0, 0);
    CHECK(!strcmp(r.text, "/tmp/p") && !r.err[0]);
    r = run(PM_OPT_STATS_FILE, 0, 0, 0);
    CHECK(!strcmp(r.text, "") && !r.err[0]);
    static char longest[PM_OPTION_TEXT_BYTES + 1];
    memset(longest, 'a', PM_OPTION_TEXT_BYTES - 1);
    r = run(PM_OPT_STATS_FILE, longest, 0, 0);
    CHECK(strlen(r.text) == 0 || strlen(r.text) == sizeof r.text - 1);
    CHECK(!r.err[0]);
    longest[PM_OPTION_TEXT_BYTES - 1] = 'a';
    r = run(PM_OPT_STATS_FILE, longest, 0, 0);
    CHECK(!strcmp(r.text, ""));
    CHECK(!strncmp(r.err, "primalloc: PRIMALLOC_STATS_FILE=aaaa", 36));
    CHECK(strstr(r.err, "...: not at most 4095 bytes; using \n"));
    CHECK(strlen(r.err) < 200);
}

/* PRIMALLOC_VERBOSE=1 lists every setting once, a line each, in force:
 * a bad value's line comes first, then the list shows the default. */
static void test_verbose(void)
{
    struct outcome r = run(PM_OPT_VERBOSE, "1", PM_OPT_GUARD_RATE, "x");
    CHECK(r.value == 1);
    CHECK(!strncmp(r.err, "primalloc: PRIMALLOC_GUARD_RATE=x: not ", 39));
    unsigned lines = 0;
    for (const char *s = r.err; (s = strchr(s, '\n')); s++)
        lines++;
    CHECK(lines == 1 + PM_NOPTIONS);
    for (int i = 0; i < PM_NOPTIONS; i++) {
        char want[64];
        snprintf(want, sizeof want, "\nprimalloc: %s=", pm_option_name(i));
        CHECK(strstr(r.err, want));
    }
    CHECK(strstr(r.err, "\nprimalloc: PRIMALLOC_GUARD_RATE=0: "));
    CHECK(strstr(r.err, "\nprimalloc: PRIMALLOC_VERBOSE=1: "));
}

int main(void)
{
    test_numbers();
    test_flags();
    test_choices();
    test_signals();
    test_texts();
    test_verbose();
    printf("options ok\n");
    return 0;
}
