// SPDX-License-Identifier: MIT
/*
 * test_console_rotate.c - consoles for daemons:
 *   - a file console rotating by size keeps exactly `keep` old files
 *     besides PATH, none past its size, every line of the last ones once,
 *     in order across PATH.keep ... PATH.1, PATH;
 *   - two processes rotating one shared file: no line lost or doubled,
 *     each process's lines in order, each file within its size and a line
 *     per writer;
 *   - logrotate's rename, then SIGHUP whose handler calls
 *     pk_console_reopen_all(), while a program logs: no line lost, and once
 *     the flush after the signal has completed nothing more reaches the old
 *     file; for a console printed by its own thread too; reopen_all from
 *     a signal handler that lands anywhere in a printk, thousands of
 *     times: no printk begun after a handler returned writes before the
 *     reopen;
 *   - logrotate's rename and create with no signal: the console does not
 *     make PATH itself while logrotate may (the line goes on into the
 *     renamed file) and opens the file logrotate created; without a
 *     create it makes PATH after its wait, at once when the renamed file
 *     was removed; pk_console_set_rotate_time's bounds (rotation by time
 *     itself: tests/cli/test_console_rotate_time.sh, under a faked clock);
 *   - the stderr console disables itself, with one notice, once fd 2 is
 *     another file, and writes nothing into that file; fd 2 redirected
 *     with fd 1 is followed;
 *   - a console's own time style (pk_console_set_time_style) over
 *     printk.time (pk_set_printk_time_style), their bounds, and an iso-utc
 *     line's time against CLOCK_REALTIME around the call; threads printing
 *     wall-clock lines while the zone is re-read (every line well formed);
 *   - a console's own level (pk_console_set_loglevel), above and below
 *     console_loglevel, and ignore_loglevel over it; pk_console_find;
 *   - levels set by console name from another handle on the log file
 *     (pk_log_set_console_level, as udmesg -n NAME=LEVEL): applied before
 *     the next line, to consoles registered later too; the table's bounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "fixture.h"
#include "log/log_shared.h"
#include "readers/reader.h"
#include "testutil.h"

#ifdef PRINTK_TSAN
/* The SIGHUP test's child starts a printer thread after fork(). */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

static const char *numbered(const char *path, int n)
{
	static char buf[4][512];
	static int turn;
	char *b = buf[turn++ % 4];

	snprintf(b, sizeof(buf[0]), "%s.%d", path, n);
	return b;
}

/* ---- size rotation, one process ---- */

#define ROT_SIZE  300
#define ROT_KEEP  3
#define ROT_LINES 200

static int rotate_child(void *arg)
{
	const char *path = arg;
	struct console *con;

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	CHILD_CHECK(pk_console_file_set_rotation(con, ROT_SIZE, ROT_KEEP) == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	for (int i = 0; i < ROT_LINES; i++)
		pr_info("line %03d of the rotation test\n", i); /* 30 bytes */
	/* One line longer than a whole file gets a file of its own. */
	char big[ROT_SIZE + 50];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	pr_info("%s\n", big);
	pr_info("after the big one\n");
	CHILD_CHECK(pr_flush(10000, 0) == 1); /* lossless, through its thread: _exit() does not drain */
	return 0;
}

static void test_rotation_by_size(void **state)
{
	(void)state;
	struct child_result res;
	char all[1 << 16] = "";

	assert_int_equal(test_dir_make("pk_rotate"), 0);

	const char *path = test_dir_path("app.log");

	run_child_ok(rotate_child, (void *)path, 10000, &res);
	child_result_free(&res);

	/* Exactly ROT_KEEP old files besides PATH. */
	for (int i = 1; i <= ROT_KEEP; i++)
		assert_true(file_size(numbered(path, i)) >= 0);
	assert_int_equal(file_size(numbered(path, ROT_KEEP + 1)), -1);

	/* Oldest first: PATH.3, PATH.2, PATH.1, PATH. */
	for (int i = ROT_KEEP; i >= 0; i--) {
		const char *p = i ? numbered(path, i) : path;
		char *text = test_slurp(p, NULL);

		assert_non_null(text);
		strcat(all, text);
		free(text);
	}
	/* The last file holds the last line; the one before it only the big
	 * line; before that, whole lines up to the size, consecutive. */
	char *last = test_slurp(path, NULL);

	assert_string_equal(last, "after the big one\n");
	free(last);
	assert_int_equal(file_size(numbered(path, 1)), ROT_SIZE + 50);

	char *older = strstr(all, "line ");

	assert_non_null(older);
	int first = atoi(older + 5);

	assert_true(first > 0); /* the oldest files were dropped */
	char want[64];
	const char *p = older;

	for (int i = first; i < ROT_LINES; i++) {
		snprintf(want, sizeof(want), "line %03d of the rotation test\n", i);
		assert_memory_equal(p, want, strlen(want));
		p += strlen(want);
	}
	assert_int_equal(*p, 'x');
	for (int i = 2; i <= ROT_KEEP; i++) {
		assert_true(file_size(numbered(path, i)) <= ROT_SIZE);
		assert_true(file_size(numbered(path, i)) > ROT_SIZE - 30);
	}
	/* File boundaries fall between lines. */
	char *text = test_slurp(numbered(path, 2), NULL);

	assert_memory_equal(text, "line ", 5);
	free(text);
	test_dir_remove();
}

/* The C API's bounds. */
static void test_rotation_args(void **state)
{
	(void)state;
	struct console *con;

	assert_int_equal(pk_console_file_set_rotation(NULL, 100, 1), -EINVAL);
	assert_int_equal(pk_console_fd_create(&con, 1, "out"), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 100, 1), -EINVAL); /* not a file */
	pk_console_destroy(con);
	assert_int_equal(test_dir_make("pk_rotate"), 0);
	assert_int_equal(pk_console_file_create(&con, test_dir_path("a.log")), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 100, 0), -EINVAL);
	assert_int_equal(pk_console_file_set_rotation(con, 100, 1000), -EINVAL);
	assert_int_equal(pk_console_file_set_rotation(con, 100, 999), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 0, 0), 0);
	pk_console_destroy(con);
	test_dir_remove();
}

