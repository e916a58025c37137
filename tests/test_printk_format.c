// SPDX-License-Identifier: MIT
/*
 * test_printk_format.c - printk never loses a message to its format:
 *   - a width or precision too large for an int, or above the kernel's
 *     limits, is clamped and the record is stored (cut at PK_TEXT_MAX);
 *   - a format ending inside a conversion stores the text before it;
 *   - a %s pointer in the first page or an ERR_PTR value prints
 *     "(efault)" instead of crashing, as the kernel does.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

/* The formats are wrong on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif

static void assert_spaces(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(p[i], ' ');
}

static void test_huge_width_is_stored(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(printk(KERN_INFO "ab%2147483648d|\n", 1), PK_TEXT_MAX);
	read_at(seq);
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.text_len, PK_TEXT_MAX);
	assert_memory_equal(rec.text, "ab", 2);
	assert_spaces(rec.text + 2, PK_TEXT_MAX - 2);

	assert_int_equal(printk(KERN_ERR "% 99999999999d\n", 7), PK_TEXT_MAX);
	read_at(seq + 1);
	assert_int_equal(rec.level, 3);
	assert_int_equal(rec.text_len, PK_TEXT_MAX);
	assert_spaces(rec.text, PK_TEXT_MAX);

	/* left-justified: the digits come first */
	assert_int_equal(printk(KERN_ERR "%-99999999999d|\n", 42), PK_TEXT_MAX);
	read_at(seq + 2);
	assert_memory_equal(rec.text, "42", 2);
	assert_spaces(rec.text + 2, PK_TEXT_MAX - 2);

	/* the precision clamps too: the digits are still at the end of 32767 */
	assert_int_equal(printk(KERN_ERR "%.2147483648d\n", 5), PK_TEXT_MAX);
	read_at(seq + 3);
	assert_int_equal(rec.text[0], '0');
	assert_int_equal(rec.text[PK_TEXT_MAX - 1], '0');
	assert_int_equal(printk(KERN_ERR "%.2147483648s|\n", "abc"), 4);
	read_at(seq + 4);
	assert_string_equal(rec.text, "abc|");
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	/* a "*" width of INT_MIN (2^31, left-justified) */
	assert_int_equal(printk(KERN_ERR "%*d|\n", INT_MIN, 9), PK_TEXT_MAX);
	read_at(seq + 5);
	assert_memory_equal(rec.text, "9 ", 2);
	assert_int_equal(next_seq(), seq + 6);
}

static void test_malformed_end_keeps_text(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(printk(KERN_WARNING "disk %d full %", 3), 12);
	read_at(seq);
	assert_string_equal(rec.text, "disk 3 full ");
	assert_int_equal(rec.level, 4);
	assert_int_equal(printk(KERN_WARNING "done\n%"), 4);
	read_at(seq + 1);
	assert_string_equal(rec.text, "done");
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(printk(KERN_WARNING "x=%d y=%-5", 1), 6);
	read_at(seq + 2);
	assert_string_equal(rec.text, "x=1 y=");
	/* more numbered arguments than supported: the text before them (the
	 * newline after the failure is lost with it: the line stays open) */
	assert_int_equal(printk(KERN_WARNING "n=%d %65$d\n", 1, 2), 4);
	read_at(seq + 3);
	assert_string_equal(rec.text, "n=1 ");
	assert_string_equal(capture_text(&cap), "disk 3 full \ndone\nx=1 y=\nn=1 ");
}

static void test_bad_string_pointers(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(printk(KERN_INFO "name=%s\n", (const char *)1), 13);
	read_at(seq);
	assert_string_equal(rec.text, "name=(efault)");
	assert_int_equal(printk(KERN_INFO "[%10s][%-9.3s]\n", (const char *)4095,
			       (const char *)(uintptr_t)-22), 23);
	read_at(seq + 1);
	assert_string_equal(rec.text, "[  (efault)][(ef      ]");
	assert_int_equal(printk(KERN_INFO "%pV|\n", (void *)64), 9);
	read_at(seq + 2);
	assert_string_equal(rec.text, "(efault)|");
	assert_string_equal(capture_text(&cap),
			    "name=(efault)\n[  (efault)][(ef      ]\n(efault)|\n");
}

#pragma GCC diagnostic pop

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_huge_width_is_stored, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_malformed_end_keeps_text, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_bad_string_pointers, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
