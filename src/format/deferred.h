// SPDX-License-Identifier: MIT
/*
 * deferred.h - deferred records: a message stored as its format string's
 * reference and its binary arguments, formatted when it is read.
 *
 * printk stores a message no console prints this way when its format is a
 * string literal that deferred.c can walk (pk_deferred_encode() says which).
 * The ring copies such a record as bytes; the reading layer's
 * pk_rec_read() and pk_rec_read_text() (record_read.c) call
 * pk_deferred_expand(), so every reader above them sees ordinary text,
 * byte for byte what formatting at store time would have stored.
 * docs/deferred.md has every conversion's rule.
 *
 * The format strings live in a table in the log's own memory, after the
 * ring's data area (prb_strtab_size() bytes, ringbuffer.h), so another process, or
 * a reader of a core dump, never needs the writer's address space. The
 * table and the record blob are untrusted input for a reader: every offset
 * and length is checked, and what does not validate reads as
 * PK_DEFERRED_BAD_TEXT.
 *
 * Context: every function here is async-signal-safe, lock-free and
 * thread-safe; nothing allocates.
 */
#ifndef PRINTK_DEFERRED_H
#define PRINTK_DEFERRED_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/atomics.h"
#include "base/hints.h"
#include "ring/ringbuffer.h"

struct prb;

/* Longest format (after its level headers, without its newline) the table
 * takes. */
#define PK_DEFERRED_FMT_MAX 1000

/* What a reader gets for a deferred record whose format entry or arguments
 * do not validate (a damaged log, or a table entry its writer never
 * finished). */
#define PK_DEFERRED_BAD_TEXT "(deferred message: its format string is damaged)"

/* One conversion of a compiled format (deferred.c's rules). @cls: what its
 * value is read as (PK_DCLS_*, %s the last); @flags: PK_DOP_FIXED and
 * deferred.c's own. */
#define PK_DCLS_INT   0
#define PK_DCLS_LONG  1
#define PK_DCLS_LLONG 2
#define PK_DCLS_DBL   3
#define PK_DOP_FIXED  0x8 /* %f, %F */
/* Pointers %s prints as "(null)" or "(efault)": formatted eagerly. */
#define PK_DEFERRED_BAD_PTR_LOW	 4096u
#define PK_DEFERRED_BAD_PTR_HIGH 4095u

struct pk_dop {
	uint8_t cls;   /* what its value is read as */
	uint8_t flags; /* '*' width, '*' precision, %c, %f */
	int16_t width; /* written in the format; 0: none */
	int16_t prec;  /* written in the format; -1: none */
};

#define PK_DEFERRED_OPS_MAX 16

/* A literal format as the deferred path needs it, made once per process
 * and log from the literal. */
struct pk_dfmt {
	const char *body;  /* after the level headers, without the newline */
	uint16_t body_len;
	uint16_t out_max;  /* longest text that certainly ends the line */
	int8_t level;	   /* the headers' level; -1: none */
	uint8_t nops;
	struct pk_dop ops[PK_DEFERRED_OPS_MAX];
};

/* printk's level header parser (Linux rules), passed in by printk.c. */
typedef size_t (*pk_deferred_headers_fn)(const char *text, size_t len, int *level, int *cont);

/*
 * @fmt (a literal: its address names it for the life of the process) as
 * a deferrable format for @rb, compiled on its first use with @headers and
 * printk's formatting buffer of @fmt_max bytes; *@slot is the handle for
 * pk_deferred_ref(). NULL when it cannot be deferred (a continuation, a
 * line left open, a conversion without a rule, a body that starts with a
 * conversion), when another thread is compiling it right now, or when this
 * process's cache has no room: the caller formats eagerly.
 */
const struct pk_dfmt *pk_deferred_fmt(struct prb *rb, const char *fmt,
				      pk_deferred_headers_fn headers, size_t fmt_max, void **slot);

