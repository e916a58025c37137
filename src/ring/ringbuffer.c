// SPDX-License-Identifier: MIT
/*
 * ringbuffer.c - the lock-free record ring.
 *
 * DESIGN
 * ======
 *
 * Terms
 * -----
 * record      one message: metadata (seq, timestamp, level, facility, flags,
 *             caller) in a descriptor, text and dictionary in a data block.
 * descriptor  one 64-byte line of eight 64-bit words; N = 2^desc_bits of them.
 * data area   2^data_bits bytes, handed out in 16-byte units.
 * id          a record's number modulo 2^ID_BITS; it lives in slot id & (N-1).
 * position    a data offset in units modulo 2^POS_BITS; the byte address is
 *             (position & (units-1)) * 16. Ids and positions only grow, so a
 *             stale value is recognised instead of being mistaken (ABA).
 * seq         the full 64-bit sequence number, stored in the descriptor.
 *             id = (seq + id_base) mod 2^ID_BITS; a seq value therefore says
 *             which id it belongs to, which is how a half-updated slot is read.
 *
 * Two words allocate and retire everything, each one atomic 64-bit value:
 *
 *   head = [open:1][id][pos]  the newest reserved record and the end of its block;
 *                             open: it was reserved as a line that may continue.
 *   tail = [id][pos]          the oldest record in the ring and where its extent starts.
 *
 * A record's id and its data come from ONE compare-and-swap on head, so data
 * blocks lie in id order and a record's extent is [end of the previous
 * record, its own end): no block headers, and no window in which a writer that
 * dies leaves unparseable bytes behind (the kernel's two allocations have
 * one: see docs/design.md, "The kernel's ring, and why one head word"). A
 * block that would cross the end of the array starts at the beginning of
 * the next lap; the skipped bytes belong to its extent.
 *
 * Descriptor states (top two bits of the state word, next to the id, a 12-bit
 * reopen count, the 16-bit id of the writer (process) that claimed it and
 * the merged bit, C1)
 * --------------------------------------------------------------------------
 *   RESERVED   a writer owns the slot and is filling it.
 *   COMMITTED  complete and consistent; while it is the newest record, its
 *              writer (same pid, tid and signal depth) may reopen it to append.
 *   FINAL      immutable; visible to readers.
 *   HOLE       the record exists but its data does not (reserved by a writer
 *              that died, or allocated and never claimed); readers count it
 *              as lost.
 *
 * Transitions and who makes them:
 *   FINAL|HOLE(id-N) -> RESERVED(id)   the writer that won id in the head CAS (claim)
 *   RESERVED -> COMMITTED | FINAL      that writer (commit)
 *   COMMITTED -> RESERVED              that writer again, while head.id == id (reopen)
 *   COMMITTED -> FINAL                 anyone, once the record is not the newest:
 *                                      the next reserver, the committer itself when
 *                                      it sees head moved, a tail pusher, a reader
 *                                      with a writable handle. Readers hand out only
 *                                      FINAL records (or ask for unfinalized ones):
 *                                      the writer may have checked head just before a
 *                                      newer record came and still reopen it, and
 *                                      only this CAS decides between the two.
 *   RESERVED -> HOLE                   anyone, once the owner oracle says the
 *                                      claiming writer died (shared logs), or
 *                                      another process's writer stalled in it
 *                                      for PRB_TAKEOVER_NS (D9)
 *   FINAL|HOLE(id-N) -> HOLE(id)       a tail pusher, when id was allocated but
 *                                      not claimed for PRB_STALL_NS (stolen)
 *   damaged -> HOLE(id) | RESERVED(id) the tail pusher or the claimer (D2)
 *
 * Invariants
 * ----------
 * I1  tail.id <= every id a reader accepts; slot(id) and the data of id are
 *     rewritten only by a writer that saw tail.id > id (and tail.pos past the
 *     extent) before its head CAS. Hence: a reader that copied a record and
 *     afterwards still sees tail.id <= id has an untorn copy.
 * I2  head and tail never move backwards; tail.id <= head.id + 1 and
 *     head.id + 1 - tail.id <= N; head.pos - tail.pos <= data units.
 * I3  The tail only passes a FINAL or HOLE record. A RESERVED record at the
 *     tail blocks further reservations (they fail and are counted; a writer
 *     never waits for another), exactly like the kernel's ring.
 * I4  Only the newest record can be extended, and only with head.open set:
 *     growing it is a CAS of head from (open, id, pos) to (open, id, pos'),
 *     which fails as soon as anybody reserved a newer record.
 * I5  Every COMMITTED record that is not the newest becomes FINAL: the
 *     reserver of a record after an open one finalizes it, and a committer
 *     that sees head moved finalizes itself (store-buffering pair P4).
 * I6  Readers never write the ring (except helping finalize and making holes
 *     of dead writers' records, on a writable handle).
 * I7  A writer stores its extent and then D_ALLOC's tag, id + 1 (release), before it
 *     claims the slot, so a record can be retired whatever instruction its
 *     writer died at: by its own tagged extent, or, if it never got that far,
 *     by head.pos (newest) or its successor's begin.
 * I8  A live writer's record is never taken from it once claimed (except by
 *     D9, from a writer stalled in it for a second); an
 *     unclaimed allocation is stolen on a timeout, and then the late claim
 *     CAS fails (the slot no longer holds id - N) and the writer drops its
 *     message, counted in reserve_failed (also when the ring came round and
 *     the slot holds a later lap's id: D2).
 *
 * Memory ordering pairs (both ends named)
 * ---------------------------------------
 * P1  tail CAS (release, push_tail)  ->  tail load (acquire, reserve/extend),
 *     or another pusher's failed tail CAS (acquire on failure), which make_room()
 *     uses as its next look at the tail: the retired record was FINAL before
 *     the tail passed it. A pusher whose CAS succeeded read that record's
 *     state itself (acquire, P2).
 * P2  commit CAS (seq_cst, commit)  ->  state load (acquire, prb_read, push_tail):
 *     a reader that sees COMMITTED/FINAL sees the whole record.
 * P3  writer: tail load (acquire; or the tail its own push wrote, or its failed
 *     push read) ... fence(release) ... relaxed stores into a recycled slot or
 *     data block  <->  reader: relaxed copy ... fence(acquire) ... tail load: a
 *     reader that copied any byte of the new occupant also sees the tail that
 *     excused the overwrite (the access that gave the writer that tail is
 *     sequenced before its fence), and discards its copy (I1).
 * P4  store-buffering: committer CAS state (sc) then loads head (sc); reserver
 *     CASes head (sc) then loads state (sc, finalize). At least one sees the
 *     other, so an open record cannot stay COMMITTED behind a newer one (I5).
 * P5  store-buffering: writer CASes state (sc) then loads waiters (sc);
 *     prb_wait() increments waiters (sc), fence(sc), then checks for records.
 *     A sleeper is always woken or sees the record.
 * P6  reopen CAS (acq_rel) -> the previous commit: the extender sees its own
 *     record's content (trivially: same thread) and the reader's second state
 *     load sees the changed reopen count, so a copy that raced an extension is
 *     discarded (the reopen count makes COMMITTED->RESERVED->COMMITTED visible).
 *
 * Damage
 * ------
 * A shared file can be damaged behind the ring's back (a stray write, a bad
 * disk block, another program). Nothing the file holds may make a writer or
 * reader loop without bound, go back to records it passed, or hand out bytes
 * that do not validate; damage confined to one descriptor costs that record.
 * D1  Every loop steered by the file is bounded: a writer gives up after
 *     PRB_STORE_RETRIES rounds (-ENOBUFS, counted), a reader's search for one
 *     record after PRB_READ_RETRIES rounds without moving forward (-EAGAIN).
 * D2  Between tail and head a slot holds its id or, not claimed yet, the one
 *     a lap back (I1, I8). A slot holding anything else while the tail has
 *     not passed it is damaged: readers skip it and the tail pusher makes it
 *     a HOLE, both counted in corrupt. A claim that finds its slot damaged
 *     takes it as it is (the tail passed id - N, so the slot is the
 *     claimer's); one that finds its own id as a HOLE was stolen from, and
 *     so was one that finds a later lap's id once the tail passed its id
 *     (with the tail still within a ring of its id, no later lap can have
 *     claimed the slot: its id field is damaged, and the claim takes it).
 * D3  A retired record's extent is believed only if it lies between tail.pos
 *     and head.pos and, for a FINAL record, holds exactly its lengths;
 *     otherwise the successor's begin or no bytes at all (extent_end()). The
 *     data tail therefore never passes bytes of records still in the ring.
 * D4  Head and tail are checked against each other (I2) by reading tail,
 *     head, tail: equal tails make a violation damage, not a race. The
 *     descriptors they name must give seqs exactly as far apart as their ids
 *     (ring_bounds()); prb_attach() also refuses a head with a claimed record
 *     after it (a head that went back would hand out ids, and seqs, of
 *     records still in the ring). A writer that finds the header
 *     contradicting itself marks its handle broken: prb_store() returns
 *     -EUCLEAN from then on (prb_broken()). A reader then trusts the head
 *     alone: it reads at most one ring below the head's record and never
 *     jumps back, so it cannot replay records.
 * D5  On a shared log a state word damaged to look unclaimed is stolen after
 *     PRB_STALL_NS like any unclaimed slot (I8), so it costs one stall.
 * D6  A writer whose slot does not hold the record one lap back checks,
 *     before it writes anything into it, that the tail is still within a
 *     ring of its id: otherwise its slot was stolen and the ids may have
 *     come round (a later record may hold its very id).
 *     Readers tell a slot that was overwritten under them from a damaged one
 *     by seqs (overtaken()), which never come round.
 * D7  A reader that looks at a record again sees, each round, the head, the
 *     tail and the slot's state and seq words (round_view). Everything that
 *     makes it look again (an overwrite, a finalize, a steal, a moved bound)
 *     changes one of them; two rounds that saw the same words met damage, not
 *     a race, and the record is skipped as corrupt. A damaged file therefore
 *     costs a reader two rounds per record, not PRB_READ_RETRIES.
 * D8  Every record has a 32-bit check value (D_ALLOC's high half) over its
 *     id, the descriptor words its writer stores after the claim (D_INFO,
 *     D_TS, D_CTX), its text and its dictionary, stored by the writer before
 *     its commit (and again by an extension) and verified by every reader
 *     after its copy. A block
 *     that belongs to another record or to none (a file whose pages were
 *     written back at different moments before a crash: a descriptor of one
 *     moment, data of another, or a page never written) fails it: readers
 *     skip the record as damaged (D2), never show its bytes.
 * D9  On a shared log, a record another process's writer has held RESERVED
 *     for PRB_TAKEOVER_NS (stopped by SIGSTOP, a debugger, a frozen cgroup)
 *     is taken from it like a dead writer's: the tail pusher, or a reader
 *     with a writable handle past it, makes it a HOLE (holes), and a
 *     read-only reader passes it. I3 therefore blocks writers for that long
 *     at most. The stalled writer may wake up and go on storing into the slot
 *     and into data that newer records own by then. Its commit CAS expects
 *     the exact word it claimed, so it fails (prb_store() returns -ENOBUFS);
 *     it checks its claim once more before its first store after the claim;
 *     and whatever it still wrote late makes the records it hit fail their
 *     check (D8): skipped and counted, never shown. Only other processes'
 *     records are taken: in one process a stalled thread is the program's
 *     own affair, as in the kernel.
 * D10 A record's seq takes its high bits from the seq its slot held
 *     (prb_store()), so a damaged seq word would give every later record
 *     of that slot a seq no reader looks for. A writer checks the seq its
 *     slot gives against the one the slot before gives; when they differ,
 *     two of the three slots up to id - 2 must agree (corrupt counts it),
 *     or the record becomes a hole and the handle is broken (D4).
 *     Undamaged, they always agree: every slot holds some occupant's true
 *     seq, laps back or a lap ahead, which fixes the seq of any id within
 *     half the id space (claimed_seq()).
 * Claimer
 * -------
 * C1  The oracle (rb->owner_alive) is asked about a RESERVED record's
 *     claimer: the writer code in its state word and the pid of the process
 *     that claimed it. A record stored by prb_store() is claimed by its
 *     caller, whose pid D_CALLER holds (stored before the claim, I7). A
 *     batch record (prb_store_batch()) is claimed by the merger while
 *     D_CALLER names the lane record's writer, often another process, dead
 *     or alive (the registry would take that pid for a later owner of the
 *     merger's slot, and the merger for dead): its claim sets ST_MERGED and
 *     D_CTX holds the merger's pid | tid << 32, stored before the claim like
 *     D_CALLER, so a live merger's record is never taken as a dead writer's,
 *     while readers still see the writer's pid and tid as its caller. A
 *     merged record has no caller context: readers get ctx 0 (claimer()
 *     and copy_record()).
 * Retire guard
 * ------------
 * G1  A FINAL record is retired only after the process's retire guard (if
 *     set) let it go. The guard runs in the writer that pushes the tail,
 *     before its head CAS, so it holds no record (prb_store) or only the
 *     newest one, reopened (prb_extend): a guard that waits for a reader to
 *     copy older records never waits for its own caller. HOLE records pass
 *     without asking (their text is lost anyway). The guard is this
 *     process's business: on a shared log, other processes' writers retire
 *     records without asking it.
 * What this does not cover: a state word damaged to RESERVED looks like a
 * live writer inside its record, and blocks the tail like one (I3); on a
 * private ring, so does one damaged to look unclaimed.
 *
 * Deferred records
 * ----------------
 * A record flagged PRB_FLAG_DEFERRED holds a format's reference and binary
 * arguments instead of text (deferred.c). The ring stores, checks (D8) and
 * copies it like any other, flag included: it stores and reads bytes and
 * never formats. The layer that reads records (record_read.c) expands it
 * after the copy passed its check, so no reader above that layer sees the
 * binary form. The format string table lies after the data area
 * (prb_strtab_size() bytes, in prb_region_size()); the ring only places it,
 * deferred.c owns its contents.
 *
 * Lanes
 * -----
 * A region of version 4 has a pool of per-thread lanes after the format
 * string table (prb_lanes_size() bytes; lanes.c owns it, docs/lanes.md). A
 * lane record enters this ring, and gets its seq, when a merger stores it
 * here in a batch (prb_store_batch(), B1-B8 below); until then only
 * lanes.c's view shows it. The ring places the pool, makes a region with
 * it only while lanes are on (the default) and the data area is at least
 * 32 KiB (new_abi()), and attaches version 3 regions without one. prb_next_seq()
 * and prb_read() are lanes.c's, around ring_next_seq() and ring_read().
 *
 * All shared words are accessed through atomics.h, so speculative copies are
 * relaxed atomic loads, not data races.
 *
 * Usage
 * -----
 * A writer (any context, a signal handler included) stores a whole line, or
 * opens one and lets the same caller extend it:
 *
 *   struct prb_meta m = { .ts_nsec = now, .caller = me, .level = 6 };
 *   uint64_t seq;
 *
 *   if (prb_store(rb, &m, "Testing foo: ", 13, NULL, 0, false, &seq))
 *           ...;                          (-ENOBUFS: counted, dropped)
 *   if (prb_extend(rb, &me, "ok", 2, PRB_TEXT_MAX, true, PRB_FLAG_NEWLINE, &seq)
 *       == -ENOENT)
 *           ...;                          (a newer record came: store the
 *                                          fragment with PRB_FLAG_CONT)
 *
 * A reader follows by sequence number; a returned seq past the one asked
 * for says how many records were lost:
 *
 *   static struct prb_record r;
 *   uint64_t seq = prb_first_seq(rb);
 *
 *   for (;;) {
 *           int err = prb_read(rb, seq, &r, 0);
 *
 *           if (err == -EAGAIN) {
 *                   prb_wait(rb, seq, -1);   (futex sleep; writers wake it)
 *                   continue;
 *           }
 *           if (err)
 *                   break;                   (-EUCLEAN: a corrupted shared file)
 *           if (r.seq != seq)
 *                   lost += r.seq - seq;
 *           use(&r);
 *           seq = r.seq + 1;
 *   }
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/hints.h"
#include "ring/caller.h"
#include "ring/ringbuffer.h"

#define PRB_MAGIC	0x31474f4c4b545250ull /* "PRTKLOG1" */
/* 2: D_ALLOC carries the check value (D8); 3: the format string table after
 * the data area and deferred records (deferred.c); 4: the pool of lanes
 * after the table (lanes.c). A version 3 region is still attached, without
 * lanes (its region ends after the table). */
#define PRB_ABI_VERSION 4u
#define PRB_ABI_NO_LANES 3u
#define PRB_ENDIAN_MARK 0x01020304u
#define PRB_UNIT_SHIFT	4
#define PRB_UNIT	(1u << PRB_UNIT_SHIFT)
#define PRB_HEADER_SIZE 4096u
#define PRB_USER_OFF	2048u
#define PRB_USER_SIZE	2048u
#define PRB_DESC_WORDS	8u
#define PRB_DESC_MIN_BITS 6
#define PRB_STALL_NS	  (100 * 1000 * 1000ull) /* unclaimed this long: stolen (shared logs) */
#define PRB_STALL_CLOCKS  4
/* Another process's writer inside its claimed record this long (stopped,
 * frozen, at a breakpoint): the record is taken from it (D9). */
