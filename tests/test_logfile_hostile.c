// SPDX-License-Identifier: MIT
/*
 * test_logfile_hostile.c - a log file on a hostile or unlucky file system
 * never crashes a reader or a writer, and never makes one write where it
 * should not (src/log/logfile.c).
 *
 * What is checked, every crash case in a child process judged from outside
 * (exit status, signal, exact output lines):
 *  - a full file system: a tiny tmpfs (64 KiB, mounted in a mount namespace
 *    of a child) full, or with room for the header but not the whole file;
 *    pk_log_open_file() says -ENOSPC and publishes nothing, a program
 *    started with PRINTK_OPTS=log_buf_file=... there warns and uses memory
 *    (it used to die of SIGBUS before main, or inside printk). A setup step
 *    that fails fails the test, naming the step;
 *  - truncation under a reader (pk_log_read), a printk writer, a
 *    pk_log_store() writer and `udmesg -B FILE -w`: each reports -ESTALE /
 *    "log file truncated" and ends cleanly (they used to die of SIGBUS); a
 *    printk with crash_dump=1 is not reported as a crash; a SIGBUS that is
 *    not about a log still kills the program, or reaches the program's own
 *    handler, and the handler goes when the last log does;
 *  - names others control: a symbolic link that another user planted in a
 *    sticky world-writable directory is not followed (root used to write
 *    into the log it named), root's own link is; a writer refuses a log
 *    others may write; a reader refuses a procfs file before reading a byte
 *    of it (counted with /proc/self/io);
 *  - a directory: -EISDIR, with words, also in printk's start-up warning;
 *  - console levels out of range in the file are reset by the next writer,
 *    with a notice record (a bad level used to mute every writer's console);
 *    a level 0 another process left in the file reads as 1 (emergencies
 *    print), while a process's own loglevel=0 still mutes its consoles;
 *  - a dead writer's unfinished line is finalized by the next writer, not
 *    printed by its console as its own nor continued by a caller that has
 *    the dead writer's pid.
 *
 * Children never call cmocka: they report through exit codes and output.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "testutil.h"
#include "log/log_internal.h"

#define LOG_LEN	  4096u
#define CHILD_ARG "--hostile-child"
#define CHILD_MS  20000

#define ENOSPC_WORDS "no space for the log (file system full, or file or region truncated)"
#define ESTALE_WORDS "log file truncated: its records are gone"
#define EISDIR_WORDS "the log file is a directory"

static struct pk_record rec;

/* ------------------------------------------------------------- helpers -- */

static int setup_dir(void **state)
{
	(void)state;
	return test_dir_make("pk_test_hostile");
}

static int teardown_dir(void **state)
{
	(void)state;
	return test_dir_remove();
}

static uint64_t file_hash(const char *path)
{
	unsigned char buf[4096];
	uint64_t h = 0xcbf29ce484222325ull;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
	close(fd);
	return h;
}

/* Read from @fd until @want appears in what was read (or EOF/timeout). */
static size_t read_until(int fd, char *buf, size_t cap, size_t len, const char *want)
{
	uint64_t t0 = now_ms();

	while (len < cap - 1 && now_ms() - t0 < CHILD_MS) {
		buf[len] = '\0';
		if (want && strstr(buf, want))
			break;

		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 50) <= 0)
			continue;

		ssize_t n = read(fd, buf + len, cap - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return len;
}

/* Assert that @status is a normal exit with @code; say what it was if not. */
static void expect_exit(int status, int code, const char *out)
{
	if (WIFSIGNALED(status))
		fail_msg("child killed by signal %d; output:\n%s", WTERMSIG(status), out ? out : "");
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != code)
		fail_msg("child exited %d, expected %d; output:\n%s", WEXITSTATUS(status), code,
			 out ? out : "");
}

/* Does @out hold @line as one whole line? */
static int has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = out; (p = strstr(p, line)); p++)
		if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/* ------------------------------------------------ re-executed children -- */

/* A forked child dies of a fault as a program without handlers would
 * (cmocka's handler would carry on with the next test in the child). */
static void default_fault_actions(void)
{
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
}

/* This program started again with PRINTK_OPTS: the constructor has opened
 * (or refused) the log file already. */
static int hostile_child(const char *mode)
{
	if (!strcmp(mode, "hello")) {
		printk(KERN_ERR "hello from the child\n");
		return 0;
	}
	if (!strcmp(mode, "levels")) {
		for (int level = 0; level < 5; level++)
			printk_emit(0, level, NULL, 0, "level %d\n", level);
		return 0;
	}
	if (!strcmp(mode, "many")) {
		char text[600];

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		for (int i = 0; i < 3000; i++)
			printk(KERN_DEBUG "%d %s\n", i, text);
		printk(KERN_ERR "all printed\n");
		return 0;
	}
	if (!strcmp(mode, "truncated")) {
		const char *p = getenv("HOSTILE_LOG");
		struct stat st;

		printk(KERN_ERR "ready\n");
		for (int i = 0; i < CHILD_MS && stat(p, &st) == 0 && st.st_size > 0; i++)
			usleep(1000);
		for (int i = 0; i < 100; i++)
			printk(KERN_INFO "after the truncation %d\n", i);
		printf("survived: %s\n", pk_log_strerror(pk_log_check(pk_printk_log())));
		return 0;
	}
	return 2;
}

