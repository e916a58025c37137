// SPDX-License-Identifier: MIT
/*
 * console.c - the console registry, the console lock and the printing loop.
 *
 * Owns: the list of registered consoles, each console's state (its position
 * in the log: record seq and how many bytes of it are printed; its open
 * line, failures, own level), the console lock and its idle mark, the print
 * loop's buffers, the stderr fall-back, the crash flag, and the rules that
 * turn records into console lines, and console_drain_ms (how long exit
 * waits for printer threads and prints). Printer threads (C7) are
 * console_printer.c's and lossless consoles (C8) console_lossless.c's; they
 * are built on this file, which reaches them only through the table
 * pk_con_threads that console_printer.c fills when the first threaded
 * console is registered (console_impl.h). What the layers above
 * call is console_internal.h (and console_line.h for printk's one write).
 *
 * Text reaches the console at once (docs/kernel-compat.md, section 4.3: the
 * 2012 regression that held partial lines back). The newest record may be
 * an open line (committed, not finalized); the loop prints it as far as it
 * goes and, when the same caller extends it, prints only the new bytes, so
 * "Testing tracer function: " is on the console before the test runs and
 * "PASSED" follows on the same line.
 *
 * Line rules, per console:
 *   - a record starts with its prefix ("[    1.291025] "), except a
 *     continuation fragment (PRB_FLAG_CONT), which never gets a timestamp;
 *   - when a record starts while this console's line is open (the last byte
 *     printed was not a newline), the line is ended first, unless the record
 *     is a continuation fragment of the same caller: no console line ever holds
 *     text of two callers, and no timestamp appears mid-line;
 *   - every further line inside a record gets the record's prefix.
 *
 * Invariants:
 *   C1 Only the holder of the console lock touches console state or calls a
 *      console's write; the lock is taken with a try-lock only (printk never
 *      waits for it), so a signal handler that interrupts the holder stores
 *      its record and leaves the printing to the holder.
 *   C2 The holder prints until no work is left and, after letting go, checks
 *      the store generation: a record stored while it held the lock is
 *      printed by it or by the storer. A storer that finds the lock taken
 *      bumps the generation (seq_cst) and tries the lock once more; the holder
 *      lets go (seq_cst store) before it re-reads the generation: one of the
 *      two sees the other. None is skipped, none printed twice.
 *   C3 printk from inside a console write only stores: the record is printed
 *      after the write returns, followed by "BUG: recent printk recursion!".
 *   C4 Nothing the holder calls is a cancellation point: a console's write,
 *      reopen and release run with cancellation held off, the one-write path
 *      is the raw system call. A cancelled thread never keeps the lock.
 *      A signal handler that prints while the write runs is not recursion and
 *      gets no notice (told apart by the signal mask, base_mask below).
 *   C5 The one-write path may hand its write to printk itself: between
 *      pk_console_flush_line() and pk_console_line_done() the calling
 *      thread holds the lock and counts as inside a console write (C3), and
 *      its only work is the raw write(2) (C4).
 *   C6 A holder stuck in a console's own write (a callback that blocks, a
 *      thread stopped in a debugger inside it; the built-in fd consoles
 *      give up on a write after 500 ms) does not silence the others. While printk's own printing calls a console's
 *      write, the lock word says so (CON_WRITING, with the console's id and
 *      a tick that changes with every write). A thread that wants the lock
 *      and sees the same such word for PK_CONSOLE_STALL_MS takes the lock
 *      over with a CAS on that exact word: the stuck console is marked
 *      stuck and every holder leaves it alone (its state belongs to the
 *      stuck thread), the new holder prints with another set of buffers,
 *      and a notice says which console was left behind. The stuck thread
 *      learns it when its write returns (its CAS that ends the write
 *      fails): it finishes the record on its own console, hands the
 *      console back (stuck count down, release) and leaves the rest to
 *      whoever holds the lock now. Only the one place that can block is
 *      marked: a holder stopped anywhere else keeps the lock until it runs
 *      again, and the direct write(2) of the one-write path (regular files,
 *      /dev/null: they do not block) is never marked. Registration,
 *      unregistration, reopen and exit may take the lock over too, but
 *      their own holds are never taken over; a stuck console cannot be
 *      unregistered or reopened (-EBUSY) and is not freed at exit.
 *   C7 A PK_CON_THREADED console is printed by a thread of its own
 *      (console_printer.c states the rule), never by the console lock's
 *      holder: the print loop, the idle mark, the one-write path and the
 *      stderr fall-back pass it by, telling it by its printer, fixed at
 *      registration. Its state is changed by the loop's code
 *      (pk_con_print_one()) only while its printer's owner word is held.
 *   C8 A PK_CON_LOSSLESS console is threaded and holds writers back through
 *      the ring's retire guard (console_lossless.c states the rule);
 *      registration installs the guard.
 *   C9 While every registered console is threaded (locked_consoles is 0),
 *      printk stores, wakes the threads (C7) and returns: the lock and the
 *      idle mark are not touched, and the record may be stored deferred
 *      (the threads format it when they read it). The count changes under
 *      the lock with the list; a printk that read a stale count either
 *      prints through the lock for nothing or leaves its record to the
 *      registration's own flush. A level set from another process and the
 *      emergency path still go through the lock.
 *   C10 A threaded file console that does not rotate by size
 *      (pk_console_fd_batchable()) batches: what
 *      the loop would write is appended to the console's batch buffer
 *      instead, with a mark (its end and the console's seq after it) per
 *      piece, and written with one write when its owner calls
 *      pk_con_batch_flush() (its thread, once caught up, before it lets go
 *      of its owner word: the batch is empty whenever nobody owns the
 *      console; the crash path and the drain flush what they appended) or
 *      when the buffer or the marks run out. Bytes and order are those of
 *      the piece-by-piece writes; only the write boundaries differ. A batch
 *      write that fails is written again piece by piece from the first
 *      piece not known written, each counted as a write of its own with the
 *      console's seq of that piece, so failures, the disabling and the
 *      stderr fall-back come after the same record as without a batch.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <printk/console.h>
#include <printk/printk.h>

#include "base/hints.h"
#include "base/outbuf.h"
#include "console/console_impl.h"
#include "console/console_line.h"
#include "format/deferred.h"
#include "format/record_read.h"
#include "format/walltime.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/kmsg_format.h"
#include "record/textfmt.h"
#include "ring/caller.h"

#define CONSOLE_MAX_FAILURES 3 /* consecutive failed writes before a console is disabled */

struct pk_console_state {
	uint64_t seq;	    /* record being printed / next to print */
	size_t off;	    /* bytes of that record's text already printed */
	int started;	    /* its beginning (line break, prefix) is printed */
	uint64_t dropped;   /* records overwritten before this console printed them */
	struct prb_caller line_caller;
	int line_open;	    /* the last byte written was not a newline */
	int failures;
	int direct_fd;	    /* pk_console_fd_direct() at registration or the last reopen */
	unsigned id;	    /* unique among registered consoles; named in the lock word (C6) */
	/* C6: nonzero while a thread whose hold was taken over is still in (or
	 * finishing a record after) this console's write; only that thread
	 * touches the fields above meanwhile. A count, not a flag: the taker
	 * adds one after its CAS, the stuck thread takes one off when done,
	 * in either order. */
	_Atomic int stuck;
	unsigned stuck_set; /* the loop_src set the stuck thread still uses */
	/* PK_CON_THREADED, fixed at registration: printed by its own thread
	 * (C7, console_printer.c), never by the print loop. */
	struct pk_printer *printer;
	/* C10: a threaded file console's batch (NULL: each piece is written
	 * as it is made); fixed at registration, owned with the state. */
	struct con_batch *batch;
	struct console *next;
	/* pk_console_set_loglevel(): the console's own level + 1, 0 for none
	 * (so a zeroed state, the fallback's, has none). */
	_Atomic int own_level_plus1;
	/* pk_console_set_time_style(): the console's own style + 1, 0 to
	 * follow printk.time. */
	_Atomic int time_style_plus1;
};

static struct console *console_list;
/*
 * The console lock and the idle mark in one word, so that taking the lock
 * takes the mark with the same atomic:
 *   CON_OWNER(tid)   held by thread @tid (CON_TAKEN_OVER: by a crash handler
 *                    that took the consoles over from a stuck holder);
 *   0                free;
 *   seq + 1          free, and every enabled console stood at @seq, caught
 *                    up and in no record, when the last holder let go. A
 *                    printk whose record has that seq and a level no console
 *                    prints moves the mark on by one with a CAS instead of
 *                    taking the lock (the filtered fast path); the next
 *                    holder moves the consoles to the mark (absorb_idle).
 */
#define CON_HELD       (UINT64_C(1) << 63)
#define CON_OWNER(tid) (CON_HELD | UINT64_C(1) << 32 | (uint32_t)(tid))
#define CON_TAKEN_OVER_BIT (UINT64_C(1) << 33)
#define CON_TAKEN_OVER (CON_HELD | CON_TAKEN_OVER_BIT)
#define CON_IDLE_MAX   (CON_HELD - 2) /* the highest seq a mark can carry */
/*
 * C6: a held word may also say that its holder is inside a console's own
 * write: which console (its id), which set of loop buffers it prints from,
 * and a tick that differs from its previous write's, so that a word seen
 * unchanged for PK_CONSOLE_STALL_MS means one write that long.
 */
#define CON_OWNER_BITS (CON_HELD | UINT64_C(3) << 32 | UINT64_C(0xffffffff))
#define CON_WRITING    (UINT64_C(1) << 34)
#define CON_SET_SHIFT  35 /* 2 bits: LOOP_SETS */
#define CON_ID_SHIFT   37 /* 8 bits: CON_ID_MAX + 1 ids */
#define CON_TICK_SHIFT 45 /* 18 bits, up to bit 62 */
#define CON_ID_MAX     255u
#define CON_ID_FALLBACK CON_ID_MAX /* the stderr console that takes over from a disabled last one */
#define CON_WORD_SET(w) ((unsigned)((w) >> CON_SET_SHIFT) & 3u)
#define CON_WORD_ID(w)	((unsigned)((w) >> CON_ID_SHIFT) & CON_ID_MAX)
#define PK_CONSOLE_STALL_MS 1000
static pk_a64 console_word;
static pk_a64 store_gen;     /* bumped after every store or extension */
static _Atomic int emergency; /* panic/crash: crash-safe consoles only, skip unfinished records */
static _Atomic int crash_begun; /* pk_console_crash_begin(): nobody waits for a lossless console */
static _Thread_local PK_TLS_IE int in_console_write;
static _Thread_local PK_TLS_IE int recursion_seen;
/* This thread's signal mask outside signal handlers, taken when it first
 * prints: a printk inside a console write with the same mask comes from the
 * write callback (recursion), one with another mask from a signal handler
 * that interrupted the write (not recursion: no notice). */
static _Thread_local PK_TLS_IE uint64_t base_mask;
static _Thread_local PK_TLS_IE int base_mask_known;
/* C6: this thread's hold may be taken over while it is in a console's write
 * (printk's printing, pr_flush); and the console whose write it was in when
 * that happened, until it hands the console back. */
static _Thread_local PK_TLS_IE int hold_losable;
static _Thread_local PK_TLS_IE struct console *lost_con;
static _Thread_local PK_TLS_IE uint32_t write_tick;
/* C6: the lock word last seen held in a write, and since when. */
static pk_a64 stall_word;
static pk_a64 stall_since;

/* C6: a thread taken over in @con's write still owns @con's state. */
static PK_ALWAYS_INLINE int con_stuck(const struct console *con)
{
	return atomic_load_explicit(&con->state->stuck, memory_order_acquire) != 0;
}

/* pk_console_reopen_all() requests: the print loop's holder and each
 * printer thread reopen their consoles when this moved since they last
 * looked. */
static pk_a32 reopen_gen;
static uint32_t loop_reopen_gen; /* the holder's */

/* C7: threaded consoles registered; printk wakes their threads. */
static _Atomic int printers;
_Atomic int pk_printer_sleepers;