#define PRB_TAKEOVER_NS	  (1000 * 1000 * 1000ull)
/* A writer's reservation loop retries only when another writer made progress;
 * this many rounds without success means the header words are damaged, or the
 * writer is starved: it gives up (counted) instead of spinning. */
#define PRB_STORE_RETRIES (1u << 16)
/* The same bound for a reader's search for one record. */
#define PRB_READ_RETRIES (1u << 16)

#ifdef PRINTK_RING_SMALL_IDS
#define ID_BITS	 14
#define POS_BITS 15
#else
#define ID_BITS	 31
#define POS_BITS 32
#endif
#define ID_MASK	  ((UINT64_C(1) << ID_BITS) - 1)
#define POS_MASK  ((UINT64_C(1) << POS_BITS) - 1)
#define ID_HALF	  (UINT64_C(1) << (ID_BITS - 1))
#define POS_HALF  (UINT64_C(1) << (POS_BITS - 1))
#define HEAD_OPEN (UINT64_C(1) << 63)
/* A batch journal's first word: named, not yet reserved for sure (B8). */
#define J_TENTATIVE (UINT64_C(1) << 63)

/* State word: [state:2][merged:1][spare:1][reopen:12][owner:16][id:32]. */
#define ST_SHIFT     62
#define ST_RESERVED  UINT64_C(0)
#define ST_COMMITTED UINT64_C(1)
#define ST_FINAL     UINT64_C(2)
#define ST_HOLE	     UINT64_C(3)
#define RC_SHIFT     48
#define RC_MASK	     UINT64_C(0xfff)
#define OWNER_SHIFT  32
#define OWNER_MASK   UINT64_C(0xffff)
/* C1: claimed by a batch's writer (the lanes' merger), whose pid is in
 * D_CTX; D_CALLER is the record's caller, not its claimer. Kept through
 * the commit and a hole. */
#define ST_MERGED    (UINT64_C(1) << 61)

/* Descriptor word indexes. */
enum {
	D_STATE,
	D_SEQ,
	D_TS,
	D_EXTENT, /* begin position (low 32) | end position (high 32) */
	D_CALLER, /* pid (low 32) | tid (high 32) */
	D_INFO,	  /* text_len:16 | dict_len:16 | level:8 | facility:8 | flags:8 | ctx:8 */
	D_ALLOC,  /* low 32: 1 + the id whose extent D_EXTENT holds, stored after it,
		   * before the claim; high 32: the check value (D8), before the commit */
	D_CTX,	  /* the writer's caller context (prb_caller.ctx); a merged
		   * record's (ST_MERGED): its merger, pid | tid << 32 (C1) */
};

/*
 * The header page. Line 0 is written once by prb_format() before the region
 * is published and is validated by prb_attach(); the other lines are live.
 */
struct prb_header {
	uint64_t magic;
	uint32_t abi_version;
	uint32_t endian_mark;
	uint32_t header_size;
	uint8_t unit_shift;
	uint8_t id_bits;
	uint8_t pos_bits;
	uint8_t desc_bits;
	uint8_t data_bits;
	uint8_t pad0[3];
	uint32_t id_base;
	uint64_t region_size;
	uint64_t desc_off;
	uint64_t data_off;
	uint32_t user_off;
	uint32_t user_size;

	_Alignas(64) pk_a64 head;
	_Alignas(64) pk_a64 tail;
	_Alignas(64) pk_a32 wake; /* futex word, bumped when records become readable */
	pk_a32 waiters;
	pk_a32 pollers; /* readers with a poll doorbell (prb_pollers_add) */
	_Alignas(64) pk_a64 reserve_failed;
	pk_a64 corrupt;
	pk_a64 next_hint; /* a seq below which every record is known readable */
	pk_a64 holes;	  /* records reclaimed from writers that died in them */
	pk_a64 stolen;	  /* slots taken from a reservation that never claimed them */
	/* Stall clocks of unclaimed slots: (id + 1, first seen) pairs, one per
	 * slot that writers or readers wait on at the same time. */
	pk_a64 stall[PRB_STALL_CLOCKS][2];
};

_Static_assert(sizeof(struct prb_header) <= PRB_USER_OFF, "header overlaps the user area");
_Static_assert(PRB_USER_OFF + PRB_USER_SIZE <= PRB_HEADER_SIZE, "user area outside header");
_Static_assert(PRB_TEXT_MAX + PRB_DICT_MAX < 0xffff, "lengths are 16-bit");

static inline uint64_t w_id(uint64_t w)
{
	return (w >> POS_BITS) & ID_MASK;
}

static inline uint64_t w_pos(uint64_t w)
{
	return w & POS_MASK;
}

static inline uint64_t mk_word(uint64_t id, uint64_t pos, bool open)
{
	return (open ? HEAD_OPEN : 0) | ((id & ID_MASK) << POS_BITS) | (pos & POS_MASK);
}

static inline uint64_t st_state(uint64_t v)
{
	return v >> ST_SHIFT;
}

static inline uint64_t st_id(uint64_t v)
{
	return v & ID_MASK;
}

static inline uint64_t st_make(uint64_t state, uint64_t rc, uint64_t owner, uint64_t id)
{
	return (state << ST_SHIFT) | ((rc & RC_MASK) << RC_SHIFT) |
	       ((owner & OWNER_MASK) << OWNER_SHIFT) | (id & ID_MASK);
}

static inline uint64_t st_with_state(uint64_t v, uint64_t state)
{
	return (v & ~(UINT64_C(3) << ST_SHIFT)) | (state << ST_SHIFT);
}

static inline uint64_t units_for(size_t bytes)
{
	return ((uint64_t)bytes + PRB_UNIT - 1) >> PRB_UNIT_SHIFT;
}

/*
 * The check value (D8), 32 bits kept in the high half of D_ALLOC (whose low
 * half is the extent's tag, so a record costs no byte more): a rotate-xor
 * over the record's id, its descriptor words (D_INFO, D_TS, D_CTX) and the
 * words of its block as stored (text and dictionary back to back, the last
 * word zero-padded), then a multiply-xorshift, folded. It is not a defence
 * against a forger, who can compute it too; it tells a block that belongs to
 * another record, or to no record at all (zero pages, pages of another
 * moment), from the record its descriptor describes.
 */
#define CHECK_MUL UINT64_C(0x9e3779b97f4a7c15)

/* A rotation and an xor per word: one or two cycles on the writer's path
 * (a multiply per word made the chain latency-bound), and a bijection of h
 * for a given word, so a record that differs from the stored one in any
 * single word always fails. The multiply comes once, at the end. */
static inline uint64_t check_mix(uint64_t h, uint64_t word)
{
	return (h << 23 | h >> 41) ^ word;
}

/* D_ALLOC's low half, the extent's tag: id + 1 (zeroed memory tags no id). */
static inline uint64_t alloc_tag(uint64_t id)
{
	return (id + 1) & UINT64_C(0xffffffff);
}

static inline uint64_t check_end(uint64_t h)
{
	h *= CHECK_MUL;
	return h ^ (h >> 31);
}

/*
 * D_ALLOC of the record @id with descriptor words @info, @ts and @ctx and
 * its block at @words, as it lies there (the writer computes it from what it
 * just stored; readers from what they copied from): the tag (id + 1, 32
 * bits; zeroed memory tags no id) and the check value. Two lanes, even and
 * odd words, halve the dependency chain.
 */
static PK_ALWAYS_INLINE uint64_t alloc_word_end(uint64_t id, uint64_t a, uint64_t b)
{
	uint64_t h = check_end(a ^ b * CHECK_MUL);

	return ((h ^ h << 32) & ~UINT64_C(0xffffffff)) | alloc_tag(id);
}

static PK_ALWAYS_INLINE uint64_t alloc_word(uint64_t id, uint64_t info, uint64_t ts, uint64_t ctx,
					     pk_a64 *words)
{
	uint64_t a = check_mix(check_mix(id, ts), 0), b = check_mix(check_mix(info, ctx), 0);
	size_t n = ((info & 0xffff) + ((info >> 16) & 0xffff) + 7) / 8, i;

	for (i = 0; i + 1 < n; i += 2) {
		a = check_mix(a, pk_load_relaxed(&words[i]));
		b = check_mix(b, pk_load_relaxed(&words[i + 1]));
	}
	if (i < n)
		a = check_mix(a, pk_load_relaxed(&words[i]));
	return alloc_word_end(id, a, b);
}

static inline pk_a64 *slot(const struct prb *rb, uint64_t id)
{
	return rb->descs + (id & (rb->desc_count - 1)) * PRB_DESC_WORDS;
}

static inline uint64_t seq_to_id(const struct prb *rb, uint64_t seq)
{
	return (seq + rb->id_base) & ID_MASK;
}

/* Words of the data area where the block at @pos starts. */
static inline pk_a64 *block_words(const struct prb *rb, uint64_t pos)
{
	return rb->data + (pos & (rb->data_units - 1)) * (PRB_UNIT / 8);
}

/* Where a block of @units starting at or after @pos goes, and where it ends. */
static void place(const struct prb *rb, uint64_t pos, uint64_t units, uint64_t *begin,
		  uint64_t *end)
{
	uint64_t idx = pos & (rb->data_units - 1);

	if (idx + units > rb->data_units)
		pos += rb->data_units - idx;
	*begin = pos & POS_MASK;
	*end = (pos + units) & POS_MASK;
}

/*
 * All-zero descriptor memory is a ring's initial state: the state and seq
 * words are stored XORed with the values their slot starts with (every slot
 * looks like the final record, one lap back, of the id that will first use
 * it). Formatting a fresh mapping then writes only the header, and a 1 GiB
 * log costs only the pages it uses.
 */
static inline uint64_t init_id_of(const struct prb *rb, uint64_t id)
{
	uint64_t n = rb->desc_count;

	return (rb->id_base - n + ((id - rb->id_base) & (n - 1))) & ID_MASK;
}

static inline uint64_t state_key(const struct prb *rb, uint64_t id)
{
	return st_make(ST_FINAL, 0, 0, init_id_of(rb, id));
}

static inline uint64_t seq_key(const struct prb *rb, uint64_t id)
{
	uint64_t n = rb->desc_count;

	return ((id - rb->id_base) & (n - 1)) - n;
}

#define ST_LOAD(rb, id, load)	   ((load)(&slot(rb, id)[D_STATE]) ^ state_key(rb, id))
#define SEQ_LOAD(rb, id)	   (pk_load_relaxed(&slot(rb, id)[D_SEQ]) ^ seq_key(rb, id))
#define SEQ_STORE(rb, id, seq)	   pk_store_relaxed(&slot(rb, id)[D_SEQ], (seq) ^ seq_key(rb, id))

enum cas_order { CAS_SC, CAS_ACQ_REL, CAS_RELEASE, CAS_RELAXED };

/* CAS the state word of @id from *@v to @nv (both decoded); on failure *@v
 * is the current (decoded) value. */
static inline bool st_cas(const struct prb *rb, uint64_t id, uint64_t *v, uint64_t nv,
			  enum cas_order order)
{
	pk_a64 *w = &slot(rb, id)[D_STATE];
	uint64_t key = state_key(rb, id);
	uint64_t raw = *v ^ key;
	bool ok;

	switch (order) {
	case CAS_SC:
		ok = pk_cas_sc(w, &raw, nv ^ key);
		break;
	case CAS_ACQ_REL:
		ok = pk_cas_acq_rel(w, &raw, nv ^ key);
		break;
	case CAS_RELEASE:
		ok = pk_cas_release(w, &raw, nv ^ key);
		break;
	default:
		ok = pk_cas_relaxed(w, &raw, nv ^ key);
		break;
	}
	if (!ok)
		*v = raw ^ key;
	return ok;
}

static inline uint64_t load_relaxed_fn(pk_a64 *p)
{
	return pk_load_relaxed(p);
}

static inline uint64_t load_acquire_fn(pk_a64 *p)
{
	return pk_load_acquire(p);
}

static inline uint64_t load_sc_fn(pk_a64 *p)
{
	return pk_load_sc(p);
}

/*
 * The 64-bit seq of @id, read from its slot. The slot holds either id itself or
 * its previous occupant (id - N) whose seq is N less; the stored seq says which.
 * Returns false if the slot has moved on past id (the caller's view is stale).
 */
static bool seq_of_id(const struct prb *rb, uint64_t id, uint64_t *seq)
{
	uint64_t s = SEQ_LOAD(rb, id);
	uint64_t behind = (id - (s + rb->id_base)) & ID_MASK;

	/* An earlier occupant (one lap back, or more if a slot was taken as a
	 * hole without its seq being written): its seq is behind by as much. */
	if (behind >= ID_HALF || (behind & (rb->desc_count - 1)))
		return false;
	*seq = s + behind;
	return true;
}

/* What a look at head and tail found. */
enum hdr_state { HDR_OK, HDR_RACE, HDR_BAD };

/*
 * Read tail, head and tail again and check them against I2. When both tail
 * loads agree, the head was read while that tail held (a writer that moved
 * the head had seen the tail it relied on; the second load cannot see an
 * older one), so a violation is damage, not a race.
 */
static enum hdr_state header_state(struct prb *rb, uint64_t *t_out, uint64_t *h_out)
{
	uint64_t t = pk_load_acquire(&rb->hdr->tail);
	uint64_t h = pk_load_acquire(&rb->hdr->head);

	if (pk_load_acquire(&rb->hdr->tail) != t)
		return HDR_RACE;
	*t_out = t;
	*h_out = h;
	if (((w_id(h) + 1 - w_id(t)) & ID_MASK) > rb->desc_count ||
	    ((w_pos(h) - w_pos(t)) & POS_MASK) > rb->data_units)
		return HDR_BAD;
	return HDR_OK;
}

static uint64_t prb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ----------------------------------------------------------- testpoints -- */

static void (*_Atomic testpoint_hook)(enum prb_testpoint);

void prb_set_testpoint_hook(void (*hook)(enum prb_testpoint tp))
{
	atomic_store_explicit(&testpoint_hook, hook, memory_order_release);
}

static inline void testpoint(enum prb_testpoint tp)
{
	void (*hook)(enum prb_testpoint) = atomic_load_explicit(&testpoint_hook, memory_order_relaxed);

	if (hook)
		hook(tp);
}

void prb_testpoint(enum prb_testpoint tp)
{
	testpoint(tp);
}

/* ---------------------------------------------------------------- waking -- */

static long futex(pk_a32 *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

PK_HOT static void wake_waiters(struct prb *rb)
{
	/* P5: our state CAS was seq_cst; these loads are too. */
	if (pk_load_sc(&rb->hdr->waiters) != 0) {
		int saved = errno;

		pk_fetch_add_sc(&rb->hdr->wake, 1);
		futex(&rb->hdr->wake, FUTEX_WAKE, INT_MAX, NULL);
		errno = saved;
	}
	if (pk_load_sc(&rb->hdr->pollers) != 0) {
		void (*bell)(struct prb *) = atomic_load_explicit(&rb->doorbell, memory_order_acquire);

		if (bell)
			bell(rb);
	}
}

void prb_set_doorbell(struct prb *rb, void (*bell)(struct prb *rb), void *arg)
{
	rb->doorbell_arg = arg;
	atomic_store_explicit(&rb->doorbell, bell, memory_order_release);
}

void prb_pollers_add(struct prb *rb, int delta)
{
	pk_fetch_add_sc(&rb->hdr->pollers, (uint32_t)delta);
	pk_fence_sc(); /* P5, as for waiters: ring our bell or let the caller see the record */
}

/* ------------------------------------------------------------- finalize -- */

/* COMMITTED -> FINAL for @id, if it is still COMMITTED. Anyone may call it for
 * a record that is not the newest (I5). */
static void finalize(struct prb *rb, uint64_t id)
{
	uint64_t v = ST_LOAD(rb, id, load_sc_fn);

	while (st_id(v) == id && st_state(v) == ST_COMMITTED) {
		if (st_cas(rb, id, &v, st_with_state(v, ST_FINAL), CAS_SC)) {
			wake_waiters(rb);
			return;
		}
	}
}

void prb_abandon_unfinished(struct prb *rb)
{
	uint64_t t = pk_load_acquire(&rb->hdr->tail);
	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t n = (w_id(h) + 1 - w_id(t)) & ID_MASK;

	if (!rb->writable || n > rb->desc_count)
		return;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id = (w_id(t) + i) & ID_MASK;
		uint64_t v = ST_LOAD(rb, id, load_acquire_fn);

		if (st_id(v) == id && st_state(v) == ST_RESERVED) {
			if (st_cas(rb, id, &v, st_with_state(v, ST_HOLE), CAS_SC))
				pk_fetch_add_relaxed(&rb->hdr->holes, 1);
		} else if (st_id(v) == ((id - rb->desc_count) & ID_MASK)) {
			if (st_cas(rb, id, &v, st_make(ST_HOLE, 0, 0, id), CAS_SC))
				pk_fetch_add_relaxed(&rb->hdr->stolen, 1);
		}
	}
}

