// SPDX-License-Identifier: MIT
/*
 * lane_writer.h - the writer's end of a lane (lanes.c), inline for printk's
 * fast path: reserve room in the calling thread's lane, let the caller
 * encode its record's blob straight into it, publish it with the one
 * release store of the lane's write index.
 *
 * Owns nothing: the thread's lane state (struct prb_lane_tl) is lanes.c's,
 * declared here so that the fast path reads it without a call. The layout
 * constants below are lanes.c's pool layout (it asserts that they agree).
 *
 * The fast path keeps lanes.c's invariants: L1 (one writer, plain stores
 * within the room ridx leaves, one release of widx; the room is checked
 * before a byte is written, and nothing is written past it), L5 (the busy
 * flag is set before the lane is looked at, so a signal handler that
 * interrupts the store finds it and goes to the ring). It never claims a
 * lane: a thread without one for @rb, a lane whose owner word is no longer
 * ours, a full or damaged lane all give NULL, and the caller takes
 * prb_lane_store(), which deals with them.
 */
#ifndef PRINTK_LANE_WRITER_H
#define PRINTK_LANE_WRITER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/atomics.h"
#include "base/hints.h"
#include "ring/ringbuffer.h"

/* lanes.c's pool layout (words of 8 bytes). */
#define PRB_LANE_CTL_OFF   8u  /* first control block */
#define PRB_LANE_CTL_WORDS 24u /* per lane: 3 lines */
#define PRB_LANE_C_WIDX	   0
#define PRB_LANE_C_OWNER   2
#define PRB_LANE_C_RIDX	   8
#define PRB_LANE_MAGIC	   UINT64_C(0x454e414c) /* "LANE" */
#define PRB_LANE_HDR_WORDS 3u

/* The calling thread's lane: the region it was claimed in (@hdr: the
 * mapping's header, as rb->hdr; NULL: none), its index, the owner word's
 * value (pid | tid << 32) and whether a lane store is under way (L5).
 * @lanes, @ctl, @data and @size are the pool, the lane's control block,
 * its records and their size in that region when it was claimed: valid
 * while rb->hdr and rb->lanes are still @hdr and @lanes (the same mapping
 * and the same layout). */
struct prb_lane_tl {
	const void *hdr;
	const pk_a64 *lanes;
	pk_a64 *ctl;
	pk_a64 *data;
	uint64_t size;
	unsigned idx;
	uint64_t id;
	volatile sig_atomic_t busy;
};
extern _Thread_local PK_TLS_IE struct prb_lane_tl prb_lane_tl;

/*
 * Reserve room for a record in the calling thread's lane of @rb: true and
 * where its blob goes in *@blob, with *@cap bytes for it (at least @need
 * and at most @max, which is at most PRB_TEXT_MAX and not below @need, and
 * 8 more after them that prb_lane_publish() may zero; contiguous: a
 * record that would cross the lane's end is prb_lane_store()'s, which
 * pads), and the busy flag set; or false, nothing set. A true answer
 * must be followed by prb_lane_publish() or prb_lane_cancel(). The
 * record's header words are the three before the blob; the lane's control
 * block and write index are found again from the thread's lane state when
 * it is published (nothing else moves them while the busy flag is set), so
 * the caller keeps one pointer across its encoding.
 */
static PK_ALWAYS_INLINE bool prb_lane_reserve(struct prb *rb, char **blob, size_t *cap, size_t need,
					      size_t max)
{
	struct prb_lane_tl *t = &prb_lane_tl;

	if (PK_UNLIKELY(t->busy) || PK_UNLIKELY(t->hdr != (const void *)rb->hdr) ||
	    PK_UNLIKELY(t->lanes != rb->lanes) || PK_UNLIKELY(!rb->writable))
		return false;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);

	pk_a64 *c = t->ctl;
	uint64_t size = t->size;

	if (PK_UNLIKELY(pk_load_relaxed(&c[PRB_LANE_C_OWNER]) != t->id))
		goto none;

	uint64_t w = pk_load_relaxed(&c[PRB_LANE_C_WIDX]);
	uint64_t used = w - pk_load_acquire(&c[PRB_LANE_C_RIDX]);
	uint64_t at = w & (size - 1);
	uint64_t room = size - at;

	if (PK_UNLIKELY(used > size))
		goto none;
	if (size - used < room)
		room = size - used;
	if (PK_UNLIKELY(room < (PRB_LANE_HDR_WORDS + 1) * 8 + need))
		goto none;
	room -= (PRB_LANE_HDR_WORDS + 1) * 8;
	*cap = room < max ? (size_t)room : max;

	*blob = (char *)(void *)(t->data + at / 8 + PRB_LANE_HDR_WORDS);
	return true;
none:
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
	return false;
}

/* Give a reservation up: nothing was published (what was written above
 * widx is nobody's). */
static PK_ALWAYS_INLINE void prb_lane_cancel(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	prb_lane_tl.busy = 0;
}

/* A record's first header word but its length, for a line of @level
 * (0-7): what prb_lane_publish() completes. */
static PK_ALWAYS_INLINE uint64_t prb_lane_hdr(unsigned level)
{
	return (uint64_t)(level & 7) << 16 |
	       (uint64_t)(PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED) << 24 | PRB_LANE_MAGIC << 32;
}

/* The record's timestamp, written into the reservation as soon as it is
 * read (the word is above widx: nobody's until prb_lane_publish()). */
static PK_ALWAYS_INLINE void prb_lane_stamp(char *blob, uint64_t ts)
{
	pk_a64 *p = (pk_a64 *)(void *)blob - PRB_LANE_HDR_WORDS;

	pk_store_relaxed(&p[1], ts);
}

/*
 * Publish the record whose blob, @len bytes (at most the reservation's
 * cap), was written at the reservation's address and whose timestamp
 * prb_lane_stamp() wrote: its other header words (@hdr: prb_lane_hdr()),
 * the blob's last word zero-padded (the bytes readers see are those of
 * prb_lane_store(): 8 zero bytes after the blob, within the reservation,
 * the ones past the record's last word above widx), then the release
 * store of widx (L1).
 */
static PK_ALWAYS_INLINE void prb_lane_publish(char *blob, uint64_t hdr, size_t len)
{
	pk_a64 *p = (pk_a64 *)(void *)blob - PRB_LANE_HDR_WORDS;
	pk_a64 *c = prb_lane_tl.ctl;
	const uint64_t zero = 0;

	memcpy(blob + len, &zero, 8);
	pk_store_relaxed(&p[0], hdr | (uint64_t)len);
	pk_store_relaxed(&p[2], prb_lane_tl.id);
	pk_store_release(&c[PRB_LANE_C_WIDX], pk_load_relaxed(&c[PRB_LANE_C_WIDX]) +
						      (PRB_LANE_HDR_WORDS + (len + 7) / 8) * 8);
	atomic_signal_fence(memory_order_seq_cst);
	prb_lane_tl.busy = 0;
}

#endif
