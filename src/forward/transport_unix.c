// SPDX-License-Identifier: MIT
/*
 * transport_unix.c - unix datagram sockets: a syslog receiver's (/dev/log,
 * "unix:PATH") and systemd-journald's native socket ("journal[:PATH]").
 *
 * Owns: the socket (unconnected: each datagram names the path, so a
 * receiver restarted on the same path is reached again) and the journal's
 * way with a payload too big for one datagram: a sealed memfd passed with
 * SCM_RIGHTS, as libsystemd does. A datagram that cannot be sent is lost
 * (counted by console_net.c), except that a full receiver queue makes the
 * record wait (PK_FWD_FULL_WAITS).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "forward/transport.h"
#include "ring/caller.h"

static int unix_init(struct net_console *nc, const char *path)
{
	return pk_fwd_unix_addr(nc, path);
}

/* Opened when first needed, and again in a forked child (N4). */
static int unix_open(struct net_console *nc, uint64_t seq)
{
	(void)seq;
	if (nc->fd >= 0 && nc->fd_pid == (pid_t)pk_caller_pid())
		return 0;
	nc->fd = -1;
	return pk_fwd_dgram_open(nc, 0);
}

static int unix_send(struct net_console *nc, char *msg, size_t n)
{
	ssize_t w;

	while ((w = sendto(nc->fd, msg, n, MSG_NOSIGNAL, (struct sockaddr *)&nc->addr, nc->addr_len)) < 0 &&
	       errno == EINTR)
		;
	return w < 0 ? -errno : 0;
}

/* One datagram, or the payload in a sealed memfd when it is too big. */
static int journal_send(struct net_console *nc, char *p, size_t n)
{
	struct msghdr mh = { 0 };
	struct iovec iov = { (void *)p, n };
	ssize_t w = -1;

	mh.msg_name = &nc->addr;
	mh.msg_namelen = nc->addr_len;
	if (!nc->max_datagram || n <= nc->max_datagram) {
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		while ((w = sendmsg(nc->fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		if (w >= 0)
			return 0;
		if (errno != EMSGSIZE && errno != ENOBUFS)
			return -errno;
	}

	int mfd = memfd_create("printk-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err = 0;

	if (mfd < 0)
		return -errno;
	for (size_t off = 0; off < n && !err;) {
		ssize_t k = write(mfd, p + off, n - off);

		if (k < 0 && errno != EINTR)
			err = -errno;
		else if (k > 0)
			off += (size_t)k;
	}
	if (!err &&
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		err = -errno;
	if (!err) {
		union {
			struct cmsghdr h;
			char space[CMSG_SPACE(sizeof(int))];
		} ctl;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_iov = NULL;
		mh.msg_iovlen = 0;
		mh.msg_control = &ctl;
		mh.msg_controllen = sizeof(ctl.space);

		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &mfd, sizeof(int));
		while ((w = sendmsg(nc->fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		if (w < 0)
			err = -errno;
	}
	close(mfd);
	return err;
}

const struct pk_fwd_transport_ops pk_fwd_transport_unix = {
	.name = "unix",
	.flags = PK_FWD_FULL_WAITS,
	.init = unix_init,
	.open = unix_open,
	.send = unix_send,
};

const struct pk_fwd_transport_ops pk_fwd_transport_journal = {
	.name = "journal",
	.flags = PK_FWD_FULL_WAITS,
	.init = unix_init,
	.open = unix_open,
	.send = journal_send,
};
