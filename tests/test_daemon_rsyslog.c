// SPDX-License-Identifier: MIT
/*
 * test_daemon_rsyslog.c - the syslog forwarding consoles against a real
 * rsyslogd (Debian's rsyslog), started here unprivileged in the foreground
 * with a private work directory, listening on 127.0.0.1 UDP and TCP ports
 * picked free, writing every field it parsed as one JSON line:
 *   - RFC 5424 over UDP: PRI (facility 0 sent as user), RFC 3339 time with
 *     microseconds from the record's realtime, hostname, app name, pid,
 *     MSGID "-", the SD-ELEMENT printk@32473 with seq, tid and the
 *     dictionary (names mapped, values escaped), multi-line text as one
 *     message, a 1023-byte text, a BOM only before valid UTF-8; the raw
 *     message byte for byte;
 *   - RFC 5424 over a unix datagram socket (imuxsock, as /dev/log);
 *   - the enterprise number of the C constructor;
 *   - RFC 3164 over UDP;
 *   - TCP with octet counting: rsyslogd stopped, records printed, rsyslogd
 *     started again: every record arrives once, in order; with a ring too
 *     small to hold them, "** N printk messages dropped **" with the exact
 *     count, followed by the records that were left;
 *   - console=syslog:... in PRINTK_OPTS (a child process);
 *   - pk-forward --once over TCP from a log written with lanes on
 *     (docs/lanes.md) by a process SIGKILLed with records still in its
 *     lanes: every record arrives once, exact text, with the seqs of one
 *     dense sequence, each thread's in order; a writer that merges the
 *     lanes afterwards finds each record at the seq it was sent with.
 * Label "daemons": run by scripts/test.sh in the gcc build only.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "daemon_util.h"
#include "log/log_shared.h"
#include "readers/reader.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

static void write_conf(void)
{
	char inputs[1024];

	snprintf(inputs, sizeof(inputs),
		 "module(load=\"imudp\")\nmodule(load=\"imtcp\")\n"
		 "module(load=\"imuxsock\" SysSock.Use=\"off\")\n"
		 "input(type=\"imuxsock\" Socket=\"%s/log.sock\" UseSysTimeStamp=\"off\"\n"
		 "      IgnoreTimestamp=\"off\" RateLimit.Interval=\"0\" useSpecialParser=\"off\"\n"
		 "      parseHostname=\"on\")\n"
		 "input(type=\"imudp\" address=\"127.0.0.1\" port=\"%d\" rateLimit.interval=\"0\")\n"
		 "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%d\" "
		 "supportOctetCountedFraming=\"on\")\n",
		 test_dir(), rsyslogd_port("udp"), rsyslogd_port("tcp"));
	rsyslogd_write_conf(inputs, "");
}

static void udp_probe(unsigned n)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				.sin_port = htons((uint16_t)rsyslogd_port("udp")),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char m[64];
	int len = snprintf(m, sizeof(m), "<13>1 - - probe - - - probe-%u", n);

	sendto(fd, m, (size_t)len, 0, (struct sockaddr *)&a, sizeof(a));
	close(fd);
}

/* Ready when TCP accepts and a UDP probe reached the file. */
static int rs_ready(void)
{
	static unsigned probe;
	char want[32], *all;

	if (!daemon_tcp_accepts(rsyslogd_port("tcp")))
		return 0;
	probe++;
	snprintf(want, sizeof(want), "probe-%u\"", probe);
	udp_probe(probe);
	usleep(20000);
	all = test_slurp(test_dir_path("messages.jsonl"), NULL);

	int ok = all && strstr(all, want);

	free(all);
	return ok;
}

static struct console *add_console(const char *target, int format, unsigned enterprise)
{
	struct console *con;

	assert_int_equal(pk_console_syslog_create(&con, target, format, enterprise), 0);
	assert_true(con->flags & PK_CON_THREADED);
	assert_int_equal(pk_register_console(con), 0);
	return con;
}

static const char bom[] = "\xef\xbb\xbf";

