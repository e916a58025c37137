// SPDX-License-Identifier: MIT
/*
 * log_shared.h - what other modules may know of a log handle (log.c,
 * logfile.c): its ring, and the state a log keeps next to its ring, in the
 * ring header's user area, so that every process using the log sees it.
 *
 * struct pk_log_shared is part of the log's on-file ABI (PRB_ABI_VERSION):
 * fields are only ever appended. Every field a process did not write itself
 * may have been written by any other process: read it as untrusted.
 */
#ifndef PRINTK_LOG_SHARED_H
#define PRINTK_LOG_SHARED_H

#include <signal.h>
#include <stdint.h>

#include <printk/log.h>

#include "base/atomics.h"
#include "base/clock.h"
#include "ring/ringbuffer.h"

#define PK_LOG_STATE_MAGIC   0x4554415453544c50ull /* "PLTSTATE" */
#define PK_LOG_LEVEL_UNSAVED 0xffffffffu
/* roles: a process made this its printk log (settings.c); how a reader of a
 * core with several logs in it tells printk's from the program's own. */
#define PK_LOG_ROLE_PRINTK 0x1u
#define PK_LOG_CONSOLE_LEVELS 8 /* named consoles whose level another process set */
#define PK_LOG_CONSOLE_STATES 8 /* forwarding consoles whose state a reader can see */

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
	pk_a32 roles;		/* PK_LOG_ROLE_*: what processes made this log (0 in older logs) */
	/* File logs (written once at creation, before the file is published): */
	uint64_t file_size;	  /* the whole file; 0 for a memory log */
	uint64_t registry_off;	  /* writer registry entries */
	uint64_t lock_off;	  /* one lock byte per registry entry */
	uint32_t registry_entries;
	uint32_t file_flags;
	uint64_t creation_id[2]; /* random, drawn at creation (0: older files) */
	/* Dynamic debug queries posted to every process writing the log
	 * (dyndbg.c): the generation is odd while a post writes the text,
	 * NUL-padded, four bytes a word, least significant first. */
	pk_a32 dyndbg_gen;
	pk_a32 dyndbg_text[128];
	/* Levels of named consoles, set from outside the program (udmesg
	 * -n NAME=LEVEL, pk_log_set_console_level()): the console printing
	 * process applies them when console_levels_gen moved. */
	pk_a32 console_levels_gen;
	pk_a32 reserved1;
	struct pk_log_console_level {
		pk_a64 name[2]; /* the console's name, NUL-padded; 0: a free entry */
		pk_a32 level;	/* its own level + 1; 0: follow console_loglevel */
		pk_a32 reserved;
	} console_levels[PK_LOG_CONSOLE_LEVELS];
	/* The timestamp clock the writers of a log file agree on (clock.c);
	 * all zero in files of older versions and in memory logs. */
	struct pk_log_clock clock;
	/* The forwarding consoles of the processes writing the log, as
	 * pk_console_stats() sees them (console_state.c), for readers in
	 * other processes (udmesg --info). An entry belongs to the process
	 * whose pid it holds (0: free); each field is one relaxed store, so a
	 * reader may see counters of two moments, never a torn word. All zero
	 * in files of older versions. */
	struct pk_log_console_state {
		pk_a32 pid;
		pk_a32 state;	   /* PK_CONSOLE_* */
		pk_a64 name[2];	   /* the console's name, NUL-padded */
		pk_a32 last_error; /* errno of the last failure, positive (0: none) */
		pk_a32 reserved;
		pk_a64 delivered, waiting, lost, changes;
	} console_states[PK_LOG_CONSOLE_STATES];
	/* The module levels of the last process writing the log that changed
	 * its own (modlevel.c), for udmesg --module-levels: the generation
	 * is odd while one publishes. A display: each process applies its
	 * own table. */
	pk_a32 module_levels_gen;
	pk_a32 module_levels_count;
	struct pk_log_module_level {
		pk_a64 name[4]; /* NUL-padded, PK_MODULE_NAME_MAX bytes */
		pk_a32 level;	/* 0..15 */
		pk_a32 reserved;
	} module_levels[16];
};

/* The public record mirrors the ring's: pk_log_read() copies one into the other. */
_Static_assert(sizeof(((struct pk_record *)0)->text) == sizeof(((struct prb_record *)0)->text),
	       "struct pk_record holds a ring record's text");
_Static_assert(sizeof(((struct pk_record *)0)->dict) == sizeof(((struct prb_record *)0)->dict),
	       "struct pk_record holds a ring record's dictionary");

/* A ring record as the public struct (what pk_log_read() returns).
 * Async-signal-safe. */
void pk_record_from_ring(struct pk_record *rec, const struct prb_record *r);

/* The ring behind @log (never NULL for a valid handle). Async-signal-safe. */
struct prb *pk_log_ring(struct pk_log *log);

/* The shared state of @log (never NULL for a valid handle). Async-signal-safe. */
struct pk_log_shared *pk_log_shared(struct pk_log *log);

/* 1 if a process (this one included) still writes @log, 0 if every writer
 * is gone (post-mortem). Memory logs: 1. Async-signal-safe (fcntl only). */
int pk_log_writers_alive(struct pk_log *log);

/*
 * Stop using @log's file (a writer that found its ring too damaged to
 * store in): the mapping becomes private memory holding an empty ring of
 * the same geometry, which this process goes on writing; the pk_log_*
 * calls on @log return @reason (a negative errno) from then on, as after a
 * truncation. -EINVAL for a log without a file. Async-signal-safe.
 */
int pk_log_go_private(struct pk_log *log, int reason);

/* Where the open that made @log moved a damaged log file before it started
 * a new one in its place (pk_log_open_file()), or NULL. */
const char *pk_log_damaged_copy(const struct pk_log *log);

/* For a SIGBUS handler (logfile.c): 1 if @si is a fault inside a log file's
 * mapping and the mapping was replaced (return from the handler: the access
 * is retried on the new memory), 0 if the signal is not about a log.
 * Async-signal-safe; errno is preserved. */
int pk_logfile_repair_fault(int sig, const siginfo_t *si);

#endif
