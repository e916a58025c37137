// SPDX-License-Identifier: MIT
/*
 * lanes.c - the flight recorder: per-thread single-writer lanes in the
 * log's memory, and their merge into the ring's one sequence.
 *
 * Owns the pool of lanes after the format string table (prb_lanes_size()
 * bytes, ringbuffer.h): which thread writes which lane, a lane's records,
 * the merge lock, and the read-only view of records not merged yet. The
 * design and its promises are in docs/lanes.md. The writer's fast path
 * (printk's call sites) reserves and publishes through lane_writer.h's
 * inline functions, on the thread state declared there, under the same
 * invariants; prb_lane_store() is the general writer (it claims, pads).
 *
 * Pool (words of 8 bytes, shared with every process mapping the log):
 *   line 0       merge lock (pid:32 | tid:32 of the merger; 0: free), used
 *                (set once a lane was ever claimed), merged, corrupt, and
 *                the batch journal's head: its record count, then the
 *                ring's three words (prb_store_batch(): first id + 1, the
 *                count committed | the next block's position << 8, the
 *                head its reservation leaves)
 *   from 64      PRB_LANES controls of 3 lines each:
 *                line A, written by the lane's owner: widx, full, the
 *                owner word (pid:32 | tid:32; 0: free), which changes hands
 *                by compare-and-swap only when it is free or its owner gone,
 *                and the owner's writer registry code (code | pid << 32,
 *                set after the claim, cleared before the lane is given back;
 *                0: none, then kill() tells a dead owner)
 *                line B, written by the merger: ridx
 *   from 3584    the batch journal: PRB_BATCH_MAX entries, lane:8 |
 *                the record's lane position (low 56 bits)
 *   from 4096    PRB_LANES lanes of prb_lane_bytes() bytes, each a ring of
 *                8-byte words indexed by widx/ridx (byte counts that only
 *                grow).
 * Record: word 0 len:16 | level:8 | flags:8 | LREC_MAGIC:32 (len 0xffff:
 * padding to the lane's end), word 1 the timestamp, word 2 pid | tid << 32,
 * then the blob (a deferred record: deferred.c) in whole words.
 *
 * Invariants:
 *   L1  A lane has one writer: the thread whose id is in its owner word. It
 *       writes words at and after widx only while widx + size - ridx fits
 *       the lane, then publishes them with one release store of widx. No
 *       atomic read-modify-write and no line another thread writes is
 *       written on that path (it reads ridx, which the merger writes).
 *       The fast path (lane_writer.h) checks the room up to the lane's
 *       end before its caller encodes a blob into it, writes nothing
 *       past that room, and publishes the record the same way.
 *   L2  Only the holder of the merge lock reads records below widx for
 *       keeps and advances ridx (release), after the record is in the ring:
 *       each record enters the sequence once. The merge stores records in
 *       batches (prb_store_batch(): one reservation for up to
 *       PRB_BATCH_MAX), each named in the pool's journal first:
 *       J1  the entries (lane and position of each record, in the order
 *           they are stored), then the count (release), before anything
 *           is reserved; the ring adds the batch's first id (tentative
 *           until its head CAS is done: B8 in ringbuffer.c) and, after
 *           each commit, how many are committed;
 *       J2  a lane is advanced past a batch's record only once the ring
 *           holds it and the journal counts it (the ring stores the read
 *           index after the count, record by record: a merge frees lane
 *           space as it goes); a record below the committed count is in
 *           the ring, the one at it is if its slot says so, the rest are
 *           not;
 *       J3  the count is cleared (release) after the lanes moved. A merger
 *           that finds a journal (the last one died: the lock is taken over
 *           only from a dead process) finishes the batch where it was
 *           reserved (prb_batch_resume()), moves the lanes past what the
 *           ring holds, and clears it; so does prb_lanes_finish(), which
 *           the first writer after a crash calls before prb_recover()
 *           makes holes of unfinished reservations. A read-only view reads
 *           such a batch's records at their reserved seqs and leaves them
 *           out of its numbering after the ring's.
 *       While the ring stores a batch, its records' claimer is the merger
 *       (C1 in ringbuffer.c), their caller the lane's writer: a record of
 *       a dead process's lane in flight is not taken from a live merger,
 *       and one left by a dead merger is taken over as its (J3).
 *   L3  A merge takes the records of all lanes in time order, up to the
 *       time it read before looking at any lane, so a record committed
 *       before another thread's call began (causal order) is merged first.
 *       A lane whose owner is gone (exited thread, dead process, a fork's
 *       parent on a private ring) is merged to its end and then freed. On a
 *       log file a process is gone when the writer registry says so for the
 *       code the lane names (rb->owner_alive, the log layer's oracle, as for
 *       a dead writer's ring records).
 *   L4  A reader trusts nothing in the pool: widx - ridx is checked against
 *       the lane's size and every record's length against what is left; a
 *       lane that does not validate is skipped to its widx, counted.
 *   L5  A signal handler that interrupts a lane store finds the thread's
 *       busy flag set and stores in the ring instead (prb_lane_store()
 *       returns -EBUSY); a full lane does the same (counted in full).
 *       The fast path sets the flag before it reads widx and clears it
 *       after the release of widx (or when it gives up).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hints.h"
#include "ring/caller.h"
#include "ring/lane_writer.h"
#include "ring/ringbuffer.h"

#define LREC_MAGIC UINT64_C(0x454e414c) /* "LANE" */
#define LREC_PAD   0xffffu
#define LREC_HDR   3u /* words */

/* Pool words. */
#define P_LOCK	  0
#define P_USED	  PRB_LANES_USED_WORD
#define P_MERGED  2
#define P_CORRUPT 3
/* The batch journal (J1-J3): */
#define P_JCOUNT  4 /* records in the batch named at J_OFF; 0: none */
#define P_JID	  5 /* the ring's journal: id of the first record + 1 (0: not reserved yet), */
#define P_JDONE	  6 /* how many are committed | where the next block goes << 8, */
#define P_JHEAD	  7 /* and the head word its reservation leaves (prb_store_batch()) */
#define J_OFF	  448u /* words: PRB_BATCH_MAX entries, lane << 56 | position */
#define J_POS_MASK ((UINT64_C(1) << 56) - 1)
#define CTL_OFF	  8u  /* words */
#define CTL_WORDS 24u /* 3 lines */
#define C_WIDX	  0
#define C_FULL	  1
#define C_OWNER	  2
#define C_CODE	  3 /* rb->owner | pid << 32 of the owner; 0: none */
#define C_RIDX	  8

