// SPDX-License-Identifier: MIT
/*
 * settings.h - the default log and the printk settings (settings.c), read
 * by every layer above the log: consoles, printk, the readers, start-up.
 *
 * Everything here is lock-free and async-signal-safe unless it says
 * otherwise: a signal handler's printk reads the settings and may create the
 * default log (one mmap).
 */
#ifndef PRINTK_SETTINGS_H
#define PRINTK_SETTINGS_H

#include <stdatomic.h>
#include <stddef.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "base/fast_gate.h"
#include "base/hints.h"
#include "format/vsprintf.h"
#include "ring/ringbuffer.h"

/* ------------------------------------------------------ the default log -- */

/* The default log, created on first use (NULL if that failed), is the
 * public pk_printk_log() (<printk/printk.h>). */
/* The default log if it exists (never creates it). */
struct pk_log *pk_printk_log_peek(void);
/* What pk_printk_log_peek() loads, for printk's fast path (no call). */
extern PK_HIDDEN _Atomic(struct pk_log *) pk_printk_log_ptr;
/* The default log's ring, created on first use; NULL if that failed. */
struct prb *pk_printk_ring(void);

/* Set once a record was stored in the default log: from then on its size and
 * file are fixed (pk_set_log_buf_len/file return -EBUSY). Its record is
 * the fast gate's PK_GATE_LOG_UNUSED, clear once used (printk's fast path
 * leaves a first store to store(), which marks it). */
static inline void pk_default_log_mark_used(void)
{
	if (PK_UNLIKELY(pk_fast_gate_load() & PK_GATE_LOG_UNUSED))
		pk_fast_gate_clear(PK_GATE_LOG_UNUSED);
}
static inline int pk_default_log_used(void)
{
	return !(pk_fast_gate_load() & PK_GATE_LOG_UNUSED);
}

/* What the next default log is made of: a size (0: the default) and a file
 * (NULL: memory) with its PK_LOG_* flags. */
size_t pk_default_log_len(void);
void pk_default_log_set_len(size_t len);
const char *pk_default_log_file(void);
unsigned pk_default_log_file_flags(void);
/*
 * Make @fresh (opened from @path with @flags, or a memory log if @path is
 * NULL) the default log; returns the one it replaces (to be destroyed once
 * nothing prints from it). @fresh == NULL detaches the log and forgets the
 * file and size: the next use creates a fresh memory log. Not
 * async-signal-safe (allocates); -ENOMEM leaves everything as it was.
 */
int pk_default_log_replace(struct pk_log *fresh, const char *path, unsigned flags, struct pk_log **old);
/* Give @log (a fresh memory log) the console level set for new logs. */
void pk_default_log_take_level(struct pk_log *log);
/*
 * A store into the default log failed with @err because its ring is
 * damaged beyond use (-EUCLEAN): a log file is left for private memory
 * (pk_log_go_private) with a notice, so printk goes on. Returns 1 if the
 * store should be tried again, 0 if nothing changed. Async-signal-safe.
 */
int pk_printk_log_damaged(int err);
/* msync the default log's file if it was configured with PK_LOG_SYNC. */
void pk_printk_sync(void);

/*
 * Store a complete line at @level in the default log without printing it:
 * for notices made while holding the console lock or on the crash path,
 * printed later by whoever prints next. Async-signal-safe. Returns 0 once
 * stored, else pk_store_line()'s error (-ENOBUFS: the ring refused it):
 * a notice that carries a count must keep that count when it is refused.
 */
int pk_store_notice(int level, const char *fmt, ...) PK_PRINTF_FORMAT(2, 3);
/* pk_store_notice(), and the notice's seq in *@seq once it is stored. */
int pk_store_notice_seq(uint64_t *seq, int level, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);

/* ------------------------------------------------------------ settings -- */

/* console_loglevel of the default log (shared by every process using it). */
int pk_cfg_console_loglevel(void);
int pk_cfg_ignore_loglevel(void);
extern PK_HIDDEN _Atomic int pk_cfg_ignore_loglevel_flag; /* what it reads, for printk's fast path */
/* Set ignore_loglevel (pk_set_ignore_loglevel() also has the sites decide again). */
void pk_cfg_store_ignore_loglevel(int on);
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

#endif
