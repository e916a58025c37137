// SPDX-License-Identifier: MIT
/*
 * printk.c - the front end: printk() and friends, levels, continuation
 * lines, the settings, and the default log's life cycle.
 *
 * Owns: the default log, console_loglevel and the other printk settings, the
 * PRINTK_OPTS start-up and the exit/fork hooks.
 *
 * A message is formatted first (our own vsnprintf: async-signal-safe),
 * then stored, then printed:
 *   - its level headers are parsed as Linux 6.x does (facility 0 only; the
 *     first level wins; KERN_CONT marks a continuation; one trailing newline
 *     becomes PRB_FLAG_NEWLINE);
 *   - a continuation joins the caller's open line in the ring (reserve in
 *     last); if it cannot (another record came between, or 1023 bytes are
 *     reached), it becomes its own record flagged PRB_FLAG_CONT;
 *   - a message without a newline stays open (committed, not finalized), so
 *     readers asking for the unfinalized tail see it at once;
 *   - then the consoles print it before printk returns, or the thread that
 *     holds the console lock does (console.c).
 * Nothing on that path allocates, locks or waits; a signal handler may call
 * printk while the code it interrupted is inside printk: it gets a deeper
 * caller context (pk_sigdepth_enter), so its fragments never join the
 * interrupted line. Nesting deeper than PRINTK_MAX_NESTING drops the message
 * and counts it.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <printk/console.h>
#include <printk/kmsg.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "internal.h"
#include "options.h"
#include "reader.h"
#include "vsprintf.h"

#define PRINTK_MAX_NESTING 4	     /* outermost call + 3 nested, like PRINTK_MAX_RECURSION */
#define PRINTK_FMT_BUF	   (PRB_TEXT_MAX + 1 + 64) /* room for level headers */
_Static_assert(sizeof(((struct pk_con_line *)0)->buf) == PK_CON_PREFIX_ROOM + PRINTK_FMT_BUF,
	       "a console line holds printk's format buffer after the prefix room");

static _Atomic int initial_console_loglevel = 7; /* for logs made from now on */
static _Atomic int default_message_loglevel = 4;
static _Atomic int ignore_loglevel;
_Atomic int pk_printk_time_flag = 1; /* read inline: internal.h */
_Atomic int pk_printk_caller_flag;
static _Atomic int stored_any;
static _Atomic size_t configured_log_len; /* 0: default */
static char *configured_log_file;	  /* log_buf_file=, or NULL: memory */
static unsigned configured_log_file_flags;
static _Atomic(struct pk_log *) printk_log;
static pk_a64 nesting_dropped;

static struct pk_log *ensure_log(void);

PK_HOT int pk_cfg_console_loglevel(void)
{
	struct pk_log *log = ensure_log();

	if (!log)
		return atomic_load_explicit(&initial_console_loglevel, memory_order_relaxed);
	return (int)pk_load_relaxed(&pk_log_shared(log)->console_loglevel);
}

PK_HOT int pk_cfg_ignore_loglevel(void)
{
	return atomic_load_explicit(&ignore_loglevel, memory_order_relaxed);
}

int pk_cfg_default_message_loglevel(void)
{
	return atomic_load_explicit(&default_message_loglevel, memory_order_relaxed);
}

struct pk_log *pk_printk_log_peek(void)
{
	return atomic_load_explicit(&printk_log, memory_order_acquire);
}

/* ------------------------------------------------------------- the log -- */

PK_HOT static struct pk_log *ensure_log(void)
{
	struct pk_log *log = atomic_load_explicit(&printk_log, memory_order_acquire);

	if (PK_LIKELY(log))
		return log;

	/* First use (or after pk_printk_exit): mmap is a plain system call, so
	 * this is safe even in a signal handler; a racing loser unmaps its copy. */
	struct pk_log *mine;

	if (pk_log_create(&mine, atomic_load(&configured_log_len)))
		return NULL;
	pk_store_relaxed(&pk_log_shared(mine)->console_loglevel,
			 (uint32_t)atomic_load(&initial_console_loglevel));
	if (!atomic_compare_exchange_strong(&printk_log, &log, mine)) {
		pk_log_destroy(mine);
		return log;
	}
	return mine;
}

struct pk_log *pk_printk_log(void)
{
	return ensure_log();
}

struct prb *pk_printk_ring(void)
{
	struct pk_log *log = ensure_log();

	return log ? pk_log_ring(log) : NULL;
}

