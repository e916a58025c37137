// SPDX-License-Identifier: MIT
/*
 * daemon_util.h - what the tests of the forwarding consoles share: a real
 * collector started by the test (rsyslogd, systemd-journald), its JSON
 * output read back, and the rule for a collector that cannot be started:
 * the test fails when run as root (CI runs as root and installs the
 * daemons with scripts/setup.sh), and is skipped otherwise.
 */
#ifndef PRINTK_DAEMON_UTIL_H
#define PRINTK_DAEMON_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

/* The collector could not be started: fail loudly as root, else skip. */
#define daemon_unavailable(...)                                                                    \
	do {                                                                                       \
		print_message("daemon unavailable: " __VA_ARGS__);                                 \
		print_message("\n");                                                               \
		if (geteuid() == 0)                                                                \
			fail_msg("a collector the test needs did not start (root: CI)");           \
		skip();                                                                            \
	} while (0)

/* A port on 127.0.0.1 free for a socket of @type (SOCK_STREAM, SOCK_DGRAM)
 * right now, for a collector the test starts. */
static inline int daemon_free_port(int type)
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

/*
 * The string value of "@key" in one JSON object on one line, unescaped
 * (\uXXXX below 0x80 as that byte, others as UTF-8), malloc'ed; NULL if the
 * key is missing. Enough for the flat objects rsyslog's jsonf and
 * journalctl -o json write (a journal field holding non-text bytes comes as
 * an array of numbers: returned as those bytes).
 */
static inline char *json_get(const char *line, const char *key, size_t *lenp)
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

/*
 * Start @argv (searched in PATH) with stdout and stderr appended to @log
 * (NULL: inherited) and PRINTK_OPTS=@opts (NULL: as ours); its pid. With
 * posix_spawn, not fork: no atfork handler runs, so the library does not
 * start a printer thread in a child that only execs (it could forward
 * records twice, and ThreadSanitizer refuses threads after such a fork).
 */
static inline pid_t spawn_logged(const char *const argv[], const char *log, const char *opts)
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

/* -------------------------------------------------------- rsyslogd -- */

/*
 * rsyslogd as the tests run it: in the foreground, its files in test_dir
 * (rsyslog.conf, rsyslogd.pid, rsyslogd.log, spool/), every message it
 * receives written as one JSON object per line to messages.jsonl.
 */

/* Write test_dir's rsyslog.conf: the global settings, @inputs (module,
 * input and queue lines, "%s" for nothing), the JSON template of every
 * field, and the file action with @action_opts added to it. */
static inline void rsyslogd_write_conf(const char *inputs, const char *action_opts)
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

/* 1 if something accepts TCP connections on 127.0.0.1:@port. */
static inline int daemon_tcp_accepts(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	close(fd);
	return ok;
}

/* Start rsyslogd with test_dir's rsyslog.conf (a pid file a killed one
 * left is removed first); its pid once @ready() says 1 (within 10 s), or
 * -1 if it exited or was not ready (then it is killed). */
static inline pid_t rsyslogd_start(int (*ready)(void))
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
		if (ready())
			return pid;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	test_reap(pid, &st, 10000);
	return -1;
}

/* Send @sig to rsyslogd *@pid (if it runs) and reap it. */
static inline void rsyslogd_stop(pid_t *pid, int sig)
{
	int st;

	if (*pid < 0)
		return;
	kill(*pid, sig);
	test_reap(*pid, &st, 10000);
	*pid = -1;
}

/* rsyslogd_start(), or daemon_unavailable() with its output and @what
 * (the Debian packages it needs). */
#define rsyslogd_start_or_give_up(pid, ready, what)                                                	do {                                                                                       		if ((*(pid) = rsyslogd_start(ready)) < 0) {                                        			char *out_ = slurp(test_dir_path("rsyslogd.log"));                                                                                                                             			daemon_unavailable("rsyslogd did not start (Debian: %s): %s", what,         					   out_ ? out_ : "no output");                              		}                                                                                  	} while (0)

/* The whole of @path, NUL-terminated (NULL if missing), malloc'ed. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;

	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap + 1);

	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

#endif
