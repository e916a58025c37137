// SPDX-License-Identifier: MIT
/*
 * test_vsprintf.c - pk_fmt_vsnprintf (the library's C99 formatter) against glibc's snprintf.
 *
 * Every standard conversion is compared byte for byte (return value and the
 * whole buffer, including what lies past the NUL) with the C library's
 * snprintf in the C locale; the extensions (%pV, %n, UTF-8 for %lc/%ls),
 * truncation, overflow and use from a signal handler are checked against
 * fixed expectations, and so are the kernel's rules: "(efault)" for a bad
 * string pointer, and the clamped widths and precisions of the
 * kernel-semantics entry points (pk_vsnprintf_last, pk_vscnprintf).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <wchar.h>

#include "base/hints.h"
#include "format/vsprintf.h"

/* The checkers below take a format and a va_list. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

/*
 * The reference is glibc's own snprintf, called through a pointer: gcc
 * evaluates snprintf calls with constant arguments at compile time (and
 * gets "%lc" of 0 wrong), and the sanitizers' printf interceptors abort on
 * the malformed formats tested here, so the pointer is looked up in libc.
 */
typedef int (*snprintf_fn)(char *, size_t, const char *, ...);
typedef int (*vsnprintf_fn)(char *, size_t, const char *, va_list);
static snprintf_fn volatile libc_snprintf = snprintf;
static vsnprintf_fn volatile libc_vsnprintf = vsnprintf;

static void find_libc(void)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *sym;

	if (!h)
		return;
	sym = dlsym(h, "snprintf");
	if (sym) {
		snprintf_fn fn;

		memcpy(&fn, &sym, sizeof(fn));
		libc_snprintf = fn;
	}
	sym = dlsym(h, "vsnprintf");
	if (sym) {
		vsnprintf_fn fn;

		memcpy(&fn, &sym, sizeof(fn));
		libc_vsnprintf = fn;
	}
	dlclose(h);
}

/* Built at run time so the compiler cannot fold them either. */
static volatile double v_inf, v_nan, v_zero;
static const char *volatile null_str;	  /* stays NULL */
static const wchar_t *volatile null_wstr; /* stays NULL */

static void init_specials(void)
{
	v_zero = 0.0;
	v_inf = 1.0 / v_zero;
	v_nan = v_zero / v_zero; /* x86 yields the negative default NaN */
}

#define BUF_SIZE 8192
static char ref_buf[BUF_SIZE], our_buf[BUF_SIZE];
static unsigned int rows_checked, rows_failed;

/* Printable rendering of a buffer for failure messages. */
static const char *show(const char *s, int len)
{
	static char out[2][1024];
	static int which;
	char *o = out[which ^= 1];
	size_t n = 0;
	int i;

	if (len < 0)
		len = (int)strnlen(s, 300);
	for (i = 0; i < len && n < sizeof(out[0]) - 5; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			o[n++] = (char)c;
		else
			n += (size_t)snprintf(o + n, 5, "\\x%02x", c);
	}
	o[n] = '\0';
	return o;
}

static void check_row(int line, const char *what, int ref_ret, int our_ret)
{
	rows_checked++;
	if (ref_ret == our_ret && memcmp(ref_buf, our_buf, BUF_SIZE) == 0)
		return;
	rows_failed++;
	print_error("line %d: %s\n  glibc %d \"%s\"\n  ours  %d \"%s\"\n", line, what, ref_ret,
		    show(ref_buf, ref_ret < BUF_SIZE ? ref_ret : -1), our_ret,
		    show(our_buf, our_ret < BUF_SIZE ? our_ret : -1));
}

