// SPDX-License-Identifier: MIT
/*
 * console_net.c - forwarding consoles: each final record, with its fields,
 * to a collector the system already runs. systemd-journald's native
 * protocol, and syslog (RFC 5424 or RFC 3164) over a unix datagram socket,
 * UDP, TCP framed by octet counting (RFC 6587), or RELP (rsyslog's
 * acknowledged transport, through librelp).
 *
 * This file is the consoles' glue: the table of transports, the console's
 * write (a record formatted by a wire format, the dropped notice, a send
 * through the transport's operations and what its failure means for the
 * record), the resend window (N7), commits (N5), the public calls and the
 * PRINTK_OPTS kinds. The wire formats are wire_syslog.c and wire_journal.c
 * (pure functions, wire.h); each transport is a file of its own behind
 * struct pk_fwd_transport_ops (transport.h, which lists the files);
 * states, announcements and backoff are fwd_state.c's.
 *
 * libsystemd is not linked: the journal's native protocol is a handful of
 * documented, stable rules (one datagram of fields; a sealed memfd when it
 * is too big), and the library's core links only libc and pthreads.
 * For the same reason librelp is not linked either (transport_relp.c).
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
 *   N8 A connection breaks whether or not the console writes: a receiver
 *      killed after the console wrote its last record leaves that record
 *      unread, and no later write would notice. A registered console
 *      with a resend window is therefore watched by its printer thread
 *      whenever it has nothing to print (the console layer's idle hook,
 *      at least every printer_idle_ms, IDLE_CHECK_MS apart at most once):
 *      a connection the receiver closed or reset is given up and
 *      announced (N6), and one that broke with records in the window, or
 *      was lost, is made again with the same backoff (N2) and carries the
 *      window again (N7), announced, with no new record needed.
 *   N5 Commit points (pk_console_forward_commit(), for a forwarder that keeps
 *      a cursor): 0 only if every message handed over since the previous
 *      commit was accepted by the transport without a break in between.
 *      RELP: the session is closed, and a close answered without error
 *      means the receiver answered every earlier frame (it answers in
 *      order). TCP: the connection never broke and the kernel's send queue
 *      drained (the receiver's kernel acknowledged every byte). Datagrams:
 *      always 0 (nothing better is known).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>

#include "console/console_internal.h"
#include "console/console_kinds.h"
#include "forward/console_net.h"
#include "forward/transport.h"
#include "forward/wire.h"
#include "log/console_state.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "ring/caller.h"

#define RESEND_MAX	65536 /* N7: records a console keeps for a resend (1 MiB, touched as used) */
#define RESEND_SLACK_MS 2000  /* N7: the receiver's time to read what its kernel took */
#define IDLE_CHECK_MS	100   /* N8: the idle thread looks at its connection at most this often */

/*
 * The transports a "syslog:" target may name, by their prefix. Adding one
 * is its file (transport_NAME.c, filling a struct pk_fwd_transport_ops)
 * and its row here (docs/design.md, "Adding a transport").
 */
static const struct pk_fwd_transport_ops *const transports[] = {
	&pk_fwd_transport_unix,
	&pk_fwd_transport_udp,
	&pk_fwd_transport_tcp,
	&pk_fwd_transport_tls,
	&pk_fwd_transport_relp,
};

/* ------------------------------------------------------ message text -- */

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

/* @rec through the console's wire format into nc->buf, after the room a
 * transport may use for its frame's prefix. */
