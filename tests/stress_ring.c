// SPDX-License-Identifier: MIT
/*
 * stress_ring.c - linearizability-style stress of the record ring
 * (src/ring/ringbuffer.c); docs/design.md, "Testing the ring", says why.
 *
 * How: 2, 4 or 8 writer threads store self-checking records into small rings
 * (4 KiB and 16 KiB of data, default or only 64 descriptors) so that wrap,
 * overwrite and tail pushing happen on nearly every record, while one or two
 * reader threads follow with prb_read() (the second one through a read-only
 * handle, as a reader in another process would). Every record's text encodes
 * (writer, counter, length, checksum) and its bytes, dictionary and metadata
 * are all derived from a PRNG seeded by (writer, counter), so a reader can
 * re-derive the whole record and spot a torn copy, and a verifier can map
 * every seq back to the store that produced it.
 *
 * Checked online by the readers: no torn record (text, dictionary, every
 * metadata field), seqs strictly increase, each writer's counters strictly
 * increase and continue exactly where they left off when the reader lost
 * nothing in between, rflags is never UNFINALIZED, and a record whose writer
 * already returned from a final commit is never "not yet" (-EAGAIN).
 *
 * Checked afterwards from the writers' private logs (the seq prb_store()
 * returned for every success, and tickets taken from a global counter before
 * the reservation and after the commit):
 *  - density: every seq in [0, next_reserve_seq) belongs to exactly one
 *    successful store; failed stores (-ENOBUFS) consume none, and their number
 *    equals the reserve_failed counter;
 *  - real-time order: after_commit(a) < before_reserve(b) implies seq(a) < seq(b);
 *  - exact loss accounting per reader: read + lost = next_seq - start, each
 *    seq is either read with the (writer, counter) its store logged or lies in
 *    a range the reader was told was lost, and the per-writer counter gaps add
 *    up to the reported loss;
 *  - everything is finalized once the writers are done (next_seq = next
 *    reserve seq) and no record was counted corrupt.
 *
 * The continuation configurations build lines from 1-6 self-describing
 * fragments: prb_store(final=false) of the first, prb_extend() of the rest
 * (the last one final). When another writer's record came in between,
 * prb_extend() says -ENOENT and the fragment is stored as a record of its own
 * with PRB_FLAG_CONT. A record must then hold a run of consecutive whole
 * fragments of one line, exactly as many as its writer logged as joined (a
 * reader never sees a record that is extended afterwards), with CONT and
 * NEWLINE flags that match where the run starts and ends.
 *
 * With jitter, the ring's test points make a writer yield its CPU now and
 * then between winning its reservation and committing, so that readers, tail
 * pushers and other writers meet RESERVED records far more often than the
 * few nanoseconds of a normal store would allow.
 *
 * Duration: PRINTK_STRESS_MS per configuration (default 1500 ms, less under
 * ThreadSanitizer), and at most REC_CAP records, so memory stays bounded.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "payload.h"
#include "testutil.h"
#include "ring/ringbuffer.h"

#define MAX_WRITERS 8
#define MAX_READERS 2
#define REC_CAP	    (1u << 21) /* records per configuration: bounds the side tables */

#define REC_HDR	 26 /* "Rww.cccccccc.lll.kkkkkkkk|" */
#define FRAG_HDR 27 /* "Fww.llllll.i/n.pp.kkkkkkkk|" */
#define FRAG_MAX 6

struct config {
	const char *name;
	unsigned writers;
	unsigned readers;
	unsigned data_bits;
	unsigned desc_bits; /* 0: default */
	bool dicts;
	bool cont;
	bool jitter; /* yield now and then inside a reservation (test points) */
};

/* One successful prb_store(), as its writer logged it. */
struct wentry {
	uint32_t seq;
	uint32_t key;	 /* counter, or line << 8 | first fragment */
	uint32_t before; /* ticket taken before the reservation */
	uint32_t after;	 /* ticket taken after the commit returned */
	uint8_t joined;	 /* fragments prb_extend() added to it */
};

struct writer {
	pthread_t th;
	unsigned id;
	struct wentry *log;
	size_t n, cap;
	uint64_t enobufs; /* prb_store() and prb_extend() -ENOBUFS */
	uint64_t extend_ok, extend_enoent;
};

struct reader {
	pthread_t th;
	unsigned id;
	struct prb handle;
	bool use_wait;
	uint64_t *seen; /* per seq: packed (writer, fragments, key) + 1 bit, or 0 */
	uint64_t read, lost, waits;
	bool have[MAX_WRITERS];
	uint64_t last_key[MAX_WRITERS]; /* last (line, fragment) or counter seen */
	uint64_t lost_at[MAX_WRITERS];	/* this->lost when it was seen */
	unsigned last_n[MAX_WRITERS];	/* fragments of that line */
};

