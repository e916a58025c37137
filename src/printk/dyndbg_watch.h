// SPDX-License-Identifier: MIT
/*
 * dyndbg_watch.h - the slot through which printk looks, on every call, for
 * a dynamic debug query posted to the log file. printk.c owns the slot;
 * dyndbg.c (a higher, optional layer) fills it from its constructor when
 * it is in the program, so printk depends on nothing of dynamic debug.
 */
#ifndef PRINTK_DYNDBG_WATCH_H
#define PRINTK_DYNDBG_WATCH_H

#include "base/atomics.h"
#include "base/hints.h"
#include "log/log_shared.h"
#include "ring/ringbuffer.h"

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

#endif
