/* SPDX-License-Identifier: MIT */
/*
 * printk/bug.h - dump_stack(), WARN() and BUG() with the kernel's reports.
 *
 *     if (WARN_ON(len > max))
 *             return -EINVAL;
 *     BUG_ON(!list_empty(&head));
 *
 * WARN* print the kernel's warning report (the "cut here" line, the message,
 * "WARNING: CPU: 0 PID: <tid> at file:line function+0x../0x..", the task
 * line, a "Call Trace:" of the calling thread and the end marker) as one
 * group of records and return the condition. BUG* print "kernel BUG at
 * file:line!" and the oops report, run the dumpers and abort, as a kernel
 * with panic_on_oops. Included by <printk/printk.h>; define
 * PRINTK_NO_BUG_NAMES (or PRINTK_NO_KERNEL_NAMES) to keep the names
 * WARN, WARN_ON, WARN_ONCE, WARN_ON_ONCE, BUG, BUG_ON and dump_stack free
 * for a program's own (PK_WARN, PK_BUG_ON, pk_dump_stack... stay).
 */
#ifndef PRINTK_BUG_H
#define PRINTK_BUG_H

#ifdef __cplusplus
#include <atomic>
#else
#include <stdatomic.h>
#endif

#include <printk/compiler.h>

PK_BEGIN_DECLS

/*
 * Print the task line and a "Call Trace:" of the calling thread, from its
 * caller up, at KERN_DEFAULT (dump_stack) or at the level of the
 * KERN_<LEVEL> string @log_lvl.
 *
 * Context: any (async-signal-safe, lock-free, no allocation); from a
 * signal handler the trace goes on through the signal frame into the code
 * the signal interrupted.
 */
PK_API void pk_dump_stack(void);
PK_API void pk_dump_stack_lvl(const char *log_lvl);

/*
 * The out-of-line part of WARN(): the warning report for @file:@line with
 * the message @fmt (an empty @fmt prints none); the location is the
 * caller's. Use the macros.
 *
 * Context: as pk_dump_stack().
 */
PK_API PK_COLD void pk_warn_slowpath_fmt(const char *file, int line, const char *fmt, ...)
	PK_PRINTF(3, 4);

/*
 * The out-of-line part of BUG(): the oops report for @file:@line, the
 * dumpers (KMSG_DUMP_OOPS), then pk_panic("Fatal exception"). Never returns.
 *
 * Context: as pk_panic().
 */
PK_API PK_COLD PK_NORETURN void pk_bug(const char *file, int line);

#if defined(__GNUC__) || defined(__clang__)
#define PK_BUG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PK_BUG_UNLIKELY(x) (!!(x))
#endif

#ifdef __cplusplus
#define PK_WARN_ONCE_FLAG(flag)	 static std::atomic<bool> flag(false)
#define PK_WARN_ONCE_FIRST(flag) \
	(!flag.load(std::memory_order_relaxed) && !flag.exchange(true, std::memory_order_relaxed))
#else
#define PK_WARN_ONCE_FLAG(flag)	 static atomic_bool flag
#define PK_WARN_ONCE_FIRST(flag)                                \
	(!atomic_load_explicit(&flag, memory_order_relaxed) && \
	 !atomic_exchange_explicit(&flag, 1, memory_order_relaxed))
#endif

/*
 * WARN and WARN_ON are the condition's truth (0 or 1). The empty asm after
 * the call keeps it out of tail position: a tail call would leave the
 * warning function's frame out of the report. The _ONCE forms keep a flag
 * per call site. All are GNU statement expressions, as the kernel's; other
 * compilers get plain expressions and no _ONCE forms.
 */
#if defined(__GNUC__) || defined(__clang__)
#define PK_WARN(condition, ...)                                                \
	__extension__({                                                        \
		int pk_warn_on_ = !!(condition);                               \
		if (PK_BUG_UNLIKELY(pk_warn_on_)) {                            \
			pk_warn_slowpath_fmt(__FILE__, __LINE__, __VA_ARGS__); \
			__asm__ volatile("");                                  \
		}                                                              \
		pk_warn_on_;                                                   \
	})
#define PK_WARN_ONCE(condition, ...)                                                   \
	__extension__({                                                                \
		int pk_warn_on_ = !!(condition);                                       \
		if (PK_BUG_UNLIKELY(pk_warn_on_)) {                                    \
			PK_WARN_ONCE_FLAG(pk_warned_);                                 \
			if (PK_WARN_ONCE_FIRST(pk_warned_)) {                          \
				pk_warn_slowpath_fmt(__FILE__, __LINE__, __VA_ARGS__); \
				__asm__ volatile("");                                  \
			}                                                              \
		}                                                                      \
		pk_warn_on_;                                                           \
	})
#define PK_WARN_ON_ONCE(condition) PK_WARN_ONCE(condition, "%s", "")
#else
#define PK_WARN(condition, ...) \
	((condition) ? (pk_warn_slowpath_fmt(__FILE__, __LINE__, __VA_ARGS__), 1) : 0)
#endif
#define PK_WARN_ON(condition) PK_WARN(condition, "%s", "")

#define PK_BUG() pk_bug(__FILE__, __LINE__)
#define PK_BUG_ON(condition)                   \
	do {                                   \
		if (PK_BUG_UNLIKELY(condition)) \
			PK_BUG();              \
	} while (0)

#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_BUG_NAMES)
#define WARN		 PK_WARN
#define WARN_ON		 PK_WARN_ON
#define WARN_ONCE	 PK_WARN_ONCE
#define WARN_ON_ONCE	 PK_WARN_ON_ONCE
#define BUG		 PK_BUG
#define BUG_ON		 PK_BUG_ON
#define dump_stack	 pk_dump_stack
#define dump_stack_lvl	 pk_dump_stack_lvl
#endif

PK_END_DECLS

#endif