/* C7, C8: set once, before the first threaded console is registered. */
const struct pk_con_threads *_Atomic pk_con_threads;

/* Only for a threaded console, or after checking printers: then set. */
static PK_ALWAYS_INLINE const struct pk_con_threads *thr(void)
{
	return atomic_load_explicit(&pk_con_threads, memory_order_acquire);
}

/* console_drain_ms= */
static _Atomic int drain_ms = 3000;

void pk_console_set_drain_ms(int ms)
{
	atomic_store(&drain_ms, ms < 0 ? 0 : ms);
}

int pk_con_drain_ms(void)
{
	return atomic_load_explicit(&drain_ms, memory_order_relaxed);
}

/*
 * From printk, after its record is readable (its commit is a seq_cst RMW):
 * nothing but a load while every thread is awake. A thread that announced
 * itself later than this load looks at the ring after its announcement and
 * finds the record (console_printer.c); one that announced itself earlier is
 * woken here.
 */
static PK_ALWAYS_INLINE void maybe_wake_printers(void)
{
	if (PK_UNLIKELY(atomic_load_explicit(&printers, memory_order_relaxed)) &&
	    atomic_load_explicit(&pk_printer_sleepers, memory_order_seq_cst))
		thr()->wake();
}

/* C7: printed by its own thread, not by the console lock's holder. */
static PK_ALWAYS_INLINE int con_threaded(const struct console *con)
{
	return con->state->printer != NULL;
}

/* C9: consoles printed by the console lock's holder (not threaded),
 * registered, the stderr fallback included. While there are none, printk
 * stores, wakes the printer threads and is done: no lock, no idle mark. */
static _Atomic int locked_consoles;

static _Atomic int text_consoles;

static void count_locked_consoles(void)
{
	int n = 0, t = 0;

	for (struct console *con = console_list; con; con = con->state->next) {
		n += !con_threaded(con);
		t += !con->write_record;
	}
	atomic_store(&locked_consoles, n);
	atomic_store_explicit(&text_consoles, t, memory_order_relaxed);
}

/* Notices that stand for more than one message: seq + 1 (0: free or being
 * written) and the count. A writer empties the slot first, then fills
 * it; a reader takes a slot whose seq it read the same before and after
 * the count. */
static struct {
	_Atomic uint64_t seq1;
	_Atomic uint64_t n;
} weights[PK_CON_WEIGHTS];
static _Atomic unsigned weights_next;

void pk_console_note_weight(uint64_t seq, uint64_t n)
{
	if (n < 2)
		return;

	unsigned i = atomic_fetch_add(&weights_next, 1) % PK_CON_WEIGHTS;

	atomic_store(&weights[i].seq1, 0);
	atomic_store(&weights[i].n, n);
	atomic_store(&weights[i].seq1, seq + 1);
}

uint64_t pk_console_extra_weight(uint64_t from, uint64_t to)
{
	uint64_t extra = 0;

	if (PK_LIKELY(!atomic_load_explicit(&weights_next, memory_order_relaxed)))
		return 0;
	for (int i = 0; i < PK_CON_WEIGHTS; i++) {
		uint64_t s = atomic_load(&weights[i].seq1);

		if (!s || s - 1 < from || s - 1 >= to)
			continue;

		uint64_t n = atomic_load(&weights[i].n);

		if (atomic_load(&weights[i].seq1) == s && n > 1)
			extra += n - 1;
	}
	return extra;
}

int pk_console_text_listed(void)
{
	return atomic_load_explicit(&text_consoles, memory_order_relaxed);
}

PK_HOT int pk_console_in_write(void)
{
	return in_console_write;
}

static void pk_console_note_store(void)
{
	pk_fetch_add_sc(&store_gen, 1);
}

/* Consoles that stood at the idle mark skip what printk skipped meanwhile:
 * the records before @seq. */
static void absorb_idle(uint64_t seq)
{
	for (struct console *con = console_list; con; con = con->state->next)
		if (!con_threaded(con) && (con->flags & PK_CON_ENABLED) && !con_stuck(con) &&
		    !con->state->started && con->state->seq < seq)
			con->state->seq = seq;
}

/* Take the lock for thread @tid if it is free. */
static int console_trylock_tid(uint32_t tid)
{
	uint64_t old = pk_load_relaxed(&console_word);

	do {
		if (old & CON_HELD)
			return 0;
		/* A failed CAS: the lock was taken, or a filtered printk moved the mark. */
	} while (!pk_cas_sc(&console_word, &old, CON_OWNER(tid)));
	if (old)
		absorb_idle(old - 1);
	return 1;
}

static int console_trylock(void)
{
	struct prb_caller me;

	pk_caller_get(&me);
	return console_trylock_tid(me.tid);
}

static void console_unlock_raw(void)
{
	hold_losable = 0;
	atomic_store_explicit(&console_word, 0, memory_order_seq_cst);
}

/* Every enabled console stands at @next with no record started. */
static int all_at(uint64_t next)
{
	for (struct console *con = console_list; con; con = con->state->next)
		if (!con_threaded(con) && (con->flags & PK_CON_ENABLED) &&
		    (con_stuck(con) || con->state->started || con->state->seq != next))
			return 0;
	return 1;
}

/* Let go, leaving the idle mark at @next if every enabled console is
 * caught up there with no record started. */
static void console_unlock_idle(uint64_t next)
{
	uint64_t word = next <= CON_IDLE_MAX && all_at(next) ? next + 1 : 0;

	hold_losable = 0;
	atomic_store_explicit(&console_word, word, memory_order_seq_cst);
}

/* The highest own level of a registered console (0 if none has one): a
 * record at or above console_loglevel may still be due on that console. */
_Atomic int pk_console_own_level_max; /* read inline: console_internal.h */
/* The default log's console_levels_gen when the lock's holder last applied
 * its table of levels set from outside (apply_shared_levels()). */
pk_a32 pk_console_loop_levels_gen;	/* read inline: console_internal.h */
pk_a32 pk_console_levels_reapply;	/* a console was registered: apply the table to it */
static void apply_shared_levels(void);

/* apply_shared_levels() for a record whose suppressed flag printk worked
 * out before: the flag is made again, in @fresh, under the new levels. */
static PK_NOINLINE const struct pk_con_rec *apply_shared_levels_to(const struct pk_con_rec *hint,
								  struct pk_con_rec *fresh)
{
	apply_shared_levels();
	*fresh = *hint;
	fresh->suppressed = pk_console_level_suppressed(hint->level);
	return fresh;
}

static PK_ALWAYS_INLINE struct pk_log_shared *levels_table(void)
{
	struct pk_log *log = pk_printk_log_peek();

	return log ? pk_log_shared(log) : NULL;
}

/* The default log's console_levels_gen, found by the last
 * apply_shared_levels(); NULL until then and after the log changed
 * (pk_console_reset_positions()), which sends the next printk to the
 * holder to look again. Cached: printk's filtered path reads it. */
pk_a32 *_Atomic pk_console_levels_gen_word; /* read inline: console_internal.h */


PK_HOT int pk_console_level_suppressed(int level)
{
	return !pk_cfg_ignore_loglevel() && level >= pk_cfg_console_loglevel() &&
	       level >= atomic_load_explicit(&pk_console_own_level_max, memory_order_relaxed);
}

/* 1 if @con does not print records of @level: its own level, else
 * console_loglevel. Only needed while some console has its own level;
 * otherwise the record's suppressed flag says the same. */
static PK_NOINLINE int con_level_skip(const struct console *con, int level)
{
	int own = atomic_load_explicit(&con->state->own_level_plus1, memory_order_relaxed) - 1;

	if (pk_cfg_ignore_loglevel())
		return 0;
	return level >= (own >= 0 ? own : pk_cfg_console_loglevel());
}

static PK_ALWAYS_INLINE int con_skips(const struct console *con, int level, int suppressed)
{
	return suppressed ||
	       (PK_UNLIKELY(atomic_load_explicit(&pk_console_own_level_max, memory_order_relaxed)) &&
		con_level_skip(con, level));
}

/*
 * The levels @con skips as a mask (bit N: level N), for passing a run of
 * records by their level alone: con_skips() for every level at once. Both
 * of its terms skip a level and every level above it (pk_console_level_
 * suppressed() from the larger of console_loglevel and the largest own
 * level; con_level_skip() from the console's own level, else console_
 * loglevel), so the mask is every level from the lower of the two up.
 */
static PK_ALWAYS_INLINE unsigned con_skip_levels(const struct console *con)
{
	if (pk_cfg_ignore_loglevel())
		return 0;

	int loglevel = pk_cfg_console_loglevel();
	int own_max = atomic_load_explicit(&pk_console_own_level_max, memory_order_relaxed);
	int from = loglevel > own_max ? loglevel : own_max;

	if (PK_UNLIKELY(own_max)) {
		int own = atomic_load_explicit(&con->state->own_level_plus1, memory_order_relaxed) - 1;
		int mine = own >= 0 ? own : loglevel;

		if (mine < from)
			from = mine;
	}
	if (from < 0)
		from = 0;
	return from >= 8 ? 0 : 0xffu << from & 0xffu;
}

/* The idle mark stands before @seq's predecessor: the writer of an earlier
 * record, itself on the filtered path, is about to move it. Wait for that
 * a moment (bounded: it may have been preempted) rather than go through the
 * console lock, which would read the records the mark skips. */
#define IDLE_MARK_SPINS 64

static PK_NOINLINE int skip_after_mark_moves(uint64_t seq, uint64_t word)
{
	for (int i = 0; i < IDLE_MARK_SPINS; i++) {
		if ((word & CON_HELD) || word == 0 || word > seq + 1)
			return 0;
#ifdef __SSE2__
		_mm_pause();
#endif
		word = seq + 1;
		if (pk_cas_sc(&console_word, &word, seq + 2))
			return 1;
	}
	return 0;
}

PK_HOT int pk_console_skip_suppressed(uint64_t seq)
{
	uint64_t expected = seq + 1;

	/* A level set from outside may let the record through: the console
	 * lock's holder applies it, and decides again, before it prints. */
	if (PK_UNLIKELY(pk_console_shared_levels_moved()))
		return 0;
	if (seq >= CON_IDLE_MAX)
		return 0;
	if (pk_cas_sc(&console_word, &expected, seq + 2))
		return 1;
	return expected != 0 && expected < seq + 1 && !(expected & CON_HELD) &&
	       skip_after_mark_moves(seq, expected);
}

void pk_console_lanes_merged(struct prb *rb, uint64_t seq, uint64_t n, unsigned levels)
{
	struct pk_log *log = pk_printk_log_peek();

	/* The mark counts the default log's seqs: a merge into a log being
	 * replaced must not move it. */
	if (!log || pk_log_ring(log) != rb)
		return;
	if (!n || n > CON_IDLE_MAX || seq >= CON_IDLE_MAX - n || PK_UNLIKELY(pk_console_shared_levels_moved()))
		return;
	for (int level = 0; level < 8; level++)
		if ((levels & 1u << level) && !pk_console_level_suppressed(level))
			return;

	uint64_t expected = seq + 1;

	/* Fails when a console is behind @seq, the lock is held (its holder
	 * passes them), or the mark moved on: nothing to undo. */
	pk_cas_sc(&console_word, &expected, seq + n + 1);
}

void pk_console_catch_up(struct prb *rb)
{
	/* No idle mark, the lock free: go through the lock once, as a
	 * filtered ring store that found no mark does; its holder passes
	 * what nobody prints and leaves the mark where merges move it. */
	if (pk_load_relaxed(&console_word) == 0 && atomic_load_explicit(&locked_consoles, memory_order_relaxed))
		pk_console_flush(rb, NULL);
}

PK_HOT int pk_console_threads_only(void)
{
	return atomic_load_explicit(&locked_consoles, memory_order_relaxed) == 0 &&
	       PK_LIKELY(!pk_console_shared_levels_moved()) && !pk_console_crashing();
}

