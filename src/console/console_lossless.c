// SPDX-License-Identifier: MIT
/*
 * console_lossless.c - lossless consoles: a PK_CON_LOSSLESS console's
 * thread holds the ring's writers back instead of losing records.
 *
 * Owns: the static lossless slots (state, published position, when it last
 * moved, the console's name for the notice), the futex word and wanted
 * position a waiting writer sleeps on, lossless_timeout_ms, and the ring's
 * retire guard that makes a writer wait. A console is lossless through its
 * printer thread (console_printer.c), which takes a slot when it starts,
 * publishes its position after every record and frees the slot when it
 * ends; nothing here touches a console or its printer. console_impl.h is
 * what the console files share: this file calls console.c only, and
 * reaches the printer threads (their wake-up, whether the caller may wait)
 * through the table console_printer.c fills, set before any lossless
 * console exists.
 *
 * Invariants:
 *   C8 A PK_CON_LOSSLESS console is threaded (C7, console_printer.c) and
 *      holds one of the static lossless slots while its thread runs: the
 *      thread publishes its position there after every record. The ring's
 *      retire guard (ringbuffer.c, G1) asks pk_lossless_guard() before a
 *      record leaves the ring; a record some slot has not passed makes the
 *      writer sleep on one futex word until the slots pass it, unless it
 *      may not wait (a signal handler, the crash path, the console lock or
 *      a printer's owner word held, inside a console's write, a printer
 *      thread): then the record goes and the console counts it dropped, as
 *      any console. A slot that does not move for lossless_timeout_ms while
 *      a writer waits for it is turned lossy for good, with a notice, by
 *      that writer: a dead disk never hangs the program. Slots are static,
 *      so a writer reads them without the console list and never a freed
 *      one.
 *   L1 A writer announces what it waits for (lossless_want, lowered by CAS)
 *      before it reads the slots again and sleeps; a thread publishes its
 *      position before it reads lossless_want (both seq_cst): one of the
 *      two sees the other, so a writer never sleeps through the
 *      publication that passed what it waits for.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>

#include "base/atomics.h"
#include "base/clock.h"
#include "base/hints.h"
#include "console/console_impl.h"
#include "log/settings.h"
#include "ring/caller.h"

/* C8. Slot states: */
enum { LL_FREE, LL_ON, LL_OFF };
#define LOSSLESS_SLOTS 16

static struct lossless_slot {
	_Atomic int state;
	pk_a64 pos;	    /* the console's position: every record before it is printed */
	pk_a64 moved_ns;    /* when pos last changed */
	char name[16];	    /* for the notice: the console may be gone by then */
} lossless[LOSSLESS_SLOTS];

static _Atomic int lossless_on;	     /* slots in LL_ON */
/* One past the highest slot ever taken: the retire guard, asked for every
 * record the ring retires, looks at no slot above it. */
static _Atomic int lossless_top;
static pk_a32 lossless_wake;	     /* futex word: bumped when a slot passed what a writer wants */
static pk_a64 lossless_want = UINT64_MAX; /* the lowest position a sleeping writer waits for */
static _Atomic int lossless_timeout_ms = 5000;
static _Thread_local PK_TLS_IE int in_lossless_wait;
/* This thread's signal mask as seen outside signal handlers (the bits
 * blocked in every look so far); see lossless_in_handler(). */
static _Thread_local PK_TLS_IE uint64_t lossless_base_mask;
static _Thread_local PK_TLS_IE int lossless_base_known;

void pk_console_set_lossless_timeout_ms(int ms)
{
	atomic_store(&lossless_timeout_ms, ms < 0 ? 0 : ms);
}

static long lossless_futex(int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)&lossless_wake, op, val, ts, NULL, 0);
}

