// SPDX-License-Identifier: MIT
/*
 * test_printk_pointers.c - the kernel's %p extensions in printk's formatter.
 *
 * Expected texts are the kernel's: the cases of Linux lib/tests/printf_kunit.c
 * (MAC, IPv4, UUID, hex strings, NULL, error and invalid pointers, %pe), and
 * for the extensions it leaves untested (IPv6, %pE, %pa, %pS) the output of
 * the rules in lib/vsprintf.c and lib/string_helpers.c. Every row goes through
 * pk_vsnprintf_last (printk's entry point) and pk_vscnprintf at every buffer
 * size, and must never write past the size given. The C99 entry point keeps
 * glibc's %p (test_vsprintf.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <printk/printk.h>

#include "fixture.h"
#include "log/options.h"
#include "testutil.h"
#include "format/vsprintf.h"

/* The checkers below take a format and a va_list. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

#define ZEROS "00000000" /* the high half of a 64-bit %p: the hash is 32 bits */
#define ONES  "ffffffff"

#define BUF 512

/* Every size from 0 to the full length + 1: the scn rule and the bytes past it. */
static void check_sizes(int line, const char *expect, const char *fmt, va_list ap)
{
	size_t elen = strlen(expect), size;

	for (size = 0; size <= elen + 1; size++) {
		char buf[BUF + 16];
		va_list aq;
		int r;
		size_t kept = size ? (elen < size ? elen : size - 1) : 0;

		memset(buf, '$', sizeof(buf));
		va_copy(aq, ap);
		r = pk_vscnprintf(buf, size, fmt, aq);
		va_end(aq);
		if (r != (int)kept || (size && buf[kept]) || memcmp(buf, expect, kept) ||
		    buf[size ? kept + 1 : 0] != '$') {
			print_error(
				"line %d: size %zu: \"%s\" gave %d \"%.*s\", expected \"%.*s\"\n",
				line, size, fmt, r, (int)kept, buf, (int)kept, expect);
			fail();
		}
	}
}

static void check(int line, const char *expect, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static void check(int line, const char *expect, const char *fmt, ...)
{
	char buf[BUF];
	char last = 'x';
	va_list ap, aq;
	int r;

	va_start(ap, fmt);
	va_copy(aq, ap);
	r = pk_vsnprintf_last(buf, sizeof(buf), &last, fmt, aq);
	va_end(aq);
	if (r != (int)strlen(expect) || strcmp(buf, expect)) {
		print_error("line %d: \"%s\" gave %d \"%s\", expected \"%s\"\n", line, fmt, r, buf,
			    expect);
		fail();
	}
	check_sizes(line, expect, fmt, ap);
	va_end(ap);
}

#define T(expect, ...) check(__LINE__, expect, __VA_ARGS__)

/* The same, for formats a compiler's printf checker rejects on purpose. */
static void check_nowarn(int line, const char *expect, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	check_sizes(line, expect, fmt, ap);
	va_end(ap);
}

#define TN(expect, ...) check_nowarn(__LINE__, expect, __VA_ARGS__)

static const char *kfmt(char *buf, size_t size, const char *fmt, ...) PK_PRINTF_FORMAT(3, 4);
static const char *kfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pk_vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}

static void *err_ptr(long e)
{
	return (void *)(intptr_t)e;
}

#define PTR_INVALID ((void *)0xab)

/* ------------------------------------------------------------------ */

