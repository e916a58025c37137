// SPDX-License-Identifier: MIT
/*
 * test_lanes.c - the flight recorder (src/ring/lanes.c, docs/lanes.md):
 * with printk.lanes on, a line no console prints goes into its thread's
 * lane and enters the one sequence when a reader needs it.
 *   - several threads: every record read back exactly once, seqs dense,
 *     each thread's records in its order, no loss, lanes that fill up
 *     included; records really waited in the lanes before the read;
 *   - causal order: thread A logs, then wakes B, which logs: A's record
 *     comes first, also when B's lane comes before A's in the pool (with
 *     the default clock through the kernel, a pipe; with
 *     printk.lane_clock=ordered also through semaphores);
 *   - the lane's clock leaves the process-wide floor alone (a ring store
 *     raises it); a thread's records stay in time order across both;
 *   - the writer's fast path (a call site's arguments encoded straight
 *     into the lane) leaves the words store() and prb_lane_store() leave;
 *   - a merger SIGKILLed at each of its steps (batch journal, reservation,
 *     claim, commit, a lane's advance): read-only and writable readers read
 *     every record once, dense, in time order, alike;
 *   - a live merger stopped inside its batch of another process's (dead or
 *     live) lane records is that record's claimer: a third writer that
 *     stores, reads and recovers meanwhile makes no hole of it, and the
 *     records keep their writer as caller;
 *   - post-mortem: a writer process SIGKILLed with records not merged; a
 *     read-only reader sees them all, once, in a dense sequence, and so
 *     does udmesg; a writable reader then merges them and frees the lanes;
 *   - a signal handler that interrupts lane stores: its records and the
 *     interrupted thread's all read once;
 *   - fork: the child takes a lane of its own;
 *   - a read-only follower at the end of the lane records reads on, and
 *     udmesg -w shows a live writer's lane records;
 *   - a store that finds another merge at work waits for it, so a
 *     read-only reader's numbers hold; a merger stopped longer than the
 *     wait is waited for once;
 *   - a thread that exits gives its lane back;
 *   - hostile lane contents in a file: bounded, counted, never a crash;
 *     so is a hostile batch journal;
 *   - an old-format log (no lane pool) gets no lanes; printk.lanes parses
 *     strictly and is on by default: a default log of 32 KiB or more has
 *     the pool, a smaller one none.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <poll.h>

#include <printk/console.h>
#include <printk/kmsg.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>
#include <printk/syslog.h>

#include "base/clock.h"
#include "fixture.h"
#include "log/log_shared.h"
#include "log/options.h"
#include "printk/printk_internal.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

static struct prb *ring(void)
{
	return pk_log_ring(pk_printk_log());
}

static void lanes_stats(struct prb_lanes_stats *st)
{
	prb_lanes_stats(ring(), st);
}

/* A fresh default log with lanes (in a file when @path), where only
 * KERN_EMERG prints. */
/* A build whose ring positions are 15 bits (PRINTK_RING_SMALL_IDS) holds
 * at most 128 KiB: a test whose counts need more is skipped there (in the
 * test's own process: a child's skip would run the rest in the child). */
static void need_log_len(size_t len)
{
	if (len > ((size_t)1 << PRB_DATA_MAX_BITS)) {
		print_message("a %zu-byte log is more than this build's ring holds\n", len);
		skip();
	}
}

static void start_log(const char *path, size_t len)
{
	need_log_len(len);
	pk_printk_exit();
	pk_set_lanes(1);
	assert_int_equal(pk_set_log_buf_len(len), 0);
	if (path) {
		unlink(path);
		assert_int_equal(pk_set_log_buf_file(path, 0), 0);
	}
	pk_set_console_loglevel(1);
	pk_set_printk_time(0);
	pk_printk_log();
	assert_non_null(ring()->lanes);
}

static int teardown(void **state)
{
	(void)state;
	pk_printk_exit();
	pk_set_lanes(1); /* the defaults */
	pk_set_lane_clock_ordered(0);
	return 0;
}

/* ------------------------------------------------------- many threads -- */

#define THREADS	   4
#define PER_THREAD 3000

static void writer_lines(int t, int count)
{
	for (int n = 0; n < count; n++)
		pr_info("t%d n%d %s\n", t, n, "lane");
}

static void *writer(void *arg)
{
	writer_lines((int)(intptr_t)arg, PER_THREAD);
	return NULL;
}

/* Reads [first, next) of the printk log: each (thread, n) exactly once, in
 * each thread's order, seqs dense. */
static void check_threads_once(uint64_t first, int threads, int per)
{
	int seen[THREADS];
	struct pk_record r;
	uint64_t next = pk_log_next_seq(pk_printk_log());

	for (int t = 0; t < threads; t++)
		seen[t] = 0;
	assert_int_equal(next - first, (uint64_t)threads * (uint64_t)per);
	for (uint64_t q = first; q < next; q++) {
		int t, n;
		char word[8];

		assert_int_equal(pk_log_read(pk_printk_log(), q, &r, 0), 0);
		assert_int_equal(r.seq, q); /* dense: nothing lost */
		assert_int_equal(sscanf(r.text, "t%d n%d %7s", &t, &n, word), 3);
		assert_string_equal(word, "lane");
		assert_true(t >= 0 && t < threads);
		assert_int_equal(n, seen[t]); /* once, in order */
		seen[t]++;
		assert_int_equal(r.level, 6);
	}
	for (int t = 0; t < threads; t++)
		assert_int_equal(seen[t], per);
}

static void test_threads_read_once(void **state)
{
	(void)state;
	start_log(test_dir_path("threads.log"), 1 << 20);
	/* The call site's format compiled once before the threads race for
	 * it (a thread that finds another compiling it formats eagerly, into
	 * the ring: deferred.c). */
	writer_lines(THREADS, 1);

	uint64_t first = pk_log_next_seq(pk_printk_log());
	struct prb_lanes_stats st0;

	lanes_stats(&st0);
	assert_int_equal(st0.merged, 1);

	pthread_t th[THREADS];

	for (int t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t), 0);
	for (int t = 0; t < THREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);

	struct prb_lanes_stats st;

	/* Nothing merged them but the writers whose lane was full: the
	 * rest waits in the lanes, unnumbered. */
	lanes_stats(&st);
	assert_true(st.pending > 0);
	assert_int_equal(st.corrupt, 0);
	assert_int_equal(st.full, 0); /* every full lane found room after a merge */
	assert_int_equal(st.merged - 1 + st.pending, (uint64_t)THREADS * PER_THREAD);
	assert_int_equal(prb_ring_next_seq(ring()), first + st.merged - 1);

	check_threads_once(first, THREADS, PER_THREAD);
	lanes_stats(&st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.merged - 1, (uint64_t)THREADS * PER_THREAD);
	/* The threads are gone: their lanes came back (the main thread's
	 * stays). */
	assert_int_equal(st.in_use, 1);
	assert_int_equal(pk_log_first_seq(pk_printk_log()), 0);
}

/* ------------------------------------------------------- causal order -- */

/*
 * A logs, then hands the turn to B, which logs: through semaphores (whose
 * fast path may be shared memory alone) or through a pipe (B blocks in
 * read(): the kernel wakes it). B's lane comes before A's in the pool.
 */
enum handoff { BY_SEM, BY_PIPE };

static enum handoff handoff;
static sem_t go_a, go_b, done_b;
static int pipe_b[2];
static atomic_int rounds_left;

static void wake_b(void)
{
	if (handoff == BY_SEM) {
		sem_post(&go_b);
	} else {
		char c = 'b';

		if (write(pipe_b[1], &c, 1) != 1)
			abort(); /* in a thread: no cmocka assert */
	}
}

static void wait_b(void)
{
	if (handoff == BY_SEM) {
		sem_wait(&go_b);
	} else {
		char c;

		if (read(pipe_b[0], &c, 1) != 1)
			abort();
	}
}

static void *thread_a(void *arg)
{
	(void)arg;
	for (;;) {
		sem_wait(&go_a);
		if (atomic_load(&rounds_left) < 0)
			return NULL;
		pr_info("A %d\n", atomic_load(&rounds_left));
		wake_b(); /* A logged, then wakes B */
	}
}

static void *thread_b(void *arg)
{
	(void)arg;
	pr_info("B first\n"); /* B claims a lane before A does */
	sem_post(&done_b);
	for (;;) {
		wait_b();
		if (atomic_load(&rounds_left) < 0)
			return NULL;
		pr_info("B %d\n", atomic_load(&rounds_left));
		sem_post(&done_b);
	}
}

