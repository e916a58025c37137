// SPDX-License-Identifier: MIT
/*
 * test_console_fd.c - the built-in consoles (src/console/console_fd.c):
 *   - a console on a pipe gets the exact bytes, a partial line at once;
 *   - a pipe whose reader is gone: no SIGPIPE (default disposition or a
 *     handler), the console is disabled after 3 failed writes, with a notice;
 *   - a full pipe (non-blocking, and blocking in a child): each write gives
 *     up after ~500 ms, the console is then disabled and printk is fast again;
 *   - a file console appends, and pk_console_reopen after rename() follows
 *     the path (log rotation); a failed reopen keeps the old file;
 *   - bad arguments; pk_console_destroy; /dev/null; the stderr console;
 *   - as the only console (printk's one-write path): exact bytes in a file;
 *     a record with a newline inside (each length to 48, the newline at
 *     every place) printed as two prefixed lines; the file console's new
 *     descriptor after a reopen; /dev/full disabled after 3 failed writes;
 *     a write cut short by a file size limit finished or reported by the
 *     console's own write; a file console on a full file system (printed
 *     through the lock, threaded or lossless) hands over to stderr;
 *     pk_printk_exit() with a threaded console's write outlasting
 *     console_drain_ms: counted on stderr, the thread ends after it; a
 *     signal handler printing as that write returns
 *     is printed by the same printk; two threads and a signal handler
 *     printing at once: every line once, in order, none torn.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "fixture.h"
#include "ring/caller.h"
#include "testutil.h"


static size_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	return len;
}

/* Fill a pipe's write end completely; returns the bytes it holds. */
static size_t fill_pipe(int wfd)
{
	int fl = fcntl(wfd, F_GETFL);
	char chunk[4096];
	size_t total = 0;
	ssize_t n;

	memset(chunk, 'f', sizeof(chunk));
	fcntl(wfd, F_SETFL, fl | O_NONBLOCK);
	while ((n = write(wfd, chunk, sizeof(chunk))) > 0)
		total += (size_t)n;
	while ((n = write(wfd, chunk, 1)) > 0)
		total += (size_t)n;
	fcntl(wfd, F_SETFL, fl);
	return total;
}

static uint64_t mono_ms(void)
{
	return now_ms();
}

static int find_record(const char *text, int level)
{
	struct pk_log *log = pk_printk_log();

	for (uint64_t s = pk_log_first_seq(log); s < pk_log_next_seq(log); s++)
		if (pk_log_read(log, s, &rec, 0) == 0 && strcmp(rec.text, text) == 0 && rec.level == level)
			return 1;
	return 0;
}

/* ---- a pipe ---- */

static void test_pipe_exact_bytes(void **state)
{
	(void)state;
	int p[2];
	char buf[256];
	struct console *con = NULL;

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	assert_int_equal(pk_console_fd_create(&con, p[1], "pipe"), 0);
	assert_non_null(con);
	assert_string_equal(con->name, "pipe");
	assert_false(con->flags & PK_CON_COLOR); /* not a terminal */
	assert_int_equal(pk_register_console(con), 0);

	pr_info("hello\n");
	assert_int_equal(read_all(p[0], buf, sizeof(buf)), 6);
	assert_string_equal(buf, "hello\n");
	pr_info("partial ");
	read_all(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "partial "); /* at once */
	pr_cont("line\n");
	pr_err("two\nlines\n");
	printk(KERN_DEBUG "hidden\n");
	read_all(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "line\ntwo\nlines\n");

	pk_set_printk_time(1);
	static const uint64_t ts[] = { 7000042000ull };

	test_clock_set(ts, 1);
	pr_info("stamped\n");
	test_clock_off();
	read_all(p[0], buf, sizeof(buf));
	assert_string_equal(buf, "[    7.000042] stamped\n");
	assert_true(con->flags & PK_CON_ENABLED);

	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	close(p[0]);
	close(p[1]);

	/* A NULL name gives "fd". */
	assert_int_equal(pk_console_fd_create(&con, 2, NULL), 0);
	assert_string_equal(con->name, "fd");
	pk_console_destroy(con);
}

/* ---- the reader is gone ---- */

static volatile sig_atomic_t sigpipe_count;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipe_count++;
}

