// SPDX-License-Identifier: MIT
/*
 * tls.c - TLS client sessions for the forwarding consoles (RFC 5425's
 * syslog over TLS), through OpenSSL 3's libssl.so.3, opened with dlopen()
 * on first use: the core links only libc and pthreads, and a program that
 * never forwards over TLS never maps OpenSSL.
 *
 * Owns: the TLS part of a target's syntax (its options, the default port),
 * loading the library (once, for every thread), the client context
 * (CA file, optional certificate and key, TLS 1.2 at least, the peer's
 * chain verified), the session on a socket the caller connected (SNI,
 * the name check, a handshake bounded in time), writing, noticing that the
 * peer went away, and the close.
 *
 * OpenSSL's header is not used: the few functions and constants below are
 * OpenSSL 3's ABI, which does not change within 3.x (the soname says so),
 * and the build then needs no libssl-dev. tests/test_tls_abi.c compares
 * the constants (tls_abi.h) with the header when it is installed.
 *
 * Invariants:
 *   T1 Nothing is sent before the handshake verified the peer's chain to
 *      the CA file and its name (SSL_VERIFY_PEER and the host or IP check
 *      make SSL_connect() fail otherwise); a refusal says why in OpenSSL's
 *      own words (X509_verify_cert_error_string()).
 *   T2 No call waits without bound: the handshake runs non-blocking under
 *      poll() with a deadline; writes run on the blocking socket, bounded by
 *      the caller's SO_SNDTIMEO; the peer check never blocks.
 *   T3 OpenSSL writes with write(), not send(MSG_NOSIGNAL): SIGPIPE is
 *      blocked in the calling thread around every call that may write, and
 *      one it raised is taken back, so a peer that went away never kills
 *      the program.
 *   T4 OpenSSL's error queue is per thread: cleared before each call whose
 *      errors are read, so a reason is this call's.
 *   T5 Over TLS 1.3 the handshake is over only once the server answered
 *      after the client's Finished (settle()).
 *   T6 OpenSSL is told not to tear itself down at exit (its atexit
 *      handler, registered after the library's own, would run first): a
 *      printer thread still draining at exit, or a console closing its
 *      session there, keeps a working library. The memory stays the
 *      process's until it ends, as a program's own OpenSSL would.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "format/vsprintf.h"
#include "forward/sigpipe.h"
#include "forward/tls.h"
#include "forward/tls_abi.h"

static struct {
	int (*init_ssl)(uint64_t, const void *);
	const void *(*client_method)(void);
	void *(*ctx_new)(const void *);
	void (*ctx_free)(void *);
	void (*ctx_set_verify)(void *, int, void *);
	int (*ctx_load_verify_locations)(void *, const char *, const char *);
	int (*ctx_default_verify_paths)(void *);
	int (*ctx_use_chain_file)(void *, const char *);
	int (*ctx_use_key_file)(void *, const char *, int);
	int (*ctx_check_key)(const void *);
	long (*ctx_ctrl)(void *, int, long, void *);
	void *(*ssl_new)(void *);
	void (*ssl_free)(void *);
	int (*set_fd)(void *, int);
	int (*set1_host)(void *, const char *);
	void *(*get0_param)(void *);
	long (*ssl_ctrl)(void *, int, long, void *);
	int (*connect)(void *);
	int (*write)(void *, const void *, int);
	int (*read)(void *, void *, int);
	int (*shutdown)(void *);
	int (*get_error)(const void *, int);
	long (*get_verify_result)(const void *);
	int (*version)(const void *);
	/* libcrypto's, found through libssl's dependencies */
	const char *(*verify_string)(long);
	unsigned long (*err_get)(void);
	const char *(*err_reason)(unsigned long);
	void (*err_clear)(void);
	int (*param_set1_ip_asc)(void *, const char *);
} ossl;

static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_ok;

