// SPDX-License-Identifier: MIT
/*
 * bench/dyndbg - what a dynamic debug call site costs while it is off: a
 * loop through 16 pr_debug() sites of a file built with
 * PRINTK_DYNAMIC_DEBUG, against the same loop without them; the
 * difference over 16 is one site. Then the same sites on, with every
 * console filtering level 7 out, beside a pr_info() filtered the same
 * way (bench/printk's "filtered" figure): an enabled site is a printk.
 *
 * Target: an off site <= 2 ns. Each figure is the median of several runs.
 * --quick runs shorter.
 */
#define PRINTK_DYNAMIC_DEBUG 1

#include <stdio.h>
#include <string.h>

#include <printk/console.h>
#include <printk/dynamic_debug.h>
#include <printk/printk.h>

#include "bench.h"

#define RUNS 9

static long iters = 2000000;
static volatile unsigned long sink;

#define SITE(n) pr_debug("site " #n " %ld\n", i)

static double run_sites(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		SITE(0); SITE(1); SITE(2); SITE(3); SITE(4); SITE(5); SITE(6); SITE(7);
		SITE(8); SITE(9); SITE(10); SITE(11); SITE(12); SITE(13); SITE(14); SITE(15);
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n;
}

static double run_empty(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++) {
		__asm__ __volatile__("" ::: "memory");
		sink++;
	}
	return (double)(mono_ns() - t0) / (double)n;
}

static double run_printk(long n)
{
	uint64_t t0 = mono_ns();

	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", 3, "request", (unsigned long)i);
	return (double)(mono_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	struct series off = { .n = 0 }, on = { .n = 0 }, filtered = { .n = 0 };

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		iters /= 10;
	pk_set_console_loglevel(1);
	pr_info("warm up\n");
	for (int r = 0; r < RUNS; r++) {
		double s = run_sites(iters), e = run_empty(iters);

		add(&off, (s - e) / 16);
	}
	pk_dyndbg_query("func run_sites +p");
	for (int r = 0; r < RUNS; r++) {
		add(&on, run_sites(iters / 100) / 16);
		add(&filtered, run_printk(iters / 20));
	}
	printf("dyndbg bench (%s build, sanitizer %s)\n", BENCH_BUILD_TYPE, variant());
	printf("pr_debug site off                          %8.2f ns (min %.2f, max %.2f)\n",
	       median(&off), minimum(&off), maximum(&off));
	printf("pr_debug site on, console filtering it     %8.1f ns\n", median(&on));
	printf("pr_info filtered (console_loglevel 1)      %8.1f ns\n", median(&filtered));
	printf("target: site off <= 2 ns: %s\n", median(&off) <= 2.0 ? "met" : "MISSED");
	pk_printk_exit();
	return 0;
}
