// SPDX-License-Identifier: MIT
/*
 * caller.c - the identity of the code calling printk: process id, thread id
 * and signal-handler nesting depth.
 *
 * getpid() and gettid() are system calls in glibc 2.36 (their cost is in
 * docs/performance.md), so both are cached: the thread id in initial-exec
 * TLS (no allocation on first touch, safe in a signal handler) and the
 * process id in a global refreshed in the child after fork(). The nesting
 * depth is a TLS counter that every printk entry raises while it runs: a
 * signal handler that prints while the interrupted code is inside printk
 * sees a higher depth, so its fragment never joins the interrupted line.
 *
 * A handler that runs between two printk calls of the code it interrupted
 * (between "Testing foo: " and "PASSED") is not inside printk, so the depth
 * cannot tell it apart. Its signal mask can: while a handler runs, its
 * signal (and its sa_mask) is blocked, and the mask is restored when it
 * returns. pk_caller_context() folds the mask into the caller context, so a
 * continuation joins a line only if it comes from the same thread at the same
 * nesting with the same mask. It costs one rt_sigprocmask call, paid only by
 * lines that stay open and by continuations, never by complete lines. A
 * handler installed with SA_NODEFER and an empty sa_mask leaves the mask as
 * it was: such a handler brackets itself with pk_printk_handler_enter() and
 * pk_printk_handler_leave().
 *
 * It also hands on a signal that one of our handlers (the crash handler, the
 * log files' SIGBUS repair) does not handle after all: pk_signal_pass_on().
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/printk.h>

#include "base/hints.h"
#include "ring/caller.h"

static _Atomic uint32_t cached_pid;
static _Thread_local PK_TLS_IE uint32_t cached_tid;
static _Thread_local PK_TLS_IE uint32_t tid_owner_pid; /* pid the cached tid belongs to */
static _Thread_local PK_TLS_IE unsigned sigdepth;
static _Thread_local PK_TLS_IE unsigned handler_depth; /* pk_printk_handler_enter() */

static uint32_t current_pid(void)
{
	uint32_t pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);

	if (PK_UNLIKELY(pid == 0)) {
		pid = (uint32_t)getpid();
		atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
	}
	return pid;
}

static void refresh_after_fork(void)
{
	atomic_store_explicit(&cached_pid, (uint32_t)getpid(), memory_order_relaxed);
}

/* Without constructor support the pid is cached on first use and a forked
 * child would keep its parent's: GNU C compilers (gcc, clang) are required for
 * fork-correct caller ids. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((constructor)) static void caller_init(void)
{
	pthread_atfork(NULL, NULL, refresh_after_fork);
	current_pid();
}
#endif

PK_HOT uint32_t pk_caller_pid(void)
{
	return current_pid();
}

PK_HOT void pk_caller_get(struct prb_caller *c)
{
	uint32_t pid = current_pid();

	/* A thread that forked keeps its TLS in the child but has a new tid. */
	if (PK_UNLIKELY(tid_owner_pid != pid)) {
		cached_tid = (uint32_t)syscall(SYS_gettid);
		tid_owner_pid = pid;
	}
	c->pid = pid;
	c->tid = cached_tid;
	c->ctx = (uint64_t)(sigdepth > 0 ? sigdepth - 1 : 0) << 56 ^
		 (uint64_t)handler_depth * UINT64_C(0x9e3779b97f4a7c15);
}

uint64_t pk_signal_mask(void)
{
	sigset_t set;
	uint64_t mask = 0;

	pthread_sigmask(SIG_BLOCK, NULL, &set);
	/* Signals 1..64 are the first 64 bits of the mask on Linux. */
	memcpy(&mask, &set, sizeof(mask) < sizeof(set) ? sizeof(mask) : sizeof(set));
	return mask;
}

uint64_t pk_caller_context(void)
{
	uint64_t mask = pk_signal_mask();

	return mask ^ ((uint64_t)(sigdepth > 0 ? sigdepth - 1 : 0) << 56) ^
	       ((uint64_t)handler_depth * UINT64_C(0x9e3779b97f4a7c15));
}

void pk_printk_handler_enter(void)
{
	handler_depth++;
}

void pk_printk_handler_leave(void)
{
	handler_depth--;
}

PK_HOT unsigned pk_sigdepth_enter(void)
{
	return ++sigdepth;
}

PK_HOT void pk_sigdepth_leave(void)
{
	sigdepth--;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* CLOCK_REALTIME read between two CLOCK_MONOTONIC reads, against their
 * midpoint: a thread preempted between two reads (a loaded machine, a
 * signal handler) would otherwise shift the offset by the whole delay, and
 * the consoles would take that for a clock step and write it into the
 * log. A pair further apart than PK_OFFSET_PAIR_NS is read again, a few
 * times at most; the closest pair wins. Async-signal-safe. */
#define PK_OFFSET_PAIR_NS 20000
int64_t pk_realtime_offset_ns(void)
{
	int64_t best = 0, best_gap = INT64_MAX;

	for (int tries = 0; tries < 4 && best_gap > PK_OFFSET_PAIR_NS; tries++) {
		struct timespec m0, rt, m1;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &m1);

		int64_t a = ts_ns(&m0), b = ts_ns(&m1), gap = b - a;

		if (gap >= 0 && gap < best_gap) {
			best_gap = gap;
			best = ts_ns(&rt) - (a + gap / 2);
		}
	}
	return best;
}

void pk_signal_pass_on(int sig, siginfo_t *si, void *uctx, const struct sigaction *prev_action)
{
	struct sigaction prev = *prev_action;
	bool has_handler = (prev.sa_flags & SA_SIGINFO)
				   ? prev.sa_sigaction != NULL
				   : (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN);

	if (has_handler) {
		if (prev.sa_flags & SA_RESETHAND) {
			struct sigaction dfl;

			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			sigaction(sig, &dfl, NULL);
		}
		if (prev.sa_flags & SA_SIGINFO)
			prev.sa_sigaction(sig, si, uctx);
		else
			prev.sa_handler(sig);
		return;
	}
	if (prev.sa_handler == SIG_IGN && (!si || si->si_code <= 0))
		return; /* an ignored signal that someone sent stays ignored */
	/* The signal is blocked while we run: raise() leaves it pending, and it
	 * is delivered with the restored disposition as soon as we return. For
	 * a fault under SIG_IGN the kernel forces the default when the
	 * instruction faults again. */
	sigaction(sig, &prev, NULL);
	raise(sig);
}