static void tls_load(void)
{
	const char *name = secure_getenv(PK_TLS_LIBSSL_ENV);
	void *h = dlopen(name && *name ? name : PK_TLS_LIBSSL, RTLD_NOW | RTLD_LOCAL);
	int ok = 1;

	if (!h)
		return;
#define OSSL_SYM(field, sym)                                 \
	do {                                                 \
		void *f = dlsym(h, sym);                     \
		ok &= f != NULL;                             \
		memcpy(&ossl.field, &f, sizeof(ossl.field)); \
	} while (0)
	OSSL_SYM(init_ssl, "OPENSSL_init_ssl");
	OSSL_SYM(client_method, "TLS_client_method");
	OSSL_SYM(ctx_new, "SSL_CTX_new");
	OSSL_SYM(ctx_free, "SSL_CTX_free");
	OSSL_SYM(ctx_set_verify, "SSL_CTX_set_verify");
	OSSL_SYM(ctx_load_verify_locations, "SSL_CTX_load_verify_locations");
	OSSL_SYM(ctx_default_verify_paths, "SSL_CTX_set_default_verify_paths");
	OSSL_SYM(ctx_use_chain_file, "SSL_CTX_use_certificate_chain_file");
	OSSL_SYM(ctx_use_key_file, "SSL_CTX_use_PrivateKey_file");
	OSSL_SYM(ctx_check_key, "SSL_CTX_check_private_key");
	OSSL_SYM(ctx_ctrl, "SSL_CTX_ctrl");
	OSSL_SYM(ssl_new, "SSL_new");
	OSSL_SYM(ssl_free, "SSL_free");
	OSSL_SYM(set_fd, "SSL_set_fd");
	OSSL_SYM(set1_host, "SSL_set1_host");
	OSSL_SYM(get0_param, "SSL_get0_param");
	OSSL_SYM(ssl_ctrl, "SSL_ctrl");
	OSSL_SYM(connect, "SSL_connect");
	OSSL_SYM(write, "SSL_write");
	OSSL_SYM(read, "SSL_read");
	OSSL_SYM(shutdown, "SSL_shutdown");
	OSSL_SYM(get_error, "SSL_get_error");
	OSSL_SYM(get_verify_result, "SSL_get_verify_result");
	OSSL_SYM(version, "SSL_version");
	OSSL_SYM(verify_string, "X509_verify_cert_error_string");
	OSSL_SYM(err_get, "ERR_get_error");
	OSSL_SYM(err_reason, "ERR_reason_error_string");
	OSSL_SYM(err_clear, "ERR_clear_error");
	OSSL_SYM(param_set1_ip_asc, "X509_VERIFY_PARAM_set1_ip_asc");
#undef OSSL_SYM
	/* A library without one of them is not the one we know: unused, and
	 * never closed (its constructors ran; unloading gains nothing). T6:
	 * no clean-up of OpenSSL's at exit. */
	tls_ok = ok && ossl.init_ssl(OSSL_OPENSSL_INIT_NO_ATEXIT | OSSL_OPENSSL_INIT_LOAD_SSL_STRINGS |
					     OSSL_OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
				     NULL) == 1;
}

int pk_tls_available(void)
{
	pthread_once(&tls_once, tls_load);
	return tls_ok ? 0 : -EPROTONOSUPPORT;
}

struct pk_tls_ctx {
	void *ctx;
};

struct pk_tls {
	void *ssl;
	int fd;
	pid_t pid; /* the process that made it: only it may speak on it */
	char why[160]; /* pk_tls_read_timed(): why the session failed, or "" */
};

static void say(char *why, size_t why_len, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static void say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !why_len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* OpenSSL's reason for the first error queued (T4), or @dflt. */
static const char *first_reason(const char *dflt)
{
	unsigned long e = ossl.err_get();
	const char *r = e ? ossl.err_reason(e) : NULL;

	ossl.err_clear();
	return r ? r : dflt;
}

/* Why a file OpenSSL would not take is unusable: the system's words when
 * it cannot be read, else OpenSSL's (not PEM, no certificate in it...). */
static const char *file_reason(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		ossl.err_clear();
		return strerror(errno);
	}
	close(fd);
	return first_reason("not a PEM file of that kind");
}

