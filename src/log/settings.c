// SPDX-License-Identifier: MIT
/*
 * settings.c - the default log and the printk settings.
 *
 * Owns: the default log (the one printk() writes), what the next default log
 * is made of (size, file, file flags), and the settings every layer above
 * reads: console_loglevel (kept in the log's shared state, so every process
 * writing a log file shares it), default_message_loglevel, ignore_loglevel,
 * printk.time (a style: enum pk_time_style; setting a wall-clock one has
 * walltime.c read the zone first) and printk.caller.
 *
 * It sits right above the log (log.c, logfile.c) and below everything that
 * prints: consoles, printk, the readers and start-up all read it; it calls
 * none of them. Replacing the log is start-up's job (setup.c), which tells
 * the consoles; this file only swaps the pointer.
 *
 * Invariant: the default log pointer only changes through
 * pk_default_log_replace() (configuration, never concurrent with printk by
 * contract) or from NULL to a fresh log on first use, which a racing loser
 * undoes. Readers load it with acquire, so the log they see is complete.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <printk/printk.h>

#include "base/clock.h"
#include "base/hints.h"
#include "base/printk_limits.h"
#include "format/vsprintf.h"
#include "format/walltime.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "ring/caller.h"
#include "ring/store.h"

static _Atomic int initial_console_loglevel = PK_CONSOLE_LOGLEVEL_DEFAULT; /* for new logs */
static _Atomic int default_message_loglevel = 4;
_Atomic int pk_cfg_ignore_loglevel_flag; /* ignore_loglevel; read inline: settings.h */
_Atomic int pk_printk_time_flag = PK_TIME_KERNEL; /* a style; read inline: settings.h */
_Atomic int pk_printk_caller_flag;

_Atomic(struct pk_log *) pk_printk_log_ptr; /* read inline: settings.h */
static _Atomic size_t configured_log_len; /* 0: default */
static char *configured_log_file;	  /* log_buf_file=, or NULL: memory */
static unsigned configured_log_file_flags;

/* ------------------------------------------------------ the default log -- */

PK_HOT static struct pk_log *ensure_log(void)
{
	struct pk_log *log = atomic_load_explicit(&pk_printk_log_ptr, memory_order_acquire);

	if (PK_LIKELY(log))
		return log;

	/* First use: start-up (setup.c, at load time where constructors exist)
	 * makes the log before main, so this runs here only without them or
	 * after pk_printk_exit(). It allocates the handle: not async-signal-safe
	 * then. A racing loser destroys its copy. */
	struct pk_log *mine;

	if (pk_log_create(&mine, atomic_load(&configured_log_len)))
		return NULL;
	pk_default_log_take_level(mine);
	atomic_fetch_or(&pk_log_shared(mine)->roles, PK_LOG_ROLE_PRINTK);
	if (!atomic_compare_exchange_strong(&pk_printk_log_ptr, &log, mine)) {
		pk_log_destroy(mine);
		return log;
	}
	return mine;
}

struct pk_log *pk_printk_log(void)
{
	return ensure_log();
}

struct pk_log *pk_printk_log_peek(void)
{
	return atomic_load_explicit(&pk_printk_log_ptr, memory_order_acquire);
}

PK_HOT struct prb *pk_printk_ring(void)
{
	struct pk_log *log = ensure_log();

	return log ? pk_log_ring(log) : NULL;
}

size_t pk_default_log_len(void)
{
	return atomic_load(&configured_log_len);
}

void pk_default_log_set_len(size_t len)
{
	atomic_store(&configured_log_len, len);
}

const char *pk_default_log_file(void)
{
	return configured_log_file;
}

unsigned pk_default_log_file_flags(void)
{
	return configured_log_file_flags;
}

int pk_default_log_replace(struct pk_log *fresh, const char *path, unsigned flags, struct pk_log **old)
{
	char *copy = NULL;

	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(configured_log_file);
	configured_log_file = copy;
	configured_log_file_flags = fresh ? flags : 0;
	if (!fresh) {
		atomic_store(&configured_log_len, 0);
		pk_fast_gate_set(PK_GATE_LOG_UNUSED);
	}
	if (fresh)
		atomic_fetch_or(&pk_log_shared(fresh)->roles, PK_LOG_ROLE_PRINTK);
	*old = atomic_exchange(&pk_printk_log_ptr, fresh);
	return 0;
}

void pk_default_log_take_level(struct pk_log *log)
{
	pk_store_relaxed(&pk_log_shared(log)->console_loglevel,
			 (uint32_t)atomic_load(&initial_console_loglevel));
}

int pk_printk_log_damaged(int err)
{
	struct pk_log *log = pk_printk_log_peek();

	if (!log || pk_log_go_private(log, err))
		return 0;
	pk_store_notice(2, "printk: log file %s is damaged (%s): this process logs in memory from now on\n",
			configured_log_file ? configured_log_file : "?", pk_log_strerror(err));
	return 1;
}

void pk_printk_sync(void)
{
	struct pk_log *log = atomic_load(&pk_printk_log_ptr);

	if (log && (configured_log_file_flags & PK_LOG_SYNC))
		pk_log_sync(log);
}

/*
 * Notices (a console disabled, a panic, a fatal signal) are stored without
 * printing: their makers hold the console lock or are on the crash path,
 * and whoever prints next prints them.
 */