int pk_set_log_buf_file(const char *path, unsigned flags)
{
	if (flags & ~(PK_LOG_GROUP_READ | PK_LOG_SYNC))
		return -EINVAL;
	if (atomic_load(&stored_any))
		return -EBUSY;

	struct pk_log *fresh = NULL;
	char *copy = NULL;

	if (path) {
		int err = pk_log_open_file(&fresh, path, atomic_load(&configured_log_len), flags);

		if (err)
			return err;
		copy = strdup(path);
		if (!copy) {
			pk_log_destroy(fresh);
			return -ENOMEM;
		}
	} else {
		int err = pk_log_create(&fresh, atomic_load(&configured_log_len));

		if (err)
			return err;
	}
	free(configured_log_file);
	configured_log_file = copy;
	configured_log_file_flags = flags;

	struct pk_log *old = atomic_exchange(&printk_log, fresh);

	/* An attached file keeps its own console level; a fresh one gets ours. */
	pk_console_reset_positions(pk_log_first_seq(fresh));
	pk_log_destroy(old);
	return 0;
}

int pk_set_log_buf_len(size_t len)
{
	if (len && !pk_log_region_size(len))
		return -EINVAL;
	if (atomic_load(&stored_any))
		return -EBUSY;

	struct pk_log *fresh;
	int err = configured_log_file ? pk_log_open_file(&fresh, configured_log_file, len,
							  configured_log_file_flags)
				      : pk_log_create(&fresh, len);

	if (err)
		return err;
	atomic_store(&configured_log_len, len);
	if (!configured_log_file) /* a file keeps the level it has */
		pk_store_relaxed(&pk_log_shared(fresh)->console_loglevel,
				 (uint32_t)atomic_load(&initial_console_loglevel));

	struct pk_log *old = atomic_exchange(&printk_log, fresh);

	pk_console_reset_positions(0);
	pk_log_destroy(old);
	return 0;
}

/* -------------------------------------------------------------- storing -- */

/*
 * Strip the level headers at the start of @text (Linux 6.x rules): returns
 * the number of header bytes; *@level is set by the first level header only;
 * *@cont by a 'c' header.
 */
static size_t parse_headers(const char *text, size_t len, int *level, int *cont)
{
	size_t i = 0;

	while (i + 1 < len && text[i] == PK_KERN_SOH_ASCII) {
		char c = text[i + 1];

		if (c >= '0' && c <= '7') {
			if (*level == PK_LOGLEVEL_DEFAULT)
				*level = c - '0';
		} else if (c == 'c') {
			*cont = 1;
		} else {
			break;
		}
		i += 2;
	}
	return i;
}

static int store(int facility, int level, const char *dict, size_t dictlen, const char *fmt,
		 va_list args, int print, int end_line, struct pk_con_line *line);

/* Messages dropped for nesting too deep (signal handlers inside printk inside
 * handlers...): the first printk at the outer level says so, as 3.5 did. */
static void report_nesting_drops(void)
{
	uint64_t n = atomic_exchange_explicit(&nesting_dropped, 0, memory_order_relaxed);

	if (n)
		pk_printk_store_notice(PK_LOGLEVEL_CRIT,
				       "printk: %llu messages lost: printk nested too deep\n",
				       (unsigned long long)n);
}

/*
 * Format (into @line's buffer, where a console line needs the text), store,
 * print if @print. A console line for the caller to write may come back in
 * @line (see pk_console_flush_line()): the caller passes it to write_line().
 */
