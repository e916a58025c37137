// SPDX-License-Identifier: MIT
/*
 * transport.h - what the forwarding consoles' files share: the console's
 * state (struct net_console), the operations table every transport fills
 * (struct pk_fwd_transport_ops), and the helpers transports call
 * (fwd_state.c: state changes, retry timing, addresses; fwd_socket.c:
 * bounded socket calls).
 *
 * Files, bottom-up (the file graph has no cycle: scripts/layers.py):
 *   wire_syslog.c, wire_journal.c  the wire formats (wire.h), pure
 *   fwd_socket.c                   sockets: bounded connect, sends, peer gone
 *   fwd_state.c                    states and their announcements (N6), backoff
 *                                  (N2), addresses, fork ownership (N4)
 *   tls.c                          TLS sessions (OpenSSL, opened at run time)
 *                                  and the TLS options of a target
 *   transport_unix.c, transport_udp.c, transport_tcp.c, transport_tls.c,
 *   transport_relp.c               one transport each, one ops table each
 *   console_net.c                  the consoles: the table of transports, the
 *                                  write (format, notice, send), the resend
 *                                  window (N7), commits (N5), the public calls
 *
 * A transport's file owns the transport's own state (behind nc->tp when it
 * has more than the socket) and is reached only through its ops table; it
 * never formats a message and never decides what a failure means for the
 * record beyond its return value.
 */
#ifndef PRINTK_FORWARD_TRANSPORT_H
#define PRINTK_FORWARD_TRANSPORT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <printk/console.h>
#include <printk/compiler.h>
#include <printk/log.h>

#define PK_FWD_MSG_BUF	  8192 /* the largest message any record makes, with room */
#define PK_FWD_MSG_ROOM	  24   /* writable bytes before a message: a frame's prefix */

struct net_console;

/* What a transport is (pk_fwd_transport_ops.flags). */
#define PK_FWD_STREAM	  0x01 /* a connection: a failed send breaks it (.broke) and the
				* record waits (-EAGAIN); announced as reached/lost */
#define PK_FWD_RESEND	  0x02 /* N7: keeps a resend window; needs .unacked */
#define PK_FWD_SETTLE	  0x04 /* back only a second after its last failure (UDP) */
#define PK_FWD_FULL_WAITS 0x08 /* datagrams: a full receiver queue makes the record wait */
#define PK_FWD_FRAMING	  0x10 /* takes pk_console_syslog_set_framing() */

/*
 * One transport. Called only by the console's one sending thread (N1);
 * every call bounded (N2). @seq: the record first in line, for the
 * announcements.
 */
struct pk_fwd_transport_ops {
	const char *name; /* the target's prefix without its colon: "tcp" */
	unsigned flags;	  /* PK_FWD_* */
	/* Where to: @where is the target after "NAME:"; fills nc->addr (and
	 * nc->tp). Resolves names, does no other I/O. 0 or a negative errno
	 * (-EINVAL malformed, -EHOSTUNREACH, -EPROTONOSUPPORT, -ENOMEM). */
	int (*init)(struct net_console *nc, const char *where);
	/* Open or connect if needed: 0; -EAGAIN: the receiver is away, the
	 * record waits; another negative errno: this record is lost. */
	int (*open)(struct net_console *nc, uint64_t seq);
	/* One message; PK_FWD_MSG_ROOM bytes before @msg may be written (a
	 * frame's prefix). 0 or a negative errno. */
	int (*send)(struct net_console *nc, char *msg, size_t n);
	/* PK_FWD_STREAM: a send failed, the connection is given up. */
	void (*broke)(struct net_console *nc);
	/* PK_FWD_RESEND: bytes written the receiver's kernel has not
	 * acknowledged yet, or a negative errno. */
	int (*unacked)(struct net_console *nc);
	/* N5: 0 if every message since the last commit was accepted, else
	 * -EAGAIN. NULL: always 0 (datagrams). */
	int (*commit)(struct net_console *nc);
	/* Optional: at exit, the console's thread gone: end the session. */
	void (*exit_close)(struct net_console *nc);
	/* Optional: free what init made (the socket is closed by the caller). */
	void (*release)(struct net_console *nc);
};

/* The transports (one file each) and the journal's (transport_unix.c). */
extern const struct pk_fwd_transport_ops pk_fwd_transport_unix;
extern const struct pk_fwd_transport_ops pk_fwd_transport_journal;
extern const struct pk_fwd_transport_ops pk_fwd_transport_udp;
extern const struct pk_fwd_transport_ops pk_fwd_transport_tcp;
extern const struct pk_fwd_transport_ops pk_fwd_transport_tls;
extern const struct pk_fwd_transport_ops pk_fwd_transport_relp;

enum pk_fwd_wire { PK_FWD_WIRE_SYSLOG, PK_FWD_WIRE_JOURNAL };

struct pk_fwd_resend {
	uint64_t seq, written_ns;
};

/* A new connection's first retry comes this long after a failure; each
 * failure doubles it, up to fwd_state.c's BACKOFF_MAX_MS. */
#define BACKOFF_MIN_MS 100

