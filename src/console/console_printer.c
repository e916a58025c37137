// SPDX-License-Identifier: MIT
/*
 * console_printer.c - printer threads: a PK_CON_THREADED console printed by
 * a thread of its own.
 *
 * Owns: each threaded console's printer (its thread, owner word, stop
 * request, published position, buffers, lossless slot number), the futex
 * word printk wakes the threads with and the count of threads about to
 * sleep (the count itself is console.c's, for printk's inline check). The
 * console's state (position, open line) is console.c's; the thread changes
 * it only through console.c's loop (pk_con_print_one()) and only while it
 * holds the owner word. The lossless slots are console_lossless.c's.
 * console_impl.h is what the console files share: this file calls
 * console.c and console_lossless.c, and they reach it only through the
 * table it fills (pk_printer_install(), below).
 *
 * Invariants:
 *   C7 A console registered with PK_CON_THREADED is printed by a thread of
 *      its own with its own buffers, never by the console lock's holder (the
 *      print loop, the idle mark, the one-write path and the stderr
 *      fall-back all pass it by; its printer is fixed at registration, so
 *      they can tell without reading what the thread writes). printk stores
 *      and, only when a printer thread announced that it is about to sleep
 *      (pk_printer_sleepers), bumps one futex word and wakes it: a busy
 *      thread costs printk one load of a line nobody writes meanwhile. The
 *      announcement and printk's commit form a store-buffering pair (both
 *      seq_cst): a thread that announced itself after printk looked reads
 *      the ring once more before it sleeps and finds the record. The thread
 *      owns the console's state while it holds the console's owner word,
 *      taken for one record at a time (a batching file console's thread:
 *      for up to PRINTER_BATCH_RECORDS, writing its batch before it lets
 *      go and only then publishing its position; console.c's C10);
 *      reopen, position resets, exit and the crash path take the same
 *      word (PRINTER_OTHER). A write_record
 *      that answers -EAGAIN leaves the position on its record, uncounted as
 *      a failure (a forwarder whose receiver is away); the records the ring
 *      overwrites meanwhile are counted for pk_console_take_dropped().
 *      With nothing to print, the thread runs the forwarding layer's idle
 *      hook on a write_record console, holding the owner word, before it
 *      sleeps: a connection that broke while nothing was written into it
 *      is noticed within printer_idle_ms. The thread publishes its
 *      position for pr_flush(); exit asks it to drain and waits
 *      console_drain_ms (console.c's) at most; after fork() the child
 *      starts its own.
 *   P1 A thread holding a printer's word as PRINTER_OTHER is counted
 *      (printer_words_held): a printk it makes meanwhile must not wait for
 *      a lossless console (C8), whose thread may be waiting for that word.
 *   P2 A thread whose console was disabled leaves the stderr fall-back to
 *      the next holder of the console lock (console.c's fallback_wanted),
 *      taking the lock itself only once it let go of its own word.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/compiler.h>
#include <printk/console.h>

#include "base/atomics.h"
#include "base/clock.h"
#include "base/hints.h"
#include "console/console_impl.h"
#include "log/settings.h"

/*
 * C7: a PK_CON_THREADED console is printed by a thread of its own, with its
 * own buffers and position; the console lock's holder never touches it.
 * Whoever else must touch its state (reopen, position resets, exit, the
 * crash path) takes its owner word first, as the thread does around every
 * record, so two never print on it at once. printk wakes the threads
 * through one futex word: a bump, and a FUTEX_WAKE only if one sleeps.
 */
enum { PRINTER_FREE, PRINTER_THREAD, PRINTER_OTHER };

struct pk_printer {
	pthread_t thread;
	_Atomic int owner;	/* PRINTER_* */
	_Atomic int stop;	/* PRINTER_RUN, _DRAIN (print what is due, then exit), _STOP */
	_Atomic int exited;
	int joined;		/* pthread_join()ed: by whoever stopped it, once */
	int detached;		/* left in a write by exit: nobody joins it (printer_stop()) */
	pk_a64 printed;		/* the console's position, published after every record */
	int crash_safe;		/* PK_CON_CRASH_SAFE at registration: read without the owner word */
	uint32_t reopen_gen;	/* the thread's: reopen_gen when it last reopened */
	int lossless;		/* C8: its lossless slot (console_lossless.c), -1: a lossy console */
	struct con_src *src;	/* its own buffers (console.c's) */
};