static void test_null_error_invalid(void **state)
{
	(void)state;
	/* NULL and error pointers are not hashed (printf_kunit.c) */
	T(ZEROS "00000000", "%p", NULL);
	T(ZEROS "00000000", "%px", NULL);
	T("(null)", "%pE", NULL);
	T(ONES "fffffff5", "%p", err_ptr(-11));
	T(ONES "fffffff5", "%px", err_ptr(-11));
	T("(efault)", "%pE", err_ptr(-11));
	T(ZEROS "000000ab", "%px", PTR_INVALID);
	T("(efault)", "%pE", PTR_INVALID);
	/* every extension that reads memory checks the pointer first */
	T("(null)|(null)|(null)|(null)|(null)|(null)", "%pM|%pI4|%pUb|%pa|%pISp|%pV", NULL, NULL,
	  NULL, NULL, NULL, NULL);
	T("(efault)|(efault)|(efault)", "%pM|%pi6|%pad", PTR_INVALID, err_ptr(-1), (void *)4095);
	/* the message is cut to 16 bytes by default, else to the precision */
	TN("[  (null)][(nu]", "[%8pM][%.3pM]", NULL, NULL);
	T("[(efault)  ]", "[%-10pU]", PTR_INVALID);
	/* the first 4096 addresses are bad, except that NULL says so */
	T("(efault)", "%pm", (void *)1);
	T("(efault)", "%pm", (void *)4095);
}

static void test_hashed(void **state)
{
	char a[64], b[64], c[64], d[64];
	void *p = &a;
	static int obj;

	(void)state;
	/* 32 hash bits, zero-padded to the pointer's width */
	kfmt(a, sizeof(a), "%p", p);
	assert_int_equal(strlen(a), 2 * sizeof(void *));
	if (sizeof(void *) == 8)
		assert_memory_equal(a, ZEROS, 8);
	snprintf(b, sizeof(b), "%0*lx", (int)(2 * sizeof(void *)), (unsigned long)(uintptr_t)p);
	assert_string_not_equal(a, b);
	/* the same pointer, the same hash; %pK and %pe of a valid pointer as %p */
	assert_string_equal(kfmt(b, sizeof(b), "%p", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pK", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pe", p), a);
	/* the first page is hashed too (only %s-like readers call it bad) */
	kfmt(c, sizeof(c), "%p", PTR_INVALID);
	assert_string_not_equal(c, ZEROS "000000ab");
	/* another pointer, another hash (with 2^-32 odds of a clash) */
	kfmt(d, sizeof(d), "%p", (void *)&obj);
	assert_string_not_equal(d, a);

	/* a width replaces the zero padding: the kernel's pointer_string() */
	{
		const char *digits = a;
		char want[80];

		while (*digits == '0' && digits[1])
			digits++;
		snprintf(want, sizeof(want), "[%20s]", digits);
		assert_string_equal(kfmt(b, sizeof(b), "[%20p]", p), want);
		snprintf(want, sizeof(want), "[%-*s]", (int)(2 * sizeof(void *)), digits);
		assert_string_equal(kfmt(b, sizeof(b), "[%-p]", p), want);
		snprintf(want, sizeof(want), "[%s]", digits);
		assert_string_equal(kfmt(b, sizeof(b), "[%*p]", 0, p), want);
	}
}

static void test_px(void **state)
{
	(void)state;
	if (sizeof(void *) == 8) {
		T("ffff0123456789ab", "%px", (void *)(uintptr_t)0xffff0123456789abULL);
		T("0000000000001234|", "%px|", (void *)0x1234);
	}
	T("[      1234]", "[%10px]", (void *)0x1234);
	T("[1234      ]", "[%-10px]", (void *)0x1234);
	TN("[0000001234]", "[%010px]", (void *)0x1234);
	TN("[0x00001234]", "[%#010px]", (void *)0x1234);
}

static void test_mac(void **state)
{
	const unsigned char addr[6] = {0x2d, 0x48, 0xd6, 0xfc, 0x7a, 0x05};

	(void)state;
	T("2d:48:d6:fc:7a:05", "%pM", addr);
	T("05:7a:fc:d6:48:2d", "%pMR", addr);
	T("2d-48-d6-fc-7a-05", "%pMF", addr);
	T("2d48d6fc7a05", "%pm", addr);
	T("057afcd6482d", "%pmR", addr);
	/* a string to the width and precision */
	TN("[     2d48d6fc7a05|2d:4 ]", "[%17pm|%-5.4pM]", addr, addr);
}

