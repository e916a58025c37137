// SPDX-License-Identifier: MIT
/*
 * dyndbg_internal.h - what dynamic debug (dyndbg.c) shares with printk.c
 * (the check for a query posted to the log file, made on every printk) and
 * the modules that print debug messages (netdev_printk.c); setup.c reaches
 * its PRINTK_OPTS dyndbg= through setup_hooks.h.
 */
#ifndef PRINTK_DYNDBG_INTERNAL_H
#define PRINTK_DYNDBG_INTERNAL_H

#include <printk/dynamic_debug.h>

#include "atomics.h"
#include "hints.h"
#include "log_shared.h"
#include "ringbuffer.h"

/* Dynamic debug's look at the log's mailbox (dyndbg.c's): the log this
 * process looked at last, the generation of the last query posted there it
 * has seen, and the look itself. */
struct pk_dyndbg_watch {
	pk_a32 seen_gen;
	struct pk_log_shared *_Atomic seen_log;
	void (*poll)(struct pk_log_shared *sh);
};

/* Where printk finds it: set by dyndbg.c's constructor when that file is in
 * the program, NULL else (printk.c's slot; printk does not depend on
 * dyndbg.c). */
extern const struct pk_dyndbg_watch *_Atomic pk_printk_dyndbg_watch;

/* On every printk: five loads and three compares while nothing was
 * posted; one load and a test without dynamic debug. Async-signal-safe. */
static inline void pk_dyndbg_check(struct prb *rb)
{
	const struct pk_dyndbg_watch *w =
		atomic_load_explicit(&pk_printk_dyndbg_watch, memory_order_relaxed);
	struct pk_log_shared *sh = (struct pk_log_shared *)(void *)rb->user;

	if (w && PK_UNLIKELY(pk_load_relaxed(&sh->dyndbg_gen) != pk_load_relaxed(&w->seen_gen) ||
			     atomic_load_explicit(&w->seen_log, memory_order_relaxed) != sh))
		w->poll(sh);
}

/* PRINTK_OPTS dyndbg=: check and apply @query now, and again to every
 * object registered later. The sites matched, or the first error (the
 * kernel's messages are logged). Start-up only. */
int pk_dyndbg_boot(const char *query);

/* The f/l/m/s/t prefix of @site's message into @buf (128 bytes), the
 * kernel's __dynamic_emit_prefix(). Returns @buf. Async-signal-safe. */
const char *pk_dyndbg_prefix(const struct pk_dyndbg *site, char *buf);
#define PK_DYNDBG_PREFIX_SIZE 128

#endif
