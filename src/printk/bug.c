// SPDX-License-Identifier: MIT
/*
 * bug.c - dump_stack(), WARN() and BUG(): the kernel's reports with a call
 * trace, and the trace lines the crash report adds.
 *
 * Owns: the taint flags a WARN and a BUG leave (the kernel's TAINT_WARN and
 * TAINT_DIE, shown on later task lines) and the oops counter.
 *
 * The reports follow Linux 6.18 on x86-64 (kernel/panic.c __warn and
 * __warn_printk, lib/dump_stack.c, arch/x86/kernel/dumpstack.c, lib/bug.c):
 *
 *     ------------[ cut here ]------------          KERN_WARNING (WARN_ON: KERN_DEFAULT)
 *     <the WARN message, if any>                    its own level
 *     WARNING: CPU: 0 PID: 42 at f.c:7 g+0x1e/0x40  KERN_WARNING
 *     CPU: 0 UID: 1000 PID: 42 Comm: prog Not tainted libprintk 0.2.0
 *     Call Trace:                                   KERN_DEFAULT
 *      <TASK>
 *      g+0x1e/0x40
 *      main+0x12/0x30
 *      __libc_start_call_main+0x7a/0xb0 [libc.so.6]
 *      </TASK>
 *     ---[ end trace 0000000000000000 ]---          KERN_WARNING
 *
 * A process has no CPU number of its own, so CPU is 0; PID is the thread
 * id (the kernel's task pid). The task line names libprintk and its
 * version where the kernel names its release. There is no register dump
 * and no "Modules linked in:" line. The trace starts at the function that
 * called dump_stack()/WARN()/BUG(), not inside the library.
 *
 * Every line is stored first and printed after the last one (the kernel's
 * emergency section does the same on nbcon consoles), so a report reaches
 * the consoles as one group. Everything here is async-signal-safe but
 * pk_bug(), which ends in pk_panic().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <printk/bug.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>
#include <printk/version.h>

#include "base/stacktrace.h"
#include "console/console_internal.h"
#include "format/vsprintf.h"
#include "log/settings.h"

#define TAINT_DIE   7
#define TAINT_WARN  9
#define TAINT_COUNT 20 /* the kernel's TAINT_FLAGS_COUNT */
#define CUT_HERE    "------------[ cut here ]------------\n"

static _Atomic unsigned taint;
static _Atomic int die_counter;

static int level_of(const char *log_lvl)
{
	int c = log_lvl ? pk_printk_get_level(log_lvl) : 0;

	if (c >= '0' && c <= '7')
		return c - '0';
	return pk_cfg_default_message_loglevel();
}

/* The kernel's print_tainted(): "Not tainted" or one letter per flag. */
static void tainted_text(char *buf, size_t size)
{
	unsigned t = atomic_load_explicit(&taint, memory_order_relaxed);

	if (!t) {
		pk_scnprintf(buf, size, "Not tainted");
		return;
	}

	char flags[TAINT_COUNT + 1];

	memset(flags, ' ', TAINT_COUNT);
	flags[TAINT_COUNT] = '\0';
	flags[0] = 'G'; /* no proprietary module */
	if (t & (1u << TAINT_DIE))
		flags[TAINT_DIE] = 'D';
	if (t & (1u << TAINT_WARN))
		flags[TAINT_WARN] = 'W';
	pk_scnprintf(buf, size, "Tainted: %s", flags);
}

static void task_lines(int level)
{
	char comm[17] = "";
	char tainted[40];
	unsigned t = atomic_load_explicit(&taint, memory_order_relaxed);

	prctl(PR_GET_NAME, comm, 0, 0, 0);
	tainted_text(tainted, sizeof(tainted));
	pk_store_notice(level, "CPU: 0 UID: %u PID: %d Comm: %.20s %s libprintk %s\n",
			(unsigned)geteuid(), (int)syscall(SYS_gettid), comm, tainted,
			PRINTK_VERSION_STRING);
	if (t) {
		/* The kernel's print_tainted_verbose(). */
		pk_store_notice(level, "Tainted: %s%s%s\n",
				t & (1u << TAINT_DIE) ? "[D]=DIE" : "",
				(t & (1u << TAINT_DIE)) && (t & (1u << TAINT_WARN)) ? ", " : "",
				t & (1u << TAINT_WARN) ? "[W]=WARN" : "");
	}
}