static int closed_pipe_child(void *arg)
{
	int with_handler = *(int *)arg;
	int p[2];
	struct console *con;
	sigset_t mask, pending;

	if (with_handler) {
		struct sigaction sa = { .sa_handler = on_sigpipe };

		sigaction(SIGPIPE, &sa, NULL);
	} else {
		signal(SIGPIPE, SIG_DFL);
	}
	CHILD_CHECK(pipe2(p, O_CLOEXEC) == 0);
	close(p[0]);
	CHILD_CHECK(pk_console_fd_create(&con, p[1], "pipe") == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	printk("one\n");
	printk("two\n");
	CHILD_CHECK(con->flags & PK_CON_ENABLED);
	printk("three\n");
	CHILD_CHECK(!(con->flags & PK_CON_ENABLED));
	CHILD_CHECK(find_record("printk: console [pipe] disabled after 3 failed writes (error 32)", 3));
	printk("four\n");
	CHILD_CHECK(sigpipe_count == 0);
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	CHILD_CHECK(!sigismember(&mask, SIGPIPE)); /* mask restored */
	sigpending(&pending);
	CHILD_CHECK(!sigismember(&pending, SIGPIPE)); /* nothing left pending */
	/* The other console got everything, the notice included. */
	CHILD_CHECK(strcmp(capture_text(&cap), "one\ntwo\nthree\n"
						"printk: console [pipe] disabled after 3 failed writes (error 32)\n"
						"four\n") == 0);
	pk_unregister_console(con);
	pk_console_destroy(con);
	CHILD_CHECK(write(1, "marker\n", 7) == 7);
	return 0;
}

static void test_closed_pipe_no_sigpipe(void **state)
{
	(void)state;
	struct child_result res;

	for (int with_handler = 0; with_handler < 2; with_handler++) {
		run_child_ok(closed_pipe_child, &with_handler, 5000, &res);
		assert_false(res.signaled);
		assert_string_equal(res.out, "marker\n");
		child_result_free(&res);
	}
}

/* ---- a full pipe ---- */

/* Three slow printks (~500 ms each), the console disabled, then fast ones. */
static int full_pipe_sequence(struct console *con, char *why, size_t whylen)
{
	uint64_t t0 = mono_ms();

	for (int i = 0; i < 3; i++) {
		uint64_t a = mono_ms();

		printk("blocked %d\n", i);

		uint64_t d = mono_ms() - a;

		if (d < 400 || d > 2000) {
			snprintf(why, whylen, "printk %d took %llu ms", i, (unsigned long long)d);
			return 1;
		}
	}
	if (con->flags & PK_CON_ENABLED) {
		snprintf(why, whylen, "console still enabled");
		return 2;
	}
	uint64_t a = mono_ms();

	for (int i = 0; i < 100; i++)
		printk("fast %d\n", i);
	if (mono_ms() - a > 200) {
		snprintf(why, whylen, "printk after disabling is slow: %llu ms",
			 (unsigned long long)(mono_ms() - a));
		return 3;
	}
	if (mono_ms() - t0 > 5000) {
		snprintf(why, whylen, "total %llu ms", (unsigned long long)(mono_ms() - t0));
		return 4;
	}
	if (!find_record("printk: console [full] disabled after 3 failed writes (error 110)", 3)) {
		snprintf(why, whylen, "no notice record");
		return 5;
	}
	return 0;
}

static void test_nonblocking_full_pipe(void **state)
{
	(void)state;
	int p[2];
	struct console *con;
	char why[128] = "";
	static char buf[1 << 17];

	assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	size_t filled = fill_pipe(p[1]);

	assert_true(filled >= 4096);
	assert_int_equal(pk_console_fd_create(&con, p[1], "full"), 0);
	assert_int_equal(pk_register_console(con), 0);
	int r = full_pipe_sequence(con, why, sizeof(why));

	assert_string_equal(why, "");
	assert_int_equal(r, 0);
	/* The program continues; the pipe holds the filler only (no torn bytes). */
	assert_int_equal(read_all(p[0], buf, sizeof(buf)), filled);
	for (size_t i = 0; i < filled; i++)
		if (buf[i] != 'f')
			fail_msg("byte %zu is %#x", i, buf[i]);
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	close(p[0]);
	close(p[1]);
}

static int blocking_full_pipe_child(void *arg)
{
	(void)arg;
	int p[2];
	struct console *con;
	char why[128] = "";

	CHILD_CHECK(pipe2(p, O_CLOEXEC) == 0);
	fill_pipe(p[1]);
	CHILD_CHECK(!(fcntl(p[1], F_GETFL) & O_NONBLOCK));
	CHILD_CHECK(pk_console_fd_create(&con, p[1], "full") == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	int r = full_pipe_sequence(con, why, sizeof(why));

	if (r) {
		dprintf(2, "%s\n", why);
		return 10 + r;
	}
	CHILD_CHECK(write(1, "marker\n", 7) == 7);
	return 0;
}

static void test_blocking_full_pipe(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(blocking_full_pipe_child, NULL, 10000, &res);
	assert_string_equal(res.out, "marker\n");
	child_result_free(&res);
}

/* ---- a file, and log rotation ---- */

/* @lossy: PK_CON_LOSSY, printed by the console lock's holder (printk's
 * one write); else the default, lossless through its thread: pr_flush()
 * before each look at the files. */
static void file_append_and_reopen(int lossy)
{
	char dir[] = "/tmp/pk_console_fd_XXXXXX";
	char path[256], rotated[256], dir2[300], moved[400];
	struct console *con;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/printk.log", dir);
	snprintf(rotated, sizeof(rotated), "%s/printk.log.1", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "old\n", 4), 4);
	close(fd);

	assert_int_equal(pk_console_file_create(&con, path), 0);
	assert_string_equal(con->name, "file");
	assert_false(con->flags & PK_CON_COLOR);
	if (lossy)
		con->flags |= PK_CON_LOSSY;
	assert_int_equal(pk_register_console(con), 0);
	assert_int_equal(!(con->flags & PK_CON_LOSSLESS), lossy);
	pr_info("one\n");
	assert_int_equal(pr_flush(10000, 0), 1);
	assert_file_equal(path, "old\none\n"); /* appended */

	/* logrotate: rename, then ask the console to reopen. */
	assert_int_equal(rename(path, rotated), 0);
	pr_info("two\n"); /* still the old file */
	assert_int_equal(pr_flush(10000, 0), 1);
	assert_int_equal(pk_console_reopen(con), 0);
	/* The old descriptor is closed: a file opened now may get its number.
	 * printk's one write must go to the new file, not to that one. */
	char decoy[300];

	snprintf(decoy, sizeof(decoy), "%s/decoy", dir);
	int decoy_fd = open(decoy, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(decoy_fd >= 0);
	pr_info("three\n");
	assert_int_equal(pr_flush(10000, 0), 1);
	close(decoy_fd);
	assert_file_equal(decoy, "");
	unlink(decoy);
	assert_file_equal(rotated, "old\none\ntwo\n");
	assert_file_equal(path, "three\n");

	/* A reopen that fails returns the error and keeps the open file. */
	snprintf(dir2, sizeof(dir2), "%s.moved", dir);
	assert_int_equal(rename(dir, dir2), 0);
	assert_int_equal(pk_console_reopen(con), -ENOENT);
	pr_info("four\n");
	assert_int_equal(pr_flush(10000, 0), 1);
	assert_true(con->flags & PK_CON_ENABLED);
	snprintf(moved, sizeof(moved), "%s/printk.log", dir2);
	assert_file_equal(moved, "three\nfour\n");

	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	snprintf(moved, sizeof(moved), "%s/printk.log", dir2);
	unlink(moved);
	snprintf(moved, sizeof(moved), "%s/printk.log.1", dir2);
	unlink(moved);
	rmdir(dir2);
}

static void test_file_append_and_reopen(void **state)
{
	(void)state;
	file_append_and_reopen(1);
	file_append_and_reopen(0);
}

/* pk_console_reopen_all() from a SIGHUP handler, as a daemon does after
 * logrotate: a file console printed by the loop and one printed by its own
 * thread both move to the new files. */
static void on_sighup(int sig)
{
	(void)sig;
	pk_console_reopen_all();
}

static void test_reopen_all_from_sighup(void **state)
{
	(void)state;
	char dir[] = "/tmp/pk_console_fd_XXXXXX";
	char path[2][256], rotated[2][256];
	struct console *con[2];
	struct sigaction sa = { .sa_handler = on_sighup }, old;

	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%d.log", dir, i);
		snprintf(rotated[i], sizeof(rotated[i]), "%s/%d.log.1", dir, i);
		assert_int_equal(pk_console_file_create(&con[i], path[i]), 0);
	}
	con[0]->flags |= PK_CON_LOSSY; /* printed by the loop */
	con[1]->flags |= PK_CON_THREADED; /* lossless, as a file console is by default */
	for (int i = 0; i < 2; i++)
		assert_int_equal(pk_register_console(con[i]), 0);
	pr_info("before\n");
	assert_int_equal(pr_flush(5000, 0), 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(rename(path[i], rotated[i]), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGHUP, &sa, &old), 0);
	assert_int_equal(raise(SIGHUP), 0);
	assert_int_equal(sigaction(SIGHUP, &old, NULL), 0);
	pr_info("after\n");
	assert_int_equal(pr_flush(5000, 0), 1);
	for (int i = 0; i < 2; i++) {
		assert_file_equal(rotated[i], "before\n");
		assert_file_equal(path[i], "after\n");
		assert_int_equal(pk_unregister_console(con[i]), 0);
		pk_console_destroy(con[i]);
		unlink(path[i]);
		unlink(rotated[i]);
	}
	rmdir(dir);
}

/* ---- arguments, destroy ---- */

static void test_bad_arguments(void **state)
{
	(void)state;
	struct console *con = NULL;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	close(fd); /* now certainly not open */
	assert_int_equal(pk_console_fd_create(&con, -1, "x"), -EBADF);
	assert_int_equal(pk_console_fd_create(&con, fd, "x"), -EBADF);
	assert_null(con);
	assert_int_equal(pk_console_file_create(&con, NULL), -EINVAL);
	assert_int_equal(pk_console_file_create(&con, ""), -EINVAL);
	assert_int_equal(pk_console_file_create(&con, "/nonexistent-pk-dir/x/log"), -ENOENT);
	assert_int_equal(pk_console_file_create(&con, "/tmp"), -EISDIR);
	assert_null(con);
	/* Harmless no-ops. */
	pk_console_destroy(NULL);
	pk_console_destroy(pk_console_stderr());
	pk_console_destroy(&cap.con); /* not made by pk_console_*_create */
	printk("still fine\n");
	assert_string_equal(capture_text(&cap), "still fine\n");
}

static void test_destroy_frees(void **state)
{
	(void)state;
	struct console *a, *b, *c;
	char path[] = "/tmp/pk_console_fd_destroy_XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	/* Never registered. */
	assert_int_equal(pk_console_fd_create(&a, 1, "a"), 0);
	pk_console_destroy(a);
	/* Registered, unregistered, destroyed. */
	assert_int_equal(pk_console_file_create(&b, path), 0);
	assert_int_equal(pk_register_console(b), 0);
	printk("to b\n");
	assert_int_equal(pk_unregister_console(b), 0);
	pk_console_destroy(b);
	assert_file_equal(path, "to b\n");
	/* Still registered at pk_printk_exit: released there (LeakSanitizer
	 * would report it otherwise). */
	assert_int_equal(pk_console_file_create(&c, path), 0);
	assert_int_equal(pk_register_console(c), 0);
	printk("to c\n");
	capture_teardown(&cap);
	assert_file_equal(path, "to b\nto c\n");
	capture_setup(&cap, 0);
	unlink(path);
}

static void test_dev_null(void **state)
{
	(void)state;
	struct console *con;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pk_console_fd_create(&con, fd, "null"), 0);
	assert_int_equal(pk_register_console(con), 0);
	uint64_t t0 = mono_ms();

	for (int i = 0; i < 1000; i++)
		printk("to /dev/null %d\n", i);
	assert_true(mono_ms() - t0 < 2000);
	assert_true(con->flags & PK_CON_ENABLED);
	assert_int_equal(pk_log_next_seq(pk_printk_log()), 1000); /* no notice */
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	close(fd);
}

