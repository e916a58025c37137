// SPDX-License-Identifier: MIT
/*
 * fwd_socket.c - the socket calls the transports share, each bounded in
 * time (N2 of console_net.c): sends carry SO_SNDTIMEO, a connect is a
 * non-blocking one bounded by a poll, and nothing raises SIGPIPE.
 *
 * Owns nothing but the descriptors it hands back; a transport that needs
 * a stream (TCP, and RELP's probe, and any later stream transport) takes
 * its connection from here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "forward/sigpipe.h"
#include "forward/transport.h"
#include "ring/caller.h"

#define SEND_TIMEOUT_MS	   1000
#define CONNECT_TIMEOUT_MS 1000

static void set_send_timeout(int fd)
{
	struct timeval tv = { SEND_TIMEOUT_MS / 1000, (SEND_TIMEOUT_MS % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int pk_fwd_dgram_open(struct net_console *nc, int do_connect)
{
	int fd = socket(nc->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	set_send_timeout(fd);
	if (do_connect && connect(fd, (struct sockaddr *)&nc->addr, nc->addr_len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	nc->fd = fd;
	nc->fd_pid = (pid_t)pk_caller_pid();
	return 0;
}

int pk_fwd_tcp_connect(const struct sockaddr_storage *addr, socklen_t len, int *fdp)
{
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)addr, len) < 0) {
		err = -errno;
		if (err == -EINPROGRESS) {
			struct pollfd p = { fd, POLLOUT, 0 };
			int r, soerr = 0;
			socklen_t sl = sizeof(soerr);

			while ((r = poll(&p, 1, CONNECT_TIMEOUT_MS)) < 0 && errno == EINTR)
				;
			if (r == 0)
				err = -ETIMEDOUT;
			else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
				err = -errno;
			else
				err = -soerr;
		}
	}
	if (!err && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	set_send_timeout(fd);
	*fdp = fd;
	return 0;
}

/* A syslog receiver never sends, so anything readable is the end. */
int pk_fwd_peer_gone(int fd)
{
	struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if ((p.revents & POLLERR) && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
		return -soerr;
	if (p.revents & (POLLERR | POLLHUP | POLLRDHUP))
		return -ESHUTDOWN;

	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0 ? -ESHUTDOWN : 0;
}

int pk_fwd_send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* sigpipe.h */
void pk_fwd_pipe_block(struct pk_fwd_pipe_guard *g)
{
	sigset_t s, pend;

	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &s, &g->old);
	sigpending(&pend);
	g->was_pending = sigismember(&pend, SIGPIPE) == 1;
}

void pk_fwd_pipe_restore(struct pk_fwd_pipe_guard *g)
{
	sigset_t s, pend;
	struct timespec zero = { 0, 0 };

	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	sigpending(&pend);
	if (!g->was_pending && sigismember(&pend, SIGPIPE) == 1)
		sigtimedwait(&s, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}
