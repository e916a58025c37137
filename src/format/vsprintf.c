// SPDX-License-Identifier: MIT
/*
 * vsprintf.c - libprintk's own vsnprintf: the printf core and driver.
 *
 * Owns: the entry points (the private pk_fmt_snprintf and
 * pk_vsnprintf_last, the public functions of <printk/sprintf.h>), the
 * walk over a format (conversion parsing, arguments in sequence or by
 * number, %pV's recursion), integers, strings, characters and %m. The
 * floating point layouts are vsprintf_fp.c's, the kernel's other %p
 * extensions and number() vsprintf_kernel.c's; what the three share is
 * vsprintf_impl.h.
 *
 * Together they do all formatting done by the library, in two modes: the
 * kernel's (printk, pk_panic and the public string functions of
 * <printk/sprintf.h>: lib/vsprintf.c's precisions, number layout and %p
 * extensions) and C99's (pk_fmt_snprintf, for the library's own text:
 * glibc's output, byte for byte). The modes share everything the two agree
 * on. The formatter must stay usable from a signal handler, so:
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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strchrnul, strerrordesc_np, strerrorname_np */
#endif

#include "base/hints.h"
#include "format/vsprintf.h"
#include "format/vsprintf_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#define PK_HAVE_STRERRORDESC 1
#else
#define PK_HAVE_STRERRORDESC 0
#endif


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
 * The driver
 */

enum { RUN_OK = 0, RUN_ERROR = -1, RUN_POSITIONAL = -2 };

static int format_into(struct sink *s, const char *fmt, va_list ap, int depth);

/*
 * The kernel's %pV: @ext points at the 'V'. Here rather than with the other
 * extensions because it formats recursively. Returns the format position
 * after the letters and digits that follow.
 */
static const char *kernel_va_format(struct sink *s, const struct spec *sp, const void *ptr,
				    const char *ext, int depth)
{
	const struct va_format *vaf = ptr;
	struct kspec k = kspec_of(sp, 0);

	if (pk_kcheck(s, vaf, &k) && depth < PK_VSPRINTF_MAX_DEPTH) {
		if (!vaf->fmt || !vaf->va)
			pk_kerror(s, "(null)", &k);
		else if (bad_pointer(vaf->fmt) || bad_pointer(vaf->va))
			pk_kerror(s, "(efault)", &k);
		else
			(void)format_into(s, vaf->fmt, *vaf->va, depth + 1);
	}
	while (k_isalnum((unsigned char)*ext))
		ext++;
	return ext;
}

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
				pk_knumber(s, (unsigned long long)x, 10, kspec_of(&sp, K_SIGN));
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
				pk_knumber(s, x, sp.conv == 'u' ? 10 : sp.conv == 'o' ? 8 : 16,
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

						pk_kerror(s, "(null)", &k);
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
				next = *next == 'V' ? kernel_va_format(s, &sp, ptr, next, depth)
						    : pk_kernel_pointer(s, &sp, ptr, next);
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
				pk_fmt_ldouble(s, &sp, arg_ldouble(a, sp.darg));
			else
				pk_fmt_double(s, &sp, arg_double(a, sp.darg));
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
	int n, saved;

	(void)gfp;
	va_copy(aq, ap);
	n = do_format(NULL, 0, fmt, aq, &stored, NULL, true);
	va_end(aq);
	if (n >= INT_MAX)
		return NULL;
	/* %m must read the same errno in both passes: malloc may write it. */
	saved = errno;
	p = malloc((size_t)n + 1);
	if (!p)
		return NULL;
	errno = saved;
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

