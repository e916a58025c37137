/* SPDX-License-Identifier: MIT */
/*
 * printk/kmsg_dump.h - crash dumpers (the Linux 5.13+ API), panic() and an
 * opt-in fatal-signal handler.
 *
 * A dumper's dump() runs on panic, on a fatal signal (reason OOPS) and
 * whenever kmsg_dump() is called; it walks the log with a kmsg_dump_iter.
 * dump() may run in a signal handler: it must be async-signal-safe.
 */
#ifndef PRINTK_KMSG_DUMP_H
#define PRINTK_KMSG_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <printk/compiler.h>

PK_BEGIN_DECLS

enum kmsg_dump_reason {
	PK_KMSG_DUMP_UNDEF,
	PK_KMSG_DUMP_PANIC,
	PK_KMSG_DUMP_OOPS,
	PK_KMSG_DUMP_EMERG,
	PK_KMSG_DUMP_SHUTDOWN,
	PK_KMSG_DUMP_MAX
};

/* Where a dumper is in the log: [cur_seq, next_seq). */
struct kmsg_dump_iter {
	uint64_t cur_seq;
	uint64_t next_seq;
};

struct kmsg_dumper {
	void (*dump)(struct kmsg_dumper *dumper, enum kmsg_dump_reason reason);
	enum kmsg_dump_reason max_reason; /* UNDEF: up to OOPS */
	void *data;			  /* yours */
	struct kmsg_dumper *next;	  /* the library's */
	bool registered;		  /* the library's */
};

/* 0; -EINVAL (no dump callback); -EBUSY (already registered).
 * Context: thread-safe (takes a mutex); not async-signal-safe. */
PK_API int pk_kmsg_dump_register(struct kmsg_dumper *dumper);
/* 0; -EINVAL (not registered).
 * Context: thread-safe (takes a mutex); may block (waits until no
 * pk_kmsg_dump() that may have seen the dumper is running, except when
 * called from a dump callback); not async-signal-safe. */
PK_API int pk_kmsg_dump_unregister(struct kmsg_dumper *dumper);
/* Run the dumpers whose max_reason admits @reason.
 * Context: any (async-signal-safe, lock-free), provided the dumpers' dump()
 * callbacks are. */
PK_API void pk_kmsg_dump(enum kmsg_dump_reason reason);
/* "Panic", "Oops", "Emergency", "Shutdown" or "Unknown".
 * Context: any (async-signal-safe, lock-free). */
PK_API const char *pk_kmsg_dump_reason_str(enum kmsg_dump_reason reason);

/*
 * The iterator below reads the printk log. Context of the three: any
 * (async-signal-safe, lock-free, for use in dump()); an iterator belongs to
 * one thread at a time.
 */

/* Start at the first record after the last clear; end at the newest now. */
PK_API void pk_kmsg_dump_rewind(struct kmsg_dump_iter *iter);
/* The oldest record left, formatted like a console line (with "<prio>" when
 * @syslog); @line NULL: only its size. false when nothing is left. */
PK_API bool pk_kmsg_dump_get_line(struct kmsg_dump_iter *iter, bool syslog, char *line, size_t size,
				  size_t *len);
/* The youngest records left that fit whole in @size - 1 bytes; repeated
 * calls return older and older blocks. false when nothing is left. */
PK_API bool pk_kmsg_dump_get_buffer(struct kmsg_dump_iter *iter, bool syslog, char *buf, size_t size,
				    size_t *len_out);

/*
 * Log "Kernel panic - not syncing: <message>" at KERN_EMERG, print every
 * console synchronously (taking the consoles over from a holder that does not
 * let go in time), run the dumpers (reason PANIC), then abort().
 *
 * Context: any thread, also a signal handler (as async-signal-safe as the
 * consoles' writes and the dumpers); may block (about 1 s at most for each
 * wait on the console lock's holder); never returns. A second thread that
 * panics meanwhile waits for the first to end the process.
 */
PK_API PK_NORETURN void pk_panic(const char *fmt, ...) PK_PRINTF(1, 2);

/*
 * Opt-in fatal-signal handler (also PRINTK_OPTS crash_dump=1): SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE and SIGABRT log a "BUG:" record with the signal and
 * address, flush the crash-safe consoles (an open line included), run the
 * dumpers (reason OOPS), then re-raise with the previous disposition or
 * chain to the program's own handler. Runs on an alternate signal stack.
 *
 * Context (install, uninstall): thread-safe (takes a mutex); does not block;
 * not async-signal-safe (maps the alternate stack, changes signal actions).
 */
PK_API int pk_crash_handler_install(void);
PK_API void pk_crash_handler_uninstall(void);

/* A built-in dumper that writes the whole log in /dev/kmsg format to @path
 * (created 0600, truncated) each time it runs; its dump() is
 * async-signal-safe.
 * Context (create, destroy): thread-safe; not async-signal-safe (allocate,
 * free); destroy unregisters the dumper, and may wait as
 * pk_kmsg_dump_unregister() does. */
PK_API int pk_kmsg_dump_file_create(struct kmsg_dumper **dumperp, const char *path);
PK_API void pk_kmsg_dump_file_destroy(struct kmsg_dumper *dumper);

#ifndef PRINTK_NO_KERNEL_NAMES
#define KMSG_DUMP_UNDEF		PK_KMSG_DUMP_UNDEF
#define KMSG_DUMP_PANIC		PK_KMSG_DUMP_PANIC
#define KMSG_DUMP_OOPS		PK_KMSG_DUMP_OOPS
#define KMSG_DUMP_EMERG		PK_KMSG_DUMP_EMERG
#define KMSG_DUMP_SHUTDOWN	PK_KMSG_DUMP_SHUTDOWN
#define KMSG_DUMP_MAX		PK_KMSG_DUMP_MAX
#define kmsg_dump_register	pk_kmsg_dump_register
#define kmsg_dump_unregister	pk_kmsg_dump_unregister
#define kmsg_dump		pk_kmsg_dump
#define kmsg_dump_reason_str	pk_kmsg_dump_reason_str
#define kmsg_dump_rewind	pk_kmsg_dump_rewind
#define kmsg_dump_get_line	pk_kmsg_dump_get_line
#define kmsg_dump_get_buffer	pk_kmsg_dump_get_buffer
#ifndef PRINTK_NO_PANIC_NAME
#define panic			pk_panic
#endif
#endif

PK_END_DECLS

#endif
