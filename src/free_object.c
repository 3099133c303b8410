/* SPDX-License-Identifier: MIT */
#include "free_object.h"

uint64_t pm_link_secret;

_Alignas(PM_ALIGN) const uintptr_t pm_list_end[2] = {1, 0};
_Static_assert((1 & (PM_ALIGN - 1)) != 0 && ((1 ^ PM_LINK_LOW) & (PM_ALIGN - 1)) != 0,
               "pm_list_end's link decodes misaligned with and without the secret");

/* Threads that start together may both draw: the first secret stored
 * stays, before either writes a link. */
void pm_link_init(void)
{
    if (__atomic_load_n(&pm_link_secret, __ATOMIC_ACQUIRE))
        return;
    uint64_t key = (pm_os_random_seed() & ~(uint64_t)(PM_ALIGN - 1)) | PM_LINK_LOW;
    uint64_t none = 0;
    __atomic_compare_exchange_n(&pm_link_secret, &none, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

_Noreturn void pm_link_corrupt(const char *call, const void *p)
{
    pm_fatal(call, p, "corrupted free-list link");
}