void pk_lossless_wake_all(void)
{
	int saved = errno;

	atomic_store(&lossless_want, UINT64_MAX);
	pk_fetch_add_sc(&lossless_wake, 1);
	lossless_futex(FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	errno = saved;
}

/* The printer thread of slot @i printed everything before @pos. */
void pk_lossless_publish(int i, uint64_t pos)
{
	struct lossless_slot *sl = &lossless[i];

	if (pk_load_relaxed(&sl->pos) != pos) {
		pk_store_relaxed(&sl->moved_ns, pk_clock_ns());
		atomic_store(&sl->pos, pos);
	}
	/* Pairs with the writer's want (sc) then position (sc) loads. */
	if (pos >= pk_load_sc(&lossless_want))
		pk_lossless_wake_all();
}

/* C10: a writer sleeps until some lossless console passes a position at
 * or below @pos: a batching thread writes what it holds now. A load of a
 * line only waiting writers write. */
int pk_lossless_wanted(uint64_t pos)
{
	return pos >= pk_load_relaxed(&lossless_want);
}

/* A slot for a lossless console starting at @seq; -1 if all are taken. */
int pk_lossless_take(const struct console *con, uint64_t seq)
{
	for (int i = 0; i < LOSSLESS_SLOTS; i++) {
		int expected = LL_FREE;

		if (atomic_compare_exchange_strong(&lossless[i].state, &expected, LL_OFF)) {
			int top = atomic_load(&lossless_top);

			while (top < i + 1 && !atomic_compare_exchange_weak(&lossless_top, &top, i + 1))
				;
			memcpy(lossless[i].name, con->name, sizeof(lossless[i].name));
			lossless[i].name[sizeof(lossless[i].name) - 1] = '\0';
			pk_store_relaxed(&lossless[i].moved_ns, pk_clock_ns());
			atomic_store(&lossless[i].pos, seq);
			atomic_store(&lossless[i].state, LL_ON);
			atomic_fetch_add(&lossless_on, 1);
			return i;
		}
	}
	return -1;
}

/* Slot @i stops holding writers back: its console went lossy or away. */
static void lossless_off(int i, int next_state)
{
	int expected = LL_ON;

	if (atomic_compare_exchange_strong(&lossless[i].state, &expected, next_state))
		atomic_fetch_sub(&lossless_on, 1);
	else if (next_state == LL_FREE)
		atomic_store(&lossless[i].state, LL_FREE);
	pk_lossless_wake_all();
}

/* The lowest position of a lossless console: records from it on must stay. */
static uint64_t lossless_floor(void)
{
	uint64_t floor = UINT64_MAX;
	int top = atomic_load_explicit(&lossless_top, memory_order_acquire);

	for (int i = 0; i < top; i++) {
		if (atomic_load_explicit(&lossless[i].state, memory_order_acquire) != LL_ON)
			continue;
		uint64_t pos = pk_load_sc(&lossless[i].pos);

		if (pos < floor)
			floor = pos;
	}
	return floor;
}

static int fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
	       sig == SIGTRAP || sig == SIGSYS;
}

/*
 * Whether this thread may be inside a signal handler that printk's nesting
 * count cannot see (one that runs between two printk calls). A handler
 * runs with its signal blocked: a signal blocked now that was not blocked
 * in every earlier look and that has a handler installed says so. The
 * fault signals are the crash path's (pk_console_crash_begin()). Costs a
 * system call, and one more per such signal: only writers about to wait
 * pay it.
 */
