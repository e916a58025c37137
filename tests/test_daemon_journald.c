// SPDX-License-Identifier: MIT
/*
 * test_daemon_journald.c - the journal forwarding console against a real
 * systemd-journald, started here in private mount and pid namespaces
 * (unshare): its fixed paths (/run/systemd, /run/log, /var/log/journal,
 * /etc/systemd/journald.conf) are bind mounts of this test's directory, so
 * its socket is a file of ours and its volatile journal is read back with
 * journalctl --directory -o json (printk.srcloc's CODE_FILE, CODE_LINE and
 * CODE_FUNC among them):
 *   - every field as sent: MESSAGE (multi-line, 1023 bytes, bytes that are
 *     not UTF-8), PRIORITY, SYSLOG_FACILITY (kern sent as user),
 *     SYSLOG_IDENTIFIER, SYSLOG_PID, TID, PRINTK_SEQ, PRINTK_REALTIME_USEC;
 *     dictionary keys made field names (upper case, '_' for other
 *     characters, X before '_' or a digit, 64 characters at most, DICT_
 *     before our own names), a value with newlines;
 *   - a payload too big for one datagram goes through a sealed memfd;
 *   - console=journal:PATH in PRINTK_OPTS (a child process);
 *   - pk-forward from a log file: every record once, in order, with the
 *     writer's fields; a second run sends only what its cursor says is new;
 *   - a ,json console's line (json_format.c) gives each hostile record's
 *     text and dictionary as the same JSON values journalctl -o json gives
 *     them (string or array of bytes), under the same field names.
 * Needs root (namespaces, bind mounts). Label "daemons".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "forward/console_net.h"
#include "record/json_format.h"
#include "daemon_util.h"
#include "readers/reader.h"
#include "testutil.h"

static void check_common(const char *line, const struct pk_record *rec, int fac)
{
	struct pk_log_info info;
	char t[64];

	assert_int_equal(pk_log_info(pk_printk_log(), &info), 0);
	snprintf(t, sizeof(t), "%u", rec->level);
	json_assert_text(line, "PRIORITY", t);
	snprintf(t, sizeof(t), "%d", fac);
	json_assert_text(line, "SYSLOG_FACILITY", t);
	json_assert_text(line, "SYSLOG_IDENTIFIER", program_invocation_short_name);
	snprintf(t, sizeof(t), "%d", (int)getpid());
	json_assert_text(line, "SYSLOG_PID", t);
	snprintf(t, sizeof(t), "%u", rec->tid);
	json_assert_text(line, "TID", t);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)rec->seq);
	json_assert_text(line, "PRINTK_SEQ", t);
	snprintf(t, sizeof(t), "%llu",
		 (unsigned long long)((rec->ts_nsec + (uint64_t)info.realtime_offset_ns) / 1000));
	json_assert_text(line, "PRINTK_REALTIME_USEC", t);
	json_assert_text(line, "_TRANSPORT", "journal");
}

static struct console *add_console(void)
{
	struct console *con;

	assert_int_equal(pk_console_journal_create(&con, journald_socket()), 0);
	assert_true(con->flags & PK_CON_THREADED);
	assert_int_equal(pk_register_console(con), 0);
	return con;
}

static void test_fields(void **state)
{
	(void)state;
	struct console *con = add_console();
	static const char dict[] =
		"SUBSYSTEM=net\0"
		"DEVICE=+net:eth0\0"
		"lower.key=v1\0"
		"_under=v2\0"
		"9lives=v3\0"
		"PRIORITY=v4\0"
		"A123456789B123456789C123456789D123456789E123456789F123456789G123456789=v5\0"
		"ML=two\nlines\0"
		"=empty key\0"
		"noequals";
	char big[PK_TEXT_MAX + 1];

	memset(big, 'j', PK_TEXT_MAX);
	memcpy(big, "JF-big ", 7);
	big[PK_TEXT_MAX - 1] = 'E';
	big[PK_TEXT_MAX] = '\0';
	pk_printk_emit(0, 3, dict, sizeof(dict) - 1, "JF-dict kern err\n");
	pk_printk_emit(3, 6, NULL, 0, "JF-multi first\n\tsecond\nthird\n");
	pk_printk_emit(16, 5, NULL, 0, "%s", big);
	pk_printk_emit(23, 1, NULL, 0, "JF-bytes \xff\xfe not UTF-8\n");
	assert_int_equal(pk_pr_flush(5000, 0), 1);

	struct got g = { 0 };
	struct pk_record rec;

	journald_wait("JF-", 4, &g);
	assert_int_equal(g.n, 4);

	daemon_find_record("JF-dict", &rec);
	check_common(g.line[0], &rec, 1);
	json_assert_text(g.line[0], "MESSAGE", "JF-dict kern err");
	json_assert_text(g.line[0], "SUBSYSTEM", "net");
	json_assert_text(g.line[0], "DEVICE", "+net:eth0");
	json_assert_text(g.line[0], "LOWER_KEY", "v1");
	json_assert_text(g.line[0], "X_UNDER", "v2");
	json_assert_text(g.line[0], "X9LIVES", "v3");
	json_assert_text(g.line[0], "DICT_PRIORITY", "v4");
	json_assert_text(g.line[0], "A123456789B123456789C123456789D123456789E123456789F123456789G123",
		   "v5");
	json_assert_text(g.line[0], "ML", "two\nlines");
	assert_null(strstr(g.line[0], "empty key"));

	daemon_find_record("JF-multi", &rec);
	check_common(g.line[1], &rec, 3);
	json_assert_text(g.line[1], "MESSAGE", "JF-multi first\n\tsecond\nthird");

	daemon_find_record("JF-big", &rec);
	assert_int_equal(rec.text_len, PK_TEXT_MAX);
	check_common(g.line[2], &rec, 16);
	json_assert_text(g.line[2], "MESSAGE", big);

	daemon_find_record("JF-bytes", &rec);
	check_common(g.line[3], &rec, 23);
	json_assert_text(g.line[3], "MESSAGE", "JF-bytes \xff\xfe not UTF-8");

	struct pk_forward_stats st;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.sent, 4);
	assert_int_equal(st.send_errors, 0);
	got_free(&g);
	daemon_drop_console(con);
}

/* printk.srcloc: a call site's CODE_FILE, CODE_LINE and CODE_FUNC arrive
 * as journald's own fields of those names. */
