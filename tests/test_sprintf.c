// SPDX-License-Identifier: MIT
/*
 * test_sprintf.c - the public string functions of <printk/sprintf.h> and
 * <printk/err.h>, with the kernel's names a program asks for
 * (PRINTK_KERNEL_SPRINTF) and the ones printk.h brings along.
 *   - the expectations of Linux lib/tests/printf_kunit.c for plain
 *     conversions (test_basic, test_number, test_string), each checked as
 *     that test checks vsnprintf: the return value for a full buffer, for
 *     every shorter one and for none, nothing written past the size, the
 *     NUL, and the same bytes from kasprintf;
 *   - every difference from glibc that docs/kernel-compat.md section 16
 *     lists, with the C library's output beside it where C defines one;
 *   - the return values (snprintf: what the whole output needs; scnprintf:
 *     what was stored; a size past INT_MAX: 0), kasprintf and kfree;
 *   - printk stores the same text as snprintf prints;
 *   - ERR_PTR and friends, and %pe of them;
 *   - pr_*_ratelimited and pr_*_once from <printk/printk.h> alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* The C library's snprintf, taken before the kernel's names replace it. */
static int (*volatile libc_snprintf)(char *, size_t, const char *, ...) = snprintf;
static int (*volatile libc_vsnprintf)(char *, size_t, const char *, va_list) = vsnprintf;

#define PRINTK_KERNEL_SPRINTF
#include <printk/err.h>
#include <printk/printk.h>

#include "fixture.h"

#if defined(__GNUC__)
/* Formats whose flags C calls pointless are the point here. */
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* checkers of a va_list */
#pragma GCC diagnostic ignored "-Wformat-extra-args"
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-overflow"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
#endif

#define BUF_SIZE 256
#define PAD	 16
#define FILL	 '$'

static char area[BUF_SIZE + 2 * PAD];

static bool untouched(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != FILL)
			return false;
	return true;
}

/* One vsnprintf call checked as printf_kunit.c's do_test checks it. */
static void one(int line, size_t size, const char *expect, size_t elen, const char *fmt, va_list ap)
{
	char *buf = area + PAD;
	va_list aq;
	int r;

	memset(area, FILL, sizeof(area));
	va_copy(aq, ap);
	r = vsnprintf(buf, size, fmt, aq);
	va_end(aq);
	if (r != (int)elen) {
		print_error("line %d: vsnprintf(buf, %zu, \"%s\") returned %d, expected %zu\n", line,
			    size, fmt, r, elen);
		fail();
	}
	assert_true(untouched(area, PAD));
	if (!size) {
		assert_true(untouched(buf, BUF_SIZE + PAD));
		return;
	}

	size_t written = elen < size - 1 ? elen : size - 1;

	assert_int_equal(buf[written], '\0');
	assert_true(untouched(buf + written + 1, size - (written + 1)));
	assert_true(untouched(buf + size, BUF_SIZE + PAD - size));
	if (memcmp(buf, expect, written)) {
		print_error("line %d: vsnprintf(buf, %zu, \"%s\") wrote \"%s\", expected \"%.*s\"\n",
			    line, size, fmt, buf, (int)written, expect);
		fail();
	}

	/* scnprintf: what was stored */
	memset(area, FILL, sizeof(area));
	va_copy(aq, ap);
	r = vscnprintf(buf, size, fmt, aq);
	va_end(aq);
	assert_int_equal(r, (int)written);
	assert_memory_equal(buf, expect, written);
	assert_int_equal(buf[written], '\0');
}