PK_HOT static int store(int facility, int level, const char *dict, size_t dictlen, const char *fmt,
		 va_list args, int print, int end_line, struct pk_con_line *line)
{
	struct prb *rb = pk_printk_ring();
	unsigned depth = pk_sigdepth_enter();
	int ret = 0;
	bool stored = false; /* a record was stored or extended: the log size is fixed now */

	line->len = 0;

	if (!rb || !fmt)
		goto out;
	if (depth > PRINTK_MAX_NESTING) {
		pk_fetch_add_relaxed(&nesting_dropped, 1);
		goto out;
	}
	if (PK_UNLIKELY(pk_load_relaxed(&nesting_dropped)) && depth == 1)
		report_nesting_drops();

	uint64_t ts = pk_clock_ns(); /* like the kernel: time of the call, before formatting */
	char *buf = line->buf + PK_CON_PREFIX_ROOM;
	char last = 0;
	va_list ap;

	va_copy(ap, args);
	int full = pk_vsnprintf_last(buf, PRINTK_FMT_BUF, &last, fmt, ap);
	va_end(ap);

	size_t len = full < 0 ? 0 : (size_t)full;

	if (len > PRINTK_FMT_BUF - 1)
		len = PRINTK_FMT_BUF - 1;

	/* One trailing newline ends the line; it is stripped before the headers,
	 * as the kernel does. A message cut at the size limit keeps its newline
	 * (Linux 6.18 leaves such a line open). */
	int newline = full > 0 && last == '\n';

	if (newline && (size_t)full == len)
		len--;
	newline |= end_line;

	const char *text = buf;
	int cont = 0;

	if (facility == 0) {
		size_t skip = parse_headers(buf, len, &level, &cont);

		text += skip;
		len -= skip;
	}
	if (level < 0)
		level = atomic_load_explicit(&default_message_loglevel, memory_order_relaxed);
	if (len > PRB_TEXT_MAX)
		len = PRB_TEXT_MAX;
	if (dict && dictlen > PRB_DICT_MAX)
		dictlen = PRB_DICT_MAX;
	if (!dict)
		dictlen = 0;
	if (dictlen)
		newline = 1; /* as the kernel: a message with a dictionary ends its line */

	struct prb_caller me;
	const struct pk_con_rec *hint = NULL;
	struct pk_con_rec hint_rec;

	pk_caller_get(&me);
	/* Only lines that stay open, and continuations, are matched by caller:
	 * only they pay for telling a signal handler from the code it interrupted. */
	if (cont || !newline)
		me.ctx = pk_caller_context();
	if (cont && !dictlen) {
		if (len == 0 && !newline)
			goto out; /* nothing to add, nothing to end */
		if (prb_extend(rb, &me, text, len, PRB_TEXT_MAX, newline, newline ? PRB_FLAG_NEWLINE : 0,
			       NULL) == 0) {
			ret = (int)len;
			stored = true;
			goto print;
		}
	}

	struct prb_meta meta = {
		.ts_nsec = ts,
		.caller = me,
		.level = (uint8_t)(level & 7),
		.facility = (uint8_t)facility,
		.flags = (uint8_t)((newline ? PRB_FLAG_NEWLINE : 0) | (cont ? PRB_FLAG_CONT : 0)),
	};
	uint64_t seq;

	if (prb_store(rb, &meta, text, len, dictlen ? dict : NULL, dictlen, newline, &seq))
		goto out;
	ret = (int)len;
	stored = true;
	int suppressed = pk_console_level_suppressed(meta.level);

	/* A complete line no console prints: done without the console lock. */
	if (suppressed && newline && !pk_console_in_write() && pk_console_skip_suppressed(seq))
		goto out;
	hint_rec = (struct pk_con_rec){
		.seq = seq,
		.ts_nsec = ts,
		.caller = me,
		.level = meta.level,
		.flags = meta.flags,
		.open = !newline,
		.suppressed = suppressed,
		.text = text,
		.text_len = len,
	};
	hint = &hint_rec;
print:
	if (print && hint)
		pk_console_flush_line(rb, hint, line);
	else if (print)
		pk_console_flush(rb, NULL);
out:
	if (stored && !atomic_load_explicit(&stored_any, memory_order_relaxed))
		atomic_store_explicit(&stored_any, 1, memory_order_relaxed);
	pk_sigdepth_leave();
	return ret;
}

/* The write pk_console_flush_line() left to us, made in our caller's frame. */
static PK_ALWAYS_INLINE void write_line(struct pk_con_line *line)
{
	if (line->len)
		pk_console_line_done(line, pk_raw_write(line->fd, line->p, line->len));
}

PK_HOT int pk_vprintk_emit(int facility, int level, const char *dict, size_t dictlen, const char *fmt,
		    va_list args)
{
	struct pk_con_line line;

	if (facility < 0 || facility > 255 || level < PK_LOGLEVEL_DEFAULT || level > 7)
		return 0;

	int r = store(facility, level, dict, dictlen, fmt, args, 1, 0, &line);

	write_line(&line);
	return r;
}

int pk_vprintk_emit_line(int level, const char *dict, size_t dictlen, const char *fmt, va_list args)
{
	struct pk_con_line line;
	int r = store(0, level, dict, dictlen, fmt, args, 1, 1, &line);

	write_line(&line);
	return r;
}