static int lossless_in_handler(void)
{
	uint64_t mask = pk_signal_mask();
	uint64_t extra = lossless_base_known ? mask & ~lossless_base_mask : mask;

	lossless_base_mask = lossless_base_known ? lossless_base_mask & mask : mask;
	lossless_base_known = 1;
	for (int sig = 1; sig <= 64 && extra; sig++) {
		struct sigaction sa;

		if (!(extra & (UINT64_C(1) << (sig - 1))))
			continue;
		extra &= ~(UINT64_C(1) << (sig - 1));
		if (fault_signal(sig) || sigaction(sig, NULL, &sa))
			continue;
		if ((sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != NULL
					       : (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
			return 1;
	}
	return 0;
}

/* Set: the retire guard is installed at the registration of a lossless
 * console, after the printer threads' table (console_impl.h). */
static const struct pk_con_threads *threads(void)
{
	return atomic_load_explicit(&pk_con_threads, memory_order_acquire);
}

/* C8: whether the calling writer may sleep until a printer thread moves. */
static int lossless_may_wait(void)
{
	struct prb_caller me;

	if (in_lossless_wait || threads()->forbids_wait() || pk_console_in_write() ||
	    pk_con_crash_begun() || pk_con_emergency())
		return 0;
	pk_caller_get(&me);
	/* Nested in printk (a handler that interrupted one), or declared a
	 * handler (pk_printk_handler_enter()). */
	if (me.ctx != 0)
		return 0;

	if (pk_con_lock_held_by(me.tid))
		return 0;
	return !lossless_in_handler();
}

/* Slots still short of @target whose console has not moved for the
 * timeout since @since: turned lossy, with a notice. Returns how many. */
static int lossless_check_stuck(uint64_t target, uint64_t since, uint64_t now)
{
	uint64_t limit = (uint64_t)atomic_load(&lossless_timeout_ms) * 1000000u;
	int turned = 0;

	for (int i = 0; i < LOSSLESS_SLOTS; i++) {
		struct lossless_slot *sl = &lossless[i];
		uint64_t moved = pk_load_relaxed(&sl->moved_ns);

		if (atomic_load(&sl->state) != LL_ON || pk_load_sc(&sl->pos) > target)
			continue;
		if (moved < since)
			moved = since;
		/* The thread may have moved after our clock read: not stuck. */
		if ((int64_t)(now - moved) < (int64_t)limit)
			continue;

		int expected = LL_ON;

		if (!atomic_compare_exchange_strong(&sl->state, &expected, LL_OFF))
			continue;
		atomic_fetch_sub(&lossless_on, 1);
		pk_lossless_wake_all();
		turned++;
		pk_store_notice(4, "printk: console [%.16s] printed nothing for %d ms: no longer lossless, records it misses are dropped\n",
				sl->name, atomic_load(&lossless_timeout_ms));
	}
	return turned;
}

/*
 * The retire guard (ringbuffer.c, G1): record @seq of @rb is about to be
 * overwritten. If a lossless console has not printed it and the caller may
 * wait, sleep until every lossless console passed it, and some more: a
 * batch of records, so that writers and printer threads do not take turns
 * one record at a time (never past the records that are complete, so a
 * writer never waits for its own open line). Returns 1 if it slept.
 */
int pk_lossless_guard(struct prb *rb, uint64_t seq)
{
	if (PK_LIKELY(!atomic_load_explicit(&lossless_on, memory_order_relaxed)) ||
	    lossless_floor() > seq || rb != pk_printk_ring() || !lossless_may_wait())
		return 0;

	in_lossless_wait = 1;

	uint64_t first = prb_first_seq(rb), next = prb_next_seq(rb);
	uint64_t target = seq + (next > first ? (next - first) / 8 : 0);
	uint64_t start = pk_clock_ns();

	if (target >= next)
		target = next > seq ? next - 1 : seq;
	for (;;) {
		if (lossless_floor() > target || pk_con_crash_begun())
			break;
		threads()->wake();

		uint64_t want = pk_load_relaxed(&lossless_want);

		while (want > target + 1 && !pk_cas_sc(&lossless_want, &want, target + 1))
			;

		uint32_t gen = pk_load_sc(&lossless_wake);

		if (lossless_floor() > target)
			break;

		uint64_t now = pk_clock_ns();

		if (lossless_check_stuck(target, start, now))
			continue;

		struct timespec ts = { 0, 50 * 1000 * 1000 }; /* looks at the clock again */
		int saved = errno;

		lossless_futex(FUTEX_WAIT_PRIVATE, gen, &ts);
		errno = saved;
	}
	in_lossless_wait = 0;
	return 1;
}

void pk_lossless_free(int slot)
{
	lossless_off(slot, LL_FREE);
}

/* C8: the parent's printer threads held the slots; the child's take them
 * again as they start. */
void pk_lossless_after_fork(void)
{
	in_lossless_wait = 0;
	for (int i = 0; i < LOSSLESS_SLOTS; i++)
		atomic_store(&lossless[i].state, LL_FREE);
	atomic_store(&lossless_on, 0);
	atomic_store(&lossless_want, UINT64_MAX);
}
