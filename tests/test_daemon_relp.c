// SPDX-License-Identifier: MIT
/*
 * test_daemon_relp.c - RELP and the cursor forwarder (pk-forward) against a
 * real rsyslogd (Debian's rsyslog and rsyslog-relp), started here
 * unprivileged in the foreground with imrelp and imtcp on 127.0.0.1 ports
 * picked free. Its main queue is Direct and the file action writes each
 * message before the input returns, so a message rsyslog acknowledged over
 * RELP is in the output file (it survives the SIGKILL of rsyslogd):
 *   - a relp: console: every field arrives (PRI, time, host, app, pid,
 *     MSGID, structured data with the dictionary and escapes, multi-line
 *     text, a 1023-byte text, bytes that are not UTF-8);
 *   - a relp: or tcp: console, rsyslogd killed (SIGKILL) and restarted in
 *     the middle of 20,000 records: none lost (TCP: duplicates, measured
 *     and printed);
 *   - a tcp: console that wrote its last record before rsyslogd (stopped
 *     meanwhile, so nothing was read) is killed and started again: the
 *     console notices the break with nothing to write, says so, and sends
 *     every record again;
 *   - pk-forward over RELP, the same: none lost, duplicates only within one
 *     commit; over TCP the loss is measured and printed;
 *   - pk-forward stopped (SIGTERM) and started again: it resumes exactly,
 *     no record twice; records overwritten meanwhile are reported with
 *     their exact count (stderr and a "** N printk messages dropped **"
 *     message); a recreated log restarts from its first record (found at
 *     a restart by its identity, or while following by its file); a bad
 *     cursor file gives one clear error; the console's "cannot reach" and
 *     "reached" lines on pk-forward's stderr while it runs, as the
 *     collector is down, then started;
 *   - console=syslog:relp:... in PRINTK_OPTS (a child process);
 *   - a child that logs 100 records and ends with pk_printk_exit(), a
 *     hundred times, or returns from main, three times, over RELP and over
 *     TCP: every record of every run arrives once, the child says nothing,
 *     no RELP session broken.
 * Label "daemons": run by scripts/test.sh in the gcc build only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "daemon_util.h"
#include "forward/console_net.h"
#include "testutil.h"

#define N_KILL 20000

/* Connections made to the RELP port and closed without a word since the
 * test's rsyslogd log began (each is one "session broken" there): counted
 * so that the exit test can tell them from a program's broken session. */
static int relp_probes;

static void write_conf(void)
{
	char inputs[512];

	relp_probes = 0; /* a new test directory, a new rsyslogd.log */

	snprintf(inputs, sizeof(inputs),
		 /* Direct: the input runs the action before it returns, so the
		  * RELP answer follows the write. */
		 "main_queue(queue.type=\"Direct\")\n"
		 "module(load=\"imrelp\")\nmodule(load=\"imtcp\")\n"
		 "input(type=\"imrelp\" address=\"127.0.0.1\" port=\"%d\")\n"
		 "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%d\" "
		 "supportOctetCountedFraming=\"on\")\n",
		 rsyslogd_port("relp"), rsyslogd_port("tcp"));
	rsyslogd_write_conf(inputs, "\n           asyncWriting=\"off\" flushOnTXEnd=\"on\"");
}

/* Ready when both ports accept. */
static int rs_ready(void)
{
	if (!daemon_tcp_accepts(rsyslogd_port("relp")))
		return 0;
	relp_probes++;
	return daemon_tcp_accepts(rsyslogd_port("tcp"));
}

/* ------------------------------------------------------ the console -- */