/* ---- two processes sharing one rotating file ---- */

#define SHARED_SIZE  2000
#define SHARED_KEEP  200
#define SHARED_LINES 3000

static int shared_writer(const char *path, char who)
{
	struct console *con;

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	CHILD_CHECK(pk_console_file_set_rotation(con, SHARED_SIZE, SHARED_KEEP) == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	for (int i = 0; i < SHARED_LINES; i++)
		pr_info("%c %05d\n", who, i); /* 8 bytes */
	CHILD_CHECK(pr_flush(30000, 0) == 1); /* lossless, through its thread: _exit() does not drain */
	return 0;
}

static int shared_child(void *arg)
{
	const char *path = arg;
	pid_t pids[2];

	for (int k = 0; k < 2; k++) {
		pids[k] = fork();
		CHILD_CHECK(pids[k] >= 0);
		if (pids[k] == 0)
			_exit(shared_writer(path, (char)('a' + k)));
	}
	for (int k = 0; k < 2; k++) {
		int st;

		CHILD_CHECK(waitpid(pids[k], &st, 0) == pids[k]);
		CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	return 0;
}

static void test_rotation_shared(void **state)
{
	(void)state;
	struct child_result res;
	int next[2] = { 0, 0 };
	int files = 0;

	assert_int_equal(test_dir_make("pk_rotate"), 0);

	const char *path = test_dir_path("shared.log");

	run_child_ok(shared_child, (void *)path, 60000, &res);
	child_result_free(&res);

	/* 2 x 3000 lines of 8 bytes in files of 2000: 24+ files, fewer than
	 * SHARED_KEEP, so every line is kept. */
	assert_int_equal(file_size(numbered(path, SHARED_KEEP)), -1);
	for (int i = SHARED_KEEP - 1; i >= 0; i--) {
		const char *p = i ? numbered(path, i) : path;
		size_t len;
		char *text = test_slurp(p, &len);

		if (!text)
			continue;
		files++;
		/* Its size, plus a line the other process wrote as this one
		 * rotated it away. */
		assert_true(len <= SHARED_SIZE + 8);
		for (char *l = text; *l; l += 8) {
			int who = l[0] - 'a';

			assert_true(who == 0 || who == 1);
			assert_int_equal(l[7], '\n');
			assert_int_equal(atoi(l + 2), next[who]); /* in order, none lost or doubled */
			next[who]++;
		}
		free(text);
	}
	assert_int_equal(next[0], SHARED_LINES);
	assert_int_equal(next[1], SHARED_LINES);
	assert_true(files >= 2 * SHARED_LINES * 8 / SHARED_SIZE);
	test_dir_remove();
}

/* ---- logrotate: rename, SIGHUP, reopen_all ---- */

static volatile sig_atomic_t hup_seen;

static void on_hup(int sig)
{
	(void)sig;
	pk_console_reopen_all();
	hup_seen = 1;
}

#define HUP_AFTER 2000
static int logrotate_threaded; /* the console has a printer thread */

static int logrotate_child(void *arg)
{
	const char *path = arg;
	char old[512];
	struct console *con;
	struct sigaction sa = { .sa_handler = on_hup };
	pid_t me = getpid(), rotator;
	int i = 0;

	snprintf(old, sizeof(old), "%s.1", path);
	CHILD_CHECK(sigaction(SIGHUP, &sa, NULL) == 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	if (logrotate_threaded)
		con->flags |= PK_CON_THREADED; /* lossless, as a file console is by default */
	else
		con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);

	/* Another process plays logrotate while this one logs. */
	rotator = fork();
	CHILD_CHECK(rotator >= 0);
	if (rotator == 0) {
		struct timespec ms = { 0, 20 * 1000 * 1000 };

		nanosleep(&ms, NULL);
		_exit(rename(path, old) == 0 && kill(me, SIGHUP) == 0 ? 0 : 1);
	}
	/* A threaded console is lossy when its thread falls behind a ring's
	 * worth: keep it in reach, this is about the reopen. */
	while (!hup_seen)
		if (pr_info("line %d\n", i++) && logrotate_threaded && i % 64 == 0)
			pr_flush(5000, 0);
	/* Once the next flush after the handler has completed, the old
	 * file must not grow. */
	pr_info("line %d\n", i++);
	CHILD_CHECK(pr_flush(5000, 0) == 1);

	off_t frozen = file_size(old);

	for (int k = 0; k < HUP_AFTER; k++)
		if (pr_info("line %d\n", i++) && logrotate_threaded && i % 64 == 0)
			pr_flush(5000, 0);
	CHILD_CHECK(pr_flush(5000, 0) == 1);
	CHILD_CHECK(file_size(old) == frozen);

	int st;

	CHILD_CHECK(waitpid(rotator, &st, 0) == rotator && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	dprintf(1, "%d\n", i);
	return 0;
}

static void test_logrotate_sighup(void **state)
{
	if (*state)
		logrotate_threaded = 1;
	struct child_result res;
	char path[512], old[520];

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	snprintf(path, sizeof(path), "%s", test_dir_path("daemon.log"));
	snprintf(old, sizeof(old), "%s.1", path);
	run_child_ok(logrotate_child, path, 30000, &res);

	int total = atoi(res.out);

	child_result_free(&res);
	assert_true(total > HUP_AFTER);

	char *a = test_slurp(old, NULL), *b = test_slurp(path, NULL);

	assert_non_null(a);
	assert_non_null(b);
	assert_true(strlen(b) > 0);
	/* Every line once, in order, the old file's first. */
	size_t joined_len = strlen(a) + strlen(b) + 1;
	char *joined = malloc(joined_len), *p;

	assert_non_null(joined);
	snprintf(joined, joined_len, "%s%s", a, b);
	p = joined;
	for (int i = 0; i < total; i++) {
		char want[32];

		snprintf(want, sizeof(want), "line %d\n", i);
		assert_memory_equal(p, want, strlen(want));
		p += strlen(want);
	}
	assert_string_equal(p, "");
	free(joined);
	free(a);
	free(b);
	test_dir_remove();
	logrotate_threaded = 0;
}

static int setup_threaded(void **state)
{
	static int yes = 1;

	setup_capture(state);
	*state = &yes;
	return 0;
}

/*
 * SIGHUP's pk_console_reopen_all() lands anywhere in a printk, thousands
 * of times (an interval timer): a printk begun after a handler returned
 * writes only once the console reopened, wherever the handler found the
 * lock. A handler that came right after printk took the lock, before it
 * read the store generation, used to leave its request to nobody: the
 * one-write path never looked, and every later line went to the old file.
 */
static volatile sig_atomic_t storm_begun;   /* handlers entered */
static volatile sig_atomic_t storm_done;    /* handlers returned */
static volatile sig_atomic_t storm_asked;   /* storm_done when the printk began */
static volatile sig_atomic_t storm_covered; /* storm_begun at the last reopen */
static volatile sig_atomic_t storm_late;

/* One handler at a time (SIGALRM is blocked in it), and the thread it
 * interrupted waits: a reopen covers every handler begun before it, as
 * requests left for the holder are served together. */
static void storm_handler(int sig)
{
	(void)sig;
	storm_begun++;
	pk_console_reopen_all();
	storm_done++;
}

static int storm_reopen(struct console *con)
{
	(void)con;
	storm_covered = storm_begun;
	return 0;
}

static void storm_on_write(struct capture *c, const char *text, size_t len)
{
	(void)text;
	(void)len;
	if (storm_covered < storm_asked)
		storm_late++;
	c->len = 0; /* the bytes are not the point */
}

#define STORM_SIGNALS 2000

static int reopen_storm_child(void *arg)
{
	(void)arg;
	struct sigaction sa = { .sa_handler = storm_handler };
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	uint64_t t0 = now_ms();

	cap.con.reopen = storm_reopen;
	cap.on_write = storm_on_write;
	CHILD_CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	CHILD_CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0);
	while (storm_done < STORM_SIGNALS && now_ms() - t0 < 100000) {
		storm_asked = storm_done;
		pr_info("line\n");
	}
	CHILD_CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	if (storm_late)
		dprintf(2, "%d printk calls wrote before a reopen asked before them (%d signals)\n", (int)storm_late,
			(int)storm_done);
	CHILD_CHECK(storm_done >= STORM_SIGNALS);
	CHILD_CHECK(storm_late == 0);
	return 0;
}

static void test_reopen_all_signal_storm(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(reopen_storm_child, NULL, 120000, &res);
	child_result_free(&res);
}

/* ---- logrotate's rename and create, without a signal ---- */

/*
 * A console that follows PATH (a size that never rotates) while logrotate
 * renames the file: it does not create PATH itself at once (logrotate's
 * create, with O_EXCL, would find it in the way): the next line goes on
 * into the renamed file; once logrotate created PATH, the console opens
 * that file. Without a create (nocreate), the console creates PATH after
 * its wait; at once when the renamed file was removed.
 */
static int follow_child(void *arg)
{
	const char *path = arg;
	char old[512], gone[512];
	struct console *con;
	struct stat st;

	snprintf(old, sizeof(old), "%s.1", path);
	snprintf(gone, sizeof(gone), "%s.gone", path);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	CHILD_CHECK(pk_console_file_set_rotation(con, ULLONG_MAX, 1) == 0);
	con->flags |= PK_CON_LOSSY; /* each line written by the call that prints it */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("one\n");

	/* create: rename, a line, then the new file (O_EXCL succeeds). */
	CHILD_CHECK(rename(path, old) == 0);
	pr_info("two\n");
	CHILD_CHECK(stat(path, &st) < 0 && errno == ENOENT);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHILD_CHECK(fd >= 0);
	close(fd);
	pr_info("three\n");
	char *moved = test_slurp(old, NULL);

	CHILD_CHECK(moved && strcmp(moved, "one\ntwo\n") == 0);
	free(moved);

	/* nocreate: the lines go on to the renamed file, then PATH is made. */
	CHILD_CHECK(rename(path, gone) == 0);
	uint64_t t0 = now_ms();

	pr_info("four\n");
	CHILD_CHECK(stat(path, &st) < 0 && errno == ENOENT);
	while (stat(path, &st) < 0 && now_ms() - t0 < 30000) {
		struct timespec ms = { 0, 50 * 1000 * 1000 };

		nanosleep(&ms, NULL);
		pr_info("waiting\n");
	}
	CHILD_CHECK(now_ms() - t0 >= 1900); /* 2 s: REOPEN_CREATE_WAIT_MS */
	pr_info("five\n");

	/* The renamed file removed (compressed at once): PATH at once. */
	CHILD_CHECK(unlink(old) == 0 && rename(path, old) == 0 && unlink(old) == 0);
	pr_info("six\n");
	CHILD_CHECK(stat(path, &st) == 0);
	return 0;
}

static void test_logrotate_create(void **state)
{
	(void)state;
	struct child_result res;
	char path[512], gone[520];

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	snprintf(path, sizeof(path), "%s", test_dir_path("app.log"));
	snprintf(gone, sizeof(gone), "%s.gone", path);
	run_child_ok(follow_child, path, 60000, &res);
	child_result_free(&res);

	char *a = test_slurp(gone, NULL), *b = test_slurp(path, NULL);

	assert_non_null(a);
	assert_non_null(b);
	/* PATH.gone: three (the file logrotate created), four, the waiting
	 * lines; PATH: the first line after it was created, and six. */
	assert_memory_equal(a, "three\nfour\nwaiting\n", 19);
	for (char *p = a + 11; *p; p += 8)
		assert_memory_equal(p, "waiting\n", 8);
	assert_string_equal(b, "six\n");
	free(a);
	free(b);
	test_dir_remove();
}

/* ---- rotation by time: the C API's bounds ---- */

static void test_rotate_time_args(void **state)
{
	(void)state;
	struct console *con;

	assert_int_equal(pk_console_set_rotate_time(NULL, PK_ROTATE_DAILY, 1), -EINVAL);
	assert_int_equal(pk_console_fd_create(&con, 1, "out"), 0);
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_DAILY, 1), -EINVAL); /* not a file */
	pk_console_destroy(con);
	assert_int_equal(test_dir_make("pk_rotate"), 0);
	assert_int_equal(pk_console_file_create(&con, test_dir_path("a.log")), 0);
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_DAILY, 0), -EINVAL);
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_HOURLY, 1000), -EINVAL);
	assert_int_equal(pk_console_set_rotate_time(con, 3, 5), -EINVAL);
	assert_int_equal(pk_console_set_rotate_time(con, -1, 5), -EINVAL);
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_HOURLY, 999), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 1000, 3), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 0, 0), 0); /* the period stays */
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_DAILY, 1), 0);
	assert_int_equal(pk_console_set_rotate_time(con, PK_ROTATE_NONE, 0), 0);
	pk_console_destroy(con);
	test_dir_remove();
}