static void test_ip4(void **state)
{
	struct sockaddr_in sa;
	uint32_t host = 0x01020304;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(12345);
	sa.sin_addr.s_addr = htonl(0x7f000001);
	T("127.000.000.001|127.0.0.1", "%pi4|%pI4", &sa.sin_addr, &sa.sin_addr);
	T("127.000.000.001|127.0.0.1", "%piS|%pIS", &sa, &sa);
	sa.sin_addr.s_addr = htonl(0x01020304);
	T("001.002.003.004:12345|1.2.3.4:12345", "%piSp|%pISp", &sa, &sa);
	/* byte order: n and b network, l little-endian, h the host's */
	T("1.2.3.4|1.2.3.4|4.3.2.1", "%pI4n|%pI4b|%pI4l", &sa.sin_addr, &sa.sin_addr, &sa.sin_addr);
	T("1.2.3.4", "%pI4h", &host);
	T("4.3.2.1:12345", "%pISpl", &sa);
	T("255.0.10.100", "%pI4", (const unsigned char[]){255, 0, 10, 100});
	/* the width pads the whole address, and also the port (the kernel's number()) */
	T("[   1.2.3.4]", "[%10pI4]", &sa.sin_addr);
	T("[1.2.3.4:     12345]", "[%10pISp]", &sa);
	/* another family, or no 4/6/S */
	sa.sin_family = AF_UNIX;
	T("(einval)", "%pISp", &sa);
	T("(%pI?)|(%pi?)", "%pI|%pi5", &sa, &sa);
}

static void test_ip6(void **state)
{
	struct sockaddr_in6 sa;
	struct in6_addr a;

	(void)state;
	inet_pton(AF_INET6, "2001:db8::1", &a);
	T("2001:0db8:0000:0000:0000:0000:0000:0001", "%pI6", &a);
	T("20010db8000000000000000000000001", "%pi6", &a);
	T("2001:db8::1", "%pI6c", &a);
	/* the first longest run of zero groups, never a single one */
	inet_pton(AF_INET6, "2001:db8:0:1:0:0:0:1", &a);
	T("2001:db8:0:1::1", "%pI6c", &a);
	inet_pton(AF_INET6, "2001:0:0:1:0:0:1:1", &a);
	T("2001::1:0:0:1:1", "%pI6c", &a);
	inet_pton(AF_INET6, "1:2:3:4:5:6:0:8", &a);
	T("1:2:3:4:5:6:0:8", "%pI6c", &a);
	inet_pton(AF_INET6, "::", &a);
	T("::", "%pI6c", &a);
	inet_pton(AF_INET6, "::1", &a);
	T("::1", "%pI6c", &a);
	inet_pton(AF_INET6, "fe80::", &a);
	T("fe80::", "%pI6c", &a);
	/* v4-mapped and ISATAP addresses end in a dotted quad */
	inet_pton(AF_INET6, "::ffff:1.2.3.4", &a);
	T("::ffff:1.2.3.4", "%pI6c", &a);
	inet_pton(AF_INET6, "fe80::200:5efe:a0b:c0d", &a);
	T("fe80::200:5efe:10.11.12.13", "%pI6c", &a);
	inet_pton(AF_INET6, "fe80::5efe:a0b:c0d", &a);
	T("fe80::5efe:10.11.12.13", "%pI6c", &a);

	memset(&sa, 0, sizeof(sa));
	sa.sin6_family = AF_INET6;
	sa.sin6_port = htons(443);
	sa.sin6_flowinfo = htonl(0xf0012345); /* the top 4 bits are not flow label */
	sa.sin6_scope_id = 3;
	inet_pton(AF_INET6, "2001:db8::1", &sa.sin6_addr);
	T("2001:0db8:0000:0000:0000:0000:0000:0001", "%pIS", &sa);
	T("2001:db8::1", "%pISc", &sa);
	T("[2001:db8::1]:443", "%pISpc", &sa);
	T("[2001:db8::1]%3", "%pISsc", &sa);
	T("[2001:db8::1]:443/74565%3", "%pISpfsc", &sa);
	T("[2001:db8::1]/74565", "%pIScf", &sa);
	T("[20010db8000000000000000000000001]:443", "%piSpc", &sa);
}

