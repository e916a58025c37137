// SPDX-License-Identifier: MIT
/*
 * journal_remote.c - pk-forward's journal-remote target: records posted to
 * systemd-journal-remote over HTTP/1.1, as systemd-journal-upload ships a
 * journal to a central server.
 *
 *   journal-remote:http://HOST[:PORT][/]      (PORT: 19532 when left out)
 *   journal-remote:https://HOST[:PORT][/][,ca=FILE][,cert=FILE,key=FILE][,peer=NAME]
 *
 * Each record is one Journal Export Format entry (pk_log_export_format,
 * src/record/export_format.c); a batch is one POST /upload with
 * Content-Type application/vnd.fdo.journal and a Content-Length, on a
 * connection kept alive between batches. Over https the connection is a
 * TLS session of the consoles' layer (reader.h's pk_tool_tls_*): the
 * server verified as a tls: console verifies its collector (the chain to
 * ca=, the name peer= or HOST), refused in the same words.
 *
 * Invariants:
 *   J1 A batch is acknowledged only by a complete response with status 200
 *      or 202, read after the whole body was sent; journal-remote answers
 *      after it wrote the entries into its journal file. Anything else (no
 *      connection, a broken one, a timeout, another status, a malformed
 *      answer) fails the whole batch: forward.c then rewinds to its cursor
 *      and sends the batch again. At least once: entries the receiver wrote
 *      before a failure it did not answer arrive again; nothing is lost.
 *   J2 Bounded: a connection attempt waits at most CONNECT_MS, every read
 *      and write at most IO_MS without progress; a header or body that
 *      outgrows its buffer fails the batch.
 *   J3 Never silent, never noisy: the first failure after a success (or at
 *      the start) is said in one line with its reason and the retry rule,
 *      later failures say nothing until a batch is acknowledged again,
 *      which is said in one line too. Between failures the target waits
 *      (BACKOFF_MIN_MS doubling to BACKOFF_MAX_MS): pkf_jr_send answers
 *      -EAGAIN until then.
 *   J4 A kept-alive connection the receiver closed meanwhile is noticed
 *      before it is used (readable while idle) or by a failure before any
 *      byte of the answer: the batch then goes once more at once on a new
 *      connection, without counting as a failure.
 *   J5 https: nothing of a batch is written before the handshake verified
 *      the server; a refusal is a failed batch (J1, J3) said with OpenSSL's
 *      words, and the next try makes a new connection and handshake.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <printk/log.h>

#include "pk-forward.h"
#include "reader.h"

#define DEFAULT_PORT   "19532" /* journal-remote's and journal-upload's */
#define CONNECT_MS     2000
#define IO_MS	       10000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 10000
#define HEAD_MAX       16384 /* a response's status line and headers */
#define BODY_MAX       65536 /* a response's body, read and set aside */

struct pkf_jr {
	char target[512]; /* as given, for messages */
	char host[256];	  /* the Host header: HOST[:PORT] as written */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int fd;
	struct pk_tool_tls *tls; /* https: the context, and the session on fd */
	char conn_why[PK_TOOL_TLS_WHY]; /* why the last connection failed, or "" */
	struct pk_log *log;
	char hostname[256]; /* _HOSTNAME */
	char boot_id[33];   /* _BOOT_ID, "" when the log's clock is not this boot's monotonic */
	uint32_t ident_pid; /* the last record's writer and its name */
	char ident[64];
	int ident_known;
	char *batch; /* the request head's room, then the entries */
	size_t len, cap;
	uint64_t lost; /* to be said before the next record */
	unsigned backoff_ms;
	uint64_t next_try_ns;
	int failing; /* J3: a failure was said and no success since */
	char entry[PK_LOG_EXPORT_MAX];
};

#define HEAD_ROOM 1024 /* the request line and headers, written before the body */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pkf_jr_is_target(const char *target)
{
	return !strncmp(target, "journal-remote:", 15);
}

/* ------------------------------------------------------------ target -- */

/* The option VALUE of "NAME=VALUE" at @p (up to ',' or the end) into @out;
 * 0, or -1 with @why. */
