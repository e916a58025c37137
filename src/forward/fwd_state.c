// SPDX-License-Identifier: MIT
/*
 * fwd_state.c - what every transport of the forwarding consoles shares
 * beyond its socket: the console's state and its announcements (N6 of
 * console_net.c), the retry backoff (N2), who owns a socket after a fork
 * (N4), a break noted for the commit (N5) and the resend window (N7), and
 * the parsing and resolution of target addresses.
 *
 * Invariants: called only by the console's one sending thread (N1), but
 * the counters and the state, atomics read by pk_console_stats(); a state
 * change is announced exactly once, failures in the same state say nothing
 * more.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <printk/forward.h>

#include "base/clock.h"
#include "console/console_internal.h"
#include "forward/transport.h"
#include "log/settings.h"
#include "ring/caller.h"

/* BACKOFF_MIN_MS: transport.h */
#define BACKOFF_MAX_MS 10000
#define RETRY_SLEEP_MS 250 /* the longest a write sleeps for the next attempt */
#define UDP_SETTLE_NS  1000000000ull /* N6: UDP is back a second after its last failure */

const char *pk_fwd_err_words(int err)
{
	/* pk_fwd_peer_gone(): the system's words for it speak of our side */
	const char *s = err == -ESHUTDOWN ? "the collector closed the connection"
		      : err < 0	       ? strerrordesc_np(-err)
					 : NULL;

	return s ? s : "unknown error";
}

uint64_t pk_fwd_waiting_from(const struct net_console *nc, uint64_t pos)
{
	struct pk_log *log = nc->src ? nc->src : pk_printk_log_peek();
	uint64_t next = log ? pk_log_next_seq(log) : pos;

	return next > pos ? next - pos : 0;
}

uint64_t pk_fwd_lost_total(const struct net_console *nc)
{
	return atomic_load_explicit(&nc->dropped, memory_order_relaxed) +
	       atomic_load_explicit(&nc->lost_sends, memory_order_relaxed);
}

static void write_stderr(const char *line, int n)
{
	struct console *err_con = pk_console_stderr();

	err_con->write_checked(err_con, line, (size_t)n);
}