static void test_srcloc(void **state)
{
	(void)state;
	struct console *con = add_console();
	char line[16];

	pk_set_printk_srcloc(1);
	snprintf(line, sizeof(line), "%d", __LINE__ + 1);
	pr_err("JS-located %d\n", 1);
	pk_set_printk_srcloc(0);
	pr_err("JS-plain %d\n", 2);
	assert_int_equal(pk_pr_flush(5000, 0), 1);

	struct got g = { 0 };

	journald_wait("JS-", 2, &g);
	assert_int_equal(g.n, 2);
	json_assert_text(g.line[0], "MESSAGE", "JS-located 1");
	json_assert_text(g.line[0], "CODE_FILE", __FILE__);
	json_assert_text(g.line[0], "CODE_LINE", line);
	json_assert_text(g.line[0], "CODE_FUNC", "test_srcloc");
	json_assert_text(g.line[1], "MESSAGE", "JS-plain 2");
	assert_null(strstr(g.line[1], "CODE_FILE"));
	got_free(&g);
	daemon_drop_console(con);
}

/* What journalctl makes of hostile values is what a JSON line says:
 * Python compares each pair of objects, field by field, as JSON values. */
static const char json_compare[] =
	"import json, sys\n"
	"ours = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]\n"
	"theirs = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]\n"
	"assert len(ours) == len(theirs) > 0, (len(ours), len(theirs))\n"
	"same = {'PRINTK_SEQ': 'PRINTK_SEQ', '__REALTIME_TIMESTAMP': 'PRINTK_REALTIME_USEC', '_PID': 'SYSLOG_PID'}\n"
	"for o, t in zip(ours, theirs):\n"
	"    for k, v in o.items():\n"
	"        if k == '__MONOTONIC_TIMESTAMP':\n"
	"            continue\n"
	"        tk = same.get(k, k)\n"
	"        assert t.get(tk) == v, (k, v, t.get(tk))\n"
	"print('journalctl agrees on', len(ours), 'records')\n";

static void test_json_matches_journalctl(void **state)
{
	(void)state;
	struct console *con = add_console();
	static const char *const texts[] = {
		"JJ-plain",
		"JJ-quote \" back \\ tab\tnl\nend",
		"JJ-ctl \a \x1b[31m \x7f \r",
		"JJ-bad \xff\xfe \xc3",
		"JJ-surrogate \xed\xa0\x80",
		"JJ-overlong \xc0\xaf \xe0\x80\xaf",
		"JJ-c1 \xc2\x85",
		"JJ-nonchar \xef\xbf\xbe \xef\xb7\x90",
		"JJ-utf8 gr\xc3\xbc\xc3\x9f \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbd",
	};
	static const char dict[] = "SUBSYSTEM=n\x01t\0lower.key=caf\xc3\xa9\0BAD=\xff\0MESSAGE=forged\0_u=x";
	size_t n = sizeof(texts) / sizeof(texts[0]);
	struct got g = { 0 };
	FILE *ours, *theirs, *py;
	char cmd[2048];

	for (size_t i = 0; i < n; i++)
		pk_printk_emit(1, 6, dict, sizeof(dict) - 1, "%s\n", texts[i]);
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	journald_wait("JJ-", (int)n, &g);
	assert_int_equal(g.n, (int)n);

	struct pk_log_info info;

	assert_int_equal(pk_log_info(pk_printk_log(), &info), 0);
	ours = fopen(test_dir_path("ours.json"), "w");
	theirs = fopen(test_dir_path("theirs.json"), "w");
	py = fopen(test_dir_path("compare.py"), "w");
	assert_true(ours && theirs && py);
	for (size_t i = 0; i < n; i++) {
		static char line[PK_JSON_RECORD_MAX];
		struct pk_record rec;

		daemon_find_record(texts[i], &rec);
		fwrite(line, 1,
		       pk_json_format_record(line, sizeof(line), &rec, program_invocation_short_name,
					     info.realtime_offset_ns),
		       ours);
		fprintf(theirs, "%s\n", g.line[i]);
	}
	fputs(json_compare, py);
	fclose(ours);
	fclose(theirs);
	fclose(py);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s'", test_dir_path("compare.py"),
		 test_dir_path("ours.json"), test_dir_path("theirs.json"));
	assert_int_equal(system(cmd), 0);
	got_free(&g);
	daemon_drop_console(con);
}