static void test_relp_console_fields(void **state)
{
	(void)state;
	struct console *con;

	assert_int_equal(
		pk_console_syslog_create(&con, rsyslogd_target("relp"), PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_register_console(con), 0);
	pk_printk_emit(3, 4, DAEMON_FIELDS_DICT, sizeof(DAEMON_FIELDS_DICT) - 1,
		       "RF-fields first line\nsecond line");
	assert_int_equal(pk_pr_flush(5000, 0), 1);

	char *line = rsyslogd_line_with("RF-fields", 10000);
	struct pk_record rec;

	daemon_find_record("RF-fields", &rec);
	assert_string_equal(rec.text, "RF-fields first line\nsecond line");
	rsyslogd_assert_fields(line, "imrelp", &rec, "RF-fields first line\nsecond line");
	free(line);

	/* a 1023-byte text, and bytes that are not UTF-8 (no BOM) */
	char big[1024];

	memcpy(big, "RF-long ", 8);
	memset(big + 8, 'y', 1015);
	big[1023] = '\0';
	pk_printk_emit(1, 6, NULL, 0, "%s\n", big);
	pk_printk_emit(1, 6, NULL, 0, "RF-bin \xff\xfe end\n");
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	line = rsyslogd_line_with("RF-long", 10000);

	char *msg = json_get(line, "msg", NULL);

	assert_non_null(msg);
	assert_int_equal(strlen(msg), 3 + 1023);
	assert_true(!memcmp(msg, "\xef\xbb\xbf", 3) && !memcmp(msg + 3, big, 1023));
	free(msg);
	free(line);
	line = rsyslogd_line_with("RF-bin", 10000);
	json_assert_str(line, "msg", "RF-bin \xff\xfe end");
	free(line);

	struct pk_forward_stats st;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_true(st.connects >= 1);
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
}

/* Once a tenth of the N_KILL records tagged @tag are on disk, kill
 * rsyslogd (SIGKILL), start it again and wait for the rest; how many were
 * on disk at the kill. */
static int kill_midway(const char *tag, int must_be_lossless, struct tally *t)
{
	rsyslogd_wait_tally(tag, N_KILL, N_KILL / 10, 20000, t);
	rsyslogd_stop(SIGKILL);
	rsyslogd_tally(tag, N_KILL, t);

	int before = t->distinct;

	rsyslogd_restart();
	/* A lossless sender gets two minutes: on a loaded machine the resend,
	 * the backoff and rsyslogd's own writing all slow down; a complete
	 * tally returns at once. */
	rsyslogd_wait_tally(tag, N_KILL, N_KILL, must_be_lossless ? 120000 : 15000, t);
	return before;
}

/* Say what @who lost over @proto; fail if it had to lose nothing. */
static void report_loss(const char *who, const char *proto, int before, struct tally *t,
			int must_be_lossless)
{
	char miss[128];

	tally_first_missing(t, N_KILL, miss, sizeof(miss));
	print_message("%s over %s: %d on disk at the kill; after: %d lines, %d distinct, "
		      "%d duplicates, %d lost (first:%s)\n",
		      who, proto, before, t->lines, t->distinct, t->dups, N_KILL - t->distinct, miss);
	if (must_be_lossless && t->distinct != N_KILL)
		fail_msg("%d records lost over %s, first missing:%s", N_KILL - t->distinct, proto,
			 miss);
}

/* Until @con's state is @want after @changes announced changes at least
 * (60 s at most): the printer thread announces after the bytes went. */
static void wait_console_state(struct console *con, int want, uint64_t changes)
{
	struct pk_console_stats cs;
	uint64_t start = now_ms();

	do {
		assert_int_equal(pk_console_stats(con, &cs), 0);
		if (cs.state == want && cs.changes >= changes)
			return;
		usleep(20000);
	} while (now_ms() - start < 60000);
	fail_msg("console state %d after %llu changes, not %d after %llu", cs.state,
		 (unsigned long long)cs.changes, want, (unsigned long long)changes);
}

/* rsyslogd is killed while a console sends 20,000 records: none is lost.
 * RELP resends what rsyslogd did not answer; TCP sends again, read back
 * from the ring, what it wrote since the receiver last had time to read
 * it (console_net.c, N7): what had arrived arrives twice. */
static void console_kill_run(const char *proto, const char *tag, int must_be_lossless)
{
	struct console *con;
	struct tally t = { 0 };

	assert_int_equal(
		pk_console_syslog_create(&con, rsyslogd_target(proto), PK_SYSLOG_RFC5424, 0), 0);
	/* TCP has no acknowledgement: what rsyslogd's kernel took but rsyslogd
	 * had not written when it was killed is sent again from the resend
	 * window, kept for the slack after the send queue empties. A loaded
	 * machine lets rsyslogd lag far more than the default 2 s (14,284
	 * records were lost once): the test keeps a minute, so it checks the
	 * window, not rsyslogd's speed. */
	if (!strcmp(proto, "tcp"))
		pk_console_net_set_resend_slack(con, 60000);
	assert_int_equal(pk_register_console(con), 0);
	for (int i = 0; i < N_KILL; i++)
		pk_printk_emit(1, 5, NULL, 0, "%s %d\n", tag, i);

	int before = kill_midway(tag, must_be_lossless, &t);

	if (!must_be_lossless) {
		assert_int_equal(pk_pr_flush(10000, 0), 1);
		sleep(1);
		rsyslogd_tally(tag, N_KILL, &t);
	}
	report_loss("console", proto, before, &t, must_be_lossless);

	struct pk_forward_stats st;

	/* duplicates: what librelp sends again after each new session, its
	 * window of 128 unanswered messages and the one that failed */
	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	if (!strcmp(proto, "relp") && (uint64_t)t.dups > 129 * (st.connects - 1))
		fail_msg("%d duplicates for %llu sessions", t.dups,
			 (unsigned long long)st.connects);

	struct pk_console_stats cs;

	/* lost, then reconnected: two changes at least, each announced,
	 * waited for (the records can be on disk before the printer thread
	 * announced the reconnection). A TCP console notices the break even
	 * when it had written everything before the kill, as a loaded
	 * machine can let it (N8: it watches its connection while idle); a
	 * RELP console that had everything answered has nothing to write
	 * into the dead session, so nothing to notice. RELP counts nothing
	 * lost; TCP counts what left its full resend window as possibly lost
	 * (none, unless rsyslogd lagged that far) */
	wait_console_state(con, PK_CONSOLE_DELIVERING,
			   before < N_KILL || !strcmp(proto, "tcp") ? 2 : 0);
	assert_int_equal(pk_console_stats(con, &cs), 0);
	print_message("console over %s: %llu counted as possibly lost\n", proto,
		      (unsigned long long)cs.lost);
	if (!strcmp(proto, "relp"))
		assert_int_equal(cs.lost, 0);
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	free(t.seen);
}

static void test_relp_console_kill(void **state)
{
	(void)state;
	console_kill_run("relp", "RK", 1);
}

static void test_tcp_console_kill(void **state)
{
	(void)state;
	console_kill_run("tcp", "TK", 1);
}

#define N_IDLE 300 /* records that fit in the kernels' buffers of one connection */

/* A tally of @tag below @n with every number, or the test fails naming
 * the first missing. */
static void assert_tally_whole(const char *tag, int n, struct tally *t)
{
	char miss[128];

	rsyslogd_wait_tally(tag, n, n, 60000, t);
	tally_first_missing(t, n, miss, sizeof(miss));
	if (t->distinct != n)
		fail_msg("%d of %d records of %s lost, first missing:%s", n - t->distinct, n, tag,
			 miss);
}

/* rsyslogd killed with records the TCP console wrote still unread in its
 * socket, after the console wrote its last record: no record comes to
 * write into the dead connection, yet the console notices the break (it
 * watches its connection while idle), says so, reconnects once rsyslogd
 * is back and sends its resend window again (N7). rsyslogd is stopped
 * (SIGSTOP, every thread of it) while the records are written, so none is
 * read before the kill, whatever the machine's load. */
static void test_tcp_console_kill_idle(void **state)
{
	(void)state;
	struct console *con;
	struct tally t = { 0 };

	assert_int_equal(
		pk_console_syslog_create(&con, rsyslogd_target("tcp"), PK_SYSLOG_RFC5424, 0), 0);
	pk_console_net_set_resend_slack(con, 60000);
	assert_int_equal(pk_register_console(con), 0);
	pk_printk_emit(1, 5, NULL, 0, "TI %d\n", 0);
	rsyslogd_wait_tally("TI", N_IDLE, 1, 20000, &t);
	assert_int_equal(t.distinct, 1);
	wait_console_state(con, PK_CONSOLE_DELIVERING, 0);

	rsyslogd_freeze();
	for (int i = 1; i < N_IDLE; i++)
		pk_printk_emit(1, 5, NULL, 0, "TI %d\n", i);
	/* every record written: the console has nothing more to write */
	assert_int_equal(pk_pr_flush(20000, 0), 1);
	rsyslogd_stop(SIGKILL);
	rsyslogd_tally("TI", N_IDLE, &t);
	assert_int_equal(t.distinct, 1);
	rsyslogd_restart();

	assert_tally_whole("TI", N_IDLE, &t);
	/* lost, then reconnected, each announced */
	wait_console_state(con, PK_CONSOLE_DELIVERING, 2);

	struct pk_console_stats cs;

	assert_int_equal(pk_console_stats(con, &cs), 0);
	assert_int_equal(cs.lost, 0);
	daemon_drop_console(con);
	free(t.seen);
}

/* ------------------------------------------------------- pk-forward -- */

static struct pk_log *make_log(const char *name, size_t len)
{
	struct pk_log *log;

	assert_int_equal(pk_log_open_file(&log, test_dir_path(name), len, 0), 0);
	return log;
}

static void store_n(struct pk_log *log, const char *tag, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		char b[64];
		int k = snprintf(b, sizeof(b), "%s %d", tag, i);

		assert_int_equal(pk_log_store(log, 1, 6, b, (size_t)k, "K=v", 4), 0);
	}
}

