// SPDX-License-Identifier: MIT
/*
 * test_forward.c - the forwarding consoles (src/forward/console_net.c) without a
 * collector daemon (those are tests/test_daemon_*.c):
 *   - the wire forms, exact bytes: RFC 5424 (PRI, time, SD-ELEMENT with
 *     escapes and name mapping, BOM only before UTF-8), RFC 3164, the
 *     journal's native fields (binary form for values with newlines);
 *   - the name mappings: SD-NAME, journal field name;
 *   - the constructors' errors; console=journal / console=syslog:... in
 *     PRINTK_OPTS (parsing);
 *   - UDP to a port nobody listens on: send errors counted, the console
 *     stays enabled;
 *   - TCP with nobody listening: the records wait in the ring (-EAGAIN is
 *     no failure: the console stays enabled and pr_flush says not done),
 *     then a listener appears and gets every record, octet-counted;
 *     pk_printk_exit() meanwhile says how many records were not sent;
 *   - relp: targets' errors; the forwarder calls (a source log names the
 *     writer, a lost count becomes a dropped notice, commit); log
 *     identities (random per file, kept by the file, zero in memory).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "forward/console_net.h"
#include "log/options.h"
#include "record/json_format.h"
#include "testutil.h"

#ifdef PRINTK_TSAN
/* test_exit_says_undelivered's child, forked from this threaded process,
 * starts a printer thread, which TSan refuses unless told. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

static struct pk_record *make_rec(uint64_t seq, int fac, int level, const char *text,
				  const char *dict, size_t dict_len)
{
	static struct pk_record r;

	memset(&r, 0, sizeof(r));
	r.seq = seq;
	r.ts_nsec = 5 * 1000000000ull + 123456789; /* 5.123456789 s */
	r.pid = 4242;
	r.tid = 4243;
	r.facility = (uint8_t)fac;
	r.level = (uint8_t)level;
	r.text_len = (uint16_t)strlen(text);
	memcpy(r.text, text, r.text_len);
	r.dict_len = (uint16_t)dict_len;
	memcpy(r.dict, dict, dict_len);
	return &r;
}

/* 2026-12-04T14:00:00Z minus the record's 5.123456789 s. */
#define OFFSET ((int64_t)1796392800 * 1000000000 - 5123456789)

static void test_rfc5424_bytes(void **state)
{
	(void)state;
	char out[8192];
	static const char dict[] = "SUBSYSTEM=net\0my key=a\"b]c\\d\0=x\0noeq\0BIN=\xff";
	struct pk_record *r = make_rec(42, 0, 3, "hello\nworld", dict, sizeof(dict) - 1);
	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 32473, "host1",
					"app", OFFSET);
	static const char want[] =
		"<11>1 2026-12-04T14:00:00.000000Z host1 app 4242 - [printk@32473 seq=\"42\" "
		"tid=\"4243\" SUBSYSTEM=\"net\" my_key=\"a\\\"b\\]c\\\\d\" BIN=\"\xef\xbf\xbd\"] "
		"\xef\xbb\xbfhello\nworld";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);

	/* not UTF-8: no BOM; facility 23, level 7; empty host and app */
	r = make_rec(7, 23, 7, "a\xff", "", 0);
	r->ts_nsec += 999999; /* microseconds, cut not rounded */
	n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 1, "", "", OFFSET);
	static const char want2[] = "<191>1 2026-12-04T14:00:00.000999Z - - 4242 - [printk@1 "
				    "seq=\"7\" tid=\"4243\"] a\xff";

	assert_int_equal(n, sizeof(want2) - 1);
	assert_memory_equal(out, want2, n);

	/* facilities past 23 go as user; an empty text has no MSG */
	r = make_rec(8, 99, 6, "", "", 0);
	n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 32473, "h", "a b", OFFSET);
	static const char want3[] = "<14>1 2026-12-04T14:00:00.000000Z h a_b 4242 - [printk@32473 "
				    "seq=\"8\" tid=\"4243\"]";

	assert_int_equal(n, sizeof(want3) - 1);
	assert_memory_equal(out, want3, n);
}

static void test_rfc3164_bytes(void **state)
{
	(void)state;
	char out[4096];
	struct pk_record *r = make_rec(1, 3, 4, "two\nlines", "K=v", 3);

	setenv("TZ", "UTC", 1);
	tzset();

	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC3164, 32473, "host1",
					"app", OFFSET);
	static const char want[] = "<28>Dec  4 14:00:00 host1 app[4242]: two\nlines";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
}

static void test_journal_bytes(void **state)
{
	(void)state;
	char out[4096];
	static const char dict[] = "lower.key=v\0PRIORITY=x\0ML=a\nb\0_u=1";
	struct pk_record *r = make_rec(9, 0, 6, "one\ntwo", dict, sizeof(dict) - 1);
	size_t n = pk_net_format_journal(out, sizeof(out), r, "app", OFFSET);
	static const char want[] =
		"MESSAGE\n\x07\0\0\0\0\0\0\0one\ntwo\n"
		"PRIORITY=6\nSYSLOG_FACILITY=1\nSYSLOG_IDENTIFIER=app\nSYSLOG_PID=4242\n"
		"TID=4243\nPRINTK_SEQ=9\nPRINTK_REALTIME_USEC=1796392800000000\n"
		"LOWER_KEY=v\nDICT_PRIORITY=x\nML\n\x03\0\0\0\0\0\0\0a\nb\nX_U=1\n";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
}