/* ---- the stderr console and fd 2 ---- */

static int find_record(const char *text, int level)
{
	struct pk_log *log = pk_printk_log();
	int found = 0;

	for (uint64_t s = pk_log_first_seq(log); s < pk_log_next_seq(log); s++)
		if (pk_log_read(log, s, &rec, 0) == 0 && strcmp(rec.text, text) == 0 && rec.level == level)
			found++;
	return found;
}

static int fd2_child(void *arg)
{
	const char *path = arg;
	struct console *con = pk_console_stderr();

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("before\n");

	/* A daemon's start: 0-2 closed, and the next open takes fd 2. */
	close(2);

	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	CHILD_CHECK(fd == 2);
	pr_info("after\n");
	pr_err("and more\n");
	CHILD_CHECK(!(con->flags & PK_CON_ENABLED));
	CHILD_CHECK(find_record("printk: console [stderr] disabled: fd 2 is no longer the file it was at start-up",
				4) == 1);
	return 0;
}

/* Run @child with the path of an empty file it opens as fd 2 (a daemon's
 * data file); its stdout must be @want_out, and not a byte may reach the
 * file. */
static void run_fd2_child(int (*child)(void *), const char *want_out)
{
	struct child_result res;

	assert_int_equal(test_dir_make("pk_rotate"), 0);

	const char *path = test_dir_path("data.db");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	close(fd);
	run_child_ok(child, (void *)path, 5000, &res);
	assert_string_equal(res.out, want_out);
	child_result_free(&res);
	assert_int_equal(file_size(path), 0);
	test_dir_remove();
}

