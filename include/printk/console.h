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
/* ours: control bytes in a record's text (C0 but tab and newline, DEL, and
 * C1 controls encoded in UTF-8) print as \xNN, so logged text cannot drive
 * a terminal; set on the built-in consoles of a terminal */
#define PK_CON_ESCAPE 0x4000
/* The kernel's CON_EXTENDED: the console gets each record whole, once it is
 * final, in /dev/kmsg form ("6,42,1291025,-;text\n" and " KEY=VALUE\n"
 * dictionary lines, as kmsg_read returns it), as netconsole's extended
 * mode; dropped records show as a gap in the seq field. */
#define PK_CON_EXTENDED 0x0040
/* ours: printed by a thread of its own (the kernel's nbcon printer threads):
 * printk only stores and wakes it, so a slow console never delays a
 * printk; pr_flush() and exit wait for it, bounded. */
#define PK_CON_THREADED 0x0800
/* ours: lossless, implies PK_CON_THREADED. A printk whose record would push
 * a record this console has not printed yet out of the log waits for its
 * thread instead (a futex sleep), so the console gets every line; it drops
 * and counts, as any console, where waiting is not allowed: in a signal
 * handler, on the crash path, while holding the console lock, in a
 * console's write. A console that prints nothing for
 * lossless_timeout_ms (PRINTK_OPTS, default 5000) while a printk waits for
 * it turns lossy for good, with a notice record. This process's writers
 * only: another process sharing the log file does not wait for it. */
#define PK_CON_LOSSLESS 0x0400
/* ours: a file console (pk_console_file_create(), console=file:) is
 * lossless by default: PK_CON_LOSSLESS is added when it is registered, and
 * its thread writes many lines with one write(2). Set this flag before
 * registering it for the console the kernel has: printed by whoever holds
 * the console lock (or by its own thread with PK_CON_THREADED), one write
 * a piece, dropping and counting what the log overwrote before it printed
 * it. Other consoles are lossy unless PK_CON_LOSSLESS: for them this flag
 * changes nothing. Not with PK_CON_LOSSLESS (-EINVAL). */
#define PK_CON_LOSSY 0x0200

struct pk_console_state; /* the library's per-console bookkeeping */
struct pk_record;	 /* <printk/log.h> */

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
	/*
	 * Ours, for consoles that want fields, not text (forwarders): each
	 * record whole, once it is final, with level, facility, seq, time,
	 * writer (pid, tid) and dictionary (<printk/log.h>); the text is not
	 * escaped and has no prefix. Dropped records show as a gap in seq.
	 * Used instead of the write callbacks when set; returns 0 or a
	 * negative errno, counted like a failed write. A PK_CON_THREADED
	 * console may return -EAGAIN: the record was not taken and is not a
	 * failure; its position stays, and its thread offers the record again
	 * at the next printk or within a second.
	 */
	int (*write_record)(struct console *con, const struct pk_record *rec);
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
 * PK_CON_PRINTBUFFER, the whole log first. 0, -EINVAL (no write callback;
 * PK_CON_LOSSY with PK_CON_LOSSLESS), -EBUSY (already registered),
 * -ENOMEM, -ENOSPC (255 consoles registered, or 16 lossless ones: a file
 * console counts unless PK_CON_LOSSY), or pthread_create's error for a
 * PK_CON_THREADED console (-EAGAIN).
 *
 * Context: thread-safe; may block (waits for the console lock, polling, and
 * then prints what is due); not async-signal-safe (allocates). Never from a
 * console's write, which holds the lock: it would wait for itself.
 */
PK_API int pk_register_console(struct console *con);
/* 0, -EINVAL (not registered) or -EBUSY (a thread has been stuck in this
 * console's write for over a second and the others went on without it, or
 * a PK_CON_THREADED console's thread did not stop within 3 s: it stops when
 * its write returns; try again then). Waits for a printing thread to let
 * go, or takes the lock over from one stuck in another console's write.
 * Context: thread-safe; may block (waits for the console lock); not
 * async-signal-safe (frees). Never from a console's write. */
PK_API int pk_unregister_console(struct console *con);
/* Ask a console to reopen its output (file console: after log rotation).
 * 0, -EINVAL (no reopen callback), -EBUSY (stuck in a write, as above) or
 * the callback's error.
 * Context: thread-safe; may block (waits for the console lock, then runs
 * the console's reopen); not async-signal-safe. Never from a console's
 * write. */
