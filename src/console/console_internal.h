// SPDX-License-Identifier: MIT
/*
 * console_internal.h - what the console layer (console.c, console_printer.c,
 * console_lossless.c) offers the layers above it: printk, the crash path,
 * the readers and start-up. What the three files share among themselves is
 * console_impl.h.
 *
 * The consoles sit above the default log and its settings and below printk:
 * they read records from the ring and settings.h, store their notices with
 * store.h, and call nothing above them. printk's one-write path has its own
 * narrow header, console_line.h.
 */
#ifndef PRINTK_CONSOLE_INTERNAL_H
#define PRINTK_CONSOLE_INTERNAL_H

#include <stdint.h>

#include "base/atomics.h"
#include "base/hints.h"
#include "base/printk_limits.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "ring/ringbuffer.h"

/* What the print loop needs of a record: read from the ring, or handed over
 * by the printk that just stored it (which saves reading it back). */
struct pk_con_rec {
	uint64_t seq;
	uint64_t ts_nsec;
	struct prb_caller caller;
	int level;
	int flags;
	int open;	/* not finalized: may still grow */
	int suppressed; /* its level is one no console prints */
	const char *text;
	size_t text_len;
};

/* Print what the consoles have not printed yet, unless another thread is
 * printing (it will print ours before it lets go). @hint (may be NULL) is
 * the record this thread just stored. Async-signal-safe. */
void pk_console_flush(struct prb *rb, const struct pk_con_rec *hint);

/* 1 if no console prints messages of @level (console_loglevel, ignore_loglevel). */
int pk_console_level_suppressed(int level);

/* The highest level a console of its own has (console.c's; 0: none). */
extern PK_HIDDEN _Atomic int pk_console_own_level_max;

/*
 * pk_console_level_suppressed() inline, for printk's fast path, given the
 * default log's ring @rb (the log pk_cfg_console_loglevel() reads), a
 * @level of 0-7 and ignore_loglevel off (the caller found the fast gate's
 * PK_GATE_IGNORE_LVL clear: base/fast_gate.h): 1 only where that says 1;
 * 0 also for a console_loglevel it would correct (0, or out of range in a
 * shared file), which leaves the line to store() (one compare: a
 * console_loglevel of 1 to @level, so within the range).
 */
static PK_ALWAYS_INLINE int pk_console_level_suppressed_gated(const struct prb *rb, int level)
{
	uint32_t cl = pk_load_relaxed(&((struct pk_log_shared *)rb->user)->console_loglevel);

	return cl - 1 < (uint32_t)level &&
	       level >= atomic_load_explicit(&pk_console_own_level_max, memory_order_relaxed);
}
/* The filtered fast path: record @seq, of a level no console prints, was
 * just stored; returns 1 if all consoles were idle at @seq, so nothing has
 * to be printed and no console lock is needed. */
int pk_console_skip_suppressed(uint64_t seq);
/* The same for a run a merge just committed: the printk log's lane records
 * [@seq, @seq + @n), of the levels whose bits @levels has (the ring's
 * merged hook, struct prb; async-signal-safe). Moves the idle mark past
 * them when no console prints any of those levels and all consoles were
 * idle at @seq; otherwise the next holder passes them (prb_skip_levels()). */
void pk_console_lanes_merged(struct prb *rb, uint64_t seq, uint64_t n, unsigned levels);
/* For printk's lane path (the first line into a lane of @rb, and after a
 * merge of a full lane): when the consoles have no idle mark (a new log
 * replaced the old one, or the last holder left one behind) and the lock
 * is free, go through it once, so that the merges of lines nobody prints
 * can move the mark instead of leaving the consoles behind them, to report
 * them as dropped when the log wraps. Async-signal-safe. */
void pk_console_catch_up(struct prb *rb);
/* C9: 1 while every registered console is printed by a thread of its own
 * (none by the console lock's holder), no level set from another process
 * waits to be applied and no crash is in progress: printk then stores,
 * calls pk_console_wake_printers() if a console prints the record's level,
 * and is done. */
int pk_console_threads_only(void);
/* 0 while a level set from another process (udmesg -n NAME=LEVEL) waits
 * for the console lock's holder to apply it: a record that looks
 * suppressed may print then, so it must reach the holder (not a lane). */
int pk_console_levels_settled(void);

/* What pk_console_levels_settled() looks at first, inline for the lanes'
 * fast path: the table's generation the holder last applied. */
extern PK_HIDDEN pk_a32 *_Atomic pk_console_levels_gen_word;
extern PK_HIDDEN pk_a32 pk_console_loop_levels_gen;
extern PK_HIDDEN pk_a32 pk_console_levels_reapply;

