// SPDX-License-Identifier: MIT
/*
 * clock.c - the clock of every timestamp and timeout: CLOCK_MONOTONIC, or
 * the x86-64 time-stamp counter (TSC) converted to nanoseconds, where that
 * is as good and cheaper (docs/clock.md).
 *
 * Owns: the decision between the two, the TSC calibration in use, the
 * clamp that keeps the clock from going backwards, whether the lanes'
 * clock (pk_clock_ns_own()) fences its TSC read (printk.lane_clock), and
 * the clock a log file's writers agree on (struct pk_log_clock in its
 * shared state).
 *
 * The decision is taken once, on first use: the TSC only when the kernel
 * itself times with it (its current clocksource is "tsc", which it keeps
 * only while the TSCs of all CPUs agree) and CPUID calls it invariant (it
 * ticks at one rate whatever the CPU's frequency and sleep states);
 * PRINTK_CLOCK=monotonic or =tsc overrides that, the latter for tests only.
 * A TSC clock is calibrated against CLOCK_MONOTONIC from two (tsc, ns)
 * pairs at least CALIB_MIN_NS apart: the first when the TSC is chosen, the
 * second by the first call after that time, so nothing here ever sleeps on
 * printk's path. Meanwhile the clock is CLOCK_MONOTONIC.
 *
 * When a log file becomes the printk log (pk_clock_share(), from start-up
 * and configuration only), its writers' clock is read under the clock's
 * generation word (odd while a writer changes it): one valid for this boot
 * is adopted, else this process's own is finished and published there.
 * What the file holds is checked before it is used; docs/clock.md has the
 * rules.
 *
 * Invariants:
 *  - pk_clock_ns() is async-signal-safe: it takes no lock, allocates
 *    nothing and waits for nothing; a signal handler that interrupts a
 *    thread in the middle of a state change (state DECIDING, CALIBRATING)
 *    reads CLOCK_MONOTONIC;
 *  - a calibration, once published in the active pointer (pk_clock_active), is never
 *    changed: a new one (adopted from a log) takes another of a few static
 *    slots, so a reader holding the old pointer still reads a consistent
 *    one;
 *  - every value handed out while a TSC calibration is or was possible
 *    goes through the clamp (clamp()): the clock never goes backwards
 *    within a thread, across a calibration change included, and between
 *    threads by less than PK_CLOCK_GRAIN_NS; a TSC value is never below the
 *    CLOCK_MONOTONIC of its calibration;
 *  - only one thread changes the state at a time: the one that moved it
 *    to DECIDING or CALIBRATING by a compare-and-swap.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <x86intrin.h>
#define PK_HAVE_TSC 1
#else
#define PK_HAVE_TSC 0
#endif

#include "base/clock.h"
#include "base/clock_own.h"
#include "base/hints.h"

#define NS_PER_SEC	 1000000000ull
/* The two calibration pairs are at least this far apart. */
#define CALIB_MIN_NS	 (10 * 1000 * 1000ull)
/* Each pair: the narrowest TSC bracket around CLOCK_MONOTONIC of this many. */
#define CALIB_TRIES	 16
/* A TSC rate outside 50 MHz .. 20 GHz is no TSC: 1/20 .. 20 ns a tick. */
#define RATE_LIMIT	 20
/* A TSC this far below the calibration's was reset (a system suspend on
 * some machines): a lag between CPUs is far smaller. */
#define TSC_LAG_MAX	 (1ull << 32)
#define CALIB_SLOTS	 8
#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define BOOT_ID_PATH	 "/proc/sys/kernel/random/boot_id"

enum {
	ST_UNDECIDED,
	ST_DECIDING,	/* one thread reads what decides */
	ST_MONO,	/* CLOCK_MONOTONIC, and no TSC value was ever handed out */
	ST_PENDING,	/* TSC chosen; the first pair is taken, the second is due */
	ST_CALIBRATING, /* one thread changes the calibration */
	ST_TSC,		/* the active calibration converts */
	ST_MONO_CLAMPED /* CLOCK_MONOTONIC after TSC values: clamped */
};

