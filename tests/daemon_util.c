// SPDX-License-Identifier: MIT
/*
 * daemon_util.c - the collectors the forwarding tests start and read back,
 * and what their programs share (daemon_util.h says what each call does).
 * Owns: the collector this test program runs (rsyslogd's pid, ports,
 * readiness check and configuration; journald's unshare and socket path),
 * this host's name and the program's name, and the path of pk-forward.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "daemon_util.h"
#include "readers/reader.h"

/* ------------------------------------------------- the test program -- */

char daemon_host[256];
const char *daemon_app;

int daemon_test_init(size_t log_buf_len)
{
	if (pk_set_log_buf_len(log_buf_len))
		return -1;
	pk_unregister_console(pk_console_stderr());
	gethostname(daemon_host, sizeof(daemon_host));
	daemon_app = program_invocation_short_name;
	return 0;
}

void daemon_test_dir_remove(void)
{
	if (!getenv("PRINTK_KEEP_TEST_DIR"))
		test_dir_remove();
}

void daemon_run_opts_child(const char *opts)
{
	char self[512];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st;

	assert_true(k > 0);
	self[k] = '\0';

	const char *argv[] = { self, "--opts-child", NULL };
	pid_t pid = spawn_logged(argv, NULL, opts);

	assert_true(pid > 0);
	test_reap(pid, &st, 20000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int daemon_opts_child(const char *text)
{
	pk_printk_emit(1, 5, NULL, 0, "%s", text);
	return pk_pr_flush(5000, 0) == 1 ? 0 : 1;
}

void daemon_find_record(const char *prefix, struct pk_record *rec)
{
	struct pk_log *log = pk_printk_log();

	for (uint64_t seq = 0; pk_log_read(log, seq, rec, 0) == 0; seq = rec->seq + 1)
		if (!strncmp(rec->text, prefix, strlen(prefix)))
			return;
	fail_msg("no record '%s'", prefix);
}

void daemon_drop_console(struct console *con)
{
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
}

/* ------------------------------------------------- helpers, lowest -- */

int daemon_free_port(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

int daemon_tcp_accepts(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	close(fd);
	return ok;
}

char *json_get(const char *line, const char *key, size_t *lenp)
{
	size_t klen = strlen(key);
	const char *p = line;

	for (;;) {
		p = strchr(p, '"');
		if (!p)
			return NULL;
		if (!strncmp(p + 1, key, klen) && p[1 + klen] == '"' && p[2 + klen] == ':') {
			p += klen + 2;
			while (*p == ' ' || *p == ':')
				p++;
			break;
		}
		/* skip this string */
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (!*p)
			return NULL;
		p++;
	}

	char *out = malloc(strlen(p) + 1);
	size_t n = 0;

	if (*p == '[') { /* bytes as numbers */
		for (p++; *p && *p != ']';) {
			out[n++] = (char)strtol(p, (char **)&p, 10);
			while (*p == ',' || *p == ' ')
				p++;
		}
	} else if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p != '\\') {
				out[n++] = *p;
				continue;
			}
			p++;
			switch (*p) {
			case 'n':
				out[n++] = '\n';
				break;
			case 't':
				out[n++] = '\t';
				break;
			case 'r':
				out[n++] = '\r';
				break;
			case 'b':
				out[n++] = '\b';
				break;
			case 'f':
				out[n++] = '\f';
				break;
			case 'u': {
				char hex[5] = { p[1], p[2], p[3], p[4], 0 };
				unsigned cp = (unsigned)strtoul(hex, NULL, 16);

				p += 4;
				if (cp < 0x80) {
					out[n++] = (char)cp;
				} else if (cp < 0x800) {
					out[n++] = (char)(0xc0 | cp >> 6);
					out[n++] = (char)(0x80 | (cp & 0x3f));
				} else {
					out[n++] = (char)(0xe0 | cp >> 12);
					out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
					out[n++] = (char)(0x80 | (cp & 0x3f));
				}
				break;
			}
			default:
				out[n++] = *p;
				break;
			}
		}
	} else { /* a number */
		while (*p && *p != ',' && *p != '}' && *p != ' ')
			out[n++] = *p++;
	}
	out[n] = '\0';
	if (lenp)
		*lenp = n;
	return out;
}

