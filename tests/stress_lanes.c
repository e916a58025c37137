// SPDX-License-Identifier: MIT
/*
 * stress_lanes.c - the flight recorder's lanes (src/ring/lanes.c) under
 * SIGKILL, bounded in time.
 *
 * Each iteration forks a writer process on a shared log file with
 * printk.lanes on: 1 to 3 threads store self-checking lines no console
 * prints ("i<iter> t<thread> c<counter> <pad derived from all three>") as
 * fast as they can, up to a bound, so lanes fill, writers merge them into
 * the ring and the killed process may be anywhere: inside a lane store,
 * holding the merge lock between a ring store and the lane's advance, or
 * inside a ring store. The parent SIGKILLs it 0-3 ms after its first line,
 * then reads everything up to the end, alternately through a read-only
 * handle (which sees unmerged lane records in its view) and through a
 * writer handle (which merges them and frees the dead process's lanes).
 *
 * Checked per iteration: every line intact; each thread's counters
 * arrive exactly once and in order, from 0 with no gap (a lane store is
 * published by one release, so a killed one leaves nothing); the seq gaps
 * (records lost: a ring store cut by the kill) are at most the child's
 * threads; after a writer read no lane is held and none is pending. At the
 * end a post-mortem read-only pass reads the whole file again.
 *
 * Duration: PRINTK_STRESS_MS (default 3000 ms), at least 40 iterations.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/printk.h>

#include "log/log_shared.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

#define LOG_LEN	   (1u << 20)
#define PER_THREAD 3000u
#define MAX_ITERS  100000u

static const char *path;
static struct pk_record rec;

static void make_pad(char *pad, unsigned iter, unsigned t, unsigned c)
{
	unsigned len = (iter * 7 + t * 5 + c * 3) % 40;

	for (unsigned k = 0; k < len; k++)
		pad[k] = (char)('a' + (iter + t + c + k) % 26);
	pad[len] = '\0';
}

struct wr {
	unsigned iter, t;
	int ready_fd;
};

static void *child_thread(void *arg)
{
	struct wr *w = arg;
	char pad[48];

	for (unsigned c = 0; c < PER_THREAD; c++) {
		make_pad(pad, w->iter, w->t, c);
		pr_info("i%u t%u c%u %s\n", w->iter, w->t, c, pad);
		if (c == 0 && w->t == 0 && write(w->ready_fd, "r", 1) != 1)
			_exit(5);
	}
	for (;;)
		pause();
	return NULL;
}

static void child_main(unsigned iter, unsigned threads, int ready_fd)
{
	pk_printk_exit();
	pk_set_lanes(1);
	if (pk_set_log_buf_file(path, 0) != 0)
		_exit(6);
	pk_set_console_loglevel(1);

	struct wr w[3];
	pthread_t th[3];

	for (unsigned t = 0; t < threads; t++) {
		w[t] = (struct wr){ .iter = iter, .t = t, .ready_fd = ready_fd };
		if (pthread_create(&th[t], NULL, child_thread, &w[t]))
			_exit(7);
	}
	for (;;)
		pause();
}

struct seen {
	unsigned next[3];
};

/* One record: intact and in its thread's order. Returns its iteration. */
static void check_record(unsigned iter, struct seen *s)
{
	unsigned i, t, c;
	int end = 0;
	char pad[48];

	if (sscanf(rec.text, "i%u t%u c%u %n", &i, &t, &c, &end) != 3)
		fail_msg("not a writer's line: \"%s\"", rec.text);
	assert_int_equal(i, iter);
	assert_true(t < 3);
	make_pad(pad, i, t, c);
	assert_string_equal(rec.text + end, pad);
	if (c != s->next[t])
		fail_msg("iteration %u thread %u: counter %u, expected %u", i, t, c, s->next[t]);
	s->next[t]++;
}

static void read_all(struct pk_log *log, unsigned iter, uint64_t *seq, uint64_t *gaps,
		     struct seen *s)
{
	for (;;) {
		int err = pk_log_read(log, *seq, &rec, 0);

		if (err == -EAGAIN) {
			/* A dead writer's unfinished record: readers step over it. */
			struct prb_record r;

			if (prb_read(pk_log_ring(log), *seq, &r, PRB_READ_SKIP_UNFINISHED))
				break;
			*gaps += r.seq - *seq;
			*seq = r.seq;
			continue;
		}
		assert_int_equal(err, 0);
		*gaps += rec.seq - *seq;
		*seq = rec.seq + 1;
		check_record(iter, s);
	}
}

/* A writer handle's read: the lanes' records enter the ring as the ring
 * takes them; a slot the killed process reserved and never claimed
 * refuses stores for up to PRB_STALL_NS (100 ms), so read again until
 * nothing is pending, for at most 2 s. */
