// SPDX-License-Identifier: MIT
/*
 * daemon_util.h - what the tests of the forwarding consoles share
 * (daemon_util.c, linked into every tests/test_daemon_*.c): a real
 * collector started by the test (rsyslogd on 127.0.0.1 ports picked free,
 * systemd-journald in private namespaces), in a fresh test directory, its
 * output read back (JSON, one object a line), stopped, killed and started
 * again; the program's own start (a small ring, no stderr console) and a
 * child of the test program started with PRINTK_OPTS; pk-forward runs.
 *
 * A collector that cannot be started fails the test when run as root (CI
 * runs as root and installs the daemons with scripts/setup.sh), and skips
 * it otherwise. Each test file keeps its collector's configuration (what
 * it listens on, when it is ready) and its test cases.
 */
#ifndef PRINTK_DAEMON_UTIL_H
#define PRINTK_DAEMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testutil.h"

struct console;
struct pk_record;

/* The collector could not be started: fail loudly as root, else skip. */
#define daemon_unavailable(...)                                                                    \
	do {                                                                                       \
		print_message("daemon unavailable: " __VA_ARGS__);                                 \
		print_message("\n");                                                               \
		if (geteuid() == 0)                                                                \
			fail_msg("a collector the test needs did not start (root: CI)");           \
		skip();                                                                            \
	} while (0)

/* ------------------------------------------------- the test program -- */

/* This host's name and the program's short name: what the consoles send. */
extern char daemon_host[256];
extern const char *daemon_app;

/* From main, before the first record: a ring of @log_buf_len bytes, no
 * stderr console (the records go to the collector only), daemon_host and
 * daemon_app set. 0, or -1 if the ring could not be sized. */
int daemon_test_init(size_t log_buf_len);

/* Remove the test directory, unless PRINTK_KEEP_TEST_DIR is set. */
void daemon_test_dir_remove(void);

/*
 * This program again, as "--opts-child", with PRINTK_OPTS=@opts (options
 * apply at start): it must exit 0 within 20 s. In the child,
 * daemon_opts_child() prints @text at level 5 and exits 0 once it is
 * flushed.
 */
void daemon_run_opts_child(const char *opts);
int daemon_opts_child(const char *text);

/* The record of printk's log whose text starts with @prefix. */
void daemon_find_record(const char *prefix, struct pk_record *rec);

/* Unregister and destroy a forwarding console, which must succeed. */
void daemon_drop_console(struct console *con);

/* ------------------------------------------------- helpers, lowest -- */

/* A port on 127.0.0.1 free for a socket of @type (SOCK_STREAM, SOCK_DGRAM)
 * right now, for a collector the test starts. */
int daemon_free_port(int type);

/* 1 if something accepts TCP connections on 127.0.0.1:@port. */
int daemon_tcp_accepts(int port);

/*
 * Start @argv (searched in PATH) with stdout and stderr appended to @log
 * (NULL: inherited) and PRINTK_OPTS=@opts (NULL: as ours); its pid. With
 * posix_spawn, not fork: no atfork handler runs, so the library does not
 * start a printer thread in a child that only execs (it could forward
 * records twice, and ThreadSanitizer refuses threads after such a fork).
 */
pid_t spawn_logged(const char *const argv[], const char *log, const char *opts);

/*
 * The string value of "@key" in one JSON object on one line, unescaped
 * (\uXXXX below 0x80 as that byte, others as UTF-8), malloc'ed; NULL if the
 * key is missing. Enough for the flat objects rsyslog's jsonf and
 * journalctl -o json write (a journal field holding non-text bytes comes as
 * an array of numbers: returned as those bytes).
 */
char *json_get(const char *line, const char *key, size_t *lenp);

/* @key's value in @line is @want: as a C string (json_assert_str), or
 * exactly its bytes, no more (json_assert_text: strlen(@want) bytes,
 * json_assert_mem: @want_len). */
void json_assert_str(const char *line, const char *key, const char *want);
void json_assert_text(const char *line, const char *key, const char *want);
void json_assert_mem(const char *line, const char *key, const char *want, size_t want_len);

/* Lines of a collector's output that match, in the order received. */
struct got {
	int n;
	char *line[600];
};

void got_free(struct got *g);

/* ------------------------------------------------------- rsyslogd -- */

/*
 * rsyslogd as the tests run it: in the foreground, its files in the test
 * directory (rsyslog.conf, rsyslogd.pid, rsyslogd.log, spool/), every
 * message it receives written as one JSON object per line to
 * messages.jsonl.
 */

/* Write the test directory's rsyslog.conf: the global settings, @inputs
 * (module, input and queue lines), the JSON template of every field, and
 * the file action with @action_opts added to it. */
void rsyslogd_write_conf(const char *inputs, const char *action_opts);

/*
 * From main: what rsyslogd_test_setup() does before each test: a fresh
 * test directory @name, free ports for each of rsyslogd_port()'s
 * protocols, @write_conf() (which calls rsyslogd_write_conf() with the
 * inputs on those ports), and rsyslogd started until @ready() says 1
 * (within 10 s), or daemon_unavailable() with its output and @packages
 * (the Debian packages it needs).
 */
void rsyslogd_configure(const char *name, void (*write_conf)(void), int (*ready)(void),
			const char *packages);