_Static_assert(CTL_OFF + PRB_LANES * CTL_WORDS <= J_OFF, "lane controls overflow");
_Static_assert((J_OFF + PRB_BATCH_MAX) * 8 <= PRB_LANES_HDR, "batch journal overflows");


static inline pk_a64 *ctl(const struct prb *rb, unsigned i)
{
	return rb->lanes + CTL_OFF + (size_t)i * CTL_WORDS;
}

static inline pk_a64 *lane_data(const struct prb *rb, unsigned i)
{
	return rb->lanes + PRB_LANES_HDR / 8 + (size_t)i * (rb->lane_bytes / 8);
}

static inline uint64_t my_id(void)
{
	struct prb_caller c;

	pk_caller_get(&c);
	return (uint64_t)c.pid | (uint64_t)c.tid << 32;
}

/* Whether the process @pid is gone for @rb's purposes: a private ring's
 * records are only ours (a fork's parent lives on in its own copy). */
static bool pid_gone(const struct prb *rb, uint32_t pid)
{
	if (pid == pk_caller_pid())
		return false;
	if (!rb->owner_alive)
		return true; /* a private ring: another pid is a fork's parent */
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/*
 * Whether lane @i's owner (@owner, its owner word) is gone. A lane claimed
 * on a log file names its owner's writer registry code (C_CODE): the log's
 * oracle then answers as it does for the ring's records, and a pid since
 * taken by another process does not keep the lane claimed once the dead
 * owner's registry slot has a new owner. A lane without a code (claimed
 * an instant ago, or a log without a registry) is told by kill().
 */
static bool lane_owner_gone(const struct prb *rb, unsigned i, uint64_t owner)
{
	uint32_t pid = (uint32_t)owner;

	if (pid == pk_caller_pid())
		return false;
	if (!rb->owner_alive)
		return pid_gone(rb, pid);

	uint64_t code = pk_load_acquire(&ctl(rb, i)[C_CODE]);
	unsigned oc = (unsigned)(code & 0xffff);

	if (oc && (uint32_t)(code >> 32) == pid && pk_load_acquire(&ctl(rb, i)[C_OWNER]) == owner)
		return !rb->owner_alive((struct prb *)rb, oc, pid);
	return pid_gone(rb, pid);
}

/* --------------------------------------------------------------- writer -- */

/* The calling thread's lane: which region, which lane, and whether a lane
 * store is under way (L5). Declared in lane_writer.h, whose inline
 * reserve and publish (printk's fast path) read it without a call. */
_Thread_local PK_TLS_IE struct prb_lane_tl prb_lane_tl;
#define tl prb_lane_tl

_Static_assert(PRB_LANE_CTL_OFF == CTL_OFF && PRB_LANE_CTL_WORDS == CTL_WORDS &&
		       PRB_LANE_C_WIDX == C_WIDX && PRB_LANE_C_OWNER == C_OWNER &&
		       PRB_LANE_C_RIDX == C_RIDX && PRB_LANE_MAGIC == LREC_MAGIC &&
		       PRB_LANE_HDR_WORDS == LREC_HDR,
	       "lane_writer.h's layout is this file's");

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Regions whose lanes this process's threads claimed and which are still
 * there: a thread that exits after its log was destroyed must not touch
 * the old memory (prb_lanes_forget()). */
#define LIVE_MAX 8u
static _Atomic(const void *) live[LIVE_MAX];

static bool live_has(const void *hdr)
{
	for (unsigned i = 0; i < LIVE_MAX; i++)
		if (atomic_load(&live[i]) == hdr)
			return true;
	return false;
}

static void live_add(const void *hdr)
{
	if (live_has(hdr))
		return;
	for (unsigned i = 0; i < LIVE_MAX; i++) {
		const void *none = NULL;

		if (atomic_compare_exchange_strong(&live[i], &none, hdr))
			return;
	}
}

void prb_lanes_forget(struct prb *rb)
{
	free(atomic_exchange(&rb->lane_view, NULL));

	for (unsigned i = 0; i < LIVE_MAX; i++) {
		const void *h = rb->hdr;

		atomic_compare_exchange_strong(&live[i], &h, NULL);
	}
}

/* Thread exit: give the lane back (its records stay for the merge). The
 * key's value is the owner word's address, used only while its region is
 * still live. */
static void lane_release(void *p)
{
	pk_a64 *owner = p;
	uint64_t me = tl.id;

	if (owner && me && tl.hdr && live_has(tl.hdr) && pk_load_relaxed(owner) == me) {
		pk_store_relaxed(owner - C_OWNER + C_CODE, 0);
		atomic_compare_exchange_strong(owner, &me, 0);
	}
	tl.hdr = NULL;
}

/* A fork's child is another writer: the one thread it has takes a lane of
 * its own at its next store (the parent's stays the parent's). */
static void after_fork_child(void)
{
	tl.hdr = NULL;
	tl.id = 0;
	tl.busy = 0;
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, lane_release) != 0)
		exit_key = (pthread_key_t)-1;
	else
		pthread_atfork(NULL, NULL, after_fork_child);
}

