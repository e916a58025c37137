/* SPDX-License-Identifier: MIT */
/*
 * printk/printk.h - printk() and friends, with the kernel's names.
 *
 *     #include <printk/printk.h>
 *     pr_info("Testing tracer function: ");
 *     ...
 *     pr_cont("PASSED\n");
 *
 * The text reaches every enabled console at once, the half line included;
 * continuation fragments from the same caller join one record for readers.
 * Exported symbols carry a pk_ prefix; the kernel spellings (printk, pr_info,
 * KERN_INFO, ...) are macros. Define PRINTK_NO_KERNEL_NAMES before including
 * to hide them when they clash with your own names, or just the generic
 * ones: PRINTK_NO_PANIC_NAME, PRINTK_NO_HZ, PRINTK_NO_DO_SYSLOG_NAME,
 * PRINTK_NO_HEX_NAMES, PRINTK_NO_DEVICE_NAME, PRINTK_NO_BUG_NAMES,
 * PRINTK_NO_SPRINTF_NAMES (README, "printk"). The kernel's string functions
 * (<printk/sprintf.h>: scnprintf, kasprintf ...) and rate-limited printk
 * (<printk/ratelimit.h>: pr_*_ratelimited) come with this header, as they
 * come with <linux/printk.h> and <linux/kernel.h>.
 *
 * Every function's comment ends with a "Context:" line, as in the kernel's
 * kernel-doc: may it run in a signal handler, may it block, is it
 * thread-safe.
 */
#ifndef PRINTK_PRINTK_H
#define PRINTK_PRINTK_H

#include <stdarg.h>
#include <stddef.h>
#ifdef __cplusplus
#include <atomic>
#else
#include <stdatomic.h>
#endif

#include <printk/bug.h>
#include <printk/compiler.h>
#include <printk/dynamic_debug.h>
#include <printk/hexdump.h>
#include <printk/kern_levels.h>
#include <printk/log.h>
#include <printk/printk_site.h>
#include <printk/sprintf.h>

PK_BEGIN_DECLS

/* ---- storing messages ---------------------------------------------------- */

/*
 * Format and log a message. A leading KERN_<LEVEL> header sets the level
 * (default: default_message_loglevel, 4); KERN_CONT continues the caller's
 * open line. Returns the number of text bytes stored (0 when it was dropped).
 *
 * Context: any (async-signal-safe, thread-safe; storing is lock-free and
 * never waits). The caller that finds the console lock free prints, so it
 * makes the consoles' writes: printk is as async-signal-safe as the
 * registered consoles' write callbacks (the built-in ones are) and may
 * block inside them (a built-in console gives up on a write after 500 ms).
 * After pk_printk_exit() the first call creates the log again, which
 * allocates.
 */
PK_API int pk_printk(const char *fmt, ...) PK_PRINTF(1, 2);
PK_API int pk_vprintk(const char *fmt, va_list args) PK_PRINTF(1, 0);

/*
 * pk_printk() for a format that is a string literal, which the pr_*
 * macros call: @fmt's address names the format for the life of the process.
 * A complete line (the literal ends with a newline) of a level no console
 * prints may then be stored deferred: the format's reference and the
 * arguments, formatted when the record is read, into the same text. Such a
 * call returns the bytes the record takes in the log (the reference and
 * the arguments), not the text's length; any other call returns what
 * pk_printk() returns. Never call it with a format built at run time.
 *
 * Context: as pk_printk().
 */
PK_API int pk_printk_lit(const char *fmt, ...) PK_PRINTF(1, 2);

/*
 * Log with an explicit facility and level (LOGLEVEL_DEFAULT: parse the
 * headers / use the default) and an optional dictionary of KEY=VALUE entries
 * separated by NUL bytes. Level headers are parsed only for facility 0.
 *
 * Context: as pk_printk().
 */
PK_API int pk_printk_emit(int facility, int level, const char *dict, size_t dictlen,
			  const char *fmt, ...) PK_PRINTF(5, 6);
PK_API int pk_vprintk_emit(int facility, int level, const char *dict, size_t dictlen,
			   const char *fmt, va_list args) PK_PRINTF(5, 0);

