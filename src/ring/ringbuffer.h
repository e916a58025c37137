// SPDX-License-Identifier: MIT
/*
 * ringbuffer.h - the lock-free record ring (private to libprintk).
 *
 * The ring lives in a memory region its caller provides (heap, static array
 * or a shared file mapping) and holds only offsets, so another process can
 * map the same bytes and read them. struct prb is this process's handle on
 * such a region: pointers and the geometry validated when the region was
 * formatted or attached. The design, states and memory ordering are described
 * at the top of ringbuffer.c.
 *
 * Context: every function here is async-signal-safe and lock-free except
 * prb_wait(), which sleeps on a futex.
 */
#ifndef PRINTK_RINGBUFFER_H
#define PRINTK_RINGBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/atomics.h"
#include "base/fast_gate.h"
#include "base/hints.h"
#include "base/printk_limits.h"

/* Limits of one record, as the public API states them (printk_limits.h). */
#define PRB_TEXT_MAX ((unsigned)PK_TEXT_MAX)
#define PRB_DICT_MAX ((unsigned)PK_DICT_MAX)

/* Data-area size limits (bytes, powers of two). */
#define PRB_DATA_MIN_BITS     12 /* 4 KiB */
#define PRB_DATA_DEFAULT_BITS 17 /* 128 KiB, the kernel's default log_buf_len */
#ifdef PRINTK_RING_SMALL_IDS
#define PRB_DATA_MAX_BITS 17 /* 128 KiB: positions are only 15 bits wide */
#else
#define PRB_DATA_MAX_BITS 31 /* 2 GiB, the kernel's log_buf_len cap */
#endif
/* One descriptor per this many data bytes by default (the kernel's PRB_AVGBITS). */
#define PRB_AVG_TEXT_BITS 5

/* Record flags, as the kernel's enum printk_info_flags: the public values. */
#define PRB_FLAG_NEWLINE PK_REC_NEWLINE /* the text ended with a newline (stripped) */
#define PRB_FLAG_CONT	 PK_REC_CONT	/* a continuation fragment that could not join its line */
/* The text is a deferred record (deferred.h), the format string's reference
 * and binary arguments. The ring stores and copies it as bytes; the reading
 * layer (record_read.h) expands it, so readers above that never see it. */
#define PRB_FLAG_DEFERRED 0x80

/* Bytes of format string table (deferred.c's) after a data area of
 * 2^@data_bits bytes: a quarter of it, at least 4 KiB and at most 1 MiB.
 * The ring places the table and sizes its region; deferred.c owns what is
 * in it. */
static inline size_t prb_strtab_size(unsigned data_bits)
{
	size_t n = ((size_t)1 << data_bits) / 4;

	if (n < 4096)
		n = 4096;
	if (n > ((size_t)1 << 20))
		n = (size_t)1 << 20;
	return n;
}

/* The pool of lanes (lanes.c) after the format string table: one page of
 * control words, then PRB_LANES lanes of prb_lane_bytes() each. Sizes follow
 * from @data_bits alone, so a region's words never steer them. */
#define PRB_LANES	 16u
#define PRB_LANES_HDR	 4096u
/* A region gets the pool only when its data area is at least this large
 * (32 KiB): below it, 16 lanes of the 2 KiB a longest record needs would
 * hold more than the ring they merge into (36 KiB of pool for a 4 KiB log),
 * so a smaller log is made as version 3, without lanes (docs/lanes.md). */
#define PRB_LANES_MIN_DATA_BITS 15u
static inline size_t prb_lane_bytes(unsigned data_bits)
{
	size_t n = ((size_t)1 << data_bits) / 16;

	if (n < 2048)
		n = 2048;
	if (n > 65536)
		n = 65536;
	return n;
}

static inline size_t prb_lanes_size(unsigned data_bits)
{
	return PRB_LANES_HDR + PRB_LANES * prb_lane_bytes(data_bits);
}

/* prb_read() flags. */
#define PRB_READ_UNFINALIZED 0x1 /* also return the committed, not finalized newest record */
/* Skip (as lost) records still being written when newer ones exist: for the
 * panic path and post-mortem readers, whose writer may never finish them
 * (the kernel's panic-CPU rule). */