int pk_printk_emit(int facility, int level, const char *dict, size_t dictlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = pk_vprintk_emit(facility, level, dict, dictlen, fmt, ap);
	va_end(ap);
	return r;
}

PK_HOT int pk_vprintk(const char *fmt, va_list args)
{
	struct pk_con_line line;
	int r = store(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, args, 1, 0, &line);

	write_line(&line);
	return r;
}

PK_HOT int pk_printk(const char *fmt, ...)
{
	struct pk_con_line line;
	va_list ap;

	va_start(ap, fmt);
	int r = store(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, ap, 1, 0, &line);
	va_end(ap);
	write_line(&line);
	return r;
}

void pk_printk_store_notice(int level, const char *fmt, ...)
{
	struct pk_con_line line; /* only its buffer: nothing is printed */
	va_list ap;

	va_start(ap, fmt);
	store(0, level, NULL, 0, fmt, ap, 0, 0, &line);
	va_end(ap);
}

/* ------------------------------------------------------------- settings -- */

int pk_set_console_loglevel(int level)
{
	struct pk_log *log = ensure_log();

	if (level < 0 || level > 15)
		return -EINVAL;
	atomic_store(&initial_console_loglevel, level);
	if (!log)
		return level;
	return (int)atomic_exchange(&pk_log_shared(log)->console_loglevel, (uint32_t)level);
}

int pk_get_console_loglevel(void)
{
	return pk_cfg_console_loglevel();
}

int pk_set_default_message_loglevel(int level)
{
	if (level < 0 || level > 7)
		return -EINVAL;
	return atomic_exchange(&default_message_loglevel, level);
}

void pk_console_silent(void)
{
	pk_set_console_loglevel(0);
}

void pk_console_verbose(void)
{
	if (pk_get_console_loglevel())
		pk_set_console_loglevel(15);
}

void pk_set_ignore_loglevel(int on)
{
	atomic_store(&ignore_loglevel, !!on);
}

void pk_set_printk_time(int on)
{
	atomic_store(&pk_printk_time_flag, !!on);
}

void pk_set_printk_caller(int on)
{
	atomic_store(&pk_printk_caller_flag, !!on);
}

/* ---------------------------------------------------------- PRINTK_OPTS -- */

static int register_opt_console(const struct pk_opts_console *c, struct pk_opts *o)
{
	struct console *con = NULL;
	int err = 0;

	switch (c->kind) {
	case PK_OPTCON_NONE:
		return 0;
	case PK_OPTCON_STDERR:
		con = pk_console_stderr();
		break;
	case PK_OPTCON_FD: {
		char name[16];

		pk_snprintf(name, sizeof(name), "fd%d", c->fd);
		err = pk_console_fd_create(&con, c->fd, name);
		break;
	}
	case PK_OPTCON_FILE:
		err = pk_console_file_create(&con, c->path);
		break;
	}
	if (!err) {
		err = pk_register_console(con);
		if (err && con != pk_console_stderr())
			pk_console_destroy(con);
	}
	if (err && err != -EBUSY && o->nwarnings < PK_OPTS_MAX_WARNINGS) {
		if (c->kind == PK_OPTCON_FILE)
			pk_snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
				    "printk: PRINTK_OPTS: console=file:%s unusable (error %d), ignored",
				    c->path, -err);
		else
			pk_snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
				    "printk: PRINTK_OPTS: console=fd:%d unusable (error %d), ignored",
				    c->fd, -err);
	}
	return err;
}

/* Apply parsed options; @startup: the log may still be resized and, with no
 * console= given, stderr is registered. */
