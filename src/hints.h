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
#else
#define PK_TLS_IE
#define PK_LIKELY(x)	 (x)
#define PK_UNLIKELY(x)	 (x)
#define PK_ALWAYS_INLINE inline
#define PK_NOINLINE
#endif

#endif
