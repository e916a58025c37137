// SPDX-License-Identifier: MIT
/*
 * forward.c - pk-forward's run: the forwarding console for TARGET, the log
 * opened read-only (the writers never wait for this reader), the position
 * to resume from, and the loop that sends records and saves the cursor.
 *
 * At least once: the cursor is written only after
 * pk_console_forward_commit() (or, for journal-remote, pkf_jr_commit())
 * said the collector accepted everything up to it; a commit that fails
 * rewinds to the last cursor and sends again.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "pk-forward.h"

#define COMMIT_RECORDS 1000 /* a commit after this many records... */
#define COMMIT_NS      500000000ull /* ...or this long after the first uncommitted one */
#define IDLE_SLEEP_NS  10000000L

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What one run holds. */
struct fwd {
	const struct pkf_opts *o;
	struct console *con; /* a console's target... */
	struct pkf_jr *jr;   /* ...or journal-remote's */
	struct pk_log *log;
	/* The file the log came from: a new file at the path (the log was
	 * deleted and created again) is noticed when there is nothing to read. */
	struct stat st_open;
	struct pkf_cursor cur; /* what the collector confirmed last */
	uint64_t changes;      /* the console's state changes printed so far */
};

/* 1 if @path now names another file than @was, which is then @now. */
static int recreated(const char *path, const struct stat *was, struct stat *now)
{
	return stat(path, now) == 0 && (now->st_dev != was->st_dev || now->st_ino != was->st_ino);
}

/*
 * The console announces a change of its state as a notice stored in this
 * process's printk log, printed by the stderr console with the next
 * printk, and pk-forward prints nothing else through printk: without this
 * the line would wait for the exit. Printed when the state changes, so an
 * operator sees "cannot reach" while the collector is away.
 */
static void say_changes(struct fwd *f)
{
	struct pk_console_stats st;

	if (!f->con || pk_console_stats(f->con, &st) || st.changes == f->changes)
		return;
	f->changes = st.changes;
	pk_pr_flush(2000, 0);
}

/* The target's three calls, whichever kind it is. */
static int t_send(struct fwd *f, const struct pk_record *rec)
{
	int err;

	if (f->jr)
		return pkf_jr_send(f->jr, rec);
	err = pk_console_forward_send(f->con, rec);
	say_changes(f);
	return err;
}

static void t_lost(struct fwd *f, uint64_t n)
{
	if (f->jr)
		pkf_jr_lost(f->jr, n);
	else
		pk_console_forward_lost(f->con, n);
}

static int t_commit(struct fwd *f)
{
	int err;

	if (f->jr)
		return pkf_jr_commit(f->jr);
	err = pk_console_forward_commit(f->con);
	say_changes(f);
	return err;
}

/* The forwarding console for TARGET, through the library's one parser of
 * console specs (pk_console_create()): "journal[:PATH]" is one, a syslog
 * target becomes "syslog:TARGET" with the options given. 0, or -1 after
 * one line on stderr.
 * journal-remote's target is made once the log is open. */
static int open_console(struct fwd *f)
{
	const char *target = f->o->target;
	char spec[1024];
	int n, err;

	if (pkf_jr_is_target(target))
		return 0;
	if (!strcmp(target, "journal") || !strncmp(target, "journal:", 8))
		n = snprintf(spec, sizeof(spec), "%s", target);
	else
		n = snprintf(spec, sizeof(spec), "syslog:%s%s", target,
			     f->o->format == PK_SYSLOG_RFC3164 ? ",rfc3164" : "");
	if (n > 0 && (size_t)n < sizeof(spec) && f->o->enterprise)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ",enterprise=%u", f->o->enterprise);
	err = n < 0 || (size_t)n >= sizeof(spec) ? -ENAMETOOLONG : pk_console_create(&f->con, spec);
	if (!err)
		return 0;
	if (err == -EPROTONOSUPPORT && !strncmp(target, "tls:", 4))
		fprintf(stderr, "%s: %s: TLS needs libssl.so.3 (Debian: libssl3)\n", PKF_NAME, target);
	else if (err == -EINVAL && (!strncmp(target, "tls:", 4) || strchr(target, ',')))
		fprintf(stderr,
			"%s: %s: invalid target: a TLS option is not one of tls, ca=FILE, cert=FILE, "
			"key=FILE, peer=NAME, or names a file that is not a readable PEM file, or "
			"relp: with ,tls lacks cert= and key=\n",
			PKF_NAME, target);
	else if (err == -EPROTONOSUPPORT)
		fprintf(stderr,
			"%s: %s: RELP is not available: built without librelp's header, "
			"or librelp.so.0 cannot be loaded\n",
			PKF_NAME, target);
	else
		fprintf(stderr, "%s: %s: invalid target: %s\n", PKF_NAME, target,
			strerror(err == -ENOENT ? EINVAL : -err));
	return -1;
}

/*
 * Where to start: the cursor's next seq if it was saved for this log, the
 * first record if there is none or the log was recreated since. 0, or -1
 * after one line on stderr.
 */