uint64_t (*_Atomic pk_clock_test_fn)(void); /* read inline: clock_own.h */
static _Atomic int state;
const struct pk_clock_calib *_Atomic pk_clock_active; /* read inline: clock_own.h */
_Atomic int pk_clock_lane_fence; /* printk.lane_clock=ordered; read inline: clock_own.h */
static struct pk_clock_calib slots[CALIB_SLOTS];
static _Atomic unsigned slots_used;
static _Atomic uint64_t last_ns;
/* Written by the deciding thread before state leaves DECIDING (release). */
static uint64_t pair1_tsc, pair1_ns;
static int forced = -1; /* PRINTK_CLOCK as enum pk_clock_kind, NONE: unset; -1: unread */
/* What pk_clock_describe() says: decided_why, written by the deciding
 * thread only, or a fixed text after a later fall-back. */
static char decided_why[96];
static const char *_Atomic why = decided_why;

/* ------------------------------------------------------- the sources -- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

#if PK_HAVE_TSC
/* The fence keeps the read from being taken before earlier loads (the
 * kernel's rdtsc_ordered()): a thread that saw another's record reads a
 * later TSC than the one that record was stamped with. */
static inline uint64_t read_tsc(void)
{
	_mm_lfence();
	return __rdtsc();
}

static int cpu_invariant_tsc(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__cpuid(0x80000007u, a, b, c, d);
	return (d >> 8) & 1;
}
#else
static inline uint64_t read_tsc(void)
{
	return 0;
}

static int cpu_invariant_tsc(void)
{
	return 0;
}
#endif

/* The conversion: clock_own.h's (inline there for printk's lane path). */
static inline uint64_t tsc_to_ns(const struct pk_clock_calib *c, uint64_t tsc)
{
	return pk_clock_tsc_to_ns(c, tsc);
}

/*
 * The clamp, in two parts so that writers on several CPUs share no line
 * they write per call: a value below one this thread handed out becomes
 * that one (exact), and a value below the process's floor becomes the
 * floor, which every thread raises whenever it is PK_CLOCK_GRAIN_NS or more
 * behind the value handed out. With one calibration, the fenced TSC alone
 * keeps calls that follow one another (the second saw the first's record)
 * in order across threads, as CLOCK_MONOTONIC does; the floor bounds what
 * a change of calibration, or the fall-back to CLOCK_MONOTONIC, can put
 * out of order between threads to less than the grain.
 */
_Thread_local PK_TLS_IE uint64_t pk_clock_thread_last_ns; /* written inline too: clock_own.h */

static inline uint64_t clamp(uint64_t t)
{
	uint64_t floor = atomic_load_explicit(&last_ns, memory_order_relaxed);

	if (t < pk_clock_thread_last_ns)
		t = pk_clock_thread_last_ns;
	if (t < floor)
		t = floor;
	pk_clock_thread_last_ns = t;
	while (PK_UNLIKELY(t - floor >= PK_CLOCK_GRAIN_NS) &&
	       !atomic_compare_exchange_weak_explicit(&last_ns, &floor, t, memory_order_relaxed,
						      memory_order_relaxed))
		if (floor >= t)
			break;
	return t;
}

/* ---------------------------------------------------------- deciding -- */

/* Read a short text file into @buf (NUL-terminated); its length or -1.
 * open/read/close only: async-signal-safe. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

enum pk_clock_kind pk_clock_choose(const char *env, const char *clocksource, int invariant_tsc)
{
	if (env && strcmp(env, "monotonic") == 0)
		return PK_CLOCK_MONOTONIC;
	if (!PK_HAVE_TSC)
		return PK_CLOCK_MONOTONIC;
	if (env && strcmp(env, "tsc") == 0)
		return PK_CLOCK_TSC;
	if (!invariant_tsc || !clocksource)
		return PK_CLOCK_MONOTONIC;
	/* The whole file: "tsc" and its newline, nothing else. */
	if (strcmp(clocksource, "tsc\n") != 0 && strcmp(clocksource, "tsc") != 0)
		return PK_CLOCK_MONOTONIC;
	return PK_CLOCK_TSC;
}

static void read_env(void)
{
	const char *env = getenv("PRINTK_CLOCK");

	if (env && strcmp(env, "monotonic") == 0)
		forced = PK_CLOCK_MONOTONIC;
	else if (env && strcmp(env, "tsc") == 0)
		forced = PK_CLOCK_TSC;
	else
		forced = PK_CLOCK_NONE;
}

/* A thread that was changing the state when another forked does not exist
 * in the child: its change is undone there (or completed, for a
 * calibration already active). */
