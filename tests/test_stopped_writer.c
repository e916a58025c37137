// SPDX-License-Identifier: MIT
/*
 * test_stopped_writer.c - a writer process stopped inside its record
 * (SIGSTOP, a debugger, a frozen cgroup) while other processes write the
 * same log file.
 *
 * The stopped writer is a child that stops itself (SIGSTOP) at a test
 * point inside its reservation: right after its claim. The other writer
 * (this process) stores records until the ring has wrapped many times:
 *   - its stores fail only while the ring waits for the stopped record, for
 *     a bounded time (the record is then taken from the stopped writer as a
 *     hole, counted), and never again after that;
 *   - a reader sees the stopped record as a gap, every other record that is
 *     still in the ring, and nothing that was never stored;
 *   - resumed, the stopped writer learns its record was lost (-ENOBUFS),
 *     writes nothing into what the ring holds now, and stores again.
 * The same with a printk process: each of its lines reaches its console
 * (once the stopped record is taken) or is counted in a notice saying it
 * could not be stored, each exactly once, also when the notice itself is
 * refused (a thread of the process holding the oldest record).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "log/log_internal.h"
#include "testutil.h"

#define LOG_LEN	  4096u
#define STORES	  3000 /* about 40 laps of a 4 KiB log */
#define BOUND_MS  5000 /* the ring waits 1 s for a stopped writer; slack for a busy machine */
#define STOPPED	  "the stopped writer's line"
#define RESUMED	  "the stopped writer, resumed"

static struct pk_record rec;
static int stop_armed = 1;
static pid_t stopped_pid; /* killed by the teardown if a test fails */

static void stop_after_claim(enum prb_testpoint tp)
{
	if (tp == PRB_TP_CLAIMED && stop_armed) {
		stop_armed = 0;
		raise(SIGSTOP);
	}
}

/* The child: stops inside its first record; once resumed, says what its
 * store returned and stores again. */
static void stopped_writer(const char *path, int report_fd)
{
	struct pk_log *log;
	int r[2];

	if (pk_log_open_file(&log, path, 0, 0))
		_exit(10);
	prb_set_testpoint_hook(stop_after_claim);
	r[0] = pk_log_store(log, 0, 6, STOPPED, strlen(STOPPED), NULL, 0);
	r[1] = pk_log_store(log, 0, 6, RESUMED, strlen(RESUMED), NULL, 0);
	if (write(report_fd, r, sizeof(r)) != sizeof(r))
		_exit(11);
	pk_log_destroy(log);
	_exit(0);
}

static pid_t start_stopped_writer(const char *path, int *report_fd)
{
	int p[2], status;

	assert_int_equal(pipe(p), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		stopped_writer(path, p[1]);
	}
	close(p[1]);
	*report_fd = p[0];
	stopped_pid = pid;
	/* Wait until it stopped inside its record. */
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	assert_true(WIFSTOPPED(status));
	return pid;
}

