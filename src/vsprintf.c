// SPDX-License-Identifier: MIT
/*
 * vsprintf.c - libprintk's own vsnprintf.
 *
 * Owns all formatting done by the library, in two modes: the kernel's
 * (printk, pk_panic and the public string functions of <printk/sprintf.h>:
 * lib/vsprintf.c's precisions, number layout and %p extensions) and C99's
 * (pk_fmt_snprintf, for the library's own text: glibc's output, byte for
 * byte). The modes share everything the two agree on. It must stay usable
 * from a signal handler, so:
 *  - it is async-signal-safe: it calls only memcpy, memmove, memset,
 *    strlen, strnlen, strchrnul, glibc's table look-ups
 *    strerrordesc_np/strerrorname_np, for %pS the symbol look-up of
 *    symbols.c (reads of tables made at start-up) and, once per process for
 *    the first hashed %p, getrandom(2) (then clock_gettime and getpid if
 *    that fails);
 *  - its only static mutable state is two atomic words, each written once:
 *    the %p hash seed (published by one CAS, so a signal handler that
 *    interrupts the drawing never waits for it) and the no_hash_pointers
 *    switch;
 *  - it never allocates (pk_kasprintf's one malloc aside, which is not
 *    for signal handlers): scratch space is a bounded amount of stack
 *    (see vsprintf.h for the figures);
 *  - it never consults the locale: the output is what glibc prints in the
 *    C locale, byte for byte, for every standard conversion, except where
 *    the kernel mode follows the kernel (docs/kernel-compat.md, section
 *    16: precisions, the 0 and # flags, NULL strings, %n);
 *  - it never writes errno, with one exception: a getrandom(2) that fails
 *    writes it, and the value %m would read is put back at once.
 *
 * The kernel-semantics entry points also print the kernel's %p extensions
 * byte for byte as Linux lib/vsprintf.c does; the C99 ones keep glibc's %p
 * (docs/kernel-compat.md, section 14).
 *
 * Floating point is converted exactly: the significand is split into an
 * integer part, kept as base-10^9 limbs, and a binary fraction that yields
 * nine decimal digits per multiplication by 10^9. A first pass walks the
 * digits to decide the rounding (ties to even, on the exact value); a second
 * pass regenerates them while writing, so even a 16000-digit long double
 * needs no digit buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strchrnul, strerrordesc_np, strerrorname_np */
#endif

#include "hints.h"
#include "stacktrace.h"
#include "vsprintf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#define PK_HAVE_STRERRORDESC 1
#else
#define PK_HAVE_STRERRORDESC 0
#endif

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
	bool kernel; /* kernel limits on widths and precisions (see run()) */
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

static void sink_fill(struct sink *s, char c, size_t n)
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

/* glibc's read_int: consumes every digit, -1 when the value exceeds INT_MAX. */
static int read_num(const char **pp)
{
	const char *p = *pp;
	int v = 0;
	bool ovf = false;

	while (is_digit(*p)) {
		int d = *p++ - '0';

		if (v > (INT_MAX - d) / 10)
			ovf = true;
		else
			v = v * 10 + d;
	}
	*pp = p;
	return ovf ? -1 : v;
}

/*
 * "N$" at *pp: consumes it and returns N - 1, or returns ARG_NONE and leaves
 * *pp alone when there is none. N of 0 is not positional (glibc reads
 * "%0$d" as flag 0 and conversion '$'). Sets *err on an overflowing N.
 */
static int read_position(const char **pp, bool *err)
{
	const char *q = *pp;
	int n;

	if (!is_digit(*q))
		return ARG_NONE;
	n = read_num(&q);
	if (n == 0 || *q != '$')
		return ARG_NONE;
	if (n < 0) {
		*err = true;
		return ARG_NONE;
	}
	*pp = q + 1;
	return n - 1;
}

/*
 * Parses one conversion; f points just after the '%'. Returns the position
 * after it (at the NUL when the format ended inside it), or NULL when a
 * width or precision overflows int, which glibc reports as EOVERFLOW. With
 * @saturate (kernel semantics) such a number reads as INT_MAX instead
 * (run() then clamps it to the kernel's limit), and a '.' followed by no
 * digit leaves the precision unset, as the kernel's format_decode() does. *positional is set when the conversion names an
 * argument by number.
 */
static const char *parse_spec(const char *f, struct spec *sp, bool *positional, bool saturate)
{
	bool err = false;
	int n;

	sp->flags = 0;
	sp->lm = 0;
	sp->width = 0;
	sp->prec = -1;
	sp->warg = ARG_NONE;
	sp->parg = ARG_NONE;
	sp->darg = ARG_NEXT;

	n = read_position(&f, &err);
	if (n != ARG_NONE) {
		sp->darg = n;
		*positional = true;
	}

	for (;; f++) {
		switch (*f) {
		case '-':
			sp->flags |= F_MINUS;
			continue;
		case '+':
			sp->flags |= F_PLUS;
			continue;
		case ' ':
			sp->flags |= F_SPACE;
			continue;
		case '#':
			sp->flags |= F_HASH;
			continue;
		case '0':
			sp->flags |= F_ZERO;
			continue;
		case '\'':
			sp->flags |= F_QUOTE;
			continue;
		case 'I':
			sp->flags |= F_I18N;
			continue;
		default:
			break;
		}
		break;
	}
	/* A written '-' cancels '0'; a negative "*" width does not (glibc). */
	if (sp->flags & F_MINUS)
		sp->flags &= ~(unsigned int)F_ZERO;

	if (*f == '*') {
		f++;
		n = read_position(&f, &err);
		if (n != ARG_NONE) {
			sp->warg = n;
			*positional = true;
		} else {
			sp->warg = ARG_NEXT;
		}
	} else if (is_digit(*f)) {
		n = read_num(&f);
		if (n < 0 && !saturate)
			return NULL;
		sp->width = n < 0 ? (unsigned int)INT_MAX : (unsigned int)n;
	}

	if (*f == '.') {
		f++;
		if (*f == '*') {
			f++;
			n = read_position(&f, &err);
			if (n != ARG_NONE) {
				sp->parg = n;
				*positional = true;
			} else {
				sp->parg = ARG_NEXT;
			}
		} else if (is_digit(*f)) {
			n = read_num(&f);
			if (n < 0 && !saturate)
				return NULL;
			sp->prec = n < 0 ? INT_MAX : n;
		} else if (!saturate) {
			sp->prec = 0; /* C: "%.d" is "%.0d" */
		} /* the kernel: a '.' without digits gives no precision at all */
	}

	switch (*f) {
	case 'h':
		if (*++f == 'h') {
			f++;
			sp->lm = LM_CHAR;
		} else {
			sp->lm = LM_SHORT;
		}
		break;
	case 'l':
		if (*++f == 'l') {
			f++;
			sp->lm = LM_LONG | LM_LLONG;
		} else {
			sp->lm = LM_LONG;
		}
		break;
	case 'L':
	case 'q':
		f++;
		sp->lm = LM_LONG | LM_LLONG;
		break;
	case 'j':
		f++;
		sp->lm = sizeof(intmax_t) != sizeof(long) ? LM_LLONG : LM_LONG;
		break;
	case 'z':
	case 'Z':
		f++;
		sp->lm = LM_OF_SIZE(sizeof(size_t));
		break;
	case 't':
		f++;
		sp->lm = LM_OF_SIZE(sizeof(ptrdiff_t));
		break;
	default:
		break;
	}

	if (err)
		return NULL;
	sp->conv = *f;
	return *f ? f + 1 : f;
}

/* ------------------------------------------------------------------------
 * Arguments: straight from the va_list, or from an array filled in advance
 * when the format numbers its arguments.
 */

enum arg_type {
	T_INT = 0, /* also the type of arguments no conversion names (glibc) */
	T_UINT,
	T_LONG,
	T_ULONG,
	T_LLONG,
	T_ULLONG,
	T_WINT,
	T_PTR,
	T_DOUBLE,
	T_LDOUBLE,
	T_NONE,
};

union argval {
	unsigned long long ull; /* every integer, widened, so mismatches stay defined */
	void *p;
	double d;
	long double ld;
};

struct fargs {
	va_list ap;
	const union argval *pos; /* NULL: read ap in sequence */
	int next;		 /* next sequential argument in positional mode */
};

static inline const union argval *arg_slot(struct fargs *a, int ref)
{
	return &a->pos[ref >= 0 ? ref : a->next++];
}

static inline int arg_int(struct fargs *a, int ref)
{
	if (a->pos)
		return (int)arg_slot(a, ref)->ull;
	return va_arg(a->ap, int);
}

static inline unsigned int arg_uint(struct fargs *a, int ref)
{
	if (a->pos)
		return (unsigned int)arg_slot(a, ref)->ull;
	return va_arg(a->ap, unsigned int);
}

static inline long long arg_slong(struct fargs *a, int ref, unsigned int lm)
{
	if (a->pos)
		return (long long)arg_slot(a, ref)->ull;
	if (lm & LM_LLONG)
		return va_arg(a->ap, long long);
	return va_arg(a->ap, long);
}

static inline unsigned long long arg_ulong(struct fargs *a, int ref, unsigned int lm)
{
	if (a->pos)
		return arg_slot(a, ref)->ull;
	if (lm & LM_LLONG)
		return va_arg(a->ap, unsigned long long);
	return va_arg(a->ap, unsigned long);
}

static inline wint_t arg_wint(struct fargs *a, int ref)
{
	if (a->pos)
		return (wint_t)arg_slot(a, ref)->ull;
	return va_arg(a->ap, wint_t);
}

static inline void *arg_ptr(struct fargs *a, int ref)
{
	if (a->pos)
		return arg_slot(a, ref)->p;
	return va_arg(a->ap, void *);
}

static inline double arg_double(struct fargs *a, int ref)
{
	if (a->pos)
		return arg_slot(a, ref)->d;
	return va_arg(a->ap, double);
}

static inline long double arg_ldouble(struct fargs *a, int ref)
{
	if (a->pos)
		return arg_slot(a, ref)->ld;
	return va_arg(a->ap, long double);
}

/* The type of the data argument a conversion consumes. */
static enum arg_type data_type(const struct spec *sp)
{
	unsigned int lm = sp->lm;

	switch (sp->conv) {
	case 'd':
	case 'i':
		return lm & LM_LLONG ? T_LLONG : lm & LM_LONG ? T_LONG : T_INT;
	case 'o':
	case 'u':
	case 'x':
	case 'X':
	case 'b':
	case 'B':
		return lm & LM_LLONG ? T_ULLONG : lm & LM_LONG ? T_ULONG : T_UINT;
	case 'c':
		return lm & LM_LONG ? T_WINT : T_INT;
	case 'C':
		return T_WINT;
	case 's':
	case 'S':
	case 'p':
	case 'n':
		return T_PTR;
	case 'e':
	case 'E':
	case 'f':
	case 'F':
	case 'g':
	case 'G':
	case 'a':
	case 'A':
		return lm & LM_LLONG ? T_LDOUBLE : T_DOUBLE;
	default:
		return T_NONE; /* %%, %m, unknown, incomplete */
	}
}

/* ------------------------------------------------------------------------
 * Integers
 */

static const char dec_pairs[201] = "00010203040506070809"
				   "10111213141516171819"
				   "20212223242526272829"
				   "30313233343536373839"
				   "40414243444546474849"
				   "50515253545556575859"
				   "60616263646566676869"
				   "70717273747576777879"
				   "80818283848586878889"
				   "90919293949596979899";

static const char hex_lower[] = "0123456789abcdef";
static const char hex_upper[] = "0123456789ABCDEF";

/* Writes v in decimal ending just before end; returns the first digit. */
static char *u_to_dec(char *end, unsigned long long v)
{
	uint32_t w;

	while (v > UINT32_MAX) {
		unsigned long long q = v / 100;
		unsigned int r = (unsigned int)(v - q * 100);

		end -= 2;
		memcpy(end, &dec_pairs[r * 2], 2);
		v = q;
	}
	w = (uint32_t)v;
	while (w >= 100) {
		uint32_t q = w / 100;
		uint32_t r = w - q * 100;

		end -= 2;
		memcpy(end, &dec_pairs[r * 2], 2);
		w = q;
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, &dec_pairs[w * 2], 2);
	} else {
		*--end = (char)('0' + w);
	}
	return end;
}

/* Base 2, 8 or 16 (shift 1, 3 or 4). */
static char *u_to_pow2(char *end, unsigned long long v, unsigned int shift, const char *digits)
{
	unsigned int mask = (1u << shift) - 1;

	do {
		*--end = digits[v & mask];
		v >>= shift;
	} while (v);
	return end;
}

/*
 * Lays out prefix, precision zeros and digits in the field. The 0 flag pads
 * with zeros between prefix and digits unless a precision was given.
 */
static void put_number(struct sink *s, const struct spec *sp, const char *pre, size_t npre,
		       size_t zeros, const char *dig, size_t nd)
{
	size_t body = npre + zeros + nd;
	size_t pad = sp->width > body ? sp->width - body : 0;

	if (pad && !(sp->flags & F_MINUS)) {
		if ((sp->flags & F_ZERO) && sp->prec < 0)
			zeros += pad;
		else
			sink_fill(s, ' ', pad);
		pad = 0;
	}
	if (npre)
		sink_put(s, pre, npre);
	if (zeros)
		sink_fill(s, '0', zeros);
	sink_put(s, dig, nd);
	if (pad)
		sink_fill(s, ' ', pad);
}

