// SPDX-License-Identifier: MIT
/*
 * deferred.c - deferred records: the format string table, the binary
 * argument encoding and the expansion readers get (through record_read.c:
 * the ring copies a deferred record as bytes and never calls in here).
 *
 * Owns: the format string table that follows a ring's data area (its layout
 * below), this process's cache of which literal sits where in which table,
 * and the encoding of a deferred record's text. The model is the kernel's
 * trace_printk(): vbin_printf() stores the arguments by size, bstr_printf()
 * formats them later (Linux lib/vsprintf.c). Here the later formatting is
 * the same vsprintf.c that printk uses eagerly, called once per conversion
 * with the argument converted back to the type the conversion reads, so the
 * text is byte for byte what eager formatting gives.
 *
 * Table (words of 8 bytes, shared with every process mapping the log):
 *   word 0     bytes of entries handed out (fetch_add; may run past the end:
 *              the writer that sees it past gives up)
 *   word 1     messages formatted eagerly because the table was full
 *   words 2-7  zero
 *   from 64    entries, each 8-aligned: a header word, then the format's
 *              bytes, padded with zeros to whole words.
 * Entry header: magic:16 | length:16 | check:32, the check mixing the
 * entry's offset, length and words (padding included) a word at a time
 * (multiply-xorshift, as MurmurHash3's finalizer). The writer stores the
 * bytes first and the header last (release): a writer killed in between leaves a zero
 * header, which no reader accepts, and no record refers to it (the record
 * is stored after the entry). A record's blob starts with the reference:
 * offset:32 | check:32; a reader takes the entry only if its header's check
 * equals the reference's and the bytes hash to it.
 *
 * Record blob (the ring record's text, at most PK_TEXT_MAX bytes):
 *   reference (8 bytes), then per conversion, in format order: a '*' width
 *   (4 bytes), a '*' precision (4), and the value: 4 bytes for what is read
 *   as int (%c, %d without length, hh, h), 8 for long and long long (and
 *   z, t, j as their size says), 8 for a double, and for %s a 2-byte length
 *   and the bytes. All little or native endian as the writer's: a log is
 *   read on the machine kind that wrote it (the ring checks its byte order).
 *
 * Process-local: the cache (below), one slot per literal and log, holding
 * the literal compiled once (headers parsed, conversions walked) and its
 * entry's reference; and the pool of call sites' compiled literals (struct
 * pk_sfmt, one per pr_*() call site that ran, pointed to by the site's
 * format slot, set once, never freed: "per-call-site forms" below), which
 * spare a site's later calls the cache's lookup and the general walk. A
 * bulk reader may also have caches of its own (struct
 * pk_dfmt_cache, one per reading thread): entries it copied and parsed
 * once, keyed by reference.
 *
 * Invariants: the writer side never formats; a reader never follows a
 * pointer from the log; every length it reads is checked against what
 * holds it; all shared words are atomics; nothing allocates, locks or
 * waits (async-signal-safe: a thread interrupted while it compiles a slot
 * leaves the literal to be formatted eagerly meanwhile), except a bulk
 * reader's cache, which is allocated and is not for signal handlers.
 */
#include "format/deferred.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <printk/log.h>

#include "base/hints.h"
#include "format/vsprintf.h"
#include "ring/ringbuffer.h"

#define TAB_HDR	       PK_DEFERRED_TAB_HDR
#define PK_SOH	       0x01 /* a level header's first byte (KERN_SOH) */
#define ENTRY_MAGIC    PK_DEFERRED_ENTRY_MAGIC
#define BAD_PTR_LOW    PK_DEFERRED_BAD_PTR_LOW  /* vsprintf.c prints "(efault)" below this, and (null) */
#define BAD_PTR_HIGH   PK_DEFERRED_BAD_PTR_HIGH /* ... and among the top 4095 addresses */
#define CACHE_TABLES   4u
#define CACHE_SLOTS    512u
#define CACHE_PROBES   8u

/* ------------------------------------------------------------ parsing -- */

/* What a conversion's value is read as, by vsprintf.c and by us. */
enum cls { C_INT, C_LONG, C_LLONG, C_DBL, C_STR };

/* struct pk_dop flags. */
#define DOP_STAR_W 0x1 /* a '*' width comes first */
#define DOP_STAR_P 0x2 /* a '*' precision comes next */
#define DOP_CHAR   0x4 /* %c */
#define DOP_FIXED  0x8 /* %f, %F: every digit before the point */
#define DOP_LEAD   0x10 /* at the start of the text, or after leading ones only */

/* deferred.h's inline lane walk reads these by its own names. */
_Static_assert(C_INT == PK_DCLS_INT && C_LONG == PK_DCLS_LONG && C_LLONG == PK_DCLS_LLONG &&
		       C_DBL == PK_DCLS_DBL && DOP_FIXED == PK_DOP_FIXED,
	       "deferred.h's classes are this file's");

struct conv {
	size_t start; /* index of its '%' */
	size_t end;   /* index after the conversion letter */
	bool plain;   /* no flags, width, precision, h or hh: formatted here */
	bool pct;     /* a "%%" lies before it (or, at the end, in the rest) */
	bool star_w, star_p;
	int width;    /* written in the format; 0: none */
	int prec;     /* written in the format; -1: none */
	enum cls cls;
	char letter;
};

