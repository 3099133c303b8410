/* SPDX-License-Identifier: MIT */
#include "sizeclass.h"

const struct pm_bin pm_bins[PM_NBINS] = PM_BINS_INIT;
const uint16_t pm_scaled_bin_by_16[PM_BY_16_ENTRIES] = PM_SCALED_BIN_BY_16_INIT;
const uint8_t pm_large_bin_by_pages[PM_LARGE_MAX_PAGES + 1] = PM_LARGE_BIN_BY_PAGES_INIT;
const uint8_t pm_pow2_bin_by_log[PM_POW2_MAX_LOG + 1] = PM_POW2_BIN_BY_LOG_INIT;
