// SPDX-License-Identifier: MIT
/*
 * console_line.h - printk's one-write path: the console line that printk
 * formats its text into and writes with one write(2) from its own frame.
 *
 * Private to the three files that take part: printk.c (formats and writes),
 * console.c (builds the prefix, holds the lock, finishes the line) and
 * console_fd.c (says which descriptor a console may be written to
 * directly). Nothing else includes it, so tuning this path touches only
 * them.
 */
#ifndef PRINTK_CONSOLE_LINE_H
#define PRINTK_CONSOLE_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hints.h"
#include "base/printk_limits.h"
#include "console/console_internal.h"
#include "ring/ringbuffer.h"

struct console;

/* Room for one console line: a line break, the prefix, the text, a newline. */
#define PK_CON_PREFIX_ROOM (1 + PK_PREFIX_MAX)
#define PK_CON_LINE_MAX	   (PK_CON_PREFIX_ROOM + PRB_TEXT_MAX + 1)
/* printk's format buffer: the text, its NUL, and room for the level headers
 * that are stripped before the cut at PRB_TEXT_MAX. */
#define PK_PRINTK_FMT_MAX (PRB_TEXT_MAX + 1 + 64)

/*
 * The common case, split so that the write(2) runs in printk's own frame:
 * pk_console_flush_line() does what pk_console_flush() does, except that
 * when the record it was handed can go to the only console in one plain
 * write(2), it builds that line in @line, sets @line->len and returns
 * holding the console lock. The caller then writes it with pk_raw_write()
 * and hands the result to pk_console_line_done(), which finishes the write
 * if it came short, lets go of the lock and prints what came meanwhile.
 * Why: every function return after a system call can be a mispredicted
 * branch (the kernel may leave the return predictor empty); writing from
 * the outermost frame leaves one (docs/performance.md has the figures).
 */
struct pk_con_line {
	size_t len; /* 0: nothing for the caller to write */
	const char *p;
	int fd;
	struct console *con;
	struct prb *rb;
	uint64_t seq, gen;
	/* printk formats the text right after PK_CON_PREFIX_ROOM bytes, where
	 * the line needs it (so it is not copied). */
	char buf[PK_CON_PREFIX_ROOM + PK_PRINTK_FMT_MAX];
};
void pk_console_flush_line(struct prb *rb, const struct pk_con_rec *hint, struct pk_con_line *line);
void pk_console_line_done(struct pk_con_line *line, long written);

/* 1 once the crash path began (panic, a fatal signal, an emergency flush):
 * printk then waits for nothing. Async-signal-safe. */
int pk_console_crashing(void);

/* console_fd.c: the file descriptor the one-write path may write @con's text
 * to with one plain write(2) when @con is a built-in fd console whose writes
 * neither block nor raise SIGPIPE (a regular file, /dev/null); -1 otherwise.
 * A short or failed write is handed to @con's write_checked to finish. */
int pk_console_fd_direct(struct console *con);
/* console_fd.c: @con is a file console (pk_console_file_create()): console.c
 * makes it lossless unless PK_CON_LOSSY, and batches it when threaded (C10). */
int pk_console_fd_is_file(const struct console *con);
/* ... and one whose writes may be batched: it rotates neither by size (the
 * largest size, which only looks PATH up before each write, does not) nor
 * by time (each write is dated by its one record). */
int pk_console_fd_batchable(const struct console *con);
/* The timestamp (ts_nsec) of the record whose text this thread's console
 * write carries, 0 before the first: console.c sets it before it hands a
 * record's bytes to a console, and a file console rotating by time
 * (console_fd.c, which owns it) dates its lines with it, so a line printed
 * late goes to the file of the period its record was stored in. A variable,
 * not a call: console.c sets it on printk's one-write path. */
#if defined(__GNUC__) || defined(__clang__)
extern _Thread_local PK_TLS_IE uint64_t pk_con_write_ts __attribute__((visibility("hidden")));
#else
extern _Thread_local uint64_t pk_con_write_ts;
#endif
/* pk_raw_write() (below) where no inline system call is spelled out. */
long pk_raw_write_fallback(int fd, const void *buf, size_t len);

/* write(2) as the bare system call: no cancellation point (invariant C4 in
 * console.c), errno untouched. Returns the count or -errno. */
static inline long pk_raw_write(int fd, const void *buf, size_t len)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)1 /* __NR_write */), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
#else
	return pk_raw_write_fallback(fd, buf, len);
#endif
}

#endif