static size_t format_record(struct net_console *nc, const struct pk_record *rec)
{
	char *out = nc->buf + PK_FWD_MSG_ROOM;
	size_t cap = sizeof(nc->buf) - PK_FWD_MSG_ROOM;
	const char *app = app_name(nc, rec->pid);

	if (nc->wire == PK_FWD_WIRE_JOURNAL)
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

static int send_msg(struct net_console *nc, size_t n)
{
	return nc->ops->send(nc, nc->buf + PK_FWD_MSG_ROOM, n);
}

/* ---------------------------------------------------------- the write -- */

/* A message could not be sent. A stream: the connection is given up (a
 * frame may be cut) and the record waits; otherwise it is lost, and
 * counted. */
static int send_failed(struct net_console *nc, int err, uint64_t seq)
{
	pk_fwd_count_send_error(nc);
	if (nc->ops->flags & PK_FWD_STREAM) {
		nc->ops->broke(nc);
		pk_fwd_went_down(nc, err, seq);
		pk_fwd_schedule_retry(nc);
		return -EAGAIN;
	}
	/* A full receiver queue: the record waits rather than being lost. */
	if ((nc->ops->flags & PK_FWD_FULL_WAITS) && (err == -EAGAIN || err == -EWOULDBLOCK))
		return -EAGAIN;
	atomic_fetch_add_explicit(&nc->lost_sends, 1, memory_order_relaxed);
	atomic_store_explicit(&nc->pos, seq + 1, memory_order_relaxed);
	pk_fwd_went_down(nc, err, seq + 1);
	return 0;
}

/* N7: the receiver's kernel took every byte (the send queue is empty):
 * what was written RESEND_SLACK_MS before now has been read, or is lost
 * with the receiver's process whatever we do. */
static void resend_prune(struct net_console *nc)
{
	if (!nc->rs_len || nc->ops->unacked(nc) != 0)
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

	struct pk_fwd_resend *r = &nc->rs[(nc->rs_head + nc->rs_len++) % RESEND_MAX];

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
		struct pk_fwd_resend *r = &nc->rs[(nc->rs_head + i) % RESEND_MAX];

		if (r->seq >= next)
			break;
		if (!log || pk_log_read(log, r->seq, &nc->rs_rec, 0) || nc->rs_rec.seq != r->seq) {
			lost++; /* the ring overwrote it */
			continue;
		}
		if ((err = send_msg(nc, format_record(nc, &nc->rs_rec))))
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

static int net_deliver(struct console *con, const struct pk_record *rec)
{
	struct net_console *nc = (struct net_console *)con;
	int err;

	atomic_store_explicit(&nc->pos, rec->seq, memory_order_relaxed);
	err = nc->ops->open(nc, rec->seq);
	if (err == -EAGAIN)
		return err;
	if (err) { /* a datagram socket that cannot be made: this record is lost */
		pk_fwd_count_send_error(nc);
		atomic_fetch_add_explicit(&nc->lost_sends, 1, memory_order_relaxed);
		atomic_store_explicit(&nc->pos, rec->seq + 1, memory_order_relaxed);
		pk_fwd_went_down(nc, err, rec->seq + 1);
		return 0;
	}
	if (nc->rs && nc->rs_pending && (err = resend_window(nc, rec->seq)))
		return err;
	if (nc->rs)
		resend_prune(nc);

	uint64_t lost = con->state ? pk_console_take_dropped(con) : 0;

	nc->lost += lost;
	atomic_fetch_add_explicit(&nc->dropped, lost, memory_order_relaxed);
	if (nc->lost) {
		if ((err = send_msg(nc, format_notice(nc, rec, nc->lost))))
			return send_failed(nc, err, rec->seq);
		nc->lost = 0;
		nc->unconfirmed++;
		atomic_fetch_add_explicit(&nc->sent, 1, memory_order_relaxed);
	}
	if ((err = send_msg(nc, format_record(nc, rec))))
		return send_failed(nc, err, rec->seq);
	nc->unconfirmed++;
	if (nc->rs && con->state)
		resend_keep(nc, rec->seq);
	atomic_fetch_add_explicit(&nc->sent, 1, memory_order_relaxed);
	atomic_store_explicit(&nc->pos, rec->seq + 1, memory_order_relaxed);
	pk_fwd_went_up(nc, rec->seq + 1);
	return 0;
}

/* A registered console's state and counters, for readers of printk's log
 * in other processes (udmesg --info), after every record it handles. */
static void publish_state(struct net_console *nc)
{
	struct pk_log *log = pk_printk_log_peek();
	struct pk_console_stats st;

	if (!log || pk_console_stats(&nc->con, &st))
		return;
	if (nc->state_log != log) {
		nc->state_log = log;
		nc->state_slot = pk_console_state_claim(log, nc->con.name, &st);
		return;
	}
	pk_console_state_put(log, nc->state_slot, nc->con.name, &st);
}

static int net_write_record(struct console *con, const struct pk_record *rec)
{
	int err = net_deliver(con, rec);

	if (con->state) /* registered: printk's records (a forwarder's are another log's) */
		publish_state((struct net_console *)con);
	return err;
}

/* N8: the printer thread has nothing to print (the console layer's idle
 * hook, holding the owner word, N1). 1 if it made a connection: records
 * may wait for it. */
static int net_idle(struct console *con)
{
	struct net_console *nc = (struct net_console *)con;

	if (!pk_console_net_owns(con) || !nc->rs || !con->state)
		return 0;

	uint64_t now = pk_clock_ns();

	if (now - nc->idle_check_ns < (uint64_t)IDLE_CHECK_MS * 1000000u)
		return 0;
	nc->idle_check_ns = now;

	/* A connection of ours to look at, a window to send again, or a
	 * connection lost: else nothing to do before the next record (a
	 * forked child's inherited socket is left to that record, N4). */
	int had = nc->fd >= 0 && nc->fd_pid == (pid_t)pk_caller_pid();
	int lost = atomic_load_explicit(&nc->state, memory_order_relaxed) == PK_CONSOLE_LOST;

	if (!had && !nc->rs_pending && !lost)
		return 0;

	uint64_t pos = atomic_load_explicit(&nc->pos, memory_order_relaxed);

	/* open: a connection the receiver ended is closed and announced,
	 * and one is made when the backoff allows */
	if (!nc->ops->open(nc, pos) && !(nc->rs_pending && resend_window(nc, pos))) {
		resend_prune(nc);
		pk_fwd_went_up(nc, pos);
	}
	publish_state(nc);
	return !had && nc->fd >= 0;
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

	if (!pk_console_net_owns(con))
		return;
	if (nc->ops->exit_close)
		nc->ops->exit_close(nc);
	if (nc->rs && nc->rs_pending && nc->rs_len)
		/* N7: written into a connection that broke, never sent again */
		pk_fwd_say("printk: console [%.16s]: %u records written before the connection to %.64s broke were not sent again at exit\n",
			   nc->con.name, nc->rs_len, nc->target);
}

/* Unregistered by pk_printk_exit(), or freed by pk_console_destroy(). */
static void net_release(struct console *con)
{
	struct net_console *nc = (struct net_console *)con;

	if (nc->ops->release)
		nc->ops->release(nc);
	pk_fwd_close(nc);
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

/* A console on transport @ops to @where (the target after its prefix);
 * @target is the whole target, for the notices. */
static int net_create(struct console **conp, const struct pk_fwd_transport_ops *ops, enum pk_fwd_wire wire,
		      const char *name, const char *target, const char *where)
{
	struct net_console *nc = calloc(1, sizeof(*nc));
	int err;

	pk_fwd_create_why(""); /* this console's reason only */
	if (!nc)
		return -ENOMEM;
	snprintf(nc->con.name, sizeof(nc->con.name), "%s", name);
	nc->con.write_record = net_write_record;
	nc->con.release = net_release;
	nc->con.flags = PK_CON_ENABLED | PK_CON_THREADED;
	nc->ops = ops;
	nc->wire = wire;
	nc->fd = -1;
	nc->state_slot = -2;
	nc->backoff_ms = BACKOFF_MIN_MS;
	nc->enterprise = PK_SYSLOG_ENTERPRISE_DEFAULT;
	atomic_init(&nc->rs_slack_ms, RESEND_SLACK_MS);
	snprintf(nc->app, sizeof(nc->app), "%s",
		 program_invocation_short_name[0] ? program_invocation_short_name : "printk");
	if (gethostname(nc->host, sizeof(nc->host) - 1) < 0)
		nc->host[0] = '\0';
	snprintf(nc->target, sizeof(nc->target), "%s", target);
	err = ops->init(nc, where);
	if (!err && (ops->flags & PK_FWD_RESEND) && !(nc->rs = calloc(RESEND_MAX, sizeof(*nc->rs))))
		err = -ENOMEM;
	if (err) {
		if (ops->release)
			ops->release(nc);
		free(nc);
		return err;
	}
	if (ops->exit_close || (ops->flags & PK_FWD_RESEND))
		pk_console_set_exit_close(net_exit_close);
	if (ops->flags & PK_FWD_RESEND)
		pk_console_set_idle_hook(net_idle);
	*conp = &nc->con;
	return 0;
}

int pk_console_journal_create(struct console **conp, const char *socket_path)
{
	char target[160];
	const char *path = socket_path ? socket_path : PK_JOURNAL_SOCKET;

	if (!conp)
		return -EINVAL;
	snprintf(target, sizeof(target), "journal:%s", path);
	return net_create(conp, &pk_fwd_transport_journal, PK_FWD_WIRE_JOURNAL, "journal", target, path);
}

/* The transport a target names ("tcp:..."), and where @rest starts. */
static const struct pk_fwd_transport_ops *transport_of(const char *target, const char **rest)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++) {
		size_t n = strlen(transports[i]->name);

		if (!strncmp(target, transports[i]->name, n) && target[n] == ':') {
			*rest = target + n + 1;
			return transports[i];
		}
	}
	return NULL;
}

int pk_console_syslog_create(struct console **conp, const char *target, int format,
			     unsigned enterprise)
{
	const struct pk_fwd_transport_ops *ops;
	const char *rest;
	int err;

	if (!conp || !target || (format != PK_SYSLOG_RFC5424 && format != PK_SYSLOG_RFC3164))
		return -EINVAL;
	if (!(ops = transport_of(target, &rest)))
		return -EINVAL;
	if ((err = net_create(conp, ops, PK_FWD_WIRE_SYSLOG, "syslog", target, rest)))
		return err;

	struct net_console *nc = (struct net_console *)*conp;

	nc->format = format;
	if (enterprise)
		nc->enterprise = enterprise;
	return 0;
}

int pk_console_syslog_set_framing(struct console *con, int framing)
{
	if (!pk_console_net_owns(con) || !(((struct net_console *)con)->ops->flags & PK_FWD_FRAMING) ||
	    (framing != PK_SYSLOG_FRAMING_OCTET && framing != PK_SYSLOG_FRAMING_LF))
		return -EINVAL;
	((struct net_console *)con)->framing = framing;
	return 0;
}

int pk_console_syslog_set_bom(struct console *con, int bom)
{
	if (!pk_console_net_owns(con) || ((struct net_console *)con)->wire == PK_FWD_WIRE_JOURNAL ||
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
	st->lost = pk_fwd_lost_total(nc);
	st->changes = atomic_load_explicit(&nc->changes, memory_order_relaxed);
	if (st->state != PK_CONSOLE_IDLE)
		st->waiting = pk_fwd_waiting_from(nc, atomic_load_explicit(&nc->pos, memory_order_relaxed));
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

int pk_console_forward_commit(struct console *con)
{
	if (!pk_console_net_owns(con))
		return -EINVAL;

	struct net_console *nc = (struct net_console *)con;
	int err = nc->ops->commit ? nc->ops->commit(nc) : 0;

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

/* ------------------------------------------- the kinds journal, syslog -- */

/* syslog: framing= is for the transports that frame (PK_FWD_FRAMING);
 * the rest of the spec's syntax is console_kinds.c's row. */
static int syslog_check(const struct pk_opts_console *c, struct pk_opts *o)
{
	const char *rest;
	const struct pk_fwd_transport_ops *t = transport_of(c->path, &rest);

	if (c->framing && (!t || !(t->flags & PK_FWD_FRAMING))) {
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=syslog:%.100s: framing= is for tcp: targets only, console ignored",
			     c->path);
		return -EALREADY;
	}
	if (c->tls_opts[0] && t != &pk_fwd_transport_tls && t != &pk_fwd_transport_relp) {
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=syslog:%.100s: TLS options are for tls: and relp: targets only, console ignored",
			     c->path);
		return -EALREADY;
	}
	return 0;
}

/* framing and bom are 0 when not given, else their value plus one. */
static int syslog_create_spec(struct console **conp, const struct pk_opts_console *c)
{
	char target[sizeof(c->path) + sizeof(c->tls_opts)];
	int err;

	/* TLS's options go with the target (transport_tls.c, transport_relp.c) */
	snprintf(target, sizeof(target), "%s%s", c->path, c->tls_opts);
	err = pk_console_syslog_create(conp, target, c->format, c->enterprise);

	if (!err && c->framing)
		err = pk_console_syslog_set_framing(*conp, c->framing - 1);
	if (!err && c->bom)
		err = pk_console_syslog_set_bom(*conp, c->bom - 1);
	if (err && *conp) { /* created, but an option was refused */
		net_release(*conp);
		*conp = NULL;
	}
	return err;
}

static int journal_create_spec(struct console **conp, const struct pk_opts_console *c)
{
	return pk_console_journal_create(conp, c->path[0] ? c->path : NULL);
}

/* The makers of the rows journal and syslog of console_kinds.c. */
static const struct pk_console_kind kind_journal = {
	.name = "journal",
	.create = journal_create_spec, .release = net_release, .strerror = pk_net_create_strerror,
};
static const struct pk_console_kind kind_syslog = {
	.name = "syslog",
	.create = syslog_create_spec, .release = net_release, .strerror = pk_net_create_strerror,
	.check = syslog_check,
};

/* console=journal and console=syslog: (PRINTK_OPTS, pk_console_create())
 * are made only when this file is in the program (console_kinds.h). */
__attribute__((constructor(PK_CONSOLE_KIND_PRIORITY))) static void provide_kinds(void)
{
	pk_console_kind_register(&kind_journal);
	pk_console_kind_register(&kind_syslog);
}