void pk_fwd_say(const char *fmt, ...)
{
	char line[200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		write_stderr(line, (size_t)n < sizeof(line) ? n : (int)sizeof(line) - 1);
}

/* N6: one line, as a notice record and, with no text console to print
 * it, on stderr. */
static void announce(struct net_console *nc, int level, const char *fmt, ...) PK_PRINTF(3, 4);
static void announce(struct net_console *nc, int level, const char *fmt, ...)
{
	char line[400];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	atomic_fetch_add_explicit(&nc->changes, 1, memory_order_relaxed);
	/* Stored only: printing from here (a console's write) would be
	 * recursion; the threaded consoles are woken, the others print it
	 * with the next printk or at exit. */
	pk_store_notice(level, "%s", line);
	pk_console_wake_printers();
	if (!pk_console_text_listed())
		write_stderr(line, n);
}

/* @err in words: the transport's own, when it explained that error. */
static const char *nc_words(const struct net_console *nc, int err)
{
	return nc->why[0] && nc->why_err == err ? nc->why : pk_fwd_err_words(err);
}

void pk_fwd_went_down(struct net_console *nc, int err, uint64_t seq)
{
	int was = atomic_load_explicit(&nc->state, memory_order_relaxed);
	int now = was == PK_CONSOLE_IDLE || was == PK_CONSOLE_CANNOT_CONNECT ? PK_CONSOLE_CANNOT_CONNECT
									     : PK_CONSOLE_LOST;

	atomic_store_explicit(&nc->last_error, err, memory_order_relaxed);
	nc->last_fail_ns = pk_clock_ns();
	if (was == now)
		return;
	atomic_store_explicit(&nc->state, now, memory_order_relaxed);
	if (nc->ops->flags & PK_FWD_STREAM)
		announce(nc, 4, "printk: console [%.16s] %s %s: %s (%llu waiting, %llu lost)\n",
			 nc->con.name, now == PK_CONSOLE_LOST ? "lost" : "cannot reach", nc->target,
			 nc_words(nc, err), (unsigned long long)pk_fwd_waiting_from(nc, seq),
			 (unsigned long long)pk_fwd_lost_total(nc));
	else
		announce(nc, 4, "printk: console [%.16s] cannot deliver to %s: %s; records are lost until it answers (%llu lost)\n",
			 nc->con.name, nc->target, nc_words(nc, err),
			 (unsigned long long)pk_fwd_lost_total(nc));
}

/* UDP learns of a refusal one send late (the ICMP answer): it counts as
 * back only a second after its last failure, so a port nobody listens on
 * does not flap. */
void pk_fwd_went_up(struct net_console *nc, uint64_t seq)
{
	int was = atomic_load_explicit(&nc->state, memory_order_relaxed);

	if (was == PK_CONSOLE_DELIVERING)
		return;
	if ((nc->ops->flags & PK_FWD_SETTLE) && was != PK_CONSOLE_IDLE &&
	    pk_clock_ns() - nc->last_fail_ns < UDP_SETTLE_NS)
		return;
	atomic_store_explicit(&nc->state, PK_CONSOLE_DELIVERING, memory_order_relaxed);
	if (was == PK_CONSOLE_IDLE)
		return;
	if (nc->rs_resent)
		announce(nc, 5, "printk: console [%.16s] reconnected to %s: %llu records written before the break sent again (%llu waiting, %llu lost)\n",
			 nc->con.name, nc->target, (unsigned long long)nc->rs_resent,
			 (unsigned long long)pk_fwd_waiting_from(nc, seq),
			 (unsigned long long)pk_fwd_lost_total(nc));
	else
		announce(nc, 5, "printk: console [%.16s] %s %s (%llu waiting, %llu lost)\n", nc->con.name,
			 was == PK_CONSOLE_LOST ? "reconnected to" : "reached", nc->target,
			 (unsigned long long)pk_fwd_waiting_from(nc, seq),
			 (unsigned long long)pk_fwd_lost_total(nc));
	nc->rs_resent = 0;
}

void pk_fwd_schedule_retry(struct net_console *nc)
{
	if (!nc->backoff_ms)
		nc->backoff_ms = BACKOFF_MIN_MS;
	nc->next_try_ns = pk_clock_ns() + (uint64_t)nc->backoff_ms * 1000000u;
	nc->backoff_ms = nc->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : nc->backoff_ms * 2;
}

int pk_fwd_retry_wait(const struct net_console *nc)
{
	uint64_t now = pk_clock_ns();

	if (now < nc->next_try_ns) {
		uint64_t wait = nc->next_try_ns - now;

		if (wait > (uint64_t)RETRY_SLEEP_MS * 1000000u)
			return -EAGAIN;
		struct timespec ts = { 0, (long)wait };

		nanosleep(&ts, NULL);
	}
	return 0;
}

void pk_fwd_connected(struct net_console *nc)
{
	nc->backoff_ms = BACKOFF_MIN_MS;
	atomic_fetch_add_explicit(&nc->connects, 1, memory_order_relaxed);
}

void pk_fwd_count_send_error(struct net_console *nc)
{
	atomic_fetch_add_explicit(&nc->send_errors, 1, memory_order_relaxed);
}

void pk_fwd_close(struct net_console *nc)
{
	if (nc->fd >= 0 && nc->fd_pid == (pid_t)pk_caller_pid())
		close(nc->fd);
	if (nc->fd >= 0 && nc->unconfirmed)
		nc->broken = 1;
	if (nc->fd >= 0 && nc->rs_len)
		nc->rs_pending = 1; /* N7 */
	nc->fd = -1;
}

int pk_fwd_disown(struct net_console *nc)
{
	if (nc->fd < 0 || nc->fd_pid == (pid_t)pk_caller_pid())
		return 0;
	/* what the parent wrote is the parent's to resend */
	nc->rs_len = 0;
	nc->rs_unkept = 0;
	nc->rs_pending = 0;
	pk_fwd_close(nc);
	return 1;
}

int pk_fwd_unix_addr(struct net_console *nc, const char *path)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&nc->addr;
	size_t n = strlen(path);

	if (!n || n >= sizeof(un->sun_path))
		return -EINVAL;
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, path, n + 1);
	nc->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

/* Why the last name on this thread did not resolve (getaddrinfo's answer). */
static _Thread_local int create_gai_error;
static _Thread_local char create_why[200];

const char *pk_net_create_strerror(int err)
{
	if (err == -EHOSTUNREACH && create_gai_error)
		return gai_strerror(create_gai_error);
	if (create_why[0])
		return create_why;
	return pk_fwd_err_words(err);
}

void pk_fwd_create_why(const char *why)
{
	snprintf(create_why, sizeof(create_why), "%s", why ? why : "");
}

int pk_fwd_inet_addr(struct net_console *nc, const char *hp, int stream)
{
	char host[256];
	const char *colon, *h = hp;
	size_t hlen;

	create_gai_error = 0;
	if (*hp == '[') {
		const char *close = strchr(hp, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = hp + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(hp, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - hp);
	}
	if (!hlen || hlen >= sizeof(host) || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5 ||
	    atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';

	struct addrinfo hints = { 0 }, *res;

	hints.ai_socktype = stream ? SOCK_STREAM : SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((create_gai_error = getaddrinfo(host, colon + 1, &hints, &res)) || !res)
		return -EHOSTUNREACH;
	memcpy(&nc->addr, res->ai_addr, res->ai_addrlen);
	nc->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