/* One record's fields and raw message, RFC 5424. */
static void check_5424(const char *line, const struct pk_record *rec, int pri, const char *sd,
		       const char *text)
{
	char t[64], want[4096];

	rsyslogd_assert_header(line, pri, rec, t, sizeof(t));
	json_assert_str(line, "structured_data", sd);

	int utf8 = 1;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p >= 0x80 && (*p == 0xff || *p == 0xfe))
			utf8 = 0;
	snprintf(want, sizeof(want), "%s%s", utf8 ? bom : "", text);
	json_assert_str(line, "msg", want);
	snprintf(want, sizeof(want), "<%d>1 %s %s %s %d - %s %s%s", pri, t, daemon_host, daemon_app,
		 (int)getpid(), sd, utf8 ? bom : "", text);
	json_assert_str(line, "rawmsg", want);
}

static void test_udp_rfc5424(void **state)
{
	(void)state;
	struct console *con = add_console(rsyslogd_target("udp"), PK_SYSLOG_RFC5424, 0);
	static const char dict1[] = "SUBSYSTEM=net\0DEVICE=+net:eth0";
	/* names that are no SD-NAMEs; values with the three escapes and
	 * bytes that are not UTF-8; entries that are no KEY=VALUE */
	static const char dict2[] = "my key=a\"b]c\\d\0"
				    "lower.case=ok\0"
				    "=novalue\0"
				    "noequals\0"
				    "A_NAME_LONGER_THAN_THIRTY_TWO_CHARACTERS=long\0"
				    "BIN=x\xff y";
	char big[PK_TEXT_MAX + 1];

	memset(big, 'b', PK_TEXT_MAX);
	memcpy(big, "U5-big ", 7);
	big[PK_TEXT_MAX - 1] = 'E';
	big[PK_TEXT_MAX] = '\0';
	pk_printk_emit(0, 3, dict1, sizeof(dict1) - 1, "U5-plain kern err with a dictionary");
	pk_printk_emit(3, 6, NULL, 0, "U5-multi first line\n\tsecond line, tab\nthird");
	pk_printk_emit(16, 5, NULL, 0, "%s", big);
	pk_printk_emit(23, 0, NULL, 0, "U5-bytes \xff\xfe not UTF-8");
	pk_printk_emit(1, 4, dict2, sizeof(dict2) - 1, "U5-escapes caf\xc3\xa9");
	assert_int_equal(pk_pr_flush(5000, 0), 1);

	struct got g = { 0 };
	struct pk_record rec;
	char sd[2048];

	rsyslogd_wait("U5-", 5, &g);
	assert_int_equal(g.n, 5);

	daemon_find_record("U5-plain", &rec);
	snprintf(sd, sizeof(sd),
		 "[printk@32473 seq=\"%llu\" tid=\"%u\" SUBSYSTEM=\"net\" DEVICE=\"+net:eth0\"]",
		 (unsigned long long)rec.seq, rec.tid);
	assert_int_equal(rec.tid, (unsigned)syscall(SYS_gettid));
	check_5424(g.line[0], &rec, 8 + 3, sd, "U5-plain kern err with a dictionary");

	daemon_find_record("U5-multi", &rec);
	snprintf(sd, sizeof(sd), "[printk@32473 seq=\"%llu\" tid=\"%u\"]",
		 (unsigned long long)rec.seq, rec.tid);
	check_5424(g.line[1], &rec, 3 * 8 + 6, sd,
		   "U5-multi first line\n\tsecond line, tab\nthird");

	daemon_find_record("U5-big", &rec);
	assert_int_equal(rec.text_len, PK_TEXT_MAX);
	snprintf(sd, sizeof(sd), "[printk@32473 seq=\"%llu\" tid=\"%u\"]",
		 (unsigned long long)rec.seq, rec.tid);
	check_5424(g.line[2], &rec, 16 * 8 + 5, sd, big);

	daemon_find_record("U5-bytes", &rec);
	snprintf(sd, sizeof(sd), "[printk@32473 seq=\"%llu\" tid=\"%u\"]",
		 (unsigned long long)rec.seq, rec.tid);
	check_5424(g.line[3], &rec, 23 * 8 + 0, sd, "U5-bytes \xff\xfe not UTF-8");

	daemon_find_record("U5-escapes", &rec);
	snprintf(sd, sizeof(sd),
		 "[printk@32473 seq=\"%llu\" tid=\"%u\" my_key=\"a\\\"b\\]c\\\\d\" "
		 "lower.case=\"ok\" "
		 "A_NAME_LONGER_THAN_THIRTY_TWO_CH=\"long\" BIN=\"x\xef\xbf\xbd y\"]",
		 (unsigned long long)rec.seq, rec.tid);
	check_5424(g.line[4], &rec, 8 + 4, sd, "U5-escapes caf\xc3\xa9");

	struct pk_forward_stats st;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_true(st.sent >= 5);
	assert_int_equal(st.send_errors, 0);
	assert_int_equal(st.dropped, 0);
	got_free(&g);
	daemon_drop_console(con);
}