/* conv is one of d i u o x X b B, or p for a non-NULL pointer. */
PK_HOT static void fmt_integer(struct sink *s, const struct spec *sp, unsigned long long v, bool neg)
{
	char buf[72];
	char *end = buf + sizeof(buf);
	char *dig;
	char pre[3];
	size_t npre = 0, nd, zeros;
	char conv = sp->conv;

	switch (conv) {
	case 'x':
		dig = u_to_pow2(end, v, 4, hex_lower);
		break;
	case 'X':
		dig = u_to_pow2(end, v, 4, hex_upper);
		break;
	case 'p':
		dig = u_to_pow2(end, v, 4, hex_lower);
		break;
	case 'o':
		dig = u_to_pow2(end, v, 3, hex_lower);
		break;
	case 'b':
	case 'B':
		dig = u_to_pow2(end, v, 1, hex_lower);
		break;
	default:
		dig = u_to_dec(end, v);
		break;
	}
	nd = (size_t)(end - dig);

	/* Fast path: plain %d, %u, %x... */
	if (PK_LIKELY(sp->flags == 0 && sp->width == 0 && sp->prec < 0)) {
		if (neg)
			sink_putc(s, '-');
		if (conv == 'p')
			sink_put(s, "0x", 2);
		sink_put(s, dig, nd);
		return;
	}

	if (sp->prec == 0 && v == 0)
		nd = 0;
	zeros = sp->prec >= 0 && (size_t)sp->prec > nd ? (size_t)sp->prec - nd : 0;

	switch (conv) {
	case 'd':
	case 'i':
	case 'p': /* glibc honours + and space for %p */
		if (neg)
			pre[npre++] = '-';
		else if (sp->flags & F_PLUS)
			pre[npre++] = '+';
		else if (sp->flags & F_SPACE)
			pre[npre++] = ' ';
		if (conv == 'p') {
			pre[npre++] = '0';
			pre[npre++] = 'x';
		}
		break;
	case 'o':
		if ((sp->flags & F_HASH) && zeros == 0 && (nd == 0 || *dig != '0'))
			zeros = 1;
		break;
	case 'x':
	case 'X':
	case 'b':
	case 'B':
		if ((sp->flags & F_HASH) && v != 0) {
			pre[npre++] = '0';
			pre[npre++] = conv;
		}
		break;
	default:
		break;
	}
	put_number(s, sp, pre, npre, zeros, dig, nd);
}

/* ------------------------------------------------------------------------
 * Strings and characters
 */

static void put_field(struct sink *s, const struct spec *sp, const char *str, size_t n)
{
	size_t pad = sp->width > n ? sp->width - n : 0;

	if (pad && !(sp->flags & F_MINUS))
		sink_fill(s, ' ', pad);
	sink_put(s, str, n);
	if (pad && (sp->flags & F_MINUS))
		sink_fill(s, ' ', pad);
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

/*
 * The kernel's error_string(): the message is cut to the precision (when
 * none is given it is capped at 2 * sizeof(void *), more than the 8 bytes
 * of "(efault)") and padded with spaces to the width, on the left unless
 * the '-' flag is given.
 */
static void put_efault(struct sink *s, const struct spec *sp)
{
	size_t n = sizeof("(efault)") - 1;

	if (sp->prec >= 0 && (size_t)sp->prec < n)
		n = (size_t)sp->prec;
	put_field(s, sp, "(efault)", n);
}

/* glibc prints "(null)" for a NULL string only if the precision allows all of it. */
static const char *null_string(int prec)
{
	return prec < 0 || prec >= 6 ? "(null)" : "";
}

/*
 * UTF-8 without a locale. Surrogates, negative values and values past
 * U+10FFFF have no encoding: they become U+FFFD.
 */
static size_t utf8_encode(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c >= 0x110000 || (c >= 0xd800 && c < 0xe000))
		c = 0xfffd;
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

static size_t utf8_len(uint32_t c)
{
	char tmp[4];

	return utf8_encode(tmp, c);
}

static void fmt_wstring(struct sink *s, const struct spec *sp, const wchar_t *ws)
{
	size_t bytes = 0, nchars = 0, pad, i;

	if (!ws) {
		const char *t = null_string(sp->prec);

		put_field(s, sp, t, strlen(t));
		return;
	}
	if (bad_pointer(ws)) {
		put_efault(s, sp);
		return;
	}
	/* The precision counts bytes and never splits a character (glibc). */
	for (; ws[nchars]; nchars++) {
		size_t b = utf8_len((uint32_t)ws[nchars]);

		if (sp->prec >= 0 && bytes + b > (size_t)sp->prec)
			break;
		bytes += b;
	}
	pad = sp->width > bytes ? sp->width - bytes : 0;
	if (pad && !(sp->flags & F_MINUS))
		sink_fill(s, ' ', pad);
	for (i = 0; i < nchars;) {
		char tmp[64];
		size_t n = 0;

		while (i < nchars && n <= sizeof(tmp) - 4)
			n += utf8_encode(tmp + n, (uint32_t)ws[i++]);
		sink_put(s, tmp, n);
	}
	if (pad && (sp->flags & F_MINUS))
		sink_fill(s, ' ', pad);
}

/* %m and %#m: the text or the name of errno, as glibc prints them. */
static void fmt_errno(struct sink *s, const struct spec *sp, int err)
{
	char tmp[40];
	const char *t = NULL;
	size_t n;

#if PK_HAVE_STRERRORDESC
	t = (sp->flags & F_HASH) ? strerrorname_np(err) : strerrordesc_np(err);
#endif
	if (!t) {
		char *end = tmp + sizeof(tmp);
		char *p = u_to_dec(end, err < 0 ? 0ULL - (unsigned long long)err
						: (unsigned long long)err);

		if (err < 0)
			*--p = '-';
		if (!(sp->flags & F_HASH)) {
			p -= 14;
			memcpy(p, "Unknown error ", 14);
		}
		t = p;
		n = (size_t)(end - p);
	} else {
		n = strlen(t);
	}
	if (sp->prec >= 0 && (size_t)sp->prec < n)
		n = (size_t)sp->prec;
	put_field(s, sp, t, n);
}

/* ------------------------------------------------------------------------
 * Floating point: decomposition
 */

enum { FPV_ZERO, FPV_NUM, FPV_INF, FPV_NAN };

struct fpval {
	bool neg;
	int cls;
	uint64_t mhi, mlo; /* significand: value = m * 2^e2 */
	int e2;
	/* %a layout: hlead, then hn fraction nibbles taken from (hhi, hlo) */
	int hlead, hexp, hn;
	uint64_t hhi, hlo;
};

static void fpv_from_double(struct fpval *v, double x)
{
	uint64_t b, fr;
	int be;

	memcpy(&b, &x, sizeof(b));
	v->neg = b >> 63;
	be = (int)((b >> 52) & 0x7ff);
	fr = b & ((1ULL << 52) - 1);
	v->hn = 13;
	v->hhi = 0;
	v->hlo = fr;
	v->hlead = be != 0;
	if (be == 0x7ff) {
		v->cls = fr ? FPV_NAN : FPV_INF;
		return;
	}
	v->cls = (be == 0 && fr == 0) ? FPV_ZERO : FPV_NUM;
	v->mhi = 0;
	v->mlo = fr | (be ? 1ULL << 52 : 0);
	v->e2 = (be ? be : 1) - 1075;
	v->hexp = be ? be - 1023 : (fr ? -1022 : 0);
}

#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384 && (defined(__x86_64__) || defined(__i386__))
#define PK_LDBL_X87 1
#elif LDBL_MANT_DIG == 113 && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PK_LDBL_QUAD 1
#endif

static void fpv_from_ldouble(struct fpval *v, long double x)
{
#if defined(PK_LDBL_X87)
	/* 64-bit significand with an explicit integer bit, then sign+exponent. */
	uint64_t m;
	uint16_t se;
	int be;

	memcpy(&m, &x, sizeof(m));
	memcpy(&se, (const char *)&x + 8, sizeof(se));
	be = se & 0x7fff;
	v->neg = se >> 15;
	v->hn = 15;
	v->hhi = 0;
	v->hlo = m & ((1ULL << 60) - 1);
	v->hlead = (int)(m >> 60);
	if (be == 0x7fff) {
		v->cls = m == 1ULL << 63 ? FPV_INF : FPV_NAN;
		return;
	}
	if (be != 0 && !(m >> 63)) {
		/* Unnormals are invalid operands to the FPU: print them as NaN. */
		v->cls = FPV_NAN;
		return;
	}
	/*
	 * Pseudo-denormals (integer bit set, exponent 0): glibc drops that bit
	 * from the value (not from %La), except that a lone integer bit reads
	 * as the smallest normal. Matched for byte-for-byte output.
	 */
	if (be == 0 && m != 1ULL << 63)
		m &= ~(1ULL << 63);
	v->cls = m == 0 ? FPV_ZERO : FPV_NUM;
	v->mhi = 0;
	v->mlo = m;
	v->e2 = (be ? be : 1) - 16383 - 63;
	v->hexp = be ? be - 16386 : (m ? -16385 : 0);
#elif defined(PK_LDBL_QUAD)
	/* IEEE binary128: 112 fraction bits and an implicit integer bit. */
	uint64_t lo, hi, fhi;
	int be;

	memcpy(&lo, &x, sizeof(lo));
	memcpy(&hi, (const char *)&x + 8, sizeof(hi));
	be = (int)((hi >> 48) & 0x7fff);
	fhi = hi & ((1ULL << 48) - 1);
	v->neg = hi >> 63;
	v->hn = 28;
	v->hhi = fhi;
	v->hlo = lo;
	v->hlead = be != 0;
	if (be == 0x7fff) {
		v->cls = (fhi | lo) ? FPV_NAN : FPV_INF;
		return;
	}
	v->cls = (be == 0 && (fhi | lo) == 0) ? FPV_ZERO : FPV_NUM;
	v->mhi = fhi | (be ? 1ULL << 48 : 0);
	v->mlo = lo;
	v->e2 = (be ? be : 1) - 16383 - 112;
	v->hexp = be ? be - 16383 : ((fhi | lo) ? -16382 : 0);
#else
	/* long double is double here, or a layout we do not decode. */
	fpv_from_double(v, (double)x);
#endif
}

/* ------------------------------------------------------------------------
 * Floating point: exact decimal digits
 */

#define BIG_BASE 1000000000u

/* Scratch words: integer limbs, or up to 8 integer limbs then fraction words. */
#define FRAC_OFFSET  8
#define WORK_DOUBLE  48	 /* 10^308: 35 limbs; 2^-1074: 34 fraction words + 8 */
#define WORK_LDOUBLE 560 /* 10^4932: 549 limbs; 2^-16494: 516 fraction words + 8 */

/* Digit positions: 0 is the units digit, -1 the first after the point. */
#define POS_NONE (INT_MIN / 2)
/* Below every nonzero digit of any supported value (2^-16494 ends at -16494). */
#define POS_FLOOR (-40000)

struct dsrc {
	uint32_t *il; /* integer part in base 10^9 limbs, least significant first */
	int nil;      /* limbs in use, the top one nonzero */
	int ilow;     /* lowest nonzero limb, INT_MAX if none */
	bool frac0;   /* the fraction is zero */
	uint32_t *fw; /* fraction: fw / 2^(32 * nfw), least significant word first */
	int nfw;
	int lo, hi;	   /* fw words that may be nonzero; lo > hi: no digits left */
	int fnext;	   /* fraction limbs produced so far */
	uint64_t fhi, flo; /* the fraction bits, to start over for the second pass */
	int nbits;
};

static int ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
	return __builtin_ctzll(x);
#else
	int n = 0;

	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
#endif
}

/* il = il * 2^k + add for k <= 32; returns the new limb count. */
static int big_shl_add(uint32_t *il, int n, int cap, unsigned int k, uint32_t add)
{
	uint64_t carry = add;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t t = ((uint64_t)il[i] << k) + carry;

		carry = t / BIG_BASE;
		il[i] = (uint32_t)(t - carry * BIG_BASE);
	}
	while (carry && n < cap) {
		il[n++] = (uint32_t)(carry % BIG_BASE);
		carry /= BIG_BASE;
	}
	return n;
}

/* Loads the fraction so that the binary point sits on a word boundary. */
static void frac_load(struct dsrc *d)
{
	uint32_t u[4], t[5];
	int s, k, i;

	d->fnext = 0;
	d->lo = 1;
	d->hi = 0;
	d->nfw = 0;
	if (d->frac0)
		return;
	d->nfw = (d->nbits + 31) / 32;
	s = 32 * d->nfw - d->nbits;
	u[0] = (uint32_t)d->flo;
	u[1] = (uint32_t)(d->flo >> 32);
	u[2] = (uint32_t)d->fhi;
	u[3] = (uint32_t)(d->fhi >> 32);
	if (s == 0) {
		for (i = 0; i < 4; i++)
			t[i] = u[i];
		t[4] = 0;
	} else {
		t[0] = u[0] << s;
		for (i = 1; i < 4; i++)
			t[i] = (u[i] << s) | (u[i - 1] >> (32 - s));
		t[4] = u[3] >> (32 - s);
	}
	/* The fraction is below 2^nbits, so words past nfw are zero. */
	k = d->nfw < 5 ? d->nfw : 5;
	d->lo = INT_MAX;
	d->hi = -1;
	for (i = 0; i < k; i++) {
		d->fw[i] = t[i];
		if (t[i]) {
			if (d->lo == INT_MAX)
				d->lo = i;
			d->hi = i;
		}
	}
	/* Words above hi are written before they are read: no clearing needed. */
}

