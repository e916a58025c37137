// SPDX-License-Identifier: MIT
/*
 * bench/lanes - the flight recorder (printk.lanes, docs/lanes.md) against
 * the shared ring, in one run, runs interleaved:
 *
 *   off        filtered pr_info("worker %d processed %s in %lu us\n", ...)
 *              (console_loglevel 1) into the shared ring (deferred record),
 *              lanes off: today's path;
 *   on         the same with lanes on and nobody reading: a thread's lane
 *              fills and the thread merges it into the ring itself;
 *   on+reader  lanes on while a reader thread (pk_log_next_seq() every
 *              200 us, as a follower would) merges the lanes: the writer's
 *              own cost; the reader's CPU is reported beside it (in the
 *              other cases the reader thread waits on a condition
 *              variable: it does not wake);
 *   burst      lanes on, calls in bursts of 1000 that fit a lane, merged
 *              (untimed) between bursts: the lane store alone, what a
 *              thread pays while a reader keeps up; once more with
 *              printk.lane_clock=ordered (the clock read fenced);
 *   rdtsc      the floor: one time-stamp counter read;
 *   rdtsc+copy the task's floor for a lane store: a time-stamp counter
 *              read and a 32-byte copy into a thread's own buffer;
 *   spdlog     spdlog's null sink (bench/compare_spdlog.cpp, bench/compare's
 *              case: the message formatted, written nowhere), when the
 *              build has spdlog and a C++ compiler.
 *
 * `lanes --count-spdlog N` makes N calls of spdlog's null sink and nothing
 * else (bench/count.sh counts them with callgrind).
 *
 * Each with 1 and 2 writer threads: ns per call per thread (each thread
 * makes the calls, the figure is the wall time over the calls of one
 * thread), median of RUNS. Every run stores into the same log of 1 MiB
 * (lanes of 64 KiB). Instructions per call: bench/printk_count with
 * "lanes" under callgrind (docs/performance.md).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "bench.h"
#ifdef BENCH_HAVE_SPDLOG
#include "compare.h"

const char *const cmp_what[4] = { "request", "packet", "job", "frame" };
#else
#define BENCH_HAVE_SPDLOG 0
#endif

#define RUNS 7
#define BURST_CALLS 1000

static long iters = 400000;
static volatile unsigned long sink;
static const char *what[4] = { "request", "packet", "job", "frame" };

static void *writer(void *arg)
{
	long n = *(const long *)arg;

	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3], (unsigned long)i);
	return NULL;
}

/* Bursts that fit a lane: the time of the calls alone (per thread), the
 * merge between bursts untimed (by the first thread, while the other
 * waits). Both threads burst at once. */
static pthread_barrier_t burst_bar;

struct burst {
	long n;
	int merger;
	uint64_t spent;
};

static void *burst_writer(void *arg)
{
	struct burst *b = arg;

	for (long done = 0; done < b->n; done += BURST_CALLS) {
		pthread_barrier_wait(&burst_bar);

		uint64_t t0 = mono_ns();

		for (long i = 0; i < BURST_CALLS; i++)
			pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3], (unsigned long)i);
		b->spent += mono_ns() - t0;
		pthread_barrier_wait(&burst_bar);
		if (b->merger)
			(void)pk_log_next_seq(pk_printk_log());
	}
	return NULL;
}

static atomic_int reader_on, reader_stop;
static atomic_ulong reader_cpu_ns;
/* The reader waits here while it is off: a thread that woke every 200 us
 * with nothing to do took a CPU from the writers of the other cases about
 * 5,000 times a second (with two writers on two CPUs, often from the one
 * that held the merge lock, which the other then waited for). */
static pthread_mutex_t reader_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reader_cv = PTHREAD_COND_INITIALIZER;

