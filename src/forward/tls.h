// SPDX-License-Identifier: MIT
/*
 * tls.h - a TLS client session on a connected socket, through OpenSSL's
 * libssl.so.3 opened at run time (tls.c). For the forwarding consoles'
 * tls: target (RFC 5425) and for the tests of the layer itself.
 *
 * Every call returns 0 or a negative errno; where a caller is given @why,
 * a failure also leaves there the reason in words (OpenSSL's verify error
 * string for a refused certificate).
 */
#ifndef PRINTK_FORWARD_TLS_H
#define PRINTK_FORWARD_TLS_H

#include <stddef.h>

/* What the library is opened as; the environment variable of the same name
 * names another file (a deployment's own build, or a test's missing one). */
#define PK_TLS_LIBSSL	   "libssl.so.3"
#define PK_TLS_LIBSSL_ENV  "PRINTK_TLS_LIBSSL"
#define PK_TLS_NEEDS	   "TLS needs libssl.so.3 (Debian: libssl3)"

/* A refused certificate (wrong CA, name or dates): its verify error. */
#define PK_TLS_EREFUSED	   EKEYREJECTED

struct pk_tls_config {
	const char *ca;	  /* PEM file of the CAs the peer's chain must lead to
			   * (NULL: OpenSSL's default, the system's CAs) */
	const char *cert; /* optional: our certificate chain (PEM) */
	const char *key;  /* with @cert: its private key (PEM) */
};

struct pk_tls_ctx;
struct pk_tls;

/* A target's TLS part: "HOST[:PORT][,OPTION...]" after "tls:", or
 * "HOST:PORT[,tls][,OPTION...]" after "relp:". */
#define PK_TLS_PATH_MAX 256
#define PK_TLS_PORT	"6514" /* RFC 5425 */
struct pk_tls_target {
	int tls;			 /* TLS asked for (tls:, or relp: with ,tls) */
	char addr[PK_TLS_PATH_MAX + 8];	 /* "HOST:PORT", the port added for tls: */
	char ca[PK_TLS_PATH_MAX];	 /* ,ca=FILE, or "" */
	char cert[PK_TLS_PATH_MAX];	 /* ,cert=FILE, or "" */
	char key[PK_TLS_PATH_MAX];	 /* ,key=FILE, or "" */
	char peer[PK_TLS_PATH_MAX];	 /* ,peer=NAME, else HOST */
};

/* Parse @where into @t; @is_relp: options only with ",tls", and a client
 * certificate required (librelp checks the server's only then). 0, or
 * -EINVAL with the reason in @why. No I/O. */
int pk_tls_parse_target(struct pk_tls_target *t, const char *where, int is_relp, char *why,
			size_t why_len);

/* 0 once libssl.so.3 and libcrypto.so.3 are loaded (the first call loads
 * them, once, for every thread); else -EPROTONOSUPPORT. */
int pk_tls_available(void);

/* A client context: the peer must show a certificate chain to a CA of
 * @cfg->ca, TLS 1.2 at least. -EPROTONOSUPPORT without the library,
 * -EINVAL (with @why) for a file that cannot be used. */
int pk_tls_ctx_new(struct pk_tls_ctx **ctxp, const struct pk_tls_config *cfg, char *why,
		   size_t why_len);
void pk_tls_ctx_free(struct pk_tls_ctx *ctx);

/*
 * A session on @fd, connected: the handshake, at most @timeout_ms, with
 * @peer as the name the certificate must carry (a DNS name, or an IP
 * address that must be in its subjectAltName) and, for a DNS name, as the
 * SNI. The fd is made blocking again afterwards (its SO_SNDTIMEO bounds
 * the writes). -PK_TLS_EREFUSED for a certificate refused, -EPROTO for
 * another failed handshake, -ETIMEDOUT, or the socket's error. The fd stays
 * the caller's: pk_tls_free() does not close it.
 */
int pk_tls_connect(struct pk_tls **sp, struct pk_tls_ctx *ctx, int fd, const char *peer,
		   int timeout_ms, char *why, size_t why_len);
/*
 * The same without T5's wait for the server's first answer after a TLS 1.3
 * handshake: for a protocol where the server answers every request (HTTP),
 * so that a refusal of our certificate shows when the answer is read
 * (pk_tls_read_timed() fails, pk_tls_why() says why), and a server that
 * sends nothing after the handshake costs no wait.
 */
int pk_tls_connect_nowait(struct pk_tls **sp, struct pk_tls_ctx *ctx, int fd, const char *peer,
			  int timeout_ms, char *why, size_t why_len);
/* All of @n bytes, or the error (the session is unusable after one). */
int pk_tls_write(struct pk_tls *s, const void *p, size_t n);
/*
 * For a socket left non-blocking (pk-forward's HTTP client): all of @n
 * bytes, waiting at most @timeout_ms for each step of progress, or
 * -ETIMEDOUT, -EPIPE, the socket's error. Up to @n bytes read, waiting at
 * most @timeout_ms for the first: the count, 0 when the peer closed (its
 * close_notify, or the end of the connection without one: the caller's
 * framing says whether the answer was whole), -ETIMEDOUT, or an error.
 */
int pk_tls_write_timed(struct pk_tls *s, const void *p, size_t n, int timeout_ms);
long pk_tls_read_timed(struct pk_tls *s, void *p, size_t n, int timeout_ms);
/* After pk_tls_read_timed() failed with -ECONNRESET: OpenSSL's words
 * ("refused by the peer: tlsv13 alert certificate required"), or "". */
const char *pk_tls_why(const struct pk_tls *s);
/* 0 while the peer is there; -ESHUTDOWN when it closed, its error when the
 * connection failed. Takes what the peer sent meanwhile (TLS 1.3 tickets). */
int pk_tls_peer_gone(struct pk_tls *s);
/* @clean: send close_notify first (only the process that made the session
 * may; a forked child frees its copy silently). Frees @s. */
void pk_tls_free(struct pk_tls *s, int clean);

#endif