/* One row: the same format and arguments through glibc and through us. */
#define ROW(...)                                                                                   \
	do {                                                                                       \
		int ref_ret_, our_ret_;                                                            \
		memset(ref_buf, 0xa5, BUF_SIZE);                                                   \
		memset(our_buf, 0xa5, BUF_SIZE);                                                   \
		ref_ret_ = libc_snprintf(ref_buf, BUF_SIZE, __VA_ARGS__);                          \
		our_ret_ = pk_fmt_snprintf(our_buf, BUF_SIZE, __VA_ARGS__);                            \
		check_row(__LINE__, #__VA_ARGS__, ref_ret_, our_ret_);                             \
	} while (0)

/* A row for %m: errno is set right before each call. */
#define ROW_ERRNO(e, ...)                                                                          \
	do {                                                                                       \
		int ref_ret_, our_ret_;                                                            \
		memset(ref_buf, 0xa5, BUF_SIZE);                                                   \
		memset(our_buf, 0xa5, BUF_SIZE);                                                   \
		errno = (e);                                                                       \
		ref_ret_ = libc_snprintf(ref_buf, BUF_SIZE, __VA_ARGS__);                          \
		errno = (e);                                                                       \
		our_ret_ = pk_fmt_snprintf(our_buf, BUF_SIZE, __VA_ARGS__);                            \
		check_row(__LINE__, #__VA_ARGS__, ref_ret_, our_ret_);                             \
	} while (0)

static void rows_done(unsigned int before, unsigned int at_least)
{
	assert_int_equal(rows_failed, 0);
	assert_true(rows_checked - before >= at_least);
}

/* ------------------------------------------------------------------------ */

static void test_integer_rows(void **state)
{
	unsigned int before = rows_checked;

	(void)state;
	ROW("%d", 0);
	ROW("%d", 1);
	ROW("%d", -1);
	ROW("%d", INT_MAX);
	ROW("%d", INT_MIN);
	ROW("%i", 42);
	ROW("%i", -42);
	ROW("%u", 0u);
	ROW("%u", UINT_MAX);
	ROW("%o", 0u);
	ROW("%o", 8u);
	ROW("%o", UINT_MAX);
	ROW("%x", 0u);
	ROW("%x", 255u);
	ROW("%x", UINT_MAX);
	ROW("%X", 0xabcdefu);
	ROW("%ld", LONG_MIN);
	ROW("%ld", LONG_MAX);
	ROW("%lu", ULONG_MAX);
	ROW("%lx", 0xdeadbeefUL);
	ROW("%lld", LLONG_MIN);
	ROW("%lld", LLONG_MAX);
	ROW("%llu", ULLONG_MAX);
	ROW("%llo", ULLONG_MAX);
	ROW("%llX", ULLONG_MAX);
	ROW("%hd", (short)-32768);
	ROW("%hu", (unsigned short)65535);
	ROW("%hhd", (signed char)-128);
	ROW("%hhu", (unsigned char)255);
	ROW("%hhx", (unsigned char)0xab);
	ROW("%jd", INTMAX_MIN);
	ROW("%jd", INTMAX_MAX);
	ROW("%ju", UINTMAX_MAX);
	ROW("%jx", UINTMAX_MAX);
	ROW("%zd", (ssize_t)-1);
	ROW("%zu", SIZE_MAX);
	ROW("%zx", SIZE_MAX);
	ROW("%td", PTRDIFF_MIN);
	ROW("%td", PTRDIFF_MAX);
	ROW("%tx", (ptrdiff_t)4096);
	ROW("%+d", 5);
	ROW("%+d", 0);
	ROW("%+d", -5);
	ROW("% d", 5);
	ROW("% d", -5);
	ROW("%-5d|", 5);
	ROW("%5d|", -5);
	ROW("%05d", -42);
	ROW("%+05d", 42);
	ROW("%-+5d|", 42);
	ROW("% 05d", 42);
	ROW("%.3d", 7);
	ROW("%.3d", -7);
	ROW("%+.3d", 7);
	ROW("%8.3d|", -7);
	ROW("%-8.3d|", -7);
	ROW("%.0d|", 0);
	ROW("%5.0d|", 0);
	ROW("%-5.0d|", 0);
	ROW("%+.0d|", 0);
	ROW("% .0d|", 0);
	ROW("%.0u|", 0u);
	ROW("%.0x|", 0u);
	ROW("%.0o|", 0u);
	ROW("%.0d|", 1);
	ROW("%*d|", 8, 42);
	ROW("%*d|", -8, 42);
	ROW("%-*d|", 8, 42);
	ROW("%-*d|", -8, 42);
	ROW("%0*d|", -8, 42);
	ROW("%.*d|", 5, 42);
	ROW("%.*d|", -1, 42);
	ROW("%*.*d|", 10, 5, -42);
	ROW("%#o", 0u);
	ROW("%#o", 8u);
	ROW("%#.0o", 0u);
	ROW("%#.3o", 8u);
	ROW("%#.3o", 01234u);
	ROW("%#5o|", 0u);
	ROW("%#x", 0u);
	ROW("%#x", 255u);
	ROW("%#X", 255u);
	ROW("%#08x", 255u);
	ROW("%#-8x|", 255u);
	ROW("%#.0x|", 0u);
	ROW("%#.4x", 1u);
	ROW("%#10.4X|", 0xabu);
	ROW("%#llx", ULLONG_MAX);
	ROW("%#lo", ULONG_MAX);
	ROW("%20lld|", LLONG_MIN);
	ROW("%-25llu|", ULLONG_MAX);
	ROW("%030lld", LLONG_MIN);
	ROW("%.25lld", LLONG_MIN);
	ROW("%x%X%o%u%d", 10u, 11u, 12u, 13u, 14);
	ROW("%hhd", (signed char)100);
	rows_done(before, 90);
}

static void test_string_rows(void **state)
{
	unsigned int before = rows_checked;

	(void)state;
	ROW("%c", 'a');
	ROW("%5c|", 'a');
	ROW("%-5c|", 'a');
	ROW("%c|", 0);
	ROW("%3c|", 0);
	ROW("%c", 255);
	ROW("%c%c%c", 'x', 'y', 'z');
	ROW("%s", "hello");
	ROW("%10s|", "hello");
	ROW("%-10s|", "hello");
	ROW("%.3s|", "hello");
	ROW("%10.3s|", "hello");
	ROW("%-10.3s|", "hello");
	ROW("%.0s|", "hello");
	ROW("%.10s|", "abc");
	ROW("%s|", "");
	ROW("%5s|", "");
	ROW("%.*s|", 2, "abc");
	ROW("%.*s|", -2, "abc");
	ROW("%*s|", -6, "ab");
	ROW("%*s|", 6, "ab");
	ROW("%s %s %s", "a", "bb", "ccc");
	ROW("%s|", null_str);
	ROW("%.5s|", null_str);
	ROW("%.6s|", null_str);
	ROW("%.7s|", null_str);
	ROW("%10s|", null_str);
	ROW("%-10s|", null_str);
	ROW("%.0s|", null_str);
	ROW("%ls", L"wide");
	ROW("%7ls|", L"wide");
	ROW("%-7ls|", L"wide");
	ROW("%.2ls|", L"wide");
	ROW("%ls|", L"");
	ROW("%ls|", null_wstr);
	ROW("%.3ls|", null_wstr);
	ROW("%lc", (wint_t)'x');
	ROW("%5lc|", (wint_t)'x');
	ROW("%-3lc|", (wint_t)'x');
	ROW("%lc|", (wint_t)0);
	ROW("%%");
	ROW("100%% sure");
	ROW("%%%d%%", 5);
	ROW("no conversions at all");
	ROW("%p", (void *)0);
	ROW("%p", (void *)0x1234);
	ROW("%p", (void *)UINTPTR_MAX);
	ROW("%20p|", (void *)0x1234);
	ROW("%-20p|", (void *)0x1234);
	ROW("%10p|", (void *)0);
	ROW("%-10p|", (void *)0);
	ROW("%pxyz", (void *)0x20);
	ROW("%p%p", (void *)1, (void *)0);
	ROW_ERRNO(ENOENT, "%m");
	ROW_ERRNO(ENOENT, "%10.3m|");
	ROW_ERRNO(ENOENT, "%-30m|");
	ROW_ERRNO(ENOENT, "%.1m|");
	ROW_ERRNO(EAGAIN, "[%m]");
	ROW_ERRNO(0, "%m");
	ROW_ERRNO(4095, "%m");
	ROW_ERRNO(-3, "%m");
	ROW_ERRNO(EOVERFLOW, "%m %m");
	rows_done(before, 60);
}

static void test_float_rows(void **state)
{
	unsigned int before = rows_checked;

	(void)state;
	ROW("%f", 0.0);
	ROW("%f", -0.0);
	ROW("%f", 1.0);
	ROW("%f", -1.5);
	ROW("%f", 0.1);
	ROW("%f", 1e-7);
	ROW("%f", 123456.789);
	ROW("%f", 1e20);
	ROW("%f", DBL_MAX);
	ROW("%f", DBL_MIN);
	ROW("%.1100f", DBL_TRUE_MIN);
	ROW("%.0f", 0.5);
	ROW("%.0f", 1.5);
	ROW("%.0f", 2.5);
	ROW("%.0f", 3.5);
	ROW("%.0f", -0.5);
	ROW("%.0f", 9.5);
	ROW("%.1f", 0.05);
	ROW("%.1f", 0.15);
	ROW("%.1f", 0.25);
	ROW("%.1f", 0.35);
	ROW("%.2f", 0.125);
	ROW("%.2f", 0.995);
	ROW("%.2f", 9.995);
	ROW("%.3f", 0.0005);
	ROW("%.3f", 0.9995);
	ROW("%f", 999999.9999995);
	ROW("%10.3f|", 3.14159);
	ROW("%-10.3f|", 3.14159);
	ROW("%010.3f", -3.14159);
	ROW("%+.2f", 2.0);
	ROW("% .2f", 2.0);
	ROW("%#.0f", 3.0);
	ROW("%#.0f", 0.0);
	ROW("%.60f", 0.1);
	ROW("%F", 1.25);
	ROW("%e", 0.0);
	ROW("%e", 1.0);
	ROW("%e", 12345.678);
	ROW("%e", 1e-300);
	ROW("%e", DBL_MAX);
	ROW("%e", DBL_TRUE_MIN);
	ROW("%.0e", 12345.0);
	ROW("%.0e", 5e-324);
	ROW("%.0e", 9.5);
	ROW("%.0e", 8.5);
	ROW("%#.0e", 1.0);
	ROW("%#.0e", 0.0);
	ROW("%E", 1e100);
	ROW("%+e", 1.0);
	ROW("%12.3e|", 1.5);
	ROW("%-12.3e|", 1.5);
	ROW("%012.3e", -1.5);
	ROW("%.3e", 9.9995);
	ROW("%.3e", 9.9996);
	ROW("%.20e", 1e23);
	ROW("%e", 1e-5);
	ROW("%g", 0.0);
	ROW("%g", -0.0);
	ROW("%g", 100000.0);
	ROW("%g", 1e6);
	ROW("%g", 1e-4);
	ROW("%g", 1e-5);
	ROW("%g", 123456789.0);
	ROW("%g", 0.000123456);
	ROW("%g", 1e23);
	ROW("%.0g", 0.5);
	ROW("%.1g", 0.05);
	ROW("%#g", 1.0);
	ROW("%#g", 0.0001);
	ROW("%#.3g", 0.0);
	ROW("%#.3g", 100.0);
	ROW("%#.0g", 1.0);
	ROW("%G", 1e-10);
	ROW("%#.0G", 1e-10);
	ROW("%g", 999999.5);
	ROW("%g", 9999995.0);
	ROW("%g", 0.00009999995);
	ROW("%.17g", 0.1);
	ROW("%.17g", 1e300);
	ROW("%.17g", 123456789012345678.0);
	ROW("%.3g", 0.0009995);
	ROW("%.60g", 0.1);
	ROW("%#.60g", 1e23);
	ROW("%10.4g|", 3.14159);
	ROW("%-10.4g|", 3.14159);
	ROW("%010.4g", -3.14159);
	ROW("%a", 0.0);
	ROW("%a", -0.0);
	ROW("%a", 1.0);
	ROW("%a", 1.5);
	ROW("%a", 255.0);
	ROW("%a", 0.1);
	ROW("%a", DBL_MAX);
	ROW("%a", DBL_MIN);
	ROW("%a", DBL_TRUE_MIN);
	ROW("%.0a", 1.5);
	ROW("%.0a", 2.5);
	ROW("%.0a", 0x1.8p1);
	ROW("%.1a", 0x1.ffp0);
	ROW("%.0a", 0x0.8p-1022);
	ROW("%.0a", 0x0.88p-1022);
	ROW("%.0a", 0x1.fp-1022);
	ROW("%.3a", 1.0);
	ROW("%.20a", 1.0);
	ROW("%#a", 1.0);
	ROW("%A", 255.0);
	ROW("%010a", 1.0);
	ROW("%+a", 1.0);
	ROW("% a", 1.0);
	ROW("%-12a|", 1.0);
	ROW("%12.3a|", -1.5);
	ROW("%f", v_inf);
	ROW("%f", -v_inf);
	ROW("%f", v_nan);
	ROW("%f", -v_nan);
	ROW("%F", v_inf);
	ROW("%F", v_nan);
	ROW("%e", v_inf);
	ROW("%E", -v_nan);
	ROW("%g", -v_inf);
	ROW("%G", v_inf);
	ROW("%a", v_nan);
	ROW("%A", -v_inf);
	ROW("%05f|", v_inf);
	ROW("%-6f|", v_inf);
	ROW("%+f", -v_nan);
	ROW("% e", v_inf);
	ROW("%010a|", -v_inf);
	ROW("%lf", 1.5);
	ROW("%Lf", 1.5L);
	ROW("%Lf", -0.0L);
	ROW("%Le", LDBL_MAX);
	ROW("%Lf", LDBL_MAX);
	ROW("%Lg", LDBL_MIN);
	ROW("%.30Le", LDBL_TRUE_MIN);
	ROW("%.20Lg", 0.1L);
	ROW("%La", 1.0L);
	ROW("%La", 0.0L);
	ROW("%LA", LDBL_MAX);
	ROW("%La", LDBL_MIN);
	ROW("%La", LDBL_TRUE_MIN);
	ROW("%.0La", 1.5L);
	ROW("%.0La", 0xf.8p0L);
	ROW("%.1La", 0xf.f8p0L);
	ROW("%.3La", 1.0L);
	ROW("%#La", 1.0L);
	ROW("%Lf", (long double)v_inf);
	ROW("%Lg", (long double)v_nan);
	ROW("%.0Lf", 0.5L);
	ROW("%.0Lf", 2.5L);
	ROW("%.40Lf", 1.0L / 3);
	ROW("[%8.2f|%-8.2e|%+g]", 1.0 / 3, 2.0 / 3, -1.0 / 3);
	rows_done(before, 150);
}

static void test_positional_rows(void **state)
{
	unsigned int before = rows_checked;

	(void)state;
	ROW("%2$s %1$d|", 5, "x");
	ROW("%1$*2$d|", 5, 8);
	ROW("%1$.*2$f|", 1.5, 3);
	ROW("%3$d %1$d %2$d", 1, 2, 3);
	ROW("%1$s%1$s", "ab");
	ROW("%2$*1$d|", 3, 4);
	ROW("%1$d%%%2$d", 1, 2);
	ROW("%1$Lf %2$d", 1.5L, 7);
	ROW("%2$ls %1$lc", (wint_t)'a', L"bc");
	ROW("%1$#x %1$o", 64u);
	ROW("%2$.*3$s|%1$-*4$d|", 42, "abcdef", 3, 6);
	ROW("%4$lld %3$ld %2$hd %1$hhd", (signed char)1, (short)2, 3L, 4LL);
	ROW("%2$g %1$e", 1.5, 2.5);
	ROW("%1$p %1$p", (void *)0x10);
	rows_done(before, 14);
}

/*
 * Formats that compilers rightly flag: glibc extensions, undefined flag
 * combinations and malformed conversions. They are part of the contract
 * (match glibc), so -Wformat is silenced for this function only.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-overflow" /* gcc sizes glibc's output itself */
#endif
static void test_odd_rows(void **state)
{
	unsigned int before = rows_checked;
	int sink = 0;

	(void)state;
	/* flags the conversion ignores */
	ROW("%+ d", 5);
	ROW("%-05d|", 7);
	ROW("%08.3d|", 7);
	ROW("");
	/* glibc extensions */
	ROW("%b", 5u);
	ROW("%B", 5u);
	ROW("%#b", 5u);
	ROW("%#B", 5u);
	ROW("%#b", 0u);
	ROW("%.0b|", 0u);
	ROW("%#010b", 5u);
	ROW("%llb", ULLONG_MAX);
	ROW("%'d", 1234567);
	ROW("%'x", 0x12345u);
	ROW("%'.3f", 1234.5);
	ROW("%Id", 123);
	ROW("%I5d|", 3);
	ROW("%Zd", (size_t)5);
	ROW("%qd", 123LL);
	ROW("%Ld", 123LL);
	ROW("%llf", 1.5L);
	ROW("%C", (wint_t)'A');
	ROW("%S", L"wide");
	ROW("%lls", L"ab");
	ROW("%Ls", L"ab");
	ROW("%js", L"ab");
	ROW("%Lc", (wint_t)'a');
	ROW("%hs", "ab");
	ROW("%hhs", "ab");
	ROW("%hhc", 'a');
	ROW_ERRNO(ENOENT, "%#m");
	ROW_ERRNO(0, "%#m");
	ROW_ERRNO(4095, "%#m");
	ROW_ERRNO(-5, "%#m");
	ROW_ERRNO(EINTR, "%lm|%5.1m|%-5m|");
	/* flags that mean nothing for the conversion */
	ROW("%hhd|", 300);
	ROW("%hd|", 70000);
	ROW("%hhu|", -1);
	ROW("%hu|", -1);
	ROW("%#hhx|", 0x1ff);
	ROW("%+u|", 5u);
	ROW("% u|", 5u);
	ROW("%+x|", 5u);
	ROW("%05c|", 'x');
	ROW("%05s|", "ab");
	ROW("%-05s|", "ab");
	ROW("%0*s|", 5, "a");
	ROW("%0*c|", 5, 'a');
	ROW("%.0c|", 'a');
	ROW("%+c|", 'a');
	ROW("%+s|", "ab");
	ROW("%#s|", "ab");
	ROW("%05lc|", (wint_t)'a');
	ROW("%05%|");
	ROW("%5%|");
	ROW("%-5%|");
	ROW("%.3%|");
	ROW("%+ #-0%|");
	ROW("%*%%d", 4, 5);
	ROW("%+p|", (void *)0x1234);
	ROW("% p|", (void *)0x1234);
	ROW("%#p|", (void *)0x1234);
	ROW("%010p|", (void *)0x1234);
	ROW("%.10p|", (void *)0x1234);
	ROW("%10.4p|", (void *)0x1234);
	ROW("%0*p|", 12, (void *)1);
	ROW("%0*p|", -12, (void *)1);
	ROW("%010p|", (void *)0);
	ROW("%.3p|", (void *)0);
	ROW("%+p|", (void *)0);
	ROW("%.0p|", (void *)1);
	ROW("%hhp|", (void *)0x20);
	ROW("%lp|", (void *)0x20);
	ROW("%0*f|", -9, 1.5);
	ROW("%'0#12.3g|", 1.5);
	ROW("%I#.3f|", 0.5);
	ROW("%+0 8.3e|", 1.5);
	ROW("% 08.3a|", -1.5);
	ROW("ab%ncd", &sink); /* glibc stores 2; we store nothing (test_misc_semantics) */
	/* unknown conversions are spelled back as glibc's printf_unknown does */
	ROW("%y|");
	ROW("%-5.3y|", 1);
	ROW("%*y|", 7, 3);
	ROW("%hy|");
	ROW("%lly|");
	ROW("%#'+ -0Iy|");
	ROW("%-+#08.3y|");
	ROW("%08.3y|");
	ROW("%0-y|");
	ROW("% +y|");
	ROW("%0*y|", -5);
	ROW("%.*y|", -5);
	ROW("%.*y|", 3);
	ROW("%hld|", 5);
	ROW("%lhd|", 5);
	ROW("%5-d|", 5);
	ROW("%.-5d|", 5);
	ROW("%ll|");
	ROW("%hhhd|", 5);
	ROW("%lllld|", 5LL);
	ROW("%Ll|");
	ROW("%jz|");
	ROW("%*5d|", 3, 4);
	ROW("%0$d|", 5);
	ROW("%2147483615y|");
	/* a format ending inside a conversion: EINVAL... */
	ROW("abc%");
	ROW("abc%5");
	ROW("abc%-");
	ROW("abc%l");
	ROW("abc%.");
	ROW("abc%5d %", 3);
	/* ...unless an unknown conversion or a numbered argument came first */
	ROW("%y abc%");
	ROW("%y abc%-5.3");
	ROW("%y %d %", 5);
	ROW("%y %*", 5);
	ROW("%1$s%", "a");
	ROW("%1$s%5", "a");
	ROW("%1$s%1$", "a");
	ROW("%1$", "a");
	ROW("%1$s%-05.3", "a");
	ROW("%1$s%#'I+", "a");
	ROW("%1$s%hh", "a");
	/* numbers that do not fit in an int: EOVERFLOW */
	ROW("ab%2147483648d|", 1);
	ROW("ab%.2147483648d|", 1);
	/* positional arguments mixed with sequential ones (glibc's numbering) */
	ROW("%d %2$d|", 1, 2);
	ROW("%2$d %d|", 1, 2, 3);
	ROW("%1$d %*d|", 1, 5, 3);
	ROW("%d %d %1$d", 1, 2);
	ROW("%*2$d|", 1, 5);
	ROW("%.*2$d|", 1, 5);
	ROW("%-*2$d|", 1, 5);
	ROW("%*1$.*2$d|", 6, 3, 1);
	ROW("%2$*d|", 3, 4, 5);
	ROW("%3$d|", 1, 2, 3);
	ROW("%1$s %5$d", "a", 1, 2, 3, 4);
	ROW("%1$%|", 5);
	ROW_ERRNO(EPERM, "%1$m|");
	ROW("%1$y|");
	ROW("%2$y%1$d|", 5);
	ROW("%y%1$s", "a");
	ROW("%s%y%2$s", "a", "b");
	assert_int_equal(sink, 2);
	rows_done(before, 130);
}
#pragma GCC diagnostic pop

/* ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64*: fixed seed, the same samples on every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned long fp_mismatches;

static void fp_compare(const char *fmt, int ref_ret, int our_ret, uint64_t bits)
{
	if (ref_ret == our_ret && strcmp(ref_buf, our_buf) == 0)
		return;
	if (fp_mismatches++ < 10)
		print_error("%s of %#018llx: glibc %d \"%s\" ours %d \"%s\"\n", fmt,
			    (unsigned long long)bits, ref_ret, show(ref_buf, -1), our_ret,
			    show(our_buf, -1));
}

#define FP_CMP(fmt, x, bits)                                                                       \
	fp_compare(fmt, libc_snprintf(ref_buf, BUF_SIZE, fmt, x),                                  \
		   pk_fmt_snprintf(our_buf, BUF_SIZE, fmt, x), bits)

static void fp_all_formats(double d, uint64_t bits)
{
	FP_CMP("%.17g", d, bits);
	FP_CMP("%e", d, bits);
	FP_CMP("%.0f", d, bits);
	FP_CMP("%.3f", d, bits);
	FP_CMP("%a", d, bits);
	FP_CMP("%g", d, bits);
	FP_CMP("%.40f", d, bits);
	FP_CMP("%#g", d, bits);
}

static void test_float_random(void **state)
{
	/* clang-format off */
	static const double specials[] = {
		0.0, 1.0, 0.5, 0.1, 1e-5, 1e-4, 99999.5, 999999.5, 1e15, 1e16, 1e17, 1e22, 1e23,
		DBL_MAX, DBL_MIN, DBL_TRUE_MIN, DBL_EPSILON, 4503599627370495.5, 9007199254740993.0,
		0x1p-1022, 0x1.fffffffffffffp-1023, 0x1p-1074, 0x1.8p-1074, 5e-324,
		2.2250738585072014e-308, 123456.7890123, 0.000123456789, 9.999999999999999e22,
		1.7976931348623157e308,
	};
	/* clang-format on */
	long i;
	size_t k;

	(void)state;
	fp_mismatches = 0;
	for (k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		uint64_t bits;
		double d = specials[k];

		memcpy(&bits, &d, sizeof(bits));
		fp_all_formats(d, bits);
		fp_all_formats(-d, bits ^ (1ULL << 63));
	}
	fp_all_formats(v_inf, 0x7ff0000000000000ULL);
	fp_all_formats(-v_inf, 0xfff0000000000000ULL);
	fp_all_formats(v_nan, 0xfff8000000000000ULL);
	fp_all_formats(-v_nan, 0x7ff8000000000000ULL);

	for (i = 0; i < 100000; i++) {
		uint64_t bits = rng();
		double d;

		/* Half of the samples get exponents near 0, where formats differ most. */
		if (i & 1)
			bits = (bits & 0x800fffffffffffffULL) | ((1023 - 80 + bits % 160) << 52);
		memcpy(&d, &bits, sizeof(d));
		fp_all_formats(d, bits);
	}
	assert_int_equal(fp_mismatches, 0);
}

static long double make_ldouble(uint64_t mant, uint16_t sign_exp)
{
	unsigned char b[sizeof(long double)];
	long double x;

	memset(b, 0, sizeof(b));
	memcpy(b, &mant, 8);
	memcpy(b + 8, &sign_exp, 2);
	memcpy(&x, b, sizeof(x));
	return x;
}

static void test_ldouble_random(void **state)
{
	long i;

	(void)state;
	fp_mismatches = 0;
	if (LDBL_MANT_DIG != 64) {
		skip();
		return;
	}
	for (i = 0; i < 2000; i++) {
		uint64_t mant = rng() | (1ULL << 63);
		uint16_t se = (uint16_t)rng();
		long double x;

		if ((se & 0x7fff) == 0)
			mant &= ~(1ULL << 63); /* a true subnormal */
		/* A quarter span the whole exponent range (slow near its ends). */
		if (i % 4)
			se = (uint16_t)((se & 0x8000) | (16383 - 100 + rng() % 200));
		x = make_ldouble(mant, se);
		FP_CMP("%.21Lg", x, mant);
		FP_CMP("%Le", x, mant);
		FP_CMP("%La", x, mant);
		FP_CMP("%.3La", x, mant);
		FP_CMP("%#.30Lg", x, mant);
		if ((se & 0x7fff) > 16383 - 200 && (se & 0x7fff) < 16383 + 200)
			FP_CMP("%.30Lf", x, mant);
	}
	/* Pseudo-denormals, unnormals and pseudo-NaNs: glibc's readings. */
	{
		static const struct {
			uint64_t mant;
			uint16_t se;
		} odd[] = {{0x8000000000000001ULL, 0},
			   {0x8000000000000000ULL, 0x8000},
			   {0xc000000000000000ULL, 0},
			   {0x4000000000000000ULL, 1},
			   {0, 0x3fff},
			   {0x4000000000000000ULL, 0x7fff},
			   {0, 0x7fff},
			   {0xc000000000000000ULL, 0xffff},
			   {0x8000000000000000ULL, 0x7fff},
			   {1, 0}};
		size_t k;

		for (k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
			long double x = make_ldouble(odd[k].mant, odd[k].se);

			FP_CMP("%.25Le", x, odd[k].mant);
			FP_CMP("%Lg", x, odd[k].mant);
			FP_CMP("%La", x, odd[k].mant);
			FP_CMP("%.3La", x, odd[k].mant);
		}
	}
	assert_int_equal(fp_mismatches, 0);
}

/* ------------------------------------------------------------------------ */

/*
 * Generated formats: random flags, widths, precisions, length modifiers and
 * conversions (including unknown ones, numbered arguments and truncated
 * last conversions), each with arguments of the type glibc will read.
 * fuzz_check has no format attribute on purpose: the formats are built at
 * run time.
 */
static unsigned long fuzz_mismatches;

static void fuzz_check(const char *fmt, ...)
{
	va_list a1, a2;
	int r1, r2;

	memset(ref_buf, 0xa5, BUF_SIZE);
	memset(our_buf, 0xa5, BUF_SIZE);
	va_start(a1, fmt);
	va_copy(a2, a1);
	errno = EACCES; /* for %m */
	r1 = libc_vsnprintf(ref_buf, BUF_SIZE, fmt, a1);
	errno = EACCES;
	r2 = pk_fmt_vsnprintf(our_buf, BUF_SIZE, fmt, a2);
	va_end(a2);
	va_end(a1);
	if (r1 == r2 && memcmp(ref_buf, our_buf, BUF_SIZE) == 0)
		return;
	if (fuzz_mismatches++ < 10)
		print_error("\"%s\": glibc %d \"%s\" ours %d \"%s\"\n", show(fmt, -1), r1,
			    show(ref_buf, r1 >= 0 && r1 < BUF_SIZE ? r1 : -1), r2,
			    show(our_buf, r2 >= 0 && r2 < BUF_SIZE ? r2 : -1));
}

/* One conversion, its "*" arguments and a data argument of the right type. */
static void fuzz_one(void)
{
	static const char *const lens[] = {"",	"",  "",  "hh", "h", "l", "ll",
					   "j", "z", "t", "L",	"q", "Z"};
	static const char convs[] = "diouxXbBcspfFeEgGaAmCS%";
	static const char *const strs[] = {"", "a", "hello world", "0123456789abcdef", NULL};
	static const wchar_t *const wstrs[] = {L"", L"w", L"wide str", NULL};
	char fmt[64];
	int k = 0, nstar = 0, star[2] = {0, 0}, nflags, i;
	const char *len;
	bool wide, ll;
	char c;
	uint64_t r;

	if (rng() % 8 == 0)
		k += snprintf(fmt + k, 8, "ab ");
	fmt[k++] = '%';
	nflags = (int)(rng() % 4);
	for (i = 0; i < nflags; i++)
		fmt[k++] = "-+ #0'I"[rng() % 7];
	switch (rng() % 4) {
	case 1:
		k += snprintf(fmt + k, 8, "%d", (int)(rng() % 30));
		break;
	case 2:
		fmt[k++] = '*';
		star[nstar++] = (int)(rng() % 41) - 20;
		break;
	default:
		break;
	}
	switch (rng() % 5) {
	case 1:
		fmt[k++] = '.';
		break;
	case 2:
		k += snprintf(fmt + k, 8, ".%d", (int)(rng() % 25));
		break;
	case 3:
		fmt[k++] = '.';
		fmt[k++] = '*';
		star[nstar++] = (int)(rng() % 41) - 10;
		break;
	default:
		break;
	}
	len = lens[rng() % (sizeof(lens) / sizeof(lens[0]))];
	k += snprintf(fmt + k, 4, "%s", len);
	c = convs[rng() % (sizeof(convs) - 1)];
	if (rng() % 50 == 0)
		c = "yYkKrQ@!"[rng() % 8];
	fmt[k++] = c;
	if (rng() % 4 == 0)
		fmt[k++] = '|';
	fmt[k] = '\0';

	ll = !strcmp(len, "ll") || !strcmp(len, "L") || !strcmp(len, "q");
	wide = ll || (len[0] && len[0] != 'h');
	r = rng();

#define FUZZ_CALL(v)                                                                               \
	do {                                                                                       \
		if (nstar == 0)                                                                    \
			fuzz_check(fmt, v);                                                        \
		else if (nstar == 1)                                                               \
			fuzz_check(fmt, star[0], v);                                               \
		else                                                                               \
			fuzz_check(fmt, star[0], star[1], v);                                      \
	} while (0)

	switch (c) {
	case 'd':
	case 'i':
	case 'o':
	case 'u':
	case 'x':
	case 'X':
	case 'b':
	case 'B':
		if (ll)
			FUZZ_CALL((long long)r);
		else if (wide)
			FUZZ_CALL((long)r);
		else
			FUZZ_CALL((int)(r >> (r % 64)));
		break;
	case 'c':
		if (wide)
			FUZZ_CALL((wint_t)(r % 128));
		else
			FUZZ_CALL((int)(r % 256));
		break;
	case 'C':
		FUZZ_CALL((wint_t)(r % 128));
		break;
	case 's':
		if (wide)
			FUZZ_CALL(wstrs[r % 4]);
		else
			FUZZ_CALL(strs[r % 5]);
		break;
	case 'S':
		FUZZ_CALL(wstrs[r % 4]);
		break;
	case 'p':
		FUZZ_CALL((void *)(uintptr_t)(r % 3 == 0 ? 0 : r >> (r % 64)));
		break;
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
	case 'a':
	case 'A': {
		uint64_t bits = r;
		double d;

		if (rng() & 1)
			bits = (bits & 0x800fffffffffffffULL) | ((1023 - 30 + rng() % 60) << 52);
		memcpy(&d, &bits, sizeof(d));
		if (ll)
			FUZZ_CALL((long double)d);
		else
			FUZZ_CALL(d);
		break;
	}
	default:
		FUZZ_CALL(0);
		break;
	}
#undef FUZZ_CALL
}

/*
 * Several conversions over twelve arguments of fixed types, in sequence,
 * numbered or mixed, sometimes followed by a truncated conversion.
 */
static void fuzz_many(void)
{
	static const bool is_ptr[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
	static const char *const strs[] = {"", "x", "hello", NULL, "0123456789"};
	static const char *const tails[] = {"%", "%5", "%-", "%l", "%.", "%0*", "%1$"};
	int iv[12];
	const char *pv[12];
	char fmt[256];
	int k = 0, next = 0, mode = (int)(rng() % 3), nspec = 1 + (int)(rng() % 4), i, n;

	for (i = 0; i < 12; i++) {
		/* the ints double as "*" widths: keep them printable */
		iv[i] = (int)(rng() % 3 == 0 ? rng() % 100000 : rng() % 200) -
			(rng() % 2 ? 100 : 0);
		if (rng() % 3 == 0)
			iv[i] = (int)(rng() % 41) - 20;
		pv[i] = strs[rng() % 5];
	}
	for (n = 0; n < nspec; n++) {
		bool numbered = mode == 1 || (mode == 2 && rng() % 2);
		int slot = numbered ? (int)(rng() % 12) : next, w;
		char c;

		if (slot >= 12)
			break;
		if (rng() % 3 == 0)
			fmt[k++] = "a [],"[rng() % 5];
		fmt[k++] = '%';
		if (numbered)
			k += snprintf(fmt + k, 8, "%d$", slot + 1);
		for (i = (int)(rng() % 3); i > 0; i--)
			fmt[k++] = "-+ #0'I"[rng() % 7];
		for (i = 0; i < 2; i++) {
			/* i == 0: width, i == 1: precision */
			switch (rng() % 4) {
			case 1:
				k += snprintf(fmt + k, 8, i ? ".%d" : "%d", (int)(rng() % 15));
				break;
			case 2:
				if (numbered) {
					do
						w = (int)(rng() % 12);
					while (is_ptr[w]);
					k += snprintf(fmt + k, 8, i ? ".*%d$" : "*%d$", w + 1);
				} else if (!is_ptr[next] && next + 1 < 12) {
					k += snprintf(fmt + k, 4, i ? ".*" : "*");
					next++;
				}
				break;
			default:
				break;
			}
		}
		if (!numbered)
			slot = next;
		switch (rng() % 20) {
		case 0:
			c = '%';
			break;
		case 1:
			c = 'm';
			break;
		case 2:
			c = "yKQ"[rng() % 3];
			break;
		default:
			if (!is_ptr[slot]) {
				c = "diouxXbBc"[rng() % 9];
				if (rng() % 4 == 0)
					k += snprintf(fmt + k, 4, rng() % 2 ? "h" : "hh");
			} else {
				c = rng() % 3 ? 's' : 'p';
				if (rng() % 3 == 0)
					fmt[k++] = 'h';
			}
			if (!numbered)
				next++;
			break;
		}
		fmt[k++] = c;
	}
	if (rng() % 6 == 0) {
		int t = (int)(rng() % 7);

		if (t == 5 && (next >= 12 || is_ptr[next]))
			t = 0; /* a "*" must not read a pointer as int */
		k += snprintf(fmt + k, 8, "%s", tails[t]);
	}
	fmt[k] = '\0';
	fuzz_check(fmt, iv[0], iv[1], pv[2], iv[3], iv[4], pv[5], iv[6], iv[7], pv[8], iv[9],
		   iv[10], pv[11]);
}

static void test_random_formats(void **state)
{
	long i;

	(void)state;
	fuzz_mismatches = 0;
	for (i = 0; i < 30000; i++)
		fuzz_one();
	for (i = 0; i < 10000; i++)
		fuzz_many();
	assert_int_equal(fuzz_mismatches, 0);
}

/* Every size from 0 to the full length + 2, against glibc and the scn rule. */
static void truncate_all(const char *fmt, ...) PK_PRINTF_FORMAT(1, 2);
static void truncate_all(const char *fmt, ...)
{
	va_list ap;
	char ref[256], ours[256], ours_scn[256];
	int full;
	size_t size;

	va_start(ap, fmt);
	full = pk_fmt_vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert_true(full >= 0 && full < 250);
	for (size = 0; size <= (size_t)full + 2; size++) {
		va_list a1, a2, a3;
		int r_ref, r_ours, r_scn;

		memset(ref, 0x5a, sizeof(ref));
		memset(ours, 0x5a, sizeof(ours));
		memset(ours_scn, 0x5a, sizeof(ours_scn));
		va_start(a1, fmt);
		r_ref = libc_vsnprintf(ref, size, fmt, a1);
		va_end(a1);
		va_start(a2, fmt);
		r_ours = pk_fmt_vsnprintf(ours, size, fmt, a2);
		va_end(a2);
		va_start(a3, fmt);
		r_scn = pk_vscnprintf(ours_scn, size, fmt, a3);
		va_end(a3);
		assert_int_equal(r_ours, r_ref);
		assert_int_equal(r_ours, full);
		assert_memory_equal(ours, ref, sizeof(ref));
		assert_memory_equal(ours_scn, ref, sizeof(ref));
		assert_int_equal(r_scn, size == 0 ? 0 : (size_t)full < size ? full : (int)size - 1);
	}
}

static void test_truncation(void **state)
{
	(void)state;
	truncate_all("worker %d processed %s in %lu us\n", 17, "job-42", 123456UL);
	truncate_all("%-8s|%08.3f|%+e|%#x", "ab", 3.14159, -2.5e-10, 0xbeefu);
	truncate_all("%.30f %La", 1.0 / 7, 1.0L / 7);
	/* %p is hashed by the kernel-semantics pk_vscnprintf (test_printk_pointers.c) */
	truncate_all("%5lc%ls|%10x|%s", (wint_t)'w', L"ide", 0x1234u, null_str);
	truncate_all("%2$s=%1$d", 7, "seven");
	truncate_all("%.0f %g", 1e22, 1e-300);
}

static int scn(char *buf, size_t size, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static int scn(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r;
}

static void test_sizes(void **state)
{
	char buf[64];

	(void)state;
	/* size 0: nothing is written, buf may be NULL */
	assert_int_equal(pk_fmt_snprintf(NULL, 0, "%s-%d", "abc", 12345), 9);
	assert_int_equal(pk_scnprintf(NULL, 0, "%s-%d", "abc", 12345), 0);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pk_fmt_snprintf(buf, 0, "hello"), 5);
	assert_int_equal(buf[0], 'x');
	/* size 1: only the NUL */
	assert_int_equal(pk_fmt_snprintf(buf, 1, "hello"), 5);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'x');
	/* kernel semantics */
	assert_int_equal(pk_scnprintf(buf, 4, "hello"), 3);
	assert_string_equal(buf, "hel");
	assert_int_equal(pk_scnprintf(buf, sizeof(buf), "hello"), 5);
	assert_int_equal(scn(buf, 6, "%d", 123456), 5);
	assert_string_equal(buf, "12345");
	/* sizes past INT_MAX: unlimited, but nothing written past the NUL */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pk_fmt_snprintf(buf, SIZE_MAX, "%s %d", "big", 7), 5);
	assert_string_equal(buf, "big 7");
	assert_int_equal(buf[6], 'x');
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pk_fmt_snprintf(buf, (size_t)INT_MAX + 10, "%.3f", 2.0), 5);
	assert_string_equal(buf, "2.000");
	assert_int_equal(buf[6], 'x');
	/* the kernel's: a size past INT_MAX is a bug, answered with 0 and no write */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pk_scnprintf(buf, SIZE_MAX, "%x", 255u), 0);
	assert_int_equal(pk_snprintf(buf, (size_t)INT_MAX + 1, "%x", 255u), 0);
	assert_int_equal(buf[0], 'x');
	assert_int_equal(pk_snprintf(buf, INT_MAX, "%x", 255u), 2);
	assert_string_equal(buf, "ff");
}

