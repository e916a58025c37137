// SPDX-License-Identifier: MIT
/*
 * crash.c - panic() and the opt-in fatal-signal handler.
 *
 * Owns: the panicking thread, the crash report in progress, the previous
 * dispositions of SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, and the
 * alternate signal stack it installs.
 *
 * panic(fmt, ...), as Linux's panic():
 *   1. format the message first (nothing is reserved in the ring yet);
 *   2. console_verbose(), then store "Kernel panic - not syncing: <msg>" at
 *      KERN_EMERG without printing it from printk (so no console that is not
 *      crash safe is called from here if panic() runs in a signal handler);
 *   3. unless this thread is inside a console write, pr_flush(1 s): every
 *      console, crash safe or not, prints what it has not printed yet if the
 *      console lock can be had within a second;
 *   4. pk_console_emergency_flush(1 s): the crash-safe consoles print the
 *      rest, skipping records whose writer never finished them, taking the
 *      consoles over from a holder that does not let go in time;
 *   5. the dumpers (KMSG_DUMP_PANIC);
 *   6. "---[ end Kernel panic - not syncing: <msg> ]---", flush again;
 *   7. abort(). The fatal-signal handler, if installed, recognises the
 *      panicking thread's SIGABRT and does not report it a second time.
 * A second thread that panics meanwhile stops for good (the kernel's
 * panic_smp_self_stop()); a panic from inside the panic (a dumper) logs its
 * message and aborts at once.
 *
 * The fatal-signal handler (pk_crash_handler_install, PRINTK_OPTS
 * crash_dump=1) runs on an alternate signal stack of CRASH_ALTSTACK_SIZE
 * bytes with a guard page, so a stack overflow is reported too; the five
 * signals are blocked while it runs, so a fault inside it kills the process
 * with the default action instead of recursing. It:
 *   1. reports one crash at a time: a second thread that crashes waits
 *      until the first one's report is out (the first normally ends the
 *      process); a nested fatal signal in the reporting thread skips it;
 *   2. stores "BUG: <SIG> (signal N) at address 0x... in pid P tid T" at
 *      KERN_EMERG, formatted before anything is reserved (printk's store
 *      path), then a "Call Trace:" unwound from the signal's context, the
 *      faulting frame first (stacktrace.c); it never waits for a
 *      reservation: one that the crashing thread left half-written stays
 *      behind and every reader here skips it (PRB_READ_SKIP_UNFINISHED);
 *   3. pk_console_emergency_flush(500 ms): only consoles marked
 *      PK_CON_CRASH_SAFE print; the thread's open partial line was printed as
 *      it was written and is ended with a newline; a console lock held by
 *      the crashing thread itself (a crash inside a console write) is taken
 *      over after the wait;
 *   4. the dumpers (KMSG_DUMP_OOPS), then a flush of what they printed;
 *   5. the program's own handler, if it had one, is called with the same
 *      signal, siginfo and context (chaining; SA_RESETHAND honoured), and we
 *      return to wherever it lets us; otherwise the previous disposition is
 *      restored and the signal raised again: the process dies of it exactly
 *      as it would have without us (core dump, exit status).
 * Everything the handler calls is async-signal-safe.
 *
 * Limitations: sigaltstack() is per thread, so only the thread that
 * installs the handler (the main thread, with PRINTK_OPTS) reports its own
 * stack overflow; another thread that overflows its stack dies of SIGSEGV
 * without a report. Sanitizer runtimes (ASan, TSan) install SIGSEGV handlers
 * of their own; ours chains to them like to any program handler.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "base/hints.h"
#include "base/stacktrace.h"
#include "console/console_internal.h"
#include "format/vsprintf.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "ring/caller.h"

#define CRASH_ALTSTACK_SIZE ((size_t)256 * 1024) /* at least 64 KiB; room for dumpers */
#define PANIC_FLUSH_MS	    1000
#define CRASH_FLUSH_MS	    500

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NCRASH ((int)(sizeof(crash_signals) / sizeof(crash_signals[0])))

static _Atomic uint32_t panic_tid;    /* the panicking thread, 0: none */
static _Atomic uint32_t crash_owner;  /* the thread writing a crash report, 0: none */

