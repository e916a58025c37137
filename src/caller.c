// SPDX-License-Identifier: MIT
/*
 * caller.c - the identity of the code calling printk: process id, thread id
 * and signal-handler nesting depth.
 *
 * getpid() and gettid() are system calls in glibc 2.36 (~60 ns each), so
 * both are cached: the thread id in initial-exec TLS (no allocation on first
 * touch, safe in a signal handler) and the process id in a global refreshed
 * in the child after fork(). The nesting depth is a TLS counter that every
 * printk entry raises while it runs: a signal handler that prints while the
 * interrupted code is inside printk sees a higher depth, so its fragment never
 * joins the interrupted line.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static _Atomic uint32_t cached_pid;
static _Thread_local PK_TLS_IE uint32_t cached_tid;
static _Thread_local PK_TLS_IE uint32_t tid_owner_pid; /* pid the cached tid belongs to */
static _Thread_local PK_TLS_IE unsigned sigdepth;

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

void pk_caller_get(struct prb_caller *c)
{
	uint32_t pid = current_pid();

	/* A thread that forked keeps its TLS in the child but has a new tid. */
	if (PK_UNLIKELY(tid_owner_pid != pid)) {
		cached_tid = (uint32_t)syscall(SYS_gettid);
		tid_owner_pid = pid;
	}
	c->pid = pid;
	c->tid = cached_tid;
	c->ctx = (uint8_t)(sigdepth > 0 ? sigdepth - 1 : 0);
}

unsigned pk_sigdepth_enter(void)
{
	return ++sigdepth;
}

void pk_sigdepth_leave(void)
{
	sigdepth--;
}

uint64_t pk_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