/*
 * Outputs longer than INT_MAX fail with -1 like glibc's EOVERFLOW, at once.
 * The widths are absurd on purpose, hence the silenced format checks.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif
static void test_overflow(void **state)
{
	char buf[32];
	int saved;

	(void)state;
	errno = 77;
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "ab%2147483647d|", 1), -1);
	assert_string_equal(buf, "ab                             ");
	assert_int_equal(errno, 77);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "ab%2147483645d", 1), INT_MAX);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "ab%*d", INT_MIN, 1), -1);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "ab%1073741824d%1073741824d", 1, 2), -1);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%.2147483647f", 1.0), -1);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%.2147483645f", 1.0), INT_MAX);
	assert_string_equal(buf, "1.00000000000000000000000000000");
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%.2147483647s", "abc"), 3);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%99999999999d", 1), -1);
	/* scn reports what it stored even then */
	assert_int_equal(pk_scnprintf(buf, 8, "ab%2147483647d|", 1), 7);
	/* too many positional arguments: refused rather than guessed */
	saved = pk_fmt_snprintf(buf, sizeof(buf), "%65$d", 1);
	assert_int_equal(saved, -1);
	assert_int_equal(errno, 77);
}
#pragma GCC diagnostic pop

/*
 * Bad string pointers: the kernel's "(efault)" (lib/vsprintf.c), cut to the
 * precision and padded with spaces to the width; NULL keeps glibc's rule.
 * Every row is checked through pk_snprintf and pk_scnprintf.
 */