static enum cls cls_of_size(size_t sz)
{
	if (sz > sizeof(long))
		return C_LLONG;
	return sz > sizeof(int) ? C_LONG : C_INT;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Up to 4 digits (anything wider cannot fit a record anyway). */
static bool read_small(const char *f, size_t len, size_t *i, int *out)
{
	int v = 0, n = 0;

	while (*i < len && is_digit(f[*i])) {
		if (++n > 4)
			return false;
		v = v * 10 + (f[*i] - '0');
		(*i)++;
	}
	*out = v;
	return true;
}

/*
 * The next conversion of @f (@len bytes) at or after *@pos: 1 and *@c, 0 at
 * the end (no conversion left), -1 for one without a deferral rule. "%%" is
 * literal text. Accepted: flags "-+ #0", a width (digits or '*'), a
 * precision ('.', digits or '*'), a length (hh h l ll j z t) and a letter of
 * "diouxXcs" or, without length or with l, "fFeEgGaA"; %c and %s take no
 * length. Everything else (%p and its extensions, %n, %m, positional
 * arguments, wide characters, long double, glibc's ' and I flags) has none.
 */
static int next_conv(const char *f, size_t len, size_t *pos, struct conv *c)
{
	size_t i = *pos;

	c->pct = false;
	for (;;) {
		const char *q = i < len ? memchr(f + i, '%', len - i) : NULL;

		if (!q) {
			*pos = len;
			return 0;
		}
		i = (size_t)(q - f);
		if (i + 1 < len && f[i + 1] == '%') {
			c->pct = true;
			i += 2;
			continue;
		}
		break;
	}
	c->start = i++;

	size_t flags_at = i;

	while (i < len && (f[i] == '-' || f[i] == '+' || f[i] == ' ' || f[i] == '#' || f[i] == '0'))
		i++;
	c->plain = i == flags_at;
	c->star_w = c->star_p = false;
	c->width = 0;
	c->prec = -1;
	if (i < len && f[i] == '*') {
		c->star_w = true;
		i++;
	} else if (!read_small(f, len, &i, &c->width)) {
		return -1;
	}
	if (i < len && f[i] == '$')
		return -1;
	if (i < len && f[i] == '.') {
		i++;
		if (i < len && f[i] == '*') {
			c->star_p = true;
			i++;
		} else if (i < len && is_digit(f[i])) {
			if (!read_small(f, len, &i, &c->prec))
				return -1;
		} /* printk's rule: a '.' without digits sets no precision ("%.s" is "%s") */
	}

	int lm = 0; /* 0 none, 1 hh/h, 2 l, 3 ll, 4 j, 5 z, 6 t */

	if (i < len && f[i] == 'h') {
		lm = 1;
		i += i + 1 < len && f[i + 1] == 'h' ? 2 : 1;
	} else if (i < len && f[i] == 'l') {
		lm = 2;
		if (i + 1 < len && f[i + 1] == 'l') {
			lm = 3;
			i++;
		}
		i++;
	} else if (i < len && f[i] == 'j') {
		lm = 4;
		i++;
	} else if (i < len && f[i] == 'z') {
		lm = 5;
		i++;
	} else if (i < len && f[i] == 't') {
		lm = 6;
		i++;
	}
	if (i >= len)
		return -1;

	char l = f[i++];

	c->plain = c->plain && !c->star_w && !c->star_p && c->width == 0 && c->prec < 0 && lm != 1;
	c->letter = l;
	c->end = i;
	*pos = i;
	switch (l) {
	case 'd':
	case 'i':
	case 'o':
	case 'u':
	case 'x':
	case 'X':
		switch (lm) {
		case 2:
			c->cls = C_LONG;
			break;
		case 3:
			c->cls = C_LLONG;
			break;
		case 4:
			c->cls = cls_of_size(sizeof(intmax_t));
			break;
		case 5:
			c->cls = cls_of_size(sizeof(size_t));
			break;
		case 6:
			c->cls = cls_of_size(sizeof(ptrdiff_t));
			break;
		default:
			c->cls = C_INT;
		}
		return 1;
	case 'c':
		if (lm)
			return -1;
		c->cls = C_INT;
		return 1;
	case 's':
		if (lm)
			return -1;
		c->cls = C_STR;
		return 1;
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
	case 'a':
	case 'A':
		if (lm != 0 && lm != 2)
			return -1;
		c->cls = C_DBL;
		return 1;
	default:
		return -1;
	}
}

/* ------------------------------------------------------------- table -- */

/* The check of an entry: its offset, length and words (the padding after
 * its bytes, zeros, included), mixed a word at a time. */
static inline uint64_t check_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 32);
}

static inline uint32_t check_done(uint64_t h)
{
	h = (h ^ (h >> 29)) * UINT64_C(0xc4ceb9fe1a85ec53);

	uint32_t c = (uint32_t)(h >> 32);

	return c ? c : 1;
}

static inline uint64_t check_begin(uint32_t off, size_t len)
{
	return UINT64_C(0x9e3779b97f4a7c15) ^ off ^ (uint64_t)len << 32;
}

static uint64_t entry_header(size_t len, uint32_t check)
{
	return pk_deferred_entry_header(len, check);
}

/*
 * Copy the entry at @off of @rb's table to @out (room for
 * PK_DEFERRED_FMT_MAX bytes rounded up to whole words) if it validates
 * against @check. Returns its length or -1.
 */
static int entry_read(const struct prb *rb, uint32_t off, uint32_t check, char *out)
{
	if (off < TAB_HDR || off % 8 || (uint64_t)off + 8 > rb->strtab_size)
		return -1;

	pk_a64 *w = rb->strtab + off / 8;
	uint64_t hdr = pk_load_acquire(&w[0]);
	size_t len = (hdr >> 16) & 0xffff;

	if ((hdr & 0xffff) != ENTRY_MAGIC || (uint32_t)(hdr >> 32) != check ||
	    len > PK_DEFERRED_FMT_MAX || (uint64_t)off + 8 + len > rb->strtab_size)
		return -1;
	uint64_t h = check_begin(off, len);

	for (size_t i = 0; i < (len + 7) / 8; i++) {
		uint64_t v = pk_load_relaxed(&w[1 + i]);

		memcpy(out + 8 * i, &v, 8); /* @out has room for whole words */
		h = check_word(h, v);
	}
	return check_done(h) == check ? (int)len : -1;
}

/* Add @body to @rb's table: its reference, or -ENOSPC (counted). */
static int entry_add(struct prb *rb, const char *body, size_t len, uint64_t *ref)
{
	pk_a64 *t = rb->strtab;
	uint64_t need = 8 + (len + 7) / 8 * 8;
	uint64_t room = rb->strtab_size - TAB_HDR;

	if (pk_load_relaxed(&t[0]) + need > room) {
		pk_fetch_add_relaxed(&t[1], 1);
		return -ENOSPC;
	}

	uint64_t at = pk_fetch_add_relaxed(&t[0], need);

	if (at > room || need > room - at) {
		pk_fetch_add_relaxed(&t[1], 1);
		return -ENOSPC;
	}

	uint32_t off = (uint32_t)(TAB_HDR + at);
	pk_a64 *w = t + off / 8;

	uint64_t h = check_begin(off, len);

	for (size_t i = 0; i < (len + 7) / 8; i++) {
		uint64_t v = 0;
		size_t n = len - 8 * i < 8 ? len - 8 * i : 8;

		memcpy(&v, body + 8 * i, n);
		pk_store_relaxed(&w[1 + i], v);
		h = check_word(h, v);
	}

	uint32_t check = check_done(h);

	pk_store_release(&w[0], entry_header(len, check));
	*ref = off | (uint64_t)check << 32;
	return 0;
}

/* The header the entry @ref names holds now, for a cache hit's check. */
static PK_ALWAYS_INLINE bool entry_still(const struct prb *rb, uint64_t ref, size_t len)
{
	uint32_t off = (uint32_t)ref;

	if (off < TAB_HDR || off % 8 || (uint64_t)off + 8 > rb->strtab_size)
		return false;
	return pk_load_acquire(&rb->strtab[off / 8]) == entry_header(len, (uint32_t)(ref >> 32));
}

/*
 * This process's cache: per table (up to CACHE_TABLES tables, bound by
 * their address until the log is destroyed), each literal used with it:
 * its compiled form (the headers parsed, the conversions walked once) and
 * its entry's reference. A slot's key is claimed once by CAS and never
 * changes; the thread that claimed it compiles it and publishes it with
 * its state; the reference (0 until known) may be replaced when the table
 * was formatted anew under us (the entry's header no longer matches).
 */
struct slot {
	_Atomic uintptr_t key;
	pk_a32 state; /* SLOT_* */
	pk_a64 ref;
	struct pk_dfmt f;
};

enum { SLOT_NEW, SLOT_OK, SLOT_EAGER };

static _Atomic uintptr_t cache_table[CACHE_TABLES];
static struct slot cache[CACHE_TABLES][CACHE_SLOTS];

static int cache_of(const struct prb *rb)
{
	uintptr_t me = (uintptr_t)rb->strtab;

	for (unsigned i = 0; i < CACHE_TABLES; i++) {
		uintptr_t v = atomic_load_explicit(&cache_table[i], memory_order_acquire);

		if (v == me)
			return (int)i;
		if (!v) {
			if (atomic_compare_exchange_strong(&cache_table[i], &v, me) || v == me)
				return (int)i;
		}
	}
	return -1;
}