int pk_tls_ctx_new(struct pk_tls_ctx **ctxp, const struct pk_tls_config *cfg, char *why,
		   size_t why_len)
{
	int err;

	if (!ctxp || !cfg || (!cfg->cert != !cfg->key))
		return -EINVAL;
	if ((err = pk_tls_available())) {
		say(why, why_len, "%s", PK_TLS_NEEDS);
		return err;
	}

	struct pk_tls_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	ossl.err_clear();
	if (!(c->ctx = ossl.ctx_new(ossl.client_method()))) {
		free(c);
		return -ENOMEM;
	}
	err = -EINVAL;
	ossl.ctx_set_verify(c->ctx, OSSL_SSL_VERIFY_PEER, NULL);
	if (ossl.ctx_ctrl(c->ctx, OSSL_SSL_CTRL_SET_MIN_PROTO_VERSION, OSSL_TLS1_2_VERSION, NULL) != 1)
		say(why, why_len, "TLS 1.2 refused by the library");
	else if (cfg->ca && ossl.ctx_load_verify_locations(c->ctx, cfg->ca, NULL) != 1)
		say(why, why_len, "ca=%.200s: %s", cfg->ca, file_reason(cfg->ca));
	else if (!cfg->ca && ossl.ctx_default_verify_paths(c->ctx) != 1)
		say(why, why_len, "the system's CA certificates: %s", first_reason("unusable"));
	else if (cfg->cert && ossl.ctx_use_chain_file(c->ctx, cfg->cert) != 1)
		say(why, why_len, "cert=%.200s: %s", cfg->cert, file_reason(cfg->cert));
	else if (cfg->key && ossl.ctx_use_key_file(c->ctx, cfg->key, OSSL_SSL_FILETYPE_PEM) != 1)
		say(why, why_len, "key=%.200s: %s", cfg->key, file_reason(cfg->key));
	else if (cfg->key && ossl.ctx_check_key(c->ctx) != 1)
		say(why, why_len, "key=%.200s: %s", cfg->key, first_reason("does not match cert="));
	else
		err = 0;
	ossl.err_clear();
	if (err) {
		ossl.ctx_free(c->ctx);
		free(c);
		return err;
	}
	*ctxp = c;
	return 0;
}

