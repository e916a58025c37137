// SPDX-License-Identifier: MIT
/*
 * fuzz_format.c - libFuzzer target: the format engine (src/format/vsprintf.c).
 *
 * Input: one mode byte, then the body. Bit 0 of the mode byte chooses how
 * the body becomes a call; bits 1-7 are a small buffer size (0-127) for
 * the truncation checks.
 *
 * Raw mode (bit 0 clear): the body up to its first NUL is the format, as
 * it is, except that every "pV" becomes "pv" (a %pV argument must point to
 * a real struct va_format), every "pE" "pe" and every "pb" "pq" (printk's
 * %*pE and %*pb read as many bytes or bits as the width says), and it is
 * cut before its 49th '%'. Every
 * integer or pointer argument is a 4-byte aligned pointer into a copy of
 * the body, NUL-terminated and followed by zero bytes, so any conversion
 * may take any argument: it is a valid string, wide string (%ls) or
 * address; %n never writes. There are more arguments than 48 conversions
 * can consume (each takes at most five 8-byte slots, a positional format
 * at most 64 arguments), and eight doubles from the body. A positional
 * format loads each argument once with the type of its last use (glibc's
 * rule): the copy lives below 2^31 so a pointer loaded as an int is still
 * the pointer, and the doubles are pool addresses too, so a pointer loaded
 * as a double (or the mantissa of a long double) is one as well.
 *
 * Generated mode (bit 0 set): the body is a program. Each conversion is
 * built from its bytes (flags, a width that is absent, small, "*" or huge,
 * the same for the precision, a length modifier, a conversion among the
 * standard ones and a few unknown ones) and its argument is made to match:
 * integers and "*" values from the body, strings pointing into the copy of
 * the body, up to eight doubles. Literal text runs come from the body too;
 * a letter right after a 'p' is one of the printk %p extensions that read
 * no memory (the pointers are random numbers here).
 *
 * The argument layout relies on the x86-64 (and AArch64) calling
 * convention: integers and pointers share one sequence of 8-byte slots,
 * doubles use their own registers.
 *
 * Properties (a violation aborts): no crash, no sanitizer report, no hang;
 * pk_fmt_vsnprintf returns -1 or the full length, the same for every buffer
 * size, and a smaller buffer holds a NUL-terminated prefix of a larger
 * one's output; pk_vsnprintf_last (printk's entry) never fails and
 * reports the last byte of its output; pk_vscnprintf into the small
 * buffer returns what it stored, a prefix of that output; where no
 * width or precision reaches the kernel's limits, no %p is in the format
 * (printk's is the kernel's), no conversion has a precision, the '#' flag,
 * or a letter the kernel does not know (the kernel's printf differs from
 * C's there) and the C99 call succeeded, all of them print the same bytes.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/vsprintf.h"

/* check() forwards the fuzzed format and its va_list on purpose. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUT_MAX	  4096
#define FMT_MAX	  1024
#define BODY_MAX  4096
#define RAW_CONVS 48
#define GEN_CONVS 24
#define GP_SLOTS  32
#define FP_SLOTS  8
#define PREC_LIMIT 32767 /* the kernel's PRECISION_MAX: below it nothing is clamped */

static char big[OUT_MAX], small[OUT_MAX], scn_small[OUT_MAX], kbuf[OUT_MAX];
static char fmt[FMT_MAX + 64];
#define POOL_SIZE (BODY_MAX + 32)
static char *pool;
static size_t pool_len; /* bytes of body in pool; zeros follow */
static size_t small_size;
static bool compare_c99; /* no width or precision near the kernel's limits */

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "fuzz_format: %s (%lld, %lld) format \"%s\"\n", what, a, b, fmt);
	abort();
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Past "N$" (N > 0) at @f, glibc's argument number, if there is one. */
static const char *skip_position(const char *f)
{
	const char *q = f;
	bool nonzero = false;

	for (; *q >= '0' && *q <= '9'; q++)
		nonzero = nonzero || *q != '0';
	return *q == '$' && nonzero ? q + 1 : f;
}