static void test_uuid(void **state)
{
	const unsigned char uuid[16] = {0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7,
					0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf};

	(void)state;
	T("00010203-0405-0607-0809-0a0b0c0d0e0f", "%pUb", uuid);
	T("00010203-0405-0607-0809-0A0B0C0D0E0F", "%pUB", uuid);
	T("03020100-0504-0706-0809-0a0b0c0d0e0f", "%pUl", uuid);
	T("03020100-0504-0706-0809-0A0B0C0D0E0F", "%pUL", uuid);
	T("00010203-0405-0607-0809-0a0b0c0d0e0f", "%pU", uuid);
}

static void test_hex_string(void **state)
{
	const unsigned char buf[3] = {0xc0, 0xff, 0xee};
	unsigned char big[70];
	char want[200];
	int i;

	(void)state;
	T("c0 ff ee|c0:ff:ee|c0-ff-ee|c0ffee", "%3ph|%3phC|%3phD|%3phN", buf, buf, buf, buf);
	T("c0 ff ee|c0:ff:ee|c0-ff-ee|c0ffee", "%*ph|%*phC|%*phD|%*phN", 3, buf, 3, buf, 3, buf, 3,
	  buf);
	/* no width: one byte; a width of 0: nothing, not even for NULL */
	T("c0|c0", "%ph|%phN", buf, buf);
	T("[]", "[%*ph]", 0, NULL);
	T("[(null)]", "[%*ph]", 2, NULL);
	/* at most 64 bytes */
	for (i = 0; i < 70; i++)
		big[i] = (unsigned char)i;
	for (i = 0; i < 64; i++)
		sprintf(want + 2 * i, "%02x", i);
	T(want, "%*phN", 70, big);
	/* a negative width counts too (its sign is the '-' flag) */
	T("c0:ff", "%*phC", -2, buf);
}

static void test_escaped(void **state)
{
	const char s1[] = "a\tb\\c\"d\x1b"
			  "e\x7f\xa0\xff\n";
	const char nul[] = {'x', 0, 'y'};

	(void)state;
	/* default ESCAPE_ANY_NP: printable (Latin-1 included) passes */
	T("a\\tb\\c\"d\\ee\\177\xa0\xff\\n", "%*pE", (int)sizeof(s1) - 1, s1);
	/* one flag at a time */
	T("a\\tb\\c\"d\x1b"
	  "e\x7f\xa0\xff\\n",
	  "%*pEs", (int)sizeof(s1) - 1, s1);
	T("a\tb\\\\c\\\"d\\ee\x7f\xa0\xff\n", "%*pEc", (int)sizeof(s1) - 1, s1);
	T("x\\0y", "%*pEn", 3, nul);
	T("\\170\\000\\171", "%*pEo", 3, nul);
	T("\\x78\\x00\\x79", "%*pEh", 3, nul);
	T("x\\000y", "%*pEop", 3, nul);
	T("x\\x00y", "%*pEhp", 3, nul);
	/* a: every class, so without p even letters become octal */
	T("\\170\\0\\171", "%*pEa", 3, nul);
	/* p alone passes the printable and leaves the rest as it is */
	T("a\tb", "%*pEp", 3, "a\tb");
	/* no width: one byte; 0: nothing; the field is never padded */
	T("a|", "%pE|", "ab");
	T("[]", "[%*pE]", 0, "ab");
	/* an unknown letter ends the flags and is skipped with the rest */
	T("\\n|", "%*pEsq|", 1, "\n");
}