PK_HOT int pk_console_levels_settled(void)
{
	if (PK_LIKELY(!pk_console_shared_levels_moved()))
		return 1;
	/* Not looked at since the log changed: there is nothing to apply
	 * while nobody ever set a level in its table (a new log), so its
	 * first filtered lines need not go the holder's way. */
	struct pk_log_shared *sh;

	return !atomic_load_explicit(&pk_console_levels_gen_word, memory_order_acquire) &&
	       !pk_load_relaxed(&pk_console_levels_reapply) &&
	       (!(sh = levels_table()) || !pk_load_acquire(&sh->console_levels_gen));
}

PK_HOT void pk_console_wake_printers(void)
{
	maybe_wake_printers();
}

static int take_over_stalled(void);

/* For registration and flushing from normal context: wait for the lock (or
 * take it over from a holder stuck in a write, C6). Returns 0 on timeout,
 * 1 when it got the lock, 2 when it took it over (records stored meanwhile
 * may be waiting to print). */
static int console_lock_wait(int timeout_ms)
{
	uint64_t start = pk_clock_ns();

	while (!console_trylock()) {
		if (take_over_stalled())
			return 2;
		if (timeout_ms >= 0 && pk_clock_ns() - start > (uint64_t)timeout_ms * 1000000u)
			return 0;
		struct timespec ts = { 0, 200 * 1000 };

		nanosleep(&ts, NULL);
	}
	return 1;
}

/* ------------------------------------------------------------- reopen -- */

static int batch_flush(struct console *con);

/*
 * @con's reopen, by whoever owns its state (the lock's holder; for a
 * threaded console, the holder of its owner word), with cancellation held
 * off (see con_callback()). A console that reopens well prints again.
 */
static int reopen_console(struct console *con)
{
	int state, ignored;

	if (con->state->batch)
		batch_flush(con); /* C10: what came before goes to the file it was for */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	int err = con->reopen(con);

	pthread_setcancelstate(state, &ignored);
	con->state->direct_fd = pk_console_fd_direct(con); /* it may have changed, even on failure */
	if (!err) {
		con->state->failures = 0;
		con->flags |= PK_CON_ENABLED;
	}
	return err;
}

/* Holding the lock, after pk_console_reopen_all(): reopen the print
 * loop's consoles (threaded ones reopen themselves). */
static PK_COLD PK_NOINLINE void reopen_loop_consoles(void)
{
	loop_reopen_gen = pk_load_relaxed(&reopen_gen);
	for (struct console *con = console_list; con; con = con->state->next)
		if (!con_threaded(con) && !con_stuck(con) && con->reopen)
			reopen_console(con);
}

/* ------------------------------------------------------------- output -- */

/* A console's output, staged (outbuf.h) and written in pieces of at most
 * the buffer's size. */
struct out {
	struct pk_outbuf ob;
	struct console *con;
	char buf[1024];
};

/* Where records come from (the ring, and the hint for the newest one), and
 * where the loop stages its output. */
struct con_src {
	struct prb *rb;
	const struct pk_con_rec *hint;
	struct prb_record buf;
	struct out out;
	char ext[PK_MESSAGE_MAX]; /* an extended console's record in /dev/kmsg form */
	struct pk_record rec;	  /* a write_record console's record */
	/* A printer thread's deferred formats, met before (NULL: the loop's
	 * sets, and when memory is short): it reads every record. */
	struct pk_dfmt_cache *fc;
};

/*
 * The print loop's buffers, 3 KiB a set. Static, not on the stack: printk
 * runs on signal handlers' stacks, which may be small (SIGSTKSZ). Only the
 * console lock's holder uses the current set (C1); a holder taken over in a
 * write (C6) keeps its set until it hands its console back, and a crash
 * handler that takes the consoles over uses a set nobody may be inside.
 * With every set in use, nobody takes over.
 */
#define LOOP_SETS 4
static struct con_src loop_src[LOOP_SETS];
static unsigned cur_set; /* the holder's; changed by whoever takes over */

/* A set that is neither in @busy nor kept by a stuck console; -1 if none. */
static int free_set(unsigned busy)
{
	for (struct console *con = console_list; con; con = con->state->next)
		if (con_stuck(con))
			busy |= 1u << con->state->stuck_set;
	for (int i = 0; i < LOOP_SETS; i++)
		if (!(busy & (1u << i)))
			return i;
	return -1;
}

static struct console *console_by_id(unsigned id)
{
	for (struct console *con = console_list; con; con = con->state->next)
		if (con->state->id == id)
			return con;
	return NULL;
}

/* The lowest id no registered console has; -1 if all are taken. */
static int unused_id(void)
{
	for (unsigned id = 0; id < CON_ID_FALLBACK; id++)
		if (!console_by_id(id))
			return (int)id;
	return -1;
}

/*
 * C6: mark @con stuck in a write with the buffers of set @stuck_set, move
 * the holder to set @set, and say so. Holding the lock just taken over.
 */
static void adopt_stuck_holder(struct console *con, unsigned stuck_set, int set)
{
	con->state->stuck_set = stuck_set;
	atomic_fetch_add_explicit(&con->state->stuck, 1, memory_order_acq_rel);
	cur_set = (unsigned)set;
	pk_store_notice(4, "printk: console [%.16s] stuck in a write for over %d ms: the others go on without it\n",
			con->name, PK_CONSOLE_STALL_MS);
}

/*
 * C6: the lock is held by a thread inside a console's write: take it over
 * if that same write has lasted PK_CONSOLE_STALL_MS since this or another
 * waiter first saw it. Costs a clock read, only when the lock is taken.
 */
static PK_NOINLINE int take_over_stalled(void)
{
	uint64_t w = pk_load_acquire(&console_word);

	if ((w & (CON_HELD | CON_WRITING)) != (CON_HELD | CON_WRITING))
		return 0;

	struct prb_caller me;

	pk_caller_get(&me);
	if ((uint32_t)w == me.tid)
		return 0; /* our own write, interrupted: waiting cannot help */

	uint64_t now = pk_clock_ns();

	if (pk_load_acquire(&stall_word) != w) {
		pk_store_relaxed(&stall_since, now);
		pk_store_release(&stall_word, w);
		return 0;
	}
	if ((int64_t)(now - pk_load_relaxed(&stall_since)) < (int64_t)PK_CONSOLE_STALL_MS * 1000000)
		return 0;

	/* The list cannot change while @w holds the lock; what the registry
	 * last wrote is visible through the holder's release and our acquire. */
	struct console *con = console_by_id(CON_WORD_ID(w));
	int set = free_set(1u << CON_WORD_SET(w));
	uint64_t expected = w;

	if (!con || set < 0 || !pk_cas_sc(&console_word, &expected, CON_OWNER(me.tid)))
		return 0;
	adopt_stuck_holder(con, CON_WORD_SET(w), set);
	return 1;
}


/*
 * The last enabled console was just disabled: stderr takes over where it
 * stood (@seq: the record after the one whose write failed), as at start-up
 * when no console given could be registered, so the notice that says so and
 * what follows are not lost with it. Runs under the console lock, possibly
 * in a signal handler: the state is static, nothing is allocated. A
 * threaded console still enabled counts as its thread publishes it (C7: a
 * disabled one publishes UINT64_MAX), so its flags are not read here.
 */
static struct pk_console_state fallback_state;

static void fall_back_to_stderr(uint64_t seq)
{
	struct console *err_con = pk_console_stderr();

	if (err_con->state)
		return;
	for (struct console *c = console_list; c; c = c->state->next)
		if (con_threaded(c) ? !thr()->disabled(c) : (c->flags & PK_CON_ENABLED) != 0)
			return;
	fallback_state = (struct pk_console_state){
		.seq = seq,
		/* Not pk_console_fd_direct(): stderr is always written through
		 * its own write, which checks that fd 2 is still the file it
		 * remembers, and asking would make it take fd 2 as it is now. */
		.direct_fd = -1,
		.id = CON_ID_FALLBACK,
	};
	err_con->state = &fallback_state;
	err_con->flags |= PK_CON_ENABLED;
	struct console **pp = &console_list;

	while (*pp)
		pp = &(*pp)->state->next;
	*pp = err_con;
	count_locked_consoles();
}

/*
 * C7: a threaded console was disabled by whoever owned its state (its
 * thread, the exit drain, the crash path), which need not hold the console
 * list. Where it stood + 1 is kept here (the lowest, if several fail) for
 * the next holder of the console lock that settles it: the thread itself
 * once it let go of its console (printer_settle_fallback()), or exit.
 */
static pk_a64 fallback_wanted;

static void want_fallback(const struct console *failed)
{
	uint64_t want = failed->state->seq + 1, cur = pk_load_relaxed(&fallback_wanted);

	if (failed == pk_console_stderr())
		return; /* console=stderr,threaded: nothing to fall back to */
	while ((cur == 0 || want < cur) && !pk_cas_sc(&fallback_wanted, &cur, want))
		;
}

/* Holding the console lock: stderr takes over for a threaded console that
 * was disabled, if it was the last enabled one. Returns 1 if it did. */
static int settle_fallback(void)
{
	uint64_t want = pk_load_relaxed(&fallback_wanted) ? atomic_exchange(&fallback_wanted, 0) : 0;

	if (!want)
		return 0;
	fall_back_to_stderr(want - 1);
	return pk_console_stderr()->state == &fallback_state;
}

static void free_state(struct console *con)
{
	if (con->state != &fallback_state) {
		if (con->state->printer)
			thr()->printer_free(con->state->printer);
		free(con->state->batch);
		free(con->state);
	}
	con->state = NULL;
}

/* A write failed: count it; disable the console after too many in a row. */
static PK_NOINLINE void con_write_failed(struct console *con, int err)
{
	if (++con->state->failures >= CONSOLE_MAX_FAILURES) {
		con->flags &= ~PK_CON_ENABLED;
		if (con_threaded(con))
			want_fallback(con); /* C7: its owner does not hold the list */
		else if (con != pk_console_stderr())
			fall_back_to_stderr(con->state->seq);
		pk_store_notice(3, "printk: console [%s] disabled after %d failed writes (error %d)\n",
				con->name, con->state->failures, -err);
	}
}

/*
 * A console's own write or reopen, with thread cancellation held off: a
 * thread cancelled inside one (write(2), poll(2), open(2) are cancellation
 * points) would keep the console lock for ever and every console would go
 * silent. A pending cancel acts at the thread's next cancellation point.
 * pthread_setcancelstate() only changes the calling thread's own flags.
 */
static PK_NOINLINE int con_callback(struct console *con, const char *buf, size_t len, const struct pk_record *rec)
{
	int state, ignored, err = 0;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	if (rec)
		err = con->write_record(con, rec);
	else if (con->write_checked)
		err = con->write_checked(con, buf, len);
	else if (con->write)
		con->write(con, buf, (unsigned)len);
	pthread_setcancelstate(state, &ignored);
	return err;
}

/*
 * C6: a console's own write, with the lock word saying so while it runs
 * when this hold may be taken over. If the CAS that ends it fails, another
 * thread took the lock: this thread now owns only @con (lost_con) and must
 * finish the record on it and hand it back. A word that changed before the
 * write (a crash handler took the consoles over) is left alone.
 */
static PK_NOINLINE int con_callback_marked(struct console *con, const char *buf, size_t len,
					   const struct pk_record *rec)
{
	if (!hold_losable || lost_con)
		return con_callback(con, buf, len, rec);

	uint64_t held = pk_load_relaxed(&console_word);
	uint64_t w = (held & CON_OWNER_BITS) | CON_WRITING | (uint64_t)cur_set << CON_SET_SHIFT |
		     (uint64_t)con->state->id << CON_ID_SHIFT | (uint64_t)(++write_tick & 0x3ffff) << CON_TICK_SHIFT;
	uint64_t expected = held;

	if (!(held & CON_HELD) || (held & (CON_TAKEN_OVER_BIT | CON_WRITING)) ||
	    !atomic_compare_exchange_strong_explicit(&console_word, &expected, w, memory_order_release,
						     memory_order_relaxed))
		return con_callback(con, buf, len, rec);

	int err = con_callback(con, buf, len, rec);

	expected = w;
	if (!atomic_compare_exchange_strong_explicit(&console_word, &expected, held, memory_order_acq_rel,
						     memory_order_acquire))
		lost_con = con;
	return err;
}