struct ptr_row {
	const char *fmt;
	uintptr_t ptr;
	const char *want;
	const char *kwant; /* pk_vscnprintf's, where the kernel differs from C */
};

static const struct ptr_row efault_rows[] = {
	{ "%s|", 1, "(efault)|", NULL },
	{ "%s|", 4095, "(efault)|", NULL },
	{ "%s|", (uintptr_t)-1, "(efault)|", NULL },
	{ "%s|", (uintptr_t)-4095, "(efault)|", NULL },
	{ "%.0s|", 1, "|", NULL },
	{ "%.3s|", 2, "(ef|", NULL },
	{ "%.7s|", 2, "(efault|", NULL },
	{ "%.8s|", 2, "(efault)|", NULL },
	{ "%.40s|", 2, "(efault)|", NULL },
	{ "%10s|", 3, "  (efault)|", NULL },
	{ "%-10s|", 3, "(efault)  |", NULL },
	{ "%010s|", 3, "  (efault)|", NULL },
	{ "%4s|", 3, "(efault)|", NULL },
	{ "%10.4s|", 3, "      (efa|", NULL },
	{ "%-6.2s|", 3, "(e    |", NULL },
	{ "%ls|", 8, "(efault)|", NULL },
	{ "%S|", 8, "(efault)|", NULL },
	{ "%5.2ls|", (uintptr_t)-4095, "   (e|", NULL },
	{ "%pV|", 16, "(efault)|", NULL },
	{ "%12pV|", 16, "    (efault)|", NULL },
	{ "%1$s %1$.2s|", 5, "(efault) (e|", NULL },
	/*
	 * NULL: glibc's "(null)", or nothing when the precision cuts it; the
	 * kernel's error_string() cuts "(null)" to the precision instead.
	 */
	{ "%s|", 0, "(null)|", NULL },
	{ "%.3s|", 0, "|", "(nu|" },
	{ "%.0s|", 0, "|", NULL },
	{ "%8s|", 0, "  (null)|", NULL },
	{ "%-8.5s|", 0, "        |", "(null   |" },
};