void prb_finalize_last(struct prb *rb)
{
	uint64_t h = pk_load_sc(&rb->hdr->head);

	if (rb->writable && (h & HEAD_OPEN))
		finalize(rb, w_id(h));
}

void prb_finalize_last_of(struct prb *rb, uint32_t pid)
{
	uint64_t h = pk_load_sc(&rb->hdr->head);
	uint64_t id = w_id(h);

	/* Another process's open line is its own to end (it may go on with it). */
	if (rb->writable && (h & HEAD_OPEN) &&
	    (uint32_t)pk_load_relaxed(&slot(rb, id)[D_CALLER]) == pid)
		finalize(rb, id);
}

/* -------------------------------------------------------------- writers -- */

/* PUSH_PASSED: the tail word moved on from the one the caller gave, by our
 * CAS or another pusher's, and the caller's copy now holds it (acquired, as
 * P1 says); PUSH_MOVED: something else changed, look at head and tail again. */
enum push_result { PUSH_MOVED, PUSH_PASSED, PUSH_BLOCKED, PUSH_BROKEN };

static inline uint64_t st_owner(uint64_t v)
{
	return (v >> OWNER_SHIFT) & OWNER_MASK;
}

/* The pid of the process that claimed @id (state @v, loaded with acquire:
 * the word is stored before the claim, I7): its caller's, or a merged
 * record's merger (C1). */
static uint32_t claimer_pid(const struct prb *rb, uint64_t id, uint64_t v)
{
	return (uint32_t)pk_load_relaxed(&slot(rb, id)[(v & ST_MERGED) ? D_CTX : D_CALLER]);
}

/* The writer that claimed @id (state @v) is gone for good (shared logs
 * only). The pid it stored before claiming tells its registry slot's later
 * owners from it. */
static bool owner_dead(struct prb *rb, uint64_t id, uint64_t v)
{
	int (*alive)(struct prb *, unsigned, uint32_t) = rb->owner_alive;
	uint64_t owner = st_owner(v);

	if (owner == 0 || !alive)
		return false;
	return !alive(rb, (unsigned)owner, claimer_pid(rb, id, v));
}

/* A FINAL record's block, extent @ext, against the tail's position @tpos:
 * its text and dictionary's length (@info) exactly, within a ring of the
 * tail. */
static inline bool final_block_fits(const struct prb *rb, uint64_t tpos, uint64_t ext, uint64_t info)
{
	uint64_t begin = ext & 0xffffffffu, end = ext >> 32;
	uint64_t off = (begin - tpos) & POS_MASK, len = (end - begin) & POS_MASK;

	return len == units_for((info & 0xffff) + ((info >> 16) & 0xffff)) && off + len <= rb->data_units;
}

/*
 * Where the extent of @tid ends, for retiring it (state @v: FINAL or HOLE).
 * A record that was claimed tagged its extent (D_ALLOC) before the claim; for
 * one that never was, the newest record ends at head.pos, any other where its
 * successor begins (the bytes a successor skipped at the array end then go
 * with it: harmless), or where it starts (@tpos) if the successor is untagged
 * too. The file may be damaged: a tagged extent is used only if it starts at
 * or after @tpos, ends inside the data array's reach and, for a FINAL record,
 * holds exactly its text and dictionary; otherwise it is a counted loss and
 * the fallbacks decide. The data tail then never jumps past live records.
 */
static PK_ALWAYS_INLINE uint64_t extent_end(struct prb *rb, uint64_t t, uint64_t v)
{
	uint64_t tid = w_id(t), tpos = w_pos(t);
	pk_a64 *d = slot(rb, tid);
	uint64_t h = 0;
	bool have_head = false;

	if ((pk_load_acquire(&d[D_ALLOC]) & 0xffffffffu) == alloc_tag(tid)) {
		uint64_t ext = pk_load_relaxed(&d[D_EXTENT]);
		uint64_t info = pk_load_relaxed(&d[D_INFO]);
		uint64_t begin = ext & 0xffffffffu, end = ext >> 32;
		uint64_t off = (begin - tpos) & POS_MASK, len = (end - begin) & POS_MASK;
		bool ok;

		if (st_state(v) == ST_FINAL) {
			ok = final_block_fits(rb, tpos, ext, info);
		} else {
			/* A hole's lengths may be a previous occupant's. */
			h = pk_load_acquire(&rb->hdr->head);
			have_head = true;
			ok = off + len <= ((w_pos(h) - tpos) & POS_MASK);
		}
		if (PK_LIKELY(ok))
			return end;
		if (pk_load_acquire(&rb->hdr->tail) == t)
			pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
	}

	if (!have_head)
		h = pk_load_acquire(&rb->hdr->head);
	if (w_id(h) == tid)
		return w_pos(h);

	uint64_t next = (tid + 1) & ID_MASK;
	pk_a64 *n = slot(rb, next);

	if ((pk_load_acquire(&n[D_ALLOC]) & 0xffffffffu) == alloc_tag(next)) {
		uint64_t nbegin = pk_load_relaxed(&n[D_EXTENT]) & 0xffffffffu;

		if (((nbegin - tpos) & POS_MASK) <= ((w_pos(h) - tpos) & POS_MASK))
			return nbegin;
	}
	/* The successor never tagged its extent either (two writers died after
	 * their head CAS): give this one no bytes at all; the first tagged record
	 * after them starts where its writer placed it, past all of theirs. */
	return tpos;
}

/* An allocated slot nobody claimed for PRB_STALL_NS (shared logs) may be
 * stolen: safe even if its writer is alive, whose claim then fails (I8). The
 * clock lives in the header, or in the handle for a read-only one. */
static bool stalled_for(struct prb *rb, uint64_t key, uint64_t ns)
{
	pk_a64 (*clocks)[2] = rb->writable ? rb->hdr->stall : rb->local_stall;
	uint64_t now = prb_now_ns();
	unsigned oldest = 0;

	/* Each slot keeps its own clock, so a writer waiting on the tail and a
	 * reader waiting further on never restart each other's. */
	for (unsigned i = 0; i < PRB_STALL_CLOCKS; i++) {
		if (pk_load_relaxed(&clocks[i][0]) == key)
			return now - pk_load_relaxed(&clocks[i][1]) > ns;
		if (pk_load_relaxed(&clocks[i][1]) < pk_load_relaxed(&clocks[oldest][1]))
			oldest = i;
	}
	pk_store_relaxed(&clocks[oldest][1], now);
	pk_store_relaxed(&clocks[oldest][0], key);
	return false;
}

static bool stalled_long_enough(struct prb *rb, uint64_t tid)
{
	return stalled_for(rb, tid + 1, PRB_STALL_NS);
}

/*
 * D9: the claimed record @id (state @v, RESERVED) belongs to another
 * process's writer that has been inside it for PRB_TAKEOVER_NS. The clock is
 * keyed by the whole state word (id, owner, reopen count; the state bits make
 * it differ from any unclaimed slot's key), so an extension restarts it.
 */
static bool takeover_due(struct prb *rb, uint64_t id, uint64_t v)
{
	uint64_t owner = st_owner(v);

	if (!rb->owner_alive || owner == 0 || owner == rb->owner || st_id(v) != id ||
	    st_state(v) != ST_RESERVED)
		return false;
	return stalled_for(rb, v | UINT64_C(1) << 63, PRB_TAKEOVER_NS);
}

/* A read-only handle passes an unclaimed slot it cannot steal; it remembers
 * the slots it passed so the next call does not wait for them again. */
static bool skipped_before(struct prb *rb, uint64_t id)
{
	if (rb->writable)
		return false;
	for (unsigned i = 0; i < 8; i++)
		if (pk_load_relaxed(&rb->local_skip[i]) == id + 1)
			return true;
	return false;
}

static void remember_skip(struct prb *rb, uint64_t id)
{
	if (skipped_before(rb, id))
		return;

	uint32_t i = pk_fetch_add_relaxed(&rb->local_skip_next, 1) % 8;

	pk_store_relaxed(&rb->local_skip[i], id + 1);
}

/*
 * The tail record's slot @v holds neither its id nor the one before it, and
 * the tail @t did not move: unless the header itself is damaged, the slot's
 * state word is (a writer's head CAS needs the tail past a slot's id before
 * that slot can hold a newer one). Make it a hole: a counted loss, and the
 * tail goes on.
 */
static enum push_result repair_tail_slot(struct prb *rb, uint64_t t, uint64_t v)
{
	uint64_t t2, h;
	enum hdr_state hs = header_state(rb, &t2, &h);

	if (hs == HDR_RACE || t2 != t)
		return PUSH_MOVED; /* the caller looks again */
	if (hs == HDR_BAD)
		return PUSH_BROKEN;
	if (st_cas(rb, w_id(t), &v, st_make(ST_HOLE, 0, 0, w_id(t)), CAS_SC))
		pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
	return PUSH_MOVED;
}

static int (*_Atomic retire_guard)(struct prb *rb, uint64_t seq);

void prb_set_retire_guard(int (*guard)(struct prb *rb, uint64_t seq))
{
	atomic_store_explicit(&retire_guard, guard, memory_order_release);
}

/* G1: ask the guard before @tid (FINAL) leaves the ring; true if it waited. */
static PK_NOINLINE bool guard_waited(struct prb *rb, uint64_t tid,
				     int (*guard)(struct prb *, uint64_t))
{
	uint64_t seq;

	return seq_of_id(rb, tid, &seq) && guard(rb, seq) != 0;
}

/*
 * The tail word after the FINAL record @id that the tail word @t names
 * (its block's end), or 0 when the record does not look clean to
 * extent_end()'s test (another tag, final_block_fits() false): then it is
 * left to a push of its own.
 */
static uint64_t final_run_next(struct prb *rb, uint64_t t, uint64_t id)
{
	pk_a64 *d = slot(rb, id);

	if ((pk_load_acquire(&d[D_ALLOC]) & 0xffffffffu) != alloc_tag(id))
		return 0;

	uint64_t ext = pk_load_relaxed(&d[D_EXTENT]), info = pk_load_relaxed(&d[D_INFO]);

	if (!final_block_fits(rb, w_pos(t), ext, info))
		return 0;
	return mk_word((id + 1) & ID_MASK, ext >> 32, false);
}

/*
 * Retire the tail record *@tp so its slot and data can be reused and, for
 * a batch (@run: prb_store_batch()), the FINAL records after it that the
 * room for @want_id ending at @want_end still needs, with the same CAS (R1
 * below). One step; then the caller checks the room again, under the tail
 * this left in *@tp (PUSH_PASSED) or after re-reading head and tail
 * (PUSH_MOVED).
 */
static PK_ALWAYS_INLINE enum push_result push_tail(struct prb *rb, uint64_t *tp, bool run, uint64_t want_id,
						   uint64_t want_end)
{
	uint64_t t = *tp;
	uint64_t tid = w_id(t);
	uint64_t v = ST_LOAD(rb, tid, load_acquire_fn); /* P2 */

	if (st_id(v) == ((tid - rb->desc_count) & ID_MASK)) {
		/* Allocated by a head CAS, not claimed yet (or a state word
		 * damaged to look so). */
		if (rb->owner_alive && stalled_long_enough(rb, tid) &&
		    st_cas(rb, tid, &v, st_make(ST_HOLE, 0, 0, tid), CAS_SC)) {
			pk_fetch_add_relaxed(&rb->hdr->stolen, 1);
			return PUSH_MOVED;
		}
		return pk_load_acquire(&rb->hdr->tail) != t ? PUSH_MOVED : PUSH_BLOCKED;
	}
	if (st_id(v) != tid) {
		/* Somebody pushed past it already, or the slot is damaged. */
		if (pk_load_acquire(&rb->hdr->tail) != t)
			return PUSH_MOVED;
		return repair_tail_slot(rb, t, v);
	}
	switch (st_state(v)) {
	case ST_RESERVED:
		if (owner_dead(rb, tid, v) || takeover_due(rb, tid, v)) {
			/* Its writer died in it, or stalls in it (D9): the
			 * text is lost, the slot is not. */
			if (st_cas(rb, tid, &v, st_with_state(v, ST_HOLE), CAS_SC))
				pk_fetch_add_relaxed(&rb->hdr->holes, 1);
			return PUSH_MOVED;
		}
		/* Being written: we may not wait for it. */
		return pk_load_acquire(&rb->hdr->tail) != t ? PUSH_MOVED : PUSH_BLOCKED;
	case ST_COMMITTED:
		/* Reserving after it would finalize it anyway. */
		finalize(rb, tid);
		return PUSH_MOVED;
	case ST_FINAL: {
		int (*guard)(struct prb *, uint64_t) =
			atomic_load_explicit(&retire_guard, memory_order_acquire);

		if (PK_UNLIKELY(guard != NULL) && guard_waited(rb, tid, guard))
			return PUSH_MOVED; /* G1: waited; head and tail may have moved */
		break;
	}
	default:
		break;
	}

	uint64_t end = extent_end(rb, t, v);
	uint64_t nt = mk_word(tid + 1, end, false);

	/*
	 * R1: a batch's pusher passes the FINAL records after this one that
	 * its room still needs with the same CAS (without a retire guard,
	 * which is asked record by record). Their slots cannot be reused
	 * while the tail stands before them, so a CAS that finds the tail
	 * still at @t passes records that were FINAL and clean when looked
	 * at, as as many pushes in a row would; one that fails passes none.
	 */
	if (run && st_state(v) == ST_FINAL && !atomic_load_explicit(&retire_guard, memory_order_relaxed)) {
		for (unsigned k = 1; k < PRB_BATCH_MAX; k++) {
			uint64_t nid = w_id(nt);

			if (((want_id - nid) & ID_MASK) < rb->desc_count &&
			    ((want_end - w_pos(nt)) & POS_MASK) <= rb->data_units)
				break; /* room enough */

			uint64_t nv = ST_LOAD(rb, nid, load_acquire_fn);

			if (st_id(nv) != nid || st_state(nv) != ST_FINAL)
				break;

			uint64_t after = final_run_next(rb, nt, nid);

			if (!after)
				break;
			nt = after;
		}
	}

	/* P1 both ways: release for those who rely on our tail; on failure the
	 * tail another pusher left, acquired, is as good as a fresh load. */
	if (pk_cas_acq_rel(&rb->hdr->tail, &t, nt))
		t = nt;

	*tp = t;
	return PUSH_PASSED;
}

/* This handle's writers found the header words contradicting each other. */
static int declare_broken(struct prb *rb)
{
	if (!pk_load_relaxed(&rb->broken)) {
		pk_store_relaxed(&rb->broken, 1);
		pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
	}
	return -EUCLEAN;
}

bool prb_tail_writer_local(struct prb *rb)
{
	uint64_t t = pk_load_acquire(&rb->hdr->tail);
	uint64_t tid = w_id(t);
	uint64_t v = ST_LOAD(rb, tid, load_acquire_fn);

	if (st_id(v) == ((tid - rb->desc_count) & ID_MASK))
		return !rb->owner_alive; /* allocated, not claimed: ours on a private ring */
	if (st_id(v) != tid || st_state(v) != ST_RESERVED)
		return false;
	return st_owner(v) == 0 || st_owner(v) == rb->owner;
}

bool prb_broken(struct prb *rb)
{
	return pk_load_relaxed(&rb->broken) != 0;
}

void prb_memory_replaced(struct prb *rb)
{
	pk_store_relaxed(&rb->local_next_hint, 0);
	pk_store_relaxed(&rb->broken, 0);
}

/*
 * A writer's loop ran PRB_STORE_RETRIES rounds without reserving: with a
 * consistent header it was starved (counted like a blocked reservation),
 * otherwise the header is damaged.
 */
static int give_up(struct prb *rb)
{
	uint64_t t, h;
	enum hdr_state hs = HDR_RACE;

	for (int i = 0; i < 16 && hs == HDR_RACE; i++)
		hs = header_state(rb, &t, &h);
	if (hs == HDR_BAD)
		return declare_broken(rb);
	pk_fetch_add_relaxed(&rb->hdr->reserve_failed, 1);
	return -ENOBUFS;
}

/* Ask for the cache line at @p ahead of the stores or atomic
 * read-modify-writes that need it, in a writable state where the target has
 * an instruction for that (x86-64's PREFETCHW, which the compiler emits
 * only when the target it builds for has it: older x86-64 processors lack
 * it, so it is not written out by hand). */
static inline void prefetch_w(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p, 1, 3);
#else
	(void)p;
#endif
}

/* The lines a store into @id with the block [@begin, @end) will write: its
 * descriptor and the first lines of its block. Asked for before the head CAS,
 * they arrive while the head and tail are being fought over, instead of one
 * after another at the claim and at the commit, which must wait for them. */
static inline void prefetch_record(const struct prb *rb, uint64_t id, uint64_t begin, uint64_t end)
{
	uint64_t bytes = ((end - begin) & POS_MASK) << PRB_UNIT_SHIFT;
	uintptr_t line = (uintptr_t)block_words(rb, begin) & ~(uintptr_t)63;
	uintptr_t last = (uintptr_t)block_words(rb, begin) + bytes - 1;

	prefetch_w(slot(rb, id));
	for (unsigned n = 0; bytes && line <= last && n < 4; n++, line += 64)
		prefetch_w((const void *)line);
}