/*
 * Does every conversion of @f print alike under both semantics? Not when
 * it has a precision or the '#' flag (the kernel's number() and string()
 * rules differ there: docs/kernel-compat.md, section 16), is %n, or is a
 * conversion the kernel does not know (the kernel ends the output there).
 */
static bool kernel_agrees(const char *f)
{
	while ((f = strchr(f, '%'))) {
		f = skip_position(f + 1);
		for (; *f && strchr("-+ '0I#", *f); f++)
			if (*f == '#')
				return false;
		if (*f == '*')
			f = skip_position(f + 1);
		else
			while (*f >= '0' && *f <= '9')
				f++;
		if (*f == '.')
			return false;
		/* one length modifier, as parse_spec() reads it: hh, ll or one letter */
		if ((f[0] == 'h' || f[0] == 'l') && f[1] == f[0])
			f += 2;
		else if (*f && strchr("hlLqjzZt", *f))
			f++;
		if (!*f || !strchr("diouxXcsfFeEgGaAmCS%bB", *f))
			return false;
		f++;
	}
	return true;
}

static void check(const char *f, ...)
{
	va_list ap, c;
	char last = 1;
	int r, r2, s2, k;

	va_start(ap, f);
	va_copy(c, ap);
	r = pk_fmt_vsnprintf(big, OUT_MAX, f, c);
	va_end(c);
	va_copy(c, ap);
	r2 = pk_fmt_vsnprintf(small, small_size, f, c);
	va_end(c);
	va_copy(c, ap);
	s2 = pk_vscnprintf(scn_small, small_size, f, c);
	va_end(c);
	va_copy(c, ap);
	k = pk_vsnprintf_last(kbuf, OUT_MAX, &last, f, c);
	va_end(c);
	va_end(ap);

	/* C99 */
	if (r < -1 || r2 != r)
		fail("pk_fmt_vsnprintf: result depends on the buffer size", r, r2);
	if (r >= 0) {
		size_t st = min_size((size_t)r, OUT_MAX - 1);

		if (big[st] != '\0')
			fail("pk_fmt_vsnprintf: no NUL after the output", r, (long long)st);
		if (small_size) {
			size_t ss = min_size((size_t)r, small_size - 1);

			if (small[ss] != '\0' || memcmp(small, big, ss) != 0)
				fail("pk_fmt_vsnprintf: a smaller buffer is not a prefix", r,
				     (long long)small_size);
		}
	}
	/* kernel semantics (both entry points share them) */
	if (k < 0)
		fail("pk_vsnprintf_last failed: printk would lose the message", k, 0);

	int stored = (int)min_size((size_t)k, OUT_MAX - 1);

	if (kbuf[stored] != '\0')
		fail("pk_vsnprintf_last: no NUL after the output", k, stored);
	if (s2 != (small_size ? (int)min_size((size_t)stored, small_size - 1) : 0))
		fail("pk_vscnprintf: count is not what pk_vsnprintf_last stored", k, s2);
	if (small_size && (scn_small[s2] != '\0' || memcmp(scn_small, kbuf, (size_t)s2) != 0))
		fail("pk_vscnprintf: not a prefix of pk_vsnprintf_last's output", k, s2);
	if (k == 0 ? last != 0 : (k < OUT_MAX && last != kbuf[k - 1]))
		fail("pk_vsnprintf_last: wrong last byte", k, last);
	/* both agree where nothing is clamped */
	if (compare_c99 && kernel_agrees(f) && r >= 0 && r < PREC_LIMIT &&
	    (k != r || memcmp(kbuf, big, min_size((size_t)r, OUT_MAX - 1)) != 0))
		fprintf(stderr, "C99    %.*s\nkernel %.*s\n", r, big, k, kbuf),
		fail("C99 and kernel semantics differ below the limits", r, k);
}

/* ------------------------------------------------------------------------ */