/* Hand @len bytes to @con's write; returns 0 or the error it reported.
 * Inlined: every frame between printk and write(2) costs a mispredicted
 * return after the system call. The direct write is the raw system call,
 * which (unlike glibc's write()) is no cancellation point. */
static PK_ALWAYS_INLINE int con_write_now(struct console *con, const char *buf, size_t len)
{
	int err = 0;

	in_console_write++;
	if (con->state->direct_fd >= 0) {
		long n = pk_raw_write(con->state->direct_fd, buf, len);

		if (PK_LIKELY(n == (long)len)) {
			len = 0;
		} else if (n > 0) {
			buf += n;
			len -= (size_t)n;
		}
	}
	if (len)
		err = con_callback_marked(con, buf, len, NULL);
	in_console_write--;
	if (PK_UNLIKELY(err)) {
		if (PK_LIKELY(!lost_con))
			con_write_failed(con, err);
		else
			con->state->failures++; /* C6: the flags are the holder's now */
	} else {
		con->state->failures = 0;
	}
	return err;
}

/*
 * C10: a batching console's buffer. 64 KiB of lines go out in one write
 * (the page cache takes that in about the time of a few single-line
 * writes); a piece is at most the loop's staging buffer or one extended
 * record, far below it.
 */
#define CON_BATCH_BYTES (64 * 1024)
#define CON_BATCH_MARKS 1024

struct con_batch {
	size_t len;
	unsigned nmarks;
	struct {
		size_t end;   /* where the piece ends in buf */
		uint64_t seq; /* the console's seq after it */
	} marks[CON_BATCH_MARKS];
	char buf[CON_BATCH_BYTES];
};

static int batch_flush(struct console *con);