/* A unix datagram socket, as /dev/log: rsyslog's imuxsock on a socket of
 * the test's own, its own parser for local messages turned off. */
static void test_unix_rfc5424(void **state)
{
	(void)state;
	char t[600];
	struct console *con;
	struct got g = { 0 };
	struct pk_record rec;
	char sd[256];

	snprintf(t, sizeof(t), "unix:%s", test_dir_path("log.sock"));
	assert_int_equal(pk_console_syslog_create(&con, t, PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_register_console(con), 0);
	pk_printk_emit(4, 2, "DEVICE=b8:0", 11, "UX-local one\ntwo\n");
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("UX-", 1, &g);
	assert_int_equal(g.n, 1);
	daemon_find_record("UX-", &rec);
	snprintf(sd, sizeof(sd), "[printk@32473 seq=\"%llu\" tid=\"%u\" DEVICE=\"b8:0\"]",
		 (unsigned long long)rec.seq, rec.tid);
	json_assert_str(g.line[0], "inputname", "imuxsock");
	check_5424(g.line[0], &rec, 4 * 8 + 2, sd, "UX-local one\ntwo");
	got_free(&g);
	daemon_drop_console(con);
}

static void test_enterprise_number(void **state)
{
	(void)state;
	struct console *con = add_console(rsyslogd_target("udp"), PK_SYSLOG_RFC5424, 99999);
	struct got g = { 0 };
	struct pk_record rec;
	char sd[256];

	pk_printk_emit(1, 6, "K=v", 3, "EN-one");
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("EN-one", 1, &g);
	assert_int_equal(g.n, 1);
	daemon_find_record("EN-one", &rec);
	snprintf(sd, sizeof(sd), "[printk@99999 seq=\"%llu\" tid=\"%u\" K=\"v\"]",
		 (unsigned long long)rec.seq, rec.tid);
	check_5424(g.line[0], &rec, 14, sd, "EN-one");
	got_free(&g);
	daemon_drop_console(con);
}

static void test_udp_rfc3164(void **state)
{
	(void)state;
	struct console *con = add_console(rsyslogd_target("udp"), PK_SYSLOG_RFC3164, 0);
	struct got g = { 0 };
	struct pk_record rec;
	struct pk_log_info info;
	char want[512], t[64];
	struct tm tm;

	pk_printk_emit(0, 2, "K=v", 3, "O3-old style\nsecond line");
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("O3-", 1, &g);
	assert_int_equal(g.n, 1);
	daemon_find_record("O3-", &rec);
	assert_int_equal(pk_log_info(pk_printk_log(), &info), 0);

	time_t s = (time_t)((rec.ts_nsec + (uint64_t)info.realtime_offset_ns) / 1000000000u);

	localtime_r(&s, &tm);
	strftime(t, sizeof(t), "%b %e %H:%M:%S", &tm);
	json_assert_str(g.line[0], "pri", "10");
	json_assert_str(g.line[0], "hostname", daemon_host);
	json_assert_str(g.line[0], "app_name", daemon_app);
	snprintf(want, sizeof(want), "%d", (int)getpid());
	json_assert_str(g.line[0], "procid", want);
	json_assert_str(g.line[0], "msg", " O3-old style\nsecond line");
	snprintf(want, sizeof(want), "<10>%s %s %s[%d]: O3-old style\nsecond line", t, daemon_host,
		 daemon_app, (int)getpid());
	json_assert_str(g.line[0], "rawmsg", want);
	got_free(&g);
	daemon_drop_console(con);
}

/* Print @n records "@tag <i>" and return. */
static void print_n(const char *tag, int from, int n)
{
	for (int i = from; i < from + n; i++)
		pk_printk_emit(1, 6, NULL, 0, "%s %04d padding the record to sixty bytes or so\n",
			       tag, i);
}

static int rec_index(const char *line, const char *tag)
{
	char *msg = json_get(line, "msg", NULL);
	const char *p = strstr(msg, tag);
	int i = p ? atoi(p + strlen(tag) + 1) : -1;

	free(msg);
	return i;
}

static void test_tcp_reconnect(void **state)
{
	(void)state;
	struct console *con = add_console(rsyslogd_target("tcp"), PK_SYSLOG_RFC5424, 0);
	struct got g = { 0 };
	struct pk_forward_stats st;

	print_n("TC-a", 0, 20);
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("TC-a", 20, &g);
	assert_int_equal(g.n, 20);
	for (int i = 0; i < 20; i++) {
		json_assert_str(g.line[i], "inputname", "imtcp");
		assert_int_equal(rec_index(g.line[i], "TC-a"), i);
	}
	rsyslogd_stop(SIGTERM);
	print_n("TC-b", 0, 30);
	usleep(300000); /* the console finds the receiver gone and waits */
	assert_int_equal(pk_pr_flush(200, 0), 0);
	rsyslogd_restart();
	assert_int_equal(pk_pr_flush(20000, 0), 1);
	rsyslogd_wait("TC-b", 30, &g);
	assert_int_equal(g.n, 30);
	for (int i = 0; i < 30; i++)
		assert_int_equal(rec_index(g.line[i], "TC-b"), i);
	rsyslogd_collect("printk messages dropped", &g);
	assert_int_equal(g.n, 0);
	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.dropped, 0);
	got_free(&g);
	daemon_drop_console(con);
}