static void clock_after_fork_child(void)
{
	int st = atomic_load(&state);

	if (st == ST_DECIDING)
		atomic_store(&state, ST_UNDECIDED);
	else if (st == ST_CALIBRATING)
		atomic_store(&state, atomic_load(&pk_clock_active) ? ST_TSC : ST_MONO_CLAMPED);
}

/* getenv() is read here, at load time, rather than on first use, which may
 * be in a signal handler. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((constructor)) static void clock_init(void)
{
	read_env();
	pthread_atfork(NULL, NULL, clock_after_fork_child);
}
#endif

static void set_why(const char *a, const char *b, const char *c)
{
	size_t n = 0;

	for (const char *s = a; s && *s && n < sizeof(decided_why) - 1; s++)
		decided_why[n++] = *s;
	for (const char *s = b; s && *s && *s != '\n' && n < sizeof(decided_why) - 1; s++)
		decided_why[n++] = *s;
	for (const char *s = c; s && *s && n < sizeof(decided_why) - 1; s++)
		decided_why[n++] = *s;
	decided_why[n] = '\0';
}

/* A (tsc, ns) pair: the narrowest TSC bracket around CLOCK_MONOTONIC of
 * CALIB_TRIES, the TSC taken at its middle. Returns the bracket in ticks. */
static uint64_t take_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	*tsc = read_tsc();
	*ns = mono_ns();
	for (int i = 0; i < CALIB_TRIES; i++) {
		uint64_t t1 = read_tsc();
		uint64_t n = mono_ns();
		uint64_t t2 = read_tsc();

		if (t2 >= t1 && t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + (t2 - t1) / 2;
			*ns = n;
		}
	}
	return best;
}

static void decide(void)
{
	int expect = ST_UNDECIDED;

	if (!atomic_compare_exchange_strong(&state, &expect, ST_DECIDING))
		return;
	if (forced < 0)
		read_env(); /* no constructors with this compiler */

	char src[64];
	const char *env = forced == PK_CLOCK_MONOTONIC ? "monotonic"
			  : forced == PK_CLOCK_TSC     ? "tsc"
						       : NULL;
	const char *cs = read_small(CLOCKSOURCE_PATH, src, sizeof(src)) > 0 ? src : NULL;
	int inv = cpu_invariant_tsc();

	if (pk_clock_choose(env, cs, inv) == PK_CLOCK_TSC) {
		set_why("tsc", env ? " (PRINTK_CLOCK=tsc)" : "", NULL);
		take_pair(&pair1_tsc, &pair1_ns);
		atomic_store_explicit(&state, ST_PENDING, memory_order_release);
		return;
	}
	if (forced == PK_CLOCK_MONOTONIC)
		set_why("CLOCK_MONOTONIC (PRINTK_CLOCK=monotonic)", NULL, NULL);
	else if (!PK_HAVE_TSC)
		set_why("CLOCK_MONOTONIC (no TSC on this architecture)", NULL, NULL);
	else if (!inv)
		set_why("CLOCK_MONOTONIC (the TSC is not invariant)", NULL, NULL);
	else if (!cs)
		set_why("CLOCK_MONOTONIC (no current clocksource)", NULL, NULL);
	else
		set_why("CLOCK_MONOTONIC (tsc not stable here: clocksource is ", cs, ")");
	atomic_store_explicit(&state, ST_MONO, memory_order_release);
}

/* ------------------------------------------------------- calibrating -- */

/* floor(@n * 2^@shift / @d), for @d < 2^63 and a result below 2^64. */
static uint64_t div_shifted(uint64_t n, unsigned shift, uint64_t d)
{
	uint64_t q = n / d, r = n % d;

	for (unsigned i = 0; i < shift; i++) {
		q <<= 1;
		r <<= 1;
		if (r >= d) {
			r -= d;
			q |= 1;
		}
	}
	return q;
}

static bool rate_sane(uint64_t mult, unsigned shift)
{
	return shift >= 1 && shift <= 32 && mult > 0 && mult <= UINT32_MAX &&
	       mult * RATE_LIMIT >= 1ull << shift && mult <= (uint64_t)RATE_LIMIT << shift;
}

/* mult/shift for @dns nanoseconds in @dtsc ticks: the largest shift (at
 * most 32) whose mult fits 32 bits. 0 if the rate is not a TSC's. */