#define PRB_READ_SKIP_UNFINISHED 0x2

/* Set in prb_record.rflags by prb_read(). */
#define PRB_REC_UNFINALIZED 0x1 /* the newest record, still open for continuation */

/*
 * Who wrote a record. Continuation only joins a record written by the same
 * (pid, tid, ctx); ctx tells a signal handler from the code it interrupted
 * (caller.c: nesting depth and signal mask), so a handler's fragment never
 * joins the line the interrupted code was building.
 */
struct prb_caller {
	uint32_t pid;
	uint32_t tid;
	uint64_t ctx;
};

/* What a writer supplies besides text and dictionary. */
struct prb_meta {
	uint64_t ts_nsec;
	struct prb_caller caller;
	uint8_t level;
	uint8_t facility;
	uint8_t flags;
};

/* A record as a reader gets it back: every field, byte for byte. */
struct prb_record {
	uint64_t seq;
	uint64_t ts_nsec;
	struct prb_caller caller;
	uint8_t level;
	uint8_t facility;
	uint8_t flags;
	uint8_t rflags; /* PRB_REC_* */
	uint16_t text_len;
	uint16_t dict_len;
	char text[PRB_TEXT_MAX + 1]; /* NUL-terminated for convenience */
	char dict[PRB_DICT_MAX + 1]; /* KEY=VALUE pairs separated by NUL bytes */
};

/* Counters kept in the shared header. */
struct prb_stats {
	uint64_t reserve_failed; /* reservations refused: the oldest record was still being written */
	uint64_t corrupt;	 /* damaged descriptors skipped or repaired (lost records), and
				  * inconsistent header words seen */
	uint64_t holes;		 /* records whose writer died while writing them */
	uint64_t stolen;	 /* slots taken from reservations that never claimed them */
};

/*
 * A batch: complete records (final, no dictionary, no caller context) that
 * lanes.c's merger stores with one reservation (prb_store_batch()). The
 * text is read from @words, whole words (bytes past @len in the last one
 * are not stored): memory another process may share, loaded once each.
 * @words must point at those words when @len is not 0: the caller found
 * them (prb_store_batch() checks only @len).
 * @caller is the record's writer, what readers see as its caller; while a
 * record is being stored its claimer is the calling process (C1 in
 * ringbuffer.c): the ring's dead-writer check asks about the caller of
 * prb_store_batch(), never about @caller's process.
 */
/* 64: what the pool's journal holds (lanes.c). A merge keeps its batch in
 * the handle (struct prb_merge_scratch), not on its stack: readers merge
 * from signal handlers (printk's 6 KiB bound, test_deferred's
 * test_signal_stack_use). */
#define PRB_BATCH_MAX 64u
struct prb_batch_rec {
	pk_a64 *words;
	uint64_t ts_nsec;
	uint64_t caller; /* pid | tid << 32 */
	uint16_t len;
	uint8_t level;
	uint8_t flags;
	/* Stored (release) once the record is committed and counted in the
	 * journal, when set: the merger's lane read index. */
	pk_a64 *done_word;
	uint64_t done_value;
};

/* The merge's batch (lanes.c), kept in the handle: only the merge lock's
 * holder uses it, and that is one thread of one process at a time (a
 * signal handler that interrupts a merge does not get the lock; another
 * handle of the same log has its own). */
struct prb_merge_scratch {
	struct prb_batch_rec recs[PRB_BATCH_MAX];
	uint8_t lane_of[PRB_BATCH_MAX];
};

/*
 * This process's handle. Pointers and geometry are copied from the header
 * once, when it is validated, and never re-read from shared memory: a corrupted
 * header cannot later steer an access out of bounds.
 */
