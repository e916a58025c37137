// SPDX-License-Identifier: MIT
/*
 * transport_relp.c - syslog over RELP ("relp:HOST:PORT"), rsyslog's
 * acknowledged transport, through librelp.
 *
 * librelp is not linked: its header is used at build time when pkg-config
 * finds it (PRINTK_HAVE_RELP), and librelp.so.0 is opened with dlopen()
 * when the first RELP console is made, so a program that never forwards
 * over RELP never loads it; without the header, or without the library at
 * run time, making a RELP console fails with -EPROTONOSUPPORT.
 *
 * Owns: the librelp engine and client of one console (nc->tp), the
 * SIGPIPE guard around librelp's writes, and the session's end. A send
 * that fails breaks the session: the next attempt reconnects, and librelp
 * sends again the frames the receiver did not answer. N4: a session a
 * forked child inherited is abandoned, never closed (closing it would
 * speak into the parent's connection). N5: a commit closes the session; a
 * close answered without error means every earlier frame was answered.
 *
 * "relp:HOST:PORT,tls,ca=..,cert=..,key=..[,peer=..]" is RELP over TLS,
 * librelp's own (told to use OpenSSL): the console hands it the files and
 * the name the collector's certificate must carry (relpCltSetAuthMode
 * "name", relpCltAddPermittedPeer). librelp up to 1.12 checks the
 * server's certificate only when the client shows one, so a certificate
 * of our own is required (tls.c's pk_tls_parse_target()). librelp's words
 * for a refusal are the announcement's (nc->why).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef PRINTK_HAVE_RELP
#include <dlfcn.h>
#include <librelp.h>
#endif

#include <printk/forward.h>

#include "forward/sigpipe.h"
#include "forward/tls.h"
#include "forward/transport.h"
#include "ring/caller.h"

#define RELP_TIMEOUT_S 2   /* librelp's wait for a window slot or an answer */
#define RELP_WINDOW    128 /* librelp's unanswered frames per session */

/* The target's syntax and its address, resolved into @nc (with or without
 * librelp built in: a bad target is refused the same way). */
static int parse_target(struct net_console *nc, const char *where, struct pk_tls_target *t)
{
	char why[200];
	int err = pk_tls_parse_target(t, where, 1, why, sizeof(why));

	if (err) {
		pk_fwd_create_why(why);
		return err;
	}
	return pk_fwd_inet_addr(nc, t->addr, 1);
}

#ifdef PRINTK_HAVE_RELP
struct relp_state {
	relpEngine_t *engine;
	relpClt_t *clt;
	pid_t pid;
	int reconnect;	 /* the session broke: relpCltReconnect() resends */
	unsigned errors; /* librelp's error callback calls */
	char host[64], port[8];
	struct net_console *nc;	 /* for librelp's words (nc->why) */
	struct pk_tls_target t;	 /* t.tls: RELP over TLS, with these files */
};

/* librelp's entry points, looked up once. */
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
	/* RELP over TLS */
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

/* librelp calls its debug hook unconditionally: it must be set. */
static void relp_dbgprint(char *fmt, ...)
{
	(void)fmt;
}

/* librelp's error callback: counted, so that a commit sees a close that
 * failed (its return value does not say). */
static void relp_on_err(void *usr, char *obj, char *msg, relpRetVal code)
{
	struct relp_state *rs = usr;

	(void)obj;
	if (!rs)
		return;
	rs->errors++;
	/* RELP over TLS: librelp's words for a TLS failure, the first of a
	 * connection attempt (the later ones say less) */
	if (rs->t.tls && msg && !rs->nc->why[0] &&
	    (code == RELP_RET_ERR_TLS_SETUP || code == RELP_RET_ERR_TLS_HANDS ||
	     code == RELP_RET_ERR_TLS || code == RELP_RET_AUTH_ERR_NAME ||
	     code == RELP_RET_AUTH_CERT_INVL || code == RELP_RET_AUTH_NO_CERT ||
	     code == RELP_RET_AUTH_ERR_FP)) {
		snprintf(rs->nc->why, sizeof(rs->nc->why), "TLS: %s", msg);
		rs->nc->why_err = code == RELP_RET_ERR_TLS_SETUP || code == RELP_RET_ERR_TLS_HANDS ||
						  code == RELP_RET_ERR_TLS
					  ? -EPROTO
					  : -PK_TLS_EREFUSED;
	}
}

/* RELP over TLS: librelp refused the collector's certificate. */
static void relp_on_auth_err(void *usr, char *info, char *msg, relpRetVal code)
{
	struct relp_state *rs = usr;

	(void)code;
	if (!rs || !rs->t.tls)
		return;
	rs->errors++;
	snprintf(rs->nc->why, sizeof(rs->nc->why), "certificate refused: %.100s%s%.60s",
		 msg ? msg : "", info ? ": " : "", info ? info : "");
	rs->nc->why_err = -PK_TLS_EREFUSED;
}