static PK_NOINLINE int claim(struct prb *rb)
{
	pthread_once(&exit_once, make_key);
	if (exit_key == (pthread_key_t)-1)
		return -EBUSY;

	uint64_t me = my_id();

	for (unsigned i = 0; i < PRB_LANES; i++) {
		pk_a64 *o = &ctl(rb, i)[C_OWNER];
		uint64_t cur = pk_load_relaxed(o);

		if (cur != 0)
			continue;
		if (!atomic_compare_exchange_strong(o, &cur, me))
			continue;
		/* The registry code after the claim: a loser of the race never
		 * writes it, so it is the owner's or 0. */
		if (rb->owner)
			pk_store_release(&ctl(rb, i)[C_CODE], (uint64_t)rb->owner | (me & 0xffffffffu) << 32);
		if (!pk_load_relaxed(&rb->lanes[P_USED]))
			pk_store_relaxed(&rb->lanes[P_USED], 1);
		live_add(rb->hdr);
		tl.hdr = rb->hdr;
		tl.lanes = rb->lanes;
		tl.ctl = ctl(rb, i);
		tl.data = lane_data(rb, i);
		tl.size = rb->lane_bytes;
		tl.idx = i;
		tl.id = me;
		pthread_setspecific(exit_key, (void *)o);
		return 0;
	}
	return -EBUSY;
}

PK_HOT int prb_lane_store(struct prb *rb, uint64_t ts, uint8_t level, const char *blob, size_t len,
			  bool may_claim)
{
	if (PK_UNLIKELY(!rb->lanes || !rb->writable || tl.busy || len > PRB_TEXT_MAX))
		return -EBUSY;
	tl.busy = 1;
	atomic_signal_fence(memory_order_seq_cst);

	int err = 0;
	pk_a64 *c;

	if (PK_UNLIKELY(tl.hdr != (const void *)rb->hdr) ||
	    PK_UNLIKELY(pk_load_relaxed(&(c = ctl(rb, tl.idx))[C_OWNER]) != tl.id)) {
		/* first use, another log, a fork's child, or a region formatted
		 * anew under us */
		if (!may_claim || claim(rb)) {
			err = -EBUSY;
			goto out;
		}
		c = ctl(rb, tl.idx);
	}

	uint64_t size = rb->lane_bytes, mask = size - 1;
	uint64_t w = pk_load_relaxed(&c[C_WIDX]);
	uint64_t r = pk_load_acquire(&c[C_RIDX]);
	uint64_t words = LREC_HDR + (len + 7) / 8;
	uint64_t at = w & mask, pad = 0;

	if (at + words * 8 > size)
		pad = size - at;
	if (PK_UNLIKELY(w - r > size) || w - r + pad + words * 8 > size) {
		err = -ENOSPC;
		goto out;
	}

	pk_a64 *d = lane_data(rb, tl.idx);

	if (pad) {
		pk_store_relaxed(&d[at / 8], LREC_PAD | LREC_MAGIC << 32);
		w += pad;
		at = 0;
	}
	pk_a64 *p = d + at / 8;

	pk_store_relaxed(&p[0], (uint64_t)len | (uint64_t)level << 16 |
					(uint64_t)(PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED) << 24 |
					LREC_MAGIC << 32);
	pk_store_relaxed(&p[1], ts);
	pk_store_relaxed(&p[2], tl.id);
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t v;

		memcpy(&v, blob + i * 8, 8);
		pk_store_relaxed(&p[LREC_HDR + i], v);
	}
	if (len & 7) {
		uint64_t v = 0;

		memcpy(&v, blob + (len & ~(size_t)7), len & 7);
		pk_store_relaxed(&p[LREC_HDR + len / 8], v);
	}
	pk_store_release(&c[C_WIDX], w + words * 8);
out:
	atomic_signal_fence(memory_order_seq_cst);
	tl.busy = 0;
	return err;
}

/* --------------------------------------------------------------- reader -- */

/* A lane record's header, validated: where its words are and what they say. */
struct lhead {
	uint64_t ts, caller;
	uint64_t at; /* word index of the record's first word in the lane */
	uint16_t len;
	uint8_t level, flags;
};

/* The record at @pos (below @end) of lane @i: its size in bytes (padding
 * before it included, so pos + size is the next one), 0 when it does not
 * validate (L4). */
static PK_ALWAYS_INLINE uint64_t lane_head(const pk_a64 *d, uint64_t size, uint64_t pos, uint64_t end,
					   struct lhead *out)
{
	uint64_t mask = size - 1, skipped = 0;

	for (int round = 0; round < 2; round++) {
		if (end - pos < LREC_HDR * 8 || end - pos > size)
			return 0;

		uint64_t at = pos & mask;
		uint64_t w0 = pk_load_relaxed(&d[at / 8]);

		if (w0 >> 32 != LREC_MAGIC)
			return 0;
		if ((w0 & 0xffff) == LREC_PAD) {
			if (round || at == 0)
				return 0;
			skipped = size - at;
			pos += skipped;
			continue;
		}

		uint64_t len = w0 & 0xffff, words = LREC_HDR + (len + 7) / 8;

		if (len > PRB_TEXT_MAX || at + words * 8 > size || words * 8 > end - pos)
			return 0;
		out->len = (uint16_t)len;
		out->level = (uint8_t)((w0 >> 16) & 7);
		out->flags = (uint8_t)((w0 >> 24) & (PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED));
		out->ts = pk_load_relaxed(&d[at / 8 + 1]);
		out->caller = pk_load_relaxed(&d[at / 8 + 2]);
		out->at = at / 8;
		return skipped + words * 8;
	}
	return 0;
}

static uint64_t parse_head(const struct prb *rb, unsigned i, uint64_t pos, uint64_t end,
			   struct lhead *out)
{
	return lane_head(lane_data(rb, i), rb->lane_bytes, pos, end, out);
}

/* The lane record @h of lane words @d as the ring takes it (a batch's
 * entry; done_word, the lane's read index, is the caller's to set): the
 * read index is stored @next once it is in. */
static PK_ALWAYS_INLINE void batch_rec_of(struct prb_batch_rec *r, pk_a64 *d, struct lhead h,
					  uint64_t next)
{
	r->words = d + h.at + LREC_HDR;
	r->ts_nsec = h.ts;
	r->caller = h.caller;
	r->len = h.len;
	r->level = h.level;
	r->flags = h.flags;
	r->done_value = next;
}