struct prb {
	struct prb_header *hdr;
	pk_a64 *descs;
	pk_a64 *data;
	uint8_t *user;	     /* the log layer's area inside the header page */
	size_t user_size;
	size_t region_size;
	uint64_t desc_count; /* N, a power of two */
	uint64_t data_units; /* data bytes >> PRB_UNIT_SHIFT, a power of two */
	uint64_t data_size;
	pk_a64 *strtab;	     /* the format string table (deferred.c), after the data */
	uint64_t strtab_size;
	pk_a64 *lanes;	     /* the pool of lanes (lanes.c); NULL: a region without */
	uint64_t lanes_size;
	uint64_t lane_bytes;
	/* A read-only handle's view of the lanes (lanes.c), made on first use
	 * and freed by prb_lanes_forget(); busy while a thread walks it. */
	void *_Atomic lane_view;
	pk_a32 lane_view_busy;
	/* The merge lock's word and the pool's merged count when a wait for
	 * that merger last gave up (lanes.c): while both stay so, the merger
	 * is stopped, and later stores and full lanes do not wait for it. */
	pk_a64 lane_stall_lock, lane_stall_merged;
	uint32_t id_base;    /* id of seq 0 */
	/* Set once a writer found the header words contradicting each other
	 * (prb_broken()): this handle's stores fail with -EUCLEAN from then on.
	 * Next to the geometry every store reads anyway. */
	pk_a32 broken;
	bool writable;
	/* Rung (from the writer that made a record readable, possibly in a
	 * signal handler) while prb_pollers_add() has registered pollers. */
	void (*_Atomic doorbell)(struct prb *rb);
	void *doorbell_arg;
	/* Called by a merge (lanes.c) once it committed lane records [seq,
	 * seq + n), whose levels are the bits of @levels, possibly in a signal
	 * handler: the console layer moves its idle mark past them when no
	 * console prints any of them, so that no console reads them one by
	 * one. NULL: nobody asked. */
	void (*_Atomic merged)(struct prb *rb, uint64_t seq, uint64_t n, unsigned levels);
	/*
	 * Shared logs (several writer processes): this process's writer id,
	 * stored in every record it claims, and the oracle that says whether
	 * the writer with a given id still lives (1) or died (0). Unset (0,
	 * NULL) for a log only this process writes: records are never reclaimed.
	 */
	uint16_t owner;
	int (*owner_alive)(struct prb *rb, unsigned owner, uint32_t pid);
	void *owner_arg;
	/* A read-only handle's own next_seq hint and stall clock (it cannot
	 * write the header's). */
	pk_a64 local_next_hint;
	/* Unclaimed slots this read-only handle decided to pass (id + 1; it
	 * cannot steal them, so it must remember). */
	pk_a64 local_skip[8];
	pk_a32 local_skip_next;
	pk_a64 local_stall[4][2];
	/* Last: big, and only a merge touches it. */
	struct prb_merge_scratch merge_scratch; /* lanes.c, under the merge lock */
};

/* Bytes of region needed for a data area of 2^data_bits and 2^desc_bits
 * descriptors (desc_bits 0: the default, data_bits - PRB_AVG_TEXT_BITS). */
size_t prb_region_size(unsigned data_bits, unsigned desc_bits);

/* Format @mem as an empty ring. -EINVAL on bad sizes or alignment. */
int prb_format(struct prb *rb, void *mem, size_t mem_size, unsigned data_bits,
	       unsigned desc_bits);
/* The same for memory known to be all zero (a fresh mapping): only the
 * header is written, so a large ring costs only the pages it uses. */
int prb_format_fresh(struct prb *rb, void *mem, size_t mem_size, unsigned data_bits,
		     unsigned desc_bits);

/*
 * Attach to a region formatted earlier (possibly by another process).
 * -EPROTO: not a libprintk log (bad magic); -EPROTONOSUPPORT: another ABI
 * version or id/position width; -EBADMSG: inconsistent geometry;
 * -ENOSPC: the region is shorter than the header says (truncated file).
 */
int prb_attach(struct prb *rb, void *mem, size_t mem_size, bool writable);

/*
 * Validate a header read on its own (@page_len bytes, the header page) for
 * a region of @region_len bytes, before mapping it. Errors as prb_attach();
 * @rb gets the geometry (its pointers point into @page: read @rb->user only).
 */
int prb_check_header(struct prb *rb, void *page, size_t page_len, size_t region_len);

/* Human-readable reason for an error from prb_format()/prb_attach(). */
const char *prb_strerror(int err);