/*
 * The reference of @slot's format in @rb's table, adding it the first time
 * (and again if the table was formatted anew): 0 and *@ref, or -ENOSPC when
 * the table is full (counted: pk_deferred_table_stats()).
 */
int pk_deferred_ref(struct prb *rb, void *slot, uint64_t *ref);

/* @rb's memory is going away (its log is destroyed, no printk runs on it):
 * this process's cache forgets its table, so another log may take its place.
 * Not async-signal-safe against printk on @rb. */
void pk_deferred_forget(const struct prb *rb);

/*
 * Encode the arguments @ap holds for @f after @ref into @blob (@cap
 * bytes). Returns the blob's length, or -1 when this call cannot be
 * deferred (a %s that does not fit or is NULL or an error pointer, an
 * output that might reach f->out_max bytes, %f of a huge value): @ap is
 * then consumed partly, and the caller formats from its own copy.
 */
int pk_deferred_encode(const struct pk_dfmt *f, uint64_t ref, va_list *ap, char *blob, size_t cap);

/*
 * A call site's compiled literal: what struct pk_site's format slot
 * (<printk/printk_site.h>) points to once the site ran with a literal
 * format. Made once per site, from a process-wide pool (never freed: a
 * site is a static object of its program or shared object, and a record
 * never points here, only to the log's table), independent of any log:
 * the layout and the bounds that do not change from call to call. The
 * format's reference in a log's table is cached beside it for the last
 * table it was used with.
 */
struct pk_sfmt {
	struct pk_dfmt f;
	const char *lit;      /* the literal it was compiled from */
	const char *lane_lit; /* @lit when @simple (the lanes' fast path takes it), else NULL */
	uint16_t fixed_bound; /* body_len + what the conversions other than %s print at most */
	uint16_t fixed_size;  /* the blob's bytes but those of the %s strings (a simple layout) */
	uint8_t simple;	      /* no '*', no conversion at the start: pk_deferred_encode_site()'s fast walk;
			       * PK_SFMT_PROG: and @prog is the lane walk's program */
	uint16_t len_max;     /* PK_SFMT_PROG: the longest blob whose strings keep f.out_max */
	uint16_t lane_cap;    /* the most room pk_deferred_encode_lane() takes: PRB_TEXT_MAX, or
			       * len_max + 1 when less (PK_SFMT_PROG) */
	uint8_t va_gp_end;    /* PK_SFMT_PROG: a va_list's gp_offset below this leaves all the
			       * arguments in the register save area (pk_deferred_lane_regs());
			       * 0 else */
	uint32_t entry_lo;    /* its table entry's header word but the check: magic, length */
	uint8_t prog[PK_DEFERRED_OPS_MAX + 1]; /* PK_DPROG_* a conversion, then PK_DPROG_END */
	_Atomic uintptr_t tab; /* the table @ref belongs to (its address) */
	pk_a64 ref;
	pk_a64 want; /* @ref's table entry's header word, as cached with it */
};

/* A simple layout whose conversions are all integers, %c and plain %s (no
 * width, no precision) gets a program: one byte a conversion, the lane
 * walk's whole dispatch (no per-conversion width, precision or bound).
 * An integer's code holds the bytes it takes in the blob (code & 12). */
#define PK_SFMT_PROG	   2
#define PK_DPROG_END	   0
#define PK_DPROG_STR	   1
#define PK_DPROG_INT	   4
#define PK_DPROG_LONG	   8
#define PK_DPROG_LLONG	   0x18
#define PK_DPROG_SIZE(op) ((op)&12u)

/* What pk_deferred_site() says. */
enum { PK_SITE_FMT_EAGER = 0, PK_SITE_FMT_OK = 1, PK_SITE_FMT_NONE = -1 };