/* LF framing: each message ends with a newline, one inside it goes as
 * "#012"; rsyslog's imtcp tells the framings apart by the first byte and
 * takes both on the same port. Also without the BOM. */
static void test_tcp_lf_framing(void **state)
{
	(void)state;
	struct console *con;
	struct got g = { 0 };

	assert_int_equal(
		pk_console_syslog_create(&con, rsyslogd_target("tcp"), PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_LF), 0);
	assert_int_equal(pk_console_syslog_set_bom(con, 0), 0);
	assert_int_equal(pk_register_console(con), 0);
	for (int i = 0; i < 20; i++)
		pk_printk_emit(1, 6, NULL, 0, "LF-a %04d first line\nsecond line\n", i);
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("LF-a", 20, &g);
	assert_int_equal(g.n, 20);
	for (int i = 0; i < 20; i++) {
		char want[128];

		json_assert_str(g.line[i], "inputname", "imtcp");
		json_assert_str(g.line[i], "app_name", daemon_app);
		snprintf(want, sizeof(want), "LF-a %04d first line#012second line", i);
		json_assert_str(g.line[i], "msg", want);
	}
	got_free(&g);
	daemon_drop_console(con);
}

/* The ring (8 KiB, set in main) cannot hold what is printed while the
 * receiver is away: the oldest go, and the console says how many. */
