// SPDX-License-Identifier: MIT
/*
 * fuzz_lanes.c - libFuzzer target: the pool of lanes (src/ring/lanes.c,
 * docs/lanes.md) on hostile memory, read, written and merged.
 *
 * Input: two control bytes, then a log region image (fuzz_region.h loads
 * it); the seeds are logs made with lanes on, so the pool follows the
 * format string table. ctrl[0]: bits 0-4 how many lines to store into a
 * lane, bit 5 free the merge lock first (so that the merge runs); ctrl[1]
 * seeds their lengths and bytes.
 *
 *   1. Attached read-only: every record forward (the ring's, then the
 *      lanes' records in the view, numbered after the ring's), the view's
 *      count taken twice (the same), the pool's counters; no byte changed.
 *   2. Attached read-write: up to 31 lines stored with prb_lane_store(),
 *      which claims a lane among hostile owner words and writes it
 *      between hostile indexes; a merge; every record forward again; a
 *      /dev/kmsg reader over all of it.
 *
 * Properties (a violation aborts): no crash, no sanitizer report, no hang
 * (-timeout), only documented error codes, records sane and in increasing
 * seq order, at most what the region can hold; the view's count bounded by
 * the pool's size; a merge that meets a lane whose records are not whole
 * (checked here from the layout docs/lanes.md gives) counts it damaged;
 * and when the merge ran on a pool with no record in
 * flight, with no lane counted damaged, no ring store refused and the lines
 * stored within a reader's reach (not behind records that do not
 * validate), it accounts for every record: those merged plus those still
 * pending are what the view saw plus the lines stored.
 */
#include <fcntl.h>

#include <printk/kmsg.h>

#include "base/clock.h"
#include "fuzz_region.h"
#include "log/log_internal.h"
#include "ring/ringbuffer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CTRL 2

static struct pk_record rec;
static char blob[PRB_TEXT_MAX + 64];
static char line[PK_MESSAGE_MAX + 64];

/* Pool words (lanes.c): the merge lock and the record in flight. */
#define POOL_LOCK     0
#define POOL_INFLIGHT 4

/*
 * Whether lane @i's records, from its read index, are whole up to its
 * write index, as docs/lanes.md lays them out (written here from the
 * layout, not from lanes.c): a header word of length, level, flags and the
 * magic "LANE" (length 0xffff: padding to the lane's end, never at its
 * start, never twice in a row), the timestamp and caller words, the text
 * in whole words, inside the lane and before the write index.
 */
static int lane_whole(struct prb *rb, unsigned i)
{
	const pk_a64 *c = rb->lanes + 8 + 24 * (size_t)i;
	const pk_a64 *d = rb->lanes + 4096 / 8 + i * (rb->lane_bytes / 8);
	uint64_t size = rb->lane_bytes, pos = pk_load_relaxed(&c[8]), end = pk_load_relaxed(&c[0]);
	int padded = 0;

	if (end - pos > size)
		return 0;
	while (pos != end) {
		uint64_t at = pos % size, w0;

		if (end - pos < 24)
			return 0;
		w0 = pk_load_relaxed(&d[at / 8]);
		if (w0 >> 32 != 0x454e414c)
			return 0;
		if ((w0 & 0xffff) == 0xffff) {
			if (padded || at == 0 || size - at > end - pos)
				return 0;
			padded = 1;
			pos += size - at;
			continue;
		}

		uint64_t len = w0 & 0xffff, bytes = 8 * (3 + (len + 7) / 8);

		if (len > PRB_TEXT_MAX || at + bytes > size || bytes > end - pos)
			return 0;
		padded = 0;
		pos += bytes;
	}
	return 1;
}

static uint64_t pool_bound(struct prb *rb)
{
	return PRB_LANES * (rb->lane_bytes / 24 + 1);
}

/* Up to 31 lines into this thread's lane: the number stored. */
static unsigned store_lines(struct pk_log *log, const uint8_t *ctrl)
{
	struct prb *rb = pk_log_ring(log);
	unsigned n = ctrl[0] & 31, stored = 0;

	for (unsigned i = 0; i < n; i++) {
		size_t len = ((size_t)ctrl[1] * (i + 3) * 29u + i) % (PRB_TEXT_MAX + 16);

		for (size_t k = 0; k < len; k++)
			blob[k] = (char)(ctrl[1] + k * 7 + i);

		int err = prb_lane_store(rb, pk_clock_ns(), (uint8_t)(i % 8), blob, len, true);

		switch (err) {
		case 0:
			if (len > PRB_TEXT_MAX)
				fail("a lane took a line longer than a record", (long long)len, 0);
			stored++;
			break;
		case -ENOSPC: /* full, or indexes that do not validate */
		case -EBUSY:  /* no free lane, a region without a pool */
			break;
		default:
			fail("unexpected error from prb_lane_store", err, (long long)len);
		}
	}
	return stored;
}