/*
 * Run this program again as `CHILD_ARG @mode` with PRINTK_OPTS=@opts, its
 * stdout and stderr captured. @pre (may be NULL) runs in the child first
 * (a mount namespace, ...): a non-zero return ends the child with that
 * code, after it printed why. Returns the output (until the next call).
 */
static const char *run_child_opts(const char *opts, const char *mode, int (*pre)(void *), void *arg,
				  int *status)
{
	/* Static: a failed assertion must not leak it (LeakSanitizer). */
	static char buf[1 << 20];
	const size_t cap = sizeof(buf);
	int out[2];

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test_logfile_hostile", CHILD_ARG, (char *)mode, NULL };

		dup2(out[1], 1);
		dup2(out[1], 2);
		default_fault_actions();
		if (pre) {
			int code = pre(arg);

			if (code)
				_exit(code);
		}
		setenv("PRINTK_OPTS", opts, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(out[1]);
	read_until(out[0], buf, cap, 0, NULL);
	close(out[0]);
	test_reap(pid, status, CHILD_MS);
	return buf;
}

/* ------------------------------------------------------ full file system -- */

#define SETUP_FAILED 99

struct tmpfs_setup {
	char mnt[PATH_MAX];
	int fill; /* fill it up completely */
};

static int setup_fail(const char *step)
{
	printf("SETUP FAILED: %s: %s\n", step, strerror(errno));
	fflush(stdout);
	return SETUP_FAILED;
}

/* In the child: a mount namespace of its own (and a user namespace when
 * not root), a 64 KiB tmpfs at @mnt, optionally full. */
static int tiny_tmpfs(void *arg)
{
	struct tmpfs_setup *t = arg;
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWNS | (uid ? CLONE_NEWUSER : 0)) < 0)
		return setup_fail("unshare");
	if (uid) {
		char map[64];
		int fd;

		if ((fd = open("/proc/self/setgroups", O_WRONLY)) >= 0) {
			if (write(fd, "deny", 4) != 4)
				return setup_fail("setgroups");
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		if ((fd = open("/proc/self/uid_map", O_WRONLY)) < 0 ||
		    write(fd, map, strlen(map)) < 0)
			return setup_fail("uid_map");
		close(fd);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		if ((fd = open("/proc/self/gid_map", O_WRONLY)) < 0 ||
		    write(fd, map, strlen(map)) < 0)
			return setup_fail("gid_map");
		close(fd);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return setup_fail("make / private");
	if (mount("tmpfs", t->mnt, "tmpfs", 0, "size=64k") < 0)
		return setup_fail("mount tmpfs size=64k");
	if (t->fill) {
		char path[PATH_MAX + 8], block[4096] = { 0 };
		int fd;

		snprintf(path, sizeof(path), "%s/fill", t->mnt);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return setup_fail("create fill");
		while (write(fd, block, sizeof(block)) == (ssize_t)sizeof(block))
			;
		if (errno != ENOSPC)
			return setup_fail("fill the tmpfs");
		close(fd);
	}

	/* The library call itself: -ENOSPC, and nothing published. */
	char path[PATH_MAX + 16];
	struct pk_log *log = NULL;

	snprintf(path, sizeof(path), "%s/direct.log", t->mnt);
	int err = pk_log_open_file(&log, path, t->fill ? 0 : 128 * 1024, 0);

	if (err != -ENOSPC || log || access(path, F_OK) == 0) {
		printf("pk_log_open_file on the tiny tmpfs: %d, %s\n", err,
		       access(path, F_OK) == 0 ? "file left behind" : "no file");
		fflush(stdout);
		return 3;
	}
	return 0;
}

static void full_fs_case(int fill, const char *opts_extra, const char *mode)
{
	struct tmpfs_setup t = { .fill = fill };
	char opts[2 * PATH_MAX], log_path[PATH_MAX + 16], warning[2 * PATH_MAX];
	int status;

	snprintf(t.mnt, sizeof(t.mnt), "%s", test_dir_path(fill ? "full" : "small"));
	assert_int_equal(mkdir(t.mnt, 0700), 0);
	snprintf(log_path, sizeof(log_path), "%s/printk.log", t.mnt);
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0 %s", log_path, opts_extra);

	const char *out = run_child_opts(opts, mode, tiny_tmpfs, &t, &status);

	if (WIFEXITED(status) && WEXITSTATUS(status) == SETUP_FAILED)
		fail_msg("the test's own setup failed:\n%s", out);
	expect_exit(status, 0, out);
	snprintf(warning, sizeof(warning),
		 "printk: PRINTK_OPTS: log_buf_file=%s unusable: " ENOSPC_WORDS ", using memory",
		 log_path);
	if (!has_line(out, warning))
		fail_msg("no warning line \"%s\" in:\n%.2000s", warning, out);
	assert_true(has_line(out, !strcmp(mode, "many") ? "all printed" : "hello from the child"));
}

/* A file system with no free block at all: the file's first page could not
 * be backed; the constructor used to die of SIGBUS formatting it. */
static void test_full_fs_refused(void **state)
{
	(void)state;
	full_fs_case(1, "", "hello");
}

/* Room for the header but not for a 128 KiB log (the largest every build
 * allows, small ring ids included): printk used to die of SIGBUS once its
 * records reached a page the file system could not back. */
static void test_small_fs_refused(void **state)
{
	(void)state;
	full_fs_case(0, "log_buf_len=128K", "many");
}

/* ----------------------------------------------------------- truncation -- */

/* Fill a log with enough records that its text pages are all written. */
static void make_big_log(const char *path)
{
	struct pk_log *log;
	char text[512];

	unlink(path);
	assert_int_equal(pk_log_open_file(&log, path, 64 * 1024, 0), 0);
	memset(text, 'y', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	for (unsigned i = 0; i < 400; i++)
		test_log_store(log, text);
	pk_log_destroy(log);
}

static void truncate_file(const char *path)
{
	assert_int_equal(truncate(path, 0), 0);
}

struct trunc_child {
	const char *path;
	int ready; /* the child writes one byte here once it is set up */
	int go;	   /* and waits for one byte here: the file is truncated */
};

static int wait_go(struct trunc_child *c)
{
	char b;

	if (write(c->ready, "r", 1) != 1 || read(c->go, &b, 1) != 1)
		return 90;
	return 0;
}

/* A reader that has read everything once; after the truncation it reads
 * again: the pages are gone, the handler replaces them, -ESTALE. */
static int reader_child(void *arg)
{
	struct trunc_child *c = arg;
	struct pk_log *log;
	uint64_t seq;
	unsigned n = 0;
	int err;

	if (pk_log_open_file(&log, c->path, 0, PK_LOG_RDONLY))
		return 10;
	for (seq = pk_log_first_seq(log); pk_log_read(log, seq, &rec, 0) == 0; seq = rec.seq + 1)
		n++;
	if (n < 100 || wait_go(c))
		return 11;
	err = pk_log_read(log, pk_log_first_seq(log), &rec, 0);
	if (err != -ESTALE) {
		printf("read after truncation: %d\n", err);
		return 12;
	}
	if (pk_log_read(log, 0, &rec, 0) != -ESTALE || pk_log_check(log) != -ESTALE)
		return 13;
	printf("reader: %s\n", pk_log_strerror(err));
	pk_log_destroy(log);
	return 0;
}

/* A reader that has not touched the log since the truncation: it learns it
 * from the file's size when it finds nothing new. */
static int idle_reader_child(void *arg)
{
	struct trunc_child *c = arg;
	struct pk_log *log;

	if (pk_log_open_file(&log, c->path, 0, PK_LOG_RDONLY))
		return 10;
	if (pk_log_check(log) != 0 || wait_go(c))
		return 11;
	if (pk_log_check(log) != -ESTALE)
		return 12;
	pk_log_destroy(log);
	return 0;
}

/* A pk_log_store() writer: stores on, is told -ESTALE, never dies. */
static int store_child(void *arg)
{
	struct trunc_child *c = arg;
	struct pk_log *log;
	char text[512];

	memset(text, 'z', sizeof(text));
	if (pk_log_open_file(&log, c->path, 0, 0) || wait_go(c))
		return 10;
	for (unsigned i = 0; i < 400; i++) {
		int err = pk_log_store(log, 0, 6, text, sizeof(text), NULL, 0);

		if (err && err != -ESTALE)
			return 11;
	}
	if (pk_log_store(log, 0, 6, "x", 1, NULL, 0) != -ESTALE || pk_log_check(log) != -ESTALE ||
	    pk_log_read(log, 0, &rec, 0) != -ESTALE || pk_log_sync(log) != -ESTALE)
		return 12;
	pk_log_destroy(log);
	return 0;
}

/* Counts the console lines printk_child() prints after the truncation:
 * how many, the last number, how many broke the sequence (@after_bad: not
 * the next number; @after_back: not even a later one). */
static unsigned after_lines, after_bad, after_back, after_last;

static void count_after(struct console *con, const char *text, unsigned len)
{
	(void)con;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned n;

		if (!nl)
			break;
		if (sscanf(p, "after %u:", &n) == 1) {
			after_back += after_lines && n <= after_last;
			after_bad += n != after_lines++;
			after_last = n;
		}
		p = nl + 1;
	}
}

/* printk into the file: printk goes on (into the process's own ring), and
 * its console keeps printing every line. */
static int printk_child(void *arg)
{
	struct trunc_child *c = arg;
	static struct console con = { .name = "count", .write = count_after };

	pk_printk_exit(); /* no consoles, nothing stored yet */
	if (pk_set_log_buf_file(c->path, 0) || pk_register_console(&con))
		return 10;
	pk_set_printk_time(0);
	for (unsigned i = 0; i < 200; i++)
		printk(KERN_INFO "before %u: %0400u\n", i, i);
	if (wait_go(c))
		return 11;
	for (unsigned i = 0; i < 2000; i++)
		printk(KERN_INFO "after %u: %0400u\n", i, i);
	if (pk_log_check(pk_printk_log()) != -ESTALE)
		return 12;
	if (after_lines != 2000 || after_bad) {
		printf("console: %u lines after the truncation, %u out of order\n", after_lines, after_bad);
		return 13;
	}
	return 0;
}

/* The same with a console printed by its own thread, which reads the
 * mapping too: the SIGBUS on that thread is repaired as well. It may fall
 * behind and lose lines to the ring (counted), but prints in order and
 * reaches the last line. */
static int printk_threaded_child(void *arg)
{
	struct trunc_child *c = arg;
	static struct console con = { .name = "thread", .write = count_after, .flags = PK_CON_THREADED };

	pk_printk_exit();
	if (pk_set_log_buf_file(c->path, 0) || pk_register_console(&con))
		return 10;
	pk_set_printk_time(0);
	for (unsigned i = 0; i < 200; i++)
		printk(KERN_INFO "before %u: %0400u\n", i, i);
	if (pr_flush(5000, 0) != 1 || wait_go(c))
		return 11;
	/* Truncated now. Nothing here touches the mapping for a while: the
	 * printer thread, waking once a second, is the one that meets it. */
	usleep(1500 * 1000);
	for (unsigned i = 0; i < 2000; i++)
		printk(KERN_INFO "after %u: %0400u\n", i, i);
	if (pk_log_check(pk_printk_log()) != -ESTALE)
		return 12;
	if (pr_flush(5000, 0) != 1 || after_back || !after_lines || after_last != 1999) {
		printf("threaded console: %u lines, last %u, %u out of order\n", after_lines, after_last,
		       after_back);
		return 13;
	}
	return 0;
}

static void truncate_under(int (*fn)(void *), const char *name, int big)
{
	const char *p = test_dir_path(name);
	struct trunc_child c = { .path = p };
	int ready[2], go[2], status;
	char b;

	if (big)
		make_big_log(p);
	else
		unlink(p);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	c.ready = ready[1];
	c.go = go[0];

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		default_fault_actions();
		fflush(stdout);
		_exit(fn(&c));
	}
	close(ready[1]);
	close(go[0]);

	struct pollfd pfd = { .fd = ready[0], .events = POLLIN };

	if (poll(&pfd, 1, CHILD_MS) != 1 || read(ready[0], &b, 1) != 1) {
		test_reap(pid, &status, CHILD_MS);
		expect_exit(status, 0, NULL);
		fail_msg("the child never got ready");
	}
	truncate_file(p);
	assert_int_equal(write(go[1], "g", 1), 1);
	test_reap(pid, &status, CHILD_MS);
	close(ready[0]);
	close(go[1]);
	expect_exit(status, 0, NULL);
}