/* C10: append a piece; a full buffer is written first. */
static PK_NOINLINE int batch_put(struct console *con, const char *p, size_t n)
{
	struct con_batch *b = con->state->batch;
	int err = 0;

	if (n > sizeof(b->buf) - b->len || b->nmarks == CON_BATCH_MARKS)
		err = batch_flush(con);
	if (!(con->flags & PK_CON_ENABLED))
		return err ? err : -EIO; /* disabled by that flush: stderr took over */
	if (n > sizeof(b->buf))
		return con_write_now(con, p, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->marks[b->nmarks].end = b->len;
	b->marks[b->nmarks].seq = con->state->seq;
	b->nmarks++;
	return 0;
}

/*
 * C10: a batch write failed after @done bytes were known written: the
 * pieces from there are written one by one, as they would have been
 * without a batch, each with the console's seq of its piece (a failure's
 * count, the disabling and the fall-back's start depend on it). A piece
 * the failed write may have written in part is written whole.
 */
static PK_COLD PK_NOINLINE int batch_replay(struct console *con, size_t done)
{
	struct pk_console_state *st = con->state;
	struct con_batch *b = st->batch;
	uint64_t end_seq = st->seq;
	int err = 0;

	for (unsigned i = 0; i < b->nmarks; i++) {
		size_t start = i ? b->marks[i - 1].end : 0, end = b->marks[i].end;

		if (end <= done)
			continue;
		if (start < done)
			start = done;
		st->seq = b->marks[i].seq;
		err = con_write_now(con, b->buf + start, end - start);
		if (!(con->flags & PK_CON_ENABLED))
			break; /* stderr takes over after this piece's record */
	}
	if (con->flags & PK_CON_ENABLED)
		st->seq = end_seq;
	b->len = 0;
	b->nmarks = 0;
	return err;
}

/* C10: write the batch; 0, or the error of the last piece that failed. */
static int batch_flush(struct console *con)
{
	struct pk_console_state *st = con->state;
	struct con_batch *b = st->batch;
	size_t len = b->len, done = 0;
	int err = 0;

	if (!len) {
		b->nmarks = 0;
		return 0;
	}
	in_console_write++;
	if (st->direct_fd >= 0) {
		long n = pk_raw_write(st->direct_fd, b->buf, len);

		while (n == -EINTR)
			n = pk_raw_write(st->direct_fd, b->buf, len);
		if (n > 0)
			done = (size_t)n;
	}
	if (done < len)
		err = con_callback(con, b->buf + done, len - done, NULL);
	in_console_write--;
	if (PK_UNLIKELY(err))
		return batch_replay(con, done);
	st->failures = 0;
	b->len = 0;
	b->nmarks = 0;
	return 0;
}

static PK_ALWAYS_INLINE int con_write(struct console *con, const char *buf, size_t len)
{
	if (PK_UNLIKELY(con->state->batch != NULL))
		return batch_put(con, buf, len);
	return con_write_now(con, buf, len);
}

static int out_sink(void *con, const char *p, size_t n)
{
	return con_write(con, p, n);
}

/*
 * C10: a batching console's pieces are staged in its batch itself, where
 * they stay: the sink only counts them in and marks them (batch_put()'s
 * work without its copy), and makes room for the next piece.
 */
static int batch_room(struct con_batch *b)
{
	return sizeof(b->buf) - b->len >= sizeof(((struct out *)0)->buf) && b->nmarks < CON_BATCH_MARKS;
}

static int out_sink_batch(void *arg, const char *p, size_t n)
{
	struct out *o = arg;
	struct console *con = o->con;
	struct con_batch *b = con->state->batch;

	(void)p; /* b->buf + b->len: staged in place */
	b->len += n;
	b->marks[b->nmarks].end = b->len;
	b->marks[b->nmarks].seq = con->state->seq;
	b->nmarks++;
	if (!batch_room(b))
		batch_flush(con);
	o->ob.buf = b->buf + b->len;
	o->ob.cap = sizeof(b->buf) - b->len;
	return (con->flags & PK_CON_ENABLED) ? 0 : -EIO; /* disabled: stderr took over */
}

static void out_init(struct out *o, struct console *con)
{
	struct con_batch *b = con->state->batch;

	o->con = con;
	if (b) {
		if (!batch_room(b))
			batch_flush(con);
		pk_outbuf_init(&o->ob, b->buf + b->len, sizeof(b->buf) - b->len, out_sink_batch, o);
		return;
	}
	pk_outbuf_init(&o->ob, o->buf, sizeof(o->buf), out_sink, con);
}

static void out_bytes(struct out *o, const char *s, size_t n)
{
	pk_outbuf_put(&o->ob, s, n);
}

static void out_str(struct out *o, const char *s)
{
	out_bytes(o, s, strlen(s));
}

static void out_uint(struct out *o, uint64_t v)
{
	char tmp[24];
	char *p = pk_put_uint(tmp + sizeof(tmp), v, 0, ' ');

	out_bytes(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* dmesg --color's scheme: time green; alert/emerg reverse red, crit bold red,
 * err red, warn bold. */
static const char *level_color(unsigned level)
{
	switch (level) {
	case 0:
	case 1:
		return "\033[7m\033[31m";
	case 2:
		return "\033[1m\033[31m";
	case 3:
		return "\033[31m";
	case 4:
		return "\033[1m";
	default:
		return NULL;
	}
}

/*
 * "[%5lu." of @sec, backwards ending at @end; returns the start. Consecutive
 * records mostly share their second: the text is kept and copied. Per
 * thread: a crash handler on another thread that takes the console over
 * from a stuck holder never shares it (one that interrupts this very
 * function on its own thread may garble prefixes; the process is dying).
 */
#define SEC_TEXT_ROOM 16 /* "[%5lu." is 7 to 13 bytes: a 64-bit ns clock has 11 digits of seconds */
static _Thread_local PK_TLS_IE uint64_t cached_sec = UINT64_MAX;
static _Thread_local PK_TLS_IE char cached_sec_text[SEC_TEXT_ROOM]; /* right-aligned */
static _Thread_local PK_TLS_IE size_t cached_sec_len;

static PK_NOINLINE void cache_seconds(uint64_t sec)
{
	char field[24];
	size_t len = pk_seconds_field(field, sec);

	memcpy(cached_sec_text + SEC_TEXT_ROOM - len, field, len);
	cached_sec_len = len;
	cached_sec = sec;
}

/* One fixed-size copy puts the field in place; it also writes the bytes
 * before it, up to SEC_TEXT_ROOM back from @end: put_prefix()'s callers
 * leave that room (PK_PREFIX_MAX, PK_CON_PREFIX_ROOM). */
static PK_ALWAYS_INLINE char *put_seconds(char *end, uint64_t sec)
{
	if (PK_UNLIKELY(sec != cached_sec))
		cache_seconds(sec);
	memcpy(end - SEC_TEXT_ROOM, cached_sec_text, SEC_TEXT_ROOM);
	return end - cached_sec_len;
}

/* textfmt.h's prefix with the seconds from this file's cache; built
 * backwards ending at @end. Returns the start; @end itself when neither the
 * time nor the caller is on. */
static PK_ALWAYS_INLINE char *put_prefix(char *end, uint64_t ts_nsec, uint32_t tid, int time, int caller)
{
	return pk_put_prefix(end, ts_nsec, tid, time, caller, put_seconds);
}

/* The time style of @con's lines: its own, or printk.time. */
static PK_ALWAYS_INLINE int con_time_style(const struct console *con)
{
	int own = atomic_load_explicit(&con->state->time_style_plus1, memory_order_relaxed);

	return own ? own - 1 : pk_cfg_printk_time();
}

/*
 * The prefix with a wall-clock time (PK_TIME_ISO, PK_TIME_ISO_UTC): the
 * record's timestamp plus CLOCK_REALTIME - CLOCK_MONOTONIC now, so a line
 * printed late (a printer thread catching up) shows when its record was
 * stored, and one printed after a clock step shows the new wall clock
 * (docs/clock.md). A step of more than PK_WALL_STEP_NS is written into
 * the log's header for its readers. Built backwards ending at @end (at most
 * 1 + PK_WALL_TEXT_MAX + 14 bytes); returns the start.
 */
#define PK_WALL_STEP_NS 1000000 /* 1 ms: two processes' readings never differ by that much */
static PK_COLD PK_NOINLINE char *put_wall_prefix(char *end, uint64_t ts_nsec, uint32_t tid, int style, int caller)
{
	char text[PK_WALL_TEXT_MAX];
	int64_t off = pk_realtime_offset_ns();
	struct pk_log *log = pk_printk_log_peek();
	char *p = pk_put_prefix(end, 0, tid, 0, caller, pk_put_seconds_field);

	if (log) {
		pk_a64 *slot = &pk_log_shared(log)->realtime_offset_ns;
		int64_t was = (int64_t)atomic_load_explicit(slot, memory_order_relaxed);

		if (was - off > PK_WALL_STEP_NS || off - was > PK_WALL_STEP_NS)
			atomic_store_explicit(slot, (uint64_t)off, memory_order_relaxed);
	}

	size_t n = pk_wall_format(text, (int64_t)ts_nsec + off, style == PK_TIME_ISO_UTC);

	*--p = ' '; /* before the caller too: "[T1]" is not glued to the time */
	p -= n;
	memcpy(p, text, n);
	return p;
}

/* The prefix of @con's lines for @r, backwards ending at @end. */
static PK_ALWAYS_INLINE char *con_prefix(const struct console *con, char *end, uint64_t ts_nsec, uint32_t tid)
{
	int style = con_time_style(con);

	if (PK_UNLIKELY(style >= PK_TIME_ISO))
		return put_wall_prefix(end, ts_nsec, tid, style, pk_cfg_printk_caller());
	return put_prefix(end, ts_nsec, tid, style, pk_cfg_printk_caller());
}

static void out_prefix(struct out *o, const struct pk_con_rec *r)
{
	char buf[PK_PREFIX_MAX];
	char *end = buf + sizeof(buf);
	char *p = con_prefix(o->con, end, r->ts_nsec, r->caller.tid);

	if (p == end)
		return;
	if (o->con->flags & PK_CON_COLOR) {
		out_str(o, "\033[32m");
		out_bytes(o, p, (size_t)(end - p) - 1);
		out_str(o, "\033[0m ");
	} else {
		out_bytes(o, p, (size_t)(end - p));
	}
}

/* Bytes a terminal would act on: C0 controls but tab (a newline never gets
 * here), DEL, and the C1 controls U+0080..U+009F in UTF-8 (0xc2 0x80..0x9f);
 * returns how many bytes at @p form one (0: none). */
static size_t control_len(const unsigned char *p, size_t n)
{
	if ((p[0] < 0x20 && p[0] != '\t') || p[0] == 0x7f)
		return 1;
	if (p[0] == 0xc2 && n > 1 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

/* @n bytes of text, each control byte as \xNN (PK_CON_ESCAPE). */
static void out_escaped(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;

	for (size_t i = 0; i < n;) {
		size_t c = control_len(p + i, n - i);

		if (!c) {
			i++;
			run++;
			continue;
		}
		out_bytes(o, (const char *)p + i - run, run);
		run = 0;
		for (size_t k = 0; k < c; k++, i++) {
			char hex[4] = { '\\', 'x', "0123456789abcdef"[p[i] >> 4], "0123456789abcdef"[p[i] & 15] };

			out_bytes(o, hex, sizeof(hex));
		}
	}
	out_bytes(o, (const char *)p + n - run, run);
}

/* Text bytes [from, to) of @r; a newline inside starts a prefixed line (an
 * empty last line of a finished record too, as the kernel prints it). */
static void out_text(struct out *o, const struct pk_con_rec *r, size_t from, size_t to)
{
	const int escape = o->con->flags & PK_CON_ESCAPE;
	const char *color = (o->con->flags & PK_CON_COLOR) ? level_color(r->level) : NULL;

	while (from < to) {
		const char *nl = memchr(r->text + from, '\n', to - from);
		size_t end = nl ? (size_t)(nl - r->text) : to;

		if (color && end > from)
			out_str(o, color);
		if (escape)
			out_escaped(o, r->text + from, end - from);
		else
			out_bytes(o, r->text + from, end - from);
		if (color && end > from)
			out_str(o, "\033[0m");
		if (!nl)
			break;
		out_str(o, "\n");
		from = end + 1;
		if (from < r->text_len || !r->open)
			out_prefix(o, r);
	}
}

static int same_caller(const struct prb_caller *a, const struct prb_caller *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->ctx == b->ctx;
}

/*
 * The record at @seq, as a console prints it, into @v: the view printk
 * handed over (src->hint) when it is that record, else a ring read that
 * includes the open newest record (an emergency flush skips records whose
 * writer will never finish them). Prints nothing. v->seq is past @seq when
 * records were lost. Returns 0, or prb_read()'s error when there is nothing
 * to read at @seq yet.
 */
static int fetch(struct con_src *src, uint64_t seq, struct pk_con_rec *v)
{
	if (src->hint && src->hint->seq == seq) {
		*v = *src->hint;
		return 0;
	}

	struct prb_record *r = &src->buf;
	unsigned flags = PRB_READ_UNFINALIZED;

	if (atomic_load_explicit(&emergency, memory_order_relaxed))
		flags |= PRB_READ_SKIP_UNFINISHED;

	int err = pk_rec_read_cached(src->rb, seq, r, flags, src->fc);

	if (err)
		return err;
	v->seq = r->seq;
	v->ts_nsec = r->ts_nsec;
	v->caller = r->caller;
	v->level = r->level;
	v->flags = r->flags;
	v->open = r->rflags & PRB_REC_UNFINALIZED;
	v->suppressed = pk_console_level_suppressed(r->level);
	v->text = r->text;
	v->text_len = r->text_len;
	return 0;
}

/*
 * Nothing at @st's position: normally it is caught up. A position past the
 * ring's last reservation means the ring under it was replaced (a log file
 * truncated under its mapping is swapped for private memory, numbered from
 * 0): restart at the new ring's oldest record. The hint, a record of the
 * old ring, is dropped: its seq may come again. Returns 1 if @st moved.
 */
static PK_NOINLINE int restart_if_beyond(struct con_src *src, struct pk_console_state *st)
{
	struct prb *rb = src->rb;

	if (PK_LIKELY(st->seq <= prb_next_reserve_seq(rb)))
		return 0;
	src->hint = NULL;
	st->seq = prb_first_seq(rb);
	st->off = 0;
	st->started = 0;
	return 1;
}

/*
 * Print the next piece of work for @con: the rest of its current record, or
 * the next record. Returns 1 if it made progress, 0 if it is caught up.
 */
/* @con's write_record: the record as the public struct. Counted like
 * con_write (C3, C6, failures). */
static int con_write_record(struct console *con, const struct pk_record *rec)
{
	in_console_write++;

	int err = con_callback_marked(con, NULL, 0, rec);

	in_console_write--;
	if (err == -EAGAIN && con_threaded(con))
		return err; /* not taken: its thread offers it again later */
	if (PK_UNLIKELY(err)) {
		if (PK_LIKELY(!lost_con))
			con_write_failed(con, err);
		else
			con->state->failures++;
	} else {
		con->state->failures = 0;
	}
	return err;
}

/*
 * An extended console (PK_CON_EXTENDED, the kernel's CON_EXTENDED as
 * netconsole uses it) gets each record whole, in /dev/kmsg form, once it is
 * final: a line still open waits for its end; a console with write_record
 * gets the same records as fields. Dropped records show as a gap in the
 * seq field, with no notice (as the kernel). Returns as print_one.
 */
static PK_NOINLINE int print_one_extended(struct con_src *src, struct console *con)
{
	struct pk_console_state *st = con->state;
	struct prb_record *r = &src->buf;
	unsigned flags = atomic_load_explicit(&emergency, memory_order_relaxed) ? PRB_READ_SKIP_UNFINISHED : 0;

	if (pk_rec_read(src->rb, st->seq, r, flags) &&
	    (!restart_if_beyond(src, st) || pk_rec_read(src->rb, st->seq, r, flags)))
		return 0;
	/* A write_record console may ask for the count (pk_console_take_dropped);
	 * a /dev/kmsg-form one sees the gap in the seq field. */
	st->dropped = con->write_record ? st->dropped + (r->seq - st->seq) +
						  pk_console_extra_weight(st->seq, r->seq)
					: 0;
	st->seq = r->seq + 1;
	st->off = 0;
	st->started = 0;
	if (con_skips(con, r->level, pk_console_level_suppressed(r->level)))
		return 1;
	pk_con_write_ts = r->ts_nsec;
	if (con->write_record) {
		pk_record_from_ring(&src->rec, r);
		/* A threaded console that cannot take it now (a forwarder whose
		 * receiver is away) keeps its position: the record waits in the
		 * ring, and what the ring overwrites meanwhile counts as dropped. */
		if (con_write_record(con, &src->rec) == -EAGAIN && con_threaded(con)) {
			st->seq = r->seq;
			return 0;
		}
		return 1;
	}

	size_t n = pk_kmsg_format_record(r, src->ext, false);

	con_write(con, src->ext, n);
	return 1;
}

/* At most this many records passed in one step: a print loop with a
 * deadline (pr_flush, exit) looks at its clock between steps. */
#define SKIP_RUN_MAX 4096

/*
 * Pass the records from @con's position on without reading them while @con
 * does not print their level and is in no record (a run of them with one
 * prb_skip_levels()): a read copies a record, and formats a deferred one,
 * so a loop that read what it skips would fall behind writers that store
 * such records faster than that (and hold the lock as long as they keep
 * storing).
 */
static PK_ALWAYS_INLINE int skip_unread(struct con_src *src, struct console *con)
{
	struct pk_console_state *st = con->state;
	uint64_t max = SKIP_RUN_MAX;

	if (st->started || st->dropped || atomic_load_explicit(&emergency, memory_order_relaxed))
		return 0;
	if (src->hint && src->hint->seq - st->seq < max)
		max = src->hint->seq - st->seq; /* the hint is read from its copy */

	uint64_t n = max ? prb_skip_levels(src->rb, st->seq, con_skip_levels(con), max) : 0;

	st->seq += n;
	return n != 0;
}

static int print_one(struct con_src *src, struct console *con)
{
	struct pk_console_state *st = con->state;
	struct out *o = &src->out;
	struct pk_con_rec view, *r = &view;

	if (skip_unread(src, con))
		return 1;
	if (PK_UNLIKELY((con->flags & PK_CON_EXTENDED) || con->write_record))
		return print_one_extended(src, con);

	if (fetch(src, st->seq, r) && (!restart_if_beyond(src, st) || fetch(src, st->seq, r)))
		return 0;
	pk_con_write_ts = r->ts_nsec;
	out_init(o, con);
	if (r->seq != st->seq) {
		st->dropped += r->seq - st->seq + pk_console_extra_weight(st->seq, r->seq);
		st->seq = r->seq;
		st->off = 0;
		st->started = 0;
	}
	int open = r->open;

	r->suppressed = con_skips(con, r->level, r->suppressed);
	if (!st->started) {
		if (st->dropped) {
			if (st->line_open)
				out_str(o, "\n");
			out_str(o, "** ");
			out_uint(o, st->dropped);
			out_str(o, " printk messages dropped **\n");
			st->line_open = 0;
			st->dropped = 0;
		}
		if (r->suppressed) {
			pk_outbuf_flush(&o->ob);
			st->seq++;
			return 1;
		}
		int cont = r->flags & PRB_FLAG_CONT;

		if (st->line_open && !(cont && same_caller(&st->line_caller, &r->caller))) {
			out_str(o, "\n");
			st->line_open = 0;
		}
		if (!cont)
			out_prefix(o, r);
	} else if (r->suppressed) {
		st->seq++;
		st->off = 0;
		st->started = 0;
		return 1;
	}

	size_t from = st->off < r->text_len ? st->off : r->text_len;

	if (open && st->started && from == r->text_len)
		return 0; /* an open line with nothing new */
	out_text(o, r, from, r->text_len);
	if (open) {
		st->off = r->text_len;
		st->started = 1;
		st->line_open = 1;
		st->line_caller = r->caller;
	} else {
		if (r->flags & PRB_FLAG_NEWLINE) {
			out_str(o, "\n");
			st->line_open = 0;
		} else {
			st->line_open = 1;
			st->line_caller = r->caller;
		}
		st->seq++;
		st->off = 0;
		st->started = 0;
	}
	pk_outbuf_flush(&o->ob);
	return 1;
}

/*
 * Whether @n bytes at @s hold a newline. Not memchr(): that is a call into
 * libc (through the PLT, to code elsewhere in memory), cold right after a
 * write(2) (docs/performance.md); printk's lines are short.
 */
static PK_ALWAYS_INLINE int has_newline(const char *s, size_t n)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i)), nl)))
			return 1;
	if (i < n && n >= 16)
		return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + n - 16)), nl)) != 0;
	for (; i < n; i++)
		if (s[i] == '\n')
			return 1;
	return 0;
#else
	return memchr(s, '\n', n) != NULL;
#endif
}

/*
 * The common case in one write: @r is the record this thread just stored, a
 * complete line without an embedded newline, not a continuation; the only
 * console stands right at it, with nothing dropped and no failed write to
 * count down, and prints it without colour. The bytes print_one would emit
 * for it (a line break if the console's line is open, the prefix, the text,
 * the newline) are built in one buffer (build_hint_line()). Returns that
 * console if @r is such a case, NULL if the general loop has to print it.
 */
static PK_ALWAYS_INLINE struct console *hint_fast_console(const struct pk_con_rec *r)
{
	struct console *con = console_list;

	if (!con || con->state->next || con_threaded(con) || con->write_record ||
	    (con->flags & (PK_CON_ENABLED | PK_CON_COLOR | PK_CON_ESCAPE | PK_CON_EXTENDED)) != PK_CON_ENABLED)
		return NULL;

	struct pk_console_state *st = con->state;

	if (con_stuck(con) || st->seq != r->seq || st->started || st->dropped || st->failures || r->open ||
	    r->flags != PRB_FLAG_NEWLINE ||
	    atomic_load_explicit(&emergency, memory_order_relaxed) || con_skips(con, r->level, r->suppressed) ||
	    has_newline(r->text, r->text_len))
		return NULL;
	return con;
}