static void test_stderr_fd2_replaced(void **state)
{
	(void)state;
	run_fd2_child(fd2_child, "before\n");
}

/* The last console fails and stderr takes over as its fallback: after fd
 * 2 became another file, the fallback writes nothing there either. */
static int fd2_fallback_child(void *arg)
{
	const char *path = arg;
	struct console *full;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_unregister_console(pk_console_stderr()) == -EINVAL); /* set up, not registered */
	CHILD_CHECK(pk_console_fd_create(&full, fd, "full") == 0);
	CHILD_CHECK(pk_register_console(full) == 0);
	pk_set_printk_time(0);
	close(2);
	CHILD_CHECK(open(path, O_WRONLY | O_APPEND | O_CLOEXEC) == 2);
	for (int i = 0; i < 5; i++)
		pr_info("line %d\n", i);
	CHILD_CHECK(!(full->flags & PK_CON_ENABLED));
	CHILD_CHECK(!(pk_console_stderr()->flags & PK_CON_ENABLED));
	CHILD_CHECK(find_record("printk: console [stderr] disabled: fd 2 is no longer the file it was at start-up",
				4) == 1);
	return 0;
}

static void test_stderr_fd2_fallback(void **state)
{
	(void)state;
	run_fd2_child(fd2_fallback_child, "");
}