static int fmt_ptr(char *buf, size_t size, int scn, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = scn ? pk_vscnprintf(buf, size, fmt, ap) : pk_fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r;
}

static void test_bad_pointers(void **state)
{
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(efault_rows) / sizeof(efault_rows[0]); i++) {
		const struct ptr_row *row = &efault_rows[i];
		int scn;

		for (scn = 0; scn < 2; scn++) {
			const char *w = scn && row->kwant ? row->kwant : row->want;
			int want = (int)strlen(w);
			int r;

			memset(buf, 0x5a, sizeof(buf));
			r = fmt_ptr(buf, sizeof(buf), scn, row->fmt, (void *)row->ptr);
			if (r != want || strcmp(buf, row->want) != 0)
				print_error("\"%s\" of %#lx: want %d \"%s\", got %d \"%s\"\n", row->fmt,
					    (unsigned long)row->ptr, want, w, r, buf);
			assert_int_equal(r, want);
			assert_string_equal(buf, w);
		}
	}
}

/*
 * printk's entry point (pk_vsnprintf_last) and pk_vscnprintf follow the
 * kernel: widths clamp to 2^23 - 1, precisions to 2^15 - 1, a malformed
 * conversion ends the output where it stands, nothing fails.
 */
static int klast(char *buf, size_t size, char *last, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_vsnprintf_last(buf, size, last, fmt, ap);
	va_end(ap);
	return r;
}