static struct {
	const struct config *cfg;
	struct prb rb;
	void *mem;
	size_t mem_size;
	uint32_t pid;
	atomic_bool stop;
	atomic_uint writers_exited; /* writers that stopped on their own (record cap) */
	atomic_bool writers_done;
	_Atomic uint64_t end_seq;
	_Atomic uint32_t ticket;
	_Atomic uint64_t *visible; /* bit per seq: its writer returned from a final commit */
	pthread_barrier_t start;
	struct writer w[MAX_WRITERS];
	struct reader r[MAX_READERS];
} run;

/* ------------------------------------------------------------ failures -- */

/* Threads other than the test's own may not use cmocka asserts: they count
 * failures with testutil's thread_fail() and the test asserts on the count. */
#define report(...) thread_fail(run.cfg ? run.cfg->name : "?", __VA_ARGS__)

/* ------------------------------------------------------------- records -- */

static const char alphabet[64] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

static void fill(struct rng *g, char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = alphabet[rng_next(g) & 63];
}

static uint64_t ts_of(unsigned w, uint64_t key)
{
	return (uint64_t)w << 48 | key;
}

/*
 * The record of writer @w number @c: mostly 26-125 bytes, one in 16 up to
 * 725 (wrap-skips at the end of the data array), with a dictionary on about
 * one record in four when @dicts. Returns the text length.
 */
static size_t make_record(unsigned w, uint32_t c, bool dicts, char *text, char *dict,
			  size_t *dict_len)
{
	struct rng g = rng_for(w, c);
	uint64_t r = rng_next(&g);
	size_t len = REC_HDR + ((r & 15) == 0 ? (r >> 8) % 700 : (r >> 8) % 100);

	fill(&g, text + REC_HDR, len - REC_HDR);
	text[0] = 'R';
	put_hex(text + 1, w, 2);
	text[3] = '.';
	put_hex(text + 4, c, 8);
	text[12] = '.';
	put_hex(text + 13, len, 3);
	text[16] = '.';
	put_hex(text + 17, fnv1a(text + REC_HDR, len - REC_HDR), 8);
	text[25] = '|';

	*dict_len = 0;
	if (dicts && ((r >> 4) & 3) == 0) {
		size_t n = (size_t)((r >> 40) % 48);
		char *p = dict;

		memcpy(p, "W=", 2);
		put_hex(p + 2, w, 2);
		p[4] = '\0';
		memcpy(p + 5, "C=", 2);
		put_hex(p + 7, c, 8);
		p[15] = '\0';
		memcpy(p + 16, "D=", 2);
		fill(&g, p + 18, n);
		*dict_len = 18 + n;
	}
	return len;
}

static unsigned line_frags(unsigned w, uint32_t line)
{
	struct rng g = rng_for(w, (uint64_t)line << 8 | 0xff);

	return 1 + (unsigned)(rng_next(&g) % FRAG_MAX);
}

/* Fragment @i of @n of writer @w's line @line: 27-87 bytes. */
static size_t make_frag(unsigned w, uint32_t line, unsigned i, unsigned n, char *p)
{
	struct rng g = rng_for(w, (uint64_t)line << 8 | i);
	size_t plen = (size_t)(rng_next(&g) % 61);

	fill(&g, p + FRAG_HDR, plen);
	p[0] = 'F';
	put_hex(p + 1, w, 2);
	p[3] = '.';
	put_hex(p + 4, line, 6);
	p[10] = '.';
	put_hex(p + 11, i, 1);
	p[12] = '/';
	put_hex(p + 13, n, 1);
	p[14] = '.';
	put_hex(p + 15, plen, 2);
	p[17] = '.';
	put_hex(p + 18, fnv1a(p + FRAG_HDR, plen), 8);
	p[26] = '|';
	return FRAG_HDR + plen;
}

/* ------------------------------------------------------------- writers -- */

static _Thread_local unsigned jitter_count;

static void jitter_hook(enum prb_testpoint tp)
{
	(void)tp;
	if (++jitter_count % 251 == 0)
		sched_yield();
}

static uint32_t ticket(void)
{
	return atomic_fetch_add(&run.ticket, 1);
}

static void mark_visible(uint64_t seq)
{
	if (seq < REC_CAP)
		atomic_fetch_or_explicit(&run.visible[seq / 64], 1ull << (seq % 64),
					 memory_order_release);
}

static bool is_visible(uint64_t seq)
{
	if (seq >= REC_CAP)
		return false;
	return atomic_load_explicit(&run.visible[seq / 64], memory_order_acquire) &
	       (1ull << (seq % 64));
}