/* Build that line in @line and move @con past @r; returns the start, *@len
 * its length. The text is copied to PK_CON_PREFIX_ROOM bytes into @line
 * unless @in_place: then @r's text lies in @line already, at least that far
 * in, with a byte after it for the newline (printk formatted it there). */
static PK_ALWAYS_INLINE char *build_hint_line(struct console *con, const struct pk_con_rec *r, char *line,
					      int in_place, size_t *len)
{
	struct pk_console_state *st = con->state;
	char *text = in_place ? line + (r->text - line) : line + PK_CON_PREFIX_ROOM;
	char *p = con_prefix(con, text, r->ts_nsec, r->caller.tid);

	pk_con_write_ts = r->ts_nsec;
	if (st->line_open)
		*--p = '\n';
	if (!in_place)
		memcpy(text, r->text, r->text_len);
	text[r->text_len] = '\n';
	st->line_open = 0;
	st->seq++;
	*len = (size_t)(text + r->text_len + 1 - p);
	return p;
}

/* @r on @con, the console hint_fast_console() chose, with one write of
 * @con's own (a failed write counts as print_one's does). Not inlined: its
 * line buffer is on the stack only while it runs. */
static PK_NOINLINE void print_hint_fast(struct console *con, const struct pk_con_rec *r)
{
	char line[PK_CON_LINE_MAX];
	size_t len;
	char *p = build_hint_line(con, r, line, 0, &len);

	con_write(con, p, len);
}

/* When this thread's print loop must give up even with work left (0: never):
 * pr_flush and exit bound themselves so, as other threads may store as fast
 * as the loop prints (the kernel stops the other CPUs in panic; we cannot). */
static _Thread_local PK_TLS_IE uint64_t print_deadline_ns;

/* Round-robin, one piece per console per pass, until nobody has work. */
static void print_all_from(struct prb *rb, const struct pk_con_rec *hint)
{
	struct con_src *src = &loop_src[cur_set];
	unsigned passes = 0;
	int progress;

	src->rb = rb;
	src->hint = hint;
	do {
		int crash = atomic_load_explicit(&emergency, memory_order_relaxed);

		if (PK_UNLIKELY(print_deadline_ns) && ++passes % 64 == 0 && pk_clock_ns() > print_deadline_ns)
			return;

		progress = 0;
		for (struct console *con = console_list; con; con = con->state->next) {
			if (!con_threaded(con) && (con->flags & PK_CON_ENABLED) &&
			    (!crash || (con->flags & PK_CON_CRASH_SAFE)) && !con_stuck(con) && print_one(src, con))
				progress = 1;
			if (PK_UNLIKELY(lost_con))
				return; /* C6: taken over; nothing else is ours */
		}
		/* The common case ends here: everyone printed the newest record. */
		if (progress && hint && all_at(hint->seq + 1) && prb_is_newest(rb, hint->seq))
			break;
	} while (progress);
}

static void print_all(struct prb *rb)
{
	print_all_from(rb, NULL);
}

/*
 * C6: this thread's hold was taken over while it wrote to lost_con, and it
 * has finished the record there: hand the console back to whoever holds
 * the lock, and tell them (C2) that it may have work again. The caller
 * then acts as a storer that found the lock taken.
 */
static PK_COLD PK_NOINLINE void hand_back_lost(void)
{
	struct console *con = lost_con;

	lost_con = NULL;
	hold_losable = 0;
	atomic_fetch_sub_explicit(&con->state->stuck, 1, memory_order_acq_rel);
	pk_console_note_store();
}

/*
 * Holding the lock, with nothing left to print if @next (the seq after the
 * record just printed) is nonzero: report recursion, let go, and say whether
 * the work is done (C2: nothing was stored since @gen was read).
 */
static int unlock_after_flush(struct prb *rb, uint64_t next, uint64_t gen)
{
	if (PK_UNLIKELY(recursion_seen)) {
		recursion_seen = 0;
		pk_store_notice(PK_LOGLEVEL_CRIT, "BUG: recent printk recursion!\n");
		print_all(rb);
		if (PK_UNLIKELY(lost_con)) {
			hand_back_lost();
			return 0;
		}
		next = 0;
	}
	console_unlock_idle(next ? next : prb_next_reserve_seq(rb));
	return pk_load_sc(&store_gen) == gen;
}

/*
 * The ways off printk's one-write path are PK_COLD functions: the compiler
 * then moves the branches that lead to them out of the hot functions, so
 * the code a printk runs between two write(2)s spans fewer cache lines
 * (measured: the console figure varied less with where the code landed).
 */
static PK_COLD PK_NOINLINE int flush_refused(void)
{
	/* C3: the holder prints it when the write returns. */
	if (base_mask_known && pk_signal_mask() == base_mask)
		recursion_seen = 1;
	return 0;
}

/* In a printk, not inside a console write: 1 if the caller may print. */
static PK_ALWAYS_INLINE int flush_allowed(void)
{
	return PK_LIKELY(!in_console_write) || flush_refused();
}

/*
 * Holding the lock: print what is due, @hint (may be NULL) first, with one
 * write on @con when it is hint_fast_console(@hint). Returns the seq after
 * @hint when that left nothing more to print, else 0. The one write leaves
 * the only console at hint->seq + 1; if that record is still the newest,
 * there is no more work, and hint->seq + 1 is what prb_next_reserve_seq()
 * would say. (The generation the caller read may already count a record
 * stored after ours: C2 needs this look at the ring, not only the
 * generation.) Not inlined: the general path stays out of printk's hot code.
 */
static PK_NOINLINE uint64_t print_locked(struct prb *rb, const struct pk_con_rec *hint, struct console *con)
{
	if (con) {
		print_hint_fast(con, hint);
		if (PK_UNLIKELY(lost_con))
			return 0;
		if (prb_is_newest(rb, hint->seq))
			return hint->seq + 1;
	}
	print_all_from(rb, hint);
	return 0;
}

void pk_console_flush(struct prb *rb, const struct pk_con_rec *hint)
{
	if (!rb)
		return;
	maybe_wake_printers();
	if (!flush_allowed())
		return;
	int announced = 0;

	for (;;) {
		if (!console_trylock() && !take_over_stalled()) {
			if (announced)
				return; /* C1: the holder prints our record */
			/* C2: tell the holder, then look once more (it may just
			 * have let go). Only a printk that finds the lock taken
			 * pays for this. */
			pk_console_note_store();
			announced = 1;
			continue;
		}

		uint64_t gen = pk_load_sc(&store_gen);

		if (PK_UNLIKELY(!base_mask_known)) {
			base_mask = pk_signal_mask();
			base_mask_known = 1;
		}
		if (PK_UNLIKELY(pk_load_relaxed(&reopen_gen) != loop_reopen_gen))
			reopen_loop_consoles();
		struct pk_con_rec fresh;

		if (PK_UNLIKELY(pk_console_shared_levels_moved()) && hint)
			hint = apply_shared_levels_to(hint, &fresh);
		else if (PK_UNLIKELY(pk_console_shared_levels_moved()))
			apply_shared_levels();
		hold_losable = 1;

		uint64_t next = print_locked(rb, hint, hint ? hint_fast_console(hint) : NULL);

		hint = NULL; /* only valid for the first pass: the record may move on */
		if (PK_UNLIKELY(lost_con)) {
			hand_back_lost();
			announced = 1;
			continue;
		}
		if (unlock_after_flush(rb, next, gen))
			return;
	}
}

/* pk_console_flush_line()'s ways off the one write (PK_COLD: see above). */
static PK_COLD PK_NOINLINE void flush_line_unlocked(struct prb *rb, const struct pk_con_rec *hint)
{
	pk_console_flush(rb, hint); /* a first print, or the lock is taken (C2) */
}

static PK_COLD PK_NOINLINE void flush_line_locked(struct prb *rb, const struct pk_con_rec *hint, struct console *con,
				      uint64_t gen)
{
	hold_losable = 1;

	uint64_t next = print_locked(rb, hint, con);

	if (PK_UNLIKELY(lost_con))
		hand_back_lost();
	else if (unlock_after_flush(rb, next, gen))
		return;
	pk_console_flush(rb, NULL);
}

PK_HOT void pk_console_flush_line(struct prb *rb, const struct pk_con_rec *hint, struct pk_con_line *line)
{
	struct console *con;
	int fd;

	line->len = 0;
	if (!rb)
		return;
	maybe_wake_printers();
	if (!flush_allowed())
		return;
	if (PK_UNLIKELY(!base_mask_known) || !console_trylock_tid(hint->caller.tid)) {
		flush_line_unlocked(rb, hint);
		return;
	}

	uint64_t gen = pk_load_sc(&store_gen);

	/* A pk_console_reopen_all() that noted its store after we took the
	 * lock but before we read the generation is ours to act on: nobody
	 * else looks before this write. */
	if (PK_UNLIKELY(pk_load_relaxed(&reopen_gen) != loop_reopen_gen))
		reopen_loop_consoles();
	struct pk_con_rec fresh;

	if (PK_UNLIKELY(pk_console_shared_levels_moved()))
		hint = apply_shared_levels_to(hint, &fresh);
	if (!(con = hint_fast_console(hint)) || (fd = con->state->direct_fd) < 0) {
		flush_line_locked(rb, hint, con, gen);
		return;
	}
	line->p = build_hint_line(con, hint, line->buf, 1, &line->len);
	line->fd = fd;
	line->con = con;
	line->rb = rb;
	line->seq = hint->seq;
	line->gen = gen;
	in_console_write++; /* C3 holds while the caller writes */
}

/* pk_console_line_done() when the write came short or failed, printk
 * recursed, or more was stored: finish the line, print the rest, let go. */
static PK_COLD PK_NOINLINE void line_done_slow(struct pk_con_line *line, long written)
{
	struct console *con = line->con;
	struct prb *rb = line->rb;
	int err = 0;

	hold_losable = 1;
	if (written != (long)line->len) {
		const char *p = line->p;
		size_t len = line->len;

		if (written > 0) {
			p += written;
			len -= (size_t)written;
		}
		err = con_callback_marked(con, p, len, NULL); /* finishes it, or says why not */
	}
	in_console_write--;
	if (PK_UNLIKELY(lost_con)) {
		if (err)
			con->state->failures++; /* C6: the flags are the holder's now */
		hand_back_lost();
		pk_console_flush(rb, NULL);
		return;
	}
	if (err)
		con_write_failed(con, err); /* (no failures to reset: hint_fast_console()) */
	print_all_from(rb, NULL); /* the hint's text is gone with its frame */
	if (PK_UNLIKELY(lost_con))
		hand_back_lost();
	else if (unlock_after_flush(rb, 0, line->gen))
		return;
	pk_console_flush(rb, NULL);
}

static PK_COLD PK_NOINLINE void flush_after_release(struct prb *rb)
{
	pk_console_flush(rb, NULL); /* C2: a record came while we held the lock */
}

PK_HOT void pk_console_line_done(struct pk_con_line *line, long written)
{
	uint64_t seq = line->seq;

	if (PK_LIKELY(written == (long)line->len && !recursion_seen && seq < CON_IDLE_MAX) &&
	    prb_is_newest(line->rb, seq)) {
		/* Nothing after ours, and the only console stands right after
		 * it in no record: what console_unlock_idle(seq + 1) would do. */
		in_console_write--;
		atomic_store_explicit(&console_word, seq + 2, memory_order_seq_cst);
		if (PK_UNLIKELY(pk_load_sc(&store_gen) != line->gen))
			flush_after_release(line->rb);
		return;
	}
	line_done_slow(line, written);
}

/* ---------------------------------- for printer threads and lossless -- */

