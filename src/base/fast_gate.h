// SPDX-License-Identifier: MIT
/*
 * fast_gate.h - one word that says whether printk's lane fast path
 * (printk.c's lane_fast(), docs/lanes.md) may be taken: 0 while none of the
 * rarely true conditions it must leave to store() holds, one bit a
 * condition otherwise. The hot path loads and tests this one word instead
 * of a word per condition.
 *
 * Owns the word. Its bits belong to the layers that set them (this is the
 * lowest layer, so all of them can): the ring's lanes switch
 * (ringbuffer.c), the log settings' ignore_loglevel and the default log's
 * "used" mark (settings.c), printk's pending "nested too deep" notice
 * (printk.c), dynamic debug's mailbox (dyndbg.c).
 *
 * Invariants: a bit is set whenever its condition holds, at the latest
 * right after the condition's own word changed (a fast path that raced
 * with the change is one that ran before it). PK_GATE_LANES_OFF and
 * PK_GATE_LOG_UNUSED are their conditions' only record (no other word
 * holds them), so they never disagree with them. PK_GATE_NESTING may be
 * set with nothing pending (its owner clears it before taking the count,
 * and a count given back sets it again); that only sends a call to
 * store(), which clears it. PK_GATE_DYNDBG does not keep the fast path
 * out: it says to look at dynamic debug's mailbox first.
 * Every access is atomic and relaxed: async-signal-safe, lock-free.
 */
#ifndef PRINTK_FAST_GATE_H
#define PRINTK_FAST_GATE_H

#include <stdint.h>

#include "base/atomics.h"
#include "base/hints.h"

#define PK_GATE_LANES_OFF  0x1u	 /* printk.lanes=0: no lanes for this process's writers */
#define PK_GATE_LOG_UNUSED 0x2u	 /* no record stored in the default log yet */
#define PK_GATE_IGNORE_LVL 0x4u	 /* ignore_loglevel: every console prints every level */
#define PK_GATE_NESTING	   0x8u	 /* a "nested too deep" notice may be pending */
#define PK_GATE_DYNDBG	   0x10u /* dynamic debug is in the program: look at its mailbox */

/* Lanes on, the log not used yet: the word a process starts with. */
#define PK_GATE_INITIAL PK_GATE_LOG_UNUSED

extern PK_HIDDEN pk_a32 pk_fast_gate;

static PK_ALWAYS_INLINE uint32_t pk_fast_gate_load(void)
{
	return pk_load_relaxed(&pk_fast_gate);
}

static inline void pk_fast_gate_set(uint32_t bits)
{
	atomic_fetch_or_explicit(&pk_fast_gate, bits, PK_MO_RLX_RMW);
}

static inline void pk_fast_gate_clear(uint32_t bits)
{
	atomic_fetch_and_explicit(&pk_fast_gate, ~bits, PK_MO_RLX_RMW);
}

static inline void pk_fast_gate_put(uint32_t bits, int on)
{
	if (on)
		pk_fast_gate_set(bits);
	else
		pk_fast_gate_clear(bits);
}

#endif
