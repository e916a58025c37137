// SPDX-License-Identifier: MIT
/*
 * test_ring_damage.c - the record ring (src/ring/ringbuffer.c) in a region that
 * was damaged: one flipped bit in a descriptor or in the head or tail word.
 * Writers and readers must neither hang nor loop for ever nor go backwards;
 * damage confined to one descriptor costs that record only (a counted gap),
 * a header whose words contradict each other is refused by prb_attach() or
 * reported by prb_store() as -EUCLEAN (prb_broken()).
 *
 * Every operation on a damaged ring runs in a child process with a timeout;
 * the ring lives in a shared mapping, so the parent checks what the child
 * did from outside, and the child reports its results through that mapping.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <printk/kmsg.h>
#include <printk/log.h>

#include "log/log_shared.h"
#include "testutil.h"
#include "ring/ringbuffer.h"

#define DATA_BITS 12 /* 4 KiB of text, 128 descriptors */
/* Head and tail words: [id][position]; the id starts at this bit. */
#ifdef PRINTK_RING_SMALL_IDS
#define ID_SHIFT 15
#else
#define ID_SHIFT 32
#endif
#define CHILD_MS  20000
#define TEXT_LEN  48

struct shared {
	_Alignas(64) unsigned char region[1u << 16];
	struct prb rb;	    /* the parent's handle (the child inherits it) */
	int results[8];	    /* what the child saw, per test */
	uint64_t seqs[4096]; /* seqs a child read, in order */
	unsigned nseqs;
	char texts[4096][16]; /* their first bytes */
};

static struct shared *sh;

static int setup(void **state)
{
	(void)state;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(sh, sizeof(*sh));
	return 0;
}

static struct prb *new_ring(void)
{
	memset(sh, 0, sizeof(*sh));
	assert_int_equal(prb_format(&sh->rb, sh->region, sizeof(sh->region), DATA_BITS, 0), 0);
	return &sh->rb;
}

static int store_n(struct prb *rb, unsigned first, unsigned n)
{
	char text[TEXT_LEN];
	struct prb_meta m = { .ts_nsec = 1, .caller = { .pid = 1, .tid = 1 }, .level = 6 };

	for (unsigned i = first; i < first + n; i++) {
		memset(text, 'a' + i % 26, sizeof(text));
		snprintf(text, sizeof(text), "%u", i);
		int err = prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL);

		if (err)
			return err;
	}
	return 0;
}

/* The stored word of @seq's descriptor (@word: 0 state, 1 seq, 3 extent, 5 info). */
static pk_a64 *desc_word(struct prb *rb, uint64_t seq, unsigned word)
{
	uint64_t idx = (seq + rb->id_base) & (rb->desc_count - 1);

	return &rb->descs[idx * 8 + word];
}

static void flip(pk_a64 *w, unsigned bit)
{
	atomic_fetch_xor(w, UINT64_C(1) << bit);
}

/* The header's head and tail words: the first two 64-byte lines after line 0. */
static pk_a64 *head_word(struct prb *rb)
{
	return (pk_a64 *)((unsigned char *)rb->hdr + 64);
}

static pk_a64 *tail_word(struct prb *rb)
{
	return (pk_a64 *)((unsigned char *)rb->hdr + 128);
}

/* Read everything from @seq on with @rb, as udmesg does; at most @max calls. */
static void read_all(struct prb *rb, uint64_t seq, unsigned max)
{
	static struct prb_record r;

	sh->nseqs = 0;
	for (unsigned i = 0; i < max; i++) {
		int err = prb_read(rb, seq, &r, 0);

		if (err) {
			sh->results[7] = err;
			return;
		}
		if (sh->nseqs < 4096) {
			memcpy(sh->texts[sh->nseqs], r.text, 8);
			sh->seqs[sh->nseqs++] = r.seq;
		}
		seq = r.seq + 1;
	}
	sh->results[7] = 1; /* never ran out: a reader that replays */
}

/* ---- one flipped bit in a descriptor's state word ---- */

static int writer_child(void *arg)
{
	(void)arg;
	/* Ten laps of the ring: the tail passes the damaged slot many times. */
	sh->results[0] = store_n(&sh->rb, 100, 1000);
	return 0;
}