/* fd 2 redirected on purpose, with fd 1 (as 2>&1 or a forked child's
 * dup2 of one pipe onto both): the console follows it. */
static int fd12_child(void *arg)
{
	(void)arg;
	struct console *con = pk_console_stderr();
	int p[2];
	char buf[64] = "";

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("before\n");
	CHILD_CHECK(pipe(p) == 0);
	CHILD_CHECK(dup2(p[1], 1) == 1 && dup2(p[1], 2) == 2);
	pr_info("redirected\n");
	CHILD_CHECK(con->flags & PK_CON_ENABLED);
	CHILD_CHECK(read(p[0], buf, sizeof(buf) - 1) == 11);
	CHILD_CHECK(strcmp(buf, "redirected\n") == 0);
	return 0;
}

static void test_stderr_fd2_redirected(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(fd12_child, NULL, 5000, &res);
	assert_string_equal(res.out, "before\n");
	child_result_free(&res);
}

/* ---- a console's own level; pk_console_find ---- */

static int levels_child(void *arg)
{
	(void)arg;
	struct console *chatty, *terse;
	char pa[256], pb[256];

	snprintf(pa, sizeof(pa), "%s", test_dir_path("chatty.log"));
	snprintf(pb, sizeof(pb), "%s", test_dir_path("terse.log"));
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&chatty, pa) == 0);
	CHILD_CHECK(pk_console_file_create(&terse, pb) == 0);
	strcpy(chatty->name, "chatty");
	strcpy(terse->name, "terse");
	/* Printed as printk returns, with the levels of that moment. */
	chatty->flags |= PK_CON_LOSSY;
	terse->flags |= PK_CON_LOSSY;
	CHILD_CHECK(pk_console_set_loglevel(chatty, 8) == -EINVAL); /* not registered */
	CHILD_CHECK(pk_register_console(chatty) == 0);
	CHILD_CHECK(pk_register_console(terse) == 0);
	CHILD_CHECK(pk_console_find("chatty") == chatty);
	CHILD_CHECK(pk_console_find("terse") == terse);
	CHILD_CHECK(pk_console_find("nosuch") == NULL);
	CHILD_CHECK(pk_console_find(NULL) == NULL);
	pk_set_printk_time(0);
	pk_set_console_loglevel(4);

	CHILD_CHECK(pk_console_get_loglevel(chatty) == -1);
	CHILD_CHECK(pk_console_set_loglevel(chatty, 8) == -1);
	CHILD_CHECK(pk_console_set_loglevel(chatty, 16) == -EINVAL);
	CHILD_CHECK(pk_console_get_loglevel(chatty) == 8);
	printk(KERN_DEBUG "debug 2\n");
	pr_info("info 3\n");
	pr_warn("warn 4\n");

	CHILD_CHECK(pk_console_set_loglevel(terse, 1) == -1);
	pr_err("err 5\n");
	pr_emerg("emerg 6\n");

	pk_set_ignore_loglevel(1);
	printk(KERN_DEBUG "debug 7\n");
	pk_set_ignore_loglevel(0);

	CHILD_CHECK(pk_console_set_loglevel(chatty, -1) == 8);
	CHILD_CHECK(pk_console_set_loglevel(terse, -1) == 1);
	pr_info("info 8\n");
	pr_err("err 9\n");
	CHILD_CHECK(pk_unregister_console(chatty) == 0);
	CHILD_CHECK(pk_console_find("chatty") == NULL);
	return 0;
}