static struct wentry *log_store(struct writer *wr, uint64_t seq, uint32_t key, uint32_t before,
				uint32_t after)
{
	if (seq >= REC_CAP) {
		report("writer %u: seq %llu beyond every seq this run can produce", wr->id,
		       (unsigned long long)seq);
		seq = REC_CAP - 1;
	}
	struct wentry *e = &wr->log[wr->n++];

	e->seq = (uint32_t)seq;
	e->key = key;
	e->before = before;
	e->after = after;
	e->joined = 0;
	return e;
}

static void bad_extend_seq(const struct writer *wr, uint64_t seq, uint64_t line_seq)
{
	report("writer %u: prb_extend gave seq %llu, line is at %llu%s", wr->id,
	       (unsigned long long)seq, (unsigned long long)line_seq,
	       prb_first_seq(&run.rb) > line_seq ? " (overwritten since: see stress_signal.c)"
						 : "");
}

static bool stopping(void)
{
	return atomic_load_explicit(&run.stop, memory_order_relaxed);
}

static void *writer_plain(void *arg)
{
	struct writer *wr = arg;
	char text[PRB_TEXT_MAX], dict[PRB_DICT_MAX];
	struct prb_meta m = { .caller = { .pid = run.pid, .tid = wr->id, .ctx = 0 } };

	pthread_barrier_wait(&run.start);
	for (uint32_t c = 0; wr->n < wr->cap && !stopping();) {
		size_t dl, tl = make_record(wr->id, c, run.cfg->dicts, text, dict, &dl);
		uint64_t seq = ~0ull;

		m.ts_nsec = ts_of(wr->id, c);
		m.level = c & 7;
		m.facility = (uint8_t)wr->id;
		m.flags = PRB_FLAG_NEWLINE;

		uint32_t before = ticket();
		int rc = prb_store(&run.rb, &m, text, tl, dl ? dict : NULL, dl, true, &seq);
		uint32_t after = ticket();

		if (rc == -ENOBUFS) {
			/* The oldest record is being written: let its writer run. */
			wr->enobufs++;
			sched_yield();
			continue;
		}
		if (rc != 0) {
			report("writer %u: prb_store: %d", wr->id, rc);
			break;
		}
		log_store(wr, seq, c, before, after);
		mark_visible(seq);
		c++;
	}
	return NULL;
}

/*
 * Lines of fragments. A started line is always completed, even after the stop
 * request: at the end every record must be finalized by its own writer.
 */
static void *writer_cont(void *arg)
{
	struct writer *wr = arg;
	const struct prb_caller me = { .pid = run.pid, .tid = wr->id, .ctx = 0 };
	struct prb_meta m = { .caller = me };
	char frag[FRAG_HDR + 64];

	pthread_barrier_wait(&run.start);
	for (uint32_t line = 0; wr->n + FRAG_MAX <= wr->cap && !stopping(); line++) {
		unsigned n = line_frags(wr->id, line);
		struct wentry *cur = NULL;
		uint64_t cur_seq = 0;

		for (unsigned i = 0; i < n; i++) {
			size_t fl = make_frag(wr->id, line, i, n, frag);
			bool last = i == n - 1;
			uint64_t seq = ~0ull;

			for (;;) {
				int rc;

				if (cur) {
					rc = prb_extend(&run.rb, &me, frag, fl, PRB_TEXT_MAX, last,
							last ? PRB_FLAG_NEWLINE : 0, &seq);
					if (rc == 0) {
						/* Its own seq even if overwritten right after
						 * the commit (bug found here: stress_signal.c). */
						if (seq != cur_seq)
							bad_extend_seq(wr, seq, cur_seq);
						wr->extend_ok++;
						cur->joined++;
						if (last)
							mark_visible(cur_seq);
						break;
					}
					if (rc == -ENOBUFS) {
						wr->enobufs++;
						sched_yield();
						continue;
					}
					if (rc != -ENOENT) {
						report("writer %u: prb_extend: %d", wr->id, rc);
						return NULL;
					}
					wr->extend_enoent++;
					cur = NULL;
				}
				uint32_t key = line << 8 | i;

				m.ts_nsec = ts_of(wr->id, key);
				m.level = line & 7;
				m.facility = (uint8_t)wr->id;
				m.flags = (uint8_t)((i ? PRB_FLAG_CONT : 0) |
						    (last ? PRB_FLAG_NEWLINE : 0));

				uint32_t before = ticket();

				rc = prb_store(&run.rb, &m, frag, fl, NULL, 0, last, &seq);

				uint32_t after = ticket();

				if (rc == -ENOBUFS) {
					wr->enobufs++;
					sched_yield();
					continue;
				}
				if (rc != 0) {
					report("writer %u: prb_store: %d", wr->id, rc);
					return NULL;
				}
				cur = log_store(wr, seq, key, before, after);
				cur_seq = seq;
				if (last)
					mark_visible(seq);
				break;
			}
		}
	}
	atomic_fetch_add(&run.writers_exited, 1);
	return NULL;
}