static void test_names(void **state)
{
	(void)state;
	char o[80];

	assert_int_equal(pk_net_sd_name(o, "a=b]c\"d e\x7f\xc3", 12), 12);
	assert_string_equal(o, "a_b_c_d_e___");
	assert_int_equal(pk_net_sd_name(o, "0123456789012345678901234567890123456789", 40), 32);
	assert_string_equal(o, "01234567890123456789012345678901");
	assert_int_equal(pk_journal_key_name(o, "dev.name-x", 10), 10);
	assert_string_equal(o, "DEV_NAME_X");
	assert_int_equal(pk_journal_key_name(o, "_PID", 4), 5);
	assert_string_equal(o, "X_PID");
	assert_int_equal(pk_journal_key_name(o, "1a", 2), 3);
	assert_string_equal(o, "X1A");

	char long_key[100];

	memset(long_key, 'k', sizeof(long_key));
	assert_int_equal(pk_journal_key_name(o, long_key, sizeof(long_key)), 64);
	assert_true(pk_net_utf8_valid("caf\xc3\xa9", 5));
	assert_false(pk_net_utf8_valid("\xc0\xaf", 2));	    /* overlong */
	assert_false(pk_net_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
	assert_false(pk_net_utf8_valid("\xf4\x90\x80\x80", 4));
	assert_false(pk_net_utf8_valid("\xe2\x82", 2)); /* cut */
}

static void test_create_errors(void **state)
{
	(void)state;
	struct console *con;
	static const char *const bad[] = { "foo:x",  "udp:host", "udp:h:0",    "udp:h:65536",
					  "udp:h:", "udp::514", "udp:[::1:5", "tcp:[::1]5",
					  "unix:",  "udp:h:12a" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pk_console_syslog_create(&con, bad[i], PK_SYSLOG_RFC5424, 0) != -EINVAL)
			fail_msg("%s accepted", bad[i]);
	assert_int_equal(pk_console_syslog_create(&con, "udp:127.0.0.1:514", 2, 0), -EINVAL);
	assert_int_equal(pk_console_syslog_create(NULL, "udp:127.0.0.1:514", 0, 0), -EINVAL);
	assert_int_equal(pk_console_syslog_create(&con, "udp:[::1]:514", PK_SYSLOG_RFC3164, 7), 0);
	assert_string_equal(con->name, "syslog");
	assert_int_equal(con->flags, PK_CON_ENABLED | PK_CON_THREADED);
	pk_console_destroy(con);

	char path[200];

	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(pk_console_journal_create(&con, path), -EINVAL);
	assert_int_equal(pk_console_journal_create(&con, NULL), 0);
	assert_string_equal(con->name, "journal");

	struct pk_forward_stats st;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(pk_console_forward_stats(pk_console_stderr(), &st), -EINVAL);
	pk_console_destroy(con);
}

/* relp: targets, the calls a forwarder makes, and a log's identity. */
static void test_forwarder_calls(void **state)
{
	(void)state;
	struct console *con;
	static const char *const bad[] = { "relp:host", "relp:h:0", "relp:h:", "relp:[::1]5" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pk_console_syslog_create(&con, bad[i], PK_SYSLOG_RFC5424, 0) != -EINVAL)
			fail_msg("%s accepted", bad[i]);

	/* Built with librelp's header and librelp.so.0 present: a console;
	 * otherwise -EPROTONOSUPPORT, never anything else. */
	int r = pk_console_syslog_create(&con, "relp:127.0.0.1:1", PK_SYSLOG_RFC5424, 0);

	assert_true(r == 0 || r == -EPROTONOSUPPORT);
	if (r == 0) {
		struct pk_record *rec = make_rec(1, 1, 6, "nobody", "", 0);

		/* nobody listens on port 1: not taken, nothing to confirm */
		assert_int_equal(pk_console_forward_send(con, rec), -EAGAIN);
		assert_int_equal(pk_console_forward_commit(con), 0);
		pk_console_destroy(con);
	}

	struct pk_record *rec = make_rec(1, 1, 6, "x", "", 0);
	struct pk_log *a, *b, *mem;
	uint64_t ida[2], idb[2], id2[2];

	assert_int_equal(pk_console_forward_send(pk_console_stderr(), rec), -EINVAL);
	assert_int_equal(pk_console_forward_commit(pk_console_stderr()), -EINVAL);
	assert_int_equal(pk_console_forward_lost(pk_console_stderr(), 1), -EINVAL);
	assert_int_equal(pk_console_forward_set_source(pk_console_stderr(), NULL), -EINVAL);

	/* A TCP listener: the records arrive named by the source log. */
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	char target[64], got[4096];

	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", ntohs(sa.sin_port));
	assert_int_equal(test_dir_make("forward"), 0);
	assert_int_equal(pk_log_open_file(&a, test_dir_path("a.log"), 4096, 0), 0);
	assert_int_equal(pk_log_store(a, 1, 6, "from a", 6, NULL, 0), 0);
	assert_int_equal(pk_log_read(a, 0, rec, 0), 0);
	assert_int_equal(pk_console_syslog_create(&con, target, PK_SYSLOG_RFC3164, 0), 0);
	assert_int_equal(pk_console_forward_set_source(con, a), 0);
	assert_int_equal(pk_console_forward_lost(con, 3), 0);
	assert_int_equal(pk_console_forward_send(con, rec), 0);
	assert_int_equal(pk_console_forward_commit(con), 0);

	int fd = accept(ls, NULL, NULL);
	size_t n = 0;
	uint64_t start = now_ms();

	assert_true(fd >= 0);
	while (now_ms() - start < 5000) {
		ssize_t k = recv(fd, got + n, sizeof(got) - 1 - n, MSG_DONTWAIT);

		if (k > 0)
			n += (size_t)k;
		else
			usleep(10000);
		got[n] = '\0';
		if (strstr(got, "from a"))
			break;
	}

	/* the log keeps 15 characters of the writer's name, as comm */
	char comm[16], tag[64];

	snprintf(comm, sizeof(comm), "%s", program_invocation_short_name);
	snprintf(tag, sizeof(tag), " %s[%d]: from a", comm, (int)getpid());
	assert_non_null(strstr(got, "** 3 printk messages dropped **"));
	assert_non_null(strstr(got, tag));
	close(fd);
	close(ls);
	pk_console_destroy(con);

	/* identities: random per created file, kept by the file */
	assert_int_equal(pk_log_identity(a, ida), 0);
	assert_true(ida[0] || ida[1]);
	assert_int_equal(pk_log_open_file(&b, test_dir_path("b.log"), 4096, 0), 0);
	assert_int_equal(pk_log_identity(b, idb), 0);
	assert_true(ida[0] != idb[0] || ida[1] != idb[1]);
	pk_log_destroy(a);
	assert_int_equal(pk_log_open_file(&a, test_dir_path("a.log"), 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_identity(a, id2), 0);
	assert_memory_equal(ida, id2, sizeof(ida));
	assert_int_equal(pk_log_create(&mem, 0), 0);
	assert_int_equal(pk_log_identity(mem, id2), 0);
	assert_true(!id2[0] && !id2[1]);
	assert_int_equal(pk_log_identity(NULL, id2), -EINVAL);
	assert_int_equal(pk_log_identity(mem, NULL), -EINVAL);
	pk_log_destroy(mem);
	pk_log_destroy(a);
	pk_log_destroy(b);
	test_dir_remove();
}

static void test_opts(void **state)
{
	(void)state;
	static struct pk_opts o;

	assert_int_equal(
		pk_opts_parse(
			"console=journal console=journal:/run/j.sock "
			"console=syslog:udp:10.0.0.1:514 console=syslog:tcp:[::1]:601,rfc3164 "
			"console=syslog:unix:/dev/log,rfc5424,threaded",
			&o),
		0);
	assert_int_equal(o.nconsoles, 5);
	assert_int_equal(o.consoles[0].kind, PK_OPTCON_JOURNAL);
	assert_string_equal(o.consoles[0].path, "");
	assert_int_equal(o.consoles[1].kind, PK_OPTCON_JOURNAL);
	assert_string_equal(o.consoles[1].path, "/run/j.sock");
	assert_int_equal(o.consoles[2].kind, PK_OPTCON_SYSLOG);
	assert_string_equal(o.consoles[2].path, "udp:10.0.0.1:514");
	assert_int_equal(o.consoles[2].format, PK_SYSLOG_RFC5424);
	assert_string_equal(o.consoles[3].path, "tcp:[::1]:601");
	assert_int_equal(o.consoles[3].format, PK_SYSLOG_RFC3164);
	assert_string_equal(o.consoles[4].path, "unix:/dev/log");
	assert_int_equal(o.consoles[4].flags, PK_CON_THREADED);

	assert_int_equal(
		pk_opts_parse("console=journal: console=syslog: console=syslog:,rfc3164", &o),
		-EINVAL);
	assert_int_equal(o.nconsoles, 0);
	assert_int_equal(o.nwarnings, 3);
	assert_string_equal(o.warnings[0],
			    "printk: PRINTK_OPTS: bad value in 'console=journal:', ignored");

	/* framing and BOM: strict values, one warning that names the option */
	assert_int_equal(pk_opts_parse("console=syslog:tcp:h:601,framing=lf,bom=no "
				       "console=syslog:tcp:h:601,bom=yes,framing=octet "
				       "console=syslog:relp:h:2514,bom=no",
				       &o),
			 0);
	assert_int_equal(o.nconsoles, 3);
	assert_string_equal(o.consoles[0].path, "tcp:h:601");
	assert_int_equal(o.consoles[0].framing, PK_SYSLOG_FRAMING_LF + 1);
	assert_int_equal(o.consoles[0].bom, 1);
	assert_int_equal(o.consoles[1].framing, PK_SYSLOG_FRAMING_OCTET + 1);
	assert_int_equal(o.consoles[1].bom, 2);
	assert_string_equal(o.consoles[2].path, "relp:h:2514");
	assert_int_equal(o.consoles[2].framing, 0);
	assert_int_equal(o.consoles[2].bom, 1);
	assert_int_equal(pk_opts_parse("console=syslog:tcp:h:601,framing=LF "
				       "console=syslog:tcp:h:601,bom=1 "
				       "console=syslog:udp:h:514,framing=lf "
				       "console=journal,bom=no",
				       &o),
			 -EINVAL);
	assert_int_equal(o.nconsoles, 0);
	assert_int_equal(o.nwarnings, 4);
	assert_string_equal(o.warnings[0],
			    "printk: PRINTK_OPTS: bad console option 'framing=LF' (octet or lf), console ignored");
	assert_string_equal(o.warnings[1],
			    "printk: PRINTK_OPTS: bad console option 'bom=1' (yes or no), console ignored");
	assert_string_equal(o.warnings[2],
			    "printk: PRINTK_OPTS: console=syslog:udp:h:514: framing= is for tcp: targets only, console ignored");
	assert_string_equal(o.warnings[3],
			    "printk: PRINTK_OPTS: bad value in 'console=journal,bom=no', ignored");
}

/* TLS: its options kept with the target in any order, strictly checked,
 * here (PRINTK_OPTS) and when the console is made. */
static void test_tls_options(void **state)
{
	(void)state;
	struct pk_opts o;
	struct console *con;

	assert_int_equal(pk_opts_parse("console=syslog:tls:h:6514,ca=/c.pem,rfc3164,peer=logs,bom=no "
				       "console=syslog:relp:h:2514,tls,cert=/m.pem,key=/m.key",
				       &o),
			 0);
	assert_int_equal(o.nconsoles, 2);
	assert_string_equal(o.consoles[0].path, "tls:h:6514");
	assert_string_equal(o.consoles[0].tls_opts, ",peer=logs,ca=/c.pem");
	assert_int_equal(o.consoles[0].format, PK_SYSLOG_RFC3164);
	assert_int_equal(o.consoles[0].bom, 1);
	assert_string_equal(o.consoles[1].path, "relp:h:2514");
	assert_string_equal(o.consoles[1].tls_opts, ",key=/m.key,cert=/m.pem,tls");
	assert_int_equal(pk_opts_parse("console=syslog:tcp:h:601,ca=/c.pem "
				       "console=syslog:tls:h,ca= "
				       "console=syslog:tls:h,tls,framing=lf",
				       &o),
			 -EINVAL);
	assert_int_equal(o.nconsoles, 0);
	assert_int_equal(o.nwarnings, 3);
	assert_string_equal(o.warnings[0],
			    "printk: PRINTK_OPTS: console=syslog:tcp:h:601: TLS options are for tls: and relp: targets only, console ignored");
	assert_string_equal(o.warnings[1],
			    "printk: PRINTK_OPTS: bad console option 'ca=' (a file or a name), console ignored");
	assert_string_equal(o.warnings[2],
			    "printk: PRINTK_OPTS: console=syslog:tls:h: framing= is for tcp: targets only, console ignored");

	/* the target, as pk-forward gives it */
	assert_int_equal(pk_console_syslog_create(&con, "tls:127.0.0.1,cafile=/x", PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL),
			    "bad TLS option 'cafile=/x' (tls, ca=FILE, cert=FILE, key=FILE or peer=NAME)");
	assert_int_equal(pk_console_syslog_create(&con, "tls:127.0.0.1,tls", PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_int_equal(pk_console_syslog_create(&con, "tls:127.0.0.1,ca=/a,ca=/b", PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL), "ca= given twice");
	assert_int_equal(pk_console_syslog_create(&con, "relp:127.0.0.1:2514,ca=/x", PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL), "ca=, cert=, key= and peer= need ,tls");
	assert_int_equal(pk_console_syslog_create(&con, "tls:127.0.0.1,cert=/x", PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL), "cert= and key= go together");
	assert_int_equal(pk_console_syslog_create(&con, "tls:127.0.0.1,ca=/nonexistent.pem",
						  PK_SYSLOG_RFC5424, 0),
			 -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL),
			    "ca=/nonexistent.pem: No such file or directory");

	/* pk_console_create(): the same spec as PRINTK_OPTS */
	assert_int_equal(pk_console_create(&con, "syslog:tls:127.0.0.1:7000,peer=logs,rfc3164,ca=/nonexistent.pem"),
			 -EINVAL);
	assert_int_equal(pk_console_create(&con, "syslog:tcp:127.0.0.1:7000,ca=/c.pem"), -EINVAL);
	assert_int_equal(pk_console_create(&con, "syslog:tls:127.0.0.1:7000,peer=logs,rfc3164,threaded"), 0);
	pk_console_destroy(con);

	/* RFC 5425: port 6514 by default, octet counting only */
	assert_int_equal(pk_console_syslog_create(&con, "tls:[::1]", PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_LF), -EINVAL);
	assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_OCTET), -EINVAL);
	pk_console_destroy(con);
	assert_int_equal(pk_console_syslog_create(&con, "tls:localhost:7000,peer=logs.example",
						  PK_SYSLOG_RFC5424, 0),
			 0);
	pk_console_destroy(con);
}

/* A target whose host does not resolve: the warning gives the resolver's
 * words, not an error number. */
static int unresolved_child(void *arg)
{
	(void)arg;
	pk_printk_configure("console=stderr console=syslog:tcp:no-such-host.invalid:514");
	return 0;
}

static void test_unresolved_words(void **state)
{
	(void)state;
	struct child_result res;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int gai = getaddrinfo("no-such-host.invalid", "514", &hints, &ai);
	char want[200];

	assert_int_not_equal(gai, 0);
	snprintf(want, sizeof(want),
		 "printk: PRINTK_OPTS: console=syslog:tcp:no-such-host.invalid:514 unusable (%s), ignored\n",
		 gai_strerror(gai));
	run_child_ok(unresolved_child, NULL, 20000, &res);
	if (!strstr(res.out, want))
		fail_msg("not said: %s in: %s", want, res.out);
	child_result_free(&res);
}

static int listen_port(int type, int *fdp)
{
	int fd = socket(AF_INET, type, 0);
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	*fdp = fd;
	return ntohs(a.sin_port);
}

static void test_udp_nobody(void **state)
{
	(void)state;
	int fd, port = listen_port(SOCK_DGRAM, &fd);
	char target[64];
	struct console *con;
	struct pk_forward_stats st;

	close(fd);
	snprintf(target, sizeof(target), "udp:127.0.0.1:%d", port);
	assert_int_equal(pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_register_console(con), 0);
	for (int i = 0; i < 6; i++) {
		pk_printk_emit(1, 6, NULL, 0, "udp nobody %d\n", i);
		assert_int_equal(pk_pr_flush(5000, 0), 1);
		usleep(10000); /* the port unreachable comes back */
	}
	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	/* the six records and the one notice that says it cannot deliver */
	assert_int_equal(st.sent + st.send_errors, 7);
	assert_true(st.send_errors >= 3); /* every other send learns of the last's ICMP error */
	assert_true(con->flags & PK_CON_ENABLED);
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
}

/* Read octet-counted frames from @fd until @n arrived (5 s at most); what
 * came after them is kept for the next call on the same connection
 * (frames_reset() before the first call on a new one). */
static char frames_buf[65536];
static size_t frames_have;

static void frames_reset(void)
{
	frames_have = 0;
}

static int read_frames(int fd, char frames[][512], int n)
{
	char *buf = frames_buf;
	size_t have = frames_have;
	int got = 0;
	uint64_t start = now_ms();
	for (;;) { /* whole frames already here */
		char *sp = memchr(buf, ' ', have);

		if (got == n || !sp)
			break;

		size_t len = strtoul(buf, NULL, 10), hl = (size_t)(sp - buf) + 1;

		if (have < hl + len)
			break;
		snprintf(frames[got++], 512, "%.*s", (int)len, sp + 1);
		memmove(buf, buf + hl + len, have - hl - len);
		have -= hl + len;
	}
	while (got < n && now_ms() - start < 5000) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 100) <= 0)
			continue;

		ssize_t k = read(fd, buf + have, sizeof(frames_buf) - have);

		if (k <= 0)
			break;
		have += (size_t)k;
		for (;;) {
			char *sp = memchr(buf, ' ', have);

			if (!sp)
				break;

			size_t len = strtoul(buf, NULL, 10), hl = (size_t)(sp - buf) + 1;

			if (have < hl + len)
				break;
			snprintf(frames[got++], 512, "%.*s", (int)len, sp + 1);
			memmove(buf, buf + hl + len, have - hl - len);
			have -= hl + len;
			if (got == n)
				break;
		}
	}
	frames_have = have;
	return got;
}

