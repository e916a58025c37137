// SPDX-License-Identifier: MIT
/*
 * test_ringbuffer.c - deterministic unit tests of the record ring
 * (src/ring/ringbuffer.c): round trips, wrap-around, overwrite and exact loss
 * accounting, reserve-in-last rules, header validation, waiting, peeking at
 * a record's state (prb_peek) at each step of its writer, and a writer
 * interrupted at each test point (what a signal handler would do), and
 * batches (prb_store_batch: many laps, exact bytes and loss; a batch
 * stopped at each test point and resumed from its journal; one whose
 * record was taken).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "ring/ringbuffer.h"

#define REGION_MAX (1u << 20)

static _Alignas(64) unsigned char region[REGION_MAX];

static struct prb *new_ring(unsigned data_bits, unsigned desc_bits)
{
	static struct prb rb;

	memset(region, 0xa5, sizeof(region)); /* formatting must not rely on zeroed memory */
	assert_int_equal(prb_format(&rb, region, sizeof(region), data_bits, desc_bits), 0);
	return &rb;
}

static struct prb_meta meta_of(uint32_t tid, uint8_t ctx)
{
	struct prb_meta m = {
		.ts_nsec = 1000,
		.caller = { .pid = 42, .tid = tid, .ctx = ctx },
		.level = 6,
		.facility = 0,
		.flags = PRB_FLAG_NEWLINE,
	};
	return m;
}

static uint64_t store_text(struct prb *rb, uint32_t tid, const char *text, bool final)
{
	struct prb_meta m = meta_of(tid, 0);
	uint64_t seq = ~0ull;

	if (!final)
		m.flags = 0;
	assert_int_equal(prb_store(rb, &m, text, strlen(text), NULL, 0, final, &seq), 0);
	return seq;
}

static struct prb_record rec;

static void test_empty(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);

	assert_int_equal(prb_first_seq(rb), 0);
	assert_int_equal(prb_next_seq(rb), 0);
	assert_int_equal(prb_next_reserve_seq(rb), 0);
	assert_int_equal(prb_read(rb, 0, &rec, 0), -EAGAIN);
	assert_int_equal(prb_read(rb, 5, &rec, 0), -EAGAIN);
	assert_int_equal(prb_read(rb, 0, &rec, PRB_READ_UNFINALIZED), -EAGAIN);
}

static void test_round_trip_every_field(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	const char text[] = "binary\0text\x01\xff with a NUL inside";
	const char dict[] = "SUBSYSTEM=net\0DEVICE=n2";
	struct prb_meta m = {
		.ts_nsec = 0x123456789abcdefull,
		.caller = { .pid = 0xdeadbeef, .tid = 0xfeedf00d, .ctx = 3 },
		.level = 3,
		.facility = 23,
		.flags = PRB_FLAG_NEWLINE | PRB_FLAG_CONT,
	};
	uint64_t seq;

	assert_int_equal(prb_store(rb, &m, text, sizeof(text) - 1, dict, sizeof(dict) - 1, true, &seq), 0);
	assert_int_equal(seq, 0);
	assert_int_equal(prb_read(rb, 0, &rec, 0), 0);
	assert_int_equal(rec.seq, 0);
	assert_int_equal(rec.ts_nsec, m.ts_nsec);
	assert_int_equal(rec.caller.pid, 0xdeadbeef);
	assert_int_equal(rec.caller.tid, 0xfeedf00d);
	assert_int_equal(rec.caller.ctx, 3);
	assert_int_equal(rec.level, 3);
	assert_int_equal(rec.facility, 23);
	assert_int_equal(rec.flags, PRB_FLAG_NEWLINE | PRB_FLAG_CONT);
	assert_int_equal(rec.rflags, 0);
	assert_int_equal(rec.text_len, sizeof(text) - 1);
	assert_memory_equal(rec.text, text, sizeof(text) - 1);
	assert_int_equal(rec.dict_len, sizeof(dict) - 1);
	assert_memory_equal(rec.dict, dict, sizeof(dict) - 1);
	assert_int_equal(prb_next_seq(rb), 1);
	assert_int_equal(prb_read(rb, 1, &rec, 0), -EAGAIN);

	/* Empty text and maximal text + dictionary. */
	char big[PRB_TEXT_MAX], bigdict[PRB_DICT_MAX];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(bigdict); i++)
		bigdict[i] = (char)('A' + i % 26);
	assert_int_equal(prb_store(rb, &m, NULL, 0, NULL, 0, true, &seq), 0);
	assert_int_equal(prb_store(rb, &m, big, sizeof(big), bigdict, sizeof(bigdict), true, &seq), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(prb_read(rb, 1, &rec, 0), 0);
	assert_int_equal(rec.text_len, 0);
	assert_int_equal(rec.text[0], '\0');
	assert_int_equal(prb_read(rb, 2, &rec, 0), 0);
	assert_int_equal(rec.text_len, PRB_TEXT_MAX);
	assert_memory_equal(rec.text, big, sizeof(big));
	assert_int_equal(rec.dict_len, PRB_DICT_MAX);
	assert_memory_equal(rec.dict, bigdict, sizeof(bigdict));
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_meta m = meta_of(1, 0);
	char big[PRB_DICT_MAX + 2] = { 0 };
	struct prb tmp;

	assert_int_equal(prb_store(rb, &m, big, PRB_TEXT_MAX + 1, NULL, 0, true, NULL), -E2BIG);
	assert_int_equal(prb_store(rb, &m, "x", 1, big, PRB_DICT_MAX + 1, true, NULL), -E2BIG);
	assert_int_equal(prb_store(rb, NULL, "x", 1, NULL, 0, true, NULL), -EINVAL);
	assert_int_equal(prb_store(rb, &m, NULL, 3, NULL, 0, true, NULL), -EINVAL);
	assert_int_equal(prb_store(rb, &m, "x", 1, NULL, 2, true, NULL), -EINVAL);
	assert_int_equal(prb_extend(rb, NULL, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -EINVAL);
	assert_int_equal(prb_read(rb, 0, NULL, 0), -EINVAL);
	/* Nothing was stored by the failed calls. */
	assert_int_equal(prb_next_reserve_seq(rb), 0);

	/* Sizes: not in range, descriptors out of range, region too small, misaligned. */
	assert_int_equal(prb_format(&tmp, region, sizeof(region), PRB_DATA_MIN_BITS - 1, 0), -EINVAL);
	assert_int_equal(prb_format(&tmp, region, sizeof(region), PRB_DATA_MAX_BITS + 1, 0), -EINVAL);
	assert_int_equal(prb_format(&tmp, region, sizeof(region), 12, 5), -EINVAL);
	assert_int_equal(prb_format(&tmp, region, sizeof(region), 12, 11), -EINVAL);
	assert_int_equal(prb_format(&tmp, region, prb_region_size(12, 0) - 1, 12, 0), -ENOSPC);
	assert_int_equal(prb_format(&tmp, region + 8, sizeof(region) - 8, 12, 0), -EINVAL);
	assert_int_equal(prb_region_size(11, 0), 0);
	assert_int_equal(prb_region_size(12, 0), 4096 + 128 * 64 + 4096 + 4096); /* + format table */
}

/* Records of varied sizes, read back in lockstep through many laps. */
static void test_wrap_mixed_sizes(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	char text[PRB_TEXT_MAX + 1];
	uint64_t next = 0;
	unsigned seed = 7;

	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand_r(&seed) % 3 == 0 ? rand_r(&seed) % 1000 : rand_r(&seed) % 80);
		int n = snprintf(text, sizeof(text), "%d:", i);

		for (size_t k = (size_t)n; k < len; k++)
			text[k] = (char)('a' + (i + k) % 26);
		if (len < (size_t)n)
			len = (size_t)n;
		struct prb_meta m = meta_of(1, 0);
		uint64_t seq;

		assert_int_equal(prb_store(rb, &m, text, len, NULL, 0, true, &seq), 0);
		assert_int_equal(seq, (uint64_t)i);
		assert_int_equal(prb_read(rb, next, &rec, 0), 0);
		assert_int_equal(rec.seq, next); /* never lost: we read after each store */
		assert_int_equal(rec.text_len, len);
		assert_memory_equal(rec.text, text, len);
		next++;
	}
	assert_int_equal(prb_next_seq(rb), 20000);
}

