// SPDX-License-Identifier: MIT
/*
 * bench/levels - what a message costs when its module's level holds it
 * back (docs/levels.md), beside a pr_debug() site that is off and a
 * pr_info() that is stored but filtered by every console (bench/printk's
 * "filtered" figure); then what printk.srcloc adds to that filtered
 * pr_info(), and what the call site adds while no module has a level
 * (the same pr_info() compiled without call sites, levels_plain.c).
 *
 * Loops of 16 call sites, each figure one site (the loop's own cost, an
 * empty loop, taken off); median of RUNS runs, all in this one run, with
 * the ratios. --quick runs shorter.
 */
#define PRINTK_DYNAMIC_DEBUG 1

#include <stdio.h>
#include <string.h>

#include <printk/console.h>
#include <printk/dynamic_debug.h>
#include <printk/printk.h>

#include "bench.h"
#include "levels_plain.h"

#define RUNS 9

static long iters = 2000000;
static volatile unsigned long sink;

#define DEBUG_SITE(n) pr_debug("site " #n " %ld\n", i)
#define INFO_SITE(n)  pr_info("worker %d processed %s in %lu us\n", n, "request", (unsigned long)i)
#define SIXTEEN(S)                                                                         \
	do {                                                                               \
		S(0); S(1); S(2); S(3); S(4); S(5); S(6); S(7);                            \
		S(8); S(9); S(10); S(11); S(12); S(13); S(14); S(15);                      \
	} while (0)

static double run_debug(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		SIXTEEN(DEBUG_SITE);
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n / 16;
}

static double run_info(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		SIXTEEN(INFO_SITE);
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n / 16;
}

static double run_empty(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		__asm__ __volatile__("" ::: "memory");
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n / 16;
}

int main(int argc, char **argv)
{
	struct series off = { .n = 0 }, held = { .n = 0 }, filtered = { .n = 0 }, plain = { .n = 0 },
		      srcloc = { .n = 0 };

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		iters /= 10;
	pk_set_console_loglevel(1);
	pr_info("warm up\n");
	for (int r = 0; r < RUNS; r++) {
		double e = run_empty(iters);

		add(&off, run_debug(iters) - e);
		pk_module_set_level("levels", 4); /* this file's module: info held back */
		add(&held, run_info(iters) - e);
		pk_module_set_level("levels", -1);
		add(&filtered, run_info(iters / 100));
		add(&plain, levels_plain_run(iters / 100));
		pk_set_printk_srcloc(1);
		add(&srcloc, run_info(iters / 100));
		pk_set_printk_srcloc(0);
	}
	printf("levels bench (%s build, sanitizer %s), ns per call, median of %d runs\n", BENCH_BUILD_TYPE,
	       variant(), RUNS);
	printf("pr_debug site off                            %8.2f (min %.2f, max %.2f)\n", median(&off),
	       minimum(&off), maximum(&off));
	printf("pr_info held back by its module's level      %8.2f (min %.2f, max %.2f)\n", median(&held),
	       minimum(&held), maximum(&held));
	printf("pr_info stored, console filtering it         %8.1f\n", median(&filtered));
	printf("  the same without call sites                %8.1f\n", median(&plain));
	printf("  the same with printk.srcloc=1              %8.1f\n", median(&srcloc));
	printf("ratios: held back / pr_debug off %.2f; filtered / held back %.0f; call site in the\n"
	       "        filtered call %+.1f%%; srcloc / filtered %.2f (%+.1f ns a call)\n",
	       median(&held) / median(&off), median(&filtered) / median(&held),
	       100.0 * (median(&filtered) - median(&plain)) / median(&plain), median(&srcloc) / median(&filtered),
	       median(&srcloc) - median(&filtered));
	pk_printk_exit();
	return 0;
}