/* Written under install_lock in normal context before the handler is
 * installed; read by the handler. */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction prev_action[NCRASH];
static bool installed;
static void *altstack_map; /* guard page + stack */
static size_t altstack_map_len;
static void *altstack_sp; /* the stack part, as given to sigaltstack() */
static stack_t prev_altstack;

static uint32_t current_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------- panic -- */

void pk_panic(const char *fmt, ...)
{
	char buf[1024]; /* the kernel's panic buffer */
	va_list ap;
	uint32_t me = current_tid(), expected = 0;
	struct prb *rb = pk_printk_ring();

	va_start(ap, fmt);
	int len = pk_vscnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len > 0 && buf[len - 1] == '\n')
		buf[len - 1] = '\0';

	if (!atomic_compare_exchange_strong(&panic_tid, &expected, me)) {
		if (expected != me) {
			for (;;)
				pause(); /* the panicking thread ends the process */
		}
		/* A panic inside the panic (a dumper, a console): say so, stop. */
		pk_store_notice(0, "Kernel panic - not syncing: %s\n", buf);
		pk_console_emergency_flush(rb, 0);
		abort();
	}

	pk_console_crash_begin();
	pk_console_verbose();
	pk_store_notice(0, "Kernel panic - not syncing: %s\n", buf);
	if (!pk_console_in_write())
		pk_pr_flush(PANIC_FLUSH_MS, 0);
	pk_console_emergency_flush(rb, PANIC_FLUSH_MS);
	pk_kmsg_dump(PK_KMSG_DUMP_PANIC);
	pk_store_notice(0, "---[ end Kernel panic - not syncing: %s ]---\n", buf);
	pk_console_emergency_flush(rb, PANIC_FLUSH_MS);
	abort();
}

/* --------------------------------------------------- the signal handler -- */

static int signal_index(int sig)
{
	for (int i = 0; i < NCRASH; i++)
		if (crash_signals[i] == sig)
			return i;
	return -1;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	case SIGFPE:
		return "SIGFPE";
	case SIGABRT:
		return "SIGABRT";
	default:
		return "signal";
	}
}

/* The interrupted thread's stack, faulting frame first, at the report's level. */
static void crash_trace(const void *uctx)
{
	struct pk_frame frames[PK_STACK_MAX];
	int n = pk_stack_walk(frames, PK_STACK_MAX, uctx, 0, PK_UNWIND_AUTO);

	if (n <= 0)
		return;
	pk_store_notice(0, "Call Trace:\n");
	pk_store_notice(0, " <TASK>\n");
	for (int i = 0; i < n; i++)
		pk_store_notice(0, (frames[i].flags & PK_FRAME_EXACT) ? " %pS\n" : " %pB\n",
				(void *)frames[i].pc);
	pk_store_notice(0, " </TASK>\n");
}

static void crash_report(int sig, const siginfo_t *si, const void *uctx)
{
	struct prb *rb = pk_printk_ring();
	unsigned pid = (unsigned)getpid(), tid = current_tid();

	pk_console_crash_begin();
	/* si_code > 0: the kernel sent it for a fault, si_addr is meaningful;
	 * otherwise kill(), raise() or abort() sent it and si_pid says who. */
	if (si && si->si_code > 0)
		pk_store_notice(0, "BUG: %s (signal %d) at address 0x%lx in pid %u tid %u\n",
				       signal_name(sig), sig, (unsigned long)(uintptr_t)si->si_addr,
				       pid, tid);
	else
		pk_store_notice(0, "BUG: %s (signal %d) sent by pid %d in pid %u tid %u\n",
				       signal_name(sig), sig, si ? (int)si->si_pid : 0, pid, tid);
	if (uctx)
		crash_trace(uctx);
	pk_console_emergency_flush(rb, CRASH_FLUSH_MS);
	pk_kmsg_dump(PK_KMSG_DUMP_OOPS);
	pk_console_emergency_flush(rb, CRASH_FLUSH_MS); /* what the dumpers printed */
}

