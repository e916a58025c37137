// SPDX-License-Identifier: MIT
/*
 * ratelimit.c - the kernel's message rate limiting (lib/ratelimit.c):
 * ___ratelimit(), ratelimit_state_exit(), printk_ratelimit() and
 * printk_timed_ratelimit().
 *
 * Owns: the global printk_ratelimit() state (10 messages every 5 s).
 *
 * A state allows at most @burst calls per window of @interval ms. The first
 * call opens a window; the first call after begin + interval opens the next
 * one and, unless RATELIMIT_MSG_ON_RELEASE is set, first logs
 * "<func>: N callbacks suppressed" at KERN_WARNING for the misses of the
 * windows before. interval <= 0 or burst <= 0: allowed when interval == 0 or
 * burst > 0, else a miss. With RATELIMIT_MSG_ON_RELEASE misses add up until
 * ratelimit_state_exit() reports them (Linux 6.18 does so; docs/kernel-compat.md,
 * section 8.4; /dev/kmsg's writers use it, src/optional/kmsg.c).
 *
 * Concurrency, lock-free and async-signal-safe (the fields are plain ints in
 * the public struct, so they are accessed with GNU __atomic builtins):
 *   R1 rs->lock is a try-lock (0/1, acquire/release). Only its holder reads
 *      or writes begin_ns and opens a new window.
 *   R2 printed and missed are atomic counters. A caller that finds the lock
 *      taken - another thread, or the code this signal handler interrupted -
 *      never waits: it takes a slot of the current window if one is left
 *      (printed < burst, then an atomic increment that must still be below
 *      burst), else counts a miss. This is the newer kernel's behaviour with
 *      its atomic rs_n_left; the old one just returned 0 uncounted. A window
 *      that the holder is about to reset may wrongly refuse such a caller
 *      (counted as a miss), never wrongly allow more than burst per window
 *      beyond the racing callers themselves.
 *   R3 The notice is printed after the lock is released: printk may run
 *      consoles, and nothing of ours is held while they do.
 * Time is pk_clock_ns() (tests fix it with pk_set_test_clock()).
 */
#include <stdbool.h>
#include <stdint.h>

#include <printk/printk.h>
#include <printk/ratelimit.h>

#include "base/hints.h"
#include "ring/caller.h"

#define NS_PER_MS 1000000ull

/* begin_ns == 0 means "no window yet"; a clock reading of 0 (a test clock)
 * is stored as 1 ns so that it still opens one. */
static uint64_t window_start(uint64_t now)
{
	return now ? now : 1;
}

/* One slot of the current window, if any is left (R2). */
static bool take_slot(struct ratelimit_state *rs, int burst)
{
	return __atomic_load_n(&rs->printed, __ATOMIC_RELAXED) < burst &&
	       __atomic_fetch_add(&rs->printed, 1, __ATOMIC_RELAXED) < burst;
}

int pk___ratelimit(struct ratelimit_state *rs, const char *func)
{
	int interval = __atomic_load_n(&rs->interval, __ATOMIC_RELAXED);
	int burst = __atomic_load_n(&rs->burst, __ATOMIC_RELAXED);
	int ret, report = 0, unlocked = 0;

	/* Zero interval: never limit; otherwise a non-positive burst: always. */
	if (interval <= 0 || burst <= 0) {
		ret = interval == 0 || burst > 0;
		goto out;
	}
	if (!__atomic_compare_exchange_n(&rs->lock, &unlocked, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		ret = take_slot(rs, burst); /* contended (R2) */
		goto out;
	}

	uint64_t now = pk_clock_ns();

	if (rs->begin_ns == 0)
		rs->begin_ns = window_start(now);
	/* A new window once we are past begin + interval ("time_is_before_jiffies"). */
	if ((int64_t)(now - rs->begin_ns) > (int64_t)interval * (int64_t)NS_PER_MS) {
		if (!(__atomic_load_n(&rs->flags, __ATOMIC_RELAXED) & PK_RATELIMIT_MSG_ON_RELEASE))
			report = __atomic_exchange_n(&rs->missed, 0, __ATOMIC_RELAXED);
		rs->begin_ns = window_start(now);
		__atomic_store_n(&rs->printed, 0, __ATOMIC_RELAXED);
	}
	ret = take_slot(rs, burst);
	__atomic_store_n(&rs->lock, 0, __ATOMIC_RELEASE);
	if (report) /* R3 */
		pk_printk(PK_KERN_WARNING "%s: %d callbacks suppressed\n", func, report);
out:
	if (!ret)
		__atomic_fetch_add(&rs->missed, 1, __ATOMIC_RELAXED);
	return ret;
}

void pk_ratelimit_state_exit(struct ratelimit_state *rs, const char *func)
{
	if (!(__atomic_load_n(&rs->flags, __ATOMIC_RELAXED) & PK_RATELIMIT_MSG_ON_RELEASE))
		return;

	int missed = __atomic_exchange_n(&rs->missed, 0, __ATOMIC_RELAXED);

	if (missed)
		pk_printk(PK_KERN_WARNING "%s: %d output lines suppressed due to ratelimiting\n",
			  func, missed);
}

/* "Not more than 10 kernel messages every 5s". */
static PK_DEFINE_RATELIMIT_STATE(printk_ratelimit_state, 5 * PK_HZ, 10);

int pk___printk_ratelimit(const char *func)
{
	return pk___ratelimit(&printk_ratelimit_state, func);
}

bool pk_printk_timed_ratelimit(unsigned long *caller_ms, unsigned int interval_msecs)
{
	unsigned long now = (unsigned long)(pk_clock_ns() / NS_PER_MS);
	unsigned long last = __atomic_load_n(caller_ms, __ATOMIC_RELAXED);

	/* The kernel's rule: more than @interval_msecs must have passed. Signed,
	 * as the kernel's time_after(): a mark in the future is not expired. */
	if (last && (long)(now - last) <= (long)interval_msecs)
		return false;
	/* 0 means "never"; a clock at 0 ms (a test clock) is stored as 1. One
	 * winner when threads race for the same slot. */
	return __atomic_compare_exchange_n(caller_ms, &last, now ? now : 1, false, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}