static void causal_rounds(enum handoff how)
{
	start_log(NULL, 1 << 20);

	uint64_t first = pk_log_next_seq(pk_printk_log());
	pthread_t a, b;
	const int rounds = 2000;

	handoff = how;
	sem_init(&go_a, 0, 0);
	sem_init(&go_b, 0, 0);
	sem_init(&done_b, 0, 0);
	if (how == BY_PIPE)
		assert_int_equal(pipe(pipe_b), 0);
	atomic_store(&rounds_left, rounds);
	assert_int_equal(pthread_create(&b, NULL, thread_b, NULL), 0);
	sem_wait(&done_b);
	assert_int_equal(pthread_create(&a, NULL, thread_a, NULL), 0);
	for (int i = 0; i < rounds; i++) {
		sem_post(&go_a);
		sem_wait(&done_b);
		atomic_fetch_sub(&rounds_left, 1);
		/* Now and then a reader merges in the middle of it all. */
		if (i % 97 == 0)
			(void)pk_log_next_seq(pk_printk_log());
	}
	atomic_store(&rounds_left, -1);
	sem_post(&go_a);
	wake_b();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (how == BY_PIPE) {
		close(pipe_b[0]);
		close(pipe_b[1]);
	}

	struct pk_record r;
	uint64_t next = pk_log_next_seq(pk_printk_log());

	assert_int_equal(next - first, 1 + 2 * (uint64_t)rounds);
	assert_int_equal(pk_log_read(pk_printk_log(), first, &r, 0), 0);
	assert_string_equal(r.text, "B first");
	for (int i = 0; i < rounds; i++) {
		char want[32];

		snprintf(want, sizeof(want), "A %d", rounds - i);
		assert_int_equal(pk_log_read(pk_printk_log(), first + 1 + 2 * (uint64_t)i, &r, 0), 0);
		assert_string_equal(r.text, want);
		want[0] = 'B';
		assert_int_equal(pk_log_read(pk_printk_log(), first + 2 + 2 * (uint64_t)i, &r, 0), 0);
		assert_string_equal(r.text, want);
	}
}

/* The default clock (printk.lane_clock=fast): a wake-up through the
 * kernel orders the two reads whatever the processor runs ahead. */
static void test_causal_order(void **state)
{
	(void)state;
	assert_int_equal(pk_lane_clock_ordered(), 0); /* the default */
	causal_rounds(BY_PIPE);
}

/* printk.lane_clock=ordered: a hand-over that may go through shared
 * memory alone keeps the order too (the read is fenced). */
static void test_causal_order_ordered_clock(void **state)
{
	(void)state;
	pk_set_lane_clock_ordered(1);
	assert_int_equal(pk_lane_clock_ordered(), 1);
	causal_rounds(BY_SEM);
}

/* ---------------------------------------------------- the lane's clock -- */

static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* A lane store reads the clock without the process-wide floor (no shared
 * word written: pk_clock_ns_own()); a ring store raises the floor; the
 * thread's records stay in time order across both. */
static void test_lane_clock_no_shared_floor(void **state)
{
	(void)state;
	start_log(NULL, 1 << 20);
	if (pk_clock_current(NULL) != PK_CLOCK_TSC)
		skip(); /* CLOCK_MONOTONIC: there is no floor either way */

	uint64_t first = pk_log_next_seq(pk_printk_log());
	struct prb_lanes_stats st;

	pr_info("lane clock %d\n", -1); /* claims the lane */

	uint64_t floor0 = pk_clock_floor_ns();

	/* 2 us apart: each call would raise a floor it read (the grain is
	 * 1 us). 200 records fit the 64 KiB lane: no merge in between. */
	for (int i = 0; i < 200; i++) {
		spin_ns(2000);
		pr_info("lane clock %d\n", i);
	}
	assert_int_equal(pk_clock_floor_ns(), floor0);
	lanes_stats(&st);
	assert_int_equal(st.pending, 201);

	spin_ns(2000);
	pk_printk(KERN_INFO "ring clock\n"); /* not a literal: into the ring */
	assert_true(pk_clock_floor_ns() > floor0);

	struct pk_record r;
	uint64_t next = pk_log_next_seq(pk_printk_log()), last = 0;

	assert_int_equal(next - first, 202);
	for (uint64_t q = first; q < next; q++) {
		assert_int_equal(pk_log_read(pk_printk_log(), q, &r, 0), 0);
		assert_true(r.ts_nsec >= last);
		last = r.ts_nsec;
	}
	assert_string_equal(r.text, "ring clock");
}

/* ------------------------------------------------- the writer's fast path -- */

/*
 * A call site's record (pr_info: the fast path, encoded straight into the
 * lane) and the same message without a site (pk_printk_lit: store(),
 * encoded on the stack and copied by prb_lane_store()) leave the same
 * words in the lane but for the timestamp: header, caller, blob, and the
 * zero padding of the blob's last word, also where the lane held other
 * bytes before.
 */
/* Where the lanes' write indexes stand, all lanes together. */
static uint64_t lanes_written(const struct prb *rb)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < PRB_LANES; i++)
		sum += atomic_load(&rb->lanes[8 + i * 24]);
	return sum;
}

/*
 * The writer's fast path leaves a call to store() when its gate says so
 * (base/fast_gate.h): a site whose lane stores took the fast path, then
 * ignore_loglevel turned on (the line is printed by the console before the
 * call returns, and no lane moves), then lanes turned off (the ring, no
 * lane moves), each turned off again (the lane again).
 */
static void test_fast_path_gate(void **state)
{
	(void)state;
	start_log(NULL, 1 << 20);

	struct prb *rb = ring();
	int fds[2];
	struct console *con;
	char buf[256];

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(pk_console_fd_create(&con, fds[1], "gate"), 0);
	pk_unregister_console(pk_console_stderr());
	assert_int_equal(pk_register_console(con), 0);
	pk_set_console_loglevel(1);
	while (read(fds[0], buf, sizeof(buf)) > 0) /* what registering printed */
		;
	for (int i = 0; i < 9; i++) {
		int mode = i % 3; /* 0: the lane, 1: ignore_loglevel, 2: lanes off */
		uint64_t before = lanes_written(rb);

		if (mode == 1)
			pk_set_ignore_loglevel(1);
		if (mode == 2)
			pk_set_lanes(0);
		pr_info("gate %d\n", i);
		pk_set_ignore_loglevel(0);
		pk_set_lanes(1);

		ssize_t n = read(fds[0], buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		if (mode == 0) {
			assert_true(lanes_written(rb) > before);
			assert_int_equal(n, -1);
		} else {
			assert_true(lanes_written(rb) == before);
		}
		if (mode == 1) {
			char want[32];

			snprintf(want, sizeof(want), "gate %d\n", i);
			assert_non_null(strstr(buf, want));
		}
		if (mode == 2)
			assert_int_equal(n, -1);
	}

	/* Every line once, in order: lane and ring records together. */
	struct pk_log *log = pk_printk_log();
	struct pk_record r;
	uint64_t seq = 0;
	int next = 0;

	while (pk_log_read(log, seq, &r, 0) == 0) {
		int k;

		seq = r.seq + 1;
		if (sscanf(r.text, "gate %d", &k) == 1)
			assert_int_equal(k, next++);
	}
	assert_int_equal(next, 9);
	pk_unregister_console(con);
	pk_console_destroy(con);
	close(fds[0]);
	assert_int_equal(pk_register_console(pk_console_stderr()), 0);
}

static void test_fast_path_same_words(void **state)
{
	(void)state;
	start_log(NULL, 1 << 20);

	struct prb *rb = ring();

	pr_info("claim %d\n", 0); /* compiles the site's format, claims the lane */
	pr_info("claim %d\n", 1); /* the fast path from now on */

	unsigned lane = PRB_LANES;

	for (unsigned i = 0; i < PRB_LANES; i++)
		if (atomic_load(&rb->lanes[8 + i * 24]) != 0)
			lane = i;
	assert_true(lane < PRB_LANES);

	pk_a64 *c = rb->lanes + 8 + lane * 24;
	unsigned char *d = (unsigned char *)(rb->lanes + PRB_LANES_HDR / 8 + lane * (rb->lane_bytes / 8));
	uint64_t start = atomic_load(&c[0]);

	/* Old bytes where the records go. */
	memset(d + start, 0xa5, 48 * 1024);

	char str[400];
	int pairs = 0;

	for (int k = 0; k < 60; k++) {
		size_t n = (size_t)(k * 37) % sizeof(str);

		memset(str, 'a' + k % 26, n);
		str[n] = 0;
		pr_info("fast %d %s %lu %c\n", k - 30, str, (unsigned long)k * 1000003u, 'x' + k % 3);
		pk_printk_lit(KERN_INFO "fast %d %s %lu %c\n", k - 30, str, (unsigned long)k * 1000003u,
			      'x' + k % 3);
		pairs++;
	}

	uint64_t end = atomic_load(&c[0]);
	uint64_t pos = start;

	for (int k = 0; k < pairs; k++) {
		uint64_t w[2][3 + (PRB_TEXT_MAX + 7) / 8];
		size_t words = 0;

		for (int j = 0; j < 2; j++) {
			assert_true(pos < end);

			uint64_t w0;

			memcpy(&w0, d + pos % rb->lane_bytes, 8);
			assert_int_equal(w0 >> 32, 0x454e414c);
			assert_true((w0 & 0xffff) != 0xffff); /* no padding record: the lane did not wrap */

			size_t n = 3 + ((w0 & 0xffff) + 7) / 8;

			if (j)
				assert_int_equal(n, words);
			words = n;
			memcpy(w[j], d + pos % rb->lane_bytes, n * 8);
			pos += n * 8;
		}
		w[0][1] = w[1][1] = 0; /* the timestamps differ */
		assert_memory_equal(w[0], w[1], words * 8);
	}
	assert_int_equal(pos, end);

	/* And the readers' text. */
	struct pk_record r;
	uint64_t next = pk_log_next_seq(pk_printk_log());

	char want[600];

	snprintf(want, sizeof(want), "fast %d %s %lu %c", 29, str, 59ul * 1000003u, 'z');
	for (uint64_t q = next - 2; q < next; q++) {
		assert_int_equal(pk_log_read(pk_printk_log(), q, &r, 0), 0);
		assert_string_equal(r.text, want);
	}
}

/* --------------------------------------------------------- post-mortem -- */

#define PM_PER 400

static void *pm_writer(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int n = 0; n < PM_PER; n++)
		pr_info("t%d n%d %s\n", t, n, "lane");
	return NULL;
}