/* A test's set-up and tear-down (cmocka's): the above; then rsyslogd
 * stopped (SIGTERM) and the directory removed. */
int rsyslogd_test_setup(void **state);
int rsyslogd_test_teardown(void **state);
#define rsyslogd_unit_test(f)                                                                      \
	cmocka_unit_test_setup_teardown(f, rsyslogd_test_setup, rsyslogd_test_teardown)
/* Send @sig to rsyslogd (if it runs) and reap it. */
void rsyslogd_stop(int sig);
/* Stop rsyslogd (SIGSTOP) and return once every thread of it is stopped
 * (10 s at most, or the test fails): it reads nothing more until killed
 * (rsyslogd_stop) or continued. */
void rsyslogd_freeze(void);
/* Start it again as rsyslogd_setup() did, with the same configuration. */
void rsyslogd_restart(void);

/* The port this test's rsyslogd listens on for @proto ("udp", "tcp",
 * "relp"), and "@proto:127.0.0.1:PORT", a syslog console's target (a
 * static buffer). */
int rsyslogd_port(const char *proto);
const char *rsyslogd_target(const char *proto);

/* The output lines whose rawmsg holds @marker, now (rsyslogd_collect()),
 * or once @n of them arrived (20 s at most). */
void rsyslogd_collect(const char *marker, struct got *g);
void rsyslogd_wait(const char *marker, int n, struct got *g);
/* The first output line holding @marker anywhere (@ms at most; it fails
 * the test if none arrived), malloc'ed. */
char *rsyslogd_line_with(const char *marker, unsigned ms);

/* The header fields of @line, rsyslogd's output for @rec sent in RFC 5424
 * at @pri by a syslog console of this program: pri, facility, severity,
 * timestamp (@rec's time, UTC, in microseconds), hostname, app, pid, no
 * MSGID. The timestamp it wanted goes into @stamp (@n bytes; NULL: not
 * wanted), for a check of the raw message made of the same reading. */
void rsyslogd_assert_header(const char *line, int pri, const struct pk_record *rec, char *stamp,
			    size_t n);

/* The dictionary of the record rsyslogd_assert_fields() checks: a name
 * with a sign in its value, and a value with each of the three characters
 * RFC 5424 escapes. */
#define DAEMON_FIELDS_DICT "SUBSYSTEM=net\0DEVICE=+net:eth0\0Q=a\"b]c\\d"

/*
 * @line, rsyslogd's output for @rec, which was logged at facility 3, level
 * 4 with DAEMON_FIELDS_DICT and the text @text and sent in RFC 5424 by a
 * syslog console of this program, arrived through @inputname: each field
 * exactly (PRI, facility, severity, timestamp, hostname, app, pid, no
 * MSGID, the structured data of @rec's seq, tid and dictionary, escaped),
 * and msg @text after the BOM.
 */
void rsyslogd_assert_fields(const char *line, const char *inputname, const struct pk_record *rec,
			    const char *text);

/* The msg of every output line holding "@tag NUMBER": how many lines, how
 * many distinct numbers below @n, and the other lines holding @tag. */
struct tally {
	int lines, distinct, dups;
	unsigned char *seen;
	char other[8][256];
	int nother;
};

void rsyslogd_tally(const char *tag, int n, struct tally *t);
/* Until @want distinct numbered lines of @tag arrived (@ms at most). */
void rsyslogd_wait_tally(const char *tag, int n, int want, unsigned ms, struct tally *t);
/* The first ten numbers below @n that did not arrive, " 3 17 ...". */
void tally_first_missing(const struct tally *t, int n, char *out, size_t cap);

/* ------------------------------------------------ systemd-journald -- */

/*
 * systemd-journald in private mount and pid namespaces (unshare; needs
 * root): its fixed paths (/run/systemd, /run/log, /var/log/journal,
 * /etc/systemd/journald.conf) are bind mounts of the test directory, so
 * its socket is a file of ours and its volatile journal is read back with
 * journalctl --directory -o json.
 */

/* A test's set-up (cmocka's): a fresh test directory and journald ready
 * (a probe message read back), or daemon_unavailable(); its tear-down:
 * journald stopped (SIGTERM), the directory removed. */
int journald_test_setup(void **state);
int journald_test_teardown(void **state);
#define journald_unit_test(f)                                                                      \
	cmocka_unit_test_setup_teardown(f, journald_test_setup, journald_test_teardown)
/* The path of its native socket, a journal console's target. */
const char *journald_socket(void);
/* All entries, journalctl -o json, one per line; malloc'ed (NULL: none). */
char *journald_entries(void);
/* The entries whose MESSAGE starts with @prefix, once @n of them arrived
 * (20 s at most). */
void journald_wait(const char *prefix, int n, struct got *g);

/* ------------------------------------------------------ pk-forward -- */

/* Start the build's pk-forward on the test directory's @logname with the
 * cursor file "cursor" there, @extra (NULL or one option) and @target;
 * its stdout and stderr go to fwd.err. Its pid. */
pid_t daemon_pk_forward(const char *target, const char *logname, const char *extra);
/* Run pk-forward --once to its end (60 s at most); its exit status, or
 * 128 + the signal that ended it. */
int daemon_pk_forward_once(const char *target, const char *logname);

#endif