static unsigned long long cursor_seq(void)
{
	char *c = test_slurp(test_dir_path("cursor"), NULL);
	char *p = c ? strstr(c, "next-seq ") : NULL;
	unsigned long long v = p ? strtoull(p + 9, NULL, 10) : ~0ull;

	free(c);
	return v;
}

static void fwd_kill_run(const char *proto, const char *tag, int must_be_lossless)
{
	struct pk_log *log = make_log(tag, 1 << 22);
	struct tally t = { 0 };
	int st;

	store_n(log, tag, 0, N_KILL);

	pid_t fwd = daemon_pk_forward(rsyslogd_target(proto), tag, NULL);

	assert_true(fwd > 0);

	int before = kill_midway(tag, must_be_lossless, &t);

	/* when it is lossy, the rest settles first */
	if (!must_be_lossless) {
		sleep(2);
		rsyslogd_tally(tag, N_KILL, &t);
	}
	kill(fwd, SIGTERM);
	test_reap(fwd, &st, 10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(cursor_seq(), N_KILL);
	report_loss("pk-forward", proto, before, &t, must_be_lossless);
	/* A commit covers at most 1000 records, and a failed one is sent again
	 * once: duplicates stay within that window. */
	if (must_be_lossless)
		assert_true(t.dups <= 2000);
	pk_log_destroy(log);
	free(t.seen);
}

static void test_forward_relp_kill(void **state)
{
	(void)state;
	fwd_kill_run("relp", "FR", 1);
}

static void test_forward_tcp_kill(void **state)
{
	(void)state;
	fwd_kill_run("tcp", "FT", 0);
}

/* Stopped cleanly and started again: exactly once. */
static void test_forward_resume(void **state)
{
	(void)state;
	struct pk_log *log = make_log("resume.log", 1 << 20);
	struct tally t = { 0 };
	int st;

	store_n(log, "RS", 0, 300);

	pid_t fwd = daemon_pk_forward(rsyslogd_target("relp"), "resume.log", NULL);

	rsyslogd_wait_tally("RS", 1000, 300, 20000, &t);
	kill(fwd, SIGTERM);
	test_reap(fwd, &st, 10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(cursor_seq(), 300);
	store_n(log, "RS", 300, 200);
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "resume.log"), 0);
	assert_int_equal(cursor_seq(), 500);
	store_n(log, "RS", 500, 100);
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("tcp"), "resume.log"), 0);
	assert_int_equal(cursor_seq(), 600);
	rsyslogd_wait_tally("RS", 1000, 600, 20000, &t);
	assert_int_equal(t.distinct, 600);
	assert_int_equal(t.lines, 600);
	assert_int_equal(t.dups, 0);

	/* the writer's name and pid come from the log, not from pk-forward */
	char *line = rsyslogd_line_with("RS 599\"", 5000);
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	char comm[16];

	snprintf(comm, sizeof(comm), "%s", daemon_app); /* the log keeps 15 characters, as comm */
	json_assert_str(line, "app_name", comm);
	json_assert_str(line, "procid", pid);
	free(line);
	pk_log_destroy(log);
	free(t.seen);
}

