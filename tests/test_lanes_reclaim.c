// SPDX-License-Identifier: MIT
/*
 * test_lanes_reclaim.c - a dead process's lane on a log file is reclaimed
 * by the writer registry's answer (src/ring/lanes.c, lane_owner_gone();
 * src/log/registry.c), not by kill(pid, 0), so a pid taken since by a live
 * process that never wrote the log does not keep the lane claimed.
 *
 * Real pid reuse, made on purpose in a pid namespace of the test's own (so
 * no other process takes the pid first): its init process I makes a log
 * file with lanes on and forks A, which prints lines no console prints
 * (they wait in A's lane, not merged) and is SIGKILLed. I then sets the
 * namespace's ns_last_pid so that its next child Q gets A's pid; Q opens
 * nothing and sleeps: kill(A's pid, 0) now finds Q alive. B, a later
 * writer, opens the file and takes A's registry slot (a new generation).
 * A's records must be merged (by B's open or I's read: each once, in
 * order, exact text) and A's lane freed.
 *
 * The second case: the same with A's slot not taken by a later writer. The
 * registry cannot tell then (a free lock is confirmed by the pid,
 * registry.c), so the lane may stay claimed; its records are merged all
 * the same, each once, in order.
 *
 * Needs CAP_SYS_ADMIN (a pid namespace and its ns_last_pid): it fails,
 * saying so, without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/printk.h>

#include "log/log_shared.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

#define LINES 40

static char path[4096];

/* Inside the namespace there is no cmocka: a failed check says why and
 * ends the process with 1. */
static void PK_PRINTF(1, 2) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "test_lanes_reclaim: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	_exit(1);
}

#define CHECK(cond, ...)                  \
	do {                              \
		if (!(cond))              \
			die(__VA_ARGS__); \
	} while (0)

/* A child that does @what, then says so on @fd and sleeps until killed. */
enum role { ROLE_LANE_WRITER, ROLE_WRITER, ROLE_BYSTANDER };

static pid_t start(enum role what)
{
	int ready[2];
	char c;

	CHECK(pipe(ready) == 0, "pipe: %s", strerror(errno));

	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct pk_log *log;

		close(ready[0]);
		pk_printk_exit(); /* the inherited default log: not ours */
		if (what == ROLE_LANE_WRITER) {
			pk_set_lanes(1);
			if (pk_set_log_buf_file(path, 0) != 0)
				_exit(6);
			pk_set_console_loglevel(1); /* pr_info() is filtered: the lane */
			for (unsigned i = 0; i < LINES; i++)
				pr_info("reclaim line %u of pid %d\n", i, (int)getpid());
		} else if (what == ROLE_WRITER) {
			if (pk_log_open_file(&log, path, 0, 0) != 0)
				_exit(7);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(5);
		for (;;)
			pause();
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1, "child %d did not start", (int)pid);
	close(ready[0]);
	return pid;
}

static void stop(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
}

/* The next child of this pid namespace gets @pid. */
static void next_pid_is(pid_t pid)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid - 1);

	CHECK(fd >= 0, "/proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	CHECK(write(fd, buf, (size_t)n) == n, "ns_last_pid: %s", strerror(errno));
	close(fd);
}

static uint64_t in_use(struct pk_log *log)
{
	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	return st.in_use;
}

/* Every line of @a once, in order, exact, after @seq; returns the seq after. */
static uint64_t read_lines(struct pk_log *log, uint64_t seq, pid_t a)
{
	static struct pk_record rec;
	char want[96];
	unsigned n = 0;

	while (pk_log_read(log, seq, &rec, 0) == 0) {
		CHECK(rec.seq == seq, "seq %llu read as %llu: not dense", (unsigned long long)seq,
		      (unsigned long long)rec.seq);
		snprintf(want, sizeof(want), "reclaim line %u of pid %d", n, (int)a);
		CHECK(n < LINES && !strcmp(rec.text, want), "record %llu: \"%s\", expected \"%s\"",
		      (unsigned long long)seq, rec.text, want);
		CHECK(rec.pid == (uint32_t)a, "record %llu: pid %u", (unsigned long long)seq, rec.pid);
		n++;
		seq++;
	}
	CHECK(n == LINES, "%u of A's %u lines read", n, LINES);
	return seq;
}

/* One round: A writes and dies; B (if @retake) takes its slot; Q takes its
 * pid; I merges. Returns whether A's lane was freed. */
static int round_trip(struct pk_log *log, uint64_t *seq, int retake)
{
	pid_t a = start(ROLE_LANE_WRITER);

	stop(a);

	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	CHECK(st.in_use == 1 && st.pending == LINES, "after A: %llu lanes in use, %llu pending",
	      (unsigned long long)st.in_use, (unsigned long long)st.pending);

	next_pid_is(a);

	pid_t q = start(ROLE_BYSTANDER);

	CHECK(q == a, "the bystander got pid %d, not A's %d", (int)q, (int)a);
	CHECK(kill(a, 0) == 0, "A's pid does not answer kill(): %s", strerror(errno));

	/* B's open merges, too: after Q took the pid. */
	pid_t b = retake ? start(ROLE_WRITER) : 0;

	*seq = read_lines(log, *seq, a); /* a writable handle: merges */
	prb_lanes_stats(pk_log_ring(log), &st);
	CHECK(st.pending == 0 && st.corrupt == 0, "after the merge: %llu pending, %llu damaged",
	      (unsigned long long)st.pending, (unsigned long long)st.corrupt);

	int freed = in_use(log) == 0;

	stop(q);
	if (b)
		stop(b);
	return freed;
}

static void namespace_init(void)
{
	struct pk_log *log;
	uint64_t seq = 0;

	pk_set_lanes(1);
	unlink(path);
	CHECK(pk_log_open_file(&log, path, 64 * 1024, 0) == 0, "cannot make the log");
	pk_set_lanes(0);
	CHECK(pk_log_ring(log)->lanes != NULL, "no lane pool");

	/* A's slot taken by B: the registry knows A is gone. */
	CHECK(round_trip(log, &seq, 1), "A's lane is still claimed: its pid's new process was "
					"taken for its owner (kill(), not the registry)");

	/* A's slot free: the pid decides, as for the ring's records (the lane
	 * may stay claimed); the records are merged all the same. */
	round_trip(log, &seq, 0);
	pk_log_destroy(log);
	_exit(0);
}

static void test_reused_pid_lane_reclaimed(void **state)
{
	(void)state;

	pid_t outer = fork();

	assert_true(outer >= 0);
	if (outer == 0) {
		/* The new namespace is for this process's children: its first
		 * one is the namespace's init. */
		if (unshare(CLONE_NEWPID) != 0) {
			fprintf(stderr, "test_lanes_reclaim: a pid namespace of its own: %s (needs "
					"CAP_SYS_ADMIN)\n",
				strerror(errno));
			_exit(2);
		}

		pid_t init = fork();

		if (init < 0)
			_exit(3);
		if (init == 0)
			namespace_init();

		int status;

		if (waitpid(init, &status, 0) != init)
			_exit(4);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 10 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
	}

	int status;

	test_reap(outer, &status, 120 * 1000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reused_pid_lane_reclaimed),
	};

	if (test_dir_make("test_lanes_reclaim"))
		return 1;
	snprintf(path, sizeof(path), "%s", test_dir_path("reclaim.log"));

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	test_dir_remove();
	return failed;
}