static int take_file(const char *p, size_t n, const char *name, char *out, size_t size,
		     const char **why)
{
	static char msg[96];

	if (out[0]) {
		snprintf(msg, sizeof(msg), "%s= given twice", name);
		*why = msg;
		return -1;
	}
	if (!n || n >= size) {
		snprintf(msg, sizeof(msg), "%s= needs a %s", name,
			 strcmp(name, "peer") ? "file name" : "name");
		*why = msg;
		return -1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* https's options, "" when not given. */
struct tls_opts {
	char ca[512], cert[512], key[512], peer[256];
};

/*
 * Parse @url (after "journal-remote:") strictly: the scheme, HOST (a name,
 * an IPv4 address or an IPv6 address in brackets), PORT, an optional "/",
 * and for https the options into @to. 0 (http), 1 (https), or -1 with @why.
 */
static int parse_url(const char *url, char *host, size_t host_size, char *hosthdr,
		     size_t hdr_size, char *port, struct tls_opts *to, const char **why)
{
	const char *p, *h, *he;
	int https;
	char *ca = to->ca, *cert = to->cert, *key = to->key;

	memset(to, 0, sizeof(*to));

	if (!strncmp(url, "http://", 7)) {
		https = 0;
		p = url + 7;
	} else if (!strncmp(url, "https://", 8)) {
		https = 1;
		p = url + 8;
	} else {
		*why = "the URL must start with http:// or https://";
		return -1;
	}
	h = p;
	if (*p == '[') {
		he = strchr(p, ']');
		if (!he || he == p + 1) {
			*why = "an IPv6 address needs its closing ']'";
			return -1;
		}
		for (const char *c = p + 1; c < he; c++) {
			if (!strchr("0123456789abcdefABCDEF:.", *c)) {
				*why = "not an IPv6 address in the brackets";
				return -1;
			}
		}
		if ((size_t)(he - p - 1) >= host_size) {
			*why = "the host is too long";
			return -1;
		}
		memcpy(host, p + 1, (size_t)(he - p - 1));
		host[he - p - 1] = '\0';
		p = he + 1;
	} else {
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '.' || *p == '-')
			p++;
		if (p == h) {
			*why = "no host";
			return -1;
		}
		if ((size_t)(p - h) >= host_size || p - h > 253) {
			*why = "the host is too long";
			return -1;
		}
		memcpy(host, h, (size_t)(p - h));
		host[p - h] = '\0';
	}
	strcpy(port, DEFAULT_PORT);
	if (*p == ':') {
		const char *ps = ++p;
		unsigned long v = 0;

		while (*p >= '0' && *p <= '9' && p - ps < 6)
			v = v * 10 + (unsigned long)(*p++ - '0');
		if (p == ps || p - ps > 5 || v == 0 || v > 65535 || (*p >= '0' && *p <= '9')) {
			*why = "the port must be a number from 1 to 65535";
			return -1;
		}
		snprintf(port, 6, "%lu", v);
	}
	if ((size_t)(p - h) >= hdr_size) {
		*why = "the host is too long";
		return -1;
	}
	memcpy(hosthdr, h, (size_t)(p - h));
	hosthdr[p - h] = '\0';
	if (*p == '/')
		p++;
	while (*p == ',') {
		const char *o = ++p, *e = strchr(o, ',');
		size_t n = e ? (size_t)(e - o) : strlen(o);

		if (!strncmp(o, "ca=", 3)) {
			if (take_file(o + 3, n - 3, "ca", ca, sizeof(to->ca), why))
				return -1;
		} else if (!strncmp(o, "cert=", 5)) {
			if (take_file(o + 5, n - 5, "cert", cert, sizeof(to->cert), why))
				return -1;
		} else if (!strncmp(o, "key=", 4)) {
			if (take_file(o + 4, n - 4, "key", key, sizeof(to->key), why))
				return -1;
		} else if (!strncmp(o, "peer=", 5)) {
			if (take_file(o + 5, n - 5, "peer", to->peer, sizeof(to->peer), why))
				return -1;
		} else {
			*why = "unknown option (ca=FILE, cert=FILE, key=FILE and peer=NAME, https only)";
			return -1;
		}
		if (!https) {
			*why = "ca=, cert=, key= and peer= are for https:// only";
			return -1;
		}
		p = o + n;
	}
	if (*p) {
		*why = "only http(s)://HOST[:PORT][/] is taken: no path, query or user (the receiver's "
		       "path is /upload)";
		return -1;
	}
	if (https && (!cert[0]) != (!key[0])) {
		*why = "cert= and key= go together";
		return -1;
	}
	if (https && !to->peer[0])
		snprintf(to->peer, sizeof(to->peer), "%s", host); /* as a tls: console's */
	return https;
}

/* This machine's boot id, 32 hex digits, or "". */
static void read_boot_id(char out[33])
{
	char buf[64];
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	size_t k = 0;

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n && k < 32; i++) {
		char c = buf[i];

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
			out[k++] = c;
		else if (c != '-')
			break;
	}
	out[k == 32 ? 32 : 0] = '\0';
}

