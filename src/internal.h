// SPDX-License-Identifier: MIT
/*
 * internal.h - declarations shared by the library's modules, never installed.
 *
 * Each module owns its state; this header only names the entry points one
 * module offers another (and two settings printk.c lets the consoles read
 * inline: pk_cfg_printk_time(), pk_cfg_printk_caller()).
 */
#ifndef PRINTK_INTERNAL_H
#define PRINTK_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include <printk/log.h>

struct console;

#include "hints.h"
#include "ringbuffer.h"

/*
 * log.c: the ring behind a handle, and the log's shared state: the fields a
 * log keeps next to its ring (in the ring header's user area), so that every
 * process using the log sees them. Part of the log's ABI (PRB_ABI_VERSION):
 * append only.
 */
struct prb *pk_log_ring(struct pk_log *log);

#define PK_LOG_STATE_MAGIC  0x4554415453544c50ull /* "PLTSTATE" */
#define PK_LOG_LEVEL_UNSAVED 0xffffffffu

struct pk_log_shared {
	uint64_t magic;		/* PK_LOG_STATE_MAGIC once initialised */
	pk_a32 console_loglevel; /* records below it print on consoles (7) */
	pk_a32 saved_console_loglevel; /* SYSLOG_ACTION_CONSOLE_OFF's, or UNSAVED */
	pk_a32 minimum_console_loglevel; /* floor for CONSOLE_OFF/LEVEL (1) */
	pk_a32 default_console_loglevel; /* 7 */
	pk_a64 clear_seq;	/* first record after the last SYSLOG_ACTION_CLEAR */
	pk_a64 syslog_seq;	/* SYSLOG_ACTION_READ's position (shared, like /proc/kmsg) */
	pk_a64 syslog_partial;	/* bytes of the record at syslog_seq already read */
	pk_a64 realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC (two's complement) */
	pk_a32 pollers;		/* readers waiting through a poll doorbell */
	pk_a32 reserved0;
	/* File logs (written once at creation, before the file is published): */
	uint64_t file_size;	  /* the whole file; 0 for a memory log */
	uint64_t registry_off;	  /* writer registry entries */
	uint64_t lock_off;	  /* one lock byte per registry entry */
	uint32_t registry_entries;
	uint32_t file_flags;
};

/* The shared state of @log (never NULL for a valid handle). */
struct pk_log_shared *pk_log_shared(struct pk_log *log);
/*
 * kmsg.c: @r as a /dev/kmsg read returns it, into @out of PK_KMSG_LINE_MAX
 * bytes, cut there as the kernel cuts it; @partial adds the ",partial" field
 * of a line its writer never finished. Async-signal-safe. Returns the length.
 */
#define PK_KMSG_LINE_MAX 2048 /* the kernel's PRINTK_MESSAGE_MAX */
size_t pk_kmsg_format_record(const struct prb_record *r, char *out, bool partial);

/* logfile.c: 1 if a process (this one included) still writes @log, 0 if
 * every writer is gone (post-mortem). Memory logs: 1. */
int pk_log_writers_alive(struct pk_log *log);

/* caller.c: who is calling, cached so the fast path makes no syscall.
 * Async-signal-safe. */
void pk_caller_get(struct prb_caller *c);
/* The caller context for continuation matching: signal nesting and the
 * signal mask (a handler between two fragments differs). One syscall. */
uint64_t pk_caller_context(void);
/* This thread's blocked signals (the first 64). One syscall. */
uint64_t pk_signal_mask(void);
/* Signal-handler nesting: printk's entry points bracket themselves with these. */
unsigned pk_sigdepth_enter(void);
void pk_sigdepth_leave(void);

/* time: CLOCK_MONOTONIC in nanoseconds (vDSO, async-signal-safe). */
uint64_t pk_clock_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in nanoseconds. */
int64_t pk_realtime_offset_ns(void);
/* Tests: replace the clock (NULL restores CLOCK_MONOTONIC). */
void pk_set_test_clock(uint64_t (*clock_fn)(void));

/* printk.c: settings the consoles read (lock-free getters). */
int pk_cfg_console_loglevel(void);
int pk_cfg_ignore_loglevel(void);
int pk_cfg_default_message_loglevel(void);
/* printk.time and printk.caller: read for every console line, so inline. */
extern _Atomic int pk_printk_time_flag, pk_printk_caller_flag;
static inline int pk_cfg_printk_time(void)
{
	return atomic_load_explicit(&pk_printk_time_flag, memory_order_relaxed);
}
static inline int pk_cfg_printk_caller(void)
{
	return atomic_load_explicit(&pk_printk_caller_flag, memory_order_relaxed);
}
/* The default log if it exists (never creates it). */
struct pk_log *pk_printk_log_peek(void);
/* printk at facility 0 whose message always ends its line (dev_printk). */
int pk_vprintk_emit_line(int level, const char *dict, size_t dictlen, const char *fmt, va_list args);
/* msync the printk log's file if it was configured with PK_LOG_SYNC. */
void pk_printk_sync(void);
/* The default log's ring, created on first use; NULL if that failed. */
struct prb *pk_printk_ring(void);
/* Store a complete message at @level without printing it (for notices made
 * while holding the console lock). */
void pk_printk_store_notice(int level, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* console_fd.c: the file descriptor a console layer may write @con's text
 * to with one plain write(2) when @con is a built-in fd console whose writes
 * neither block nor raise SIGPIPE (a regular file, /dev/null); -1 otherwise.
 * A short or failed write is handed to @con's write_checked to finish. */
int pk_console_fd_direct(struct console *con);
/* pk_raw_write() (below) where no inline system call is spelled out. */
long pk_raw_write_fallback(int fd, const void *buf, size_t len);

/* console.c */
/* What the loop needs of a record: read from the ring, or handed over by the
 * printk that just stored it (which saves reading it back). */
struct pk_con_rec {
	uint64_t seq;
	uint64_t ts_nsec;
	struct prb_caller caller;
	int level;
	int flags;
	int open; /* not finalized: may still grow */
	int suppressed; /* its level is one no console prints */
	const char *text;
	size_t text_len;
};

/* Print what the consoles have not printed yet, unless another thread is
 * printing (it will print ours before it lets go). @hint (may be NULL) is
 * the record this thread just stored. Async-signal-safe. */
void pk_console_flush(struct prb *rb, const struct pk_con_rec *hint);

/* Room for one console line: a line break, the prefix, the text, a newline. */
#define PK_CON_PREFIX_ROOM (1 + 64)
#define PK_CON_LINE_MAX	   (PK_CON_PREFIX_ROOM + PRB_TEXT_MAX + 1)

/*
 * The common case, split so that the write(2) runs in printk's own frame:
 * pk_console_flush_line() does what pk_console_flush() does, except that
 * when the record it was handed can go to the only console in one plain
 * write(2), it builds that line in @line, sets @line->len and returns
 * holding the console lock. The caller then writes it with pk_raw_write()
 * and hands the result to pk_console_line_done(), which finishes the write
 * if it came short, lets go of the lock and prints what came meanwhile.
 * Why: on the development VM every function return after a system call
 * measured as a mispredicted branch (~7 ns a frame: the kernel leaves the
 * return predictor empty); writing from the outermost frame leaves one.
 */
struct pk_con_line {
	size_t len; /* 0: nothing for the caller to write */
	const char *p;
	int fd;
	struct console *con;
	struct prb *rb;
	uint64_t seq, gen;
	/* printk formats the text right after PK_CON_PREFIX_ROOM bytes, where
	 * the line needs it (so it is not copied), with room for the level
	 * headers and the cut at PRB_TEXT_MAX. */
	char buf[PK_CON_PREFIX_ROOM + PRB_TEXT_MAX + 1 + 64];
};
void pk_console_flush_line(struct prb *rb, const struct pk_con_rec *hint, struct pk_con_line *line);
void pk_console_line_done(struct pk_con_line *line, long written);

/* write(2) as the bare system call: no cancellation point (C4 in
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

/* 1 if no console prints messages of @level (console_loglevel, ignore_loglevel). */
int pk_console_level_suppressed(int level);
/* The filtered fast path: record @seq, of a level no console prints, was
 * just stored; returns 1 if all consoles were idle at @seq, so nothing has
 * to be printed and no console lock is needed. */
int pk_console_skip_suppressed(uint64_t seq);
/* True while this thread runs a console's write callback. */
int pk_console_in_write(void);
/* Stop every console at exit: end open lines, drain, unregister all. */
void pk_console_shutdown(struct prb *rb, int release);
/* Panic and crash path: print everything now on the crash-safe consoles,
 * skipping records whose writer will never finish them; waits at most
 * @wait_ms for the console holder, then takes over. Async-signal-safe. */
void pk_console_emergency_flush(struct prb *rb, int wait_ms);
/* After fork(), in the child. */
void pk_console_after_fork(void);
/* The log changed (pk_set_log_buf_len, pk_printk_exit): consoles restart at @seq. */
void pk_console_reset_positions(uint64_t seq);

/* vsprintf.c adds: the last byte the full output would end with (0 if empty),
 * so a truncated message that ended its line still ends it. */

#endif
