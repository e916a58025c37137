// SPDX-License-Identifier: MIT
/*
 * atomics.h - the one place that maps the ring's memory-ordering vocabulary
 * onto C11 <stdatomic.h>.
 *
 * Every word of shared memory (the ring header, descriptors and text) is an
 * _Atomic uint64_t or _Atomic uint32_t and is only touched through these
 * macros, so the program is data-race-free in C11 terms even where readers
 * copy speculatively (the seqlock problem: Boehm, MSPC 2012).
 *
 * Under ThreadSanitizer (PRINTK_TSAN) standalone fences are not modelled, so
 * relaxed loads become acquire loads and relaxed stores become release
 * stores: every ordering the fences provide is then also carried by the
 * accesses themselves, and TSan checks the program it actually sees.
 */
#ifndef PRINTK_ATOMICS_H
#define PRINTK_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free (shared memory)");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free (shared memory)");

typedef _Atomic uint64_t pk_a64;
typedef _Atomic uint32_t pk_a32;

#ifdef PRINTK_TSAN
#define PK_MO_RLX_LOAD	memory_order_acquire
#define PK_MO_RLX_STORE memory_order_release
#define PK_MO_RLX_RMW	memory_order_acq_rel
#else
#define PK_MO_RLX_RMW	memory_order_relaxed
#define PK_MO_RLX_LOAD	memory_order_relaxed
#define PK_MO_RLX_STORE memory_order_relaxed
#endif

#define pk_load_relaxed(p)	 atomic_load_explicit((p), PK_MO_RLX_LOAD)
#define pk_load_acquire(p)	 atomic_load_explicit((p), memory_order_acquire)
#define pk_load_sc(p)		 atomic_load_explicit((p), memory_order_seq_cst)
#define pk_store_relaxed(p, v)	 atomic_store_explicit((p), (v), PK_MO_RLX_STORE)
#define pk_store_release(p, v)	 atomic_store_explicit((p), (v), memory_order_release)
#define pk_fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define pk_fetch_add_sc(p, v)	 atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define pk_fetch_sub_sc(p, v)	 atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)

/* CAS helpers: on failure *(expected) holds the current value. */
#define pk_cas_sc(p, expected, desired)                                                      \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),                  \
						memory_order_seq_cst, memory_order_seq_cst)
#define pk_cas_release(p, expected, desired)                                                 \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),                  \
						memory_order_release, memory_order_relaxed)
#define pk_cas_acq_rel(p, expected, desired)                                                 \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired),                  \
						memory_order_acq_rel, memory_order_acquire)
#define pk_cas_relaxed(p, expected, desired)                                                 \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired), PK_MO_RLX_RMW,   \
						PK_MO_RLX_LOAD)

#define pk_fence_acquire() atomic_thread_fence(memory_order_acquire)
#define pk_fence_release() atomic_thread_fence(memory_order_release)
#define pk_fence_sc()	   atomic_thread_fence(memory_order_seq_cst)

#endif
