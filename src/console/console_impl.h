// SPDX-License-Identifier: MIT
/*
 * console_impl.h - what the files of the console layer share, and nothing
 * else includes:
 *
 *   console.c           the registry, the console lock and the printing
 *                       loop (C1-C6, C9), each console's state;
 *   console_lossless.c  lossless consoles (C8): the slots, the ring's retire
 *                       guard, the wait of a writer;
 *   console_printer.c   printer threads (C7): a threaded console's thread,
 *                       its owner word, the wake-up futex;
 *   console_register.c  pk_register_console(): brings in the printer
 *                       threads before a threaded console is registered.
 *
 * They are layered in that order: each calls only the files listed before
 * it, and console.c reaches the other two only through the table of
 * struct pk_con_threads, which console_printer.c fills. Each file keeps its
 * state static and offers the others only the calls below: the printer
 * threads never see a console's state or the loop's buffers (struct
 * pk_console_state and struct con_src are console.c's), console.c never
 * sees a printer's fields (struct pk_printer is console_printer.c's), and
 * neither sees a lossless slot. What the layers above may call is
 * console_internal.h.
 */
#ifndef PRINTK_CONSOLE_IMPL_H
#define PRINTK_CONSOLE_IMPL_H

#include <stdint.h>

#include "console/console_internal.h"
#include "ring/ringbuffer.h"

#if defined(__GNUC__) || defined(__clang__)
/* Shared between these files only: addressed like a static. */
#define PK_CON_SHARED __attribute__((visibility("hidden")))
#else
#define PK_CON_SHARED
#endif

struct console;
struct con_src;
struct pk_printer;

/* ----------------------------------------------- console.c offers -- */

/* The loop's buffers (where records are read to and output staged), for a
 * printer thread of its own; NULL when memory is short. */
struct con_src *pk_con_src_new(void);
void pk_con_src_free(struct con_src *src);
/* Read from @rb from now on, with no hint of a just stored record. */
void pk_con_src_reset(struct con_src *src, struct prb *rb);
/* Print @con's next piece of work from @src (the rest of its record or the
 * next record), by the print loop's line rules. 1: progress, 0: caught up.
 * The caller owns @con's state: the console lock or the printer's word. */
int pk_con_print_one(struct con_src *src, struct console *con);
/* End @con's open line, if it is enabled and has one (same ownership). */
void pk_con_end_line(struct console *con);
/* C10 (console.c): whether @con batches (a threaded file console), and
 * writing its batch; 0 or the error of the last piece that failed. Its
 * owner only, before it lets go of the console. */
int pk_con_batched(const struct console *con);
int pk_con_batch_flush(struct console *con);
/* @con is a file console (console_fd.c) not marked PK_CON_LOSSY: lossless
 * unless told otherwise (console_register.c). */
int pk_con_lossless_by_default(const struct console *con);
/* Where @con stands (the record it prints or prints next), and its printer
 * (fixed at registration; NULL: printed through the console lock). */
uint64_t pk_con_seq(const struct console *con);
struct pk_printer *pk_con_printer(const struct console *con);
/* pk_console_reopen_all() requests: the generation now, and a reopen of
 * @con when it moved since *@seen (updated). Owning @con's state. */
uint32_t pk_con_reopen_gen(void);
void pk_con_reopen_if_moved(struct console *con, uint32_t *seen);
/* A disabled threaded console waits for stderr to take over (C7). */
int pk_con_fallback_wanted(void);
/* Take the console lock, or take it over from a holder stuck in a write
 * (C6); 0 if neither. Then pk_con_settle_fallback_unlock(): stderr takes
 * over if the disabled console was the last, the lock is let go, and
 * what is due is printed. */
int pk_con_lock_or_take_over(void);
void pk_con_settle_fallback_unlock(void);
/* The console lock is held by thread @tid, or was taken over by the crash
 * path. */
int pk_con_lock_held_by(uint32_t tid);
/* pk_console_crash_begin() was called (the crash path began); an emergency
 * flush is running (panic, a fatal signal). */
int pk_con_crash_begun(void);
int pk_con_emergency(void);

/* Printer threads about to sleep or asleep: printk wakes only these (C7).
 * Here so that printk's inline check reads it without a call; only
 * console_printer.c's threads change it. */
extern _Atomic int pk_printer_sleepers PK_CON_SHARED;
/* console_drain_ms: what exit and unregistration wait for printer threads,
 * and how long exit prints at most. */