void pk_deferred_forget(const struct prb *rb)
{
	uintptr_t me = (uintptr_t)rb->strtab;

	if (!me)
		return;
	for (unsigned i = 0; i < CACHE_TABLES; i++) {
		if (atomic_load_explicit(&cache_table[i], memory_order_acquire) != me)
			continue;
		for (unsigned s = 0; s < CACHE_SLOTS; s++) {
			pk_store_relaxed(&cache[i][s].ref, 0);
			pk_store_relaxed(&cache[i][s].state, SLOT_NEW);
			atomic_store_explicit(&cache[i][s].key, 0, memory_order_relaxed);
		}
		atomic_store_explicit(&cache_table[i], 0, memory_order_release);
	}
}

/* Walk @fmt once: whether and how it can be deferred. */
static bool compile(struct pk_dfmt *f, const char *fmt, pk_deferred_headers_fn headers,
		    size_t fmt_max)
{
	size_t n = strlen(fmt);
	int level = -1, cont = 0;
	size_t skip = headers(fmt, n, &level, &cont);

	/* A line left open, or a continuation, may be extended. */
	if (cont || n <= skip || fmt[n - 1] != '\n')
		return false;

	size_t len = n - skip - 1;

	/* Eager formatting parses level headers in its output: a body that
	 * starts with conversions may print some (the arguments are looked at
	 * in pk_deferred_encode()); a header byte in such a body's literal
	 * text could follow conversions that print nothing. */
	if ((fmt[skip] == '%' && fmt[skip + 1] != '%' && memchr(fmt + skip, PK_SOH, len)) ||
	    fmt[skip] == PK_SOH)
		return false;

	if (len > PK_DEFERRED_FMT_MAX || fmt_max < skip + 2 + len)
		return false;
	f->body = fmt + skip;
	f->body_len = (uint16_t)len;
	f->level = (int8_t)level;
	f->out_max = (uint16_t)(fmt_max - 2 - skip);
	f->nops = 0;

	struct conv c;
	size_t pos = 0, lead_end = 0;
	int r;

	while ((r = next_conv(f->body, len, &pos, &c)) == 1) {
		if (f->nops == PK_DEFERRED_OPS_MAX)
			return false;

		struct pk_dop *op = &f->ops[f->nops++];
		bool lead = f->body[lead_end] == '%' && f->body[lead_end + 1] != '%';

		if (lead)
			lead_end = c.end;

		op->cls = (uint8_t)c.cls;
		op->flags = (uint8_t)((c.star_w ? DOP_STAR_W : 0) | (c.star_p ? DOP_STAR_P : 0) |
				      (c.letter == 'c' ? DOP_CHAR : 0) |
				      (c.letter == 'f' || c.letter == 'F' ? DOP_FIXED : 0) |
				      (lead ? DOP_LEAD : 0));
		op->width = (int16_t)c.width;
		op->prec = (int16_t)c.prec;
	}
	return r == 0;
}

const struct pk_dfmt *pk_deferred_fmt(struct prb *rb, const char *fmt,
				      pk_deferred_headers_fn headers, size_t fmt_max, void **slotp)
{
	if (!rb->strtab || rb->strtab_size <= TAB_HDR)
		return NULL;

	int t = cache_of(rb);

	if (t < 0)
		return NULL;

	uintptr_t k = (uintptr_t)fmt;
	size_t h = (size_t)((k >> 3) * UINT64_C(0x9e3779b97f4a7c15) >> 40);

	for (unsigned p = 0; p < CACHE_PROBES; p++) {
		struct slot *s = &cache[t][(h + p) % CACHE_SLOTS];
		uintptr_t cur = atomic_load_explicit(&s->key, memory_order_acquire);

		if (cur == k) {
			if (pk_load_acquire(&s->state) != SLOT_OK)
				return NULL; /* no rule, or being compiled right now */
			*slotp = s;
			return &s->f;
		}
		if (cur)
			continue;
		if (!atomic_compare_exchange_strong(&s->key, &cur, k)) {
			if (cur == k)
				return NULL; /* another thread took it for this literal */
			continue;
		}

		bool ok = compile(&s->f, fmt, headers, fmt_max);

		pk_store_release(&s->state, ok ? SLOT_OK : SLOT_EAGER);
		if (!ok)
			return NULL;
		*slotp = s;
		return &s->f;
	}
	return NULL;
}

int pk_deferred_ref(struct prb *rb, void *slotp, uint64_t *ref)
{
	struct slot *s = slotp;
	uint64_t r = pk_load_acquire(&s->ref);

	if (PK_LIKELY(r && entry_still(rb, r, s->f.body_len))) {
		*ref = r;
		return 0;
	}
	/* Not added yet (first use, a full table, a racing thread), or the
	 * table was formatted anew: add it (again). */
	int err = entry_add(rb, s->f.body, s->f.body_len, ref);

	if (err)
		return err;
	pk_store_release(&s->ref, *ref);
	return 0;
}

/* ------------------------------------------------------------ writing -- */

struct out {
	char *p;
	size_t n, cap;
};

static bool put(struct out *o, const void *v, size_t n)
{
	if (n > o->cap - o->n)
		return false;
	memcpy(o->p + o->n, v, n);
	o->n += n;
	return true;
}

/* Digits of any integer conversion (64 bits in octal), without its sign or
 * prefix (2 more at most); what a double prints besides its precision's
 * digits (the 17 before the point %f is allowed, sign, point, exponent,
 * %a's prefix and hex digits). */
#define INT_DIGITS  22
#define DBL_OUT_MAX 40

static PK_ALWAYS_INLINE size_t int_most(int p)
{
	return (size_t)(p > INT_DIGITS ? p : INT_DIGITS) + 2;
}