/*
 * Make sure the extent up to @end and the id @id fit; push the tail if not.
 * Returns 1 if they fit under the tail last seen (loaded, or the one a push
 * left: neither head nor tail is loaded again after a push, as the caller's
 * head CAS fails anyway if the head moved), 0 if the caller must re-read
 * head (the snapshot was stale, or something other than a push changed),
 * -ENOBUFS if blocked, -EUCLEAN if the ring is broken.
 */
static PK_ALWAYS_INLINE int make_room_run(struct prb *rb, uint64_t id, uint64_t end, bool run)
{
	uint64_t t = pk_load_acquire(&rb->hdr->tail); /* P1, P3 */

	for (unsigned i = 0;; i++) {
		uint64_t ids = (id - w_id(t)) & ID_MASK;
		uint64_t units = (end - w_pos(t)) & POS_MASK;

		if (ids >= ID_HALF || units >= POS_HALF)
			return 0; /* our head snapshot is older than this tail */
		if (ids < rb->desc_count && units <= rb->data_units)
			return 1;
		switch (push_tail(rb, &t, run, id, end)) {
		case PUSH_BLOCKED:
			pk_fetch_add_relaxed(&rb->hdr->reserve_failed, 1);
			return -ENOBUFS;
		case PUSH_BROKEN:
			return declare_broken(rb);
		case PUSH_PASSED:
			if (i < 4)
				continue; /* a bigger record may need more than one */
			return 0;
		default:
			return 0;
		}
	}
}

PK_HOT static PK_NOINLINE int make_room(struct prb *rb, uint64_t id, uint64_t end)
{
	return make_room_run(rb, id, end, false);
}

/* make_room() for a batch: runs of FINAL records pushed with one CAS. */
static PK_NOINLINE int make_room_batch(struct prb *rb, uint64_t id, uint64_t end)
{
	return make_room_run(rb, id, end, true);
}

/*
 * Bytes [@from, @from + @n) of the block at @words into @dst, each word
 * loaded once (relaxed, as a writer may be reusing the block: the caller's
 * post-check tells). Straight into the record: printk may run on a small
 * signal stack, and a bounce buffer here was 2 KiB of it.
 */
static void copy_block_bytes(char *dst, pk_a64 *words, size_t from, size_t n)
{
	pk_a64 *w = words + from / 8;
	size_t skip = from % 8;

	if (skip && n) {
		uint64_t v = pk_load_relaxed(w++);
		size_t take = 8 - skip < n ? 8 - skip : n;

		memcpy(dst, (char *)&v + skip, take);
		dst += take;
		n -= take;
	}
	for (; n >= 8; n -= 8, dst += 8) {
		uint64_t v = pk_load_relaxed(w++);

		memcpy(dst, &v, 8);
	}
	if (n) {
		uint64_t v = pk_load_relaxed(w);

		memcpy(dst, &v, n);
	}
}

/* Copy @len bytes to byte offset @off of the block at @words. The words at the
 * edges are read back first: the writer owns the whole block. */
static void write_block(pk_a64 *words, size_t off, const char *src, size_t len)
{
	size_t w = off / 8;
	size_t skip = off % 8;

	while (len > 0) {
		uint64_t word;
		size_t n = 8 - skip;

		if (n > len)
			n = len;
		if (skip || n < 8)
			word = pk_load_relaxed(&words[w]);
		memcpy((char *)&word + skip, src, n);
		pk_store_relaxed(&words[w], word);
		src += n;
		len -= n;
		skip = 0;
		w++;
	}
}

/*
 * A new record's block: @text and @dict back to back from its start, the
 * last word zero-padded, as the check value (D8) covers whole words.
 */
static void write_record(pk_a64 *words, const char *text, size_t text_len, const char *dict,
			 size_t dict_len)
{
	size_t total = text_len + dict_len, k = 0;

	for (; 8 * k + 8 <= text_len; k++) {
		uint64_t w;

		memcpy(&w, text + 8 * k, 8);
		pk_store_relaxed(&words[k], w);
	}
	if (!dict_len && text_len % 8) {
		uint64_t w = 0;
		size_t rem = text_len % 8;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* The text's last 8 bytes, shifted: no call for the tail. */
		if (text_len >= 8) {
			memcpy(&w, text + text_len - 8, 8);
			w >>= 8 * (8 - rem);
		} else
#endif
			memcpy(&w, text + 8 * k, rem);
		pk_store_relaxed(&words[k++], w);
	}
	for (size_t pos = 8 * k; pos < total; k++) {
		uint64_t w = 0;
		char *b = (char *)&w;

		for (size_t i = 0; i < 8 && pos < total; i++, pos++)
			b[i] = pos < text_len ? text[pos] : dict[pos - text_len];
		pk_store_relaxed(&words[k], w);
	}
}

static void copy_block(pk_a64 *dst, pk_a64 *src, size_t bytes)
{
	for (size_t i = 0; i < (bytes + 7) / 8; i++)
		pk_store_relaxed(&dst[i], pk_load_relaxed(&src[i]));
}

static uint64_t pack_info(uint16_t text_len, uint16_t dict_len, uint8_t level, uint8_t facility,
			  uint8_t flags, uint8_t ctx)
{
	return (uint64_t)text_len | (uint64_t)dict_len << 16 | (uint64_t)level << 32 |
	       (uint64_t)facility << 40 | (uint64_t)flags << 48 | (uint64_t)ctx << 56;
}

/* Commit the record @id we hold as @mine (RESERVED). Returns false if it is
 * not ours any more: taken as a hole because we stalled in it (D9), or
 * reclaimed by a registry. */
static PK_ALWAYS_INLINE bool commit(struct prb *rb, uint64_t id, uint64_t mine, bool final)
{
	uint64_t v = mine;

	if (!st_cas(rb, id, &v, st_with_state(mine, final ? ST_FINAL : ST_COMMITTED), CAS_SC))
		return false;
	/* P4: if a newer record was reserved meanwhile, nobody else will finalize us. */
	if (!final && w_id(pk_load_sc(&rb->hdr->head)) != id)
		finalize(rb, id);
	else
		wake_waiters(rb);
	return true;
}

/*
 * The claim of @id found its slot holding @v instead of the FINAL or HOLE
 * record one lap back. Our id as a hole, or a later lap's id: a reclaimer
 * stole the slot while we stalled before claiming it (and the ring may have
 * come round again). The id one lap back in another state, or an id of
 * another slot, is a damaged state word: the tail passed id - N before our
 * head CAS, and nothing else writes that slot until we claim it, so we claim
 * it as it is, counted. (Our id in another state was caught before: the head
 * went back.) Returns 0 when the slot is ours, claimed as @mine.
 */
static int claim_failed(struct prb *rb, uint64_t id, uint64_t v, uint64_t mine)
{
	uint64_t prev_id = (id - rb->desc_count) & ID_MASK;

	for (int i = 0; i < 4; i++) {
		bool prev = st_id(v) == prev_id;

		if (prev && (st_state(v) == ST_FINAL || st_state(v) == ST_HOLE)) {
			if (st_cas(rb, id, &v, mine, CAS_RELEASE))
				return 0;
			continue;
		}
		/* Ours, stolen; or a later lap's, which the ring can only have
		 * claimed after the tail passed our id (I1): with the tail
		 * still within a ring of our id, another lap's id here is a
		 * damaged id field, and the slot is ours to claim (D2). */
		if (!prev && !((st_id(v) ^ id) & (rb->desc_count - 1))) {
			if (st_id(v) == id)
				break;
			/* A later lap's claim (release) came after a tail past
			 * our id: seen with the fence, if v is that claim. */
			pk_fence_acquire();
			if (((id - w_id(pk_load_acquire(&rb->hdr->tail))) & ID_MASK) >= rb->desc_count)
				break;
		}
		if (st_cas(rb, id, &v, mine, CAS_RELEASE)) {
			pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
			return 0;
		}
	}
	pk_fetch_add_relaxed(&rb->hdr->reserve_failed, 1);
	return -ENOBUFS;
}

/*
 * The seq a slot's stored seq gives the record @id, @back ids before it:
 * whichever occupant the slot of id - @back holds (one or more laps back,
 * the record itself, or a lap ahead once the ring came round), its seq is
 * as far from @id's as its id. False if the slot holds no occupant of its
 * own (a damaged seq word).
 */
static bool seq_from_slot(const struct prb *rb, uint64_t id, uint64_t back, uint64_t *seq)
{
	uint64_t at = (id - back) & ID_MASK;
	uint64_t s = SEQ_LOAD(rb, at);
	uint64_t sid = (s + rb->id_base) & ID_MASK;
	uint64_t diff = (id - sid) & ID_MASK;

	if ((sid ^ at) & (rb->desc_count - 1))
		return false;
	*seq = diff < ID_HALF ? s + diff : s - ((ID_MASK + 1) - diff);
	return true;
}

/*
 * The seq of the record @id its writer just claimed. Only the low ID_BITS
 * of a seq follow from the id; the rest come from the seq its slot held,
 * so one damaged bit there would give this record, and every later one in
 * the slot, a seq no reader looks for: their consoles would count them as
 * dropped (D10). The seq the slot gives is therefore checked against the
 * one the slot before gives, and when they differ, the slot before that
 * decides. False if no two agree.
 */
static PK_NOINLINE bool claimed_seq_slow(struct prb *rb, uint64_t id, uint64_t *seq)
{
	uint64_t mine = 0, prev = 0, prev2; /* set when have_* (zeroed for gcc -O3) */
	bool have_mine = seq_from_slot(rb, id, 0, &mine);
	bool have_prev = seq_from_slot(rb, id, 1, &prev);

	if (have_mine && have_prev && mine == prev) {
		*seq = mine;
		return true;
	}
	if (!seq_from_slot(rb, id, 2, &prev2))
		return false;
	if (have_prev && prev == prev2)
		*seq = prev;
	else if (have_mine && mine == prev2)
		*seq = mine;
	else
		return false;
	pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
	return true;
}

static PK_ALWAYS_INLINE bool claimed_seq(struct prb *rb, uint64_t id, uint64_t *seq)
{
	uint64_t old = SEQ_LOAD(rb, id);
	uint64_t mine = old + ((id - (old + rb->id_base)) & ID_MASK);

	/* The usual case: the record before ours is stored, its seq the one
	 * before ours. One line the previous writer just wrote. */
	if (PK_LIKELY(SEQ_LOAD(rb, id - 1) == mine - 1)) {
		*seq = mine;
		return true;
	}
	return claimed_seq_slow(rb, id, seq);
}

PK_HOT int prb_store(struct prb *rb, const struct prb_meta *meta, const char *text, size_t text_len,
	      const char *dict, size_t dict_len, bool final, uint64_t *seq_out)
{
	if (!rb || !meta || (text_len && !text) || (dict_len && !dict))
		return -EINVAL;
	if (!rb->writable)
		return -EPERM;
	if (text_len > PRB_TEXT_MAX || dict_len > PRB_DICT_MAX)
		return -E2BIG;
	if (PK_UNLIKELY(pk_load_relaxed(&rb->broken)))
		return -EUCLEAN;

	uint64_t units = units_for(text_len + dict_len);
	/* Both header lines at once, writable: a full ring CASes both for each
	 * record, and a load alone would fetch them shared first. */
	prefetch_w(&rb->hdr->head);
	prefetch_w(&rb->hdr->tail);
	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t id, begin, end;

	for (unsigned tries = 0;;) {
		id = (w_id(h) + 1) & ID_MASK;
		place(rb, w_pos(h), units, &begin, &end);
		prefetch_record(rb, id, begin, end);
		int room = make_room(rb, id, end);

		if (room < 0)
			return room;
		if (room == 0)
			h = pk_load_acquire(&rb->hdr->head);
		else if (pk_cas_sc(&rb->hdr->head, &h, mk_word(id, end, !final)))
			break;
		if (PK_UNLIKELY(++tries >= PRB_STORE_RETRIES))
			return give_up(rb); /* D1 */
	}

	testpoint(PRB_TP_HEAD_RESERVED);
	/* The record before ours may be an open line: it is final now (I5, P4). */
	if (h & HEAD_OPEN)
		finalize(rb, w_id(h));
	pk_fence_release(); /* P3: the tail we checked is published before our stores */

	pk_a64 *d = slot(rb, id);
	uint64_t v = ST_LOAD(rb, id, load_relaxed_fn);
	uint64_t prev_id = (id - rb->desc_count) & ID_MASK;
	bool claimable = st_id(v) == prev_id && (st_state(v) == ST_FINAL || st_state(v) == ST_HOLE);

	if (PK_UNLIKELY(!claimable)) {
		/* The tail must still be within a ring of our id: if it is not,
		 * the slot was stolen, and we may have stalled so long that the
		 * ids came round and a later record holds this very id (ABA):
		 * touch nothing. (A slot can only be recycled under us after a
		 * steal, which leaves it a HOLE of our id first.) */
		if (((id - w_id(pk_load_acquire(&rb->hdr->tail))) & ID_MASK) >= rb->desc_count) {
			pk_fetch_add_relaxed(&rb->hdr->reserve_failed, 1);
			return -ENOBUFS;
		}
		/* Our id already there and no hole: the head went back
		 * (damaged). Its record is still in the ring: touch nothing. */
		if (st_id(v) == id && st_state(v) != ST_HOLE)
			return declare_broken(rb);
	}
	/* The extent first, tagged with our id, so that whoever must retire this
	 * record after we die can find where it ends (I7). */
	pk_store_relaxed(&d[D_EXTENT], begin | end << 32);
	pk_store_relaxed(&d[D_CALLER], (uint64_t)meta->caller.pid | (uint64_t)meta->caller.tid << 32);
	pk_store_release(&d[D_ALLOC], alloc_tag(id)); /* I7 */

	uint64_t mine = st_make(ST_RESERVED, 0, rb->owner, id);

	if (PK_UNLIKELY(!claimable || !st_cas(rb, id, &v, mine, CAS_RELEASE))) {
		int err = claim_failed(rb, id, v, mine);

		if (err)
			return err;
	}

	testpoint(PRB_TP_CLAIMED);
	/* D9: a writer that stalled right after its claim may have lost the
	 * record; then the slot may hold a newer one: touch nothing. */
	if (PK_UNLIKELY(pk_load_relaxed(&d[D_STATE]) != (mine ^ state_key(rb, id))))
		return -ENOBUFS;

	uint64_t seq;

	if (PK_UNLIKELY(!claimed_seq(rb, id, &seq))) {
		/* No two slots agree on our seq: give the record up as a hole
		 * rather than store a seq readers would take for another. */
		uint64_t cur = mine;

		if (st_cas(rb, id, &cur, st_with_state(mine, ST_HOLE), CAS_SC))
			pk_fetch_add_relaxed(&rb->hdr->holes, 1);
		return declare_broken(rb);
	}

	uint64_t info = pack_info((uint16_t)text_len, (uint16_t)dict_len, meta->level & 7,
				  meta->facility, meta->flags, (uint8_t)meta->caller.ctx);

	SEQ_STORE(rb, id, seq);
	pk_store_relaxed(&d[D_TS], meta->ts_nsec);
	pk_store_relaxed(&d[D_CTX], meta->caller.ctx);
	pk_store_relaxed(&d[D_INFO], info);
	pk_a64 *words = block_words(rb, begin);

	write_record(words, text, text_len, dict, dict_len);
	pk_store_relaxed(&d[D_ALLOC], alloc_word(id, info, meta->ts_nsec, meta->caller.ctx, words));
	testpoint(PRB_TP_BEFORE_COMMIT);
	if (PK_UNLIKELY(!commit(rb, id, mine, final)))
		return -ENOBUFS; /* taken from us (D9): counted as a hole */
	if (seq_out)
		*seq_out = seq;
	return 0;
}