static int resume(struct fwd *f)
{
	const char *path = f->o->cursor_path;
	uint64_t id[2];
	const char *why = NULL;

	pk_log_identity(f->log, id);
	if (path) {
		int r = pkf_cursor_read(path, &f->cur, &why);

		if (r < 0) {
			fprintf(stderr, "%s: %s: bad cursor file: %s\n", PKF_NAME, path, why);
			return -1;
		}
		if (r > 0 && f->cur.id[0] == id[0] && f->cur.id[1] == id[1] &&
		    f->cur.next_seq > pk_log_next_seq(f->log)) {
			fprintf(stderr,
				"%s: %s: bad cursor file: next-seq %" PRIu64
				" is past the end of the log (%" PRIu64 ")\n",
				PKF_NAME, path, f->cur.next_seq, pk_log_next_seq(f->log));
			return -1;
		}
		if (r > 0 && (f->cur.id[0] != id[0] || f->cur.id[1] != id[1])) {
			fprintf(stderr,
				"%s: %s: the log was recreated since the cursor was saved: "
				"starting from its first record\n",
				PKF_NAME, f->o->log_path);
			f->cur.next_seq = 0;
		}
	}
	f->cur.id[0] = id[0];
	f->cur.id[1] = id[1];
	return 0;
}

/* The log at LOGFILE is another file now: 1 if it was opened in place of the old one. */
static int reopen_log(struct fwd *f, const struct stat *st_now)
{
	struct pk_log *nlog;

	if (pk_log_open_file(&nlog, f->o->log_path, 0, PK_LOG_RDONLY) != 0)
		return 0;
	f->st_open = *st_now;
	pk_log_destroy(f->log);
	f->log = nlog;
	if (f->jr)
		pkf_jr_set_log(f->jr, f->log);
	else
		pk_console_forward_set_source(f->con, f->log);
	pk_log_identity(f->log, f->cur.id);
	fprintf(stderr, "%s: %s: the log was recreated: starting from its first record\n",
		PKF_NAME, f->o->log_path);
	return 1;
}

/* Saves the cursor at @seq once the collector confirmed; -1 if it could not be saved. */
static int commit(struct fwd *f, uint64_t seq)
{
	f->cur.next_seq = seq;
	if (f->o->cursor_path && pkf_cursor_write(f->o->cursor_path, &f->cur))
		return -1;
	return 0;
}

/* Until a signal (or the end of the log with -o): the exit status. */
static int forward_loop(struct fwd *f)
{
	static struct pk_record rec;
	struct stat st_now;
	uint64_t seq = f->cur.next_seq, pending = 0, first_pending_ns = 0;
	int status = 0, err;

	while (!stop) {
		err = pk_log_read(f->log, seq, &rec, 0);
		if (err == 0) {
			if (rec.seq > seq) {
				uint64_t lost = rec.seq - seq;

				fprintf(stderr,
					"%s: %" PRIu64 " records lost: overwritten before they "
					"were forwarded (seq %" PRIu64 " to %" PRIu64 ")\n",
					PKF_NAME, lost, seq, rec.seq - 1);
				t_lost(f, lost);
				seq = rec.seq;
			}
			if (t_send(f, &rec) != 0) {
				/* The collector is away: offered again, after a
				 * pause (the console paces its reconnections). */
				struct timespec ts = { 0, 5 * IDLE_SLEEP_NS };

				nanosleep(&ts, NULL);
				continue;
			}
			seq = rec.seq + 1;
			if (!pending++)
				first_pending_ns = now_ns();
			if (pending < COMMIT_RECORDS && now_ns() - first_pending_ns < COMMIT_NS)
				continue;
		} else if (err != -EAGAIN) {
			fprintf(stderr, "%s: %s: %s\n", PKF_NAME, f->o->log_path,
				pk_log_strerror(err));
			status = 1;
			break;
		} else if (!pending && recreated(f->o->log_path, &f->st_open, &st_now)) {
			if (reopen_log(f, &st_now)) {
				seq = f->cur.next_seq = 0;
				continue;
			}
		} else if (f->o->once && !pending) {
			break;
		}
		if (pending) {
			if (t_commit(f) == 0) {
				if (commit(f, seq)) {
					status = 1;
					pending = 0; /* said once: not tried again below */
					break;
				}
			} else {
				seq = f->cur.next_seq; /* not confirmed: sent again */
			}
			pending = 0;
			continue;
		}
		struct timespec ts = { 0, IDLE_SLEEP_NS };

		nanosleep(&ts, NULL);
	}
	if (pending && t_commit(f) == 0 && commit(f, seq))
		status = 1;
	return status;
}

int pkf_run(const struct pkf_opts *o)
{
	struct fwd f = { .o = o };
	int err, status = 1;

	if (open_console(&f))
		return 1;
	if ((err = pk_log_open_file(&f.log, o->log_path, 0, PK_LOG_RDONLY))) {
		fprintf(stderr, "%s: %s: %s\n", PKF_NAME, o->log_path, pk_log_strerror(err));
		if (f.con)
			pk_console_destroy(f.con);
		return 1;
	}
	if (pkf_jr_is_target(o->target)) {
		if (pkf_jr_create(&f.jr, o->target, f.log)) {
			pk_log_destroy(f.log);
			return 1;
		}
	} else {
		pk_console_forward_set_source(f.con, f.log);
	}
	if (stat(o->log_path, &f.st_open) < 0)
		memset(&f.st_open, 0, sizeof(f.st_open));

	if (resume(&f) == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		status = forward_loop(&f);
	}
	if (f.con)
		pk_console_destroy(f.con);
	pkf_jr_destroy(f.jr);
	pk_log_destroy(f.log);
	return status;
}