void pk_tls_ctx_free(struct pk_tls_ctx *ctx)
{
	if (!ctx)
		return;
	ossl.ctx_free(ctx->ctx);
	free(ctx);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int is_ip(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/*
 * T5: TLS 1.3 ends the handshake on the client's side before the server
 * has read the client's Finished and its certificate, when it asks for
 * one. A server then sends its session tickets, or an alert if it refused
 * the client's certificate: waiting for that (until @deadline, at most
 * SETTLE_MS) tells a refusal before anything is sent, where it would
 * otherwise show only as a connection closed after the first records. A
 * server that sends nothing after the handshake costs SETTLE_MS once per
 * connection.
 */
#define SETTLE_MS 1000

static int settle(struct pk_tls *s, int64_t deadline, char *why, size_t why_len)
{
	int64_t end = now_ms() + SETTLE_MS;
	char c;

	if (ossl.version(s->ssl) != OSSL_TLS1_3_VERSION)
		return 0;
	if (end > deadline)
		end = deadline;
	for (;;) {
		struct pollfd p = { s->fd, POLLIN, 0 };
		int left = (int)(end - now_ms()), r, e;

		if (left <= 0)
			return 0;
		if ((r = poll(&p, 1, left)) < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		ossl.err_clear();
		r = ossl.read(s->ssl, &c, 1);
		e = ossl.get_error(s->ssl, r);
		if (r > 0 || e == OSSL_SSL_ERROR_WANT_READ || e == OSSL_SSL_ERROR_WANT_WRITE) {
			ossl.err_clear();
			return 0; /* the server took the Finished */
		}
		say(why, why_len, "refused by the peer: %s", first_reason("it closed the connection"));
		return e == OSSL_SSL_ERROR_SSL ? -PK_TLS_EREFUSED : -ECONNRESET;
	}
}

/* The handshake, non-blocking under a deadline (T2). */
static int handshake(struct pk_tls *s, int timeout_ms, int wait_answer, char *why, size_t why_len)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int r, e, left, saved;

		ossl.err_clear();
		errno = 0;
		r = ossl.connect(s->ssl);
		saved = errno;
		if (r == 1)
			return wait_answer ? settle(s, deadline, why, why_len) : 0;
		e = ossl.get_error(s->ssl, r);
		if (e == OSSL_SSL_ERROR_WANT_READ || e == OSSL_SSL_ERROR_WANT_WRITE) {
			struct pollfd p = { s->fd, e == OSSL_SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0 };

			if ((left = (int)(deadline - now_ms())) <= 0) {
				say(why, why_len, "no TLS handshake within %d ms", timeout_ms);
				return -ETIMEDOUT;
			}
			if (poll(&p, 1, left) < 0 && errno != EINTR)
				return -errno;
			continue;
		}

		long v = ossl.get_verify_result(s->ssl);

		if (v != OSSL_X509_V_OK) { /* T1 */
			ossl.err_clear();
			say(why, why_len, "certificate refused: %s", ossl.verify_string(v));
			return -PK_TLS_EREFUSED;
		}
		if (e == OSSL_SSL_ERROR_SSL) {
			say(why, why_len, "TLS handshake failed: %s", first_reason("unknown error"));
			return -EPROTO;
		}
		ossl.err_clear();
		if (e == OSSL_SSL_ERROR_SYSCALL && saved && saved != EAGAIN) {
			say(why, why_len, "TLS handshake failed: %s", strerror(saved));
			return -saved;
		}
		say(why, why_len, "TLS handshake failed: the peer closed the connection");
		return -EPROTO;
	}
}

static int tls_connect(struct pk_tls **sp, struct pk_tls_ctx *ctx, int fd, const char *peer,
		       int timeout_ms, int wait_answer, char *why, size_t why_len)
{
	if (!sp || !ctx || fd < 0 || !peer || !*peer)
		return -EINVAL;

	struct pk_tls *s = calloc(1, sizeof(*s));
	int flags = fcntl(fd, F_GETFL), err = 0;
	struct pk_fwd_pipe_guard g;

	if (!s)
		return -ENOMEM;
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		free(s);
		return -errno;
	}
	s->fd = fd;
	s->pid = getpid();
	ossl.err_clear();
	if (!(s->ssl = ossl.ssl_new(ctx->ctx)) || ossl.set_fd(s->ssl, fd) != 1) {
		err = -ENOMEM;
	} else if (is_ip(peer)) {
		/* RFC 6066: no SNI for an address; it must be an iPAddress
		 * in the certificate's subjectAltName. */
		if (ossl.param_set1_ip_asc(ossl.get0_param(s->ssl), peer) != 1)
			err = -EINVAL;
	} else if (ossl.set1_host(s->ssl, peer) != 1 ||
		   ossl.ssl_ctrl(s->ssl, OSSL_SSL_CTRL_SET_TLSEXT_HOSTNAME,
				 OSSL_TLSEXT_NAMETYPE_host_name, (void *)peer) != 1) {
		err = -EINVAL;
	}
	if (err)
		say(why, why_len, "peer=%.200s: %s", peer, first_reason("not usable as a name"));
	if (!err) {
		pk_fwd_pipe_block(&g);
		err = handshake(s, timeout_ms, wait_answer, why, why_len);
		pk_fwd_pipe_restore(&g);
	}
	if (fcntl(fd, F_SETFL, flags) < 0 && !err)
		err = -errno;
	if (err) {
		if (s->ssl)
			ossl.ssl_free(s->ssl);
		free(s);
		return err;
	}
	*sp = s;
	return 0;
}