static void test_tcp_waits(void **state)
{
	(void)state;
	int lfd, port = listen_port(SOCK_STREAM, &lfd);
	char target[64], frames[8][512];
	struct console *con;
	struct pk_forward_stats st;

	close(lfd); /* nobody listens: refused */
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", port);
	assert_int_equal(pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_register_console(con), 0);
	for (int i = 0; i < 5; i++)
		pk_printk_emit(1, 6, NULL, 0, "tcp wait %d\n", i);
	/* -EAGAIN again and again is no failure: the console stays enabled
	 * and is not done */
	assert_int_equal(pk_pr_flush(1500, 0), 0);
	assert_true(con->flags & PK_CON_ENABLED);
	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.sent, 0);
	assert_true(st.send_errors >= 2);
	assert_int_equal(st.connects, 0);

	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(pk_pr_flush(15000, 0), 1);

	int cfd = accept(lfd, NULL, NULL);

	assert_true(cfd >= 0);
	frames_reset();
	/* The five lines in order, and the console's own notices ("cannot
	 * reach", "reached": records of the log too) wherever the thread's
	 * timing put them among them. */
	assert_int_equal(read_frames(cfd, frames, 7), 7);
	int line = 0, notices = 0;

	for (int i = 0; i < 7; i++) {
		char want[32];
		size_t fl = strlen(frames[i]);

		if (strstr(frames[i], "printk: console [")) {
			notices++;
			continue;
		}
		snprintf(want, sizeof(want), "\xef\xbb\xbftcp wait %d", line++);
		assert_true(fl > strlen(want));
		assert_string_equal(frames[i] + fl - strlen(want), want);
		assert_memory_equal(frames[i], "<14>1 ", 6);
	}
	assert_int_equal(line, 5);
	assert_int_equal(notices, 2);
	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.sent, 7); /* and the notices "cannot reach", "reached" */
	assert_int_equal(st.connects, 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	close(cfd);
	close(lfd);
}