/* 64-byte records, 4 units each: exactly 64 fit in a 4 KiB data area. */
static void test_overwrite_exact_loss(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	char text[64];

	for (int i = 0; i < 100; i++) {
		memset(text, 'a' + i % 26, sizeof(text));
		struct prb_meta m = meta_of(1, 0);

		assert_int_equal(prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL), 0);
	}
	assert_int_equal(prb_first_seq(rb), 36);
	assert_int_equal(prb_next_seq(rb), 100);

	/* A reader at 0 learns it lost exactly 36, then reads 64 without gaps. */
	uint64_t want = 0, lost = 0, got = 0;

	while (prb_read(rb, want, &rec, 0) == 0) {
		lost += rec.seq - want;
		assert_int_equal(rec.text[0], 'a' + rec.seq % 26);
		want = rec.seq + 1;
		got++;
	}
	assert_int_equal(lost, 36);
	assert_int_equal(got, 64);

	/* The same reader falls behind again: the gap is the loss. */
	for (int i = 0; i < 10; i++) {
		struct prb_meta m = meta_of(1, 0);

		assert_int_equal(prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL), 0);
	}
	assert_int_equal(prb_read(rb, 40, &rec, 0), 0);
	assert_int_equal(rec.seq, 46);
}

/* With 64 descriptors, empty records run out of descriptors, not data. */
static void test_descriptor_limited(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 6);

	for (int i = 0; i < 200; i++) {
		struct prb_meta m = meta_of(1, 0);

		assert_int_equal(prb_store(rb, &m, NULL, 0, NULL, 0, true, NULL), 0);
	}
	assert_int_equal(prb_first_seq(rb), 136);
	assert_int_equal(prb_read(rb, 0, &rec, 0), 0);
	assert_int_equal(rec.seq, 136);
}

/* Maximal records (half the data area each) keep wrapping correctly. */
static void test_max_records_wrap(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	char text[PRB_TEXT_MAX], dict[PRB_DICT_MAX];

	for (int i = 0; i < 50; i++) {
		memset(text, '0' + i % 10, sizeof(text));
		memset(dict, 'A' + i % 26, sizeof(dict));
		struct prb_meta m = meta_of(1, 0);
		uint64_t seq;

		assert_int_equal(prb_store(rb, &m, text, sizeof(text), dict, sizeof(dict), true, &seq), 0);
		assert_int_equal(prb_read(rb, seq, &rec, 0), 0);
		assert_int_equal(rec.seq, seq);
		assert_memory_equal(rec.text, text, sizeof(text));
		assert_memory_equal(rec.dict, dict, sizeof(dict));
		/* At most two fit; after a wrap-skip only one. */
		uint64_t first = prb_first_seq(rb);

		assert_true(seq - first <= 1);
	}
}