static int make_calib(uint64_t dtsc, uint64_t dns, uint32_t *mult, uint32_t *shift)
{
	if (dtsc == 0 || dtsc >= 1ull << 62 || dns / dtsc > RATE_LIMIT)
		return 0;

	uint64_t m = div_shifted(dns, 32, dtsc);
	unsigned s = 32;

	while (m > UINT32_MAX && s > 1) {
		m >>= 1;
		s--;
	}
	if (!rate_sane(m, s))
		return 0;
	*mult = (uint32_t)m;
	*shift = s;
	return 1;
}

/* A calibration into a slot of its own; NULL when all are used (a process
 * that changed its clock CALIB_SLOTS times keeps the one it has). */
static const struct pk_clock_calib *new_slot(const struct pk_clock_calib *c)
{
	unsigned i = atomic_fetch_add(&slots_used, 1);

	if (i >= CALIB_SLOTS) {
		atomic_store(&slots_used, CALIB_SLOTS);
		return NULL;
	}
	slots[i] = *c;
	return &slots[i];
}

/* From PENDING: take the second pair and start converting. The caller
 * moved the state to CALIBRATING. */
static void finish_calibration(void)
{
	struct pk_clock_calib c;
	uint64_t tsc2, ns2;
	const struct pk_clock_calib *slot = NULL;

	take_pair(&tsc2, &ns2);
	if (tsc2 > pair1_tsc && ns2 > pair1_ns &&
	    make_calib(tsc2 - pair1_tsc, ns2 - pair1_ns, &c.mult, &c.shift)) {
		c.tsc0 = tsc2;
		c.ns0 = ns2;
		slot = new_slot(&c);
	}
	if (!slot) {
		/* A counter that does not tick like one: CLOCK_MONOTONIC. */
		atomic_store(&why, "CLOCK_MONOTONIC (the TSC failed its calibration)");
		atomic_store_explicit(&state, ST_MONO_CLAMPED, memory_order_release);
		return;
	}
	atomic_store_explicit(&pk_clock_active, slot, memory_order_release);
	atomic_store_explicit(&state, ST_TSC, memory_order_release);
}

/* The TSC went far back: stop trusting it, for good. */
static PK_NOINLINE uint64_t tsc_lost(void)
{
	int st = ST_TSC;

	if (atomic_compare_exchange_strong(&state, &st, ST_CALIBRATING)) {
		atomic_store(&why, "CLOCK_MONOTONIC (the TSC went back: reset by a suspend?)");
		atomic_store_explicit(&pk_clock_active, NULL, memory_order_release);
		atomic_store_explicit(&state, ST_MONO_CLAMPED, memory_order_release);
	}
	return clamp(mono_ns());
}

static inline uint64_t tsc_now(const struct pk_clock_calib *c)
{
	uint64_t tsc = read_tsc();

	if (PK_UNLIKELY(tsc < c->tsc0) && c->tsc0 - tsc > TSC_LAG_MAX)
		return tsc_lost();
	return clamp(tsc_to_ns(c, tsc));
}

/* CLOCK_MONOTONIC, or the TSC once calibrated: everything but the two
 * steady states. */
static PK_NOINLINE uint64_t slow_ns(void)
{
	int st = atomic_load_explicit(&state, memory_order_acquire);

	if (st == ST_UNDECIDED) {
		decide();
		st = atomic_load_explicit(&state, memory_order_acquire);
	}

	uint64_t now = mono_ns();

	if (st == ST_PENDING && now - pair1_ns >= CALIB_MIN_NS &&
	    atomic_compare_exchange_strong(&state, &st, ST_CALIBRATING))
		finish_calibration();
	if (st == ST_MONO)
		return now;

	const struct pk_clock_calib *c = atomic_load_explicit(&pk_clock_active, memory_order_acquire);

	if (c && atomic_load_explicit(&state, memory_order_acquire) == ST_TSC)
		return tsc_now(c);
	return clamp(now);
}