/* Read one message from @fd into @buf (NUL-terminated): octet-counted, or up
 * to and with a newline; 5 s at most. Its length with the framing. */
static size_t read_message(int fd, char *buf, size_t cap, int framing)
{
	size_t have = 0;
	uint64_t start = now_ms();

	while (have < cap - 1 && now_ms() - start < 5000) {
		if (framing == PK_SYSLOG_FRAMING_LF && have && buf[have - 1] == '\n')
			break;
		if (framing == PK_SYSLOG_FRAMING_OCTET) {
			char *sp = memchr(buf, ' ', have);

			if (sp && have >= (size_t)(sp + 1 - buf) + strtoul(buf, NULL, 10))
				break;
		}

		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 100) <= 0)
			continue;

		ssize_t k = read(fd, buf + have, 1); /* never past the message */

		if (k <= 0)
			break;
		have += (size_t)k;
	}
	buf[have] = '\0';
	return have;
}

/*
 * The exact bytes on the wire for both framings and both BOM settings: a
 * record "a\nb" sent by the forwarder call, read by a listening socket here.
 * The header's bytes are pinned by test_rfc5424_bytes; the framing and what
 * follows the structured data are checked here byte for byte.
 */
static void test_framing_bytes(void **state)
{
	(void)state;
	static const struct {
		int framing, bom;
		const char *tail; /* after the structured data's "] " */
	} cases[] = {
		{ PK_SYSLOG_FRAMING_OCTET, 1, "\xef\xbb\xbf" "a\nb" },
		{ PK_SYSLOG_FRAMING_OCTET, 0, "a\nb" },
		{ PK_SYSLOG_FRAMING_LF, 1, "\xef\xbb\xbf" "a#012b\n" },
		{ PK_SYSLOG_FRAMING_LF, 0, "a#012b\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int lfd, port = listen_port(SOCK_STREAM, &lfd);
		char target[64], buf[4096];
		struct console *con;

		assert_int_equal(listen(lfd, 1), 0);
		snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", port);
		assert_int_equal(pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0), 0);
		if (cases[i].framing != PK_SYSLOG_FRAMING_OCTET)
			assert_int_equal(pk_console_syslog_set_framing(con, cases[i].framing), 0);
		if (!cases[i].bom)
			assert_int_equal(pk_console_syslog_set_bom(con, 0), 0);
		assert_int_equal(pk_console_forward_send(con, make_rec(9, 1, 6, "a\nb", "", 0)), 0);

		int cfd = accept(lfd, NULL, NULL);

		assert_true(cfd >= 0);

		size_t got = read_message(cfd, buf, sizeof(buf), cases[i].framing);
		const char *m = buf;

		if (cases[i].framing == PK_SYSLOG_FRAMING_OCTET) {
			char *sp = memchr(buf, ' ', got);

			assert_non_null(sp);
			assert_int_equal(strspn(buf, "0123456789"), (size_t)(sp - buf));
			assert_int_equal(strtoul(buf, NULL, 10), got - (size_t)(sp + 1 - buf));
			m = sp + 1;
		} else {
			/* one newline, the last byte: the one inside went as #012 */
			assert_true(got > 0);
			assert_ptr_equal(memchr(buf, '\n', got), buf + got - 1);
		}
		assert_memory_equal(m, "<14>1 ", 6);

		const char *sd = strstr(m, "] ");
		size_t tail_len = strlen(cases[i].tail);

		assert_non_null(sd);
		assert_int_equal(got - (size_t)(sd + 2 - buf), tail_len);
		assert_memory_equal(sd + 2, cases[i].tail, tail_len);
		pk_console_destroy(con);
		close(cfd);
		close(lfd);
	}

	/* the calls' own errors */
	struct console *con;

	assert_int_equal(pk_console_syslog_create(&con, "udp:127.0.0.1:514", PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_LF), -EINVAL);
	assert_int_equal(pk_console_syslog_set_bom(con, 2), -EINVAL);
	assert_int_equal(pk_console_syslog_set_bom(con, 0), 0);
	pk_console_destroy(con);
	assert_int_equal(pk_console_syslog_create(&con, "tcp:127.0.0.1:514", PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_console_syslog_set_framing(con, 2), -EINVAL);
	pk_console_destroy(con);
	assert_int_equal(pk_console_journal_create(&con, NULL), 0);
	assert_int_equal(pk_console_syslog_set_bom(con, 0), -EINVAL);
	assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_OCTET), -EINVAL);
	pk_console_destroy(con);
	assert_int_equal(pk_console_syslog_set_bom(pk_console_stderr(), 1), -EINVAL);
}

