// SPDX-License-Identifier: MIT
/*
 * test_daemon_journald.c - the journal forwarding console against a real
 * systemd-journald, started here in private mount and pid namespaces
 * (unshare): its fixed paths (/run/systemd, /run/log, /var/log/journal,
 * /etc/systemd/journald.conf) are bind mounts of this test's directory, so
 * its socket is a file of ours and its volatile journal is read back with
 * journalctl --directory -o json:
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "console_net.h"
#include "json_format.h"
#include "daemon_util.h"
#include "reader.h"
#include "testutil.h"

static pid_t ns_pid = -1; /* unshare, whose child is journald */
static char sock[512];

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(test_dir_path(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int probe(unsigned n)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char m[64];
	int len = snprintf(m, sizeof(m), "MESSAGE=probe-%u\n", n);
	int ok;

	if (strlen(sock) >= sizeof(a.sun_path))
		fail_msg("socket path too long: %s", sock);
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	ok = sendto(fd, m, (size_t)len, 0, (struct sockaddr *)&a, sizeof(a)) == len;
	close(fd);
	return ok;
}

/* All entries, journalctl -o json, one per line; malloc'ed. */
static char *journal_json(void)
{
	char cmd[1024], jdir[600] = "";
	DIR *d = opendir(test_dir_path("run-log/journal"));
	struct dirent *e;

	if (!d)
		return NULL;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			snprintf(jdir, sizeof(jdir), "%s/%s", test_dir_path("run-log/journal"),
				 e->d_name);
	closedir(d);
	if (!jdir[0])
		return NULL;
	snprintf(cmd, sizeof(cmd), "journalctl --directory='%s' -o json > '%s' 2>/dev/null", jdir,
		 test_dir_path("entries.json"));
	if (system(cmd))
		return NULL;
	return slurp(test_dir_path("entries.json"));
}

static int jd_start(void)
{
	static unsigned n;
	char script[4096];
	const char *d = test_dir();

	mkdir(test_dir_path("run-systemd"), 0755);
	mkdir(test_dir_path("run-log"), 0755);
	mkdir(test_dir_path("var-log-journal"), 0755);
	write_file("journald.conf", "[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\n"
				    "ForwardToKMsg=no\nForwardToConsole=no\nForwardToWall=no\n"
				    "RateLimitIntervalSec=0\n");
	snprintf(script, sizeof(script),
		 "set -e\nmount -t proc proc /proc\n"
		 "mount --bind %s/run-systemd /run/systemd\n"
		 "mount --bind %s/run-log /run/log\n"
		 "if [ -d /var/log/journal ]; then mount --bind %s/var-log-journal "
		 "/var/log/journal; fi\n"
		 "mount --bind %s/journald.conf /etc/systemd/journald.conf\n"
		 "exec env SYSTEMD_LOG_TARGET=console /lib/systemd/systemd-journald\n",
		 d, d, d, d);
	write_file("inner.sh", script);
	snprintf(sock, sizeof(sock), "%s/run-systemd/journal/socket", d);

	const char *argv[] = { "unshare", "--mount", "--pid", "--kill-child=SIGTERM",
			       "--propagation", "private", "sh", test_dir_path("inner.sh"),
			       NULL };

	ns_pid = spawn_logged(argv, test_dir_path("journald.log"), NULL);
	if (ns_pid < 0)
		return 0;

	uint64_t start = now_ms();

	n++;
	while (now_ms() - start < 10000) {
		int st;

		if (waitpid(ns_pid, &st, WNOHANG) == ns_pid) {
			ns_pid = -1;
			return 0;
		}
		if (probe(n)) {
			char want[32], *all;

			snprintf(want, sizeof(want), "\"probe-%u\"", n);
			usleep(20000);
			all = journal_json();

			int ok = all && strstr(all, want);

			free(all);
			if (ok)
				return 1;
		} else {
			usleep(10000);
		}
	}
	return 0;
}

static void jd_stop(void)
{
	char path[64], buf[64] = "";
	int st, fd;

	if (ns_pid < 0)
		return;
	/* journald is unshare's only child; TERM it, and unshare follows. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)ns_pid, (int)ns_pid);
	if ((fd = open(path, O_RDONLY)) >= 0) {
		ssize_t k = read(fd, buf, sizeof(buf) - 1);

		buf[k > 0 ? k : 0] = '\0';
		close(fd);
	}
	if (atoi(buf) > 0)
		kill(atoi(buf), SIGTERM);
	else
		kill(ns_pid, SIGKILL);
	test_reap(ns_pid, &st, 10000);
	ns_pid = -1;
}

/* The entries whose MESSAGE starts with @prefix, in order. */
struct got {
	int n;
	char *line[64];
};

static void got_free(struct got *g)
{
	for (int i = 0; i < g->n; i++)
		free(g->line[i]);
	g->n = 0;
}

static void wait_for(const char *prefix, int n, struct got *g)
{
	uint64_t start = now_ms();

	do {
		char *all = journal_json();

		got_free(g);
		for (char *l = all, *e; l && (e = strchr(l, '\n')); l = e + 1) {
			*e = '\0';

			char *m = json_get(l, "MESSAGE", NULL);

			if (m && !strncmp(m, prefix, strlen(prefix)) && g->n < 64)
				g->line[g->n++] = strdup(l);
			free(m);
		}
		free(all);
		if (g->n >= n)
			return;
		usleep(50000);
	} while (now_ms() - start < 20000);
}

static void assert_field(const char *line, const char *key, const char *want, size_t want_len)
{
	size_t len;
	char *v = json_get(line, key, &len);

	if (!v || len != want_len || memcmp(v, want, len))
		fail_msg("%s: got '%s', want '%.*s' in %s", key, v ? v : "(missing)", (int)want_len,
			 want, line);
	free(v);
}

static void assert_str(const char *line, const char *key, const char *want)
{
	assert_field(line, key, want, strlen(want));
}

static void find_record(const char *prefix, struct pk_record *rec)
{
	struct pk_log *log = pk_printk_log();

	for (uint64_t seq = 0; pk_log_read(log, seq, rec, 0) == 0; seq = rec->seq + 1)
		if (!strncmp(rec->text, prefix, strlen(prefix)))
			return;
	fail_msg("no record '%s'", prefix);
}

static void check_common(const char *line, const struct pk_record *rec, int fac)
{
	struct pk_log_info info;
	char t[64];

	assert_int_equal(pk_log_info(pk_printk_log(), &info), 0);
	snprintf(t, sizeof(t), "%u", rec->level);
	assert_str(line, "PRIORITY", t);
	snprintf(t, sizeof(t), "%d", fac);
	assert_str(line, "SYSLOG_FACILITY", t);
	assert_str(line, "SYSLOG_IDENTIFIER", program_invocation_short_name);
	snprintf(t, sizeof(t), "%d", (int)getpid());
	assert_str(line, "SYSLOG_PID", t);
	snprintf(t, sizeof(t), "%u", rec->tid);
	assert_str(line, "TID", t);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)rec->seq);
	assert_str(line, "PRINTK_SEQ", t);
	snprintf(t, sizeof(t), "%llu",
		 (unsigned long long)((rec->ts_nsec + (uint64_t)info.realtime_offset_ns) / 1000));
	assert_str(line, "PRINTK_REALTIME_USEC", t);
	assert_str(line, "_TRANSPORT", "journal");
}

