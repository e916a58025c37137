// SPDX-License-Identifier: MIT
/*
 * console_net.c - forwarding consoles: each final record, with its fields,
 * to a collector the system already runs. systemd-journald's native
 * protocol, and syslog (RFC 5424 or RFC 3164) over a unix datagram socket,
 * UDP, TCP framed by octet counting (RFC 6587), or RELP (rsyslog's
 * acknowledged transport, through librelp).
 *
 * Owns: the wire forms (field and name mappings, escapes, framing), the
 * sockets, TCP's reconnection and its backoff, TCP's resend window, the
 * dropped notices, and each console's state and its announcements.
 *
 * libsystemd is not linked: the journal's native protocol is a handful of
 * documented, stable rules (one datagram of fields; a sealed memfd when it
 * is too big), and the library's core links only libc and pthreads.
 * For the same reason librelp is not linked either: its header is used at
 * build time when pkg-config finds it (PRINTK_HAVE_RELP), and the shared
 * library is opened with dlopen() when the first RELP console is made, so a
 * program that never forwards over RELP never loads it.
 *
 * Invariants:
 *   N1 Only the console's printer thread (PK_CON_THREADED, the console
 *      layer's C7) calls write_record, holding the console's owner word:
 *      everything in struct net_console but the counters is that thread's.
 *      The counters are atomics, read by pk_console_forward_stats().
 *   N2 A write never waits without bound: sends carry SO_SNDTIMEO, a TCP
 *      connect is bounded by a poll, a wait for the next connection attempt
 *      sleeps at most RETRY_SLEEP_MS and otherwise answers -EAGAIN, so the
 *      console layer keeps the record in the ring (its position does not
 *      move) and exit is never held up by an absent receiver.
 *   N3 One record is one message, whatever its newlines (octet counting
 *      over TCP). What the ring overwrote before this console sent it is
 *      reported as a message of its own, "** N printk messages dropped **",
 *      before the next record, once the transport takes messages again.
 *   N4 A forked child never writes into its parent's TCP connection: the
 *      connection belongs to the pid that made it; the child makes its own.
 *      A RELP session a child inherited is abandoned, never closed: closing
 *      it would speak into the parent's connection. The pid is caller.c's
 *      cached one (no system call per record), refreshed in the child by
 *      fork()'s atfork handler: a child made by a raw clone(2) that skips
 *      those handlers is not told apart, as printk's caller ids are not.
 *   N6 Never silent: the state (idle, delivering, cannot connect, lost) is
 *      the printer thread's to change, and each change is announced once,
 *      as a notice record in printk's log (so the program's other consoles
 *      print it; on stderr too when no text console is registered), with
 *      the target, the reason in words and the records waiting and lost.
 *      Failures in the same state say nothing more.
 *   N7 TCP has no answers: bytes the receiver's kernel acknowledged may
 *      still sit unread in its socket when it is killed. A registered TCP
 *      console keeps the sequence numbers of the records it wrote (at most
 *      RESEND_MAX) until the send queue was seen empty RESEND_SLACK_MS
 *      after they were written (the receiver had that long to read what
 *      its kernel took). When the connection breaks, the next connection
 *      first carries those records again, read back from the ring: what
 *      the ring still holds is not lost, what had arrived arrives twice.
 *      A record the ring overwrote meanwhile, or one that left a full
 *      window unconfirmed, is counted lost and announced (N6).
 *   N5 Commit points (pk_console_forward_commit(), for a forwarder that keeps
 *      a cursor): 0 only if every message handed over since the previous
 *      commit was accepted by the transport without a break in between.
 *      RELP: the session is closed, and a close answered without error
 *      means the receiver answered every earlier frame (it answers in
 *      order). TCP: the connection never broke and the kernel's send queue
 *      drained (the receiver's kernel acknowledged every byte). Datagrams:
 *      always 0 (nothing better is known).
 *   N8 TLS is TCP with a session on the socket (tls.c): everything TCP does
 *      (N2, N4, N5, N7) holds as it is, the bytes going through the
 *      session. Nothing is written before the handshake verified the
 *      peer; a refusal is a connection failure like any other (N6), in
 *      OpenSSL's words. RFC 5425 frames by octet counting only. RELP over
 *      TLS is librelp's own: the console gives it the files and the name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <signal.h>
#ifdef PRINTK_HAVE_RELP
#include <dlfcn.h>
#include <librelp.h>
#endif

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>

#include "console/console_internal.h"
#include "forward/console_net.h"
#include "forward/tls.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/json_format.h"
#include "ring/caller.h"
#include "startup/setup_hooks.h"

#define SEND_TIMEOUT_MS	   1000
#define CONNECT_TIMEOUT_MS 1000
#define BACKOFF_MIN_MS	   100
#define BACKOFF_MAX_MS	   10000
#define RETRY_SLEEP_MS	   250	/* the longest a write sleeps for the next attempt */
#define MSG_BUF		   8192 /* the largest message any record makes, with room */
#define SD_NAME_MAX	   32	/* RFC 5424 */
#define JOURNAL_NAME_MAX   64	/* journald's field names */

#define RELP_TIMEOUT_S	   2	/* librelp's wait for a window slot or an answer */
#define COMMIT_DRAIN_MS	   2000 /* TCP: the longest a commit waits for the send queue */
#define UDP_SETTLE_NS	   1000000000ull /* N6: UDP is back a second after its last failure */
#define RESEND_MAX	   65536 /* N7: records a TCP console keeps for a resend (1 MiB, touched as used) */
#define RESEND_SLACK_MS	   2000	 /* N7: the receiver's time to read what its kernel took */
#define TLS_PORT	   "6514" /* RFC 5425 */
#define TLS_HANDSHAKE_MS   2000 /* N2: a TLS handshake after the connect */

enum net_kind { NET_JOURNAL, NET_UNIX, NET_UDP, NET_TCP, NET_RELP };

struct net_console {
	struct console con; /* first: container_of is a cast */
	enum net_kind kind;
	int format;
	unsigned enterprise;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int fd;
	pid_t fd_pid; /* N4 */
	unsigned backoff_ms;
	uint64_t next_try_ns;
	uint64_t lost;	     /* taken from the console layer, not reported yet */
	size_t max_datagram; /* journal: larger goes through a memfd (0: the socket's limit) */
	char host[256];
	char app[64];
	pid_t comm_pid; /* app names of other processes' records (a shared log file) */
	char comm[64];
	_Atomic uint64_t sent, send_errors, dropped, connects;
	struct pk_log *src; /* the records' log (NULL: printk's): names and clock */
	uint64_t unconfirmed; /* N5: messages handed over since the last commit */
	int broken;	      /* N5: the transport broke since the last commit */
	/* RELP (N1: the printer thread's, or the forwarder's only thread) */
	void *relp_engine, *relp_clt;
	pid_t relp_pid;
	int relp_reconnect; /* the session broke: relpCltReconnect() resends */
	unsigned relp_errors; /* librelp's error callback calls */
	char relp_host[64], relp_port[8];
	struct pk_record notice; /* the dropped notice, as a record */
	char buf[MSG_BUF];
	/* N6: the state the notices announced, and why it is so */
	char target[160]; /* "tcp:HOST:PORT" as given, for the notices */
	int framing;	  /* PK_SYSLOG_FRAMING_* (TCP) */
	int no_bom;	  /* RFC 5424 text without the BOM */
	_Atomic int state, last_error;
	_Atomic uint64_t lost_sends, changes;
	_Atomic uint64_t pos; /* the seq of the next record to deliver */
	uint64_t last_fail_ns;
	char lf[MSG_BUF * 4 + 1]; /* an LF-framed message, newlines escaped */
	/* N7: TCP's resend window (a registered console's): the records
	 * written on this connection that the receiver may not have read */
	struct resend {
		uint64_t seq, written_ns;
	} *rs;
	unsigned rs_head, rs_len;
	int rs_pending;	    /* the connection broke: send the window again */
	uint64_t rs_unkept; /* left the full window unconfirmed */
	uint64_t rs_resent; /* sent again at the last reconnection */
	_Atomic unsigned rs_slack_ms; /* RESEND_SLACK_MS; the tests set another */
	struct pk_record rs_rec;
	/* TLS (tls.c): a tls: target is TCP with a session on the socket;
	 * relp:...,tls gives the files to librelp. N8. */
	int tls;		  /* tls:, or relp: with ,tls */
	struct pk_tls_ctx *tls_ctx; /* tls: */
	struct pk_tls *tls_s;	  /* tls: the session on fd */
	char tls_ca[256], tls_cert[256], tls_key[256], tls_peer[256];
	char why[200]; /* the words for last_error when they are TLS's */
	int why_err;   /* the error @why explains */
};