static void wait_state(const struct console *con, int want, struct pk_console_stats *st)
{
	uint64_t start = now_ms();

	do {
		assert_int_equal(pk_console_stats(con, st), 0);
		if (st->state == want)
			return;
		usleep(5000);
	} while (now_ms() - start < 15000);
	fail_msg("state %d, not %d", st->state, want);
}

static int listen_on(int port)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/*
 * A TCP console's states, each change counted once however many attempts
 * fail in it: cannot connect (refused, many times), delivering, lost (the
 * receiver closed), delivering again. pk_console_stats() says which, why
 * and how many wait.
 */
static void test_state_changes(void **state)
{
	(void)state;
	int lfd, port = listen_port(SOCK_STREAM, &lfd);
	char target[64], frames[16][512];
	struct console *con;
	struct pk_console_stats st;
	struct pk_forward_stats fs;

	close(lfd);
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", port);
	assert_int_equal(pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0), 0);
	assert_int_equal(pk_console_stats(con, &st), 0);
	assert_int_equal(st.state, PK_CONSOLE_IDLE);
	assert_int_equal(st.changes, 0);
	assert_int_equal(pk_console_stats(pk_console_stderr(), &st), -EINVAL);
	assert_int_equal(pk_register_console(con), 0);
	for (int i = 0; i < 3; i++)
		pk_printk_emit(1, 6, NULL, 0, "state %d\n", i);
	wait_state(con, PK_CONSOLE_CANNOT_CONNECT, &st);
	/* several attempts fail; one announcement */
	for (uint64_t start = now_ms(); now_ms() - start < 15000; usleep(10000)) {
		assert_int_equal(pk_console_forward_stats(con, &fs), 0);
		if (fs.send_errors >= 3)
			break;
	}
	assert_true(fs.send_errors >= 3);
	assert_int_equal(pk_console_stats(con, &st), 0);
	assert_int_equal(st.state, PK_CONSOLE_CANNOT_CONNECT);
	assert_int_equal(st.last_error, -ECONNREFUSED);
	assert_int_equal(st.changes, 1);
	assert_int_equal(st.delivered, 0);
	assert_int_equal(st.waiting, 4); /* three records and the notice */
	assert_int_equal(st.lost, 0);

	lfd = listen_on(port);
	assert_int_equal(pk_pr_flush(15000, 0), 1);

	int cfd = accept(lfd, NULL, NULL);

	assert_true(cfd >= 0);
	frames_reset();
	/* the records, "cannot reach ..." and "reached ..." (the first
	 * attempt may come before the last record was stored) */
	assert_int_equal(read_frames(cfd, frames, 5), 5);

	int cannot = -1, reached = -1, recs = 0;

	for (int i = 0; i < 5; i++) {
		if (strstr(frames[i], "printk: console [syslog] cannot reach tcp:127.0.0.1:") &&
		    strstr(frames[i], ": Connection refused ("))
			cannot = i;
		else if (strstr(frames[i], "printk: console [syslog] reached tcp:127.0.0.1:"))
			reached = i;
		else if (strstr(frames[i], "] \xef\xbb\xbfstate "))
			recs++;
	}
	assert_true(cannot >= 1 && reached > cannot);
	assert_int_equal(recs, 3);
	assert_int_equal(pk_console_stats(con, &st), 0);
	assert_int_equal(st.state, PK_CONSOLE_DELIVERING);
	assert_int_equal(st.changes, 2);
	assert_int_equal(st.delivered, 5);
	assert_int_equal(st.waiting, 0);

	/* The receiver goes. A record written before its FIN arrived goes
	 * into the dead connection and counts as written: print until the
	 * console finds it gone (bounded). */
	close(cfd);
	close(lfd);

	int after = 0;

	for (uint64_t start = now_ms(); now_ms() - start < 15000; usleep(20000)) {
		pk_printk_emit(1, 6, NULL, 0, "state after %d\n", after++);
		assert_int_equal(pk_console_stats(con, &st), 0);
		if (st.state == PK_CONSOLE_LOST)
			break;
	}
	assert_int_equal(st.state, PK_CONSOLE_LOST);
	assert_int_equal(st.changes, 3);
	/* the break, or the attempts since (nobody listens) */
	assert_true(st.last_error == -ESHUTDOWN || st.last_error == -ECONNREFUSED);
	assert_true(st.waiting >= 1);
	lfd = listen_on(port);
	assert_int_equal(pk_pr_flush(15000, 0), 1);
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	frames_reset();
	assert_int_equal(pk_console_stats(con, &st), 0);
	assert_int_equal(st.state, PK_CONSOLE_DELIVERING);
	assert_int_equal(st.changes, 4);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.lost, 0);

	/* First what was written on the broken connection, sent again (the
	 * five frames above at least), then the rest; every "state after"
	 * arrives; the announcements say what happened. */
	static char more[64][512];
	int got = 0, lost_at = -1, back_at = -1;
	unsigned char seen[64] = { 0 };

	while (got < 64 && back_at < 0 && read_frames(cfd, more + got, 1) == 1) {
		char *p = strstr(more[got], "state after ");

		if (p && atoi(p + 12) < 64)
			seen[atoi(p + 12)] = 1;
		if (strstr(more[got], "printk: console [syslog] lost tcp:127.0.0.1:"))
			lost_at = got;
		if (strstr(more[got], "printk: console [syslog] reconnected to tcp:127.0.0.1:"))
			back_at = got;
		got++;
	}
	for (int i = 0; i < 5; i++)
		assert_string_equal(more[i], frames[i]);
	for (int i = 0; i < after && i < 64; i++)
		if (!seen[i])
			fail_msg("\"state after %d\" did not arrive", i);
	assert_true(lost_at > 5);
	assert_true(back_at > lost_at);

	assert_true(strtoul(strstr(more[back_at], "127.0.0.1:") + 10, NULL, 10) == (unsigned long)port);
	assert_non_null(strstr(more[back_at], " records written before the break sent again ("));
	assert_non_null(strstr(more[back_at], " waiting, 0 lost)"));
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	close(cfd);
	close(lfd);
}

