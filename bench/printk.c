// SPDX-License-Identifier: MIT
/*
 * bench/printk - what a printk costs, against floors measured in the same run.
 *
 *   filtered   pr_info("worker %d processed %s in %lu us\n", ...) with every
 *              console filtering level 6 out (console_loglevel 1):
 *              timestamp, store deferred (the format's reference and the
 *              arguments, docs/deferred.md), console bookkeeping.
 *   eager      the same message through printk(), never deferred: format,
 *              timestamp, store in the ring, console bookkeeping.
 *   devnull    the same with a console on /dev/null printing it.
 *   floor      clock_gettime + glibc snprintf of the same line + a 64-byte
 *              append into a buffer: what a hand-rolled logger pays at least.
 *   floor+write  the filtered figure + one write(2) of the line to /dev/null.
 *   vsnprintf  our formatter alone vs glibc's, same format.
 *   clock      the timestamp clock (src/base/clock.c: CLOCK_MONOTONIC or the
 *              TSC, see the "clock:" line) vs clock_gettime(CLOCK_MONOTONIC);
 *              also per call per thread while two threads read it, and (on
 *              x86-64) what the TSC read itself costs, with and without the
 *              fence the clock puts before it. PRINTK_CLOCK=tsc measures the
 *              TSC clock where it is not chosen.
 *
 * Targets: filtered <= 1.15 x floor; devnull <= 1.1 x floor+write (the last
 * figures are in docs/performance.md).
 * Each figure is the median of several runs. --quick runs shorter.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "bench.h"
#include "base/clock.h"
#include "format/vsprintf.h"

#define RUNS 7

static long iters = 400000;
static volatile unsigned long sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef void (*bench_fn)(long n);

/* One figure: a loop, and the console_loglevel it runs under (0: any). */
struct figure {
	bench_fn fn;
	int console_loglevel;
	double ns[RUNS];
	double median;
};

/*
 * The runs of all figures are interleaved (run 1 of each, then run 2 of
 * each, ...) so that every ratio compares loops measured in the same state
 * of the process and the machine. Measured one block after another, the
 * later figures carried what earlier loops left behind (docs/performance.md
 * has an example).
 */
static void measure(struct figure *f, int nfig)
{
	for (int i = 0; i < nfig; i++) {
		if (f[i].console_loglevel)
			pk_set_console_loglevel(f[i].console_loglevel);
		f[i].fn(iters / 10); /* warm up */
	}
	for (int r = 0; r < RUNS; r++) {
		for (int i = 0; i < nfig; i++) {
			if (f[i].console_loglevel)
				pk_set_console_loglevel(f[i].console_loglevel);

			double t0 = now_ns();

			f[i].fn(iters);
			f[i].ns[r] = (now_ns() - t0) / (double)iters;
		}
	}
	for (int i = 0; i < nfig; i++) {
		qsort(f[i].ns, RUNS, sizeof(f[i].ns[0]), cmp_double);
		f[i].median = f[i].ns[RUNS / 2];
	}
}

static const char *what[4] = { "request", "packet", "job", "frame" };

static void run_printk(long n)
{
	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3],
			(unsigned long)i * 3);
}

static void run_printk_eager(long n)
{
	for (long i = 0; i < n; i++)
		printk(KERN_INFO "worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3],
		       (unsigned long)i * 3);
}

static char appendbuf[1 << 16];
static size_t appendpos;

static void run_pk_clock(long n)
{
	for (long i = 0; i < n; i++)
		sink += pk_clock_ns();
}

static void *pk_clock_thread(void *arg)
{
	run_pk_clock(*(long *)arg);
	return NULL;
}

/* @n calls in each of two threads: the time is per call per thread. */
static void run_pk_clock_2t(long n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, pk_clock_thread, &n)) {
		fprintf(stderr, "bench/printk: pthread_create failed\n");
		exit(1);
	}
	run_pk_clock(n);
	pthread_join(t, NULL);
}

#if HAVE_TSC
static void run_rdtsc(long n)
{
	for (long i = 0; i < n; i++)
		sink += __rdtsc();
}

static void run_lfence_rdtsc(long n)
{
	for (long i = 0; i < n; i++) {
		_mm_lfence();
		sink += __rdtsc();
	}
}
#endif

