// SPDX-License-Identifier: MIT
/*
 * test_kmsg_dump.c - the dumper API (docs/kernel-compat.md, section 11), in process:
 *   - registration errors (-EINVAL, -EBUSY), unregistering, re-registering,
 *     unregistering from inside dump();
 *   - kmsg_dump(reason) against each dumper's max_reason (UNDEF = OOPS),
 *     in registration order; kmsg_dump_reason_str();
 *   - the iterator: get_line oldest first with exact bytes (console style,
 *     "<prio>" with syslog), size queries, whole lines only in a short
 *     buffer; get_buffer returning successively older blocks, exact bytes;
 *     rewind after SYSLOG_ACTION_CLEAR; the open line included;
 *   - the file dumper: /dev/kmsg format with escaping, dictionary lines and
 *     the ",partial" open line, mode 0600, truncated on each dump.
 * Crashes and panic() are in test_crash.c (child processes).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <printk/kmsg_dump.h>
#include <printk/printk.h>
#include <printk/syslog.h>

#include "fixture.h"
#include "testutil.h"


/* ---- registration and reasons ---- */

struct counting {
	struct kmsg_dumper d;
	int calls;
	enum kmsg_dump_reason last;
	int order; /* global call order stamp */
};

static int call_stamp;

static void counting_dump(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	struct counting *c = (struct counting *)d;

	c->calls++;
	c->last = reason;
	c->order = ++call_stamp;
}

static void test_register_errors(void **state)
{
	(void)state;
	struct counting a = { .d = { .dump = counting_dump } };
	struct kmsg_dumper nodump = { .dump = NULL };

	assert_int_equal(kmsg_dump_register(NULL), -EINVAL);
	assert_int_equal(kmsg_dump_register(&nodump), -EINVAL);
	assert_int_equal(kmsg_dump_unregister(NULL), -EINVAL);
	assert_int_equal(kmsg_dump_unregister(&a.d), -EINVAL);
	assert_int_equal(kmsg_dump_register(&a.d), 0);
	assert_true(a.d.registered);
	assert_int_equal(kmsg_dump_register(&a.d), -EBUSY);
	assert_int_equal(kmsg_dump_unregister(&a.d), 0);
	assert_false(a.d.registered);
	assert_int_equal(kmsg_dump_unregister(&a.d), -EINVAL);
	kmsg_dump(KMSG_DUMP_PANIC);
	assert_int_equal(a.calls, 0);
	assert_int_equal(kmsg_dump_register(&a.d), 0);
	kmsg_dump(KMSG_DUMP_PANIC);
	assert_int_equal(a.calls, 1);
	assert_int_equal(kmsg_dump_unregister(&a.d), 0);
}