static int store_notice_v(uint64_t *seqp, int level, const char *fmt, va_list ap)
{
	/* On the caller's stack, like printk's own buffer: one line's text. */
	char buf[PRB_TEXT_MAX + 2];
	struct prb *rb = pk_printk_ring();
	char last = 0;

	if (!rb)
		return -ENODEV;
	pk_sigdepth_enter();

	struct pk_line l = { .ts_nsec = pk_clock_ns(), .level = level, .text = buf };

	int full = pk_vsnprintf_last(buf, sizeof(buf), &last, fmt, ap);

	l.len = full < 0 ? 0 : (size_t)full;
	if (l.len > sizeof(buf) - 1)
		l.len = sizeof(buf) - 1;
	l.newline = full > 0 && last == '\n';
	if (l.newline && (size_t)full == l.len)
		l.len--;

	struct prb_caller me;
	uint64_t seq;

	/* As a printed line: this thread's lane records, older than the
	 * notice (a crash report after its lines), enter the sequence first
	 * (pk_store_line(), docs/lanes.md). */
	int err = pk_store_line(rb, &l, &me, &seq);

	if (err >= 0)
		pk_default_log_mark_used();
	if (err == PK_STORED_NEW && seqp)
		*seqp = seq;
	pk_sigdepth_leave();
	return err < 0 ? err : 0;
}

int pk_store_notice(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int err = store_notice_v(NULL, level, fmt, ap);

	va_end(ap);
	return err;
}

int pk_store_notice_seq(uint64_t *seq, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int err = store_notice_v(seq, level, fmt, ap);

	va_end(ap);
	return err;
}

/* ------------------------------------------------------------ settings -- */

/*
 * A log file's console level may have been written by any process, or
 * damaged: a value no setter stores (above 15) reads as the default, so it
 * can neither mute every writer's consoles nor read as a negative level.
 */
static PK_ALWAYS_INLINE int sane_level(uint32_t level)
{
	return PK_LIKELY(level <= PK_CONSOLE_LOGLEVEL_MAX) ? (int)level : PK_CONSOLE_LOGLEVEL_DEFAULT;
}

/*
 * Level 0 mutes even emergencies. Only this process's own setting
 * (loglevel=0, console_silent()) may do that to its consoles: a 0 that
 * another process (or damage) left in a shared file reads as the kernel's
 * minimum_console_loglevel, 1, the floor syslog(SYSLOG_ACTION_CONSOLE_LEVEL)
 * raises a level to, so emergencies still print. The file's own
 * minimum_console_loglevel is not the floor: it is as untrusted as the level.
 */
static PK_ALWAYS_INLINE int floor_level(int level)
{
	if (PK_LIKELY(level > 0) ||
	    atomic_load_explicit(&initial_console_loglevel, memory_order_relaxed) == 0)
		return level;
	return PK_CONSOLE_LOGLEVEL_MIN;
}

PK_HOT int pk_cfg_console_loglevel(void)
{
	struct pk_log *log = ensure_log();

	if (!log)
		return atomic_load_explicit(&initial_console_loglevel, memory_order_relaxed);
	return floor_level(sane_level(pk_load_relaxed(&pk_log_shared(log)->console_loglevel)));
}

PK_HOT int pk_cfg_ignore_loglevel(void)
{
	return atomic_load_explicit(&pk_cfg_ignore_loglevel_flag, memory_order_relaxed);
}

int pk_cfg_default_message_loglevel(void)
{
	return atomic_load_explicit(&default_message_loglevel, memory_order_relaxed);
}

int pk_set_console_loglevel(int level)
{
	struct pk_log *log = ensure_log();

	if (level < 0 || level > PK_CONSOLE_LOGLEVEL_MAX)
		return -EINVAL;
	int own = atomic_exchange(&initial_console_loglevel, level);

	if (!log)
		return level;

	int prev = sane_level(atomic_exchange(&pk_log_shared(log)->console_loglevel, (uint32_t)level));

	/* The level as this process saw it before (floor_level() under the old setting). */
	return prev == 0 && own != 0 ? PK_CONSOLE_LOGLEVEL_MIN : prev;
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
		pk_set_console_loglevel(PK_CONSOLE_LOGLEVEL_MAX);
}

void pk_set_lanes(int on)
{
	prb_lanes_enable(on);
}

int pk_lanes(void)
{
	return prb_lanes_enabled();
}

void pk_set_lane_clock_ordered(int on)
{
	pk_clock_set_lane_fenced(on);
}

int pk_lane_clock_ordered(void)
{
	return pk_clock_lane_fenced();
}

/* pk_set_ignore_loglevel() is modlevel.c's: the switch overrides the
 * module levels, whose sites then decide again. */
void pk_cfg_store_ignore_loglevel(int on)
{
	atomic_store(&pk_cfg_ignore_loglevel_flag, !!on);
	/* After the flag: printk's fast path tests the bit alone. */
	pk_fast_gate_put(PK_GATE_IGNORE_LVL, on);
}

void pk_set_printk_time(int on)
{
	atomic_store(&pk_printk_time_flag, !!on);
}

int pk_set_printk_time_style(int style)
{
	if (style < PK_TIME_NONE || style > PK_TIME_ISO_UTC)
		return -EINVAL;
	if (style >= PK_TIME_ISO)
		pk_wall_refresh(); /* the zone, read here, not by the consoles */
	return atomic_exchange(&pk_printk_time_flag, style);
}

int pk_get_printk_time_style(void)
{
	return pk_cfg_printk_time();
}

void pk_set_printk_caller(int on)
{
	atomic_store(&pk_printk_caller_flag, !!on);
}