/* RELP over TLS: the client's settings, before it connects. */
static relpRetVal tls_setup(struct relp_state *rs, relpClt_t *clt)
{
	relpRetVal r = relp.clt_enable_tls(clt);

	if (r == RELP_RET_OK && rs->t.ca[0])
		r = relp.clt_set_ca_cert(clt, rs->t.ca);
	if (r == RELP_RET_OK)
		r = relp.clt_set_own_cert(clt, rs->t.cert);
	if (r == RELP_RET_OK)
		r = relp.clt_set_priv_key(clt, rs->t.key);
	if (r == RELP_RET_OK)
		r = relp.clt_set_auth_mode(clt, (char *)"name");
	if (r == RELP_RET_OK)
		r = relp.clt_add_permitted_peer(clt, rs->t.peer);
	return r;
}

static int relp_init(struct net_console *nc, const char *where)
{
	struct relp_state *rs;
	struct pk_tls_target t;
	int err = parse_target(nc, where, &t);

	if (err)
		return err;
	pthread_once(&relp_once, relp_load);
	if (!relp_ok)
		return -EPROTONOSUPPORT;
	if (!(rs = calloc(1, sizeof(*rs))))
		return -ENOMEM;
	rs->t = t;
	rs->nc = nc;
	/* the notices name the address, not the files */
	snprintf(nc->target, sizeof(nc->target), "relp:%.150s", t.addr);
	/* librelp resolves again at each connect: it gets the address this
	 * console resolved, as numbers. */
	if (getnameinfo((struct sockaddr *)&nc->addr, nc->addr_len, rs->host, sizeof(rs->host), rs->port,
			sizeof(rs->port), NI_NUMERICHOST | NI_NUMERICSERV)) {
		free(rs);
		return -EHOSTUNREACH;
	}
	nc->tp = rs;
	return 0;
}

/* N4: a session made by another process (the parent) is abandoned. */
static void forget_inherited(struct relp_state *rs)
{
	if (rs->engine && rs->pid != (pid_t)pk_caller_pid()) {
		rs->engine = NULL;
		rs->clt = NULL;
		rs->reconnect = 0;
	}
}

static void drop_client(struct relp_state *rs)
{
	struct pk_fwd_pipe_guard g;

	if (!rs->clt)
		return;
	pk_fwd_pipe_block(&g);
	relp.clt_destruct(rs->engine, &rs->clt);
	pk_fwd_pipe_restore(&g);
	rs->clt = NULL;
	rs->reconnect = 0;
}

/* N6: librelp does not say why a connection failed (the errno it leaves
 * is its non-blocking connect's EINPROGRESS): a plain TCP connection to the
 * same address, closed at once, tells. One that succeeds means something
 * listens there but the RELP session failed. Only when the state changes,
 * so a receiver that is away sees one such probe per announcement. */
static int relp_reason(struct net_console *nc)
{
	int fd, err = pk_fwd_tcp_connect(&nc->addr, nc->addr_len, &fd);

	if (err)
		return err;
	close(fd);
	return -EPROTO;
}

/* Connect (or reconnect, which resends what the receiver has not
 * acknowledged); -EAGAIN while the receiver is away (N2). */
