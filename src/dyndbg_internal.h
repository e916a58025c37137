// SPDX-License-Identifier: MIT
/*
 * dyndbg_internal.h - what dynamic debug (dyndbg.c) shares with printk.c
 * (the check for a query posted to the log file, made on every printk),
 * setup.c (PRINTK_OPTS dyndbg=) and the modules that print debug messages
 * (netdev_printk.c).
 */
#ifndef PRINTK_DYNDBG_INTERNAL_H
#define PRINTK_DYNDBG_INTERNAL_H

#include <printk/dynamic_debug.h>

#include "atomics.h"
#include "hints.h"
#include "log_shared.h"
#include "ringbuffer.h"

/* The log whose mailbox this process looked at last, and the generation
 * of the last query posted there it has seen (printk.c); the look itself,
 * set by dyndbg.c when it is linked in. */
extern pk_a32 pk_dyndbg_seen_gen;
extern struct pk_log_shared *_Atomic pk_dyndbg_seen_log;
extern void (*_Atomic pk_dyndbg_hook)(struct pk_log_shared *sh);

/* On every printk: three loads and two compares while nothing was posted.
 * Async-signal-safe. */
static inline void pk_dyndbg_check(struct prb *rb)
{
	struct pk_log_shared *sh = (struct pk_log_shared *)(void *)rb->user;

	if (PK_UNLIKELY(pk_load_relaxed(&sh->dyndbg_gen) != pk_load_relaxed(&pk_dyndbg_seen_gen) ||
			atomic_load_explicit(&pk_dyndbg_seen_log, memory_order_relaxed) != sh)) {
		void (*hook)(struct pk_log_shared *) =
			atomic_load_explicit(&pk_dyndbg_hook, memory_order_relaxed);

		if (hook)
			hook(sh);
	}
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