void pkf_jr_set_log(struct pkf_jr *jr, struct pk_log *log)
{
	struct pk_log_info info;

	jr->log = log;
	jr->ident_known = 0;
	/* __MONOTONIC_TIMESTAMP is the record's time, on CLOCK_MONOTONIC's
	 * scale whichever clock the writers read (docs/clock.md); it belongs
	 * to this boot only when they published their clock in this boot. */
	jr->boot_id[0] = '\0';
	if (pk_log_info(log, &info) == 0 && info.clock != 0 && info.clock_this_boot)
		read_boot_id(jr->boot_id);
}

/* The connection closed, and its TLS session ended (@clean: with
 * close_notify, for a session that is still sound). */
static void drop_conn(struct pkf_jr *jr, int clean)
{
	pk_tool_tls_close(jr->tls, clean);
	if (jr->fd >= 0)
		close(jr->fd);
	jr->fd = -1;
}

int pkf_jr_create(struct pkf_jr **jrp, const char *target, struct pk_log *log)
{
	struct pkf_jr *jr = calloc(1, sizeof(*jr));
	char host[256], port[8], twhy[PK_TOOL_TLS_WHY];
	struct tls_opts to;
	const char *why = NULL;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int r;

	if (!jr) {
		fprintf(stderr, "%s: %s\n", PKF_NAME, strerror(ENOMEM));
		return -1;
	}
	jr->fd = -1;
	snprintf(jr->target, sizeof(jr->target), "%s", target);
	r = parse_url(target + 15, host, sizeof(host), jr->host, sizeof(jr->host), port, &to, &why);
	if (r < 0) {
		fprintf(stderr, "%s: %s: bad target: %s\n", PKF_NAME, target, why);
		free(jr);
		return -1;
	}
	if (r == 1) {
		/* The files are read now, as a tls: console's when it is made. */
		struct pk_tool_tls_opts o = { to.ca[0] ? to.ca : NULL, to.cert[0] ? to.cert : NULL,
					      to.key[0] ? to.key : NULL, to.peer };
		int err = pk_tool_tls_new(&jr->tls, &o, twhy, sizeof(twhy));

		if (err == -EPROTONOSUPPORT) {
			fprintf(stderr, "%s: %s: %s\n", PKF_NAME, target, twhy);
			free(jr);
			return -1;
		}
		if (err) {
			fprintf(stderr, "%s: %s: unusable: %s\n", PKF_NAME, target,
				twhy[0] ? twhy : strerror(-err));
			free(jr);
			return -1;
		}
	}
	if ((r = getaddrinfo(host, port, &hints, &ai)) != 0 || !ai) {
		fprintf(stderr, "%s: %s: %s does not resolve: %s\n", PKF_NAME, target, host,
			gai_strerror(r));
		pk_tool_tls_free(jr->tls);
		free(jr);
		return -1;
	}
	memcpy(&jr->addr, ai->ai_addr, ai->ai_addrlen);
	jr->addr_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (gethostname(jr->hostname, sizeof(jr->hostname) - 1) < 0)
		jr->hostname[0] = '\0';
	jr->cap = HEAD_ROOM + 65536;
	if (!(jr->batch = malloc(jr->cap))) {
		fprintf(stderr, "%s: %s\n", PKF_NAME, strerror(ENOMEM));
		pk_tool_tls_free(jr->tls);
		free(jr);
		return -1;
	}
	jr->len = HEAD_ROOM;
	jr->backoff_ms = BACKOFF_MIN_MS;
	pkf_jr_set_log(jr, log);
	*jrp = jr;
	return 0;
}