/*
 * pk_printk_exit() with a receiver away: the console's thread gets
 * console_drain_ms, then exit says in one line on stderr how many records
 * the console did not send (all of them here), and returns.
 */
static int exit_undelivered_child(void *arg)
{
	char opts[128];

	snprintf(opts, sizeof(opts), "console=syslog:tcp:127.0.0.1:%d,name=away console_drain_ms=300",
		 *(int *)arg);
	if (pk_printk_configure(opts))
		return 10;
	for (int i = 0; i < 1000; i++)
		pk_printk_emit(1, 6, NULL, 0, "undelivered %d\n", i);
	pk_printk_exit();
	return 0;
}

static void test_exit_says_undelivered(void **state)
{
	(void)state;
	int lfd, port = listen_port(SOCK_STREAM, &lfd);
	struct child_result res;
	uint64_t start = now_ms();

	close(lfd); /* nobody listens: refused */
	run_child_ok(exit_undelivered_child, &port, 20000, &res);
	/* said once, with the reason in words; how many wait then depends
	 * on how far the program got before the first attempt */
	char want[160];
	const char *nl = strchr(res.out, '\n');

	snprintf(want, sizeof(want),
		 "printk: console [away] cannot reach tcp:127.0.0.1:%d: Connection refused (", port);
	assert_memory_equal(res.out, want, strlen(want));
	assert_non_null(nl);
	assert_memory_equal(nl - 8, " 0 lost)\n", 9);
	/* the records and that notice */
	assert_string_equal(nl + 1,
			    "printk: console [away] did not print its last 1001 records within console_drain_ms=300 at exit\n");
	assert_true(now_ms() - start < 10000);
	child_result_free(&res);
}

