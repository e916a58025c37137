// SPDX-License-Identifier: MIT
/*
 * record_read.c - the reading layer's one door to the ring: records as
 * text, deferred ones formatted (record_read.h).
 *
 * Owns: nothing but the rule that a record leaves the ring for a reader
 * only after its deferred form, if it has one, was expanded. The record's
 * bytes belong to the ring, the format table and the expansion to
 * deferred.c; this file joins the two so that the ring links no formatter.
 *
 * Invariants:
 *  - The expansion runs on a copy that passed the ring's check (D8 in
 *    ringbuffer.c): prb_read() and prb_read_text() return 0 or a length
 *    only for such a copy.
 *  - A record that is not deferred costs one flag test more than the
 *    ring's own read.
 */
#include "format/record_read.h"

#include "base/hints.h"
#include "format/deferred.h"

int pk_rec_read_cached(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags,
		       struct pk_dfmt_cache *fc)
{
	if (!fc)
		return pk_rec_read(rb, seq, r, flags);

	int err = prb_read(rb, seq, r, flags);

	if (!err && PK_UNLIKELY(r->flags & PRB_FLAG_DEFERRED)) {
		size_t dl = r->dict_len;

		r->text_len = (uint16_t)pk_deferred_expand_cached(rb, r->text, r->text_len, &r->flags, fc);
		r->dict[dl] = '\0';
	}
	return err;
}

int pk_rec_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags)
{
	int err = prb_read(rb, seq, r, flags);

	/* A deferred record has no dictionary: its room is the scratch space. */
	if (!err && PK_UNLIKELY(r->flags & PRB_FLAG_DEFERRED)) {
		size_t dl = r->dict_len;

		r->text_len = (uint16_t)pk_deferred_expand(rb, r->text, r->text_len, &r->flags,
							   dl ? NULL : r->dict);
		r->dict[dl] = '\0';
	}
	return err;
}

int pk_rec_read_text(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst, struct pk_dfmt_cache *fc)
{
	bool plain;

	return pk_rec_read_text_plain(rb, seq, ts_nsec, dst, fc, &plain);
}

int pk_rec_read_text_plain(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst,
			   struct pk_dfmt_cache *fc, bool *plain)
{
	uint8_t fl;
	int len = prb_read_text(rb, seq, ts_nsec, dst, &fl);

	*plain = false;
	if (len >= 0 && PK_UNLIKELY(fl & PRB_FLAG_DEFERRED))
		return (int)pk_deferred_expand_plain(rb, dst, (size_t)len, &fl, fc, plain);
	return len;
}