void pkf_jr_destroy(struct pkf_jr *jr)
{
	if (!jr)
		return;
	drop_conn(jr, 1);
	pk_tool_tls_free(jr->tls);
	free(jr->batch);
	free(jr);
}

/* ----------------------------------------------------------- entries -- */

/* The writer's name: the log's writer table, else the process while it
 * lives; NULL (SYSLOG_IDENTIFIER left out) when neither knows it. */
static const char *ident_of(struct pkf_jr *jr, uint32_t pid)
{
	if (!jr->ident_known || jr->ident_pid != pid) {
		jr->ident_pid = pid;
		jr->ident_known = 1;
		if (pk_log_writer_name(jr->log, pid, jr->ident, sizeof(jr->ident)) != 0) {
			char path[32];
			ssize_t n = -1;
			int fd;

			snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
				n = read(fd, jr->ident, sizeof(jr->ident) - 1);
				close(fd);
			}
			if (n > 0 && jr->ident[n - 1] == '\n')
				n--;
			jr->ident[n > 0 ? n : 0] = '\0';
		}
	}
	return jr->ident[0] ? jr->ident : NULL;
}

static int append(struct pkf_jr *jr, const struct pk_record *rec, const char *ident)
{
	int64_t off = 0;
	size_t n;

	pk_log_realtime_offset(jr->log, &off);
	n = pk_log_export_format(rec, ident, jr->hostname[0] ? jr->hostname : NULL,
				 jr->boot_id[0] ? jr->boot_id : NULL, off, jr->entry);
	if (jr->len + n > jr->cap) {
		size_t cap = jr->cap * 2 + n;
		char *b = realloc(jr->batch, cap);

		if (!b)
			return -ENOMEM;
		jr->batch = b;
		jr->cap = cap;
	}
	memcpy(jr->batch + jr->len, jr->entry, n);
	jr->len += n;
	return 0;
}

int pkf_jr_send(struct pkf_jr *jr, const struct pk_record *rec)
{
	if (jr->len == HEAD_ROOM && mono_ns() < jr->next_try_ns)
		return -EAGAIN; /* J3 */
	if (jr->lost) {
		/* What the log overwrote, as the consoles say it: a record
		 * of its own at level 4, dated as the next one. */
		static struct pk_record notice;

		memset(&notice, 0, sizeof(notice));
		notice.seq = rec->seq;
		notice.ts_nsec = rec->ts_nsec;
		notice.pid = (uint32_t)getpid();
		notice.tid = rec->tid;
		notice.level = 4;
		notice.facility = rec->facility;
		notice.text_len = (uint16_t)snprintf(notice.text, sizeof(notice.text),
						     "** %" PRIu64 " printk messages dropped **", jr->lost);
		if (append(jr, &notice, PKF_NAME))
			return -EAGAIN;
		jr->lost = 0;
	}
	return append(jr, rec, ident_of(jr, rec->pid)) ? -EAGAIN : 0;
}

void pkf_jr_lost(struct pkf_jr *jr, uint64_t n)
{
	jr->lost += n;
}

/* -------------------------------------------------------------- HTTP -- */

/* Wait for @events on @fd, at most IO_MS (J2). 0, or a negative errno. */
static int wait_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		uint64_t now = mono_ns();
		int r;

		if (now >= end)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((end - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int connect_to(struct pkf_jr *jr)
{
	int fd = socket(jr->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int err = 0;
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&jr->addr, jr->addr_len) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			close(fd);
			return err;
		}
		if ((err = wait_fd(fd, POLLOUT, CONNECT_MS)) < 0) {
			close(fd);
			return err;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
			err = err ? -err : -errno;
			close(fd);
			return err;
		}
	}
	/* A batch ends in a segment shorter than the others: Nagle would
	 * hold it until the receiver acknowledged the earlier ones. */
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (jr->tls) { /* J5 */
		err = pk_tool_tls_connect(jr->tls, fd, CONNECT_MS + IO_MS, jr->conn_why,
					  sizeof(jr->conn_why));
		if (err) {
			close(fd);
			return err;
		}
	}
	jr->fd = fd;
	return 0;
}

