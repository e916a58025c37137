// SPDX-License-Identifier: MIT
/*
 * store.h - the one way a line enters a ring (store.c).
 *
 * printk (after formatting and parsing its level headers), a /dev/kmsg write
 * and pk_log_store() all hand their line to pk_store_line(), so the cut
 * rules, the dictionary rule and continuation live in one place. It sits
 * right above the ring, below the log handles (pk_log_store()) and
 * everything that prints; the notices of the consoles and the crash path go
 * through settings.h's pk_store_notice().
 */
#ifndef PRINTK_STORE_H
#define PRINTK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringbuffer.h"

/* A line to store. pk_store_line() applies the limits to it in place, so the
 * caller sees what was stored. */
struct pk_line {
	uint64_t ts_nsec;
	int facility;
	int level;	  /* 0..7 */
	const char *text;
	size_t len;	  /* cut to PRB_TEXT_MAX */
	const char *dict; /* KEY=VALUE entries separated by NUL bytes; NULL: none */
	size_t dict_len;  /* cut to PRB_DICT_MAX */
	bool newline;	  /* the line ends here (set when there is a dictionary) */
	bool cont;	  /* KERN_CONT: join the caller's open line if it can */
};

/* pk_store_line() results besides a negative errno. */
#define PK_STORED_NEW	 0 /* a record of its own: *seq is its number */
#define PK_STORED_JOINED 1 /* appended to the caller's open line */

/*
 * Store @l in @rb as the calling thread's line: a continuation joins the
 * caller's open line when it can (same pid, tid and caller context, room
 * left), else it becomes a record of its own flagged PRB_FLAG_CONT. *@caller
 * is who it was stored as. Returns PK_STORED_NEW, PK_STORED_JOINED,
 * -ENODATA (an empty continuation that ends nothing: nothing to store), or
 * prb_store()'s error: -ENOBUFS (the ring refused: its oldest record is
 * still being written), -EPERM (a read-only ring), -EINVAL (no text).
 * Async-signal-safe, lock-free.
 */
int pk_store_line(struct prb *rb, struct pk_line *l, struct prb_caller *caller, uint64_t *seq);

/* The record flags @l was stored with (after pk_store_line()). */
static inline uint8_t pk_line_flags(const struct pk_line *l)
{
	return (uint8_t)((l->newline ? PRB_FLAG_NEWLINE : 0) | (l->cont ? PRB_FLAG_CONT : 0));
}

#endif