/* A lane's record copied (read-only views). */
struct lrec {
	struct lhead h;
	char blob[PRB_TEXT_MAX + 8];
};

static uint64_t parse(const struct prb *rb, unsigned i, uint64_t pos, uint64_t end, struct lrec *out,
		      bool copy)
{
	uint64_t n = parse_head(rb, i, pos, end, &out->h);

	if (n && copy) {
		const pk_a64 *d = lane_data(rb, i) + out->h.at + LREC_HDR;

		for (uint64_t k = 0; k < ((uint64_t)out->h.len + 7) / 8; k++) {
			uint64_t v = pk_load_relaxed(&d[k]);

			memcpy(out->blob + k * 8, &v, 8);
		}
	}
	return n;
}

/* One lane's cursor during a merge or a view. */
struct cursor {
	pk_a64 *d; /* the lane's words */
	uint64_t pos, end;
	/* The record at pos, when have, as the ring stores it: its done_word
	 * the lane's read index, its done_value the position past it. */
	struct prb_batch_rec r;
	uint64_t owner; /* when the merge began */
	bool have, gone, bad;
};

/* Load lane @i's bounds; false when its indexes do not validate (L4). */
static bool load_bounds(const struct prb *rb, unsigned i, struct cursor *cu)
{
	pk_a64 *c = ctl(rb, i);

	cu->d = lane_data(rb, i);
	cu->r.done_word = &c[C_RIDX];
	cu->pos = pk_load_acquire(&c[C_RIDX]);
	cu->end = pk_load_acquire(&c[C_WIDX]);
	cu->have = false;
	cu->bad = false;
	return cu->end - cu->pos <= rb->lane_bytes;
}

/* Look at the record at cu->pos: sets have and r. A damaged one: false. */
static PK_ALWAYS_INLINE bool peek(const struct prb *rb, struct cursor *cu)
{
	cu->have = false;
	if (cu->pos == cu->end)
		return true;

	struct lhead h;
	uint64_t n = lane_head(cu->d, rb->lane_bytes, cu->pos, cu->end, &h);

	if (!n)
		return false;
	batch_rec_of(&cu->r, cu->d, h, cu->pos + n);
	cu->have = true;
	return true;
}

/* The lane with the oldest record among @cu (ties: the lower lane), or -1. */
static int oldest(const struct cursor *cu)
{
	int best = -1;

	for (unsigned i = 0; i < PRB_LANES; i++)
		if (cu[i].have && (best < 0 || cu[i].r.ts_nsec < cu[best].r.ts_nsec))
			best = (int)i;
	return best;
}

static void fill_record(struct prb_record *r, const struct lrec *l, uint64_t seq)
{
	memset(r, 0, offsetof(struct prb_record, text));
	r->seq = seq;
	r->ts_nsec = l->h.ts;
	r->caller.pid = (uint32_t)l->h.caller;
	r->caller.tid = (uint32_t)(l->h.caller >> 32);
	r->level = l->h.level;
	r->flags = l->h.flags;
	r->text_len = l->h.len;
	memcpy(r->text, l->blob, l->h.len);
	r->text[l->h.len] = '\0';
	r->dict[0] = '\0';
}

static bool lock_merge(struct prb *rb, uint64_t me)
{
	pk_a64 *lock = &rb->lanes[P_LOCK];
	uint64_t cur = pk_load_relaxed(lock);

	if (cur != 0 && !pid_gone(rb, (uint32_t)cur))
		return false;
	return atomic_compare_exchange_strong(lock, &cur, me);
}

static int merge(struct prb *rb, bool *busy);

int prb_lanes_merge(struct prb *rb)
{
	bool busy;

	return merge(rb, &busy);
}

/* How long a writer whose full lane cannot be merged (another merger at
 * work, or the ring refusing stores: a killed writer's slot is stolen only
 * after PRB_STALL_NS) waits before it gives the line up, counted. */
#define ROOM_WAIT_NS (1000 * 1000 * 1000ull)

/* Whether this thread's lane holds more than @most bytes of records
 * (false when it has none on @rb). */
static bool own_lane_above(struct prb *rb, uint64_t most)
{
	if (tl.hdr != (const void *)rb->hdr)
		return false;

	pk_a64 *c = ctl(rb, tl.idx);

	return pk_load_relaxed(&c[C_OWNER]) == tl.id &&
	       pk_load_relaxed(&c[C_WIDX]) - pk_load_acquire(&c[C_RIDX]) > most;
}

static bool own_lane_empty(struct prb *rb)
{
	return !own_lane_above(rb, 0);
}

/* A wait for another merger to let the merge lock go. */
struct merge_wait {
	unsigned round;
	uint64_t start;
	long pause_ns;
};

/* Rounds of a wait that spin before the first yield: a merge of a lane's
 * worth takes some microseconds, on another CPU (a sleep's least is tens). */
#define WAIT_SPIN_ROUNDS 32
#define WAIT_SPIN_STEPS	 32

/* One more round of @w (spin, yield, then sleep in growing slices): false once
 * ROOM_WAIT_NS have passed, or at once when an earlier wait gave up on
 * the same merger and it made no progress since (it is stopped: a
 * debugger, SIGSTOP), so that only the first store pays the wait. */
static bool merge_wait(struct prb *rb, struct merge_wait *w)
{
	uint64_t lock = pk_load_relaxed(&rb->lanes[P_LOCK]), merged = pk_load_relaxed(&rb->lanes[P_MERGED]);
	uint64_t now = pk_clock_ns();

	if (!w->round++) {
		w->start = now;
		if (lock && lock == pk_load_relaxed(&rb->lane_stall_lock) &&
		    merged == pk_load_relaxed(&rb->lane_stall_merged))
			return false;
	} else if (now - w->start > ROOM_WAIT_NS) {
		if (lock) {
			pk_store_relaxed(&rb->lane_stall_merged, merged);
			pk_store_relaxed(&rb->lane_stall_lock, lock);
		}
		return false;
	}
	if (!lock)
		return true; /* let go meanwhile: merge again at once */
	if (w->round <= WAIT_SPIN_ROUNDS) {
		for (int i = 0; i < WAIT_SPIN_STEPS; i++)
			pk_cpu_relax();
	} else if (w->pause_ns) {
		struct timespec ts = { 0, w->pause_ns };

		nanosleep(&ts, NULL);
		w->pause_ns = w->pause_ns < 500000 ? w->pause_ns * 2 : 1000000;
	} else {
		sched_yield();
		if (w->round > WAIT_SPIN_ROUNDS + 8)
			w->pause_ns = 20000;
	}
	return true;
}