int pk_tls_connect(struct pk_tls **sp, struct pk_tls_ctx *ctx, int fd, const char *peer,
		   int timeout_ms, char *why, size_t why_len)
{
	return tls_connect(sp, ctx, fd, peer, timeout_ms, 1, why, why_len);
}

int pk_tls_connect_nowait(struct pk_tls **sp, struct pk_tls_ctx *ctx, int fd, const char *peer,
			  int timeout_ms, char *why, size_t why_len)
{
	return tls_connect(sp, ctx, fd, peer, timeout_ms, 0, why, why_len);
}

/*
 * One SSL_write() of the bytes at *@c (at most 1 GiB: its length is an int):
 * true when it wrote some, *@c and *@n moved past them; false with
 * SSL_get_error()'s code in *@e and the call's errno in *@saved.
 */
static bool write_some(struct pk_tls *s, const char **c, size_t *n, int *e, int *saved)
{
	int chunk = *n > (1u << 30) ? 1 << 30 : (int)*n;

	ossl.err_clear();
	errno = 0;

	int r = ossl.write(s->ssl, *c, chunk);

	*saved = errno;
	if (r > 0) {
		*c += r;
		*n -= (size_t)r;
		return true;
	}
	*e = ossl.get_error(s->ssl, r);
	ossl.err_clear();
	return false;
}

int pk_tls_write(struct pk_tls *s, const void *p, size_t n)
{
	const char *c = p;
	struct pk_fwd_pipe_guard g;
	int err = 0;

	if (!s)
		return -EINVAL;
	pk_fwd_pipe_block(&g);
	while (n && !err) {
		int e, saved;

		if (write_some(s, &c, &n, &e, &saved))
			continue;
		if (e == OSSL_SSL_ERROR_SYSCALL && saved == EINTR)
			continue; /* SSL_write() is retried with the same arguments */
		if (e == OSSL_SSL_ERROR_WANT_WRITE || e == OSSL_SSL_ERROR_WANT_READ ||
		    saved == EAGAIN || saved == EWOULDBLOCK)
			err = -ETIMEDOUT; /* SO_SNDTIMEO ran out */
		else if (e == OSSL_SSL_ERROR_SYSCALL && saved)
			err = -saved;
		else if (e == OSSL_SSL_ERROR_ZERO_RETURN)
			err = -ESHUTDOWN;
		else
			err = -EPIPE;
	}
	pk_fwd_pipe_restore(&g);
	return err;
}