int pk_deferred_encode(const struct pk_dfmt *f, uint64_t ref, va_list *ap, char *blob, size_t cap)
{
	struct out o = { blob, 0, cap };
	size_t bound = f->body_len; /* each literal byte prints at most one byte */
	const int out_max = f->out_max;

	bool at_start = true; /* the output so far may be empty */

	if (!put(&o, &ref, sizeof(ref)))
		return -1;
	for (unsigned i = 0; i < f->nops; i++) {
		const struct pk_dop *op = &f->ops[i];
		int w = op->width, p = op->prec;

		at_start = at_start && (op->flags & DOP_LEAD);

		if (op->flags & DOP_STAR_W) {
			int32_t v = va_arg(*ap, int);

			if (!put(&o, &v, 4) || v == INT_MIN)
				return -1;
			w = v < 0 ? -v : v;
		}
		if (op->flags & DOP_STAR_P) {
			int32_t v = va_arg(*ap, int);

			if (!put(&o, &v, 4))
				return -1;
			p = v < 0 ? 0 : v; /* printk's rule: a negative one is 0 */
		}
		if (w > out_max || p > out_max)
			return -1;

		/* What the conversion prints at most: its width, or more. */
		size_t most;

		switch (op->cls) {
		case C_INT: {
			int32_t v = va_arg(*ap, int);

			if (!put(&o, &v, 4))
				return -1;
			if (op->flags & DOP_CHAR) {
				if (at_start && (unsigned char)v == PK_SOH)
					return -1; /* eager formatting would parse a header */
				at_start = false;
				most = 1;
			} else {
				at_start = false; /* printk prints 0 as "0" whatever the precision */
				most = int_most(p);
			}
			break;
		}
		case C_LONG: {
			int64_t v = va_arg(*ap, long);

			if (!put(&o, &v, 8))
				return -1;
			at_start = false;
			most = int_most(p);
			break;
		}
		case C_LLONG: {
			int64_t v = va_arg(*ap, long long);

			if (!put(&o, &v, 8))
				return -1;
			at_start = false;
			most = int_most(p);
			break;
		}
		case C_DBL: {
			double v = va_arg(*ap, double);

			/* %f prints every digit before the point: only small
			 * magnitudes have a bound worth storing. */
			if ((op->flags & DOP_FIXED) && isfinite(v) && !(v < 1e17 && v > -1e17))
				return -1;
			if (!put(&o, &v, 8))
				return -1;
			at_start = false; /* a digit, a sign, "inf" or "nan" first */
			most = DBL_OUT_MAX + (size_t)(p < 0 ? 6 : p);
			break;
		}
		default: {
			const char *s = va_arg(*ap, const char *);

			if ((uintptr_t)s < BAD_PTR_LOW || (uintptr_t)s > UINTPTR_MAX - BAD_PTR_HIGH)
				return -1; /* "(null)", "(efault)": eager */
			if (o.cap - o.n < 3)
				return -1;

			size_t room = o.cap - o.n - 2;
			size_t lim = p >= 0 && (size_t)p < room ? (size_t)p : room;
			size_t n = strnlen(s, lim);

			if (n == lim && !(p >= 0 && (size_t)p == lim))
				return -1; /* longer than the room left */

			if (at_start && n && (unsigned char)s[0] == PK_SOH)
				return -1; /* eager formatting would parse a header */
			at_start = at_start && !n && !w;

			uint16_t n16 = (uint16_t)n;

			memcpy(o.p + o.n, &n16, 2);
			memcpy(o.p + o.n + 2, s, n);
			o.n += 2 + n;
			most = n;
			break;
		}
		}
		bound += most > (size_t)w ? most : (size_t)w;
		if (bound > (size_t)out_max)
			return -1;
	}
	return (int)o.n;
}

/* ------------------------------------------------- per-call-site forms -- */

/*
 * The pool of call sites' compiled literals (struct pk_sfmt). A site's
 * format slot holds NULL (never ran), one of the marks below, or an entry
 * of the pool. Entries are handed out once (a fetch_add) and never given
 * back: the slot lives in its program's or shared object's static data,
 * and an object dlclose()d takes its sites (and the literals their
 * entries' bodies point into) with it; its entries are then unreachable,
 * and a new load of it starts with fresh NULL slots, compiled again. So
 * loading and unloading an object over and over uses the pool up; its
 * sites then take the per-literal cache's path (SITE_NONE), as a program
 * with more sites than the pool holds does.
 */
#define SITE_POOL  2048u
#define SITE_BUSY  ((const void *)1) /* claimed, being compiled */
#define SITE_EAGER ((const void *)2) /* no deferral rule */
#define SITE_NONE  ((const void *)PK_SITE_FMT_MARKS) /* the pool was used up (the last mark) */

static struct pk_sfmt site_pool[SITE_POOL];
static pk_a32 site_used;

/* What a simple layout's conversions other than %s print at most, and
 * whether the layout is simple: pk_deferred_encode()'s per-call sums, of
 * the terms that never change. */
static void site_bounds(struct pk_sfmt *sf)
{
	const struct pk_dfmt *f = &sf->f;
	size_t b = f->body_len, size = sizeof(uint64_t);
	bool simple = true;

	for (unsigned i = 0; i < f->nops; i++) {
		const struct pk_dop *op = &f->ops[i];
		int w = op->width, p = op->prec;
		size_t most = 0;

		if (op->flags & (DOP_STAR_W | DOP_STAR_P | DOP_LEAD) || w > f->out_max || p > f->out_max)
			simple = false;
		switch (op->cls) {
		case C_INT:
			most = op->flags & DOP_CHAR ? 1 : int_most(p);
			size += 4;
			break;
		case C_LONG:
		case C_LLONG:
			most = int_most(p);
			size += 8;
			break;
		case C_DBL:
			most = DBL_OUT_MAX + (size_t)(p < 0 ? 6 : p);
			size += 8;
			break;
		default:
			size += 2;
			continue; /* max(length, width), per call */
		}
		b += most > (size_t)w ? most : (size_t)w;
	}
	if (b > f->out_max)
		simple = false;
	sf->entry_lo = (uint32_t)pk_deferred_entry_header(f->body_len, 0);
	sf->fixed_bound = (uint16_t)(b < UINT16_MAX ? b : UINT16_MAX);
	sf->fixed_size = (uint16_t)size; /* at most 8 + 16 * 8 */
	sf->simple = simple;
	sf->lane_cap = PRB_TEXT_MAX;
	sf->va_gp_end = 0;
	if (!simple)
		return;

	/* The lane walk's program (deferred.h), when every conversion has
	 * one: the blob's bound is then fixed_bound plus its strings' bytes,
	 * so b <= out_max holds when the blob is at most len_max. */
	size_t len_max = f->out_max - b + size;

	if (len_max > UINT16_MAX)
		return;
	for (unsigned i = 0; i < f->nops; i++) {
		const struct pk_dop *op = &f->ops[i];

		switch (op->cls) {
		case C_INT:
			sf->prog[i] = PK_DPROG_INT;
			break;
		case C_LONG:
			sf->prog[i] = PK_DPROG_LONG;
			break;
		case C_LLONG:
			sf->prog[i] = PK_DPROG_LLONG;
			break;
		case C_STR:
			if (op->width || op->prec >= 0)
				return;
			sf->prog[i] = PK_DPROG_STR;
			break;
		default:
			return;
		}
	}
	sf->prog[f->nops] = PK_DPROG_END;
	sf->len_max = (uint16_t)len_max;
	/* A gp_offset with room for all the arguments in the 48 bytes of
	 * the integer registers' save area (deferred.h). */
	sf->va_gp_end = f->nops <= 6 ? (uint8_t)(48u - 8u * f->nops + 1u) : 0;
	if (len_max < PRB_TEXT_MAX)
		sf->lane_cap = (uint16_t)(len_max + 1);
	sf->simple = PK_SFMT_PROG;
}

int pk_deferred_site(const void **slotp, const char *fmt, pk_deferred_headers_fn headers,
		     size_t fmt_max, const struct pk_sfmt **sf)
{
	const void *cur = __atomic_load_n(slotp, __ATOMIC_ACQUIRE);

	if (PK_LIKELY((uintptr_t)cur > PK_SITE_FMT_MARKS)) {
		const struct pk_sfmt *e = cur;

		/* A site has one literal; another one is a misuse, which gets
		 * the per-literal path. */
		if (e->lit != fmt)
			return PK_SITE_FMT_NONE;
		*sf = e;
		return PK_SITE_FMT_OK;
	}
	if (cur == SITE_EAGER)
		return PK_SITE_FMT_EAGER;
	if (cur || !__atomic_compare_exchange_n(slotp, &cur, SITE_BUSY, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_ACQUIRE))
		return PK_SITE_FMT_NONE; /* being compiled, or the pool ran out */

	struct pk_dfmt f;

	if (!compile(&f, fmt, headers, fmt_max)) {
		__atomic_store_n(slotp, SITE_EAGER, __ATOMIC_RELEASE);
		return PK_SITE_FMT_EAGER;
	}

	uint32_t i = pk_fetch_add_relaxed(&site_used, 1);

	if (i >= SITE_POOL) {
		__atomic_store_n(slotp, SITE_NONE, __ATOMIC_RELEASE);
		return PK_SITE_FMT_NONE;
	}

	struct pk_sfmt *e = &site_pool[i];

	e->f = f;
	e->lit = fmt;
	site_bounds(e);
	e->lane_lit = e->simple ? fmt : NULL;
	__atomic_store_n(slotp, (const void *)e, __ATOMIC_RELEASE);
	*sf = e;
	return PK_SITE_FMT_OK;
}
unsigned pk_deferred_sites_used(void)
{
	uint32_t n = pk_load_relaxed(&site_used);

	return n < SITE_POOL ? n : SITE_POOL;
}