static const char *gp_arg(unsigned i)
{
	size_t span = (pool_len + 3) / 4 + 1;

	return pool + 4 * ((i * 7u) % span);
}

static void fp_args(double *fp, const uint8_t *body, size_t n)
{
	uint8_t raw[FP_SLOTS * sizeof(double)] = { 0 };

	memcpy(raw, body, min_size(n, sizeof(raw)));
	memcpy(fp, raw, sizeof(raw));
}

/* Is any number in the format at or above the limit, or a '*' in it? */
static bool fmt_near_limits(const char *f)
{
	for (const char *p = f; *p; p++) {
		if (*p == '*')
			return true;
		if (*p >= '0' && *p <= '9') {
			unsigned long long v = 0;
			int digits = 0;

			for (; *p >= '0' && *p <= '9'; p++, digits++)
				v = v * 10 + (unsigned)(*p - '0');
			if (digits > 6 || v >= PREC_LIMIT)
				return true;
			p--;
		}
	}
	return false;
}

#define G4(i)  gp_arg(i), gp_arg(i + 1), gp_arg(i + 2), gp_arg(i + 3)
#define G16(i) G4(i), G4(i + 4), G4(i + 8), G4(i + 12)
#define G64(i) G16(i), G16(i + 16), G16(i + 32), G16(i + 48)

static void run_raw(const uint8_t *body, size_t n)
{
	size_t len = 0, convs = 0;
	double fp[FP_SLOTS];

	while (len < n && len < FMT_MAX && body[len]) {
		char ch = (char)body[len];

		if (ch == '%' && ++convs > RAW_CONVS)
			break;
		if (len && fmt[len - 1] == 'p' && ch && strchr("VEb", ch))
			ch = ch == 'V' ? 'v' : ch == 'E' ? 'e' : 'q';
		fmt[len++] = ch;
	}
	fmt[len] = '\0';
	fp_args(fp, body + len, n - len);
	if (memchr(fmt, '$', len)) {
		for (int i = 0; i < FP_SLOTS; i++) {
			const char *p = gp_arg((unsigned)i);

			memcpy(&fp[i], &p, sizeof(p));
		}
	}
	compare_c99 = !fmt_near_limits(fmt) && !strchr(fmt, 'p');
	check(fmt, fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], G64(0), G64(64),
	      G64(128), G64(192));
}

/* ------------------------------------------------------------------------ */

struct reader {
	const uint8_t *p, *end;
};

static unsigned take(struct reader *rd)
{
	return rd->p < rd->end ? *rd->p++ : 0;
}

static uint64_t take64(struct reader *rd)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | take(rd);
	return v;
}

static const char *const big_numbers[] = {
	"8388607", "8388608", "32767", "32768", "2147483647", "2147483648", "99999999999", "0",
};
static const char *const lengths[] = { "", "hh", "h", "l", "ll", "j", "z", "t", "L", "q", "Z" };
static const char convs[] = "diouxXbBcspnm%fFeEgGaACSkyw";

static void put_str(size_t *len, const char *s)
{
	size_t n = strlen(s);

	memcpy(fmt + *len, s, n);
	*len += n;
}

/* A width or precision: nothing, a small number, '*' or a huge number. */
static void put_number(size_t *len, struct reader *rd, unsigned sel, uint64_t *gp, int *ngp)
{
	char tmp[8];

	switch (sel & 3) {
	case 0:
		break;
	case 1:
		snprintf(tmp, sizeof(tmp), "%u", take(rd) % 100);
		put_str(len, tmp);
		break;
	case 2:
		fmt[(*len)++] = '*';
		gp[(*ngp)++] = (uint64_t)(int64_t)(int32_t)take64(rd);
		compare_c99 = false;
		break;
	default:
		put_str(len, big_numbers[take(rd) % 8]);
		compare_c99 = false;
		break;
	}
}

/* Would printk's %p read memory with this letter after it (Latin-1 letters count)? */
static bool reads_memory(char ch)
{
	unsigned char c = (unsigned char)ch;

	if (c >= 0xc0)
		return true;
	if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
		return false;
	return !strchr("xKeSsBq", ch);
}

