// SPDX-License-Identifier: MIT
/*
 * caller.h - who is calling and when (caller.c): the caller identity a
 * record carries, signal-handler nesting, handing on signals we do not
 * handle, and the wall-clock offset. The timestamp clock is clock.h's.
 *
 * Bottom layer: depends on nothing but the ring's record types. Every
 * function here is async-signal-safe and thread-safe.
 */
#ifndef PRINTK_CALLER_H
#define PRINTK_CALLER_H

#include <signal.h>
#include <stdint.h>

#include "base/clock.h"
#include "ring/ringbuffer.h"

/* Who is calling, cached so the fast path makes no system call. */
void pk_caller_get(struct prb_caller *c);
/* This process's id, cached (refreshed in a forked child), without a
 * system call. */
uint32_t pk_caller_pid(void);
/* The caller context for continuation matching: signal nesting and the
 * signal mask (a handler between two fragments differs). One system call. */
uint64_t pk_caller_context(void);
/* This thread's blocked signals (the first 64). One system call. */
uint64_t pk_signal_mask(void);
/* Signal-handler nesting: printk's entry points bracket themselves with these. */
unsigned pk_sigdepth_enter(void);
void pk_sigdepth_leave(void);

/*
 * From a signal handler of ours that does not handle @sig after all: hand
 * it to the handler the program had (@prev_action, as sigaction() returned
 * it when ours was installed), or restore that disposition and raise the
 * signal again, so the process fares as it would have without us.
 */
void pk_signal_pass_on(int sig, siginfo_t *si, void *uctx, const struct sigaction *prev_action);

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in nanoseconds. */
int64_t pk_realtime_offset_ns(void);

#endif
