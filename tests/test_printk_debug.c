// SPDX-License-Identifier: MIT
/*
 * test_printk_debug.c - pr_debug, pr_devel and dev_dbg with DEBUG defined
 * before the include: they are real messages at KERN_DEBUG (level 7), their
 * arguments are evaluated once, they reach the console only when level 7 is
 * let through (console_loglevel 8+ or ignore_loglevel), and pr_fmt applies.
 * (Without DEBUG they compile to nothing: test_printk_levels.c.)
 */
#define DEBUG 1
#define pr_fmt(fmt) "dbg: " fmt

#include <string.h>

#include <printk/dev_printk.h>
#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

static int evaluated;

static int setup(void **state)
{
	(void)state;
	capture_setup(&cap, 0);
	evaluated = 0;
	return 0;
}

static int side_effect(void)
{
	return ++evaluated;
}

static void test_pr_debug_stores_at_level_7(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();
	uint64_t seq = pk_log_next_seq(log);

	assert_int_equal(pr_debug("value %d\n", side_effect()), 12);
	assert_int_equal(evaluated, 1);
	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_int_equal(rec.seq, seq);
	assert_string_equal(rec.text, "dbg: value 1");
	assert_int_equal(rec.level, 7);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	/* console_loglevel 7: level 7 is stored but not printed. */
	assert_string_equal(capture_text(&cap), "");

	assert_int_equal(pr_devel("devel %d\n", side_effect()), 12);
	assert_int_equal(evaluated, 2);
	assert_int_equal(pk_log_read(log, seq + 1, &rec, 0), 0);
	assert_string_equal(rec.text, "dbg: devel 2");
	assert_int_equal(rec.level, 7);
	assert_int_equal(pk_log_next_seq(log), seq + 2);
	assert_string_equal(capture_text(&cap), "");
}

static void test_pr_debug_printed_when_let_through(void **state)
{
	(void)state;
	pk_set_ignore_loglevel(1);
	pr_debug("one\n");
	pk_set_ignore_loglevel(0);
	pr_debug("hidden\n");
	assert_int_equal(pk_set_console_loglevel(8), 7);
	pr_debug("two %s\n", "x");
	pr_debug("no args either\n");
	assert_string_equal(capture_text(&cap), "dbg: one\ndbg: two x\ndbg: no args either\n");
}

static void test_dev_dbg(void **state)
{
	(void)state;
	struct pk_device dev = { .name = "sda", .driver = "sd", .subsystem = "block", .major = 8 };
	struct pk_log *log = pk_printk_log();
	uint64_t seq = pk_log_next_seq(log);

	pk_set_ignore_loglevel(1);
	dev_dbg(&dev, "probe %d\n", side_effect());
	assert_int_equal(evaluated, 1);
	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_int_equal(rec.level, 7);
	assert_string_equal(rec.text, "sd sda: probe 1"); /* dev_* does not use pr_fmt */
	assert_string_equal(capture_text(&cap), "sd sda: probe 1\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pr_debug_stores_at_level_7, setup, teardown_capture),
		cmocka_unit_test_setup_teardown(test_pr_debug_printed_when_let_through, setup, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_dbg, setup, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
