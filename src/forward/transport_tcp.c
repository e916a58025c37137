// SPDX-License-Identifier: MIT
/*
 * transport_tcp.c - syslog over TCP ("tcp:HOST:PORT"), framed by RFC 6587
 * octet counting ("LEN SP MSG", the default) or by a newline
 * (PK_SYSLOG_FRAMING_LF, newlines inside as "#012": wire_syslog.c).
 *
 * Owns: the connection and its life: made when a record is due and the
 * backoff allows (N2), given up when the receiver closed it or a send
 * failed (the record then waits), never written by a forked child (N4).
 * TCP has no answers, so it offers console_net.c what its resend window
 * (N7) and commits (N5) need: the bytes the receiver's kernel has not
 * acknowledged (SIOCOUTQ).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/sockios.h>

#include <printk/forward.h>

#include "forward/transport.h"
#include "forward/wire.h"
#include "ring/caller.h"

#define COMMIT_DRAIN_MS 2000 /* the longest a commit waits for the send queue */

_Static_assert(PK_FWD_MSG_ROOM >= PK_WIRE_OCTET_ROOM, "room for the octet-counting prefix");

static int tcp_init(struct net_console *nc, const char *where)
{
	return pk_fwd_inet_addr(nc, where, 1);
}

/* N2: connect if due; -EAGAIN while the receiver is away. */
static int tcp_open(struct net_console *nc, uint64_t seq)
{
	int err;

	pk_fwd_disown(nc);
	if (nc->fd >= 0 && (err = pk_fwd_peer_gone(nc->fd))) {
		pk_fwd_close(nc);
		pk_fwd_went_down(nc, err, seq);
	}
	if (nc->fd >= 0)
		return 0;
	if (pk_fwd_retry_wait(nc))
		return -EAGAIN;
	if ((err = pk_fwd_tcp_connect(&nc->addr, nc->addr_len, &nc->fd))) {
		pk_fwd_count_send_error(nc);
		pk_fwd_went_down(nc, err, seq);
		pk_fwd_schedule_retry(nc);
		return -EAGAIN;
	}
	nc->fd_pid = (pid_t)pk_caller_pid();
	pk_fwd_connected(nc);
	return 0;
}

static int tcp_send(struct net_console *nc, char *msg, size_t n)
{
	if (nc->framing == PK_SYSLOG_FRAMING_LF)
		return pk_fwd_send_all(nc->fd, nc->lf, pk_wire_frame_lf(nc->lf, sizeof(nc->lf), msg, n));

	char t[PK_WIRE_OCTET_ROOM];
	size_t k = pk_wire_octet_prefix(t, n);

	msg -= k;
	memcpy(msg, t, k);
	return pk_fwd_send_all(nc->fd, msg, n + k);
}

static int tcp_unacked(struct net_console *nc)
{
	int outq = 0;

	if (nc->fd < 0 || ioctl(nc->fd, SIOCOUTQ, &outq) < 0)
		return nc->fd < 0 ? -ENOTCONN : -errno;
	return outq;
}

/* N5: the send queue drained and the receiver did not close. */
static int tcp_commit(struct net_console *nc)
{
	if (nc->fd < 0 || nc->fd_pid != (pid_t)pk_caller_pid())
		return nc->unconfirmed ? -EAGAIN : 0;
	for (int waited = 0;; waited++) {
		if (pk_fwd_peer_gone(nc->fd)) {
			pk_fwd_close(nc);
			return -EAGAIN;
		}

		int outq = tcp_unacked(nc);

		if (outq <= 0)
			return 0;
		if (waited >= COMMIT_DRAIN_MS)
			return -EAGAIN;

		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

const struct pk_fwd_transport_ops pk_fwd_transport_tcp = {
	.name = "tcp",
	.flags = PK_FWD_STREAM | PK_FWD_RESEND | PK_FWD_FRAMING,
	.init = tcp_init,
	.open = tcp_open,
	.send = tcp_send,
	.broke = pk_fwd_close,
	.unacked = tcp_unacked,
	.commit = tcp_commit,
};