int pk_con_drain_ms(void);
/* The registration pk_register_console() (console_register.c) ends in,
 * once it brought what the console needs. */
int pk_con_register(struct console *con);

/* The requests of pk_con_threads' stop(). */
enum { PRINTER_RUN, PRINTER_DRAIN, PRINTER_STOP };

/*
 * What console.c reaches of printer threads (C7) and lossless consoles (C8)
 * without naming them, so that the files stay layered: console.c at the
 * bottom, console_lossless.c on it, console_printer.c on both, and
 * console_register.c on top. console_printer.c fills the table
 * (pk_printer_install()) when the first threaded console is registered;
 * until then pk_con_threads is NULL, and console.c reads it only for a
 * threaded console or where NULL means none was ever registered (fork,
 * the crash path). console_lossless.c reaches the printer threads the same
 * way: a lossless console is threaded, so the table is set when it runs.
 */
struct pk_con_threads {
	/* console_printer.c */
	/* Wake every printer thread. Async-signal-safe; a syscall only if one
	 * sleeps. */
	void (*wake)(void);
	/* A printer for a console being registered (its buffers included), and
	 * freeing it once its thread is joined. */
	struct pk_printer *(*printer_new)(void);
	void (*printer_free)(struct pk_printer *p);
	/* Start @con's thread (at registration); 0 or a negative errno
	 * (-ENOSPC: no lossless slot free). */
	int (*start)(struct console *con);
	/* After fork(), in the child: the calling thread holds no printer word;
	 * restart() starts @con's thread again unless it had exited. */
	void (*after_fork)(void);
	void (*restart)(struct console *con);
	/* Ask @con's thread to stop (PRINTER_DRAIN or PRINTER_STOP) and wait up
	 * to @timeout_ms: 1 if this call joined it, 2 if it was joined before,
	 * 0 if it is still running. */
	int (*stop)(struct console *con, int how, int timeout_ms);
	/* A thread stop() left in a write: it stops after that record, and
	 * nobody will join it. */
	void (*abandon)(struct pk_printer *p);
	int (*joined)(const struct pk_printer *p);
	int (*crash_safe)(const struct pk_printer *p);
	/* The calling thread is @p's thread. */
	int (*is_self)(const struct pk_printer *p);
	/* @p's owner word for anyone but its thread: take it if free (1), or
	 * wait up to @timeout_ms (negative: for ever; normal context only), and
	 * let go. */
	int (*own)(struct pk_printer *p);
	int (*own_wait)(struct pk_printer *p, int timeout_ms);
	void (*release)(struct pk_printer *p);
	/* The position @con's thread published (UINT64_MAX: disabled), and
	 * setting it while owning the word (a position reset). */
	uint64_t (*printed)(const struct console *con);
	void (*set_printed)(struct pk_printer *p, uint64_t seq);
	int (*disabled)(const struct console *con);
	int (*caught_up)(const struct console *con, uint64_t next);
	/* The calling thread is a printer thread, or holds a printer's word: a
	 * printk here must not wait for a printer thread (C8). */
	int (*forbids_wait)(void);

	/* console_lossless.c */
	/* The ring's retire guard (ringbuffer.c, G1) while lossless consoles
	 * may exist: 1 if the caller slept until they passed @seq. */
	int (*lossless_guard)(struct prb *rb, uint64_t seq);
	/* Wake every writer waiting for a slot (the crash path began). */
	void (*lossless_wake_all)(void);
	/* After fork(), in the child: no slot is held, nobody waits. */
	void (*lossless_after_fork)(void);
};

/* console.c's; written by pk_printer_install() only. */
extern const struct pk_con_threads *_Atomic pk_con_threads PK_CON_SHARED;

/* --------------------------------------- console_printer.c offers -- */

/* Fill pk_con_threads (idempotent): console_register.c, before a threaded
 * console is registered. */
void pk_printer_install(void);

/* -------------------------------------- console_lossless.c offers -- */

/* What pk_con_threads points to (console_lossless.c's entries). */
int pk_lossless_guard(struct prb *rb, uint64_t seq);
void pk_lossless_wake_all(void);
void pk_lossless_after_fork(void);
/* To console_printer.c: a slot for @con starting at @seq (-1: all taken);
 * giving it back; the thread's position published after every record. */
int pk_lossless_take(const struct console *con, uint64_t seq);
void pk_lossless_free(int slot);
void pk_lossless_publish(int slot, uint64_t pos);
/* C10: a writer waits for a lossless console to reach @pos or less. */
int pk_lossless_wanted(uint64_t pos);

#endif