/* udmesg's output for @path (read-only, another process). */
static size_t run_udmesg(const char *path, char *out, size_t size)
{
	return test_udmesg_output(path, NULL, out, size);
}

/* Every record of @log from @first on once: seqs dense, "t<T> n<N>" of
 * @threads threads (at most 16), @per each, in each thread's order; with
 * @time_order, timestamps never going back; their texts into @texts when
 * it is not NULL. */
static void read_dense(struct pk_log *log, uint64_t first, int threads, int per, bool time_order,
		       char (*texts)[32])
{
	int seen[16] = { 0 };
	struct pk_record r;
	uint64_t next = pk_log_next_seq(log), last_ts = 0;

	assert_true(threads <= 16);
	assert_int_equal(next - first, (uint64_t)threads * (uint64_t)per);
	for (uint64_t q = first; q < next; q++) {
		int t, n;

		assert_int_equal(pk_log_read(log, q, &r, 0), 0);
		assert_int_equal(r.seq, q);
		assert_int_equal(sscanf(r.text, "t%d n%d", &t, &n), 2);
		assert_true(t >= 0 && t < threads);
		assert_int_equal(n, seen[t]);
		seen[t]++;
		if (time_order) {
			assert_true(r.ts_nsec >= last_ts);
			last_ts = r.ts_nsec;
		}
		if (texts) {
			assert_true(strlen(r.text) < 32);
			memcpy(texts[q - first], r.text, strlen(r.text) + 1);
		}
	}
	assert_int_equal(pk_log_read(log, next, &r, 0), -EAGAIN);
}

static void check_file_once(struct pk_log *log, uint64_t first, int threads)
{
	read_dense(log, first, threads, PM_PER, false, NULL);
}

/* A child process makes the log @path (@len bytes, lanes on), runs
 * @lines, and is SIGKILLed: what it left in its lanes stays unmerged. */