/* The next nine fraction digits: multiply by 10^9, take what crosses the point. */
static uint32_t frac_next(struct dsrc *d)
{
	uint64_t carry = 0;
	uint32_t out = 0;
	int i;

	d->fnext++;
	if (d->lo > d->hi)
		return 0;
	for (i = d->lo; i <= d->hi; i++) {
		uint64_t t = (uint64_t)d->fw[i] * BIG_BASE + carry;

		d->fw[i] = (uint32_t)t;
		carry = t >> 32;
	}
	if (d->hi == d->nfw - 1)
		out = (uint32_t)carry;
	else if (carry)
		d->fw[++d->hi] = (uint32_t)carry;
	while (d->lo <= d->hi && d->fw[d->lo] == 0)
		d->lo++;
	return out;
}

/*
 * Limb g holds the digits of positions 9g .. 9g+8. Fraction limbs (g < 0)
 * must be asked for in descending order.
 */
static uint32_t src_limb(struct dsrc *d, long long g)
{
	int j;

	if (g >= 0)
		return g < d->nil ? d->il[g] : 0;
	if (d->lo > d->hi) {
		d->fnext = (int)(-g < INT_MAX ? -g : INT_MAX);
		return 0;
	}
	j = (int)(-g - 1);
	while (d->fnext < j)
		(void)frac_next(d);
	return frac_next(d);
}

/* After src_limb(g): are all digits below limb g zero? */
static bool src_rest_zero(const struct dsrc *d, long long g)
{
	if (g >= 0)
		return d->ilow >= g && d->frac0;
	return d->lo > d->hi;
}

static void src_init(struct dsrc *d, const struct fpval *v, uint32_t *work, int nwork)
{
	uint64_t mhi = v->mhi, mlo = v->mlo, ihi, ilo;
	int e2 = v->e2, cap, i;

	/* Drop trailing zero bits of the significand: fewer fraction words. */
	if (e2 < 0) {
		int tz = mlo ? ctz64(mlo) : 64 + ctz64(mhi);

		if (tz > -e2)
			tz = -e2;
		if (tz >= 64) {
			mlo = mhi >> (tz - 64);
			mhi = 0;
		} else if (tz > 0) {
			mlo = (mlo >> tz) | (mhi << (64 - tz));
			mhi >>= tz;
		}
		e2 += tz;
	}

	d->il = work;
	d->fw = work + FRAC_OFFSET;
	if (e2 >= 0) {
		ihi = mhi;
		ilo = mlo;
		d->frac0 = true;
		d->nbits = 0;
		d->fhi = d->flo = 0;
		cap = nwork;
	} else {
		int n = -e2;

		if (n >= 128) {
			ihi = ilo = 0;
			d->fhi = mhi;
			d->flo = mlo;
		} else if (n >= 64) {
			ihi = 0;
			ilo = mhi >> (n - 64);
			d->fhi = n == 64 ? 0 : mhi & ((1ULL << (n - 64)) - 1);
			d->flo = mlo;
		} else {
			ihi = mhi >> n;
			ilo = (mlo >> n) | (n ? mhi << (64 - n) : 0);
			d->fhi = 0;
			d->flo = mlo & ((1ULL << n) - 1);
		}
		d->nbits = n;
		d->frac0 = (d->fhi | d->flo) == 0;
		cap = FRAC_OFFSET;
	}

	/* Integer part: feed its 32-bit words, then shift by e2. */
	d->nil = 0;
	{
		uint32_t w[4] = {(uint32_t)(ihi >> 32), (uint32_t)ihi, (uint32_t)(ilo >> 32),
				 (uint32_t)ilo};

		for (i = 0; i < 4; i++)
			if (d->nil || w[i])
				d->nil = big_shl_add(d->il, d->nil, cap, 32, w[i]);
	}
	if (e2 > 0 && d->nil) {
		int e = e2;

		for (; e >= 32; e -= 32)
			d->nil = big_shl_add(d->il, d->nil, cap, 32, 0);
		if (e)
			d->nil = big_shl_add(d->il, d->nil, cap, (unsigned int)e, 0);
	}
	d->ilow = INT_MAX;
	for (i = 0; i < d->nil; i++) {
		if (d->il[i]) {
			d->ilow = i;
			break;
		}
	}
	frac_load(d);
}

/* Nine digits of a limb, zero-padded: out[0] is the most significant. */
static void limb_digits(char *out, uint32_t v)
{
	int i;

	for (i = 8; i > 0; i -= 2) {
		uint32_t q = v / 100;
		uint32_t r = v - q * 100;

		memcpy(out + i - 1, &dec_pairs[r * 2], 2);
		v = q;
	}
	out[0] = (char)('0' + v);
}