/* Records overwritten while pk-forward was stopped: counted exactly. */
static void test_forward_lost(void **state)
{
	(void)state;
	struct pk_log *log = make_log("lost.log", 4096);
	struct tally t = { 0 };

	store_n(log, "LO", 0, 10);
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "lost.log"), 0);
	assert_int_equal(cursor_seq(), 10);
	store_n(log, "LO", 10, 990);

	uint64_t first = pk_log_first_seq(log);

	assert_true(first > 10);
	unlink(test_dir_path("fwd.err"));
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "lost.log"), 0);
	assert_int_equal(cursor_seq(), 1000);

	char *err = test_slurp(test_dir_path("fwd.err"), NULL), want[160], dropped[64];

	snprintf(want, sizeof(want),
		 "pk-forward: %llu records lost: overwritten before they were forwarded "
		 "(seq 10 to %llu)\n",
		 (unsigned long long)(first - 10), (unsigned long long)(first - 1));
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
	snprintf(dropped, sizeof(dropped), "** %llu printk messages dropped **",
		 (unsigned long long)(first - 10));
	free(rsyslogd_line_with(dropped, 10000));
	rsyslogd_wait_tally("LO", 1000, (int)(1000 - first + 10), 20000, &t);
	assert_int_equal(t.distinct, (int)(1000 - first + 10));
	assert_int_equal(t.dups, 0);
	pk_log_destroy(log);
	free(t.seen);
}