static _Thread_local PK_TLS_IE struct pk_printer *printer_self; /* on a printer thread: its own */
static pk_a32 printer_wake;	  /* futex word: bumped to wake printer threads (pk_printer_sleepers) */
/* Batching threads dozing after a busy pass (C10): printk does not wake
 * them, everything else that wakes the threads does. */
static _Atomic int printer_dozers;

/* How long a batching thread that just caught up waits for more before it
 * goes to sleep the way printk wakes it: while records keep coming, printk
 * pays no wake-up (a futex system call) and the thread writes bigger
 * batches; a line waits that long at most before it is written. */
#define PRINTER_DOZE_NS (200 * 1000)

static uint64_t printer_printed(const struct console *con);

/* How long a printer thread sleeps without a wake-up (records stored
 * without one: notices). */
static _Atomic int printer_idle_ms = 1000;

void pk_console_set_printer_idle_ms(int ms)
{
	atomic_store(&printer_idle_ms, ms < 1 ? 1 : ms);
}

/* The forwarding layer's idle hook (console_internal.h). */
static int (*_Atomic printer_idle_hook)(struct console *con);

void pk_console_set_idle_hook(int (*fn)(struct console *con))
{
	atomic_store(&printer_idle_hook, fn);
}

static long printer_futex(int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)&printer_wake, op, val, ts, NULL, 0);
}