#define WMAX 8388607 /* the kernel's FIELD_WIDTH_MAX */
#define PMAX 32767   /* the kernel's PRECISION_MAX */
#define ONES10 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
#define ONES260 ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, \
	ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, \
	ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10

static void assert_filled(const char *p, char c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(p[i], c);
}

static void test_kernel_limits(void **state)
{
	char buf[64], big[2400];
	char last;
	int i;

	(void)state;
	/* widths too large for an int: clamped, not -1 */
	last = 0;
	assert_int_equal(klast(buf, sizeof(buf), &last, "ab%2147483648d|", 1), 2 + WMAX + 1);
	assert_int_equal(last, '|');
	assert_memory_equal(buf, "ab", 2);
	assert_filled(buf + 2, ' ', sizeof(buf) - 3);
	assert_int_equal(buf[63], '\0');
	assert_int_equal(klast(buf, sizeof(buf), &last, "% 99999999999d", 7), WMAX);
	assert_int_equal(last, '7');
	assert_int_equal(klast(buf, sizeof(buf), &last, "%-99999999999d|", 7), WMAX + 1);
	assert_memory_equal(buf, "7 ", 2);
	/* at and just above the limit */
	assert_int_equal(klast(NULL, 0, &last, "%8388607d", 7), WMAX);
	assert_int_equal(klast(NULL, 0, &last, "%8388608d", 7), WMAX);
	assert_int_equal(klast(NULL, 0, &last, "%*d", 8388608, 7), WMAX);
	assert_int_equal(klast(NULL, 0, &last, "%*d", INT_MIN, 7), WMAX);
	assert_int_equal(klast(NULL, 0, &last, "%*d", INT_MAX, 7), WMAX);
	assert_int_equal(klast(buf, sizeof(buf), &last, "ab%1073741824d%1073741824d", 1, 2),
			 2 + 2 * WMAX);
	assert_int_equal(last, '2');
	/* precisions */
	assert_int_equal(klast(NULL, 0, &last, "%.32767d", 5), PMAX);
	assert_int_equal(klast(NULL, 0, &last, "%.32768d", 5), PMAX);
	assert_int_equal(klast(buf, sizeof(buf), &last, "%.2147483648d", 5), PMAX);
	assert_filled(buf, '0', sizeof(buf) - 1);
	assert_int_equal(last, '5');
	assert_int_equal(klast(NULL, 0, &last, "%.*d", INT_MAX, 5), PMAX);
	assert_int_equal(klast(NULL, 0, &last, "%.2147483647f", 1.0), 2 + PMAX);
	assert_int_equal(klast(buf, sizeof(buf), &last, "%.99999999999s|", "abc"), 4);
	assert_string_equal(buf, "abc|");
	/* small ones are untouched */
	assert_int_equal(klast(buf, sizeof(buf), &last, "%5d|%-4s|%.2s", 42, "ab", "xyz"), 13);
	assert_string_equal(buf, "   42|ab  |xy");
	/* a format ending inside a conversion: the output before it */
	assert_int_equal(klast(buf, sizeof(buf), &last, "abc%"), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(last, 'c');
	assert_int_equal(klast(buf, sizeof(buf), &last, "abc\n%"), 4);
	assert_int_equal(last, '\n');
	assert_int_equal(klast(buf, sizeof(buf), &last, "%d%-5", 12), 2);
	assert_string_equal(buf, "12");
	assert_int_equal(klast(buf, sizeof(buf), &last, "%"), 0);
	assert_string_equal(buf, "");
	assert_int_equal(last, 0);
	/* too many numbered arguments: the output before the first one */
	assert_int_equal(klast(buf, sizeof(buf), &last, "n=%d %65$d", 1, 2), 4);
	assert_string_equal(buf, "n=1 ");
	/* over INT_MAX in all: INT_MAX, with what fits */
	memset(big, 0, sizeof(big));
	for (i = 0; i < 260; i++)
		memcpy(big + 9 * i, "%8388607d", 9);
	assert_int_equal(klast(buf, sizeof(buf), &last, big, ONES260), INT_MAX);
	assert_filled(buf, ' ', sizeof(buf) - 1);
	/* pk_vscnprintf clamps the same way */
	assert_int_equal(pk_scnprintf(buf, sizeof(buf), "%s", "x"), 1);
	assert_int_equal(fmt_ptr(buf, sizeof(buf), 1, "ab%2147483648d|", 1), 63);
	assert_int_equal(fmt_ptr(buf, 8, 1, "ab%"), 2);
	assert_string_equal(buf, "ab");
	/* pk_vsnprintf keeps C99's -1 for all of these */
	assert_int_equal(fmt_ptr(buf, sizeof(buf), 0, "ab%2147483648d|", 1), -1);
	assert_int_equal(fmt_ptr(buf, sizeof(buf), 0, "ab%"), -1);
}

/*
 * A numbered argument used both as a pointer and as a long double is
 * loaded once, as the type of its last use (glibc's rule): the long double
 * view then shows the pointer's bytes and zeros, never stale stack bytes
 * (which of them a build leaves there varies: fuzz_format's corpus keeps
 * the input that showed them; here a first call leaves a NaN's sign and
 * exponent bits in the frame the second one uses).
 */
static PK_NOINLINE int ld_first(char *buf, size_t size, long double x)
{
	return fmt_ptr(buf, size, 0, "%1$Lf|%1$Lf", x);
}

static PK_NOINLINE int mixed_use(char *buf, size_t size)
{
	return fmt_ptr(buf, size, 0, "%1$.0Lf|%1$s", "x");
}

static void test_positional_mixed_types(void **state)
{
	char buf[64];
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		ld_first(buf, sizeof(buf), -(long double)v_nan);
		assert_int_equal(mixed_use(buf, sizeof(buf)), 3);
		assert_string_equal(buf, "0|x");
	}
}

