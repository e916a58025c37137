// SPDX-License-Identifier: MIT
/*
 * hints.h - the few compiler hints the library uses, each with a plain C11
 * fallback, in one place (never installed).
 */
#ifndef PRINTK_HINTS_H
#define PRINTK_HINTS_H

#if defined(__GNUC__) || defined(__clang__)
#define PK_TLS_IE	 __attribute__((tls_model("initial-exec")))
#define PK_LIKELY(x)	 __builtin_expect(!!(x), 1)
#define PK_UNLIKELY(x)	 __builtin_expect(!!(x), 0)
#define PK_ALWAYS_INLINE inline __attribute__((always_inline))
#define PK_NOINLINE	 __attribute__((noinline))
/* On printk's own path: placed together (.text.hot), each function at a
 * cache line, so the code a printk runs spans few lines; measured with a
 * console on /dev/null, where a write(2) evicts some of them every call. */
#define PK_HOT		 __attribute__((hot, aligned(64)))
/* On the declaration of a library-internal variable read on printk's
 * path: accessed directly, not through the GOT, in the shared library. */
#define PK_HIDDEN	 __attribute__((visibility("hidden")))
#else
#define PK_TLS_IE
#define PK_LIKELY(x)	 (x)
#define PK_UNLIKELY(x)	 (x)
#define PK_ALWAYS_INLINE inline
#define PK_NOINLINE
#define PK_HOT
#define PK_HIDDEN
#endif

/* One step of a short spin-wait for another CPU: the pause instruction
 * where there is one (it frees the core's other thread and avoids the
 * memory-order flush when the awaited word changes), nothing elsewhere. */
#ifdef __SSE2__
#include <emmintrin.h>
static inline void pk_cpu_relax(void)
{
	_mm_pause();
}
#else
static inline void pk_cpu_relax(void)
{
}
#endif

#endif