/* A recreated log file (another identity) starts from its first record. */
static void test_forward_recreated(void **state)
{
	(void)state;
	struct pk_log *log = make_log("re.log", 1 << 16);
	struct tally t = { 0 };

	store_n(log, "RA", 0, 20);
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "re.log"), 0);
	assert_int_equal(cursor_seq(), 20);
	pk_log_destroy(log);
	unlink(test_dir_path("re.log"));
	log = make_log("re.log", 1 << 16);
	store_n(log, "RB", 0, 5);
	unlink(test_dir_path("fwd.err"));
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "re.log"), 0);
	assert_int_equal(cursor_seq(), 5);

	char *err = test_slurp(test_dir_path("fwd.err"), NULL), want[512];

	snprintf(want, sizeof(want),
		 "pk-forward: %s: the log was recreated since the cursor was saved: starting "
		 "from its first record\n",
		 test_dir_path("re.log"));
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
	rsyslogd_wait_tally("RB", 5, 5, 20000, &t);
	assert_int_equal(t.lines, 5);
	pk_log_destroy(log);
	free(t.seen);
}

/* fwd.err once it holds @n lines (within @ms), malloc'ed; what it held
 * then if it never did. */
static char *wait_err_lines(int n, unsigned ms)
{
	char *err = NULL;

	for (unsigned waited = 0;; waited += 20) {
		int lines = 0;

		free(err);
		err = test_slurp(test_dir_path("fwd.err"), NULL);
		for (const char *p = err; p && (p = strchr(p, '\n')); p++)
			lines++;
		if (lines >= n || waited >= ms)
			return err;
		usleep(20000);
	}
}