/* ------------------------------------------------------------- readers -- */

static uint64_t pack_seen(unsigned w, unsigned nfrags, uint64_t key)
{
	return 1ull << 63 | (uint64_t)w << 52 | (uint64_t)nfrags << 44 | key;
}

/* Per-writer order: exact continuation when nothing was lost since the
 * writer's previous record, otherwise strictly later. */
static void check_order(struct reader *rd, const struct prb_record *r, unsigned w, uint64_t key,
			uint64_t expect_next, uint64_t last_key, unsigned n)
{
	if (rd->have[w]) {
		if (rd->lost == rd->lost_at[w] && key != expect_next)
			report("reader %u seq %llu: writer %u key %#llx follows %#llx with nothing "
			       "lost in between (expected %#llx)",
			       rd->id, (unsigned long long)r->seq, w, (unsigned long long)key,
			       (unsigned long long)rd->last_key[w],
			       (unsigned long long)expect_next);
		else if (key <= rd->last_key[w])
			report("reader %u seq %llu: writer %u key %#llx not after %#llx", rd->id,
			       (unsigned long long)r->seq, w, (unsigned long long)key,
			       (unsigned long long)rd->last_key[w]);
	}
	rd->have[w] = true;
	rd->last_key[w] = last_key;
	rd->lost_at[w] = rd->lost;
	rd->last_n[w] = n;
}

static void check_meta(struct reader *rd, const struct prb_record *r, unsigned w, uint64_t key,
		       uint8_t level, uint8_t flags)
{
	if (r->caller.pid != run.pid || r->caller.tid != w || r->caller.ctx != 0 ||
	    r->ts_nsec != ts_of(w, key) || r->level != level || r->facility != w ||
	    r->flags != flags || r->rflags != 0)
		report("reader %u seq %llu: metadata torn: pid %u tid %u ctx %u ts %#llx level %u "
		       "facility %u flags %#x rflags %#x (writer %u key %#llx, flags %#x)",
		       rd->id, (unsigned long long)r->seq, (unsigned)r->caller.pid,
		       (unsigned)r->caller.tid, (unsigned)r->caller.ctx,
		       (unsigned long long)r->ts_nsec, r->level, r->facility, r->flags, r->rflags,
		       w, (unsigned long long)key, flags);
}

static void check_plain(struct reader *rd, const struct prb_record *r)
{
	char text[PRB_TEXT_MAX], dict[PRB_DICT_MAX];
	uint64_t w, c, len, sum;
	size_t dl;

	if (r->text_len < REC_HDR || r->text[0] != 'R' || r->text[3] != '.' || r->text[12] != '.' ||
	    r->text[16] != '.' || r->text[25] != '|' || !get_hex(r->text + 1, 2, &w) ||
	    !get_hex(r->text + 4, 8, &c) || !get_hex(r->text + 13, 3, &len) ||
	    !get_hex(r->text + 17, 8, &sum) || w >= run.cfg->writers) {
		report("reader %u seq %llu: garbled header (len %u): %.26s", rd->id,
		       (unsigned long long)r->seq, r->text_len, r->text);
		return;
	}
	if (len != r->text_len || sum != fnv1a(r->text + REC_HDR, r->text_len - REC_HDR)) {
		report("reader %u seq %llu: torn text: header says len %llu sum %#llx, got len %u",
		       rd->id, (unsigned long long)r->seq, (unsigned long long)len,
		       (unsigned long long)sum, r->text_len);
		return;
	}
	size_t tl = make_record((unsigned)w, (uint32_t)c, run.cfg->dicts, text, dict, &dl);

	if (tl != r->text_len || memcmp(text, r->text, tl) != 0 || dl != r->dict_len ||
	    memcmp(dict, r->dict, dl) != 0) {
		report("reader %u seq %llu: record (%llu, %llu) differs from what was written",
		       rd->id, (unsigned long long)r->seq, (unsigned long long)w,
		       (unsigned long long)c);
		return;
	}
	check_meta(rd, r, (unsigned)w, c, c & 7, PRB_FLAG_NEWLINE);
	check_order(rd, r, (unsigned)w, c, rd->last_key[w] + 1, c, 1);
	rd->seen[r->seq] = pack_seen((unsigned)w, 1, c);
}

