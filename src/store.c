// SPDX-License-Identifier: MIT
/*
 * store.c - the one way a line enters a ring.
 *
 * Owns the rules that turn a line into a record, whoever hands it over
 * (printk, a /dev/kmsg write, pk_log_store(), a notice):
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
 * Nothing here allocates, locks or waits: async-signal-safe. It knows
 * nothing of the default log: log.c, kmsg.c, printk.c and settings.c's
 * notices hand it the ring.
 */
#include <errno.h>

#include "caller.h"
#include "hints.h"
#include "store.h"

PK_HOT int pk_store_line(struct prb *rb, struct pk_line *l, struct prb_caller *caller, uint64_t *seq)
{
	if (l->len > PRB_TEXT_MAX)
		l->len = PRB_TEXT_MAX;
	if (!l->dict)
		l->dict_len = 0;
	if (l->dict_len > PRB_DICT_MAX)
		l->dict_len = PRB_DICT_MAX;
	if (l->dict_len)
		l->newline = true;

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