PK_HOT uint64_t pk_clock_ns(void)
{
	uint64_t (*fn)(void) = atomic_load_explicit(&pk_clock_test_fn, memory_order_relaxed);

	if (PK_UNLIKELY(fn != NULL))
		return fn();
#if PK_HAVE_TSC
	const struct pk_clock_calib *c = atomic_load_explicit(&pk_clock_active, memory_order_acquire);

	if (PK_LIKELY(c != NULL))
		return tsc_now(c);
#endif
	if (PK_LIKELY(atomic_load_explicit(&state, memory_order_relaxed) == ST_MONO))
		return mono_ns();
	return slow_ns();
}

PK_HOT uint64_t pk_clock_ns_own(void)
{
	uint64_t (*fn)(void) = atomic_load_explicit(&pk_clock_test_fn, memory_order_relaxed);

	if (PK_UNLIKELY(fn != NULL))
		return fn();
#if PK_HAVE_TSC
	const struct pk_clock_calib *c = atomic_load_explicit(&pk_clock_active, memory_order_acquire);

	if (PK_LIKELY(c != NULL)) {
		/* Unfenced by default, as the kernel's own printk timestamps
		 * (docs/clock.md says what order that keeps): the fence is
		 * much of a lane line's cost. */
		uint64_t tsc = pk_clock_lane_tsc();

		if (PK_UNLIKELY(tsc < c->tsc0) && c->tsc0 - tsc > TSC_LAG_MAX)
			return tsc_lost();

		uint64_t t = tsc_to_ns(c, tsc);

		if (PK_UNLIKELY(t < pk_clock_thread_last_ns))
			t = pk_clock_thread_last_ns;
		pk_clock_thread_last_ns = t;
		return t;
	}
#endif
	if (PK_LIKELY(atomic_load_explicit(&state, memory_order_relaxed) == ST_MONO))
		return mono_ns();
	return slow_ns();
}

uint64_t pk_clock_floor_ns(void)
{
	return atomic_load_explicit(&last_ns, memory_order_relaxed);
}

void pk_clock_set_lane_fenced(int on)
{
	atomic_store_explicit(&pk_clock_lane_fence, !!on, memory_order_relaxed);
}

int pk_clock_lane_fenced(void)
{
	return atomic_load_explicit(&pk_clock_lane_fence, memory_order_relaxed);
}

void pk_set_test_clock(uint64_t (*clock_fn)(void))
{
	atomic_store(&pk_clock_test_fn, clock_fn);
}

enum pk_clock_kind pk_clock_current(struct pk_clock_calib *calib)
{
	if (atomic_load(&state) == ST_UNDECIDED)
		decide();

	const struct pk_clock_calib *c = atomic_load_explicit(&pk_clock_active, memory_order_acquire);

	if (!c)
		return PK_CLOCK_MONOTONIC;
	if (calib)
		*calib = *c;
	return PK_CLOCK_TSC;
}

const char *pk_clock_describe(void)
{
	int st = atomic_load_explicit(&state, memory_order_acquire);

	if (st == ST_UNDECIDED) {
		decide();
		st = atomic_load_explicit(&state, memory_order_acquire);
	}
	return st == ST_DECIDING ? "undecided" : atomic_load(&why);
}

/* ---------------------------------------------------------- sharing -- */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS_PER_SEC),
			       .tv_nsec = (long)(ns % NS_PER_SEC) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Own the state (CALIBRATING) once decided; with @finish, also with a
 * pending calibration finished (sleeping out the rest of its measuring
 * time). Returns the state it had then, or -1 if other threads kept it for
 * a whole second (a state change takes microseconds). The caller stores
 * the next state.
 */
static int take_state(bool finish)
{
	for (int i = 0; i < 10000; i++) {
		int st = atomic_load_explicit(&state, memory_order_acquire);

		if (st == ST_UNDECIDED) {
			decide();
			continue;
		}
		if (st == ST_PENDING && finish) {
			uint64_t now = mono_ns();

			if (now - pair1_ns < CALIB_MIN_NS) {
				sleep_ns(CALIB_MIN_NS - (now - pair1_ns));
				continue;
			}
			if (atomic_compare_exchange_strong(&state, &st, ST_CALIBRATING))
				finish_calibration();
			continue;
		}
		if (st == ST_MONO || st == ST_TSC || st == ST_MONO_CLAMPED || st == ST_PENDING) {
			if (atomic_compare_exchange_strong(&state, &st, ST_CALIBRATING))
				return st;
			continue;
		}
		sleep_ns(100 * 1000);
	}
	return -1;
}

