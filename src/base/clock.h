// SPDX-License-Identifier: MIT
/*
 * clock.h - the clock of record timestamps and timeouts (clock.c):
 * CLOCK_MONOTONIC, or the time-stamp counter where the kernel vouches for
 * it, converted with one calibration that the writers of a log file share.
 *
 * Bottom layer: depends on nothing but the C library. pk_clock_ns() is
 * async-signal-safe and thread-safe; so is everything else here but
 * pk_clock_share(), which may sleep (start-up and configuration only).
 */
#ifndef PRINTK_CLOCK_H
#define PRINTK_CLOCK_H

#include <stdint.h>

#include "base/atomics.h"

enum pk_clock_kind {
	PK_CLOCK_NONE = 0,	/* in a log: no clock published (an older file) */
	PK_CLOCK_MONOTONIC = 1, /* clock_gettime(CLOCK_MONOTONIC) */
	PK_CLOCK_TSC = 2,	/* the x86-64 time-stamp counter, calibrated */
};

/*
 * The clock of a log file's writers, kept in the log's shared state
 * (log_shared.h) and so part of its on-file ABI: fields are only appended.
 * Written under gen (odd while a writer changes the rest; 0: never written,
 * as in files of older versions); every field is untrusted.
 */
struct pk_log_clock {
	pk_a32 gen;
	pk_a32 kind;	   /* enum pk_clock_kind */
	pk_a32 mult;	   /* PK_CLOCK_TSC: ns = ns0 + ((tsc - tsc0) * mult >> shift) */
	pk_a32 shift;
	pk_a64 tsc0;
	pk_a64 ns0;	   /* CLOCK_MONOTONIC at tsc0 */
	pk_a64 boot_id[2]; /* /proc/sys/kernel/random/boot_id of the writer's boot */
};

/* A TSC calibration: what pk_clock_ns() converts with. */
struct pk_clock_calib {
	uint64_t tsc0, ns0;
	uint32_t mult, shift;
};

/* The timestamp clock, in nanoseconds since boot (suspend excluded while
 * it is CLOCK_MONOTONIC); never goes backwards within a thread, and a call
 * that follows another thread's (it saw that call's result) is less than
 * PK_CLOCK_GRAIN_NS before it, a change of calibration included. */
uint64_t pk_clock_ns(void);
#define PK_CLOCK_GRAIN_NS 1000u
/*
 * pk_clock_ns() without the process-wide floor, for records whose order
 * across threads a merge keeps (the flight recorder's lanes,
 * docs/lanes.md): the same clock and calibration, never backwards within
 * a thread (the thread's last value, shared with pk_clock_ns()), but no
 * shared word read or written, and the TSC read without a fence unless
 * pk_clock_set_lane_fenced(1) (printk.lane_clock=ordered). Fenced, a call
 * that follows another thread's reads later as far as the TSC itself is
 * synchronized across CPUs (the kernel's condition for making it the
 * clocksource) and the calibration did not change in between; unfenced,
 * the read may also run ahead of the instructions before it, by as much as
 * the processor executes out of order (docs/clock.md). Outside the TSC's
 * steady state it is pk_clock_ns().
 */
uint64_t pk_clock_ns_own(void);
/* Whether pk_clock_ns_own() fences its TSC read (default 0: not). */
void pk_clock_set_lane_fenced(int on);
int pk_clock_lane_fenced(void);
/* The process-wide floor pk_clock_ns() raises (tests). */
uint64_t pk_clock_floor_ns(void);
/* Tests: replace the clock (NULL restores it). */
void pk_set_test_clock(uint64_t (*clock_fn)(void));

/*
 * The decision rule, without side effects: @env is PRINTK_CLOCK (NULL or
 * "" when unset; "monotonic" or "tsc" force one, anything else decides as
 * unset), @clocksource the text of the kernel's current_clocksource file
 * (NULL if unreadable), @invariant_tsc CPUID's invariant-TSC bit. The TSC
 * is chosen only where it can be read (x86-64 builds).
 */
enum pk_clock_kind pk_clock_choose(const char *env, const char *clocksource, int invariant_tsc);

/*
 * The clock in use (deciding now if nothing did yet): PK_CLOCK_MONOTONIC,
 * or PK_CLOCK_TSC with its calibration in @calib (may be NULL); while a
 * TSC calibration is still being measured, PK_CLOCK_MONOTONIC.
 */
enum pk_clock_kind pk_clock_current(struct pk_clock_calib *calib);
/* Why: "tsc", "tsc (PRINTK_CLOCK=tsc)", "CLOCK_MONOTONIC (clocksource is
 * kvm-clock)", ... A static string. */
const char *pk_clock_describe(void);

/* What pk_clock_share() did. */
enum pk_clock_share_result {
	PK_CLOCK_KEPT = 0,	/* the log's clock is not for us: ours stays */
	PK_CLOCK_ADOPTED = 1,	/* we convert with the log's calibration now */
	PK_CLOCK_PUBLISHED = 2, /* the log had none valid for this boot: it has ours */
};

/*
 * A writer made a log file its printk log (setup.c): agree on one clock
 * with the other writers of @lc's log. A valid clock of this boot there is
 * adopted when this process may use it; where the log has none (a new or
 * older file, one of an earlier boot, a damaged one) ours is finished
 * (a TSC calibration may need up to its remaining measuring time, about
 * 10 ms) and published. Returns enum pk_clock_share_result.
 */
int pk_clock_share(struct pk_log_clock *lc);

/*
 * For readers: the kind of clock @lc's log says its writers use
 * (PK_CLOCK_NONE: none, or one being written right now), and in
 * *@this_boot whether it was published in this boot. Reads the log only;
 * async-signal-safe, never blocks.
 */
enum pk_clock_kind pk_clock_of_log(struct pk_log_clock *lc, int *this_boot);

#endif