/*
 * Batches (prb_store_batch): the lanes' merger hands over up to
 * PRB_BATCH_MAX complete records and gets one reservation for all of them.
 * Every invariant above holds per record; what is shared is only the work
 * around them:
 * B1  One head CAS reserves ids id0 .. id0 + n - 1 and their blocks, placed
 *     one after another as n stores in a row would place them (place()), so
 *     blocks still lie in id order and I2, I3 and make_room() see nothing
 *     new: the tail is pushed until the last id and the last block fit.
 * B2  Each record is then claimed, written and committed FINAL in id order
 *     exactly as prb_store() does it (extent and tag first, I7; the claim;
 *     D9's look; the check value, D8; the commit CAS), so a reader, a tail
 *     pusher or a reclaimer treats a batch record as a single one. Its
 *     claim names the batch's writer as the claimer (C1: ST_MERGED, its pid
 *     in D_CTX) and D_CALLER the record's own writer, so a record of a
 *     dead process's lane is not taken from a live merger. An unclaimed
 *     record of a batch whose writer died is stolen like any unclaimed
 *     slot (I8), a claimed one made a hole like any dead writer's.
 * B3  The seq of id0 comes from claimed_seq() (D10); the others follow it,
 *     ids and seqs being dense alike.
 * B4  The caller's journal gets id0 + 1 (release) after the head CAS and
 *     before the first claim, and the number of records committed after
 *     each commit (then the record's done word, if any: the lane's read
 *     index, so a merge frees lane space record by record): whoever finds the journal of a writer that died knows
 *     that records below that number are in the ring, the one at it is in
 *     the ring only if its slot says so (prb_batch_stored()), and the rest
 *     are not (their slots become holes).
 * B5  A record that cannot be claimed or committed (stolen after a stall,
 *     taken by D9) ends the batch: the records after it, still unclaimed,
 *     become holes at once (counted as stolen), so nobody waits for them.
 * B6  Waiters are woken once, after the last commit: its seq_cst load of
 *     the waiter count comes after every commit of the batch (P5).
 * B7  The batch of a writer that died is finished by the next one that
 *     holds the caller's exclusive right to it (prb_batch_resume(): lanes.c
 *     calls it under the merge lock, taken over from a dead process): the
 *     same records into the same ids and blocks (placed again from the
 *     journal's first position), a record the dead writer committed passed,
 *     one it claimed taken over (its writer is gone: nothing else writes
 *     the slot), unclaimed ones claimed. A slot made a hole meanwhile (a
 *     tail pusher or a reader found the writer dead, or the slot unclaimed
 *     for PRB_STALL_NS) ends it as B5 does. Sequence numbers then stay
 *     dense across a killed merge.
 * B8  The name comes before the head CAS, marked tentative with the head
 *     word the CAS will leave, and is confirmed right after it: a writer
 *     killed between the two leaves a name that prb_batch_first() checks
 *     against the ring (none of the ids claimed, and the head still the
 *     one the CAS left or the next record placed where the batch ended),
 *     so no moment between reservation and naming costs the batch's seqs.
 */

static void raise_hint(pk_a64 *word, uint64_t seq);

/* The words of a lane record into the block @dst, the bytes past @len in
 * the last word zeroed, and D_ALLOC as alloc_word() computes it from them:
 * each word loaded once from the (untrusted, shared) source. */
static PK_ALWAYS_INLINE uint64_t copy_checked(uint64_t id, uint64_t info, uint64_t ts, uint64_t ctx,
					      pk_a64 *dst, pk_a64 *src, size_t len)
{
	uint64_t a = check_mix(check_mix(id, ts), 0), b = check_mix(check_mix(info, ctx), 0);

	if (len) {
		/* Whole words in pairs up to the last, which may be partial. */
		size_t last = (len - 1) / 8, i = 0;

		for (; i + 2 <= last; i += 2) {
			uint64_t x = pk_load_relaxed(&src[i]), y = pk_load_relaxed(&src[i + 1]);

			pk_store_relaxed(&dst[i], x);
			pk_store_relaxed(&dst[i + 1], y);
			a = check_mix(a, x);
			b = check_mix(b, y);
		}
		if (i < last) { /* one more whole word, at an even index */
			uint64_t x = pk_load_relaxed(&src[i]);

			pk_store_relaxed(&dst[i], x);
			a = check_mix(a, x);
		}

		uint64_t x = pk_load_relaxed(&src[last]);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		x &= ~UINT64_C(0) >> (8 * (-len & 7)); /* the bytes past @len zeroed */
#else
		if (len & 7) {
			char c[8];

			memcpy(c, &x, 8);
			memset(c + (len & 7), 0, 8 - (len & 7));
			memcpy(&x, c, 8);
		}
#endif
		pk_store_relaxed(&dst[last], x);
		if (last & 1)
			b = check_mix(b, x);
		else
			a = check_mix(a, x);
	}
	return alloc_word_end(id, a, b);
}

/* B5: the reserved ids [@id, @last] not claimed by us become holes. */
static void batch_abandon(struct prb *rb, uint64_t id, uint64_t last)
{
	for (; ((last - id) & ID_MASK) < ID_HALF; id = (id + 1) & ID_MASK) {
		uint64_t v = ST_LOAD(rb, id, load_relaxed_fn);

		if (st_id(v) == ((id - rb->desc_count) & ID_MASK) &&
		    (st_state(v) == ST_FINAL || st_state(v) == ST_HOLE) &&
		    st_cas(rb, id, &v, st_make(ST_HOLE, 0, 0, id), CAS_SC))
			pk_fetch_add_relaxed(&rb->hdr->stolen, 1);
	}
}

/*
 * Claim, write and commit the @n records of a batch reserved from @id0
 * with their blocks placed from @pos0 (B2); @done records of the batch
 * before them are stored (the journal counts them too). @resume: the batch
 * of a writer that died (B7): a record may be committed already, and one
 * it claimed is taken over. @hooks: the test points' hook may be set (a
 * constant, so that the usual copy has no test for it). Returns how many
 * of the @n are stored (a prefix), or a negative errno when that is none.
 */
static PK_ALWAYS_INLINE int fill_batch(struct prb *rb, const struct prb_batch_rec *recs, unsigned n, uint64_t id0,
		      uint64_t pos0, unsigned done, pk_a64 *journal, bool resume, uint64_t head_pos,
		      bool hooks)
{
	/* The geometry in locals: the stores below go through pointers the
	 * compiler cannot tell from the handle's fields. */
	pk_a64 *const descs = rb->descs, *const data = rb->data;
	const uint64_t ndesc = rb->desc_count, units_mask = rb->data_units - 1;
	const uint64_t base = rb->id_base, owner = rb->owner;
	uint64_t pos = pos0, seq0 = 0, claimer;
	struct prb_caller me;
	bool have_seq = false;
	unsigned j, levels = 0;
	int err = 0;

	/* The test points' hook, looked at once a batch. */
	void (*const tp)(enum prb_testpoint) =
		hooks ? atomic_load_explicit(&testpoint_hook, memory_order_relaxed) : NULL;

	/* C1: the claimer the oracle is asked about is us, not the records'
	 * writers. */
	pk_caller_get(&me);
	claimer = (uint64_t)me.pid | (uint64_t)me.tid << 32;
	for (j = 0; j < n; j++) {
		const struct prb_batch_rec *r = &recs[j];
		uint64_t id = (id0 + j) & ID_MASK, begin;
		uint64_t units = units_for(r->len), idx = pos & units_mask;

		/* place() */
		if (idx + units > units_mask + 1)
			pos += units_mask + 1 - idx;
		begin = pos & POS_MASK;
		pos = (pos + units) & POS_MASK;
		/* B7: a journal's blocks lie below the head (it is untrusted) */
		if (PK_UNLIKELY(resume) && ((head_pos - pos) & POS_MASK) >= POS_HALF)
			break;

		pk_a64 *d = descs + (id & (ndesc - 1)) * PRB_DESC_WORDS;
		uint64_t prev_id = (base - ndesc + ((id - base) & (ndesc - 1))) & ID_MASK;
		/* state_key(): the slot's first occupant, FINAL, one lap back */
		uint64_t key = st_make(ST_FINAL, 0, 0, prev_id);
		uint64_t raw = pk_load_relaxed(&d[D_STATE]), v = raw ^ key;

		prev_id = (id - ndesc) & ID_MASK;

		bool claimable = st_id(v) == prev_id && (st_state(v) == ST_FINAL || st_state(v) == ST_HOLE);

		if (PK_UNLIKELY(resume) && st_id(v) == id) {
			/* B7: committed before the kill, or claimed by the
			 * dead writer (ours to take over); a hole is lost. */
			if (st_state(v) == ST_FINAL || st_state(v) == ST_COMMITTED) {
				if (!prb_batch_stored(rb, id, r->ts_nsec, r->caller))
					break;
				pk_store_release(&journal[1], (done + j + 1) | pos << 8);
				if (r->done_word)
					pk_store_release(r->done_word, r->done_value);
				continue;
			}
			/* Claimed by the dead writer: it stored this extent
			 * and caller before its claim (I7), as a merger (C1). */
			if (st_state(v) != ST_RESERVED || !(v & ST_MERGED) ||
			    pk_load_relaxed(&d[D_EXTENT]) != (begin | pos << 32) ||
			    pk_load_relaxed(&d[D_CALLER]) != r->caller)
				break;
			claimable = true;
		} else if (PK_UNLIKELY(!claimable)) {
			/* As in prb_store(): stolen and come round, or damaged. */
			if (((id - w_id(pk_load_acquire(&rb->hdr->tail))) & ID_MASK) >= ndesc) {
				pk_fetch_add_relaxed(&rb->hdr->reserve_failed, 1);
				err = -ENOBUFS;
				break;
			}
			if (st_id(v) == id && st_state(v) != ST_HOLE) {
				err = declare_broken(rb);
				break;
			}
		}
		pk_store_relaxed(&d[D_EXTENT], begin | pos << 32);
		pk_store_relaxed(&d[D_CALLER], r->caller);
		pk_store_relaxed(&d[D_CTX], claimer); /* C1 */
		pk_store_release(&d[D_ALLOC], alloc_tag(id)); /* I7 */

		uint64_t mine = st_make(ST_RESERVED, 0, owner, id) | ST_MERGED;

		if (PK_UNLIKELY(!claimable || !pk_cas_release(&d[D_STATE], &raw, mine ^ key))) {
			if (resume)
				break;
			err = claim_failed(rb, id, raw ^ key, mine);
			if (err)
				break;
		}
		if (PK_UNLIKELY(tp))
			tp(PRB_TP_CLAIMED);
		if (PK_UNLIKELY(pk_load_relaxed(&d[D_STATE]) != (mine ^ key))) {
			err = -ENOBUFS; /* D9 */
			break;
		}
		if (PK_UNLIKELY(!have_seq)) {
			uint64_t sq;

			if (PK_UNLIKELY(!claimed_seq(rb, id, &sq))) {
				uint64_t cur = mine;

				if (st_cas(rb, id, &cur, st_with_state(mine, ST_HOLE), CAS_SC))
					pk_fetch_add_relaxed(&rb->hdr->holes, 1);
				err = declare_broken(rb);
				break;
			}
			seq0 = sq - j;
			have_seq = true;
		}

		uint64_t info = pack_info(r->len, 0, r->level & 7, 0, r->flags, 0);
		uint64_t at = (id - base) & (ndesc - 1);

		levels |= 1u << (r->level & 7);

		/* SEQ_STORE() */
		pk_store_relaxed(&d[D_SEQ], (seq0 + j) ^ (at - ndesc));
		pk_store_relaxed(&d[D_TS], r->ts_nsec);
		pk_store_relaxed(&d[D_INFO], info);
		pk_store_relaxed(&d[D_ALLOC], copy_checked(id, info, r->ts_nsec, claimer,
							   data + (begin & units_mask) * (PRB_UNIT / 8),
							   r->words, r->len));
		if (PK_UNLIKELY(tp))
			tp(PRB_TP_BEFORE_COMMIT);

		uint64_t cur = mine ^ key;

		if (PK_UNLIKELY(!pk_cas_sc(&d[D_STATE], &cur, st_with_state(mine, ST_FINAL) ^ key))) {
			err = -ENOBUFS; /* taken from us (D9): counted as a hole */
			break;
		}
		pk_store_release(&journal[1], (done + j + 1) | pos << 8); /* B4 */
		if (r->done_word)
			pk_store_release(r->done_word, r->done_value);
		if (PK_UNLIKELY(tp))
			tp(PRB_TP_BATCH_COMMITTED);
	}
	if (j < n)
		batch_abandon(rb, (id0 + j + 1) & ID_MASK, (id0 + n - 1) & ID_MASK);
	if (j) {
		wake_waiters(rb); /* B6 */

		void (*merged)(struct prb *, uint64_t, uint64_t, unsigned) =
			atomic_load_explicit(&rb->merged, memory_order_acquire);

		/* A resumed batch's first records may be the dead merger's. */
		if (have_seq && !resume) {
			/* Every record below the batch was done: so is the batch
			 * now, and ring_next_seq() need not walk it. */
			if (pk_load_relaxed(&rb->hdr->next_hint) == seq0)
				raise_hint(&rb->hdr->next_hint, seq0 + j);
			if (merged)
				merged(rb, seq0, j, levels);
		}
	}
	return j ? (int)j : err;
}

/* A new batch's fill while the test points' hook is set: apart, so that
 * prb_store_batch()'s own has no test for it. */
static PK_NOINLINE int fill_batch_hooked(struct prb *rb, const struct prb_batch_rec *recs, unsigned n,
					 uint64_t id0, uint64_t pos0, pk_a64 *journal)
{
	return fill_batch(rb, recs, n, id0, pos0, 0, journal, false, 0, true);
}

/* What prb_store_batch() and prb_batch_resume() refuse before they look
 * at the ring: 0, or the errno they return. */
static int batch_args(const struct prb *rb, const struct prb_batch_rec *recs, unsigned n, const pk_a64 *journal)
{
	if (!rb || !recs || !journal || n == 0 || n > PRB_BATCH_MAX)
		return -EINVAL;
	if (!rb->writable)
		return -EPERM;
	if (PK_UNLIKELY(pk_load_relaxed(&rb->broken)))
		return -EUCLEAN;
	return 0;
}

int prb_store_batch(struct prb *rb, const struct prb_batch_rec *recs, unsigned n, pk_a64 *journal)
{
	int err = batch_args(rb, recs, n, journal);

	if (err)
		return err;

	uint64_t total = 0;
	unsigned longest = 0;

	for (unsigned j = 0; j < n; j++) {
		unsigned len = recs[j].len;

		longest = len > longest ? len : longest;
		total += units_for(len);
	}
	if (longest > PRB_TEXT_MAX)
		return -EINVAL;
	/* B1: a batch takes at most a quarter of the ring, so it never needs
	 * the records of another writer that is still at work. */
	if (n > rb->desc_count / 4 || total > rb->data_units / 4)
		return -E2BIG;

	prefetch_w(&rb->hdr->head);
	prefetch_w(&rb->hdr->tail);

	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t id0, last, end;

	for (unsigned tries = 0;;) {
		uint64_t begin;

		id0 = (w_id(h) + 1) & ID_MASK;
		last = (id0 + n - 1) & ID_MASK;
		end = w_pos(h);
		if ((end & (rb->data_units - 1)) + total <= rb->data_units)
			end = (end + total) & POS_MASK; /* no block reaches the array's end */
		else
			for (unsigned j = 0; j < n; j++)
				place(rb, end, units_for(recs[j].len), &begin, &end);

		/* A batch that needs more pushes than make_room() makes at a time
		 * comes round again: the head is read anew each round. */
		int room = make_room_batch(rb, last, end);

		if (room < 0) {
			pk_store_relaxed(&journal[0], 0);
			return room;
		}
		if (room == 0) {
			h = pk_load_acquire(&rb->hdr->head);
		} else {
			/* B4: the reservation named before it is made, marked
			 * tentative with the head it leaves (B8) */
			pk_store_relaxed(&journal[1], w_pos(h) << 8);
			pk_store_relaxed(&journal[2], mk_word(last, end, false));
			pk_store_release(&journal[0], (id0 + 1) | J_TENTATIVE);
			testpoint(PRB_TP_BATCH_NAMED);
			if (pk_cas_sc(&rb->hdr->head, &h, mk_word(last, end, false)))
				break;
		}
		if (PK_UNLIKELY(++tries >= PRB_STORE_RETRIES)) {
			pk_store_relaxed(&journal[0], 0);
			return give_up(rb); /* D1 */
		}
	}

	testpoint(PRB_TP_HEAD_RESERVED);
	/* B4: confirmed before any claim */
	pk_store_release(&journal[0], id0 + 1);
	if (h & HEAD_OPEN)
		finalize(rb, w_id(h));
	pk_fence_release(); /* P3 */
	if (PK_UNLIKELY(atomic_load_explicit(&testpoint_hook, memory_order_relaxed)))
		return fill_batch_hooked(rb, recs, n, id0, w_pos(h), journal);
	return fill_batch(rb, recs, n, id0, w_pos(h), 0, journal, false, 0, false);
}

/*
 * B8: whether the batch of @n named by @journal was reserved, and its first
 * id. A confirmed name was; a tentative one (its writer died between naming
 * it and confirming it, around its head CAS) was if the CAS succeeded:
 * none of the ids is claimed (the dead writer claimed nothing before it
 * confirmed) and the head is still the one the CAS left, or the record
 * after the batch was placed where the batch ended. Another writer's
 * reservations could only look the same by ending at the same id and
 * position; their unclaimed slots would then be taken as a steal takes
 * them (I8).
 */