static void check_len(int line, const char *expect, size_t elen, const char *fmt, ...)
{
	va_list ap, aq;
	char *p;

	assert_true(elen < BUF_SIZE);
	va_start(ap, fmt);
	/* every size, where printf_kunit.c draws one at random */
	for (size_t size = 0; size <= elen + 1; size++)
		one(line, size, expect, elen, fmt, ap);
	one(line, BUF_SIZE, expect, elen, fmt, ap);

	va_copy(aq, ap);
	p = kvasprintf(GFP_KERNEL, fmt, aq);
	va_end(aq);
	assert_non_null(p);
	if (memcmp(p, expect, elen + 1)) {
		print_error("line %d: kvasprintf(\"%s\") returned \"%s\", expected \"%s\"\n", line,
			    fmt, p, expect);
		fail();
	}
	kfree(p);

	/* sprintf: the same bytes, the NUL after them */
	memset(area, FILL, sizeof(area));
	va_copy(aq, ap);
	assert_int_equal(vsprintf(area + PAD, fmt, aq), (int)elen);
	va_end(aq);
	assert_memory_equal(area + PAD, expect, elen + 1);
	assert_true(untouched(area + PAD + elen + 1, BUF_SIZE + PAD - elen - 1));
	va_end(ap);
}

#define T(expect, ...)	       check_len(__LINE__, expect, strlen(expect), __VA_ARGS__)
#define T_LEN(expect, n, ...)  check_len(__LINE__, expect, n, __VA_ARGS__)

/* The C library prints @c for the same call, and that is not the kernel's. */
static void c_check(int line, const char *kernel, const char *c, const char *fmt, ...)
{
	char buf[BUF_SIZE];
	va_list ap;

	va_start(ap, fmt);
	libc_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (strcmp(buf, c) || !strcmp(buf, kernel)) {
		print_error("line %d: the C library printed \"%s\" for \"%s\", expected \"%s\"\n",
			    line, buf, fmt, c);
		fail();
	}
}

/* A difference from the C library: the kernel's output through every
 * function, and the C library's. */
#define KC(kernel, c, ...)                                  \
	do {                                                \
		T(kernel, __VA_ARGS__);                     \
		c_check(__LINE__, kernel, c, __VA_ARGS__);  \
	} while (0)

/* ------------------------------------------- printf_kunit.c's cases -- */

static void test_kunit_basic(void **state)
{
	char nul = '\0';

	(void)state;
	T("", &nul);
	T("100%", "100%%");
	T("xxx%yyy", "xxx%cyyy", '%');
	T_LEN("xxx\0yyy", 7, "xxx%cyyy", '\0');
}

static void test_kunit_number(void **state)
{
	(void)state;
	T("0x1234abcd  ", "%#-12x", 0x1234abcd);
	T("  0x1234abcd", "%#12x", 0x1234abcd);
	T("0|001| 12|+123| 1234|-123|-1234", "%d|%03d|%3d|%+d|% d|%+d|% d", 0, 1, 12, 123, 1234,
	  -123, -1234);
	T("0|1|1|128|255", "%hhu|%hhu|%hhu|%hhu|%hhu", 0, 1, 257, 128, -1);
	T("0|1|1|-128|-1", "%hhd|%hhd|%hhd|%hhd|%hhd", 0, 1, 257, 128, -1);
	T("2015122420151225", "%ho%ho%#ho", 1037, 5282, -11627);
	/* C says a zero with a precision of zero prints nothing */
	T("00|0|0|0|0", "%.2d|%.1d|%.0d|%.*d|%1.0d", 0, 0, 0, 0, 0, 0);
}

static void test_kunit_string(void **state)
{
	(void)state;
	T("", "%s%.0s", "", "123");
	T("ABCD|abc|123", "%s|%.3s|%.*s", "ABCD", "abcdef", 3, "123456");
	T("1  |  2|3  |  4|5  ", "%-3s|%3s|%-*s|%*s|%*s", "1", "2", 3, "3", 3, "4", -3, "5");
	T("1234      ", "%-10.4s", "123456");
	T("      1234", "%10.4s", "123456");
	/* a negative precision is 0; a '.' without digits is no precision */
	T("    ", "%4.*s", -5, "123456");
	T("123456", "%.s", "123456");
	T("a||", "%.s|%.0s|%.*s", "a", "b", 0, "c");
	T("a  |   |   ", "%-3.s|%-3.0s|%-3.*s", "a", "b", 0, "c");
}