/* A child that prints to a file console: the file, and how the child ended. */
struct file_child {
	char path[64];
	struct child_result res;
};

/* Run @fn(path of a fresh empty file) in a child; it must exit with 0. */
static void run_file_child(struct file_child *fc, int (*fn)(void *), int timeout_ms)
{
	test_temp_file(fc->path, "/tmp/pk_console_fd_XXXXXX");
	run_child_ok(fn, fc->path, timeout_ms, &fc->res);
}

static void file_child_done(struct file_child *fc)
{
	child_result_free(&fc->res);
	unlink(fc->path);
}

/*
 * The only console, an fd on a file or device: printk writes the line itself
 * with one write(2) (the fast path in console.c), and hands a short or failed
 * write to the console's own write to finish or report. Children: the
 * capture console of the fixture is unregistered there.
 */
static int only_file_console_child(void *arg)
{
	const char *path = arg;
	struct console *con;

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("first line\n");
	pr_warn("second %d\n", 2);
	pr_info("an open line");
	pr_cont(" goes on\n");
	pr_err("last\n");
	return 0;
}

static void test_only_console_one_write(void **state)
{
	(void)state;
	struct file_child fc;

	run_file_child(&fc, only_file_console_child, 5000);
	assert_file_equal(fc.path, "first line\nsecond 2\nan open line goes on\nlast\n");
	file_child_done(&fc);
}