bool prb_batch_first(struct prb *rb, pk_a64 *journal, unsigned n, uint64_t *id0)
{
	uint64_t j0 = pk_load_acquire(&journal[0]);

	if (!j0 || n == 0 || n > PRB_BATCH_MAX)
		return false;
	*id0 = ((j0 & ~J_TENTATIVE) - 1) & ID_MASK;
	if (!(j0 & J_TENTATIVE))
		return true;

	uint64_t want = pk_load_relaxed(&journal[2]);
	uint64_t last = (*id0 + n - 1) & ID_MASK, end = w_pos(want);

	if (w_id(want) != last || (want & HEAD_OPEN))
		return false;
	for (unsigned j = 0; j < n; j++) {
		uint64_t id = (*id0 + j) & ID_MASK;

		if (st_id(ST_LOAD(rb, id, load_acquire_fn)) == id)
			return false;
	}

	uint64_t h = pk_load_acquire(&rb->hdr->head);

	if ((h & ~HEAD_OPEN) == want)
		return true;
	if (((w_id(h) - last) & ID_MASK) >= ID_HALF || w_id(h) == last)
		return false;

	uint64_t next = (last + 1) & ID_MASK;
	pk_a64 *d = slot(rb, next);

	if ((pk_load_acquire(&d[D_ALLOC]) & 0xffffffffu) != alloc_tag(next))
		return false;

	uint64_t begin = pk_load_relaxed(&d[D_EXTENT]) & 0xffffffffu;

	/* where the batch ended, or the next lap's start if it did not fit */
	return begin == end ||
	       (!(begin & (rb->data_units - 1)) && ((begin - end) & POS_MASK) <= rb->data_units);
}

int prb_batch_resume(struct prb *rb, const struct prb_batch_rec *recs, unsigned n, pk_a64 *journal)
{
	int err = batch_args(rb, recs, n, journal);

	if (err)
		return err;

	uint64_t id0;

	if (!prb_batch_first(rb, journal, n, &id0))
		return 0;
	pk_store_release(&journal[0], id0 + 1); /* confirmed (B8): we claim next */

	uint64_t id1 = id0 + 1, w = pk_load_acquire(&journal[1]);
	uint64_t done = w & 0xff, pos = (w >> 8) & POS_MASK;

	if (done > n)
		return -EINVAL;
	if (done == n)
		return (int)n;
	for (unsigned j = (unsigned)done; j < n; j++)
		if (recs[j].len > PRB_TEXT_MAX || (recs[j].len && !recs[j].words))
			return -EINVAL;
	/* The journal is untrusted: its ids must have been reserved (at or
	 * before the head, within a ring of it), its blocks below the head's
	 * position (fill_batch()). */
	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t last = (id1 - 1 + n - 1) & ID_MASK;

	if (((w_id(h) - last) & ID_MASK) >= rb->desc_count)
		return -EINVAL;

	/* Placed from where the last committed record's block ended: the
	 * records before it may have left their lanes already. */
	int got = fill_batch(rb, recs + done, (unsigned)(n - done), (id1 - 1 + done) & ID_MASK, pos,
			     (unsigned)done, journal, true, w_pos(h), true);

	return got < 0 ? (done ? (int)done : got) : (int)done + got;
}

bool prb_batch_open(struct prb *rb, uint64_t id)
{
	id &= ID_MASK;

	uint64_t v = ST_LOAD(rb, id, load_acquire_fn);

	if (st_id(v) == id)
		return st_state(v) == ST_RESERVED;
	return st_id(v) == ((id - rb->desc_count) & ID_MASK) &&
	       (st_state(v) == ST_FINAL || st_state(v) == ST_HOLE);
}

uint64_t prb_seq_id(struct prb *rb, uint64_t seq)
{
	return seq_to_id(rb, seq);
}

uint64_t prb_id_distance(struct prb *rb, uint64_t from, uint64_t to)
{
	(void)rb;
	return (to - from) & ID_MASK;
}

int prb_batch_check(struct prb *rb, uint64_t id, uint64_t ts_nsec, uint64_t caller)
{
	id &= ID_MASK;

	pk_a64 *d = slot(rb, id);
	uint64_t v = ST_LOAD(rb, id, load_acquire_fn);

	if (st_id(v) != id) {
		/* A later lap's occupant: the tail passed it. */
		uint64_t ahead = (st_id(v) - id) & ID_MASK;

		return ahead && ahead < ID_HALF && !(ahead & (rb->desc_count - 1)) ? -1 : 0;
	}
	if (st_state(v) != ST_FINAL && st_state(v) != ST_COMMITTED)
		return 0;

	bool same = pk_load_relaxed(&d[D_TS]) == ts_nsec && pk_load_relaxed(&d[D_CALLER]) == caller;

	pk_fence_acquire();
	if (ST_LOAD(rb, id, load_relaxed_fn) != v)
		return -1; /* overwritten while we looked */
	return same;
}

bool prb_batch_stored(struct prb *rb, uint64_t id, uint64_t ts_nsec, uint64_t caller)
{
	return prb_batch_check(rb, id, ts_nsec, caller) == 1;
}

static bool caller_matches(pk_a64 *d, const struct prb_caller *c)
{
	uint64_t who = pk_load_relaxed(&d[D_CALLER]);

	return who == ((uint64_t)c->pid | (uint64_t)c->tid << 32) &&
	       pk_load_relaxed(&d[D_CTX]) == c->ctx;
}

int prb_extend(struct prb *rb, const struct prb_caller *caller, const char *text, size_t len,
	       size_t max_text, bool final, uint8_t add_flags, uint64_t *seq_out)
{
	if (!rb || !caller || (len && !text))
		return -EINVAL;
	if (!rb->writable)
		return -EPERM;
	if (max_text > PRB_TEXT_MAX)
		max_text = PRB_TEXT_MAX;

	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t id = w_id(h);
	pk_a64 *d = slot(rb, id);
	uint64_t v = ST_LOAD(rb, id, load_acquire_fn);

	if (!(h & HEAD_OPEN) || st_id(v) != id || st_state(v) != ST_COMMITTED ||
	    !caller_matches(d, caller))
		return -ENOENT;
	/* Reopen; the new reopen count tells racing readers to retry (P6). */
	uint64_t rc = ((v >> RC_SHIFT) + 1) & RC_MASK;
	uint64_t mine = (v & ~(RC_MASK << RC_SHIFT)) | rc << RC_SHIFT;

	mine = st_with_state(mine, ST_RESERVED);
	if (!st_cas(rb, id, &v, mine, CAS_ACQ_REL))
		return -ENOENT;

	testpoint(PRB_TP_REOPENED);
	int err = 0;
	uint64_t info = pk_load_relaxed(&d[D_INFO]);
	size_t old_len = info & 0xffff;

	if (!caller_matches(d, caller) || ((info >> 16) & 0xffff) != 0) {
		err = -ENOENT;
		goto restore;
	}
	if (old_len + len > max_text) {
		err = -E2BIG;
		goto restore;
	}

	uint64_t ext = pk_load_relaxed(&d[D_EXTENT]);
	uint64_t begin = ext & 0xffffffffu, end = ext >> 32;
	uint64_t need = units_for(old_len + len);
	uint64_t nbegin = begin, nend = end;

	if (need > ((end - begin) & POS_MASK)) {
		for (unsigned tries = 0;; tries++) {
			if (tries >= PRB_STORE_RETRIES) {
				err = give_up(rb);
				goto restore;
			}
			h = pk_load_acquire(&rb->hdr->head);
			if (w_id(h) != id) {
				err = -ENOENT; /* a newer record exists: I4 */
				goto restore;
			}
			if ((begin & (rb->data_units - 1)) + need <= rb->data_units) {
				nbegin = begin;
				nend = (begin + need) & POS_MASK;
			} else {
				place(rb, w_pos(h), need, &nbegin, &nend);
			}
			int room = make_room(rb, id, nend);

			if (room < 0) {
				err = room;
				goto restore;
			}
			if (room == 1 && pk_cas_sc(&rb->hdr->head, &h, mk_word(id, nend, true)))
				break;
		}
		pk_fence_release(); /* P3 */
		if (nbegin != begin)
			copy_block(block_words(rb, nbegin), block_words(rb, begin), old_len);
		pk_store_relaxed(&d[D_EXTENT], nbegin | nend << 32);
	}
	pk_a64 *words = block_words(rb, nbegin);
	size_t n = old_len + len, last = n / 8;

	if (len)
		write_block(words, old_len, text, len);
	if (n % 8) {
		/* Zero the padding (the check covers whole words). */
		uint64_t w = pk_load_relaxed(&words[last]);

		memset((char *)&w + n % 8, 0, 8 - n % 8);
		pk_store_relaxed(&words[last], w);
	}
	info = (info & ~UINT64_C(0xffff)) | n;
	info |= (uint64_t)add_flags << 48;
	pk_store_relaxed(&d[D_INFO], info);
	pk_store_relaxed(&d[D_ALLOC], alloc_word(id, info, pk_load_relaxed(&d[D_TS]),
						 pk_load_relaxed(&d[D_CTX]), words));
	/* Read while we own it: once committed it may be overwritten at once. */
	if (seq_out)
		*seq_out = SEQ_LOAD(rb, id);
	if (!commit(rb, id, mine, final))
		return -ENOBUFS; /* taken from us (D9): counted as a hole */
	return 0;

restore:
	commit(rb, id, mine, false);
	return err;
}

/* -------------------------------------------------------------- readers -- */

/*
 * The seqs of the oldest record (@first, the tail's) and of the next
 * reservation (@next, the head's + 1), checked against each other: the slots
 * of tail and head must tell seqs as far apart as their ids, without the
 * tail's being past the head's (a damaged tail id can name a slot whose
 * stored seq is one laps-back value of a never-used slot). If one of the two
 * slots' seq is unreadable while head and tail stay put, the other one and
 * the id distance give it. HDR_RACE: a writer moved them meanwhile.
 */
/* Head or tail is no longer @h or @t: slots read meanwhile may have moved on. */
static bool header_moved(struct prb *rb, uint64_t t, uint64_t h)
{
	return pk_load_acquire(&rb->hdr->tail) != t || pk_load_acquire(&rb->hdr->head) != h;
}

static enum hdr_state ring_bounds(struct prb *rb, uint64_t *first, uint64_t *next, uint64_t *h_out)
{
	uint64_t t, h, tseq = 0, hseq = 0;
	enum hdr_state hs = header_state(rb, &t, &h);

	if (hs != HDR_OK)
		return hs;

	uint64_t dist = (w_id(h) + 1 - w_id(t)) & ID_MASK;
	bool tok = seq_of_id(rb, w_id(t), &tseq);
	bool hok = seq_of_id(rb, w_id(h), &hseq);

	if (!tok || !hok) {
		if (header_moved(rb, t, h))
			return HDR_RACE; /* a slot moved on under us */
		if (!tok && !hok)
			return HDR_BAD;
		if (tok)
			hseq = tseq + dist - 1;
		else
			tseq = hseq + 1 - dist;
	}
	if (tseq > hseq + 1 || hseq + 1 - tseq != dist) {
		/* One of the two is wrong. A head that agrees with the record
		 * before it is believed (head_bounds()); otherwise a tail that
		 * agrees with the record after it. Slots never used agree with
		 * each other, which is why the head is asked first. But first:
		 * a slot read after head or tail moved on may hold a later
		 * lap's seq (one that looks a whole number of laps off once
		 * ids came round, as they do in seconds with small ids). */
		uint64_t s;

		if (header_moved(rb, t, h))
			return HDR_RACE;

		if (!tok || !hok || dist < 2)
			return HDR_BAD;
		if (seq_of_id(rb, (w_id(h) - 1) & ID_MASK, &s) && s + 1 == hseq)
			return HDR_BAD;
		if (!seq_of_id(rb, (w_id(t) + 1) & ID_MASK, &s) || s != tseq + 1)
			return HDR_BAD;
		hseq = tseq + dist - 1;
	}
	*first = tseq;
	*next = hseq + 1;
	*h_out = h;
	return HDR_OK;
}

/*
 * Bounds a reader can use when head and tail disagree: only below the head's
 * record, and at most one ring behind it. False when the head's slot says
 * nothing either.
 */
static bool head_bounds(struct prb *rb, uint64_t *first, uint64_t *next, uint64_t *h_out)
{
	uint64_t h = pk_load_acquire(&rb->hdr->head), hseq;

	if (!seq_of_id(rb, w_id(h), &hseq))
		return false;
	*next = hseq + 1;
	*first = *next > rb->desc_count ? *next - rb->desc_count : 0;
	*h_out = h;
	return true;
}

/* ring_bounds() until it settles; head_bounds() for a damaged header.
 * Returns HDR_OK, HDR_BAD (bounds from the head alone) or HDR_RACE (none). */
static enum hdr_state reader_bounds(struct prb *rb, uint64_t *first, uint64_t *next, uint64_t *h)
{
	for (int i = 0; i < 1024; i++) {
		enum hdr_state hs = ring_bounds(rb, first, next, h);

		if (hs == HDR_OK)
			return HDR_OK;
		if (hs == HDR_BAD)
			return head_bounds(rb, first, next, h) ? HDR_BAD : HDR_RACE;
	}
	return HDR_RACE;
}

uint64_t prb_first_seq(struct prb *rb)
{
	uint64_t first, next, h;

	if (reader_bounds(rb, &first, &next, &h) != HDR_RACE || head_bounds(rb, &first, &next, &h))
		return first;
	return 0;
}

/* seq_of_id() fails only while the slot moves on under us; a file whose
 * slots never agree with its head is corrupt: stop trying. */
#define SEQ_RETRIES 100000

uint64_t prb_next_reserve_seq(struct prb *rb)
{
	uint64_t seq;

	/* seq_of_id() checks the stored seq against the id: no re-validation
	 * needed. A failure with the head and the slot's seq as they were
	 * before is damage, not a slot moving on (D7). */
	uint64_t h = pk_load_acquire(&rb->hdr->head);
	uint64_t sw = pk_load_relaxed(&slot(rb, w_id(h))[D_SEQ]);

	for (int i = 0; i < SEQ_RETRIES; i++) {
		if (seq_of_id(rb, w_id(h), &seq))
			return seq + 1;
		uint64_t h2 = pk_load_acquire(&rb->hdr->head);
		uint64_t sw2 = pk_load_relaxed(&slot(rb, w_id(h2))[D_SEQ]);

		if (h2 == h && sw2 == sw)
			break;
		h = h2;
		sw = sw2;
	}
	return prb_first_seq(rb);
}

PK_HOT bool prb_is_newest(struct prb *rb, uint64_t seq)
{
	return w_id(pk_load_acquire(&rb->hdr->head)) == seq_to_id(rb, seq);
}

/*
 * A descriptor's lengths and extent are possible: the text and dictionary fit
 * the limits and the extent, and the extent lies inside the data array. False
 * for a racing overwrite (the caller's post-check then says so) or a
 * corrupted file.
 */
static PK_ALWAYS_INLINE bool extent_ok(const struct prb *rb, uint64_t info, uint64_t ext)
{
	size_t tl = info & 0xffff, dl = (info >> 16) & 0xffff;
	uint64_t begin = ext & 0xffffffffu, end = ext >> 32;
	uint64_t units = units_for(tl + dl);

	return tl <= PRB_TEXT_MAX && dl <= PRB_DICT_MAX && begin <= POS_MASK && end <= POS_MASK &&
	       units <= ((end - begin) & POS_MASK) &&
	       (begin & (rb->data_units - 1)) + units <= rb->data_units;
}

/*
 * Copy the geometry-checked record at @id (state @v, as the caller loaded
 * it before the copy) into @r. Returns false when the descriptor's lengths
 * or extent are impossible or the block fails its check; the caller's
 * post-check decides whether it raced an overwrite or the file is corrupt.
 */
static bool copy_record(struct prb *rb, uint64_t id, uint64_t v, struct prb_record *r)
{
	pk_a64 *d = slot(rb, id);
	uint64_t info = pk_load_relaxed(&d[D_INFO]);
	uint64_t ext = pk_load_relaxed(&d[D_EXTENT]);
	uint64_t who = pk_load_relaxed(&d[D_CALLER]);
	size_t tl = info & 0xffff, dl = (info >> 16) & 0xffff;

	r->seq = SEQ_LOAD(rb, id);
	r->ts_nsec = pk_load_relaxed(&d[D_TS]);
	r->caller.pid = (uint32_t)who;
	r->caller.tid = (uint32_t)(who >> 32);
	r->caller.ctx = pk_load_relaxed(&d[D_CTX]);
	r->level = (info >> 32) & 7;
	r->facility = (uint8_t)(info >> 40);
	r->flags = (uint8_t)(info >> 48);
	if (!extent_ok(rb, info, ext))
		return false;
	r->text_len = (uint16_t)tl;
	r->dict_len = (uint16_t)dl;

	pk_a64 *words = block_words(rb, ext & 0xffffffffu);

	copy_block_bytes(r->text, words, 0, tl);
	r->text[tl] = '\0';
	copy_block_bytes(r->dict, words, tl, dl);
	r->dict[dl] = '\0';
	/* D8: bytes of another record, or of none, fail the check. */
	if (pk_load_relaxed(&d[D_ALLOC]) != alloc_word(id, info, r->ts_nsec, r->caller.ctx, words))
		return false;
	if (v & ST_MERGED)
		r->caller.ctx = 0; /* its merger's id, not a caller context (C1) */
	return true;
}

/*
 * The reader's post-check (P3, I1): after copying the record at @id, whose
 * state word @state held @raw1 (as stored, not decoded) before the copy,
 * the copy is whole if that word has not changed and the tail has not
 * passed @id.
 */