/* ------------------------------------------------------ message text -- */

struct sb {
	char *p;
	size_t len, cap;
};

static void sb_put(struct sb *b, const void *s, size_t n)
{
	if (n > b->cap - b->len)
		n = b->cap - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void sb_str(struct sb *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_ch(struct sb *b, char c)
{
	sb_put(b, &c, 1);
}

static void sb_u64(struct sb *b, uint64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

	sb_put(b, t, (size_t)n);
}

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int pk_net_utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0, l; i < n; i += l)
		if (!(l = utf8_seq(u + i, n - i)))
			return 0;
	return 1;
}

size_t pk_net_sd_name(char *out, const char *key, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n && len < SD_NAME_MAX; i++) {
		unsigned char c = (unsigned char)key[i];

		out[len++] =
			(c < 33 || c > 126 || c == '=' || c == ']' || c == '"') ? '_' : (char)c;
	}
	out[len] = '\0';
	return len;
}

/* A PARAM-VALUE: '"', '\' and ']' escaped; bytes that are not UTF-8 as
 * U+FFFD, since the RFC allows UTF-8 only there. */
static void sb_sd_value(struct sb *b, const char *v, size_t n)
{
	const unsigned char *u = (const unsigned char *)v;

	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq(u + i, n - i);

		if (!l) {
			sb_str(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (v[i] == '"' || v[i] == '\\' || v[i] == ']')
			sb_ch(b, '\\');
		sb_put(b, v + i, l);
		i += l;
	}
}

/* Printable US-ASCII but space, at most @max bytes, or "-". */
static void sb_header_field(struct sb *b, const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n] && n < max; n++)
		sb_ch(b, (s[n] > 32 && s[n] < 127) ? s[n] : '_');
	if (!n)
		sb_ch(b, '-');
}

/* Call @fn for each KEY=VALUE of @rec's dictionary (entries without '='
 * or with an empty key are skipped). */
static void each_dict(const struct pk_record *rec,
		      void (*fn)(void *, const char *, size_t, const char *, size_t), void *arg)
{
	size_t n = rec->dict_len > PK_DICT_MAX ? PK_DICT_MAX : rec->dict_len;

	for (size_t i = 0; i < n;) {
		const char *e = rec->dict + i;
		const char *end = memchr(e, '\0', n - i);
		size_t elen = end ? (size_t)(end - e) : n - i;
		const char *eq = memchr(e, '=', elen);

		if (eq && eq != e)
			fn(arg, e, (size_t)(eq - e), eq + 1, elen - (size_t)(eq - e) - 1);
		i += elen + 1;
	}
}

/* The syslog PRI facility: printk's 0 (kern) is reserved for the kernel on
 * a syslog receiver, so it goes as user (1), as do numbers past 23. */
static unsigned wire_facility(unsigned facility)
{
	return facility == 0 || facility > 23 ? 1 : facility;
}

static int64_t realtime_offset(const struct net_console *nc)
{
	struct pk_log *log = nc->src ? nc->src : pk_printk_log_peek();

	return log ? (int64_t)pk_load_relaxed(&pk_log_shared(log)->realtime_offset_ns)
		   : pk_realtime_offset_ns();
}

static const char *app_name(struct net_console *nc, uint32_t pid)
{
	if (!nc->src && (pid == 0 || pid == pk_caller_pid()))
		return nc->app;
	if (nc->comm_pid != (pid_t)pid) {
		struct pk_log *log = nc->src ? nc->src : pk_printk_log_peek();
		char path[32];
		int fd;
		ssize_t n = -1;

		/* Another writer of a shared log file: the log names it (dead
		 * ones too); else the process itself, while it lives. */
		if (log && pk_log_writer_name(log, pid, nc->comm, sizeof(nc->comm)) == 0) {
			nc->comm_pid = (pid_t)pid;
			return nc->comm;
		}
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			n = read(fd, nc->comm, sizeof(nc->comm) - 1);
			close(fd);
		}
		if (n > 0 && nc->comm[n - 1] == '\n')
			n--;
		nc->comm[n > 0 ? n : 0] = '\0';
		nc->comm_pid = (pid_t)pid;
	}
	return nc->comm[0] ? nc->comm : nc->app;
}

struct sd_ctx {
	struct sb *b;
};

static void sd_param(void *arg, const char *k, size_t kn, const char *v, size_t vn)
{
	struct sb *b = ((struct sd_ctx *)arg)->b;
	char name[SD_NAME_MAX + 1];

	sb_ch(b, ' ');
	sb_put(b, name, pk_net_sd_name(name, k, kn));
	sb_str(b, "=\"");
	sb_sd_value(b, v, vn);
	sb_ch(b, '"');
}

