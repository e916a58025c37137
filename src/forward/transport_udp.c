// SPDX-License-Identifier: MIT
/*
 * transport_udp.c - syslog over UDP ("udp:HOST:PORT"), one message a
 * datagram.
 *
 * Owns: a connected datagram socket, so that a receiver that is not there
 * shows as a send error (the ICMP answer, one send late); a message that
 * cannot be sent is lost and counted, never retried, and the console
 * counts as back only a second after its last failure (PK_FWD_SETTLE).
 */
#include <errno.h>

#include "forward/transport.h"
#include "ring/caller.h"

static int udp_init(struct net_console *nc, const char *where)
{
	return pk_fwd_inet_addr(nc, where, 0);
}

static int udp_open(struct net_console *nc, uint64_t seq)
{
	(void)seq;
	if (nc->fd >= 0 && nc->fd_pid == (pid_t)pk_caller_pid())
		return 0;
	nc->fd = -1;
	return pk_fwd_dgram_open(nc, 1);
}

static int udp_send(struct net_console *nc, char *msg, size_t n)
{
	return pk_fwd_send_all(nc->fd, msg, n);
}

const struct pk_fwd_transport_ops pk_fwd_transport_udp = {
	.name = "udp",
	.flags = PK_FWD_SETTLE,
	.init = udp_init,
	.open = udp_open,
	.send = udp_send,
};