static inline bool copy_intact_raw(pk_a64 *state, uint64_t raw1, pk_a64 *tail, uint64_t id)
{
	pk_fence_acquire(); /* P3 */
	uint64_t t2 = pk_load_relaxed(tail);

	return pk_load_relaxed(state) == raw1 && ((id - w_id(t2)) & ID_MASK) < ID_HALF;
}

/* The same for a decoded state @v1. Callers that copied through a char
 * pointer take the addresses before the copy (prb_read_text()): the copy and
 * the fence make the compiler reload whatever it reads from @rb after them. */
static inline bool copy_intact(struct prb *rb, uint64_t id, uint64_t v1)
{
	return copy_intact_raw(&slot(rb, id)[D_STATE], v1 ^ state_key(rb, id), &rb->hdr->tail, id);
}

/*
 * The common case of a reader that keeps up: the record at @seq is FINAL and
 * still in the ring. Then no tail or head bookkeeping is needed (a record
 * that passes the post-copy check is at or after the tail, so nothing was
 * lost). Returns false to send the caller down the full path.
 */
static bool read_fast(struct prb *rb, uint64_t seq, struct prb_record *r)
{
	uint64_t id = seq_to_id(rb, seq);
	uint64_t v1 = ST_LOAD(rb, id, load_acquire_fn); /* P2 */

	if (st_id(v1) != id || st_state(v1) != ST_FINAL)
		return false;

	bool sane = copy_record(rb, id, v1, r);

	if (!copy_intact(rb, id, v1) || !sane || r->seq != seq)
		return false;
	r->rflags = 0;
	return true;
}

/*
 * A bulk reader's record: only the text, copied word by word straight to
 * where the caller formats it, with the same post-check as read_fast(). The
 * bytes past the text up to the next 16-byte unit belong to the same block
 * (blocks are whole units), so copying whole units never reads outside it.
 */
_Static_assert((PRB_TEXT_MAX + 15) / 16 * 16 <= PRB_TEXT_MAX + 8, "prb_read_text() stays in its promised room");

int prb_read_text(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst, uint8_t *flags)
{
	uint64_t id = seq_to_id(rb, seq);
	pk_a64 *d = slot(rb, id), *tail = &rb->hdr->tail;
	uint64_t raw1 = pk_load_acquire(&d[D_STATE]); /* P2 */
	uint64_t v1 = raw1 ^ state_key(rb, id);

	if (st_id(v1) != id || st_state(v1) != ST_FINAL)
		return -EAGAIN;

	uint64_t info = pk_load_relaxed(&d[D_INFO]);
	uint64_t ext = pk_load_relaxed(&d[D_EXTENT]);
	uint64_t ts = pk_load_relaxed(&d[D_TS]);
	uint64_t s = SEQ_LOAD(rb, id);
	size_t tl = info & 0xffff;

	if (!extent_ok(rb, info, ext))
		return -EAGAIN; /* prb_read() tells a race from corruption */

	pk_a64 *words = block_words(rb, ext & 0xffffffffu);
	uint64_t ctx = pk_load_relaxed(&d[D_CTX]);
	uint64_t want;

	/* Whole 16-byte units, two words at a time: at most 1024 bytes for
	 * the longest text, inside the block and inside @dst. A record of text
	 * alone (deferred ones, most others) is checked as it is copied: the
	 * words of alloc_word(), from the copy's loads. */
	if (!((info >> 16) & 0xffff)) {
		uint64_t a = check_mix(check_mix(id, ts), 0), b = check_mix(check_mix(info, ctx), 0);
		size_t n = (tl + 7) / 8, i;

		for (i = 0; i + 1 < n; i += 2) {
			uint64_t w0 = pk_load_relaxed(&words[i]);
			uint64_t w1 = pk_load_relaxed(&words[i + 1]);

			memcpy(dst + 8 * i, &w0, 8);
			memcpy(dst + 8 * i + 8, &w1, 8);
			a = check_mix(a, w0);
			b = check_mix(b, w1);
		}
		if (i < n) {
			uint64_t w0 = pk_load_relaxed(&words[i]);
			uint64_t w1 = pk_load_relaxed(&words[i + 1]);

			memcpy(dst + 8 * i, &w0, 8);
			memcpy(dst + 8 * i + 8, &w1, 8);
			a = check_mix(a, w0);
		}
		want = alloc_word_end(id, a, b);
	} else {
		for (size_t i = 0; i < (tl + 15) / 16 * 2; i += 2) {
			uint64_t w0 = pk_load_relaxed(&words[i]);
			uint64_t w1 = pk_load_relaxed(&words[i + 1]);

			memcpy(dst + 8 * i, &w0, 8);
			memcpy(dst + 8 * i + 8, &w1, 8);
		}
		want = alloc_word(id, info, ts, ctx, words);
	}

	uint64_t alloc = pk_load_relaxed(&d[D_ALLOC]);

	if (!copy_intact_raw(&d[D_STATE], raw1, tail, id) || s != seq || alloc != want)
		return -EAGAIN; /* prb_read() tells a race from corruption */
	*ts_nsec = ts;
	*flags = (uint8_t)(info >> 48);
	return (int)tl;
}

enum prb_peek prb_peek(struct prb *rb, uint64_t seq, unsigned *level)
{
	uint64_t id = seq_to_id(rb, seq);
	pk_a64 *d = slot(rb, id);
	uint64_t raw = pk_load_acquire(&d[D_STATE]); /* P2 */
	uint64_t v = raw ^ state_key(rb, id);
	uint64_t sid = st_id(v);

	/* A slot one lap behind: the reservation of @seq has not reached it. */
	if (sid != id)
		return ((sid - id) & ID_MASK) < ID_HALF ? PRB_PEEK_GONE : PRB_PEEK_PENDING;
	if (st_state(v) == ST_HOLE)
		return PRB_PEEK_GONE;
	if (st_state(v) != ST_FINAL)
		return PRB_PEEK_PENDING;

	uint64_t info = pk_load_relaxed(&d[D_INFO]);
	uint64_t s = SEQ_LOAD(rb, id);

	if (!copy_intact_raw(&d[D_STATE], raw, &rb->hdr->tail, id) || s != seq)
		return PRB_PEEK_GONE;
	*level = (unsigned)(info >> 32) & 7;
	return PRB_PEEK_FINAL;
}

uint64_t prb_skip_levels(struct prb *rb, uint64_t seq, unsigned levels, uint64_t max)
{
	uint64_t n = 0, first = seq_to_id(rb, seq);

	if (!(levels & 0xff))
		return 0;
	/* Within one lap: no slot is looked at twice. */
	if (max > rb->desc_count / 2)
		max = rb->desc_count / 2;
	for (; n < max; n++) {
		uint64_t id = (first + n) & ID_MASK;
		pk_a64 *d = slot(rb, id);
		uint64_t raw = pk_load_acquire(&d[D_STATE]); /* P2 */
		uint64_t v = raw ^ state_key(rb, id);

		if (st_id(v) != id || st_state(v) != ST_FINAL ||
		    !(levels & 1u << ((pk_load_relaxed(&d[D_INFO]) >> 32) & 7)) || SEQ_LOAD(rb, id) != seq + n)
			break;
		/* P3 for each record, as prb_peek(): one the tail passed while
		 * the run was read ends it there, so that a run read while the
		 * ring wraps under it keeps what it passed intact. */
		if (!copy_intact_raw(&d[D_STATE], raw, &rb->hdr->tail, id))
			break;
	}
	/* Every record below the run's end is done now if every record
	 * below its start was: ring_next_seq() need not walk it again. */
	if (n && seq <= pk_load_relaxed(&rb->local_next_hint))
		raise_hint(&rb->local_next_hint, seq + n);
	return n;
}

/*
 * The record @seq left the ring while we looked at it: the tail's seq is
 * past it now. Seqs, unlike ids, never wrap, so a reader that was preempted
 * for a whole id range still tells this from damage.
 */
static bool overtaken(struct prb *rb, uint64_t seq)
{
	uint64_t first, next, h;

	switch (reader_bounds(rb, &first, &next, &h)) {
	case HDR_OK:
		return seq < first;
	case HDR_RACE:
		return true; /* look again */
	default:
		return false; /* no tail to tell: damage */
	}
}

/*
 * What a reader's round saw of the words that move when another process
 * makes progress: head, tail, the state and seq of the slot it looks at. Two
 * rounds that saw the same view looked at the same file; whatever made the
 * first one look again will make the second one too (D7).
 */
struct round_view {
	uint64_t tail, head, state, seq;
};

static void round_view_take(struct prb *rb, uint64_t seq, struct round_view *v)
{
	pk_a64 *d = slot(rb, seq_to_id(rb, seq));

	v->tail = pk_load_acquire(&rb->hdr->tail);
	v->head = pk_load_acquire(&rb->hdr->head);
	v->state = pk_load_acquire(&d[D_STATE]);
	v->seq = pk_load_relaxed(&d[D_SEQ]);
}

/* Ids and positions come round (after 2^14 records in a small-id build),
 * seqs do not: the slot's seq tells a slot reused since from the same one. */
static bool round_view_same(const struct round_view *a, const struct round_view *b)
{
	return a->tail == b->tail && a->head == b->head && a->state == b->state &&
	       a->seq == b->seq;
}

/* Damage is only what a still file shows: if anything in @seq's view moved
 * since @was, what the round saw may be a race; look again (D7 bounds it). */
static bool view_moved(struct prb *rb, uint64_t seq, const struct round_view *was)
{
	struct round_view v;

	round_view_take(rb, seq, &v);
	return !round_view_same(was, &v);
}

/* A reader skips a damaged record: counted where it may write. */
static void count_damaged(struct prb *rb)
{
	if (rb->writable)
		pk_fetch_add_relaxed(&rb->hdr->corrupt, 1);
}

/* What prb_read() met at @seq makes no sense: damage (1: counted, to be
 * skipped) if the record was not overwritten meanwhile and nothing in its
 * round's view @now moved; else 0, look again. */
static unsigned damaged_here(struct prb *rb, uint64_t seq, const struct round_view *now)
{
	if (overtaken(rb, seq) || view_moved(rb, seq, now))
		return 0;
	count_damaged(rb);
	return 1;
}

static int ring_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags)
{
	if (!rb || !r)
		return -EINVAL;
	if (read_fast(rb, seq, r))
		return 0;

	/* Every round either moves @seq forward (up to the head's record) or
	 * looks again at a record in flux; the latter is bounded (D1). */
	uint64_t looked_at = seq;
	struct round_view before = { 0 }, now;

	for (unsigned stuck = 0;; stuck++) {
		round_view_take(rb, seq, &now);

		uint64_t tseq, nseq, h;
		enum hdr_state hs = reader_bounds(rb, &tseq, &nseq, &h);

		if (seq != looked_at) {
			looked_at = seq;
			stuck = 0;
		} else if (stuck >= PRB_READ_RETRIES) {
			return -EAGAIN;
		} else if (stuck > 0 && round_view_same(&before, &now)) {
			/* D7: looked again and nothing moved: not a race. */
			count_damaged(rb);
			seq++;
			continue; /* the next round starts afresh at seq */
		}
		before = now;

		if (hs == HDR_RACE)
			return -EUCLEAN; /* neither head nor tail can be trusted */
		/* Forward only: a damaged tail never sends a reader back to
		 * records it passed (hs == HDR_BAD: the head's bounds). */
		if (seq < tseq)
			seq = tseq; /* overwritten: the caller sees the gap */
		if (seq >= nseq)
			return -EAGAIN;

		uint64_t id = seq_to_id(rb, seq);
		uint64_t v1 = ST_LOAD(rb, id, load_acquire_fn); /* P2 */

		/* Not claimed yet, or still being written: stop, unless the caller
		 * wants such records skipped and newer ones exist. */
		int unfinished = 0;

		if (st_id(v1) != id) {
			if (st_id(v1) != ((id - rb->desc_count) & ID_MASK)) {
				/* Recycled since we looked at the tail, or damaged:
				 * between tail and head a slot holds its id or, not
				 * claimed yet, the one before. */
				seq += damaged_here(rb, seq, &now);
				continue;
			}
			unfinished = 1;
		} else if (st_state(v1) == ST_RESERVED) {
			unfinished = 1;
		}
		if (unfinished) {
			/* Allocated and never claimed for PRB_STALL_NS (its writer
			 * died right after the head CAS, or stalls): steal it, or
			 * pass it by on a read-only handle (I8). */
			if (st_id(v1) != id && rb->owner_alive && id != w_id(h) &&
			    (skipped_before(rb, id) || stalled_long_enough(rb, id))) {
				if (!rb->writable) {
					remember_skip(rb, id);
					seq++;
					continue;
				}
				if (st_cas(rb, id, &v1, st_make(ST_HOLE, 0, 0, id), CAS_SC))
					pk_fetch_add_relaxed(&rb->hdr->stolen, 1);
				continue;
			}
			/* A claimed record whose writer died never completes, nor
			 * soon one whose writer stalls in it (D9): make it a hole
			 * (writable handle) or pass it by (read-only). */
			if (st_id(v1) == id &&
			    (owner_dead(rb, id, v1) || (id != w_id(h) && takeover_due(rb, id, v1)))) {
				if (rb->writable &&
				    st_cas(rb, id, &v1, st_with_state(v1, ST_HOLE), CAS_SC))
					pk_fetch_add_relaxed(&rb->hdr->holes, 1);
				if (!rb->writable)
					seq++;
				continue;
			}
			if ((flags & PRB_READ_SKIP_UNFINISHED) && id != w_id(h)) {
				seq++;
				continue;
			}
			return -EAGAIN;
		}
		switch (st_state(v1)) {
		case ST_HOLE:
			seq++; /* lost: its writer died */
			continue;
		case ST_COMMITTED:
			/*
			 * Not final yet. Its writer may still reopen it (it may
			 * have checked head before a newer record came), so only
			 * the finalize CAS, which a reopen must race on the same
			 * word, makes it safe to hand out (I5 makes it happen
			 * soon; a writable handle does it now). A dead writer
			 * reopens nothing.
			 */
			if (id != w_id(h) && rb->writable) {
				finalize(rb, id);
				continue;
			}
			if (!(flags & PRB_READ_UNFINALIZED) &&
			    !(id != w_id(h) && owner_dead(rb, id, v1)))
				return -EAGAIN;
			break;
		default:
			break;
		}

		bool sane = copy_record(rb, id, v1, r);

		if (!copy_intact(rb, id, v1))
			continue; /* changed or overwritten while we copied */
		if (!sane || r->seq != seq) {
			seq += damaged_here(rb, seq, &now);
			continue;
		}
		r->rflags = 0;
		/* Open: the newest line, or one a live writer may still extend. */
		if (st_state(v1) == ST_COMMITTED && (id == w_id(h) || !owner_dead(rb, id, v1)))
			r->rflags |= PRB_REC_UNFINALIZED;
		return 0;
	}
}

/*
 * Once, by a writer that found no other writer alive (the first one after a
 * crash): every record between tail and head is looked at, and what readers
 * would otherwise skip again and again, or a writer wait PRB_STALL_NS for,
 * becomes a hole now: slots never claimed, claims of dead writers, damaged
 * state words, records whose block fails its check (D8). Each is counted as
 * at run time (stolen, holes, corrupt). A writer that attached meanwhile is
 * safe: only states that no live writer can still change are replaced, each
 * by a CAS on the state word as read. Returns the number of records made
 * holes; @scratch is any record buffer.
 */
unsigned prb_recover(struct prb *rb, struct prb_record *scratch)
{
	uint64_t first, next, h;
	unsigned made = 0;

	if (!rb->writable || reader_bounds(rb, &first, &next, &h) != HDR_OK)
		return 0;
	for (uint64_t seq = first; seq < next; seq++) {
		uint64_t id = seq_to_id(rb, seq);
		uint64_t v = ST_LOAD(rb, id, load_acquire_fn);
		pk_a64 *counter = NULL;
		uint64_t hole = st_make(ST_HOLE, 0, 0, id);

		if (st_id(v) == ((id - rb->desc_count) & ID_MASK)) {
			counter = &rb->hdr->stolen; /* allocated, never claimed (I8) */
		} else if (st_id(v) != id) {
			counter = &rb->hdr->corrupt; /* D2 */
		} else {
			switch (st_state(v)) {
			case ST_RESERVED:
				if (owner_dead(rb, id, v))
					counter = &rb->hdr->holes;
				hole = st_with_state(v, ST_HOLE);
				break;
			case ST_COMMITTED:
			case ST_FINAL:
				if (!copy_record(rb, id, v, scratch) || scratch->seq != seq)
					counter = &rb->hdr->corrupt;
				hole = st_with_state(v, ST_HOLE);
				break;
			default:
				break;
			}
		}
		if (counter && st_cas(rb, id, &v, hole, CAS_SC)) {
			pk_fetch_add_relaxed(counter, 1);
			made++;
		}
	}
	if (made)
		wake_waiters(rb);
	return made;
}