struct net_console {
	struct console con; /* first: container_of is a cast */
	const struct pk_fwd_transport_ops *ops;
	enum pk_fwd_wire wire;
	int format;
	unsigned enterprise;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int fd;
	pid_t fd_pid; /* N4 */
	void *tp;     /* the transport's own state (RELP's session) */
	unsigned backoff_ms;
	uint64_t next_try_ns;
	uint64_t lost;	     /* taken from the console layer, not reported yet */
	size_t max_datagram; /* journal: larger goes through a memfd (0: the socket's limit) */
	char host[256];
	char app[64];
	pid_t comm_pid; /* app names of other processes' records (a shared log file) */
	char comm[64];
	_Atomic uint64_t sent, send_errors, dropped, connects;
	struct pk_log *src;   /* the records' log (NULL: printk's): names and clock */
	uint64_t unconfirmed; /* N5: messages handed over since the last commit */
	int broken;	      /* N5: the transport broke since the last commit */
	struct pk_record notice; /* the dropped notice, as a record */
	char buf[PK_FWD_MSG_BUF];
	/* N6: the state the notices announced, and why it is so */
	char target[160]; /* "tcp:HOST:PORT" as given, for the notices */
	int framing;	  /* PK_SYSLOG_FRAMING_* (stream transports) */
	int no_bom;	  /* RFC 5424 text without the BOM */
	_Atomic int state, last_error;
	_Atomic uint64_t lost_sends, changes;
	_Atomic uint64_t pos; /* the seq of the next record to deliver */
	/* The entry of printk's log this console publishes its state in
	 * (log/console_state.h): -2 not taken yet, -1 none to be had. */
	int state_slot;
	struct pk_log *state_log;
	uint64_t last_fail_ns;
	char lf[PK_FWD_MSG_BUF * 4 + 1]; /* an LF-framed message, newlines escaped */
	/* N7: the resend window (PK_FWD_RESEND, a registered console's): the
	 * records written on this connection the receiver may not have read */
	struct pk_fwd_resend *rs;
	unsigned rs_head, rs_len;
	int rs_pending;	    /* the connection broke: send the window again */
	uint64_t rs_unkept; /* left the full window unconfirmed */
	uint64_t rs_resent; /* sent again at the last reconnection */
	uint64_t idle_check_ns; /* N8: when the idle thread last looked at the connection */
	_Atomic unsigned rs_slack_ms;
	struct pk_record rs_rec;
	/* N6: a transport's own words for @why_err (TLS: OpenSSL's reason a
	 * certificate was refused), used by the announcement of that error */
	char why[200];
	int why_err;
};

/* fwd_state.c */
/* N6: delivery failed with @err, record @seq first in line. */
void pk_fwd_went_down(struct net_console *nc, int err, uint64_t seq);
/* N6: a message went. */
void pk_fwd_went_up(struct net_console *nc, uint64_t seq);
/* One line on stderr through the stderr console (at exit, no log to store it in). */
void pk_fwd_say(const char *fmt, ...) PK_PRINTF(1, 2);
/* N2: the next attempt after a doubling backoff; before one, wait for it
 * if due within RETRY_SLEEP_MS (0), else -EAGAIN. */
void pk_fwd_schedule_retry(struct net_console *nc);
int pk_fwd_retry_wait(const struct net_console *nc);
/* A connection made: backoff reset, counted. */
void pk_fwd_connected(struct net_console *nc);
void pk_fwd_count_send_error(struct net_console *nc);
/* Close nc->fd (only in the pid that made it, N4), noting a break for the
 * commit (N5) and the resend window (N7). */
void pk_fwd_close(struct net_console *nc);
/* N4: a socket made by another process (the parent) is abandoned with
 * what it wrote; 1 if it was. */
int pk_fwd_disown(struct net_console *nc);
/* Targets: "PATH" (a unix socket), "HOST:PORT" or "[V6]:PORT" into nc->addr. */
int pk_fwd_unix_addr(struct net_console *nc, const char *path);
int pk_fwd_inet_addr(struct net_console *nc, const char *hp, int stream);
/* The system's words for @err, or the resolver's for the last -EHOSTUNREACH
 * on this thread. */
const char *pk_fwd_err_words(int err);
/* Records of the source log from @pos on; what was lost in all. */
uint64_t pk_fwd_waiting_from(const struct net_console *nc, uint64_t pos);
uint64_t pk_fwd_lost_total(const struct net_console *nc);
const char *pk_net_create_strerror(int err);
/* A transport's init says why it failed, in words, for
 * pk_net_create_strerror() on this thread ("" clears it). */
void pk_fwd_create_why(const char *why);

/* fwd_socket.c: each bounded (N2), each returning 0 or a negative errno */
int pk_fwd_dgram_open(struct net_console *nc, int do_connect);
int pk_fwd_tcp_connect(const struct sockaddr_storage *addr, socklen_t len, int *fdp);
int pk_fwd_send_all(int fd, const char *p, size_t n);
/* The receiver closed the connection (-ESHUTDOWN) or it failed (its
 * error); 0 while it is there. */
int pk_fwd_peer_gone(int fd);

#endif