static void killed_after(const char *path, size_t len, void (*lines)(void))
{
	int ready[2];
	char c;

	pk_printk_exit();
	unlink(path);
	assert_int_equal(pipe(ready), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		start_log(path, len);
		lines();
		if (write(ready[1], "x", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);

	int status;

	kill(pid, SIGKILL);
	test_reap(pid, &status, 30000);
	assert_true(WIFSIGNALED(status));
}

/* The main thread's lane first (it stays claimed), which also compiles
 * the call site's format before the threads race; then two threads. */
static void pm_lines(void)
{
	pthread_t th[2];

	pm_writer((void *)(intptr_t)2);
	for (int t = 0; t < 2; t++)
		pthread_create(&th[t], NULL, pm_writer, (void *)(intptr_t)t);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
}

static void test_postmortem_after_sigkill(void **state)
{
	(void)state;
	const char *path = test_dir_path("killed.log");

	need_log_len(1 << 20);
	killed_after(path, 1 << 20, pm_lines);

	/* Read-only: every record, once, dense, nothing merged by reading. */
	struct pk_log *log;

	assert_int_equal(pk_log_open_file(&log, path, 0, PK_LOG_RDONLY), 0);

	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	assert_int_equal(st.pending, 3 * PM_PER);
	assert_int_equal(st.merged, 0);
	assert_int_equal(st.in_use, 1);
	check_file_once(log, 0, 3);
	prb_lanes_stats(pk_log_ring(log), &st);
	assert_int_equal(st.pending, 3 * PM_PER);
	pk_log_destroy(log);

	/* udmesg (another process, read-only) prints them all. */
	static char out[1 << 20];

	run_udmesg(path, out, sizeof(out));
	for (int t = 0; t < 3; t++) {
		char want[32];

		snprintf(want, sizeof(want), "t%d n%d lane\n", t, PM_PER - 1);
		assert_non_null(strstr(out, want));
	}
	unsigned lines = 0;

	for (char *p = out; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, 3 * PM_PER);

	/* A writable reader merges them (the dead process's lane is freed),
	 * with the same numbers the read-only view gave. */
	assert_int_equal(pk_log_open_file(&log, path, 0, 0), 0);
	check_file_once(log, 0, 3);
	prb_lanes_stats(pk_log_ring(log), &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.merged, 3 * PM_PER);
	assert_int_equal(st.in_use, 0);
	pk_log_destroy(log);
}

/*
 * A read-only reader numbers unmerged lane records after the ring's newest
 * record; a line another handle then stores in the ring comes after them
 * (the store merges first), so the numbers the reader saw hold and a
 * reader that reads on finds the new line next.
 */
static void test_readonly_numbers_hold_after_store(void **state)
{
	(void)state;
	const char *path = test_dir_path("renumber.log");
	int ready[2], go[2];
	char c;

	pk_printk_exit();
	unlink(path);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		start_log(path, 1 << 17);
		pr_err("made\n");
		if (write(ready[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		for (int i = 0; i < 10; i++)
			pr_info("L%d %s\n", i, "lane");
		if (write(ready[1], "x", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(go[0]);

	int status;
	struct pk_log *ro, *w;

	/* The other handle is open before the lines are written. */
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(pk_log_open_file(&w, path, 0, 0), 0);
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(go[1]);
	kill(pid, SIGKILL);
	test_reap(pid, &status, 30000);
	assert_true(WIFSIGNALED(status));

	struct pk_record r;
	char want[32];

	/* seq 0 is "made", then the lane records. */
	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_next_seq(ro), 11);
	for (uint64_t q = 1; q < 11; q++) {
		assert_int_equal(pk_log_read(ro, q, &r, 0), 0);
		snprintf(want, sizeof(want), "L%d lane", (int)q - 1);
		assert_string_equal(r.text, want);
	}
	assert_int_equal(pk_log_read(ro, 11, &r, 0), -EAGAIN);

	/* The other handle stores a line of its own: pk_log_store() (and
	 * every ring store: printk's, a /dev/kmsg write's, a notice) merges
	 * first. */
	assert_int_equal(pk_log_store(w, 1, 5, "X", 1, NULL, 0), 0);
	assert_int_equal(pk_log_next_seq(w), 12);
	for (uint64_t q = 1; q < 11; q++) {
		assert_int_equal(pk_log_read(w, q, &r, 0), 0);
		snprintf(want, sizeof(want), "L%d lane", (int)q - 1);
		assert_string_equal(r.text, want);
	}

	/* The reader reads on: the new line, once, at the next number. */
	assert_int_equal(pk_log_read(ro, 11, &r, 0), 0);
	assert_int_equal(r.seq, 11);
	assert_string_equal(r.text, "X");
	assert_int_equal(pk_log_read(ro, 12, &r, 0), -EAGAIN);
	pk_log_destroy(w);
	pk_log_destroy(ro);
}

/*
 * A store that finds another thread's (or process's) merge at work waits
 * for it: the merger M is held inside its first batch, after one lane
 * moved past it, while a store S comes; S releases M from its wait. S's
 * line then comes after every lane record a read-only reader was shown;
 * without the wait it took the seq after M's first batch, and the reader
 * reading on saw one lane record twice and never saw S's line.
 */
static sem_t m_paused, m_release;
static _Thread_local int tp_role; /* 1: the merger, 2: the store */
static atomic_int m_held, s_waited, merger_kept; /* merger_kept: the store does not release it */

static void hold_merger(enum prb_testpoint tp)
{
	if (tp_role == 1 && tp == PRB_TP_MERGE_ADVANCED && !atomic_exchange(&m_held, 1)) {
		sem_post(&m_paused);
		while (sem_wait(&m_release) != 0)
			;
	}
	if (tp_role == 2 && tp == PRB_TP_STORE_WAITS_MERGE && !atomic_fetch_add(&s_waited, 1) &&
	    !atomic_load(&merger_kept))
		sem_post(&m_release);
}

/* Opening a writable handle merges: the merger opens its own. */
static struct pk_log *wm, *ws;
static int ws_err;

static void *merger_thread(void *arg)
{
	tp_role = 1;
	if (pk_log_open_file(&wm, arg, 0, 0) == 0)
		(void)pk_log_next_seq(wm);
	sem_post(&m_paused); /* it did not stop: the test fails, not hangs */
	return NULL;
}

/* A merger thread on @path, held inside its first batch once it returns;
 * @kept: a store's wait does not release it. */
static pthread_t start_held_merger(const char *path, bool kept)
{
	pthread_t m;

	assert_int_equal(sem_init(&m_paused, 0, 0), 0);
	assert_int_equal(sem_init(&m_release, 0, 0), 0);
	atomic_store(&m_held, 0);
	atomic_store(&s_waited, 0);
	atomic_store(&merger_kept, kept);
	wm = ws = NULL;
	prb_set_testpoint_hook(hold_merger);
	assert_int_equal(pthread_create(&m, NULL, merger_thread, (void *)path), 0);
	while (sem_wait(&m_paused) != 0)
		;
	assert_int_equal(atomic_load(&m_held), 1);
	return m;
}

static void *store_thread(void *arg)
{
	tp_role = 2;
	ws_err = pk_log_open_file(&ws, arg, 0, 0);
	if (!ws_err)
		ws_err = pk_log_store(ws, 1, 5, "X", 1, NULL, 0);
	sem_post(&m_release); /* it did not wait: the merger goes on */
	return NULL;
}

static void forty_lines(void)
{
	pr_err("made\n");
	for (int i = 0; i < 40; i++)
		pr_info("L%d %s\n", i, "lane");
}

/* @path: "made", then 40 lane records "L<i> lane" a writer SIGKILLed
 * left unmerged. */
static void forty_left_in_lanes(const char *path)
{
	killed_after(path, 1 << 17, forty_lines);
}

static void test_store_waits_for_merger(void **state)
{
	(void)state;
	const char *path = test_dir_path("waits.log");

	forty_left_in_lanes(path);

	struct pk_log *ro;
	struct pk_record r;
	char want[32];

	/* The reader is shown the 40 lane records as seqs 1-40. */
	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_next_seq(ro), 41);
	for (uint64_t q = 1; q <= 40; q++) {
		assert_int_equal(pk_log_read(ro, q, &r, 0), 0);
		snprintf(want, sizeof(want), "L%d lane", (int)q - 1);
		assert_string_equal(r.text, want);
	}
	pthread_t m = start_held_merger(path, false), st;

	assert_int_equal(pthread_create(&st, NULL, store_thread, (void *)path), 0);
	assert_int_equal(pthread_join(st, NULL), 0);
	assert_int_equal(pthread_join(m, NULL), 0);
	prb_set_testpoint_hook(NULL);
	assert_non_null(wm);
	assert_int_equal(ws_err, 0);
	assert_int_equal(atomic_load(&s_waited), 1);

	/* The reader reads on: the new line, once, at the next number, and
	 * the numbers it was shown hold. */
	assert_int_equal(pk_log_read(ro, 41, &r, 0), 0);
	assert_string_equal(r.text, "X");
	assert_int_equal(pk_log_read(ro, 42, &r, 0), -EAGAIN);
	for (uint64_t q = 1; q <= 40; q++) {
		assert_int_equal(pk_log_read(ws, q, &r, 0), 0);
		snprintf(want, sizeof(want), "L%d lane", (int)q - 1);
		assert_string_equal(r.text, want);
	}
	sem_destroy(&m_paused);
	sem_destroy(&m_release);
	pk_log_destroy(wm);
	pk_log_destroy(ws);
	pk_log_destroy(ro);
}

/*
 * A merger stopped inside its batch (SIGSTOP, a debugger) for longer than
 * a store waits: the first store waits its second and goes on, later ones
 * do not wait for the same merger again while it makes no progress. Once
 * it goes on, every record is there once.
 */
static void *stopped_store_thread(void *arg)
{
	tp_role = 2;
	ws_err = pk_log_open_file(&ws, arg, 0, 0);
	if (!ws_err)
		ws_err = pk_log_store(ws, 1, 5, "X", 1, NULL, 0);
	if (!ws_err)
		ws_err = pk_log_store(ws, 1, 5, "Y", 1, NULL, 0);
	return NULL;
}

static void test_stopped_merger_waited_once(void **state)
{
	(void)state;
	const char *path = test_dir_path("stopped.log");

	forty_left_in_lanes(path);
	pthread_t m = start_held_merger(path, true), st;

	assert_int_equal(pthread_create(&st, NULL, stopped_store_thread, (void *)path), 0);
	assert_int_equal(pthread_join(st, NULL), 0);
	assert_int_equal(ws_err, 0);
	assert_int_equal(atomic_load(&s_waited), 1); /* the first store only */
	sem_post(&m_release);
	assert_int_equal(pthread_join(m, NULL), 0);
	prb_set_testpoint_hook(NULL);
	atomic_store(&merger_kept, 0);
	assert_non_null(wm);

	/* Every record once: "made", the 40, X and Y. */
	struct pk_record r;
	unsigned lane_seen = 0, x = 0, y = 0;

	assert_int_equal(pk_log_next_seq(ws), 43);
	for (uint64_t q = 0; q < 43; q++) {
		assert_int_equal(pk_log_read(ws, q, &r, 0), 0);
		assert_int_equal(r.seq, q);
		if (!strcmp(r.text, "X"))
			x++;
		else if (!strcmp(r.text, "Y"))
			y++;
		else if (q)
			lane_seen++;
	}
	assert_int_equal(lane_seen, 40);
	assert_int_equal(x, 1);
	assert_int_equal(y, 1);
	sem_destroy(&m_paused);
	sem_destroy(&m_release);
	pk_log_destroy(wm);
	pk_log_destroy(ws);
}

/* ------------------------------------------------------------- signals -- */

static atomic_uint handler_stored;
static atomic_uint handler_runs;

static void on_alarm(int sig)
{
	(void)sig;
	unsigned k = atomic_fetch_add(&handler_runs, 1);

	if (pr_info("h%u %s\n", k, "sig") > 0)
		atomic_fetch_add(&handler_stored, 1);
}

static atomic_int killer_stop;

/* Interrupts @arg's thread at whatever it is doing, often. */
static void *killer(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!atomic_load(&killer_stop)) {
		pthread_kill(target, SIGUSR1);
		struct timespec ts = { 0, 20000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_signal_handler_interrupts(void **state)
{
	(void)state;
	start_log(NULL, 1 << 24);

	uint64_t first = pk_log_next_seq(pk_printk_log());
	struct sigaction sa = { .sa_handler = on_alarm };

	atomic_store(&handler_stored, 0);
	atomic_store(&handler_runs, 0);
	atomic_store(&killer_stop, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);

	pthread_t self = pthread_self(), k;

	assert_int_equal(pthread_create(&k, NULL, killer, &self), 0);

	/* At least 30000 lines and 100 handler runs, within bounds (the ring
	 * holds them all: no loss). */
	int n = 0;
	uint64_t t0 = now_ms();

	while ((n < 30000 || atomic_load(&handler_runs) < 100) && now_ms() - t0 < 60000 && n < 400000) {
		pr_info("m%d %s\n", n++, "main");
		if (n % 100 == 0) {
			struct timespec ts = { 0, 20000 };

			nanosleep(&ts, NULL); /* the killer gets its CPU */
		}
	}
	atomic_store(&killer_stop, 1);
	pthread_join(k, NULL);
	signal(SIGUSR1, SIG_IGN);

	unsigned hs = atomic_load(&handler_stored);

	assert_true(atomic_load(&handler_runs) >= 100);
	assert_int_equal(hs, atomic_load(&handler_runs));

	uint64_t next = pk_log_next_seq(pk_printk_log());
	struct pk_record r;
	int m = 0;
	unsigned h = 0;

	assert_int_equal(next - first, (uint64_t)n + hs);
	for (uint64_t q = first; q < next; q++) {
		int v;
		unsigned hv;

		assert_int_equal(pk_log_read(pk_printk_log(), q, &r, 0), 0);
		assert_int_equal(r.seq, q);
		if (sscanf(r.text, "m%d main", &v) == 1) {
			assert_int_equal(v, m);
			m++;
		} else {
			assert_int_equal(sscanf(r.text, "h%u sig", &hv), 1);
			assert_true(hv < hs);
			h++;
		}
	}
	assert_int_equal(m, n);
	assert_int_equal(h, hs);
}

/* ---------------------------------------------------------------- fork -- */

static void test_fork_child_own_lane(void **state)
{
	(void)state;
	start_log(test_dir_path("fork.log"), 1 << 20);
	pr_info("parent %d\n", 1);

	struct prb_lanes_stats st;

	lanes_stats(&st);
	assert_int_equal(st.in_use, 1);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pr_info("child %d\n", 2);
		lanes_stats(&st);
		if (st.in_use != 2 || st.pending + st.merged != 2)
			fprintf(stderr, "child: in_use %llu pending %llu merged %llu\n", (unsigned long long)st.in_use, (unsigned long long)st.pending, (unsigned long long)st.merged);
		_exit(st.in_use == 2 && st.pending + st.merged == 2 ? 0 : 1);
	}

	int status;

	test_reap(pid, &status, 30000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	pr_info("parent %d\n", 3);

	struct pk_record r;
	uint64_t first = pk_log_first_seq(pk_printk_log());

	assert_int_equal(pk_log_next_seq(pk_printk_log()), first + 3);
	assert_int_equal(pk_log_read(pk_printk_log(), first, &r, 0), 0);
	assert_string_equal(r.text, "parent 1");
	assert_int_equal(pk_log_read(pk_printk_log(), first + 1, &r, 0), 0);
	assert_string_equal(r.text, "child 2");
	assert_int_equal(r.pid, (uint32_t)pid);
	assert_int_equal(pk_log_read(pk_printk_log(), first + 2, &r, 0), 0);
	assert_string_equal(r.text, "parent 3");
	/* The dead child's lane is free again; the parent keeps its own. */
	lanes_stats(&st);
	assert_int_equal(st.in_use, 1);
}

/* ------------------------------------------------- hostile lane words -- */

static void test_hostile_lanes_bounded(void **state)
{
	(void)state;
	const char *path = test_dir_path("hostile.log");

	start_log(path, 1 << 16);
	for (int i = 0; i < 20; i++)
		pr_info("rec %d\n", i);

	struct prb *rb = ring();
	pk_a64 *pool = rb->lanes;
	/* Lane 0's control: widx far beyond ridx (not a lane's worth). */
	pk_a64 *ctl0 = pool + 8;
	uint64_t saved = atomic_load(&ctl0[0]);
	uint64_t rnd = 0x2545F4914F6CDD1Dull;

	atomic_store(&ctl0[0], saved + (UINT64_C(1) << 40));

	struct pk_log *ro;
	struct pk_record r;

	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_next_seq(ro), pk_log_first_seq(ro)); /* nothing to take */
	pk_log_destroy(ro);

	/* Garbage records between valid indexes: every word of the lane
	 * random, many times over; readers stay bounded and whole. */
	atomic_store(&ctl0[0], saved);
	pk_a64 *d = pool + PRB_LANES_HDR / 8;

	for (int round = 0; round < 200; round++) {
		for (uint64_t w = 0; w < saved / 8 + 4 && w < rb->lane_bytes / 8; w++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			if (round % 2 == 0 && w % 3 == 0)
				atomic_store(&d[w], (rnd & 0xffffffffu) << 0 |
							    UINT64_C(0x454e414c) << 32); /* magic, wild length */
			else
				atomic_store(&d[w], rnd);
		}
		assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);

		uint64_t first = pk_log_first_seq(ro), next = pk_log_next_seq(ro);

		assert_true(next - first <= 20);
		for (uint64_t q = first; q < next; q++)
			if (pk_log_read(ro, q, &r, 0) == 0)
				assert_true(r.text_len <= PK_TEXT_MAX);
		pk_log_destroy(ro);
	}

	/* The writer's own reader merges what validates, skips the rest and
	 * counts it. */
	struct prb_lanes_stats st;

	(void)pk_log_next_seq(pk_printk_log());
	lanes_stats(&st);
	assert_int_equal(st.pending, 0);
	assert_true(st.corrupt >= 1);
}

/* The merge's batch journal in the pool (words 4-7 and 448-479) is as
 * untrusted as the lanes: random words, and plausible ones (a count, ids
 * at the ring's head, entries at the lanes' fronts), never make a reader
 * or a merger loop, crash, store a record twice or take a slot that was
 * not the journal's. */
static void test_hostile_journal_bounded(void **state)
{
	(void)state;
	const char *path = test_dir_path("journal.log");
	uint64_t rnd = 0x9E3779B97F4A7C15ull;
	int nrec = 0;
	static int seen[400];

	start_log(path, 1 << 16);

	struct prb *rb = ring();
	pk_a64 *pool = rb->lanes;

	for (int round = 0; round < 300; round++) {
		if (round % 2 == 0) {
			pr_info("rec %d\n", nrec++);
			pr_info("rec %d\n", nrec++);
		}

		uint64_t ridx0 = atomic_load(&pool[8 + 8]); /* lane 0's read index */

		for (unsigned w = 4; w < 8; w++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			atomic_store(&pool[w], rnd);
		}
		for (unsigned w = 448; w < 480; w++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			atomic_store(&pool[w], round % 2 ? rnd : (ridx0 + 8 * (rnd % 64)) | (rnd >> 60) << 56);
		}
		if (round % 2 == 0) {
			/* plausible: a count, ids at the head, done 0-2, the
			 * first entries at lane 0's front */
			atomic_store(&pool[4], 1 + rnd % 3);
			atomic_store(&pool[5], 1 + prb_seq_id(rb, prb_next_reserve_seq(rb) - rnd % 4));
			atomic_store(&pool[6], (rnd >> 8) % 3);
			atomic_store(&pool[448], ridx0);
			atomic_store(&pool[449], ridx0 + 8 * (3 + (8 + 7) / 8));
		}

		struct pk_log *ro;
		struct pk_record r;

		assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);

		uint64_t first = pk_log_first_seq(ro), next = pk_log_next_seq(ro);

		assert_true(next - first <= (uint64_t)nrec + 64);
		for (uint64_t q = first; q < next; q++)
			if (pk_log_read(ro, q, &r, 0) == 0)
				assert_true(r.text_len <= PK_TEXT_MAX);
		pk_log_destroy(ro);
		if (round % 4 == 0)
			prb_lanes_merge(rb); /* the writer: takes the journal in */
	}

	/* The writer merges: the journal goes; no record lost, none twice. */
	struct prb_lanes_stats st;
	struct pk_record r;
	uint64_t first = pk_log_first_seq(pk_printk_log()), next = pk_log_next_seq(pk_printk_log());

	assert_int_equal(first, 0);
	assert_int_equal(atomic_load(&pool[4]), 0);
	lanes_stats(&st);
	assert_int_equal(st.pending, 0);
	assert_true(st.corrupt >= 1);
	for (uint64_t q = first; q < next; q++) {
		int v;

		assert_int_equal(pk_log_read(pk_printk_log(), q, &r, 0), 0);
		if (sscanf(r.text, "rec %d", &v) == 1) {
			assert_true(v >= 0 && v < nrec);
			seen[v]++;
		}
	}
	for (int v = 0; v < nrec; v++)
		assert_int_equal(seen[v], 1);
}

/* ----------------------------------------------------- old format, option -- */

static void test_old_format_no_lanes(void **state)
{
	(void)state;
	const char *path = test_dir_path("old.log");

	/* Made by a program with lanes off: the version 3 layout. */
	pk_printk_exit();
	pk_set_lanes(0);
	unlink(path);
	assert_int_equal(pk_set_log_buf_file(path, 0), 0);
	pk_set_console_loglevel(1);
	assert_null(ring()->lanes);
	pk_printk_exit();

	/* A program with lanes on writes it: no lanes, the ring takes all. */
	pk_set_lanes(1);
	assert_int_equal(pk_set_log_buf_file(path, 0), 0);
	pk_set_console_loglevel(1);
	assert_null(ring()->lanes);

	uint64_t first = pk_log_next_seq(pk_printk_log());

	pr_info("old %d\n", 1);
	assert_int_equal(prb_ring_next_seq(ring()), first + 1);

	struct pk_record r;

	assert_int_equal(pk_log_read(pk_printk_log(), first, &r, 0), 0);
	assert_string_equal(r.text, "old 1");
}

/* Lanes are on by default: a log of 32 KiB or more is made with the pool
 * (version 4), exactly prb_lanes_size() bytes more than with lanes off
 * (version 3, the previous release's layout); a smaller one gets no pool,
 * whose 16 lanes of 2 KiB would hold more than its ring. */
static void test_default_pool_sizes(void **state)
{
	(void)state;
	static const struct {
		size_t len;
		unsigned bits;
		size_t lane; /* 0: no pool */
	} logs[] = {
		{ 4096, 12, 0 },	   { 16384, 14, 0 },	      { 32768, 15, 2048 },
		{ 131072, 17, 8192 }, { 1 << 20, 20, 65536 }, { 1 << 24, 24, 65536 },
	};

	assert_int_equal(pk_lanes(), 1); /* the default: nothing set it */
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		if (logs[i].len > ((size_t)1 << PRB_DATA_MAX_BITS))
			continue;
		pk_set_lanes(0);
		size_t v3 = pk_log_region_size(logs[i].len);
		pk_set_lanes(1);
		size_t v4 = pk_log_region_size(logs[i].len);

		assert_int_equal(v4 - v3, logs[i].lane ? PRB_LANES_HDR + 16 * logs[i].lane : 0);

		const char *path = test_dir_path("default.log");
		struct stat st;

		pk_printk_exit();
		unlink(path);
		assert_int_equal(pk_set_log_buf_len(logs[i].len), 0);
		assert_int_equal(pk_set_log_buf_file(path, 0), 0);
		pk_printk_log();
		assert_int_equal(ring()->lane_bytes, logs[i].lane);
		assert_int_equal(ring()->lanes != NULL, logs[i].lane != 0);
		assert_int_equal(ring()->data_size, (uint64_t)1 << logs[i].bits);
		assert_int_equal(stat(path, &st), 0);
		assert_true((size_t)st.st_size >= v4);
		pk_printk_exit();
	}
}

static void test_option_parses(void **state)
{
	(void)state;
	struct pk_opts o;

	assert_int_equal(pk_opts_parse("printk.lanes=1", &o), 0);
	assert_int_equal(o.lanes, 1);
	assert_int_equal(o.nwarnings, 0);
	assert_int_equal(pk_opts_parse("printk.lanes", &o), 0);
	assert_int_equal(o.lanes, 1);
	assert_int_equal(pk_opts_parse("printk.lanes=0", &o), 0);
	assert_int_equal(o.lanes, 0);
	pk_opts_parse("printk.lanes=2", &o);
	assert_int_equal(o.lanes, -1);
	assert_int_equal(o.nwarnings, 1);
	assert_non_null(strstr(o.warnings[0], "printk.lanes"));
	assert_int_equal(pk_lanes(), 1); /* on by default */

	assert_int_equal(pk_opts_parse("printk.lane_clock=ordered", &o), 0);
	assert_string_equal(o.lane_clock, "ordered");
	assert_int_equal(o.nwarnings, 0);
	assert_int_equal(pk_opts_parse("printk.lane_clock=fast", &o), 0);
	assert_string_equal(o.lane_clock, "fast");
	pk_opts_parse("printk.lane_clock=fenced", &o);
	assert_string_equal(o.lane_clock, "");
	assert_int_equal(o.nwarnings, 1);
	assert_non_null(strstr(o.warnings[0], "printk.lane_clock"));
	pk_opts_parse("printk.lane_clock", &o);
	assert_int_equal(o.nwarnings, 1);
	/* Applied: pk_printk_configure() as PRINTK_OPTS would be. */
	assert_int_equal(pk_lane_clock_ordered(), 0); /* fast by default */
	assert_int_equal(pk_printk_configure("printk.lane_clock=ordered"), 0);
	assert_int_equal(pk_lane_clock_ordered(), 1);
	assert_int_equal(pk_printk_configure("printk.lane_clock=fast"), 0);
	assert_int_equal(pk_lane_clock_ordered(), 0);
}

/* ------------------------------------------------------ every reader -- */

static char dumped[8192];

static void dump_cb(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	struct kmsg_dump_iter it;
	size_t len = 0, n;

	(void)d, (void)reason;
	pk_kmsg_dump_rewind(&it);
	while (len < sizeof(dumped) - 200 &&
	       pk_kmsg_dump_get_line(&it, false, dumped + len, sizeof(dumped) - len, &n))
		len += n;
	dumped[len] = '\0';
}

static void *lane_writer_once(void *arg)
{
	pr_info("from thread %s\n", (const char *)arg);
	return NULL;
}

/* Lane records nobody merged yet reach /dev/kmsg readers, the syslog
 * actions and dumpers, each through its own first call. */
static void test_every_reader_sees_lanes(void **state)
{
	(void)state;
	char buf[8192];
	struct prb_lanes_stats st;
	pthread_t t;

	/* syslog(READ_ALL) */
	start_log(NULL, 1 << 18);
	pr_info("one %d\n", 1);
	pthread_create(&t, NULL, lane_writer_once, "x");
	pthread_join(t, NULL);
	lanes_stats(&st);
	assert_int_equal(st.pending, 2);
	int n = pk_do_syslog(PK_SYSLOG_ACTION_READ_ALL, buf, sizeof(buf) - 1);

	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "<6>one 1\n<6>from thread x\n");

	/* syslog(SIZE_UNREAD) counts them before anyone read them */
	start_log(NULL, 1 << 18);
	pr_info("two %d\n", 2);
	assert_int_equal(pk_do_syslog(PK_SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), (int)strlen("<6>two 2\n"));

	/* /dev/kmsg */
	start_log(NULL, 1 << 18);
	pr_info("three %d\n", 3);

	struct kmsg_file *kf;

	assert_int_equal(pk_kmsg_open(&kf, O_RDONLY | O_NONBLOCK), 0);
	ssize_t k = pk_kmsg_read(kf, buf, sizeof(buf) - 1);

	assert_true(k > 0);
	buf[k] = '\0';
	assert_non_null(strstr(buf, ";three 3\n"));
	assert_int_equal(strncmp(buf, "6,0,", 4), 0);
	pk_kmsg_close(kf);

	/* a dumper (the panic path's reader) */
	start_log(NULL, 1 << 18);
	pr_info("four %d\n", 4);

	struct kmsg_dumper d = { .dump = dump_cb, .max_reason = PK_KMSG_DUMP_SHUTDOWN };

	assert_int_equal(pk_kmsg_dump_register(&d), 0);
	pk_kmsg_dump(PK_KMSG_DUMP_SHUTDOWN);
	pk_kmsg_dump_unregister(&d);
	assert_non_null(strstr(dumped, "four 4\n"));
}

/* A /dev/kmsg reader blocked for the next record wakes for a lane record
 * (which rings no bell: the wait sleeps in slices while lanes are used). */
static char follow_buf[512];
static atomic_long follow_len;

static void *follower(void *arg)
{
	struct kmsg_file *kf = arg;

	atomic_store(&follow_len, pk_kmsg_read(kf, follow_buf, sizeof(follow_buf) - 1));
	return NULL;
}

static void test_follower_wakes(void **state)
{
	(void)state;
	struct kmsg_file *kf;
	pthread_t t;

	start_log(NULL, 1 << 18);
	pr_info("claim %d\n", 0); /* the lanes are in use */

	char buf[512];

	assert_int_equal(pk_kmsg_open(&kf, O_RDONLY), 0);
	assert_true(pk_kmsg_read(kf, buf, sizeof(buf)) > 0); /* "claim 0" */
	atomic_store(&follow_len, 0);
	assert_int_equal(pthread_create(&t, NULL, follower, kf), 0);
	usleep(100 * 1000); /* most likely asleep by now; either way it must see it */
	pr_info("wake %s\n", "up");

	uint64_t t0 = now_ms();

	while (atomic_load(&follow_len) == 0 && now_ms() - t0 < 20000)
		usleep(1000);
	assert_true(atomic_load(&follow_len) > 0);
	pthread_join(t, NULL);
	follow_buf[atomic_load(&follow_len)] = '\0';
	assert_non_null(strstr(follow_buf, ";wake up\n"));
	pk_kmsg_close(kf);
}

/* A read-only follower (udmesg -w, a reader of a live writer's file) that
 * read to the end of the lane records reads the ones stored after that,
 * reading on by seq alone: its view of the lanes was kept with the ends it
 * began with, and it waited for a record that never came. */
static void test_readonly_follower_reads_on(void **state)
{
	(void)state;
	const char *path = test_dir_path("follow.log");
	struct pk_log *ro;
	struct pk_record r;

	start_log(path, 1 << 17); /* the default; small-id builds too */
	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);

	uint64_t seq = pk_log_next_seq(ro);

	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 3; i++)
			pr_info("follow %d.%d\n", round, i);
		for (int i = 0; i < 3; i++) {
			char want[32];

			assert_int_equal(pk_log_read(ro, seq, &r, 0), 0);
			assert_int_equal(r.seq, seq);
			snprintf(want, sizeof(want), "follow %d.%d", round, i);
			assert_string_equal(r.text, want);
			seq++;
		}
		assert_int_equal(pk_log_read(ro, seq, &r, 0), -EAGAIN);
	}

	struct prb_lanes_stats st;

	lanes_stats(&st);
	assert_int_equal(st.pending, 15); /* read in the view, not merged */
	pk_log_destroy(ro);
}