pid_t spawn_logged(const char *const argv[], const char *log, const char *opts)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	char *saved = getenv("PRINTK_OPTS") ? strdup(getenv("PRINTK_OPTS")) : NULL;

	posix_spawn_file_actions_init(&fa);
	if (log) {
		posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	if (opts)
		setenv("PRINTK_OPTS", opts, 1);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ))
		pid = -1;
	if (opts) {
		if (saved)
			setenv("PRINTK_OPTS", saved, 1);
		else
			unsetenv("PRINTK_OPTS");
	}
	free(saved);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

void rsyslogd_write_conf(const char *inputs, const char *action_opts)
{
	FILE *f = fopen(test_dir_path("rsyslog.conf"), "w");
	const char *d = test_dir();

	assert_non_null(f);
	fprintf(f,
		"global(workDirectory=\"%s/spool\" net.enableDNS=\"off\" "
		"processInternalMessages=\"on\"\n"
		"       parser.escapeControlCharactersOnReceive=\"off\" maxMessageSize=\"64k\")\n"
		"%s"
		"template(name=\"j\" type=\"list\" option.jsonf=\"on\") {\n"
		" property(outname=\"inputname\" name=\"inputname\" format=\"jsonf\")\n"
		" property(outname=\"pri\" name=\"pri\" format=\"jsonf\")\n"
		" property(outname=\"facility\" name=\"syslogfacility\" format=\"jsonf\")\n"
		" property(outname=\"severity\" name=\"syslogseverity\" format=\"jsonf\")\n"
		" property(outname=\"timestamp\" name=\"timereported\" dateFormat=\"rfc3339\" "
		"format=\"jsonf\")\n"
		" property(outname=\"hostname\" name=\"hostname\" format=\"jsonf\")\n"
		" property(outname=\"app_name\" name=\"app-name\" format=\"jsonf\")\n"
		" property(outname=\"procid\" name=\"procid\" format=\"jsonf\")\n"
		" property(outname=\"msgid\" name=\"msgid\" format=\"jsonf\")\n"
		" property(outname=\"structured_data\" name=\"structured-data\" format=\"jsonf\")\n"
		" property(outname=\"msg\" name=\"msg\" format=\"jsonf\")\n"
		" property(outname=\"rawmsg\" name=\"rawmsg\" format=\"jsonf\")\n"
		"}\n"
		"*.* action(type=\"omfile\" file=\"%s/messages.jsonl\" template=\"j\"%s)\n",
		d, inputs, d, action_opts);
	fclose(f);
	mkdir(test_dir_path("spool"), 0700);
}

void json_assert_str(const char *line, const char *key, const char *want)
{
	char *v = json_get(line, key, NULL);

	if (!v || strcmp(v, want))
		fail_msg("%s: got '%s', want '%s' in %s", key, v ? v : "(missing)", want, line);
	free(v);
}

void json_assert_mem(const char *line, const char *key, const char *want, size_t want_len)
{
	size_t len;
	char *v = json_get(line, key, &len);

	if (!v || len != want_len || memcmp(v, want, len))
		fail_msg("%s: got '%s', want '%.*s' in %s", key, v ? v : "(missing)", (int)want_len,
			 want, line);
	free(v);
}

void json_assert_text(const char *line, const char *key, const char *want)
{
	json_assert_mem(line, key, want, strlen(want));
}

void got_free(struct got *g)
{
	for (int i = 0; i < g->n; i++)
		free(g->line[i]);
	g->n = 0;
}

/* Replace @g's lines by those of @all (consumed) whose value of @key holds
 * @what (@prefix: starts with it). */
static void got_collect(struct got *g, char *all, const char *key, const char *what, int prefix)
{
	got_free(g);
	for (char *l = all, *e; l && (e = strchr(l, '\n')); l = e + 1) {
		*e = '\0';

		char *v = json_get(l, key, NULL);

		if (v && (prefix ? !strncmp(v, what, strlen(what)) : strstr(v, what) != NULL) &&
		    g->n < (int)(sizeof(g->line) / sizeof(g->line[0])))
			g->line[g->n++] = strdup(l);
		free(v);
	}
	free(all);
}

