// SPDX-License-Identifier: MIT
/*
 * levels_plain.h - bench/levels' loop of filtered pr_info() calls compiled
 * without call sites (levels_plain.c), for the call site's own cost.
 */
#ifndef PRINTK_BENCH_LEVELS_PLAIN_H
#define PRINTK_BENCH_LEVELS_PLAIN_H

/* ns per call over @n rounds of 16 sites. */
double levels_plain_run(long n);

#endif