static int apply_options(struct pk_opts *o, int startup)
{
	int err = 0;

	if (o->log_buf_file[0]) {
		unsigned fl = (o->log_buf_file_group > 0 ? PK_LOG_GROUP_READ : 0) |
			      (o->log_buf_file_sync > 0 ? PK_LOG_SYNC : 0);

		if (o->log_buf_len >= 0)
			atomic_store(&configured_log_len, (size_t)o->log_buf_len);

		int e = pk_set_log_buf_file(o->log_buf_file, fl);

		if (e && o->nwarnings < PK_OPTS_MAX_WARNINGS)
			pk_snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
				    "printk: PRINTK_OPTS: log_buf_file=%s unusable: %s, using memory",
				    o->log_buf_file, pk_log_strerror(e));
		if (e)
			err = e;
		o->log_buf_len = -1; /* applied with the file (an existing file keeps its size) */
	}
	if (o->log_buf_len >= 0) {
		int e = pk_set_log_buf_len((size_t)o->log_buf_len);

		if (e && o->nwarnings < PK_OPTS_MAX_WARNINGS)
			pk_snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
				    "printk: PRINTK_OPTS: log_buf_len=%lld %s, ignored", o->log_buf_len,
				    e == -EBUSY ? "after the first message" : "out of range (4K..2G)");
		if (e)
			err = e;
	}
	if (o->console_loglevel >= 0)
		pk_set_console_loglevel(o->console_loglevel);
	if (o->ignore_loglevel >= 0)
		pk_set_ignore_loglevel(o->ignore_loglevel);
	if (o->printk_time >= 0)
		pk_set_printk_time(o->printk_time);
	if (o->printk_caller >= 0)
		pk_set_printk_caller(o->printk_caller);
	if (o->devkmsg[0])
		pk_set_devkmsg(o->devkmsg);
	ensure_log();
	if (startup && o->nconsoles == 0)
		pk_register_console(pk_console_stderr());
	int usable = 0, wanted = 0;

	for (int i = 0; i < o->nconsoles; i++) {
		int e = register_opt_console(&o->consoles[i], o);

		wanted += o->consoles[i].kind != PK_OPTCON_NONE;
		usable += !e || e == -EBUSY;
		if (e && e != -EBUSY && !err)
			err = e;
	}
	/* Consoles were asked for and none works: the warnings must still be seen. */
	if (startup && wanted && !usable)
		pk_register_console(pk_console_stderr());
	/* After the log and the consoles exist: the handler finds them ready. */
	if (o->crash_dump == 1) {
		int e = pk_crash_handler_install();

		if (e && o->nwarnings < PK_OPTS_MAX_WARNINGS)
			pk_snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
				    "printk: PRINTK_OPTS: crash_dump=1 failed (error %d), ignored", -e);
		if (e && !err)
			err = e;
	} else if (o->crash_dump == 0) {
		pk_crash_handler_uninstall();
	}
	for (int i = 0; i < o->nwarnings; i++)
		pk_printk(PK_KERN_WARNING "%s\n", o->warnings[i]);
	return err ? err : (o->nwarnings ? -EINVAL : 0);
}

int pk_printk_configure(const char *options)
{
	static struct pk_opts o; /* large; configuration is not reentrant anyway */

	pk_opts_parse(options, &o);
	return apply_options(&o, 0);
}

/* --------------------------------------------------- start, exit, fork -- */

static _Atomic int started;

void pk_printk_sync(void)
{
	struct pk_log *log = atomic_load(&printk_log);

	if (log && (configured_log_file_flags & PK_LOG_SYNC))
		pk_log_sync(log);
}

static void printk_atexit(void)
{
	struct pk_log *log = atomic_load(&printk_log);

	if (log)
		pk_console_shutdown(pk_log_ring(log), 0);
	pk_printk_sync();
}

static void printk_after_fork_child(void)
{
	struct pk_log *log = atomic_load(&printk_log);

	/* A memory log was copied: what other threads were writing when we
	 * forked will never be finished in this copy (a file log is shared: the
	 * parent's threads finish their records there). */
	if (log && !configured_log_file)
		prb_abandon_unfinished(pk_log_ring(log));
	pk_console_after_fork();
}

static void printk_start(void)
{
	static struct pk_opts o;

	if (atomic_exchange(&started, 1))
		return;
	pthread_atfork(NULL, NULL, printk_after_fork_child);
	atexit(printk_atexit);
	pk_opts_parse(getenv("PRINTK_OPTS"), &o);
	apply_options(&o, 1);
}

#if defined(__GNUC__) || defined(__clang__)
/* At load time, so the first printk (which may come from a signal handler)
 * finds the log and the consoles ready. */
__attribute__((constructor)) static void printk_init(void)
{
	if (!pk_reader_only_program()) /* reader.h: PK_READER_ONLY_PROGRAM */
		printk_start();
}
#endif

void pk_printk_exit(void)
{
	struct pk_log *log = atomic_exchange(&printk_log, NULL);

	pk_console_shutdown(log ? pk_log_ring(log) : NULL, 1);
	pk_log_destroy(log);
	atomic_store(&stored_any, 0);
	atomic_store(&configured_log_len, 0);
	free(configured_log_file);
	configured_log_file = NULL;
	configured_log_file_flags = 0;
}