/*
 * Store one record. @final commits and finalizes it (the line is complete);
 * otherwise it stays committed and may be extended by prb_extend() from the
 * same caller until anyone stores another record.
 * Returns 0 and the record's seq in *@seq_out (may be NULL), -E2BIG when text
 * or dictionary is over its limit, -EINVAL on bad arguments, -ENOBUFS when the
 * oldest record is still being written and nothing can be overwritten (or
 * when this writer stalled in its record so long that it was taken from it:
 * D9 in ringbuffer.c), and
 * -EUCLEAN when the ring is broken (prb_broken()): its head and tail words
 * contradict each other, so nothing can be stored in it any more.
 *
 * Damage confined to one descriptor does not break the ring: a writer that
 * meets a descriptor it cannot make sense of turns it into a hole (a lost
 * record, counted in prb_stats.corrupt) and goes on. Every loop steered by
 * the ring's contents is bounded.
 */
int prb_store(struct prb *rb, const struct prb_meta *meta, const char *text, size_t text_len,
	      const char *dict, size_t dict_len, bool final, uint64_t *seq_out);

/*
 * True once this handle found the ring broken (see prb_store()). The log
 * layer may then log elsewhere; readers still read what validates.
 */
bool prb_broken(struct prb *rb);

/*
 * Whether the ring's oldest record is being written by this process: a
 * writer of ours between its reservation and its commit (on a private ring,
 * any writer). What blocks a store that failed with -ENOBUFS; a thread of
 * ours taken off the CPU there is worth waiting for, another process may be
 * stopped for good. A snapshot, for that decision only.
 */
bool prb_tail_writer_local(struct prb *rb);

/*
 * The memory under @rb was replaced by a fresh ring of the same geometry
 * (logfile.c, when a file log is lost or damaged): forget what this handle
 * concluded about the old one, its broken state included. Async-signal-safe.
 */
void prb_memory_replaced(struct prb *rb);

/*
 * Append @len bytes to the newest record if it is still open and was written
 * by @caller (reserve-in-last); @final finalizes it and ORs @add_flags into its
 * flags. Returns 0 and the record's seq, -ENOENT when there is no such record
 * (another record came in between, it is finalized, or another caller wrote
 * it), -E2BIG when the text would exceed @max_text, -ENOBUFS when no space
 * could be made or the record was taken from a writer stalled in it.
 */
int prb_extend(struct prb *rb, const struct prb_caller *caller, const char *text, size_t len,
	       size_t max_text, bool final, uint8_t add_flags, uint64_t *seq_out);

/*
 * In the child after fork(), on a ring private to this process: records that
 * other threads of the parent were writing will never be finished here; make
 * them holes so readers and writers go past them. Not for shared rings.
 */
void prb_abandon_unfinished(struct prb *rb);

/*
 * For a writer that found no other writer of a shared ring alive (the first
 * one after a crash): turn every record between tail and head that cannot
 * be read, and every reservation nobody will finish, into a hole, counted
 * as at run time. Returns how many. @scratch is a record buffer to copy into.
 */
unsigned prb_recover(struct prb *rb, struct prb_record *scratch);

/*
 * Store @n records (at most PRB_BATCH_MAX, and at most a quarter of the
 * ring's descriptors and data) as n prb_store() calls in a row would store
 * them, with one reservation: ids, seqs and blocks consecutive. The
 * journal (three words the caller keeps, in memory that outlives the process
 * when the ring does) gets the first record's id + 1 (word 0, tentative
 * until the reservation is made: B8) with the position its blocks are
 * placed from and the head the reservation leaves, before anything is
 * claimed, and the number committed (word 1) after each commit, so that records of
 * a batch whose writer was killed can be told apart and finished
 * (prb_batch_resume()): below that number stored, at it
 * prb_batch_stored() decides, after it not stored yet.
 * Returns how many were stored (a prefix of @recs), or a negative errno
 * when none was: -ENOBUFS (the ring refuses, as for prb_store()),
 * -EUCLEAN, -E2BIG (too many, or too large for the ring), -EINVAL, -EPERM.
 */
int prb_store_batch(struct prb *rb, const struct prb_batch_rec *recs, unsigned n, pk_a64 *journal);