static void check_cont(struct reader *rd, const struct prb_record *r)
{
	char frag[FRAG_HDR + 64];
	size_t off = 0;
	unsigned nfr = 0, w0 = 0, i0 = 0, iend = 0, n0 = 0;
	uint64_t line0 = 0;

	while (off < r->text_len) {
		const char *p = r->text + off;
		uint64_t w, line, i, n, plen, sum;

		if (r->text_len - off < FRAG_HDR || p[0] != 'F' || p[3] != '.' || p[10] != '.' ||
		    p[12] != '/' || p[14] != '.' || p[17] != '.' || p[26] != '|' ||
		    !get_hex(p + 1, 2, &w) || !get_hex(p + 4, 6, &line) ||
		    !get_hex(p + 11, 1, &i) || !get_hex(p + 13, 1, &n) ||
		    !get_hex(p + 15, 2, &plen) || !get_hex(p + 18, 8, &sum) ||
		    w >= run.cfg->writers || i >= n || n > FRAG_MAX ||
		    r->text_len - off < FRAG_HDR + plen) {
			report("reader %u seq %llu: garbled fragment at offset %zu of %u: %.27s",
			       rd->id, (unsigned long long)r->seq, off, r->text_len, p);
			return;
		}
		size_t fl = make_frag((unsigned)w, (uint32_t)line, (unsigned)i, (unsigned)n, frag);

		if (fl != FRAG_HDR + plen || memcmp(frag, p, fl) != 0 ||
		    sum != fnv1a(p + FRAG_HDR, plen)) {
			report("reader %u seq %llu: fragment %llu/%llu of writer %llu line %llu "
			       "torn",
			       rd->id, (unsigned long long)r->seq, (unsigned long long)i,
			       (unsigned long long)n, (unsigned long long)w,
			       (unsigned long long)line);
			return;
		}
		if (nfr == 0) {
			w0 = (unsigned)w;
			line0 = line;
			i0 = (unsigned)i;
			n0 = (unsigned)n;
		} else if (w != w0 || line != line0 || i != iend + 1) {
			/* Another writer's or line's text glued on, or a fragment missing. */
			report("reader %u seq %llu: fragment (w%llu line %llu #%llu) after "
			       "(w%u line %llu #%u) in one record",
			       rd->id, (unsigned long long)r->seq, (unsigned long long)w,
			       (unsigned long long)line, (unsigned long long)i, w0,
			       (unsigned long long)line0, iend);
			return;
		}
		iend = (unsigned)i;
		nfr++;
		off += fl;
	}
	if (nfr == 0) {
		report("reader %u seq %llu: empty record", rd->id, (unsigned long long)r->seq);
		return;
	}
	uint64_t key = line0 << 8 | i0;
	uint8_t flags =
		(uint8_t)((i0 ? PRB_FLAG_CONT : 0) | (iend == n0 - 1 ? PRB_FLAG_NEWLINE : 0));
	uint64_t next;

	check_meta(rd, r, w0, key, line0 & 7, flags);
	/* What follows the writer's previous record, when nothing was lost. */
	if (rd->have[w0] && (rd->last_key[w0] & 0xff) + 1 < rd->last_n[w0])
		next = rd->last_key[w0] + 1;
	else
		next = ((rd->last_key[w0] >> 8) + 1) << 8;
	if (!rd->have[w0])
		next = 0;
	check_order(rd, r, w0, key, next, line0 << 8 | iend, n0);
	rd->seen[r->seq] = pack_seen(w0, nfr, key);
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct prb_record *r = malloc(sizeof(*r));
	uint64_t want = 0;

	if (!r) {
		report("reader %u: out of memory", rd->id);
		return NULL;
	}
	pthread_barrier_wait(&run.start);
	for (;;) {
		/* Both sampled before the read: what the read may be blamed for. */
		bool done = atomic_load(&run.writers_done);
		bool visible = is_visible(want);
		int rc = prb_read(&rd->handle, want, r, 0);

		if (rc == -EAGAIN) {
			/*
			 * Visibility. Only while want is still in the ring: once it
			 * was overwritten, prb_read() starts at the oldest record
			 * and says "not yet" while that one is being written (as
			 * the kernel does), so the loss shows up only later.
			 */
			if (visible && prb_first_seq(&rd->handle) <= want)
				report("reader %u: seq %llu was finalized by its writer, yet "
				       "prb_read says -EAGAIN",
				       rd->id, (unsigned long long)want);
			if (done) {
				if (want >= atomic_load(&run.end_seq))
					break;
				report("reader %u: -EAGAIN at seq %llu after the writers finished "
				       "(end %llu)",
				       rd->id, (unsigned long long)want,
				       (unsigned long long)atomic_load(&run.end_seq));
				break;
			}
			if (rd->use_wait) {
				int err = prb_wait(&rd->handle, want, 20 * 1000 * 1000);

				if (err != 0 && err != -ETIMEDOUT && err != -EINTR)
					report("reader %u: prb_wait: %d", rd->id, err);
				rd->waits++;
			} else {
				sched_yield();
			}
			continue;
		}
		if (rc != 0) {
			report("reader %u: prb_read(%llu): %d", rd->id, (unsigned long long)want,
			       rc);
			break;
		}
		if (r->seq < want || r->seq >= REC_CAP) {
			report("reader %u: asked for seq %llu, got %llu", rd->id,
			       (unsigned long long)want, (unsigned long long)r->seq);
			break;
		}
		rd->lost += r->seq - want;
		rd->read++;
		if (run.cfg->cont)
			check_cont(rd, r);
		else
			check_plain(rd, r);
		want = r->seq + 1;
	}
	free(r);
	return NULL;
}