/* This boot's id (all zero if unknown: then no TSC clock is shared). */
static void boot_id(uint64_t id[2])
{
	static _Atomic uint64_t cached[2]; /* racing first readers store the same */
	static _Atomic int have;
	char text[64];

	if (!atomic_load_explicit(&have, memory_order_acquire)) {
		uint64_t v[2] = { 0, 0 };
		unsigned digits = 0;

		if (read_small(BOOT_ID_PATH, text, sizeof(text)) > 0) {
			for (const char *p = text; *p && *p != '\n'; p++) {
				unsigned x;

				if (*p == '-')
					continue;
				if (*p >= '0' && *p <= '9')
					x = (unsigned)(*p - '0');
				else if (*p >= 'a' && *p <= 'f')
					x = (unsigned)(*p - 'a' + 10);
				else
					break;
				if (digits >= 32) {
					digits = 33;
					break;
				}
				v[digits / 16] = v[digits / 16] << 4 | x;
				digits++;
			}
		}
		if (digits != 32)
			v[0] = v[1] = 0;
		atomic_store_explicit(&cached[0], v[0], memory_order_relaxed);
		atomic_store_explicit(&cached[1], v[1], memory_order_relaxed);
		atomic_store_explicit(&have, 1, memory_order_release);
	}
	id[0] = atomic_load_explicit(&cached[0], memory_order_relaxed);
	id[1] = atomic_load_explicit(&cached[1], memory_order_relaxed);
}

/* A consistent copy of @lc, or 0 (being written, or never written). */
static int read_log_clock(struct pk_log_clock *lc, uint32_t *kind, struct pk_clock_calib *c,
			  uint64_t id[2], uint32_t *gen, int tries)
{
	for (int i = 0; i < tries; i++) {
		uint32_t g = atomic_load_explicit(&lc->gen, memory_order_acquire);

		*gen = g;
		if (g == 0)
			return 0;
		if (g & 1) {
			sleep_ns(10 * 1000);
			continue;
		}
		*kind = pk_load_relaxed(&lc->kind);
		c->mult = pk_load_relaxed(&lc->mult);
		c->shift = pk_load_relaxed(&lc->shift);
		c->tsc0 = pk_load_relaxed(&lc->tsc0);
		c->ns0 = pk_load_relaxed(&lc->ns0);
		id[0] = pk_load_relaxed(&lc->boot_id[0]);
		id[1] = pk_load_relaxed(&lc->boot_id[1]);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&lc->gen, memory_order_relaxed) == g)
			return 1;
	}
	return 0;
}

/*
 * Is a calibration read from a log one this process can convert with?
 * Its rate must be a TSC's, and now, converted, it must lie between
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME (a TSC may go on ticking through a
 * suspend that CLOCK_MONOTONIC skips) give or take what the rate's error
 * allows: 1 ms and 1000 ppm of the time since its calibration.
 */
static bool calib_valid_now(const struct pk_clock_calib *c)
{
	if (!rate_sane(c->mult, c->shift))
		return false;

	uint64_t tsc = read_tsc();
	uint64_t mono = mono_ns();
	uint64_t boot = boot_ns();

	/* Taken a moment ago on another CPU, its TSC may be a little ahead
	 * of ours (less than TSC_LAG_MAX); CLOCK_MONOTONIC is one clock. */
	if (c->ns0 > mono || (c->tsc0 > tsc && c->tsc0 - tsc > TSC_LAG_MAX) ||
	    mono - c->ns0 > (1ull << 62))
		return false;

	uint64_t slack = 1000 * 1000 + (mono - c->ns0) / 1000;
	uint64_t t = tsc_to_ns(c, tsc);

	return t + slack >= mono && (boot == UINT64_MAX || t <= boot + slack);
}

static void write_log_clock(struct pk_log_clock *lc, uint32_t gen_odd, uint32_t kind,
			    const struct pk_clock_calib *c, const uint64_t id[2])
{
	pk_store_relaxed(&lc->kind, kind);
	pk_store_relaxed(&lc->mult, c ? c->mult : 0);
	pk_store_relaxed(&lc->shift, c ? c->shift : 0);
	pk_store_relaxed(&lc->tsc0, c ? c->tsc0 : 0);
	pk_store_relaxed(&lc->ns0, c ? c->ns0 : 0);
	pk_store_relaxed(&lc->boot_id[0], id[0]);
	pk_store_relaxed(&lc->boot_id[1], id[1]);
	/* gen 0 means "never written": skip it when the count wraps. */
	atomic_store_explicit(&lc->gen, gen_odd + 1 ? gen_odd + 1 : 2, memory_order_release);
}