/*
 * A TCP connection breaks and the program exits before it comes back: the
 * records written into it that the console kept for a resend are counted
 * on stderr at exit, next to the records it did not send at all.
 */
static int exit_broken_child(void *arg)
{
	(void)arg;
	int lfd, port = listen_port(SOCK_STREAM, &lfd);
	char opts[128], frames[4][512];
	struct pk_console_stats st;

	if (listen(lfd, 1))
		return 9;
	snprintf(opts, sizeof(opts), "console=syslog:tcp:127.0.0.1:%d,name=broken console_drain_ms=1500",
		 port);
	if (pk_printk_configure(opts))
		return 10;

	struct console *con = pk_console_find("broken");

	if (!con)
		return 11;
	/* however slow this machine is, the records stay kept */
	pk_console_net_set_resend_slack(con, 600000);
	for (int i = 0; i < 3; i++)
		pk_printk_emit(1, 6, NULL, 0, "before %d\n", i);
	if (pk_pr_flush(10000, 0) != 1)
		return 12;

	int cfd = accept(lfd, NULL, NULL);

	frames_reset();
	if (cfd < 0 || read_frames(cfd, frames, 3) != 3)
		return 13;
	close(cfd);
	close(lfd);
	for (uint64_t start = now_ms(); now_ms() - start < 15000; usleep(20000)) {
		pk_printk_emit(1, 6, NULL, 0, "after\n");
		if (pk_console_stats(con, &st) || st.state == PK_CONSOLE_LOST)
			break;
	}
	if (st.state != PK_CONSOLE_LOST)
		return 14;
	pk_printk_exit();
	return 0;
}