int pk_deferred_site_ref(struct prb *rb, const struct pk_sfmt *sf, const char *fmt,
			 pk_deferred_headers_fn headers, size_t fmt_max, uint64_t *ref)
{
	/* The common case: the inline test (its cached header word). */
	if (PK_LIKELY(pk_deferred_site_ref_cached(rb, sf, ref)))
		return 0;

	struct pk_sfmt *m = (struct pk_sfmt *)sf; /* its cache only */
	uintptr_t tab = atomic_load_explicit(&m->tab, memory_order_acquire);
	uint64_t r = pk_load_relaxed(&m->ref);

	/* Two threads caching for two logs at once may leave one's table
	 * with the other's reference: the entry's header, whose check hashes
	 * the entry's offset, length and bytes, is what is trusted. */
	if (PK_LIKELY(tab == (uintptr_t)rb->strtab && r && entry_still(rb, r, sf->f.body_len))) {
		uint64_t want = (r & ~UINT64_C(0xffffffff)) | sf->entry_lo;

		/* Another thread's @want with this @ref (two caching at
		 * once): the inline test missed it and would every time. */
		pk_store_relaxed(&m->want, want);
		*ref = r;
		return 0;
	}

	void *slot;

	if (!pk_deferred_fmt(rb, fmt, headers, fmt_max, &slot))
		return -EAGAIN;

	int err = pk_deferred_ref(rb, slot, ref);

	if (err)
		return err;
	pk_store_relaxed(&m->ref, *ref);
	pk_store_relaxed(&m->want, (*ref & ~UINT64_C(0xffffffff)) | sf->entry_lo);
	atomic_store_explicit(&m->tab, (uintptr_t)rb->strtab, memory_order_release);
	return 0;
}

int pk_deferred_encode_site(const struct pk_sfmt *sf, uint64_t ref, va_list *ap, char *blob,
			    size_t cap)
{
	const struct pk_dfmt *f = &sf->f;

	if (!sf->simple)
		return pk_deferred_encode(f, ref, ap, blob, cap);

	/* pk_deferred_encode() with what never changes taken out: no '*'
	 * values, nothing printed before the first conversion (so no level
	 * header can come out of an argument), widths and precisions within
	 * bounds, the other conversions' share of the bound summed once. The
	 * bound only grows, so checking it at the end fails the same calls. */
	struct out o = { blob, 0, cap };
	size_t bound = sf->fixed_bound;
	int len = -1;
	va_list aq; /* the caller's is its own copy: not consumed */

	if (!put(&o, &ref, sizeof(ref)))
		return -1;
	va_copy(aq, *ap);
	for (unsigned i = 0; i < f->nops; i++) {
		const struct pk_dop *op = &f->ops[i];

		switch (op->cls) {
		case C_INT: {
			int32_t v = va_arg(aq, int);

			if (!put(&o, &v, 4))
				goto out;
			break;
		}
		case C_LONG: {
			int64_t v = va_arg(aq, long);

			if (!put(&o, &v, 8))
				goto out;
			break;
		}
		case C_LLONG: {
			int64_t v = va_arg(aq, long long);

			if (!put(&o, &v, 8))
				goto out;
			break;
		}
		case C_DBL: {
			double v = va_arg(aq, double);

			if ((op->flags & DOP_FIXED) && isfinite(v) && !(v < 1e17 && v > -1e17))
				goto out;
			if (!put(&o, &v, 8))
				goto out;
			break;
		}
		default: {
			const char *s = va_arg(aq, const char *);
			int p = op->prec;

			if ((uintptr_t)s < BAD_PTR_LOW || (uintptr_t)s > UINTPTR_MAX - BAD_PTR_HIGH)
				goto out;
			if (o.cap - o.n < 3)
				goto out;

			size_t room = o.cap - o.n - 2;
			size_t lim = p >= 0 && (size_t)p < room ? (size_t)p : room;
			size_t n = strnlen(s, lim);

			if (n == lim && !(p >= 0 && (size_t)p == lim))
				goto out;

			uint16_t n16 = (uint16_t)n;

			memcpy(o.p + o.n, &n16, 2);
			memcpy(o.p + o.n + 2, s, n);
			o.n += 2 + n;
			bound += n > (size_t)op->width ? n : (size_t)op->width;
			break;
		}
		}
	}
	if (bound <= f->out_max)
		len = (int)o.n;
out:
	va_end(aq);
	return len;
}

/* ------------------------------------------------------------ reading -- */

struct in {
	const char *p;
	size_t n, at;
};

static bool take(struct in *i, void *v, size_t n)
{
	if (n > i->n - i->at)
		return false;
	memcpy(v, i->p + i->at, n);
	i->at += n;
	return true;
}

/* One segment with kernel semantics, as printk formats: returns the
 * length of its whole output. */
static int seg(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	char last;

	va_start(ap, fmt);
	int n = pk_vsnprintf_last(buf, size, &last, fmt, ap);

	va_end(ap);
	return n;
}

/* Call seg() with the '*' values the conversion has, then @val. */
#define SEG(c, w, p, val)                                                          \
	((c).star_w && (c).star_p ? seg(dst, room, sfmt, (int)(w), (int)(p), val) : \
	 (c).star_w		  ? seg(dst, room, sfmt, (int)(w), val)		 : \
	 (c).star_p		  ? seg(dst, room, sfmt, (int)(p), val)		 : \
				    seg(dst, room, sfmt, val))

/*
 * A plain conversion (struct conv) of @letter after the literal @lit
 * (@litlen bytes, no '%' in them) into @dst (@room bytes, as snprintf):
 * what seg() gives for "lit%d" and the like, without parsing. The value is
 * @v, read as the conversion's class says (@bits: 32 or 64), or the string
 * @str of @sl bytes. Returns the whole output's length.
 */
static size_t plain_seg(char *dst, size_t room, const char *lit, size_t litlen, char letter,
			int bits, int64_t v, const char *str, size_t sl)
{
	char num[24];
	const char *tail = num;
	size_t tl = 0;

	if (letter == 's') {
		tail = str;
		tl = sl;
	} else {
		uint64_t u = bits == 32 ? (uint64_t)(uint32_t)v : (uint64_t)v;
		bool neg = false;
		char *e = num + sizeof(num), *q = e;

		if ((letter == 'd' || letter == 'i') && v < 0) {
			neg = true;
			u = bits == 32 ? (uint64_t)-(int64_t)(int32_t)v : (uint64_t)0 - (uint64_t)v;
		}
		if (letter == 'x') {
			do {
				*--q = "0123456789abcdef"[u & 15];
				u >>= 4;
			} while (u);
		} else {
			do {
				*--q = (char)('0' + u % 10);
				u /= 10;
			} while (u);
		}
		if (neg)
			*--q = '-';
		tail = q;
		tl = (size_t)(e - q);
	}

	size_t n = litlen + tl;

	if (room) {
		size_t a = litlen < room - 1 ? litlen : room - 1;
		size_t b = tl < room - 1 - a ? tl : room - 1 - a;

		memcpy(dst, lit, a);
		memcpy(dst + a, tail, b);
		dst[a + b] = '\0';
	}
	return n;
}

