/* SPDX-License-Identifier: MIT */
/*
 * printk/console.h - consoles: where printk's text goes as it is logged.
 *
 * One thread prints at a time, for every console; a printk that finds another
 * thread printing leaves its record to that thread, which prints it before it
 * lets go. A console's write callback is never re-entered: printk called from
 * inside it is stored and printed afterwards.
 */
#ifndef PRINTK_CONSOLE_H
#define PRINTK_CONSOLE_H

#include <stddef.h>

#include <printk/compiler.h>

PK_BEGIN_DECLS

/* Flags, numbered as the kernel's where they exist there. */
#define PK_CON_PRINTBUFFER 0x0001 /* on registration, replay the log from its oldest record */
#define PK_CON_ENABLED	   0x0004 /* prints */
#define PK_CON_CRASH_SAFE  0x1000 /* ours: its write is async-signal-safe (crash path) */
#define PK_CON_COLOR	   0x2000 /* ours: colour by level, like dmesg --color */

struct pk_console_state; /* the library's per-console bookkeeping */

/*
 * A console's write and reopen run with the console lock held and thread
 * cancellation held off (a cancel requested meanwhile acts at the thread's
 * next cancellation point), so pthread_cancel() never leaves the consoles
 * locked.
 */
struct console {
	char name[16];
	/* The kernel's signature; used when write_checked is NULL. */
	void (*write)(struct console *con, const char *text, unsigned len);
	/*
	 * Ours: write all of @len bytes, returning 0 or a negative errno. A
	 * console whose write keeps failing is disabled, with a notice record.
	 */
	int (*write_checked)(struct console *con, const char *text, size_t len);
	/* Optional: reopen the output (a file console after log rotation). */
	int (*reopen)(struct console *con);
	/* Optional: release what the console owns, when unregistered by pk_printk_exit(). */
	void (*release)(struct console *con);
	short flags;
	short index;
	void *data;
	struct pk_console_state *state; /* owned by the library while registered */
};

/*
 * Register a console: it prints records stored from now on or, with
 * PK_CON_PRINTBUFFER, the whole log first. 0, -EINVAL, -EBUSY (already
 * registered), -ENOMEM. Not async-signal-safe.
 */
PK_API int pk_register_console(struct console *con);
/* 0 or -EINVAL (not registered). Waits for a printing thread to let go. */
PK_API int pk_unregister_console(struct console *con);
/* Ask a console to reopen its output (file console: after log rotation). */
PK_API int pk_console_reopen(struct console *con);

/* Built-in consoles. Crash safe; coloured when the fd is a terminal. */
PK_API struct console *pk_console_stderr(void); /* the default console, statically allocated */
PK_API int pk_console_fd_create(struct console **conp, int fd, const char *name);
PK_API int pk_console_file_create(struct console **conp, const char *path);
/* Free a console made by pk_console_*_create (unregister it first). */
PK_API void pk_console_destroy(struct console *con);

#ifndef PRINTK_NO_KERNEL_NAMES
#define CON_PRINTBUFFER	   PK_CON_PRINTBUFFER
#define CON_ENABLED	   PK_CON_ENABLED
#define register_console   pk_register_console
#define unregister_console pk_unregister_console
#endif

PK_END_DECLS

#endif