/*
 * Embedded newlines on the one-write path: a record whose text holds a
 * newline is not one console line but two, each with its prefix, so the
 * one write must not take it. Every length up to 48 (the newline scan reads
 * 16 bytes at a time) with the newline at every place, and each length
 * without one.
 */
#define NL_MAX_LEN 48
#define NL_PREFIX  "[    1.291025] "

static uint64_t fixed_clock(void)
{
	return UINT64_C(1291025999); /* 1.291025999 s */
}

static void nl_text(char *t, int len, int pos)
{
	memset(t, 'a' + len % 26, (size_t)len);
	if (pos >= 0)
		t[pos] = '\n';
	t[len] = 0;
}

static int embedded_newline_child(void *arg)
{
	const char *path = arg;
	struct console *con;
	char t[NL_MAX_LEN + 1];

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_test_clock(fixed_clock);
	pk_set_printk_time(1); /* the fixture turns it off */
	for (int len = 1; len <= NL_MAX_LEN; len++) {
		for (int pos = -1; pos < len; pos++) {
			nl_text(t, len, pos);
			pr_info("%s\n", t);
		}
	}
	return 0;
}

static void test_one_write_embedded_newlines(void **state)
{
	(void)state;
	struct file_child fc;
	static char want[128 * 1024];
	char *w = want;
	char t[NL_MAX_LEN + 1];

	for (int len = 1; len <= NL_MAX_LEN; len++) {
		for (int pos = -1; pos < len; pos++) {
			nl_text(t, len, pos);
			if (pos < 0) {
				w += sprintf(w, NL_PREFIX "%s\n", t);
			} else {
				t[pos] = 0;
				w += sprintf(w, NL_PREFIX "%s\n" NL_PREFIX "%s\n", t, t + pos + 1);
			}
		}
	}
	run_file_child(&fc, embedded_newline_child, 10000);

	char *file = test_slurp(fc.path, NULL);

	assert_non_null(file);
	assert_int_equal(strlen(file), (size_t)(w - want));
	assert_string_equal(file, want);
	free(file);
	file_child_done(&fc);
}

