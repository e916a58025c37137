// SPDX-License-Identifier: MIT
/*
 * transport_tls.c - syslog over TLS ("tls:HOST[:PORT][,OPTIONS]", RFC
 * 5425): TCP with a TLS session on the connection (tls.c), framed by
 * octet counting always, port 6514 when none is given.
 *
 * Owns: the client context of one console (made when the console is: a
 * file that cannot be used, or no libssl.so.3, and the console is not
 * made), and the session on its connection. Everything else is TCP's
 * (transport_tcp.c): the connection is made when a record is due and the
 * backoff allows (N2), given up when the receiver closed it or a send
 * failed, never written by a forked child (N4); the resend window (N7)
 * and commits (N5) use the send queue (SIOCOUTQ), which holds TLS
 * records as it held plain bytes.
 *
 * Invariants:
 *   S1 Nothing is written before the handshake verified the collector's
 *      chain and name (tls.c's T1). A refusal is a connection failure
 *      (N6: announced once, retried with the backoff) whose words are
 *      OpenSSL's (nc->why).
 *   S2 The session belongs to the socket it was made on: when the socket
 *      goes (closed, or left to the parent in a child), the session is
 *      freed without a word on the wire (close_notify only from release,
 *      in the process that made it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include <printk/forward.h>

#include "forward/tls.h"
#include "forward/transport.h"
#include "forward/wire.h"
#include "ring/caller.h"

#define COMMIT_DRAIN_MS	 2000 /* the longest a commit waits for the send queue */
#define TLS_HANDSHAKE_MS 2000 /* N2: a handshake after the connect */

struct tls_state {
	struct pk_tls_ctx *ctx;
	struct pk_tls *s; /* S2: the session on nc->fd, or NULL */
	int s_fd;
	char peer[PK_TLS_PATH_MAX];
};

static int tls_init(struct net_console *nc, const char *where)
{
	struct pk_tls_target t;
	struct tls_state *ts;
	char why[200];
	int err;

	if ((err = pk_tls_parse_target(&t, where, 0, why, sizeof(why)))) {
		pk_fwd_create_why(why);
		return err;
	}
	if ((err = pk_fwd_inet_addr(nc, t.addr, 1)))
		return err;
	if (!(ts = calloc(1, sizeof(*ts))))
		return -ENOMEM;

	struct pk_tls_config cfg = { t.ca[0] ? t.ca : NULL, t.cert[0] ? t.cert : NULL,
				     t.key[0] ? t.key : NULL };

	if ((err = pk_tls_ctx_new(&ts->ctx, &cfg, why, sizeof(why)))) {
		pk_fwd_create_why(why);
		free(ts);
		return err;
	}
	memcpy(ts->peer, t.peer, sizeof(ts->peer));
	ts->s_fd = -1;
	nc->tp = ts;
	/* N6: the notices name the address, not the files */
	snprintf(nc->target, sizeof(nc->target), "tls:%.150s", t.addr);
	return 0;
}

/* S2 */
static void drop_session(struct tls_state *ts, int clean)
{
	if (ts->s)
		pk_tls_free(ts->s, clean);
	ts->s = NULL;
	ts->s_fd = -1;
}

static void tls_close(struct net_console *nc)
{
	drop_session(nc->tp, 0);
	pk_fwd_close(nc);
}

/* N2: connect and verify if due; -EAGAIN while the collector is away or
 * refused (S1). */
static int tls_open(struct net_console *nc, uint64_t seq)
{
	struct tls_state *ts = nc->tp;
	int err, fd;

	if (pk_fwd_disown(nc) || (ts->s && ts->s_fd != nc->fd))
		drop_session(ts, 0); /* S2: a child's copy of the parent's */
	if (nc->fd >= 0 && ts->s && (err = pk_tls_peer_gone(ts->s))) {
		tls_close(nc);
		pk_fwd_went_down(nc, err, seq);
	}
	if (nc->fd >= 0 && ts->s)
		return 0;
	if (pk_fwd_retry_wait(nc))
		return -EAGAIN;
	nc->why[0] = '\0';
	if (!(err = pk_fwd_tcp_connect(&nc->addr, nc->addr_len, &fd))) {
		err = pk_tls_connect(&ts->s, ts->ctx, fd, ts->peer, TLS_HANDSHAKE_MS, nc->why,
				     sizeof(nc->why));
		nc->why_err = err;
		if (err)
			close(fd);
	}
	if (err) {
		pk_fwd_count_send_error(nc);
		pk_fwd_went_down(nc, err, seq);
		pk_fwd_schedule_retry(nc);
		return -EAGAIN;
	}
	nc->fd = ts->s_fd = fd;
	nc->fd_pid = (pid_t)pk_caller_pid();
	pk_fwd_connected(nc);
	return 0;
}

/* RFC 5425: octet counting, "LEN SP MSG", in one TLS record. */
static int tls_send(struct net_console *nc, char *msg, size_t n)
{
	char t[PK_WIRE_OCTET_ROOM];
	size_t k = pk_wire_octet_prefix(t, n);

	msg -= k;
	memcpy(msg, t, k);
	return pk_tls_write(((struct tls_state *)nc->tp)->s, msg, n + k);
}

static int tls_unacked(struct net_console *nc)
{
	int outq = 0;

	if (nc->fd < 0 || ioctl(nc->fd, SIOCOUTQ, &outq) < 0)
		return nc->fd < 0 ? -ENOTCONN : -errno;
	return outq;
}

/* N5: the send queue drained and the collector did not close. */
static int tls_commit(struct net_console *nc)
{
	struct tls_state *ts = nc->tp;

	if (nc->fd < 0 || nc->fd_pid != (pid_t)pk_caller_pid() || !ts->s)
		return nc->unconfirmed ? -EAGAIN : 0;
	for (int waited = 0;; waited++) {
		if (pk_tls_peer_gone(ts->s)) {
			tls_close(nc);
			return -EAGAIN;
		}

		int outq = tls_unacked(nc);

		if (outq <= 0)
			return 0;
		if (waited >= COMMIT_DRAIN_MS)
			return -EAGAIN;

		struct timespec ts1 = { 0, 1000000 };

		nanosleep(&ts1, NULL);
	}
}

/* At exit, the console's thread gone: close_notify on a session this
 * process made, so the collector sees the end, not a break (S2). */
static void tls_exit_close(struct net_console *nc)
{
	struct tls_state *ts = nc->tp;

	if (ts)
		drop_session(ts, nc->fd >= 0 && nc->fd == ts->s_fd &&
					 nc->fd_pid == (pid_t)pk_caller_pid());
}

/* The console is freed: close_notify on a session this process made (the
 * collector sees the end, not a break), then the context. */
static void tls_release(struct net_console *nc)
{
	struct tls_state *ts = nc->tp;

	if (!ts)
		return;
	drop_session(ts, nc->fd >= 0 && nc->fd == ts->s_fd && nc->fd_pid == (pid_t)pk_caller_pid());
	pk_tls_ctx_free(ts->ctx);
	free(ts);
	nc->tp = NULL;
}

const struct pk_fwd_transport_ops pk_fwd_transport_tls = {
	.name = "tls",
	.flags = PK_FWD_STREAM | PK_FWD_RESEND,
	.init = tls_init,
	.open = tls_open,
	.send = tls_send,
	.broke = tls_close,
	.unacked = tls_unacked,
	.commit = tls_commit,
	.exit_close = tls_exit_close,
	.release = tls_release,
};