static void test_reason_filtering(void **state)
{
	(void)state;
	struct counting undef = { .d = { .dump = counting_dump, .max_reason = KMSG_DUMP_UNDEF } };
	struct counting panic_only = { .d = { .dump = counting_dump,
					       .max_reason = KMSG_DUMP_PANIC } };
	struct counting all = { .d = { .dump = counting_dump, .max_reason = KMSG_DUMP_MAX } };
	struct counting *cs[] = { &undef, &panic_only, &all };
	static const struct {
		enum kmsg_dump_reason reason;
		int want[3];
	} cases[] = {
		{ KMSG_DUMP_PANIC, { 1, 1, 1 } },    { KMSG_DUMP_OOPS, { 1, 0, 1 } },
		{ KMSG_DUMP_EMERG, { 0, 0, 1 } },    { KMSG_DUMP_SHUTDOWN, { 0, 0, 1 } },
	};

	for (int i = 0; i < 3; i++)
		assert_int_equal(kmsg_dump_register(&cs[i]->d), 0);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (int i = 0; i < 3; i++)
			cs[i]->calls = cs[i]->order = 0;
		call_stamp = 0;
		kmsg_dump(cases[k].reason);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(cs[i]->calls, cases[k].want[i]);
			if (cs[i]->calls)
				assert_int_equal(cs[i]->last, cases[k].reason);
		}
	}
	/* Registration order. */
	call_stamp = 0;
	kmsg_dump(KMSG_DUMP_PANIC);
	assert_int_equal(undef.order, 1);
	assert_int_equal(panic_only.order, 2);
	assert_int_equal(all.order, 3);
	/* Unregistering the middle one leaves the others linked. */
	assert_int_equal(kmsg_dump_unregister(&panic_only.d), 0);
	call_stamp = 0;
	kmsg_dump(KMSG_DUMP_PANIC);
	assert_int_equal(undef.order, 1);
	assert_int_equal(all.order, 2);
	assert_int_equal(kmsg_dump_unregister(&undef.d), 0);
	assert_int_equal(kmsg_dump_unregister(&all.d), 0);

	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_PANIC), "Panic");
	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_OOPS), "Oops");
	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_EMERG), "Emergency");
	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_SHUTDOWN), "Shutdown");
	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_UNDEF), "Unknown");
	assert_string_equal(kmsg_dump_reason_str(KMSG_DUMP_MAX), "Unknown");
}

/* A dumper may unregister itself (no waiting for its own dump to end). */
static void self_unregister_dump(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	(void)reason;
	counting_dump(d, reason);
	assert_int_equal(kmsg_dump_unregister(d), 0);
}

static void test_unregister_from_dump(void **state)
{
	(void)state;
	struct counting a = { .d = { .dump = self_unregister_dump } };
	struct counting b = { .d = { .dump = counting_dump } };

	assert_int_equal(kmsg_dump_register(&a.d), 0);
	assert_int_equal(kmsg_dump_register(&b.d), 0);
	kmsg_dump(KMSG_DUMP_OOPS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1); /* the walk went on past the removed one */
	kmsg_dump(KMSG_DUMP_OOPS);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 2);
	assert_int_equal(kmsg_dump_unregister(&b.d), 0);
}

/* ---- the iterator ---- */

static void store_lines(void)
{
	test_clock_at(1000000000ull);
	pr_info("one\n");
	test_clock_at(2000000000ull);
	pr_err("two\nthree\n");
	test_clock_at(3500000000ull);
	pk_printk_emit(1, 5, NULL, 0, "four\n");
}

