// SPDX-License-Identifier: MIT
/*
 * store.h - the one way a line enters a ring.
 *
 * printk (after formatting and parsing its level headers), a /dev/kmsg write
 * and pk_log_store() all hand their line to pk_store_line(), so the cut
 * rules, the dictionary rule and continuation live in one place. It sits
 * right above the ring, below the log handles (pk_log_store()) and
 * everything that prints; the notices of the consoles and the crash path go
 * through settings.h's pk_store_notice().
 *
 * The rules, whoever hands the line over:
 *   - the text is cut at PRB_TEXT_MAX bytes and the dictionary at
 *     PRB_DICT_MAX, never refused for its length here (pk_log_store()
 *     refuses long input itself, as its contract says);
 *   - a line with a dictionary ends its line, as the kernel's;
 *   - a continuation joins the caller's open line in the ring when the
 *     caller matches and room is left, else it becomes a record of its own
 *     flagged PRB_FLAG_CONT;
 *   - a line that stays open, and a continuation, is matched by the full
 *     caller context (signal nesting and mask: pk_caller_context()), so a
 *     signal handler's fragment never joins the line the code it
 *     interrupted was building; complete lines skip that system call.
 *
 * Inline, so that printk's hot path pays no call and no copy of the line:
 * one definition, compiled into each caller. Nothing here allocates, locks
 * or waits: async-signal-safe. It knows nothing of the default log.
 */
#ifndef PRINTK_STORE_H
#define PRINTK_STORE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hints.h"
#include "ring/caller.h"
#include "ring/ringbuffer.h"

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

/* The record flags @l was stored with (after pk_store_line()). */
static inline uint8_t pk_line_flags(const struct pk_line *l)
{
	return (uint8_t)((l->newline ? PRB_FLAG_NEWLINE : 0) | (l->cont ? PRB_FLAG_CONT : 0));
}

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
static PK_ALWAYS_INLINE int pk_store_line(struct prb *rb, struct pk_line *l, struct prb_caller *caller,
					  uint64_t *seq)
{
	if (l->len > PRB_TEXT_MAX)
		l->len = PRB_TEXT_MAX;
	if (!l->dict)
		l->dict_len = 0;
	if (l->dict_len > PRB_DICT_MAX)
		l->dict_len = PRB_DICT_MAX;
	if (l->dict_len)
		l->newline = true;

	/* Records waiting in lanes enter the sequence before a new one or a
	 * continuation's join (which must not join across them)
	 * (docs/lanes.md, "One sequence"): a read-only reader numbered them
	 * after the ring's newest record, and a merge after this store would
	 * give them other numbers. Whatever the process's own lanes setting:
	 * another process may have filled the pool of a shared file. */
	prb_lanes_merge_pending(rb);

	pk_caller_get(caller);
	if (l->cont || !l->newline)
		caller->ctx = pk_caller_context();
	if (l->cont && !l->dict_len) {
		if (l->len == 0 && !l->newline)
			return -ENODATA; /* nothing to add, nothing to end */
		if (prb_extend(rb, caller, l->text, l->len, PRB_TEXT_MAX, l->newline,
			       l->newline ? PRB_FLAG_NEWLINE : 0, NULL) == 0)
			return PK_STORED_JOINED;
	}

	struct prb_meta meta = {
		.ts_nsec = l->ts_nsec,
		.caller = *caller,
		.level = (uint8_t)(l->level & 7),
		.facility = (uint8_t)l->facility,
		.flags = pk_line_flags(l),
	};

	int err = prb_store(rb, &meta, l->text, l->len, l->dict_len ? l->dict : NULL, l->dict_len,
			    l->newline, seq);

	return err ? err : PK_STORED_NEW;
}

#endif