int prb_lane_make_room(struct prb *rb)
{
	uint64_t me = my_id();
	struct merge_wait w = { 0 };

	for (;;) {
		bool busy;
		int n = merge(rb, &busy);

		/* Another merger at work drains this lane too: half of it
		 * free is room enough to go on. */
		if (n > 0 || !own_lane_above(rb, busy ? rb->lane_bytes / 2 : 0))
			return 0;
		if (busy && pk_load_relaxed(&rb->lanes[P_LOCK]) == me)
			return -EBUSY; /* a handler that interrupted its own merge */
		if (!merge_wait(rb, &w))
			return -ETIMEDOUT;
	}
}

int prb_lanes_merge_before_store(struct prb *rb)
{
	uint64_t me = my_id();
	struct merge_wait w = { 0 };

	for (;;) {
		bool busy;
		int n = merge(rb, &busy);

		/* Not busy: every lane record older than now is in the ring.
		 * Ours: a handler that interrupted its own merge stores now. */
		if (!busy || pk_load_relaxed(&rb->lanes[P_LOCK]) == me)
			return n;
		if (!merge_wait(rb, &w))
			return -ETIMEDOUT;
		if (w.round == 1)
			prb_testpoint(PRB_TP_STORE_WAITS_MERGE);
	}
}

bool prb_lane_own_empty(struct prb *rb)
{
	return own_lane_empty(rb);
}

void prb_lane_fell_back(struct prb *rb)
{
	if (!rb->lanes || tl.hdr != (const void *)rb->hdr)
		return;

	pk_a64 *c = ctl(rb, tl.idx);

	if (pk_load_relaxed(&c[C_OWNER]) == tl.id)
		pk_store_relaxed(&c[C_FULL], pk_load_relaxed(&c[C_FULL]) + 1);
}

/*
 * L2, the batch journal (J1-J3 in the header comment), read back: which
 * lane record each entry names and where it stands. Lanes are only moved
 * past a batch's records after the ring took them, so an entry's record is
 * at its lane's front or, stored already and passed, behind its read index.
 */
struct jscan {
	uint64_t id0;
	unsigned count, done;
	uint8_t lane[PRB_BATCH_MAX];
	uint64_t pos[PRB_BATCH_MAX]; /* J_PASSED: the lane moved past it */
	uint64_t n[PRB_BATCH_MAX];
	uint64_t ridx[PRB_LANES], widx[PRB_LANES];
};

#define J_PASSED UINT64_MAX

/* 0: @js describes the journal; -1: there is none (or nothing of it was
 * reserved); -2: it does not validate (L4). */
static int journal_scan(struct prb *rb, struct jscan *js)
{
	uint64_t count = pk_load_acquire(&rb->lanes[P_JCOUNT]);

	if (!count)
		return -1;
	if (count > PRB_BATCH_MAX)
		return -2;

	uint64_t id0;

	if (!prb_batch_first(rb, &rb->lanes[P_JID], (unsigned)count, &id0))
		return -1; /* killed before its reservation: nothing claimed */

	uint64_t done = pk_load_acquire(&rb->lanes[P_JDONE]) & 0xff;
	const pk_a64 *j = &rb->lanes[J_OFF];
	uint64_t front[PRB_LANES];
	struct lhead h;

	if (done > count)
		return -2;
	js->id0 = id0;
	js->count = (unsigned)count;
	js->done = (unsigned)done;
	for (unsigned i = 0; i < PRB_LANES; i++) {
		js->ridx[i] = front[i] = pk_load_acquire(&ctl(rb, i)[C_RIDX]);
		js->widx[i] = pk_load_acquire(&ctl(rb, i)[C_WIDX]);
	}
	for (unsigned k = 0; k < count; k++) {
		uint64_t e = pk_load_relaxed(&j[k]);
		unsigned i = (unsigned)(e >> 56);

		if (i >= PRB_LANES)
			return -2;

		uint64_t p = e & J_POS_MASK, at = front[i] & J_POS_MASK;

		js->lane[k] = (uint8_t)i;
		if (p != at) {
			/* Stored, and the lane moved past it before the kill. */
			if (k >= done || ((at - p) & J_POS_MASK) > rb->lane_bytes)
				return -2;
			js->pos[k] = J_PASSED;
			continue;
		}
		js->n[k] = parse_head(rb, i, front[i], js->widx[i], &h);
		if (!js->n[k])
			return -2;
		/* Below the count: in the ring, unless the ring moved on; a slot
		 * holding another record means the journal lies (L4). */
		if (k < done && !prb_batch_check(rb, js->id0 + k, h.ts, h.caller))
			return -2;
		js->pos[k] = front[i];
		front[i] += js->n[k];
	}
	return 0;
}

/* Records [0, @upto) of the journal in the ring (or to be put there): the
 * lanes' read indexes past them, in @ends; returns how many were not
 * passed yet. */
static unsigned journal_ends(const struct jscan *js, unsigned upto, uint64_t ends[PRB_LANES])
{
	unsigned moved = 0;

	for (unsigned i = 0; i < PRB_LANES; i++)
		ends[i] = js->ridx[i];
	for (unsigned k = 0; k < upto; k++) {
		if (js->pos[k] == J_PASSED)
			continue;
		ends[js->lane[k]] = js->pos[k] + js->n[k];
		moved++;
	}
	return moved;
}

/* How many of the journal's records a read-only reader sees at their
 * reserved seqs: those stored, and those a resumed batch will put there
 * (their slots still open, B7 in ringbuffer.c). */