static int send_all(struct pkf_jr *jr, const char *p, size_t n)
{
	int fd = jr->fd;

	if (jr->tls)
		return pk_tool_tls_write(jr->tls, p, n, IO_MS);
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			int err = wait_fd(fd, POLLOUT, IO_MS);

			if (err)
				return err;
		} else {
			return w < 0 ? -errno : -EPIPE;
		}
	}
	return 0;
}

/* Up to @n bytes into @p: the count (> 0), 0 at the end, or a negative errno. */
static ssize_t recv_some(struct pkf_jr *jr, char *p, size_t n)
{
	int fd = jr->fd;

	if (jr->tls) {
		ssize_t r = pk_tool_tls_read(jr->tls, p, n, IO_MS);

		if (r < 0 && !jr->conn_why[0]) /* the session's words, for J3's line */
			snprintf(jr->conn_why, sizeof(jr->conn_why), "%s", pk_tool_tls_why(jr->tls));
		return r;
	}
	for (;;) {
		ssize_t r = recv(fd, p, n, 0);

		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		int err = wait_fd(fd, POLLIN, IO_MS);

		if (err)
			return err;
	}
}

/* What a response said. */
struct answer {
	int status;
	int keep;	  /* the connection may carry the next batch */
	char words[160];  /* the status line's reason and the body's first line */
	size_t got;	  /* bytes of the answer read (J4: 0 means none) */
};

/* The value of header @name in @head (lines ended by CRLF), or NULL. */
static const char *header(const char *head, const char *name, size_t *vn)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n")) {
		const char *s = l + 2, *e = strstr(s, "\r\n");

		if (!e)
			break;
		if ((size_t)(e - s) > nl && !strncasecmp(s, name, nl) && s[nl] == ':') {
			s += nl + 1;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			*vn = (size_t)(e - s);
			return s;
		}
	}
	return NULL;
}

/* @s (@n bytes) as a decimal or hex number, strictly; -1 if it is not one. */
static long long number(const char *s, size_t n, int base)
{
	long long v = 0;

	if (!n || n > 15)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
			: s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
			: s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
						     : 99;
		if (d >= base)
			return -1;
		v = v * base + d;
	}
	return v;
}

/*
 * Read one response (1xx ones passed over) into @a: its status, whether
 * the connection stays, and words for a failure. 0, or a negative errno
 * (-EPROTO: not HTTP as this client takes it).
 */