/* ------------------------------------------------------- rsyslogd -- */

static pid_t rs_pid = -1;
static int rs_udp_port, rs_tcp_port, rs_relp_port;
static const char *rs_name, *rs_packages;
static void (*rs_write_conf)(void);
static int (*rs_ready)(void);

int rsyslogd_port(const char *proto)
{
	if (!strcmp(proto, "udp"))
		return rs_udp_port;
	if (!strcmp(proto, "relp"))
		return rs_relp_port;
	return rs_tcp_port;
}

const char *rsyslogd_target(const char *proto)
{
	static char b[64];

	snprintf(b, sizeof(b), "%s:127.0.0.1:%d", proto, rsyslogd_port(proto));
	return b;
}

/* Start rsyslogd with the test directory's rsyslog.conf (a pid file a
 * killed one left is removed first); its pid once rs_ready() says 1
 * (within 10 s), or -1 if it exited or was not ready (then it is killed). */
static pid_t rsyslogd_start(void)
{
	const char *bin =
		access("/usr/sbin/rsyslogd", X_OK) == 0 ? "/usr/sbin/rsyslogd" : "rsyslogd";
	const char *argv[] = { bin, "-n", "-f", test_dir_path("rsyslog.conf"), "-i",
			       test_dir_path("rsyslogd.pid"), NULL };

	unlink(test_dir_path("rsyslogd.pid"));

	pid_t pid = spawn_logged(argv, test_dir_path("rsyslogd.log"), NULL);

	if (pid < 0)
		return -1;

	uint64_t start = now_ms();
	int st;

	while (now_ms() - start < 10000) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -1;
		if (rs_ready())
			return pid;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	test_reap(pid, &st, 10000);
	return -1;
}

void rsyslogd_restart(void)
{
	if ((rs_pid = rsyslogd_start()) < 0) {
		char *out = test_slurp(test_dir_path("rsyslogd.log"), NULL);

		daemon_unavailable("rsyslogd did not start (Debian: %s): %s", rs_packages,
				   out ? out : "no output");
	}
}

void rsyslogd_configure(const char *name, void (*write_conf)(void), int (*ready)(void),
			const char *packages)
{
	rs_name = name;
	rs_write_conf = write_conf;
	rs_ready = ready;
	rs_packages = packages;
}

int rsyslogd_test_setup(void **state)
{
	(void)state;
	assert_int_equal(test_dir_make(rs_name), 0);
	rs_udp_port = daemon_free_port(SOCK_DGRAM);
	rs_tcp_port = daemon_free_port(SOCK_STREAM);
	rs_relp_port = daemon_free_port(SOCK_STREAM);
	rs_write_conf();
	rsyslogd_restart();
	return 0;
}

void rsyslogd_stop(int sig)
{
	int st;

	if (rs_pid < 0)
		return;
	kill(rs_pid, sig);
	kill(rs_pid, SIGCONT); /* one frozen (rsyslogd_freeze) takes @sig now */
	test_reap(rs_pid, &st, 10000);
	rs_pid = -1;
}

/* 1 once every thread of @pid is stopped ("T" in its stat). */
static int all_threads_stopped(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int stopped = 1, seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (stopped && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;

		char stat_path[sizeof(path) + sizeof(e->d_name) + 8];
		char *st, *paren;

		snprintf(stat_path, sizeof(stat_path), "%s/%s/stat", path, e->d_name);
		st = test_slurp(stat_path, NULL);
		/* "TID (COMM) STATE ...": the state follows the last ')' */
		paren = st ? strrchr(st, ')') : NULL;
		stopped = paren && paren[1] == ' ' && paren[2] == 'T';
		seen++;
		free(st);
	}
	closedir(d);
	return stopped && seen;
}

void rsyslogd_freeze(void)
{
	uint64_t start = now_ms();

	assert_true(rs_pid >= 0);
	kill(rs_pid, SIGSTOP);
	while (!all_threads_stopped(rs_pid)) {
		if (now_ms() - start > 10000)
			fail_msg("rsyslogd (pid %d) did not stop within 10 s of SIGSTOP",
				 (int)rs_pid);
		usleep(1000);
	}
}