static void test_console_own_level(void **state)
{
	(void)state;
	struct child_result res;

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	run_child_ok(levels_child, NULL, 5000, &res);
	child_result_free(&res);

	char *a = test_slurp(test_dir_path("chatty.log"), NULL);
	char *b = test_slurp(test_dir_path("terse.log"), NULL);

	assert_string_equal(a, "debug 2\ninfo 3\nwarn 4\nerr 5\nemerg 6\ndebug 7\nerr 9\n");
	assert_string_equal(b, "emerg 6\ndebug 7\nerr 9\n");
	free(a);
	free(b);
	test_dir_remove();
}

/* ---- a console's own time style ---- */

static int time_style_child(void *arg)
{
	(void)arg;
	struct console *own, *follows;
	char pa[256], pb[256];
	struct timespec t0, t1;

	snprintf(pa, sizeof(pa), "%s", test_dir_path("own.log"));
	snprintf(pb, sizeof(pb), "%s", test_dir_path("follows.log"));
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&own, pa) == 0);
	CHILD_CHECK(pk_console_file_create(&follows, pb) == 0);
	CHILD_CHECK(pk_console_set_time_style(own, PK_TIME_ISO_UTC) == -EINVAL); /* not registered */
	/* Printed as printk returns, with the styles of that moment. */
	own->flags |= PK_CON_LOSSY;
	follows->flags |= PK_CON_LOSSY;
	CHILD_CHECK(pk_register_console(own) == 0);
	CHILD_CHECK(pk_register_console(follows) == 0);
	CHILD_CHECK(pk_console_get_time_style(own) == -1);
	CHILD_CHECK(pk_console_set_time_style(own, 4) == -EINVAL);
	CHILD_CHECK(pk_console_set_time_style(own, -2) == -EINVAL);
	CHILD_CHECK(pk_console_set_time_style(NULL, 1) == -EINVAL);
	CHILD_CHECK(pk_console_set_time_style(own, PK_TIME_ISO_UTC) == -1);
	CHILD_CHECK(pk_console_get_time_style(own) == PK_TIME_ISO_UTC);
	CHILD_CHECK(pk_set_printk_time_style(4) == -EINVAL);
	CHILD_CHECK(pk_set_printk_time_style(-1) == -EINVAL);
	CHILD_CHECK(pk_set_printk_time_style(PK_TIME_ISO) >= 0); /* the fixture chose one before */
	CHILD_CHECK(pk_set_printk_time_style(PK_TIME_NONE) == PK_TIME_ISO);
	CHILD_CHECK(pk_get_printk_time_style() == PK_TIME_NONE);
	clock_gettime(CLOCK_REALTIME, &t0);
	pr_info("one\n");
	clock_gettime(CLOCK_REALTIME, &t1);
	pk_set_printk_time(1); /* the old call: kernel style */
	CHILD_CHECK(pk_get_printk_time_style() == PK_TIME_KERNEL);
	CHILD_CHECK(pk_console_set_time_style(own, -1) == PK_TIME_ISO_UTC);
	pk_set_printk_time(0);
	pr_info("two\n");
	CHILD_CHECK(pk_console_set_time_style(own, PK_TIME_KERNEL) == -1);
	pr_info("three\n");
	printf("%lld.%09ld %lld.%09ld\n", (long long)t0.tv_sec, t0.tv_nsec, (long long)t1.tv_sec, t1.tv_nsec);
	fflush(stdout);
	return 0;
}

static void test_console_time_style(void **state)
{
	(void)state;
	struct child_result res;
	long long s0, s1;
	long n0, n1;

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	run_child_ok(time_style_child, NULL, 5000, &res);
	if (sscanf(res.out, "%lld.%ld %lld.%ld", &s0, &n0, &s1, &n1) != 4)
		fail_msg("child said: %s", res.out);
	child_result_free(&res);

	char *a = test_slurp(test_dir_path("own.log"), NULL);
	char *b = test_slurp(test_dir_path("follows.log"), NULL);
	struct tm tm = { 0 };
	int usec = -1, len = 0;

	/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ one", within the call's window. */
	assert_int_equal(sscanf(a, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ one\n%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
				&tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec, &len), 7);
	assert_int_equal(len, 32);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;

	long long us = (long long)timegm(&tm) * 1000000 + usec;

	/* The record's clock and the offset are two readings: a microsecond of slack. */
	assert_true(us >= s0 * 1000000 + n0 / 1000 - 1);
	assert_true(us <= s1 * 1000000 + n1 / 1000 + 1);
	assert_memory_equal(a + 32, "two\n[", 5); /* none, followed from printk.time, then kernel */
	assert_non_null(strstr(a + 38, "] three\n"));
	assert_string_equal(b, "one\ntwo\nthree\n");
	free(a);
	free(b);
	test_dir_remove();
}