static void reader_set(int on, int stop)
{
	pthread_mutex_lock(&reader_mu);
	atomic_store(&reader_on, on);
	if (stop)
		atomic_store(&reader_stop, 1);
	pthread_cond_broadcast(&reader_cv);
	pthread_mutex_unlock(&reader_mu);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&reader_stop)) {
		if (!atomic_load(&reader_on)) {
			pthread_mutex_lock(&reader_mu);
			while (!atomic_load(&reader_on) && !atomic_load(&reader_stop))
				pthread_cond_wait(&reader_cv, &reader_mu);
			pthread_mutex_unlock(&reader_mu);
			continue;
		}

		uint64_t c0 = thread_cpu_ns();

		(void)pk_log_next_seq(pk_printk_log());
		atomic_fetch_add(&reader_cpu_ns, thread_cpu_ns() - c0);

		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* The floor of a lane store: a counter read and a 32-byte copy into the
 * thread's own memory (kept: the buffer escapes through @sink). */
static void *tsc_copy(void *arg)
{
	long n = *(const long *)arg;
	unsigned char buf[64][32];
	unsigned char src[32 + 8];

	memset(src, 0x5a, sizeof(src));
	memset(buf, 0, sizeof(buf));
	for (long i = 0; i < n; i++) {
#if HAVE_TSC
		uint64_t t = __rdtsc();
#else
		uint64_t t = (uint64_t)i;
#endif
		memcpy(buf[i & 63], src + (i & 7), 32);
		memcpy(buf[i & 63], &t, sizeof(t));
#if defined(__GNUC__) || defined(__clang__)
		__asm__ volatile("" : : "r"(buf) : "memory"); /* the copy is kept */
#else
		sink += buf[i & 63][i & 31];
#endif
	}
	sink += buf[n & 63][0];
	return NULL;
}

#if BENCH_HAVE_SPDLOG
static void *spdlog_writer(void *arg)
{
	long n = *(const long *)arg;

	for (long i = 0; i < n; i++)
		cmp_spdlog_log(i);
	return NULL;
}
#endif

enum mode { OFF, ON, ON_READER, BURST, TSC, TSC_COPY, SPDLOG };


struct figure {
	const char *name;
	enum mode mode;
	int threads;
	int ordered; /* printk.lane_clock=ordered for this figure */
	double ns[RUNS];
	double reader_ns[RUNS]; /* reader CPU per record */
	double median, reader_median;
};

/* Without spdlog its two cases are left out. */
static int left_out(const struct figure *f)
{
	return f->mode == SPDLOG && !BENCH_HAVE_SPDLOG;
}

static void run(struct figure *f, int r, long n)
{
	pk_set_lanes(f->mode != OFF);
	pk_set_lane_clock_ordered(f->ordered);
	atomic_store(&reader_cpu_ns, 0);
	reader_set(f->mode == ON_READER, 0);

	pthread_t th;
	uint64_t t0 = mono_ns();

	if (f->mode == BURST) {
		struct burst bw[2] = { { .n = n, .merger = 1 }, { .n = n } };

		pthread_barrier_init(&burst_bar, NULL, (unsigned)f->threads);
		if (f->threads > 1)
			pthread_create(&th, NULL, burst_writer, &bw[1]);
		burst_writer(&bw[0]);
		if (f->threads > 1)
			pthread_join(th, NULL);
		pthread_barrier_destroy(&burst_bar);
		if (r >= 0)
			f->ns[r] = (double)bw[0].spent / (double)n;
		return;
	}
	if (f->mode == TSC) {
#if HAVE_TSC
		for (long i = 0; i < n; i++)
			sink += __rdtsc();
#endif
	} else if (f->mode == TSC_COPY || f->mode == SPDLOG) {
		void *(*fn)(void *) = tsc_copy;
#if BENCH_HAVE_SPDLOG
		if (f->mode == SPDLOG)
			fn = spdlog_writer;
#endif
		if (f->threads > 1)
			pthread_create(&th, NULL, fn, &n);
		fn(&n);
		if (f->threads > 1)
			pthread_join(th, NULL);
	} else {
		if (f->threads > 1)
			pthread_create(&th, NULL, writer, &n);
		writer(&n);
		if (f->threads > 1)
			pthread_join(th, NULL);
	}

	double ns = (double)(mono_ns() - t0) / (double)n;

	reader_set(0, 0);
	(void)pk_log_next_seq(pk_printk_log()); /* what is left enters the ring, untimed */
	if (r >= 0) {
		f->ns[r] = ns;
		f->reader_ns[r] = (double)atomic_load(&reader_cpu_ns) / (double)(n * f->threads);
	}
}

int main(int argc, char **argv)
{
	struct console *devnull;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		iters = 50000;
	/* N calls of spdlog's null sink and nothing else, for bench/count.sh
	 * (callgrind): the baseline's instructions per call. */
	if (argc > 2 && !strcmp(argv[1], "--count-spdlog")) {
		long n = strtol(argv[2], NULL, 10);
#if BENCH_HAVE_SPDLOG
		char why[200];

		if (n <= 0 || cmp_spdlog_setup(CMP_SPDLOG_NULL, NULL, why, sizeof(why))) {
			fprintf(stderr, "bench/lanes: --count-spdlog N: %s\n", n <= 0 ? "N must be > 0" : why);
			return 1;
		}
		for (long i = 0; i < n; i++)
			cmp_spdlog_log(i);
		cmp_spdlog_teardown();
		return 0;
#else
		(void)n;
		fprintf(stderr, "bench/lanes: built without spdlog (Debian: libspdlog-dev, g++)\n");
		return 1;
#endif
	}
	if (fd < 0 || pk_console_fd_create(&devnull, fd, "null")) {
		fprintf(stderr, "bench/lanes: cannot open /dev/null\n");
		return 1;
	}
	/* The log is made with lanes on, so it has their pool; "off" turns
	 * them off for the stores only. */
	pk_set_lanes(1);
	pk_set_log_buf_len(1 << 20);
	pk_unregister_console(pk_console_stderr());
	pk_register_console(devnull);
	pk_set_console_loglevel(1);

#if BENCH_HAVE_SPDLOG
	char why[200];

	if (cmp_spdlog_setup(CMP_SPDLOG_NULL, NULL, why, sizeof(why))) {
		fprintf(stderr, "bench/lanes: %s\n", why);
		return 1;
	}
#endif

	pthread_t rd;

	pthread_create(&rd, NULL, reader, NULL);

	struct figure fig[] = {
		{ .name = "rdtsc (floor)", .mode = TSC, .threads = 1 },
		{ .name = "off: shared ring, 1 thread", .mode = OFF, .threads = 1 },
		{ .name = "off: shared ring, 2 threads", .mode = OFF, .threads = 2 },
		{ .name = "on: lanes, nobody reads, 1 thread", .mode = ON, .threads = 1 },
		{ .name = "on: lanes, nobody reads, 2 threads", .mode = ON, .threads = 2 },
		{ .name = "on+reader: lanes, a reader merges, 1 thread", .mode = ON_READER, .threads = 1 },
		{ .name = "on+reader: lanes, a reader merges, 2 threads", .mode = ON_READER, .threads = 2 },
		{ .name = "burst: lanes, a lane's worth, 1 thread", .mode = BURST, .threads = 1 },
		{ .name = "burst: lanes, a lane's worth, 2 threads", .mode = BURST, .threads = 2 },
		{ .name = "rdtsc + 32-byte copy, 1 thread", .mode = TSC_COPY, .threads = 1 },
		{ .name = "rdtsc + 32-byte copy, 2 threads", .mode = TSC_COPY, .threads = 2 },
		{ .name = "spdlog null sink, 1 thread", .mode = SPDLOG, .threads = 1 },
		{ .name = "spdlog null sink, 2 threads", .mode = SPDLOG, .threads = 2 },
		{ .name = "burst, printk.lane_clock=ordered, 1 thread", .mode = BURST, .threads = 1, .ordered = 1 },
	};
	int nfig = (int)(sizeof(fig) / sizeof(fig[0]));

	printf("bench/lanes: %ld calls per thread x %d runs (median, runs interleaved), %ld CPUs, log %zu bytes\n",
	       iters, RUNS, sysconf(_SC_NPROCESSORS_ONLN), pk_log_buf_len(pk_printk_log()));
	for (int i = 0; i < nfig; i++)
		if (!left_out(&fig[i]))
			run(&fig[i], -1, iters / 10);
	for (int r = 0; r < RUNS; r++)
		for (int i = 0; i < nfig; i++)
			if (!left_out(&fig[i]))
				run(&fig[i], r, iters);
	for (int i = 0; i < nfig; i++) {
		qsort(fig[i].ns, RUNS, sizeof(double), cmp_double);
		qsort(fig[i].reader_ns, RUNS, sizeof(double), cmp_double);
		fig[i].median = fig[i].ns[RUNS / 2];
		fig[i].reader_median = fig[i].reader_ns[RUNS / 2];
	}
	reader_set(0, 1);
	pthread_join(rd, NULL);

	for (int i = 0; i < nfig; i++) {
		if (left_out(&fig[i]))
			continue;
		printf("%-48s %8.1f ns per call per thread", fig[i].name, fig[i].median);
		if (fig[i].mode == ON_READER)
			printf("  (+ reader %.1f ns CPU per record)", fig[i].reader_median);
		printf("\n");
	}

	double off1 = fig[1].median, off2 = fig[2].median, on1 = fig[3].median, on2 = fig[4].median;
	double rd1 = fig[5].median, rd2 = fig[6].median, tsc = fig[0].median;

	printf("ratio on / off, 1 thread = %.2f; 2 threads = %.2f\n", on1 / off1, on2 / off2);
	printf("ratio on+reader / off, 1 thread = %.2f; 2 threads = %.2f\n", rd1 / off1, rd2 / off2);
	printf("ratio 2 threads / 1 thread: off %.2f, on %.2f, on+reader %.2f (target for lanes <= 1.3)\n",
	       off2 / off1, on2 / on1, rd2 / rd1);
	double b1 = fig[7].median, b2 = fig[8].median;

	printf("ratio burst / off: 1 thread = %.2f; 2 threads = %.2f\n", b1 / off1, b2 / off2);
	printf("ratio burst 2 threads / 1 thread = %.2f (target <= 1.3)\n", b2 / b1);
	if (HAVE_TSC)
		printf("ratio burst 1 thread / rdtsc = %.1f\n", b1 / tsc);

	/* The task's targets: lanes on, 1 thread, at most 0.3 x spdlog's null
	 * sink and 2 x rdtsc + a 32-byte copy; 2 threads / 1 thread at most
	 * 1.3. "burst": the writer while its lane has room (a reader keeps
	 * up); "on+reader": the writer while a reader merges. */
	double cp1 = fig[9].median, cp2 = fig[10].median, bo1 = fig[13].median;

	printf("ratio lanes / (rdtsc + 32-byte copy), 1 thread: burst %.2f, on+reader %.2f (target <= 2); "
	       "2 threads / 1 thread: copy %.2f\n",
	       b1 / cp1, rd1 / cp1, cp2 / cp1);
	printf("ratio burst with printk.lane_clock=ordered / burst (the fenced clock's cost), 1 thread: %.2f "
	       "(%.2f x rdtsc + 32-byte copy)\n",
	       bo1 / b1, bo1 / cp1);
#if BENCH_HAVE_SPDLOG
	double sp1 = fig[11].median, sp2 = fig[12].median;

	printf("ratio lanes / spdlog null sink, 1 thread: burst %.2f, on+reader %.2f (target <= 0.3); "
	       "2 threads / 1 thread: lanes burst %.2f, lanes on+reader %.2f, spdlog %.2f\n",
	       b1 / sp1, rd1 / sp1, b2 / b1, rd2 / rd1, sp2 / sp1);
	cmp_spdlog_teardown();
#else
	printf("spdlog: not in this build (needs a C++ compiler and spdlog: Debian g++, libspdlog-dev)\n");
#endif
	(void)rd1;
	(void)sink;
	return 0;
}