/* ------------------------------------------------------------ watchdog -- */

struct watchdog {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	unsigned limit_ms;
	const char *what;
};

/* A ring that wedges (a writer or reader spinning forever) fails the test
 * with a message instead of hanging until ctest's timeout. */
static void *watchdog_main(void *arg)
{
	struct watchdog *wd = arg;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += wd->limit_ms / 1000;
	ts.tv_nsec += (long)(wd->limit_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&wd->lock);
	while (!wd->done) {
		if (pthread_cond_timedwait(&wd->cond, &wd->lock, &ts) != 0 && !wd->done) {
			fprintf(stderr, "watchdog: %s still running after %u ms: deadlock?\n",
				wd->what, wd->limit_ms);
			abort();
		}
	}
	pthread_mutex_unlock(&wd->lock);
	return NULL;
}

static void watchdog_start(struct watchdog *wd, const char *what, unsigned limit_ms)
{
	wd->done = false;
	wd->what = what;
	wd->limit_ms = limit_ms;
	pthread_mutex_init(&wd->lock, NULL);
	pthread_cond_init(&wd->cond, NULL);
	assert_int_equal(pthread_create(&wd->th, NULL, watchdog_main, wd), 0);
}

static void watchdog_stop(struct watchdog *wd)
{
	pthread_mutex_lock(&wd->lock);
	wd->done = true;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
	pthread_join(wd->th, NULL);
	pthread_mutex_destroy(&wd->lock);
	pthread_cond_destroy(&wd->cond);
}

/* ---------------------------------------------------------------- runs -- */

static unsigned duration_ms(void)
{
#ifdef PRINTK_TSAN
	return stress_ms(1000);
#else
	return stress_ms(1500);
#endif
}