/* @err without the stderr console's "[seconds.micros] " before each line:
 * the prefix checked, the rest kept in place. */
static void strip_times(char *err)
{
	char *out = err;

	for (char *p = err; *p;) {
		char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
		size_t d = 1;

		assert_true(len > 3 && p[0] == '[');
		while (p[d] == ' ')
			d++;
		while (p[d] >= '0' && p[d] <= '9')
			d++;
		assert_true(p[d] == '.');
		for (int i = 1; i <= 6; i++)
			assert_true(p[d + i] >= '0' && p[d + i] <= '9');
		assert_true(p[d + 7] == ']' && p[d + 8] == ' ');
		memmove(out, p + d + 9, len - d - 9);
		out += len - d - 9;
		p += len;
	}
	*out = '\0';
}

/* The forwarding console's announcements appear on pk-forward's stderr
 * when its state changes, not when it exits: the collector down at the
 * start, then started. */
static void test_forward_announces_live(void **state)
{
	(void)state;
	struct pk_log *log = make_log("say.log", 1 << 16);
	struct tally t = { 0 };
	char want[1024];
	int st;

	rsyslogd_stop(SIGTERM);
	store_n(log, "SA", 0, 3);

	char target[64];

	snprintf(target, sizeof(target), "%s", rsyslogd_target("tcp"));

	pid_t fwd = daemon_pk_forward(target, "say.log", NULL);

	assert_true(fwd > 0);

	char *err = wait_err_lines(1, 30000);

	assert_non_null(err);
	strip_times(err);
	snprintf(want, sizeof(want),
		 "printk: console [syslog] cannot reach %s: Connection refused (3 waiting, 0 lost)\n",
		 target);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(kill(fwd, 0), 0); /* said while it runs */

	rsyslogd_restart();
	rsyslogd_wait_tally("SA", 3, 3, 20000, &t);
	err = wait_err_lines(2, 30000);
	assert_non_null(err);
	strip_times(err);
	snprintf(want + strlen(want), sizeof(want) - strlen(want),
		 "printk: console [syslog] reached %s (2 waiting, 0 lost)\n", target);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(kill(fwd, 0), 0);

	kill(fwd, SIGTERM);
	test_reap(fwd, &st, 10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	err = test_slurp(test_dir_path("fwd.err"), NULL);
	assert_non_null(err);
	strip_times(err);
	assert_string_equal(err, want); /* once each: nothing more at the exit */
	free(err);
	pk_log_destroy(log);
	free(t.seen);
}

/* A log recreated while pk-forward follows it: the new one from its first
 * record. */
static void test_forward_recreated_live(void **state)
{
	(void)state;
	struct pk_log *log = make_log("live.log", 1 << 16);
	struct tally t = { 0 };
	int st;

	store_n(log, "LA", 0, 10);

	pid_t fwd = daemon_pk_forward(rsyslogd_target("relp"), "live.log", NULL);

	assert_true(fwd > 0);
	rsyslogd_wait_tally("LA", 10, 10, 20000, &t);
	pk_log_destroy(log);
	unlink(test_dir_path("live.log"));
	log = make_log("live.log", 1 << 16);
	store_n(log, "LB", 0, 3);
	rsyslogd_wait_tally("LB", 3, 3, 20000, &t);
	assert_int_equal(t.lines, 3);
	kill(fwd, SIGTERM);
	test_reap(fwd, &st, 10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(cursor_seq(), 3);

	char *err = test_slurp(test_dir_path("fwd.err"), NULL), want[512];

	snprintf(want, sizeof(want),
		 "pk-forward: %s: the log was recreated: starting from its first record\n",
		 test_dir_path("live.log"));
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
	pk_log_destroy(log);
	free(t.seen);
}

static void test_forward_bad_cursor(void **state)
{
	(void)state;
	struct pk_log *log = make_log("bad.log", 1 << 16);
	FILE *f = fopen(test_dir_path("cursor"), "w");

	fputs("pk-forward cursor 1\nlog 12\nnext-seq x\n", f);
	fclose(f);
	unlink(test_dir_path("fwd.err"));
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "bad.log"), 1);

	char *err = test_slurp(test_dir_path("fwd.err"), NULL), want[512];

	snprintf(want, sizeof(want), "pk-forward: %s: bad cursor file: not a pk-forward cursor file\n",
		 test_dir_path("cursor"));
	assert_string_equal(err, want);
	free(err);

	/* this log's identity, but a position it never reached */
	uint64_t id[2];

	store_n(log, "BC", 0, 7);
	assert_int_equal(pk_log_identity(log, id), 0);
	f = fopen(test_dir_path("cursor"), "w");
	fprintf(f, "pk-forward cursor 1\nlog %016llx%016llx\nnext-seq 1000\n",
		(unsigned long long)id[0], (unsigned long long)id[1]);
	fclose(f);
	unlink(test_dir_path("fwd.err"));
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("relp"), "bad.log"), 1);
	err = test_slurp(test_dir_path("fwd.err"), NULL);
	snprintf(want, sizeof(want),
		 "pk-forward: %s: bad cursor file: next-seq 1000 is past the end of the log (7)\n",
		 test_dir_path("cursor"));
	assert_string_equal(err, want);
	free(err);
	pk_log_destroy(log);
}

