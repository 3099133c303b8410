/* SPDX-License-Identifier: MIT */
/* Implementation of limit.h. */
#include "limit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "check.h"

size_t vm_size(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    CHECK(n > 0);
    buf[n] = 0;
    const char *line = strstr(buf, "\nVmSize:");
    CHECK(line != NULL);
    return strtoull(line + 8, NULL, 10) * KiB;
}

void limit_address_space(size_t headroom)
{
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_AS, &r) == 0);
    r.rlim_cur = vm_size() + headroom;
    CHECK(setrlimit(RLIMIT_AS, &r) == 0);
}

void unlimit_address_space(void)
{
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_AS, &r) == 0);
    r.rlim_cur = r.rlim_max;
    CHECK(setrlimit(RLIMIT_AS, &r) == 0);
}