int rsyslogd_test_teardown(void **state)
{
	(void)state;
	rsyslogd_stop(SIGTERM);
	daemon_test_dir_remove();
	return 0;
}

void rsyslogd_collect(const char *marker, struct got *g)
{
	got_collect(g, test_slurp(test_dir_path("messages.jsonl"), NULL), "rawmsg", marker, 0);
}

void rsyslogd_wait(const char *marker, int n, struct got *g)
{
	uint64_t start = now_ms();

	do {
		rsyslogd_collect(marker, g);
		if (g->n >= n)
			break;
		usleep(20000);
	} while (now_ms() - start < 20000);
}

char *rsyslogd_line_with(const char *marker, unsigned ms)
{
	uint64_t start = now_ms();

	do {
		char *all = test_slurp(test_dir_path("messages.jsonl"), NULL);

		for (char *l = all, *e; l && (e = strchr(l, '\n')); l = e + 1) {
			*e = '\0';
			if (strstr(l, marker)) {
				char *r = strdup(l);

				free(all);
				return r;
			}
		}
		free(all);
		usleep(20000);
	} while (now_ms() - start < ms);
	fail_msg("no message '%s' arrived", marker);
	return NULL;
}

/* As rsyslog shows an RFC 5424 sender's time: "2026-12-04T14:00:00.000000Z". */
static void rfc3339(const struct pk_record *rec, char *out, size_t n)
{
	struct pk_log_info info;
	struct tm tm;

	assert_int_equal(pk_log_info(pk_printk_log(), &info), 0);

	uint64_t rt = rec->ts_nsec + (uint64_t)info.realtime_offset_ns;
	time_t s = (time_t)(rt / 1000000000u);

	gmtime_r(&s, &tm);
	snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(rt % 1000000000u / 1000u));
}

void rsyslogd_assert_header(const char *line, int pri, const struct pk_record *rec, char *stamp,
			    size_t n)
{
	char t[64];

	snprintf(t, sizeof(t), "%d", pri);
	json_assert_str(line, "pri", t);
	snprintf(t, sizeof(t), "%d", pri / 8);
	json_assert_str(line, "facility", t);
	snprintf(t, sizeof(t), "%d", pri % 8);
	json_assert_str(line, "severity", t);
	rfc3339(rec, t, sizeof(t));
	json_assert_str(line, "timestamp", t);
	if (stamp)
		snprintf(stamp, n, "%s", t);
	json_assert_str(line, "hostname", daemon_host);
	json_assert_str(line, "app_name", daemon_app);
	snprintf(t, sizeof(t), "%d", (int)getpid());
	json_assert_str(line, "procid", t);
	json_assert_str(line, "msgid", "-");
}

void rsyslogd_assert_fields(const char *line, const char *inputname, const struct pk_record *rec,
			    const char *text)
{
	char want[512];

	json_assert_str(line, "inputname", inputname);
	rsyslogd_assert_header(line, 3 * 8 + 4, rec, NULL, 0);
	snprintf(want, sizeof(want),
		 "[printk@32473 seq=\"%llu\" tid=\"%u\" SUBSYSTEM=\"net\" DEVICE=\"+net:eth0\" "
		 "Q=\"a\\\"b\\]c\\\\d\"]",
		 (unsigned long long)rec->seq, rec->tid);
	json_assert_str(line, "structured_data", want);
	snprintf(want, sizeof(want), "\xef\xbb\xbf%s", text);
	json_assert_str(line, "msg", want);
}

void rsyslogd_tally(const char *tag, int n, struct tally *t)
{
	char *all = test_slurp(test_dir_path("messages.jsonl"), NULL);
	size_t tlen = strlen(tag);

	free(t->seen);
	memset(t, 0, sizeof(*t));
	t->seen = calloc((size_t)n, 1);
	for (char *l = all, *e; l && (e = strchr(l, '\n')); l = e + 1) {
		*e = '\0';

		char *msg = json_get(l, "msg", NULL);
		char *p = msg ? strstr(msg, tag) : NULL;

		if (p && p[tlen] == ' ' && p[tlen + 1] >= '0' && p[tlen + 1] <= '9') {
			int i = atoi(p + tlen + 1);

			t->lines++;
			if (i >= 0 && i < n) {
				if (t->seen[i])
					t->dups++;
				else
					t->distinct++;
				t->seen[i] = 1;
			}
		} else if (p && t->nother < 8) {
			snprintf(t->other[t->nother++], sizeof(t->other[0]), "%s", p);
		}
		free(msg);
	}
	free(all);
}