/* Waits (20 s at most) until @fd's output, gathered in @buf, holds @want. */
static bool wait_output(int fd, char *buf, size_t size, size_t *len, const char *want)
{
	uint64_t t0 = now_ms();

	while (!strstr(buf, want) && now_ms() - t0 < 20000) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;

		ssize_t k = read(fd, buf + *len, size - 1 - *len);

		if (k <= 0)
			return false;
		*len += (size_t)k;
		buf[*len] = '\0';
	}
	return strstr(buf, want) != NULL;
}

/* udmesg -w, another process, follows a live writer's filtered lines,
 * which wait in its lane: each one shows up while the writer lives. */
static void test_udmesg_follows_lanes(void **state)
{
	(void)state;
	const char *path = test_dir_path("udmesg-w.log");
	const char *const follow[] = { "-w", NULL };
	char out[4096] = "", want[32];
	size_t len = 0;
	int fd;

	start_log(path, 1 << 17); /* the default; small-id builds too */
	pr_info("follow %s\n", "start");

	pid_t pid = test_spawn_udmesg(path, follow, &fd);

	assert_true(wait_output(fd, out, sizeof(out), &len, "follow start\n"));
	for (int i = 0; i < 5; i++) {
		snprintf(want, sizeof(want), "follow %d\n", i);
		pr_info("follow %d\n", i);
		if (!wait_output(fd, out, sizeof(out), &len, want)) {
			kill(pid, SIGKILL);
			fail_msg("udmesg -w did not show \"follow %d\" in 20 s; it showed:\n%s", i, out);
		}
	}

	struct prb_lanes_stats st;

	lanes_stats(&st);
	assert_int_equal(st.pending, 6); /* all in the lane: shown from there */
	kill(pid, SIGINT);

	int status;

	test_reap(pid, &status, 30000);
	close(fd);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A thread that exits gives its lane back; its records stay. */
static void *one_line(void *arg)
{
	(void)arg;
	pr_info("bye %d\n", 1);
	return NULL;
}

static void test_thread_exit_returns_lane(void **state)
{
	(void)state;
	start_log(NULL, 1 << 18);

	for (int i = 0; i < 40; i++) { /* more threads than lanes */
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, one_line, NULL), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
	}

	struct prb_lanes_stats st;

	lanes_stats(&st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.pending, 40);
	assert_int_equal(st.full, 0);
	assert_int_equal(pk_log_next_seq(pk_printk_log()) - pk_log_first_seq(pk_printk_log()), 40);
}

