// SPDX-License-Identifier: MIT
/*
 * clock_own.h - pk_clock_ns_own() (clock.h), its common case inline for
 * the lanes' fast path in printk: the active TSC calibration, the fenced
 * counter read, the conversion and the thread's own clamp, with no call.
 * Anything else (no TSC calibration, a test clock, a counter below the
 * calibration's) calls pk_clock_ns_own(), which decides as before.
 *
 * Owns nothing: the words it reads are clock.c's, declared here.
 */
#ifndef PRINTK_CLOCK_OWN_H
#define PRINTK_CLOCK_OWN_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/clock.h"
#include "base/hints.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define PK_CLOCK_OWN_TSC 1
#else
#define PK_CLOCK_OWN_TSC 0
#endif

/* clock.c's: the calibration in use (NULL: not the TSC), the test clock,
 * whether the read is fenced (pk_clock_set_lane_fenced()), the thread's
 * last value handed out. */
extern PK_HIDDEN const struct pk_clock_calib *_Atomic pk_clock_active;
extern PK_HIDDEN _Atomic int pk_clock_lane_fence;
extern PK_HIDDEN uint64_t (*_Atomic pk_clock_test_fn)(void);
extern _Thread_local PK_TLS_IE uint64_t pk_clock_thread_last_ns;

/* ns = ns0 + (tsc - tsc0) * mult >> shift: one 128-bit product where the
 * compiler has it, else the delta in two 32-bit halves with 64-bit
 * products (mult < 2^32, 1 <= shift <= 32), the same value: exact but for
 * the dropped fraction (under 1 ns) and monotonic in tsc.
 * It cannot overflow while the result fits 64 bits: 584 years of uptime.
 * A TSC below the calibration's (a CPU whose counter lags a little) counts
 * as the calibration point itself. */
static PK_ALWAYS_INLINE uint64_t pk_clock_delta_to_ns(const struct pk_clock_calib *c, uint64_t d)
{
#ifdef __SIZEOF_INT128__
	/* The same value (the halves' sum is the exact product's floor):
	 * one multiplication and one shift; the shift masked to 63 (it is
	 * 1 to 32: the same value) so that the compiler knows the low word
	 * is one double shift. */
	return c->ns0 + (uint64_t)(((unsigned __int128)d * c->mult) >> (c->shift & 63));
#else
	return c->ns0 + (((d >> 32) * c->mult) << (32 - c->shift)) +
	       (((d & 0xffffffffu) * c->mult) >> c->shift);
#endif
}

static PK_ALWAYS_INLINE uint64_t pk_clock_tsc_to_ns(const struct pk_clock_calib *c, uint64_t tsc)
{
	return pk_clock_delta_to_ns(c, tsc > c->tsc0 ? tsc - c->tsc0 : 0);
}

#if PK_CLOCK_OWN_TSC
/* The lanes' counter read, pk_clock_ns_own()'s and the inline case's
 * alike: fenced only with printk.lane_clock=ordered (docs/clock.md: what
 * order the unfenced read keeps). */
static PK_ALWAYS_INLINE uint64_t pk_clock_lane_tsc(void)
{
	if (PK_UNLIKELY(atomic_load_explicit(&pk_clock_lane_fence, memory_order_relaxed)))
		_mm_lfence();
	return __rdtsc();
}
#endif

static PK_ALWAYS_INLINE uint64_t pk_clock_ns_own_inline(void)
{
#if PK_CLOCK_OWN_TSC
	const struct pk_clock_calib *c =
		atomic_load_explicit(&pk_clock_active, memory_order_acquire);

	if (PK_LIKELY(c != NULL) &&
	    PK_LIKELY(atomic_load_explicit(&pk_clock_test_fn, memory_order_relaxed) == NULL)) {
		uint64_t tsc = pk_clock_lane_tsc();

		if (PK_LIKELY(tsc >= c->tsc0)) {
			uint64_t t = pk_clock_delta_to_ns(c, tsc - c->tsc0);

			if (PK_UNLIKELY(t < pk_clock_thread_last_ns))
				t = pk_clock_thread_last_ns;
			pk_clock_thread_last_ns = t;
			return t;
		}
	}
#endif
	return pk_clock_ns_own();
}

#endif