static void crash_handler(int sig, siginfo_t *si, void *uctx)
{
	/* A log file truncated under its mapping: repaired there, no crash. */
	if (pk_logfile_repair_fault(sig, si))
		return;

	int saved_errno = errno;
	int idx = signal_index(sig);
	uint32_t me = current_tid();
	bool report = atomic_load(&panic_tid) != me; /* panic() reported it already */

	if (idx < 0)
		return;
	while (report) {
		uint32_t expected = 0;

		if (atomic_compare_exchange_strong(&crash_owner, &expected, me))
			break;
		if (expected == me) {
			report = false; /* a fatal signal inside our own report */
			break;
		}
		sleep_ms(1); /* another thread's report; it normally ends the process */
	}
	if (report) {
		crash_report(sig, si, uctx);
		/* Before passing on: a program handler may longjmp out. */
		atomic_store(&crash_owner, 0);
	}
	pk_signal_pass_on(sig, si, uctx, &prev_action[idx]);
	errno = saved_errno;
}

/* ---------------------------------------------------- install/uninstall -- */

static void crash_after_fork_child(void)
{
	/* Whoever was reporting or panicking was another thread: gone here. */
	atomic_store(&crash_owner, 0);
	atomic_store(&panic_tid, 0);
}

static int altstack_install(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = CRASH_ALTSTACK_SIZE;
#ifdef _SC_SIGSTKSZ
	long min = sysconf(_SC_SIGSTKSZ);

	if (min > 0 && (size_t)min > size)
		size = ((size_t)min + page - 1) / page * page;
#endif
	size_t len = size + page;
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			 -1, 0);

	if (map == MAP_FAILED)
		return -ENOMEM;
	/* Stacks grow down: the guard page below turns an overflow of the
	 * handler's own stack into a fault that kills, not into corruption. */
	mprotect(map, page, PROT_NONE);

	stack_t ss = { .ss_sp = (char *)map + page, .ss_size = size, .ss_flags = 0 };

	if (sigaltstack(&ss, &prev_altstack) < 0) {
		int err = -errno; /* EPERM: we are running on the current one */

		munmap(map, len);
		return err;
	}
	altstack_map = map;
	altstack_map_len = len;
	altstack_sp = ss.ss_sp;
	return 0;
}

static void altstack_uninstall(void)
{
	stack_t cur;

	if (!altstack_map)
		return;
	/* Put back the previous one only if ours is still this thread's. */
	if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == altstack_sp &&
	    !(cur.ss_flags & SS_ONSTACK)) {
		sigaltstack(&prev_altstack, NULL);
		munmap(altstack_map, altstack_map_len);
	}
	/* Otherwise another stack replaced it or another thread owns it: leave
	 * the mapping (a few pages) rather than pull a live stack away. */
	altstack_map = NULL;
	altstack_map_len = 0;
	altstack_sp = NULL;
}

int pk_crash_handler_install(void)
{
	static bool atfork_done;
	int err = 0;

	pthread_mutex_lock(&install_lock);
	if (installed)
		goto out;
	/* Made now, so the handler finds the log and the caller ids ready. */
	pk_printk_ring();
	err = altstack_install();
	if (err)
		goto out;

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NCRASH; i++)
		sigaddset(&sa.sa_mask, crash_signals[i]);
	/* Read the old action first and install second, so the handler never
	 * sees a half-copied previous action (the kernel copies it out after it
	 * switched handlers). */
	for (int i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], NULL, &prev_action[i]);
	for (int i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], &sa, NULL);
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, crash_after_fork_child);
		atfork_done = true;
	}
	installed = true;
out:
	pthread_mutex_unlock(&install_lock);
	return err;
}

void pk_crash_handler_uninstall(void)
{
	pthread_mutex_lock(&install_lock);
	if (installed) {
		for (int i = 0; i < NCRASH; i++) {
			struct sigaction cur;

			/* Only where ours is still in place: a handler the program
			 * installed on top of ours stays. */
			if (sigaction(crash_signals[i], NULL, &cur) == 0 &&
			    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == crash_handler)
				sigaction(crash_signals[i], &prev_action[i], NULL);
		}
		altstack_uninstall();
		installed = false;
	}
	pthread_mutex_unlock(&install_lock);
}
