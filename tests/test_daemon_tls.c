// SPDX-License-Identifier: MIT
/*
 * test_daemon_tls.c - TLS for the forwarding consoles, against real
 * programs: certificates made by the openssl command
 * (tests/daemon/tls_certs.sh: a test CA, a server certificate for
 * localhost and 127.0.0.1, one for another name, an expired one, one from
 * another CA, a client certificate), openssl s_server, and rsyslogd
 * (rsyslog-openssl's "ossl" netstream driver: imtcp over TLS, with and
 * without a required client certificate; imrelp with tls="on"), started
 * here unprivileged on 127.0.0.1 ports picked free:
 *   - the session layer (src/forward/tls.c) against s_server: a verified
 *     peer gets the bytes; a certificate of another CA, for another name,
 *     for another address or expired is refused with OpenSSL's words and
 *     s_server gets nothing; a client certificate the server requires;
 *   - without libssl.so.3 (PRINTK_TLS_LIBSSL=/nonexistent, in a child):
 *     -EPROTONOSUPPORT and "TLS needs libssl.so.3 (Debian: libssl3)";
 *   - a tls: console: every field of a record arrives exactly, and 500
 *     records all arrive; a client certificate the listener requires; a
 *     wrong CA file or a wrong peer name: refused, announced once with the
 *     reason, nothing arrives;
 *   - rsyslogd killed and restarted under a tls: console: every record
 *     arrives (a new handshake; what the broken connection took is sent
 *     again), also when the console had written its last record and has
 *     nothing to write into the dead connection;
 *   - relp:...,tls: records arrive over imrelp's TLS; a wrong peer name
 *     is refused and nothing arrives;
 *   - console=syslog:tls:... from PRINTK_OPTS, the options in any order;
 *   - pk-forward over TLS: every record once, the cursor kept and resumed.
 * Label "daemons".
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "forward/console_net.h"
#include "forward/tls.h"
#include "readers/reader.h"
#include "testutil.h"
#include "daemon_util.h"

/*
 * Under AddressSanitizer: librelp 1.11 keeps, for each RELP-over-TLS
 * connection refused or broken, its OpenSSL session and its list of
 * permitted peers (docs/forwarding.md, "TLS"); those leaks are librelp's
 * and are left out of the report, found by librelp's frames (the slow
 * unwinder reaches them through libcrypto, which has no frame pointers).
 * Used only by the sanitizer's runtime.
 */
const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);

const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

const char *__lsan_default_suppressions(void)
{
	return "leak:librelp.so.0\n";
}

static char certs[256]; /* the certificates' directory */
static int tcp2_port;	/* imtcp over TLS that requires a client certificate */

static const char *cert(const char *name)
{
	static char b[16][512];
	static int i;

	i = (i + 1) % 16;
	snprintf(b[i], sizeof(b[i]), "%s/%s", certs, name);
	return b[i];
}

/* ------------------------------------------------------ certificates -- */

static int make_certs(void)
{
	const char *src = getenv("PRINTK_SOURCE_DIR");
	char script[512], log[512];

	snprintf(certs, sizeof(certs), "/tmp/printk-tls-XXXXXX");
	if (!src || !mkdtemp(certs)) {
		fprintf(stderr, "test_daemon_tls: no PRINTK_SOURCE_DIR or no temporary directory\n");
		return -1;
	}
	snprintf(script, sizeof(script), "%s/tests/daemon/tls_certs.sh", src);
	snprintf(log, sizeof(log), "%s/make.log", certs);

	const char *argv[] = { "bash", script, certs, NULL };
	pid_t pid = spawn_logged(argv, log, NULL);
	int st = -1;

	if (pid > 0)
		waitpid(pid, &st, 0);
	if (pid <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		char *said = test_slurp(log, NULL);

		fprintf(stderr, "test_daemon_tls: the certificates could not be made (the openssl command; Debian: openssl): %s\n",
			said ? said : "");
		free(said);
		return -1;
	}
	return 0;
}