void pk_console_crash_begin(void)
{
	const struct pk_con_threads *t = thr();

	atomic_store(&crash_begun, 1);
	if (t)
		t->lossless_wake_all();
}

int pk_console_crashing(void)
{
	return atomic_load(&crash_begun) || atomic_load_explicit(&emergency, memory_order_relaxed);
}

int pk_con_crash_begun(void)
{
	return atomic_load(&crash_begun);
}

int pk_con_emergency(void)
{
	return atomic_load_explicit(&emergency, memory_order_relaxed);
}

struct con_src *pk_con_src_new(void)
{
	struct con_src *src = calloc(1, sizeof(struct con_src));

	if (src)
		src->fc = pk_dfmt_cache_new(); /* NULL: read without it */
	return src;
}

void pk_con_src_free(struct con_src *src)
{
	if (src)
		pk_dfmt_cache_free(src->fc);
	free(src);
}

void pk_con_src_reset(struct con_src *src, struct prb *rb)
{
	src->rb = rb;
	src->hint = NULL;
}

int pk_con_print_one(struct con_src *src, struct console *con)
{
	return print_one(src, con);
}

void pk_con_end_line(struct console *con)
{
	if ((con->flags & PK_CON_ENABLED) && con->state->line_open) {
		con_write(con, "\n", 1);
		con->state->line_open = 0;
	}
}

int pk_con_batch_flush(struct console *con)
{
	return con->state->batch ? batch_flush(con) : 0;
}

int pk_con_batched(const struct console *con)
{
	return con->state->batch != NULL;
}

int pk_con_lossless_by_default(const struct console *con)
{
	return !(con->flags & PK_CON_LOSSY) && pk_console_fd_is_file(con);
}

uint64_t pk_con_seq(const struct console *con)
{
	return con->state->seq;
}

struct pk_printer *pk_con_printer(const struct console *con)
{
	return con->state->printer;
}

uint32_t pk_con_reopen_gen(void)
{
	return pk_load_relaxed(&reopen_gen);
}

void pk_con_reopen_if_moved(struct console *con, uint32_t *seen)
{
	if (PK_UNLIKELY(pk_load_relaxed(&reopen_gen) != *seen)) {
		*seen = pk_load_relaxed(&reopen_gen);
		if (con->reopen)
			reopen_console(con);
	}
}

int pk_con_fallback_wanted(void)
{
	return pk_load_relaxed(&fallback_wanted) != 0;
}

int pk_con_lock_or_take_over(void)
{
	return console_trylock() || take_over_stalled();
}

void pk_con_settle_fallback_unlock(void)
{
	int fell_back = settle_fallback();

	console_unlock_raw();
	if (fell_back)
		pk_console_flush(pk_printk_ring(), NULL);
}

int pk_con_lock_held_by(uint32_t tid)
{
	uint64_t w = pk_load_acquire(&console_word);

	return (w & CON_HELD) && ((w & CON_TAKEN_OVER_BIT) || (uint32_t)w == tid);
}

uint64_t pk_console_take_dropped(struct console *con)
{
	uint64_t n = con->state->dropped;

	con->state->dropped = 0;
	return n;
}

/* ------------------------------------------------------- registration -- */

int pk_con_register(struct console *con)
{
	struct prb *rb = pk_printk_ring();

	if (!con || (!con->write && !con->write_checked && !con->write_record))
		return -EINVAL;
	if (con->state)
		return -EBUSY;
	if (pk_cfg_printk_time() >= PK_TIME_ISO)
		pk_wall_refresh_maybe(); /* a changed TZ; not while printing */

	struct pk_console_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	const struct pk_con_threads *t = thr(); /* set for a threaded one */

	if (con->flags & PK_CON_LOSSLESS) {
		con->flags |= PK_CON_THREADED; /* C8 */
		prb_set_retire_guard(t->lossless_guard);
	}
	if ((con->flags & PK_CON_THREADED) && !(st->printer = t->printer_new())) {
		free(st);
		return -ENOMEM;
	}
	/* C10: a file console printed by its thread writes in batches. Not
	 * one that rotates by size: processes that share its file each look
	 * at the size before a write, and a batch would let the file pass its
	 * size by a batch of each instead of by a line. */
	if (st->printer && pk_console_fd_batchable(con) &&
	    (st->batch = malloc(sizeof(*st->batch)))) {
		st->batch->len = 0;
		st->batch->nmarks = 0;
	}
	console_lock_wait(-1);

	int id = unused_id();

	for (struct console *c = console_list; c; c = c->state->next)
		if (c == con)
			id = -EBUSY;
	if (id < 0) {
		console_unlock_raw();
		if (st->printer)
			t->printer_free(st->printer);
		free(st->batch);
		free(st);
		return id == -EBUSY ? -EBUSY : -ENOSPC;
	}
	st->id = (unsigned)id;
	if (rb)
		st->seq = (con->flags & PK_CON_PRINTBUFFER) ? prb_first_seq(rb) : prb_next_seq(rb);
	st->direct_fd = pk_console_fd_direct(con);
	con->state = st;
	con->flags |= PK_CON_ENABLED;

	int err = st->printer ? t->start(con) : 0;

	if (err) {
		con->state = NULL;
		console_unlock_raw();
		if (st->printer)
			t->printer_free(st->printer);
		free(st->batch);
		free(st);
		return err;
	}
	if (st->printer)
		atomic_fetch_add(&printers, 1);
	/* Append: consoles print in registration order. */
	struct console **pp = &console_list;

	while (*pp)
		pp = &(*pp)->state->next;
	*pp = con;
	count_locked_consoles();
	/* A level another process set for this name applies to it too: the
	 * next holder reads the table again. */
	pk_store_relaxed(&pk_console_levels_reapply, 1);
	console_unlock_raw();
	pk_console_flush(rb, NULL);
	return 0;
}

static int registered(const struct console *con)
{
	for (struct console *c = console_list; c; c = c->state->next)
		if (c == con)
			return 1;
	return 0;
}

static int unlink_console(struct console *con)
{
	for (struct console **pp = &console_list; *pp; pp = &(*pp)->state->next) {
		if (*pp == con) {
			*pp = con->state->next;
			count_locked_consoles();
			return 1;
		}
	}
	return 0;
}

/* Holding the lock: pk_console_own_level_max after a console's own level changed or
 * a console left. */
static void recompute_own_level_max(void)
{
	int max = 0;

	for (struct console *c = console_list; c; c = c->state->next) {
		int own = atomic_load(&c->state->own_level_plus1) - 1;

		if (own > max)
			max = own;
	}
	atomic_store(&pk_console_own_level_max, max);
}

/*
 * Holding the lock: give the registered consoles the levels that other
 * processes set by name in the log's shared table. The table is the file's
 * and may hold anything: a name is at most 16 bytes compared as such, a
 * level outside 0..15 is ignored.
 */
static PK_COLD PK_NOINLINE void apply_shared_levels(void)
{
	struct pk_log_shared *sh = levels_table();

	if (!sh)
		return;
	atomic_store_explicit(&pk_console_levels_gen_word, &sh->console_levels_gen, memory_order_release);
	pk_store_relaxed(&pk_console_levels_reapply, 0);
	pk_store_relaxed(&pk_console_loop_levels_gen, pk_load_acquire(&sh->console_levels_gen));
	for (int i = 0; i < PK_LOG_CONSOLE_LEVELS; i++) {
		struct pk_log_console_level *e = &sh->console_levels[i];
		uint64_t w[2] = { pk_load_relaxed(&e->name[0]), pk_load_relaxed(&e->name[1]) };
		uint32_t plus1 = pk_load_relaxed(&e->level);
		char name[sizeof(w) + 1];

		if (!w[0] || plus1 > PK_CONSOLE_LOGLEVEL_MAX + 1)
			continue;
		memcpy(name, w, sizeof(w));
		name[sizeof(w)] = '\0';
		for (struct console *c = console_list; c; c = c->state->next)
			if (!strncmp(c->name, name, sizeof(c->name)))
				atomic_store(&c->state->own_level_plus1, (int)plus1);
	}
	recompute_own_level_max();
}

int pk_unregister_console(struct console *con)
{
	if (!con)
		return -EINVAL;

	int how = console_lock_wait(-1);
	int found = con->state && con_stuck(con) ? -EBUSY : registered(con);

	/* C7: its thread goes first; one stuck in a write keeps it. A
	 * lossless one prints what is due first (console_drain_ms at most),
	 * as at exit: nothing it accepted is lost by unregistering it. */
	int stopped = -1;

	if (found > 0 && con_threaded(con)) {
		int lossless = (con->flags & PK_CON_LOSSLESS) != 0;

		stopped = thr()->stop(con, lossless ? PRINTER_DRAIN : PRINTER_STOP, pk_con_drain_ms());
		if (!stopped && lossless) /* writers kept it busy: stop after the record */
			stopped = thr()->stop(con, PRINTER_STOP, PK_CONSOLE_STALL_MS);
	}

	if (stopped == 0)
		found = -EBUSY;
	if (found > 0) {
		if (stopped == 1)
			atomic_fetch_sub(&printers, 1);
		unlink_console(con);
		recompute_own_level_max();
	}
	console_unlock_raw();
	if (how == 2)
		pk_console_flush(pk_printk_ring(), NULL); /* what waited for the stuck holder */
	if (found <= 0)
		return found < 0 ? found : -EINVAL;
	free_state(con);
	return 0;
}

int pk_console_reopen_all(void)
{
	/* Whoever holds the lock now sees the generation move when it lets go
	 * (C2) and reopens before it prints again; if nobody does, we do. */
	pk_fetch_add_sc(&reopen_gen, 1);
	pk_console_note_store();
	if (atomic_load_explicit(&printers, memory_order_relaxed))
		thr()->wake();
	pk_console_flush(pk_printk_ring(), NULL);
	return 0;
}

int pk_console_reopen(struct console *con)
{
	if (!con || !con->reopen)
		return -EINVAL;

	int how = console_lock_wait(-1);

	struct pk_printer *printer = con->state ? con->state->printer : NULL;

	if ((con->state && con_stuck(con)) ||
	    (printer && !thr()->own_wait(printer, pk_con_drain_ms()))) {
		console_unlock_raw();
		return -EBUSY;
	}

	int err = con->state ? reopen_console(con) : con->reopen(con);

	if (printer) {
		thr()->release(printer);
		thr()->wake();
	}
	console_unlock_raw();
	if (how == 2)
		pk_console_flush(pk_printk_ring(), NULL);
	return err;
}

/* ----------------------------------------------------- flush and exit -- */

static int consoles_caught_up(struct prb *rb)
{
	uint64_t next = prb_next_seq(rb);

	/* A threaded console's thread is about to let stderr take over. */
	if (pk_load_acquire(&fallback_wanted))
		return 0;

	for (struct console *con = console_list; con; con = con->state->next) {
		if (con_threaded(con)) {
			if (!thr()->caught_up(con, next))
				return 0;
		} else if ((con->flags & PK_CON_ENABLED) && (con_stuck(con) || con->state->seq < next)) {
			return 0;
		}
	}
	return 1;
}