/* ---------------------------------------------- a merger killed anywhere -- */

/*
 * The merge stores lane records in batches of up to PRB_BATCH_MAX with one
 * ring reservation, named in the pool's journal first (docs/lanes.md, "The
 * merge"). A child writes KS_PER records from each of 3 threads, taking
 * turns so their timestamps interleave across the lanes, lets the threads
 * exit, then merges; a test point hook SIGKILLs it at its k-th point, for
 * every k until a merge runs to its end. After each kill a read-only
 * reader, and then a writable one (which finishes the dead merger's batch
 * where it was reserved), must each read every record exactly once, seqs
 * dense from 0 (no record lost, none made a hole), all in timestamp order,
 * the two alike; no lane record is left pending.
 */
#define KS_THREADS 3
#define KS_PER	   14 /* 42 records: a batch of 32 and one of 10 */

static sem_t ks_go[KS_THREADS], ks_done;
static atomic_int ks_points;
static int ks_kill_at;

static void *ks_writer(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int n = 0; n < KS_PER; n++) {
		sem_wait(&ks_go[t]);
		pr_info("t%d n%d %s\n", t, n, "lane");
		sem_post(&ks_done);
	}
	return NULL;
}

static void ks_hook(enum prb_testpoint tp)
{
	(void)tp;
	if (atomic_fetch_add(&ks_points, 1) + 1 == ks_kill_at)
		raise(SIGKILL);
}