/* /dev/full: every write fails with ENOSPC; after 3 the console is disabled
 * with a notice, and printk goes on. It was the only console: stderr takes
 * over after the record that failed, so the notice (which counts the failed
 * writes) and what follows are seen. */
static int dev_full_child(void *arg)
{
	(void)arg;
	struct console *con;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_fd_create(&con, fd, "full") == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("one\n");
	pr_info("two\n");
	CHILD_CHECK(con->flags & PK_CON_ENABLED);
	pr_info("three\n");
	CHILD_CHECK(!(con->flags & PK_CON_ENABLED));
	CHILD_CHECK(find_record("printk: console [full] disabled after 3 failed writes (error 28)", 3));
	CHILD_CHECK(pr_info("four\n") == 4);
	CHILD_CHECK(pk_console_stderr()->flags & PK_CON_ENABLED);
	CHILD_CHECK(pk_unregister_console(pk_console_stderr()) == 0);
	pr_info("five\n");
	return 0;
}

static void test_dev_full(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(dev_full_child, NULL, 5000, &res);
	assert_string_equal(res.out, "printk: console [full] disabled after 3 failed writes (error 28)\n"
				     "four\n");
	child_result_free(&res);
}

/* A file size limit cuts a write short: the rest goes to the console's own
 * write, which then fails (EFBIG) and counts a failure; the file holds
 * exactly the bytes that fit. */
static int short_write_child(void *arg)
{
	const char *path = arg;
	struct console *con;
	struct rlimit rl = { 40, 40 };

	CHILD_CHECK(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("0123456789abcdefghij\n"); /* 21 bytes */
	pr_info("ABCDEFGHIJKLMNOPQRST\n"); /* 19 of 21 fit */
	CHILD_CHECK(con->flags & PK_CON_ENABLED); /* one failure so far */
	pr_info("x\n");
	pr_info("y\n");
	CHILD_CHECK(!(con->flags & PK_CON_ENABLED));
	return 0;
}

static void test_short_write(void **state)
{
	(void)state;
	struct file_child fc;

	run_file_child(&fc, short_write_child, 5000);
	assert_file_equal(fc.path, "0123456789abcdefghij\nABCDEFGHIJKLMNOPQRS");
	file_child_done(&fc);
}

/*
 * A signal handler that prints right after printk's own write(2) returns,
 * before printk lets go of the console (C5 in console.c): its record must
 * be on the console when that printk returns, not left for a later one.
 * The write is made to fail with EFBIG by a file size limit, which makes the
 * kernel send SIGXFSZ: the handler runs just as the system call returns. It
 * lifts the limit and prints; the console's own write then finishes the line.
 */
static void on_xfsz(int sig)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	(void)sig;
	setrlimit(RLIMIT_FSIZE, &rl);
	printk("H\n");
}

