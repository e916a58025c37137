// SPDX-License-Identifier: MIT
/*
 * record_read.h - reading a record as text: the ring's copy, with a
 * deferred record formatted.
 *
 * The ring (ringbuffer.c) stores and copies bytes and never formats: a
 * deferred record (deferred.h) comes out of prb_read() and prb_read_text()
 * as its format's reference and binary arguments, flagged
 * PRB_FLAG_DEFERRED. Every reader that shows or forwards text (the console
 * loops, /dev/kmsg, syslog(2), dumpers, pk_log_read() and with it the crash
 * path, the tools through reader.h) reads through these two calls, so the
 * expansion is done in one place and no reader sees the binary form.
 * Callers that look only at a record's place, level or caller (the open line
 * check at attach, the recovery sweep) may use prb_read() directly.
 *
 * Context: async-signal-safe and lock-free, as prb_read() and
 * pk_deferred_expand() are; nothing allocates.
 */
#ifndef PRINTK_RECORD_READ_H
#define PRINTK_RECORD_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "ring/ringbuffer.h"

struct pk_dfmt_cache;

/* prb_read(), and a deferred record replaced by its text (PRB_FLAG_DEFERRED
 * cleared, text NUL-terminated, cut at PK_TEXT_MAX bytes). Same returns. */
int pk_rec_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags);
/* The same through @fc, a reader's format cache (NULL: none): a printer
 * thread reads every record of a console. */
int pk_rec_read_cached(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags,
		       struct pk_dfmt_cache *fc);

/* prb_read_text(), and a deferred record expanded in @dst through @fc (a
 * bulk reader's format cache, pk_dfmt_cache_new(); NULL: none). Same
 * returns; @dst needs PRB_TEXT_MAX + 8 bytes. */
int pk_rec_read_text(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst, struct pk_dfmt_cache *fc);
/* The same, and *@plain true when the text is known to hold only bytes
 * 0x20-0x7e (false: not known; pk_deferred_expand_plain()). */
int pk_rec_read_text_plain(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst,
			   struct pk_dfmt_cache *fc, bool *plain);

#endif