/* console=syslog:relp:... in PRINTK_OPTS, in a child process. */
static void test_printk_opts(void **state)
{
	(void)state;
	char opts[128];

	snprintf(opts, sizeof(opts), "console=syslog:%s", rsyslogd_target("relp"));
	daemon_run_opts_child(opts);

	char *line = rsyslogd_line_with("OP-relp-child", 10000);

	json_assert_str(line, "inputname", "imrelp");
	json_assert_str(line, "msg", "\xef\xbb\xbfOP-relp-child via PRINTK_OPTS");
	free(line);
}

/*
 * A program that forwards over RELP and ends with pk_printk_exit(), the
 * documented clean end: every record it stored arrives, run after run (the
 * exit drains the console's thread with the log still there, then closes
 * the session, which waits for rsyslogd's answers), and rsyslogd sees the
 * session closed, not broken. The same for a program that just returns
 * from main (a few runs).
 */
#define EXIT_RUNS    100
#define RETURN_RUNS  3
#define EXIT_RECORDS 100

static int exit_child(const char *tag, const char *how)
{
	for (int i = 0; i < EXIT_RECORDS; i++)
		pk_printk_emit(1, 5, NULL, 0, "%s %d\n", tag, i);
	if (!strcmp(how, "pk_printk_exit"))
		pk_printk_exit();
	return 0; /* else: exit's own drain and close */
}

static int count_in(const char *path, const char *what)
{
	char *all = test_slurp(path, NULL);
	int n = 0;

	for (char *p = all; p && (p = strstr(p, what)); p++)
		n++;
	free(all);
	return n;
}

/*
 * The RELP sessions rsyslogd saw broken that were not our own probes: one
 * more probe is made, and rsyslogd's log is waited for until it has said
 * "session broken" for every probe (it may say so late on a loaded
 * machine); what it said beyond that is a program's broken session.
 */
static int broken_sessions(void)
{
	const char *log = test_dir_path("rsyslogd.log");
	uint64_t start = now_ms();
	int n;

	assert_true(daemon_tcp_accepts(rsyslogd_port("relp")));
	relp_probes++;
	while ((n = count_in(log, "session broken")) < relp_probes && now_ms() - start < 30000)
		usleep(20000);
	assert_true(n >= relp_probes);
	return n - relp_probes;
}

/* EXIT_RUNS children end with pk_printk_exit(), RETURN_RUNS return from
 * main, each after EXIT_RECORDS records to @proto: every record of every run
 * arrives, and the children say nothing. */