size_t pk_net_format_syslog(char *out, size_t cap, const struct pk_record *rec, int format,
			    unsigned enterprise, const char *host, const char *app,
			    int64_t rt_offset)
{
	struct sb b = { out, 0, cap };
	uint64_t rt = rec->ts_nsec + (uint64_t)rt_offset;
	time_t secs = (time_t)(rt / 1000000000u);
	struct tm tm;
	char t[64];
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;

	int no_bom = format & PK_NET_NO_BOM;

	format &= ~PK_NET_NO_BOM;
	sb_ch(&b, '<');
	sb_u64(&b, wire_facility(rec->facility) * 8u + (rec->level & 7u));
	sb_ch(&b, '>');
	if (format == PK_SYSLOG_RFC3164) {
		static const char mon[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
						 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

		localtime_r(&secs, &tm);
		snprintf(t, sizeof(t), "%s %2d %02d:%02d:%02d ", mon[tm.tm_mon % 12], tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
		sb_str(&b, t);
		sb_header_field(&b, host, 255);
		sb_ch(&b, ' ');
		sb_header_field(&b, app, 32);
		snprintf(t, sizeof(t), "[%u]: ", rec->pid);
		sb_str(&b, t);
		sb_put(&b, rec->text, tlen);
		return b.len;
	}
	gmtime_r(&secs, &tm);
	snprintf(t, sizeof(t), "1 %04d-%02d-%02dT%02d:%02d:%02d.%06uZ ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(rt % 1000000000u / 1000u));
	sb_str(&b, t);
	sb_header_field(&b, host, 255);
	sb_ch(&b, ' ');
	sb_header_field(&b, app, 48);
	snprintf(t, sizeof(t), " %u - [printk@%u seq=\"%llu\" tid=\"%u\"", rec->pid, enterprise,
		 (unsigned long long)rec->seq, rec->tid);
	sb_str(&b, t);

	struct sd_ctx ctx = { &b };

	each_dict(rec, sd_param, &ctx);
	sb_ch(&b, ']');
	if (tlen) {
		sb_ch(&b, ' ');
		if (!no_bom && pk_net_utf8_valid(rec->text, tlen))
			sb_str(&b, "\xef\xbb\xbf");
		sb_put(&b, rec->text, tlen);
	}
	return b.len;
}

/* One journal field: KEY=VALUE\n, or, when the value holds a newline,
 * KEY\n, its length as 64-bit little endian, the value, \n. */
static void jfield(struct sb *b, const char *name, const char *v, size_t n)
{
	sb_str(b, name);
	if (!memchr(v, '\n', n)) {
		sb_ch(b, '=');
		sb_put(b, v, n);
	} else {
		unsigned char le[8];

		sb_ch(b, '\n');
		for (int i = 0; i < 8; i++)
			le[i] = (unsigned char)((uint64_t)n >> (8 * i));
		sb_put(b, le, 8);
		sb_put(b, v, n);
	}
	sb_ch(b, '\n');
}

static void jfield_u64(struct sb *b, const char *name, uint64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

	jfield(b, name, t, (size_t)n);
}

static void journal_param(void *arg, const char *k, size_t kn, const char *v, size_t vn)
{
	char name[JOURNAL_NAME_MAX + 8];

	/* A key that would stand for one of our own fields gets DICT_. */
	pk_json_field_name(name, k, kn);
	jfield(arg, name, v, vn);
}

size_t pk_net_format_journal(char *out, size_t cap, const struct pk_record *rec, const char *app,
			     int64_t rt_offset)
{
	struct sb b = { out, 0, cap };
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;

	jfield(&b, "MESSAGE", rec->text, tlen);
	jfield_u64(&b, "PRIORITY", rec->level & 7u);
	jfield_u64(&b, "SYSLOG_FACILITY", wire_facility(rec->facility));
	jfield(&b, "SYSLOG_IDENTIFIER", app, strlen(app));
	jfield_u64(&b, "SYSLOG_PID", rec->pid);
	jfield_u64(&b, "TID", rec->tid);
	jfield_u64(&b, "PRINTK_SEQ", rec->seq);
	jfield_u64(&b, "PRINTK_REALTIME_USEC", (rec->ts_nsec + (uint64_t)rt_offset) / 1000u);
	each_dict(rec, journal_param, &b);
	return b.len;
}

/* ----------------------------------------------------------- sockets -- */

static void set_send_timeout(int fd)
{
	struct timeval tv = { SEND_TIMEOUT_MS / 1000, (SEND_TIMEOUT_MS % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void net_close(struct net_console *nc)
{
	if (nc->tls_s) { /* no close_notify: the connection broke (N8) */
		pk_tls_free(nc->tls_s, 0);
		nc->tls_s = NULL;
	}
	if (nc->fd >= 0 && nc->fd_pid == (pid_t)pk_caller_pid())
		close(nc->fd);
	if (nc->fd >= 0 && nc->unconfirmed)
		nc->broken = 1;
	if (nc->fd >= 0 && nc->rs_len)
		nc->rs_pending = 1; /* N7 */
	nc->fd = -1;
}

/* A datagram socket (unix or UDP) for @nc; UDP is connected, so that a
 * receiver that is not there shows as a send error. */
static int dgram_open(struct net_console *nc)
{
	int fd = socket(nc->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	set_send_timeout(fd);
	if (nc->kind == NET_UDP && connect(fd, (struct sockaddr *)&nc->addr, nc->addr_len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	nc->fd = fd;
	nc->fd_pid = (pid_t)pk_caller_pid();
	return 0;
}

static int tcp_connect(struct net_console *nc)
{
	int fd = socket(nc->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0;

	nc->why[0] = '\0';
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&nc->addr, nc->addr_len) < 0) {
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
	if (nc->tls_ctx) {
		/* N8: a refused certificate is this connection's failure */
		err = pk_tls_connect(&nc->tls_s, nc->tls_ctx, fd,
				     nc->tls_peer, TLS_HANDSHAKE_MS, nc->why, sizeof(nc->why));
		if (err) {
			nc->why_err = err;
			close(fd);
			return err;
		}
	}
	nc->fd = fd;
	nc->fd_pid = (pid_t)pk_caller_pid();
	return 0;
}

/* The receiver closed the connection (a syslog receiver never sends, so
 * anything readable is the end: -ESHUTDOWN) or it failed (its error, as
 * -ECONNRESET); 0 while it is there. */
static int tcp_peer_gone(int fd)
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

static int tcp_peer_gone(int fd);

/* tcp_peer_gone() for @nc's connection, through its TLS session if any. */
static int stream_gone(struct net_console *nc)
{
	return nc->tls_s ? pk_tls_peer_gone(nc->tls_s) : tcp_peer_gone(nc->fd);
}

static int send_all(int fd, const char *p, size_t n)
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

/* The journal: one datagram, or the payload in a sealed memfd passed with
 * SCM_RIGHTS when it is too big for one (as libsystemd does). */
static int journal_send(struct net_console *nc, const char *p, size_t n)
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

static int relp_send(struct net_console *nc, char *msg, size_t n);

/* One message on @nc's open transport. */
static int net_send(struct net_console *nc, char *msg, size_t n)
{
	switch (nc->kind) {
	case NET_JOURNAL:
		return journal_send(nc, msg, n);
	case NET_UNIX: {
		ssize_t w;

		while ((w = sendto(nc->fd, msg, n, MSG_NOSIGNAL, (struct sockaddr *)&nc->addr,
				   nc->addr_len)) < 0 &&
		       errno == EINTR)
			;
		return w < 0 ? -errno : 0;
	}
	case NET_UDP:
		return send_all(nc->fd, msg, n);
	case NET_TCP: {
		if (nc->framing == PK_SYSLOG_FRAMING_LF) {
			/* RFC 6587 non-transparent framing: a newline ends the
			 * message, so one inside it goes as "#012", the escape
			 * rsyslog itself writes for a control character. */
			size_t k = 0;

			for (size_t i = 0; i < n; i++) {
				if (msg[i] == '\n') {
					memcpy(nc->lf + k, "#012", 4);
					k += 4;
				} else {
					nc->lf[k++] = msg[i];
				}
			}
			nc->lf[k++] = '\n';
			return send_all(nc->fd, nc->lf, k);
		}
		/* RFC 6587 octet counting: "LEN SP MSG"; the caller left room
		 * for the prefix before @msg. */
		char t[24];
		int k = snprintf(t, sizeof(t), "%zu ", n);

		msg -= k;
		memcpy(msg, t, (size_t)k);
		if (nc->tls_s)
			return pk_tls_write(nc->tls_s, msg, n + (size_t)k);
		return send_all(nc->fd, msg, n + (size_t)k);
	}
	case NET_RELP:
		return relp_send(nc, msg, n);
	}
	return -EINVAL;
}

/* ---------------------------------------------------------- the write -- */

#define MSG_ROOM 24 /* before the message: the TCP frame's length */

static size_t format_record(struct net_console *nc, const struct pk_record *rec)
{
	char *out = nc->buf + MSG_ROOM;
	size_t cap = sizeof(nc->buf) - MSG_ROOM;
	const char *app = app_name(nc, rec->pid);

	if (nc->kind == NET_JOURNAL)
		return pk_net_format_journal(out, cap, rec, app, realtime_offset(nc));
	return pk_net_format_syslog(out, cap, rec, nc->format | (nc->no_bom ? PK_NET_NO_BOM : 0),
				    nc->enterprise, nc->host, app, realtime_offset(nc));
}

/* The dropped notice as a record of its own: level 4, no dictionary. */
static size_t format_notice(struct net_console *nc, const struct pk_record *next, uint64_t n)
{
	struct pk_record *notice = &nc->notice;

	memset(notice, 0, offsetof(struct pk_record, text));
	notice->seq = next->seq;
	notice->ts_nsec = next->ts_nsec;
	notice->pid = pk_caller_pid();
	notice->tid = next->tid;
	notice->level = 4;
	notice->facility = next->facility;
	notice->text_len =
		(uint16_t)snprintf(notice->text, sizeof(notice->text),
				   "** %llu printk messages dropped **", (unsigned long long)n);
	notice->dict[0] = '\0';
	return format_record(nc, notice);
}

static void schedule_retry(struct net_console *nc)
{
	nc->next_try_ns = pk_clock_ns() + (uint64_t)nc->backoff_ms * 1000000u;
	nc->backoff_ms = nc->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : nc->backoff_ms * 2;
}

/* N2: before a connection attempt: sleep until it is due if that is
 * RETRY_SLEEP_MS away at most; -EAGAIN if it is further. */
static int retry_wait(const struct net_console *nc)
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

/* ------------------------------------------------------------- state -- */

static const char *err_words(int err)
{
	/* tcp_peer_gone(): the system's words for it speak of our side */
	const char *s = err == -ESHUTDOWN ? "the collector closed the connection"
		      : err < 0	       ? strerrordesc_np(-err)
					 : NULL;

	return s ? s : "unknown error";
}

/* N6, N8: @err in words: TLS's own when it explained it. */
static const char *nc_words(const struct net_console *nc, int err)
{
	return nc->why[0] && nc->why_err == err ? nc->why : err_words(err);
}

/* Records of the log from @pos on. */
static uint64_t waiting_from(const struct net_console *nc, uint64_t pos)
{
	struct pk_log *log = nc->src ? nc->src : pk_printk_log_peek();
	uint64_t next = log ? pk_log_next_seq(log) : pos;

	return next > pos ? next - pos : 0;
}

static uint64_t lost_total(const struct net_console *nc)
{
	return atomic_load_explicit(&nc->dropped, memory_order_relaxed) +
	       atomic_load_explicit(&nc->lost_sends, memory_order_relaxed);
}

/* N6: one line, as a notice record and, with no text console to print
 * it, on stderr. */
static void announce(struct net_console *nc, int level, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
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
	if (!pk_console_text_listed()) {
		struct console *err_con = pk_console_stderr();

		err_con->write_checked(err_con, line, (size_t)n);
	}
}

static int is_stream(const struct net_console *nc)
{
	return nc->kind == NET_TCP || nc->kind == NET_RELP;
}

/* N6: delivery failed with @err, record @seq first in line. */
static void went_down(struct net_console *nc, int err, uint64_t seq)
{
	int was = atomic_load_explicit(&nc->state, memory_order_relaxed);
	int now = was == PK_CONSOLE_IDLE || was == PK_CONSOLE_CANNOT_CONNECT ? PK_CONSOLE_CANNOT_CONNECT
									     : PK_CONSOLE_LOST;

	atomic_store_explicit(&nc->last_error, err, memory_order_relaxed);
	nc->last_fail_ns = pk_clock_ns();
	if (was == now)
		return;
	atomic_store_explicit(&nc->state, now, memory_order_relaxed);
	if (is_stream(nc))
		announce(nc, 4, "printk: console [%.16s] %s %s: %s (%llu waiting, %llu lost)\n",
			 nc->con.name, now == PK_CONSOLE_LOST ? "lost" : "cannot reach", nc->target,
			 nc_words(nc, err), (unsigned long long)waiting_from(nc, seq),
			 (unsigned long long)lost_total(nc));
	else
		announce(nc, 4, "printk: console [%.16s] cannot deliver to %s: %s; records are lost until it answers (%llu lost)\n",
			 nc->con.name, nc->target, err_words(err), (unsigned long long)lost_total(nc));
}

/* N6: a message went. UDP learns of a refusal one send late (the ICMP
 * answer): it counts as back only a second after its last failure, so a
 * port nobody listens on does not flap. */
static void went_up(struct net_console *nc, uint64_t seq)
{
	int was = atomic_load_explicit(&nc->state, memory_order_relaxed);

	if (was == PK_CONSOLE_DELIVERING)
		return;
	if (nc->kind == NET_UDP && was != PK_CONSOLE_IDLE &&
	    pk_clock_ns() - nc->last_fail_ns < UDP_SETTLE_NS)
		return;
	atomic_store_explicit(&nc->state, PK_CONSOLE_DELIVERING, memory_order_relaxed);
	if (was == PK_CONSOLE_IDLE)
		return;
	if (nc->rs_resent)
		announce(nc, 5, "printk: console [%.16s] reconnected to %s: %llu records written before the break sent again (%llu waiting, %llu lost)\n",
			 nc->con.name, nc->target, (unsigned long long)nc->rs_resent,
			 (unsigned long long)waiting_from(nc, seq), (unsigned long long)lost_total(nc));
	else
		announce(nc, 5, "printk: console [%.16s] %s %s (%llu waiting, %llu lost)\n", nc->con.name,
			 was == PK_CONSOLE_LOST ? "reconnected to" : "reached", nc->target,
			 (unsigned long long)waiting_from(nc, seq), (unsigned long long)lost_total(nc));
	nc->rs_resent = 0;
}

/* N2: TCP: connect if due; -EAGAIN while the receiver is away. */
static int tcp_ready(struct net_console *nc, uint64_t seq)
{
	int err;

	if (nc->fd >= 0 && nc->fd_pid != (pid_t)pk_caller_pid()) {
		/* N4: a child; what the parent wrote is the parent's to resend */
		nc->rs_len = 0;
		nc->rs_unkept = 0;
		nc->rs_pending = 0;
		net_close(nc);
	}
	if (nc->fd >= 0 && (err = stream_gone(nc))) {
		net_close(nc);
		went_down(nc, err, seq);
	}
	if (nc->fd >= 0)
		return 0;

	if (retry_wait(nc))
		return -EAGAIN;
	if ((err = tcp_connect(nc))) {
		atomic_fetch_add_explicit(&nc->send_errors, 1, memory_order_relaxed);
		went_down(nc, err, seq);
		schedule_retry(nc);
		return -EAGAIN;
	}
	nc->backoff_ms = BACKOFF_MIN_MS;
	atomic_fetch_add_explicit(&nc->connects, 1, memory_order_relaxed);
	return 0;
}

/* -------------------------------------------------------------- RELP -- */

#ifdef PRINTK_HAVE_RELP
/* librelp's entry points, looked up once (dlopen: see the file comment). */
static struct {
	relpRetVal (*engine_construct)(relpEngine_t **);
	relpRetVal (*engine_destruct)(relpEngine_t **);
	relpRetVal (*engine_set_dbgprint)(relpEngine_t *, void (*)(char *, ...));
	relpRetVal (*engine_set_enable_cmd)(relpEngine_t *, unsigned char *, relpCmdEnaState_t);
	relpRetVal (*engine_set_on_err)(relpEngine_t *,
					void (*)(void *, char *, char *, relpRetVal));
	relpRetVal (*clt_construct)(relpEngine_t *, relpClt_t **);
	relpRetVal (*clt_destruct)(relpEngine_t *, relpClt_t **);
	relpRetVal (*clt_connect)(relpClt_t *, int, unsigned char *, unsigned char *);
	relpRetVal (*clt_send_syslog)(relpClt_t *, unsigned char *, size_t);
	relpRetVal (*clt_set_timeout)(relpClt_t *, unsigned);
	relpRetVal (*clt_set_usr_ptr)(relpClt_t *, void *);
	relpRetVal (*clt_reconnect)(relpClt_t *);
	/* N8: RELP over TLS, librelp's */
	relpRetVal (*engine_set_tls_lib_by_name)(relpEngine_t *, const char *);
	relpRetVal (*engine_set_on_auth_err)(relpEngine_t *,
					     void (*)(void *, char *, char *, relpRetVal));
	relpRetVal (*clt_enable_tls)(relpClt_t *);
	relpRetVal (*clt_set_ca_cert)(relpClt_t *, char *);
	relpRetVal (*clt_set_own_cert)(relpClt_t *, char *);
	relpRetVal (*clt_set_priv_key)(relpClt_t *, char *);
	relpRetVal (*clt_set_auth_mode)(relpClt_t *, char *);
	relpRetVal (*clt_add_permitted_peer)(relpClt_t *, char *);
} relp;
static pthread_once_t relp_once = PTHREAD_ONCE_INIT;
static int relp_ok;

static void relp_load(void)
{
	void *h = dlopen("librelp.so.0", RTLD_NOW | RTLD_LOCAL);
	int ok = 1;

	if (!h)
		return;
#define RELP_SYM(field, name)                                  \
	do {                                                   \
		void *f = dlsym(h, name);                      \
		ok &= f != NULL;                               \
		memcpy(&relp.field, &f, sizeof(relp.field));   \
	} while (0)
	RELP_SYM(engine_construct, "relpEngineConstruct");
	RELP_SYM(engine_destruct, "relpEngineDestruct");
	RELP_SYM(engine_set_dbgprint, "relpEngineSetDbgprint");
	RELP_SYM(engine_set_enable_cmd, "relpEngineSetEnableCmd");
	RELP_SYM(engine_set_on_err, "relpEngineSetOnErr");
	RELP_SYM(clt_construct, "relpEngineCltConstruct");
	RELP_SYM(clt_destruct, "relpEngineCltDestruct");
	RELP_SYM(clt_connect, "relpCltConnect");
	RELP_SYM(clt_send_syslog, "relpCltSendSyslog");
	RELP_SYM(clt_set_timeout, "relpCltSetTimeout");
	RELP_SYM(clt_set_usr_ptr, "relpCltSetUsrPtr");
	RELP_SYM(clt_reconnect, "relpCltReconnect");
	RELP_SYM(engine_set_tls_lib_by_name, "relpEngineSetTLSLibByName");
	RELP_SYM(engine_set_on_auth_err, "relpEngineSetOnAuthErr");
	RELP_SYM(clt_enable_tls, "relpCltEnableTLS");
	RELP_SYM(clt_set_ca_cert, "relpCltSetCACert");
	RELP_SYM(clt_set_own_cert, "relpCltSetOwnCert");
	RELP_SYM(clt_set_priv_key, "relpCltSetPrivKey");
	RELP_SYM(clt_set_auth_mode, "relpCltSetAuthMode");
	RELP_SYM(clt_add_permitted_peer, "relpCltAddPermittedPeer");
#undef RELP_SYM
	relp_ok = ok;
}

static int relp_available(void)
{
	pthread_once(&relp_once, relp_load);
	return relp_ok;
}

/* librelp may write into a connection the receiver closed: a SIGPIPE it
 * raises must not kill the program. It is blocked in this thread around the
 * call and, if it was not pending before, taken back afterwards. */
struct pipe_guard {
	sigset_t old;
	int was_pending;
};

static void pipe_block(struct pipe_guard *g)
{
	sigset_t s, pend;

	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &s, &g->old);
	sigpending(&pend);
	g->was_pending = sigismember(&pend, SIGPIPE) == 1;
}

static void pipe_restore(struct pipe_guard *g)
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

/* librelp calls its debug hook unconditionally: it must be set. */
static void relp_dbgprint(char *fmt, ...)
{
	(void)fmt;
}

/* librelp's error callback: counted, so that a commit sees a close that
 * failed (its return value does not say). */
static void relp_on_err(void *usr, char *obj, char *msg, relpRetVal code)
{
	struct net_console *nc = usr;

	(void)obj;
	if (!nc)
		return;
	nc->relp_errors++;
	/* N8: librelp's words for a TLS failure, the only ones it gives */
	if (nc->tls && msg && !nc->why[0] && (code == RELP_RET_ERR_TLS_SETUP || code == RELP_RET_ERR_TLS_HANDS ||
			       code == RELP_RET_ERR_TLS || code == RELP_RET_AUTH_ERR_NAME ||
			       code == RELP_RET_AUTH_CERT_INVL || code == RELP_RET_AUTH_NO_CERT ||
			       code == RELP_RET_AUTH_ERR_FP)) {
		snprintf(nc->why, sizeof(nc->why), "TLS: %s", msg);
		nc->why_err = code == RELP_RET_ERR_TLS_SETUP || code == RELP_RET_ERR_TLS_HANDS ||
					      code == RELP_RET_ERR_TLS
				      ? -EPROTO
				      : -PK_TLS_EREFUSED;
	}
}

/* librelp's answer when the peer's certificate is refused. */
static void relp_on_auth_err(void *usr, char *info, char *msg, relpRetVal code)
{
	struct net_console *nc = usr;

	(void)code;
	if (!nc || !nc->tls)
		return;
	nc->relp_errors++;
	snprintf(nc->why, sizeof(nc->why), "certificate refused: %.100s%s%.60s", msg ? msg : "",
		 info ? ": " : "", info ? info : "");
	nc->why_err = -PK_TLS_EREFUSED;
}

/* N8: the session's TLS settings, before it connects. */
static relpRetVal relp_tls_setup(struct net_console *nc, relpClt_t *clt)
{
	relpRetVal r = relp.clt_enable_tls(clt);

	if (r == RELP_RET_OK && nc->tls_ca[0])
		r = relp.clt_set_ca_cert(clt, nc->tls_ca);
	if (r == RELP_RET_OK && nc->tls_cert[0])
		r = relp.clt_set_own_cert(clt, nc->tls_cert);
	if (r == RELP_RET_OK && nc->tls_key[0])
		r = relp.clt_set_priv_key(clt, nc->tls_key);
	if (r == RELP_RET_OK)
		r = relp.clt_set_auth_mode(clt, (char *)"name");
	if (r == RELP_RET_OK)
		r = relp.clt_add_permitted_peer(clt, nc->tls_peer);
	return r;
}

/* N4: a session made by another process (the parent) is abandoned. */
static void relp_forget_inherited(struct net_console *nc)
{
	if (nc->relp_engine && nc->relp_pid != (pid_t)pk_caller_pid()) {
		nc->relp_engine = NULL;
		nc->relp_clt = NULL;
		nc->relp_reconnect = 0;
	}
}

static void relp_drop_client(struct net_console *nc)
{
	relpClt_t *clt = nc->relp_clt;
	struct pipe_guard g;

	if (!clt)
		return;
	pipe_block(&g);
	relp.clt_destruct(nc->relp_engine, &clt);
	pipe_restore(&g);
	nc->relp_clt = NULL;
	nc->relp_reconnect = 0;
}

/* N6: librelp does not say why a connection failed (the errno it leaves
 * is its non-blocking connect's EINPROGRESS): a plain TCP connection to the
 * same address, closed at once, tells. One that succeeds means something
 * listens there but the RELP session failed. Only when the state changes,
 * so a receiver that is away sees one such probe per announcement. */
static int relp_reason(struct net_console *nc)
{
	int err = tcp_connect(nc);

	if (err)
		return err;
	close(nc->fd);
	nc->fd = -1;
	return -EPROTO;
}

/* Connect (or reconnect, which resends what the receiver has not
 * acknowledged); -EAGAIN while the receiver is away (N2). */
static int relp_ready(struct net_console *nc, uint64_t seq)
{
	struct pipe_guard g;
	relpRetVal r;

	relp_forget_inherited(nc);
	if (nc->relp_clt && !nc->relp_reconnect)
		return 0;

	if (retry_wait(nc))
		return -EAGAIN;
	if (!nc->relp_engine) {
		relpEngine_t *e = NULL;

		if (relp.engine_construct(&e) != RELP_RET_OK)
			return -EAGAIN;
		relp.engine_set_dbgprint(e, relp_dbgprint);
		relp.engine_set_enable_cmd(e, (unsigned char *)"syslog", eRelpCmdState_Required);
		relp.engine_set_on_err(e, relp_on_err);
		relp.engine_set_on_auth_err(e, relp_on_auth_err);
		/* the TLS library this program's tls: targets use too */
		if (nc->tls)
			relp.engine_set_tls_lib_by_name(e, "openssl");
		nc->relp_engine = e;
		nc->relp_pid = (pid_t)pk_caller_pid();
	}
	pipe_block(&g);
	nc->why[0] = '\0';
	if (nc->relp_clt) {
		r = relp.clt_reconnect(nc->relp_clt);
	} else {
		relpClt_t *clt = NULL;

		r = relp.clt_construct(nc->relp_engine, &clt);
		if (r == RELP_RET_OK) {
			relp.clt_set_timeout(clt, RELP_TIMEOUT_S);
			relp.clt_set_usr_ptr(clt, nc);
			if (nc->tls)
				r = relp_tls_setup(nc, clt);
			if (r == RELP_RET_OK)
				r = relp.clt_connect(clt, nc->addr.ss_family,
						     (unsigned char *)nc->relp_port,
						     (unsigned char *)nc->relp_host);
			if (r != RELP_RET_OK)
				relp.clt_destruct(nc->relp_engine, &clt);
			else
				nc->relp_clt = clt;
		}
	}
	pipe_restore(&g);
	if (r != RELP_RET_OK) {
		atomic_fetch_add_explicit(&nc->send_errors, 1, memory_order_relaxed);
		if (nc->why[0]) /* N8: librelp said why (TLS) */
			went_down(nc, nc->why_err, seq);
		else if (atomic_load_explicit(&nc->state, memory_order_relaxed) == PK_CONSOLE_DELIVERING ||
		    atomic_load_explicit(&nc->state, memory_order_relaxed) == PK_CONSOLE_IDLE)
			went_down(nc, relp_reason(nc), seq);
		else
			went_down(nc, atomic_load_explicit(&nc->last_error, memory_order_relaxed), seq);
		schedule_retry(nc);
		return -EAGAIN;
	}
	nc->relp_reconnect = 0;
	nc->backoff_ms = BACKOFF_MIN_MS;
	atomic_fetch_add_explicit(&nc->connects, 1, memory_order_relaxed);
	return 0;
}

static int relp_send(struct net_console *nc, char *msg, size_t n)
{
	struct pipe_guard g;
	relpRetVal r;

	pipe_block(&g);
	r = relp.clt_send_syslog(nc->relp_clt, (unsigned char *)msg, n);
	pipe_restore(&g);
	return r == RELP_RET_OK ? 0 : -EPIPE;
}

/* N5: close the session; a clean close acknowledges everything before it. */
static int relp_commit(struct net_console *nc)
{
	unsigned errors = nc->relp_errors;

	relp_forget_inherited(nc);
	if (!nc->relp_clt)
		return nc->unconfirmed ? -EAGAIN : 0;
	if (nc->relp_reconnect) {
		relp_drop_client(nc);
		return -EAGAIN;
	}
	relp_drop_client(nc);
	return nc->relp_errors == errors ? 0 : -EAGAIN;
}

/*
 * At exit (the console's thread gone) or release: close the session, which waits for
 * the receiver's answers to every frame sent (RELP_TIMEOUT_S at most). A
 * session that broke, or a close that failed, leaves the frames librelp
 * still held unanswered: at most its window, and no more than were sent
 * since the session began; said in one line on stderr.
 */
#define RELP_WINDOW 128 /* librelp's unanswered frames per session */

static void relp_close_at_exit(struct net_console *nc)
{
	unsigned errors = nc->relp_errors;
	int broken;

	relp_forget_inherited(nc);
	if (!nc->relp_clt)
		return;
	broken = nc->relp_reconnect;
	relp_drop_client(nc);
	if (!broken && nc->relp_errors == errors)
		return;

	struct console *err_con = pk_console_stderr();
	uint64_t n = nc->unconfirmed < RELP_WINDOW ? nc->unconfirmed : RELP_WINDOW;
	char line[200];
	int len = snprintf(line, sizeof(line),
			   "printk: console [%.16s]: the RELP session did not close cleanly: up to %llu records sent last may not have arrived\n",
			   nc->con.name, (unsigned long long)n);

	if (len > 0)
		err_con->write_checked(err_con, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
}

static void relp_release(struct net_console *nc)
{
	relpEngine_t *e = nc->relp_engine;

	relp_close_at_exit(nc);
	if (nc->relp_engine) {
		relp.engine_destruct(&e);
		nc->relp_engine = NULL;
	}
}
#else
static int relp_available(void)
{
	return 0;
}

static int relp_ready(struct net_console *nc, uint64_t seq)
{
	(void)nc, (void)seq;
	return -EAGAIN;
}

static int relp_send(struct net_console *nc, char *msg, size_t n)
{
	(void)nc, (void)msg, (void)n;
	return -EPROTONOSUPPORT;
}

static int relp_commit(struct net_console *nc)
{
	(void)nc;
	return -EAGAIN;
}

static void relp_close_at_exit(struct net_console *nc)
{
	(void)nc;
}

static void relp_release(struct net_console *nc)
{
	(void)nc;
}
#endif

/* A message could not be sent. TCP: the connection is given up (a frame
 * may be cut) and the record waits; otherwise it is lost, and counted. */
static int send_failed(struct net_console *nc, int err, uint64_t seq)
{
	atomic_fetch_add_explicit(&nc->send_errors, 1, memory_order_relaxed);
	if (nc->kind == NET_TCP) {
		net_close(nc);
		went_down(nc, err, seq);
		schedule_retry(nc);
		return -EAGAIN;
	}
	if (nc->kind == NET_RELP) {
		/* The session is broken: the next attempt reconnects, and
		 * librelp resends the frames that were not acknowledged. */
		nc->relp_reconnect = 1;
		nc->broken = 1;
		went_down(nc, err, seq);
		schedule_retry(nc);
		return -EAGAIN;
	}
	/* A full receiver queue: the record waits rather than being lost. */
	if (nc->kind != NET_UDP && (err == -EAGAIN || err == -EWOULDBLOCK))
		return -EAGAIN;
	atomic_fetch_add_explicit(&nc->lost_sends, 1, memory_order_relaxed);
	atomic_store_explicit(&nc->pos, seq + 1, memory_order_relaxed);
	went_down(nc, err, seq + 1);
	return 0;
}

/* N7: the receiver's kernel took every byte (the send queue is empty):
 * what was written RESEND_SLACK_MS before now has been read, or is lost
 * with the receiver's process whatever we do. */
static void resend_prune(struct net_console *nc)
{
	int outq = 0;

	if (!nc->rs_len || ioctl(nc->fd, SIOCOUTQ, &outq) < 0 || outq != 0)
		return;

	uint64_t now = pk_clock_ns(),
		 slack = (uint64_t)atomic_load_explicit(&nc->rs_slack_ms, memory_order_relaxed) * 1000000u;

	while (nc->rs_len && nc->rs[nc->rs_head].written_ns + slack <= now) {
		nc->rs_head = (nc->rs_head + 1) % RESEND_MAX;
		nc->rs_len--;
	}
	if (!nc->rs_len)
		nc->rs_unkept = 0;
}

static void resend_keep(struct net_console *nc, uint64_t seq)
{
	if (nc->rs_len == RESEND_MAX) {
		nc->rs_head = (nc->rs_head + 1) % RESEND_MAX;
		nc->rs_len--;
		nc->rs_unkept++;
	}

	struct resend *r = &nc->rs[(nc->rs_head + nc->rs_len++) % RESEND_MAX];

	r->seq = seq;
	r->written_ns = pk_clock_ns();
}

/* N7: on a new connection, the window again, before record @next. 0, or
 * send_failed()'s answer. */
static int resend_window(struct net_console *nc, uint64_t next)
{
	struct pk_log *log = pk_printk_log_peek();
	uint64_t lost = nc->rs_unkept, resent = 0;
	int err;

	for (unsigned i = 0; i < nc->rs_len; i++) {
		struct resend *r = &nc->rs[(nc->rs_head + i) % RESEND_MAX];

		if (r->seq >= next)
			break;
		if (!log || pk_log_read(log, r->seq, &nc->rs_rec, 0) || nc->rs_rec.seq != r->seq) {
			lost++; /* the ring overwrote it */
			continue;
		}

		size_t n = format_record(nc, &nc->rs_rec);

		if ((err = net_send(nc, nc->buf + MSG_ROOM, n)))
			return send_failed(nc, err, next);
		r->written_ns = pk_clock_ns();
		resent++;
	}
	atomic_fetch_add_explicit(&nc->lost_sends, lost, memory_order_relaxed);
	atomic_fetch_add_explicit(&nc->sent, resent, memory_order_relaxed);
	nc->rs_unkept = 0;
	nc->rs_pending = 0;
	nc->rs_resent = resent;
	return 0;
}

static int net_write_record(struct console *con, const struct pk_record *rec)
{
	struct net_console *nc = (struct net_console *)con;
	int err;

	atomic_store_explicit(&nc->pos, rec->seq, memory_order_relaxed);
	if (nc->kind == NET_TCP) {
		if ((err = tcp_ready(nc, rec->seq)))
			return err;
		if (nc->rs && nc->rs_pending && (err = resend_window(nc, rec->seq)))
			return err;
		if (nc->rs)
			resend_prune(nc);
	} else if (nc->kind == NET_RELP) {
		if ((err = relp_ready(nc, rec->seq)))
			return err;
	} else if (nc->fd < 0 || nc->fd_pid != (pid_t)pk_caller_pid()) {
		nc->fd = -1;
		if ((err = dgram_open(nc))) {
			atomic_fetch_add_explicit(&nc->send_errors, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&nc->lost_sends, 1, memory_order_relaxed);
			atomic_store_explicit(&nc->pos, rec->seq + 1, memory_order_relaxed);
			went_down(nc, err, rec->seq + 1);
			return 0;
		}
	}

	uint64_t lost = con->state ? pk_console_take_dropped(con) : 0;

	nc->lost += lost;
	atomic_fetch_add_explicit(&nc->dropped, lost, memory_order_relaxed);
	if (nc->lost) {
		size_t n = format_notice(nc, rec, nc->lost);

		if ((err = net_send(nc, nc->buf + MSG_ROOM, n)))
			return send_failed(nc, err, rec->seq);
		nc->lost = 0;
		nc->unconfirmed++;
		atomic_fetch_add_explicit(&nc->sent, 1, memory_order_relaxed);
	}

	size_t n = format_record(nc, rec);

	if ((err = net_send(nc, nc->buf + MSG_ROOM, n)))
		return send_failed(nc, err, rec->seq);
	nc->unconfirmed++;
	if (nc->rs && con->state)
		resend_keep(nc, rec->seq);
	atomic_fetch_add_explicit(&nc->sent, 1, memory_order_relaxed);
	atomic_store_explicit(&nc->pos, rec->seq + 1, memory_order_relaxed);
	went_up(nc, rec->seq + 1);
	return 0;
}

/* ------------------------------------------------------- construction -- */

int pk_console_net_owns(const struct console *con)
{
	return con && con->write_record == net_write_record;
}

/* pk_console_set_exit_close(): at exit, with the console's thread gone. */
static void net_exit_close(struct console *con)
{
	struct net_console *nc = (struct net_console *)con;

	if (pk_console_net_owns(con) && nc->kind == NET_RELP)
		relp_close_at_exit(nc);
	if (pk_console_net_owns(con) && nc->kind == NET_TCP && nc->rs_pending && nc->rs_len) {
		/* N7: written into a connection that broke, never sent again */
		struct console *err_con = pk_console_stderr();
		char line[200];
		int len = snprintf(line, sizeof(line),
				   "printk: console [%.16s]: %u records written before the connection to %.64s broke were not sent again at exit\n",
				   nc->con.name, nc->rs_len, nc->target);

		if (len > 0)
			err_con->write_checked(err_con, line,
					       (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
	}
}

/* Unregistered by pk_printk_exit(), or freed by pk_console_destroy(). */
static void net_release(struct console *con)
{
	struct net_console *nc = (struct net_console *)con;

	if (nc->kind == NET_RELP)
		relp_release(nc);
	if (nc->tls_s) { /* N8: close_notify, the receiver sees a clean end */
		pk_tls_free(nc->tls_s, nc->fd_pid == (pid_t)pk_caller_pid());
		nc->tls_s = NULL;
	}
	net_close(nc);
	pk_tls_ctx_free(nc->tls_ctx);
	free(nc->rs);
	free(nc);
}

void pk_console_net_set_resend_slack(struct console *con, unsigned ms)
{
	if (pk_console_net_owns(con))
		atomic_store_explicit(&((struct net_console *)con)->rs_slack_ms, ms, memory_order_relaxed);
}

void pk_console_net_set_max_datagram(struct console *con, size_t n)
{
	if (pk_console_net_owns(con))
		((struct net_console *)con)->max_datagram = n;
}

static struct net_console *net_alloc(enum net_kind kind, const char *name)
{
	struct net_console *nc = calloc(1, sizeof(*nc));

	if (!nc)
		return NULL;
	snprintf(nc->con.name, sizeof(nc->con.name), "%s", name);
	nc->con.write_record = net_write_record;
	nc->con.release = net_release;
	nc->con.flags = PK_CON_ENABLED | PK_CON_THREADED;
	nc->kind = kind;
	nc->fd = -1;
	nc->backoff_ms = BACKOFF_MIN_MS;
	nc->enterprise = PK_SYSLOG_ENTERPRISE_DEFAULT;
	atomic_init(&nc->rs_slack_ms, RESEND_SLACK_MS);
	snprintf(nc->app, sizeof(nc->app), "%s",
		 program_invocation_short_name[0] ? program_invocation_short_name : "printk");
	if (gethostname(nc->host, sizeof(nc->host) - 1) < 0)
		nc->host[0] = '\0';
	return nc;
}

static int unix_addr(struct net_console *nc, const char *path)
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

int pk_console_journal_create(struct console **conp, const char *socket_path)
{
	if (!conp)
		return -EINVAL;

	struct net_console *nc = net_alloc(NET_JOURNAL, "journal");
	int err;

	if (!nc)
		return -ENOMEM;
	snprintf(nc->target, sizeof(nc->target), "journal:%s",
		 socket_path ? socket_path : PK_JOURNAL_SOCKET);
	if ((err = unix_addr(nc, socket_path ? socket_path : PK_JOURNAL_SOCKET))) {
		free(nc);
		return err;
	}
	*conp = &nc->con;
	return 0;
}

/* Why the last name on this thread did not resolve (getaddrinfo's answer),
 * or why its TLS settings could not be used. */
static _Thread_local int create_gai_error;
static _Thread_local char create_why[200];

const char *pk_net_create_strerror(int err)
{
	if (err == -EHOSTUNREACH && create_gai_error)
		return gai_strerror(create_gai_error);
	if (create_why[0])
		return create_why;
	return err_words(err);
}

/* One TLS option of a target, "ca=FILE", "cert=FILE", "key=FILE",
 * "peer=NAME" or "tls" (relp: only), @n bytes; 0 or -EINVAL. */
static int tls_option(struct net_console *nc, const char *w, size_t n, int is_relp)
{
	static const struct {
		const char *name;
		size_t off;
	} files[] = {
		{ "ca=", offsetof(struct net_console, tls_ca) },
		{ "cert=", offsetof(struct net_console, tls_cert) },
		{ "key=", offsetof(struct net_console, tls_key) },
		{ "peer=", offsetof(struct net_console, tls_peer) },
	};

	if (is_relp && n == 3 && !memcmp(w, "tls", 3)) {
		nc->tls = 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t k = strlen(files[i].name);
		char *field = (char *)nc + files[i].off;

		if (n > k && !memcmp(w, files[i].name, k) && n - k < sizeof(nc->tls_ca) &&
		    !memchr(w + k, '\0', n - k)) {
			memcpy(field, w + k, n - k);
			field[n - k] = '\0';
			return 0;
		}
	}
	snprintf(create_why, sizeof(create_why),
		 "bad TLS option '%.*s' (tls, ca=FILE, cert=FILE, key=FILE or peer=NAME)",
		 (int)(n > 60 ? 60 : n), w);
	return -EINVAL;
}

/* N8: "tls:HOST[:PORT]" or "relp:HOST:PORT" followed by TLS options: the
 * address part into @addr (the port 6514 added for tls: without one), the
 * options into @nc. 0 or -EINVAL. */
static int tls_target(struct net_console *nc, const char *rest, int is_relp, char *addr,
		      size_t cap)
{
	const char *comma = strchr(rest, ',');
	size_t alen = comma ? (size_t)(comma - rest) : strlen(rest);
	int err = 0;

	if (alen + sizeof(TLS_PORT) + 1 > cap)
		return -EINVAL;
	memcpy(addr, rest, alen);
	addr[alen] = '\0';
	nc->tls = !is_relp;
	for (const char *w = comma; w && !err;) {
		const char *next = strchr(w + 1, ',');

		err = tls_option(nc, w + 1, next ? (size_t)(next - w - 1) : strlen(w + 1), is_relp);
		w = next;
	}
	if (err)
		return err;
	if (!nc->tls && (nc->tls_ca[0] || nc->tls_cert[0] || nc->tls_key[0] || nc->tls_peer[0])) {
		snprintf(create_why, sizeof(create_why), "ca=, cert=, key= and peer= need ,tls");
		return -EINVAL;
	}
	if (is_relp && nc->tls && !nc->tls_cert[0]) {
		/* librelp (1.11, 1.12) checks the server's certificate only
		 * when the client shows one of its own */
		snprintf(create_why, sizeof(create_why),
			 "relp: with ,tls needs cert= and key= (librelp checks the server's certificate only then)");
		return -EINVAL;
	}
	if (!nc->tls_cert[0] != !nc->tls_key[0]) {
		snprintf(create_why, sizeof(create_why), "cert= and key= go together");
		return -EINVAL;
	}

	/* The host, without brackets: the name the certificate must carry. */
	const char *h = addr, *end;

	if (*addr == '[')
		end = strchr(addr, ']'), h = addr + 1;
	else
		end = strrchr(addr, ':');
	if (!is_relp && (!end || (*addr == '[' && end[1] != ':')))
		strcat(addr, ":" TLS_PORT); /* RFC 5425's port */
	if (!end)
		end = addr + alen;
	if (!nc->tls_peer[0] && end > h && (size_t)(end - h) < sizeof(nc->tls_peer)) {
		memcpy(nc->tls_peer, h, (size_t)(end - h));
		nc->tls_peer[end - h] = '\0';
	}
	return 0;
}

/* "HOST:PORT" or "[V6]:PORT" into @nc->addr. */
static int inet_addr_of(struct net_console *nc, const char *hp, int stream)
{
	char host[256];
	const char *colon, *h = hp;
	size_t hlen;

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

int pk_console_syslog_create(struct console **conp, const char *target, int format,
			     unsigned enterprise)
{
	if (!conp || !target || (format != PK_SYSLOG_RFC5424 && format != PK_SYSLOG_RFC3164))
		return -EINVAL;

	enum net_kind kind;
	const char *rest;

	if (!strncmp(target, "unix:", 5))
		kind = NET_UNIX, rest = target + 5;
	else if (!strncmp(target, "udp:", 4))
		kind = NET_UDP, rest = target + 4;
	else if (!strncmp(target, "tcp:", 4))
		kind = NET_TCP, rest = target + 4;
	else if (!strncmp(target, "relp:", 5))
		kind = NET_RELP, rest = target + 5;
	else if (!strncmp(target, "tls:", 4))
		kind = NET_TCP, rest = target + 4; /* N8 */
	else
		return -EINVAL;

	struct net_console *nc = net_alloc(kind, "syslog");
	int err;

	if (!nc)
		return -ENOMEM;
	char addr[300];

	nc->format = format;
	snprintf(nc->target, sizeof(nc->target), "%s", target);
	create_gai_error = 0;
	create_why[0] = '\0';
	if (enterprise)
		nc->enterprise = enterprise;
	if (kind == NET_RELP || !strncmp(target, "tls:", 4)) {
		/* N8: the notices name the address, not the files */
		if ((err = tls_target(nc, rest, kind == NET_RELP, addr, sizeof(addr)))) {
			free(nc);
			return err;
		}
		rest = addr;
		snprintf(nc->target, sizeof(nc->target), "%s%s", kind == NET_RELP ? "relp:" : "tls:",
			 addr);
	}
	err = kind == NET_UNIX ? unix_addr(nc, rest) : inet_addr_of(nc, rest, kind != NET_UDP);
	if (!err && kind == NET_TCP && nc->tls) {
		struct pk_tls_config cfg = { nc->tls_ca[0] ? nc->tls_ca : NULL,
					     nc->tls_cert[0] ? nc->tls_cert : NULL,
					     nc->tls_key[0] ? nc->tls_key : NULL };

		err = pk_tls_ctx_new(&nc->tls_ctx, &cfg, create_why, sizeof(create_why));
	}
	if (!err && kind == NET_RELP) {
		/* librelp resolves again at each connect: it gets the address
		 * this console resolved, as numbers. */
		if (!relp_available())
			err = -EPROTONOSUPPORT;
		else if (getnameinfo((struct sockaddr *)&nc->addr, nc->addr_len, nc->relp_host,
				     sizeof(nc->relp_host), nc->relp_port, sizeof(nc->relp_port),
				     NI_NUMERICHOST | NI_NUMERICSERV))
			err = -EHOSTUNREACH;
	}
	if (!err && kind == NET_TCP && !(nc->rs = calloc(RESEND_MAX, sizeof(*nc->rs))))
		err = -ENOMEM;
	if (err) {
		pk_tls_ctx_free(nc->tls_ctx);
		free(nc);
		return err;
	}
	if (kind == NET_RELP || kind == NET_TCP)
		pk_console_set_exit_close(net_exit_close);
	*conp = &nc->con;
	return 0;
}

int pk_console_syslog_set_framing(struct console *con, int framing)
{
	if (!pk_console_net_owns(con) || ((struct net_console *)con)->kind != NET_TCP ||
	    (framing != PK_SYSLOG_FRAMING_OCTET && framing != PK_SYSLOG_FRAMING_LF))
		return -EINVAL;
	/* RFC 5425: octet counting, always */
	if (((struct net_console *)con)->tls && framing != PK_SYSLOG_FRAMING_OCTET)
		return -EINVAL;
	((struct net_console *)con)->framing = framing;
	return 0;
}

int pk_console_syslog_set_bom(struct console *con, int bom)
{
	if (!pk_console_net_owns(con) || ((struct net_console *)con)->kind == NET_JOURNAL ||
	    (bom != 0 && bom != 1))
		return -EINVAL;
	((struct net_console *)con)->no_bom = !bom;
	return 0;
}

int pk_console_stats(const struct console *con, struct pk_console_stats *st)
{
	if (!pk_console_net_owns(con) || !st)
		return -EINVAL;

	const struct net_console *nc = (const struct net_console *)con;

	memset(st, 0, sizeof(*st));
	st->state = atomic_load_explicit(&nc->state, memory_order_relaxed);
	st->last_error = atomic_load_explicit(&nc->last_error, memory_order_relaxed);
	st->delivered = atomic_load_explicit(&nc->sent, memory_order_relaxed);
	st->lost = lost_total(nc);
	st->changes = atomic_load_explicit(&nc->changes, memory_order_relaxed);
	if (st->state != PK_CONSOLE_IDLE)
		st->waiting = waiting_from(nc, atomic_load_explicit(&nc->pos, memory_order_relaxed));
	return 0;
}

int pk_console_forward_stats(const struct console *con, struct pk_forward_stats *stats)
{
	if (!pk_console_net_owns(con) || !stats)
		return -EINVAL;

	struct net_console *nc = (struct net_console *)con;

	stats->sent = atomic_load_explicit(&nc->sent, memory_order_relaxed);
	stats->send_errors = atomic_load_explicit(&nc->send_errors, memory_order_relaxed);
	stats->dropped = atomic_load_explicit(&nc->dropped, memory_order_relaxed);
	stats->connects = atomic_load_explicit(&nc->connects, memory_order_relaxed);
	return 0;
}

/* ------------------------------------------- for a forwarder (pk-forward) -- */

int pk_console_forward_set_source(struct console *con, struct pk_log *log)
{
	if (!pk_console_net_owns(con))
		return -EINVAL;
	((struct net_console *)con)->src = log;
	((struct net_console *)con)->comm_pid = 0; /* names come from @log now */
	return 0;
}

int pk_console_forward_send(struct console *con, const struct pk_record *rec)
{
	if (!pk_console_net_owns(con) || !rec)
		return -EINVAL;
	return net_write_record(con, rec);
}

int pk_console_forward_lost(struct console *con, uint64_t n)
{
	if (!pk_console_net_owns(con))
		return -EINVAL;

	struct net_console *nc = (struct net_console *)con;

	nc->lost += n;
	atomic_fetch_add_explicit(&nc->dropped, n, memory_order_relaxed);
	return 0;
}

/* TCP: the send queue drained (SIOCOUTQ: bytes the peer's kernel has not
 * acknowledged) and the receiver did not close. */
static int tcp_commit(struct net_console *nc)
{
	if (nc->fd < 0 || nc->fd_pid != (pid_t)pk_caller_pid())
		return nc->unconfirmed ? -EAGAIN : 0;
	for (int waited = 0;; waited++) {
		int outq = 0;

		if (stream_gone(nc)) {
			net_close(nc);
			return -EAGAIN;
		}
		if (ioctl(nc->fd, SIOCOUTQ, &outq) < 0 || outq == 0)
			return 0;
		if (waited >= COMMIT_DRAIN_MS)
			return -EAGAIN;

		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

int pk_console_forward_commit(struct console *con)
{
	if (!pk_console_net_owns(con))
		return -EINVAL;

	struct net_console *nc = (struct net_console *)con;
	int err = 0;

	if (nc->kind == NET_TCP)
		err = tcp_commit(nc);
	else if (nc->kind == NET_RELP)
		err = relp_commit(nc);
	if (nc->broken)
		err = -EAGAIN;
	nc->broken = 0;
	nc->unconfirmed = 0;
	return err;
}

int pk_log_identity(struct pk_log *log, uint64_t id[2])
{
	if (!log || !id)
		return -EINVAL;

	struct pk_log_shared *sh = pk_log_shared(log);

	id[0] = sh->creation_id[0];
	id[1] = sh->creation_id[1];
	return 0;
}

/* console=syslog:TARGET[,framing=..][,bom=..] from PRINTK_OPTS: framing and
 * bom are 0 when not given, else their value plus one. */
static int syslog_create_opts(struct console **conp, const char *target, int format,
			      int framing, int bom)
{
	int err = pk_console_syslog_create(conp, target, format, 0);

	if (!err && framing)
		err = pk_console_syslog_set_framing(*conp, framing - 1);
	if (!err && bom)
		err = pk_console_syslog_set_bom(*conp, bom - 1);
	if (err && *conp) { /* created, but an option was refused */
		pk_console_destroy(*conp);
		*conp = NULL;
	}
	return err;
}

/* PRINTK_OPTS console=journal and console=syslog: work only when this file
 * is in the program (setup_hooks.h). */
__attribute__((constructor(PK_SETUP_HOOK_PRIORITY))) static void provide_to_setup(void)
{
	pk_setup_hooks.journal_create = pk_console_journal_create;
	pk_setup_hooks.syslog_create = syslog_create_opts;
	pk_setup_hooks.create_strerror = pk_net_create_strerror;
}