static void verify(uint64_t end, const struct prb_stats *st0, const struct prb_stats *st1)
{
	const struct config *cfg = run.cfg;
	uint64_t total = 0, enobufs = 0;

	/* Density and uniqueness: seq -> (writer, log index). */
	uint32_t *owner = calloc(end ? end : 1, sizeof(*owner));

	assert_non_null(owner);
	for (unsigned w = 0; w < cfg->writers; w++) {
		struct writer *wr = &run.w[w];

		total += wr->n;
		enobufs += wr->enobufs;
		for (size_t k = 0; k < wr->n; k++) {
			uint32_t s = wr->log[k].seq;

			if (k > 0 && s <= wr->log[k - 1].seq)
				report("writer %u: seq %u after %u", w, s, wr->log[k - 1].seq);
			if (s >= end) {
				report("writer %u: seq %u >= next reserve seq %llu", w, s,
				       (unsigned long long)end);
				continue;
			}
			if (owner[s])
				report("seq %u stored twice (writers %u and %u)", s,
				       (owner[s] - 1) % 16, w);
			owner[s] = (uint32_t)(k * 16 + w + 1);
		}
	}
	assert_int_equal(thread_fail_count(), 0);
	/* A slot left unclaimed past the stall timeout (its writer preempted
	 * between head CAS and claim) is stolen: it has a seq and no record. */
	assert_int_equal(total + (st1->stolen - st0->stolen), end);
	/* Failed reservations consumed no seq and were all counted. */
	assert_int_equal(st1->reserve_failed - st0->reserve_failed, enobufs);
	assert_int_equal(st1->corrupt - st0->corrupt, 0);

	/* Real-time order: walking down the seqs, the earliest "after" ticket of
	 * all later seqs must come after this seq's "before" ticket. */
	uint32_t later_min_after = UINT32_MAX;

	for (uint64_t s = end; s-- > 0;) {
		if (!owner[s])
			continue; /* stolen */

		const struct wentry *e = &run.w[(owner[s] - 1) % 16].log[(owner[s] - 1) / 16];

		if (later_min_after < e->before) {
			report("real-time order: a store with a higher seq than %llu completed "
			       "(ticket %u) before this one started (ticket %u)",
			       (unsigned long long)s, later_min_after, e->before);
			break;
		}
		if (e->after < later_min_after)
			later_min_after = e->after;
	}

	/* Loss accounting, reader by reader. */
	for (unsigned i = 0; i < cfg->readers; i++) {
		struct reader *rd = &run.r[i];
		uint64_t read = 0, lost = 0, per_read[MAX_WRITERS] = { 0 };
		uint64_t per_lost[MAX_WRITERS] = { 0 }, stolen = 0;

		for (uint64_t s = 0; s < end; s++) {
			if (!owner[s]) {
				if (rd->seen[s])
					report("reader %u read stolen seq %llu", i, (unsigned long long)s);
				lost++;
				stolen++;
				continue;
			}

			unsigned w = (owner[s] - 1) % 16;
			const struct wentry *e = &run.w[w].log[(owner[s] - 1) / 16];
			uint64_t got = rd->seen[s];

			if (!got) {
				lost++;
				per_lost[w]++;
				continue;
			}
			read++;
			per_read[w]++;
			if (got != pack_seen(w, 1u + e->joined, e->key))
				report("reader %u seq %llu: read (w%llu, %llu fragments, key "
				       "%#llx), stored (w%u, %u fragments, key %#x)",
				       i, (unsigned long long)s,
				       (unsigned long long)(got >> 52 & 0x7ff),
				       (unsigned long long)(got >> 44 & 0xff),
				       (unsigned long long)(got & 0xfffffffffffull), w,
				       1u + e->joined, e->key);
		}
		assert_int_equal(read, rd->read);
		assert_int_equal(lost, rd->lost);
		assert_int_equal(rd->read + rd->lost, end);

		uint64_t gaps = 0;

		for (unsigned w = 0; w < cfg->writers; w++) {
			assert_int_equal(per_read[w] + per_lost[w], run.w[w].n);
			gaps += run.w[w].n - per_read[w];
		}
		assert_int_equal(gaps + stolen, rd->lost);
	}
	free(owner);
}