static void test_continuation_same_caller(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_caller me = { .pid = 42, .tid = 7, .ctx = 0 };
	uint64_t seq = store_text(rb, 7, "Testing tracer function: ", false);
	uint64_t seq2;

	/* Open: invisible by default, visible in the post-mortem view. */
	assert_int_equal(prb_read(rb, seq, &rec, 0), -EAGAIN);
	assert_int_equal(prb_next_seq(rb), seq);
	assert_int_equal(prb_read(rb, seq, &rec, PRB_READ_UNFINALIZED), 0);
	assert_int_equal(rec.rflags, PRB_REC_UNFINALIZED);
	assert_string_equal(rec.text, "Testing tracer function: ");

	assert_int_equal(prb_extend(rb, &me, "PAS", 3, PRB_TEXT_MAX, false, 0, &seq2), 0);
	assert_int_equal(seq2, seq);
	assert_int_equal(prb_read(rb, seq, &rec, PRB_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "Testing tracer function: PAS");
	assert_int_equal(prb_extend(rb, &me, "SED", 3, PRB_TEXT_MAX, true, PRB_FLAG_NEWLINE, &seq2), 0);
	assert_int_equal(prb_read(rb, seq, &rec, 0), 0);
	assert_string_equal(rec.text, "Testing tracer function: PASSED");
	assert_int_equal(rec.flags, PRB_FLAG_NEWLINE);
	assert_int_equal(rec.ts_nsec, 1000); /* the first fragment's time */
	assert_int_equal(rec.rflags, 0);
	assert_int_equal(prb_next_seq(rb), seq + 1);
	/* Final now: no more extension. */
	assert_int_equal(prb_extend(rb, &me, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);
}

static void test_continuation_rules(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_caller me = { .pid = 42, .tid = 7, .ctx = 0 };
	struct prb_caller other_tid = { .pid = 42, .tid = 8, .ctx = 0 };
	struct prb_caller other_pid = { .pid = 43, .tid = 7, .ctx = 0 };
	struct prb_caller handler = { .pid = 42, .tid = 7, .ctx = 1 };
	uint64_t a = store_text(rb, 7, "open line", false);

	/* Another thread, process or signal depth never joins. */
	assert_int_equal(prb_extend(rb, &other_tid, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);
	assert_int_equal(prb_extend(rb, &other_pid, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);
	assert_int_equal(prb_extend(rb, &handler, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);

	/* Size limit: refused, record unchanged and still open. */
	assert_int_equal(prb_extend(rb, &me, "0123456789", 10, 12, false, 0, NULL), -E2BIG);
	assert_int_equal(prb_read(rb, a, &rec, PRB_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "open line");
	assert_int_equal(rec.rflags, PRB_REC_UNFINALIZED);
	assert_int_equal(prb_extend(rb, &me, "!!!", 3, 12, false, 0, NULL), 0);

	/* Newest only: another writer's record finalizes ours. */
	uint64_t b = store_text(rb, 8, "other thread", true);

	assert_int_equal(b, a + 1);
	assert_int_equal(prb_read(rb, a, &rec, 0), 0);
	assert_string_equal(rec.text, "open line!!!");
	assert_int_equal(prb_extend(rb, &me, " late", 5, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);

	/* A record with a dictionary, or stored final, cannot be extended. */
	struct prb_meta m = meta_of(7, 0);

	assert_int_equal(prb_store(rb, &m, "dev", 3, "K=V", 3, false, NULL), 0);
	assert_int_equal(prb_extend(rb, &me, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);
	store_text(rb, 7, "final", true);
	assert_int_equal(prb_extend(rb, &me, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);

	/* prb_finalize_last() closes an open line (exit, panic). */
	uint64_t c = store_text(rb, 7, "hung here", false);

	assert_int_equal(prb_read(rb, c, &rec, 0), -EAGAIN);
	prb_finalize_last(rb);
	assert_int_equal(prb_read(rb, c, &rec, 0), 0);
	assert_string_equal(rec.text, "hung here");
	assert_int_equal(prb_extend(rb, &me, "x", 1, PRB_TEXT_MAX, true, 0, NULL), -ENOENT);
}

/* Growing a line across the end of the array moves it to the next lap. */
static void test_continuation_grows_across_end(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_caller me = { .pid = 42, .tid = 7, .ctx = 0 };
	char piece[100];

	memset(piece, 'z', sizeof(piece));
	for (int lap = 0; lap < 40; lap++) {
		char expect[PRB_TEXT_MAX + 1];
		size_t len = 0;
		uint64_t seq = store_text(rb, 7, "start:", false);

		memcpy(expect, "start:", 6);
		len = 6;
		for (int k = 0; k < 9; k++) {
			piece[0] = (char)('0' + k);
			assert_int_equal(prb_extend(rb, &me, piece, sizeof(piece), PRB_TEXT_MAX, k == 8,
						    k == 8 ? PRB_FLAG_NEWLINE : 0, NULL),
					 0);
			memcpy(expect + len, piece, sizeof(piece));
			len += sizeof(piece);
		}
		assert_int_equal(prb_read(rb, seq, &rec, 0), 0);
		assert_int_equal(rec.seq, seq);
		assert_int_equal(rec.text_len, len);
		assert_memory_equal(rec.text, expect, len);
		/* Something of another size in between, so the line starts elsewhere next lap. */
		char filler[40];

		memset(filler, 'f', (size_t)(lap % 37) + 1);
		struct prb_meta m = meta_of(9, 0);

		assert_int_equal(prb_store(rb, &m, filler, (size_t)(lap % 37) + 1, NULL, 0, true, NULL), 0);
	}
}

static void poke32(size_t off, uint32_t v)
{
	memcpy(region + off, &v, sizeof(v));
}

/*
 * Header layout (white-box): magic @0 (8), abi_version @8, endian_mark @12,
 * header_size @16, unit_shift @20, id_bits @21, pos_bits @22, desc_bits @23,
 * data_bits @24, id_base @28, region_size @32, desc_off @40, data_off @48.
 */
static void test_header_validation(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb att;
	size_t size = prb_region_size(12, 0);
	unsigned char saved[64];

	store_text(rb, 1, "hello", true);
	memcpy(saved, region, sizeof(saved));

	assert_int_equal(prb_attach(&att, region, size, false), 0);
	assert_int_equal(prb_read(&att, 0, &rec, 0), 0);
	assert_string_equal(rec.text, "hello");
	assert_int_equal(prb_store(&att, &(struct prb_meta){ 0 }, "x", 1, NULL, 0, true, NULL), -EPERM);

	assert_int_equal(prb_attach(&att, region, size - 1, false), -ENOSPC);
	assert_int_equal(prb_attach(&att, region, 100, false), -ENOSPC);
	assert_int_equal(prb_attach(&att, region + 64, size, false), -EPROTO);

	region[0] ^= 1;
	assert_int_equal(prb_attach(&att, region, size, false), -EPROTO);
	memcpy(region, saved, sizeof(saved));
	poke32(8, 2); /* the ABI before the format string table */
	assert_int_equal(prb_attach(&att, region, size, false), -EPROTONOSUPPORT);
	memcpy(region, saved, sizeof(saved));
	poke32(12, 0x04030201); /* the other byte order */
	assert_int_equal(prb_attach(&att, region, size, false), -EPROTONOSUPPORT);
	memcpy(region, saved, sizeof(saved));
	region[21]--; /* id width */
	assert_int_equal(prb_attach(&att, region, size, false), -EPROTONOSUPPORT);
	memcpy(region, saved, sizeof(saved));
	poke32(16, 8192);
	assert_int_equal(prb_attach(&att, region, size, false), -EBADMSG);
	memcpy(region, saved, sizeof(saved));
	region[23] = 11; /* more descriptors than the region holds */
	assert_int_equal(prb_attach(&att, region, size, false), -EBADMSG);
	memcpy(region, saved, sizeof(saved));
	region[24] = 40; /* absurd data size */
	assert_int_equal(prb_attach(&att, region, size, false), -EBADMSG);
	memcpy(region, saved, sizeof(saved));
	region[48] ^= 0x40; /* data offset */
	assert_int_equal(prb_attach(&att, region, size, false), -EBADMSG);
	memcpy(region, saved, sizeof(saved));
	assert_int_equal(prb_attach(&att, region, size, true), 0);
	assert_int_equal(prb_store(&att, &(struct prb_meta){ 0 }, "x", 1, NULL, 0, true, NULL), 0);
	assert_int_equal(prb_read(rb, 1, &rec, 0), 0);
	assert_string_equal(rec.text, "x");
	assert_non_null(strstr(prb_strerror(-EPROTO), "not a libprintk log"));
}

/* ---- prb_peek: where a record stands, without copying it ---- */

static struct prb *peek_ring;
static unsigned peek_at_tp[PRB_TP_REOPENED + 1];
static uint64_t peek_seq;

static void peek_hook(enum prb_testpoint tp)
{
	unsigned level = 99;

	peek_at_tp[tp] = prb_peek(peek_ring, peek_seq, &level) + 1u; /* 0: not called */
	if (peek_at_tp[tp] == PRB_PEEK_FINAL + 1)
		fail_msg("a record being written peeked as final");
}

static void test_peek(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_meta m = meta_of(1, 0);
	unsigned level = 99;
	char text[64];

	/* Nothing reserved yet: its writer has not come. */
	assert_int_equal(prb_peek(rb, 0, &level), PRB_PEEK_PENDING);
	assert_int_equal(prb_peek(rb, 5, &level), PRB_PEEK_PENDING);
	assert_int_equal(level, 99);

	m.level = 3;
	assert_int_equal(prb_store(rb, &m, "err", 3, NULL, 0, true, NULL), 0);
	assert_int_equal(prb_peek(rb, 0, &level), PRB_PEEK_FINAL);
	assert_int_equal(level, 3);

	/* Open for continuation: not final yet, then final once ended. */
	store_text(rb, 1, "open", false);
	assert_int_equal(prb_peek(rb, 1, &level), PRB_PEEK_PENDING);
	prb_finalize_last(rb);
	assert_int_equal(prb_peek(rb, 1, &level), PRB_PEEK_FINAL);
	assert_int_equal(level, 6);

	/* Every step of a writer's record before its commit. */
	peek_ring = rb;
	peek_seq = 2;
	memset(peek_at_tp, 0, sizeof(peek_at_tp));
	prb_set_testpoint_hook(peek_hook);
	store_text(rb, 1, "watched", true);
	prb_set_testpoint_hook(NULL);
	assert_int_equal(peek_at_tp[PRB_TP_HEAD_RESERVED], PRB_PEEK_PENDING + 1);
	assert_int_equal(peek_at_tp[PRB_TP_CLAIMED], PRB_PEEK_PENDING + 1);
	assert_int_equal(peek_at_tp[PRB_TP_BEFORE_COMMIT], PRB_PEEK_PENDING + 1);
	assert_int_equal(prb_peek(rb, 2, &level), PRB_PEEK_FINAL);

	/* Overwritten: gone, however far back. */
	memset(text, 'x', sizeof(text));
	for (int i = 0; i < 100; i++)
		assert_int_equal(prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL), 0);
	assert_true(prb_first_seq(rb) > 2);
	assert_int_equal(prb_peek(rb, 0, &level), PRB_PEEK_GONE);
	assert_int_equal(prb_peek(rb, 2, &level), PRB_PEEK_GONE);
	assert_int_equal(prb_peek(rb, prb_first_seq(rb) - 1, &level), PRB_PEEK_GONE);
	assert_int_equal(prb_peek(rb, prb_first_seq(rb), &level), PRB_PEEK_FINAL);
	assert_int_equal(prb_peek(rb, prb_next_seq(rb) - 1, &level), PRB_PEEK_FINAL);
	assert_int_equal(level, 3);
	assert_int_equal(prb_peek(rb, prb_next_seq(rb), &level), PRB_PEEK_PENDING);
}

/* ---- prb_skip_levels: a run of records a console does not print ---- */

static void store_level(struct prb *rb, int level, bool final)
{
	struct prb_meta m = meta_of(1, 0);

	m.level = (uint8_t)level;
	if (!final)
		m.flags = 0;
	assert_int_equal(prb_store(rb, &m, "r", 1, NULL, 0, final, NULL), 0);
}

static void test_skip_levels(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	const unsigned info_debug = 1u << 6 | 1u << 7;
	const int levels[] = { 6, 7, 6, 6, 3, 6, 6 };

	assert_int_equal(prb_skip_levels(rb, 0, info_debug, 100), 0); /* nothing yet */
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		store_level(rb, levels[i], true);
	store_level(rb, 6, false); /* seq 7: open, not final */

	/* Up to the first record of another level, the limit, or one not final. */
	assert_int_equal(prb_skip_levels(rb, 0, info_debug, 100), 4);
	assert_int_equal(prb_skip_levels(rb, 0, 1u << 6, 100), 1);
	assert_int_equal(prb_skip_levels(rb, 1, 1u << 7, 100), 1);
	assert_int_equal(prb_skip_levels(rb, 0, info_debug, 3), 3);
	assert_int_equal(prb_skip_levels(rb, 0, info_debug, 0), 0);
	assert_int_equal(prb_skip_levels(rb, 0, 0, 100), 0);
	assert_int_equal(prb_skip_levels(rb, 4, info_debug, 100), 0);
	assert_int_equal(prb_skip_levels(rb, 4, 0xff, 100), 3);
	assert_int_equal(prb_skip_levels(rb, 5, info_debug, 100), 2);
	prb_finalize_last(rb);
	assert_int_equal(prb_skip_levels(rb, 5, info_debug, 100), 3);
	assert_int_equal(prb_skip_levels(rb, 8, 0xff, 100), 0); /* not reserved */

	/* Overwritten records are not passed: the reader learns what it
	 * lost by reading. A run stays within half a lap of slots. */
	for (uint64_t i = 0; i < rb->desc_count * 2; i++)
		store_level(rb, 7, true);
	assert_true(prb_first_seq(rb) > 0);
	assert_int_equal(prb_skip_levels(rb, 0, 0xff, 100), 0);
	assert_int_equal(prb_skip_levels(rb, prb_first_seq(rb) - 1, 0xff, 100), 0);

	uint64_t first = prb_first_seq(rb), next = prb_next_seq(rb);

	assert_true(next - first > rb->desc_count / 2);
	assert_int_equal(prb_skip_levels(rb, first, 0xff, UINT64_MAX), rb->desc_count / 2);
	assert_int_equal(prb_skip_levels(rb, next - 3, 1u << 7, UINT64_MAX), 3);
}

/* ---- a nested writer at each test point: what a signal handler does ---- */

static struct prb *tp_ring;
static enum prb_testpoint tp_target;
static int tp_armed;
static int tp_nested_ok, tp_nested_enobufs, tp_extend_result;

static void nested_writer(enum prb_testpoint tp)
{
	if (!tp_armed || tp != tp_target)
		return;
	tp_armed = 0;

	struct prb_meta m = meta_of(7, 1); /* same thread, one signal deeper */
	struct prb_caller me = { .pid = 42, .tid = 7, .ctx = 1 };
	char text[64];

	memset(text, 'n', sizeof(text));
	tp_extend_result = prb_extend(tp_ring, &me, "x", 1, PRB_TEXT_MAX, true, 0, NULL);
	/* Far more than fits: the ring wraps onto the interrupted record. */
	for (int i = 0; i < 200; i++) {
		int err = prb_store(tp_ring, &m, text, sizeof(text), NULL, 0, true, NULL);

		if (err == 0)
			tp_nested_ok++;
		else if (err == -ENOBUFS)
			tp_nested_enobufs++;
		else
			fail_msg("nested store: %d", err);
	}
}

static void interrupted_at(enum prb_testpoint tp, bool outer_final)
{
	struct prb *rb = new_ring(12, 0);
	struct prb_stats st;

	tp_ring = rb;
	tp_target = tp;
	tp_armed = 1;
	tp_nested_ok = tp_nested_enobufs = 0;
	prb_set_testpoint_hook(nested_writer);
	uint64_t outer = store_text(rb, 7, "interrupted", outer_final);

	prb_set_testpoint_hook(NULL);
	assert_int_equal(tp_armed, 0);
	/* The nested writer filled the ring up to the interrupted record and
	 * then failed fast instead of waiting for it. */
	assert_true(tp_nested_ok > 0);
	assert_true(tp_nested_enobufs > 0);
	assert_int_equal(tp_nested_ok + tp_nested_enobufs, 200);
	prb_get_stats(rb, &st);
	assert_int_equal(st.reserve_failed, (uint64_t)tp_nested_enobufs);
	/* The handler's continuation never joins the interrupted (ctx 0) record. */
	assert_int_equal(tp_extend_result, -ENOENT);

	/* Everything is intact and in order; the outer record reads back whole. */
	uint64_t want = 0, n = 0;
	int found_outer = 0;

	if (!outer_final)
		prb_finalize_last(rb);
	while (prb_read(rb, want, &rec, 0) == 0) {
		if (rec.seq == outer) {
			assert_string_equal(rec.text, "interrupted");
			found_outer = 1;
		} else {
			assert_int_equal(rec.text_len, 64);
			assert_int_equal(rec.text[0], 'n');
			assert_int_equal(rec.caller.ctx, 1);
		}
		want = rec.seq + 1;
		n++;
	}
	assert_true(found_outer);
	assert_int_equal(want, (uint64_t)tp_nested_ok + 1);
	assert_int_equal(prb_next_seq(rb), want);
}

static void test_interrupted_after_head(void **state)
{
	(void)state;
	interrupted_at(PRB_TP_HEAD_RESERVED, true);
}

static void test_interrupted_after_claim(void **state)
{
	(void)state;
	interrupted_at(PRB_TP_CLAIMED, true);
}

static void test_interrupted_before_commit(void **state)
{
	(void)state;
	interrupted_at(PRB_TP_BEFORE_COMMIT, false);
}

/* While a record is RESERVED, readers stop there: nothing later leaks past it. */
static int hold_ready;
static uint64_t held_seq_next;

static void reader_at_claim(enum prb_testpoint tp)
{
	if (tp != PRB_TP_CLAIMED || !hold_ready)
		return;
	hold_ready = 0;
	assert_int_equal(prb_read(tp_ring, held_seq_next, &rec, 0), -EAGAIN);
	assert_int_equal(prb_next_seq(tp_ring), held_seq_next);
	assert_int_equal(prb_next_reserve_seq(tp_ring), held_seq_next + 1);
}

static void test_reserved_blocks_readers(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);

	tp_ring = rb;
	store_text(rb, 1, "one", true);
	held_seq_next = 1;
	hold_ready = 1;
	prb_set_testpoint_hook(reader_at_claim);
	store_text(rb, 1, "two", true);
	prb_set_testpoint_hook(NULL);
	assert_int_equal(hold_ready, 0);
	assert_int_equal(prb_read(rb, 1, &rec, 0), 0);
	assert_string_equal(rec.text, "two");
}

/* ---- writers that die: holes and stolen slots (shared-log rules) ---- */

static unsigned dead_owner;
static jmp_buf died;
static enum prb_testpoint die_at;

static int fake_owner_alive(struct prb *rb, unsigned owner, uint32_t pid)
{
	(void)rb;
	(void)pid;
	return owner != dead_owner;
}

static void die_here(enum prb_testpoint tp)
{
	if (tp == die_at)
		longjmp(died, 1); /* the writer vanishes at this instruction */
}

static int store_and_die(struct prb *rb, enum prb_testpoint where, uint16_t owner)
{
	struct prb_meta m = meta_of(9, 0);

	rb->owner = owner;
	die_at = where;
	prb_set_testpoint_hook(die_here);
	if (setjmp(died) == 0) {
		prb_store(rb, &m, "dying words", 11, NULL, 0, true, NULL);
		prb_set_testpoint_hook(NULL);
		return 0;
	}
	prb_set_testpoint_hook(NULL);
	rb->owner = 1; /* "this process" from now on */
	return 1;
}

static void test_dead_writer_becomes_hole(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	struct prb_stats st;
	char text[64];

	rb->owner_alive = fake_owner_alive;
	dead_owner = 0;
	store_text(rb, 1, "before", true);
	assert_int_equal(store_and_die(rb, PRB_TP_CLAIMED, 7), 1);
	store_text(rb, 1, "after", true);

	/* While its writer lives, the record blocks readers at seq 1. */
	assert_int_equal(prb_read(rb, 1, &rec, 0), -EAGAIN);
	/* Once it is known dead, a writable reader makes it a hole and goes on. */
	dead_owner = 7;
	assert_int_equal(prb_read(rb, 1, &rec, 0), 0);
	assert_int_equal(rec.seq, 2);
	assert_string_equal(rec.text, "after");
	prb_get_stats(rb, &st);
	assert_int_equal(st.holes, 1);

	/* Writers pass it too: many laps later everything still works. */
	memset(text, 'w', sizeof(text));
	for (int i = 0; i < 500; i++) {
		struct prb_meta m = meta_of(1, 0);

		assert_int_equal(prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL), 0);
	}
	assert_int_equal(prb_next_seq(rb), 503);
}

static void test_dead_writer_tail_push(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	char text[64];
	struct prb_stats st;

	rb->owner_alive = fake_owner_alive;
	dead_owner = 0;
	assert_int_equal(store_and_die(rb, PRB_TP_BEFORE_COMMIT, 7), 1);
	memset(text, 'w', sizeof(text));
	/* The ring wraps onto the dead record: blocked while "alive"... */
	int failed = 0;

	for (int i = 0; i < 100; i++) {
		struct prb_meta m = meta_of(1, 0);

		if (prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL) == -ENOBUFS)
			failed++;
	}
	assert_true(failed > 0);
	/* ...and reclaimed by the next writer once dead. */
	dead_owner = 7;
	struct prb_meta m = meta_of(1, 0);

	assert_int_equal(prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL), 0);
	prb_get_stats(rb, &st);
	assert_int_equal(st.holes, 1);
	assert_int_equal(prb_first_seq(rb) > 0, 1);
}

static void test_unclaimed_slot_stolen(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	char text[64];
	struct prb_stats st;

	rb->owner_alive = fake_owner_alive;
	dead_owner = 0;
	/* Dies between the head CAS and the claim: no owner, no extent tag. */
	assert_int_equal(store_and_die(rb, PRB_TP_HEAD_RESERVED, 7), 1);
	store_text(rb, 1, "next", true);
	assert_int_equal(prb_read(rb, 0, &rec, 0), -EAGAIN);
	assert_int_equal(prb_read(rb, 0, &rec, PRB_READ_SKIP_UNFINISHED), 0);
	assert_string_equal(rec.text, "next");

	memset(text, 'w', sizeof(text));
	uint64_t t0 = now_ms();
	int stored = 0;

	/* Blocked until the stall timeout, then the slot is stolen. */
	while (now_ms() - t0 < 3000 && stored < 200) {
		struct prb_meta m = meta_of(1, 0);

		if (prb_store(rb, &m, text, sizeof(text), NULL, 0, true, NULL) == 0)
			stored++;
		else
			usleep(1000);
	}
	assert_int_equal(stored, 200);
	prb_get_stats(rb, &st);
	assert_int_equal(st.stolen, 1);
	assert_true(prb_first_seq(rb) > 1);
}

/* ---- waiting ---- */

static void *delayed_writer(void *arg)
{
	usleep(100 * 1000);
	store_text(arg, 1, "wake up", true);
	return NULL;
}

static void test_wait(void **state)
{
	(void)state;
	struct prb *rb = new_ring(12, 0);
	pthread_t th;

	assert_int_equal(prb_wait(rb, 0, 20 * 1000 * 1000), -ETIMEDOUT);
	store_text(rb, 1, "ready", true);
	assert_int_equal(prb_wait(rb, 0, 0), 0);

	uint64_t t0 = now_ms();

	assert_int_equal(pthread_create(&th, NULL, delayed_writer, rb), 0);
	int err;

	do
		err = prb_wait(rb, 1, 5 * 1000 * 1000 * 1000ll);
	while (err == 0 && prb_read(rb, 1, &rec, 0) == -EAGAIN);
	assert_int_equal(err, 0);
	assert_true(now_ms() - t0 < 4000);
	pthread_join(th, NULL);
	assert_int_equal(prb_read(rb, 1, &rec, 0), 0);
	assert_string_equal(rec.text, "wake up");
}

/* ------------------------------------------------------------- batches -- */

/* A batch's records as lane memory holds them: whole words, the bytes
 * after the text set (the ring stores them zeroed: the check covers them). */
#define B_MAX PRB_BATCH_MAX
static pk_a64 b_words[B_MAX][PRB_TEXT_MAX / 8 + 1];
static struct prb_batch_rec b_recs[B_MAX];
static char b_text[B_MAX][PRB_TEXT_MAX + 1];

static void batch_make(unsigned n, unsigned salt)
{
	for (unsigned j = 0; j < n; j++) {
		unsigned len = (salt * 37 + j * 101) % 200;
		char *t = b_text[j];

		for (unsigned k = 0; k < len; k++)
			t[k] = (char)('a' + (salt + j * 7 + k) % 26);
		t[len] = '\0';
		for (unsigned w = 0; w < PRB_TEXT_MAX / 8 + 1; w++) {
			uint64_t v = 0xdeadbeefcafef00dull; /* garbage after the text */

			if (8 * w < len)
				memcpy(&v, t + 8 * w, len - 8 * w < 8 ? len - 8 * w : 8);
			pk_store_relaxed(&b_words[j][w], v);
		}
		b_recs[j] = (struct prb_batch_rec){
			.words = b_words[j],
			.ts_nsec = 1000000ull * salt + j,
			.caller = 77 | (uint64_t)(100 + j) << 32,
			.len = (uint16_t)len,
			.level = (uint8_t)(j % 8),
			.flags = PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED,
		};
	}
}

/* Record @seq is batch record @j of batch_make(@salt) exactly. */
static void batch_check(struct prb *rb, uint64_t seq, unsigned j)
{
	assert_int_equal(prb_read(rb, seq, &rec, 0), 0);
	assert_int_equal(rec.seq, seq);
	assert_int_equal(rec.text_len, b_recs[j].len);
	assert_memory_equal(rec.text, b_text[j], b_recs[j].len);
	assert_int_equal(rec.ts_nsec, b_recs[j].ts_nsec);
	assert_int_equal(rec.caller.pid, 77);
	assert_int_equal(rec.caller.tid, 100 + j);
	assert_int_equal(rec.caller.ctx, 0);
	assert_int_equal(rec.level, j % 8);
	assert_int_equal(rec.facility, 0);
	assert_int_equal(rec.flags, PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED);
	assert_int_equal(rec.dict_len, 0);
}

/* Many laps of a small ring: batches of every size between single stores
 * and an open line; every seq dense, every record exact (its check value
 * verified by the read), loss exact once the ring overwrites. */
static void test_batch_round_trip(void **state)
{
	(void)state;
	struct prb *rb = new_ring(14, 0); /* 16 KiB: a batch of 64 may pass a quarter */
	pk_a64 journal[3] = { 0 };
	uint64_t next = 0, refused = 0;
	struct prb_stats st;

	for (unsigned round = 0; round < 600; round++) {
		unsigned n = 1 + round % B_MAX;

		batch_make(n, round);
		if (round % 3 == 0)
			assert_int_equal(store_text(rb, 9, "single", true), next++);
		if (round % 5 == 1)
			assert_int_equal(store_text(rb, 9, "open ", false), next++); /* finalized by the batch */

		int got = prb_store_batch(rb, b_recs, n, journal);
		unsigned units = 0;

		for (unsigned j = 0; j < n; j++)
			units += (b_recs[j].len + 15u) / 16u;
		if (units > 1024 / 4) {
			/* over a quarter of the ring's data: refused whole */
			assert_int_equal(got, -E2BIG);
			assert_int_equal(prb_next_reserve_seq(rb), next);
			refused++;
			continue;
		}
		assert_int_equal(got, (int)n);
		/* The journal names the batch: its first id, all committed. */
		assert_int_equal(pk_load_relaxed(&journal[1]) & 0xff, n);
		assert_int_equal(pk_load_relaxed(&journal[0]) - 1, prb_seq_id(rb, next));
		for (unsigned j = 0; j < n; j++)
			batch_check(rb, next + j, j);
		assert_int_equal(prb_next_seq(rb), next + n);
		next += n;

		/* Readers from the oldest: dense up to the end. */
		uint64_t q = prb_first_seq(rb);

		assert_int_equal(prb_read(rb, q, &rec, 0), 0);
		assert_int_equal(rec.seq, q);
	}
	assert_true(next > 4000); /* some 40 laps */
	assert_true(refused > 0 && refused < 300); /* 224 */
	prb_get_stats(rb, &st);
	assert_int_equal(st.corrupt + st.holes + st.stolen + st.reserve_failed, 0);
}

/* A batch into a full ring retires just the records its room needs, as
 * stores one by one would (its pusher passes a run of them with one CAS):
 * a ring held to 128 records by its descriptors loses exactly as many of
 * its oldest as the batch brings (3, 7, 16), and everything after them
 * reads back whole. */
static void test_batch_retires_what_it_needs(void **state)
{
	(void)state;
	struct prb *rb = new_ring(13, 7); /* 512 units of data, 128 descriptors */
	pk_a64 journal[3] = { 0 };
	struct prb_stats st;
	char text[32];

	for (unsigned i = 0; i < 300; i++) {
		snprintf(text, sizeof(text), "r%u", i);
		assert_int_equal(store_text(rb, 9, text, true), i);
	}

	uint64_t first = prb_first_seq(rb), next = prb_next_seq(rb);

	assert_int_equal(next, 300);
	assert_int_equal(next - first, 128);
	for (unsigned round = 0; round < 6; round++) {
		unsigned n = round % 3 == 0 ? 3 : round % 3 == 1 ? 7 : 16;

		batch_make(n, round);
		for (unsigned j = 0; j < n; j++) { /* one unit each */
			if (b_recs[j].len > 16)
				b_recs[j].len = 16;
			b_text[j][b_recs[j].len] = '\0';
		}
		assert_int_equal(prb_store_batch(rb, b_recs, n, journal), (int)n);
		assert_int_equal(prb_first_seq(rb), first + n);
		assert_int_equal(prb_next_seq(rb), next + n);
		for (uint64_t q = first + n; q < next; q++) {
			snprintf(text, sizeof(text), "r%llu", (unsigned long long)q);
			assert_int_equal(prb_read(rb, q, &rec, 0), 0);
			assert_int_equal(rec.seq, q);
			if (q < 300)
				assert_memory_equal(rec.text, text, strlen(text));
		}
		for (unsigned j = 0; j < n; j++)
			batch_check(rb, next + j, j);
		first += n;
		next += n;
	}
	prb_get_stats(rb, &st);
	assert_int_equal(st.corrupt + st.holes + st.stolen + st.reserve_failed, 0);
}

static void test_batch_arguments(void **state)
{
	(void)state;
	struct prb *rb = new_ring(14, 6); /* 16 KiB, 64 descriptors: a quarter is 4 KiB, 16 */
	pk_a64 journal[3] = { 0 };

	batch_make(B_MAX, 1);
	for (unsigned j = 0; j < B_MAX; j++)
		b_recs[j].len = 1;
	assert_int_equal(prb_store_batch(rb, b_recs, 0, journal), -EINVAL);
	assert_int_equal(prb_store_batch(rb, b_recs, B_MAX + 1, journal), -EINVAL);
	assert_int_equal(prb_store_batch(rb, b_recs, 1, NULL), -EINVAL);
	/* 17 records: over a quarter of the descriptors */
	assert_int_equal(prb_store_batch(rb, b_recs, 17, journal), -E2BIG);
	for (unsigned j = 0; j < 16; j++)
		b_recs[j].len = 300; /* 16 x 304 bytes: over a quarter of the data */
	assert_int_equal(prb_store_batch(rb, b_recs, 16, journal), -E2BIG);
	b_recs[0].len = PRB_TEXT_MAX + 1;
	assert_int_equal(prb_store_batch(rb, b_recs, 1, journal), -EINVAL);
	assert_int_equal(prb_next_reserve_seq(rb), 0);
}

/* A batch's writer stopped at each of its test points (as if killed: the
 * hook leaves by longjmp), then the batch resumed from its journal: the
 * same records at the same seqs, dense, nothing a hole; the ring goes on. */
static jmp_buf b_jmp;
static int b_points, b_stop_at;

static void batch_stop(enum prb_testpoint tp)
{
	(void)tp;
	if (++b_points == b_stop_at)
		longjmp(b_jmp, 1);
}

static void test_batch_resume_each_step(void **state)
{
	(void)state;
	static int stops;

	stops = 0;
	for (b_stop_at = 1;; b_stop_at++) {
		struct prb *rb = new_ring(14, 0);
		pk_a64 journal[3] = { 0 };
		volatile int got = -1;
		struct prb_stats st;

		store_text(rb, 9, "before", true);
		batch_make(12, 3);
		b_points = 0;
		prb_set_testpoint_hook(batch_stop);
		if (!setjmp(b_jmp))
			got = prb_store_batch(rb, b_recs, 12, journal);
		prb_set_testpoint_hook(NULL);
		if (got >= 0) {
			assert_int_equal(got, 12);
			break;
		}
		stops++;
		/* Readers stop before what is not committed. */
		uint64_t done = pk_load_relaxed(&journal[1]) & 0xff;

		assert_int_equal(prb_next_seq(rb), 1 + done);

		int r = prb_batch_resume(rb, b_recs, 12, journal);

		if (r == 0) {
			/* stopped before its head CAS: nothing reserved */
			assert_int_equal(b_stop_at, 1);
			assert_int_equal(prb_next_reserve_seq(rb), 1);
			assert_int_equal(prb_store_batch(rb, b_recs, 12, journal), 12);
		} else {
			assert_int_equal(r, 12);
		}
		assert_int_equal(pk_load_relaxed(&journal[1]) & 0xff, 12);
		/* A second resume finds everything stored. */
		assert_int_equal(prb_batch_resume(rb, b_recs, 12, journal), 12);
		for (unsigned j = 0; j < 12; j++)
			batch_check(rb, 1 + j, j);
		assert_int_equal(store_text(rb, 9, "after", true), 13);
		assert_int_equal(prb_next_seq(rb), 14);
		prb_get_stats(rb, &st);
		assert_int_equal(st.corrupt + st.holes + st.stolen + st.reserve_failed, 0);
	}
	/* named, reserved, then claim, before commit, committed for each */
	assert_int_equal(stops, 2 + 3 * 12);
}

/* A batch whose records were taken (a slot made a hole while its writer
 * stalled) ends there: the records after it become holes too, counted,
 * and nothing waits for them. */
static void test_batch_abandoned(void **state)
{
	(void)state;
	struct prb *rb = new_ring(14, 0);
	pk_a64 journal[3] = { 0 };
	volatile int got = -1;

	batch_make(10, 5);
	b_points = 0;
	b_stop_at = 2 + 3 * 4 + 1; /* record 4 claimed */
	prb_set_testpoint_hook(batch_stop);
	if (!setjmp(b_jmp))
		got = prb_store_batch(rb, b_recs, 10, journal);
	prb_set_testpoint_hook(NULL);
	assert_int_equal(got, -1);
	/* A resume whose record 4 became a hole stores 4 records. */
	prb_abandon_unfinished(rb);
	assert_int_equal(prb_batch_resume(rb, b_recs, 10, journal), 4);

	struct prb_stats st;

	prb_get_stats(rb, &st);
	assert_int_equal(st.holes, 1);	/* record 4, claimed */
	assert_int_equal(st.stolen, 5); /* records 5-9, unclaimed */
	for (unsigned j = 0; j < 4; j++)
		batch_check(rb, j, j);
	assert_int_equal(prb_read(rb, 4, &rec, 0), -EAGAIN);
	assert_int_equal(store_text(rb, 9, "after", true), 10);
	assert_int_equal(prb_read(rb, 4, &rec, 0), 0);
	assert_int_equal(rec.seq, 10); /* 4-9 lost, counted */
	assert_string_equal(rec.text, "after");
}

/* Batches and single stores from two threads at once: every record read
 * once, seqs dense, each batch's records consecutive and exact. */
static struct prb *race_rb;

static void *race_single(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 1500; i++) {
		char t[32];
		struct prb_meta m = meta_of(9, 0);
		int n = snprintf(t, sizeof(t), "w%u", i);

		assert_int_equal(prb_store(race_rb, &m, t, (size_t)n, NULL, 0, true, NULL), 0);
	}
	return NULL;
}

static void test_batch_races_stores(void **state)
{
	(void)state;
	struct prb *rb = new_ring(17, 0); /* no record overwritten */
	pk_a64 journal[3] = { 0 };
	pthread_t th;

	race_rb = rb;
	batch_make(8, 2);
	for (unsigned j = 0; j < 8; j++)
		b_recs[j].len = (uint16_t)(b_recs[j].len % 40);
	for (unsigned j = 0; j < 8; j++)
		b_text[j][b_recs[j].len] = '\0';
	assert_int_equal(pthread_create(&th, NULL, race_single, NULL), 0);
	for (unsigned i = 0; i < 150; i++)
		assert_int_equal(prb_store_batch(rb, b_recs, 8, journal), 8);
	assert_int_equal(pthread_join(th, NULL), 0);

	uint64_t next = prb_next_seq(rb), singles = 0, batches = 0;

	assert_int_equal(prb_first_seq(rb), 0);
	assert_int_equal(next, 1500 + 150 * 8);
	for (uint64_t q = 0; q < next;) {
		assert_int_equal(prb_read(rb, q, &rec, 0), 0);
		assert_int_equal(rec.seq, q);
		if (rec.caller.tid == 9) {
			char want[32];

			snprintf(want, sizeof(want), "w%llu", (unsigned long long)singles++);
			assert_string_equal(rec.text, want);
			q++;
			continue;
		}
		for (unsigned j = 0; j < 8; j++)
			batch_check(rb, q + j, j);
		q += 8;
		batches++;
	}
	assert_int_equal(singles, 1500);
	assert_int_equal(batches, 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_round_trip_every_field),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_wrap_mixed_sizes),
		cmocka_unit_test(test_overwrite_exact_loss),
		cmocka_unit_test(test_descriptor_limited),
		cmocka_unit_test(test_max_records_wrap),
		cmocka_unit_test(test_continuation_same_caller),
		cmocka_unit_test(test_continuation_rules),
		cmocka_unit_test(test_continuation_grows_across_end),
		cmocka_unit_test(test_header_validation),
		cmocka_unit_test(test_peek),
		cmocka_unit_test(test_skip_levels),
		cmocka_unit_test(test_interrupted_after_head),
		cmocka_unit_test(test_interrupted_after_claim),
		cmocka_unit_test(test_interrupted_before_commit),
		cmocka_unit_test(test_reserved_blocks_readers),
		cmocka_unit_test(test_dead_writer_becomes_hole),
		cmocka_unit_test(test_dead_writer_tail_push),
		cmocka_unit_test(test_unclaimed_slot_stolen),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_batch_round_trip),
		cmocka_unit_test(test_batch_retires_what_it_needs),
		cmocka_unit_test(test_batch_arguments),
		cmocka_unit_test(test_batch_resume_each_step),
		cmocka_unit_test(test_batch_abandoned),
		cmocka_unit_test(test_batch_races_stores),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