/*
 * A continuation never joins a line started in another context: printk
 * tells a signal handler from the code it interrupted by the signal mask
 * (a running handler has its signal blocked). A handler installed with
 * SA_NODEFER and an empty sa_mask does not change the mask: call these at its
 * start and end if it prints continuation lines.
 *
 * Context: any (async-signal-safe, lock-free); they change only the calling
 * thread's state.
 */
PK_API void pk_printk_handler_enter(void);
PK_API void pk_printk_handler_leave(void);

/* The kernel's struct va_format, for "%pV". */
#ifndef PK_VA_FORMAT_DEFINED
#define PK_VA_FORMAT_DEFINED
struct va_format {
	const char *fmt;
	va_list *va;
};
#endif

/* The level character of a "\001<c>" header at @buffer, or 0.
 * Context: any (async-signal-safe, lock-free). */
static inline int pk_printk_get_level(const char *buffer)
{
	if (buffer[0] == PK_KERN_SOH_ASCII && buffer[1]) {
		switch (buffer[1]) {
		case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		case 'c':
			return buffer[1];
		}
	}
	return 0;
}

/* @buffer past any level headers.
 * Context: any (async-signal-safe, lock-free). */
static inline const char *pk_printk_skip_level(const char *buffer)
{
	while (pk_printk_get_level(buffer))
		buffer += 2;
	return buffer;
}

/* ---- settings (also set by PRINTK_OPTS, see README) ----------------------- */

/*
 * Context of the level, time and caller settings below, from
 * pk_set_console_loglevel() to pk_set_printk_caller(): any
 * (async-signal-safe, lock-free; each is one atomic variable; the
 * console_loglevel ones find the log as pk_printk_log() does).
 */

/* console_loglevel: a record prints on the consoles when its level is below
 * it (default 7). Returns the previous value, or -EINVAL outside 0..15. */
PK_API int pk_set_console_loglevel(int level);
PK_API int pk_get_console_loglevel(void);
/* default_message_loglevel: the level of a message with no header (default 4).
 * Returns the previous value, or -EINVAL outside 0..7. */
PK_API int pk_set_default_message_loglevel(int level);
PK_API void pk_console_silent(void);  /* console_loglevel = 0 */
PK_API void pk_console_verbose(void); /* console_loglevel = 15, unless silent */
PK_API void pk_set_ignore_loglevel(int on); /* print every level */
/* printk.lanes: a complete line no console prints goes into a lane of the
 * calling thread instead of the shared ring, and enters the sequence when
 * a reader needs it (docs/lanes.md). On by default; pk_set_lanes(0) turns
 * it off. Takes effect for the stores that follow; a log of 32 KiB or more
 * made while it is on has the lane pool (the default log: set it before the
 * first message, or with PRINTK_OPTS). */
PK_API void pk_set_lanes(int on);
PK_API int pk_lanes(void);
/* printk.lane_clock: how a lane line reads the clock. 0 ("fast", the
 * default): the time-stamp counter alone, as the kernel's own printk
 * timestamps; a line that follows another thread's through shared memory
 * alone, within the processor's out-of-order window, may be put before it.
 * 1 ("ordered"): the read fenced, so such a line always comes after it, at
 * about 10 ns a line (docs/clock.md). */
PK_API void pk_set_lane_clock_ordered(int on);
PK_API int pk_lane_clock_ordered(void);
PK_API void pk_set_printk_time(int on);	    /* "[%5lu.%06lu]" prefix, default on */
/* printk.time as a style: the time prefix of console lines.
 *   PK_TIME_NONE      no time (pk_set_printk_time(0));
 *   PK_TIME_KERNEL    "[%5lu.%06lu]", the record's clock (the default);
 *   PK_TIME_ISO       "2026-12-05T22:49:32.123456+01:00", local time
 *                     (RFC 3339, microseconds, the zone's offset then);
 *   PK_TIME_ISO_UTC   "2026-12-05T21:49:32.123456Z".
 * A console's own style (pk_console_set_time_style) overrides it. syslog(2)
 * and kmsg_dump text keep the kernel's form whenever the time is on. Returns
 * the previous style, or -EINVAL. Setting a wall-clock style reads the
 * local zone (TZ, /etc/localtime): not async-signal-safe. */