static void remove_certs(void)
{
	if (getenv("PRINTK_KEEP_TEST_DIR"))
		return;

	const char *argv[] = { "rm", "-rf", certs, NULL };
	pid_t pid = spawn_logged(argv, NULL, NULL);

	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* ------------------------------------------------------- s_server -- */

struct sserver {
	pid_t pid;
	int port;
	int stdin_w; /* s_server ends its session at the end of its input: kept open */
	char out[512];
};

/* openssl s_server with @crt/@key; @verify: it requires a client
 * certificate of the test CA. What it receives goes to its output file. */
static void sserver_start(struct sserver *s, const char *crt, const char *key, int verify)
{
	static int n;

	s->port = daemon_free_port(SOCK_STREAM);
	snprintf(s->out, sizeof(s->out), "%s/s_server.%d.out", certs, n++);

	char accept[32];

	snprintf(accept, sizeof(accept), "127.0.0.1:%d", s->port);

	const char *argv[] = { "openssl", "s_server", "-accept", accept, "-cert", crt, "-key", key,
			       "-quiet", verify ? "-Verify" : NULL, "1", "-CAfile", cert("ca.pem"),
			       NULL };

	int in[2], out = open(s->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	posix_spawn_file_actions_t fa;
	extern char **environ;

	assert_true(out >= 0);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	posix_spawn_file_actions_adddup2(&fa, out, 2);
	if (posix_spawnp(&s->pid, argv[0], &fa, NULL, (char *const *)argv, environ))
		s->pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out);
	s->stdin_w = in[1];
	if (s->pid <= 0)
		fail_msg("openssl s_server could not be started (Debian: openssl)");
	for (int i = 0; i < 1000 && !daemon_tcp_accepts(s->port); i++) {
		struct timespec ts = { 0, 10000000 };

		if (waitpid(s->pid, NULL, WNOHANG) == s->pid)
			fail_msg("openssl s_server ended: %s", test_slurp(s->out, NULL));
		nanosleep(&ts, NULL);
	}
	if (!daemon_tcp_accepts(s->port))
		fail_msg("openssl s_server does not accept on %d within 10 s", s->port);
}

static void sserver_stop(struct sserver *s)
{
	int st;

	kill(s->pid, SIGTERM);
	test_reap(s->pid, &st, 10000);
	close(s->stdin_w);
}

/* A connected TCP socket to 127.0.0.1:@port. */
static int tcp_to(int port)
{
	struct sockaddr_in a = { 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* s_server's output holds @want (within 10 s). */
static void sserver_got(struct sserver *s, const char *want)
{
	char *said = NULL;

	for (int i = 0; i < 1000; i++) {
		free(said);
		said = test_slurp(s->out, NULL);
		if (said && strstr(said, want))
			break;
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	if (!said || !strstr(said, want))
		fail_msg("s_server did not get '%s': %s", want, said ? said : "(nothing)");
	free(said);
}

/* One session to a fresh s_server showing @crt: its answer and why. */
static int session_to(const char *crt, const char *key, const char *peer, const char *ca,
		      char *why, size_t why_len, const char *payload)
{
	struct sserver s;
	struct pk_tls_config cfg = { ca, NULL, NULL };
	struct pk_tls_ctx *ctx;
	struct pk_tls *t = NULL;

	sserver_start(&s, cert(crt), cert(key), 0);
	assert_int_equal(pk_tls_ctx_new(&ctx, &cfg, why, why_len), 0);

	int fd = tcp_to(s.port);
	int err = pk_tls_connect(&t, ctx, fd, peer, 10000, why, why_len);

	if (!err) {
		assert_int_equal(pk_tls_write(t, payload, strlen(payload)), 0);
		assert_int_equal(pk_tls_peer_gone(t), 0);
		pk_tls_free(t, 1);
		sserver_got(&s, payload);
	}
	close(fd);
	sserver_stop(&s);
	if (err) {
		/* nothing reached it (T1) */
		char *said = test_slurp(s.out, NULL);

		if (said && strstr(said, payload))
			fail_msg("a refused session delivered: %s", said);
		free(said);
	}
	pk_tls_ctx_free(ctx);
	return err;
}

static void test_session_verify(void **state)
{
	(void)state;
	char why[200] = "";

	assert_int_equal(session_to("server.pem", "server.key", "localhost", cert("ca.pem"), why,
				    sizeof(why), "SV-by-name\n"),
			 0);
	assert_int_equal(session_to("server.pem", "server.key", "127.0.0.1", cert("ca.pem"), why,
				    sizeof(why), "SV-by-address\n"),
			 0);

	assert_int_equal(session_to("other.pem", "other.key", "localhost", cert("ca.pem"), why,
				    sizeof(why), "SV-other-ca\n"),
			 -PK_TLS_EREFUSED);
	assert_string_equal(why, "certificate refused: unable to get local issuer certificate");
	assert_int_equal(session_to("server.pem", "server.key", "localhost", cert("other-ca.pem"),
				    why, sizeof(why), "SV-wrong-ca-file\n"),
			 -PK_TLS_EREFUSED);
	assert_string_equal(why, "certificate refused: unable to get local issuer certificate");
	assert_int_equal(session_to("wrongname.pem", "wrongname.key", "localhost", cert("ca.pem"),
				    why, sizeof(why), "SV-wrong-name\n"),
			 -PK_TLS_EREFUSED);
	assert_string_equal(why, "certificate refused: hostname mismatch");
	assert_int_equal(session_to("server.pem", "server.key", "127.0.0.2", cert("ca.pem"), why,
				    sizeof(why), "SV-wrong-address\n"),
			 -PK_TLS_EREFUSED);
	assert_string_equal(why, "certificate refused: IP address mismatch");
	assert_int_equal(session_to("expired.pem", "expired.key", "localhost", cert("ca.pem"), why,
				    sizeof(why), "SV-expired\n"),
			 -PK_TLS_EREFUSED);
	assert_string_equal(why, "certificate refused: certificate has expired");
}

static void test_session_client_cert(void **state)
{
	(void)state;
	struct sserver s;
	struct pk_tls_config cfg = { cert("ca.pem"), cert("client.pem"), cert("client.key") };
	struct pk_tls_ctx *ctx;
	struct pk_tls *t;
	char why[200] = "";

	sserver_start(&s, cert("server.pem"), cert("server.key"), 1);
	if (pk_tls_ctx_new(&ctx, &cfg, why, sizeof(why)))
		fail_msg("%s", why);

	int fd = tcp_to(s.port);

	assert_int_equal(pk_tls_connect(&t, ctx, fd, "localhost", 10000, why, sizeof(why)), 0);
	assert_int_equal(pk_tls_write(t, "SC-client-cert\n", 15), 0);
	pk_tls_free(t, 1);
	sserver_got(&s, "SC-client-cert\n");
	close(fd);
	sserver_stop(&s);
	pk_tls_ctx_free(ctx);

	/* files that cannot be used: said at once, naming the option */
	struct pk_tls_config bad = { cert("nonexistent.pem"), NULL, NULL };

	assert_int_equal(pk_tls_ctx_new(&ctx, &bad, why, sizeof(why)), -EINVAL);
	assert_true(!strncmp(why, "ca=", 3) && strstr(why, "nonexistent.pem: "));
	struct pk_tls_config mismatch = { cert("ca.pem"), cert("client.pem"), cert("server.key") };

	assert_int_equal(pk_tls_ctx_new(&ctx, &mismatch, why, sizeof(why)), -EINVAL);
	assert_true(!strncmp(why, "key=", 4));
}

/* In a child run with PRINTK_TLS_LIBSSL=/nonexistent: 0 if every answer is
 * the one without the library, else the number of the check that failed. */
static int no_libssl_child(void)
{
	struct console *con;
	char why[200] = "";
	struct pk_tls_config cfg = { NULL, NULL, NULL };
	struct pk_tls_ctx *ctx;

	if (pk_tls_available() != -EPROTONOSUPPORT)
		return 2;
	if (pk_tls_ctx_new(&ctx, &cfg, why, sizeof(why)) != -EPROTONOSUPPORT ||
	    strcmp(why, PK_TLS_NEEDS))
		return 3;

	int err = pk_console_syslog_create(&con, "tls:127.0.0.1:6514", PK_SYSLOG_RFC5424, 0);

	if (err != -EPROTONOSUPPORT)
		return 4;
	if (strcmp(pk_net_create_strerror(err), PK_TLS_NEEDS))
		return 5;
	/* the other targets do not care */
	if (pk_console_syslog_create(&con, "tcp:127.0.0.1:6514", PK_SYSLOG_RFC5424, 0))
		return 6;
	pk_console_destroy(con);
	return 0;
}

static void test_no_libssl(void **state)
{
	(void)state;
	char self[512];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st;

	assert_true(k > 0);
	self[k] = '\0';

	const char *argv[] = { self, "--no-libssl", NULL };

	setenv(PK_TLS_LIBSSL_ENV, "/nonexistent/libssl.so.3", 1);

	pid_t pid = spawn_logged(argv, NULL, NULL);

	unsetenv(PK_TLS_LIBSSL_ENV);
	assert_true(pid > 0);
	test_reap(pid, &st, 20000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* here, with the library */
	assert_int_equal(pk_tls_available(), 0);
}

/* ------------------------------------------------------- rsyslogd -- */

static void write_conf(void)
{
	char inputs[2048];

	tcp2_port = daemon_free_port(SOCK_STREAM);
	snprintf(inputs, sizeof(inputs),
		 "global(DefaultNetstreamDriverCAFile=\"%s\" DefaultNetstreamDriverCertFile=\"%s\" "
		 "DefaultNetstreamDriverKeyFile=\"%s\")\n"
		 "main_queue(queue.type=\"Direct\")\n"
		 "module(load=\"imtcp\" StreamDriver.Name=\"ossl\" StreamDriver.Mode=\"1\" "
		 "StreamDriver.AuthMode=\"anon\")\n"
		 "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%d\")\n"
		 "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%d\" "
		 "streamDriver.authMode=\"x509/name\" permittedPeer=[\"client\"])\n"
		 "module(load=\"imrelp\" tls.tlslib=\"openssl\")\n"
		 "input(type=\"imrelp\" address=\"127.0.0.1\" port=\"%d\" tls=\"on\" "
		 "tls.cacert=\"%s\" tls.mycert=\"%s\" tls.myprivkey=\"%s\")\n",
		 cert("ca.pem"), cert("server.pem"), cert("server.key"), rsyslogd_port("tcp"),
		 tcp2_port, rsyslogd_port("relp"), cert("ca.pem"), cert("server.pem"),
		 cert("server.key"));
	rsyslogd_write_conf(inputs, "\n           asyncWriting=\"off\" flushOnTXEnd=\"on\"");
}

static int rs_ready(void)
{
	return daemon_tcp_accepts(rsyslogd_port("tcp")) && daemon_tcp_accepts(tcp2_port) &&
	       daemon_tcp_accepts(rsyslogd_port("relp"));
}

static char target_buf[1024];

static const char *tls_target(int port, const char *opts)
{
	snprintf(target_buf, sizeof(target_buf), "tls:127.0.0.1:%d,%s", port, opts);
	return target_buf;
}

static struct console *make_console(const char *target)
{
	struct console *con;
	int err = pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0);

	if (err)
		fail_msg("%s: %d (%s)", target, err, pk_net_create_strerror(err));
	assert_int_equal(pk_register_console(con), 0);
	return con;
}

static void test_tls_console_fields(void **state)
{
	(void)state;
	char opts[600];

	snprintf(opts, sizeof(opts), "ca=%s", cert("ca.pem"));

	struct console *con = make_console(tls_target(rsyslogd_port("tcp"), opts));

	pk_printk_emit(3, 4, DAEMON_FIELDS_DICT, sizeof(DAEMON_FIELDS_DICT) - 1,
		       "TF-fields first line\nsecond line");
	for (int i = 0; i < 500; i++)
		pk_printk_emit(1, 6, NULL, 0, "TN %d\n", i);
	assert_int_equal(pk_pr_flush(10000, 0), 1);

	char *line = rsyslogd_line_with("TF-fields", 10000);
	struct pk_record rec;

	daemon_find_record("TF-fields", &rec);
	rsyslogd_assert_fields(line, "imtcp", &rec, "TF-fields first line\nsecond line");
	free(line);

	struct tally tl = { 0 };

	rsyslogd_wait_tally("TN", 500, 500, 20000, &tl);
	assert_int_equal(tl.distinct, 500);
	assert_int_equal(tl.lines, 500);

	struct pk_console_stats st;

	assert_int_equal(pk_console_stats(con, &st), 0);
	assert_int_equal(st.state, PK_CONSOLE_DELIVERING);
	assert_int_equal(st.changes, 0);
	free(tl.seen);
	daemon_drop_console(con);
}

static void test_tls_console_client_cert(void **state)
{
	(void)state;
	char opts[900];

	snprintf(opts, sizeof(opts), "ca=%s,cert=%s,key=%s,peer=localhost", cert("ca.pem"),
		 cert("client.pem"), cert("client.key"));

	struct console *con = make_console(tls_target(tcp2_port, opts));

	pk_printk_emit(1, 6, NULL, 0, "TC-client-cert\n");
	assert_int_equal(pk_pr_flush(10000, 0), 1);

	char *line = rsyslogd_line_with("TC-client-cert", 10000);

	json_assert_str(line, "msg", "\xef\xbb\xbfTC-client-cert");
	free(line);
	daemon_drop_console(con);
}

/* A console that must be refused: the state, the reason announced once
 * (a record of printk's log holding @announced) over several attempts,
 * nothing at rsyslogd. */
static void refused(const char *target, const char *marker, int err, const char *announced)
{
	struct console *con = make_console(target);
	struct pk_console_stats st = { 0 };
	struct pk_forward_stats fs = { 0 };

	pk_printk_emit(1, 6, NULL, 0, "%s\n", marker);
	/* three attempts: the first, then the backoff's (100, 200 ms) */
	for (int i = 0; i < 2000 && fs.send_errors < 3; i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
		assert_int_equal(pk_console_forward_stats(con, &fs), 0);
	}
	assert_int_equal(pk_console_stats(con, &st), 0);
	if (fs.send_errors < 3)
		fail_msg("%s: %llu attempts failed; state %d, error %d, %llu delivered", target,
			 (unsigned long long)fs.send_errors, st.state, st.last_error,
			 (unsigned long long)st.delivered);
	assert_int_equal(st.state, PK_CONSOLE_CANNOT_CONNECT);
	assert_int_equal(st.last_error, err);
	assert_int_equal(st.changes, 1);
	assert_int_equal(st.delivered, 0);

	struct pk_log *log = pk_printk_log();
	struct pk_record rec;
	int found = 0;

	for (uint64_t seq = 0; pk_log_read(log, seq, &rec, 0) == 0; seq = rec.seq + 1)
		found += strstr(rec.text, announced) != NULL;
	if (found != 1)
		fail_msg("%d notices '%s'", found, announced);
	daemon_drop_console(con);

	char *out = test_slurp(test_dir_path("messages.jsonl"), NULL);

	if (out && strstr(out, marker))
		fail_msg("a refused console delivered: %s", out);
	free(out);
}

static void test_tls_console_refused(void **state)
{
	(void)state;
	char opts[600], announced[600];
	int port = rsyslogd_port("tcp");

	snprintf(opts, sizeof(opts), "ca=%s", cert("other-ca.pem"));
	snprintf(announced, sizeof(announced),
		 "printk: console [syslog] cannot reach tls:127.0.0.1:%d: certificate refused: self-signed certificate in certificate chain (",
		 port);
	refused(tls_target(port, opts), "TR-wrong-ca", -PK_TLS_EREFUSED, announced);

	snprintf(opts, sizeof(opts), "peer=wrong.example,ca=%s", cert("ca.pem"));
	snprintf(announced, sizeof(announced),
		 "printk: console [syslog] cannot reach tls:127.0.0.1:%d: certificate refused: hostname mismatch (",
		 port);
	refused(tls_target(port, opts), "TR-wrong-name", -PK_TLS_EREFUSED, announced);

	/* the listener requires a client certificate: told before sending */
	snprintf(opts, sizeof(opts), "ca=%s", cert("ca.pem"));
	snprintf(announced, sizeof(announced),
		 "printk: console [syslog] cannot reach tls:127.0.0.1:%d: refused by the peer: tlsv13 alert certificate required (",
		 tcp2_port);
	refused(tls_target(tcp2_port, opts), "TR-no-client-cert", -PK_TLS_EREFUSED, announced);
}

/* rsyslogd killed (SIGKILL) while a tls: console sends 5,000 records (or
 * once it wrote them all into the connection: rsyslogd's TLS input lags),
 * and started again: with no record after the restart, a new connection,
 * a new handshake, and every record arrives (what the broken connection
 * may have taken is sent again: at least once, as over TCP; a console
 * with nothing left to write watches its connection, console_net.c N8);
 * the break and the reconnection are announced. */
#define N_KILL 5000

/* A tls: console to rsyslogd that checks it against ca.pem, its window
 * kept a minute, as in test_daemon_relp's kill: the tests check the
 * window, not how far a loaded rsyslogd lags. */
static struct console *make_tls_console_kept(void)
{
	char opts[600];

	snprintf(opts, sizeof(opts), "ca=%s", cert("ca.pem"));

	struct console *con = make_console(tls_target(rsyslogd_port("tcp"), opts));

	pk_console_net_set_resend_slack(con, 60000);
	return con;
}

/* All @n records of @t arrived; if not, fails naming the first missing
 * (@note follows the counts). */
static void assert_all_arrived(const struct tally *t, int n, const char *note)
{
	if (t->distinct != n) {
		char miss[128];

		tally_first_missing(t, n, miss, sizeof(miss));
		fail_msg("%d of %d arrived%s; missing:%s", t->distinct, n, note, miss);
	}
}

/* The console lost its connection and delivers again (two changes of
 * state at least); the records can be on disk before its thread announced
 * the reconnection: waited for, a minute at most. */
static void wait_delivering_again(struct console *con, struct pk_console_stats *cs)
{
	uint64_t start = now_ms();

	do {
		assert_int_equal(pk_console_stats(con, cs), 0);
		if (cs->state == PK_CONSOLE_DELIVERING && cs->changes >= 2)
			break;
		usleep(20000);
	} while (now_ms() - start < 60000);
	assert_int_equal(cs->state, PK_CONSOLE_DELIVERING);
	assert_true(cs->changes >= 2);
}

static void test_tls_console_restart(void **state)
{
	(void)state;
	struct tally t = { 0 };
	struct console *con = make_tls_console_kept();

	for (int i = 0; i < N_KILL; i++)
		pk_printk_emit(1, 5, NULL, 0, "TK %d\n", i);
	rsyslogd_wait_tally("TK", N_KILL, N_KILL / 10, 20000, &t);
	rsyslogd_stop(SIGKILL);
	rsyslogd_tally("TK", N_KILL, &t);

	int before = t.distinct;

	rsyslogd_restart();
	rsyslogd_wait_tally("TK", N_KILL, N_KILL, 120000, &t);

	char note[64];

	snprintf(note, sizeof(note), " (%d before the kill)", before);
	assert_all_arrived(&t, N_KILL, note);
	print_message("tls: console, rsyslogd killed after %d of %d: all arrived, %d twice\n", before,
		      N_KILL, t.dups);
	/* Lost and reconnected, announced, even when all of them had arrived
	 * before the kill. */
	struct pk_console_stats cs;
	struct pk_forward_stats fs;

	wait_delivering_again(con, &cs);
	assert_int_equal(pk_console_forward_stats(con, &fs), 0);
	assert_true(fs.connects >= 2);
	free(t.seen);
	daemon_drop_console(con);
}

/* rsyslogd killed with records the tls: console wrote still unread (it
 * was stopped, every thread, while they were written), after the console
 * wrote its last one: the console notices the break with nothing to
 * write (N8), says so, makes a new session once rsyslogd is back and
 * sends every record again. */
#define N_IDLE 300

static void test_tls_console_kill_idle(void **state)
{
	(void)state;
	struct tally t = { 0 };
	struct console *con = make_tls_console_kept();

	pk_printk_emit(1, 5, NULL, 0, "TI %d\n", 0);
	rsyslogd_wait_tally("TI", N_IDLE, 1, 20000, &t);
	assert_int_equal(t.distinct, 1);
	rsyslogd_freeze();
	for (int i = 1; i < N_IDLE; i++)
		pk_printk_emit(1, 5, NULL, 0, "TI %d\n", i);
	assert_int_equal(pk_pr_flush(20000, 0), 1); /* all written: nothing more to write */
	rsyslogd_stop(SIGKILL);
	rsyslogd_restart();
	rsyslogd_wait_tally("TI", N_IDLE, N_IDLE, 60000, &t);
	assert_all_arrived(&t, N_IDLE, "");

	struct pk_console_stats cs;

	wait_delivering_again(con, &cs);
	assert_int_equal(cs.lost, 0);
	free(t.seen);
	daemon_drop_console(con);
}

static void test_relp_tls(void **state)
{
	(void)state;
	char target[900];

	/* librelp checks the server only when it shows a certificate itself */
	struct console *c;

	snprintf(target, sizeof(target), "relp:127.0.0.1:%d,tls,ca=%s", rsyslogd_port("relp"),
		 cert("ca.pem"));
	assert_int_equal(pk_console_syslog_create(&c, target, PK_SYSLOG_RFC5424, 0), -EINVAL);
	assert_string_equal(pk_net_create_strerror(-EINVAL),
			    "relp: with ,tls needs cert= and key= (librelp checks the server's certificate only then)");

	snprintf(target, sizeof(target), "relp:127.0.0.1:%d,tls,ca=%s,cert=%s,key=%s,peer=localhost",
		 rsyslogd_port("relp"), cert("ca.pem"), cert("client.pem"), cert("client.key"));

	struct console *con = make_console(target);

	pk_printk_emit(1, 6, NULL, 0, "RT-relp-tls\n");
	for (int i = 0; i < 200; i++)
		pk_printk_emit(1, 6, NULL, 0, "RN %d\n", i);
	assert_int_equal(pk_pr_flush(10000, 0), 1);

	char *line = rsyslogd_line_with("RT-relp-tls", 10000);

	json_assert_str(line, "inputname", "imrelp");
	json_assert_str(line, "msg", "\xef\xbb\xbfRT-relp-tls");
	free(line);

	struct tally tl = { 0 };

	rsyslogd_wait_tally("RN", 200, 200, 20000, &tl);
	assert_int_equal(tl.distinct, 200);
	free(tl.seen);
	daemon_drop_console(con);

	/* a wrong name: refused, nothing arrives */
	snprintf(target, sizeof(target), "relp:127.0.0.1:%d,tls,peer=wrong.example,ca=%s,cert=%s,key=%s",
		 rsyslogd_port("relp"), cert("ca.pem"), cert("client.pem"), cert("client.key"));
	char announced[200];

	snprintf(announced, sizeof(announced), "cannot reach relp:127.0.0.1:%d: certificate refused",
		 rsyslogd_port("relp"));
	refused(target, "RT-wrong-name", -PK_TLS_EREFUSED, announced);
}

static void test_printk_opts(void **state)
{
	(void)state;
	char opts[1200];

	/* TLS options before and after the format: any order */
	snprintf(opts, sizeof(opts),
		 "console=syslog:tls:127.0.0.1:%d,peer=localhost,rfc3164,ca=%s,bom=no loglevel=8",
		 rsyslogd_port("tcp"), cert("ca.pem"));
	daemon_run_opts_child(opts);

	char *line = rsyslogd_line_with("OP-tls-child via PRINTK_OPTS", 10000);

	json_assert_str(line, "inputname", "imtcp");
	free(line);
}

/* ------------------------------------------------------- pk-forward -- */

static void test_forward_tls(void **state)
{
	(void)state;
	struct pk_log *log;
	char target[900];
	struct tally tl = { 0 };

	assert_int_equal(pk_log_open_file(&log, test_dir_path("fwd.log"), 1 << 20, 0), 0);
	for (int i = 0; i < 300; i++) {
		char b[32];
		int k = snprintf(b, sizeof(b), "FT %d", i);

		assert_int_equal(pk_log_store(log, 1, 6, b, (size_t)k, "K=v", 4), 0);
	}
	snprintf(target, sizeof(target), "tls:127.0.0.1:%d,ca=%s", rsyslogd_port("tcp"),
		 cert("ca.pem"));
	assert_int_equal(daemon_pk_forward_once(target, "fwd.log"), 0);

	char *c = test_slurp(test_dir_path("cursor"), NULL);

	assert_non_null(c);
	assert_non_null(strstr(c, "next-seq 300\n"));
	free(c);
	for (int i = 300; i < 400; i++) {
		char b[32];
		int k = snprintf(b, sizeof(b), "FT %d", i);

		assert_int_equal(pk_log_store(log, 1, 6, b, (size_t)k, "K=v", 4), 0);
	}
	/* resumed from the cursor: the new ones only */
	assert_int_equal(daemon_pk_forward_once(target, "fwd.log"), 0);
	c = test_slurp(test_dir_path("cursor"), NULL);
	assert_non_null(strstr(c, "next-seq 400\n"));
	free(c);
	rsyslogd_wait_tally("FT", 400, 400, 20000, &tl);
	assert_int_equal(tl.distinct, 400);
	assert_int_equal(tl.lines, 400);
	assert_int_equal(tl.dups, 0);

	char *line = rsyslogd_line_with("FT 399\"", 5000), want[128];

	/* the writer's pid and tid come from the log, not from pk-forward */
	snprintf(want, sizeof(want), "[printk@32473 seq=\"399\" tid=\"%d\" K=\"v\"]",
		 (int)getpid());
	json_assert_str(line, "structured_data", want);
	free(line);
	free(tl.seen);
	pk_log_destroy(log);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--opts-child"))
		return daemon_opts_child("OP-tls-child via PRINTK_OPTS\n");
	if (argc > 1 && !strcmp(argv[1], "--no-libssl"))
		return no_libssl_child();

	if (daemon_test_init(1 << 22))
		return 1;
	if (getenv("PRINTK_TEST_FILTER")) /* one test by name, by hand */
		cmocka_set_test_filter(getenv("PRINTK_TEST_FILTER"));
	if (make_certs())
		return 1;
	rsyslogd_configure("tls", write_conf, rs_ready, "rsyslog, rsyslog-openssl, rsyslog-relp");

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_verify),
		cmocka_unit_test(test_session_client_cert),
		cmocka_unit_test(test_no_libssl),
		rsyslogd_unit_test(test_tls_console_fields),
		rsyslogd_unit_test(test_tls_console_client_cert),
		rsyslogd_unit_test(test_tls_console_refused),
		rsyslogd_unit_test(test_tls_console_restart),
		rsyslogd_unit_test(test_tls_console_kill_idle),
		rsyslogd_unit_test(test_relp_tls),
		rsyslogd_unit_test(test_printk_opts),
		rsyslogd_unit_test(test_forward_tls),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	remove_certs();
	return r;
}