static int signal_in_write_child(void *arg)
{
	const char *path = arg;
	struct console *con;
	struct sigaction sa = { .sa_handler = on_xfsz };
	struct rlimit rl = { 5, RLIM_INFINITY };

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	sigemptyset(&sa.sa_mask);
	CHILD_CHECK(sigaction(SIGXFSZ, &sa, NULL) == 0);
	pr_info("fill\n"); /* 5 bytes: the file is at its limit now */
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	pr_info("line\n");
	CHILD_CHECK(con->flags & PK_CON_ENABLED);
	return 0;
}

static void test_signal_inside_one_write(void **state)
{
	(void)state;
	struct file_child fc;

	run_file_child(&fc, signal_in_write_child, 5000);
	assert_string_equal(fc.res.out, "");
	/* No pr_flush() in the child: this is what printk itself printed. */
	assert_file_equal(fc.path, "fill\nline\nH\n");
	file_child_done(&fc);
}

/*
 * The one-write path under fire: the only console is a file, two threads
 * print numbered lines and a third keeps interrupting the first with a
 * signal whose handler prints too. printk hands its line to the caller's
 * own write(2) while holding the console lock (C5 in console.c); records
 * stored meanwhile (the other thread's, the handler's) must be printed by
 * the holder or their storer: the file holds every line exactly once, each
 * source's lines in order, none torn.
 */
#ifdef PRINTK_RING_SMALL_IDS
/* All lines must fit the small build's log: 128 KiB, 4096 descriptors. */
#define STORM_LINES	  1500
#define STORM_SIGNALS_MAX 500
#define STORM_LOG_LEN	  (128 << 10)
#else
#define STORM_LINES	  20000
#define STORM_SIGNALS_MAX 20000
#define STORM_LOG_LEN	  (16 << 20)
#endif

static atomic_int storm_stop, storm_handled;
static pthread_t storm_victim;

static void on_storm_signal(int sig)
{
	(void)sig;
	printk("H%d\n", atomic_fetch_add(&storm_handled, 1));
}

static void *storm_printer(void *arg)
{
	(void)arg;
	for (int i = 0; i < STORM_LINES; i++)
		pr_info("B%d\n", i);
	return NULL;
}

/* One signal at a time, each after the last was handled, with a pause that
 * varies where the next one lands. (A handler that prints faster than the
 * interrupted holder can print keeps it printing for ever.) */
static void *storm_signaller(void *arg)
{
	(void)arg;
	unsigned spin = 1;

	while (!atomic_load(&storm_stop) && atomic_load(&storm_handled) < STORM_SIGNALS_MAX) {
		int before = atomic_load(&storm_handled);

		pthread_kill(storm_victim, SIGUSR1);
		while (atomic_load(&storm_handled) == before && !atomic_load(&storm_stop))
			;
		spin = spin * 1103515245u + 12345u;
		for (volatile unsigned i = 0; i < 2000 + (spin >> 16) % 20000; i++)
			;
	}
	return NULL;
}

/* Lines "<letter><n>": each letter's numbers must run 0, 1, 2, ... */
static int check_storm_lines(const char *buf, size_t len, int *next_a, int *next_b, int *next_h)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;

		char letter = buf[start], *end;
		long n = strtol(buf + start + 1, &end, 10);
		int *next = letter == 'A' ? next_a : letter == 'B' ? next_b : letter == 'H' ? next_h : NULL;

		if (!next || end != buf + i || n != *next) {
			dprintf(2, "unexpected line at byte %zu: \"%.*s\"\n", start, (int)(i - start), buf + start);
			return 0;
		}
		++*next;
		start = i + 1;
	}
	return start == len;
}