static int read_answer(struct pkf_jr *jr, struct answer *a)
{
	static char buf[HEAD_MAX + BODY_MAX + 1];
	size_t have = 0;
	char *end;

	a->got = 0;
	a->keep = 0;
	a->words[0] = '\0';
	for (;;) {
		/* The head. */
		while (!(buf[have] = '\0', end = strstr(buf, "\r\n\r\n"))) {
			if (have >= HEAD_MAX)
				return -EPROTO;
			ssize_t r = recv_some(jr, buf + have, HEAD_MAX - have);

			if (r <= 0)
				return r < 0 ? (int)r : have ? -EPROTO : -ECONNRESET;
			have += (size_t)r;
			a->got += (size_t)r;
		}
		end += 4;
		if (strncmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
		    number(buf + 9, 3, 10) < 100 || (buf[12] != ' ' && buf[12] != '\r'))
			return -EPROTO;
		a->status = (int)number(buf + 9, 3, 10);
		if (a->status >= 200)
			break;
		/* An interim answer (100 Continue): the real one follows. */
		memmove(buf, end, have - (size_t)(end - buf));
		have -= (size_t)(end - buf);
	}
	const char *eol = strstr(buf, "\r\n");
	size_t rn = buf[12] == ' ' ? (size_t)(eol - buf - 13) : 0;

	snprintf(a->words, sizeof(a->words), "%d%s%.*s", a->status, rn ? " " : "",
		 (int)(rn > 60 ? 60 : rn), buf + 13);

	/* The body: set aside, its first line kept for the words. */
	size_t vn, head_len = (size_t)(end - buf), body = have - head_len;
	const char *v;
	long long clen = -1;
	int chunked = 0, close_after = buf[7] == '0';

	if ((v = header(buf, "Connection", &vn)))
		close_after = vn == 5 && !strncasecmp(v, "close", 5) ? 1
			      : vn == 10 && !strncasecmp(v, "keep-alive", 10) ? 0
									      : close_after;
	if ((v = header(buf, "Transfer-Encoding", &vn))) {
		if (vn != 7 || strncasecmp(v, "chunked", 7))
			return -EPROTO;
		chunked = 1;
	} else if ((v = header(buf, "Content-Length", &vn))) {
		if ((clen = number(v, vn, 10)) < 0)
			return -EPROTO;
	}
	memmove(buf, end, body);
	if (chunked) {
		/* Whole chunked bodies up to the buffer's size; the sizes
		 * are then walked. */
		size_t at = 0, out = 0;

		for (;;) {
			buf[body] = '\0';
			char *crlf = strstr(buf + at, "\r\n");

			if (!crlf) {
				ssize_t r;

				if (body >= BODY_MAX)
					return -EPROTO;
				if ((r = recv_some(jr, buf + body, BODY_MAX - body)) <= 0)
					return r < 0 ? (int)r : -EPROTO;
				body += (size_t)r;
				continue;
			}
			char *semi = memchr(buf + at, ';', (size_t)(crlf - buf - at));
			long long cs = number(buf + at, (size_t)((semi ? semi : crlf) - buf - at), 16);

			if (cs < 0)
				return -EPROTO;
			size_t need = (size_t)(crlf - buf) + 2 + (size_t)cs + 2;

			if (cs == 0) {
				/* No trailers taken: the final CRLF. */
				while (body < need) {
					ssize_t r = recv_some(jr, buf + body, BODY_MAX - body);

					if (r <= 0 || body + (size_t)r > BODY_MAX)
						return r < 0 ? (int)r : -EPROTO;
					body += (size_t)r;
				}
				if (memcmp(buf + need - 2, "\r\n", 2))
					return -EPROTO;
				break;
			}
			while (body < need) {
				ssize_t r;

				if (need > BODY_MAX)
					return -EPROTO;
				if ((r = recv_some(jr, buf + body, BODY_MAX - body)) <= 0)
					return r < 0 ? (int)r : -EPROTO;
				body += (size_t)r;
			}
			memmove(buf + out, crlf + 2, (size_t)cs);
			out += (size_t)cs;
			at = need;
			/* The data moved down before @at: the sizes stay
			 * after it, untouched. */
		}
		body = out;
	} else if (clen >= 0) {
		if (clen > BODY_MAX)
			return -EPROTO;
		while (body < (size_t)clen) {
			ssize_t r = recv_some(jr, buf + body, (size_t)clen - body);

			if (r <= 0)
				return r < 0 ? (int)r : -EPROTO;
			body += (size_t)r;
		}
		if (body > (size_t)clen)
			return -EPROTO; /* bytes past the answer: not ours to guess */
	} else {
		/* Neither: the body runs to the close. */
		ssize_t r;

		while (body < BODY_MAX && (r = recv_some(jr, buf + body, BODY_MAX - body)) > 0)
			body += (size_t)r;
		close_after = 1;
	}
	a->keep = !close_after;
	if (a->status != 200 && a->status != 202 && body) {
		size_t l = 0, w = strlen(a->words);

		while (l < body && l < 80 && buf[l] != '\n' && buf[l] != '\r')
			l++;
		if (l) {
			snprintf(a->words + w, sizeof(a->words) - w, ": ");
			w += 2;
			for (size_t i = 0; i < l && w + 1 < sizeof(a->words); i++)
				a->words[w++] = buf[i] >= 32 && buf[i] < 127 ? buf[i] : '?';
			a->words[w] = '\0';
		}
	}
	return 0;
}