static void test_errptr(void **state)
{
	(void)state;
	T("-1234", "%pe", err_ptr(-1234));
	T("(-ENOTSOCK)", "(%pe)", err_ptr(-ENOTSOCK));
	T("(-EAGAIN)", "(%pe)", err_ptr(-EAGAIN));
	T("(-EAGAIN)", "(%pe)", err_ptr(-EWOULDBLOCK));
	T("[-EIO    ]", "[%-8pe]", err_ptr(-EIO));
	T("[    -EIO]", "[%8pe]", err_ptr(-EIO));
	T("-EPROBE_DEFER", "%pe", err_ptr(-517));
	T("-ENOENT|-EHWPOISON|-ERECALLCONFLICT", "%pe|%pe|%pe", err_ptr(-ENOENT),
	  err_ptr(-EHWPOISON), err_ptr(-530));
	T("-EDEADLK|-EOPNOTSUPP", "%pe|%pe", err_ptr(-EDEADLOCK), err_ptr(-ENOTSUP));
	/* numbers without a name: 520, 41, the largest */
	T("-520|-41|-4095", "%pe|%pe|%pe", err_ptr(-520), err_ptr(-41), err_ptr(-4095));
	/* the number follows the spec: width, zero padding */
	TN("[-00041]", "[%06pe]", err_ptr(-41));
}

static void test_address_val(void **state)
{
	uintptr_t v = 0x1234;

	(void)state;
	/* "0x" and the type's width in digits, whatever the width asked */
	if (sizeof(v) == 8) {
		T("0x0000000000001234", "%pa", &v);
		T("0x0000000000001234|0x0000000000001234", "%pap|%pad", &v, &v);
		T("0x0000000000001234", "%40pa", &v);
	} else {
		T("0x00001234", "%pa", &v);
	}
}

static void test_symbols(void **state)
{
	(void)state;
	/* no symbol table: what a kernel built without kallsyms prints */
	if (sizeof(void *) == 8) {
		T("0x0000000000001000", "%pS", (void *)0x1000);
		T("0x0000000000001000|0x0000000000001000|0x0000000000001000|0x0000000000000000",
		  "%ps|%pSR|%pB|%pS", (void *)0x1000, (void *)0x1000, (void *)0x1000, NULL);
		T("0x00007fffdeadbeef", "%20pSb", (void *)0x7fffdeadbeefULL);
	}
}