PK_API int pk_console_reopen(struct console *con);
/* Reopen every console that can (file consoles: after logrotate moved
 * their files), for a SIGHUP handler: the reopen happens here if the
 * console lock is free, else when its holder lets go; a threaded console's
 * thread reopens its own before its next record. Returns 0.
 * Context: any (async-signal-safe: a file console's reopen is open(2) and
 * close(2)); never waits. A console's own reopen callback must be
 * async-signal-safe too for this to hold. */
PK_API int pk_console_reopen_all(void);

/* The first registered console named @name (console= options of
 * PRINTK_OPTS get ,name=NAME or an automatic name: "stderr", "fdN",
 * "file0", "file1", ... in order), or NULL. The pointer stays valid until
 * the console is unregistered.
 * Context: thread-safe; may block (waits for the console lock); not
 * async-signal-safe. Never from a console's write. */
PK_API struct console *pk_console_find(const char *name);
/* A console's own level: it prints records of a level below @level
 * (0..15) whatever console_loglevel is; -1 makes it follow
 * console_loglevel again. ignore_loglevel overrides both. Returns the
 * previous own level (-1 if none) or -EINVAL (not registered, @level out of
 * range). pk_console_get_loglevel() returns the own level or -1.
 * Context: thread-safe; may block (waits for the console lock); not
 * async-signal-safe; never from a console's write. */
PK_API int pk_console_set_loglevel(struct console *con, int level);
PK_API int pk_console_get_loglevel(const struct console *con);
/* A console's own time style (enum pk_time_style of <printk/printk.h>:
 * PK_TIME_NONE, PK_TIME_KERNEL, PK_TIME_ISO, PK_TIME_ISO_UTC); -1 makes it
 * follow printk.time again. Returns the previous own style (-1 if none) or
 * -EINVAL (not registered, @style out of range). pk_console_get_time_style()
 * returns the own style or -1. A wall-clock style reads the local zone
 * here, so printing never does.
 * Context: as pk_console_set_loglevel(). */
PK_API int pk_console_set_time_style(struct console *con, int style);
PK_API int pk_console_get_time_style(const struct console *con);

/* Built-in consoles. Crash safe; coloured when the fd is a terminal. */

/* The default console, statically allocated. It remembers which file fd 2
 * was when it was registered (device and inode) and, if fd 2 is later another
 * file (a daemon closed fds 0-2 and opened something), disables itself
 * with one notice instead of writing into it. A new fd 2 that is also fd
 * 1's file (2>&1, a child's dup2 of one pipe onto both) is a redirection
 * and is followed; console=fd:2 follows fd 2 whatever it is, and
 * registering this console again takes fd 2 as it is then.
 * Context: any (async-signal-safe, lock-free) once set up; the first call
 * sets it up (the library's start-up makes it, unless PRINTK_OPTS names
 * other consoles) and is neither thread-safe nor async-signal-safe. */
PK_API struct console *pk_console_stderr(void);
/* A console on @fd (not owned) or on the file @path (opened for append,
 * owned, reopened by pk_console_reopen()). 0, -EBADF, -EINVAL, -ENOMEM or
 * open(2)'s error. A file console is lossless when registered (it gets
 * PK_CON_LOSSLESS, and so a thread of its own, which writes what is due in
 * batches) unless PK_CON_LOSSY is set first; an fd console is lossy, as
 * the kernel's consoles, whatever file @fd is.
 * Context: thread-safe; does not wait for anything but open(2); not
 * async-signal-safe (allocates). */
PK_API int pk_console_fd_create(struct console **conp, int fd, const char *name);
PK_API int pk_console_file_create(struct console **conp, const char *path);
/* Rotate the file console @con by size, as PRINTK_OPTS' ,size=N,keep=K
 * does: before a write would take the file past @size bytes, PATH.K-1 is
 * renamed to PATH.K ... PATH to PATH.1 (the oldest dropped) and a new PATH
 * opened; lines are never cut, so a file exceeds @size only by a line
 * longer than the room left. Safe with other processes appending to PATH
 * (flock(2) on the file being rotated; each write first looks whether PATH
 * is still its file, and opens the one there if not). Safe with
 * logrotate's create: a PATH renamed away is not created by the console
 * for 2 s (the lines go on into the renamed file) unless logrotate's new
 * one appears, which is opened; ULLONG_MAX never rotates and only follows
 * PATH so. @size 0 stops rotating. 0, or
 * -EINVAL (not a file console, @keep outside 1..999) or -ENOMEM.
 * Context: before registering @con (its write reads these); not
 * async-signal-safe (allocates). */