enum pk_time_style { PK_TIME_NONE = 0, PK_TIME_KERNEL = 1, PK_TIME_ISO = 2, PK_TIME_ISO_UTC = 3 };
PK_API int pk_set_printk_time_style(int style);
PK_API int pk_get_printk_time_style(void);
PK_API void pk_set_printk_caller(int on);   /* "[  T<tid>]" prefix, default off */
/* Size of the default log; only before the first record is stored (-EBUSY).
 * Context: start-up, before other threads print: the old log is freed, so
 * not thread-safe against printk; not async-signal-safe (allocates). */
PK_API int pk_set_log_buf_len(size_t len);
/* Keep the default log in a file shared with other processes (see
 * pk_log_open_file; @flags PK_LOG_GROUP_READ, PK_LOG_SYNC), or back in
 * memory with NULL. Only before the first record is stored (-EBUSY).
 * Context: start-up, before other threads print: the old log is freed, so
 * not thread-safe against printk; may block (opens, sizes and maps the
 * file); not async-signal-safe. */
PK_API int pk_set_log_buf_file(const char *path, unsigned flags);
/* Apply options in PRINTK_OPTS syntax ("loglevel=4 console=fd:3 ..."). Returns
 * 0 or the first error; bad options also leave a warning record.
 * Context: one thread at a time (not reentrant: it parses into one static
 * buffer); may block (registers consoles, opens files); not
 * async-signal-safe. */
PK_API int pk_printk_configure(const char *options);
/* A program linked statically against libprintk.a gets /dev/kmsg, dynamic
 * debug and the forwarding consoles only when it uses them; with a call to
 * this anywhere (it does nothing at run time) it gets them for PRINTK_OPTS
 * (printk.devkmsg=, dyndbg=, console=journal, console=syslog:) too. Without
 * it, PRINTK_OPTS naming one of them that is not linked warns once. No
 * effect with the shared library, which has them all.
 * Context: any. */
PK_API void pk_printk_link_all_options(void);
/* The log printk writes to.
 * Context: any (async-signal-safe, lock-free), except that after
 * pk_printk_exit() the first call creates the log again, which allocates. */
PK_API struct pk_log *pk_printk_log(void);

/*
 * Wait until every console has printed every record stored so far, at most
 * @timeout_ms (negative: no limit). Returns 1 if they caught up, else 0, like
 * the kernel's pr_flush().
 *
 * Context: thread-safe; may block (sleeps until the consoles catch up, and
 * prints when it gets the console lock); not for signal handlers: one that
 * interrupted the console lock's holder would wait for itself (for ever
 * with a negative timeout).
 */
PK_API int pk_pr_flush(int timeout_ms, int reset_on_progress);

/* Release everything (end the open line, drain and unregister consoles, free
 * the log). Leak checkers stay quiet. printk after this starts afresh.
 * Context: at the end, when no other thread prints: not thread-safe; may
 * block (waits up to 1 s for the console lock, drains the consoles); not
 * async-signal-safe (frees). */
PK_API void pk_printk_exit(void);

/* ---- pr_* macros ---------------------------------------------------------- */

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

/* Split "fmt, args..." into pr_fmt(fmt) and ", args..." in plain C99 (no
 * ", ##__VA_ARGS__" extension), for up to 62 arguments after the format. */
#define PK_FIRST(...)			 PK_FIRST_(__VA_ARGS__, pk_throwaway)
#define PK_FIRST_(first, ...)		 first
#define PK_REST(...)			 PK_REST_(PK_COUNT(__VA_ARGS__), __VA_ARGS__)
#define PK_REST_(qty, ...)		 PK_REST__(qty, __VA_ARGS__)
#define PK_REST__(qty, ...)		 PK_REST_##qty(__VA_ARGS__)
#define PK_REST_PK_ONE(first)
#define PK_REST_PK_TWOORMORE(first, ...) , __VA_ARGS__
#define PK_COUNT(...)			 PK_SELECT_64TH(__VA_ARGS__, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_TWOORMORE, PK_ONE, pk_throwaway)
#define PK_SELECT_64TH(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, a64, ...) a64

/* Each call is a call site (<printk/printk_site.h>): its module's level
 * and printk.srcloc apply. */