/* Wait for what OpenSSL's @e asked for, until @deadline (T2). */
static int wait_for(struct pk_tls *s, int e, int64_t deadline)
{
	struct pollfd p = { s->fd, e == OSSL_SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, 0 };
	int left = (int)(deadline - now_ms());

	if (left <= 0)
		return -ETIMEDOUT;
	if (poll(&p, 1, left) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

int pk_tls_write_timed(struct pk_tls *s, const void *p, size_t n, int timeout_ms)
{
	const char *c = p;
	struct pk_fwd_pipe_guard g;
	int err = 0;
	int64_t deadline = now_ms() + timeout_ms;

	if (!s)
		return -EINVAL;
	pk_fwd_pipe_block(&g);
	while (n && !err) {
		int e, saved;

		if (write_some(s, &c, &n, &e, &saved)) {
			deadline = now_ms() + timeout_ms;
			continue;
		}
		if (e == OSSL_SSL_ERROR_WANT_WRITE || e == OSSL_SSL_ERROR_WANT_READ)
			err = wait_for(s, e, deadline); /* then the same arguments again */
		else if (e == OSSL_SSL_ERROR_SYSCALL && saved == EINTR)
			continue;
		else if (e == OSSL_SSL_ERROR_SYSCALL && saved)
			err = -saved;
		else
			err = -EPIPE;
	}
	pk_fwd_pipe_restore(&g);
	return err;
}

long pk_tls_read_timed(struct pk_tls *s, void *p, size_t n, int timeout_ms)
{
	struct pk_fwd_pipe_guard g;
	int64_t deadline = now_ms() + timeout_ms;
	long got = 0;

	if (!s || !n)
		return -EINVAL;
	pk_fwd_pipe_block(&g); /* T3: a read may answer (a key update) */
	for (;;) {
		int chunk = n > (1u << 30) ? 1 << 30 : (int)n, r, e, saved;

		ossl.err_clear();
		errno = 0;
		r = ossl.read(s->ssl, p, chunk);
		saved = errno;
		if (r > 0) {
			got = r;
			break;
		}
		e = ossl.get_error(s->ssl, r);
		if (e == OSSL_SSL_ERROR_WANT_READ || e == OSSL_SSL_ERROR_WANT_WRITE) {
			ossl.err_clear();
			if ((got = wait_for(s, e, deadline)) < 0)
				break;
			continue;
		}
		if (e == OSSL_SSL_ERROR_SYSCALL && saved == EINTR)
			continue;
		/* The peer's close_notify, or (OpenSSL 3: SSL_ERROR_SSL,
		 * "unexpected eof while reading"; or SYSCALL without errno)
		 * the connection ended without one. */
		if (e == OSSL_SSL_ERROR_ZERO_RETURN || (e == OSSL_SSL_ERROR_SYSCALL && !saved)) {
			got = 0;
		} else if (e == OSSL_SSL_ERROR_SYSCALL) {
			got = -saved;
		} else {
			/* An alert (a client certificate refused, when the
			 * handshake did not wait for it), or the end without
			 * close_notify: OpenSSL's words, for the caller. */
			const char *reason = first_reason("the peer closed the connection");

			say(s->why, sizeof(s->why), "%s%s",
			    strstr(reason, "alert") ? "refused by the peer: " : "", reason);
			got = -ECONNRESET;
		}
		ossl.err_clear();
		break;
	}
	pk_fwd_pipe_restore(&g);
	return got;
}

const char *pk_tls_why(const struct pk_tls *s)
{
	return s ? s->why : "";
}

int pk_tls_peer_gone(struct pk_tls *s)
{
	struct pollfd p = { s->fd, POLLIN | POLLRDHUP, 0 };
	int soerr = 0, flags;
	socklen_t sl = sizeof(soerr);

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if ((p.revents & POLLERR) && getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
		return -soerr;
	if (p.revents & (POLLHUP | POLLRDHUP))
		return -ESHUTDOWN;
	/* Readable: a syslog receiver sends nothing but TLS's own records
	 * (TLS 1.3 session tickets, an alert, close_notify); OpenSSL takes
	 * them. Non-blocking for that read only (T2). */
	if ((flags = fcntl(s->fd, F_GETFL)) < 0 || fcntl(s->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return 0;

	char c;
	int r, e, gone = 0;
	struct pk_fwd_pipe_guard g;

	pk_fwd_pipe_block(&g); /* T3: a read may answer (an alert, a key update) */
	for (;;) {
		ossl.err_clear();
		r = ossl.read(s->ssl, &c, 1);
		if (r > 0)
			continue; /* data from a receiver: ignored */
		e = ossl.get_error(s->ssl, r);
		gone = e == OSSL_SSL_ERROR_WANT_READ || e == OSSL_SSL_ERROR_WANT_WRITE ? 0 : -ESHUTDOWN;
		break;
	}
	ossl.err_clear();
	pk_fwd_pipe_restore(&g);
	fcntl(s->fd, F_SETFL, flags);
	return gone;
}

void pk_tls_free(struct pk_tls *s, int clean)
{
	if (!s)
		return;
	if (clean && s->pid == getpid()) {
		struct pk_fwd_pipe_guard g;

		/* close_notify only: not waiting for the peer's answer (a
		 * receiver that is gone must not hold us up; T2). */
		pk_fwd_pipe_block(&g);
		ossl.shutdown(s->ssl);
		pk_fwd_pipe_restore(&g);
	}
	ossl.err_clear();
	ossl.ssl_free(s->ssl);
	free(s);
}

/* ------------------------------------------------------- the target -- */

/* One option of @n bytes at @w into @t; 0 or -EINVAL. */
static int target_option(struct pk_tls_target *t, const char *w, size_t n, int is_relp, char *why,
			 size_t why_len)
{
	static const struct {
		const char *name;
		size_t off;
	} files[] = {
		{ "ca=", offsetof(struct pk_tls_target, ca) },
		{ "cert=", offsetof(struct pk_tls_target, cert) },
		{ "key=", offsetof(struct pk_tls_target, key) },
		{ "peer=", offsetof(struct pk_tls_target, peer) },
	};

	if (is_relp && n == 3 && !memcmp(w, "tls", 3)) {
		t->tls = 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t k = strlen(files[i].name);
		char *field = (char *)t + files[i].off;

		if (n > k && !memcmp(w, files[i].name, k) && n - k < PK_TLS_PATH_MAX) {
			if (field[0]) {
				say(why, why_len, "%s given twice", files[i].name);
				return -EINVAL;
			}
			memcpy(field, w + k, n - k);
			field[n - k] = '\0';
			return 0;
		}
	}
	say(why, why_len, "bad TLS option '%.*s' (tls, ca=FILE, cert=FILE, key=FILE or peer=NAME)",
	    (int)(n > 60 ? 60 : n), w);
	return -EINVAL;
}

int pk_tls_parse_target(struct pk_tls_target *t, const char *where, int is_relp, char *why,
			size_t why_len)
{
	const char *comma = strchr(where, ',');
	size_t alen = comma ? (size_t)(comma - where) : strlen(where);
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (why && why_len)
		why[0] = '\0';
	if (alen + sizeof(PK_TLS_PORT) + 1 > sizeof(t->addr))
		return -EINVAL;
	memcpy(t->addr, where, alen);
	t->tls = !is_relp;
	for (const char *w = comma; w && !err;) {
		const char *next = strchr(w + 1, ',');

		err = target_option(t, w + 1, next ? (size_t)(next - w - 1) : strlen(w + 1), is_relp,
				    why, why_len);
		w = next;
	}
	if (err)
		return err;
	if (!t->tls && (t->ca[0] || t->cert[0] || t->key[0] || t->peer[0])) {
		say(why, why_len, "ca=, cert=, key= and peer= need ,tls");
		return -EINVAL;
	}
	if (is_relp && t->tls && !t->cert[0]) {
		say(why, why_len,
		    "relp: with ,tls needs cert= and key= (librelp checks the server's certificate only then)");
		return -EINVAL;
	}
	if (!t->cert[0] != !t->key[0]) {
		say(why, why_len, "cert= and key= go together");
		return -EINVAL;
	}

	/* the host, without brackets: the name the certificate must carry */
	const char *h = t->addr, *end;

	if (*t->addr == '[')
		end = strchr(t->addr, ']'), h = t->addr + 1;
	else
		end = strrchr(t->addr, ':');
	if (!is_relp && (!end || (*t->addr == '[' && end[1] != ':')))
		strcat(t->addr, ":" PK_TLS_PORT);
	if (!end)
		end = t->addr + alen;
	if (!t->peer[0] && end > h && (size_t)(end - h) < sizeof(t->peer)) {
		memcpy(t->peer, h, (size_t)(end - h));
		t->peer[end - h] = '\0';
	}
	return 0;
}
