// SPDX-License-Identifier: MIT
/*
 * tool_tls.c - the TLS session a tool's own protocol runs over (reader.h's
 * pk_tool_tls_*: pk-forward's journal-remote over https), on the
 * forwarding consoles' session layer (tls.c), so that a tool verifies a
 * server exactly as a tls: console does and says a refusal in the same
 * words, without including a header of this layer.
 *
 * Invariants: a handle holds one context (its files read once, when it
 * is made) and at most one session; the socket is always the caller's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/tls.h"
#include "readers/reader.h"

struct pk_tool_tls {
	struct pk_tls_ctx *ctx;
	struct pk_tls *s;
	char peer[PK_TLS_PATH_MAX];
};

int pk_tool_tls_new(struct pk_tool_tls **tp, const struct pk_tool_tls_opts *o, char *why,
		    size_t why_len)
{
	struct pk_tls_config cfg;
	struct pk_tool_tls *t;
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (!tp || !o || !o->peer || !*o->peer || strlen(o->peer) >= PK_TLS_PATH_MAX ||
	    !o->cert != !o->key)
		return -EINVAL;
	if (pk_tls_available()) {
		if (why && why_len)
			snprintf(why, why_len, "%s", PK_TLS_NEEDS);
		return -EPROTONOSUPPORT;
	}
	if (!(t = calloc(1, sizeof(*t))))
		return -ENOMEM;
	cfg.ca = o->ca;
	cfg.cert = o->cert;
	cfg.key = o->key;
	if ((err = pk_tls_ctx_new(&t->ctx, &cfg, why, why_len))) {
		free(t);
		return err;
	}
	strcpy(t->peer, o->peer);
	*tp = t;
	return 0;
}

int pk_tool_tls_connect(struct pk_tool_tls *t, int fd, int timeout_ms, char *why, size_t why_len)
{
	if (!t)
		return -EINVAL;
	pk_tool_tls_close(t, 0);
	/* HTTP: the server answers each request, so a refusal of our
	 * certificate shows in the answer's read (pk_tool_tls_why); no wait
	 * for a first answer after the handshake (tls.h). */
	return pk_tls_connect_nowait(&t->s, t->ctx, fd, t->peer, timeout_ms, why, why_len);
}

int pk_tool_tls_write(struct pk_tool_tls *t, const void *p, size_t n, int timeout_ms)
{
	return t && t->s ? pk_tls_write_timed(t->s, p, n, timeout_ms) : -ENOTCONN;
}

ssize_t pk_tool_tls_read(struct pk_tool_tls *t, void *p, size_t n, int timeout_ms)
{
	return t && t->s ? (ssize_t)pk_tls_read_timed(t->s, p, n, timeout_ms) : -ENOTCONN;
}

const char *pk_tool_tls_why(const struct pk_tool_tls *t)
{
	return t && t->s ? pk_tls_why(t->s) : "";
}

int pk_tool_tls_idle_gone(struct pk_tool_tls *t)
{
	return !t || !t->s || pk_tls_peer_gone(t->s) != 0;
}

void pk_tool_tls_close(struct pk_tool_tls *t, int clean)
{
	if (t && t->s) {
		pk_tls_free(t->s, clean);
		t->s = NULL;
	}
}

void pk_tool_tls_free(struct pk_tool_tls *t)
{
	if (!t)
		return;
	pk_tool_tls_close(t, 1);
	pk_tls_ctx_free(t->ctx);
	free(t);
}