PK_API int pk_console_file_set_rotation(struct console *con, unsigned long long size, unsigned keep);
/* Rotate the file console @con by local time, as PRINTK_OPTS'
 * ,rotate=daily|hourly,keep=K does: the first line whose record's
 * wall-clock time is past the end of the file's period (a local calendar
 * day or hour; the zone is read by this call, never while printing)
 * renames PATH to PATH.YYYY-MM-DD (daily) or PATH.YYYY-MM-DD-HH (hourly),
 * named after the period the file covers, opens a new PATH and removes the
 * oldest such files beyond @keep. A line begun in the old period is
 * finished in its file. No line, no file: a period without lines leaves
 * none, and an empty file is not rotated. A clock stepped back keeps the
 * current file until its period's end comes again; on the day daylight
 * saving time ends, the repeated hour is one period; the one skipped when
 * it begins is none. The first line after a start rotates a file left at
 * PATH from an earlier period (by its modification time). With a size
 * (pk_console_file_set_rotation) as well, both rotations rename PATH to
 * its period's name, a period's later pieces numbered in the order
 * written (PATH.D, PATH.D.1, PATH.D.2 ...), and @keep counts those files.
 * Safe with other processes appending to PATH, as the size rotation.
 * @period PK_ROTATE_NONE stops. 0, or -EINVAL (not a file console, @period
 * unknown, @keep outside 1..999) or -ENOMEM.
 * Context: before registering @con (its write reads these); not
 * async-signal-safe (allocates, reads the zone). */
#define PK_ROTATE_NONE	 0
#define PK_ROTATE_HOURLY 1
#define PK_ROTATE_DAILY	 2
PK_API int pk_console_set_rotate_time(struct console *con, int period, unsigned keep);
/*
 * A console from @spec, written exactly as PRINTK_OPTS' console= takes it
 * (printk-opts(7)): KIND[:ARG][,OPTION...], e.g. "fd:3,json",
 * "file:/var/log/x.log,lossless,size=1M", "journal",
 * "syslog:tcp:127.0.0.1:601,rfc3164,threaded". Not registered: register it
 * with pk_register_console() (its ,loglevel= and ,time= take effect then)
 * and free it with pk_console_destroy(). Kinds: stderr (the built-in
 * console, not a new one), fd, file, and journal and syslog when the
 * forwarding consoles are in the program (<printk/forward.h>). A spec's
 * bad option says why in a printk warning, as PRINTK_OPTS does; nothing
 * else is written. 0, -EINVAL (a malformed spec, "none" or "-NAME"),
 * -ENOENT (no such kind, or its file is not linked into this static
 * program: see pk_printk_link_all_options()), -ENAMETOOLONG, -ENOMEM, or
 * the kind's own error (open(2)'s for a file, -EBADF for an fd,
 * -EHOSTUNREACH, -EPROTONOSUPPORT: pk_console_syslog_create()).
 * Context: thread-safe; may block (opens files, resolves host names); not
 * async-signal-safe (allocates).
 */
PK_API int pk_console_create(struct console **conp, const char *spec);
/* Free a console made by pk_console_create() or pk_console_*_create
 * (unregister it first): its kind's release, or the console's own release
 * callback for one the program made; nothing for the stderr console.
 * Context: thread-safe for distinct consoles; does not block; not
 * async-signal-safe (frees). */
PK_API void pk_console_destroy(struct console *con);

#ifndef PRINTK_NO_KERNEL_NAMES
#define CON_PRINTBUFFER	   PK_CON_PRINTBUFFER
#define CON_ENABLED	   PK_CON_ENABLED
#define CON_EXTENDED	   PK_CON_EXTENDED
#define register_console   pk_register_console
#define unregister_console pk_unregister_console
#endif

PK_END_DECLS

#endif
