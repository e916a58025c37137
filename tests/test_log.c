// SPDX-License-Identifier: MIT
/*
 * test_log.c - log handles (src/log/log.c): create and destroy, a log in a
 * caller's static array, a second (read-only) handle on the same region,
 * the size rules, and the errors.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <printk/log.h>

#include "testutil.h"

static struct pk_record rec;

static void test_create_sizes(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 0), 0);
	assert_int_equal(pk_log_buf_len(log), PK_LOG_BUF_LEN_DEFAULT);
	pk_log_destroy(log);
	assert_int_equal(pk_log_create(&log, 5000), 0); /* rounded up, like log_buf_len= */
	assert_int_equal(pk_log_buf_len(log), 8192);
	pk_log_destroy(log);
	assert_int_equal(pk_log_create(&log, PK_LOG_BUF_LEN_MIN), 0);
	assert_int_equal(pk_log_buf_len(log), 4096);
	pk_log_destroy(log);
	assert_int_equal(pk_log_create(&log, PK_LOG_BUF_LEN_MIN - 1), -EINVAL);
	assert_int_equal(pk_log_create(&log, PK_LOG_BUF_LEN_MAX + 1), -EINVAL);
	assert_int_equal(pk_log_create(NULL, 0), -EINVAL);
	assert_int_equal(pk_log_region_size(3000), 0);
	pk_log_destroy(NULL);
}

static void test_large_log(void **state)
{
	(void)state;
	struct pk_log *log;

#ifdef PRINTK_RING_SMALL_IDS
	/* 15-bit positions: 128 KiB is the largest log of this build. */
	assert_int_equal(pk_log_create(&log, (size_t)256 * 1024), -EINVAL);
	skip();
#endif

	/* 1 GiB: the mapping is lazy, so only touched pages cost memory. */
	assert_int_equal(pk_log_create(&log, (size_t)1 << 30), 0);
	assert_int_equal(pk_log_buf_len(log), (size_t)1 << 30);
	assert_int_equal(pk_log_store(log, 0, 6, "big", 3, NULL, 0), 0);
	assert_int_equal(pk_log_read(log, 0, &rec, 0), 0);
	assert_string_equal(rec.text, "big");
	pk_log_destroy(log);
}

static void test_store_read(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 4096), 0);
	assert_int_equal(pk_log_store(log, 3, 5, "daemon notice", 13, "KEY=v\0K2=w", 10), 0);
	assert_int_equal(pk_log_read(log, 0, &rec, 0), 0);
	assert_int_equal(rec.seq, 0);
	assert_int_equal(rec.facility, 3);
	assert_int_equal(rec.level, 5);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(rec.state, PK_REC_FINAL);
	assert_int_equal(rec.pid, (uint32_t)getpid());
	assert_int_equal(rec.tid, (uint32_t)gettid());
	assert_string_equal(rec.text, "daemon notice");
	assert_int_equal(rec.dict_len, 10);
	assert_memory_equal(rec.dict, "KEY=v\0K2=w", 10);
	assert_true(rec.ts_nsec > 0);
	assert_int_equal(pk_log_first_seq(log), 0);
	assert_int_equal(pk_log_next_seq(log), 1);
	assert_int_equal(pk_log_read(log, 1, &rec, 0), -EAGAIN);

	assert_int_equal(pk_log_store(log, 0, 8, "x", 1, NULL, 0), -EINVAL);
	assert_int_equal(pk_log_store(log, 256, 1, "x", 1, NULL, 0), -EINVAL);
	assert_int_equal(pk_log_store(log, -1, 1, "x", 1, NULL, 0), -EINVAL);
	char big[PK_TEXT_MAX + 1] = { 0 };

	assert_int_equal(pk_log_store(log, 0, 1, big, sizeof(big), NULL, 0), -E2BIG);
	assert_int_equal(pk_log_read(log, 0, &rec, 0x80), -EINVAL);
	assert_non_null(strstr(pk_log_strerror(-E2BIG), "too long"));
	pk_log_destroy(log);
}

static _Alignas(64) unsigned char arena[64 * 1024];

static void test_static_region_and_attach(void **state)
{
	(void)state;
	struct pk_log *w, *r;
	size_t need = pk_log_region_size(8192);

	assert_true(need > 0 && need <= sizeof(arena));
	assert_int_equal(pk_log_create_in(&w, arena, need - 1, 8192), -ENOSPC);
	assert_int_equal(pk_log_create_in(&w, arena + 1, need, 8192), -EINVAL);
	assert_int_equal(pk_log_create_in(&w, arena, need, 8192), 0);
	assert_int_equal(pk_log_store(w, 0, 6, "in a static array", 17, NULL, 0), 0);

	assert_int_equal(pk_log_attach(&r, arena, need, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_read(r, 0, &rec, 0), 0);
	assert_string_equal(rec.text, "in a static array");
	assert_int_equal(pk_log_store(r, 0, 6, "no", 2, NULL, 0), -EPERM);
	/* The reader sees later records of the writer live. */
	assert_int_equal(pk_log_store(w, 0, 6, "second", 6, NULL, 0), 0);
	assert_int_equal(pk_log_read(r, 1, &rec, 0), 0);
	assert_string_equal(rec.text, "second");
	assert_int_equal(pk_log_next_seq(r), 2);
	pk_log_destroy(r);

	assert_int_equal(pk_log_attach(&r, arena, need, 0x10), -EINVAL);
	arena[3] ^= 0xff;
	assert_int_equal(pk_log_attach(&r, arena, need, 0), -EPROTO);
	assert_non_null(strstr(pk_log_strerror(-EPROTO), "not a libprintk log"));
	arena[3] ^= 0xff;
	assert_int_equal(pk_log_attach(&r, arena, need / 2, 0), -ENOSPC);
	pk_log_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_sizes),
		cmocka_unit_test(test_large_log),
		cmocka_unit_test(test_store_read),
		cmocka_unit_test(test_static_region_and_attach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
