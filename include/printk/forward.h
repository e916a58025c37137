/* SPDX-License-Identifier: MIT */
/*
 * printk/forward.h - consoles that forward each record, with its fields, to
 * a log collector that is already running: systemd-journald (its native
 * protocol) or a syslog daemon (RFC 5424 or RFC 3164 over a unix datagram
 * socket, UDP, or TCP with RFC 6587 octet counting).
 *
 * Every forwarding console is PK_CON_THREADED: a thread of its own sends,
 * so a slow or absent collector never delays printk. Register it with
 * pk_register_console(); free it with pk_console_destroy() after
 * pk_unregister_console() (pk_printk_exit() frees what it unregisters).
 */
#ifndef PRINTK_FORWARD_H
#define PRINTK_FORWARD_H

#include <stdint.h>

#include <printk/compiler.h>

PK_BEGIN_DECLS

struct console;

#define PK_JOURNAL_SOCKET "/run/systemd/journal/socket"

/*
 * A console for systemd-journald's native protocol on @socket_path (NULL:
 * PK_JOURNAL_SOCKET). Fields: MESSAGE, PRIORITY, SYSLOG_FACILITY,
 * SYSLOG_IDENTIFIER, SYSLOG_PID, TID, PRINTK_SEQ, PRINTK_REALTIME_USEC and
 * every dictionary entry, its key made a journal field name. 0, -EINVAL
 * (@socket_path too long for a unix socket address), -ENOMEM.
 * Context: thread-safe; does not block; not async-signal-safe (allocates).
 */
PK_API int pk_console_journal_create(struct console **conp, const char *socket_path);

#define PK_SYSLOG_RFC5424 0
#define PK_SYSLOG_RFC3164 1
/* The structured-data ID's enterprise number when none is given: 32473 is
 * the number RFC 5612 reserves for documentation and examples. */
#define PK_SYSLOG_ENTERPRISE_DEFAULT 32473u

/*
 * A console for a syslog receiver. @target: "unix:PATH" (datagrams, as
 * /dev/log), "udp:HOST:PORT", "tcp:HOST:PORT" or "relp:HOST:PORT" (HOST a
 * name, an IPv4 address or an IPv6 address in brackets). @format: PK_SYSLOG_RFC5424 or
 * PK_SYSLOG_RFC3164. @enterprise: the number in the SD-ID
 * "printk@<enterprise>" (0: PK_SYSLOG_ENTERPRISE_DEFAULT). 0, -EINVAL (a
 * malformed target or format), -ENOMEM, -EHOSTUNREACH (HOST does not
 * resolve), or -EPROTONOSUPPORT ("relp:" in a build without librelp's
 * header, or librelp.so.0 cannot be loaded).
 * Context: thread-safe; may block (resolves HOST); not async-signal-safe.
 */
PK_API int pk_console_syslog_create(struct console **conp, const char *target, int format,
				    unsigned enterprise);

/* TCP framing (pk_console_syslog_set_framing()). */
#define PK_SYSLOG_FRAMING_OCTET 0 /* RFC 6587 octet counting: "LEN SP MSG" (default) */
#define PK_SYSLOG_FRAMING_LF	1 /* MSG LF, each newline inside MSG sent as "#012" */

/*
 * Before registration: how a "tcp:" console frames its messages (-EINVAL
 * for another target or framing), and whether an RFC 5424 message's UTF-8
 * text starts with the BOM (@bom 1, the default) or not (0; -EINVAL for no
 * syslog console). 0 on success.
 * Context: before pk_register_console(); not async-signal-safe.
 */
PK_API int pk_console_syslog_set_framing(struct console *con, int framing);
PK_API int pk_console_syslog_set_bom(struct console *con, int bom);

/* A forwarding console's state (struct pk_console_stats). */
#define PK_CONSOLE_IDLE		  0 /* nothing offered yet */
#define PK_CONSOLE_DELIVERING	  1 /* the last message went to the collector */
#define PK_CONSOLE_CANNOT_CONNECT 2 /* the collector was never reached */
#define PK_CONSOLE_LOST		  3 /* reached before, away now */

struct pk_console_stats {
	int state;	    /* PK_CONSOLE_* */
	int last_error;	    /* negative errno of the last failure (0: none yet) */
	uint64_t delivered; /* messages the transport took (notices included) */
	uint64_t waiting;   /* records of the log after the last one delivered */
	uint64_t lost;	    /* records that will not arrive: overwritten before they
			     * were sent, datagrams refused, TCP messages written
			     * into a connection that broke */
	uint64_t changes;   /* state changes (each one announced) */
};

/*
 * @con's state and counters: 0, or -EINVAL if @con is no forwarding
 * console. strerror(-st->last_error) says why it cannot deliver.
 * Context: any thread; does not block; async-signal-safe (atomic loads).
 */
PK_API int pk_console_stats(const struct console *con, struct pk_console_stats *st);

/* What a forwarding console did since it was made. */
struct pk_forward_stats {
	uint64_t sent;	      /* messages handed to the transport (notices included) */
	uint64_t send_errors; /* sends that failed (UDP, unix: the message is lost) */
	uint64_t dropped;     /* records the ring overwrote before they were sent */
	uint64_t connects;    /* TCP connections made */
};

/* 0, or -EINVAL if @con is no forwarding console.
 * Context: any thread; does not block; async-signal-safe (atomic loads). */
PK_API int pk_console_forward_stats(const struct console *con, struct pk_forward_stats *stats);

/*
 * A forwarder: another log's records sent through a forwarding console
 * that is never registered (pk-forward does this), from one thread.
 * pk_console_forward_set_source(): writers' names and the wall clock come
 * from @log (NULL: printk's log). pk_console_forward_send(): one record; 0
 * if the transport took it (datagrams: sent or lost, counted), -EAGAIN if
 * not (the receiver is away: offer it again). pk_console_forward_lost(): @n
 * records were lost before they could be read; a counted "** N printk
 * messages dropped **" message goes before the next record.
 * pk_console_forward_commit(): 0 if every message taken since the previous
 * commit was accepted by the receiver (RELP: acknowledged; TCP: no break
 * and the send queue drained; datagrams: always), else -EAGAIN: send them
 * again. All -EINVAL if @con is no forwarding console.
 * Context: the one thread that uses @con; send and commit may block
 * (bounded: a few seconds); not async-signal-safe.
 */
struct pk_log;
struct pk_record;
PK_API int pk_console_forward_set_source(struct console *con, struct pk_log *log);
PK_API int pk_console_forward_send(struct console *con, const struct pk_record *rec);
PK_API int pk_console_forward_lost(struct console *con, uint64_t n);
PK_API int pk_console_forward_commit(struct console *con);

/*
 * The identity of @log: 128 random bits drawn when its file was created,
 * so that a reader that kept a position (a cursor) knows a recreated file.
 * All zero for a memory log or a file of an older version. 0 or -EINVAL.
 * Context: any (async-signal-safe, lock-free).
 */
PK_API int pk_log_identity(struct pk_log *log, uint64_t id[2]);

PK_END_DECLS

#endif
