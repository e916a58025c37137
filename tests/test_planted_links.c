// SPDX-License-Identifier: MIT
/*
 * test_planted_links.c - every file libprintk and its tools create, append
 * to or replace by name is safe against a symbolic link another user
 * planted in a shared directory (src/base/safe_open.c), as log files already
 * were (tests/test_logfile_hostile.c).
 *
 * The directory is sticky and world-writable, and owned by nobody, as is
 * every planted link, which points at a victim file root owns. The kernel's
 * fs.protected_symlinks would let root follow such a link (its owner owns
 * the directory), so what refuses it here is the library's own rule: a
 * link is followed only if it is ours or root's. Checked, the victim's
 * bytes unchanged each time:
 *  - a file console at a planted link: -ELOOP; root's own link there is
 *    followed;
 *  - a file console whose PATH was moved away and replaced with a planted
 *    link: pk_console_reopen() says -ELOOP, and the writes (with and
 *    without rotation, which looks PATH up before each write) go on into
 *    the file the console has;
 *  - size rotation onto planted PATH.1 and PATH.2: the renames replace the
 *    links, the rotated lines are where they belong;
 *  - the crash dump file (pk_kmsg_dump_file_create, which truncates) at a
 *    planted link: -ELOOP;
 *  - pk-forward's cursor: a link planted at CURSOR.tmp or at CURSOR makes it
 *    exit 1 with one line; a FIFO as the cursor too, promptly (it used to
 *    block in open(2) forever); a leftover CURSOR.tmp of ours is replaced,
 *    one of another user's is not.
 * Tools run in child processes with bounded waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/kmsg_dump.h>
#include <printk/log.h>

#include "testutil.h"

#define NOBODY	65534
#define VICTIM	"the victim's own bytes\n"
#define TOOL_MS 20000
#define FIFO_MS 10000

static char sticky[256];
static char victim[256];

/* @name in the sticky directory (four buffers, reused in turn). */
static const char *in_sticky(const char *name)
{
	static char b[4][512];
	static unsigned turn;
	char *p = b[turn++ % 4];

	snprintf(p, sizeof(b[0]), "%s/%s", sticky, name);
	return p;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The file at @path itself (never a link's target) must hold @want. */
static void expect_content(const char *path, const char *want)
{
	char *got = test_slurp_fd(open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), NULL);

	if (!got)
		fail_msg("%s: %s", path, strerror(errno));
	assert_string_equal(got, want);
	free(got);
}

static void expect_victim_intact(void)
{
	struct stat st;

	expect_content(victim, VICTIM);
	assert_int_equal(lstat(victim, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
}

/* Another user's link at @name (in the sticky directory) to the victim. */
static const char *plant(const char *name)
{
	const char *p = in_sticky(name);

	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(lchown(p, NOBODY, NOBODY), 0);
	return p;
}

static int is_symlink(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int setup(void **state)
{
	(void)state;
	if (test_dir_make("pk_test_links"))
		return -1;
	/* The planted links' owner can reach the sticky directory. */
	if (chmod(test_dir(), 0711))
		return -1;
	snprintf(sticky, sizeof(sticky), "%s", test_dir_path("sticky"));
	snprintf(victim, sizeof(victim), "%s", test_dir_path("victim"));
	if (mkdir(sticky, 0777) || chmod(sticky, 01777))
		return -1;
	if (geteuid() == 0 && chown(sticky, NOBODY, NOBODY))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* Each test starts with the victim as it should stay, and needs root to
 * give its links to another user. */
static void begin(void)
{
	if (geteuid() != 0) {
		print_message("not root: cannot plant a link as another user\n");
		skip();
	}
	write_file(victim, VICTIM, 0644);
	assert_int_equal(chmod(victim, 0644), 0);
}

static void con_write(struct console *con, const char *text)
{
	assert_int_equal(con->write_checked(con, text, strlen(text)), 0);
}

/* ------------------------------------------------------ file consoles -- */

static void test_console_file_planted(void **state)
{
	(void)state;
	struct console *con = NULL;

	begin();
	assert_int_equal(pk_console_file_create(&con, plant("console.log")), -ELOOP);
	assert_null(con);
	expect_victim_intact();

	/* Root's own link there is followed (the rule log files have). */
	const char *own = in_sticky("own.log");

	assert_int_equal(symlink(test_dir_path("own-target.log"), own), 0);
	assert_int_equal(pk_console_file_create(&con, own), 0);
	con_write(con, "through root's link\n");
	pk_console_destroy(con);
	expect_content(test_dir_path("own-target.log"), "through root's link\n");
	expect_victim_intact();
}

/* PATH moved away (logrotate) and a link planted in its place before the
 * console reopens: the console keeps its file. @rotate: with size
 * rotation, whose writes look PATH up and reopen on their own. */
static void reopen_case(const char *name, int rotate)
{
	const char *path = in_sticky(name);
	char moved[600];
	struct console *con;

	snprintf(moved, sizeof(moved), "%s.moved", path);
	assert_int_equal(pk_console_file_create(&con, path), 0);
	if (rotate)
		assert_int_equal(pk_console_file_set_rotation(con, 1 << 20, 2), 0);
	con_write(con, "one\n");
	assert_int_equal(rename(path, moved), 0);
	plant(name);
	if (!rotate)
		assert_int_equal(pk_console_reopen(con), -ELOOP);
	con_write(con, "two\n");
	con_write(con, "three\n");
	pk_console_destroy(con);
	expect_victim_intact();
	expect_content(moved, "one\ntwo\nthree\n");
	assert_true(is_symlink(path));
}

static void test_console_reopen_planted(void **state)
{
	(void)state;
	begin();
	reopen_case("reopen.log", 0);
	reopen_case("reopen-rotating.log", 1);
}

/* Rotation renames onto planted PATH.1 and PATH.2: rename replaces a link,
 * never writes through it. */
static void test_console_rotation_planted(void **state)
{
	(void)state;
	const char *path = in_sticky("rot.log");
	char one[600], two[600];
	struct console *con;

	begin();
	snprintf(one, sizeof(one), "%s.1", path);
	snprintf(two, sizeof(two), "%s.2", path);
	plant("rot.log.1");
	plant("rot.log.2");
	assert_int_equal(pk_console_file_create(&con, path), 0);
	assert_int_equal(pk_console_file_set_rotation(con, 40, 2), 0);
	con_write(con, "first file, thirty bytes long\n");
	con_write(con, "second file, more bytes\n");
	con_write(con, "third file, which did not fit\n");
	pk_console_destroy(con);
	expect_victim_intact();
	expect_content(two, "first file, thirty bytes long\n");
	expect_content(one, "second file, more bytes\n");
	expect_content(path, "third file, which did not fit\n");
}

/* ---------------------------------------------------- crash dump file -- */

static void test_dump_file_planted(void **state)
{
	(void)state;
	struct kmsg_dumper *d = NULL;

	begin();
	/* It truncates the file it opens: through the link, the victim. */
	assert_int_equal(pk_kmsg_dump_file_create(&d, plant("crash.dump")), -ELOOP);
	assert_null(d);
	expect_victim_intact();

	/* A file of its own there is made (0600) and works. */
	assert_int_equal(pk_kmsg_dump_file_create(&d, in_sticky("own.dump")), 0);
	pk_kmsg_dump_file_destroy(d);

	struct stat st;

	assert_int_equal(lstat(in_sticky("own.dump"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* --------------------------------------------------- pk-forward cursor -- */

#ifdef PK_FORWARD
static int udp_fd = -1;
static char target[64];
static char fwd_log[256];

/* A datagram collector nobody reads (the datagrams only have to be taken)
 * and a log of three records. */
static void fwd_prepare(void)
{
	if (udp_fd < 0) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		assert_true(udp_fd >= 0);
		assert_int_equal(bind(udp_fd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(getsockname(udp_fd, (struct sockaddr *)&a, &len), 0);
		snprintf(target, sizeof(target), "udp:127.0.0.1:%u", ntohs(a.sin_port));
		snprintf(fwd_log, sizeof(fwd_log), "%s", test_dir_path("fwd.log"));
		test_make_log(fwd_log, 4096, 3);
	}
}

/*
 * pk-forward --once -c @cursor to the collector: its exit status (128 +
 * signal if killed), its stderr into @err (malloc'ed), reaped within @ms.
 */
static int fwd_run(const char *cursor, char **err, unsigned ms)
{
	const char *errpath = test_dir_path("fwd.err");
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0 || dup2(fd, 1) < 0)
			_exit(120);
		unsetenv("PRINTK_OPTS");
		execl(PK_FORWARD, PK_FORWARD, "--once", "-c", cursor, target, fwd_log,
		      (char *)NULL);
		_exit(121);
	}
	test_reap(pid, &st, ms);
	*err = test_slurp(errpath, NULL);
	assert_non_null(*err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Exit 1 and exactly the line @want on stderr. */
static void expect_one_line(const char *cursor, const char *want, unsigned ms)
{
	char *err;
	int rc = fwd_run(cursor, &err, ms);
	char line[2048];

	assert_true(strlen(want) + 2 <= sizeof(line));
	memcpy(line, want, strlen(want));
	memcpy(line + strlen(want), "\n", 2);
	if (rc != 1)
		fail_msg("pk-forward exited %d, expected 1; stderr:\n%s", rc, err);
	assert_string_equal(err, line);
	free(err);
}

static void test_cursor_tmp_planted(void **state)
{
	(void)state;
	char cur[600], want[2048];

	begin();
	fwd_prepare();
	snprintf(cur, sizeof(cur), "%s", in_sticky("tmp-planted.cursor"));
	plant("tmp-planted.cursor.tmp");
	snprintf(want, sizeof(want),
		 "pk-forward: %s: cannot save the cursor: %s.tmp: a symbolic link that another "
		 "user controls (not followed)",
		 cur, cur);
	expect_one_line(cur, want, TOOL_MS);
	expect_victim_intact();
	assert_int_equal(access(cur, F_OK), -1);
}

static void test_cursor_planted(void **state)
{
	(void)state;
	char cur[600], want[2048];

	begin();
	fwd_prepare();
	snprintf(cur, sizeof(cur), "%s", plant("planted.cursor"));
	snprintf(want, sizeof(want),
		 "pk-forward: %s: bad cursor file: a symbolic link that another user controls "
		 "(not followed)",
		 cur);
	expect_one_line(cur, want, TOOL_MS);
	expect_victim_intact();
	assert_true(is_symlink(cur));
}

/* A FIFO as the cursor: open(2) used to wait for a writer forever. */
static void test_cursor_fifo(void **state)
{
	(void)state;
	char cur[600], want[2048];

	fwd_prepare();
	snprintf(cur, sizeof(cur), "%s", test_dir_path("fifo.cursor"));
	assert_int_equal(mkfifo(cur, 0600), 0);
	snprintf(want, sizeof(want), "pk-forward: %s: bad cursor file: not a regular file", cur);
	expect_one_line(cur, want, FIFO_MS);
	/* A directory, with words. */
	snprintf(want, sizeof(want), "pk-forward: %s: bad cursor file: %s", test_dir(),
		 strerror(EISDIR));
	expect_one_line(test_dir(), want, FIFO_MS);
}

/* A temporary a killed run left: ours is replaced, another user's is not. */
static void test_cursor_tmp_leftover(void **state)
{
	(void)state;
	char cur[600], tmp[700], want[2048], *err;
	uint64_t id[2];
	struct pk_log *log;

	begin();
	fwd_prepare();
	snprintf(cur, sizeof(cur), "%s", in_sticky("left.cursor"));
	snprintf(tmp, sizeof(tmp), "%s.tmp", cur);
	write_file(tmp, "half a cursor", 0600);
	assert_int_equal(fwd_run(cur, &err, TOOL_MS), 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(pk_log_open_file(&log, fwd_log, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_identity(log, id), 0);
	pk_log_destroy(log);
	snprintf(want, sizeof(want), "pk-forward cursor 1\nlog %016llx%016llx\nnext-seq 3\n",
		 (unsigned long long)id[0], (unsigned long long)id[1]);
	expect_content(cur, want);

	/* Another user's: not removed, the cursor not saved. */
	assert_int_equal(unlink(cur), 0);
	write_file(tmp, "someone else's", 0644);
	assert_int_equal(chown(tmp, NOBODY, NOBODY), 0);
	snprintf(want, sizeof(want),
		 "pk-forward: %s: cannot save the cursor: %s: exists and is not a file of ours "
		 "(not removed)",
		 cur, tmp);
	expect_one_line(cur, want, TOOL_MS);
	expect_content(tmp, "someone else's");
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_console_file_planted),
		cmocka_unit_test(test_console_reopen_planted),
		cmocka_unit_test(test_console_rotation_planted),
		cmocka_unit_test(test_dump_file_planted),
#ifdef PK_FORWARD
		cmocka_unit_test(test_cursor_tmp_planted),
		cmocka_unit_test(test_cursor_planted),
		cmocka_unit_test(test_cursor_fifo),
		cmocka_unit_test(test_cursor_tmp_leftover),
#endif
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