/* Whether the record reserved as @id (a batch journal's id + k) is in the
 * ring, committed, with this time and caller. False also once the ring
 * overwrote it. */
bool prb_batch_stored(struct prb *rb, uint64_t id, uint64_t ts_nsec, uint64_t caller);
/* The same, telling apart (-1) a slot that moved on to a later record
 * (overwritten: nothing can be told) from one that holds another (0). */
int prb_batch_check(struct prb *rb, uint64_t id, uint64_t ts_nsec, uint64_t caller);

/*
 * Finish the batch named by @journal, whose writer died (B7 in
 * ringbuffer.c): @recs are the same @n records. Only for the holder of the
 * right the journal belongs to (lanes.c's merge lock). Returns how many of
 * the batch are stored now (a prefix), or a negative errno.
 */
int prb_batch_resume(struct prb *rb, const struct prb_batch_rec *recs, unsigned n, pk_a64 *journal);

/* Whether the journal of a batch of @n names a reservation (B8 in
 * ringbuffer.c: a tentative name is checked against the ring), and *@id0,
 * the batch's first id. */
bool prb_batch_first(struct prb *rb, pk_a64 *journal, unsigned n, uint64_t *id0);

/* Whether the slot reserved as @id can still be filled by a resumed batch:
 * not claimed yet, or claimed and not committed. */
bool prb_batch_open(struct prb *rb, uint64_t id);

/* The id a record of sequence number @seq has (or will have), and how
 * many ids @to lies after @from (modulo the ids' width). */
uint64_t prb_seq_id(struct prb *rb, uint64_t seq);
uint64_t prb_id_distance(struct prb *rb, uint64_t from, uint64_t to);

/* Finalize the newest record if it is still open (e.g. at exit or on panic). */
void prb_finalize_last(struct prb *rb);
/* The same, only if the newest record was written by process @pid (at exit:
 * on a shared log another process's open line is its own to end). */
void prb_finalize_last_of(struct prb *rb, uint32_t pid);

/*
 * Read the record with sequence number @seq or, if it was overwritten, the
 * oldest one after it: r->seq - seq records were lost. Holes (records whose
 * data never arrived) and damaged descriptors count as lost. Returns 0, or
 * -EAGAIN when no record at or after @seq is readable yet (also when the
 * header words contradict each other and @seq is not below the head's
 * record: a reader never goes back to records it has passed), or -EUCLEAN
 * when neither head nor tail can be trusted to bound the search.
 */
int prb_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags);

/*
 * The fast path of a reader that dumps many records and needs only their
 * text and time (udmesg): if the record @seq is finalized and in the ring,
 * copy its text to @dst, which must have room for PRB_TEXT_MAX + 8 bytes
 * (whole 16-byte units are copied, at most 1024 bytes; nothing is
 * NUL-terminated), set *@ts_nsec and *@flags (the record's PRB_FLAG_*) and
 * return the text length. -EAGAIN in every other case (not written yet,
 * open, overwritten, a hole, a racing writer, bad geometry): prb_read() then
 * sorts it out. Like prb_read(), it copies a deferred record's bytes as
 * they are (PRB_FLAG_DEFERRED in *@flags): pk_rec_read_text()
 * (record_read.h) is the reader's call.
 */
int prb_read_text(struct prb *rb, uint64_t seq, uint64_t *ts_nsec, char *dst, uint8_t *flags);

/*
 * Where the record @seq stands, without copying it (a console loop passes
 * records of a level it does not print by this alone): PRB_PEEK_FINAL
 * (*@level set) when it is finalized and in the ring; PRB_PEEK_PENDING when
 * it is not reserved yet, or reserved, committed or open but not finalized:
 * its writer is still at it; PRB_PEEK_GONE when it was overwritten, is a
 * hole, or its slot makes no sense.
 */
enum prb_peek { PRB_PEEK_FINAL, PRB_PEEK_PENDING, PRB_PEEK_GONE };
enum prb_peek prb_peek(struct prb *rb, uint64_t seq, unsigned *level);

/*
 * How many records from @seq on (at most @max) are finalized, in the ring,
 * and of a level whose bit is set in @levels (bit N: level N), each checked
 * as prb_peek() checks one: a console passes a run of records it does not
 * print with one call. 0 when @seq itself is not such a record.
 */