int pk_clock_share(struct pk_log_clock *lc)
{
	uint64_t me[2];
	bool finish = false;

	boot_id(me);
	for (int tries = 0; tries < 100; tries++) {
		int st = take_state(finish);

		if (st < 0)
			return PK_CLOCK_KEPT;

		/* A TSC clock, calibrated or still measuring: this process may
		 * convert the TSC. */
		const struct pk_clock_calib *mine = atomic_load(&pk_clock_active);
		bool tsc_ok = mine || st == ST_PENDING;
		struct pk_clock_calib theirs;
		uint64_t id[2];
		uint32_t kind = 0, gen = 0;
		bool valid = false;
		int next = st, ret = PK_CLOCK_KEPT;

		if (read_log_clock(lc, &kind, &theirs, id, &gen, 1000) && (me[0] || me[1]) &&
		    id[0] == me[0] && id[1] == me[1])
			valid = kind == PK_CLOCK_MONOTONIC ||
				(kind == PK_CLOCK_TSC && PK_HAVE_TSC && calib_valid_now(&theirs));
		if (valid) {
			if (kind == PK_CLOCK_TSC && tsc_ok) {
				/* Convert as they do. */
				const struct pk_clock_calib *slot = mine;

				if (!mine || memcmp(mine, &theirs, sizeof(theirs)) != 0)
					slot = new_slot(&theirs);
				if (slot) {
					atomic_store_explicit(&pk_clock_active, slot, memory_order_release);
					next = ST_TSC;
					ret = PK_CLOCK_ADOPTED;
				}
			} else if (kind == PK_CLOCK_MONOTONIC && tsc_ok && forced != PK_CLOCK_TSC) {
				/* They time with CLOCK_MONOTONIC: so do we. */
				atomic_store_explicit(&pk_clock_active, NULL, memory_order_release);
				atomic_store(&why, "CLOCK_MONOTONIC (as the log's other writers)");
				next = ST_MONO_CLAMPED;
				ret = PK_CLOCK_ADOPTED;
			} else if (kind == PK_CLOCK_MONOTONIC && !tsc_ok) {
				ret = PK_CLOCK_ADOPTED; /* the same already */
			}
			/* Else a TSC clock where ours is CLOCK_MONOTONIC: the
			 * kernel does not vouch for the TSC (any more), or we
			 * were told not to use it; or CLOCK_MONOTONIC where we
			 * were told to use the TSC. Ours stays. */
			atomic_store_explicit(&state, next, memory_order_release);
			return ret;
		}
		if (st == ST_PENDING) {
			/* Ours must be finished before it can be published. */
			atomic_store_explicit(&state, st, memory_order_release);
			finish = true;
			continue;
		}
		/* None valid for this boot: ours goes in, unless another
		 * writer's went in meanwhile. A writer that died while writing
		 * (gen odd for good) is overtaken. */
		uint32_t claim = gen & 1 ? gen + 2 : gen + 1;

		if (atomic_compare_exchange_strong(&lc->gen, &gen, claim)) {
			write_log_clock(lc, claim, mine ? PK_CLOCK_TSC : PK_CLOCK_MONOTONIC, mine, me);
			ret = PK_CLOCK_PUBLISHED;
		}
		atomic_store_explicit(&state, next, memory_order_release);
		if (ret == PK_CLOCK_PUBLISHED)
			return ret;
	}
	return PK_CLOCK_KEPT;
}

enum pk_clock_kind pk_clock_of_log(struct pk_log_clock *lc, int *this_boot)
{
	struct pk_clock_calib c;
	uint64_t id[2], me[2];
	uint32_t kind, gen;

	*this_boot = 0;
	if (!read_log_clock(lc, &kind, &c, id, &gen, 1) ||
	    (kind != PK_CLOCK_MONOTONIC && kind != PK_CLOCK_TSC))
		return PK_CLOCK_NONE;
	boot_id(me);
	*this_boot = (me[0] || me[1]) && id[0] == me[0] && id[1] == me[1];
	return (enum pk_clock_kind)kind;
}