static unsigned journal_placed(struct prb *rb, const struct jscan *js)
{
	unsigned k = js->done;

	for (; k < js->count; k++) {
		uint64_t id = js->id0 + k;
		struct lhead h;

		if (js->pos[k] == J_PASSED)
			return k; /* cannot happen after done (journal_scan) */
		if (!parse_head(rb, js->lane[k], js->pos[k], js->widx[js->lane[k]], &h))
			return k;
		if (!(k == js->done && prb_batch_stored(rb, id, h.ts, h.caller)) && !prb_batch_open(rb, id))
			return k;
	}
	return k;
}

/* A merger that died left its journal: finish its batch (B7), move the
 * lanes past what is stored, then forget the journal (J3). Under the merge
 * lock. */
static PK_NOINLINE void journal_recover(struct prb *rb)
{
	if (!pk_load_relaxed(&rb->lanes[P_JCOUNT]))
		return;

	struct jscan js;
	int e = journal_scan(rb, &js);

	if (e == -2)
		pk_fetch_add_relaxed(&rb->lanes[P_CORRUPT], 1);
	if (e == 0) {
		struct prb_batch_rec *b = rb->merge_scratch.recs;
		uint64_t ends[PRB_LANES];

		for (unsigned k = js.done; k < js.count; k++) {
			struct lhead h;

			parse_head(rb, js.lane[k], js.pos[k], js.widx[js.lane[k]], &h);
			batch_rec_of(&b[k], lane_data(rb, js.lane[k]), h, js.pos[k] + js.n[k]);
			b[k].done_word = &ctl(rb, js.lane[k])[C_RIDX];
		}

		int got = prb_batch_resume(rb, b, js.count, &rb->lanes[P_JID]);

		if (got < (int)js.done)
			got = (int)js.done;

		journal_ends(&js, (unsigned)got, ends);
		for (unsigned i = 0; i < PRB_LANES; i++)
			if (ends[i] != js.ridx[i])
				pk_store_release(&ctl(rb, i)[C_RIDX], ends[i]);
		/* The dead merger counts a batch once its journal is cleared. */
		if (got)
			pk_fetch_add_relaxed(&rb->lanes[P_MERGED], (uint64_t)got);
	}
	pk_store_release(&rb->lanes[P_JCOUNT], 0);
}

void prb_lanes_finish(struct prb *rb)
{
	if (!rb->lanes || !rb->writable || !pk_load_relaxed(&rb->lanes[P_JCOUNT]) ||
	    !lock_merge(rb, my_id()))
		return;
	journal_recover(rb);
	pk_store_release(&rb->lanes[P_LOCK], 0);
}

/* Drop entry @k of the @na lanes in @act. */
static void act_drop(uint8_t *act, unsigned *na, unsigned k)
{
	for (unsigned m = k + 1; m < *na; m++)
		act[m - 1] = act[m];
	(*na)--;
}