uint64_t prb_skip_levels(struct prb *rb, uint64_t seq, unsigned levels, uint64_t max);

/* Sequence number of the oldest record still in the ring. */
uint64_t prb_first_seq(struct prb *rb);

/* Sequence number after the newest readable (finalized) record. */
uint64_t prb_next_seq(struct prb *rb);

/* Sequence number the next reservation will get. */
uint64_t prb_next_reserve_seq(struct prb *rb);

/* True if @seq is the newest reserved record (one load; for fast paths). */
bool prb_is_newest(struct prb *rb, uint64_t seq);

/*
 * Sleep until a record with sequence number >= @seq may be readable, or
 * @timeout_ns passes (negative: no limit). Returns 0, -ETIMEDOUT or -EINTR.
 * Writers pay for the wake-up only while someone waits.
 */
int prb_wait(struct prb *rb, uint64_t seq, int64_t timeout_ns);

void prb_get_stats(struct prb *rb, struct prb_stats *st);

/* Diagnostics (tests, tools): the state of the slot of @seq in words. */
int prb_describe_slot(struct prb *rb, uint64_t seq, char *buf, size_t size);

/*
 * Poll-style waiting: a reader that wants to be told when records become
 * readable registers with prb_pollers_add(rb, 1) (and -1 when done); while
 * any is registered, every writer that makes a record readable calls the
 * handle's doorbell. The doorbell must be async-signal-safe. After
 * registering, check for records once more before sleeping.
 */
void prb_set_doorbell(struct prb *rb, void (*bell)(struct prb *rb), void *arg);
void prb_pollers_add(struct prb *rb, int delta);

/*
 * The retire guard: one per process, for every ring. A writer that must
 * retire the oldest record (FINAL, number @seq) to make room calls it first,
 * holding no record of its own (prb_store) or only the newest one
 * (prb_extend). It returns 0 to let the record go, or nonzero after it
 * waited (for a reader that had not copied @seq yet): the writer then looks
 * at head and tail again. The guard decides itself whether its caller may
 * wait (a signal handler, a crash path may not). NULL: no guard, one
 * relaxed load per retired record.
 */
void prb_set_retire_guard(int (*guard)(struct prb *rb, uint64_t seq));

/*
 * Test points: named places in the writer path where a test can run code
 * (act as a signal handler that interrupts the writer, or kill the process)
 * deterministically. The hook is one relaxed load when unset.
 */
enum prb_testpoint {
	PRB_TP_HEAD_RESERVED, /* head CAS won, slot not yet claimed */
	PRB_TP_CLAIMED,	      /* slot claimed (RESERVED), content not yet written */
	PRB_TP_BEFORE_COMMIT, /* content written, not yet committed */
	PRB_TP_REOPENED,      /* prb_extend reopened the newest record */
	PRB_TP_BATCH_COMMITTED, /* prb_store_batch committed a record and counted it */
	PRB_TP_BATCH_NAMED,   /* prb_store_batch named its reservation, before its head CAS */
	PRB_TP_MERGE_JOURNAL, /* lanes.c: a batch named in the pool, nothing reserved yet */
	PRB_TP_MERGE_ADVANCED, /* lanes.c: one lane moved past its stored records */
	PRB_TP_STORE_WAITS_MERGE, /* lanes.c: a store found another merge at work */
};
void prb_set_testpoint_hook(void (*hook)(enum prb_testpoint tp));
/* Run the hook at @tp (lanes.c's points). */
void prb_testpoint(enum prb_testpoint tp);

/* ------------------------------------------------------------ lanes -- */
/* lanes.c: per-thread single-writer lanes in the pool after the format
 * string table; docs/lanes.md. */

/* prb_next_seq() and prb_read() of the ring alone; the public two (lanes.c)
 * also take in the lanes' records. */
uint64_t prb_ring_next_seq(struct prb *rb);

/* The layout version of @rb's region, as attaching validated it: 4 with the
 * pool of lanes, 3 without (an older release's, or a log too small for
 * lanes). */
unsigned prb_format_version(const struct prb *rb);
int prb_ring_read(struct prb *rb, uint64_t seq, struct prb_record *r, unsigned flags);