static bool plain_letter(char l)
{
	return l == 'd' || l == 'i' || l == 'u' || l == 'x' || l == 's';
}

static size_t bad(char *text)
{
	memcpy(text, PK_DEFERRED_BAD_TEXT, sizeof(PK_DEFERRED_BAD_TEXT));
	return sizeof(PK_DEFERRED_BAD_TEXT) - 1;
}

/*
 * Where expand_with() takes the format's conversions from: parsed as it
 * goes (@list NULL), or a list a bulk reader's cache parsed before, with
 * what the last next_conv() call said of the text after the last one.
 */
struct conv_src {
	size_t pos;
	const struct conv *list;
	unsigned n, i;
	bool tail_pct;
};

static int conv_next(const char *fmt, size_t flen, struct conv_src *src, struct conv *c)
{
	if (!src->list)
		return next_conv(fmt, flen, &src->pos, c);
	if (src->i < src->n) {
		*c = src->list[src->i++];
		return 1;
	}
	c->pct = src->tail_pct;
	return 0;
}

/* The blob @in (its reference taken) formatted by @fmt (@flen bytes, with
 * room for one more: it is borrowed and given back) into @text. */
static size_t expand_with(char *text, char *blob, struct in in, char *fmt, size_t flen,
			  struct conv_src *src)
{
	const size_t cap = PK_TEXT_MAX + 1;
	size_t from = 0, o = 0;
	struct conv c;
	int r;

	while ((r = conv_next(fmt, flen, src, &c)) == 1) {
		int32_t w = 0, p = 0;

		if ((c.star_w && !take(&in, &w, 4)) || (c.star_p && !take(&in, &p, 4)))
			return bad(text);
		const char *sfmt = fmt + from;
		char *dst = text + o;
		size_t room = cap - o;

		if (c.plain && !c.pct && plain_letter(c.letter)) {
			int64_t v = 0;
			uint16_t sl = 0;
			size_t vn = c.cls == C_INT ? 4 : 8;
			size_t n;

			if (c.cls == C_STR) {
				if (!take(&in, &sl, 2) || sl > in.n - in.at)
					return bad(text);
				n = plain_seg(dst, room, sfmt, c.start - from, 's', 0, 0, blob + in.at, sl);
				in.at += sl;
			} else if (vn == 4) {
				int32_t v32;

				if (!take(&in, &v32, 4))
					return bad(text);
				n = plain_seg(dst, room, sfmt, c.start - from, c.letter, 32, v32, NULL, 0);
			} else {
				if (!take(&in, &v, 8))
					return bad(text);
				n = plain_seg(dst, room, sfmt, c.start - from, c.letter, 64, v, NULL, 0);
			}
			from = c.end;
			o += n < room - 1 ? n : room - 1;
			continue;
		}

		char fmt_after = fmt[c.end];

		fmt[c.end] = '\0';
		from = c.end;

		int n;

		switch (c.cls) {
		case C_INT: {
			int32_t v;

			if (!take(&in, &v, 4)) {
				n = -1; /* fmt is given back first */
				break;
			}
			n = SEG(c, w, p, (int)v);
			break;
		}
		case C_LONG: {
			int64_t v;

			if (!take(&in, &v, 8)) {
				n = -1; /* fmt is given back first */
				break;
			}
			n = SEG(c, w, p, (long)v);
			break;
		}
		case C_LLONG: {
			int64_t v;

			if (!take(&in, &v, 8)) {
				n = -1; /* fmt is given back first */
				break;
			}
			n = SEG(c, w, p, (long long)v);
			break;
		}
		case C_DBL: {
			double v;

			if (!take(&in, &v, 8)) {
				n = -1; /* fmt is given back first */
				break;
			}
			n = SEG(c, w, p, v);
			break;
		}
		default: {
			uint16_t sl;

			if (!take(&in, &sl, 2) || sl > in.n - in.at) {
				n = -1; /* fmt is given back first */
				break;
			}

			char *str = blob + in.at;
			char str_after = str[sl];

			str[sl] = '\0';
			n = SEG(c, w, p, (const char *)str);
			str[sl] = str_after;
			in.at += sl;
			break;
		}
		}
		fmt[c.end] = fmt_after;
		if (n < 0)
			return bad(text);
		o += (size_t)n < room - 1 ? (size_t)n : room - 1;
	}
	if (r < 0 || in.at != in.n)
		return bad(text);
	fmt[flen] = '\0';

	/* Literal text prints as itself: only a "%%" needs the formatter. */
	size_t tail = flen - from;
	int n = (int)tail;

	if (c.pct) {
		n = seg(text + o, cap - o, fmt + from, 0);
		if (n < 0)
			return bad(text);
	} else {
		memcpy(text + o, fmt + from, tail < cap - o - 1 ? tail : cap - o - 1);
	}
	o += (size_t)n < cap - o - 1 ? (size_t)n : cap - o - 1;
	text[o] = '\0';
	return o;
}

/* Copy the record's blob (@len bytes at @text) to @blob, where the
 * expansion reads it (@in), and take its reference. */
static bool blob_open(const char *text, size_t len, char *blob, struct in *in, uint64_t *ref)
{
	if (len > PK_TEXT_MAX)
		return false;
	memcpy(blob, text, len);
	*in = (struct in){ blob, len, 0 };
	return take(in, ref, sizeof(*ref));
}

/* The expansion, with @blob (PK_TEXT_MAX + 1 bytes) to copy the record's
 * blob into. */
static size_t expand(const struct prb *rb, char *text, size_t len, char *blob)
{
	/* ~1 KiB of stack besides @blob: readers run on signal stacks too. A
	 * segment of the format, and a string of the blob, get their NUL by
	 * borrowing the byte after them for the call. */
	char fmt[(PK_DEFERRED_FMT_MAX + 8) / 8 * 8];
	uint64_t ref;
	struct in in;

	if (!blob_open(text, len, blob, &in, &ref))
		return bad(text);

	int flen = entry_read(rb, (uint32_t)ref, (uint32_t)(ref >> 32), fmt);

	if (flen < 0)
		return bad(text);

	struct conv_src src = { 0 };

	return expand_with(text, blob, in, fmt, (size_t)flen, &src);
}

static PK_NOINLINE size_t expand_own(const struct prb *rb, char *text, size_t len)
{
	char blob[PK_TEXT_MAX + 1];

	return expand(rb, text, len, blob);
}

/* ---------------------------------------- a bulk reader's format cache -- */

#define FC_SLOTS 64 /* direct-mapped by reference */
#define FC_CONVS 24 /* a format with more conversions is parsed each time */

/* What fc_fast() does for a conversion: how it prints its value. */
enum { FC_STR, FC_DEC, FC_UDEC, FC_HEX };

/* One conversion of a slot fc_fast() expands: the literal before it
 * (@lit bytes at @at of the format), its value's size (4 or 8) and kind. */