static void test_truncated_under_reader(void **state)
{
	(void)state;
	truncate_under(reader_child, "reader.log", 1);
	truncate_under(idle_reader_child, "idle-reader.log", 1);
}

static void test_truncated_under_writers(void **state)
{
	(void)state;
	truncate_under(store_child, "store.log", 1);
	truncate_under(printk_child, "printk.log", 0);
	truncate_under(printk_threaded_child, "threaded.log", 0);
}

/* `udmesg -B FILE -w` following a log that is truncated: one clear line,
 * exit status 1 (it used to die of SIGBUS). */
static void test_truncated_under_udmesg(void **state)
{
	(void)state;
	const char *build = getenv("PRINTK_TEST_BUILD_DIR");
	const char *p = test_dir_path("udmesg.log");
	char udmesg[PATH_MAX], expect[2 * PATH_MAX], buf[1 << 16];
	int out[2], err[2], status;

	if (!build)
		fail_msg("PRINTK_TEST_BUILD_DIR is not set (run through ctest)");
	snprintf(udmesg, sizeof(udmesg), "%s/tools/udmesg", build);
	if (access(udmesg, X_OK))
		fail_msg("%s is not built", udmesg);
	make_big_log(p);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execl(udmesg, "udmesg", "-B", p, "-w", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* It has dumped the log (the last record's text) and follows it now. */
	read_until(out[0], buf, sizeof(buf), 0, "yyyyyyyy\n");
	usleep(100 * 1000);
	truncate_file(p);
	test_reap(pid, &status, CHILD_MS);

	size_t n = read_until(err[0], buf, sizeof(buf), 0, NULL);

	close(out[0]);
	close(err[0]);
	expect_exit(status, 1, buf);
	snprintf(expect, sizeof(expect), "udmesg: %s: read failed: " ESTALE_WORDS "\n", p);
	assert_int_equal(n, strlen(expect));
	assert_string_equal(buf, expect);
}

/*
 * printk with the fatal-signal handler (crash_dump=1), installed after the
 * log file: the truncation is repaired, not reported as a crash (the
 * handler used to report "BUG: SIGBUS" and the process died of it).
 */
static void test_truncated_with_crash_handler(void **state)
{
	(void)state;
	const char *p = test_dir_path("crash-dump.log");
	char opts[PATH_MAX + 64], buf[1 << 16];
	int out[2], status;

	unlink(p);
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0 crash_dump=1", p);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test_logfile_hostile", CHILD_ARG, "truncated", NULL };

		dup2(out[1], 1);
		dup2(out[1], 2);
		setenv("PRINTK_OPTS", opts, 1);
		setenv("HOSTILE_LOG", p, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(out[1]);

	size_t n = read_until(out[0], buf, sizeof(buf), 0, "ready\n");

	truncate_file(p);
	read_until(out[0], buf, sizeof(buf), n, NULL);
	close(out[0]);
	test_reap(pid, &status, CHILD_MS);
	expect_exit(status, 0, buf);
	if (!has_line(buf, "survived: " ESTALE_WORDS) || strstr(buf, "BUG"))
		fail_msg("unexpected output:\n%s", buf);
}

/* ------------------------------------------------------ unrelated SIGBUS -- */

/* Touch a page of a mapped file that was truncated: a real SIGBUS, not about
 * any log. */
static void unrelated_fault(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, 4096) < 0)
		_exit(80);

	volatile char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED || ftruncate(fd, 0) < 0)
		_exit(81);
	m[0] = 1;
	_exit(82); /* survived: wrong */
}