static void test_get_line(void **state)
{
	(void)state;
	struct kmsg_dump_iter it;
	char line[256];
	size_t len = 99;

	store_lines();
	kmsg_dump_rewind(&it);
	assert_int_equal(it.cur_seq, 0);
	assert_int_equal(it.next_seq, 3);
	assert_true(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_int_equal(len, 19);
	assert_string_equal(line, "[    1.000000] one\n");
	assert_true(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_string_equal(line, "[    2.000000] two\n[    2.000000] three\n");
	assert_int_equal(len, 40);
	assert_true(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_string_equal(line, "[    3.500000] four\n");
	assert_false(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_int_equal(len, 0);

	/* syslog: "<prio>" first; NULL: only the size; it still advances. */
	kmsg_dump_rewind(&it);
	assert_true(kmsg_dump_get_line(&it, true, NULL, 0, &len));
	assert_int_equal(len, 22);
	assert_true(kmsg_dump_get_line(&it, true, line, sizeof(line), &len));
	assert_string_equal(line, "<3>[    2.000000] two\n<3>[    2.000000] three\n");
	assert_true(kmsg_dump_get_line(&it, true, line, sizeof(line), &len));
	assert_string_equal(line, "<13>[    3.500000] four\n");

	/* A short buffer: whole lines only. */
	kmsg_dump_rewind(&it);
	assert_true(kmsg_dump_get_line(&it, false, NULL, 0, NULL));
	assert_true(kmsg_dump_get_line(&it, false, line, 25, &len));
	assert_int_equal(len, 19);
	assert_string_equal(line, "[    2.000000] two\n");
	/* Too short for any line: true, nothing. */
	assert_true(kmsg_dump_get_line(&it, false, line, 10, &len));
	assert_int_equal(len, 0);
	assert_string_equal(line, "");
}

static void test_get_line_open_line_and_clear(void **state)
{
	(void)state;
	struct kmsg_dump_iter it;
	char line[256];
	size_t len;

	store_lines();
	assert_int_equal(do_syslog(SYSLOG_ACTION_CLEAR, NULL, 0), 0);
	test_clock_at(4000000000ull);
	pr_info("after clear\n");
	test_clock_at(5000000000ull);
	pr_info("testing the frobnozzle ...");
	kmsg_dump_rewind(&it);
	assert_int_equal(it.cur_seq, 3);
	assert_int_equal(it.next_seq, 5); /* the open line counts */
	assert_true(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_string_equal(line, "[    4.000000] after clear\n");
	assert_true(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));
	assert_string_equal(line, "[    5.000000] testing the frobnozzle ...\n");
	assert_false(kmsg_dump_get_line(&it, false, line, sizeof(line), &len));

	/* An iterator rewound before CLEAR is raised to clear_seq on use. */
	struct kmsg_dump_iter old = { 0, 5 };

	assert_true(kmsg_dump_get_line(&old, false, line, sizeof(line), &len));
	assert_string_equal(line, "[    4.000000] after clear\n");
	pr_cont("\n");
}

static void test_get_buffer_blocks(void **state)
{
	(void)state;
	struct kmsg_dump_iter it;
	char buf[64];
	size_t len = 99;

	for (int i = 0; i < 7; i++) {
		test_clock_at((uint64_t)(i + 1) * 1000000000ull);
		pr_info("msg %d\n", i);
	}
	/* "[    N.000000] msg N\n" is 21 bytes: two fit in 63, then older pairs. */
	kmsg_dump_rewind(&it);
	assert_true(kmsg_dump_get_buffer(&it, false, buf, 64, &len));
	assert_int_equal(len, 63);
	assert_string_equal(buf, "[    5.000000] msg 4\n"
				 "[    6.000000] msg 5\n"
				 "[    7.000000] msg 6\n");
	assert_int_equal(it.next_seq, 4);
	assert_true(kmsg_dump_get_buffer(&it, false, buf, 63, &len));
	assert_int_equal(len, 42);
	assert_string_equal(buf, "[    3.000000] msg 2\n[    4.000000] msg 3\n");
	assert_true(kmsg_dump_get_buffer(&it, true, buf, 64, &len));
	assert_int_equal(len, 48);
	assert_string_equal(buf, "<6>[    1.000000] msg 0\n<6>[    2.000000] msg 1\n");
	assert_false(kmsg_dump_get_buffer(&it, false, buf, 64, &len));
	assert_int_equal(len, 0);

	/* size 0 and NULL: false. */
	kmsg_dump_rewind(&it);
	assert_false(kmsg_dump_get_buffer(&it, false, buf, 0, &len));
	assert_false(kmsg_dump_get_buffer(&it, false, NULL, 64, &len));

	/* Nothing fits whole: progress anyway (whole lines that fit: none). */
	kmsg_dump_rewind(&it);
	assert_true(kmsg_dump_get_buffer(&it, false, buf, 10, &len));
	assert_int_equal(len, 0);
	assert_int_equal(it.next_seq, 6);
	int calls = 1;

	while (kmsg_dump_get_buffer(&it, false, buf, 10, &len))
		calls++;
	assert_int_equal(calls, 7);
}

/* The usual dumper: rewind, then get_buffer from inside dump(). */
static char dumped[4096];
static size_t dumped_len;

static void buffer_dump(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	struct kmsg_dump_iter it;

	(void)d;
	dumped_len = (size_t)snprintf(dumped, sizeof(dumped), "%s:", kmsg_dump_reason_str(reason));
	kmsg_dump_rewind(&it);

	size_t n;

	kmsg_dump_get_buffer(&it, true, dumped + dumped_len, sizeof(dumped) - dumped_len, &n);
	dumped_len += n;
}

static void test_dumper_reads_log(void **state)
{
	(void)state;
	struct kmsg_dumper d = { .dump = buffer_dump, .max_reason = KMSG_DUMP_EMERG };

	store_lines();
	assert_int_equal(kmsg_dump_register(&d), 0);
	kmsg_dump(KMSG_DUMP_EMERG);
	assert_int_equal(kmsg_dump_unregister(&d), 0);
	assert_string_equal(dumped, "Emergency:<6>[    1.000000] one\n"
				    "<3>[    2.000000] two\n<3>[    2.000000] three\n"
				    "<13>[    3.500000] four\n");
}

/* ---- the file dumper ---- */

static void test_file_dumper(void **state)
{
	(void)state;
	char path[] = "/tmp/pk_dumpXXXXXX";
	int tmp = mkstemp(path);
	struct kmsg_dumper *d;
	struct stat st;

	assert_true(tmp >= 0);
	close(tmp);
	unlink(path);
	assert_int_equal(pk_kmsg_dump_file_create(&d, path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(kmsg_dump_register(d), 0);

	test_clock_at(1000000000ull);
	pr_info("plain\n");
	test_clock_at(1000001000ull);
	pr_warn("esc tab\there bs\\ del\x7f utf8 \xc3\xa9 nl\ninside\n");
	test_clock_at(1000002000ull);
	pk_printk_emit(0, 7, "SUBSYSTEM=acpi\0DEVICE=+acpi:PNP0A03:00", 38, "with dict\n");
	test_clock_at(2000000000ull);
	pr_info("testing the frobnozzle ...");
	kmsg_dump(KMSG_DUMP_OOPS);
	assert_file_equal(path, "6,0,1000000,-;plain\n"
				"4,1,1000001,-;esc tab\\x09here bs\\x5c del\\x7f utf8 \\xc3\\xa9 "
				"nl\\x0ainside\n"
				"7,2,1000002,-;with dict\n"
				" SUBSYSTEM=acpi\n"
				" DEVICE=+acpi:PNP0A03:00\n"
				"6,3,2000000,-,partial;testing the frobnozzle ...\n");

	/* Each dump rewrites the file: after the line ends it is no longer
	 * partial. */
	pr_cont(" done\n");
	kmsg_dump(KMSG_DUMP_PANIC);

	char *text = test_slurp(path, NULL);

	assert_non_null(text);
	assert_non_null(strstr(text, "6,3,2000000,-;testing the frobnozzle ... done\n"));
	assert_null(strstr(text, "partial"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((size_t)st.st_size, strlen(text));
	free(text);
	/* Shutdown is beyond its max_reason (UNDEF = OOPS): the file stays. */
	pr_info("later\n");
	kmsg_dump(KMSG_DUMP_SHUTDOWN);
	text = test_slurp(path, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "later"));
	free(text);

	pk_kmsg_dump_file_destroy(d); /* unregisters it */
	kmsg_dump(KMSG_DUMP_PANIC);
	unlink(path);

	assert_int_equal(pk_kmsg_dump_file_create(&d, NULL), -EINVAL);
	assert_int_equal(pk_kmsg_dump_file_create(NULL, path), -EINVAL);
	assert_int_equal(pk_kmsg_dump_file_create(&d, "/nonexistent-dir/x"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register_errors, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_reason_filtering, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_unregister_from_dump, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_get_line, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_get_line_open_line_and_clear,
						setup_capture_time, teardown_capture),
		cmocka_unit_test_setup_teardown(test_get_buffer_blocks, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_dumper_reads_log, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_file_dumper, setup_capture_time,
						teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