struct fc_op {
	uint16_t at, lit;
	uint8_t size, kind;
};

/* A plain number's longest text: 20 digits, or a sign and 19. */
#define FC_NUM_MAX 20

/* How far past its @n bytes fc_copy() may read and write. */
#define FC_SLACK 15

struct fc_slot {
	uint64_t ref; /* 0: empty (no reference is 0: entries start at TAB_HDR) */
	size_t flen;
	unsigned nconv;
	bool tail_pct;
	/* Every conversion plain %d %i %u %x %s and no "%%": fc_fast()'s, with
	 * the literal and number bytes at most @fast_max. */
	bool fast;
	bool lit_plain; /* the format's literal bytes are all 0x20-0x7e */
	size_t fast_max;
	size_t tail_at; /* where the literal after the last conversion starts */
	struct conv conv[FC_CONVS];
	struct fc_op op[FC_CONVS];
	/* fc_copy() reads up to FC_SLACK bytes past the format. */
	char fmt[(PK_DEFERRED_FMT_MAX + FC_SLACK + 8) / 8 * 8];
};

struct pk_dfmt_cache {
	const struct prb *rb; /* the ring its entries come from */
	/* The record's blob; fc_copy() writes, and fc_fast() reads, up to
	 * FC_SLACK bytes past it (bytes of an earlier blob, or the zeros of
	 * calloc()). */
	char blob[PK_TEXT_MAX + 1 + FC_SLACK];
	struct fc_slot slot[FC_SLOTS];
};

struct pk_dfmt_cache *pk_dfmt_cache_new(void)
{
	return calloc(1, sizeof(struct pk_dfmt_cache));
}

void pk_dfmt_cache_free(struct pk_dfmt_cache *fc)
{
	free(fc);
}

/* @sl's format (fmt, flen) parsed into its list: false if it has more
 * conversions than the list holds, or one without a rule. */
static bool fc_parse(struct fc_slot *sl)
{
	size_t pos = 0;
	struct conv c;
	int r;

	sl->nconv = 0;
	sl->fast = false;
	while ((r = next_conv(sl->fmt, sl->flen, &pos, &c)) == 1) {
		if (sl->nconv == FC_CONVS)
			return false;
		sl->conv[sl->nconv++] = c;
	}
	sl->tail_pct = c.pct;
	if (r != 0)
		return false;

	/* fc_fast()'s form, when every conversion has one. */
	size_t from = 0;

	sl->fast = !sl->tail_pct;
	sl->fast_max = sl->flen;
	for (unsigned k = 0; k < sl->nconv && sl->fast; k++) {
		const struct conv *cv = &sl->conv[k];
		struct fc_op *op = &sl->op[k];

		if (!cv->plain || cv->pct || !plain_letter(cv->letter)) {
			sl->fast = false;
			break;
		}
		op->at = (uint16_t)from;
		op->lit = (uint16_t)(cv->start - from);
		op->size = cv->cls == C_INT ? 4 : 8;
		op->kind = cv->letter == 's' ? FC_STR :
			   cv->letter == 'x' ? FC_HEX :
			   cv->letter == 'u' ? FC_UDEC : FC_DEC;
		if (op->kind != FC_STR)
			sl->fast_max += FC_NUM_MAX;
		from = cv->end;
	}

	sl->tail_at = from;

	/* With the conversions plain, every byte outside them prints as itself. */
	size_t k = 0;

	sl->lit_plain = sl->fast;
	for (size_t i = 0; i < sl->flen && sl->lit_plain; i++) {
		if (k < sl->nconv && i == sl->conv[k].start) {
			i = sl->conv[k++].end - 1;
			continue;
		}
		sl->lit_plain = sl->fmt[i] >= 0x20 && sl->fmt[i] < 0x7f;
	}
	return true;
}

/* fc_fast() tells printable ASCII text (0x20-0x7e, what dmesg prints as it
 * is) by the words of its strings, which holds on little-endian machines;
 * elsewhere it never says a text with a string is printable. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FC_SCAN_WORDS 1
#else
#define FC_SCAN_WORDS 0
#endif

/* The low @i bytes of a word (little-endian), by @i from 0 to 8. */
static const uint64_t fc_low_bytes[9] = {
	0, 0xff, 0xffff, 0xffffff, 0xffffffff, UINT64_C(0xffffffffff), UINT64_C(0xffffffffffff),
	UINT64_C(0xffffffffffffff), UINT64_MAX
};

/* The high bit of each byte of @w outside 0x20-0x7e: the low seven bits
 * plus 0x60 reach 0x80 from 0x20 on, plus 1 at 0x7f; no byte carries into
 * the next. */
static PK_ALWAYS_INLINE uint64_t fc_unprintable(uint64_t w)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
	uint64_t x = w & ~high;

	return (w | ~(x + ones * 0x60) | (x + ones)) & high;
}

/* @n bytes from @src to @dst by 16-byte units, the first one always: up
 * to FC_SLACK bytes more are read and written. No call and no loop for the
 * short pieces a record is made of. */
static PK_ALWAYS_INLINE void fc_copy16(char *dst, const char *src)
{
	uint64_t w0, w1;

	memcpy(&w0, src, 8);
	memcpy(&w1, src + 8, 8);
	memcpy(dst, &w0, 8);
	memcpy(dst + 8, &w1, 8);
}

static PK_ALWAYS_INLINE void fc_copy(char *dst, const char *src, size_t n)
{
	fc_copy16(dst, src);
	if (PK_UNLIKELY(n > 16)) {
		for (size_t k = 16; k < n; k += 16)
			fc_copy16(dst + k, src + k);
	}
}

/* Bits of @u (not 0) up to its highest one. */
static PK_ALWAYS_INLINE unsigned fc_bits(uint64_t u)
{
#if defined(__GNUC__) || defined(__clang__)
	return 64u - (unsigned)__builtin_clzll(u);
#else
	unsigned n = 0;

	for (; u; u >>= 1)
		n++;
	return n;
#endif
}

static const char fc_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* @v (below 10000) in exactly @n (1 to 4) digits at @dst. */
static PK_ALWAYS_INLINE void fc_dec4(char *dst, uint32_t v, size_t n)
{
	if (n > 2) {
		memcpy(dst + n - 2, fc_digits2 + 2 * (v % 100), 2);
		v /= 100;
		n -= 2;
	}
	if (n == 2)
		memcpy(dst, fc_digits2 + 2 * v, 2);
	else
		*dst = (char)('0' + v);
}

/* @u in decimal at @dst: its length. */
static PK_ALWAYS_INLINE size_t fc_udec(char *dst, uint64_t u)
{
	static const uint64_t pow10[20] = {
		1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
		1000000000u, UINT64_C(10000000000), UINT64_C(100000000000),
		UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
		UINT64_C(1000000000000000), UINT64_C(10000000000000000),
		UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
		UINT64_C(10000000000000000000)
	};

	if (u < 10) {
		*dst = (char)('0' + u);
		return 1;
	}

	/* The digits from the bits: log10(2) is about 1233 / 4096. */
	unsigned t = fc_bits(u) * 1233 >> 12;
	size_t n = t + 1 - (u < pow10[t]);

	/* Up to 8 digits, the usual: two halves of 4, neither waiting for the
	 * other's divisions. */
	if (n <= 8) {
		uint32_t v = (uint32_t)u;

		if (n <= 4) {
			fc_dec4(dst, v, n);
		} else {
			fc_dec4(dst + n - 4, v % 10000, 4);
			fc_dec4(dst, v / 10000, n - 4);
		}
		return n;
	}

	char *q = dst + n;

	while (u >= 100) {
		unsigned r = (unsigned)(u % 100);

		u /= 100;
		q -= 2;
		memcpy(q, fc_digits2 + 2 * r, 2);
	}
	if (u >= 10) {
		q -= 2;
		memcpy(q, fc_digits2 + 2 * u, 2);
	} else {
		*--q = (char)('0' + u);
	}
	return n;
}