static const char *fault_file;

static int fault_with_log(void *arg)
{
	struct pk_log *log;

	default_fault_actions();
	if (pk_log_open_file(&log, arg, 0, 0))
		return 10;
	unrelated_fault(fault_file);
	return 11;
}

static int raise_with_log(void *arg)
{
	struct pk_log *log;

	default_fault_actions();
	if (pk_log_open_file(&log, arg, 0, PK_LOG_RDONLY))
		return 10;
	raise(SIGBUS);
	return 11;
}

static void own_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	static const char msg[] = "own handler\n";

	if (write(1, msg, sizeof(msg) - 1) < 0 || sig != SIGBUS || !si || si->si_code <= 0)
		_exit(71);
	_exit(42);
}

static int own_handler_with_log(void *arg)
{
	struct sigaction sa, before, after;
	struct pk_log *log;

	default_fault_actions();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &before) < 0)
		return 10;
	if (pk_log_open_file(&log, arg, 0, 0))
		return 11;
	/* With no log left, the program's handler is back in place. */
	pk_log_destroy(log);
	if (sigaction(SIGBUS, NULL, &after) < 0 || after.sa_sigaction != own_handler)
		return 12;
	if (pk_log_open_file(&log, arg, 0, 0))
		return 13;
	unrelated_fault(fault_file);
	return 14;
}