static void exit_runs(const char *proto, const char *tagbase)
{
	char opts[128], self[512], tag[16], out[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int bad = 0, dups = 0;
	uint64_t start = now_ms();

	assert_true(k > 0);
	self[k] = '\0';
	snprintf(opts, sizeof(opts), "console=syslog:%s", rsyslogd_target(proto));
	snprintf(out, sizeof(out), "%s", test_dir_path("exit-child.out"));
	for (int run = 0; run < EXIT_RUNS + RETURN_RUNS; run++) {
		struct tally t = { 0 };
		const char *how = run < EXIT_RUNS ? "pk_printk_exit" : "return";
		int st;

		snprintf(tag, sizeof(tag), "%s%d", tagbase, run);

		const char *argv[] = { self, "--exit-child", tag, how, NULL };
		pid_t pid = spawn_logged(argv, out, opts);

		assert_true(pid > 0);
		test_reap(pid, &st, 20000);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		/* Everything rsyslogd acknowledged is on disk (Direct queue);
		 * TCP's last bytes may still be on their way: a bounded wait. */
		rsyslogd_wait_tally(tag, EXIT_RECORDS, EXIT_RECORDS, 5000, &t);
		if (t.distinct != EXIT_RECORDS)
			print_message("run %d (%s) over %s: %d of %d records, %d duplicates\n", run, how,
				      proto, t.distinct, EXIT_RECORDS, t.dups);
		bad += t.distinct != EXIT_RECORDS;
		dups += t.dups;
		free(t.seen);

		/* The child's own stderr: nothing to say when all was delivered. */
		char *said = test_slurp(out, NULL);

		if (said && *said)
			fail_msg("run %d over %s: the child said: %s", run, proto, said);
		free(said);
	}
	print_message("%d exits over %s, %d records each: %d runs short, %d duplicates, %llu ms\n",
		      EXIT_RUNS + RETURN_RUNS, proto, EXIT_RECORDS, bad, dups,
		      (unsigned long long)(now_ms() - start));
	if (bad)
		fail_msg("%d of %d runs lost records over %s", bad, EXIT_RUNS + RETURN_RUNS, proto);
	if (dups)
		fail_msg("%d duplicates over %s", dups, proto);
}

static void test_exit_delivers(void **state)
{
	(void)state;
	exit_runs("relp", "EX");

	int broken = broken_sessions();

	if (broken)
		fail_msg("rsyslogd saw %d RELP sessions broken", broken);
}

static void test_exit_delivers_tcp(void **state)
{
	(void)state;
	exit_runs("tcp", "ET");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--opts-child"))
		return daemon_opts_child("OP-relp-child via PRINTK_OPTS\n");
	if (argc > 3 && !strcmp(argv[1], "--exit-child"))
		return exit_child(argv[2], argv[3]);

	/* before the first record: room for every record of the kill test */
	if (daemon_test_init(1 << 22))
		return 1;

	rsyslogd_configure("relp", write_conf, rs_ready, "rsyslog, rsyslog-relp");

	const struct CMUnitTest tests[] = {
		rsyslogd_unit_test(test_relp_console_fields),
		rsyslogd_unit_test(test_relp_console_kill),
		rsyslogd_unit_test(test_tcp_console_kill),
		rsyslogd_unit_test(test_tcp_console_kill_idle),
		rsyslogd_unit_test(test_forward_relp_kill),
		rsyslogd_unit_test(test_forward_tcp_kill),
		rsyslogd_unit_test(test_forward_resume),
		rsyslogd_unit_test(test_forward_lost),
		rsyslogd_unit_test(test_forward_recreated),
		rsyslogd_unit_test(test_forward_recreated_live),
		rsyslogd_unit_test(test_forward_announces_live),
		rsyslogd_unit_test(test_forward_bad_cursor),
		rsyslogd_unit_test(test_printk_opts),
		rsyslogd_unit_test(test_exit_delivers),
		rsyslogd_unit_test(test_exit_delivers_tcp),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* one test by name, while working on it */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