static void run_generated(const uint8_t *body, size_t n)
{
	struct reader rd = { body, body + n };
	uint64_t gp[GP_SLOTS] = { 0 };
	double fp[FP_SLOTS] = { 0 };
	int ngp = 0, nfp = 0, nconv = 0;
	size_t len = 0;

	compare_c99 = true;
	while (rd.p < rd.end && len < FMT_MAX - 64 && nconv < GEN_CONVS && ngp <= GP_SLOTS - 3) {
		unsigned t = take(&rd);

		if (t < 0x40) { /* a literal run */
			for (unsigned i = 0; i <= (t & 15); i++) {
				char ch = (char)take(&rd);

				if (len && fmt[len - 1] == 'p' && reads_memory(ch))
					ch = 'q';
				fmt[len++] = ch == '%' || ch == '\0' || ch == 'V' ? '_' : ch;
			}
			continue;
		}
		nconv++;
		fmt[len++] = '%';
		unsigned flags = take(&rd);
		static const char flag_chars[] = "-+ #0'I";

		for (int i = 0; i < 7; i++)
			if (flags & (1u << i))
				fmt[len++] = flag_chars[i];
		unsigned sel = take(&rd);

		put_number(&len, &rd, sel, gp, &ngp);
		if (sel & 4) {
			fmt[len++] = '.';
			put_number(&len, &rd, sel >> 3, gp, &ngp);
		}
		const char *lm = lengths[(sel >> 5) % (sizeof(lengths) / sizeof(lengths[0]))];
		char conv = convs[take(&rd) % (sizeof(convs) - 1)];
		bool fpconv = strchr("fFeEgGaA", conv) != NULL;

		/* long double arguments would take 16-byte slots: not generated */
		if (fpconv && (!strcmp(lm, "L") || !strcmp(lm, "q") || !strcmp(lm, "ll")))
			lm = "";
		if (fpconv && nfp == FP_SLOTS)
			conv = 'd';
		put_str(&len, lm);
		fmt[len++] = conv;
		if (conv == 'p')
			compare_c99 = false;
		if (fpconv && conv != 'd') {
			uint64_t bits = take64(&rd);

			memcpy(&fp[nfp++], &bits, sizeof(double));
		} else if (conv == 's' || conv == 'S') {
			gp[ngp++] = (uint64_t)(uintptr_t)gp_arg(take(&rd));
		} else if (strchr("diouxXbBcpnC", conv)) {
			gp[ngp++] = take64(&rd);
		} /* m, %, unknown: no argument */
	}
	fmt[len] = '\0';
	check(fmt, fp[0], fp[1], fp[2], fp[3], fp[4], fp[5], fp[6], fp[7], gp[0], gp[1], gp[2],
	      gp[3], gp[4], gp[5], gp[6], gp[7], gp[8], gp[9], gp[10], gp[11], gp[12], gp[13],
	      gp[14], gp[15], gp[16], gp[17], gp[18], gp[19], gp[20], gp[21], gp[22], gp[23],
	      gp[24], gp[25], gp[26], gp[27], gp[28], gp[29], gp[30], gp[31]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pool) {
		/* below 2^31: see the top of the file */
		pool = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (pool == MAP_FAILED || (uintptr_t)pool + POOL_SIZE > INT32_MAX) {
			perror("fuzz_format: mmap below 2 GiB");
			abort();
		}
	}
	if (size < 1)
		return 0;
	small_size = data[0] >> 1;
	data++;
	size--;
	if (size > BODY_MAX)
		size = BODY_MAX;
	/* the string pool: the body, NUL-terminated, zeros after it */
	memcpy(pool, data, size);
	memset(pool + size, 0, POOL_SIZE - size);
	pool_len = size;
	if (data[-1] & 1)
		run_generated(data, size);
	else
		run_raw(data, size);
	return 0;
}