#define PK_PR(level, ...) PK_SITE_CALL(PK_PR_CALL, level pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
/* A format the compiler knows is constant (a literal) may be deferred
 * (pk_printk_lit); without __builtin_constant_p, or with
 * PK_NO_DEFERRED_PRINTK defined, every message is formatted at once. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(PK_NO_DEFERRED_PRINTK) && PK_SITES_ON
/* Inside PK_SITE_CALL: the literal is compiled once, into the site
 * (pk__printk_lit_site). */
#define PK_PR_CALL(...)                                                                             \
	(__builtin_constant_p(PK_FIRST(__VA_ARGS__)) ? pk__printk_lit_site(&pk_site_, __VA_ARGS__) \
						       : pk_printk(__VA_ARGS__))
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(PK_NO_DEFERRED_PRINTK)
#define PK_PR_CALL(...)                                                                   \
	(__builtin_constant_p(PK_FIRST(__VA_ARGS__)) ? pk_printk_lit(__VA_ARGS__) \
						       : pk_printk(__VA_ARGS__))
#else
#define PK_PR_CALL(...) pk_printk(__VA_ARGS__)
#endif
/* Type-check the arguments of a message that is compiled out. */
#define pk_no_printk(...)                       \
	do {                                    \
		if (0)                          \
			pk_printk(__VA_ARGS__); \
	} while (0)

#define pk_pr_emerg(...)   PK_PR(PK_KERN_EMERG, __VA_ARGS__)
#define pk_pr_alert(...)   PK_PR(PK_KERN_ALERT, __VA_ARGS__)
#define pk_pr_crit(...)	   PK_PR(PK_KERN_CRIT, __VA_ARGS__)
#define pk_pr_err(...)	   PK_PR(PK_KERN_ERR, __VA_ARGS__)
#define pk_pr_warn(...)	   PK_PR(PK_KERN_WARNING, __VA_ARGS__)
#define pk_pr_notice(...)  PK_PR(PK_KERN_NOTICE, __VA_ARGS__)
#define pk_pr_info(...)	   PK_PR(PK_KERN_INFO, __VA_ARGS__)
#define pk_pr_cont(...)	   pk_printk(PK_KERN_CONT __VA_ARGS__)
#define pk_pr_default(...) PK_PR(PK_KERN_DEFAULT, __VA_ARGS__)
#ifdef DEBUG
#define pk_pr_devel(...) PK_PR(PK_KERN_DEBUG, __VA_ARGS__)
#else
#define pk_pr_devel(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#endif
/* pr_debug is a dynamic debug call site (<printk/dynamic_debug.h>) in a
 * file built with DEBUG or PRINTK_DYNAMIC_DEBUG; pr_devel never is. */
#if PK_DYNDBG_ON
#define pk_pr_debug(...)                                                                    \
	PK_DYNDBG_EXPR(PK_FIRST(__VA_ARGS__),                                               \
		       pk__dynamic_pr_debug(&pk_dd_site_, pr_fmt(PK_FIRST(__VA_ARGS__))     \
					    PK_REST(__VA_ARGS__)))
#elif defined(DEBUG)
#define pk_pr_debug(...) PK_PR(PK_KERN_DEBUG, __VA_ARGS__)
#else
#define pk_pr_debug(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#endif

/* ---- once per call site ----------------------------------------------------- */

/*
 * PK_DO_ONCE(call) runs @call the first time this line is reached, never
 * again: one flag per call site, as the kernel's DO_ONCE_LITE. The kernel
 * checks, then sets, a plain bool (two racing CPUs may both print); here a
 * relaxed load keeps the common path a plain read and an atomic exchange
 * picks exactly one winner, so it is free of data races and safe in a
 * signal handler (lock-free atomics). A statement, where the kernel's is
 * an expression that is always true.
 */
#ifdef __cplusplus
#define PK_ONCE_FLAG(flag)  static std::atomic<bool> flag(false)
#define PK_ONCE_FIRST(flag) \
	(!flag.load(std::memory_order_relaxed) && !flag.exchange(true, std::memory_order_relaxed))
#else
#define PK_ONCE_FLAG(flag)  static atomic_bool flag
#define PK_ONCE_FIRST(flag)                                      \
	(!atomic_load_explicit(&flag, memory_order_relaxed) && \
	 !atomic_exchange_explicit(&flag, 1, memory_order_relaxed))