/* ------------------------------------------------------------------------ */

static int vaf_print(char *buf, size_t size, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static int vaf_print(char *buf, size_t size, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	r = pk_fmt_snprintf(buf, size, "<%pV>", &vaf);
	va_end(ap);
	return r;
}

/* %pV works on a copy: the caller's list still starts at the first argument. */
static void vaf_keeps_list(char *buf, size_t size, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	assert_int_equal(pk_fmt_snprintf(buf, size, "[%pV]", &vaf), 6);
	assert_string_equal(buf, "[1234]");
	assert_int_equal(pk_fmt_snprintf(buf, size, "%pV%pV", &vaf, &vaf), 8);
	assert_string_equal(buf, "12341234");
	assert_int_equal(va_arg(ap, int), 1234);
	assert_string_equal(va_arg(ap, const char *), "");
	va_end(ap);
}

static void test_pv(void **state)
{
	char buf[256];
	int r;

	(void)state;
	r = vaf_print(buf, sizeof(buf), "%s=%d (%.2f)", "answer", 42, 0.125);
	assert_string_equal(buf, "<answer=42 (0.12)>");
	assert_int_equal(r, 18);
	vaf_keeps_list(buf, sizeof(buf), "%d%s", 1234, "");
	/* numbered arguments inside a %pV, after output before it */
	r = vaf_print(buf, sizeof(buf), "%2$s-%1$d-%2$s", 5, "x");
	assert_string_equal(buf, "<x-5-x>");
	assert_int_equal(r, 7);
	/* truncation inside a %pV */
	r = vaf_print(buf, 8, "%s", "0123456789");
	assert_int_equal(r, 12);
	assert_string_equal(buf, "<012345");
	/* a NULL struct va_format */
	r = pk_fmt_snprintf(buf, sizeof(buf), "%pV|", (struct va_format *)NULL);
	assert_string_equal(buf, "(null)|");
}

/*
 * Nesting: chain_vaf[k] has the format "<letter>(%pV)" and its va_list
 * holds &chain_vaf[k + 1]; the innermost one prints a number. Every level's
 * va_list lives in a frame of chain_link that is still active when the
 * outermost call formats.
 */
static struct va_format chain_vaf[16];
static const char *const chain_fmt[] = {"a(%pV)", "b(%pV)", "c(%pV)", "d(%pV)", "e(%pV)", "f(%pV)",
					"g(%pV)", "h(%pV)", "i(%pV)", "j(%pV)", "k(%pV)", "l(%pV)"};

static void chain_link(char *buf, size_t size, int depth, int level, int *ret, ...);
static void chain_link(char *buf, size_t size, int depth, int level, int *ret, ...)
{
	va_list ap;

	va_start(ap, ret);
	chain_vaf[level].va = &ap;
	if (level == depth) {
		/* innermost: its list holds the final int */
		chain_vaf[level].fmt = "n=%d";
		*ret = pk_fmt_snprintf(buf, size, "top:%pV", &chain_vaf[0]);
	} else {
		chain_vaf[level].fmt = chain_fmt[level];
		if (level + 1 == depth)
			chain_link(buf, size, depth, level + 1, ret, 7);
		else
			chain_link(buf, size, depth, level + 1, ret, &chain_vaf[level + 2]);
	}
	va_end(ap);
}

static void build_chain(char *buf, size_t size, int depth, int *ret)
{
	/* Level 0's list holds &chain_vaf[1], level 1's holds &chain_vaf[2], ... */
	chain_link(buf, size, depth, 0, ret, &chain_vaf[1]);
}

static void test_pv_nesting(void **state)
{
	char buf[256];
	int ret = 0;

	(void)state;
	/* depth d: d + 1 nested %pV (the top format's own plus d chain links) */
	build_chain(buf, sizeof(buf), 1, &ret);
	assert_string_equal(buf, "top:a(n=7)");
	build_chain(buf, sizeof(buf), 4, &ret);
	assert_string_equal(buf, "top:a(b(c(d(n=7))))");
	assert_int_equal(ret, (int)strlen(buf));
	build_chain(buf, sizeof(buf), 7, &ret);
	assert_string_equal(buf, "top:a(b(c(d(e(f(g(n=7)))))))");
	/* 8 nested %pV work; the 9th prints nothing */
	build_chain(buf, sizeof(buf), 8, &ret);
	assert_string_equal(buf, "top:a(b(c(d(e(f(g(h())))))))");
	build_chain(buf, sizeof(buf), 11, &ret);
	assert_string_equal(buf, "top:a(b(c(d(e(f(g(h())))))))");
	assert_int_equal(ret, (int)strlen(buf));
}

/* ------------------------------------------------------------------------ */

static void test_misc_semantics(void **state)
{
	char buf[128];
	int n = 12345;
	signed char hh = 5;
	long long ll = 6;

	(void)state;
	/* %n consumes its pointer and stores nothing */
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "ab%ncd", &n), 4);
	assert_string_equal(buf, "abcd");
	assert_int_equal(n, 12345);
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%hhn%d%lln|", &hh, 9, &ll), 2);
	assert_string_equal(buf, "9|");
	assert_int_equal(hh, 5);
	assert_int_equal(ll, 6);
	/* %m leaves errno alone */
	errno = ENOENT;
	pk_fmt_snprintf(buf, sizeof(buf), "%m");
	assert_string_equal(buf, "No such file or directory");
	assert_int_equal(errno, ENOENT);
	errno = 4095;
	pk_fmt_snprintf(buf, sizeof(buf), "%m|");
	assert_string_equal(buf, "Unknown error 4095|");
	assert_int_equal(errno, 4095);
	errno = 0;
	/* NULL %s */
	pk_fmt_snprintf(buf, sizeof(buf), "%s|%.3s|%8s", null_str, null_str, null_str);
	assert_string_equal(buf, "(null)||  (null)");
	/* %s never reads past its precision */
	{
		char unterminated[3] = {'a', 'b', 'c'};

		pk_fmt_snprintf(buf, sizeof(buf), "%.3s|", unterminated);
		assert_string_equal(buf, "abc|");
	}
	/* kernel-style %p extensions print the pointer and then the letters */
	pk_fmt_snprintf(buf, sizeof(buf), "%pS", (void *)0x1000);
	assert_string_equal(buf, "0x1000S");
}

