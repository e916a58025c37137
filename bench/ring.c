// SPDX-License-Identifier: MIT
/*
 * ring.c - cost of prb_store() against the hardware floors it cannot beat.
 *
 * Measures, in one run and interleaved so that machine noise hits all of
 * them alike:
 *   store_1t   ns per record: clock_gettime(CLOCK_MONOTONIC) for the
 *              timestamp (the ring takes ts_nsec from its caller, as printk
 *              does) + prb_store() of a 64-byte text, final, into a 128 KiB
 *              ring that is kept full, so every record also pushes the tail;
 *   store_2t   the same from 2 threads into one ring: ns per record per
 *              thread, and aggregate ns per record;
 *   floor_1t   clock_gettime + 64-byte memcpy + one atomic fetch_add;
 *   floor_2t   one atomic fetch_add on a word shared by 2 threads, ns per op
 *              per thread (the cheapest possible contended step);
 *   faa_1t     the same fetch_add from 1 thread: if floor_2t comes out close
 *              to it, the two threads hardly ran at the same time or share a
 *              physical core (vCPU placement, a busy machine), and the second
 *              ratio does not measure cross-core contention;
 *   store_2t   also as CPU time (cpu_ns: time descheduled left out) with the
 *              share of wall time the two threads were on a CPU (on_cpu), and
 *              over only the windows of records in which both writers stored
 *              (both_ns, both_share): what two writers at work at once pay;
 *   call_1t    the median of one timed prb_store() call, 1 thread;
 *   call_turns the same with 2 threads taking turns, one record each: every
 *              store finds the ring's shared lines in the other CPU's cache,
 *              and a descheduled thread only makes the other one wait, so it
 *              measures the lines a record moves, not the machine's load;
 * and prints the ratios store_1t / floor_1t (target <= 2.0) and
 * store_2t / floor_2t (target <= 6.0). Each figure is the median of RUNS runs
 * of RUN_MS each (--quick: fewer, shorter runs). Nothing is pinned.
 *
 * Output is one "key value..." line per figure, stable for grep/awk; lines
 * starting with '#' are explanations and notes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ring/ringbuffer.h"

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

#define TEXT_BYTES 64

struct params {
	unsigned runs;
	unsigned run_ms;
	unsigned data_bits;
};

static struct prb ring;
static const char text[TEXT_BYTES + 1] =
	"bench: a 64-byte printk line, about what a kernel message holds.";

/* Keeps the compiler from dropping a copy whose result nobody reads. */
static inline void sink(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* ------------------------------------------------------------- workers -- */

enum kind { STORE, FLOOR_1T, FLOOR_FAA, TURNS };

/* One cache line each: the counters of two workers must not share a line. */
struct worker {
	_Alignas(64) pthread_t th;
	pthread_barrier_t *start;
	enum kind kind;
	unsigned ms;
	uint32_t tid;
	uint64_t ops;	  /* successful records / operations */
	uint64_t enobufs; /* failed stores */
	uint64_t ns;	  /* elapsed */
	/* Store workers of a pair: records in windows during which the other
	 * writer stored too, and the time those windows took. */
	uint64_t both_ops, both_ns;
	uint64_t cpu_ns; /* the thread's CPU time over the same span */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic uint64_t shared_word;

/* Each store worker's progress, published every WINDOW records, so that a
 * worker can tell the windows in which the other one was storing too. */
#define WINDOW 64
static struct {
	_Alignas(64) _Atomic uint64_t stored;
} progress[2];

static void run_store(struct worker *w)
{
	struct prb_meta m = {
		.caller = { .pid = (uint32_t)getpid(), .tid = w->tid, .ctx = 0 },
		.level = 6,
		.flags = PRB_FLAG_NEWLINE,
	};
	uint64_t t0 = mono_ns(), deadline = t0 + (uint64_t)w->ms * 1000000u, now;
	uint64_t ops = 0, enobufs = 0; /* locals: the workers' structs are shared */
	_Atomic uint64_t *mine = &progress[w->tid - 1].stored, *peer = &progress[w->tid % 2].stored;
	uint64_t win_t0 = t0, win_peer = atomic_load_explicit(peer, memory_order_relaxed);
	uint64_t both_ops = 0, both_ns = 0, prev = t0;
	bool clean = true;

	/* One clock read per record, as printk does; it also ends the loop. */
	while ((now = mono_ns()) < deadline) {
		m.ts_nsec = now;
		/* A window with a refused store or a gap (preempted) is not one
		 * of two writers at work. */
		if (now - prev > 20000)
			clean = false;
		prev = now;
		if (prb_store(&ring, &m, text, TEXT_BYTES, NULL, 0, true, NULL) == 0) {
			ops++;
		} else {
			enobufs++;
			clean = false;
		}
		if (ops % WINDOW || !ops)
			continue;
		atomic_store_explicit(mine, ops, memory_order_relaxed);
		if (w->start) {
			uint64_t p = atomic_load_explicit(peer, memory_order_relaxed), t = mono_ns();

			if (clean && p - win_peer >= WINDOW / 2) {
				both_ops += WINDOW;
				both_ns += t - win_t0;
			}
			win_peer = p;
			win_t0 = prev = t;
			clean = true;
		}
	}
	w->ops = ops;
	w->enobufs = enobufs;
	w->both_ops = both_ops;
	w->both_ns = both_ns;
	w->ns = now - t0;
}

/*
 * Two writers that take turns, one record each: a token passed through a
 * line of its own, and only the prb_store() call timed (clock read inside
 * the turn). Every store then finds the lines the ring shares where the
 * other CPU left them, which is what two writers at work at once pay, but
 * a writer that is descheduled only makes the other wait: the median of
 * the timed calls does not depend on how busy the machine is. With one
 * thread, the same timed call after its own previous store.
 */
#define TURN_HIST_NS	  2
#define TURN_HIST_BUCKETS 4096
static struct {
	_Alignas(64) _Atomic uint64_t turn;
	_Alignas(64) uint32_t hist[2][TURN_HIST_BUCKETS + 1];
} turns;

static void run_turns(struct worker *w, bool alone)
{
	struct prb_meta m = {
		.caller = { .pid = (uint32_t)getpid(), .tid = w->tid, .ctx = 0 },
		.level = 6,
		.flags = PRB_FLAG_NEWLINE,
	};
	uint64_t me = w->tid - 1, deadline = mono_ns() + (uint64_t)w->ms * 1000000u, ops = 0;
	uint32_t *hist = turns.hist[me];

	for (uint64_t k = me;; k += 2) {
		if (!alone) {
			uint64_t t;

			while ((t = atomic_load_explicit(&turns.turn, memory_order_acquire)) != k) {
				if (t == UINT64_MAX)
					goto out;
			}
		}
		uint64_t t0 = mono_ns();

		m.ts_nsec = t0;
		int err = prb_store(&ring, &m, text, TEXT_BYTES, NULL, 0, true, NULL);
		uint64_t d = (mono_ns() - t0) / TURN_HIST_NS;

		if (err == 0) {
			ops++;
			hist[d < TURN_HIST_BUCKETS ? d : TURN_HIST_BUCKETS]++;
		}
		if (t0 > deadline) {
			atomic_store_explicit(&turns.turn, UINT64_MAX, memory_order_release);
			break;
		}
		if (!alone)
			atomic_store_explicit(&turns.turn, k + 1, memory_order_release);
	}
out:
	w->ops = ops;
}

static double turns_median(unsigned nthreads)
{
	uint64_t total = 0, seen = 0;

	for (unsigned t = 0; t < nthreads; t++)
		for (unsigned b = 0; b <= TURN_HIST_BUCKETS; b++)
			total += turns.hist[t][b];
	for (unsigned b = 0; b <= TURN_HIST_BUCKETS; b++) {
		for (unsigned t = 0; t < nthreads; t++)
			seen += turns.hist[t][b];
		if (2 * seen >= total && total)
			return (b + 0.5) * TURN_HIST_NS;
	}
	return 0;
}

static void run_floor_1t(struct worker *w)
{
	static _Alignas(64) char dst[16][TEXT_BYTES];
	_Alignas(64) static _Atomic uint64_t counter;
	uint64_t t0 = mono_ns(), deadline = t0 + (uint64_t)w->ms * 1000000u, now;
	uint64_t i = 0, ts_sum = 0;

	while ((now = mono_ns()) < deadline) {
		ts_sum += now;
		memcpy(dst[i++ & 15], text, TEXT_BYTES);
		sink(dst);
		atomic_fetch_add_explicit(&counter, 1, memory_order_seq_cst);
	}
	sink(&ts_sum);
	w->ops = i;
	w->ns = now - t0;
}

static void run_floor_faa(struct worker *w)
{
	uint64_t t0 = mono_ns(), deadline = t0 + (uint64_t)w->ms * 1000000u, now;
	uint64_t n = 0;

	do {
		for (unsigned k = 0; k < 1024; k++)
			atomic_fetch_add_explicit(&shared_word, 1, memory_order_seq_cst);
		n += 1024;
	} while ((now = mono_ns()) < deadline);
	w->ops = n;
	w->ns = now - t0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (w->start)
		pthread_barrier_wait(w->start);

	uint64_t cpu0 = thread_cpu_ns();

	switch (w->kind) {
	case STORE:
		run_store(w);
		break;
	case FLOOR_1T:
		run_floor_1t(w);
		break;
	case FLOOR_FAA:
		run_floor_faa(w);
		break;
	case TURNS:
		run_turns(w, w->start == NULL);
		break;
	}
	w->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

/* Run @nthreads workers of @kind for @ms; fills @w[0..nthreads). */
static void measure(enum kind kind, unsigned nthreads, unsigned ms, struct worker *w)
{
	pthread_barrier_t start;

	memset(w, 0, sizeof(*w) * nthreads);
	for (unsigned i = 0; i < 2; i++)
		atomic_store(&progress[i].stored, 0);
	memset(turns.hist, 0, sizeof(turns.hist));
	atomic_store(&turns.turn, 0);
	if (nthreads == 1) {
		w[0].kind = kind;
		w[0].ms = ms;
		w[0].tid = 1;
		worker_main(&w[0]);
		return;
	}
	if (pthread_barrier_init(&start, NULL, nthreads) != 0) {
		perror("pthread_barrier_init");
		exit(1);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		w[i].kind = kind;
		w[i].ms = ms;
		w[i].tid = i + 1;
		w[i].start = &start;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	pthread_barrier_destroy(&start);
}

/* ------------------------------------------------------------- figures -- */

static void print_series(const char *name, const char *unit, const struct series *s)
{
	printf("%-10s %s=%.2f min=%.2f max=%.2f\n", name, unit, median(s), minimum(s), maximum(s));
}

static void print_ratio(const char *what, double r, double target)
{
	printf("ratio %s = %.2f (target <= %.1f) %s\n", what, r, target,
	       r <= target ? "ok" : "MISSED");
}

/* -------------------------------------------------------------- header -- */

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--quick] [--runs N] [--run-ms MS]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct params p = { .runs = 7, .run_ms = 200, .data_bits = PRB_DATA_DEFAULT_BITS };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			p.runs = 3;
			p.run_ms = 50;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			p.runs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--run-ms") == 0 && i + 1 < argc) {
			p.run_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		} else {
			usage(argv[0]);
		}
	}
	if (p.runs < 1 || p.runs > MAX_RUNS || p.run_ms < 1)
		usage(argv[0]);

	size_t size = prb_region_size(p.data_bits, 0);
	void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	int err;

	if (!mem || (err = prb_format(&ring, mem, size, p.data_bits, 0)) != 0) {
		fprintf(stderr, "cannot set up the ring: %s\n",
			mem ? prb_strerror(err) : "no memory");
		return 1;
	}

	char cpu[256];

	cpu_model(cpu, sizeof(cpu));
	printf("# libprintk ring benchmark (bench/ring.c)\n");
	printf("machine nproc=%ld cpu=\"%s\"\n", sysconf(_SC_NPROCESSORS_ONLN), cpu);
	printf("build type=%s sanitizer=%s ids=%s compiler=\"%s\"\n", BENCH_BUILD_TYPE, variant(),
#ifdef PRINTK_RING_SMALL_IDS
	       "small",
#else
	       "full",
#endif
	       __VERSION__);
	printf("params ring_bytes=%llu descriptors=%llu text_bytes=%d runs=%u run_ms=%u "
	       "clock=CLOCK_MONOTONIC\n",
	       (unsigned long long)ring.data_size, (unsigned long long)ring.desc_count, TEXT_BYTES,
	       p.runs, p.run_ms);
	fflush(stdout);

	/* Fill the ring twice over: from here on every store pushes the tail. */
	struct prb_meta m = { .caller = { .pid = (uint32_t)getpid(), .tid = 1 } };

	for (uint64_t i = 0; i < 2 * ring.desc_count + 2 * (ring.data_size / TEXT_BYTES); i++) {
		m.ts_nsec = mono_ns();
		prb_store(&ring, &m, text, TEXT_BYTES, NULL, 0, true, NULL);
	}

	struct series floor1 = { 0 }, floor2 = { 0 }, store1 = { 0 }, store2 = { 0 };
	struct series store2_agg = { 0 }, store2_fail = { 0 }, faa1 = { 0 };
	struct series store2_both = { 0 }, store2_both_share = { 0 };
	struct series floor2_cpu = { 0 }, store2_cpu = { 0 }, store2_oncpu = { 0 };
	struct series turns1 = { 0 }, turns2 = { 0 };
	struct worker w[2];

	/* Warm-up (page faults, frequency ramp), not counted. */
	measure(STORE, 1, p.run_ms / 2 + 1, w);
	for (unsigned r = 0; r < p.runs; r++) {
		measure(FLOOR_1T, 1, p.run_ms, w);
		add(&floor1, (double)w[0].ns / (double)w[0].ops);

		measure(FLOOR_FAA, 1, p.run_ms / 4 + 1, w);
		add(&faa1, (double)w[0].ns / (double)w[0].ops);

		measure(FLOOR_FAA, 2, p.run_ms, w);
		add(&floor2,
		    ((double)w[0].ns / (double)w[0].ops + (double)w[1].ns / (double)w[1].ops) / 2);
		add(&floor2_cpu, ((double)w[0].cpu_ns / (double)w[0].ops +
				  (double)w[1].cpu_ns / (double)w[1].ops) /
					 2);

		measure(STORE, 1, p.run_ms, w);
		add(&store1, (double)w[0].ns / (double)(w[0].ops ? w[0].ops : 1));

		measure(STORE, 2, p.run_ms, w);
		uint64_t ops = w[0].ops + w[1].ops, span = w[0].ns > w[1].ns ? w[0].ns : w[1].ns;

		add(&store2, ((double)w[0].ns / (double)(w[0].ops ? w[0].ops : 1) +
			      (double)w[1].ns / (double)(w[1].ops ? w[1].ops : 1)) /
				     2);
		add(&store2_agg, (double)span / (double)(ops ? ops : 1));
		add(&store2_cpu, ((double)w[0].cpu_ns / (double)(w[0].ops ? w[0].ops : 1) +
				  (double)w[1].cpu_ns / (double)(w[1].ops ? w[1].ops : 1)) /
					 2);
		add(&store2_oncpu, (double)(w[0].cpu_ns + w[1].cpu_ns) / (double)(w[0].ns + w[1].ns));
		uint64_t both_ops = w[0].both_ops + w[1].both_ops;

		if (both_ops)
			add(&store2_both,
			    (double)(w[0].both_ns + w[1].both_ns) / (double)both_ops);
		add(&store2_both_share, (double)both_ops / (double)(ops ? ops : 1));
		add(&store2_fail, (double)(w[0].enobufs + w[1].enobufs) / (double)(ops ? ops : 1));

		measure(TURNS, 1, p.run_ms / 2 + 1, w);
		add(&turns1, turns_median(1));
		measure(TURNS, 2, p.run_ms / 2 + 1, w);
		add(&turns2, turns_median(2));
	}

	printf("# floor_1t: clock_gettime + 64-byte memcpy + fetch_add, 1 thread\n");
	print_series("floor_1t", "ns_per_op", &floor1);
	printf("# floor_2t: fetch_add on one word shared by 2 threads\n");
	print_series("floor_2t", "ns_per_op_per_thread", &floor2);
	print_series("floor_2t", "cpu_ns_per_op_per_thread", &floor2_cpu);
	printf("# faa_1t: the same fetch_add, uncontended, 1 thread\n");
	print_series("faa_1t", "ns_per_op", &faa1);
	printf("# store_1t: clock_gettime + prb_store(64 B), full ring, 1 thread\n");
	print_series("store_1t", "ns_per_record", &store1);
	printf("# store_2t: clock_gettime + prb_store(64 B), full ring, 2 threads, one ring\n");
	print_series("store_2t", "ns_per_record_per_thread", &store2);
	print_series("store_2t", "ns_per_record_aggregate", &store2_agg);
	print_series("store_2t", "enobufs_per_record", &store2_fail);
	printf("# cpu_ns: the threads' CPU time instead of the wall clock (time spent\n"
	       "# descheduled left out, refused stores' time kept); on_cpu: CPU / wall time\n");
	print_series("store_2t", "cpu_ns_per_record_per_thread", &store2_cpu);
	print_series("store_2t", "on_cpu", &store2_oncpu);
	printf("# store_2t both: only windows of %d records in which the other writer stored\n"
	       "# at least %d, with no refused store and no gap (preemption): the cost of\n"
	       "# two writers at work at once; share: the records those windows hold\n",
	       WINDOW, WINDOW / 2);
	if (store2_both.n)
		print_series("store_2t", "both_ns_per_record_per_thread", &store2_both);
	else
		printf("store_2t   both_ns_per_record_per_thread=none\n");
	print_series("store_2t", "both_share", &store2_both_share);

	printf("# call_1t: one timed prb_store() call (clock read included), 1 thread;\n"
	       "# call_turns: the same when 2 threads take turns, one record each (median)\n");
	print_series("call_1t", "ns_median", &turns1);
	print_series("call_turns", "ns_median", &turns2);

	struct prb_stats st;

	prb_get_stats(&ring, &st);
	printf("stats reserve_failed=%llu corrupt=%llu\n", (unsigned long long)st.reserve_failed,
	       (unsigned long long)st.corrupt);
	print_ratio("store_1t/floor_1t", median(&store1) / median(&floor1), 2.0);
	print_ratio("store_2t/floor_2t", median(&store2) / median(&floor2), 6.0);
	if (median(&floor2) < 3 * median(&faa1))
		printf("# note: floor_2t is within 3x of the uncontended fetch_add: the two "
		       "threads "
		       "hardly overlapped or share a physical core (SMT), so store_2t/floor_2t "
		       "does "
		       "not measure cross-core contention in this run\n");
	if (median(&store2_fail) > 0.05)
		printf("# note: %.2f failed stores per record: a writer was descheduled inside its "
		       "reservation while the other filled the ring; store_2t includes those "
		       "spins\n",
		       median(&store2_fail));
	free(mem);
	return 0;
}