static void test_exit_says_broken(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(exit_broken_child, NULL, 30000, &res);
	/* "before 0..2" at least, maybe "after"s written before the FIN came */
	if (!strstr(res.out, " records written before the connection to tcp:127.0.0.1:") ||
	    !strstr(res.out, " broke were not sent again at exit\n"))
		fail_msg("not said: %s", res.out);

	unsigned n = 0;
	const char *p = strstr(res.out, "printk: console [broken]: ");

	assert_non_null(p);
	n = (unsigned)strtoul(p + strlen("printk: console [broken]: "), NULL, 10);
	assert_true(n >= 3);
	assert_non_null(strstr(res.out, "printk: console [broken] did not print its last "));
	child_result_free(&res);
}

int main(void)
{
	pk_unregister_console(pk_console_stderr());

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc5424_bytes), cmocka_unit_test(test_rfc3164_bytes),
		cmocka_unit_test(test_journal_bytes), cmocka_unit_test(test_names),
		cmocka_unit_test(test_create_errors), cmocka_unit_test(test_opts),
		cmocka_unit_test(test_udp_nobody),    cmocka_unit_test(test_tcp_waits),
		cmocka_unit_test(test_forwarder_calls), cmocka_unit_test(test_exit_says_undelivered),
		cmocka_unit_test(test_framing_bytes), cmocka_unit_test(test_state_changes),
		cmocka_unit_test(test_unresolved_words), cmocka_unit_test(test_exit_says_broken),
		cmocka_unit_test(test_tls_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