#define WALL_THREADS 2
#define WALL_LINES   1000

static void *wall_printer(void *arg)
{
	for (int i = 0; i < WALL_LINES; i++)
		pr_info("t%d %d\n", (int)(intptr_t)arg, i);
	return NULL;
}

static int wall_race_child(void *arg)
{
	(void)arg;
	struct console *con;
	pthread_t t[WALL_THREADS];

	setenv("TZ", "Asia/Kolkata", 1);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, test_dir_path("wall.log")) == 0);
	con->flags |= PK_CON_LOSSY; /* printed as printk returns */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	CHILD_CHECK(pk_console_set_time_style(con, PK_TIME_ISO) == -1);
	for (int i = 0; i < WALL_THREADS; i++)
		CHILD_CHECK(pthread_create(&t[i], NULL, wall_printer, (void *)(intptr_t)i) == 0);
	/* Each call re-reads the zone while the threads format lines. */
	for (int i = 0; i < 50; i++)
		CHILD_CHECK(pk_console_set_time_style(con, PK_TIME_ISO) == PK_TIME_ISO);
	for (int i = 0; i < WALL_THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void test_console_time_style_race(void **state)
{
	(void)state;
	struct child_result res;
	size_t len;

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	run_child_ok(wall_race_child, NULL, 60000, &res);
	child_result_free(&res);

	char *a = test_slurp(test_dir_path("wall.log"), &len);
	int lines = 0;

	for (char *p = a, *nl; (nl = strchr(p, '\n')); p = nl + 1, lines++) {
		int y, mo, d, h, mi, s, us, n = 0;

		/* Every line has the zone's offset: none read a half-written table. */
		if (sscanf(p, "%4d-%2d-%2dT%2d:%2d:%2d.%6d+05:30 t%*d %*d%n", &y, &mo, &d, &h, &mi, &s, &us, &n) != 7 ||
		    p + n != nl)
			fail_msg("line %d: %.*s", lines, (int)(nl - p), p);
	}
	assert_int_equal(lines, WALL_THREADS * WALL_LINES);
	free(a);
	test_dir_remove();
}

/* ---- levels set from outside, through the log file ---- */

static int outside_child(void *arg)
{
	struct console *app, *late;
	struct pk_log *other;
	char lp[256], ap[256], bp[256];

	snprintf(lp, sizeof(lp), "%s", test_dir_path("shared.log"));
	snprintf(ap, sizeof(ap), "%s", test_dir_path("app.out"));
	snprintf(bp, sizeof(bp), "%s", test_dir_path("late.out"));
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	pk_printk_exit(); /* a fresh start: the log may become a file */
	pk_set_lanes(arg != NULL);
	CHILD_CHECK(pk_set_log_buf_file(lp, 0) == 0);
	CHILD_CHECK(pk_console_file_create(&app, ap) == 0);
	strcpy(app->name, "app");
	app->flags |= PK_CON_LOSSY; /* printed as printk returns, with the levels of that moment */
	CHILD_CHECK(pk_register_console(app) == 0);
	pk_set_printk_time(0);
	pk_set_console_loglevel(4);
	pr_info("hidden 1\n");

	/* Another process's handle on the same file (udmesg -n app=8). */
	CHILD_CHECK(pk_log_open_control(&other, lp) == 0);
	CHILD_CHECK(pk_log_set_console_level(other, "app", 8) == 0);
	pr_info("shown 2\n");
	CHILD_CHECK(pk_console_get_loglevel(app) == 8);
	CHILD_CHECK(pk_log_set_console_level(other, "app", -1) == 0);
	pr_info("hidden 3\n");
	pr_err("shown 4\n");

	/* A console registered later under a name in the table gets its level. */
	CHILD_CHECK(pk_log_set_console_level(other, "late", 7) == 0);
	CHILD_CHECK(pk_console_file_create(&late, bp) == 0);
	strcpy(late->name, "late");
	late->flags |= PK_CON_LOSSY;
	CHILD_CHECK(pk_register_console(late) == 0);
	CHILD_CHECK(pk_console_get_loglevel(late) == 7);
	pr_notice("notice 5\n");
	pr_info("info 6\n");

	char name[16];
	int level;

	CHILD_CHECK(pk_log_console_level_at(other, 0, name, &level) == 0 && !strcmp(name, "app") && level == -1);
	CHILD_CHECK(pk_log_console_level_at(other, 1, name, &level) == 0 && !strcmp(name, "late") && level == 7);
	CHILD_CHECK(pk_log_console_level_at(other, 2, name, &level) == -ENOENT);
	CHILD_CHECK(pk_log_console_level_at(other, PK_LOG_CONSOLE_LEVELS, name, &level) == -ERANGE);
	CHILD_CHECK(pk_log_set_console_level(other, "", 1) == -EINVAL);
	CHILD_CHECK(pk_log_set_console_level(other, "sixteen_chars_xx", 1) == -EINVAL);
	CHILD_CHECK(pk_log_set_console_level(other, "x", 16) == -EINVAL);
	for (int i = 2; i < PK_LOG_CONSOLE_LEVELS; i++) {
		char n[8];

		snprintf(n, sizeof(n), "c%d", i);
		CHILD_CHECK(pk_log_set_console_level(other, n, 3) == 0);
	}
	CHILD_CHECK(pk_log_set_console_level(other, "onemore", 3) == -ENOSPC);
	CHILD_CHECK(pk_log_set_console_level(other, "late", 2) == 0); /* its own entry */
	pk_log_destroy(other);

	struct pk_log *ro;

	CHILD_CHECK(pk_log_open_file(&ro, lp, 0, PK_LOG_RDONLY) == 0);
	CHILD_CHECK(pk_log_set_console_level(ro, "app", 1) == -EPERM);
	pk_log_destroy(ro);
	return 0;
}

/*
 * With lanes off (@lanes 0) "hidden 1" is passed over as it is stored. With
 * lanes on (the default) it waits in the thread's lane; "shown 2" finds a
 * level set from outside not applied yet, so it takes the ring, merging
 * "hidden 1" before it, and the console lock's holder prints both by the
 * level app has then, 8 (docs/lanes.md: a lane record is looked at by the
 * consoles when it is merged, as the kernel's look at a record when they
 * reach it). Without "shown 2" taking the ring it would wait in the lane,
 * unprinted.
 */
static void levels_from_outside(int lanes)
{
	struct child_result res;

	assert_int_equal(test_dir_make("pk_rotate"), 0);
	run_child_ok(outside_child, lanes ? (void *)1 : NULL, 10000, &res);
	child_result_free(&res);

	char *a = test_slurp(test_dir_path("app.out"), NULL);
	char *b = test_slurp(test_dir_path("late.out"), NULL);

	assert_string_equal(a, lanes ? "hidden 1\nshown 2\nshown 4\n" : "shown 2\nshown 4\n");
	assert_string_equal(b, "notice 5\ninfo 6\n");
	free(a);
	free(b);
	test_dir_remove();
}

/*
 * One call site, compiled and with its thread's lane claimed after its
 * first calls, so later calls take the lanes' fast path: a level set from
 * outside between them must still reach the console lock's holder, which
 * applies it and prints the waiting lane records and the later lines.
 */
static int outside_site_child(void *arg)
{
	struct console *app;
	struct pk_log *other;
	char lp[256], ap[256];

	(void)arg;
	snprintf(lp, sizeof(lp), "%s", test_dir_path("shared.log"));
	snprintf(ap, sizeof(ap), "%s", test_dir_path("app.out"));
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	pk_printk_exit();
	pk_set_lanes(1);
	CHILD_CHECK(pk_set_log_buf_file(lp, 0) == 0);
	CHILD_CHECK(pk_console_file_create(&app, ap) == 0);
	strcpy(app->name, "app");
	app->flags |= PK_CON_LOSSY;
	CHILD_CHECK(pk_register_console(app) == 0);
	pk_set_printk_time(0);
	pk_set_console_loglevel(4);
	CHILD_CHECK(pk_log_open_control(&other, lp) == 0);
	for (int i = 0; i < 6; i++) {
		if (i == 4)
			CHILD_CHECK(pk_log_set_console_level(other, "app", 8) == 0);
		pr_info("site %d\n", i);
	}
	pk_log_destroy(other);
	return 0;
}

static void test_levels_from_outside_site(void **state)
{
	struct child_result res;

	(void)state;
	assert_int_equal(test_dir_make("pk_rotate"), 0);
	run_child_ok(outside_site_child, NULL, 10000, &res);
	child_result_free(&res);

	char *a = test_slurp(test_dir_path("app.out"), NULL);

	assert_string_equal(a, "site 0\nsite 1\nsite 2\nsite 3\nsite 4\nsite 5\n");
	free(a);
	test_dir_remove();
}

static void test_levels_from_outside(void **state)
{
	(void)state;
	levels_from_outside(0);
}

static void test_levels_from_outside_lanes(void **state)
{
	(void)state;
	levels_from_outside(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rotation_by_size, setup_capture, teardown_capture),
		cmocka_unit_test(test_rotation_args),
		cmocka_unit_test_setup_teardown(test_rotation_shared, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_logrotate_sighup, setup_capture, teardown_capture),
		cmocka_unit_test_prestate_setup_teardown(test_logrotate_sighup, setup_threaded, teardown_capture, NULL),
		cmocka_unit_test_setup_teardown(test_reopen_all_signal_storm, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_logrotate_create, setup_capture, teardown_capture),
		cmocka_unit_test(test_rotate_time_args),
		cmocka_unit_test_setup_teardown(test_stderr_fd2_replaced, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_stderr_fd2_redirected, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_stderr_fd2_fallback, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_console_own_level, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_console_time_style, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_console_time_style_race, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_levels_from_outside, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_levels_from_outside_lanes, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_levels_from_outside_site, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
