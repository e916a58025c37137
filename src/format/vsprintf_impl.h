// SPDX-License-Identifier: MIT
/*
 * vsprintf_impl.h - what the three parts of the formatter share (private to
 * vsprintf.c, vsprintf_fp.c and vsprintf_kernel.c).
 *
 * Owns: the output sink (struct sink: a bounded buffer that keeps counting
 * past its end), the parsed conversion (struct spec) and the kernel's view
 * of it (struct kspec), the integer digit writers, the bad-pointer test,
 * and the calls between the parts: the driver (vsprintf.c) calls the
 * floating point layouts (vsprintf_fp.c) and the kernel's %p extensions
 * and number() (vsprintf_kernel.c); those call back into nothing but this
 * header, so the files form no cycle.
 *
 * Everything here is async-signal-safe, allocation-free and stateless.
 */
#ifndef PRINTK_VSPRINTF_IMPL_H
#define PRINTK_VSPRINTF_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hints.h"

/* ------------------------------------------------------------------------
 * Output sink
 */

/*
 * Lengths saturate just past INT_MAX: the caller only needs to know that
 * the output is too long to report, and saturation keeps size_t arithmetic
 * safe on 32-bit targets.
 */
#define LEN_LIMIT ((size_t)INT_MAX + 1)

struct sink {
	char *buf;
	size_t cap; /* bytes that may be stored, the terminating NUL excluded */
	size_t len; /* bytes the complete output needs so far (saturated) */
	char last;  /* the last byte of the complete output so far (stored or not) */
	bool kernel; /* the kernel's rules: limits, precisions, number layout, %p */
};

static inline void sink_advance(struct sink *s, size_t n)
{
	s->len = n < LEN_LIMIT - s->len ? s->len + n : LEN_LIMIT;
}

static inline void sink_put(struct sink *s, const char *p, size_t n)
{
	if (s->len < s->cap) {
		size_t room = s->cap - s->len;
		char *d = s->buf + s->len;

		/*
		 * Most pieces (literal runs between conversions, digits) are
		 * short: two overlapping fixed-size copies compile to plain
		 * moves, where a call to memcpy would cost more than the copy.
		 */
		if (PK_LIKELY(n <= 16 && n <= room)) {
			if (n >= 8) {
				memcpy(d, p, 8);
				memcpy(d + n - 8, p + n - 8, 8);
			} else if (n >= 4) {
				memcpy(d, p, 4);
				memcpy(d + n - 4, p + n - 4, 4);
			} else if (n) {
				d[0] = p[0];
				d[n / 2] = p[n / 2];
				d[n - 1] = p[n - 1];
			}
		} else {
			memcpy(d, p, n < room ? n : room);
		}
	}
	if (n)
		s->last = p[n - 1];
	sink_advance(s, n);
}

static inline void sink_putc(struct sink *s, char c)
{
	if (s->len < s->cap)
		s->buf[s->len] = c;
	s->last = c;
	sink_advance(s, 1);
}

static inline void sink_fill(struct sink *s, char c, size_t n)
{
	if (s->len < s->cap) {
		size_t room = s->cap - s->len;

		memset(s->buf + s->len, c, n < room ? n : room);
	}
	if (n)
		s->last = c;
	sink_advance(s, n);
}

static inline bool sink_full(const struct sink *s)
{
	return s->len >= s->cap;
}

/* ------------------------------------------------------------------------
 * Conversion specifications
 */

enum {
	F_MINUS = 1 << 0,
	F_PLUS = 1 << 1,
	F_SPACE = 1 << 2,
	F_HASH = 1 << 3,
	F_ZERO = 1 << 4,
	F_QUOTE = 1 << 5, /* grouping: nothing to group in the C locale */
	F_I18N = 1 << 6,  /* glibc's 'I': locale digits, none in the C locale */
};

/*
 * glibc's model of length modifiers: "ll", "L" and "q" all mean both "long
 * long" and "long double" and also imply "long" (so %Ls is a wide string);
 * j, z, t map onto those by the size of their type.
 */
enum {
	LM_CHAR = 1 << 0,
	LM_SHORT = 1 << 1,
	LM_LONG = 1 << 2,
	LM_LLONG = 1 << 3,
};

#define LM_OF_SIZE(sz) (((sz) > sizeof(long) ? LM_LLONG : 0) | ((sz) > sizeof(int) ? LM_LONG : 0))

/*
 * The kernel's limits (lib/vsprintf.c, FIELD_WIDTH_MAX and PRECISION_MAX):
 * the kernel-semantics entry points clamp larger widths and precisions to
 * them, where the kernel also WARNs once. A width or precision written in
 * the format that does not even fit in an int clamps the same way, so no
 * conversion can make printk lose the whole message.
 */
#define KERNEL_WIDTH_MAX ((1u << 23) - 1)
#define KERNEL_PREC_MAX	 ((1 << 15) - 1)

#define ARG_NONE (-2) /* no argument */
#define ARG_NEXT (-1) /* the next argument in sequence */

struct spec {
	unsigned int flags;
	unsigned int lm;
	unsigned int width; /* may be 2^31 after a "*" of INT_MIN */
	int prec;	    /* -1: none */
	int warg, parg, darg;
	char conv; /* '\0': the format ended inside this conversion */
};

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ------------------------------------------------------------------------
 * Integers
 */



#define hex_lower "0123456789abcdef"
#define hex_upper "0123456789ABCDEF"