/* One POST of the batch on the connection (made if there is none). */
static int post(struct pkf_jr *jr, struct answer *a, int *reused)
{
	char head[HEAD_ROOM];
	size_t body = jr->len - HEAD_ROOM;
	int n = snprintf(head, sizeof(head),
			 "POST /upload HTTP/1.1\r\nHost: %s\r\nUser-Agent: " PKF_NAME
			 "\r\nContent-Type: application/vnd.fdo.journal\r\nContent-Length: %zu\r\n\r\n",
			 jr->host, body);
	int err;

	a->got = 0;
	*reused = 0;
	if (jr->fd >= 0) {
		/* J4: an idle connection that is readable was closed (or
		 * spoke out of turn). */
		struct pollfd p = { .fd = jr->fd, .events = POLLIN };

		if (jr->tls ? pk_tool_tls_idle_gone(jr->tls) : poll(&p, 1, 0) != 0) {
			drop_conn(jr, 0);
		} else {
			*reused = 1;
		}
	}
	if (jr->fd < 0 && (err = connect_to(jr)))
		return err;
	/* The head goes just before the body: one send. */
	memcpy(jr->batch + HEAD_ROOM - (size_t)n, head, (size_t)n);
	if ((err = send_all(jr, jr->batch + HEAD_ROOM - (size_t)n, (size_t)n + body))) {
		/* A receiver that refuses a request may answer before it read
		 * the body, and close: its words say more than the broken
		 * pipe. Never a success, whatever it says: the batch did not
		 * go whole. */
		if ((err == -EPIPE || err == -ECONNRESET) && read_answer(jr, a) == 0 &&
		    a->status != 200 && a->status != 202) {
			a->keep = 0;
			return 0;
		}
		return err;
	}
	return read_answer(jr, a);
}

static const char *why_words(int err)
{
	switch (err) {
	case -ECONNRESET:
		return "the receiver closed the connection without an answer";
	case -EPROTO:
		return "the receiver's answer is not HTTP/1.1 as expected";
	case -ETIMEDOUT:
		return "no progress within the time bound";
	default:
		return strerror(-err);
	}
}

int pkf_jr_commit(struct pkf_jr *jr)
{
	struct answer a;
	int reused, err;
	char why[PK_TOOL_TLS_WHY];

	if (jr->len == HEAD_ROOM)
		return 0;
	jr->conn_why[0] = '\0';
	err = post(jr, &a, &reused);
	if (err && reused && !a.got) {
		/* J4: the kept connection was gone; once more on a new one. */
		drop_conn(jr, 0);
		jr->conn_why[0] = '\0';
		err = post(jr, &a, &reused);
	}
	if (!err && !a.keep && jr->fd >= 0)
		drop_conn(jr, 1);
	if (!err && (a.status == 200 || a.status == 202)) {
		jr->len = HEAD_ROOM;
		jr->backoff_ms = BACKOFF_MIN_MS;
		jr->next_try_ns = 0;
		if (jr->failing)
			fprintf(stderr, "%s: %s: delivering again\n", PKF_NAME, jr->target);
		jr->failing = 0;
		return 0;
	}
	if (err) {
		/* A failed connection's own words (the handshake's), else
		 * the error's. */
		snprintf(why, sizeof(why), "%s", jr->conn_why[0] ? jr->conn_why : why_words(err));
		drop_conn(jr, 0);
	} else {
		snprintf(why, sizeof(why), "the receiver answered %s", a.words);
	}
	/* J1: the whole batch again, after a pause (J3). */
	jr->len = HEAD_ROOM;
	jr->next_try_ns = mono_ns() + (uint64_t)jr->backoff_ms * 1000000u;
	jr->backoff_ms = jr->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : jr->backoff_ms * 2;
	if (!jr->failing)
		fprintf(stderr,
			"%s: %s: cannot deliver: %s; the batch goes again, retried after %d ms "
			"doubling up to %d s (said once until it is delivered)\n",
			PKF_NAME, jr->target, why, BACKOFF_MIN_MS, BACKOFF_MAX_MS / 1000);
	jr->failing = 1;
	return -EAGAIN;
}