static void damaged_state_word(unsigned bit)
{
	struct prb *rb = new_ring();
	struct child_result res;
	struct prb_stats st;

	assert_int_equal(store_n(rb, 0, 60), 0);
	flip(desc_word(rb, 20, 0), bit);
	sh->results[0] = -1;
	run_child_ok(writer_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	assert_int_equal(sh->results[0], 0);
	assert_false(prb_broken(rb));
	prb_get_stats(rb, &st);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(st.reserve_failed, 0);
	/* The ring works: the newest records read back in order, no gaps. */
	uint64_t next = prb_next_seq(rb);

	assert_int_equal(next, 1060);
	read_all(rb, prb_first_seq(rb), 4096);
	assert_int_equal(sh->results[7], -EAGAIN);
	assert_true(sh->nseqs > 50);
	for (unsigned i = 0; i < sh->nseqs; i++)
		assert_int_equal(sh->seqs[i], next - sh->nseqs + i);
}

/* The id bits: the slot names a record that cannot be there. */
static void test_state_id_bit_low(void **state)
{
	(void)state;
	damaged_state_word(2);
}

static void test_state_id_bit_high(void **state)
{
	(void)state;
	damaged_state_word(12);
}

/* Shared-log rules (a writer registry): every writer lives. */
static int all_alive(struct prb *rb, unsigned owner, uint32_t pid)
{
	(void)rb;
	(void)owner;
	(void)pid;
	return 1;
}

/* Bit 7 of 128 descriptors: the slot claims the id one lap back, as if
 * it had been allocated and never claimed. On a shared log it is stolen
 * after the stall timeout like any unclaimed slot; writers meanwhile fail,
 * counted. */
static void test_state_looks_unclaimed(void **state)
{
	(void)state;
	struct prb *rb = new_ring();

	rb->owner_alive = all_alive;
	struct child_result res;
	struct prb_stats st;
	uint64_t seq = 150;

	assert_int_equal(store_n(rb, 0, 200), 0);
	/* A seq still in the ring whose id has bit 7 set: the flip moves it back a lap. */
	while (!(((seq + rb->id_base) >> 7) & 1))
		seq++;
	assert_true(seq < 200);
	flip(desc_word(rb, seq, 0), 7);
	sh->results[0] = -1;
	run_child_ok(writer_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	assert_int_equal(sh->results[0], -ENOBUFS);
	/* Stolen once stalled long enough: later stores all go in. */
	uint64_t t0 = now_ms();

	while (store_n(rb, 2000, 1) == -ENOBUFS && now_ms() - t0 < 5000)
		usleep(10 * 1000);
	assert_int_equal(store_n(rb, 2001, 300), 0);
	assert_false(prb_broken(rb));
	prb_get_stats(rb, &st);
	assert_int_equal(st.stolen, 1);
}

/* ---- one damaged descriptor: readers skip it, as a counted gap ---- */

static int reader_child(void *arg)
{
	struct prb *rb = arg;

	read_all(rb, 0, 4096);
	return 0;
}

static void reader_skips(unsigned word, unsigned bit, bool writable)
{
	struct prb *rb = new_ring();
	struct prb ro;
	struct child_result res;

	assert_int_equal(store_n(rb, 0, 60), 0);
	flip(desc_word(rb, 20, word), bit);
	if (!writable) {
		assert_int_equal(prb_attach(&ro, sh->region, sizeof(sh->region), false), 0);
		rb = &ro;
	}
	run_child_ok(reader_child, rb, CHILD_MS, &res);
	child_result_free(&res);
	/* Every record but the damaged one, in order, then "no more". */
	assert_int_equal(sh->results[7], -EAGAIN);
	assert_int_equal(sh->nseqs, 59);
	for (unsigned i = 0; i < 59; i++) {
		uint64_t want = i < 20 ? i : i + 1;
		char num[8];

		snprintf(num, sizeof(num), "%u", (unsigned)want);
		assert_int_equal(sh->seqs[i], want);
		assert_string_equal(sh->texts[i], num);
	}
	if (writable) {
		struct prb_stats st;

		prb_get_stats(rb, &st);
		assert_true(st.corrupt >= 1);
	}
}

static void test_reader_state_id(void **state)
{
	(void)state;
	reader_skips(0, 3, true);
	reader_skips(0, 3, false);
	reader_skips(0, 12, false);
}

static void test_reader_seq_word(void **state)
{
	(void)state;
	reader_skips(1, 40, true);
	reader_skips(1, 0, false);
}

static void test_reader_info_word(void **state)
{
	(void)state;
	reader_skips(5, 13, false); /* text length past the limit */
}

/* A state word damaged to look allocated and never claimed, on a shared log:
 * a reader waits the stall timeout, as for a writer preempted before its
 * claim, then passes it (read-only) or steals it (writable) and goes on. */
static void test_reader_looks_unclaimed(void **state)
{
	(void)state;
	for (int writable = 0; writable < 2; writable++) {
		struct prb *rb = new_ring();
		struct prb ro;
		static struct prb_record r;
		uint64_t seq = 150;
		int err;

		assert_int_equal(store_n(rb, 0, 200), 0);
		while (!(((seq + rb->id_base) >> 7) & 1))
			seq++;
		flip(desc_word(rb, seq, 0), 7);
		if (!writable) {
			assert_int_equal(prb_attach(&ro, sh->region, sizeof(sh->region), false), 0);
			rb = &ro;
		}
		rb->owner_alive = all_alive;
		assert_int_equal(prb_read(rb, seq, &r, 0), -EAGAIN);

		uint64_t t0 = now_ms();

		while ((err = prb_read(rb, seq, &r, 0)) == -EAGAIN && now_ms() - t0 < 5000)
			usleep(10 * 1000);
		assert_int_equal(err, 0);
		assert_int_equal(r.seq, seq + 1);
		assert_int_equal(prb_read(rb, 199, &r, 0), 0);

		struct prb_stats st;

		prb_get_stats(rb, &st);
		assert_int_equal(st.stolen, (uint64_t)writable);
	}
}

/* ---- the tail word ---- */

static int follower_child(void *arg)
{
	struct prb *rb = arg;

	/* What udmesg -w does: read on from its position, never back. */
	read_all(rb, 0, 4096);
	sh->results[1] = (int)sh->nseqs;
	static struct prb_record r;

	sh->results[2] = prb_read(rb, 10, &r, 0);
	sh->results[3] = (int)prb_first_seq(rb);
	return 0;
}

/* A few records, not a lap: the tail's id with a low bit cleared names a
 * slot never used, whose seq is from before seq 0. */
static void test_tail_id_bit_refused(void **state)
{
	(void)state;
	struct prb *rb = new_ring();
	struct prb att;

	assert_int_equal(store_n(rb, 0, 10), 0);
	/* The tail's id is id_base; clear its bit 4 (set: id_base = 2^k - 5). */
	assert_true((rb->id_base >> 4) & 1);
	flip(tail_word(rb), ID_SHIFT + 4);
	assert_int_equal(prb_attach(&att, sh->region, sizeof(sh->region), false), -EBADMSG);
}

static void test_tail_id_bit_live(void **state)
{
	(void)state;
	struct prb *rb = new_ring();
	struct prb ro;
	struct child_result res;

	assert_int_equal(store_n(rb, 0, 10), 0);
	assert_int_equal(prb_attach(&ro, sh->region, sizeof(sh->region), false), 0);
	/* The damage happens while the handles are attached. */
	flip(tail_word(rb), ID_SHIFT + 4);
	for (int pass = 0; pass < 2; pass++) {
		run_child_ok(follower_child, pass ? &ro : rb, CHILD_MS, &res);
		child_result_free(&res);
		assert_int_equal(sh->results[7], -EAGAIN);
		assert_int_equal(sh->results[1], 10);
		for (unsigned i = 0; i < 10; i++)
			assert_int_equal(sh->seqs[i], i);
		assert_int_equal(sh->results[2], -EAGAIN);
		assert_int_equal(sh->results[3], 0);
	}
	/* Writers go on: the tail walks over the slots it names wrongly. */
	sh->results[0] = -1;
	run_child_ok(writer_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	assert_int_equal(sh->results[0], 0);
	assert_int_equal(prb_next_seq(rb), 1010);
}

/* A high id bit: head and tail are more than a ring apart. */
static void test_tail_far_off_breaks(void **state)
{
	(void)state;
	struct prb *rb = new_ring();
	struct child_result res;

	assert_int_equal(store_n(rb, 0, 200), 0);
	flip(tail_word(rb), ID_SHIFT + 11);
	sh->results[0] = -1;
	run_child_ok(writer_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	assert_int_equal(sh->results[0], -EUCLEAN);
	assert_true(prb_broken(rb));
	assert_int_equal(store_n(rb, 0, 1), -EUCLEAN);

	/* Another handle on the same region finds out for itself. */
	struct prb other = *rb;

	atomic_store(&other.broken, 0);
	assert_int_equal(store_n(&other, 0, 1), -EUCLEAN);
	assert_true(prb_broken(&other));

	struct prb_stats st;

	prb_get_stats(rb, &st);
	assert_true(st.corrupt >= 1);
}

/* ---- the head word ---- */

static void test_head_zero_refused(void **state)
{
	(void)state;
	struct prb *rb = new_ring();
	struct prb att;

	/* Ids start 5 before they wrap: ten records take the head past id 0. */
	assert_int_equal(store_n(rb, 0, 10), 0);
	pk_store_relaxed(head_word(rb), 0);
	assert_int_equal(prb_attach(&att, sh->region, sizeof(sh->region), false), -EBADMSG);
	assert_int_equal(prb_attach(&att, sh->region, sizeof(sh->region), true), -EBADMSG);
}

static void test_head_zero_live(void **state)
{
	(void)state;
	struct prb *rb = new_ring();
	struct child_result res;

	assert_int_equal(store_n(rb, 0, 10), 0);
	pk_store_relaxed(head_word(rb), 0);
	sh->results[0] = -1;
	run_child_ok(writer_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	/* The next id is a record's still in the ring: never overwritten. */
	assert_int_equal(sh->results[0], -EUCLEAN);

	static struct prb_record r;

	assert_int_equal(prb_read(rb, 6, &r, 0), 0);
	assert_int_equal(r.seq, 6);
	assert_string_equal(r.text, "6");
}

/* ---- a damaged log file, through the log layer and a /dev/kmsg reader ---- */

static char log_path[64];

/* Read the file with kmsg_open_file() as a post-mortem reader does: every
 * record but the damaged one, with the loss reported once (-EPIPE), then
 * -EAGAIN. */
static int kmsg_child(void *arg)
{
	(void)arg;
	struct kmsg_file *f;
	char buf[2048];
	unsigned n = 0, pipes = 0;
	ssize_t got;

	if (kmsg_open_file(&f, log_path, O_RDONLY | O_NONBLOCK))
		return 10;
	while ((got = kmsg_read(f, buf, sizeof(buf))) != -EAGAIN) {
		if (got == -EPIPE) {
			pipes++;
			continue;
		}
		if (got <= 0 || n >= 4096)
			return 11;
		buf[got] = '\0';
		char *text = strchr(buf, ';');

		if (text && n < 4096)
			snprintf(sh->texts[n], sizeof(sh->texts[n]), "%s", text + 1);
		n++;
	}
	sh->nseqs = n;
	sh->results[4] = (int)pipes;
	kmsg_close(f);

	struct pk_log *log;
	static struct pk_record rec;
	uint64_t seq = 0;

	if (pk_log_open_file(&log, log_path, 0, PK_LOG_RDONLY))
		return 12;
	n = 0;
	while (pk_log_read(log, seq, &rec, 0) == 0 && n < 4096) {
		sh->seqs[n++] = rec.seq;
		seq = rec.seq + 1;
	}
	sh->results[5] = (int)n;
	sh->results[6] = pk_log_read(log, seq, &rec, 0);
	pk_log_destroy(log);
	return 0;
}

static void test_log_file_damaged_descriptor(void **state)
{
	(void)state;
	char dir[] = "/tmp/pk_ring_damage.XXXXXX";
	struct pk_log *log;
	struct child_result res;

	assert_non_null(mkdtemp(dir));
	snprintf(log_path, sizeof(log_path), "%s/log", dir);
	assert_int_equal(pk_log_open_file(&log, log_path, 1u << DATA_BITS, 0), 0);
	for (unsigned i = 0; i < 60; i++) {
		char text[16];
		int len = snprintf(text, sizeof(text), "line %u", i);

		assert_int_equal(pk_log_store(log, 0, 6, text, (size_t)len, NULL, 0), 0);
	}
	/* The file mapping is shared: the flip is in the file. */
	flip(desc_word(pk_log_ring(log), 20, 0), 3);
	pk_log_destroy(log);

	memset(sh, 0, sizeof(*sh));
	run_child_ok(kmsg_child, NULL, CHILD_MS, &res);
	child_result_free(&res);
	assert_int_equal(sh->nseqs, 59);
	assert_int_equal(sh->results[4], 1);
	for (unsigned i = 0; i < 59; i++) {
		char want[32];

		snprintf(want, sizeof(want), "line %u\n", i < 20 ? i : i + 1);
		assert_string_equal(sh->texts[i], want);
	}
	assert_int_equal(sh->results[5], 59);
	assert_int_equal(sh->seqs[19], 19);
	assert_int_equal(sh->seqs[20], 21);
	assert_int_equal(sh->results[6], -EAGAIN);
	unlink(log_path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_id_bit_low),
		cmocka_unit_test(test_state_id_bit_high),
		cmocka_unit_test(test_state_looks_unclaimed),
		cmocka_unit_test(test_reader_state_id),
		cmocka_unit_test(test_reader_seq_word),
		cmocka_unit_test(test_reader_info_word),
		cmocka_unit_test(test_reader_looks_unclaimed),
		cmocka_unit_test(test_tail_id_bit_refused),
		cmocka_unit_test(test_tail_id_bit_live),
		cmocka_unit_test(test_tail_far_off_breaks),
		cmocka_unit_test(test_head_zero_refused),
		cmocka_unit_test(test_head_zero_live),
		cmocka_unit_test(test_log_file_damaged_descriptor),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