static void test_unknown_and_letters(void **state)
{
	char a[64], b[64];
	void *p = &a;

	(void)state;
	/* every letter and digit after %p belongs to it; the rest is text */
	kfmt(a, sizeof(a), "%p", p);
	strcat(a, "|");
	assert_string_equal(kfmt(b, sizeof(b), "%pq9Zz|", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pK123|", p), a);
	/* %pf, %pt, %pN, %p4, %pA: only their full forms are known */
	T("(%pf?)|(%pt?)|(%pN?)|(%p4?)|(%pA?)", "%pf|%pt|%pN|%p4|%pA", p, p, p, p, p);
	/* the kernel-object ones print as %p */
	assert_string_equal(kfmt(b, sizeof(b), "%pR|", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pd2|", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pD|", p), a);
	assert_string_equal(kfmt(b, sizeof(b), "%pfw|", p), a);
	/* %pks/%pus print a string; any other letter is invalid */
	TN("abc|(einval)|ab", "%pks|%pkx|%.2pus", "abc", "abc", "abc");
	/* Latin-1 letters are letters to the kernel */
	T("2d48d6fc7a05.", "%pm\xe9\xff.",
	  (const unsigned char[]){0x2d, 0x48, 0xd6, 0xfc, 0x7a, 0x05});
	/* the letters end at anything else */
	if (sizeof(void *) == 8)
		T("0000000000000000-x", "%px-x", NULL);
}

static void set_bits(unsigned long *map, int from, int n)
{
	const int bits = (int)(sizeof(long) * 8);

	for (int i = from; i < from + n; i++)
		map[i / bits] |= 1UL << (i % bits);
}

/*
 * The kernel checks a dentry, file, resource, block device or flags
 * pointer before it reads the object (printf_kunit.c's dentry cases).
 */
static void test_kernel_object_pointers(void **state)
{
	(void)state;
	T("(null)", "%pd", NULL);
	T("(efault)", "%pd", PTR_INVALID);
	T("(null)", "%pD", NULL);
	T("(efault)", "%pD", PTR_INVALID);
	T("(null)|(efault)|(efault)", "%pd2|%pd4|%pD2", NULL, PTR_INVALID, err_ptr(-5));
	TN("  (null)|(efault) |(nu", "%8pd|%-9pD|%.3pd", NULL, PTR_INVALID, NULL);
	T("(null)|(efault)|(null)|(efault)", "%pr|%pR|%pg|%pGp", NULL, PTR_INVALID, NULL,
	  PTR_INVALID);
	T("(null)|(efault)", "%pfw|%pfwP", NULL, PTR_INVALID);
}

static void test_bitmap(void **state)
{
	static unsigned long bits[(1 << 16) / (sizeof(long) * 8)];
	unsigned long small = 0;
	const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19};

	(void)state;
	/* printf_kunit.c's cases: the width is the number of bits */
	T("00000|00000", "%20pb|%*pb", &small, 20, &small);
	T("|", "%20pbl|%*pbl", &small, 20, &small);
	for (int i = 0; i < 8; i++)
		small |= 1UL << primes[i];
	T("a28ac|a28ac", "%20pb|%*pb", &small, 20, &small);
	T("2-3,5,7,11,13,17,19|2-3,5,7,11,13,17,19", "%20pbl|%*pbl", &small, 20, &small);
	small = (1UL << 20) - 1;
	T("fffff|fffff", "%20pb|%*pb", &small, 20, &small);
	T("0-19|0-19", "%20pbl|%*pbl", &small, 20, &small);
	set_bits(bits, 1, 20);
	set_bits(bits, 60000, 15);
	T("1-20,60000-60014", "%*pbl", 1 << 16, bits);
	/* 32-bit chunks, highest first, the top one as wide as its bits */
	memset(bits, 0, 16);
	set_bits(bits, 0, 1);
	set_bits(bits, 40, 1);
	T("00,00000100,00000001", "%72pb", bits);
	/* no width: nothing */
	T("[]", "[%pb]", bits);
}

static void test_fourcc(void **state)
{
	static const struct {
		uint32_t code;
		const char *fmt, *str;
	} cases[] = {
		{0x3231564e, "%p4cc", "NV12 little-endian (0x3231564e)"},
		{0xb231564e, "%p4cc", "NV12 big-endian (0xb231564e)"},
		{0x10111213, "%p4cc", ".... little-endian (0x10111213)"},
		{0x20303159, "%p4cc", "Y10  little-endian (0x20303159)"},
		{0x41424344, "%p4ch", "ABCD (0x41424344)"},
		/* Linux 6.16's spelling of the reversed host order ... */
		{0x41424344, "%p4chR", "DCBA (0x44434241)"},
		/* ... and the old one, kept */
		{0x41424344, "%p4cn", "DCBA (0x44434241)"},
		/* letters after a complete modifier are skipped, not read */
		{0x41424344, "%p4chX", "ABCD (0x41424344)"},
		{0x41424344, "%p4chRl", "DCBA (0x44434241)"},
	};
	uint32_t le, be;
	const unsigned char abcd[4] = {0x44, 0x43, 0x42, 0x41}; /* 0x41424344 little-endian */
	const unsigned char abcd_be[4] = {0x41, 0x42, 0x43, 0x44};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_nowarn(__LINE__, cases[i].str, cases[i].fmt, &cases[i].code);
	memcpy(&le, abcd, 4);
	memcpy(&be, abcd_be, 4);
	T("ABCD (0x41424344)|ABCD (0x41424344)", "%p4cl|%p4cb", &le, &be);
	T("(%p4?)|(%p4?)", "%p4|%p4cx", &le, &le);
	/* an unknown modifier is an error string: cut to the precision, padded */
	TN("(%p4?)|(%p4?)|(%p4?)|(%p|  (%p4?)", "%p4cr|%p4cR|%p4c|%.3p4cq|%8p4cz", &le, &le, &le,
	   &le, &le);
	/* NULL and invalid pointers are checked before the code is read */
	T("(null)|(efault)", "%p4chR|%p4cb", NULL, PTR_INVALID);
}

static void test_time(void **state)
{
	/* 1543210543; the first nine fields of struct rtc_time are struct tm's */
	struct tm tm = {.tm_sec = 43,
			.tm_min = 35,
			.tm_hour = 5,
			.tm_mday = 26,
			.tm_mon = 10,
			.tm_year = 118};
	int64_t t = 1546615943; /* 2019-01-04T15:32:23 */
	int64_t before = -1;	/* 1969-12-31T23:59:59 */

	(void)state;
	/* printf_kunit.c's cases */
	T("(%pt?)", "%pt", &tm);
	T("2018-11-26T05:35:43", "%ptR", &tm);
	T("0118-10-26T05:35:43", "%ptRr", &tm);
	T("05:35:43|2018-11-26", "%ptRt|%ptRd", &tm, &tm);
	T("05:35:43|0118-10-26", "%ptRtr|%ptRdr", &tm, &tm);
	T("05:35:43|2018-11-26", "%ptRttr|%ptRdtr", &tm, &tm);
	T("05:35:43 tr|2018-11-26 tr", "%ptRt tr|%ptRd tr", &tm, &tm);
	T("2019-01-04T15:32:23", "%ptT", &t);
	T("0119-00-04T15:32:23", "%ptTr", &t);
	T("15:32:23|2019-01-04", "%ptTt|%ptTd", &t, &t);
	T("15:32:23|0119-00-04", "%ptTtr|%ptTdr", &t, &t);
	T("2019-01-04 15:32:23", "%ptTs", &t);
	T("0119-00-04 15:32:23", "%ptTsr", &t);
	T("15:32:23|2019-01-04", "%ptTts|%ptTds", &t, &t);
	T("15:32:23|0119-00-04", "%ptTtrs|%ptTdrs", &t, &t);
	T("1969-12-31T23:59:59", "%ptT", &before);
}

static void test_small_structs(void **state)
{
	uint64_t range[2] = {0xc0ffee00ba5eba11ULL, 0xc0ffee00ba5eba11ULL};
	uint64_t features = 0x1234;

	(void)state;
	T("[range 0xc0ffee00ba5eba11]", "%pra", range);
	range[0] = 0xc0ffee;
	range[1] = 0xba5eba11;
	T("[range 0x0000000000c0ffee-0x00000000ba5eba11]", "%pra", range);
	/* netdev_features_t: 64 bits; only %pNF is known, after the pointer check */
	T("0x0000000000001234", "%pNF", &features);
	T("(%pN?)|(null)", "%pN|%pN", &features, NULL);
}

static int va_helper(const char *fmt, ...) PK_PRINTF_FORMAT(1, 2);
static int va_helper(const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	char buf[64];
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	r = pk_scnprintf(buf, sizeof(buf), "<%pV5x>", &vaf);
	va_end(ap);
	assert_string_equal(buf, "<x=2d:48:d6:fc:7a:05>");
	return r;
}

static void test_va_format(void **state)
{
	(void)state;
	/* %pV nests kernel semantics and, as every %p, eats the letters after it */
	assert_int_equal(
		va_helper("x=%pM", (const unsigned char[]){0x2d, 0x48, 0xd6, 0xfc, 0x7a, 0x05}),
		21);
	TN("[(nul]", "[%.4pV]", NULL);
}

static void test_glibc_entry_unchanged(void **state)
{
	char buf[64];

	(void)state;
	/* pk_fmt_snprintf is C99: %p is glibc's, the letters stay text */
	pk_fmt_snprintf(buf, sizeof(buf), "%pM|%p", (void *)0x1000, NULL);
	assert_string_equal(buf, "0x1000M|(nil)");
}

/* printk stores what the formatter printed. */
static void test_printk_record(void **state)
{
	const unsigned char mac[6] = {0x2d, 0x48, 0xd6, 0xfc, 0x7a, 0x05};
	uint64_t seq = next_seq();

	(void)state;
	assert_int_equal(printk(KERN_INFO "eth0: %pM %pe\n", mac, err_ptr(-ENODEV)), 31);
	read_at(seq);
	assert_string_equal(rec.text, "eth0: 2d:48:d6:fc:7a:05 -ENODEV");
}

/* PRINTK_OPTS: the bare word only, as the kernel's parameter. */
static void test_option_parse(void **state)
{
	static struct pk_opts o;

	(void)state;
	assert_int_equal(pk_opts_parse("", &o), 0);
	assert_int_equal(o.no_hash_pointers, -1);
	assert_int_equal(pk_opts_parse("quiet no_hash_pointers", &o), 0);
	assert_int_equal(o.no_hash_pointers, 1);
	assert_int_equal(pk_opts_parse("no_hash_pointers=1", &o), -EINVAL);
	assert_int_equal(o.no_hash_pointers, -1);
	assert_int_equal(o.nwarnings, 1);
	assert_string_equal(o.warnings[0],
			    "printk: PRINTK_OPTS: bad value in 'no_hash_pointers=1', ignored");
}

/* no_hash_pointers is one-way: a child turns it on. */
static int no_hash_child(void *arg)
{
	struct pk_log *log;
	struct pk_record r;
	char buf[64], want[64];
	uint64_t seq;
	void *p = buf;
	int i;

	(void)arg;
	log = pk_printk_log();
	seq = pk_log_next_seq(log);
	if (pk_printk_configure("no_hash_pointers console=none") != 0)
		return 1;
	for (i = 0; i < PK_NO_HASH_POINTERS_BANNER_LINES; i++) {
		if (pk_log_read(log, seq + (uint64_t)i, &r, 0) < 0 || r.level != 4 ||
		    strcmp(r.text, pk_no_hash_pointers_banner[i]))
			return 10 + i;
	}
	if (strcmp(pk_no_hash_pointers_banner[3],
		   "** This system shows unhashed kernel memory addresses   **"))
		return 2;
	/* once only */
	seq = pk_log_next_seq(log);
	pk_printk_configure("no_hash_pointers console=none");
	if (pk_log_next_seq(log) != seq)
		return 3;
	snprintf(want, sizeof(want), "%0*lx|%0*lx", (int)(2 * sizeof(void *)),
		 (unsigned long)(uintptr_t)p, (int)(2 * sizeof(void *)),
		 (unsigned long)(uintptr_t)p);
	kfmt(buf, sizeof(buf), "%p|%pK", p, p);
	if (strcmp(buf, want))
		return 4;
	return 0;
}

static void test_no_hash_pointers(void **state)
{
	struct child_result res;

	(void)state;
	run_child_ok(no_hash_child, NULL, 10000, &res);
	child_result_free(&res);
}

/*
 * The key may be drawn in a signal handler: this test runs first, so the
 * child's handler makes the process's first hashed %p; the main flow then
 * sees the same key.
 */
static char in_handler[64];

static void on_usr1(int sig)
{
	(void)sig;
	kfmt(in_handler, sizeof(in_handler), "%p", (void *)in_handler);
}

static int first_hash_child(void *arg)
{
	char again[64];

	(void)arg;
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	kfmt(again, sizeof(again), "%p", (void *)in_handler);
	if (strlen(in_handler) != 2 * sizeof(void *))
		return 1;
	return strcmp(in_handler, again) != 0 ? 2 : 0;
}

static void test_first_hash_in_signal_handler(void **state)
{
	struct child_result res;

	(void)state;
	run_child_ok(first_hash_child, NULL, 10000, &res);
	child_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_hash_in_signal_handler), /* first: see there */
		cmocka_unit_test(test_null_error_invalid),
		cmocka_unit_test(test_hashed),
		cmocka_unit_test(test_px),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_ip4),
		cmocka_unit_test(test_ip6),
		cmocka_unit_test(test_uuid),
		cmocka_unit_test(test_hex_string),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_errptr),
		cmocka_unit_test(test_address_val),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_unknown_and_letters),
		cmocka_unit_test(test_kernel_object_pointers),
		cmocka_unit_test(test_bitmap),
		cmocka_unit_test(test_fourcc),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_small_structs),
		cmocka_unit_test(test_va_format),
		cmocka_unit_test(test_glibc_entry_unchanged),
		cmocka_unit_test_setup_teardown(test_printk_record, setup_capture,
						teardown_capture),
		cmocka_unit_test(test_option_parse),
		cmocka_unit_test(test_no_hash_pointers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