static void run_config(const struct config *cfg)
{
	unsigned ms = duration_ms();
	size_t size = prb_region_size(cfg->data_bits, cfg->desc_bits);
	struct prb_stats st0, st1;
	struct watchdog wd;

	memset(&run, 0, sizeof(run));
	thread_fail_reset();
	run.cfg = cfg;
	run.pid = (uint32_t)getpid();
	assert_true(size > 0);
	run.mem_size = (size + 63) & ~(size_t)63;
	run.mem = aligned_alloc(64, run.mem_size);
	assert_non_null(run.mem);
	memset(run.mem, 0xa5, run.mem_size);
	assert_int_equal(prb_format(&run.rb, run.mem, run.mem_size, cfg->data_bits, cfg->desc_bits),
			 0);
	run.visible = calloc(REC_CAP / 64, sizeof(*run.visible));
	assert_non_null(run.visible);
	prb_get_stats(&run.rb, &st0);

	for (unsigned i = 0; i < cfg->writers; i++) {
		struct writer *wr = &run.w[i];

		wr->id = i;
		wr->cap = REC_CAP / cfg->writers;
		wr->log = malloc(wr->cap * sizeof(*wr->log));
		assert_non_null(wr->log);
	}
	for (unsigned i = 0; i < cfg->readers; i++) {
		struct reader *rd = &run.r[i];

		rd->id = i;
		rd->use_wait = i == 0;
		rd->seen = calloc(REC_CAP, sizeof(*rd->seen));
		assert_non_null(rd->seen);
		/* The second reader reads like another process would: read-only, it
		 * never helps finalize. */
		assert_int_equal(prb_attach(&rd->handle, run.mem, run.mem_size, i == 0), 0);
	}

	prb_set_testpoint_hook(cfg->jitter ? jitter_hook : NULL);
	watchdog_start(&wd, cfg->name, 20 * ms + 60000);
	assert_int_equal(pthread_barrier_init(&run.start, NULL, cfg->writers + cfg->readers + 1),
			 0);
	for (unsigned i = 0; i < cfg->writers; i++)
		assert_int_equal(pthread_create(&run.w[i].th, NULL,
						cfg->cont ? writer_cont : writer_plain, &run.w[i]),
				 0);
	for (unsigned i = 0; i < cfg->readers; i++)
		assert_int_equal(pthread_create(&run.r[i].th, NULL, reader_main, &run.r[i]), 0);

	uint64_t t0 = now_ms();

	pthread_barrier_wait(&run.start);
	while (now_ms() - t0 < ms && atomic_load(&run.writers_exited) < cfg->writers)
		usleep(10 * 1000);
	atomic_store(&run.stop, true);
	for (unsigned i = 0; i < cfg->writers; i++)
		pthread_join(run.w[i].th, NULL);

	/* Every line was completed by its writer: nothing may be left open. */
	uint64_t end = prb_next_reserve_seq(&run.rb);

	assert_int_equal(prb_next_seq(&run.rb), end);
	atomic_store(&run.end_seq, end);
	atomic_store(&run.writers_done, true);
	for (unsigned i = 0; i < cfg->readers; i++)
		pthread_join(run.r[i].th, NULL);
	watchdog_stop(&wd);
	prb_set_testpoint_hook(NULL);
	prb_get_stats(&run.rb, &st1);

	uint64_t enobufs = 0, ext_ok = 0, ext_enoent = 0;

	for (unsigned i = 0; i < cfg->writers; i++) {
		enobufs += run.w[i].enobufs;
		ext_ok += run.w[i].extend_ok;
		ext_enoent += run.w[i].extend_enoent;
	}
	printf("[%s] %llu ms: %llu records, %llu -ENOBUFS", cfg->name,
	       (unsigned long long)(now_ms() - t0), (unsigned long long)end,
	       (unsigned long long)enobufs);
	if (cfg->cont)
		printf(", extend ok %llu / -ENOENT %llu", (unsigned long long)ext_ok,
		       (unsigned long long)ext_enoent);
	for (unsigned i = 0; i < cfg->readers; i++)
		printf("; reader %u read %llu lost %llu", i, (unsigned long long)run.r[i].read,
		       (unsigned long long)run.r[i].lost);
	printf("\n");
	fflush(stdout);

	if (thread_fail_count() == 0)
		verify(end, &st0, &st1);
	if (thread_fail_count() != 0)
		fail_msg("[%s] %u failures; first: %s", cfg->name, thread_fail_count(),
			 thread_fail_first());
	assert_int_equal(thread_fail_count(), 0);
	/* Something must actually have happened for the checks to mean anything. */
	assert_true(end > 1000);

	for (unsigned i = 0; i < cfg->writers; i++)
		free(run.w[i].log);
	for (unsigned i = 0; i < cfg->readers; i++)
		free(run.r[i].seen);
	free(run.visible);
	free(run.mem);
	pthread_barrier_destroy(&run.start);
}

#define CONFIG_TEST(fn, ...)                                                                       \
	static void fn(void **state)                                                               \
	{                                                                                          \
		static const struct config cfg = { __VA_ARGS__ };                                  \
		(void)state;                                                                       \
		run_config(&cfg);                                                                  \
	}

CONFIG_TEST(test_2w_4k, .name = "2 writers, 4 KiB", .writers = 2, .readers = 1, .data_bits = 12,
	    .dicts = true)
CONFIG_TEST(test_4w_16k, .name = "4 writers, 16 KiB", .writers = 4, .readers = 2, .data_bits = 14,
	    .dicts = true)
CONFIG_TEST(test_8w_16k_64d, .name = "8 writers, 16 KiB, 64 descriptors", .writers = 8,
	    .readers = 2, .data_bits = 14, .desc_bits = 6, .dicts = true)
CONFIG_TEST(test_4w_4k_64d, .name = "4 writers, 4 KiB, 64 descriptors, jitter", .writers = 4,
	    .readers = 2, .data_bits = 12, .desc_bits = 6, .jitter = true)
CONFIG_TEST(test_cont_2w_4k, .name = "continuation, 2 writers, 4 KiB", .writers = 2, .readers = 2,
	    .data_bits = 12, .cont = true)
CONFIG_TEST(test_cont_4w_16k_64d, .name = "continuation, 4 writers, 16 KiB, 64 descriptors",
	    .writers = 4, .readers = 2, .data_bits = 14, .desc_bits = 6, .cont = true)
CONFIG_TEST(test_cont_8w_4k, .name = "continuation, 8 writers, 4 KiB, jitter", .writers = 8,
	    .readers = 2, .data_bits = 12, .cont = true, .jitter = true)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_2w_4k),	   cmocka_unit_test(test_4w_16k),
		cmocka_unit_test(test_8w_16k_64d), cmocka_unit_test(test_4w_4k_64d),
		cmocka_unit_test(test_cont_2w_4k), cmocka_unit_test(test_cont_4w_16k_64d),
		cmocka_unit_test(test_cont_8w_4k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