/*
 * The compiled form of the literal @fmt for the call site whose format
 * slot is *@slotp, compiled and published there the first time (a
 * compare-and-swap claims the slot; the claimer compiles it and stores
 * the pointer with release). PK_SITE_FMT_OK and *@sf; PK_SITE_FMT_EAGER
 * when the literal has no deferral rule (for good: the slot says so);
 * PK_SITE_FMT_NONE when the slot is being compiled by another thread (or
 * by the code a signal handler interrupted) or the pool is used up: the
 * caller takes pk_deferred_fmt()'s path.
 */
int pk_deferred_site(const void **slotp, const char *fmt, pk_deferred_headers_fn headers,
		     size_t fmt_max, const struct pk_sfmt **sf);

#define PK_SITE_FMT_MARKS 3u /* slot values below: marks, not entries */

/* pk_deferred_site(), its common case inline: the slot holds the entry. */
static PK_ALWAYS_INLINE int pk_deferred_site_fmt(const void **slotp, const char *fmt,
						 pk_deferred_headers_fn headers, size_t fmt_max,
						 const struct pk_sfmt **sf)
{
	const struct pk_sfmt *e = (const struct pk_sfmt *)__atomic_load_n(slotp, __ATOMIC_ACQUIRE);

	if (PK_LIKELY((uintptr_t)e > PK_SITE_FMT_MARKS && e->lit == fmt)) {
		*sf = e;
		return PK_SITE_FMT_OK;
	}
	return pk_deferred_site(slotp, fmt, headers, fmt_max, sf);
}

/* Entries of the pool handed out so far (for tests). */
unsigned pk_deferred_sites_used(void);

/*
 * @sf's reference in @rb's table: from its cache when that is @rb's table
 * and the entry still holds it, otherwise through pk_deferred_fmt() and
 * pk_deferred_ref() (one entry per literal and table, whichever path
 * added it), cached then. 0, or -ENOSPC / -EAGAIN (that path cannot give
 * one now: the caller formats eagerly).
 */
int pk_deferred_site_ref(struct prb *rb, const struct pk_sfmt *sf, const char *fmt,
			 pk_deferred_headers_fn headers, size_t fmt_max, uint64_t *ref);

/* A table entry's header word (deferred.c's layout): magic, the format's
 * length, the check its reference repeats. */
#define PK_DEFERRED_ENTRY_MAGIC UINT64_C(0xd3f0)
#define PK_DEFERRED_TAB_HDR	64u
static PK_ALWAYS_INLINE uint64_t pk_deferred_entry_header(size_t len, uint32_t check)
{
	return PK_DEFERRED_ENTRY_MAGIC | (uint64_t)len << 16 | (uint64_t)check << 32;
}

/* The table's word at byte offset @off (8-aligned, checked against the
 * table's size by the caller). */
static PK_ALWAYS_INLINE const pk_a64 *pk_deferred_tab_word(const struct prb *rb, uint32_t off)
{
	return (const pk_a64 *)(const void *)((const char *)rb->strtab + off);
}

/* pk_deferred_site_ref()'s cache hit, inline: true and *@ref when @sf's
 * cached reference is @rb's table's and the entry's header still holds
 * it; false: call pk_deferred_site_ref(). */
static PK_ALWAYS_INLINE bool pk_deferred_site_ref_cached(const struct prb *rb, const struct pk_sfmt *sf,
							 uint64_t *ref)
{
	struct pk_sfmt *m = (struct pk_sfmt *)(uintptr_t)sf; /* its cache only */
	uintptr_t tab = atomic_load_explicit(&m->tab, memory_order_acquire);

	if (PK_UNLIKELY(tab != (uintptr_t)rb->strtab))
		return false;

	uint64_t r = pk_load_relaxed(&m->ref);
	uint32_t off = (uint32_t)r;

	/* A cached reference is one entry_add() gave (8-aligned, past the
	 * table's header), stored before the table's address is (release):
	 * a table found here comes with a reference, maybe another
	 * thread's for another table, never none. The table's size is
	 * checked (another table may have taken the address, the reference
	 * may be another table's); the entry's header word, whose check
	 * hashes the entry's offset, length and bytes, is what is trusted:
	 * @want is it, (r & ~0xffffffff) | entry_lo, cached with @ref. */
	if (PK_UNLIKELY((uint64_t)off + 8 > rb->strtab_size) ||
	    PK_UNLIKELY(pk_load_acquire(pk_deferred_tab_word(rb, off)) !=
			pk_load_relaxed(&m->want)))
		return false;
	*ref = r;
	return true;
}