/* From printk, any context: async-signal-safe, a syscall only if a thread sleeps. */
static void wake_printers(void)
{
	int saved = errno;

	pk_fetch_add_sc(&printer_wake, 1);
	if (atomic_load_explicit(&pk_printer_sleepers, memory_order_seq_cst) ||
	    atomic_load_explicit(&printer_dozers, memory_order_seq_cst))
		printer_futex(FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	errno = saved;
}

/* C8: owner words this thread holds as PRINTER_OTHER: a printk meanwhile
 * must not wait for a printer thread, which may be waiting for that word. */
static _Thread_local PK_TLS_IE int printer_words_held;

/* Take @p's owner word for @who; 0 if it is taken. */
static int printer_own(struct pk_printer *p, int who)
{
	int expected = PRINTER_FREE;

	if (!atomic_compare_exchange_strong_explicit(&p->owner, &expected, who, memory_order_acquire,
						     memory_order_relaxed))
		return 0;
	if (who == PRINTER_OTHER)
		printer_words_held++;
	return 1;
}

static void printer_release(struct pk_printer *p)
{
	if (atomic_load_explicit(&p->owner, memory_order_relaxed) == PRINTER_OTHER)
		printer_words_held--;
	atomic_store_explicit(&p->owner, PRINTER_FREE, memory_order_release);
}

/* Take @p's owner word from normal context, waiting up to @timeout_ms
 * (negative: for ever). */
static int printer_own_wait(struct pk_printer *p, int timeout_ms)
{
	uint64_t start = pk_clock_ns();

	while (!printer_own(p, PRINTER_OTHER)) {
		if (timeout_ms >= 0 && pk_clock_ns() - start > (uint64_t)timeout_ms * 1000000u)
			return 0;
		struct timespec ts = { 0, 200 * 1000 };

		nanosleep(&ts, NULL);
	}
	return 1;
}

/* Holding @con's owner word: publish the position (a disabled console
 * counts as caught up, as in the print loop). C10: a batching console
 * publishes only what its last batch write put in the file, so pr_flush()
 * returns once the bytes are there and a lossless console's records stay
 * in the ring until then. */
static void printer_publish(struct console *con, struct pk_printer *p)
{
	int enabled = con->flags & PK_CON_ENABLED;
	uint64_t pos = enabled ? pk_con_seq(con) : UINT64_MAX;

	pk_store_release(&p->printed, pos);
	if (p->lossless >= 0)
		pk_lossless_publish(p->lossless, pos);
}

/*
 * Records a batching console's thread prints per hold of its owner word at
 * most: the crash path, a reopen or a position reset may take the word in
 * between. A record costs the thread a few hundred ns: a hold is well
 * under a millisecond.
 */
#define PRINTER_BATCH_RECORDS 512

/*
 * One turn of @p's thread on @con: with the owner word, print what is due
 * (@one: one record at most). A console that writes as it prints holds the
 * word for one record at a time; a batching one (C10) for a batch, which it
 * writes before it lets go, and earlier when a writer waits for a lossless
 * console to pass a record the batch holds. Returns 1 if it printed or
 * skipped a record.
 */
static int printer_pass(struct console *con, struct pk_printer *p, int stop, int one)
{
	int progress = 0;

	if (!printer_own(p, PRINTER_THREAD))
		return 0;

	struct prb *rb = pk_printk_ring();
	int batched = pk_con_batched(con);

	pk_con_src_reset(p->src, rb);
	pk_con_reopen_if_moved(con, &p->reopen_gen);
	for (unsigned n = 0; rb && (con->flags & PK_CON_ENABLED) && pk_con_print_one(p->src, con);) {
		progress = 1;
		if (one || ++n >= (batched ? PRINTER_BATCH_RECORDS : 1) ||
		    atomic_load_explicit(&p->stop, memory_order_acquire) == PRINTER_STOP ||
		    (p->lossless >= 0 && pk_lossless_wanted(pk_con_seq(con)))) {
			pk_con_batch_flush(con);
			printer_publish(con, p);
			printer_release(p);
			/* Exit gave up waiting: the log may be freed after this record. */
			if (one || atomic_load_explicit(&p->stop, memory_order_acquire) == PRINTER_STOP ||
			    !printer_own(p, PRINTER_THREAD))
				return 1;
			n = 0;
		}
	}
	if (!progress && stop == PRINTER_DRAIN)
		pk_con_end_line(con); /* holding the word at the end of a drain */
	pk_con_batch_flush(con);
	printer_publish(con, p);
	printer_release(p);
	return progress;
}

/* C7: nothing to print on @con: the idle hook, holding the owner word as
 * for a record. 1 if the thread should look for records again at once. */
static int printer_idle(struct console *con, struct pk_printer *p)
{
	int (*fn)(struct console *) = atomic_load(&printer_idle_hook);
	int again;

	if (!fn || !con->write_record || !(con->flags & PK_CON_ENABLED) ||
	    !printer_own(p, PRINTER_THREAD))
		return 0;
	again = fn(con);
	printer_release(p);
	return again;
}

/*
 * On @p's thread, holding nothing, after its console was disabled
 * (want_fallback()): take the console lock as registration does, let stderr
 * take over, and print what is due there, as printk would have had the
 * console been printed through the lock (C9: printk took no lock while
 * every console was threaded). Exit holds the lock while it waits for the
 * threads: a thread asked to stop leaves the fall-back to exit.
 */
static PK_COLD PK_NOINLINE void printer_settle_fallback(struct pk_printer *p)
{
	struct timespec ts = { 0, 200 * 1000 };

	while (!pk_con_lock_or_take_over()) {
		if (atomic_load_explicit(&p->stop, memory_order_acquire) != PRINTER_RUN)
			return;
		nanosleep(&ts, NULL);
	}
	pk_con_settle_fallback_unlock();
}

static void *printer_main(void *arg)
{
	struct console *con = arg;
	struct pk_printer *p = pk_con_printer(con);
	sigset_t all;

	printer_self = p;
	/* Signals sent to the process are its threads' business, not ours;
	 * the ones a fault raises stay open, for the crash handler and the
	 * repair of a truncated log file's mapping (SIGBUS). */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	int busy = 0, batched = pk_con_batched(con);

	for (;;) {
		int stop = atomic_load_explicit(&p->stop, memory_order_acquire);

		if (stop == PRINTER_STOP)
			break;

		int progress = printer_pass(con, p, stop, 0);

		if (PK_UNLIKELY(pk_con_fallback_wanted()) && stop == PRINTER_RUN)
			printer_settle_fallback(p);
		if (progress) {
			busy = 1;
			continue;
		}
		if (stop == PRINTER_DRAIN)
			break;
		if (batched && busy) {
			/* C10: caught up after printing; doze, woken by a
			 * timeout, a writer waiting for a lossless console,
			 * pr_flush() or a stop, not by printk. */
			struct timespec doze = { 0, PRINTER_DOZE_NS };
			uint32_t gen;

			busy = 0;
			atomic_fetch_add_explicit(&printer_dozers, 1, memory_order_seq_cst);
			gen = pk_load_sc(&printer_wake);
			if (atomic_load(&p->stop) == PRINTER_RUN)
				printer_futex(FUTEX_WAIT_PRIVATE, gen, &doze);
			atomic_fetch_sub_explicit(&printer_dozers, 1, memory_order_seq_cst);
			continue;
		}
		busy = 0;
		/* Nothing to print: a forwarder checks its connection, which
		 * may have broken with records it wrote unread (console_net.c,
		 * N8), and may have made a new one records wait for. */
		if (stop == PRINTER_RUN && printer_idle(con, p))
			continue;

		/* Nothing to print: announce the sleep, then look once more
		 * (C7: a printk that missed the announcement stored before it),
		 * and sleep until a printk or a stop bumps the word; a second
		 * (printer_idle_ms) at most, for records stored without a
		 * wake-up (notices). */
		int idle_ms = atomic_load_explicit(&printer_idle_ms, memory_order_relaxed);
		struct timespec ts = { idle_ms / 1000, idle_ms % 1000 * 1000000L };

		atomic_fetch_add_explicit(&pk_printer_sleepers, 1, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);

		uint32_t gen = pk_load_sc(&printer_wake);
		int more = printer_pass(con, p, PRINTER_RUN, 1);

		if (!more && atomic_load(&p->stop) == PRINTER_RUN)
			printer_futex(FUTEX_WAIT_PRIVATE, gen, &ts);
		atomic_fetch_sub_explicit(&pk_printer_sleepers, 1, memory_order_seq_cst);
	}
	if (p->lossless >= 0)
		pk_lossless_free(p->lossless); /* C8: nobody waits for a thread gone */
	atomic_store_explicit(&p->exited, 1, memory_order_release);
	return NULL;
}

/* printer_start() failed with @err: give the slot back. */
static int lossless_start_failed(struct pk_printer *p, int err)
{
	if (p->lossless >= 0)
		pk_lossless_free(p->lossless);
	p->lossless = -1;
	return -err;
}

/*
 * What wake_printers() calls (errno's location, syscall()), called once
 * here in normal context: the first call of each through the PLT runs the
 * dynamic linker's lazy binding, which saves the whole vector register
 * state on the stack (about 3 KiB here), and that first call could
 * otherwise be a wake from printk on a signal handler's small stack. A
 * wake of nobody.
 */
static void bind_wake_calls(void)
{
	int saved = errno;

	printer_futex(FUTEX_WAKE_PRIVATE, 0, NULL);
	errno = saved;
}

static int printer_start(struct console *con)
{
	struct pk_printer *p = pk_con_printer(con);
	uint64_t seq = pk_con_seq(con);
	pthread_attr_t attr;
	int err;

	p->crash_safe = (con->flags & PK_CON_CRASH_SAFE) != 0;
	p->reopen_gen = pk_con_reopen_gen();
	atomic_store(&p->stop, PRINTER_RUN);
	atomic_store(&p->exited, 0);
	p->joined = 0;
	p->detached = 0;
	atomic_store(&p->owner, PRINTER_FREE);
	pk_store_release(&p->printed, seq);
	p->lossless = -1;
	if ((con->flags & PK_CON_LOSSLESS) && (p->lossless = pk_lossless_take(con, seq)) < 0)
		return -ENOSPC;
	bind_wake_calls();
	if ((err = pthread_attr_init(&attr)))
		return lossless_start_failed(p, err);
	/* A console's write callback is the program's code: room as for a
	 * small thread of its own, not the 8 MiB default. */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	err = pthread_create(&p->thread, &attr, printer_main, con);
	pthread_attr_destroy(&attr);
	return err ? lossless_start_failed(p, err) : 0;
}

/* Ask @con's thread to stop (@how: PRINTER_DRAIN or PRINTER_STOP) and wait
 * up to @timeout_ms for it: 1 if this call joined it, 2 if it was joined
 * before, 0 if it is still running. */
static int printer_stop(struct console *con, int how, int timeout_ms)
{
	struct pk_printer *p = pk_con_printer(con);
	uint64_t start = pk_clock_ns();

	if (p->joined)
		return 2; /* stopped before (exit, then an unregistration) */
	atomic_store_explicit(&p->stop, how, memory_order_release);
	wake_printers();
	while (!atomic_load_explicit(&p->exited, memory_order_acquire)) {
		if (pk_clock_ns() - start > (uint64_t)timeout_ms * 1000000u)
			return 0;
		struct timespec ts = { 0, 500 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (!p->detached)
		pthread_join(p->thread, NULL);
	p->joined = 1; /* a detached one touches nothing after its exited flag */
	return 1;
}

/* @con's thread published it disabled (printer_print_one()). */
static int printer_disabled(const struct console *con)
{
	return printer_printed(con) == UINT64_MAX;
}

/* @con's thread has printed everything before @next (or @con is disabled). */
static int printer_caught_up(const struct console *con, uint64_t next)
{
	return printer_printed(con) >= next;
}

static uint64_t printer_printed(const struct console *con)
{
	return pk_load_acquire(&pk_con_printer(con)->printed);
}

static void printer_set_printed(struct pk_printer *p, uint64_t seq)
{
	pk_store_release(&p->printed, seq);
}

static struct pk_printer *printer_new(void)
{
	struct pk_printer *p = calloc(1, sizeof(*p));

	if (p && !(p->src = pk_con_src_new())) {
		free(p);
		p = NULL;
	}
	return p;
}

static void printer_free(struct pk_printer *p)
{
	if (p) {
		pk_con_src_free(p->src);
		free(p);
	}
}

static void printer_after_fork(void)
{
	printer_words_held = 0;
}

/* C7: the parent's thread does not exist in the child; the child gets its
 * own, unless the parent's had already ended. */
static void printer_restart(struct console *con)
{
	struct pk_printer *p = pk_con_printer(con);

	if (!atomic_load(&p->exited) && printer_start(con))
		atomic_store(&p->exited, 1);
}

/* Exit gave up waiting for @p's thread, still in a write: it ends after
 * that record and reads the log no more (printer_pass()); nobody joins it. */
static void printer_abandon(struct pk_printer *p)
{
	atomic_store_explicit(&p->stop, PRINTER_STOP, memory_order_release);
	if (!p->detached && !pthread_detach(p->thread))
		p->detached = 1;
}

static int printer_joined(const struct pk_printer *p)
{
	return p->joined;
}

static int printer_crash_safe(const struct pk_printer *p)
{
	return p->crash_safe;
}

static int printer_is_self(const struct pk_printer *p)
{
	return printer_self == p;
}

static int printer_own_other(struct pk_printer *p)
{
	return printer_own(p, PRINTER_OTHER);
}

static int printer_forbids_wait(void)
{
	return printer_self != NULL || printer_words_held != 0;
}

/*
 * C7: what console.c and console_lossless.c reach of printer threads and
 * lossless consoles, which they may not name (console_impl.h). Installed
 * before the first threaded console is registered; a pointer to a constant
 * table, so a second registration stores the same value.
 */
static const struct pk_con_threads printer_table = {
	.wake = wake_printers,
	.printer_new = printer_new,
	.printer_free = printer_free,
	.start = printer_start,
	.after_fork = printer_after_fork,
	.restart = printer_restart,
	.stop = printer_stop,
	.abandon = printer_abandon,
	.joined = printer_joined,
	.crash_safe = printer_crash_safe,
	.is_self = printer_is_self,
	.own = printer_own_other,
	.own_wait = printer_own_wait,
	.release = printer_release,
	.printed = printer_printed,
	.set_printed = printer_set_printed,
	.disabled = printer_disabled,
	.caught_up = printer_caught_up,
	.forbids_wait = printer_forbids_wait,
	.lossless_guard = pk_lossless_guard,
	.lossless_wake_all = pk_lossless_wake_all,
	.lossless_after_fork = pk_lossless_after_fork,
};

void pk_printer_install(void)
{
	atomic_store_explicit(&pk_con_threads, &printer_table, memory_order_release);
}