void rsyslogd_wait_tally(const char *tag, int n, int want, unsigned ms, struct tally *t)
{
	uint64_t start = now_ms();

	do {
		rsyslogd_tally(tag, n, t);
		if (t->distinct >= want)
			return;
		usleep(50000);
	} while (now_ms() - start < ms);
}

void tally_first_missing(const struct tally *t, int n, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0, k = 0; i < n && k < 10; i++)
		if (!t->seen[i]) {
			len += (size_t)snprintf(out + len, cap - len, " %d", i);
			k++;
		}
}

/* ------------------------------------------------ systemd-journald -- */

static pid_t ns_pid = -1; /* unshare, whose child is journald */
static char jd_sock[512];

const char *journald_socket(void)
{
	return jd_sock;
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(test_dir_path(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int jd_probe(unsigned n)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char m[64];
	int len = snprintf(m, sizeof(m), "MESSAGE=probe-%u\n", n);
	int ok;

	if (strlen(jd_sock) >= sizeof(a.sun_path))
		fail_msg("socket path too long: %s", jd_sock);
	memcpy(a.sun_path, jd_sock, strlen(jd_sock) + 1);
	ok = sendto(fd, m, (size_t)len, 0, (struct sockaddr *)&a, sizeof(a)) == len;
	close(fd);
	return ok;
}

char *journald_entries(void)
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
	return test_slurp(test_dir_path("entries.json"), NULL);
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
	snprintf(jd_sock, sizeof(jd_sock), "%s/run-systemd/journal/socket", d);

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
		if (jd_probe(n)) {
			char want[32], *all;

			snprintf(want, sizeof(want), "\"probe-%u\"", n);
			usleep(20000);
			all = journald_entries();

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

int journald_test_setup(void **state)
{
	(void)state;
	assert_int_equal(test_dir_make("journald"), 0);
	if (!jd_start()) {
		char *log = test_slurp(test_dir_path("journald.log"), NULL);

		jd_stop();
		daemon_unavailable(
			"systemd-journald did not start (needs root, unshare, Debian systemd): %s",
			log ? log : "no output");
	}
	return 0;
}

int journald_test_teardown(void **state)
{
	(void)state;
	jd_stop();
	daemon_test_dir_remove();
	return 0;
}

void journald_wait(const char *prefix, int n, struct got *g)
{
	uint64_t start = now_ms();

	do {
		got_collect(g, journald_entries(), "MESSAGE", prefix, 1);
		if (g->n >= n)
			return;
		usleep(50000);
	} while (now_ms() - start < 20000);
}

/* ------------------------------------------------------ pk-forward -- */

pid_t daemon_pk_forward(const char *target, const char *logname, const char *extra)
{
	const char *b = getenv("PRINTK_TEST_BUILD_DIR");
	char bin[512], logp[512], cur[512];

	snprintf(bin, sizeof(bin), "%s/tools/pk-forward", b ? b : ".");
	snprintf(logp, sizeof(logp), "%s", test_dir_path(logname));
	snprintf(cur, sizeof(cur), "%s", test_dir_path("cursor"));

	const char *argv[] = { bin, "-c", cur, extra ? extra : target, extra ? target : logp,
			       extra ? logp : NULL, NULL };
	pid_t pid = spawn_logged(argv, test_dir_path("fwd.err"), NULL);

	/* Never -1 to a caller: its kill(pid, SIGTERM) would signal every
	 * process it may (run outside ctest, PRINTK_TEST_BUILD_DIR unset). */
	if (pid <= 0)
		fail_msg("%s could not be started (PRINTK_TEST_BUILD_DIR: the build directory)",
			 bin);
	return pid;
}

int daemon_pk_forward_once(const char *target, const char *logname)
{
	pid_t pid = daemon_pk_forward(target, logname, "--once");
	int st;

	assert_true(pid > 0);
	test_reap(pid, &st, 60000);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