#endif
#define PK_DO_ONCE(call)                           \
	do {                                       \
		PK_ONCE_FLAG(pk_once_done_);       \
		if (PK_ONCE_FIRST(pk_once_done_)) \
			call;                      \
	} while (0)

#define pk_printk_once(...) PK_DO_ONCE(pk_printk(__VA_ARGS__))
#define PK_PR_ONCE(level, ...) \
	pk_printk_once(level pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_emerg_once(...)  PK_PR_ONCE(PK_KERN_EMERG, __VA_ARGS__)
#define pk_pr_alert_once(...)  PK_PR_ONCE(PK_KERN_ALERT, __VA_ARGS__)
#define pk_pr_crit_once(...)   PK_PR_ONCE(PK_KERN_CRIT, __VA_ARGS__)
#define pk_pr_err_once(...)    PK_PR_ONCE(PK_KERN_ERR, __VA_ARGS__)
#define pk_pr_warn_once(...)   PK_PR_ONCE(PK_KERN_WARNING, __VA_ARGS__)
#define pk_pr_notice_once(...) PK_PR_ONCE(PK_KERN_NOTICE, __VA_ARGS__)
#define pk_pr_info_once(...)   PK_PR_ONCE(PK_KERN_INFO, __VA_ARGS__)
#ifdef DEBUG
#define pk_pr_devel_once(...) PK_PR_ONCE(PK_KERN_DEBUG, __VA_ARGS__)
#define pk_pr_debug_once(...) PK_PR_ONCE(PK_KERN_DEBUG, __VA_ARGS__)
#else
#define pk_pr_devel_once(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_debug_once(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#endif

/*
 * The kernel's printk_deferred() stores the record and leaves the console
 * to an irq_work, for callers that hold the scheduler's locks. A process
 * has no such locks: it is printk, with the same output.
 */
#define pk_printk_deferred	pk_printk
#define pk_printk_deferred_once pk_printk_once

#ifndef PRINTK_NO_KERNEL_NAMES
/* A call site, as pr_info(); pk_printk() is the plain function. */
#define printk(...)	  PK_SITE_CALL(pk_printk, __VA_ARGS__)
#define vprintk		  pk_vprintk
#define printk_emit	  pk_printk_emit
#define vprintk_emit	  pk_vprintk_emit
#define printk_get_level  pk_printk_get_level
#define printk_skip_level pk_printk_skip_level
#define no_printk	  pk_no_printk
#define pr_emerg	  pk_pr_emerg
#define pr_alert	  pk_pr_alert
#define pr_crit		  pk_pr_crit
#define pr_err		  pk_pr_err
#define pr_warn		  pk_pr_warn
#define pr_warning	  pk_pr_warn
#define pr_notice	  pk_pr_notice
#define pr_info		  pk_pr_info
#define pr_cont		  pk_pr_cont
#define pr_default	  pk_pr_default
#define pr_devel	  pk_pr_devel
#define pr_debug	  pk_pr_debug
#define pr_flush	  pk_pr_flush
#define console_silent	  pk_console_silent
#define console_verbose	  pk_console_verbose
#define DO_ONCE_LITE(func, ...)	PK_DO_ONCE(func(__VA_ARGS__))
#define printk_once	  pk_printk_once
#define printk_deferred	  pk_printk_deferred
#define printk_deferred_once pk_printk_deferred_once
#define pr_emerg_once	  pk_pr_emerg_once
#define pr_alert_once	  pk_pr_alert_once
#define pr_crit_once	  pk_pr_crit_once
#define pr_err_once	  pk_pr_err_once
#define pr_warn_once	  pk_pr_warn_once
#define pr_notice_once	  pk_pr_notice_once
#define pr_info_once	  pk_pr_info_once
#define pr_devel_once	  pk_pr_devel_once
#define pr_debug_once	  pk_pr_debug_once
#endif

PK_END_DECLS

/*
 * The kernel's <linux/printk.h> also gives printk_ratelimited() and the
 * pr_*_ratelimited() macros. Included last: <printk/ratelimit.h> builds
 * on everything above (and includes this header itself, which its guard
 * then skips).
 */
#include <printk/ratelimit.h>

#endif