static void test_tcp_dropped(void **state)
{
	(void)state;
	struct console *con = add_console(rsyslogd_target("tcp"), PK_SYSLOG_RFC5424, 0);
	struct got g = { 0 };
	struct pk_forward_stats st;
	const int n = 400;

	print_n("TD-a", 0, 1);
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	rsyslogd_wait("TD-a", 1, &g);
	assert_int_equal(g.n, 1);
	rsyslogd_stop(SIGTERM);
	print_n("TD-b", 0, n);
	rsyslogd_restart();
	assert_int_equal(pk_pr_flush(20000, 0), 1);

	/* the last record arrives; the notice and what was left before it */
	rsyslogd_wait("TD-b 0399", 1, &g);
	assert_int_equal(g.n, 1);

	/* In the order received: each notice says exactly how many records
	 * are missing before the next one; every record is there once. (The
	 * ring may keep a lone older record past the gap: then two notices.)
	 * The console's own "lost" announcement is a record among TD-b's: if
	 * the ring overwrote it too, one count more than the TD-b missing. */
	char *all = test_slurp(test_dir_path("messages.jsonl"), NULL);
	int next = 0, pending = 0, notices = 0, lost = 0;
	int announced = strstr(all, "printk: console [syslog] lost tcp:") != NULL, extra = 0;

	for (char *l = all, *e; (e = strchr(l, '\n')); l = e + 1) {
		*e = '\0';

		char *msg = json_get(l, "msg", NULL);
		unsigned long long k;
		char *td = strstr(msg, "TD-b ");

		if (sscanf(msg, "\xef\xbb\xbf** %llu printk messages dropped **", &k) == 1) {
			char *sev = json_get(l, "severity", NULL);

			assert_int_equal(pending, 0);
			assert_string_equal(sev, "4");
			free(sev);
			notices++;
			pending = (int)k;
			lost += (int)k;
		} else if (td) {
			int i = atoi(td + 5);

			if (i == next + pending - 1 && !announced && !extra)
				extra = 1; /* the announcement was one of them */
			else if (i != next + pending)
				fail_msg("record %d where %d was due (%d reported lost)", i,
					 next + pending, pending);
			next = i + 1;
			pending = 0;
		}
		free(msg);
	}
	free(all);
	assert_int_equal(next, n);
	assert_int_equal(pending, 0);
	assert_true(notices >= 1);
	assert_true(lost > 0);

	int first = lost;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.dropped, (uint64_t)first);

	struct pk_console_stats cs;

	/* and the one record kept for a resend (TD-a) that the ring lost */
	assert_int_equal(pk_console_stats(con, &cs), 0);
	assert_int_equal(cs.lost, (uint64_t)first + 1);
	got_free(&g);
	daemon_drop_console(con);
}

/* PRINTK_OPTS names the consoles; a child, since options apply at start. */
static void test_printk_opts(void **state)
{
	(void)state;
	char opts[256];
	struct got g = { 0 };

	snprintf(opts, sizeof(opts),
		 "console=syslog:udp:127.0.0.1:%d,rfc3164 console=syslog:tcp:127.0.0.1:%d",
		 rsyslogd_port("udp"), rsyslogd_port("tcp"));
	daemon_run_opts_child(opts);
	rsyslogd_wait("OP-child", 2, &g);
	assert_int_equal(g.n, 2);
	/* one by each: RFC 3164 over UDP, RFC 5424 over TCP */
	int udp = strstr(g.line[0], "\"imudp\"") ? 0 : 1;

	json_assert_str(g.line[udp], "inputname", "imudp");
	json_assert_str(g.line[1 - udp], "inputname", "imtcp");
	json_assert_str(g.line[udp], "msg", " OP-child via PRINTK_OPTS");
	json_assert_str(g.line[1 - udp], "msg", "\xef\xbb\xbfOP-child via PRINTK_OPTS");
	got_free(&g);
}

/* ------------------------------------------------- pk-forward, lanes -- */

#define LANE_THREADS 3
#define LANE_LINES   150 /* per thread: their lanes fill and merge at least once */

static void *lane_writer(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int i = 0; i < LANE_LINES; i++)
		pr_info("FL %d\n", t * LANE_LINES + i);
	return NULL;
}

/* A child that makes @path the printk log with lanes on, prints the lines
 * (into its threads' lanes: no console prints level 6), and is SIGKILLed
 * with some of them still there. */