/*
 * pk_deferred_encode() for a site's compiled literal: the same blob and
 * the same answer (-1 in exactly the same cases), by a walk that knows
 * the layout's fixed part in advance when @sf is simple.
 */
int pk_deferred_encode_site(const struct pk_sfmt *sf, uint64_t ref, va_list *ap, char *blob,
			    size_t cap);

/* The lane walk's %s copy reads the string by aligned words on
 * little-endian 64-bit GNU C (a word that holds one byte of the string is
 * on that byte's page, so it is readable; valgrind's memcheck accepts such
 * partial loads, as for the C library's own strlen()); sanitizers would
 * report the bytes past the terminator in the same word, so their builds,
 * and other compilers, take strnlen() and memcpy(); so does a build that
 * defines PK_DEFERRED_WORD_COPY=0. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PK_DEFERRED_WORD_COPY 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define PK_DEFERRED_WORD_COPY 0
#endif
#endif
#ifndef PK_DEFERRED_WORD_COPY
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && UINTPTR_MAX == UINT64_MAX
#define PK_DEFERRED_WORD_COPY 1
#else
#define PK_DEFERRED_WORD_COPY 0
#endif
#endif

/*
 * strnlen(@s, @lim), and that many bytes of @s copied to @d, in one pass
 * with no call; but where that is @lim, any value from @lim up may come
 * back (the callers refuse or cut at @lim). The word walk stores whole
 * words: it may write up to 8 bytes past @d + the length, never past
 * @d + @lim + 7 (the lane walk's room has them: its reservation's 8
 * spare bytes, and what it writes after the string, the record's zero
 * padding included, covers them). @terminated: @s is a string printf
 * would read whole (a plain %s), so s[0] is readable even when @lim is 0.
 */
static PK_ALWAYS_INLINE size_t pk_deferred_copy_str(char *d, const char *s, size_t lim, bool terminated)
{
#if PK_DEFERRED_WORD_COPY
	const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
	uint64_t w;

	if (!terminated && PK_UNLIKELY(!lim))
		return 0;
	/* The aligned word that holds s[0] (never one byte past the
	 * string's last aligned word: memcheck takes such partial loads as
	 * it takes strlen()'s); the bytes before s shifted out and read as
	 * 0xff (not a terminator). */
	unsigned mis = (unsigned)((uintptr_t)s & 7);

	memcpy(&w, (const char *)(uintptr_t)((uintptr_t)s - mis), 8);
	if (mis)
		w = w >> (8 * mis) | ~(~UINT64_C(0) >> (8 * mis));
	memcpy(d, &w, 8);

	uint64_t z = (w - ones) & ~w & highs; /* its lowest bit: the first zero byte */
	size_t base = 0;

	if (PK_UNLIKELY(!z)) {
		/* Bytes known to be no terminator: up to s's next aligned
		 * word. */
		size_t next = 8 - (size_t)((uintptr_t)s & 7);

		do {
			if (next >= lim)
				return lim;
			base = next;
			memcpy(&w, s + base, 8);
			memcpy(d + base, &w, 8);
			z = (w - ones) & ~w & highs;
			next = base + 8;
		} while (!z);
	}
	return base + (size_t)__builtin_ctzll(z) / 8;
#else
	(void)terminated;

	size_t n = strnlen(s, lim);

	memcpy(d, s, n);
	return n;
#endif
}