static void trace_lines(int level, const void *ucontext, uintptr_t from_ra)
{
	struct pk_frame frames[PK_STACK_MAX];
	int n = pk_stack_walk(frames, PK_STACK_MAX, ucontext, from_ra, PK_UNWIND_AUTO);

	pk_store_notice(level, "Call Trace:\n");
	pk_store_notice(level, " <TASK>\n");
	for (int i = 0; i < n; i++) {
		/* A return address is looked up one byte back (%pB): a call
		 * that ends a function returns to the start of the next one. */
		if (frames[i].flags & PK_FRAME_EXACT)
			pk_store_notice(level, " %pS\n", (void *)frames[i].pc);
		else
			pk_store_notice(level, " %pB\n", (void *)frames[i].pc);
	}
	pk_store_notice(level, " </TASK>\n");
}

static void flush(void)
{
	pk_console_flush(pk_printk_ring(), NULL);
}

static void dump_stack_from(const char *log_lvl, uintptr_t from_ra)
{
	int level = level_of(log_lvl);

	task_lines(level);
	trace_lines(level, NULL, from_ra);
}

__attribute__((noinline)) void pk_dump_stack_lvl(const char *log_lvl)
{
	dump_stack_from(log_lvl, (uintptr_t)__builtin_return_address(0));
	flush();
}

__attribute__((noinline)) void pk_dump_stack(void)
{
	dump_stack_from(PK_KERN_DEFAULT, (uintptr_t)__builtin_return_address(0));
	flush();
}

/*
 * The cut line and a WARN's message (past any level headers, at its own
 * level). Out of line, so its buffer is off the stack before the walk.
 */
static __attribute__((noinline, format(printf, 1, 0))) void cut_and_message(const char *fmt, va_list ap)
{
	char buf[1024]; /* the kernel's printk line limit */
	const char *text = buf;
	int level = -1, c;

	if (pk_vscnprintf(buf, sizeof(buf), fmt, ap) <= 0)
		buf[0] = '\0';
	while ((c = pk_printk_get_level(text))) {
		if (c >= '0' && c <= '7' && level < 0)
			level = c - '0';
		text += 2;
	}
	if (!text[0]) {
		/* report_bug() of a bare WARN_ON: the cut line at KERN_DEFAULT. */
		pk_store_notice(pk_cfg_default_message_loglevel(), CUT_HERE);
		return;
	}
	/* __warn_printk(): the cut line by pr_warn, then the message. */
	size_t len = strlen(text);

	pk_store_notice(PK_LOGLEVEL_WARNING, CUT_HERE);
	pk_store_notice(level < 0 ? pk_cfg_default_message_loglevel() : level,
			text[len - 1] == '\n' ? "%s" : "%s\n", text);
}

__attribute__((noinline)) void pk_warn_slowpath_fmt(const char *file, int line, const char *fmt, ...)
{
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	va_list ap;

	va_start(ap, fmt);
	cut_and_message(fmt, ap);
	va_end(ap);
	pk_store_notice(PK_LOGLEVEL_WARNING, "WARNING: CPU: 0 PID: %d at %s:%d %pS\n",
			(int)syscall(SYS_gettid), file, line, (void *)caller);
	dump_stack_from(PK_KERN_DEFAULT, caller);
	pk_store_notice(PK_LOGLEVEL_WARNING, "---[ end trace %016llx ]---\n", 0ULL);
	atomic_fetch_or_explicit(&taint, 1u << TAINT_WARN, memory_order_relaxed);
	flush();
}

__attribute__((noinline)) void pk_bug(const char *file, int line)
{
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	int level = pk_cfg_default_message_loglevel();

	pk_console_verbose();
	pk_store_notice(level, CUT_HERE);
	pk_store_notice(PK_LOGLEVEL_CRIT, "kernel BUG at %s:%d!\n", file, line);
	pk_store_notice(level, "Oops: invalid opcode: 0000 [#%d] PREEMPT SMP\n",
			atomic_fetch_add(&die_counter, 1) + 1);
	dump_stack_from(PK_KERN_DEFAULT, caller);
	pk_store_notice(PK_LOGLEVEL_WARNING, "---[ end trace %016llx ]---\n", 0ULL);
	atomic_fetch_or_explicit(&taint, 1u << TAINT_DIE, memory_order_relaxed);
	flush();
	pk_kmsg_dump(PK_KMSG_DUMP_OOPS);
	pk_panic("Fatal exception");
}
