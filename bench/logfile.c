// SPDX-License-Identifier: MIT
/*
 * logfile.c - what keeping the log in a shared file costs a writer.
 *
 * Records per second of pk_log_store() of a 64-byte text (final records, a
 * 128 KiB log kept full, so every record also pushes the tail), with the log
 *   heap  in memory this process allocated (pk_log_create);
 *   shm   in a file in /dev/shm mapped shared (pk_log_open_file), the ring
 *         then runs its shared-log paths (writer identity in every claim,
 *         dead-writer checks on the slow paths);
 * each from 1 and 2 threads of one process, and
 *   shm_2p  from 2 writer processes (forked, each its own registry slot)
 *           on the same file.
 * Prints the medians (with min and max) of RUNS interleaved runs of RUN_MS
 * each (--quick: fewer, shorter runs), the stores refused (-ENOBUFS: the
 * oldest record was still being written) per record stored, and the cost
 * ratios shm/heap
 * (ns per record; target <= 1.1) for 1 and 2 threads, plus 2 processes
 * against 2 threads on the same file for information. Nothing is pinned.
 *
 * With 2 writers a store is refused whenever the other writer is preempted
 * inside its record long enough for the ring (2048 records here) to come
 * round to it (invariant I3 of ringbuffer.c): on a machine with few CPUs the
 * 2-writer figures then depend on scheduling more than on the log, so read
 * them together with enobufs_per_record, and prefer many runs.
 *
 * Output is one "key value..." line per figure, stable for grep/awk.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/log.h>

#include "bench.h"
#include "log/log_shared.h"

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

#define TEXT_BYTES 64
#define LOG_LEN	   ((size_t)128 * 1024)

static const char text[TEXT_BYTES + 1] =
	"bench: a 64-byte printk line, about what a kernel message holds.";

/* ------------------------------------------------------------- workers -- */

struct worker {
	pthread_t th;
	pthread_barrier_t *start;
	struct pk_log *log;
	unsigned ms;
	uint64_t ops;	  /* records stored */
	uint64_t enobufs; /* stores refused */
	uint64_t ns;	  /* elapsed */
};

static void *run_store(void *arg)
{
	struct worker *w = arg;

	if (w->start)
		pthread_barrier_wait(w->start);

	uint64_t t0 = mono_ns(), deadline = t0 + (uint64_t)w->ms * 1000000u, now = t0;

	/* pk_log_store reads the clock itself; check ours every 64 records. */
	while (now < deadline) {
		for (unsigned i = 0; i < 64; i++) {
			if (pk_log_store(w->log, 0, 6, text, TEXT_BYTES, NULL, 0) == 0)
				w->ops++;
			else
				w->enobufs++;
		}
		now = mono_ns();
	}
	w->ns = now - t0;
	return NULL;
}

/* Records per second of @nthreads threads storing into @log for @ms; adds
 * the refused stores per stored record to @fails. */