/* ------------------------------------- docs/kernel-compat.md, 16.2 -- */

static void test_differences_integers(void **state)
{
	(void)state;
	/* 1. a zero with a precision of 0 prints "0" */
	KC("0", "", "%.0d", 0);
	KC("[0]", "[]", "[%.0x]", 0u);
	KC("+0", "+", "%+.0d", 0);
	KC("   0", "    ", "%4.0u", 0u);
	/* 2. a '.' without digits is no precision at all */
	KC("0", "", "%.d", 0);
	KC("00007", "    7", "%05.d", 7);
	/* 3. a negative '*' precision is 0 */
	KC("", "abc", "%.*s", -2, "abc"); /* integers show no difference: */
	T("00007", "%05.*d", -1, 7);	   /* a precision of 0 or none, the */
	T("0", "%.*d", -1, 0);		   /* number prints alike */
	/* 4. the 0 flag pads with zeros even with a precision */
	KC("00001", "   01", "%05.2d", 1);
	KC("-0042", "  -42", "%05.1d", -42);
	KC("0x00ff", "  0xff", "%#06.1x", 255u);
	/* 5. '#' puts "0x" before a zero too */
	KC("0x0", "0", "%#x", 0u);
	KC("0X0", "0", "%#X", 0u);
	KC("0x0", "", "%#.0x", 0u);
	KC("  0x0", "    0", "%#5x", 0u);
	/* 6. '#' with octal: the "0" comes on top of the precision's zeros */
	KC("0010", "010", "%#.3o", 8u);
	T("0", "%#o", 0u); /* the same: no "0" prefix for a zero */
	/* the same layout for long, long long and size_t */
	KC("0x0|00001|0", "0|   01|", "%#lx|%05.2ld|%.0zu", 0ul, 1l, (size_t)0);
}

static void test_differences_strings(void **state)
{
	(void)state;
	/* 2 and 3 for strings: "%.s" prints all, a negative precision nothing */
	KC("abc", "", "%.s", "abc");
	KC("abc|", "|", "%-.s|", "abc");
	KC("", "abc", "%.*s", -1, "abc");
	KC("   ", "abc", "%3.*s", -7, "abc");
	/* 7. NULL is "(null)" cut to the precision (C: nothing when it cuts) */
	KC("(nu", "", "%.3s", (char *)NULL);
	KC("(null |", "      |", "%-6.5s|", (char *)NULL);
	T("(null)", "%s", (char *)NULL);
	/* 8. an invalid pointer prints "(efault)" instead of being read (C crashes) */
	T("(efault)|(ef|  (efault)", "%s|%.3s|%10s", (char *)16, (char *)ERR_PTR(-5),
	  (char *)4095);
}

static void test_differences_pointers(void **state)
{
	char c[BUF_SIZE];
	static const unsigned char mac[6] = {0x2d, 0x48, 0xd6, 0xfc, 0x7a, 0x05};

	(void)state;
	/* 9. %p is hashed, NULL is zeros, and the letters after it are its own */
	if (sizeof(void *) == 8) {
		KC("0000000000000000", "(nil)", "%p", NULL);
		KC("fffffffffffffff5", "0xfffffffffffffff5", "%p", ERR_PTR(-11));
	}
	T("2d:48:d6:fc:7a:05|-ENOENT", "%pM|%pe", mac, ERR_PTR(-ENOENT));
	libc_snprintf(c, sizeof(c), "%pM", mac);
	assert_true(c[strlen(c) - 1] == 'M'); /* C: the address, then "M" */
	snprintf(c, sizeof(c), "%p", (void *)c);
	assert_int_equal(strlen(c), 2 * sizeof(void *));
	assert_true(strncmp(c, "0x", 2) != 0);
}

