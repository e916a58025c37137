// SPDX-License-Identifier: MIT
/*
 * test_printk_prfmt.c - "#define pr_fmt(fmt) "mymod: " fmt" before the
 * include: every pr_<level> message gets the prefix after its level header
 * (so the level is still parsed), pr_cont fragments and plain printk do not,
 * and the prefix counts in printk's return value.
 */
#define pr_fmt(fmt) "mymod: " fmt

#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"


static void test_pr_info_prefixed_pr_cont_not(void **state)
{
	(void)state;
	uint64_t seq = pk_log_next_seq(pk_printk_log());

	assert_int_equal(pr_info("starting %d: ", 1), 19);
	assert_int_equal(pr_cont("ok"), 2);
	assert_int_equal(pr_cont(" %s\n", "done"), 5);
	read_at(seq);
	assert_string_equal(rec.text, "mymod: starting 1: ok done");
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_string_equal(capture_text(&cap), "mymod: starting 1: ok done\n");
}

static void test_every_level_macro_prefixed(void **state)
{
	(void)state;
	uint64_t seq = pk_log_next_seq(pk_printk_log());

	pr_emerg("a\n");
	pr_alert("b\n");
	pr_crit("c\n");
	pr_err("d\n");
	pr_warn("e\n");
	pr_notice("f\n");
	pr_info("g\n");
	pr_default("h\n");
	printk(KERN_INFO "plain printk\n"); /* printk itself never uses pr_fmt */
	static const int levels[] = { 0, 1, 2, 3, 4, 5, 6, 4 };

	for (int i = 0; i < 8; i++) {
		char want[16] = "mymod: x";

		want[7] = (char)('a' + i);
		read_at(seq + (uint64_t)i);
		assert_string_equal(rec.text, want);
		assert_int_equal(rec.level, levels[i]);
	}
	read_at(seq + 8);
	assert_string_equal(rec.text, "plain printk");
	assert_string_equal(capture_text(&cap), "mymod: a\nmymod: b\nmymod: c\nmymod: d\nmymod: e\n"
						"mymod: f\nmymod: g\nmymod: h\nplain printk\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pr_info_prefixed_pr_cont_not, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_every_level_macro_prefixed, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