/* True if @seq (>= the tail) is readable as a finalized record or a hole. */
static bool seq_done(struct prb *rb, uint64_t seq, uint64_t head_id)
{
	uint64_t id = seq_to_id(rb, seq);
	uint64_t v = ST_LOAD(rb, id, load_acquire_fn);

	if (st_id(v) != id)
		return false;
	switch (st_state(v)) {
	case ST_FINAL:
	case ST_HOLE:
		return true;
	case ST_COMMITTED:
		/* As prb_read(): final only once finalized, or its writer is gone. */
		if (id == head_id)
			return false;
		if (rb->writable) {
			finalize(rb, id);
			return true;
		}
		return owner_dead(rb, id, v);
	default:
		return false;
	}
}

static void raise_hint(pk_a64 *word, uint64_t seq)
{
	uint64_t old = pk_load_relaxed(word);

	while (old < seq &&
	       !atomic_compare_exchange_weak_explicit(word, &old, seq, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static uint64_t ring_next_seq(struct prb *rb)
{
	uint64_t first = prb_first_seq(rb);
	uint64_t hint = pk_load_relaxed(&rb->hdr->next_hint);
	uint64_t local = pk_load_relaxed(&rb->local_next_hint);
	uint64_t limit = prb_next_reserve_seq(rb);
	uint64_t head_id = w_id(pk_load_acquire(&rb->hdr->head));

	if (local > hint)
		hint = local;

	uint64_t seq = hint > first && hint <= limit ? hint : first;

	/* At most one ring's worth of slots, whatever a damaged header says. */
	if (limit - seq > rb->desc_count)
		limit = seq + rb->desc_count;
	while (seq < limit && seq_done(rb, seq, head_id))
		seq++;
	raise_hint(&rb->local_next_hint, seq);
	if (rb->writable)
		raise_hint(&rb->hdr->next_hint, seq);
	return seq;
}

/* A read-only handle cannot announce itself to writers: it sleeps in slices
 * of this length and looks again (no busy waiting, bounded latency). */
#define PRB_READONLY_WAIT_NS (50 * 1000 * 1000ll)

int prb_wait(struct prb *rb, uint64_t seq, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	int err = 0;

	/* Lane records (lanes.c) ring no bell: while a log's lanes are in use,
	 * a writable handle sleeps in the same slices, so a follower merges
	 * and sees them within one slice (pool word 1: a lane was claimed). */
	if ((!rb->writable || (rb->lanes && pk_load_relaxed(&rb->lanes[1]))) &&
	    (timeout_ns < 0 || timeout_ns > PRB_READONLY_WAIT_NS))
		timeout_ns = PRB_READONLY_WAIT_NS;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	if (rb->writable)
		pk_fetch_add_sc(&rb->hdr->waiters, 1);
	pk_fence_sc(); /* P5 */
	uint32_t gen = pk_load_sc(&rb->hdr->wake);

	if (ring_next_seq(rb) <= seq) {
		int saved = errno;

		if (futex(&rb->hdr->wake, FUTEX_WAIT, gen, tsp) < 0) {
			if (errno == ETIMEDOUT)
				err = -ETIMEDOUT;
			else if (errno == EINTR)
				err = -EINTR;
		}
		errno = saved;
	}
	if (rb->writable)
		pk_fetch_sub_sc(&rb->hdr->waiters, 1);
	return err;
}

int prb_describe_slot(struct prb *rb, uint64_t seq, char *buf, size_t size)
{
	static const char *names[] = { "reserved", "committed", "final", "hole" };
	uint64_t id = seq_to_id(rb, seq);
	uint64_t v = ST_LOAD(rb, id, load_acquire_fn);
	uint64_t h = pk_load_acquire(&rb->hdr->head), t = pk_load_acquire(&rb->hdr->tail);
	int alive = -1;

	if (st_state(v) == ST_RESERVED && rb->owner_alive)
		alive = rb->owner_alive(rb, (unsigned)st_owner(v), claimer_pid(rb, id, v));
	return snprintf(buf, size,
			"seq %llu id %llu: slot id %llu %s%s owner %llu pid %u alive %d; head id %llu%s tail id %llu stall %llu w%d o%d",
			(unsigned long long)seq, (unsigned long long)id, (unsigned long long)st_id(v),
			names[st_state(v)], (v & ST_MERGED) ? " merged" : "",
			(unsigned long long)st_owner(v), (unsigned)claimer_pid(rb, id, v), alive,
			(unsigned long long)w_id(h), (h & HEAD_OPEN) ? " open" : "",
			(unsigned long long)w_id(t),
			(unsigned long long)pk_load_relaxed(&rb->hdr->stall[0][0]), rb->writable,
			rb->owner_alive != NULL);
}

void prb_get_stats(struct prb *rb, struct prb_stats *st)
{
	st->reserve_failed = pk_load_relaxed(&rb->hdr->reserve_failed);
	st->corrupt = pk_load_relaxed(&rb->hdr->corrupt);
	st->holes = pk_load_relaxed(&rb->hdr->holes);
	st->stolen = pk_load_relaxed(&rb->hdr->stolen);
}

/* ------------------------------------------------------- format / attach -- */

static unsigned default_desc_bits(unsigned data_bits)
{
	return data_bits - PRB_AVG_TEXT_BITS;
}

static bool geometry_ok(unsigned data_bits, unsigned desc_bits)
{
	return data_bits >= PRB_DATA_MIN_BITS && data_bits <= PRB_DATA_MAX_BITS &&
	       /* N < 2^(ID_BITS-1): an id one lap back must still compare as behind */
	       desc_bits >= PRB_DESC_MIN_BITS && desc_bits < ID_BITS - 1 &&
	       desc_bits <= data_bits - 2 && data_bits - PRB_UNIT_SHIFT < POS_BITS - 1;
}

static size_t region_size_v(unsigned abi, unsigned data_bits, unsigned desc_bits)
{
	if (!desc_bits)
		desc_bits = default_desc_bits(data_bits);
	if (!geometry_ok(data_bits, desc_bits))
		return 0;
	return PRB_HEADER_SIZE + ((size_t)PRB_DESC_WORDS * 8 << desc_bits) +
	       ((size_t)1 << data_bits) + prb_strtab_size(data_bits) +
	       (abi >= PRB_ABI_VERSION ? prb_lanes_size(data_bits) : 0);
}

/* The version a new region is made in: with lanes (4) while this process
 * has them on (the default) and the data area is large enough for a pool
 * (PRB_LANES_MIN_DATA_BITS); otherwise version 3, made and sized exactly as
 * the previous release made it (printk.lanes=0 keeps that layout). */
static unsigned new_abi(unsigned data_bits)
{
	return prb_lanes_enabled() && data_bits >= PRB_LANES_MIN_DATA_BITS ? PRB_ABI_VERSION
									     : PRB_ABI_NO_LANES;
}

size_t prb_region_size(unsigned data_bits, unsigned desc_bits)
{
	return region_size_v(new_abi(data_bits), data_bits, desc_bits);
}

static void make_handle(struct prb *rb, struct prb_header *hdr, bool writable)
{
	uint8_t *base = (uint8_t *)hdr;

	rb->hdr = hdr;
	rb->descs = (pk_a64 *)(base + hdr->desc_off);
	rb->data = (pk_a64 *)(base + hdr->data_off);
	rb->user = base + hdr->user_off;
	rb->user_size = hdr->user_size;
	rb->region_size = hdr->region_size;
	rb->desc_count = UINT64_C(1) << hdr->desc_bits;
	rb->data_size = UINT64_C(1) << hdr->data_bits;
	rb->data_units = rb->data_size >> PRB_UNIT_SHIFT;
	rb->strtab = (pk_a64 *)(base + hdr->data_off + rb->data_size);
	rb->strtab_size = prb_strtab_size(hdr->data_bits);
	/* Geometry from data_bits alone, never from the region's words. */
	if (hdr->abi_version >= PRB_ABI_VERSION) {
		rb->lanes = (pk_a64 *)((uint8_t *)rb->strtab + rb->strtab_size);
		rb->lanes_size = prb_lanes_size(hdr->data_bits);
		rb->lane_bytes = prb_lane_bytes(hdr->data_bits);
	} else {
		rb->lanes = NULL;
		rb->lanes_size = 0;
		rb->lane_bytes = 0;
	}
	atomic_store_explicit(&rb->lane_view, NULL, memory_order_relaxed);
	atomic_store_explicit(&rb->lane_view_busy, 0, memory_order_relaxed);
	atomic_store_explicit(&rb->lane_stall_lock, 0, memory_order_relaxed);
	atomic_store_explicit(&rb->lane_stall_merged, 0, memory_order_relaxed);
	rb->id_base = hdr->id_base;
	rb->writable = writable;
	atomic_store_explicit(&rb->doorbell, NULL, memory_order_relaxed);
	rb->doorbell_arg = NULL;
	atomic_store_explicit(&rb->merged, NULL, memory_order_relaxed);
	rb->owner = 0;
	rb->owner_alive = NULL;
	rb->owner_arg = NULL;
	for (unsigned i = 0; i < 4; i++) {
		atomic_store_explicit(&rb->local_stall[i][0], 0, memory_order_relaxed);
		atomic_store_explicit(&rb->local_stall[i][1], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&rb->local_next_hint, 0, memory_order_relaxed);
	for (unsigned i = 0; i < 8; i++)
		atomic_store_explicit(&rb->local_skip[i], 0, memory_order_relaxed);
	atomic_store_explicit(&rb->local_skip_next, 0, memory_order_relaxed);
	atomic_store_explicit(&rb->broken, 0, memory_order_relaxed);
}

static int format(struct prb *rb, void *mem, size_t mem_size, unsigned data_bits, unsigned desc_bits,
		  bool fresh)
{
	if (!rb || !mem || ((uintptr_t)mem & 63))
		return -EINVAL;
	if (!desc_bits)
		desc_bits = default_desc_bits(data_bits);

	unsigned abi = new_abi(data_bits);
	size_t need = region_size_v(abi, data_bits, desc_bits);

	if (!need)
		return -EINVAL;
	if (mem_size < need)
		return -ENOSPC;

	struct prb_header *hdr = mem;

	memset(hdr, 0, PRB_HEADER_SIZE);
	hdr->magic = PRB_MAGIC;
	hdr->abi_version = abi;
	hdr->endian_mark = PRB_ENDIAN_MARK;
	hdr->header_size = PRB_HEADER_SIZE;
	hdr->unit_shift = PRB_UNIT_SHIFT;
	hdr->id_bits = ID_BITS;
	hdr->pos_bits = POS_BITS;
	hdr->desc_bits = (uint8_t)desc_bits;
	hdr->data_bits = (uint8_t)data_bits;
	/* Start a few records and half a lap before the id and position
	 * counters overflow, so every log runs the wrap-around paths early. */
	hdr->id_base = (uint32_t)((ID_MASK + 1 - 5) & ID_MASK);
	hdr->region_size = need;
	hdr->desc_off = PRB_HEADER_SIZE;
	hdr->data_off = PRB_HEADER_SIZE + ((uint64_t)PRB_DESC_WORDS * 8 << desc_bits);
	hdr->user_off = PRB_USER_OFF;
	hdr->user_size = PRB_USER_SIZE;
	make_handle(rb, hdr, true);

	/* Every slot looks like the previous lap's final record of the id that
	 * will first use it, so the first claim is an ordinary recycle: that
	 * is what all-zero descriptors mean (state_key, seq_key). */
	uint64_t first_id = rb->id_base;
	uint64_t pos0 = ((POS_MASK + 1) - rb->data_units / 2 - 1) & POS_MASK;

	if (!fresh) {
		memset((void *)rb->descs, 0, (size_t)rb->desc_count * PRB_DESC_WORDS * 8);
		memset((void *)rb->strtab, 0, rb->strtab_size);
		if (rb->lanes)
			memset((void *)rb->lanes, 0, rb->lanes_size);
	}
	pk_store_relaxed(&hdr->tail, mk_word(first_id, pos0, false));
	pk_store_release(&hdr->head, mk_word(first_id - 1, pos0, false));
	return 0;
}

int prb_format(struct prb *rb, void *mem, size_t mem_size, unsigned data_bits, unsigned desc_bits)
{
	return format(rb, mem, mem_size, data_bits, desc_bits, false);
}

int prb_format_fresh(struct prb *rb, void *mem, size_t mem_size, unsigned data_bits,
		     unsigned desc_bits)
{
	return format(rb, mem, mem_size, data_bits, desc_bits, true);
}

/*
 * Head, tail and the descriptors they name tell one story (ring_bounds()),
 * and no record after the head's is claimed already: a head word that went
 * back (zeroed, a bit cleared) would make the next writer reuse the ids, and
 * the seqs, of records still in the ring.
 */
static bool bounds_agree(struct prb *rb)
{
	for (int i = 0; i < 1024; i++) {
		uint64_t first, next, h, s;
		enum hdr_state hs = ring_bounds(rb, &first, &next, &h);

		if (hs == HDR_BAD)
			return false;
		if (hs == HDR_RACE)
			continue;

		uint64_t nid = (w_id(h) + 1) & ID_MASK;
		uint64_t v = ST_LOAD(rb, nid, load_acquire_fn);
		bool claimed = st_id(v) == nid && seq_of_id(rb, nid, &s) && s == next;

		if (pk_load_acquire(&rb->hdr->head) != h)
			continue; /* a writer took the next id meanwhile */
		return !claimed;
	}
	return false;
}

/* @readable: bytes at @mem that may be read (the header page alone, when a
 * file is checked before it is mapped); @mem_size: the size of the region. */
static int attach(struct prb *rb, void *mem, size_t mem_size, size_t readable, bool writable)
{
	if (!rb || !mem || ((uintptr_t)mem & 63))
		return -EINVAL;
	struct prb_header *hdr = mem;

	/* Not ours before "too short": a foreign file is not a truncated log. */
	if (readable < sizeof(hdr->magic) || hdr->magic != PRB_MAGIC)
		return -EPROTO;
	if (readable < sizeof(struct prb_header))
		return -ENOSPC;
	if (hdr->endian_mark != PRB_ENDIAN_MARK ||
	    (hdr->abi_version != PRB_ABI_VERSION && hdr->abi_version != PRB_ABI_NO_LANES) ||
	    hdr->unit_shift != PRB_UNIT_SHIFT || hdr->id_bits != ID_BITS ||
	    hdr->pos_bits != POS_BITS)
		return -EPROTONOSUPPORT;
	if (hdr->header_size != PRB_HEADER_SIZE || !geometry_ok(hdr->data_bits, hdr->desc_bits) ||
	    hdr->region_size != region_size_v(hdr->abi_version, hdr->data_bits, hdr->desc_bits) ||
	    hdr->desc_off != PRB_HEADER_SIZE ||
	    hdr->data_off != PRB_HEADER_SIZE + ((uint64_t)PRB_DESC_WORDS * 8 << hdr->desc_bits) ||
	    hdr->user_off != PRB_USER_OFF || hdr->user_size != PRB_USER_SIZE ||
	    hdr->id_base > ID_MASK)
		return -EBADMSG;
	if (hdr->region_size > mem_size)
		return -ENOSPC;

	struct prb tmp;

	make_handle(&tmp, hdr, writable);

	uint64_t h = pk_load_acquire(&hdr->head), t = pk_load_acquire(&hdr->tail);

	if (((w_id(h) + 1 - w_id(t)) & ID_MASK) > tmp.desc_count ||
	    ((w_pos(h) - w_pos(t)) & POS_MASK) > tmp.data_units)
		return -EBADMSG;
	/* The descriptors must agree with head and tail (only where the region
	 * is all there: a header checked on its own has no descriptors yet). */
	if (readable >= hdr->region_size && !bounds_agree(&tmp))
		return -EBADMSG;
	*rb = tmp;
	return 0;
}

unsigned prb_format_version(const struct prb *rb)
{
	return rb->hdr->abi_version;
}

int prb_attach(struct prb *rb, void *mem, size_t mem_size, bool writable)
{
	return attach(rb, mem, mem_size, mem_size, writable);
}

int prb_check_header(struct prb *rb, void *page, size_t page_len, size_t region_len)
{
	return attach(rb, page, region_len, page_len, false);
}

const char *prb_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EINVAL:
		return "invalid argument (size not a power of two in range, or misaligned memory)";
	case -ENOSPC:
		return "region too small for the log it holds (truncated?)";
	case -EPROTO:
		return "not a libprintk log (bad magic)";
	case -EPROTONOSUPPORT:
		return "libprintk log of another ABI version, id width or byte order";
	case -EBADMSG:
		return "corrupted libprintk log header";
	case -EUCLEAN:
		return "libprintk log damaged: its head and tail words disagree";
	default:
		return "unknown error";
	}
}

uint64_t prb_ring_next_seq(struct prb *rb)
{
	return ring_next_seq(rb);
}

int prb_ring_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags)
{
	return ring_read(rb, seq, r, flags);
}

/* The switch is driven here, below lanes.c, because it decides a new
 * region's version (new_abi()). On by default (docs/lanes.md);
 * printk.lanes=0 or pk_set_lanes(0) turns it off. Its one record is the
 * fast gate's bit (base/fast_gate.h), which printk's fast path tests with
 * its other rare conditions. */
void prb_lanes_enable(int on)
{
	pk_fast_gate_put(PK_GATE_LANES_OFF, !on);
}