static void ks_child(const char *path, int kill_at)
{
	pthread_t th[KS_THREADS];

	start_log(path, 1 << 17); /* what a small-ids build's ring holds */
	sem_init(&ks_done, 0, 0);
	for (int t = 0; t < KS_THREADS; t++) {
		sem_init(&ks_go[t], 0, 0);
		pthread_create(&th[t], NULL, ks_writer, (void *)(intptr_t)t);
	}
	for (int n = 0; n < KS_PER; n++)
		for (int t = 0; t < KS_THREADS; t++) {
			sem_post(&ks_go[t]);
			sem_wait(&ks_done);
		}
	for (int t = 0; t < KS_THREADS; t++)
		pthread_join(th[t], NULL);

	struct prb_lanes_stats st;

	prb_lanes_stats(ring(), &st);
	if (st.pending != KS_THREADS * KS_PER || st.merged != 0)
		_exit(3);
	ks_kill_at = kill_at;
	prb_set_testpoint_hook(ks_hook);
	prb_lanes_merge(ring());
	prb_set_testpoint_hook(NULL);
	prb_lanes_stats(ring(), &st);
	_exit(st.merged == KS_THREADS * KS_PER && st.pending == 0 ? 0 : 4);
}

/* Every record once, seqs dense from 0, time order; texts into @texts. */
static void ks_read(struct pk_log *log, char texts[][32])
{
	assert_int_equal(pk_log_first_seq(log), 0);
	read_dense(log, 0, KS_THREADS, KS_PER, true, texts);
}

static void test_merger_killed_each_step(void **state)
{
	(void)state;
	const char *path = test_dir_path("merger.log");
	static char ro_text[KS_THREADS * KS_PER][32], rw_text[KS_THREADS * KS_PER][32];
	int kills = 0;

	need_log_len(1 << 17);
	for (int k = 1;; k++) {
		pk_printk_exit();
		unlink(path);

		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			ks_child(path, k);

		int status;

		test_reap(pid, &status, 30000);
		if (WIFEXITED(status)) {
			/* The merge ran to its end: every point was tried. */
			assert_int_equal(WEXITSTATUS(status), 0);
			break;
		}
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		kills++;

		struct pk_log *log;
		struct prb_lanes_stats st;

		assert_int_equal(pk_log_open_file(&log, path, 0, PK_LOG_RDONLY), 0);
		ks_read(log, ro_text);
		pk_log_destroy(log);

		assert_int_equal(pk_log_open_file(&log, path, 0, 0), 0);
		ks_read(log, rw_text);
		prb_lanes_stats(pk_log_ring(log), &st);
		assert_int_equal(st.pending, 0);
		assert_int_equal(st.merged, KS_THREADS * KS_PER);
		assert_int_equal(st.corrupt, 0);
		assert_int_equal(st.in_use, 0);

		struct prb_stats rs;

		prb_get_stats(pk_log_ring(log), &rs);
		assert_int_equal(rs.holes + rs.stolen, 0);
		pk_log_destroy(log);
		for (int q = 0; q < KS_THREADS * KS_PER; q++)
			assert_string_equal(ro_text[q], rw_text[q]);
	}
	/* Two batches: a journal, its name before and after the reservation,
	 * three points a record, a lane's advance each. */
	assert_true(kills >= 2 * 3 + 3 * KS_THREADS * KS_PER);
}