static void resume_and_check(pid_t pid, int report_fd)
{
	int r[2], status;

	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_int_equal(read(report_fd, r, sizeof(r)), (ssize_t)sizeof(r));
	close(report_fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	stopped_pid = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(r[0], -ENOBUFS); /* its record was taken */
	assert_int_equal(r[1], 0);
}

/* Every record from the first on: known texts only, seqs increasing. */
static unsigned read_all(struct pk_log *log, int *saw_resumed)
{
	unsigned n = 0;
	uint64_t seq = pk_log_first_seq(log);

	while (pk_log_read(log, seq, &rec, 0) == 0) {
		assert_true(rec.seq >= seq);
		if (strncmp(rec.text, "other ", 6) != 0 && strcmp(rec.text, RESUMED) != 0)
			fail_msg("seq %llu: a record never stored: \"%s\"", (unsigned long long)rec.seq,
				 rec.text);
		if (saw_resumed && !strcmp(rec.text, RESUMED))
			*saw_resumed = 1;
		seq = rec.seq + 1;
		n++;
	}
	return n;
}

static void test_stopped_in_record(void **state)
{
	(void)state;
	const char *p = test_dir_path("stopped.log");
	struct pk_log *log, *reader;
	struct prb_stats st0, st1;
	char text[64];
	int report_fd, saw_resumed = 0;
	unsigned failed = 0, succeeded_after_failing = 0;
	uint64_t first_fail = 0, last_fail = 0;

	unlink(p);
	assert_int_equal(pk_log_open_file(&log, p, LOG_LEN, 0), 0);
	assert_int_equal(pk_log_store(log, 0, 6, "other 0", 7, NULL, 0), 0);
	prb_get_stats(pk_log_ring(log), &st0);

	pid_t pid = start_stopped_writer(p, &report_fd);

	for (unsigned i = 1; i < STORES; i++) {
		int n = snprintf(text, sizeof(text), "other %u", i);
		int err;

		while ((err = pk_log_store(log, 0, 6, text, (size_t)n, NULL, 0)) == -ENOBUFS) {
			if (!failed++)
				first_fail = now_ms();
			else if (succeeded_after_failing)
				fail_msg("store %u failed again after the ring went on", i);
			last_fail = now_ms();
			if (last_fail - first_fail > BOUND_MS)
				fail_msg("the ring waited %llu ms for the stopped writer",
					 (unsigned long long)(last_fail - first_fail));
		}
		assert_int_equal(err, 0);
		succeeded_after_failing = failed > 0;
	}
	/* The ring was blocked (it wrapped to the stopped record), then not. */
	assert_true(failed > 0);
	prb_get_stats(pk_log_ring(log), &st1);
	assert_int_equal(st1.holes - st0.holes, 1);
	assert_int_equal(st1.corrupt - st0.corrupt, 0);

	/* A reader: the stopped record is a gap; all else is what was stored. */
	assert_int_equal(pk_log_open_file(&reader, p, 0, PK_LOG_RDONLY), 0);
	assert_true(read_all(reader, NULL) > 0);

	resume_and_check(pid, report_fd);
	assert_true(read_all(reader, &saw_resumed) > 0);
	assert_true(saw_resumed);
	pk_log_destroy(reader);
	prb_get_stats(pk_log_ring(log), &st1);
	assert_int_equal(st1.corrupt - st0.corrupt, 0); /* it wrote nothing late */
	pk_log_destroy(log);
}

#define PRINTED_LINES 3000

/* A printk program on the same log file, its console on stderr, printing
 * for about two seconds. */
static int printk_writer(void *arg)
{
	if (pk_set_log_buf_len(LOG_LEN) || pk_set_log_buf_file(arg, 0))
		return 10;
	pk_set_printk_time(0);

	int refused = 0;

	for (int i = 0; i < PRINTED_LINES; i++) {
		/* 0: the ring refused the line (it is never empty). */
		refused += printk(KERN_INFO "line %d\n", i) == 0;
		if (i % 2)
			usleep(1000); /* the run outlasts the 1 s the ring waits */
	}
	/* The console is printed by printk itself: every notice is out. */
	dprintf(1, "refused %d\n", refused);
	return 0;
}

/*
 * printk while another process is stopped in its record: every line
 * reaches the console, or is counted in a notice that says it was not
 * stored, or in the console's "messages dropped" line; the console goes on
 * past the stopped record.
 */
static void test_printk_beside_stopped_writer(void **state)
{
	(void)state;
	const char *p = test_dir_path("stopped-printk.log");
	struct pk_log *log;
	struct child_result res;
	int report_fd;
	unsigned long printed = 0, unstored = 0, dropped = 0, refused = ULONG_MAX;

	unlink(p);
	assert_int_equal(pk_log_open_file(&log, p, LOG_LEN, 0), 0);
	pk_log_destroy(log);

	pid_t pid = start_stopped_writer(p, &report_fd);

	run_child(printk_writer, (void *)p, 30000, &res);
	if (!res.exited || res.status != 0)
		fail_msg("printk child %s %d:\n%s", res.exited ? "exited" : "killed by signal",
			 res.exited ? res.status : res.sig, res.out);
	for (char *line = res.out, *end; *line; line = end + 1) {
		unsigned long n;
		int i;

		end = strchr(line, '\n');
		assert_non_null(end);
		*end = '\0';
		if (sscanf(line, "line %d", &i) == 1)
			printed++;
		else if (sscanf(line, "printk: %lu messages not stored", &n) == 1)
			unstored += n;
		else if (sscanf(line, "** %lu printk messages dropped **", &n) == 1)
			dropped += n;
		else if (sscanf(line, "refused %lu", &n) == 1)
			refused = n;
		else
			fail_msg("unexpected console line: %s", line);
	}
	child_result_free(&res);
	if (refused == ULONG_MAX)
		fail_msg("the child did not say how many lines were refused");
	if (unstored == 0)
		fail_msg("nothing was refused (%lu lines printed)", printed);
	/* Each refused line is counted in a notice, each exactly once. */
	if (unstored != refused)
		fail_msg("%lu lines refused, the notices count %lu (%lu printed, %lu dropped)", refused, unstored,
			 printed, dropped);
	/* The console's own losses: the stopped record (a hole), and lines
	 * the ring overwrote while the console waited at that record. */
	assert_int_equal(printed + unstored + dropped, PRINTED_LINES + 1);
	resume_and_check(pid, report_fd);
}

/*
 * A line that needs no room (pr_cont("\n") ending this thread's open line)
 * is stored while the ring still refuses everything else: the notice that
 * counts the refused lines is refused too, and must keep its count for the
 * next line stored. Here a thread of the same process holds the ring's
 * oldest record (stopped in the test hook), so the ring refuses for as
 * long as the test wants.
 */
static _Thread_local int hold_here;
static sem_t held, release_held;

static void hold_after_claim(enum prb_testpoint tp)
{
	if (tp == PRB_TP_CLAIMED && hold_here) {
		hold_here = 0;
		sem_post(&held);
		while (sem_wait(&release_held) && errno == EINTR)
			;
	}
}

static void *holding_writer(void *arg)
{
	(void)arg;
	hold_here = 1;
	printk(KERN_INFO "held\n");
	return NULL;
}

static int refused_notice_child(void *arg)
{
	(void)arg;
	pthread_t t;
	char text[64];
	int refused = 0, i;

	CHILD_CHECK(pk_set_log_buf_len(LOG_LEN) == 0);
	CHILD_CHECK(pk_printk_configure("console=none") == 0);
	pk_set_printk_time(0);
	CHILD_CHECK(sem_init(&held, 0, 0) == 0 && sem_init(&release_held, 0, 0) == 0);
	prb_set_testpoint_hook(hold_after_claim);
	CHILD_CHECK(pthread_create(&t, NULL, holding_writer, NULL) == 0);
	while (sem_wait(&held) && errno == EINTR)
		;
	/* Open lines (no newline) until the ring refuses one: it waits a
	 * second for the held record, then gives up. The last one stored
	 * stays open, the newest record. */
	for (i = 0; i < 100000 && !refused; i++) {
		snprintf(text, sizeof(text), "open %d", i);
		refused = printk(KERN_INFO "%s", text) == 0;
	}
	CHILD_CHECK(refused);
	CHILD_CHECK(printk(KERN_INFO "refused at once\n") == 0);
	refused++;
	/* Stored without room: the notice after it is refused. */
	pr_cont("\n");
	sem_post(&release_held);
	CHILD_CHECK(pthread_join(t, NULL) == 0);
	prb_set_testpoint_hook(NULL);
	CHILD_CHECK(printk(KERN_INFO "after\n") == 5);

	struct pk_log *log = pk_printk_log();
	unsigned long noticed = 0, n;
	int ended = 0;

	/* The last line stored before the refusals: ended by the pr_cont. */
	snprintf(text, sizeof(text), "open %d", i - 2);
	for (uint64_t s = pk_log_first_seq(log); s < pk_log_next_seq(log); s++) {
		if (pk_log_read(log, s, &rec, 0))
			continue;
		if (sscanf(rec.text, "printk: %lu messages not stored", &n) == 1)
			noticed += n;
		if (!strcmp(rec.text, text))
			ended = (rec.flags & PK_REC_NEWLINE) != 0;
	}
	CHILD_CHECK(ended);
	if (noticed != (unsigned long)refused) {
		dprintf(2, "%d lines refused, the notices count %lu\n", refused, noticed);
		return 1;
	}
	return 0;
}

static void test_refused_notice_keeps_count(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(refused_notice_child, NULL, 30000, &res);
	child_result_free(&res);
}

static int teardown_child(void **state)
{
	(void)state;
	if (stopped_pid > 0) {
		kill(stopped_pid, SIGKILL);
		waitpid(stopped_pid, NULL, 0);
		stopped_pid = 0;
	}
	return 0;
}

static int setup_dir(void **state)
{
	(void)state;
	return test_dir_make("pk_test_stopped");
}

static int teardown_dir(void **state)
{
	(void)state;
	return test_dir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stopped_in_record, teardown_child),
		cmocka_unit_test_teardown(test_printk_beside_stopped_writer, teardown_child),
		cmocka_unit_test(test_refused_notice_keeps_count),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