static int relp_open(struct net_console *nc, uint64_t seq)
{
	struct relp_state *rs = nc->tp;
	struct pk_fwd_pipe_guard g;
	relpRetVal r;

	forget_inherited(rs);
	if (rs->clt && !rs->reconnect)
		return 0;
	if (pk_fwd_retry_wait(nc))
		return -EAGAIN;
	if (!rs->engine) {
		relpEngine_t *e = NULL;

		if (relp.engine_construct(&e) != RELP_RET_OK)
			return -EAGAIN;
		relp.engine_set_dbgprint(e, relp_dbgprint);
		relp.engine_set_enable_cmd(e, (unsigned char *)"syslog", eRelpCmdState_Required);
		relp.engine_set_on_err(e, relp_on_err);
		relp.engine_set_on_auth_err(e, relp_on_auth_err);
		if (rs->t.tls) /* the TLS library tls: targets use too */
			relp.engine_set_tls_lib_by_name(e, "openssl");
		rs->engine = e;
		rs->pid = (pid_t)pk_caller_pid();
	}
	pk_fwd_pipe_block(&g);
	nc->why[0] = '\0';
	if (rs->clt) {
		r = relp.clt_reconnect(rs->clt);
	} else {
		relpClt_t *clt = NULL;

		r = relp.clt_construct(rs->engine, &clt);
		if (r == RELP_RET_OK) {
			relp.clt_set_timeout(clt, RELP_TIMEOUT_S);
			relp.clt_set_usr_ptr(clt, rs);
			if (rs->t.tls)
				r = tls_setup(rs, clt);
			if (r == RELP_RET_OK)
				r = relp.clt_connect(clt, nc->addr.ss_family, (unsigned char *)rs->port,
						     (unsigned char *)rs->host);
			if (r != RELP_RET_OK)
				relp.clt_destruct(rs->engine, &clt);
			else
				rs->clt = clt;
		}
	}
	pk_fwd_pipe_restore(&g);
	if (r != RELP_RET_OK) {
		int state = atomic_load_explicit(&nc->state, memory_order_relaxed);

		pk_fwd_count_send_error(nc);
		if (nc->why[0]) /* librelp said why (TLS) */
			pk_fwd_went_down(nc, nc->why_err, seq);
		else if (state == PK_CONSOLE_DELIVERING || state == PK_CONSOLE_IDLE)
			pk_fwd_went_down(nc, relp_reason(nc), seq);
		else
			pk_fwd_went_down(nc, atomic_load_explicit(&nc->last_error, memory_order_relaxed), seq);
		pk_fwd_schedule_retry(nc);
		return -EAGAIN;
	}
	rs->reconnect = 0;
	pk_fwd_connected(nc);
	return 0;
}

static int relp_send(struct net_console *nc, char *msg, size_t n)
{
	struct relp_state *rs = nc->tp;
	struct pk_fwd_pipe_guard g;
	relpRetVal r;

	pk_fwd_pipe_block(&g);
	r = relp.clt_send_syslog(rs->clt, (unsigned char *)msg, n);
	pk_fwd_pipe_restore(&g);
	return r == RELP_RET_OK ? 0 : -EPIPE;
}

/* The session is broken: the next attempt reconnects, and librelp resends
 * the frames that were not acknowledged. */
static void relp_broke(struct net_console *nc)
{
	((struct relp_state *)nc->tp)->reconnect = 1;
	nc->broken = 1;
}

/* N5: close the session; a clean close acknowledges everything before it. */
static int relp_commit(struct net_console *nc)
{
	struct relp_state *rs = nc->tp;
	unsigned errors = rs->errors;

	forget_inherited(rs);
	if (!rs->clt)
		return nc->unconfirmed ? -EAGAIN : 0;
	if (rs->reconnect) {
		drop_client(rs);
		return -EAGAIN;
	}
	drop_client(rs);
	return rs->errors == errors ? 0 : -EAGAIN;
}

/*
 * At exit (the console's thread gone) or release: close the session, which
 * waits for the receiver's answers to every frame sent (RELP_TIMEOUT_S at
 * most). A session that broke, or a close that failed, leaves the frames
 * librelp still held unanswered: at most its window, and no more than were
 * sent since the session began; said in one line on stderr.
 */
static void relp_exit_close(struct net_console *nc)
{
	struct relp_state *rs = nc->tp;
	unsigned errors;
	int broken;

	if (!rs)
		return;
	errors = rs->errors;
	forget_inherited(rs);
	if (!rs->clt)
		return;
	broken = rs->reconnect;
	drop_client(rs);
	if (!broken && rs->errors == errors)
		return;
	pk_fwd_say("printk: console [%.16s]: the RELP session did not close cleanly: up to %llu records sent last may not have arrived\n",
		   nc->con.name,
		   (unsigned long long)(nc->unconfirmed < RELP_WINDOW ? nc->unconfirmed : RELP_WINDOW));
}

static void relp_release(struct net_console *nc)
{
	struct relp_state *rs = nc->tp;

	if (!rs)
		return;
	relp_exit_close(nc);
	if (rs->engine)
		relp.engine_destruct(&rs->engine);
	free(rs);
	nc->tp = NULL;
}

const struct pk_fwd_transport_ops pk_fwd_transport_relp = {
	.name = "relp",
	.flags = PK_FWD_STREAM,
	.init = relp_init,
	.open = relp_open,
	.send = relp_send,
	.broke = relp_broke,
	.commit = relp_commit,
	.exit_close = relp_exit_close,
	.release = relp_release,
};
#else
static int relp_init(struct net_console *nc, const char *where)
{
	struct pk_tls_target t;
	int err = parse_target(nc, where, &t);

	return err ? err : -EPROTONOSUPPORT;
}

const struct pk_fwd_transport_ops pk_fwd_transport_relp = {
	.name = "relp",
	.flags = PK_FWD_STREAM,
	.init = relp_init,
};
#endif