static int merge(struct prb *rb, bool *busy)
{
	*busy = false;
	if (!rb->lanes || !rb->writable || !pk_load_relaxed(&rb->lanes[P_USED]))
		return 0;

	uint64_t me = my_id();

	if (!lock_merge(rb, me)) {
		*busy = true;
		return 0;
	}

	journal_recover(rb);

	/* L3: the horizon is read before any lane is looked at. */
	uint64_t horizon = pk_clock_ns();
	struct cursor cu[PRB_LANES];
	uint8_t act[PRB_LANES]; /* lanes with a record to merge, in lane order */
	unsigned na = 0;
	int merged = 0;

	for (unsigned i = 0; i < PRB_LANES; i++) {
		uint64_t owner = pk_load_relaxed(&ctl(rb, i)[C_OWNER]);

		cu[i].owner = owner;
		cu[i].gone = owner == 0 || lane_owner_gone(rb, i, owner);
		if (!load_bounds(rb, i, &cu[i]) || !peek(rb, &cu[i])) {
			pk_store_release(&ctl(rb, i)[C_RIDX], cu[i].end);
			pk_fetch_add_relaxed(&rb->lanes[P_CORRUPT], 1);
			cu[i].pos = cu[i].end;
			cu[i].have = false;
		}
		if (cu[i].have)
			act[na++] = (uint8_t)i;
	}

	/* B1: a batch is at most a quarter of the ring. */
	unsigned max = PRB_BATCH_MAX;
	uint64_t max_units = rb->data_units / 4;

	if (max > rb->desc_count / 4)
		max = (unsigned)(rb->desc_count / 4);

	/* The batch in the handle (L2: ours while we hold the lock). */
	struct prb_batch_rec *const b = rb->merge_scratch.recs;
	uint8_t *const lane_of = rb->merge_scratch.lane_of;
	uint64_t from[PRB_LANES];
	pk_a64 *journal = &rb->lanes[J_OFF];

	/* Bounded: every batch takes at least one record or ends the merge. */
	while (na) {
		unsigned nb = 0;
		uint64_t units = 0;
		uint32_t touched = 0;

		for (unsigned m = 0; m < na; m++)
			from[act[m]] = cu[act[m]].pos;
		bool full = false;

		while (!full && nb < max && na) {
			unsigned k = 0;
			uint64_t second = UINT64_MAX; /* the other lanes' oldest */

			for (unsigned m = 1; m < na; m++) {
				uint64_t t = cu[act[m]].r.ts_nsec;

				if (t < cu[act[k]].r.ts_nsec) {
					second = cu[act[k]].r.ts_nsec;
					k = m;
				} else if (t < second) {
					second = t;
				}
			}

			unsigned i = act[k];
			struct cursor *c = &cu[i];

			if (c->r.ts_nsec > horizon && !c->gone) {
				/* not merged now; the other lanes may still be older */
				act_drop(act, &na, k);
				continue;
			}

			/* A run of this lane's records, each older than every other
			 * lane's next one (a tie goes back to the pick above) and
			 * not after the horizon. */
			uint64_t upto = c->gone || horizon >= second ? second : horizon + 1;
			const uint64_t jlane = (uint64_t)i << 56;

			do {
				uint64_t u = ((uint64_t)c->r.len + 15) / 16;

				if (nb && units + u > max_units) {
					full = true;
					break;
				}
				b[nb] = c->r;
				pk_store_relaxed(&journal[nb], (c->pos & J_POS_MASK) | jlane);
				lane_of[nb++] = (uint8_t)i;
				c->pos = c->r.done_value;
				units += u;
				if (!peek(rb, c)) {
					c->bad = true; /* skipped once what is before it is stored */
					c->have = false;
				}
			} while (c->have && nb < max && c->r.ts_nsec < upto);
			touched |= 1u << i;
			if (!c->have)
				act_drop(act, &na, k);
		}
		if (!nb)
			break;

		/* J1: the batch named before anything is reserved. */
		pk_store_relaxed(&rb->lanes[P_JID], 0);
		pk_store_relaxed(&rb->lanes[P_JDONE], 0);
		pk_store_release(&rb->lanes[P_JCOUNT], nb);
		prb_testpoint(PRB_TP_MERGE_JOURNAL);

		int got = prb_store_batch(rb, b, nb, &rb->lanes[P_JID]);
		bool all = got == (int)nb;

		if (got < 0)
			got = 0;
		if (!all) {
			/* The ring refused (L2: the rest waits), or took a
			 * record from us: each lane stops before its first
			 * record not stored. */
			for (unsigned i = 0; i < PRB_LANES; i++)
				if (touched & 1u << i)
					cu[i].pos = from[i];
			for (unsigned k = 0; k < (unsigned)got; k++)
				cu[lane_of[k]].pos = b[k].done_value;
			na = 0;
		}
		for (unsigned i = 0; i < PRB_LANES; i++) {
			if (!(touched & 1u << i))
				continue;
			if (cu[i].bad && all) {
				cu[i].pos = cu[i].end;
				pk_fetch_add_relaxed(&rb->lanes[P_CORRUPT], 1);
			}
			if (cu[i].pos != from[i]) {
				pk_store_release(&ctl(rb, i)[C_RIDX], cu[i].pos);
				prb_testpoint(PRB_TP_MERGE_ADVANCED);
			}
		}
		pk_store_release(&rb->lanes[P_JCOUNT], 0); /* J3 */
		if (got) {
			merged += got;
			pk_fetch_add_relaxed(&rb->lanes[P_MERGED], (uint64_t)got);
		}
	}

	/* Lanes of owners that are gone, merged to their end: free again. Only
	 * the owner seen gone: a lane free then may have been claimed since. */
	for (unsigned i = 0; i < PRB_LANES; i++) {
		pk_a64 *o = &ctl(rb, i)[C_OWNER];
		uint64_t owner = cu[i].owner;

		if (owner && cu[i].gone && pk_load_relaxed(o) == owner &&
		    pk_load_acquire(&ctl(rb, i)[C_RIDX]) == pk_load_acquire(&ctl(rb, i)[C_WIDX])) {
			pk_store_relaxed(&ctl(rb, i)[C_CODE], 0);
			atomic_compare_exchange_strong(o, &owner, 0);
		}
	}
	pk_store_release(&rb->lanes[P_LOCK], 0);
	return merged;
}

/*
 * A read-only handle's view: the records not merged yet, in the order a
 * merge of everything would take them. A reader reading them one after
 * another continues where it stopped: the handle keeps its view (allocated
 * on first use, normal context only: read-only handles are readers'), and
 * a thread that finds it in use by another walks on a view of its own.
 */
struct lview {
	const void *hdr;
	uint64_t k;
	uint64_t ridx[PRB_LANES];
	struct cursor cu[PRB_LANES];
};

static void view_start(struct prb *rb, struct lview *v)
{
	uint64_t ends[PRB_LANES];
	struct jscan js;

	/* Records of a batch a merger stored, or will store at their reserved
	 * seqs (it is at work, or died and its batch will be finished), are
	 * the ring's (L2). */
	bool journal = !journal_scan(rb, &js);

	if (journal)
		journal_ends(&js, journal_placed(rb, &js), ends);
	v->hdr = rb->hdr;
	v->k = 0;
	for (unsigned i = 0; i < PRB_LANES; i++) {
		bool ok = load_bounds(rb, i, &v->cu[i]);

		v->ridx[i] = v->cu[i].pos;
		if (ok && journal && ends[i] - v->cu[i].pos <= v->cu[i].end - v->cu[i].pos)
			v->cu[i].pos = ends[i];
		if (!ok || !peek(rb, &v->cu[i])) {
			v->cu[i].pos = v->cu[i].end;
			v->cu[i].have = false;
		}
	}
}

/* A read-only reader's record @seq when it is one of a journal's batch
 * that the ring does not hold yet but will (journal_placed()): 0, or
 * -ENOENT. */
static int journal_read(struct prb *rb, uint64_t seq, struct prb_record *r)
{
	struct jscan js;

	if (journal_scan(rb, &js))
		return -ENOENT;

	uint64_t k = prb_id_distance(rb, js.id0, prb_seq_id(rb, seq));
	struct lrec rec;

	if (k >= js.count || k >= journal_placed(rb, &js) || js.pos[k] == J_PASSED)
		return -ENOENT;
	if (!parse(rb, js.lane[k], js.pos[k], js.widx[js.lane[k]], &rec, true))
		return -ENOENT;
	fill_record(r, &rec, seq);
	return 0;
}

static bool view_fresh(struct prb *rb, const struct lview *v)
{
	if (v->hdr != (const void *)rb->hdr)
		return false;
	for (unsigned i = 0; i < PRB_LANES; i++)
		if (pk_load_acquire(&ctl(rb, i)[C_RIDX]) != v->ridx[i])
			return false;
	return true;
}

/* A writer stored in a lane since the view began: its ends are the write
 * indexes of then, so a follower at its end must begin it again. */
static bool view_grown(struct prb *rb, const struct lview *v)
{
	for (unsigned i = 0; i < PRB_LANES; i++)
		if (pk_load_acquire(&ctl(rb, i)[C_WIDX]) != v->cu[i].end)
			return true;
	return false;
}