static PK_ALWAYS_INLINE size_t fc_hex(char *dst, uint64_t u)
{
	size_t n = 1;

	for (uint64_t t = u >> 4; t; t >>= 4)
		n++;
	for (size_t k = n; k--; u >>= 4)
		dst[k] = "0123456789abcdef"[u & 15];
	return n;
}

/*
 * The expansion of a record whose format is @sl's fast form (sl->fast) and
 * whose text cannot reach PK_TEXT_MAX: the bytes plain_seg() and
 * expand_with() give, with no room to check. The blob @in is checked as
 * there (each value inside it, all of it used). Returns the length, or
 * SIZE_MAX for a blob that does not validate.
 */
static size_t fc_fast(const struct fc_slot *sl, char *text, struct in in, bool *plain)
{
	/* Locals, not the slot's and @in's fields: every store into @text may
	 * alias them, and the compiler would load them again after each. */
	const char *fmt = sl->fmt, *p = in.p;
	const unsigned nconv = sl->nconv;
	const size_t end = in.n, tail_at = sl->tail_at, tail = sl->flen - sl->tail_at;
	const bool lit_plain = sl->lit_plain;
	size_t at = in.at, o = 0;
	uint64_t odd = 0; /* fc_unprintable() of the strings' bytes */

	for (unsigned k = 0; k < nconv; k++) {
		const struct fc_op op = sl->op[k];

		fc_copy(text + o, fmt + op.at, op.lit);
		o += op.lit;
		if (op.kind == FC_STR) {
			uint16_t n;

			if (end - at < 2)
				return SIZE_MAX;
			memcpy(&n, p + at, 2);
			at += 2;
			if (n > end - at)
				return SIZE_MAX;

			const char *str = p + at;

			/* fc_copy() with each word's bytes looked at, the
			 * last word's only up to the string's end. */
			uint64_t w;
			size_t j = 0;

			for (; j + 8 < n; j += 8) {
				memcpy(&w, str + j, 8);
				memcpy(text + o + j, &w, 8);
				odd |= fc_unprintable(w);
			}
			memcpy(&w, str + j, 8);
			memcpy(text + o + j, &w, 8);
			odd |= fc_unprintable(w) & fc_low_bytes[n - j];
			if (!FC_SCAN_WORDS)
				odd |= n;
			at += n;
			o += n;
			continue;
		}

		uint64_t u;

		if (end - at < op.size)
			return SIZE_MAX;
		if (op.size == 4) {
			int32_t v32;

			memcpy(&v32, p + at, 4);
			at += 4;
			if (op.kind == FC_DEC && v32 < 0) {
				text[o++] = '-';
				u = (uint64_t)-(int64_t)v32;
			} else {
				u = (uint32_t)v32;
			}
		} else {
			memcpy(&u, p + at, 8);
			at += 8;
			if (op.kind == FC_DEC && (int64_t)u < 0) {
				text[o++] = '-';
				u = (uint64_t)0 - u;
			}
		}
		o += op.kind == FC_HEX ? fc_hex(text + o, u) : fc_udec(text + o, u);
	}
	if (at != end)
		return SIZE_MAX;
	fc_copy(text + o, fmt + tail_at, tail);
	o += tail;
	text[o] = '\0';
	*plain = lit_plain && !odd;
	return o;
}

static PK_ALWAYS_INLINE size_t expand_cached(const struct prb *rb, char *text, size_t len,
					     struct pk_dfmt_cache *fc, bool *plain)
{
	char *blob = fc->blob;
	uint64_t ref;
	struct in in;

	/* The usual blob by fc_copy(), no call: the text's room is
	 * PK_TEXT_MAX + 1 bytes, and the reference read from the text (not
	 * from the copy just stored). */
	if (PK_LIKELY(len >= 8 && len + FC_SLACK <= PK_TEXT_MAX)) {
		fc_copy(blob, text, len);
		in = (struct in){ blob, len, 8 };
		memcpy(&ref, text, 8);
	} else if (!blob_open(text, len, blob, &in, &ref)) {
		return bad(text);
	}
	if (fc->rb != rb) {
		for (unsigned i = 0; i < FC_SLOTS; i++)
			fc->slot[i].ref = 0;
		fc->rb = rb;
	}

	struct fc_slot *sl = &fc->slot[((uint32_t)ref >> 3 ^ (uint32_t)(ref >> 32)) % FC_SLOTS];

	if (sl->ref != ref) {
		sl->ref = 0;

		int flen = entry_read(rb, (uint32_t)ref, (uint32_t)(ref >> 32), sl->fmt);

		if (flen < 0)
			return bad(text);
		sl->flen = (size_t)flen;
		if (!fc_parse(sl)) {
			struct conv_src none = { 0 };

			return expand_with(text, blob, in, sl->fmt, sl->flen, &none);
		}
		sl->ref = ref;
	}
	/* Strings take at most the blob's bytes, and the copies up to
	 * FC_SLACK more: the text stays inside its PK_TEXT_MAX + 1. */
	if (PK_LIKELY(sl->fast) && sl->fast_max + len + FC_SLACK <= PK_TEXT_MAX) {
		size_t n = fc_fast(sl, text, in, plain);

		return n != SIZE_MAX ? n : bad(text);
	}

	struct conv_src src = { 0 };

	src.list = sl->conv;
	src.n = sl->nconv;
	src.tail_pct = sl->tail_pct;
	return expand_with(text, blob, in, sl->fmt, sl->flen, &src);
}

size_t pk_deferred_expand_cached(const struct prb *rb, char *text, size_t len, uint8_t *flags,
				 struct pk_dfmt_cache *fc)
{
	bool plain;

	return pk_deferred_expand_plain(rb, text, len, flags, fc, &plain);
}

size_t pk_deferred_expand_plain(const struct prb *rb, char *text, size_t len, uint8_t *flags,
				struct pk_dfmt_cache *fc, bool *plain)
{
	*flags &= (uint8_t)~PRB_FLAG_DEFERRED;
	*plain = false;
	return fc ? expand_cached(rb, text, len, fc, plain) : expand_own(rb, text, len);
}

size_t pk_deferred_expand(const struct prb *rb, char *text, size_t len, uint8_t *flags,
			  char *scratch)
{
	*flags &= (uint8_t)~PRB_FLAG_DEFERRED;
	return scratch ? expand(rb, text, len, scratch) : expand_own(rb, text, len);
}

void pk_deferred_table_stats(const struct prb *rb, struct pk_deferred_stats *st)
{
	uint64_t used = pk_load_relaxed(&rb->strtab[0]);

	st->size = rb->strtab_size - TAB_HDR;
	st->used = used < st->size ? used : st->size;
	st->full = pk_load_relaxed(&rb->strtab[1]);
}