static void test_unrelated_sigbus(void **state)
{
	(void)state;
	const char *p = test_dir_path("bystander.log");
	struct child_result res;

	test_make_log(p, LOG_LEN, 3);
	fault_file = test_dir_path("not-a-log");

	run_child(fault_with_log, (void *)p, CHILD_MS, &res);
	if (!res.signaled)
		fail_msg("exited %d status %d: %s", res.exited, res.status, res.out);
	assert_int_equal(res.sig, SIGBUS);
	child_result_free(&res);

	run_child(raise_with_log, (void *)p, CHILD_MS, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGBUS);
	child_result_free(&res);

	run_child(own_handler_with_log, (void *)p, CHILD_MS, &res);
	if (!res.exited || res.status != 42)
		fail_msg("exited %d status %d signaled %d sig %d: %s", res.exited, res.status,
			 res.signaled, res.sig, res.out);
	assert_string_equal(res.out, "own handler\n");
	child_result_free(&res);
}

/* ----------------------------------------------------- names and modes -- */

static int plant_symlink(void *arg)
{
	const char **names = arg;

	if (setgid(65534) || setuid(65534))
		return 10;
	return symlink(names[0], names[1]) ? 11 : 0;
}

/*
 * A user plants /tmp-like/NAME -> root's log; root opens NAME as its log:
 * it used to write into the other log. Root's own link there is followed.
 */
