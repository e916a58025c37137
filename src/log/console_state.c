// SPDX-License-Identifier: MIT
/*
 * console_state.c - the forwarding consoles' states in a log's shared
 * state (struct pk_log_shared.console_states), so that a reader in another
 * process (udmesg --info) sees whether the records reach their collector.
 *
 * Owns the writing side of that table. A console takes an entry once (by
 * a compare-and-swap of its pid into a free one, or into one whose process
 * is gone), then only its own process writes it: each publish is a few
 * relaxed stores, cheap enough for every message a printer thread sends.
 * An entry outlives its process, so a reader of a log whose writer died
 * sees what its forwarders had not delivered; the next claimant that finds
 * no free entry takes it. The reading side (validation of untrusted
 * entries) is reader.c's.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "base/atomics.h"
#include "log/console_state.h"
#include "log/log_shared.h"
#include "ring/caller.h"

static void put(struct pk_log_console_state *e, const char *name, const struct pk_console_stats *st)
{
	uint64_t w[2] = { 0, 0 };

	memcpy(w, name, strnlen(name, 15));
	pk_store_relaxed(&e->name[0], w[0]);
	pk_store_relaxed(&e->name[1], w[1]);
	pk_store_relaxed(&e->state, (uint32_t)st->state);
	pk_store_relaxed(&e->last_error, (uint32_t)(st->last_error < 0 ? -st->last_error : 0));
	pk_store_relaxed(&e->delivered, st->delivered);
	pk_store_relaxed(&e->waiting, st->waiting);
	pk_store_relaxed(&e->lost, st->lost);
	pk_store_relaxed(&e->changes, st->changes);
}

int pk_console_state_claim(struct pk_log *log, const char *name, const struct pk_console_stats *st)
{
	if (!log || !name || !st || !pk_log_ring(log)->writable)
		return -EINVAL;

	struct pk_log_shared *sh = pk_log_shared(log);
	uint32_t me = pk_caller_pid();

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < PK_LOG_CONSOLE_STATES; i++) {
			struct pk_log_console_state *e = &sh->console_states[i];
			uint32_t owner = pk_load_relaxed(&e->pid);

			/* First pass: free entries; second: those of processes
			 * that are gone (kill() says so: a reused pid only keeps
			 * an entry that is stale anyway). */
			if (pass == 0 ? owner != 0 : owner == 0 || owner == me || kill((pid_t)owner, 0) == 0 ||
							   errno != ESRCH)
				continue;
			if (atomic_compare_exchange_strong(&e->pid, &owner, me)) {
				put(e, name, st);
				return i;
			}
		}
	}
	return -ENOSPC;
}

void pk_console_state_put(struct pk_log *log, int slot, const char *name, const struct pk_console_stats *st)
{
	if (!log || slot < 0 || slot >= PK_LOG_CONSOLE_STATES || !pk_log_ring(log)->writable)
		return;

	struct pk_log_console_state *e = &pk_log_shared(log)->console_states[slot];

	if (pk_load_relaxed(&e->pid) == pk_caller_pid()) /* still ours (not after a fork) */
		put(e, name, st);
}
