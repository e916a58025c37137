// SPDX-License-Identifier: MIT
/*
 * test_textfmt.c - the shared record -> text helpers (src/record/textfmt.c):
 *   - pk_format_prefix() against the kernel's printf formats "<%u>",
 *     "[%5lu.%06lu]" and "[%6s]" of "T<tid>", for every combination of the
 *     three fields and the widths where padding stops;
 *   - pk_first_fitting_seq(), which syslog READ_ALL and kmsg_dump_get_buffer
 *     share: which records fit, the upper bound, the per-record size cap and
 *     the youngest record counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <printk/log.h>

#include "log/log_shared.h"
#include "testutil.h"
#include "record/textfmt.h"

static void test_prefix_matches_printf(void **state)
{
	(void)state;
	static const uint64_t ts[] = {0,
				      999,
				      1000,
				      999999999,
				      1000000000,
				      12345678901234ull,
				      99999999999999ull,
				      100000000000000ull,
				      UINT64_MAX};
	static const uint32_t tids[] = {0, 7, 99999, 100000, UINT32_MAX};
	struct prb_record r;
	char got[PK_PREFIX_MAX], want[128], caller[16];

	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		for (size_t j = 0; j < sizeof(tids) / sizeof(tids[0]); j++) {
			for (int bits = 0; bits < 8; bits++) {
				struct pk_textfmt f = {bits & 1, (bits & 2) != 0, (bits & 4) != 0};
				int n = 0;

				want[0] = '\0';
				r.ts_nsec = ts[i];
				r.caller.tid = tids[j];
				r.facility = (uint8_t)(i * 7 % 256);
				r.level = (uint8_t)(j % 8);
				if (f.syslog)
					n += snprintf(want + n, sizeof(want) - (size_t)n, "<%u>",
						      ((unsigned)r.facility << 3) | r.level);
				if (f.time)
					n += snprintf(want + n, sizeof(want) - (size_t)n,
						      "[%5" PRIu64 ".%06" PRIu64 "]",
						      ts[i] / 1000000000u,
						      ts[i] % 1000000000u / 1000u);
				if (f.caller) {
					snprintf(caller, sizeof(caller), "T%" PRIu32, tids[j]);
					n += snprintf(want + n, sizeof(want) - (size_t)n, "[%6s]",
						      caller);
				}
				if (f.time || f.caller)
					n += snprintf(want + n, sizeof(want) - (size_t)n, " ");
				assert_int_equal(pk_format_prefix(got, &r, &f), (size_t)n);
				assert_string_equal(got, want);
			}
		}
	}
}

/* Records "aaaa", "bb\ncc" and "d": without a prefix they take 5, 6 and 2
 * bytes ("bb\ncc" is two lines). */
static struct pk_log *three_records(void)
{
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 0), 0);
	assert_int_equal(pk_log_store(log, 1, 6, "aaaa", 4, NULL, 0), 0);
	assert_int_equal(pk_log_store(log, 1, 6, "bb\ncc", 5, NULL, 0), 0);
	assert_int_equal(pk_log_store(log, 1, 6, "d", 1, NULL, 0), 0);
	return log;
}

static uint64_t fit(struct pk_log *log, uint64_t start, uint64_t end, size_t size,
		    size_t record_max, uint64_t *youngest)
{
	static struct prb_record r;
	const struct pk_textfmt plain = {false, false, false};

	return pk_first_fitting_seq(pk_log_ring(log), start, end, size, record_max, &plain, 0, &r,
				    youngest);
}

static void test_first_fitting_seq(void **state)
{
	(void)state;
	struct pk_log *log = three_records();
	uint64_t youngest;

	/* The newest records whose sizes add up to at most @size. */
	assert_int_equal(fit(log, 0, UINT64_MAX, 13, PK_FMT_UNLIMITED, NULL), 0);
	assert_int_equal(fit(log, 0, UINT64_MAX, 12, PK_FMT_UNLIMITED, NULL), 1);
	assert_int_equal(fit(log, 0, UINT64_MAX, 8, PK_FMT_UNLIMITED, NULL), 1);
	assert_int_equal(fit(log, 0, UINT64_MAX, 7, PK_FMT_UNLIMITED, NULL), 2);
	assert_int_equal(fit(log, 1, UINT64_MAX, 7, PK_FMT_UNLIMITED, NULL), 2);
	assert_int_equal(fit(log, 0, UINT64_MAX, 2, PK_FMT_UNLIMITED, NULL), 2);

	/* None fits: after the youngest counted, which is reported. */
	youngest = UINT64_MAX;
	assert_int_equal(fit(log, 0, UINT64_MAX, 1, PK_FMT_UNLIMITED, &youngest), 3);
	assert_int_equal(youngest, 2);

	/* @end bounds the records counted. */
	youngest = UINT64_MAX;
	assert_int_equal(fit(log, 0, 2, 6, PK_FMT_UNLIMITED, &youngest), 1);
	assert_int_equal(youngest, 1);
	assert_int_equal(fit(log, 0, 2, 5, PK_FMT_UNLIMITED, NULL), 2);

	/* Nothing to count: @start back, *@youngest untouched. */
	youngest = 42;
	assert_int_equal(fit(log, 3, UINT64_MAX, 100, PK_FMT_UNLIMITED, &youngest), 3);
	assert_int_equal(fit(log, 1, 1, 100, PK_FMT_UNLIMITED, &youngest), 1);
	assert_int_equal(youngest, 42);

	/* Sizes as cut at @record_max (syslog's PK_MESSAGE_MAX): with 4 bytes,
	 * "aaaa" gives nothing, "bb\ncc" its first line (3), "d" 2. */
	assert_int_equal(fit(log, 0, UINT64_MAX, 5, 4, NULL), 0);
	assert_int_equal(fit(log, 0, UINT64_MAX, 4, 4, NULL), 2);
	pk_log_destroy(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_matches_printf),
		cmocka_unit_test(test_first_fitting_seq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
