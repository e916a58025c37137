/* SPDX-License-Identifier: MIT */
/*
 * printk/ratelimit.h - the kernel's rate limiting of messages: at most
 * @burst messages per @interval, then "<func>: N callbacks suppressed".
 * Intervals are in milliseconds (PK_HZ ticks per second, so kernel
 * expressions like 5 * HZ keep their meaning). Lock-free and
 * async-signal-safe.
 */
#ifndef PRINTK_RATELIMIT_H
#define PRINTK_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include <printk/compiler.h>
#include <printk/printk.h>

PK_BEGIN_DECLS

#define PK_HZ				1000
#define PK_DEFAULT_RATELIMIT_INTERVAL	(5 * PK_HZ)
#define PK_DEFAULT_RATELIMIT_BURST	10
#define PK_RATELIMIT_MSG_ON_RELEASE	0x1 /* report misses at pk_ratelimit_state_exit() */

struct ratelimit_state {
	int interval; /* ms; 0: no limit */
	int burst;
	unsigned int flags;
	/* the library's: */
	uint64_t begin_ns;
	int printed;
	int missed;
	int lock;
};

#define PK_RATELIMIT_STATE_INIT(interval_init, burst_init) \
	{ (interval_init), (burst_init), 0, 0, 0, 0, 0 }
#define PK_DEFINE_RATELIMIT_STATE(name, interval_init, burst_init) \
	struct ratelimit_state name = PK_RATELIMIT_STATE_INIT(interval_init, burst_init)

/* 1: go ahead; 0: suppressed (counted). @func names the caller in the notice.
 * Context: any (async-signal-safe, lock-free, thread-safe: a caller that
 * finds the state busy never waits); the first call after a window with
 * misses logs the notice as pk_printk() does. */
PK_API int pk___ratelimit(struct ratelimit_state *rs, const char *func);
/* Report misses now (with RATELIMIT_MSG_ON_RELEASE): "<func>: N output
 * lines suppressed due to ratelimiting".
 * Context: as pk___ratelimit(). */
PK_API void pk_ratelimit_state_exit(struct ratelimit_state *rs, const char *func);
/* The global printk_ratelimit() state: 10 messages every 5 s.
 * Context: as pk___ratelimit(). */
PK_API int pk___printk_ratelimit(const char *func);
/* True when *@caller_ms is 0 or @interval_msecs have passed since; then
 * stores the current time there (one winner when threads race).
 * Context: any (async-signal-safe, lock-free); logs nothing. */
PK_API bool pk_printk_timed_ratelimit(unsigned long *caller_ms, unsigned int interval_msecs);

#define pk___ratelimit_here(rs) pk___ratelimit((rs), __func__)
#define pk_printk_ratelimit()	pk___printk_ratelimit(__func__)

#define pk_printk_ratelimited(...)                                                       \
	do {                                                                             \
		static PK_DEFINE_RATELIMIT_STATE(pk_rs_, PK_DEFAULT_RATELIMIT_INTERVAL,   \
						 PK_DEFAULT_RATELIMIT_BURST);            \
		if (pk___ratelimit(&pk_rs_, __func__))                                   \
			pk_printk(__VA_ARGS__);                                          \
	} while (0)

#define pk_pr_emerg_ratelimited(...)  pk_printk_ratelimited(PK_KERN_EMERG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_alert_ratelimited(...)  pk_printk_ratelimited(PK_KERN_ALERT pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_crit_ratelimited(...)   pk_printk_ratelimited(PK_KERN_CRIT pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_err_ratelimited(...)    pk_printk_ratelimited(PK_KERN_ERR pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_warn_ratelimited(...)   pk_printk_ratelimited(PK_KERN_WARNING pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_notice_ratelimited(...) pk_printk_ratelimited(PK_KERN_NOTICE pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_pr_info_ratelimited(...)   pk_printk_ratelimited(PK_KERN_INFO pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#if PK_DYNDBG_ON
/* A dynamic debug site, checked before the rate limit (the kernel's). */
#define pk_pr_debug_ratelimited(...)                                                           \
	PK_DYNDBG_CALL(PK_FIRST(__VA_ARGS__),                                                  \
		       do {                                                                    \
			       static PK_DEFINE_RATELIMIT_STATE(pk_rs_, PK_DEFAULT_RATELIMIT_INTERVAL, \
								PK_DEFAULT_RATELIMIT_BURST);   \
			       if (pk___ratelimit(&pk_rs_, __func__))                          \
				       pk__dynamic_pr_debug(&pk_dd_site_,                      \
							    pr_fmt(PK_FIRST(__VA_ARGS__))      \
							    PK_REST(__VA_ARGS__));             \
		       } while (0))
#endif
#ifdef DEBUG
#define pk_pr_devel_ratelimited(...) pk_printk_ratelimited(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#if !PK_DYNDBG_ON
#define pk_pr_debug_ratelimited(...) pk_printk_ratelimited(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#endif
#else
#define pk_pr_devel_ratelimited(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#if !PK_DYNDBG_ON
#define pk_pr_debug_ratelimited(...) pk_no_printk(PK_KERN_DEBUG pr_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#endif
#endif

#ifndef PRINTK_NO_KERNEL_NAMES
#ifndef PRINTK_NO_HZ
#define HZ			    PK_HZ
#endif
#define DEFAULT_RATELIMIT_INTERVAL  PK_DEFAULT_RATELIMIT_INTERVAL
#define DEFAULT_RATELIMIT_BURST	    PK_DEFAULT_RATELIMIT_BURST
#define RATELIMIT_MSG_ON_RELEASE    PK_RATELIMIT_MSG_ON_RELEASE
#define RATELIMIT_STATE_INIT	    PK_RATELIMIT_STATE_INIT
#define DEFINE_RATELIMIT_STATE	    PK_DEFINE_RATELIMIT_STATE
#define ___ratelimit		    pk___ratelimit
#define __ratelimit		    pk___ratelimit_here
#define ratelimit_state_exit(rs)    pk_ratelimit_state_exit((rs), __func__)
#define printk_ratelimit	    pk_printk_ratelimit
#define printk_timed_ratelimit	    pk_printk_timed_ratelimit
#define printk_ratelimited	    pk_printk_ratelimited
#define pr_emerg_ratelimited	    pk_pr_emerg_ratelimited
#define pr_alert_ratelimited	    pk_pr_alert_ratelimited
#define pr_crit_ratelimited	    pk_pr_crit_ratelimited
#define pr_err_ratelimited	    pk_pr_err_ratelimited
#define pr_warn_ratelimited	    pk_pr_warn_ratelimited
#define pr_notice_ratelimited	    pk_pr_notice_ratelimited
#define pr_info_ratelimited	    pk_pr_info_ratelimited
#define pr_devel_ratelimited	    pk_pr_devel_ratelimited
#define pr_debug_ratelimited	    pk_pr_debug_ratelimited
#endif

PK_END_DECLS

#endif