static void test_planted_symlink(void **state)
{
	(void)state;
	const char *victim = test_dir_path("victim.log");
	const char *sticky = test_dir_path("sticky");
	char planted[PATH_MAX + 16], own[PATH_MAX + 16];
	struct child_result res;
	struct pk_log *log = NULL;

	if (geteuid() != 0) {
		print_message("not root: cannot plant a link as another user\n");
		skip();
	}
	test_make_log(victim, LOG_LEN, 2);
	assert_int_equal(chmod(test_dir(), 0711), 0); /* the planter can reach the sticky directory */
	assert_int_equal(mkdir(sticky, 0777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(planted, sizeof(planted), "%s/planted.log", sticky);
	snprintf(own, sizeof(own), "%s/own.log", sticky);

	const char *names[] = { victim, planted };

	run_child_ok(plant_symlink, names, CHILD_MS, &res);
	child_result_free(&res);

	uint64_t before = file_hash(victim);

	assert_int_equal(pk_log_open_file(&log, planted, LOG_LEN, 0), -ELOOP);
	assert_null(log);
	assert_int_equal(pk_log_open_file(&log, planted, 0, PK_LOG_RDONLY), -ELOOP);
	assert_null(log);
	assert_int_equal(file_hash(victim), before);
	assert_string_equal(pk_log_strerror(-ELOOP),
			    "the log file is a symbolic link that another user controls (not followed)");

	/* Root's own link is followed. */
	assert_int_equal(symlink(victim, own), 0);
	assert_int_equal(pk_log_open_file(&log, own, LOG_LEN, 0), 0);
	test_log_store(log, "through root's link");
	pk_log_destroy(log);
	assert_int_equal(pk_log_open_file(&log, victim, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_read(log, 2, &rec, 0), 0);
	assert_string_equal(rec.text, "through root's link");
	pk_log_destroy(log);
}

/* A log the group or others may write is refused to writers, read by readers. */
static void test_writable_by_others(void **state)
{
	(void)state;
	const char *p = test_dir_path("open.log");
	struct pk_log *log = NULL;
	static const mode_t bad[] = { 0666, 0646, 0620 };

	test_make_log(p, LOG_LEN, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(p, bad[i]), 0);

		uint64_t before = file_hash(p);

		log = NULL;
		assert_int_equal(pk_log_open_file(&log, p, LOG_LEN, 0), -EACCES);
		assert_null(log);
		assert_int_equal(file_hash(p), before);
		assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
		assert_non_null(log);
		assert_int_equal(pk_log_read(log, 0, &rec, 0), 0);
		assert_string_equal(rec.text, "record 0");
		pk_log_destroy(log);
	}
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(pk_log_open_file(&log, p, LOG_LEN, 0), 0);
	pk_log_destroy(log);
}

/* Bytes this process has read so far (rchar of /proc/self/io). */
static unsigned long long rchar(void)
{
	char buf[512];
	int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';

	char *p = strstr(buf, "rchar: ");

	assert_non_null(p);
	return strtoull(p + 7, NULL, 10);
}

/* A reader refuses a procfs file before reading anything from it (reading
 * /proc/kmsg consumes a kernel message). */
static void test_reader_refuses_procfs(void **state)
{
	(void)state;
	struct pk_log *log = NULL;
	unsigned long long a, b, c;

	a = rchar();
	b = rchar();
	assert_int_equal(pk_log_open_file(&log, "/proc/self/status", 0, PK_LOG_RDONLY), -EPROTO);
	assert_null(log);
	c = rchar();
	/* b - a: what reading /proc/self/io costs; the open read nothing more
	 * (a digit more in rchar at most). */
	if (c - b > (b - a) + 8)
		fail_msg("pk_log_open_file read %llu bytes of /proc/self/status", c - b - (b - a));
	assert_int_equal(pk_log_open_file(&log, "/dev/null", 0, PK_LOG_RDONLY), -EPROTO);
}

static void test_directory(void **state)
{
	(void)state;
	const char *d = test_dir_path("a-directory");
	char opts[PATH_MAX + 64], warning[2 * PATH_MAX];
	struct pk_log *log = NULL;
	int status;

	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(pk_log_open_file(&log, d, LOG_LEN, 0), -EISDIR);
	assert_int_equal(pk_log_open_file(&log, d, 0, PK_LOG_RDONLY), -EISDIR);
	assert_null(log);
	assert_string_equal(pk_log_strerror(-EISDIR), EISDIR_WORDS);

	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0", d);

	const char *out = run_child_opts(opts, "hello", NULL, NULL, &status);

	expect_exit(status, 0, out);
	snprintf(warning, sizeof(warning),
		 "printk: PRINTK_OPTS: log_buf_file=%s unusable: " EISDIR_WORDS ", using memory", d);
	if (!has_line(out, warning))
		fail_msg("no warning line \"%s\" in:\n%s", warning, out);
}

/* ------------------------------------------------------- damaged files -- */

static void poke_u32(const char *path, off_t off, uint32_t v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, sizeof(v), off), (ssize_t)sizeof(v));
	close(fd);
}

/* A file whose header no longer validates (its log state's magic, as a torn
 * write-back or a flipped bit leaves it): a reader refuses it and leaves it
 * alone; a writer, when no other process writes it, moves it aside to
 * PATH.damaged and starts a new log at PATH that says so; printk warns. */
static void test_damaged_file_new_generation(void **state)
{
	(void)state;
	const char *p = test_dir_path("damaged.log");
	char kept[PATH_MAX + 16], note[2 * PATH_MAX + 128], opts[PATH_MAX + 64];
	struct pk_log *log, *live;
	off_t user;
	int status;

	snprintf(kept, sizeof(kept), "%s.damaged", p);
	test_make_log(p, LOG_LEN, 3);
	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	user = (off_t)((uint8_t *)pk_log_shared(log) - (uint8_t *)log->mapping);
	pk_log_destroy(log);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, magic), 0);

	uint64_t damaged = file_hash(p);

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), -EBADMSG);
	assert_int_equal(file_hash(p), damaged);

	/* Another writer still holds it (here: a handle of ours from before the
	 * damage): it is left as it is. */
	unlink(p);
	test_make_log(p, LOG_LEN, 3);
	assert_int_equal(pk_log_open_file(&live, p, 0, 0), 0);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, magic), 0);
	damaged = file_hash(p);
	assert_int_equal(pk_log_open_file(&log, p, 0, 0), -EBADMSG);
	assert_int_equal(file_hash(p), damaged);
	assert_int_equal(access(kept, F_OK), -1);
	pk_log_destroy(live);

	/* The last writer gone: the next one starts anew. */
	assert_int_equal(pk_log_open_file(&log, p, 0, 0), 0);
	assert_string_equal(pk_log_damaged_copy(log), kept);
	assert_int_equal(file_hash(kept), damaged);
	assert_int_equal(pk_log_first_seq(log), 0);
	assert_int_equal(pk_log_read(log, 0, &rec, 0), 0);
	snprintf(note, sizeof(note), "printk: log file %s was damaged: kept as %s, a new log starts here", p,
		 kept);
	assert_string_equal(rec.text, note);
	assert_int_equal(rec.level, 4);
	assert_int_equal(pk_log_next_seq(log), 1);
	test_log_store(log, "after");
	pk_log_destroy(log);

	/* printk with log_buf_file= says so on its console. */
	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	pk_log_destroy(log);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, magic), 0);
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0", p);

	const char *out = run_child_opts(opts, "hello", NULL, NULL, &status);

	expect_exit(status, 0, out);
	snprintf(note, sizeof(note),
		 "printk: PRINTK_OPTS: log_buf_file=%s was damaged: kept as %s, a new log started", p, kept);
	if (!has_line(out, note) || !has_line(out, "hello from the child"))
		fail_msg("no warning line \"%s\" in:\n%s", note, out);
}