/* The two digits of @r (0-99), a table look-up. */
static inline const char *dec_pair(unsigned int r)
{
	static const char pairs[201] = "00010203040506070809"
						   "10111213141516171819"
						   "20212223242526272829"
						   "30313233343536373839"
						   "40414243444546474849"
						   "50515253545556575859"
						   "60616263646566676869"
						   "70717273747576777879"
						   "80818283848586878889"
						   "90919293949596979899";

	return &pairs[r * 2];
}

/* Writes v in decimal ending just before end; returns the first digit. */
static inline char *u_to_dec(char *end, unsigned long long v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		unsigned long long q = v / 100;
		unsigned int r = (unsigned int)(v - q * 100);

		end -= 2;
		memcpy(end, dec_pair(r), 2);
		v = q;
	}
	w = (uint32_t)v;
	while (w >= 100) {
		uint32_t q = w / 100;
		uint32_t r = w - q * 100;

		end -= 2;
		memcpy(end, dec_pair(r), 2);
		w = q;
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, dec_pair(w), 2);
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

/* Base 2, 8 or 16 (shift 1, 3 or 4). */
static inline char *u_to_pow2(char *end, unsigned long long v, unsigned int shift, const char *digits)
{
	unsigned int mask = (1u << shift) - 1;

	do {
		*--end = digits[v & mask];
		v >>= shift;
	} while (v);
	return end;
}


/*
 * A string pointer in the first page or among the kernel's error pointers
 * (ERR_PTR(-errno), the top MAX_ERRNO addresses) is never dereferenced: the
 * kernel prints "(efault)" for it (lib/vsprintf.c, check_pointer_msg), and
 * a NULL-page address is a bug in the caller, not a reason to lose the
 * record or the process. NULL itself is not "bad": it keeps glibc's rule.
 */
#define PK_PAGE_SIZE 4096u
#define PK_MAX_ERRNO 4095u

static inline bool bad_pointer(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	return a - 1 < PK_PAGE_SIZE - 1 || a > UINTPTR_MAX - PK_MAX_ERRNO;
}

/* ------------------------------------------------------------------------
 * The kernel's view of a conversion (vsprintf_kernel.c)
 */

/* The kernel's number() flags. */
enum {
	K_SIGN = 1 << 0,
	K_LEFT = 1 << 1,
	K_PLUS = 1 << 2,
	K_SPACE = 1 << 3,
	K_ZEROPAD = 1 << 4,
	K_SPECIAL = 1 << 5,
	K_UPPER = 1 << 6, /* %X: upper-case digits and "0X" */
};

/* The kernel's view of a conversion: -1 means "not given". */
struct kspec {
	unsigned int flags;
	int width;
	int prec;
};

/*
 * The kernel's ctype is Latin-1: 0xc0-0xff are letters (but for the two
 * signs 0xd7 and 0xf7) and 0xa0-0xff are printable (lib/ctype.c).
 */
static inline bool k_isalpha(unsigned char c)
{
	if (c < 0x80)
		return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
	return c >= 0xc0 && c != 0xd7 && c != 0xf7;
}

static inline bool k_isalnum(unsigned char c)
{
	return is_digit((char)c) || k_isalpha(c);
}

static inline bool k_isprint(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

/* A conversion's flags, width and precision as the kernel's printf_spec. */
static inline struct kspec kspec_of(const struct spec *sp, unsigned int extra)
{
	struct kspec k;

	k.flags = (sp->flags & F_MINUS ? K_LEFT : 0) | (sp->flags & F_PLUS ? K_PLUS : 0) |
		  (sp->flags & F_SPACE ? K_SPACE : 0) | (sp->flags & F_HASH ? K_SPECIAL : 0) |
		  (sp->flags & F_ZERO ? K_ZEROPAD : 0) | extra;
	/* Digits never start with 0 (a flag): width 0 only comes from a "*". */
	k.width = sp->width || sp->warg != ARG_NONE ? (int)sp->width : -1;
	k.prec = sp->prec;
	return k;
}

/* No flag, width or precision: the kernel's number() and C print alike. */
static inline bool bare_kspec(const struct spec *sp)
{
	return sp->flags == 0 && sp->width == 0 && sp->prec < 0;
}

/* ------------------------------------------------------------------------
 * Calls between the parts
 */

/* vsprintf_fp.c: %f %F %e %E %g %G %a %A of a double or a long double. */
void pk_fmt_double(struct sink *s, const struct spec *sp, double x);
void pk_fmt_ldouble(struct sink *s, const struct spec *sp, long double x);

/*
 * vsprintf_kernel.c: the kernel's pointer() for every extension but %pV
 * (the driver's, as it recurses); @ext points just past the 'p'. Returns
 * the format position after every letter and digit that follows.
 */
const char *pk_kernel_pointer(struct sink *s, const struct spec *sp, void *ptr, const char *ext);
/* The kernel's number() in base 8, 10 or 16 (K_UPPER: %X). */
void pk_knumber(struct sink *s, unsigned long long num, int base, struct kspec k);
/* The kernel's error_string(): cut to the precision (16 bytes by default), padded. */
void pk_kerror(struct sink *s, const char *msg, const struct kspec *k);
/* The kernel's check_pointer(): false, and "(null)" or "(efault)" printed, if unusable. */
bool pk_kcheck(struct sink *s, const void *p, const struct kspec *k);

#endif /* PRINTK_VSPRINTF_IMPL_H */
