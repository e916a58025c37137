// SPDX-License-Identifier: MIT
/*
 * levels_plain.c - bench/levels' filtered pr_info() loop with
 * PRINTK_NO_CALL_SITES: the calls as they were before call sites.
 */
#define PRINTK_NO_CALL_SITES 1

#include <printk/printk.h>

#include "bench.h"
#include "levels_plain.h"

static volatile unsigned long sink;

#define INFO_SITE(n) pr_info("worker %d processed %s in %lu us\n", n, "request", (unsigned long)i)

double levels_plain_run(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		INFO_SITE(0); INFO_SITE(1); INFO_SITE(2); INFO_SITE(3);
		INFO_SITE(4); INFO_SITE(5); INFO_SITE(6); INFO_SITE(7);
		INFO_SITE(8); INFO_SITE(9); INFO_SITE(10); INFO_SITE(11);
		INFO_SITE(12); INFO_SITE(13); INFO_SITE(14); INFO_SITE(15);
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n / 16;
}