/* --------------------------------------------------------- console levels -- */

/* A console level out of range in the file: the next writer resets it and
 * says so; the consoles print again. */
static void test_bad_console_level(void **state)
{
	(void)state;
	const char *p = test_dir_path("levels.log");
	struct pk_log *log;
	off_t user;
	char opts[PATH_MAX + 64], notice[PATH_MAX + 128];
	int status;

	test_make_log(p, LOG_LEN, 1);
	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	user = (off_t)((uint8_t *)pk_log_shared(log) - (uint8_t *)log->mapping);
	pk_log_destroy(log);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, console_loglevel), 0xffffffffu);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, minimum_console_loglevel), 99);

	/* A reader leaves the file as it is. */
	uint64_t before = file_hash(p);

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_shared(log)->console_loglevel, 0xffffffffu);
	pk_log_destroy(log);
	assert_int_equal(file_hash(p), before);

	/* A printk writer resets it and prints. */
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0", p);

	const char *out = run_child_opts(opts, "hello", NULL, NULL, &status);

	expect_exit(status, 0, out);
	if (!has_line(out, "hello from the child"))
		fail_msg("the console stayed muted:\n%s", out);

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_shared(log)->console_loglevel, 7);
	assert_int_equal(pk_log_shared(log)->minimum_console_loglevel, 1);
	assert_int_equal(pk_log_read(log, 1, &rec, 0), 0);
	snprintf(notice, sizeof(notice),
		 "printk: log file %s: minimum_console_loglevel was 99, out of range: reset to 1", p);
	assert_string_equal(rec.text, notice);
	assert_int_equal(rec.level, 5);
	assert_int_equal(pk_log_read(log, 2, &rec, 0), 0);
	snprintf(notice, sizeof(notice),
		 "printk: log file %s: console_loglevel was 4294967295, out of range: reset to 7",
		 p);
	assert_string_equal(rec.text, notice);
	assert_int_equal(pk_log_read(log, 3, &rec, 0), 0);
	assert_string_equal(rec.text, "hello from the child");
	pk_log_destroy(log);
}

/* Console level 0 in the file, left by another process: it reads as the
 * kernel's minimum_console_loglevel (1), so emergencies still print and the
 * file keeps its value; a process's own loglevel=0 still mutes everything. */
static void test_zero_console_level(void **state)
{
	(void)state;
	const char *p = test_dir_path("level0.log");
	struct pk_log *log;
	off_t user;
	char opts[PATH_MAX + 64];
	int status;

	test_make_log(p, LOG_LEN, 1);
	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	user = (off_t)((uint8_t *)pk_log_shared(log) - (uint8_t *)log->mapping);
	pk_log_destroy(log);
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, console_loglevel), 0);
	/* Not the floor: as untrusted as the level. */
	poke_u32(p, user + (off_t)offsetof(struct pk_log_shared, minimum_console_loglevel), 0);

	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0", p);

	const char *out = run_child_opts(opts, "levels", NULL, NULL, &status);

	expect_exit(status, 0, out);
	assert_string_equal(out, "level 0\n");

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_shared(log)->console_loglevel, 0);
	assert_int_equal(pk_log_next_seq(log), 1 + 5);
	pk_log_destroy(log);

	/* The writer's own loglevel=0 keeps the kernel's meaning: silence. */
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0 loglevel=0", p);
	out = run_child_opts(opts, "levels", NULL, NULL, &status);
	expect_exit(status, 0, out);
	assert_string_equal(out, "");

	/* A level of its own replaces the 0 as usual. */
	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0 loglevel=3", p);
	out = run_child_opts(opts, "levels", NULL, NULL, &status);
	expect_exit(status, 0, out);
	assert_string_equal(out, "level 0\nlevel 1\nlevel 2\n");
}

/* The id part of the header's head and tail words starts at this bit. */
#ifdef PRINTK_RING_SMALL_IDS
#define RING_ID_SHIFT 15
#else
#define RING_ID_SHIFT 32
#endif
#define TAIL_WORD_OFF 128 /* the ring header's tail word, in the file */
#define DAMAGE_LINES  200 /* lines before and after the damage: the ring wraps */

/* A printk writer whose log file is damaged under it (the tail word's id
 * moved more than a ring away from the head) while it runs. */
static int print_through_damage(void *arg)
{
	uint64_t tail;
	int fd;

	default_fault_actions();
	if (pk_set_log_buf_len(LOG_LEN) || pk_set_log_buf_file(arg, 0))
		return 10;
	for (int i = 0; i < DAMAGE_LINES; i++)
		printk(KERN_INFO "before %d\n", i); /* the ring wraps */
	fd = open(arg, O_RDWR);
	if (fd < 0 || pread(fd, &tail, 8, TAIL_WORD_OFF) != 8)
		return 11;
	tail ^= (uint64_t)1 << (RING_ID_SHIFT + 11);
	if (pwrite(fd, &tail, 8, TAIL_WORD_OFF) != 8)
		return 12;
	close(fd);
	for (int i = 0; i < DAMAGE_LINES; i++)
		if (printk(KERN_INFO "line %d\n", i) <= 0)
			return 13;
	return 0;
}

