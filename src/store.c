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
 * Nothing here allocates, locks or waits: async-signal-safe.
 */
#include <errno.h>
#include <stdarg.h>

#include <printk/kern_levels.h>

#include "caller.h"
#include "hints.h"
#include "settings.h"
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

void pk_store_notice(int level, const char *fmt, ...)
{
	/* On the caller's stack, like printk's own buffer: one line's text. */
	char buf[PRB_TEXT_MAX + 2];
	struct prb *rb = pk_printk_ring();
	char last = 0;
	va_list ap;

	if (!rb)
		return;
	pk_sigdepth_enter();

	struct pk_line l = { .ts_nsec = pk_clock_ns(), .level = level, .text = buf };

	va_start(ap, fmt);
	int full = pk_vsnprintf_last(buf, sizeof(buf), &last, fmt, ap);
	va_end(ap);

	l.len = full < 0 ? 0 : (size_t)full;
	if (l.len > sizeof(buf) - 1)
		l.len = sizeof(buf) - 1;
	l.newline = full > 0 && last == '\n';
	if (l.newline && (size_t)full == l.len)
		l.len--;

	struct prb_caller me;
	uint64_t seq;

	if (pk_store_line(rb, &l, &me, &seq) >= 0)
		pk_default_log_mark_used();
	pk_sigdepth_leave();
}