static struct console *add_console(void)
{
	struct console *con;

	assert_int_equal(pk_console_journal_create(&con, sock), 0);
	assert_true(con->flags & PK_CON_THREADED);
	assert_int_equal(pk_register_console(con), 0);
	return con;
}

static void drop_console(struct console *con)
{
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
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

	wait_for("JF-", 4, &g);
	assert_int_equal(g.n, 4);

	find_record("JF-dict", &rec);
	check_common(g.line[0], &rec, 1);
	assert_str(g.line[0], "MESSAGE", "JF-dict kern err");
	assert_str(g.line[0], "SUBSYSTEM", "net");
	assert_str(g.line[0], "DEVICE", "+net:eth0");
	assert_str(g.line[0], "LOWER_KEY", "v1");
	assert_str(g.line[0], "X_UNDER", "v2");
	assert_str(g.line[0], "X9LIVES", "v3");
	assert_str(g.line[0], "DICT_PRIORITY", "v4");
	assert_str(g.line[0], "A123456789B123456789C123456789D123456789E123456789F123456789G123",
		   "v5");
	assert_str(g.line[0], "ML", "two\nlines");
	assert_null(strstr(g.line[0], "empty key"));

	find_record("JF-multi", &rec);
	check_common(g.line[1], &rec, 3);
	assert_str(g.line[1], "MESSAGE", "JF-multi first\n\tsecond\nthird");

	find_record("JF-big", &rec);
	assert_int_equal(rec.text_len, PK_TEXT_MAX);
	check_common(g.line[2], &rec, 16);
	assert_str(g.line[2], "MESSAGE", big);

	find_record("JF-bytes", &rec);
	check_common(g.line[3], &rec, 23);
	assert_str(g.line[3], "MESSAGE", "JF-bytes \xff\xfe not UTF-8");

	struct pk_forward_stats st;

	assert_int_equal(pk_console_forward_stats(con, &st), 0);
	assert_int_equal(st.sent, 4);
	assert_int_equal(st.send_errors, 0);
	got_free(&g);
	drop_console(con);
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
	wait_for("JJ-", (int)n, &g);
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

		find_record(texts[i], &rec);
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
	drop_console(con);
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
	wait_for("JM-", 2, &g);
	assert_int_equal(g.n, 2);
	find_record("JM-memfd", &rec);
	check_common(g.line[0], &rec, 1);
	assert_str(g.line[0], "MESSAGE", big);
	assert_str(g.line[0], "K", "v");
	assert_str(g.line[1], "MESSAGE", "JM-small");
	got_free(&g);
	drop_console(con);
}

