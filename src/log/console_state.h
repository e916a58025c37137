// SPDX-License-Identifier: MIT
/*
 * console_state.h - a forwarding console's state published in its log's
 * shared state, for readers in other processes (console_state.c).
 */
#ifndef PRINTK_CONSOLE_STATE_H
#define PRINTK_CONSOLE_STATE_H

#include <printk/forward.h>
#include <printk/log.h>

/* Take an entry of @log's table for the console @name of this process and
 * fill it with @st: the entry's index, -ENOSPC if every entry belongs to a
 * live process, -EINVAL for a log this process cannot write.
 * Async-signal-safe (kill(2) with signal 0 to tell a dead owner). */
int pk_console_state_claim(struct pk_log *log, const char *name, const struct pk_console_stats *st);

/* Write @st into the entry @slot (from pk_console_state_claim(); a
 * negative @slot does nothing), if this process still owns it.
 * Async-signal-safe, a few relaxed stores. */
void pk_console_state_put(struct pk_log *log, int slot, const char *name, const struct pk_console_stats *st);

#endif