/* printk that finds its log file damaged says so once and goes on in
 * memory: every line reaches the console, the file is left as it was. */
static void test_damaged_under_writer(void **state)
{
	(void)state;
	const char *p = test_dir_path("damaged-live.log");
	struct child_result res;
	char want[64];

	unlink(p);
	run_child(print_through_damage, (void *)p, CHILD_MS, &res);
	if (!res.exited || res.status != 0)
		fail_msg("child %s %d:\n%s", res.exited ? "exited" : "killed by signal",
			 res.exited ? res.status : res.sig, res.out);
	const char *notice = strstr(res.out, "printk: log file ");

	if (!notice || !strstr(notice, " is damaged (") ||
	    !strstr(notice, "): this process logs in memory from now on\n")) {
		fprintf(stderr, "%s", res.out);
		fail_msg("no notice (the output is above)");
	}
	if (strstr(notice + 1, "printk: log file "))
		fail_msg("the notice came twice:\n%s", res.out);
	for (int i = 0; i < DAMAGE_LINES; i++) {
		snprintf(want, sizeof(want), "] line %d\n", i);
		if (!strstr(res.out, want))
			fail_msg("line %d missing:\n%s", i, res.out);
	}
	child_result_free(&res);
}

/* ------------------------------------------------------ dead open lines -- */

#define UNFINISHED "unfinished ..."

static int die_with_open_line(void *arg)
{
	default_fault_actions();
	pk_printk_exit();
	if (pk_set_log_buf_file(arg, 0))
		return 10;
	printk(KERN_INFO "a complete line\n");
	printk(KERN_ERR UNFINISHED);
	raise(SIGKILL);
	return 11;
}

/* The next writer's console does not print the dead writer's half line as
 * its own (with the dead writer's timestamp); the log keeps it, final. */
static void test_dead_open_line_not_printed(void **state)
{
	(void)state;
	const char *p = test_dir_path("dead-line.log");
	char opts[PATH_MAX + 64];
	struct child_result res;
	struct pk_log *log;
	int status;

	unlink(p);
	run_child(die_with_open_line, (void *)p, CHILD_MS, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGKILL);
	child_result_free(&res);

	snprintf(opts, sizeof(opts), "log_buf_file=%s printk.time=0", p);

	const char *out = run_child_opts(opts, "hello", NULL, NULL, &status);

	expect_exit(status, 0, out);
	assert_string_equal(out, "hello from the child\n");

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_read(log, 1, &rec, 0), 0);
	assert_string_equal(rec.text, UNFINISHED);
	assert_int_equal(rec.state, PK_REC_FINAL);
	assert_int_equal(rec.flags & PK_REC_NEWLINE, 0);
	assert_int_equal(pk_log_read(log, 2, &rec, 0), 0);
	assert_string_equal(rec.text, "hello from the child");
	pk_log_destroy(log);
}

static struct prb_caller reused; /* the caller a dead writer had, and we have now */

static int store_open_line_as_reused(void *arg)
{
	struct pk_log *log;
	struct prb_meta m = { .level = 4, .caller = reused };

	default_fault_actions();
	if (pk_log_open_file(&log, arg, 0, 0))
		return 10;
	m.ts_nsec = pk_clock_ns();
	if (prb_store(pk_log_ring(log), &m, UNFINISHED, strlen(UNFINISHED), NULL, 0, false, NULL))
		return 11;
	_exit(0); /* dies without ending its line or closing the log */
}

/* A new writer with the dead writer's pid, tid and context (pid 1 of every
 * container) does not continue the dead writer's line. */
static void test_dead_open_line_not_continued(void **state)
{
	(void)state;
	const char *p = test_dir_path("reused-pid.log");
	struct child_result res;
	struct pk_log *log;
	uint64_t seq;

	test_make_log(p, LOG_LEN, 1);
	pk_caller_get(&reused);
	run_child_ok(store_open_line_as_reused, (void *)p, CHILD_MS, &res);
	child_result_free(&res);

	assert_int_equal(pk_log_open_file(&log, p, 0, 0), 0);
	assert_int_equal(prb_extend(pk_log_ring(log), &reused, " continued", 10, PK_TEXT_MAX, true, 0,
				    &seq),
			 -ENOENT);
	assert_int_equal(pk_log_read(log, 1, &rec, 0), 0);
	assert_string_equal(rec.text, UNFINISHED);
	assert_int_equal(rec.state, PK_REC_FINAL);
	pk_log_destroy(log);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], CHILD_ARG))
		return hostile_child(argv[2]);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_fs_refused),
		cmocka_unit_test(test_small_fs_refused),
		cmocka_unit_test(test_truncated_under_reader),
		cmocka_unit_test(test_truncated_under_writers),
		cmocka_unit_test(test_truncated_under_udmesg),
		cmocka_unit_test(test_truncated_with_crash_handler),
		cmocka_unit_test(test_unrelated_sigbus),
		cmocka_unit_test(test_planted_symlink),
		cmocka_unit_test(test_writable_by_others),
		cmocka_unit_test(test_reader_refuses_procfs),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_damaged_file_new_generation),
		cmocka_unit_test(test_damaged_under_writer),
		cmocka_unit_test(test_bad_console_level),
		cmocka_unit_test(test_zero_console_level),
		cmocka_unit_test(test_dead_open_line_not_printed),
		cmocka_unit_test(test_dead_open_line_not_continued),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