static void kmsg_pass(struct pk_log *log)
{
	struct kmsg_file *f;
	int err = pk_kmsg_open_log(&f, log, O_RDONLY | O_NONBLOCK);

	if (err)
		fail("pk_kmsg_open_log", err, 0);
	kmsg_read_all(f, line, sizeof(line));
	pk_kmsg_close(f);
}

static int run(const uint8_t *data, size_t size, size_t len, const uint8_t *ctrl)
{
	struct pk_log *log;
	struct prb_lanes_stats before, after;
	int err = pk_log_attach(&log, region, len, PK_LOG_RDONLY);

	if (err) {
		check_attach_error(err);
		return err;
	}

	struct prb *rb = pk_log_ring(log);
	uint64_t viewed = 0;

	if (rb->lanes) {
		viewed = prb_lanes_view_count(rb);
		if (viewed > pool_bound(rb))
			fail("the view counts more records than the pool holds", (long long)viewed,
			     (long long)pool_bound(rb));
		if (prb_lanes_view_count(rb) != viewed)
			fail("the view counts differently twice", (long long)viewed, 0);
	}
	read_pass(log, pk_log_first_seq(log), 0, &rec);
	read_pass(log, pk_log_first_seq(log), PK_READ_UNFINALIZED, &rec);
	prb_lanes_stats(rb, &before);
	region_check_unchanged(data, size, len);

	int merge_clean = 0;

	if (rb->lanes) {
		/* The harness, not the handle: free the lock (a record named in
		 * flight stays: the view left it out if the ring has it). */
		if (ctrl[0] & 0x20)
			pk_store_relaxed(&rb->lanes[POOL_LOCK], 0);
		merge_clean = !pk_load_relaxed(&rb->lanes[POOL_LOCK]) &&
			      !pk_load_relaxed(&rb->lanes[POOL_INFLIGHT]);
	}
	pk_log_destroy(log);

	err = pk_log_attach(&log, region, len, 0);
	if (err) {
		check_attach_error(err);
		return 0;
	}
	rb = pk_log_ring(log);

	struct prb_stats rs0, rs1;

	prb_get_stats(rb, &rs0);

	struct prb_lanes_stats mid0, mid1;

	prb_lanes_stats(rb, &mid0);

	unsigned stored = store_lines(log, ctrl);

	/* Lines stored behind records that do not validate are out of any
	 * reader's reach (the merge skips that lane to its end, counted). */
	prb_lanes_stats(rb, &mid1);

	int reachable = mid1.pending == mid0.pending + stored;

	/* Lanes the merge takes to their end (another process's, or free: on
	 * a region of no file every other pid is gone) that are not whole. A
	 * pool whose "used" word (1) says no lane was ever claimed is not
	 * looked at by a merge at all. */
	int damaged = 0, used = rb->lanes && pk_load_relaxed(&rb->lanes[1]);

	for (unsigned i = 0; rb->lanes && i < PRB_LANES; i++) {
		uint64_t owner = pk_load_relaxed(&rb->lanes[8 + 24 * (size_t)i + 2]);

		if ((uint32_t)owner != (uint32_t)getpid() && !lane_whole(rb, i))
			damaged = 1;
	}
	prb_lanes_merge(rb);
	prb_lanes_stats(rb, &after);
	prb_get_stats(rb, &rs1);
	/*
	 * Only a merge that ran (the lock free: the writable attach may have
	 * merged already, which counts the same), on lanes that all validated
	 * and a ring that took every store, can be held to the count. The
	 * counters are the file's: differences, as they may wrap.
	 */
	if (rb->lanes && merge_clean && reachable && after.corrupt == before.corrupt &&
	    rs1.reserve_failed == rs0.reserve_failed && rs1.holes == rs0.holes &&
	    !atomic_load(&rb->broken) &&
	    after.merged - before.merged + after.pending != viewed + stored)
		fail("a merge lost or made lane records", (long long)(after.merged - before.merged),
		     (long long)(viewed + stored - after.pending));
	/* Damage is counted: a clean merge that met a lane not whole says so. */
	if (rb->lanes && merge_clean && used && damaged && after.corrupt == before.corrupt &&
	    rs1.reserve_failed == rs0.reserve_failed && rs1.holes == rs0.holes &&
	    !atomic_load(&rb->broken))
		fail("a merge passed a damaged lane without counting it", 0, 0);
	if (!read_pass(log, pk_log_first_seq(log), PK_READ_UNFINALIZED, &rec))
		kmsg_pass(log);
	pk_log_destroy(log);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return region_run_input(data, size, CTRL, run);
}