/*
 * A merger storing another process's lane records is that record's
 * claimer, not the lane's writer. Process D writes CM_N lines into its
 * lane and is SIGKILLed (or stays alive); process M opens the file and
 * merges them, and stops itself (SIGSTOP) inside the batch at the last
 * record's claim, or after its content, before the commit. While M is
 * stopped, the test process (a third writer, writable handle) reads the
 * record in flight and runs the dead-writer recovery: the record is still
 * being written by a live process, so the read waits (-EAGAIN) and nothing
 * is made a hole. After SIGCONT, M's merge ends and the third writer stores
 * a line; every record reads back once, dense, D's with D's pid and tid as
 * their caller, the third's after them.
 * (The ring used to ask the writer registry about M's code with D's pid,
 * which it answers with "dead": the record became a hole, M's commit
 * failed and the record came back later under another seq.)
 */
#define CM_N 3

static atomic_int cm_points;
static int cm_point, cm_fd;

static void cm_hook(enum prb_testpoint tp)
{
	if ((int)tp == cm_point && atomic_fetch_add(&cm_points, 1) + 1 == CM_N) {
		if (write(cm_fd, "s", 1) != 1)
			_exit(5);
		raise(SIGSTOP);
	}
}

/* Wait (bounded) until @pid has stopped; false if it exited instead. */
static bool wait_stopped(pid_t pid)
{
	for (int i = 0; i < 30000; i++) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG | WUNTRACED);

		if (r == pid)
			return WIFSTOPPED(status);
		if (r < 0)
			return false;
		usleep(1000);
	}
	return false;
}

static void cm_case(const char *path, bool d_alive, enum prb_testpoint point)
{
	int ready[2], hold[2], stopped[2];

	pk_printk_exit();
	unlink(path);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(hold), 0);
	assert_int_equal(pipe(stopped), 0);

	pid_t d = fork();

	assert_true(d >= 0);
	if (d == 0) {
		struct prb_lanes_stats st;
		char c;

		close(hold[1]);
		start_log(path, 1 << 17);
		for (int n = 0; n < CM_N; n++)
			pr_info("d n%d %s\n", n, "lane");
		lanes_stats(&st);
		if (st.pending != CM_N || write(ready[1], "r", 1) != 1)
			_exit(3);
		if (!d_alive)
			raise(SIGKILL);
		/* Alive until the test is done; no exit handler merges. */
		if (read(hold[0], &c, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);

	char c;

	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	if (!d_alive) {
		int status;

		test_reap(d, &status, 30000);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}

	pid_t m = fork();

	assert_true(m >= 0);
	if (m == 0) {
		struct pk_log *log;
		struct prb_lanes_stats st;

		close(stopped[0]);
		cm_fd = stopped[1];
		cm_point = (int)point;
		/* A writable handle merges as it opens (it looks for the
		 * ring's end): the hook is in place before. */
		prb_set_testpoint_hook(cm_hook);
		if (pk_log_open_file(&log, path, 0, 0))
			_exit(3);
		prb_lanes_merge(pk_log_ring(log));
		prb_set_testpoint_hook(NULL);
		prb_lanes_stats(pk_log_ring(log), &st);
		_exit(atomic_load(&cm_points) == CM_N && st.merged == CM_N && st.pending == 0 ? 0 : 6);
	}
	close(stopped[1]);

	/* M inside its batch: the last record claimed, not committed. */
	bool m_stopped = read(stopped[0], &c, 1) == 1 && wait_stopped(m);
	struct pk_log *log = NULL;
	struct pk_record *r = malloc(sizeof(*r));
	struct prb_record *scratch = malloc(sizeof(*scratch));
	int open_err = -1, store_err = -1, inflight_err = 0;
	uint64_t inflight_seq = UINT64_MAX;
	unsigned made = 1;
	struct prb_stats rs = { 0 };

	close(stopped[0]);
	assert_non_null(r);
	assert_non_null(scratch);
	if (m_stopped && !(open_err = pk_log_open_file(&log, path, 0, 0))) {
		/* The third writer, at once (a record stalled for
		 * PRB_TAKEOVER_NS, a second, is taken over: D9): the record
		 * in flight, the recovery of dead writers' records. Results
		 * checked once M runs again. */
		inflight_err = pk_log_read(log, CM_N - 1, r, 0);
		if (!inflight_err)
			inflight_seq = r->seq;
		made = prb_recover(pk_log_ring(log), scratch);
		prb_get_stats(pk_log_ring(log), &rs);
	}
	kill(m, SIGCONT);
	/* Then a store: it waits for M's merge to end (a store while M
	 * stays stopped waits a second for it, long enough for the takeover:
	 * test_stopped_merger_waited_once) and takes the seq after the batch. */
	if (log)
		store_err = pk_log_store(log, 0, 6, "third", 5, NULL, 0);

	int status;

	test_reap(m, &status, 30000);
	if (!m_stopped)
		print_message("the merger did not stop: status 0x%x\n", (unsigned)status);
	assert_true(m_stopped);
	assert_int_equal(open_err, 0);
	assert_int_equal(store_err, 0);
	if (inflight_err != -EAGAIN)
		print_message("the record in flight read as %d (seq %llu)\n", inflight_err,
			      (unsigned long long)inflight_seq);
	assert_int_equal(inflight_err, -EAGAIN);
	assert_int_equal(made, 0);
	assert_int_equal(rs.holes + rs.stolen, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	/* Every record once, dense: D's three (its caller), then the third's. */
	assert_int_equal(pk_log_first_seq(log), 0);
	assert_int_equal(pk_log_next_seq(log), CM_N + 1);
	for (uint64_t q = 0; q <= CM_N; q++) {
		char want[32];

		assert_int_equal(pk_log_read(log, q, r, 0), 0);
		assert_int_equal(r->seq, q);
		assert_int_equal(r->sigdepth, 0);
		if (q == CM_N) {
			assert_string_equal(r->text, "third");
			assert_int_equal(r->pid, (uint32_t)getpid());
			continue;
		}
		snprintf(want, sizeof(want), "d n%d lane", (int)q);
		assert_string_equal(r->text, want);
		assert_int_equal(r->pid, (uint32_t)d);
		assert_int_equal(r->tid, (uint32_t)d);
	}
	assert_int_equal(pk_log_read(log, CM_N + 1, r, 0), -EAGAIN);
	prb_get_stats(pk_log_ring(log), &rs);
	assert_int_equal(rs.holes + rs.stolen + rs.corrupt, 0);

	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.merged, CM_N);
	pk_log_destroy(log);
	free(r);
	free(scratch);

	close(hold[1]); /* D, if alive, exits */
	if (d_alive) {
		test_reap(d, &status, 30000);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void test_merger_of_other_process(void **state)
{
	(void)state;
	const char *path = test_dir_path("claimer.log");

	need_log_len(1 << 17);
	cm_case(path, false, PRB_TP_CLAIMED);
	cm_case(path, false, PRB_TP_BEFORE_COMMIT);
	cm_case(path, true, PRB_TP_CLAIMED);
	cm_case(path, true, PRB_TP_BEFORE_COMMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_parses),
		cmocka_unit_test_teardown(test_threads_read_once, teardown),
		cmocka_unit_test_teardown(test_causal_order, teardown),
		cmocka_unit_test_teardown(test_causal_order_ordered_clock, teardown),
		cmocka_unit_test_teardown(test_lane_clock_no_shared_floor, teardown),
		cmocka_unit_test_teardown(test_fast_path_same_words, teardown),
		cmocka_unit_test_teardown(test_fast_path_gate, teardown),
		cmocka_unit_test_teardown(test_postmortem_after_sigkill, teardown),
		cmocka_unit_test_teardown(test_readonly_numbers_hold_after_store, teardown),
		cmocka_unit_test_teardown(test_store_waits_for_merger, teardown),
		cmocka_unit_test_teardown(test_stopped_merger_waited_once, teardown),
		cmocka_unit_test_teardown(test_merger_killed_each_step, teardown),
		cmocka_unit_test_teardown(test_merger_of_other_process, teardown),
		cmocka_unit_test_teardown(test_signal_handler_interrupts, teardown),
		cmocka_unit_test_teardown(test_fork_child_own_lane, teardown),
		cmocka_unit_test_teardown(test_thread_exit_returns_lane, teardown),
		cmocka_unit_test_teardown(test_hostile_lanes_bounded, teardown),
		cmocka_unit_test_teardown(test_hostile_journal_bounded, teardown),
		cmocka_unit_test_teardown(test_every_reader_sees_lanes, teardown),
		cmocka_unit_test_teardown(test_follower_wakes, teardown),
		cmocka_unit_test_teardown(test_readonly_follower_reads_on, teardown),
		cmocka_unit_test_teardown(test_udmesg_follows_lanes, teardown),
		cmocka_unit_test_teardown(test_old_format_no_lanes, teardown),
		cmocka_unit_test_teardown(test_default_pool_sizes, teardown),
	};

	if (test_dir_make("lanes"))
		return 1;

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	test_dir_remove();
	return failed;
}