/* Step the view past its oldest record, copying it to @rec. */
static bool view_step(struct prb *rb, struct lview *v, struct lrec *rec)
{
	int i = oldest(v->cu);

	if (i < 0)
		return false;

	uint64_t n = parse(rb, (unsigned)i, v->cu[i].pos, v->cu[i].end, rec, true);

	if (!n)
		return false;
	v->cu[i].pos += n;

	if (!peek(rb, &v->cu[i])) {
		v->cu[i].pos = v->cu[i].end;
		v->cu[i].have = false;
	}
	v->k++;
	return true;
}

/* The handle's view, or NULL (in use by another thread, or no memory):
 * the caller then walks one on its stack. */
static struct lview *view_get(struct prb *rb)
{
	if (atomic_exchange(&rb->lane_view_busy, 1))
		return NULL;

	struct lview *v = atomic_load(&rb->lane_view);

	if (!v) {
		v = calloc(1, sizeof(*v));
		if (!v) {
			atomic_store(&rb->lane_view_busy, 0);
			return NULL;
		}
		atomic_store(&rb->lane_view, v);
	}
	return v;
}

static void view_put(struct prb *rb, struct lview *v)
{
	if (v == atomic_load(&rb->lane_view))
		atomic_store(&rb->lane_view_busy, 0);
}

uint64_t prb_lanes_view_count(struct prb *rb)
{
	if (!rb->lanes)
		return 0;

	struct lview own, *v = view_get(rb);
	struct lrec rec;
	uint64_t n = 0;
	uint64_t bound = PRB_LANES * (rb->lane_bytes / (LREC_HDR * 8) + 1);

	if (!v)
		v = &own;
	view_start(rb, v);
	while (n < bound && view_step(rb, v, &rec))
		n++;
	v->hdr = NULL;
	view_put(rb, v);
	return n;
}

int prb_lanes_view_read(struct prb *rb, uint64_t k, uint64_t seq_base, struct prb_record *r)
{
	if (!rb->lanes)
		return -EAGAIN;

	uint64_t bound = PRB_LANES * (rb->lane_bytes / (LREC_HDR * 8) + 1);

	if (k >= bound)
		return -EAGAIN;

	struct lview own, *v = view_get(rb);
	struct lrec rec;
	int err = -EAGAIN;

	if (!v) {
		v = &own;
		v->hdr = NULL;
	}
	for (int again = 0; err && again < 2; again++) {
		if (again && !view_grown(rb, v))
			break;
		if (again || !view_fresh(rb, v) || v->k > k)
			view_start(rb, v);
		while (v->k < k && view_step(rb, v, &rec))
			;
		if (v->k == k && view_step(rb, v, &rec)) {
			fill_record(r, &rec, seq_base + k);
			err = 0;
		}
	}
	view_put(rb, v);
	return err;
}

void prb_lanes_stats(struct prb *rb, struct prb_lanes_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!rb->lanes)
		return;
	st->merged = pk_load_relaxed(&rb->lanes[P_MERGED]);
	st->corrupt = pk_load_relaxed(&rb->lanes[P_CORRUPT]);
	for (unsigned i = 0; i < PRB_LANES; i++) {
		pk_a64 *c = ctl(rb, i);
		struct cursor cu;
		struct lrec rec;

		st->in_use += pk_load_relaxed(&c[C_OWNER]) != 0;
		st->full += pk_load_relaxed(&c[C_FULL]);
		if (!load_bounds(rb, i, &cu))
			continue;
		for (unsigned n = 0; n < rb->lane_bytes / (LREC_HDR * 8) + 1 && cu.pos != cu.end; n++) {
			uint64_t sz = parse(rb, i, cu.pos, cu.end, &rec, false);

			if (!sz)
				break;
			cu.pos += sz;
			st->pending++;
		}
	}
}

/*
 * The lanes' records enter the sequence here, where a reader reaches the
 * end of the ring: a writable handle merges them into the ring (never
 * waiting: another merger at work leaves them to it), a read-only one sees
 * them after the ring's records, numbered on, as a merge would number them.
 */
uint64_t prb_next_seq(struct prb *rb)
{
	if (PK_UNLIKELY(rb->lanes != NULL)) {
		if (rb->writable) {
			prb_lanes_merge(rb);
		} else {
			/* Numbered after every record reserved in the ring, as a
			 * merge would store them; a batch a merger has not
			 * finished (L2) is read where it was reserved. */
			uint64_t n = prb_lanes_view_count(rb);

			if (n || pk_load_relaxed(&rb->lanes[P_JCOUNT]))
				return prb_next_reserve_seq(rb) + n;
		}
	}
	return prb_ring_next_seq(rb);
}

int prb_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags)
{
	if (rb && rb->lanes && PK_UNLIKELY(pk_load_relaxed(&rb->lanes[P_JCOUNT]) != 0)) {
		/* A batch being stored, or left by a merger that died: finish
		 * it before this reader makes holes of its slots, or read it
		 * where it will be (read-only). */
		if (rb->writable) {
			prb_lanes_merge(rb);
		} else {
			int err = prb_ring_read(rb, seq, r, flags);

			if ((!err && r->seq == seq) || !journal_read(rb, seq, r))
				return 0;
		}
	}

	int err = prb_ring_read(rb, seq, r, flags);

	if (PK_LIKELY(err != -EAGAIN) || !rb || !rb->lanes)
		return err;
	if (rb->writable) {
		if (prb_lanes_merge(rb) > 0)
			err = prb_ring_read(rb, seq, r, flags);
		return err;
	}

	uint64_t next = prb_next_reserve_seq(rb);

	/* A record nobody will finish, the ring's newest: a reader that skips
	 * those goes on with the lanes' records. */
	if (seq < next && !(flags & PRB_READ_SKIP_UNFINISHED))
		return err;
	if (seq < next)
		seq = next;
	return prb_lanes_view_read(rb, seq - next, next, r) ? err : 0;
}