static PK_ALWAYS_INLINE int pk_console_shared_levels_moved(void)
{
	pk_a32 *w = atomic_load_explicit(&pk_console_levels_gen_word, memory_order_acquire);

	return PK_UNLIKELY(!w) || pk_load_relaxed(w) != pk_load_relaxed(&pk_console_loop_levels_gen) ||
	       PK_UNLIKELY(pk_load_relaxed(&pk_console_levels_reapply));
}

/* pk_console_levels_settled() with its common answer inline. */
static PK_ALWAYS_INLINE int pk_console_levels_settled_inline(void)
{
	return PK_LIKELY(!pk_console_shared_levels_moved()) || pk_console_levels_settled();
}
/* Wake printer threads that sleep (C7); a load when none does. After the
 * record is stored. Async-signal-safe. */
void pk_console_wake_printers(void);
/* True while this thread runs a console's write callback. */
int pk_console_in_write(void);
/* Stop every console at exit: end open lines, drain, unregister all.
 * Returns how many printer threads are still in a console's write after
 * console_drain_ms (they end after that record, reading @rb no more; the
 * caller must not free what that record may still be read from), or -1 if
 * the console lock could not be had. */
int pk_console_shutdown(struct prb *rb, int release);
/* Panic and crash path: print everything now on the crash-safe consoles,
 * skipping records whose writer will never finish them; waits at most
 * @wait_ms for the console holder, then takes over. Async-signal-safe. */
void pk_console_emergency_flush(struct prb *rb, int wait_ms);
/* From a write_record callback: the records overwritten before @con got
 * them, since the last call (a forwarder's dropped notice). */
struct console;
uint64_t pk_console_take_dropped(struct console *con);
/* Record @seq of printk's log is a notice that stands for @n messages
 * ("printk: N messages not stored"): a console that drops it counts @n,
 * not one. Only the last PK_CON_WEIGHTS such notices are kept (they sum up
 * what was lost since the previous one, so they are few). Async-signal-safe,
 * lock-free. */
#define PK_CON_WEIGHTS 64
void pk_console_note_weight(uint64_t seq, uint64_t n);
/* How many messages more than records the records @from to @to - 1 stand
 * for (the notices above among them). */
uint64_t pk_console_extra_weight(uint64_t from, uint64_t to);
/* How many consoles that print text (no write_record) are registered: a
 * forwarder's notices go to stderr as well when there are none. */
int pk_console_text_listed(void);
/* After fork(), in the child. */
void pk_console_after_fork(void);
/* Exit (pk_console_shutdown()) calls @fn for every threaded console whose
 * thread it stopped, with the thread gone and before any release: a
 * forwarder ends its session there, so the receiver sees it closed, not
 * broken. Installed by the forwarding layer; one hook for all. */
void pk_console_set_exit_close(void (*fn)(struct console *con));
/* A threaded console's thread that found nothing to print calls @fn for
 * a write_record console, holding the console's owner word, before it
 * sleeps (so at least every printer_idle_ms while nothing comes): a
 * forwarder watches its connection there, which may break while it has
 * nothing to write. @fn returns 1 if the thread should look for records
 * again at once (it made a connection records may be waiting for), else 0.
 * Installed by the forwarding layer; one hook for all. */
void pk_console_set_idle_hook(int (*fn)(struct console *con));
/* How long exit and unregistration wait for printer threads (PRINTK_OPTS
 * console_drain_ms=; default 3000). */
void pk_console_set_drain_ms(int ms);
/* How long a printer thread sleeps when nothing wakes it (default 1000 ms).
 * For tests: with a long one, a lost wake-up shows as a stall no load
 * explains. */
void pk_console_set_printer_idle_ms(int ms);
/* How long a lossless console may print nothing while a printk waits for
 * it before it turns lossy (PRINTK_OPTS lossless_timeout_ms=; default 5000). */
void pk_console_set_lossless_timeout_ms(int ms);
/* The crash path began (panic, a fatal signal): from now on no printk waits
 * for a lossless console. Async-signal-safe. */
void pk_console_crash_begin(void);
/* The log changed (pk_set_log_buf_len/file, pk_printk_exit): consoles
 * restart at @seq. */
void pk_console_reset_positions(uint64_t seq);
/* console_fd.c: free a console pk_console_fd_create() or
 * pk_console_file_create() made (their kinds' release; not the stderr one). */
void pk_console_fd_release(struct console *con);

#endif