/* The lane walk reads a program's arguments (all of them integers or
 * pointers) straight from the variadic function's register save area
 * when they are all there, on x86-64's System V ABI: its va_list is
 * { unsigned gp_offset, fp_offset; void *overflow_arg_area, *reg_save_area; }
 * (the psABI's, gcc's and clang's), the integer registers' save area
 * 48 bytes, one 8-byte slot an argument whatever its type (an int in its
 * low half). That saves va_arg()'s offset test and update per argument.
 * Anywhere else, or with arguments on the stack, va_arg() as before; a
 * build that defines PK_DEFERRED_VA_REGS=0 takes va_arg() always. */
#ifndef PK_DEFERRED_VA_REGS
#if defined(__x86_64__) && !defined(__ILP32__) && !defined(_WIN32) && !defined(__CYGWIN__) && \
	(defined(__GNUC__) || defined(__clang__))
#define PK_DEFERRED_VA_REGS 1
#else
#define PK_DEFERRED_VA_REGS 0
#endif
#endif

/*
 * Where the lane walk finds the arguments @ap has left for @sf's program
 * (PK_DEFERRED_VA_REGS): the first one's slot in the register save area
 * when @sf has a program and all of them are there, else NULL (the walk
 * takes va_arg()). @ap is left as it is.
 */
static PK_ALWAYS_INLINE const char *pk_deferred_lane_regs(const struct pk_sfmt *sf, va_list *ap)
{
#if PK_DEFERRED_VA_REGS
	unsigned gp;
	const char *save;

	memcpy(&gp, (const char *)(const void *)*ap, sizeof(gp));
	memcpy(&save, (const char *)(const void *)*ap + 16, sizeof(save));
	/* gp + 8 * nops <= 48, and a program (0 else). */
	if (PK_LIKELY(gp < sf->va_gp_end))
		return save + gp;
#else
	(void)sf, (void)ap;
#endif
	return NULL;
}

/* The program's %s: copy the string at @s after its length into @o
 * (what is left for the strings' bytes: *@left); the blob's new end, or
 * NULL to refuse. */
static PK_ALWAYS_INLINE char *pk_deferred_lane_str(char *o, const char *s, size_t *left)
{
	if (PK_UNLIKELY((uintptr_t)s < PK_DEFERRED_BAD_PTR_LOW) ||
	    PK_UNLIKELY((uintptr_t)s > UINTPTR_MAX - PK_DEFERRED_BAD_PTR_HIGH))
		return NULL;

	/* A string that reaches what is left might not fit: refused. */
	size_t n = pk_deferred_copy_str(o + 2, s, *left, true);

	if (PK_UNLIKELY(n >= *left))
		return NULL;

	uint16_t n16 = (uint16_t)n;

	memcpy(o, &n16, 2);
	*left -= n;
	return o + 2 + n;
}

/*
 * pk_deferred_encode_site() of a simple layout (@sf->simple: the caller
 * checks) into @cap bytes that may be fewer than PRB_TEXT_MAX (the room
 * left in a lane; at most @sf->lane_cap, which a program's bound needs):
 * the blob it returns is byte for byte pk_deferred_encode_site()'s, and
 * it returns -1 whenever that does with PRB_TEXT_MAX bytes, and also when
 * the blob might not fit @cap (a %s that fills what is left): the caller
 * then takes the general path. Consumes *@ap (inline, so that the
 * variadic function's own va_list is read with no call and no copy; it
 * starts it again if it needs the arguments once more), or, with @regs
 * (pk_deferred_lane_regs() of @ap, for a program), reads them there and
 * leaves *@ap alone. True and the blob's length in *@len, or false (the
 * -1 of pk_deferred_encode_lane() below). @cap is at least
 * @sf->fixed_size (the caller checks: a lane's reservation asks for it).
 */