static void test_differences_ends(void **state)
{
	char buf[32];

	(void)state;
	/* 10. %n, and a conversion the kernel does not know, end the output */
	T("ab", "ab%ncd", (int *)buf);
	T("ab", "ab%ycd|%d", 1);
	T("x=1 ", "x=%d %k %d", 1, 2);
	/* 11. a format that ends inside a conversion keeps what came before */
	T("abc", "abc%");
	T("abc", "abc%-5");
	/* 12. a size past INT_MAX is a bug: 0, nothing written */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(snprintf(buf, (size_t)INT_MAX + 1, "%d", 1), 0);
	assert_int_equal(scnprintf(buf, SIZE_MAX, "%d", 1), 0);
	assert_int_equal(buf[0], 'x');
	/* 13. widths and precisions past the kernel's limits are clamped */
	assert_int_equal(snprintf(NULL, 0, "%*d", 1 << 24, 1), (1 << 23) - 1);
	assert_int_equal(snprintf(NULL, 0, "%.*d", 1 << 16, 1), (1 << 15) - 1);
	assert_int_equal(snprintf(NULL, 0, "%.40000s", "abc"), 3);
}

/* libprintk's extensions, kept where the kernel has no such conversion. */
static void test_extensions_kept(void **state)
{
	(void)state;
	errno = ENOENT;
	T("No such file or directory", "%m");
	T("1.50|2.5e+00", "%.2f|%.1e", 1.5, 2.5);
	T("b=5", "%2$c=%1$d", 5, 'b');
	T("ab|\xc3\xa9", "%ls|%lc", L"ab", (wint_t)0xe9);
	T("101", "%b", 5u);
}

/* ------------------------------------------------- return values -- */

static void test_return_values(void **state)
{
	char buf[8];
	int pos = 0;

	(void)state;
	/* snprintf: the length of the whole output; scnprintf: what was stored */
	assert_int_equal(snprintf(buf, sizeof(buf), "%s", "0123456789"), 10);
	assert_string_equal(buf, "0123456");
	assert_int_equal(scnprintf(buf, sizeof(buf), "%s", "0123456789"), 7);
	assert_int_equal(scnprintf(buf, 0, "%s", "0123456789"), 0);
	assert_int_equal(snprintf(NULL, 0, "%d", 12345), 5);
	/* the kernel's idiom: appending never runs past the end */
	pos += scnprintf(buf + pos, sizeof(buf) - pos, "%s", "abcde");
	pos += scnprintf(buf + pos, sizeof(buf) - pos, "%s", "fghij");
	pos += scnprintf(buf + pos, sizeof(buf) - pos, "%s", "klm");
	assert_int_equal(pos, 7);
	assert_string_equal(buf, "abcdefg");
	/* sprintf returns the length, the NUL not counted */
	assert_int_equal(sprintf(buf, "%x", 0xbeefu), 4);
	assert_string_equal(buf, "beef");
}

static void test_kasprintf(void **state)
{
	char *p;

	(void)state;
	p = kasprintf(GFP_KERNEL, "%s-%d-%pe", "dev", 3, ERR_PTR(-EIO));
	assert_non_null(p);
	assert_string_equal(p, "dev-3--EIO");
	kfree(p);
	p = kasprintf(GFP_ATOMIC, "%s", "");
	assert_non_null(p);
	assert_string_equal(p, "");
	kfree(p);
	/* a long one: exactly its length plus the NUL */
	p = kasprintf(GFP_NOWAIT, "%5000d|", 7);
	assert_non_null(p);
	assert_int_equal(strlen(p), 5001);
	assert_string_equal(p + 4999, "7|");
	kfree(p);
	/* %m reads the caller's errno, in both of kasprintf's passes */
	errno = EACCES;
	p = kasprintf(GFP_KERNEL, "open: %m");
	assert_non_null(p);
	assert_string_equal(p, "open: Permission denied");
	assert_int_equal(errno, EACCES);
	kfree(p);
	kfree(NULL);
	kfree((void *)16); /* ZERO_SIZE_PTR */
}

/* ------------------------------------------------------ printk -- */