static int storm_child(void *arg)
{
	const char *path = arg;
	struct console *con;
	struct sigaction sa = { .sa_handler = on_storm_signal };
	pthread_t printer_thread, signal_thread;

	/* A fresh log big enough for every line: a holder that is preempted
	 * while the others print must not see records overwritten (that would
	 * be a "** N printk messages dropped **" line, rightly). */
	pk_printk_exit();
	CHILD_CHECK(pk_set_log_buf_len(STORM_LOG_LEN) == 0);
	pk_unregister_console(pk_console_stderr());
	CHILD_CHECK(pk_console_file_create(&con, path) == 0);
	con->flags |= PK_CON_LOSSY; /* printed by the console lock's holder */
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	sigemptyset(&sa.sa_mask);
	CHILD_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	storm_victim = pthread_self();
	CHILD_CHECK(pthread_create(&signal_thread, NULL, storm_signaller, NULL) == 0);
	/* On a loaded machine the signaller may not run before the lines are
	 * done: start once its first signal was handled. */
	while (atomic_load(&storm_handled) == 0)
		sched_yield();
	CHILD_CHECK(pthread_create(&printer_thread, NULL, storm_printer, NULL) == 0);
	for (int i = 0; i < STORM_LINES; i++)
		pr_info("A%d\n", i);
	atomic_store(&storm_stop, 1);
	pthread_join(signal_thread, NULL);
	pthread_join(printer_thread, NULL);
	CHILD_CHECK(pr_flush(2000, 0) == 1);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t size = (size_t)STORM_LINES * 2 * 8 + (size_t)atomic_load(&storm_handled) * 8 + 1;
	char *buf = malloc(size);
	int a = 0, b = 0, h = 0;

	CHILD_CHECK(fd >= 0 && buf);

	size_t len = read_all(fd, buf, size);

	close(fd);
	CHILD_CHECK(check_storm_lines(buf, len, &a, &b, &h));
	free(buf);
	dprintf(1, "%d %d %d %d\n", a, b, h, atomic_load(&storm_handled));
	return 0;
}

static void test_one_write_storm(void **state)
{
	(void)state;
	struct file_child fc;
	int a, b, h, handled;

	run_file_child(&fc, storm_child, 60000);
	assert_int_equal(sscanf(fc.res.out, "%d %d %d %d", &a, &b, &h, &handled), 4);
	print_message("%d signals handled\n", handled);
	assert_int_equal(a, STORM_LINES);
	assert_int_equal(b, STORM_LINES);
	assert_int_equal(h, handled);
	assert_true(handled > 0);
	file_child_done(&fc);
}

static int stderr_child(void *arg)
{
	(void)arg;
	struct console *con = pk_console_stderr();

	CHILD_CHECK(con == pk_console_stderr());
	CHILD_CHECK(strcmp(con->name, "stderr") == 0);
	CHILD_CHECK(pk_register_console(con) == 0);
	pr_info("on stderr ");
	pr_cont("%d\n", 42);
	CHILD_CHECK(pk_unregister_console(con) == 0);
	return 0;
}

/* A built-in console on a terminal escapes control bytes (and colours by
 * level): what is logged cannot drive the terminal. Read back from the
 * pseudo-terminal's master side, where the tty turned each newline into
 * CR LF. */
static int tty_child(void *arg)
{
	(void)arg;
	struct console *con;
	int master = posix_openpt(O_RDWR | O_NOCTTY);

	CHILD_CHECK(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);

	int slave = open(ptsname(master), O_RDWR | O_NOCTTY);

	CHILD_CHECK(slave >= 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_console_fd_create(&con, slave, "tty") == 0);
	CHILD_CHECK((con->flags & (PK_CON_ESCAPE | PK_CON_COLOR)) == (PK_CON_ESCAPE | PK_CON_COLOR));
	CHILD_CHECK(pk_register_console(con) == 0);
	pk_set_printk_time(0);
	pr_info("x\033[2Jy\a\n");

	const char want[] = "x\\x1b[2Jy\\x07\r\n";
	char got[64];
	size_t n = 0;

	while (n < sizeof(want) - 1) {
		ssize_t r = read(master, got + n, sizeof(got) - n);

		CHILD_CHECK(r > 0);
		n += (size_t)r;
	}
	CHILD_CHECK(n == sizeof(want) - 1 && memcmp(got, want, n) == 0);
	return 0;
}

static void test_tty_escapes(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(tty_child, NULL, 5000, &res);
	assert_string_equal(res.out, "");
	child_result_free(&res);
}

/*
 * A full file system under a file console of each kind (/dev/full: every
 * write fails with ENOSPC), set up as PRINTK_OPTS would: after the third
 * failed write the console is disabled and stderr takes over after the
 * record that failed, whether the console was printed through the console
 * lock (,lossy), by a thread of its own or was lossless (a file console's
 * default, whose thread writes in batches: a batch that fails is written
 * again a line at a time, so the count is the same): the notice once, and
 * every line from the fourth on, once each, in order.
 */
#define FULL_LINES 742

static int full_file_child(void *arg)
{
	const char *opts = arg;
	int at_exit = *opts == '!'; /* no pr_flush: exit's drain */

	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_printk_configure(opts + at_exit) == 0);
	pk_set_printk_time(0);
	for (int i = 1; i <= FULL_LINES; i++)
		CHILD_CHECK(printk(KERN_INFO "line %d\n", i) > 0);
	if (at_exit)
		exit(0);
	CHILD_CHECK(pr_flush(10000, 0));
	CHILD_CHECK(pk_console_stderr()->flags & PK_CON_ENABLED);
	return 0;
}