static PK_ALWAYS_INLINE bool pk_deferred_lane_walk(const struct pk_sfmt *sf, uint64_t ref, va_list *ap,
						  const char *regs, char *blob, size_t cap, size_t *len)
{
	const struct pk_dfmt *f = &sf->f;

	/* Room checked once (by the caller): the fixed part, then what is
	 * left for the strings' bytes. A %s that reaches that is refused
	 * (it might not fit: pk_deferred_encode_site() with all
	 * PRB_TEXT_MAX decides); one below it leaves
	 * pk_deferred_encode_site()'s own limit, at least as large,
	 * unreached, so both take the same length. */
	size_t left = cap - sf->fixed_size;
	char *o = blob;

	memcpy(o, &ref, sizeof(ref));
	o += sizeof(ref);
	if (PK_LIKELY(regs != NULL) || sf->simple == PK_SFMT_PROG) {
		/* The same bytes as the walk below: without widths the
		 * bound is fixed_bound plus the strings' bytes, so it holds
		 * exactly when the blob is at most len_max. With @cap at
		 * most len_max + 1 (lane_cap), a string that reaches what
		 * is left is refused: so is every blob past len_max, with
		 * no test at the end. */
		if (regs) {
			/* Each slot stored whole: an int's upper half lands
			 * where the next argument, or the record's zero
			 * padding (prb_lane_publish()), goes; cap >=
			 * fixed_size leaves room for it. */
			const char *a = regs;

			for (const uint8_t *k = sf->prog;; k++, a += 8) {
				unsigned op = *k;

				if (PK_LIKELY(op >= PK_DPROG_INT)) {
					memcpy(o, a, 8);
					o += PK_DPROG_SIZE(op);
					continue;
				}
				if (op == PK_DPROG_END)
					break;

				const char *s;

				memcpy(&s, a, sizeof(s));
				o = pk_deferred_lane_str(o, s, &left);
				if (PK_UNLIKELY(!o))
					return false;
			}
		} else {
			for (const uint8_t *k = sf->prog;; k++) {
				switch (*k) {
				case PK_DPROG_INT: {
					int32_t v = va_arg(*ap, int);

					memcpy(o, &v, 4);
					o += 4;
					continue;
				}
				case PK_DPROG_LONG: {
					int64_t v = va_arg(*ap, long);

					memcpy(o, &v, 8);
					o += 8;
					continue;
				}
				case PK_DPROG_LLONG: {
					int64_t v = va_arg(*ap, long long);

					memcpy(o, &v, 8);
					o += 8;
					continue;
				}
				case PK_DPROG_STR:
					o = pk_deferred_lane_str(o, va_arg(*ap, const char *),
								 &left);
					if (PK_UNLIKELY(!o))
						return false;
					continue;
				default:
					break;
				}
				break;
			}
		}

		*len = (size_t)(o - blob);
		return true;
	}

	size_t bound = sf->fixed_bound;

	for (const struct pk_dop *op = f->ops, *end = f->ops + f->nops; op < end; op++) {
		switch (op->cls) {
		case PK_DCLS_INT: {
			int32_t v = va_arg(*ap, int);

			memcpy(o, &v, 4);
			o += 4;
			break;
		}
		case PK_DCLS_LONG: {
			int64_t v = va_arg(*ap, long);

			memcpy(o, &v, 8);
			o += 8;
			break;
		}
		case PK_DCLS_LLONG: {
			int64_t v = va_arg(*ap, long long);

			memcpy(o, &v, 8);
			o += 8;
			break;
		}
		case PK_DCLS_DBL: {
			double v = va_arg(*ap, double);

			if ((op->flags & PK_DOP_FIXED) && isfinite(v) && !(v < 1e17 && v > -1e17))
				goto out;
			memcpy(o, &v, 8);
			o += 8;
			break;
		}
		default: {
			const char *s = va_arg(*ap, const char *);
			int p = op->prec;

			if (PK_UNLIKELY((uintptr_t)s < PK_DEFERRED_BAD_PTR_LOW) ||
			    PK_UNLIKELY((uintptr_t)s > UINTPTR_MAX - PK_DEFERRED_BAD_PTR_HIGH))
				goto out;

			size_t lim = p >= 0 && (size_t)p <= left ? (size_t)p : left;
			size_t n = pk_deferred_copy_str(o + 2, s, lim, false);

			if (n > lim)
				n = lim;

			/* Cut by its precision, or refused. A string below lim
			 * leaves at least 3 bytes from its length on; one cut
			 * at lim keeps pk_deferred_encode_site()'s rule that a
			 * %s needs 3 bytes left, even an empty one. */
			if (PK_UNLIKELY(n == lim) &&
			    (!(p >= 0 && (size_t)p == n) || cap - (size_t)(o - blob) < 3))
				goto out;

			uint16_t n16 = (uint16_t)n;

			memcpy(o, &n16, 2);
			o += 2 + n;
			left -= n;
			bound += n > (size_t)op->width ? n : (size_t)op->width;
			break;
		}
		}
	}
	if (PK_UNLIKELY(bound > f->out_max))
		return false;
	*len = (size_t)(o - blob);
	return true;
out:
	return false;
}

