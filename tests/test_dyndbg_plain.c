// SPDX-License-Identifier: MIT
/*
 * test_dyndbg_plain.c - the plain debug macros a compiler without section
 * attributes gets, forced with PRINTK_NO_DYNAMIC_DEBUG: with DEBUG,
 * pr_debug() and dev_dbg() print as they always did, and the file has no
 * call site to list or change.
 */
#define DEBUG			1
#define PRINTK_NO_DYNAMIC_DEBUG 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <printk/dev_printk.h>
#include <printk/dynamic_debug.h>
#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

#if PK_DYNDBG_ON
#error "PRINTK_NO_DYNAMIC_DEBUG must give the plain macros"
#endif

static void test_plain_debug(void **state)
{
	(void)state;
	struct pk_device dev = { .name = "sda", .driver = "sd" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	/* Printed on the console, so stored as text: printk returns its length
	 * (a line no console prints may be stored deferred, see printk(3)). */
	pk_set_console_loglevel(8);
	assert_int_equal(pr_debug("plain %d\n", 1), 7);
	read_at(next_seq() - 1);
	assert_string_equal(rec.text, "plain 1");
	assert_int_equal(rec.level, 7);
	assert_int_equal(dev_dbg(&dev, "dev\n"), 11);
	read_at(next_seq() - 1);
	assert_string_equal(rec.text, "sd sda: dev");
	/* Nothing to switch off, nothing listed. */
	assert_int_equal(pk_dyndbg_query("format plain -p"), 0);
	assert_int_equal(pr_debug("plain %d\n", 2), 7);
	assert_int_equal(pk_dyndbg_write_control(f), 0);
	fclose(f);
	assert_string_equal(text, "# filename:lineno [module]function flags format\n");
	free(text);
	assert_non_null(strstr(capture_text(&cap), "plain 1\n"));
	pk_set_console_loglevel(7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plain_debug, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
