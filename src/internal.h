// SPDX-License-Identifier: MIT
/*
 * internal.h - declarations shared by the library's modules, never installed.
 *
 * Each module owns its state; this header only names the entry points one
 * module offers another.
 */
#ifndef PRINTK_INTERNAL_H
#define PRINTK_INTERNAL_H

#include <stdint.h>

#include <printk/log.h>

#include "ringbuffer.h"

#if defined(__GNUC__) || defined(__clang__)
#define PK_TLS_IE __attribute__((tls_model("initial-exec")))
#define PK_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PK_TLS_IE
#define PK_LIKELY(x)   (x)
#define PK_UNLIKELY(x) (x)
#endif

/* log.c: the ring behind a handle. */
struct prb *pk_log_ring(struct pk_log *log);

/* caller.c: who is calling, cached so the fast path makes no syscall.
 * Async-signal-safe. */
void pk_caller_get(struct prb_caller *c);
/* Signal-handler nesting: printk's entry points bracket themselves with these. */
unsigned pk_sigdepth_enter(void);
void pk_sigdepth_leave(void);

/* time: CLOCK_MONOTONIC in nanoseconds (vDSO, async-signal-safe). */
uint64_t pk_clock_ns(void);

#endif