/* pk_deferred_lane_walk()'s blob length, or -1 where it gives none. */
static PK_ALWAYS_INLINE int pk_deferred_encode_lane(const struct pk_sfmt *sf, uint64_t ref, va_list *ap,
						    const char *regs, char *blob, size_t cap)
{
	size_t len;

	if (PK_UNLIKELY(cap < sf->fixed_size))
		return -1;
	return pk_deferred_lane_walk(sf, ref, ap, regs, blob, cap, &len) ? (int)len : -1;
}

/*
 * Replace the deferred record @len bytes at @text by its text, cut at
 * PK_TEXT_MAX bytes and NUL-terminated (@text has room for PK_TEXT_MAX + 1),
 * and clear PRB_FLAG_DEFERRED in *@flags. @scratch: PK_TEXT_MAX + 1 bytes
 * it may use (NULL: its own, on the stack). Returns the text's length. A
 * blob or table entry that does not validate gives PK_DEFERRED_BAD_TEXT.
 */
size_t pk_deferred_expand(const struct prb *rb, char *text, size_t len, uint8_t *flags,
			  char *scratch);

/*
 * A bulk reader's memory of the formats it expanded (one per thread, e.g.
 * each of udmesg's): pk_deferred_expand_cached() expands a record whose
 * format it met before without copying, checking and parsing the table
 * entry again. What it holds are copies taken when they validated: a table
 * changed afterwards (a hostile file) changes none of them, and a record's
 * blob is checked against them as against a fresh copy. A cache follows
 * one ring at a time (another ring empties it). Allocated (about 130 KiB;
 * NULL when memory is short), so not for signal handlers.
 */
struct pk_dfmt_cache;
struct pk_dfmt_cache *pk_dfmt_cache_new(void);
void pk_dfmt_cache_free(struct pk_dfmt_cache *fc);
/* pk_deferred_expand() through @fc (NULL: without one). */
size_t pk_deferred_expand_cached(const struct prb *rb, char *text, size_t len, uint8_t *flags,
				 struct pk_dfmt_cache *fc);
/* The same, and *@plain true when the text is known to be printable ASCII
 * only (bytes 0x20-0x7e: what dmesg prints as it is; false: not known). */
size_t pk_deferred_expand_plain(const struct prb *rb, char *text, size_t len, uint8_t *flags,
				struct pk_dfmt_cache *fc, bool *plain);

/* The table's counters. */
struct pk_deferred_stats {
	uint64_t used;	 /* bytes of entries */
	uint64_t size;	 /* bytes of room for entries */
	uint64_t full;	 /* messages formatted eagerly because the table was full */
};
void pk_deferred_table_stats(const struct prb *rb, struct pk_deferred_stats *st);

#endif