static double threads_rate(struct pk_log *log, unsigned nthreads, unsigned ms, double *fails)
{
	uint64_t failed = 0;
	struct worker w[2];
	pthread_barrier_t start;
	uint64_t ops = 0, span = 0;

	memset(w, 0, sizeof(w));
	if (nthreads > 1 && pthread_barrier_init(&start, NULL, nthreads) != 0) {
		perror("pthread_barrier_init");
		exit(1);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		w[i].log = log;
		w[i].ms = ms;
		w[i].start = nthreads > 1 ? &start : NULL;
		if (i > 0 && pthread_create(&w[i].th, NULL, run_store, &w[i]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	run_store(&w[0]);
	for (unsigned i = 1; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	if (nthreads > 1)
		pthread_barrier_destroy(&start);
	for (unsigned i = 0; i < nthreads; i++) {
		ops += w[i].ops;
		failed += w[i].enobufs;
		if (w[i].ns > span)
			span = w[i].ns;
	}
	*fails = (double)failed / (double)(ops ? ops : 1);
	return (double)ops * 1e9 / (double)span;
}

/* Records per second of @nprocs forked writer processes on the file log. */
static double procs_rate(struct pk_log *log, unsigned nprocs, unsigned ms, double *fails)
{
	uint64_t failed = 0;
	int go[2], res[2];
	pid_t pid[2];
	uint64_t ops = 0, span = 0;

	if (pipe(go) < 0 || pipe(res) < 0) {
		perror("pipe");
		exit(1);
	}
	for (unsigned i = 0; i < nprocs; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("fork");
			exit(1);
		}
		if (pid[i] == 0) {
			/* A writer of the same file with an identity of its own
			 * (registered by the library's fork handler). */
			struct worker w = { .log = log, .ms = ms };
			char c;

			close(go[1]);
			close(res[0]);
			if (read(go[0], &c, 1) != 0) /* closed by the parent: go */
				_exit(1);
			run_store(&w);

			uint64_t out[3] = { w.ops, w.enobufs, w.ns };

			_exit(write(res[1], out, sizeof(out)) == sizeof(out) ? 0 : 1);
		}
	}
	close(go[0]);
	close(res[1]);
	usleep(20 * 1000); /* let both reach the start line */
	close(go[1]);
	for (unsigned i = 0; i < nprocs; i++) {
		uint64_t in[3];

		if (read(res[0], in, sizeof(in)) != sizeof(in)) {
			fprintf(stderr, "a writer process failed\n");
			exit(1);
		}
		ops += in[0];
		failed += in[1];
		if (in[2] > span)
			span = in[2];
	}
	close(res[0]);
	for (unsigned i = 0; i < nprocs; i++)
		waitpid(pid[i], NULL, 0);
	*fails = (double)failed / (double)(ops ? ops : 1);
	return (double)ops * 1e9 / (double)span;
}

/* ------------------------------------------------------------- figures -- */

static void print_series(const char *name, const struct series *s)
{
	printf("%-8s records_per_s=%.0f min=%.0f max=%.0f ns_per_record=%.1f\n", name, median(s),
	       minimum(s), maximum(s), 1e9 / median(s));
}

/* Cost ratio a/b in time per record = rate(b) / rate(a). */
static void print_ratio(const char *what, const struct series *a, const struct series *b,
			double target)
{
	double r = median(b) / median(a);

	if (target > 0)
		printf("ratio %s = %.3f (target <= %.1f) %s\n", what, r, target,
		       r <= target ? "ok" : "MISSED");
	else
		printf("ratio %s = %.3f (information)\n", what, r);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--quick] [--runs N] [--run-ms MS] [--dir DIR]\n", argv0);
	exit(2);
}

static void fill(struct pk_log *log)
{
	/* Twice round: from here on every store pushes the tail, and every page
	 * of the mapping has been touched. */
	for (size_t i = 0; i < 4 * (LOG_LEN / TEXT_BYTES); i++)
		pk_log_store(log, 0, 6, text, TEXT_BYTES, NULL, 0);
}

int main(int argc, char **argv)
{
	unsigned runs = 7, run_ms = 200;
	const char *dir = "/dev/shm";

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			runs = 3;
			run_ms = 50;
		} else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
			runs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--run-ms") == 0 && i + 1 < argc) {
			run_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
			dir = argv[++i];
		} else {
			usage(argv[0]);
		}
	}
	if (runs < 1 || runs > MAX_RUNS || run_ms < 1)
		usage(argv[0]);

	char path[4096];
	struct pk_log *heap, *shm;
	int err;

	snprintf(path, sizeof(path), "%s/pk_bench_logfile.%d.log", dir, (int)getpid());
	unlink(path);
	if ((err = pk_log_create(&heap, LOG_LEN)) != 0 ||
	    (err = pk_log_open_file(&shm, path, LOG_LEN, 0)) != 0) {
		fprintf(stderr, "cannot set up the logs (%s): %s\n", path, pk_log_strerror(err));
		return 1;
	}
	unlink(path); /* the mapping stays; nothing is left behind */

	printf("# libprintk log file benchmark (bench/logfile.c)\n");
	printf("machine nproc=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("build type=%s sanitizer=%s compiler=\"%s\"\n", BENCH_BUILD_TYPE, variant(),
	       __VERSION__);
	printf("params log_bytes=%zu text_bytes=%d runs=%u run_ms=%u file_dir=%s\n", LOG_LEN,
	       TEXT_BYTES, runs, run_ms, dir);
	fflush(stdout);

	fill(heap);
	fill(shm);

	enum { HEAP1, SHM1, HEAP2, SHM2, PROCS2, NCONF };
	static const char *const names[NCONF] = { "heap_1t", "shm_1t", "heap_2t", "shm_2t",
						   "shm_2p" };
	struct series rate[NCONF], fail[NCONF];
	double f;

	memset(rate, 0, sizeof(rate));
	memset(fail, 0, sizeof(fail));
	/* Warm-up (frequency ramp), not counted. */
	threads_rate(heap, 1, run_ms / 2 + 1, &f);
	threads_rate(shm, 1, run_ms / 2 + 1, &f);
	for (unsigned r = 0; r < runs; r++) {
		for (int c = 0; c < NCONF; c++) {
			double v;

			switch (c) {
			case HEAP1:
				v = threads_rate(heap, 1, run_ms, &f);
				break;
			case SHM1:
				v = threads_rate(shm, 1, run_ms, &f);
				break;
			case HEAP2:
				v = threads_rate(heap, 2, run_ms, &f);
				break;
			case SHM2:
				v = threads_rate(shm, 2, run_ms, &f);
				break;
			default:
				v = procs_rate(shm, 2, run_ms, &f);
				break;
			}
			add(&rate[c], v);
			add(&fail[c], f);
		}
	}

	printf("# heap_1t / shm_1t: pk_log_store(64 B) from 1 thread, log in memory / in %s\n",
	       dir);
	printf("# heap_2t / shm_2t: the same from 2 threads of one process (aggregate)\n");
	printf("# shm_2p: 2 writer processes on the %s file (aggregate)\n", dir);
	for (int c = 0; c < NCONF; c++)
		print_series(names[c], &rate[c]);
	printf("# stores refused (-ENOBUFS) per record stored, median\n");
	for (int c = 0; c < NCONF; c++)
		printf("%-8s enobufs_per_record=%.3f\n", names[c], median(&fail[c]));

	struct prb_stats st;

	prb_get_stats(pk_log_ring(shm), &st);
	printf("stats shm reserve_failed=%llu corrupt=%llu holes=%llu stolen=%llu\n",
	       (unsigned long long)st.reserve_failed, (unsigned long long)st.corrupt,
	       (unsigned long long)st.holes, (unsigned long long)st.stolen);
	print_ratio("shm_1t/heap_1t", &rate[SHM1], &rate[HEAP1], 1.1);
	print_ratio("shm_2t/heap_2t", &rate[SHM2], &rate[HEAP2], 1.1);
	print_ratio("shm_2p/shm_2t", &rate[PROCS2], &rate[SHM2], 0);
	pk_log_destroy(shm);
	pk_log_destroy(heap);
	return 0;
}