static int limb_width(uint32_t v)
{
	int n = 1;

	while (n < 9 && v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * The rounding decision. Digits at positions >= cut are kept; top is the
 * highest position printed before any carry (E, or the units digit for %f).
 */
struct fpplan {
	int E;	 /* position of the leading nonzero digit; POS_NONE for zero */
	int cut; /* lowest kept position */
	int top; /* highest printed position before rounding */
	bool roundup;
	bool carry; /* rounding ran through all nines: a '1' appears at top + 1 */
	int q;	    /* when rounding up without carry: the digit incremented */
	int lnz;    /* lowest nonzero kept position after rounding, POS_NONE if none */
};

static void plan_zero(struct fpplan *pl)
{
	pl->E = POS_NONE;
	pl->cut = 0;
	pl->top = 0;
	pl->roundup = false;
	pl->carry = false;
	pl->q = POS_NONE;
	pl->lnz = POS_NONE;
}

static int clamp_pos(long long p)
{
	return p < POS_FLOOR ? POS_FLOOR : (int)p;
}

/* First pass over the digits. emode: prec counts digits after the leading one. */
static void fp_plan(struct dsrc *d, bool emode, int prec, struct fpplan *pl)
{
	char dig[9];
	int last9 = POS_NONE, lnz = POS_NONE, dcut = 0, rd = 0;
	bool sticky = false;
	long long g;
	uint32_t v;
	int E, cut, top, p;

	g = d->nil > 0 ? d->nil - 1 : -1;
	while ((v = src_limb(d, g)) == 0)
		g--;
	E = (int)(9 * g) + limb_width(v) - 1;
	cut = clamp_pos(emode ? (long long)E - prec : -(long long)prec);
	top = emode || E > 0 ? E : 0;

	/* Leading zeros of %f ("0.00ddd") are kept digits that are not nines. */
	if (top > E && cut <= top)
		last9 = cut > E + 1 ? cut : E + 1;
	if (cut - 1 > E)
		goto decided; /* the rounding digit itself is a leading zero */

	limb_digits(dig, v);
	p = E;
	for (;;) {
		int base = (int)(9 * g);
		int lo_kept = base > cut ? base : cut;
		int i, i_top = 8 - (p - base);

		if (p >= lo_kept) {
			int i_low = 8 - (lo_kept - base);

			/* Scan upwards from the lowest kept digit: the first hit is the lowest. */
			for (i = i_low; i >= i_top; i--) {
				if (dig[i] != '9') {
					last9 = base + 8 - i;
					break;
				}
			}
			for (i = i_low; i >= i_top; i--) {
				if (dig[i] != '0') {
					lnz = base + 8 - i;
					break;
				}
			}
			if (lo_kept == cut)
				dcut = dig[i_low] - '0';
		}
		if (cut - 1 >= base) {
			int i_rd = 8 - (cut - 1 - base);

			rd = dig[i_rd] - '0';
			for (i = i_rd + 1; i < 9 && !sticky; i++)
				sticky = dig[i] != '0';
			if (!sticky)
				sticky = !src_rest_zero(d, g);
			goto decided;
		}
		if (src_rest_zero(d, g)) {
			/* Only zeros below: they are kept digits down to cut. */
			if (base - 1 >= cut)
				last9 = cut;
			goto decided;
		}
		g--;
		v = src_limb(d, g);
		limb_digits(dig, v);
		p = base - 1;
	}

decided:
	pl->E = E;
	pl->cut = cut;
	pl->top = top;
	pl->roundup = rd > 5 || (rd == 5 && (sticky || (dcut & 1)));
	pl->carry = false;
	pl->q = POS_NONE;
	if (pl->roundup) {
		if (last9 != POS_NONE) {
			pl->q = last9;
			lnz = last9;
		} else {
			pl->carry = true;
			lnz = top + 1;
		}
	}
	pl->lnz = lnz;
}

/* Second pass: writes the rounded digits from a position downwards. */
struct dcursor {
	struct dsrc *d;
	const struct fpplan *pl;
	long long p; /* next position to write */
	long long g; /* limb held in dig, LLONG_MIN if none */
	char dig[9];
};

/* The source digit at position p (<= E), loading its limb if needed. */
static const char *cursor_src(struct dcursor *c, long long p)
{
	long long g = p >= 0 ? p / 9 : -((-p + 8) / 9);

	if (g != c->g) {
		limb_digits(c->dig, src_limb(c->d, g));
		c->g = g;
	}
	return &c->dig[8 - (p - 9 * g)];
}

/* Writes n digits as runs: zeros, straight source digits, the rounded digit. */
static void put_digits(struct sink *s, struct dcursor *c, size_t n)
{
	const struct fpplan *pl = c->pl;

	while (n > 0) {
		long long p = c->p;
		size_t k;

		if (sink_full(s)) {
			/* Nothing more can be stored: only the length matters
			 * (and that the output ends in a digit). */
			s->last = '0';
			sink_advance(s, n);
			c->p -= (long long)(n < LEN_LIMIT ? n : LEN_LIMIT);
			return;
		}
		if (pl->carry) {
			if (p == pl->top + 1) {
				sink_putc(s, '1');
				k = 1;
			} else {
				k = p > pl->top + 1 ? (size_t)(p - pl->top - 1) : n;
				k = k < n ? k : n;
				sink_fill(s, '0', k);
			}
		} else if (pl->roundup && p <= pl->q) {
			if (p == pl->q) {
				sink_putc(s, (char)((p > pl->E ? '0' : *cursor_src(c, p)) + 1));
				k = 1;
			} else {
				k = n;
				sink_fill(s, '0', k);
			}
		} else if (p > pl->E) {
			long long stop = pl->roundup && pl->q > pl->E ? pl->q : pl->E;

			k = (size_t)(p - stop) < n ? (size_t)(p - stop) : n;
			sink_fill(s, '0', k);
		} else {
			const char *src = cursor_src(c, p);
			size_t avail = (size_t)(c->dig + 9 - src);

			if (pl->roundup && (size_t)(p - pl->q) < avail)
				avail = (size_t)(p - pl->q);
			k = avail < n ? avail : n;
			sink_put(s, src, k);
		}
		c->p -= (long long)k;
		n -= k;
	}
}

/* ------------------------------------------------------------------------
 * Floating point: layouts
 */

static size_t put_exponent(char *out, int x, char e)
{
	char tmp[12];
	char *end = tmp + sizeof(tmp);
	char *p = u_to_dec(end, (unsigned long long)(x < 0 ? -x : x));
	size_t n = 0;

	if (end - p < 2)
		*--p = '0';
	out[n++] = e;
	out[n++] = x < 0 ? '-' : '+';
	memcpy(out + n, p, (size_t)(end - p));
	return n + (size_t)(end - p);
}

/* Sign, zero or space padding around a body of known length. */
static void pad_before(struct sink *s, const struct spec *sp, char sign, size_t body, size_t *after,
		       bool zero_ok)
{
	size_t total = body + (sign != 0);
	size_t pad = sp->width > total ? sp->width - total : 0;

	*after = 0;
	if (pad && (sp->flags & F_MINUS)) {
		*after = pad;
		pad = 0;
	}
	if (pad && !(zero_ok && (sp->flags & F_ZERO))) {
		sink_fill(s, ' ', pad);
		pad = 0;
	}
	if (sign)
		sink_putc(s, sign);
	if (pad)
		sink_fill(s, '0', pad);
}

static void fmt_hexfp(struct sink *s, const struct spec *sp, const struct fpval *v, char sign)
{
	bool upper = sp->conv == 'A';
	const char *digits = upper ? hex_upper : hex_lower;
	unsigned char nib[28];
	char head[3], tail[12];
	int hn = v->hn, nd, i, lead = v->hlead, exp = v->hexp;
	size_t nfrac, ntail, after;
	bool point;

	for (i = 0; i < hn; i++) {
		int sh = 4 * (hn - 1 - i);

		nib[i] = (unsigned char)((sh >= 64 ? v->hhi >> (sh - 64) : v->hlo >> sh) & 15);
	}
	nd = hn;
	while (nd > 0 && nib[nd - 1] == 0)
		nd--;
	if (sp->prec >= 0 && sp->prec < nd) {
		int next = nib[sp->prec];
		bool more = false;
		int last = sp->prec > 0 ? nib[sp->prec - 1] : lead;

		for (i = sp->prec + 1; i < nd; i++)
			more |= nib[i] != 0;
		if (next > 8 || (next == 8 && (more || (last & 1)))) {
			for (i = sp->prec - 1; i >= 0 && nib[i] == 15; i--)
				nib[i] = 0;
			if (i >= 0) {
				nib[i]++;
			} else if (lead < 15) {
				lead++;
			} else {
				/* glibc renormalises an x87 "f" that carries over. */
				lead = 1;
				exp += 4;
			}
		}
		nd = sp->prec;
	}
	nfrac = sp->prec < 0 ? (size_t)nd : (size_t)sp->prec;
	point = nfrac || (sp->flags & F_HASH);

	head[0] = '0';
	head[1] = upper ? 'X' : 'x';
	head[2] = digits[lead];
	ntail = put_exponent(tail, exp, upper ? 'P' : 'p');
	if (tail[2] == '0' && ntail > 3) {
		/* %a prints the exponent with as few digits as it needs. */
		memmove(tail + 2, tail + 3, ntail - 3);
		ntail--;
	}

	/* Zero padding goes between "0x" and the digits. */
	{
		size_t body = 3 + (point ? 1 + nfrac : 0) + ntail;
		size_t total = body + (sign != 0);
		size_t pad = sp->width > total ? sp->width - total : 0;

		after = 0;
		if (pad && (sp->flags & F_MINUS)) {
			after = pad;
			pad = 0;
		}
		if (pad && !(sp->flags & F_ZERO)) {
			sink_fill(s, ' ', pad);
			pad = 0;
		}
		if (sign)
			sink_putc(s, sign);
		sink_put(s, head, 2);
		if (pad)
			sink_fill(s, '0', pad);
		sink_putc(s, head[2]);
	}
	if (point) {
		char tmp[29];

		tmp[0] = '.';
		for (i = 0; i < nd; i++)
			tmp[i + 1] = digits[nib[i]];
		sink_put(s, tmp, (size_t)nd + 1);
		if (nfrac > (size_t)nd)
			sink_fill(s, '0', nfrac - (size_t)nd);
	}
	sink_put(s, tail, ntail);
	/* 0 with '-' survives only where glibc's %a then pads nothing. */
	if (after && !(sp->flags & F_ZERO))
		sink_fill(s, ' ', after);
}

static PK_NOINLINE void fmt_fp(struct sink *s, const struct spec *sp, const struct fpval *v,
			       uint32_t *work, int nwork)
{
	char conv = sp->conv;
	bool upper = conv >= 'A' && conv <= 'Z';
	char lc = (char)(conv | 0x20);
	bool alt = sp->flags & F_HASH;
	char sign = v->neg ? '-' : (sp->flags & F_PLUS) ? '+' : (sp->flags & F_SPACE) ? ' ' : 0;
	int prec = sp->prec < 0 ? 6 : sp->prec;
	struct dsrc d;
	struct fpplan pl;
	struct dcursor cur;
	bool fstyle;
	int X = 0, int_top = 0;
	size_t nf, body, after;
	char tail[12];
	size_t ntail = 0;

	if (v->cls == FPV_INF || v->cls == FPV_NAN) {
		const char *t =
			v->cls == FPV_INF ? (upper ? "INF" : "inf") : (upper ? "NAN" : "nan");

		pad_before(s, sp, sign, 3, &after, false);
		sink_put(s, t, 3);
		if (after)
			sink_fill(s, ' ', after);
		return;
	}
	if (lc == 'a') {
		fmt_hexfp(s, sp, v, sign);
		return;
	}

	plan_zero(&pl);
	if (v->cls != FPV_ZERO)
		src_init(&d, v, work, nwork);

	if (lc == 'f') {
		if (v->cls != FPV_ZERO)
			fp_plan(&d, false, prec, &pl);
		fstyle = true;
		nf = (size_t)prec;
		int_top = pl.carry ? pl.top + 1 : pl.top;
	} else if (lc == 'e') {
		if (v->cls != FPV_ZERO)
			fp_plan(&d, true, prec, &pl);
		fstyle = false;
		nf = (size_t)prec;
		X = v->cls == FPV_ZERO ? 0 : pl.carry ? pl.E + 1 : pl.E;
	} else {
		int P = prec ? prec : 1;

		if (v->cls != FPV_ZERO)
			fp_plan(&d, true, P - 1, &pl);
		X = v->cls == FPV_ZERO ? 0 : pl.carry ? pl.E + 1 : pl.E;
		if (X < P && X >= -4) {
			fstyle = true;
			nf = (size_t)((long long)P - 1 - X);
			int_top = X > 0 ? X : 0;
			if (!alt) {
				if (pl.lnz == POS_NONE || pl.lnz >= 0)
					nf = 0;
				else if ((size_t)-pl.lnz < nf)
					nf = (size_t)-pl.lnz;
			}
		} else {
			fstyle = false;
			nf = (size_t)(P - 1);
			if (!alt)
				nf = (size_t)(X - pl.lnz);
			else if (pl.carry && X == P)
				/*
				 * glibc picks the style before rounding: a value that
				 * rounds up to 10^P keeps the f-style digit count, zero
				 * ("%#g" of 999999.5 is "1.e+06"). Matched on purpose.
				 */
				nf = 0;
		}
	}

	if (fstyle) {
		body = (size_t)int_top + 1 + (nf || alt ? 1 + nf : 0);
	} else {
		ntail = put_exponent(tail, X, upper ? 'E' : 'e');
		body = 1 + (nf || alt ? 1 + nf : 0) + ntail;
	}

	pad_before(s, sp, sign, body, &after, true);

	if (v->cls != FPV_ZERO)
		frac_load(&d); /* start the digits over for the second pass */
	cur.d = &d;
	cur.pl = &pl;
	cur.g = LLONG_MIN;
	if (fstyle) {
		cur.p = int_top;
		put_digits(s, &cur, (size_t)int_top + 1);
	} else {
		cur.p = X;
		put_digits(s, &cur, 1);
	}
	if (nf || alt)
		sink_putc(s, '.');
	put_digits(s, &cur, nf);
	if (!fstyle)
		sink_put(s, tail, ntail);
	/* 0 with '-' survives only where glibc pads the right with zeros. */
	if (after)
		sink_fill(s, (sp->flags & F_ZERO) ? '0' : ' ', after);
}

/* Separate frames so a double never pays for a long double's scratch space. */
static PK_NOINLINE void fmt_double(struct sink *s, const struct spec *sp, double x)
{
	uint32_t work[WORK_DOUBLE];
	struct fpval v;

	fpv_from_double(&v, x);
	fmt_fp(s, sp, &v, work, WORK_DOUBLE);
}

static PK_NOINLINE void fmt_ldouble(struct sink *s, const struct spec *sp, long double x)
{
	uint32_t work[WORK_LDOUBLE];
	struct fpval v;

	fpv_from_ldouble(&v, x);
	fmt_fp(s, sp, &v, work, WORK_LDOUBLE);
}

/* ------------------------------------------------------------------------
 * The kernel's %p extensions (kernel semantics only: printk's entry points)
 *
 * Each one prints what Linux's lib/vsprintf.c prints for it, down to the
 * quirks: its own number() rules for padding, its error strings cut to 16
 * bytes, its Latin-1 ctype for the letters that follow %p. The C99 entry
 * points keep glibc's %p (the pointer, then the letters as text).
 */

static int format_into(struct sink *s, const char *fmt, va_list ap, int depth);

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

/*
 * The kernel's number() for bases 8, 10 and 16: a width that the sign and
 * the "0x" or "0" prefix eat into, a precision that is a minimum digit
 * count (0 still prints "0"), zeros between prefix and digits with the 0
 * flag unless '-' is set, a precision or not. K_SPECIAL prefixes "0x"
 * even to 0, and "0" to octal digits other than a lone 0.
 */
static void knumber(struct sink *s, unsigned long long num, int base, struct kspec k)
{
	char tmp[24];
	char *end = tmp + sizeof(tmp), *dig;
	char sign = 0;
	bool pfx = base != 10 && (k.flags & K_SPECIAL);
	bool is_zero = num == 0;
	long long fw = k.width, prec = k.prec, nd;

	if (k.flags & K_LEFT)
		k.flags &= ~(unsigned int)K_ZEROPAD;
	if (k.flags & K_SIGN) {
		if ((long long)num < 0) {
			sign = '-';
			num = 0ULL - num;
		} else if (k.flags & K_PLUS) {
			sign = '+';
		} else if (k.flags & K_SPACE) {
			sign = ' ';
		}
		fw -= sign != 0;
	}
	if (pfx) {
		if (base == 16)
			fw -= 2;
		else if (!is_zero)
			fw--;
	}
	if (base == 16)
		dig = u_to_pow2(end, num, 4, (k.flags & K_UPPER) ? hex_upper : hex_lower);
	else if (base == 8)
		dig = u_to_pow2(end, num, 3, hex_lower);
	else
		dig = u_to_dec(end, num);
	nd = end - dig;
	if (prec < nd)
		prec = nd;
	fw -= prec;
	if (fw > 0 && !(k.flags & (K_ZEROPAD | K_LEFT))) {
		sink_fill(s, ' ', (size_t)fw);
		fw = 0;
	}
	if (sign)
		sink_putc(s, sign);
	if (pfx && (base == 16 || !is_zero))
		sink_putc(s, '0');
	if (pfx && base == 16)
		sink_putc(s, (k.flags & K_UPPER) ? 'X' : 'x');
	if (fw > 0 && !(k.flags & K_LEFT)) {
		sink_fill(s, (k.flags & K_ZEROPAD) ? '0' : ' ', (size_t)fw);
		fw = 0;
	}
	if (prec > nd)
		sink_fill(s, '0', (size_t)(prec - nd));
	sink_put(s, dig, (size_t)nd);
	if (fw > 0)
		sink_fill(s, ' ', (size_t)fw);
}

/* The kernel's string_nocheck(): cut to the precision, padded to the width. */
static void kstring(struct sink *s, const char *str, size_t n, const struct kspec *k)
{
	size_t pad;

	if (k->prec >= 0 && (size_t)k->prec < n)
		n = (size_t)k->prec;
	pad = k->width > 0 && (size_t)k->width > n ? (size_t)k->width - n : 0;
	if (pad && !(k->flags & K_LEFT))
		sink_fill(s, ' ', pad);
	sink_put(s, str, n);
	if (pad && (k->flags & K_LEFT))
		sink_fill(s, ' ', pad);
}

/* The kernel's error_string(): at most 2 * sizeof(void *) bytes by default. */
static void kerror(struct sink *s, const char *msg, const struct kspec *k)
{
	struct kspec e = *k;

	if (e.prec < 0)
		e.prec = 2 * (int)sizeof(void *);
	kstring(s, msg, strlen(msg), &e);
}

/* The kernel's check_pointer(): false (and the message printed) if unusable. */
static bool kcheck(struct sink *s, const void *p, const struct kspec *k)
{
	if (!p) {
		kerror(s, "(null)", k);
		return false;
	}
	if (bad_pointer(p)) {
		kerror(s, "(efault)", k);
		return false;
	}
	return true;
}

/* An ERR_PTR(-errno) value: the top 4095 addresses. */
static inline bool k_is_err(const void *p)
{
	return (uintptr_t)p > UINTPTR_MAX - PK_MAX_ERRNO;
}

/* ---- %p hashing ---- */

static _Atomic int no_hash_pointers;

int pk_no_hash_pointers_enable(void)
{
	return !atomic_exchange(&no_hash_pointers, 1);
}

const char *const pk_no_hash_pointers_banner[PK_NO_HASH_POINTERS_BANNER_LINES] = {
	"**********************************************************",
	"**   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **",
	"**                                                      **",
	"** This system shows unhashed kernel memory addresses   **",
	"** via the console, logs, and other interfaces. This    **",
	"** might reduce the security of your system.            **",
	"**                                                      **",
	"** If you see this message and you are not debugging    **",
	"** the kernel, report this immediately to your system   **",
	"** administrator!                                       **",
	"**                                                      **",
	"**   NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE NOTICE   **",
	"**********************************************************",
};

static inline uint64_t rotl64(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIP_ROUND(v0, v1, v2, v3)                                                                  \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl64(v1, 13) ^ v0;                                                          \
		v0 = rotl64(v0, 32);                                                               \
		v2 += v3;                                                                          \
		v3 = rotl64(v3, 16) ^ v2;                                                          \
		v0 += v3;                                                                          \
		v3 = rotl64(v3, 21) ^ v0;                                                          \
		v2 += v1;                                                                          \
		v1 = rotl64(v1, 17) ^ v2;                                                          \
		v2 = rotl64(v2, 32);                                                               \
	} while (0)

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of one 4- or 8-byte
 * little-endian word, as the kernel's siphash_1u32/siphash_1u64.
 */
static uint64_t siphash_word(uint64_t m, unsigned int len, uint64_t k0, uint64_t k1)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56;

	if (len == 8) {
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	} else {
		b |= m;
	}
	v3 ^= b;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The process's pointer-hash seed, drawn at first use: one CAS publishes it,
 * so racing threads and signal handlers agree without waiting on each other
 * (a loser adopts the winner's seed). 0 means "not drawn yet".
 */
static _Atomic uint64_t ptr_hash_seed;

static PK_NOINLINE uint64_t draw_seed(void)
{
	uint64_t r = 0, expected = 0;
	int saved = errno;
	ssize_t n = getrandom(&r, sizeof(r), GRND_NONBLOCK);

	if (n != (ssize_t)sizeof(r)) {
		/*
		 * No entropy to be had (a kernel before 3.17, a seccomp filter,
		 * early boot): the failed call wrote errno, which a later %m
		 * must not see. The fallback is not secret, only different
		 * from run to run (ASLR, pid, time).
		 */
		struct timespec ts = {0, 0};

		(void)clock_gettime(CLOCK_MONOTONIC, &ts);
		r = mix64((uint64_t)(uintptr_t)&r ^ mix64((uint64_t)(uintptr_t)&ptr_hash_seed) ^
			  mix64((uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec) ^
			  (uint64_t)ts.tv_sec);
		errno = saved;
	}
	if (!r)
		r = 1;
	if (!atomic_compare_exchange_strong(&ptr_hash_seed, &expected, r))
		r = expected;
	return r;
}

/* The kernel's ptr_to_id(): a 32-bit SipHash of the pointer. */
static unsigned long hash_pointer(const void *p)
{
	uint64_t seed = atomic_load_explicit(&ptr_hash_seed, memory_order_relaxed);

	if (PK_UNLIKELY(!seed))
		seed = draw_seed();
	/* The kernel's key is 128 random bits; ours derives its second half. */
	if (sizeof(void *) == 8)
		return (unsigned long)(siphash_word((uint64_t)(uintptr_t)p, 8, seed, mix64(seed)) &
				       0xffffffffu);
	return (unsigned long)siphash_word((uint64_t)(uintptr_t)p, 4, seed, mix64(seed));
}

/* The kernel's pointer_string(): by default zero-padded to the pointer width. */
static void kpointer_string(struct sink *s, uintptr_t v, struct kspec k)
{
	if (k.width < 0) {
		k.width = 2 * (int)sizeof(void *);
		k.flags |= K_ZEROPAD;
	}
	knumber(s, v, 16, k);
}

/* The kernel's default_pointer(): NULL and error pointers are not hashed. */
static void kdefault_pointer(struct sink *s, const void *p, const struct kspec *k)
{
	uintptr_t v = (uintptr_t)p;

	if (p && !k_is_err(p) && !atomic_load_explicit(&no_hash_pointers, memory_order_relaxed))
		v = hash_pointer(p);
	kpointer_string(s, v, *k);
}

/* The kernel's special_hex_number(): "0x" and 2 * @size digits, whatever the spec. */
static void kspecial_hex(struct sink *s, unsigned long long v, int size)
{
	struct kspec k = {K_SPECIAL | K_ZEROPAD, 2 + 2 * size, -1};

	knumber(s, v, 16, k);
}

/* ---- byte strings ---- */

static inline char *hex_pack(char *p, unsigned char c, const char *digits)
{
	*p++ = digits[c >> 4];
	*p++ = digits[c & 15];
	return p;
}

/* %ph[CDN]: up to 64 bytes, the count from the width (1 without one). */
static void k_hex_string(struct sink *s, const unsigned char *addr, const char *ext,
			 const struct kspec *k)
{
	char sep;
	int n, i;

	if (k->width == 0)
		return;
	if (!kcheck(s, addr, k))
		return;
	switch (ext[1]) {
	case 'C':
		sep = ':';
		break;
	case 'D':
		sep = '-';
		break;
	case 'N':
		sep = 0;
		break;
	default:
		sep = ' ';
		break;
	}
	n = k->width > 0 ? (k->width < 64 ? k->width : 64) : 1;
	for (i = 0; i < n;) {
		char tmp[66];
		char *e = tmp;

		while (i < n && e - tmp <= (ptrdiff_t)sizeof(tmp) - 3) {
			e = hex_pack(e, addr[i], hex_lower);
			if (sep && i != n - 1)
				*e++ = sep;
			i++;
		}
		sink_put(s, tmp, (size_t)(e - tmp));
	}
}

/* %p[mM][FR]: 6 bytes, ':' or '-' between them for M, reversed with R. */
static void k_mac(struct sink *s, const unsigned char *addr, const char *ext, const struct kspec *k)
{
	char out[18];
	char *p = out;
	char sep = ext[1] == 'F' ? '-' : ':';
	bool rev = ext[1] == 'R';
	int i;

	if (!kcheck(s, addr, k))
		return;
	for (i = 0; i < 6; i++) {
		p = hex_pack(p, addr[rev ? 5 - i : i], hex_lower);
		if (ext[0] == 'M' && i != 5)
			*p++ = sep;
	}
	kstring(s, out, (size_t)(p - out), k);
}

/* %pU[bBlL]: 16 bytes; l and L read the first three fields little-endian. */
static void k_uuid(struct sink *s, const unsigned char *addr, const char *ext,
		   const struct kspec *k)
{
	static const unsigned char le_order[16] = {3, 2, 1,  0,	 5,  4,	 7,  6,
						   8, 9, 10, 11, 12, 13, 14, 15};
	char out[36];
	char *p = out;
	bool le = ext[1] == 'l' || ext[1] == 'L';
	const char *digits = ext[1] == 'B' || ext[1] == 'L' ? hex_upper : hex_lower;
	int i;

	if (!kcheck(s, addr, k))
		return;
	for (i = 0; i < 16; i++) {
		p = hex_pack(p, addr[le ? le_order[i] : i], digits);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	kstring(s, out, (size_t)(p - out), k);
}

/* ESCAPE_* of the kernel's string_escape_mem() (include/linux/string_helpers.h). */
enum {
	ESC_SPACE = 1 << 0,
	ESC_SPECIAL = 1 << 1,
	ESC_NULL = 1 << 2,
	ESC_OCTAL = 1 << 3,
	ESC_ANY = ESC_SPACE | ESC_SPECIAL | ESC_NULL | ESC_OCTAL,
	ESC_NP = 1 << 4,
	ESC_HEX = 1 << 5,
};

/* One byte as string_escape_mem() writes it; returns the bytes written to out. */
static size_t escape_byte(char *out, unsigned char c, unsigned int flags)
{
	char to = 0;

	if ((flags & ESC_NP) && k_isprint(c)) {
		out[0] = (char)c;
		return 1;
	}
	if (flags & ESC_SPACE) {
		switch (c) {
		case '\n':
			to = 'n';
			break;
		case '\r':
			to = 'r';
			break;
		case '\t':
			to = 't';
			break;
		case '\v':
			to = 'v';
			break;
		case '\f':
			to = 'f';
			break;
		default:
			break;
		}
	}
	if (!to && (flags & ESC_SPECIAL)) {
		switch (c) {
		case '\\':
			to = '\\';
			break;
		case '\a':
			to = 'a';
			break;
		case 0x1b:
			to = 'e';
			break;
		case '"':
			to = '"';
			break;
		default:
			break;
		}
	}
	if (!to && (flags & ESC_NULL) && c == 0)
		to = '0';
	if (to) {
		out[0] = '\\';
		out[1] = to;
		return 2;
	}
	if (flags & ESC_OCTAL) {
		out[0] = '\\';
		out[1] = (char)('0' + (c >> 6));
		out[2] = (char)('0' + ((c >> 3) & 7));
		out[3] = (char)('0' + (c & 7));
		return 4;
	}
	if (flags & ESC_HEX) {
		out[0] = '\\';
		out[1] = 'x';
		hex_pack(out + 2, c, hex_lower);
		return 4;
	}
	out[0] = (char)c;
	return 1;
}

/* %pE[achnops]: the width is the buffer's length (1 without one); no padding. */
static void k_escaped(struct sink *s, const unsigned char *addr, const char *ext,
		      const struct kspec *k)
{
	unsigned int flags = 0;
	size_t n, i;

	if (k->width == 0)
		return;
	if (!kcheck(s, addr, k))
		return;
	for (i = 1;; i++) {
		unsigned int f;

		switch (ext[i]) {
		case 'a':
			f = ESC_ANY;
			break;
		case 'c':
			f = ESC_SPECIAL;
			break;
		case 'h':
			f = ESC_HEX;
			break;
		case 'n':
			f = ESC_NULL;
			break;
		case 'o':
			f = ESC_OCTAL;
			break;
		case 'p':
			f = ESC_NP;
			break;
		case 's':
			f = ESC_SPACE;
			break;
		default:
			f = 0;
			break;
		}
		if (!f)
			break;
		flags |= f;
	}
	if (!flags)
		flags = ESC_ANY | ESC_NP;
	n = k->width < 0 ? 1 : (size_t)k->width;
	for (i = 0; i < n;) {
		char tmp[64];
		size_t t = 0;

		while (i < n && t <= sizeof(tmp) - 4)
			t += escape_byte(tmp + t, addr[i++], flags);
		sink_put(s, tmp, t);
	}
}

/* ---- IP addresses ---- */

/* Dotted quad; @zeros: three digits each (%pi4); @idx/@step: byte order. */
static char *ip4_text(char *p, const unsigned char *a, bool zeros, int idx, int step)
{
	int i;

	for (i = 0; i < 4; i++, idx += step) {
		unsigned int v = a[idx];

		if (zeros || v >= 100)
			*p++ = (char)('0' + v / 100);
		if (zeros || v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		if (i < 3)
			*p++ = '.';
	}
	return p;
}

/* The byte order a trailing h, l, n or b asks for (%pI4h, %pISl...). */
static void ip4_order(char m, int *idx, int *step)
{
	bool rev = m == 'l';

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (m == 'h')
		rev = true;
#endif
	*idx = rev ? 3 : 0;
	*step = rev ? -1 : 1;
}

/* Eight groups of four hex digits, with colons for %pI6, without for %pi6. */
static char *ip6_full(char *p, const unsigned char *a, bool colons)
{
	int i;

	for (i = 0; i < 16; i += 2) {
		p = hex_pack(p, a[i], hex_lower);
		p = hex_pack(p, a[i + 1], hex_lower);
		if (colons && i != 14)
			*p++ = ':';
	}
	return p;
}

/*
 * %pI6c: the kernel's compression (RFC 5952 in spirit): the first longest
 * run of two or more zero groups becomes "::", no leading zeros, and a
 * v4-mapped or ISATAP address ends in a dotted quad.
 */
static char *ip6_compressed(char *p, const unsigned char *a)
{
	unsigned int w[8];
	bool v4 = false, colon = false;
	int i, j, range, best = 1, at = -1;

	for (i = 0; i < 8; i++)
		w[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
	if (!w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff)
		v4 = true;
	if ((a[8] & ~2u) == 0 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe)
		v4 = true;
	range = v4 ? 6 : 8;
	for (i = 0; i < range; i++) {
		for (j = i; j < range && !w[j]; j++)
			;
		if (j - i > best) {
			best = j - i;
			at = i;
		}
	}
	for (i = 0; i < range; i++) {
		unsigned int v = w[i];

		if (i == at) {
			if (colon || i == 0)
				*p++ = ':';
			*p++ = ':';
			colon = false;
			i += best - 1;
			continue;
		}
		if (colon)
			*p++ = ':';
		if (v >= 0x1000)
			*p++ = hex_lower[v >> 12];
		if (v >= 0x100)
			*p++ = hex_lower[(v >> 8) & 15];
		if (v >= 0x10)
			*p++ = hex_lower[(v >> 4) & 15];
		*p++ = hex_lower[v & 15];
		colon = true;
	}
	if (v4) {
		if (colon)
			*p++ = ':';
		p = ip4_text(p, a + 12, false, 0, 1);
	}
	return p;
}

/* A number inside an address text, with the conversion's own spec (as the kernel). */
static void put_in(char *buf, size_t cap, size_t *len, unsigned long long v, const struct kspec *k)
{
	struct sink t = {buf, cap, *len, 0, true};

	knumber(&t, v, 10, *k);
	*len = t.len < cap ? t.len : cap;
}

static void k_ip_sockaddr(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	/* Sized as the kernel's buffers: a number the width widens is cut there. */
	char out[sizeof("[xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:255.255.255.255]") + sizeof(":12345") +
		 sizeof("/123456789") + sizeof("%1234567890")];
	bool raw = ext[0] == 'i';
	bool have_p = false, have_f = false, have_s = false, have_c = false;
	char m4 = 0;
	sa_family_t family;
	size_t n = 0;
	const char *f;

	for (f = ext + 2; k_isalpha((unsigned char)*f); f++) {
		switch (*f) {
		case 'p':
			have_p = true;
			break;
		case 'f':
			have_f = true;
			break;
		case 's':
			have_s = true;
			break;
		case 'c':
			have_c = true;
			break;
		case 'h':
		case 'l':
		case 'n':
		case 'b':
			m4 = *f;
			break;
		default:
			break;
		}
	}
	memcpy(&family, (const char *)ptr + offsetof(struct sockaddr, sa_family), sizeof(family));
	if (family == AF_INET) {
		struct sockaddr_in sin;
		int idx, step;

		memcpy(&sin, ptr, sizeof(sin));
		ip4_order(m4, &idx, &step);
		n = (size_t)(ip4_text(out, (const unsigned char *)&sin.sin_addr, raw, idx, step) -
			     out);
		if (have_p) {
			out[n++] = ':';
			put_in(out, sizeof("255.255.255.255") + sizeof(":12345") - 1, &n,
			       ntohs(sin.sin_port), k);
		}
	} else if (family == AF_INET6) {
		struct sockaddr_in6 sin6;
		const unsigned char *a;
		bool br = have_p || have_s || have_f;
		char *p = out;

		memcpy(&sin6, ptr, sizeof(sin6));
		a = (const unsigned char *)&sin6.sin6_addr;
		if (br)
			*p++ = '[';
		p = !raw && have_c ? ip6_compressed(p, a) : ip6_full(p, a, !raw);
		if (br)
			*p++ = ']';
		n = (size_t)(p - out);
		if (have_p) {
			out[n++] = ':';
			put_in(out, sizeof(out) - 1, &n, ntohs(sin6.sin6_port), k);
		}
		if (have_f && n < sizeof(out) - 1) {
			out[n++] = '/';
			put_in(out, sizeof(out) - 1, &n, ntohl(sin6.sin6_flowinfo) & 0x0fffffffu,
			       k);
		}
		if (have_s && n < sizeof(out) - 1) {
			out[n++] = '%';
			put_in(out, sizeof(out) - 1, &n, sin6.sin6_scope_id, k);
		}
	} else {
		kerror(s, "(einval)", k);
		return;
	}
	kstring(s, out, n, k);
}

/* %p[Ii][46S]...: IPv4, IPv6 or a struct sockaddr of either. */
static void k_ip(struct sink *s, const unsigned char *addr, const char *ext, const struct kspec *k)
{
	char out[sizeof("xxxx:xxxx:xxxx:xxxx:xxxx:xxxx:255.255.255.255")];
	char *e;

	if (!kcheck(s, addr, k))
		return;
	switch (ext[1]) {
	case '6':
		if (ext[0] == 'I' && ext[2] == 'c')
			e = ip6_compressed(out, addr);
		else
			e = ip6_full(out, addr, ext[0] == 'I');
		break;
	case '4': {
		int idx, step;

		ip4_order(ext[2], &idx, &step);
		e = ip4_text(out, addr, ext[0] == 'i', idx, step);
		break;
	}
	case 'S':
		k_ip_sockaddr(s, addr, ext, k);
		return;
	default:
		kerror(s, ext[0] == 'i' ? "(%pi?)" : "(%pI?)", k);
		return;
	}
	kstring(s, out, (size_t)(e - out), k);
}

/* ---- %pe ---- */

/* The kernel's internal error numbers (include/linux/errno.h), not in <errno.h>. */
#define K_ERESTARTSYS	  512
#define K_ERECALLCONFLICT 530

/* The names lib/errname.c knows, by number; any other prints as a number. */
static const char *const errno_names[] = {
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[ESRCH] = "ESRCH",
	[EINTR] = "EINTR",
	[EIO] = "EIO",
	[ENXIO] = "ENXIO",
	[E2BIG] = "E2BIG",
	[ENOEXEC] = "ENOEXEC",
	[EBADF] = "EBADF",
	[ECHILD] = "ECHILD",
	[EAGAIN] = "EAGAIN",
	[ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES",
	[EFAULT] = "EFAULT",
	[ENOTBLK] = "ENOTBLK",
	[EBUSY] = "EBUSY",
	[EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV",
	[ENODEV] = "ENODEV",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE",
	[ENOTTY] = "ENOTTY",
	[ETXTBSY] = "ETXTBSY",
	[EFBIG] = "EFBIG",
	[ENOSPC] = "ENOSPC",
	[ESPIPE] = "ESPIPE",
	[EROFS] = "EROFS",
	[EMLINK] = "EMLINK",
	[EPIPE] = "EPIPE",
	[EDOM] = "EDOM",
	[ERANGE] = "ERANGE",
	[EDEADLK] = "EDEADLK",
#if EDEADLOCK != EDEADLK
	[EDEADLOCK] = "EDEADLOCK",
#endif
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ENOLCK] = "ENOLCK",
	[ENOSYS] = "ENOSYS",
	[ENOTEMPTY] = "ENOTEMPTY",
	[ELOOP] = "ELOOP",
	[ENOMSG] = "ENOMSG",
	[EIDRM] = "EIDRM",
	[ECHRNG] = "ECHRNG",
	[EL2NSYNC] = "EL2NSYNC",
	[EL3HLT] = "EL3HLT",
	[EL3RST] = "EL3RST",
	[ELNRNG] = "ELNRNG",
	[EUNATCH] = "EUNATCH",
	[ENOCSI] = "ENOCSI",
	[EL2HLT] = "EL2HLT",
	[EBADE] = "EBADE",
	[EBADR] = "EBADR",
	[EXFULL] = "EXFULL",
	[ENOANO] = "ENOANO",
	[EBADRQC] = "EBADRQC",
	[EBADSLT] = "EBADSLT",
	[EBFONT] = "EBFONT",
	[ENOSTR] = "ENOSTR",
	[ENODATA] = "ENODATA",
	[ETIME] = "ETIME",
	[ENOSR] = "ENOSR",
	[ENONET] = "ENONET",
	[ENOPKG] = "ENOPKG",
	[EREMOTE] = "EREMOTE",
	[ENOLINK] = "ENOLINK",
	[EADV] = "EADV",
	[ESRMNT] = "ESRMNT",
	[ECOMM] = "ECOMM",
	[EPROTO] = "EPROTO",
	[EMULTIHOP] = "EMULTIHOP",
	[EDOTDOT] = "EDOTDOT",
	[EBADMSG] = "EBADMSG",
	[EOVERFLOW] = "EOVERFLOW",
	[ENOTUNIQ] = "ENOTUNIQ",
	[EBADFD] = "EBADFD",
	[EREMCHG] = "EREMCHG",
	[ELIBACC] = "ELIBACC",
	[ELIBBAD] = "ELIBBAD",
	[ELIBSCN] = "ELIBSCN",
	[ELIBMAX] = "ELIBMAX",
	[ELIBEXEC] = "ELIBEXEC",
	[EILSEQ] = "EILSEQ",
	[ERESTART] = "ERESTART",
	[ESTRPIPE] = "ESTRPIPE",
	[EUSERS] = "EUSERS",
	[ENOTSOCK] = "ENOTSOCK",
	[EDESTADDRREQ] = "EDESTADDRREQ",
	[EMSGSIZE] = "EMSGSIZE",
	[EPROTOTYPE] = "EPROTOTYPE",
	[ENOPROTOOPT] = "ENOPROTOOPT",
	[EPROTONOSUPPORT] = "EPROTONOSUPPORT",
	[ESOCKTNOSUPPORT] = "ESOCKTNOSUPPORT",
	[EOPNOTSUPP] = "EOPNOTSUPP",
	[EPFNOSUPPORT] = "EPFNOSUPPORT",
	[EAFNOSUPPORT] = "EAFNOSUPPORT",
	[EADDRINUSE] = "EADDRINUSE",
	[EADDRNOTAVAIL] = "EADDRNOTAVAIL",
	[ENETDOWN] = "ENETDOWN",
	[ENETUNREACH] = "ENETUNREACH",
	[ENETRESET] = "ENETRESET",
	[ECONNABORTED] = "ECONNABORTED",
	[ECONNRESET] = "ECONNRESET",
	[ENOBUFS] = "ENOBUFS",
	[EISCONN] = "EISCONN",
	[ENOTCONN] = "ENOTCONN",
	[ESHUTDOWN] = "ESHUTDOWN",
	[ETOOMANYREFS] = "ETOOMANYREFS",
	[ETIMEDOUT] = "ETIMEDOUT",
	[ECONNREFUSED] = "ECONNREFUSED",
	[EHOSTDOWN] = "EHOSTDOWN",
	[EHOSTUNREACH] = "EHOSTUNREACH",
	[EALREADY] = "EALREADY",
	[EINPROGRESS] = "EINPROGRESS",
	[ESTALE] = "ESTALE",
	[EUCLEAN] = "EUCLEAN",
	[ENOTNAM] = "ENOTNAM",
	[ENAVAIL] = "ENAVAIL",
	[EISNAM] = "EISNAM",
	[EREMOTEIO] = "EREMOTEIO",
	[EDQUOT] = "EDQUOT",
	[ENOMEDIUM] = "ENOMEDIUM",
	[EMEDIUMTYPE] = "EMEDIUMTYPE",
	[ECANCELED] = "ECANCELED",
	[ENOKEY] = "ENOKEY",
	[EKEYEXPIRED] = "EKEYEXPIRED",
	[EKEYREVOKED] = "EKEYREVOKED",
	[EKEYREJECTED] = "EKEYREJECTED",
	[EOWNERDEAD] = "EOWNERDEAD",
	[ENOTRECOVERABLE] = "ENOTRECOVERABLE",
	[ERFKILL] = "ERFKILL",
	[EHWPOISON] = "EHWPOISON",
};

_Static_assert(sizeof(errno_names) / sizeof(errno_names[0]) <= 300,
	       "errno numbers this large need another table (the kernel's errname.c)");

static const char *const kernel_errno_names[K_ERECALLCONFLICT - K_ERESTARTSYS + 1] = {
	"ERESTARTSYS",	"ERESTARTNOINTR", "ERESTARTNOHAND", "ENOIOCTLCMD", "ERESTART_RESTARTBLOCK",
	"EPROBE_DEFER", "EOPENSTALE",	  "ENOPARAM",	    NULL, /* 520 is unused */
	"EBADHANDLE",	"ENOTSYNC",	  "EBADCOOKIE",	    "ENOTSUPP",	   "ETOOSMALL",
	"ESERVERFAULT", "EBADTYPE",	  "EJUKEBOX",	    "EIOCBQUEUED", "ERECALLCONFLICT",
};

static const char *errno_name(unsigned int e)
{
	if (e < sizeof(errno_names) / sizeof(errno_names[0]))
		return errno_names[e];
	if (e >= K_ERESTARTSYS && e <= K_ERECALLCONFLICT)
		return kernel_errno_names[e - K_ERESTARTSYS];
	return NULL;
}

/* %pe of ERR_PTR(-e): "-ENAME", or the number in decimal for an unknown e. */
static void k_err_ptr(struct sink *s, const void *p, const struct kspec *k)
{
	long err = (long)(intptr_t)p;
	const char *name = errno_name((unsigned int)-err);
	struct kspec n = *k;

	if (name) {
		char tmp[32];
		size_t len = strlen(name);

		tmp[0] = '-';
		memcpy(tmp + 1, name, len);
		kstring(s, tmp, len + 1, k);
		return;
	}
	n.flags |= K_SIGN;
	knumber(s, (unsigned long long)(long long)err, 10, n);
}

/* ---- bitmaps, FourCC codes, times ---- */

#define K_LONG_BITS ((int)(sizeof(unsigned long) * CHAR_BIT))

static unsigned long bitmap_word(const unsigned char *map, int word)
{
	unsigned long w;

	memcpy(&w, map + (size_t)word * sizeof(w), sizeof(w));
	return w;
}

/* %*pb: the width is the number of bits; 32-bit chunks in hex, highest first. */
static void k_bitmap(struct sink *s, const unsigned char *map, const struct kspec *k)
{
	int nbits = k->width > 0 ? k->width : 0;
	int chunk = nbits & 31 ? nbits & 31 : 32;
	int i = ((nbits + 31) & ~31) - 32;
	bool first = true;

	if (!kcheck(s, map, k))
		return;
	for (; i >= 0; i -= 32, chunk = 32) {
		struct kspec d = {K_ZEROPAD, (chunk + 3) / 4, -1};
		unsigned long w = bitmap_word(map, i / K_LONG_BITS);
		uint32_t v = (uint32_t)(w >> (i % K_LONG_BITS)) & (uint32_t)((1ULL << chunk) - 1);

		if (!first)
			sink_putc(s, ',');
		first = false;
		knumber(s, v, 16, d);
	}
}

static bool bitmap_bit(const unsigned char *map, int i)
{
	return (bitmap_word(map, i / K_LONG_BITS) >> (i % K_LONG_BITS)) & 1;
}

/* %*pbl: the set bits as ranges, "2-3,5,7". */
static void k_bitmap_list(struct sink *s, const unsigned char *map, const struct kspec *k)
{
	struct kspec d = {0, -1, -1};
	int nbits = k->width > 0 ? k->width : 0;
	bool first = true;
	int i = 0;

	if (!kcheck(s, map, k))
		return;
	while (i < nbits) {
		int lo;

		if (!bitmap_bit(map, i)) {
			/* A whole zero word at once: %*pbl of a large, sparse map. */
			if (i % K_LONG_BITS == 0 && !bitmap_word(map, i / K_LONG_BITS))
				i += K_LONG_BITS;
			else
				i++;
			continue;
		}
		lo = i;
		while (i < nbits && bitmap_bit(map, i))
			i++;
		if (!first)
			sink_putc(s, ',');
		first = false;
		knumber(s, (unsigned long long)lo, 10, d);
		if (i - 1 != lo) {
			sink_putc(s, '-');
			knumber(s, (unsigned long long)(i - 1), 10, d);
		}
	}
}

static uint32_t swab32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | v << 24;
}

/*
 * %p4c[c|h|hR|l|b]: four characters and the code in hex (V4L2/DRM pixel
 * formats for c). The code is read in host order (h), reversed host order
 * (hR), little- or big-endian (l, b). Linux 6.16 renamed the reversed
 * order from %p4cn to %p4chR; the old spelling still reads the same.
 */
static void k_fourcc(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	char out[sizeof("0123 little-endian (0x01234567)")];
	struct sink t = {out, sizeof(out) - 1, 0, 0, true};
	bool le = true, pixel = ext[2] == 'c';
	uint32_t orig, val;
	int i;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	le = false;
#endif
	if (ext[1] != 'c') {
		kerror(s, "(%p4?)", k);
		return;
	}
	if (!kcheck(s, ptr, k))
		return;
	memcpy(&orig, ptr, sizeof(orig));
	switch (ext[2]) {
	case 'h':
		if (ext[3] == 'R')
			orig = swab32(orig);
		break;
	case 'c':
		break;
	case 'n':
		orig = swab32(orig);
		break;
	case 'l':
		orig = le ? orig : swab32(orig);
		break;
	case 'b':
		orig = le ? swab32(orig) : orig;
		break;
	default:
		kerror(s, "(%p4?)", k);
		return;
	}
	val = pixel ? swab32(orig & ~(1u << 31)) : orig;
	for (i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(val >> ((3 - i) * 8));

		sink_putc(&t, c >= 0x20 && c < 0x7f ? (char)c : '.');
	}
	if (pixel) {
		if (orig & (1u << 31))
			sink_put(&t, " big-endian", 11);
		else
			sink_put(&t, " little-endian", 14);
	}
	sink_put(&t, " (", 2);
	kspecial_hex(&t, orig, 4);
	sink_putc(&t, ')');
	kstring(s, out, t.len, k);
}

/* The first nine fields of the kernel's struct rtc_time, as in a struct tm. */
struct k_rtc {
	int sec, min, hour, mday, mon, year, wday, yday, isdst;
};

/* Days since 1970-01-01 to a proleptic Gregorian date (year - 1900, month 0-11). */
static void civil_from_days(long long z, struct k_rtc *tm)
{
	long long era, doe, yoe, doy, mp, y;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	y = yoe + era * 400 + (mp >= 10);
	tm->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	tm->mon = (int)(mp < 10 ? mp + 2 : mp - 10);
	tm->year = (int)(y - 1900);
}

/* %pt[RT][dt][rs]: ISO 8601 date and time; r: the fields as stored; s: ' ' for 'T'. */
static void k_time(struct sink *s, const void *ptr, const char *ext, const struct kspec *k)
{
	struct kspec d2 = {K_ZEROPAD, 2, -1}, d4 = {K_ZEROPAD, 4, -1};
	bool have_d = true, have_t = true, raw = false, iso = true;
	struct k_rtc tm;
	size_t i = 2;

	if (!kcheck(s, ptr, k))
		return;
	if (ext[1] == 'R') {
		memcpy(&tm, ptr, sizeof(tm));
	} else {
		int64_t t;
		long long days, secs;

		memcpy(&t, ptr, sizeof(t));
		days = t / 86400;
		secs = t % 86400;
		if (secs < 0) {
			secs += 86400;
			days--;
		}
		civil_from_days(days, &tm);
		tm.hour = (int)(secs / 3600);
		tm.min = (int)(secs / 60 % 60);
		tm.sec = (int)(secs % 60);
	}
	if (ext[i] == 'd') {
		have_t = false;
		i++;
	} else if (ext[i] == 't') {
		have_d = false;
		i++;
	}
	for (;; i++) {
		if (ext[i] == 'r')
			raw = true;
		else if (ext[i] == 's')
			iso = false;
		else
			break;
	}
	if (have_d) {
		knumber(s, (unsigned long long)(long long)(tm.year + (raw ? 0 : 1900)), 10, d4);
		sink_putc(s, '-');
		knumber(s, (unsigned long long)(long long)(tm.mon + (raw ? 0 : 1)), 10, d2);
		sink_putc(s, '-');
		knumber(s, (unsigned long long)(long long)tm.mday, 10, d2);
	}
	if (have_d && have_t)
		sink_putc(s, iso ? 'T' : ' ');
	if (have_t) {
		knumber(s, (unsigned long long)(long long)tm.hour, 10, d2);
		sink_putc(s, ':');
		knumber(s, (unsigned long long)(long long)tm.min, 10, d2);
		sink_putc(s, ':');
		knumber(s, (unsigned long long)(long long)tm.sec, 10, d2);
	}
}

/* %pra: a struct range of two u64, "[range 0x...-0x...]" (one number if equal). */
static void k_range(struct sink *s, const void *ptr, const struct kspec *k)
{
	char out[sizeof("[range 0x0123456789abcdef-0x0123456789abcdef]")];
	struct sink t = {out, sizeof(out) - 1, 0, 0, true};
	uint64_t r[2];

	if (!kcheck(s, ptr, k))
		return;
	memcpy(r, ptr, sizeof(r));
	sink_put(&t, "[range ", 7);
	kspecial_hex(&t, r[0], 8);
	if (r[0] != r[1]) {
		sink_putc(&t, '-');
		kspecial_hex(&t, r[1], 8);
	}
	sink_putc(&t, ']');
	kstring(s, out, t.len, k);
}

/* ---- symbols ---- */

/*
 * The kernel's symbol_string(): %pS "name+0xoff/0xsize [object]", %ps the
 * name alone, %pB a return address (looked up one byte back), %pSR the
 * same as %pS (return addresses need no unmangling on x86-64 or aarch64).
 * An address no symbol holds prints as a kernel without kallsyms prints
 * every one: the hexadecimal address.
 */
static PK_NOINLINE void k_symbol(struct sink *s, void *ptr, const char *ext, const struct kspec *k)
{
	char sym[PK_KSYM_SYMBOL_LEN];
	int n = pk_sprint_symbol(sym, sizeof(sym), (uintptr_t)ptr, ext[0] != 's', ext[0] == 'B');

	if (n < 0) {
		kspecial_hex(s, (uintptr_t)ptr, (int)sizeof(void *));
		return;
	}
	kstring(s, sym, strnlen(sym, sizeof(sym)), k);
}

/* ---- the dispatcher ---- */

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

/*
 * The kernel's pointer(): @ext points just past the 'p'. Returns the format
 * position after every letter and digit that follows (the kernel skips them
 * all, known or not).
 */
static PK_NOINLINE const char *kernel_pointer(struct sink *s, const struct spec *sp, void *ptr,
					      const char *ext, int depth)
{
	struct kspec k = kspec_of(sp, 0);

	switch (ext[0]) {
	case 'S':
	case 's':
	case 'B':
		k_symbol(s, ptr, ext, &k);
		break;
	case 'h':
		k_hex_string(s, ptr, ext, &k);
		break;
	case 'M':
	case 'm':
		k_mac(s, ptr, ext, &k);
		break;
	case 'I':
	case 'i':
		k_ip(s, ptr, ext, &k);
		break;
	case 'E':
		k_escaped(s, ptr, ext, &k);
		break;
	case 'U':
		k_uuid(s, ptr, ext, &k);
		break;
	case 'V': {
		const struct va_format *vaf = ptr;

		if (!kcheck(s, vaf, &k) || depth >= PK_VSPRINTF_MAX_DEPTH)
			break;
		if (!vaf->fmt || !vaf->va)
			kerror(s, "(null)", &k);
		else if (bad_pointer(vaf->fmt) || bad_pointer(vaf->va))
			kerror(s, "(efault)", &k);
		else
			(void)format_into(s, vaf->fmt, *vaf->va, depth + 1);
		break;
	}
	case 'a': {
		uintptr_t v;

		/* phys_addr_t and dma_addr_t are as wide as a pointer here. */
		if (!kcheck(s, ptr, &k))
			break;
		memcpy(&v, ptr, sizeof(v));
		kspecial_hex(s, v, (int)sizeof(v));
		break;
	}
	case 'x':
		kpointer_string(s, (uintptr_t)ptr, k);
		break;
	case 'e':
		if (k_is_err(ptr))
			k_err_ptr(s, ptr, &k);
		else
			kdefault_pointer(s, ptr, &k);
		break;
	case 'u':
	case 'k':
		if (ext[1] != 's')
			kerror(s, "(einval)", &k);
		else if (kcheck(s, ptr, &k))
			kstring(s, ptr, k.prec < 0 ? strlen(ptr) : strnlen(ptr, (size_t)k.prec),
				&k);
		break;
	case 'A':
		kerror(s, "(%pA?)", &k);
		break;
	case 'f':
		if (ext[1] != 'w') {
			kerror(s, "(%pf?)", &k);
			break;
		}
		if (kcheck(s, ptr, &k))
			kdefault_pointer(s, ptr, &k);
		break;
	case 'N': {
		uint64_t v;

		if (!kcheck(s, ptr, &k))
			break;
		if (ext[1] != 'F') {
			kerror(s, "(%pN?)", &k);
			break;
		}
		memcpy(&v, ptr, sizeof(v));
		kspecial_hex(s, v, (int)sizeof(v));
		break;
	}
	case 't':
		if (ext[1] != 'R' && ext[1] != 'T')
			kerror(s, "(%pt?)", &k);
		else
			k_time(s, ptr, ext, &k);
		break;
	case '4':
		k_fourcc(s, ptr, ext, &k);
		break;
	case 'b':
		if (ext[1] == 'l')
			k_bitmap_list(s, ptr, &k);
		else
			k_bitmap(s, ptr, &k);
		break;
	case 'r':
		if (ext[1] == 'a') {
			k_range(s, ptr, &k);
			break;
		}
		/* fall through */
	case 'R':
	case 'd':
	case 'D':
	case 'g':
	case 'G':
		/*
		 * Kernel objects a process does not have (resources, dentries,
		 * files, block devices, page and GFP flags): the kernel checks
		 * the pointer before it reads the object, so NULL and invalid
		 * pointers print as there; a valid one prints as plain %p.
		 */
		if (kcheck(s, ptr, &k))
			kdefault_pointer(s, ptr, &k);
		break;
	default:
		/* %pK (kptr_restrict 0), unknown letters, and the kernel-object ones. */
		kdefault_pointer(s, ptr, &k);
		break;
	}
	while (k_isalnum((unsigned char)*ext))
		ext++;
	return ext;
}

/* ------------------------------------------------------------------------
 * The driver
 */

enum { RUN_OK = 0, RUN_ERROR = -1, RUN_POSITIONAL = -2 };

static int format_into(struct sink *s, const char *fmt, va_list ap, int depth);

/* The conversions common enough to bypass parse_spec when written bare. */
static inline bool simple_conv(char c)
{
	switch (c) {
	case 'd':
	case 'i':
	case 'u':
	case 'x':
	case 'X':
	case 's':
	case 'c':
	case 'p':
	case 'f':
	case 'g':
	case 'e':
		return true;
	default:
		return false;
	}
}

/*
 * glibc formats conversions in a fast loop until it meets one it leaves to
 * its positional code, which then handles the rest of the format: a
 * numbered argument, an unknown conversion, or a single 'h' on anything
 * but an integer, %n or %%. Two visible things change from there on: a
 * format ending inside a conversion is printed instead of failing, and a
 * negative "*" width keeps the 0 flag (printf_fp then pads on the right
 * with zeros, printf_fphex not at all). Mirrored for identical output.
 */
static bool glibc_slow_spec(const struct spec *sp)
{
	switch (sp->conv) {
	case 'd':
	case 'i':
	case 'o':
	case 'u':
	case 'x':
	case 'X':
	case 'b':
	case 'B':
	case 'n':
	case '%':
	case '\0':
		return false;
	case 'e':
	case 'E':
	case 'f':
	case 'F':
	case 'g':
	case 'G':
	case 'a':
	case 'A':
	case 'c':
	case 'C':
	case 's':
	case 'S':
	case 'p':
	case 'm':
		return sp->lm == LM_SHORT;
	default:
		return true;
	}
}

static inline void bare_spec(struct spec *sp, char conv, unsigned int lm)
{
	sp->flags = 0;
	sp->lm = lm;
	sp->width = 0;
	sp->prec = -1;
	sp->warg = ARG_NONE;
	sp->parg = ARG_NONE;
	sp->darg = ARG_NEXT;
	sp->conv = conv;
}

/* glibc's printf_unknown: the conversion re-spelled from what was parsed. */
static void put_unknown(struct sink *s, const struct spec *sp)
{
	char tmp[40];
	char *end, *p;
	size_t n = 0;

	tmp[n++] = '%';
	if (sp->flags & F_HASH)
		tmp[n++] = '#';
	if (sp->flags & F_QUOTE)
		tmp[n++] = '\'';
	if (sp->flags & F_PLUS)
		tmp[n++] = '+';
	else if (sp->flags & F_SPACE)
		tmp[n++] = ' ';
	if (sp->flags & F_MINUS)
		tmp[n++] = '-';
	if (sp->flags & F_ZERO)
		tmp[n++] = '0';
	if (sp->flags & F_I18N)
		tmp[n++] = 'I';
	sink_put(s, tmp, n);
	end = tmp + sizeof(tmp);
	if (sp->width) {
		p = u_to_dec(end, sp->width);
		sink_put(s, p, (size_t)(end - p));
	}
	if (sp->prec >= 0) {
		p = u_to_dec(end, (unsigned long long)sp->prec);
		*--p = '.';
		sink_put(s, p, (size_t)(end - p));
	}
	if (sp->conv)
		sink_putc(s, sp->conv);
}

/*
 * Formats fmt into s. In sequential mode (a->pos == NULL) returns
 * RUN_POSITIONAL as soon as a conversion numbers its arguments, before
 * consuming anything for it, so the caller can start over.
 */
PK_HOT static int run(struct sink *s, const char *fmt, struct fargs *a, int depth)
{
	const char *f = fmt;
	/* Has glibc left its fast path for its positional code? (glibc_slow_spec) */
	bool slow = false;

	for (;;) {
		const char *pct = strchrnul(f, '%');
		const char *next;
		struct spec sp;
		bool positional = false;

		if (pct != f)
			sink_put(s, f, (size_t)(pct - f));
		if (!*pct)
			return RUN_OK;

		/* No flags, width, precision or length but 'l': skip the parser. */
		if (PK_LIKELY(simple_conv(pct[1]))) {
			bare_spec(&sp, pct[1], 0);
			next = pct + 2;
			goto convert;
		}
		if (pct[1] == 'l' && simple_conv(pct[2])) {
			bare_spec(&sp, pct[2], LM_LONG);
			next = pct + 3;
			goto convert;
		}

		next = parse_spec(pct + 1, &sp, &positional, s->kernel);
		if (PK_UNLIKELY(!next))
			return RUN_ERROR;
		if (PK_UNLIKELY(positional && !a->pos))
			return RUN_POSITIONAL;
		if (PK_UNLIKELY(positional || glibc_slow_spec(&sp)))
			slow = true;

		if (PK_UNLIKELY(sp.warg != ARG_NONE)) {
			int w = arg_int(a, sp.warg);

			if (w < 0) {
				sp.flags |= F_MINUS;
				if (!slow)
					sp.flags &= ~(unsigned int)F_ZERO;
				sp.width = 0u - (unsigned int)w;
			} else {
				sp.width = (unsigned int)w;
			}
		}
		if (PK_UNLIKELY(sp.parg != ARG_NONE)) {
			int pr = arg_int(a, sp.parg);

			/* C: as if none was given; the kernel: 0 (set_precision()) */
			sp.prec = pr >= 0 ? pr : s->kernel ? 0 : -1;
		}
		if (PK_UNLIKELY(s->kernel)) {
			if (sp.width > KERNEL_WIDTH_MAX)
				sp.width = KERNEL_WIDTH_MAX;
			if (sp.prec > KERNEL_PREC_MAX)
				sp.prec = KERNEL_PREC_MAX;
		}
convert:
		switch (sp.conv) {
		case 'd':
		case 'i': {
			long long x;

			if (sp.lm & (LM_LONG | LM_LLONG)) {
				x = arg_slong(a, sp.darg, sp.lm);
			} else {
				int i = arg_int(a, sp.darg);

				if (sp.lm & LM_CHAR)
					x = (signed char)i;
				else if (sp.lm & LM_SHORT)
					x = (short)i;
				else
					x = i;
			}
			if (PK_UNLIKELY(s->kernel) && !bare_kspec(&sp))
				knumber(s, (unsigned long long)x, 10, kspec_of(&sp, K_SIGN));
			else
				fmt_integer(s, &sp,
					    x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x,
					    x < 0);
			break;
		}
		case 'u':
		case 'o':
		case 'x':
		case 'X':
		case 'b':
		case 'B': {
			unsigned long long x;

			if (sp.lm & (LM_LONG | LM_LLONG)) {
				x = arg_ulong(a, sp.darg, sp.lm);
			} else {
				unsigned int u = arg_uint(a, sp.darg);

				if (sp.lm & LM_CHAR)
					x = (unsigned char)u;
				else if (sp.lm & LM_SHORT)
					x = (unsigned short)u;
				else
					x = u;
			}
			if (PK_UNLIKELY(s->kernel) && !bare_kspec(&sp) && sp.conv != 'b' &&
			    sp.conv != 'B')
				knumber(s, x, sp.conv == 'u' ? 10 : sp.conv == 'o' ? 8 : 16,
					kspec_of(&sp, sp.conv == 'X' ? K_UPPER : 0));
			else
				fmt_integer(s, &sp, x, false);
			break;
		}
		case 's':
			if (sp.lm & LM_LONG) {
				fmt_wstring(s, &sp, arg_ptr(a, sp.darg));
			} else {
				const char *str = arg_ptr(a, sp.darg);
				size_t n;

				if (PK_UNLIKELY(bad_pointer(str))) {
					put_efault(s, &sp);
					break;
				}
				if (!str) {
					if (PK_UNLIKELY(s->kernel)) {
						struct kspec k = kspec_of(&sp, 0);

						kerror(s, "(null)", &k);
						break;
					}
					str = null_string(sp.prec);
				}
				n = sp.prec < 0 ? strlen(str) : strnlen(str, (size_t)sp.prec);
				if (PK_LIKELY(sp.width == 0))
					sink_put(s, str, n);
				else
					put_field(s, &sp, str, n);
			}
			break;
		case 'S':
			fmt_wstring(s, &sp, arg_ptr(a, sp.darg));
			break;
		case 'c':
		case 'C':
			if (sp.conv == 'C' || (sp.lm & LM_LONG)) {
				char tmp[4];

				put_field(s, &sp, tmp,
					  utf8_encode(tmp, (uint32_t)arg_wint(a, sp.darg)));
			} else {
				char ch = (char)(unsigned char)arg_int(a, sp.darg);

				put_field(s, &sp, &ch, 1);
			}
			break;
		case 'p': {
			void *ptr = arg_ptr(a, sp.darg);

			if (PK_UNLIKELY(s->kernel)) {
				next = kernel_pointer(s, &sp, ptr, next, depth);
			} else if (*next == 'V') {
				/* Kernel extension: a struct va_format to expand in place. */
				const struct va_format *vaf = ptr;

				next++;
				if (!vaf)
					put_field(s, &sp, "(null)", 6);
				else if (bad_pointer(vaf))
					put_efault(s, &sp);
				else if (depth < PK_VSPRINTF_MAX_DEPTH) {
					if (!vaf->fmt || !vaf->va)
						put_field(s, &sp, "(null)", 6);
					else if (bad_pointer(vaf->fmt) || bad_pointer(vaf->va))
						put_efault(s, &sp);
					else
						(void)format_into(s, vaf->fmt, *vaf->va, depth + 1);
				}
			} else if (!ptr) {
				put_field(s, &sp, "(nil)", 5);
			} else {
				fmt_integer(s, &sp, (unsigned long long)(uintptr_t)ptr, false);
			}
			break;
		}
		case 'n':
			/*
			 * The kernel refuses %n and, unable to tell what its
			 * argument was, ends the output there. C: consumed but
			 * never written through (an attack vector).
			 */
			if (PK_UNLIKELY(s->kernel))
				return RUN_OK;
			(void)arg_ptr(a, sp.darg);
			break;
		case 'm':
			fmt_errno(s, &sp, errno);
			break;
		case '%':
			sink_putc(s, '%');
			break;
		case 'f':
		case 'F':
		case 'e':
		case 'E':
		case 'g':
		case 'G':
		case 'a':
		case 'A':
			if (sp.lm & LM_LLONG)
				fmt_ldouble(s, &sp, arg_ldouble(a, sp.darg));
			else
				fmt_double(s, &sp, arg_double(a, sp.darg));
			break;
		case '\0':
			if (!slow || s->kernel)
				return RUN_ERROR; /* glibc: EINVAL; the kernel ends there */
			put_unknown(s, &sp);
			return RUN_OK;
		default:
			/* The kernel ends its output at a conversion it does not know. */
			if (PK_UNLIKELY(s->kernel))
				return RUN_OK;
			put_unknown(s, &sp);
			break;
		}
		if (PK_UNLIKELY(s->len >= LEN_LIMIT))
			return RUN_ERROR; /* glibc: EOVERFLOW */
		f = next;
	}
}

/* Records the type of every numbered or sequential argument; -1 if too many. */
static int prescan(const char *f, unsigned char *types, int *nargs, bool saturate)
{
	int next = 0, max = 0;

	for (;;) {
		struct spec sp;
		bool positional = false;
		int refs[3], i;
		enum arg_type ts[3];

		f = strchrnul(f, '%');
		if (!*f)
			break;
		f = parse_spec(f + 1, &sp, &positional, saturate);
		if (!f)
			return -1;
		refs[0] = sp.warg;
		ts[0] = T_INT;
		refs[1] = sp.parg;
		ts[1] = T_INT;
		ts[2] = data_type(&sp);
		refs[2] = ts[2] == T_NONE ? ARG_NONE : sp.darg;
		for (i = 0; i < 3; i++) {
			int idx;

			if (refs[i] == ARG_NONE)
				continue;
			idx = refs[i] >= 0 ? refs[i] : next++;
			if (idx >= PK_VSPRINTF_MAX_POSITIONAL)
				return -1;
			types[idx] = (unsigned char)ts[i]; /* the last use wins, as in glibc */
			if (idx + 1 > max)
				max = idx + 1;
		}
		if (!sp.conv)
			break;
	}
	*nargs = max;
	return 0;
}

/*
 * The sequential run stopped at the first numbered conversion, its output
 * so far in s: it stays there if the arguments cannot be loaded, so the
 * kernel-semantics callers keep the text before the failure.
 */
static PK_NOINLINE int run_positional(struct sink *s, size_t start, const char *fmt, va_list ap,
				      int depth)
{
	union argval vals[PK_VSPRINTF_MAX_POSITIONAL];
	unsigned char types[PK_VSPRINTF_MAX_POSITIONAL];
	struct fargs a;
	int nargs, i;

	memset(types, T_INT, sizeof(types));
	if (prescan(fmt, types, &nargs, s->kernel) < 0)
		return RUN_ERROR;
	/* Start over with every argument loaded; output is rewritten identically. */
	s->len = start;
	/*
	 * An argument is loaded with the type of its last use: one used as
	 * both a pointer and a long double would show bytes never written.
	 * Zeroed, the output is the same from call to call.
	 */
	memset(vals, 0, (size_t)nargs * sizeof(vals[0]));
	va_copy(a.ap, ap);
	for (i = 0; i < nargs; i++) {
		switch (types[i]) {
		case T_INT:
			vals[i].ull = (unsigned long long)(long long)va_arg(a.ap, int);
			break;
		case T_UINT:
			vals[i].ull = va_arg(a.ap, unsigned int);
			break;
		case T_LONG:
			vals[i].ull = (unsigned long long)(long long)va_arg(a.ap, long);
			break;
		case T_ULONG:
			vals[i].ull = va_arg(a.ap, unsigned long);
			break;
		case T_LLONG:
			vals[i].ull = (unsigned long long)va_arg(a.ap, long long);
			break;
		case T_ULLONG:
			vals[i].ull = va_arg(a.ap, unsigned long long);
			break;
		case T_WINT:
			vals[i].ull = va_arg(a.ap, wint_t);
			break;
		case T_PTR:
			vals[i].p = va_arg(a.ap, void *);
			break;
		case T_DOUBLE:
			vals[i].d = va_arg(a.ap, double);
			break;
		default:
			vals[i].ld = va_arg(a.ap, long double);
			break;
		}
	}
	va_end(a.ap);
	a.pos = vals;
	a.next = 0;
	return run(s, fmt, &a, depth);
}

/* Never consumes ap itself: the caller's (or a %pV's) list stays intact. */
PK_HOT static int format_into(struct sink *s, const char *fmt, va_list ap, int depth)
{
	size_t start = s->len;
	struct fargs a;
	int r;

	va_copy(a.ap, ap);
	a.pos = NULL;
	a.next = 0;
	r = run(s, fmt, &a, depth);
	va_end(a.ap);
	if (PK_UNLIKELY(r == RUN_POSITIONAL))
		r = run_positional(s, start, fmt, ap, depth);
	return r;
}

/*
 * C99 (kernel false): -1 for a malformed format or an output longer than
 * INT_MAX. Kernel semantics (kernel true): widths and precisions clamped,
 * never -1: a malformed conversion ends the output where it stands (the
 * kernel stops at an invalid conversion too), and a longer output reports
 * INT_MAX.
 */
static int do_format(char *buf, size_t size, const char *fmt, va_list ap, size_t *stored,
		     char *last, bool kernel)
{
	struct sink s;
	int r;

	s.buf = buf;
	s.cap = size ? size - 1 : 0;
	s.len = 0;
	s.last = 0;
	s.kernel = kernel;
	r = format_into(&s, fmt, ap, 0);
	if (last)
		*last = s.len ? s.last : 0;
	*stored = s.len < s.cap ? s.len : s.cap;
	if (size)
		buf[*stored] = '\0';
	if (kernel)
		return s.len > INT_MAX ? INT_MAX : (int)s.len;
	if (r < 0 || s.len > INT_MAX)
		return -1;
	return (int)s.len;
}

int pk_fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t stored;

	return do_format(buf, size, fmt, ap, &stored, NULL, false);
}

int pk_fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r;
}

PK_HOT int pk_vsnprintf_last(char *buf, size_t size, char *last, const char *fmt, va_list ap)
{
	size_t stored;

	return do_format(buf, size, fmt, ap, &stored, last, true);
}

/*
 * The kernel's string functions (lib/vsprintf.c): a size above INT_MAX is
 * a caller's bug the kernel WARNs about and answers with 0, writing
 * nothing; sprintf is snprintf with INT_MAX for the size.
 */
int pk_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t stored;

	if (size > INT_MAX)
		return 0;
	return do_format(buf, size, fmt, ap, &stored, NULL, true);
}

int pk_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r;
}

int pk_vscnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t stored;

	if (size > INT_MAX)
		return 0;
	(void)do_format(buf, size, fmt, ap, &stored, NULL, true);
	return (int)stored;
}

int pk_scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_vscnprintf(buf, size, fmt, ap);
	va_end(ap);
	return r;
}

int pk_vsprintf(char *buf, const char *fmt, va_list ap)
{
	return pk_vsnprintf(buf, INT_MAX, fmt, ap);
}

int pk_sprintf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pk_vsnprintf(buf, INT_MAX, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * The kernel's kvasprintf(): measure, allocate, format. The gfp flags say
 * whether the kernel's allocator may sleep; malloc has no such choice, so
 * they are accepted and ignored.
 */
char *pk_kvasprintf(pk_gfp_t gfp, const char *fmt, va_list ap)
{
	va_list aq;
	size_t stored;
	char *p;
	int n;

	(void)gfp;
	va_copy(aq, ap);
	n = do_format(NULL, 0, fmt, aq, &stored, NULL, true);
	va_end(aq);
	if (n >= INT_MAX)
		return NULL;
	p = malloc((size_t)n + 1);
	if (!p)
		return NULL;
	(void)do_format(p, (size_t)n + 1, fmt, ap, &stored, NULL, true);
	return p;
}

char *pk_kasprintf(pk_gfp_t gfp, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = pk_kvasprintf(gfp, fmt, ap);
	va_end(ap);
	return p;
}

void pk_kfree(const void *p)
{
	/* The kernel's kfree() ignores NULL and ZERO_SIZE_PTR ((void *)16). */
	if ((uintptr_t)p > 16)
		free((void *)(uintptr_t)p);
}