int pk_pr_flush(int timeout_ms, int reset_on_progress)
{
	struct prb *rb = pk_printk_ring();
	uint64_t start = pk_clock_ns();
	uint64_t last_progress = 0;

	if (!rb)
		return 1;
	if (atomic_load(&printers))
		thr()->wake();
	for (;;) {
		if (console_trylock() || take_over_stalled()) {
			hold_losable = 1;
			if (PK_UNLIKELY(pk_load_relaxed(&reopen_gen) != loop_reopen_gen))
				reopen_loop_consoles();
			if (timeout_ms >= 0)
				print_deadline_ns = pk_clock_ns() + (uint64_t)timeout_ms * 1000000u;
			print_all(rb);
			print_deadline_ns = 0;
			if (PK_UNLIKELY(lost_con)) {
				hand_back_lost();
				continue;
			}

			int done = consoles_caught_up(rb);

			console_unlock_raw();
			if (done)
				return 1;
		}
		uint64_t now = pk_clock_ns();
		uint64_t next = prb_next_seq(rb);

		if (reset_on_progress && next != last_progress) {
			last_progress = next;
			start = now;
		}
		if (timeout_ms >= 0 && now - start > (uint64_t)timeout_ms * 1000000u)
			return 0;
		struct timespec ts = { 0, 500 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* The forwarding layer's end of a session, called by exit for consoles
 * whose thread it stopped (console_internal.h). */
static void (*_Atomic exit_close)(struct console *con);

void pk_console_set_exit_close(void (*fn)(struct console *con))
{
	atomic_store(&exit_close, fn);
}

/*
 * At exit, after the threads had their console_drain_ms: a threaded console
 * whose thread did not print everything stored (a receiver away, a slow
 * disk) says how many records it leaves, in one line on stderr, as the
 * log may be going with them. The stderr console's own write: it checks
 * that fd 2 is still the file it was.
 */
static void say_undrained(struct prb *rb)
{
	uint64_t next = prb_next_seq(rb);
	struct console *err_con = pk_console_stderr();

	for (struct console *con = console_list; con; con = con->state->next) {
		if (!con_threaded(con) || con == err_con)
			continue;

		uint64_t printed = thr()->printed(con);

		if (printed >= next)
			continue; /* caught up, or disabled (it said so) */

		char line[160];
		int n = snprintf(line, sizeof(line),
				 "printk: console [%.16s] did not print its last %llu records within console_drain_ms=%d at exit\n",
				 con->name, (unsigned long long)(next - printed), pk_con_drain_ms());

		if (n > 0)
			err_con->write_checked(err_con, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
}

int pk_console_shutdown(struct prb *rb, int release)
{
	int running = 0;

	atomic_store(&pk_console_levels_gen_word, NULL); /* the log may be going */
	/* A holder stuck in a write is taken over after PK_CONSOLE_STALL_MS
	 * (C6); one stopped elsewhere keeps its consoles. */
	if (!console_lock_wait(PK_CONSOLE_STALL_MS + 500))
		return -1;
	if (rb) {
		struct prb_caller me;

		pk_caller_get(&me);
		prb_finalize_last_of(rb, me.pid);
		print_deadline_ns = pk_clock_ns() + (uint64_t)pk_con_drain_ms() * 1000000u;
		print_all(rb); /* threads that still print do not hold exit */
		print_deadline_ns = 0;
	}
	/* C7: printer threads print what is due, end their lines and exit,
	 * all within console_drain_ms: a dead output never holds exit up. */
	uint64_t deadline = pk_clock_ns() + (uint64_t)pk_con_drain_ms() * 1000000u;

	for (struct console *con = console_list; con; con = con->state->next) {
		if (!con_threaded(con) || thr()->joined(con->state->printer))
			continue;

		uint64_t now = pk_clock_ns();
		int left = now < deadline ? (int)((deadline - now) / 1000000u) : 0;

		int stopped = thr()->stop(con, PRINTER_DRAIN, left);

		if (stopped == 1)
			atomic_fetch_sub(&printers, 1);
		if (!stopped) {
			/* Still in a write: it ends after that record and
			 * reads the log no more; exit will not wait to join
			 * it. */
			thr()->abandon(con->state->printer);
			running++;
		}
	}
	/* A threaded console disabled meanwhile, or while its thread was
	 * asked to stop: stderr takes over for what is still due. */
	if (rb && settle_fallback()) {
		print_deadline_ns = deadline;
		print_all(rb);
		print_deadline_ns = 0;
	}
	if (rb)
		say_undrained(rb);
	void (*close_fn)(struct console *) = atomic_load(&exit_close);

	for (struct console *con = console_list; close_fn && con; con = con->state->next) {
		if (con_threaded(con) && thr()->joined(con->state->printer)) {
			int state, ignored;

			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state); /* C4 */
			close_fn(con);
			pthread_setcancelstate(state, &ignored);
		}
	}
	for (struct console *con = console_list; con; con = con->state->next) {
		if (!con_threaded(con) && (con->flags & PK_CON_ENABLED) && !con_stuck(con) &&
		    con->state->line_open) {
			con_write(con, "\n", 1);
			con->state->line_open = 0;
		}
	}
	if (release) {
		int state, ignored;
		struct console **pp = &console_list;

		/* C4: a release may close(2), a cancellation point. */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
		while (*pp) {
			struct console *con = *pp;

			/* C6, C7: a thread may still come back to it */
			if (con_stuck(con) || (con_threaded(con) && !thr()->joined(con->state->printer))) {
				pp = &con->state->next;
				continue;
			}
			*pp = con->state->next;
			free_state(con);
			if (con->release)
				con->release(con);
		}
		count_locked_consoles();
		pthread_setcancelstate(state, &ignored);
	}
	console_unlock_raw();
	return running;
}

/*
 * C7 on the crash path: a crash-safe console with a thread of its own is
 * printed here too, once its thread lets go between two records (it holds
 * the owner word for one record at a time), within the same wait budget;
 * a crash on the printer thread itself takes its own word over.
 */
static void emergency_print_threaded(struct prb *rb, uint64_t start, int wait_ms)
{
	for (struct console *con = console_list; con; con = con->state->next) {
		if (!con_threaded(con) || !thr()->crash_safe(con->state->printer))
			continue;

		struct pk_printer *p = con->state->printer;
		int own = thr()->is_self(p);

		while (!own && !(own = thr()->own(p))) {
			if (pk_clock_ns() - start > (uint64_t)wait_ms * 1000000u)
				break;
			struct timespec ts = { 0, 100 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (!own)
			continue;

		struct con_src *src = &loop_src[cur_set];

		src->rb = rb;
		src->hint = NULL;
		while ((con->flags & PK_CON_ENABLED) && print_one(src, con))
			;
		pk_con_end_line(con);
		pk_con_batch_flush(con); /* C10: what its thread or this loop appended */
		if (!thr()->is_self(p))
			thr()->release(p);
	}
}

void pk_console_emergency_flush(struct prb *rb, int wait_ms)
{
	uint64_t start = pk_clock_ns();
	struct prb_caller me;
	int got;

	pk_caller_get(&me);
	while (!(got = console_trylock())) {
		/* Held by this very thread (it crashed or panicked inside a console
		 * write, or a handler interrupted it while printing): no wait helps. */
		if (pk_load_sc(&console_word) == CON_OWNER(me.tid))
			break;
		if (pk_clock_ns() - start > (uint64_t)wait_ms * 1000000u)
			break;
		struct timespec ts = { 0, 100 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (!got) {
		/* The holder did not let go in time (it may be this very thread,
		 * crashed inside a console write): take the consoles over. One
		 * that is in another thread's write stays that thread's (C6). */
		uint64_t w = atomic_exchange(&console_word, CON_TAKEN_OVER);
		struct console *stuck = NULL;

		if ((w & (CON_HELD | CON_WRITING)) == (CON_HELD | CON_WRITING) && (uint32_t)w != me.tid &&
		    (stuck = console_by_id(CON_WORD_ID(w)))) {
			stuck->state->stuck_set = CON_WORD_SET(w);
			atomic_fetch_add_explicit(&stuck->state->stuck, 1, memory_order_acq_rel);
		}
	}
	/* Buffers nobody may be inside: not the holder's, not a stuck one's. */
	int set = free_set(1u << cur_set);

	cur_set = set >= 0 ? (unsigned)set : cur_set ^ 1u;
	atomic_store(&emergency, 1);
	int saved_in_write = in_console_write;

	in_console_write = 0;
	if (rb) {
		/* Other threads may go on storing as fast as this prints. */
		print_deadline_ns = pk_clock_ns() + (uint64_t)(wait_ms > 0 ? wait_ms : 1000) * 1000000u;
		print_all(rb);
		print_deadline_ns = 0;
	}
	for (struct console *con = console_list; con; con = con->state->next) {
		if (con_threaded(con) || !(con->flags & PK_CON_ENABLED) || !(con->flags & PK_CON_CRASH_SAFE) ||
		    con_stuck(con) || !con->state->line_open)
			continue;
		con_write(con, "\n", 1);
		con->state->line_open = 0;
	}
	if (rb)
		emergency_print_threaded(rb, start, wait_ms);
	in_console_write = saved_in_write;
	atomic_store(&emergency, 0);
	console_unlock_raw();
}

void pk_console_after_fork(void)
{
	/* The holder, if any, was another thread: it does not exist here, nor
	 * does a thread stuck in a console's write (C6). */
	atomic_store_explicit(&console_word, 0, memory_order_relaxed);
	in_console_write = 0;
	lost_con = NULL;
	hold_losable = 0;
	const struct pk_con_threads *t = thr(); /* NULL: no printer ever ran */

	if (t) {
		t->after_fork();
		t->lossless_after_fork();
	}
	for (struct console *con = console_list; con; con = con->state->next) {
		atomic_store_explicit(&con->state->stuck, 0, memory_order_relaxed);
		/* C10: a batch the parent's thread was filling is the parent's
		 * to write; the child's thread starts where the console stands. */
		if (con->state->batch) {
			con->state->batch->len = 0;
			con->state->batch->nmarks = 0;
		}
		/* C7: nor do printer threads; the child gets its own. */
		if (con_threaded(con))
			t->restart(con);
	}
}

void pk_console_reset_positions(uint64_t seq)
{
	console_lock_wait(-1);
	atomic_store(&pk_console_levels_gen_word, NULL); /* the log's table moves with the log */
	for (struct console *con = console_list; con; con = con->state->next) {
		struct pk_printer *p = con->state->printer;

		if (con_stuck(con) || (p && !thr()->own_wait(p, pk_con_drain_ms())))
			continue; /* C6, C7: restart_if_beyond() moves it later */
		con->state->seq = seq;
		con->state->off = 0;
		con->state->started = 0;
		con->state->dropped = 0;
		if (p) {
			thr()->set_printed(p, seq);
			thr()->release(p);
		}
	}
	console_unlock_raw();
}

/* ------------------------------------------- names and own levels -- */

struct console *pk_console_find(const char *name)
{
	struct console *found = NULL;

	if (!name)
		return NULL;

	int how = console_lock_wait(-1);

	for (struct console *c = console_list; c && !found; c = c->state->next)
		if (!strncmp(c->name, name, sizeof(c->name)) && strlen(name) < sizeof(c->name))
			found = c;
	console_unlock_raw();
	if (how == 2)
		pk_console_flush(pk_printk_ring(), NULL);
	return found;
}

int pk_console_set_loglevel(struct console *con, int level)
{
	if (!con || level < -1 || level > PK_CONSOLE_LOGLEVEL_MAX)
		return -EINVAL;

	int how = console_lock_wait(-1);
	int found = registered(con), old = -1;

	if (found > 0) {
		old = atomic_exchange(&con->state->own_level_plus1, level + 1) - 1;
		recompute_own_level_max();
	}
	console_unlock_raw();
	if (how == 2)
		pk_console_flush(pk_printk_ring(), NULL);
	return found > 0 ? old : -EINVAL;
}

int pk_console_get_loglevel(const struct console *con)
{
	struct pk_console_state *st = con ? con->state : NULL;

	return st ? atomic_load(&st->own_level_plus1) - 1 : -1;
}

int pk_console_set_time_style(struct console *con, int style)
{
	if (!con || style < -1 || style > PK_TIME_ISO_UTC)
		return -EINVAL;
	if (style >= PK_TIME_ISO)
		pk_wall_refresh(); /* the zone, read here, not while printing */

	int how = console_lock_wait(-1);
	int found = registered(con), old = -1;

	if (found > 0)
		old = atomic_exchange(&con->state->time_style_plus1, style + 1) - 1;
	console_unlock_raw();
	if (how == 2)
		pk_console_flush(pk_printk_ring(), NULL);
	return found > 0 ? old : -EINVAL;
}

int pk_console_get_time_style(const struct console *con)
{
	struct pk_console_state *st = con ? con->state : NULL;

	return st ? atomic_load(&st->time_style_plus1) - 1 : -1;
}
