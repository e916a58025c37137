// SPDX-License-Identifier: MIT
/*
 * vsprintf_fp.c - the formatter's floating point: %f %F %e %E %g %G %a %A.
 *
 * Owns: the exact conversion of a double or an x87 long double to decimal
 * and its layouts, byte for byte as glibc prints them in the C locale
 * (rounding to nearest, ties to even, whatever fesetround() says). Called
 * by the driver in vsprintf.c through vsprintf_impl.h; both semantics
 * print floating point alike (the kernel has none: docs/kernel-compat.md,
 * section 16.3).
 *
 * The significand is split into an integer part, kept as base-10^9 limbs,
 * and a binary fraction that yields nine decimal digits per multiplication
 * by 10^9. A first pass walks the digits to decide the rounding (ties to
 * even, on the exact value); a second pass regenerates them while writing,
 * so even a 16000-digit long double needs no digit buffer. Stack: 1 KiB of
 * limbs for a double, 3 KiB for a long double; no allocation, no state.
 */
#include "format/vsprintf_impl.h"

#include <float.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

		memcpy(out + i - 1, dec_pair(r), 2);
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
PK_NOINLINE void pk_fmt_double(struct sink *s, const struct spec *sp, double x)
{
	uint32_t work[WORK_DOUBLE];
	struct fpval v;

	fpv_from_double(&v, x);
	fmt_fp(s, sp, &v, work, WORK_DOUBLE);
}

PK_NOINLINE void pk_fmt_ldouble(struct sink *s, const struct spec *sp, long double x)
{
	uint32_t work[WORK_LDOUBLE];
	struct fpval v;

	fpv_from_ldouble(&v, x);
	fmt_fp(s, sp, &v, work, WORK_LDOUBLE);
}