static void check_full_file(const char *opts)
{
	struct child_result res;
	int next = 4, notices = 0;

	run_child_ok(full_file_child, (void *)opts, 30000, &res);
	for (char *line = res.out, *end; *line; line = end + 1) {
		int i;

		end = strchr(line, '\n');
		if (!end)
			fail_msg("%s: an unfinished line on stderr: %s", opts, line);
		*end = '\0';
		if (!strcmp(line, "printk: console [file0] disabled after 3 failed writes (error 28)"))
			notices++;
		else if (sscanf(line, "line %d", &i) != 1 || i != next++)
			fail_msg("%s: \"%s\" on stderr where line %d was due", opts, line, next - 1);
	}
	child_result_free(&res);
	if (notices != 1 || next != FULL_LINES + 1)
		fail_msg("%s: %d notices and %d of %d lines on stderr", opts, notices, next - 4, FULL_LINES - 3);
}

static void test_full_file_falls_back(void **state)
{
	(void)state;
	/* The default: lossless, written in batches by its thread. */
	check_full_file("console=file:/dev/full");
	check_full_file("console=file:/dev/full,threaded");
	check_full_file("console=file:/dev/full,lossless");
	/* Printed by the console lock's holder, and by a lossy thread. */
	check_full_file("console=file:/dev/full,lossy");
	check_full_file("console=file:/dev/full,threaded,lossy");
	check_full_file("!console=file:/dev/full");
	check_full_file("!console=file:/dev/full,threaded");
	check_full_file("!console=file:/dev/full,lossless");
	check_full_file("!console=file:/dev/full,lossy");
	check_full_file("!console=file:/dev/full,threaded,lossy");
}

/*
 * pk_printk_exit() while a threaded console's thread is inside a write
 * that outlasts console_drain_ms: exit says how many records the console
 * did not print and returns; the thread, once its write returns, ends
 * after that record without reading the log again (exit freed nothing it
 * reads), and the program goes on.
 */
static int slow_gate[2];
static atomic_int slow_writes, slow_tid;

static int slow_write(struct console *con, const char *text, size_t len)
{
	(void)con, (void)text, (void)len;
	char c;

	atomic_store(&slow_tid, (int)syscall(SYS_gettid));
	atomic_fetch_add(&slow_writes, 1);
	while (read(slow_gate[0], &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

/* Whether thread @tid of this process still exists. */
static int task_alive(int tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	return access(path, F_OK) == 0;
}

static int exit_slow_child(void *arg)
{
	(void)arg;
	static struct console slow = { .name = "slow", .write_checked = slow_write, .flags = PK_CON_THREADED };

	CHILD_CHECK(pipe2(slow_gate, O_CLOEXEC) == 0);
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	CHILD_CHECK(pk_printk_configure("console_drain_ms=200") == 0);
	CHILD_CHECK(pk_register_console(&slow) == 0);
	pr_info("one\n");
	pr_info("two\n");
	pr_info("three\n");
	pk_printk_exit();
	CHILD_CHECK(atomic_load(&slow_writes) == 1);
	CHILD_CHECK(task_alive(atomic_load(&slow_tid)));
	/* Let the write return: the thread must end after that record. */
	CHILD_CHECK(write(slow_gate[1], "xxxx", 4) == 4);
	for (uint64_t start = mono_ms(); task_alive(atomic_load(&slow_tid)) && mono_ms() - start < 10000;)
		usleep(1000);
	CHILD_CHECK(!task_alive(atomic_load(&slow_tid)));
	CHILD_CHECK(atomic_load(&slow_writes) == 1);
	/* printk starts afresh (with no console) */
	CHILD_CHECK(pr_info("after\n") == 5);
	return 0;
}

static void test_exit_leaves_slow_thread(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(exit_slow_child, NULL, 30000, &res);
	assert_string_equal(res.out, "printk: console [slow] did not print its last 3 records within console_drain_ms=200 at exit\n");
	child_result_free(&res);
}

static void test_stderr_console(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(stderr_child, NULL, 5000, &res);
	assert_string_equal(res.out, "on stderr 42\n");
	child_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_file_falls_back, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_exit_leaves_slow_thread, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_pipe_exact_bytes, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_closed_pipe_no_sigpipe, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_nonblocking_full_pipe, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_blocking_full_pipe, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_file_append_and_reopen, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_reopen_all_from_sighup, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_bad_arguments, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_destroy_frees, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_null, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_only_console_one_write, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_one_write_embedded_newlines, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_full, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_short_write, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_inside_one_write, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_one_write_storm, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_stderr_console, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_tty_escapes, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