/* Bigger than the datagram limit set here: a sealed memfd carries it. */
static void test_memfd(void **state)
{
	(void)state;
	struct console *con = add_console();
	char big[PK_TEXT_MAX + 1];
	struct got g = { 0 };
	struct pk_record rec;

	pk_console_net_set_max_datagram(con, 256);
	memset(big, 'm', PK_TEXT_MAX);
	memcpy(big, "JM-memfd ", 9);
	big[PK_TEXT_MAX] = '\0';
	pk_printk_emit(1, 6, "K=v", 3, "%s", big);
	pk_printk_emit(1, 6, NULL, 0, "JM-small\n");
	assert_int_equal(pk_pr_flush(5000, 0), 1);
	journald_wait("JM-", 2, &g);
	assert_int_equal(g.n, 2);
	daemon_find_record("JM-memfd", &rec);
	check_common(g.line[0], &rec, 1);
	json_assert_text(g.line[0], "MESSAGE", big);
	json_assert_text(g.line[0], "K", "v");
	json_assert_text(g.line[1], "MESSAGE", "JM-small");
	got_free(&g);
	daemon_drop_console(con);
}

static void test_printk_opts(void **state)
{
	(void)state;
	char opts[700];
	struct got g = { 0 };

	snprintf(opts, sizeof(opts), "console=journal:%s", journald_socket());
	daemon_run_opts_child(opts);
	journald_wait("JO-child", 1, &g);
	assert_int_equal(g.n, 1);
	json_assert_text(g.line[0], "MESSAGE", "JO-child via PRINTK_OPTS");
	json_assert_text(g.line[0], "PRIORITY", "5");
	got_free(&g);
}

/* pk-forward (the cursor forwarder) from a log file to the same journald:
 * every record once, in order, with its fields; run again after more
 * records, it sends only those (the cursor). */
static void fwd_store(struct pk_log *log, int from, int n)
{
	for (int i = from; i < from + n; i++) {
		char b[32];
		int k = snprintf(b, sizeof(b), "JF %d", i);

		assert_int_equal(pk_log_store(log, 3, 4, b, (size_t)k, "DEV=disk0", 10), 0);
	}
}

static void fwd_run(void)
{
	char tgt[600];
	int st;

	snprintf(tgt, sizeof(tgt), "journal:%s", journald_socket());
	if ((st = daemon_pk_forward_once(tgt, "fwd.log"))) {
		char *err = test_slurp(test_dir_path("fwd.err"), NULL);

		fail_msg("pk-forward: status %d: %s", st, err ? err : "");
	}
}

static void test_pk_forward(void **state)
{
	(void)state;
	struct pk_log *log;
	struct got g = { 0 };
	char want[32], pid[16];

	assert_int_equal(pk_log_open_file(&log, test_dir_path("fwd.log"), 64 * 1024, 0), 0);
	fwd_store(log, 0, 40);
	fwd_run();
	journald_wait("JF ", 40, &g);
	assert_int_equal(g.n, 40);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (int i = 0; i < 40; i++) {
		snprintf(want, sizeof(want), "JF %d", i);
		json_assert_text(g.line[i], "MESSAGE", want);
		json_assert_text(g.line[i], "PRIORITY", "4");
		json_assert_text(g.line[i], "SYSLOG_FACILITY", "3");
		json_assert_text(g.line[i], "SYSLOG_PID", pid); /* the writer's, from the log */
		json_assert_text(g.line[i], "DEV", "disk0");
	}
	fwd_store(log, 40, 10);
	fwd_run();
	journald_wait("JF ", 50, &g);
	usleep(300000); /* a duplicate would arrive with the records it follows */
	journald_wait("JF ", 50, &g);
	assert_int_equal(g.n, 50);
	for (int i = 40; i < 50; i++) {
		snprintf(want, sizeof(want), "JF %d", i);
		json_assert_text(g.line[i], "MESSAGE", want);
	}
	got_free(&g);
	pk_log_destroy(log);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--opts-child"))
		return daemon_opts_child("JO-child via PRINTK_OPTS\n");
	/* Also links the library's start-up (setup.c), which reads
	 * PRINTK_OPTS in the child, from the static library. */
	if (daemon_test_init(64 * 1024))
		return 1;

	const struct CMUnitTest tests[] = {
		journald_unit_test(test_fields),
		journald_unit_test(test_srcloc),
		journald_unit_test(test_memfd),
		journald_unit_test(test_json_matches_journalctl),
		journald_unit_test(test_pk_forward),
		journald_unit_test(test_printk_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