static void read_all_rw(struct pk_log *log, unsigned iter, uint64_t *seq, uint64_t *gaps,
			struct seen *s)
{
	uint64_t t0 = now_ms();
	struct prb_lanes_stats st;

	for (;;) {
		read_all(log, iter, seq, gaps, s);
		prb_lanes_stats(pk_log_ring(log), &st);
		if (!st.pending)
			return;
		if (now_ms() - t0 > 2000)
			fail_msg("%llu lane records not merged after 2 s",
				 (unsigned long long)st.pending);
		usleep(5000);
	}
}

static void test_sigkill_loop(void **state)
{
	/* A small-ids build's ring holds at most 128 KiB. */
	if (LOG_LEN > (1u << PRB_DATA_MAX_BITS)) {
		print_message("a %u-byte log is more than this build's ring holds\n", LOG_LEN);
		skip();
	}
	(void)state;
	struct pk_log *log;
	unsigned ms = stress_ms(3000), iter;
	uint64_t t0 = now_ms(), seq = 0, kills_mid = 0;
	uint64_t seed = (uint64_t)time(NULL);

	print_message("seed %llu\n", (unsigned long long)seed);
	srand((unsigned)seed);
	pk_set_lanes(1);
	unlink(path);
	assert_int_equal(pk_log_open_file(&log, path, LOG_LEN, 0), 0);
	assert_non_null(pk_log_ring(log)->lanes);

	for (iter = 0; iter < MAX_ITERS && (iter < 40 || now_ms() - t0 < ms); iter++) {
		unsigned threads = 1 + iter % 3;
		int ready[2];

		assert_int_equal(pipe(ready), 0);

		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			close(ready[0]);
			child_main(iter, threads, ready[1]);
		}
		close(ready[1]);

		char c;

		assert_int_equal(read(ready[0], &c, 1), 1);
		close(ready[0]);

		struct timespec ts = { 0, (long)(rand() % 3000) * 1000 };

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);

		int status;

		test_reap(pid, &status, 30000);
		assert_true(WIFSIGNALED(status));

		struct seen s = { { 0 } };
		uint64_t gaps = 0;

		if (iter % 2) {
			struct pk_log *ro;

			assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);

			uint64_t ro_seq = seq;

			read_all(ro, iter, &ro_seq, &gaps, &s);
			pk_log_destroy(ro);
			/* The writer handle then numbers them as the view did. */
			struct seen s2 = { { 0 } };
			uint64_t gaps2 = 0;

			read_all_rw(log, iter, &seq, &gaps2, &s2);
			if (seq != ro_seq) {
				struct prb_lanes_stats x;

				prb_lanes_stats(pk_log_ring(log), &x);
				print_message("iter %u: ro %llu rw %llu; in_use %llu pending %llu merged %llu full %llu\n", iter,
					      (unsigned long long)ro_seq, (unsigned long long)seq,
					      (unsigned long long)x.in_use, (unsigned long long)x.pending,
					      (unsigned long long)x.merged, (unsigned long long)x.full);
			}
			assert_int_equal(seq, ro_seq);
			assert_int_equal(gaps2, gaps);
			for (unsigned t = 0; t < 3; t++)
				assert_int_equal(s2.next[t], s.next[t]);
		} else {
			read_all_rw(log, iter, &seq, &gaps, &s);
		}
		assert_true(gaps <= threads);
		for (unsigned t = 0; t < threads; t++) {
			assert_true(s.next[t] >= (t == 0 ? 1u : 0u));
			kills_mid += s.next[t] < PER_THREAD;
		}

		struct prb_lanes_stats st;

		prb_lanes_stats(pk_log_ring(log), &st);
		assert_int_equal(st.in_use, 0);
		assert_int_equal(st.pending, 0);
		assert_int_equal(st.corrupt, 0);
	}
	print_message("%u iterations, %llu threads killed while writing\n", iter,
		      (unsigned long long)kills_mid);
	pk_log_destroy(log);

	/* Post-mortem: the whole file again, read-only, every line intact. */
	struct pk_log *ro;

	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);

	uint64_t n = 0;

	for (uint64_t q = pk_log_first_seq(ro); q < pk_log_next_seq(ro); q++) {
		if (pk_log_read(ro, q, &rec, 0))
			continue;
		q = rec.seq;

		unsigned i, t, c;
		int end = 0;
		char pad[48];

		assert_int_equal(sscanf(rec.text, "i%u t%u c%u %n", &i, &t, &c, &end), 3);
		make_pad(pad, i, t, c);
		assert_string_equal(rec.text + end, pad);
		n++;
	}
	assert_true(n > 0);
	pk_log_destroy(ro);
	pk_set_lanes(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_loop),
	};

	if (test_dir_make("stress_lanes"))
		return 1;
	path = strdup(test_dir_path("lanes.log"));

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	test_dir_remove();
	return failed;
}