static void test_printk_same_text(void **state)
{
	uint64_t seq = next_seq();

	(void)state;
	printk(KERN_INFO "%.0d|%.s|%05.2d|%#x|%.3s|%.*s|%p4chR\n", 0, "abc", 1, 0u, (char *)NULL,
	       -1, "gone", &(uint32_t){0x41424344});
	read_at(seq);
	assert_string_equal(rec.text, "0|abc|00001|0x0|(nu||DCBA (0x44434241)");
	/* a message with %n keeps what came before it */
	pr_info("kept %d%n dropped\n", 1, (int *)NULL);
	read_at(seq + 1);
	assert_string_equal(rec.text, "kept 1");
}

/* -------------------------------------------------------- err.h -- */

static int *frob_open(int fail_with)
{
	static int obj;

	return fail_with ? ERR_PTR(fail_with) : &obj;
}

static void test_err_ptr(void **state)
{
	int *p = frob_open(-ENOENT);
	char buf[64];

	(void)state;
	assert_int_equal(MAX_ERRNO, 4095);
	assert_true(IS_ERR(p));
	assert_true(IS_ERR_OR_NULL(p));
	assert_int_equal(PTR_ERR(p), -ENOENT);
	assert_int_equal(PTR_ERR_OR_ZERO(p), -ENOENT);
	long *l = ERR_CAST(p);
	assert_int_equal(PTR_ERR(l), -ENOENT);
	snprintf(buf, sizeof(buf), "(%pe)|[%-8pe]|%pe", p, ERR_PTR(-EIO), ERR_PTR(-517)) /* -EPROBE_DEFER */;
	assert_string_equal(buf, "(-ENOENT)|[-EIO    ]|-EPROBE_DEFER");

	p = frob_open(0);
	assert_false(IS_ERR(p));
	assert_false(IS_ERR_OR_NULL(p));
	assert_int_equal(PTR_ERR_OR_ZERO(p), 0);
	assert_false(IS_ERR(NULL));
	assert_true(IS_ERR_OR_NULL(NULL));
	assert_int_equal(PTR_ERR_OR_ZERO(NULL), 0);
	/* the range: -4095 .. -1 */
	assert_true(IS_ERR(ERR_PTR(-MAX_ERRNO)));
	assert_false(IS_ERR(ERR_PTR(-MAX_ERRNO - 1)));
	assert_true(IS_ERR(ERR_PTR(-1)));
	assert_true(IS_ERR_VALUE((unsigned long)-22));
	assert_false(IS_ERR_VALUE(22ul));
}

/* ------------------------------------------- reachable from printk.h -- */

static void test_ratelimited_from_printk_h(void **state)
{
	uint64_t seq = next_seq();

	(void)state;
	/* <printk/printk.h> alone gives them, as <linux/printk.h> does */
	for (int i = 0; i < 15; i++)
		pr_warn_ratelimited("rl %d\n", i);
	for (int i = 0; i < 3; i++)
		pr_info_once("once %d\n", i);
	assert_int_equal(next_seq(), seq + 11);
	read_at(seq + 9);
	assert_string_equal(rec.text, "rl 9");
	read_at(seq + 10);
	assert_string_equal(rec.text, "once 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kunit_basic),
		cmocka_unit_test(test_kunit_number),
		cmocka_unit_test(test_kunit_string),
		cmocka_unit_test(test_differences_integers),
		cmocka_unit_test(test_differences_strings),
		cmocka_unit_test(test_differences_pointers),
		cmocka_unit_test(test_differences_ends),
		cmocka_unit_test(test_extensions_kept),
		cmocka_unit_test(test_return_values),
		cmocka_unit_test(test_kasprintf),
		cmocka_unit_test_setup_teardown(test_printk_same_text, setup_capture,
						teardown_capture),
		cmocka_unit_test(test_err_ptr),
		cmocka_unit_test_setup_teardown(test_ratelimited_from_printk_h, setup_capture,
						teardown_capture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