static void run_clock_gettime(long n)
{
	for (long i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
}

static void run_floor(long n)
{
	char line[128];

	for (long i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		int len = snprintf(line, sizeof(line), "worker %d processed %s in %lu us\n",
				   (int)(i & 7), what[i & 3], (unsigned long)i * 3);

		(void)len;
		if (appendpos + 64 > sizeof(appendbuf))
			appendpos = 0;
		memcpy(appendbuf + appendpos, line, 64);
		appendpos += 64;
		sink += (unsigned long)ts.tv_nsec;
	}
}

static int devnull_fd;

static void run_write(long n)
{
	const char line[] = "[ 1234.567890] worker 3 processed request in 1234 us\n";

	for (long i = 0; i < n; i++)
		sink += (unsigned long)write(devnull_fd, line, sizeof(line) - 1);
}

static void run_glibc_snprintf(long n)
{
	char line[128];

	for (long i = 0; i < n; i++)
		sink += (unsigned long)snprintf(line, sizeof(line), "worker %d processed %s in %lu us\n",
						(int)(i & 7), what[i & 3], (unsigned long)i * 3);
}

static void run_our_snprintf(long n)
{
	char line[128];

	for (long i = 0; i < n; i++)
		sink += (unsigned long)pk_snprintf(line, sizeof(line), "worker %d processed %s in %lu us\n",
						   (int)(i & 7), what[i & 3], (unsigned long)i * 3);
}

int main(int argc, char **argv)
{
	struct console *devnull;

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		iters = 50000;
	devnull_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull_fd < 0 || pk_console_fd_create(&devnull, devnull_fd, "null")) {
		fprintf(stderr, "bench/printk: cannot open /dev/null\n");
		return 1;
	}
	pk_unregister_console(pk_console_stderr());
	pk_register_console(devnull);

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	printf("bench/printk: %ld iterations x %d runs (median, runs interleaved), %ld CPUs, log %zu bytes\n", iters, RUNS,
	       ncpu, pk_log_buf_len(pk_printk_log()));

	enum { GLIBC, OURS, FLOOR, WRITE, FILTERED, EAGER, PRINTED, CLOCK, CLOCK2, GETTIME, TSC, TSC_FENCED, NFIG };
	struct figure fig[NFIG] = {
		[GLIBC] = { .fn = run_glibc_snprintf },
		[OURS] = { .fn = run_our_snprintf },
		[FLOOR] = { .fn = run_floor },
		[WRITE] = { .fn = run_write },
		[FILTERED] = { .fn = run_printk, .console_loglevel = 1 },
		[EAGER] = { .fn = run_printk_eager, .console_loglevel = 1 },
		[PRINTED] = { .fn = run_printk, .console_loglevel = 7 },
		[CLOCK] = { .fn = run_pk_clock },
		[CLOCK2] = { .fn = run_pk_clock_2t },
		[GETTIME] = { .fn = run_clock_gettime },
#if HAVE_TSC
		[TSC] = { .fn = run_rdtsc },
		[TSC_FENCED] = { .fn = run_lfence_rdtsc },
#endif
	};
	int nfig = HAVE_TSC ? NFIG : TSC;

	measure(fig, nfig);

	double glibc = fig[GLIBC].median, ours = fig[OURS].median, floor = fig[FLOOR].median;
	double wr = fig[WRITE].median, filtered = fig[FILTERED].median, printed = fig[PRINTED].median;
	double eager = fig[EAGER].median;

	printf("vsnprintf  glibc %8.1f ns   ours %8.1f ns   ratio %.2f\n", glibc, ours, ours / glibc);
	printf("floor      clock_gettime + glibc snprintf + 64-byte append  %8.1f ns\n", floor);
	printf("write(2)   one line to /dev/null                            %8.1f ns\n", wr);
	printf("printk     filtered (console_loglevel 1)                    %8.1f ns\n", filtered);
	printf("printk     filtered, formatted at once (printk())       %8.1f ns\n", eager);
	printf("printk     console on /dev/null                             %8.1f ns\n", printed);
	printf("ratio filtered / floor = %.2f (target <= 1.15)\n", filtered / floor);
	printf("ratio filtered (deferred) / eager = %.2f\n", filtered / eager);
	printf("ratio devnull / (filtered + write) = %.2f (target <= 1.10)\n", printed / (filtered + wr));
	printf("clock: %s\n", pk_clock_describe());
	printf("clock      pk_clock_ns %8.1f ns   clock_gettime %8.1f ns\n", fig[CLOCK].median,
	       fig[GETTIME].median);
	printf("clock      pk_clock_ns, 2 threads at once, per call per thread %8.1f ns\n", fig[CLOCK2].median);
	if (HAVE_TSC)
		printf("tsc        rdtsc %8.1f ns   lfence + rdtsc %8.1f ns\n", fig[TSC].median,
		       fig[TSC_FENCED].median);
	return 0;
}