static void lanes_writer_killed(const char *path)
{
	int ready[2], status;

	assert_int_equal(pipe(ready), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t th[LANE_THREADS];
		struct prb_lanes_stats st;

		pk_printk_exit(); /* the test's own log and consoles: not the child's */
		pk_set_lanes(1);
		if (pk_set_log_buf_len(64 * 1024) || pk_set_log_buf_file(path, 0))
			_exit(6);
		pk_unregister_console(pk_console_stderr());
		pk_set_console_loglevel(1);
		for (int t = 0; t < LANE_THREADS; t++)
			if (pthread_create(&th[t], NULL, lane_writer, (void *)(intptr_t)t))
				_exit(7);
		for (int t = 0; t < LANE_THREADS; t++)
			pthread_join(th[t], NULL);
		prb_lanes_stats(pk_log_ring(pk_printk_log()), &st);
		/* records merged as lanes filled, and records left in them */
		if (!st.pending || !st.merged)
			_exit(8);
		if (write(ready[1], "r", 1) != 1)
			_exit(9);
		for (;;)
			pause();
	}
	close(ready[1]);

	char c;

	if (read(ready[0], &c, 1) != 1) {
		test_reap(pid, &status, 10000);
		fail_msg("the lanes writer failed: status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	close(ready[0]);
	kill(pid, SIGKILL);
	test_reap(pid, &status, 10000);
	assert_true(WIFSIGNALED(status));
}

static void test_forward_lanes(void **state)
{
	(void)state;
	const int n = LANE_THREADS * LANE_LINES;
	const char *path = test_dir_path("lanes.log");
	struct tally tl = { 0 };
	struct got g = { 0 };
	int seq_of[LANE_THREADS * LANE_LINES];

	lanes_writer_killed(path);
	assert_int_equal(daemon_pk_forward_once(rsyslogd_target("tcp"), "lanes.log"), 0);

	char *c = test_slurp(test_dir_path("cursor"), NULL), want[64];

	assert_non_null(c);
	snprintf(want, sizeof(want), "next-seq %d\n", n);
	if (!strstr(c, want))
		fail_msg("cursor: %s", c);
	free(c);
	rsyslogd_wait_tally("FL", n, n, 20000, &tl);
	assert_int_equal(tl.distinct, n);
	assert_int_equal(tl.lines, n);
	assert_int_equal(tl.dups, 0);
	free(tl.seen);

	/* the seqs: one dense sequence, each thread's lines in order */
	rsyslogd_wait("FL ", n, &g);
	assert_int_equal(g.n, n);
	for (int k = 0; k < n; k++)
		seq_of[k] = -1;
	for (int k = 0; k < g.n; k++) {
		char *msg = json_get(g.line[k], "msg", NULL), *sd = json_get(g.line[k], "structured_data", NULL);
		char *p = msg ? strstr(msg, "FL ") : NULL, exact[32];
		char *q = sd ? strstr(sd, "seq=\"") : NULL;

		assert_non_null(p);
		assert_non_null(q);

		int i = atoi(p + 3), seq = atoi(q + 5);

		assert_true(i >= 0 && i < n && seq >= 0 && seq < n);
		snprintf(exact, sizeof(exact), "\xef\xbb\xbf" "FL %d", i);
		assert_string_equal(msg, exact);
		assert_int_equal(seq_of[i], -1);
		seq_of[i] = seq;
		free(msg);
		free(sd);
	}
	for (int i = 0; i < n; i++)
		if (i % LANE_LINES)
			assert_true(seq_of[i] > seq_of[i - 1]);
	got_free(&g);

	/* A writer merges the lanes: each record at the seq it was sent with. */
	struct pk_log *log;
	struct pk_record *rec = malloc(sizeof(*rec));

	assert_non_null(rec);
	assert_int_equal(pk_log_open_file(&log, path, 0, 0), 0);
	assert_int_equal(pk_log_next_seq(log), (uint64_t)n);
	for (int i = 0; i < n; i++) {
		char text[32];

		snprintf(text, sizeof(text), "FL %d", i);
		assert_int_equal(pk_log_read(log, (uint64_t)seq_of[i], rec, 0), 0);
		assert_int_equal(rec->seq, (uint64_t)seq_of[i]);
		assert_string_equal(rec->text, text);
	}

	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	assert_int_equal(st.pending, 0);
	pk_log_destroy(log);
	free(rec);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--opts-child"))
		return daemon_opts_child("OP-child via PRINTK_OPTS");
	/* before the first record: a ring small enough to overwrite */
	if (daemon_test_init(8192))
		return 1;

	rsyslogd_configure("rsyslog", write_conf, rs_ready, "rsyslog");

	const struct CMUnitTest tests[] = {
		rsyslogd_unit_test(test_udp_rfc5424),
		rsyslogd_unit_test(test_unix_rfc5424),
		rsyslogd_unit_test(test_enterprise_number),
		rsyslogd_unit_test(test_udp_rfc3164),
		rsyslogd_unit_test(test_tcp_reconnect),
		rsyslogd_unit_test(test_tcp_dropped),
		rsyslogd_unit_test(test_tcp_lf_framing),
		rsyslogd_unit_test(test_printk_opts),
		rsyslogd_unit_test(test_forward_lanes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