/* Lanes on (1) or off (0) for this process's writers; on by default. */
void prb_lanes_enable(int on);
static inline int prb_lanes_enabled(void)
{
	return !(pk_fast_gate_load() & PK_GATE_LANES_OFF);
}

/*
 * Store a complete deferred record (@blob, @len bytes, PRB_FLAG_DEFERRED)
 * of @level and time @ts in the calling thread's lane of @rb, claiming one
 * on first use. Plain stores and one release of the lane's write index.
 * 0: stored; -ENOSPC: the lane is full; -EBUSY: no lane (lanes off, none
 * free, a region without lanes, a read-only ring), or this thread is inside
 * a lane store already (a signal handler that interrupted it): the caller
 * stores in the ring instead. Async-signal-safe; a lane is claimed only at
 * @may_claim (not from a signal handler).
 */
int prb_lane_store(struct prb *rb, uint64_t ts, uint8_t level, const char *blob, size_t len,
		   bool may_claim);

/*
 * Move lane records into the ring, oldest time first, up to the time the
 * merge began (records of lanes whose owner is gone: all). Takes the
 * pool's merge lock without waiting: 0 when another merger holds it or
 * nothing was pending. Returns how many records it stored. Writable
 * handles only; async-signal-safe.
 */
int prb_lanes_merge(struct prb *rb);
/* Pool word 1 (lanes.c's P_USED): set once a lane was ever claimed. */
#define PRB_LANES_USED_WORD 1
/*
 * Before a ring store: the lane records merged, so that the store's seq
 * comes after every lane record a read-only reader may have been shown
 * (docs/lanes.md). Another thread's or process's merge at work is waited
 * for, as a full lane waits (at most 1 s: a merger stopped longer is
 * passed); a signal handler that interrupted its own thread's merge does
 * not wait. Returns how many records the last round merged, or
 * -ETIMEDOUT.
 */
int prb_lanes_merge_before_store(struct prb *rb);
/* The same for stores, inline: the common answer (no pool, a read-only
 * handle, no lane ever claimed) without a call. */
static inline void prb_lanes_merge_pending(struct prb *rb)
{
	if (rb->lanes && rb->writable && pk_load_relaxed(&rb->lanes[PRB_LANES_USED_WORD]))
		prb_lanes_merge_before_store(rb);
}

/* After prb_lane_store() found the lane full: merge, waiting at most 1 s
 * while another merger is at work or the ring refuses stores. 0: there
 * may be room now. Otherwise the caller stores in the ring only when its
 * own lane is empty (prb_lane_own_empty(): its order would break else),
 * and gives the line up, counted, when it is not; either way
 * prb_lane_fell_back() counts it in the lane's full counter. */
int prb_lane_make_room(struct prb *rb);
bool prb_lane_own_empty(struct prb *rb);
void prb_lane_fell_back(struct prb *rb);

/* Finish the batch of a merger that died (its journal), if the merge lock
 * can be had without waiting; nothing else is merged. For the first writer
 * after a crash, before prb_recover() makes holes of reservations nobody
 * finishes (logfile.c). */
void prb_lanes_finish(struct prb *rb);

/* A read-only handle's view: how many lane records wait to be merged, and
 * the @k-th of them in merge order as record @seq_base + @k (0, or
 * -EAGAIN). */
uint64_t prb_lanes_view_count(struct prb *rb);
int prb_lanes_view_read(struct prb *rb, uint64_t k, uint64_t seq_base, struct prb_record *r);

/* @rb's memory is going away: threads of this process that exit later
 * leave its lanes alone. */
void prb_lanes_forget(struct prb *rb);

/* Counters of the pool (untrusted on a shared file). */
struct prb_lanes_stats {
	uint64_t in_use;   /* lanes with an owner */
	uint64_t pending;  /* records not merged yet */
	uint64_t merged;   /* records moved into the ring */
	uint64_t full;	   /* records that found their lane full (stored in the ring) */
	uint64_t corrupt;  /* lane contents that did not validate (records lost) */
};
void prb_lanes_stats(struct prb *rb, struct prb_lanes_stats *st);

#endif