static void test_wide_utf8(void **state)
{
	char buf[128];

	(void)state;
	/* no locale: UTF-8 always (glibc's C locale would fail with EILSEQ) */
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%lc", (wint_t)0xe9), 2);
	assert_string_equal(buf, "\xc3\xa9");
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%ls", L"caf\u00e9 \u20ac \U0001F600"), 14);
	assert_string_equal(buf, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* the precision counts bytes and never splits a character */
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%.4ls|", L"ab\u20ac"), 3);
	assert_string_equal(buf, "ab|");
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%.5ls|", L"ab\u20ac"), 6);
	assert_string_equal(buf, "ab\xe2\x82\xac|");
	/* the width counts bytes too */
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%5lc|", (wint_t)0x20ac), 6);
	assert_string_equal(buf, "  \xe2\x82\xac|");
	/* no encoding: U+FFFD */
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%lc%lc", (wint_t)0xd800, (wint_t)0x110000),
			 6);
	assert_string_equal(buf, "\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(pk_fmt_snprintf(buf, sizeof(buf), "%lc", (wint_t)0x7ff), 2);
	assert_string_equal(buf, "\xdf\xbf");
}

/* ------------------------------------------------------------------------ */

/*
 * From a signal handler: SIGALRM fires every millisecond while the main
 * thread formats in a loop; both compare with strings prepared beforehand.
 */
static char sig_expect[4][128];
static char main_expect[2][128];
static volatile sig_atomic_t sig_calls, sig_bad;

static int sig_vaf(char *buf, size_t size, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static int sig_vaf(char *buf, size_t size, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	r = pk_fmt_snprintf(buf, size, "sig[%pV]", &vaf);
	va_end(ap);
	return r;
}

static void on_alarm(int signo)
{
	char buf[128];

	(void)signo;
	pk_fmt_snprintf(buf, sizeof(buf), "alarm %d %s %lu|%08.3f|%x", -42, "handler", 123456789UL,
		    3.14159, 0xfeedu);
	if (strcmp(buf, sig_expect[0]) != 0)
		sig_bad = 1;
	pk_fmt_snprintf(buf, sizeof(buf), "%.17g %e %a", 0.1, 1e-300, 1.5);
	if (strcmp(buf, sig_expect[1]) != 0)
		sig_bad = 1;
	sig_vaf(buf, sizeof(buf), "%s-%d", "nested", 7);
	if (strcmp(buf, sig_expect[2]) != 0)
		sig_bad = 1;
	pk_fmt_snprintf(buf, sizeof(buf), "%2$s %1$d %3$Lg", 5, "pos", 0.25L);
	if (strcmp(buf, sig_expect[3]) != 0)
		sig_bad = 1;
	sig_calls++;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_signal_handler(void **state)
{
	struct sigaction sa, old_sa;
	struct itimerval it, old_it;
	char buf[128];
	double end;
	long loops = 0, bad = 0;

	(void)state;
	libc_snprintf(sig_expect[0], sizeof(sig_expect[0]), "alarm %d %s %lu|%08.3f|%x", -42,
		      "handler", 123456789UL, 3.14159, 0xfeedu);
	libc_snprintf(sig_expect[1], sizeof(sig_expect[1]), "%.17g %e %a", 0.1, 1e-300, 1.5);
	strcpy(sig_expect[2], "sig[nested-7]");
	libc_snprintf(sig_expect[3], sizeof(sig_expect[3]), "%2$s %1$d %3$Lg", 5, "pos", 0.25L);
	libc_snprintf(main_expect[0], sizeof(main_expect[0]), "worker %d processed %s in %lu us\n",
		      3, "main", 987UL);
	libc_snprintf(main_expect[1], sizeof(main_expect[1]), "%-10s|%+.5e|%#o", "loop", -1234.5,
		      0777u);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGALRM, &sa, &old_sa), 0);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 1000;
	it.it_value.tv_usec = 1000;
	assert_int_equal(setitimer(ITIMER_REAL, &it, &old_it), 0);

	end = now_seconds() + 0.2;
	while (now_seconds() < end) {
		int i;

		for (i = 0; i < 50; i++) {
			pk_fmt_snprintf(buf, sizeof(buf), "worker %d processed %s in %lu us\n", 3,
				    "main", 987UL);
			bad += strcmp(buf, main_expect[0]) != 0;
			pk_fmt_snprintf(buf, sizeof(buf), "%-10s|%+.5e|%#o", "loop", -1234.5, 0777u);
			bad += strcmp(buf, main_expect[1]) != 0;
			loops++;
		}
	}

	memset(&it, 0, sizeof(it));
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	assert_int_equal(sigaction(SIGALRM, &old_sa, NULL), 0);
	(void)old_it;

	assert_int_equal(bad, 0);
	assert_int_equal(sig_bad, 0);
	assert_true(loops > 0);
	assert_true(sig_calls > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integer_rows),   cmocka_unit_test(test_string_rows),
		cmocka_unit_test(test_float_rows),     cmocka_unit_test(test_positional_rows),
		cmocka_unit_test(test_odd_rows),       cmocka_unit_test(test_float_random),
		cmocka_unit_test(test_ldouble_random), cmocka_unit_test(test_random_formats),
		cmocka_unit_test(test_truncation),     cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_overflow),       cmocka_unit_test(test_pv),
		cmocka_unit_test(test_pv_nesting),     cmocka_unit_test(test_misc_semantics),
		cmocka_unit_test(test_wide_utf8),      cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_bad_pointers),   cmocka_unit_test(test_kernel_limits),
		cmocka_unit_test(test_positional_mixed_types),
	};

	find_libc();
	init_specials();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
