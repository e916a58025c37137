// SPDX-License-Identifier: MIT
/*
 * test_stacktrace_names.c - PRINTK_NO_BUG_NAMES leaves WARN, WARN_ON,
 * WARN_ONCE, WARN_ON_ONCE, BUG, BUG_ON, dump_stack and dump_stack_lvl to
 * the program (many define a BUG or WARN of their own), keeps every other
 * kernel name, and the PK_ spellings still work.
 */
#define PRINTK_NO_BUG_NAMES 1

#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

#if defined(WARN) || defined(WARN_ON) || defined(WARN_ONCE) || defined(WARN_ON_ONCE) || \
	defined(BUG) || defined(BUG_ON) || defined(dump_stack) || defined(dump_stack_lvl)
#error "PRINTK_NO_BUG_NAMES left a name defined"
#endif
#if !defined(printk) || !defined(pr_info_once) || !defined(print_hex_dump)
#error "PRINTK_NO_BUG_NAMES hid more than its own names"
#endif

/* The program's own. */
static int bugs;
#define BUG() (bugs++)
static int WARN_ON(int x)
{
	return x * 2;
}
static int dump_stack(void)
{
	return 7;
}

static void test_own_names(void **state)
{
	(void)state;
	BUG();
	assert_int_equal(bugs, 1);
	assert_int_equal(WARN_ON(3), 6);
	assert_int_equal(dump_stack(), 7);
	assert_string_equal(capture_text(&cap), "");
	/* The library's, by their PK_ names. */
	assert_int_equal(PK_WARN_ON(bugs == 1), 1);
	assert_non_null(strstr(capture_text(&cap), "------------[ cut here ]------------\nWARNING: "));
	assert_int_equal(PK_WARN(0, "no\n"), 0);
	PK_BUG_ON(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_names, setup_capture, teardown_capture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