static void test_printk_opts(void **state)
{
	(void)state;
	char opts[700], self[512];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(k > 0);
	self[k] = '\0';
	snprintf(opts, sizeof(opts), "console=journal:%s", sock);

	const char *argv[] = { self, "--opts-child", NULL };
	pid_t pid = spawn_logged(argv, NULL, opts);

	assert_true(pid > 0);

	int st;
	struct got g = { 0 };

	test_reap(pid, &st, 20000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	wait_for("JO-child", 1, &g);
	assert_int_equal(g.n, 1);
	assert_str(g.line[0], "MESSAGE", "JO-child via PRINTK_OPTS");
	assert_str(g.line[0], "PRIORITY", "5");
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
	const char *b = getenv("PRINTK_TEST_BUILD_DIR");
	char bin[512], tgt[600], cur[512], logp[512];
	int st;

	snprintf(bin, sizeof(bin), "%s/tools/pk-forward", b ? b : ".");
	snprintf(tgt, sizeof(tgt), "journal:%s", sock);
	snprintf(cur, sizeof(cur), "%s", test_dir_path("cursor"));
	snprintf(logp, sizeof(logp), "%s", test_dir_path("fwd.log"));

	const char *argv[] = { bin, "-c", cur, "--once", tgt, logp, NULL };
	pid_t pid = spawn_logged(argv, test_dir_path("fwd.err"), NULL);

	assert_true(pid > 0);
	test_reap(pid, &st, 30000);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char *err = slurp(test_dir_path("fwd.err"));

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
	wait_for("JF ", 40, &g);
	assert_int_equal(g.n, 40);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (int i = 0; i < 40; i++) {
		snprintf(want, sizeof(want), "JF %d", i);
		assert_str(g.line[i], "MESSAGE", want);
		assert_str(g.line[i], "PRIORITY", "4");
		assert_str(g.line[i], "SYSLOG_FACILITY", "3");
		assert_str(g.line[i], "SYSLOG_PID", pid); /* the writer's, from the log */
		assert_str(g.line[i], "DEV", "disk0");
	}
	fwd_store(log, 40, 10);
	fwd_run();
	wait_for("JF ", 50, &g);
	usleep(300000); /* a duplicate would arrive with the records it follows */
	wait_for("JF ", 50, &g);
	assert_int_equal(g.n, 50);
	for (int i = 40; i < 50; i++) {
		snprintf(want, sizeof(want), "JF %d", i);
		assert_str(g.line[i], "MESSAGE", want);
	}
	got_free(&g);
	pk_log_destroy(log);
}

static int opts_child(void)
{
	pk_printk_emit(1, 5, NULL, 0, "JO-child via PRINTK_OPTS\n");
	return pk_pr_flush(5000, 0) == 1 ? 0 : 1;
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(test_dir_make("journald"), 0);
	if (!jd_start()) {
		char *log = slurp(test_dir_path("journald.log"));

		jd_stop();
		daemon_unavailable(
			"systemd-journald did not start (needs root, unshare, Debian systemd): %s",
			log ? log : "no output");
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jd_stop();
	if (!getenv("PRINTK_KEEP_TEST_DIR"))
		test_dir_remove();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--opts-child"))
		return opts_child();
	/* Also links the library's start-up (setup.c), which reads
	 * PRINTK_OPTS in the child, from the static library. */
	if (pk_set_log_buf_len(64 * 1024))
		return 1;
	pk_unregister_console(pk_console_stderr());

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_matches_journalctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pk_forward, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printk_opts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
