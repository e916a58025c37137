// SPDX-License-Identifier: MIT
/*
 * test_deferred.c - deferred records (pk_printk_lit, src/format/deferred.c): a
 * message no console prints, stored as its format's reference and binary
 * arguments, reads back byte for byte as eager formatting stores it.
 *   - 100,000 random calls over formats of every conversion with a rule
 *     (and some without: %p, a body that starts with a conversion), each
 *     stored three ways (eagerly, deferred by its literal, deferred by
 *     its call site's compiled form: pk__printk_lit_site): same text, length, level and flags, through
 *     pk_log_read() and pk_text_read() (with a bulk reader's format cache
 *     and without); outputs past the 1023-byte cut too;
 *   - continuation: an open line, then a deferred line, then a KERN_CONT
 *     fragment: the same records as eagerly;
 *   - a reader in another process (udmesg, exec'd on a log file) prints the
 *     same bytes for a log of deferred records as for the eager one;
 *   - a full format table: the messages are formatted eagerly, counted
 *     exactly, and read back right;
 *   - a damaged table entry (and a blob that does not match its format)
 *     reads as the placeholder, never crashes; a format cache keeps no
 *     entry that does not validate, and a copy it took stays as it was;
 *   - a level a console prints, a continuation and an open line are never
 *     deferred; pr_info() reaches the deferred path;
 *   - a call site compiles its literal once: its format slot is set at
 *     its first call and never changes, one pool entry per site; a literal
 *     without a rule marks the site; a site handed another literal, and a
 *     site whose slot is being compiled, still store the right text;
 *   - writer threads storing deferred records while a reader reads them:
 *     every record whole (TSan watches the table and the cache).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/printk.h>

#include "format/deferred.h"
#include "fixture.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "printk/printk_internal.h"
#include "readers/reader.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
#endif

/* ------------------------------------------------------- random calls -- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define POOL 64
static char pool[POOL][1200];

struct vals {
	int i[6];
	unsigned u[4];
	long l;
	unsigned long ul;
	long long ll;
	unsigned long long ull;
	size_t z;
	ssize_t sz;
	ptrdiff_t t;
	intmax_t j;
	uintmax_t uj;
	double d[4];
	int w, p, c;
	const char *s[3];
};

static int rnd_int(void)
{
	switch (rnd() % 6) {
	case 0:
		return INT_MIN;
	case 1:
		return INT_MAX;
	case 2:
		return (int)(rnd() % 200) - 100;
	case 3:
		return 0;
	default:
		return (int)(uint32_t)rnd();
	}
}

static double rnd_double(void)
{
	switch (rnd() % 10) {
	case 0:
		return 0.0;
	case 1:
		return -0.0;
	case 2:
		return NAN;
	case 3:
		return -INFINITY;
	case 4:
		return 1e300; /* %f of it: formatted eagerly */
	case 5:
		return 5e-324;
	case 6:
		return (double)(int64_t)rnd() / 1000.0;
	default: {
		uint64_t b = rnd();
		double d;

		memcpy(&d, &b, sizeof(d));
		return d;
	}
	}
}

static void make_pool(void)
{
	for (int k = 0; k < POOL; k++) {
		size_t n;

		switch (k % 8) {
		case 0:
			n = 0;
			break;
		case 1:
			n = 860 + rnd() % 240; /* around the 1023-byte cut */
			break;
		case 2:
			n = 300 + rnd() % 400;
			break;
		default:
			n = rnd() % 40;
		}
		for (size_t i = 0; i < n; i++)
			pool[k][i] = (char)(1 + rnd() % 255);
		pool[k][n] = '\0';
	}
	strcpy(pool[3], "abc");
	strcpy(pool[4], "%d %s %n"); /* conversions in an argument print as they are */
	strcpy(pool[5], "\0016a level header"); /* parsed when it starts the text */
	strcpy(pool[6], "\001");
	strcpy(pool[7], "\001c\0015");
}

static void rnd_vals(struct vals *v)
{
	for (int k = 0; k < 6; k++)
		v->i[k] = rnd_int();
	for (int k = 0; k < 4; k++)
		v->u[k] = (unsigned)rnd_int();
	v->l = (long)rnd();
	v->ul = (unsigned long)rnd() >> (rnd() % 64);
	v->ll = (long long)rnd();
	v->ull = rnd();
	v->z = (size_t)rnd() >> (rnd() % 64);
	v->sz = -(ssize_t)(rnd() % 1000);
	v->t = (ptrdiff_t)rnd();
	v->j = (intmax_t)rnd();
	v->uj = (uintmax_t)rnd();
	for (int k = 0; k < 4; k++)
		v->d[k] = rnd_double();
	v->w = (int)(rnd() % 90) - 30;
	v->p = (int)(rnd() % 60) - 10;
	v->c = (int)(rnd() % 256);
	for (int k = 0; k < 3; k++)
		v->s[k] = pool[rnd() % POOL];
}

/* One call site per message of the set, as the pr_*() macros make. */
static struct pk_site sites[32];

#define CALL(lit, ...) ((lit) ? pk_printk_lit(__VA_ARGS__) : pk_printk(__VA_ARGS__))
/* @lit: 0 eagerly, 1 pk_printk_lit(), 2 through message k's call site. */
#define CALLK(lit, ...) \
	((lit) == 2 ? pk__printk_lit_site(&sites[k], __VA_ARGS__) : CALL(lit, __VA_ARGS__))
#define NCALLS 23

/* Message @k of the set, with @v, eagerly (@lit 0) or deferred (@lit 1:
 * by the literal, 2: by its call site). */
static int call(int k, int lit, const struct vals *v)
{
	switch (k) {
	case 0:
		return CALLK(lit, KERN_INFO "worker %d processed %s in %lu us\n", v->i[0], v->s[0], v->ul);
	case 1:
		return CALLK(lit, KERN_DEBUG "%5d|%-5d|%+d|% d|%05d|%x|%#X|%o|%#o|%u|%.0d|%.3d\n",
			    v->i[0], v->i[1], v->i[2], v->i[3], v->i[4], v->u[0], v->u[1], v->u[2],
			    v->u[3], v->u[0], v->i[5], v->i[0]);
	case 2:
		return CALLK(lit, KERN_NOTICE "%hhd %hd %hhu %hx %c%c|\n", (signed char)v->i[0],
			    (short)v->i[1], (unsigned char)v->u[0], (unsigned short)v->u[1], v->c,
			    v->i[2]);
	case 3:
		return CALLK(lit, "%ld %lu %lx %lld %llu %llx %zu %zd %zx %td %jd %ju\n", v->l, v->ul,
			    v->ul, v->ll, v->ull, v->ull, v->z, v->sz, v->z, v->t, v->j, v->uj);
	case 4:
		return CALLK(lit, KERN_INFO "%*d|%-*d|%.*d|%*.*d|%*s|%.*s|%-*.*s|\n", v->w, v->i[0], v->w,
			    v->i[1], v->p, v->i[2], v->w, v->p, v->i[3], v->w, v->s[0], v->p, v->s[1],
			    v->w, v->p, v->s[2]);
	case 5:
		return CALLK(lit, KERN_ERR "%s|%.3s|%10s|%-10s|%s\n", v->s[0], v->s[1], v->s[2], v->s[0],
			    v->s[1]);
	case 6:
		return CALLK(lit, KERN_WARNING "%f %e %g %a|%.3f %10.2e %G %E|%F %A %lf %#g %+.0e\n",
			    v->d[0], v->d[1], v->d[2], v->d[3], v->d[0], v->d[1], v->d[2], v->d[3],
			    v->d[1], v->d[2], v->d[3], v->d[0], v->d[1]);
	case 7:
		return CALLK(lit, KERN_INFO "%%literal %% and %d%%\n", v->i[0]);
	case 8:
		return CALLK(lit, KERN_INFO "no conversions at all\n");
	case 9:
		return CALLK(lit, KERN_INFO "prefix: %s\n", v->s[0]);
	case 10:
		return CALLK(lit, KERN_INFO "multi\nline %d\n\n", v->i[0]);
	case 11:
		return CALLK(lit, KERN_INFO "\n");
	case 12:
		return CALLK(lit, KERN_INFO "%d %s %p\n", v->i[0], v->s[0], (void *)v->s[1]);
	case 13: /* a text that starts with conversions: headers they print count */
		return CALLK(lit, "%s\n", v->s[0]);
	case 18:
		return CALLK(lit, KERN_INFO "%s%s: %d\n", v->s[0], v->s[1], v->i[0]);
	case 19:
		return CALLK(lit, KERN_INFO "%.0d%c%s|\n", v->i[0] % 2, v->c % 3, v->s[0]);
	case 20:
		return CALLK(lit, "%s" "\001" "5 literal after\n", v->s[0]);
	case 14:
		return CALLK(lit, KERN_INFO KERN_ERR "two headers %d\n", v->i[0]);
	case 15:
		return CALLK(lit, KERN_DEBUG "tab\there %x %s %s\n", v->u[0], v->s[0], v->s[1]);
	case 16:
		return CALLK(lit, KERN_INFO "%-#8.3x|%0*ld|%-5d|%#.0o|%.5u|%+.0d\n", v->u[0], v->w, v->l,
			    v->i[0], v->u[1], v->u[2], v->i[1]);
	case 21:
		return CALLK(lit, "\001" "%c not a header yet\n", '4' + v->c % 2);
	case 22: /* printk's precisions: "." alone is none, a negative "*" is 0 */
		return CALLK(lit, KERN_INFO "%.s|%-3.s|%.d|%4.*s|%.*s|%1.0d|%.0s|%.*d\n", v->s[0],
			    v->s[1], v->i[0] % 3, v->p, v->s[2], -v->p, v->s[0], v->i[1] % 2, v->s[1],
			    v->p, v->i[2] % 2);
	case 17: /* a text past the cut from a blob that fits a record */
		return CALLK(lit, KERN_INFO "cut: %s|%100d|%50d\n", v->s[0], v->i[0], v->i[1]);
	default:
		return CALLK(lit, KERN_INFO "%s%s%s\n", v->s[0], v->s[1], v->s[2]);
	}
}

static struct pk_record eager_rec;
static char fast_text[PK_TEXT_READ_ROOM];

static void read_seq(uint64_t seq, struct pk_record *r)
{
	assert_int_equal(pk_log_read(pk_printk_log(), seq, r, 0), 0);
	assert_int_equal(r->seq, seq);
}

static void assert_same(const struct pk_record *a, const struct pk_record *b)
{
	assert_int_equal(a->text_len, b->text_len);
	assert_memory_equal(a->text, b->text, a->text_len);
	assert_int_equal(a->level, b->level);
	assert_int_equal(a->facility, b->facility);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->dict_len, b->dict_len);
}

/* Built with PRINTK_DEFERRED=OFF, nothing is deferred: the tests that
 * count deferred records skip (the byte comparisons still run). */
static bool deferral_built(void)
{
	uint64_t d0 = pk_printk_deferred_here();

	pk_printk_lit(KERN_DEBUG "probe\n");
	return pk_printk_deferred_here() != d0;
}

static int setup_big(void **state)
{
	(void)state;
	capture_setup(&cap, 1 << 20);
	pk_set_console_loglevel(1); /* only KERN_EMERG prints */
	return 0;
}

static void test_random_calls_same_bytes(void **state)
{
	(void)state;
	struct vals v;
	uint64_t deferred0 = pk_printk_deferred_here();
	unsigned cut = 0;
	struct pk_text_reader *tr = pk_log_text_reader(pk_printk_log());
	struct pk_text_cache *cache = pk_text_cache_new();

	assert_non_null(cache);
	make_pool();
	for (unsigned n = 0; n < 100000; n++) {
		int k = (int)(rnd() % NCALLS);
		uint64_t seq = next_seq();

		rnd_vals(&v);
		call(k, 0, &v);

		uint64_t before = pk_printk_deferred_here();

		call(k, 1, &v);
		bool was_deferred = pk_printk_deferred_here() != before;

		before = pk_printk_deferred_here();
		call(k, 2, &v);
		/* The site's compiled form takes exactly the calls the
		 * literal's walk takes. */
		assert_int_equal(pk_printk_deferred_here() != before, was_deferred);

		read_seq(seq, &eager_rec);
		read_seq(seq + 2, &rec);
		assert_same(&eager_rec, &rec);
		read_seq(seq + 1, &rec);
		assert_same(&eager_rec, &rec);

		uint64_t ts;
		int len = pk_text_read(tr, NULL, seq + 1, &ts, fast_text);

		assert_int_equal(len, eager_rec.text_len);
		assert_memory_equal(fast_text, eager_rec.text, eager_rec.text_len);
		/* A bulk reader's cache of parsed formats: the same bytes. */
		memset(fast_text, 0, sizeof(fast_text));
		len = pk_text_read(tr, cache, seq + 1, &ts, fast_text);
		assert_int_equal(len, eager_rec.text_len);
		assert_memory_equal(fast_text, eager_rec.text, eager_rec.text_len);
		cut += was_deferred && eager_rec.text_len == PK_TEXT_MAX;
	}

	uint64_t deferred = pk_printk_deferred_here() - deferred0;

	pk_text_cache_free(cache);


	if (!deferral_built())
		skip();
	/* Most of the set has a rule (about 42% of these calls go the deferred
	 * way; the rest have a %p, long strings, %f of huge values...), and
	 * deferred outputs reach the 1023-byte cut. */
	assert_true(deferred > 35000);
	assert_true(cut > 100);
	assert_int_equal(capture_text(&cap)[0], '\0');
}

/* The case the issue names: pr_info() with its format literal reaches the
 * deferred path; printing levels and open lines do not. */
static void test_which_calls_defer(void **state)
{
	(void)state;
	if (!deferral_built())
		skip();

	uint64_t d0 = pk_printk_deferred_here();
	uint64_t seq = next_seq();

	pr_info("worker %d processed %s in %lu us\n", 7, "job", 42ul);
	assert_int_equal(pk_printk_deferred_here(), d0 + 1);
	read_at(seq);
	assert_string_equal(rec.text, "worker 7 processed job in 42 us");
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);

	pr_info("open line %d ", 1); /* no newline: eager */
	pr_cont("cont %d\n", 2);      /* KERN_CONT: eager */
	pr_emerg("printed %d\n", 3); /* a console prints it: eager */
	pr_info("%p\n", (void *)&d0); /* no rule for %p: eager */
	assert_int_equal(pk_printk_deferred_here(), d0 + 1);
	read_at(seq + 1);
	assert_string_equal(rec.text, "open line 1 cont 2");
	assert_string_equal(capture_text(&cap), "printed 3\n");
}

/* Format once per call site (printk.c's store_deferred, deferred.h's
 * pk_deferred_site): what the site's slot holds, and that every way a
 * site can be stores the text eager formatting stores. */
static void site_vs_eager(struct pk_site *site, int i, const char *s, unsigned long ul,
			  bool deferred)
{
	uint64_t seq = next_seq();
	uint64_t d0 = pk_printk_deferred_here();

	pk_printk(KERN_INFO "site %d processed %s in %lu us\n", i, s, ul);
	pk__printk_lit_site(site, KERN_INFO "site %d processed %s in %lu us\n", i, s, ul);
	assert_int_equal(pk_printk_deferred_here() - d0, deferred ? 1 : 0);
	read_seq(seq, &eager_rec);
	read_seq(seq + 1, &rec);
	assert_same(&eager_rec, &rec);
}

#define SITE_INIT { PK_SITE_STORE_ALL, __LINE__, 0, __FILE__, __func__, 0 }

static void test_call_site_compiled_once(void **state)
{
	(void)state;
	if (!deferral_built())
		skip();

	struct pk_site site = SITE_INIT, ptr = SITE_INIT, busy = SITE_INIT, two = SITE_INIT;
	unsigned used0 = pk_deferred_sites_used();
	const void *first = NULL;

	for (int i = 0; i < 200; i++) {
		site_vs_eager(&site, i - 100, i % 3 ? "request" : "", (unsigned long)i << (i % 60),
			      true);
		if (!first)
			first = site.format;
		assert_ptr_equal(site.format, first);
	}
	assert_true((uintptr_t)first > PK_SITE_FMT_MARKS);
	assert_int_equal(pk_deferred_sites_used(), used0 + 1);

	/* A literal without a rule: the site remembers it, takes no entry,
	 * and its messages are formatted eagerly. */
	for (int i = 0; i < 3; i++) {
		uint64_t seq = next_seq(), d0 = pk_printk_deferred_here();

		pk__printk_lit_site(&ptr, KERN_INFO "ptr %d %p\n", i, (void *)0);
		assert_int_equal(pk_printk_deferred_here(), d0);
		assert_non_null(ptr.format);
		assert_true((uintptr_t)ptr.format <= PK_SITE_FMT_MARKS);
		read_seq(seq, &rec);
		assert_true(rec.text_len > 6 && !memcmp(rec.text, "ptr ", 4));
	}
	assert_int_equal(pk_deferred_sites_used(), used0 + 1);

	/* A slot another thread is compiling: the literal's own path. */
	busy.format = (const void *)1;
	site_vs_eager(&busy, 5, "job", 6ul, true);
	assert_ptr_equal(busy.format, (const void *)1);

	/* One site handed two literals (not what the macros do): each
	 * message still by its own layout. */
	uint64_t seq = next_seq();

	pk__printk_lit_site(&two, KERN_INFO "first %d\n", 1);
	pk__printk_lit_site(&two, KERN_INFO "second %s %d\n", "x", 2);
	read_seq(seq, &rec);
	assert_string_equal(rec.text, "first 1");
	read_seq(seq + 1, &rec);
	assert_string_equal(rec.text, "second x 2");
	assert_int_equal(pk_deferred_sites_used(), used0 + 2);

	/* The macros' own sites: a pr_info() run 100 times takes one entry. */
	used0 = pk_deferred_sites_used();
	for (int i = 0; i < 100; i++)
		pr_info("macro site %d\n", i);
	assert_int_equal(pk_deferred_sites_used(), used0 + 1);
}

/* The continuation merge: open line, deferred line, KERN_CONT fragment. */
static void continuation_run(int lit)
{
	pk_printk(KERN_INFO "start %d ", 1);
	CALL(lit, KERN_INFO "whole %d\n", 2);
	pk_printk(KERN_CONT "frag %d\n", 3);
	pk_printk(KERN_INFO "again ");
	CALL(lit, KERN_CONT "joins %s\n", "x");
	CALL(lit, KERN_DEBUG "tail %s\n", "y");
}

static void test_continuation_same_records(void **state)
{
	(void)state;
	struct pk_record want[5];
	uint64_t seq = next_seq();

	continuation_run(0);
	assert_int_equal(next_seq(), seq + 5);
	for (int i = 0; i < 5; i++)
		read_seq(seq + (uint64_t)i, &want[i]);

	uint64_t d0 = pk_printk_deferred_here();

	if (!deferral_built())
		skip();
	d0 = pk_printk_deferred_here();
	seq = next_seq();
	continuation_run(1);
	assert_int_equal(pk_printk_deferred_here(), d0 + 2);
	assert_int_equal(next_seq(), seq + 5);
	for (int i = 0; i < 5; i++) {
		read_seq(seq + (uint64_t)i, &rec);
		assert_same(&want[i], &rec);
	}
	assert_string_equal(want[0].text, "start 1 ");
	assert_string_equal(want[1].text, "whole 2");
	assert_int_equal(want[2].flags, PK_REC_NEWLINE | PK_REC_CONT);
	assert_string_equal(want[3].text, "again joins x");
}

/* ------------------------------------------------ another process reads -- */

static void fill_file(const char *path, int lit, uint64_t seed)
{
	struct vals v;

	pk_printk_exit();
	assert_int_equal(pk_set_log_buf_len(128 * 1024), 0);
	assert_int_equal(pk_set_log_buf_file(path, 0), 0);
	pk_set_console_loglevel(1);
	rng = seed;
	for (unsigned n = 0; n < 300; n++) {
		int k = (int)(rnd() % NCALLS);

		rnd_vals(&v);
		call(k, lit, &v);
	}
}

/* udmesg's output for @path with @arg into @out (NUL-terminated). */
static size_t run_udmesg(const char *path, const char *arg, char *out, size_t size)
{
	const char *const args[] = { arg, NULL };

	return test_udmesg_output(path, args, out, size);
}

/* udmesg -B @path [@arg] into @out (NUL-terminated), with the escapes of
 * its default format (test_udmesg_output() asks for --noescape). */
static size_t run_udmesg_escaped(const char *path, const char *arg, char *out, size_t size)
{
	const char *const args[] = { arg, NULL };

	return test_udmesg_output_escaped(path, args, out, size);
}

/* --kmsg output without each record's time (the 3rd field). */
static size_t strip_times(char *buf, size_t n)
{
	size_t o = 0;
	int field = 0;
	bool head = true, skip = false;

	for (size_t i = 0; i < n; i++) {
		char ch = buf[i];

		if (head && ch == ',') {
			field++;
			skip = field == 2;
			if (field == 3)
				skip = false;
		} else if (head && ch == ';') {
			head = false;
			skip = false;
		} else if (ch == '\0') {
			head = true;
			field = 0;
		}
		if (!skip)
			buf[o++] = ch;
	}
	return o;
}

static char out_a[1 << 23], out_b[1 << 23];

static void test_other_process_reads_same_text(void **state)
{
	(void)state;
	const char *pa = test_dir_path("eager.log");
	const char *pb = test_dir_path("deferred.log");

	if (!deferral_built())
		skip();
	make_pool();
	fill_file(pa, 0, 12345);

	uint64_t d0 = pk_printk_deferred_here();

	fill_file(pb, 1, 12345);
	assert_true(pk_printk_deferred_here() - d0 > 90);
	assert_int_equal(pk_log_first_seq(pk_printk_log()), 0); /* nothing overwritten */
	pk_printk_exit(); /* let go of the file */

	size_t na = run_udmesg(pa, "-t", out_a, sizeof(out_a));
	size_t nb = run_udmesg(pb, "-t", out_b, sizeof(out_b));

	assert_true(na > 10000);
	assert_int_equal(na, nb);
	assert_memory_equal(out_a, out_b, na);

	na = strip_times(out_a, run_udmesg(pa, "--kmsg", out_a, sizeof(out_a)));
	nb = strip_times(out_b, run_udmesg(pb, "--kmsg", out_b, sizeof(out_b)));
	assert_int_equal(na, nb);
	assert_memory_equal(out_a, out_b, na);

	/* The default format's fast path (a printable text's escape scan
	 * skipped, the time prefix kept per microsecond) prints what the
	 * general path prints for the same format (--time-format=raw takes
	 * it), control characters and high bytes in the strings included. */
	na = run_udmesg_escaped(pb, NULL, out_a, sizeof(out_a));
	nb = run_udmesg_escaped(pb, "--time-format=raw", out_b, sizeof(out_b));
	assert_true(na > 10000);
	assert_int_equal(na, nb);
	assert_memory_equal(out_a, out_b, na);
}

/* -------------------------------------------------- table full, damage -- */

#define NFMT 200
static char fmts[NFMT][32];

static void test_table_full_falls_back(void **state)
{
	(void)state;
	struct prb *rb = pk_printk_ring();
	struct pk_deferred_stats st;

	capture_setup(&cap, 4096);
	pk_set_console_loglevel(1);
	if (!deferral_built())
		skip();
	capture_setup(&cap, 4096);
	pk_set_console_loglevel(1);
	rb = pk_printk_ring();
	assert_int_equal(rb->strtab_size, 4096);
	/* Bodies of 21 bytes: an entry of 32 bytes each; 4032 bytes of room
	 * take 126 of them. */
	for (int k = 0; k < NFMT; k++)
		snprintf(fmts[k], sizeof(fmts[k]), KERN_INFO "format number %03d: %%d\n", k);

	uint64_t d0 = pk_printk_deferred_here();

	for (int k = 0; k < NFMT; k++) {
		uint64_t seq = next_seq();
		char want[64];

		pk_printk_lit(fmts[k], k * 3);
		read_at(seq);
		snprintf(want, sizeof(want), "format number %03d: %d", k, k * 3);
		assert_string_equal(rec.text, want);
	}
	assert_int_equal(pk_printk_deferred_here() - d0, 126);
	pk_deferred_table_stats(rb, &st);
	assert_int_equal(st.full, NFMT - 126);
	assert_int_equal(st.used, 126 * 32);
	assert_int_equal(st.size, 4096 - 64);

	/* Known formats stay deferred. */
	pk_printk_lit(fmts[5], 1);
	assert_int_equal(pk_printk_deferred_here() - d0, 127);
}

static void test_damaged_entry_placeholder(void **state)
{
	(void)state;
	struct prb *rb = pk_printk_ring();

	if (!deferral_built())
		skip();

	uint64_t seq = next_seq();
	uint64_t d0 = pk_printk_deferred_here();

	pr_info("damage me %d %s\n", 1, "x");
	pr_info("damage me %d %s\n", 2, "yy");
	assert_int_equal(pk_printk_deferred_here(), d0 + 2);
	read_at(seq);
	assert_string_equal(rec.text, "damage me 1 x");

	/* One byte of the entry's format: its check fails. */
	size_t at = 0;

	for (size_t i = 8; i < rb->strtab_size / 8 && !at; i++) {
		uint64_t v = pk_load_relaxed(&rb->strtab[i]);

		if (!memcmp(&v, "damage m", 8))
			at = i;
	}
	assert_true(at > 8);

	uint64_t w = pk_load_relaxed(&rb->strtab[at]);

	pk_store_relaxed(&rb->strtab[at], w ^ 0x20);
	read_at(seq);
	assert_string_equal(rec.text, PK_DEFERRED_BAD_TEXT);
	assert_int_equal(rec.text_len, strlen(PK_DEFERRED_BAD_TEXT));
	assert_int_equal(rec.flags, PK_REC_NEWLINE);

	char text[PK_TEXT_READ_ROOM];
	uint64_t ts;
	struct pk_text_reader *tr = pk_log_text_reader(pk_printk_log());
	struct pk_text_cache *cache = pk_text_cache_new();
	int n = pk_text_read(tr, NULL, seq + 1, &ts, text);

	assert_int_equal(n, (int)strlen(PK_DEFERRED_BAD_TEXT));
	assert_memory_equal(text, PK_DEFERRED_BAD_TEXT, (size_t)n);
	/* A bulk reader's cache keeps no entry that does not validate... */
	assert_non_null(cache);
	for (int i = 0; i < 2; i++) {
		n = pk_text_read(tr, cache, seq + 1, &ts, text);
		assert_int_equal(n, (int)strlen(PK_DEFERRED_BAD_TEXT));
		assert_memory_equal(text, PK_DEFERRED_BAD_TEXT, (size_t)n);
	}

	/* A header its writer never stored (killed between bytes and header). */
	pk_store_relaxed(&rb->strtab[at], w);
	read_at(seq);
	assert_string_equal(rec.text, "damage me 1 x");
	n = pk_text_read(tr, cache, seq + 1, &ts, text);
	assert_int_equal(n, (int)strlen("damage me 2 yy"));
	assert_memory_equal(text, "damage me 2 yy", (size_t)n);
	/* ...and what it took when it validated stays what it was. */
	pk_store_relaxed(&rb->strtab[at], w ^ 0x20);
	n = pk_text_read(tr, cache, seq + 1, &ts, text);
	assert_memory_equal(text, "damage me 2 yy", (size_t)n);
	pk_store_relaxed(&rb->strtab[at], w);
	pk_text_cache_free(cache);
	pk_store_relaxed(&rb->strtab[at - 1], 0);
	read_at(seq + 1);
	assert_string_equal(rec.text, PK_DEFERRED_BAD_TEXT);
}

/* printk's header rule, enough for these formats. */
static size_t headers(const char *text, size_t len, int *level, int *cont)
{
	size_t i = 0;

	(void)cont;
	while (i + 1 < len && text[i] == '\001' && text[i + 1] >= '0' && text[i + 1] <= '7') {
		*level = text[i + 1] - '0';
		i += 2;
	}
	return i;
}

/* Blobs that do not match their format, and formats of every kind, fed to
 * the expansion directly: never more than the record's room, never a
 * crash (ASan watches); through a bulk reader's format cache, the same
 * bytes as without (a blob that fails halfway leaves the cached format as
 * it was). */
static void test_expand_hostile_blobs(void **state)
{
	(void)state;
	struct prb *rb = pk_printk_ring();
	struct pk_dfmt_cache *fc = pk_dfmt_cache_new();
	char copy[PK_TEXT_MAX + 1];
	uint64_t ref = 0;
	static const char *const hostile[] = { KERN_INFO "n%d %s %ld\n", KERN_INFO "x%*.*s|%c\n",
					    KERN_INFO "%%%f %e\n", KERN_INFO "%%%s%%\n",
					    KERN_INFO "plain\n" };
	char text[PK_TEXT_MAX + 1], scratch[PK_TEXT_MAX + 1];

	assert_non_null(fc);
	for (size_t b = 0; b < sizeof(hostile) / sizeof(hostile[0]); b++) {
		void *slot;

		assert_non_null(pk_deferred_fmt(rb, hostile[b], headers, 1088, &slot));
		assert_int_equal(pk_deferred_ref(rb, slot, &ref), 0);
		for (int round = 0; round < 20000; round++) {
			size_t len = 8 + rnd() % 80;
			uint8_t flags = PRB_FLAG_DEFERRED | PRB_FLAG_NEWLINE;

			memcpy(text, &ref, 8);
			for (size_t i = 8; i < len; i++)
				text[i] = (char)(round % 3 ? rnd() : (rnd() % 4 ? 0 : 0xff));
			if (round % 7 == 0)
				text[rnd() % 8] ^= (char)(1 << (rnd() % 8)); /* the reference */
			memcpy(copy, text, len);

			size_t n = pk_deferred_expand(rb, text, len, &flags, round % 2 ? scratch : NULL);

			assert_true(n <= PK_TEXT_MAX);
			assert_int_equal(text[n], '\0');
			assert_int_equal(flags, PRB_FLAG_NEWLINE);

			uint8_t cflags = PRB_FLAG_DEFERRED | PRB_FLAG_NEWLINE;

			assert_int_equal(pk_deferred_expand_cached(rb, copy, len, &cflags, fc), n);
			assert_memory_equal(copy, text, n + 1);
			assert_int_equal(cflags, PRB_FLAG_NEWLINE);
		}
	}
	pk_dfmt_cache_free(fc);
}

/* One record of @fmt (a KERN_INFO literal ending in a newline) with the
 * arguments after it, expanded through @fc (twice: the format's first
 * record and a cached one) and without a cache: the same bytes, and those
 * of vsnprintf() for the format's body, cut at PK_TEXT_MAX. */
static unsigned cached_plain, cached_not_plain;

static void cached_vs_eager(struct pk_dfmt_cache *fc, const char *fmt, ...)
{
	struct prb *rb = pk_printk_ring();
	char blob[PK_TEXT_MAX + 8], text[PK_TEXT_MAX + 1], body[1100];
	static char want[4 * PK_TEXT_MAX];
	size_t fl = strlen(fmt);
	uint64_t ref = 0;
	void *slot;
	va_list ap, aq;

	va_start(ap, fmt);
	va_copy(aq, ap);

	const struct pk_dfmt *f = pk_deferred_fmt(rb, fmt, headers, 1088, &slot);

	assert_non_null(f);
	assert_int_equal(pk_deferred_ref(rb, slot, &ref), 0);

	int len = pk_deferred_encode(f, ref, &ap, blob, PK_TEXT_MAX);

	assert_true(fl >= 3 && fl - 3 < sizeof(body) && fmt[fl - 1] == '\n');
	memcpy(body, fmt + 2, fl - 3);
	body[fl - 3] = '\0';

	int wn = vsnprintf(want, sizeof(want), body, aq);

	va_end(aq);
	va_end(ap);
	if (len < 0)
		return; /* too long to defer: printk formats it eagerly */
	assert_true(wn >= 0 && (size_t)wn < sizeof(want));
	if (wn > (int)PK_TEXT_MAX)
		wn = PK_TEXT_MAX;
	want[wn] = '\0';
	for (int round = 0; round < 3; round++) {
		uint8_t flags = PRB_FLAG_DEFERRED;
		size_t n;

		bool plain = false;

		memcpy(text, blob, (size_t)len);
		n = round == 0 ? pk_deferred_expand_cached(rb, text, (size_t)len, &flags, fc) :
		    round == 1 ? pk_deferred_expand_plain(rb, text, (size_t)len, &flags, fc, &plain) :
				 pk_deferred_expand(rb, text, (size_t)len, &flags, NULL);
		assert_int_equal(n, (size_t)wn);
		assert_memory_equal(text, want, n + 1);
		assert_int_equal(flags, 0);

		/* "Printable" is said only of a text that is. */
		bool printable = true;

		for (size_t i = 0; i < n; i++)
			printable = printable && text[i] >= 0x20 && text[i] < 0x7f;
		if (plain)
			assert_true(printable);
		else if (round == 1 && printable)
			cached_not_plain++;
		cached_plain += plain;
	}
}

/* A string of @n random bytes, none zero (control characters and bytes
 * of 0x80 and up included), in @buf. */
static const char *rnd_str(char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(1 + rnd() % 255);
	buf[n] = '\0';
	return buf;
}

static long rnd_long(void)
{
	switch (rnd() % 5) {
	case 0:
		return LONG_MIN;
	case 1:
		return LONG_MAX;
	case 2:
		return (long)(rnd() % 2000) - 1000;
	default:
		return (long)rnd();
	}
}

/* Plain conversions (%d %i %u %x, with l, ll, z, j, and %s) through a bulk
 * reader's cache, which expands them from its parsed form: every value's
 * text is vsnprintf()'s, the text cut where it reaches PK_TEXT_MAX (long
 * strings after a long literal) is the uncached expansion's, and a format
 * whose conversions are not all plain goes the general way. */
static void test_expand_cached_plain(void **state)
{
	(void)state;
	struct pk_dfmt_cache *fc = pk_dfmt_cache_new();
	static char s1[PK_TEXT_MAX + 1], s2[PK_TEXT_MAX + 1], s3[PK_TEXT_MAX + 1];
	static char longfmt[1100];

	assert_non_null(fc);
	memcpy(longfmt, KERN_INFO, 2);
	memset(longfmt + 2, 'L', 900);
	memcpy(longfmt + 902, "%s|%d|%lu\n", sizeof("%s|%d|%lu\n"));
	for (int round = 0; round < 3000; round++) {
		size_t n1 = rnd() % 8 ? rnd() % 40 : rnd() % 1000;
		size_t n2 = rnd() % 4 ? rnd() % 16 : rnd() % 400;
		int i = rnd_int();
		long l = rnd_long();

		rnd_str(s1, n1);
		rnd_str(s2, n2);
		if (round % 2) { /* printable strings but for one byte now and then */
			for (size_t k = 0; k < n1; k++)
				s1[k] = (char)(0x20 + (unsigned char)s1[k] % 0x5f);
			for (size_t k = 0; k < n2; k++)
				s2[k] = (char)(0x20 + (unsigned char)s2[k] % 0x5f);
			if (n1 && round % 8 == 1)
				s1[rnd() % n1] = (char)(rnd() % 3 == 0 ? 0x7f : rnd() % 2 ? 0x80 + rnd() % 0x80 : 1 + rnd() % 0x1f);
		}
		rnd_str(s3, rnd() % 3);
		cached_vs_eager(fc, KERN_INFO "worker %d processed %s in %lu us\n", i, s1,
				(unsigned long)l);
		cached_vs_eager(fc, KERN_INFO "%d%i%u%x\n", i, (int)(0u - (unsigned)i), (unsigned)i,
				(unsigned)i);
		cached_vs_eager(fc, KERN_INFO "%ld|%lu|%lx|%lld|%llu|%llx|%zu|%zd|%jd\n", l,
				(unsigned long)l, (unsigned long)l, (long long)l,
				(unsigned long long)l, (unsigned long long)l, (size_t)l, (ssize_t)l,
				(intmax_t)l);
		cached_vs_eager(fc, KERN_INFO "%s%s%s\n", s2, s3, s1);
		cached_vs_eager(fc, KERN_INFO "%s\n", s3);
		cached_vs_eager(fc, KERN_INFO "no conversion\n");
		cached_vs_eager(fc, KERN_INFO "<%s> %d%%\n", s2, i);
		cached_vs_eager(fc, KERN_INFO "%5d %s %c\n", i, s2, 'A' + (int)(rnd() % 26));
		cached_vs_eager(fc, longfmt, s1, i, (unsigned long)l);

		/* Every number of digits, both signs. */
		uint64_t m = rnd() >> (rnd() % 64);

		cached_vs_eager(fc, KERN_INFO "[%d] [%u] [%lu] [%ld] [%lx]\n", (int)(uint32_t)m,
				(unsigned)m, (unsigned long)m, (long)m, (unsigned long)m);
		cached_vs_eager(fc, KERN_INFO "%ld %d\n", -(long)(m >> 1), -(int)((uint32_t)m >> 1));
	}
	pk_dfmt_cache_free(fc);
	/* Where the strings' words are looked at (little-endian), printable
	 * texts are said to be so. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_true(cached_plain > 1000);
#endif
	print_message("printable texts: %u said so, %u not\n", cached_plain, cached_not_plain);
}

/* ------------------------------------------- the lanes' walk (printk.c) -- */

/* Both walks of @sf's layout over the same arguments: the lanes' into
 * @room bytes, the site's into PRB_TEXT_MAX. What each returned, in
 * *@lane and *@site; the blobs compared when the lanes' succeeded. */
struct lane_walk {
	const struct pk_sfmt *sf;
	size_t room;
	int *lane, *site;
};

/* One named argument: up to five integer arguments stay in the register
 * save area, where the lane walk reads them (x86-64). */
static void lane_and_site_args(const struct lane_walk *w, ...)
{
	const struct pk_sfmt *sf = w->sf;
	/* What the lane's reservation gives it at most. */
	size_t room = w->room < sf->lane_cap ? w->room : sf->lane_cap;
	int *lane = w->lane, *site = w->site;
	char a[PRB_TEXT_MAX + 8], b[PRB_TEXT_MAX + 8], c[PRB_TEXT_MAX + 8];
	const uint64_t ref = UINT64_C(0x1122334455667788);
	va_list ap, aq, ar;

	va_start(ap, w);
	va_copy(aq, ap);
	va_copy(ar, ap);
	/* The arguments read from the register save area where they are
	 * all there (a program: pk_deferred_lane_regs()), and by va_arg(). */
	*lane = pk_deferred_encode_lane(sf, ref, &ap, pk_deferred_lane_regs(sf, &ap), a, room);
	*site = pk_deferred_encode_site(sf, ref, &aq, b, PRB_TEXT_MAX);

	int by_arg = pk_deferred_encode_lane(sf, ref, &ar, NULL, c, room);

	va_end(ar);
	va_end(aq);
	va_end(ap);
	assert_true(*lane <= (int)room);
	assert_int_equal(by_arg, *lane);
	if (*lane >= 0) {
		assert_int_equal(*lane, *site);
		assert_memory_equal(a, b, (size_t)*lane);
		assert_memory_equal(c, b, (size_t)*lane);
	}
}

#define lane_and_site(sf, room, lane, site, ...) \
	lane_and_site_args(&(const struct lane_walk){ (sf), (room), (lane), (site) }, __VA_ARGS__)

/*
 * The writer's fast path encodes by pk_deferred_encode_lane() straight
 * into the room a lane has left (docs/lanes.md): whenever it succeeds its
 * blob is the site walk's, byte for byte, and the site walk (all
 * PRB_TEXT_MAX) succeeds too; it refuses only what might not fit its
 * room (the caller then takes store()), so with the whole PRB_TEXT_MAX
 * it refuses at most a %s that fills exactly what is left. Strings of
 * every length around the limits, precisions, rooms around the blob's
 * size.
 */
static void test_lane_walk_same_blob(void **state)
{
	(void)state;
	static const char *const lane_fmts[] = {
		KERN_INFO "w %d %s %lu us\n", KERN_INFO "a %.0s|%d\n", KERN_INFO "b %d %.0s\n",
		KERN_INFO "c %.5s %s\n",      KERN_INFO "d %s\n",       KERN_INFO "e %lld %c %s %g\n",
		KERN_INFO "f %8s|%-3s\n",
		/* A cut %s that fills all the room a 1023-byte blob leaves,
		 * then an empty one that has no 3 bytes left. */
		KERN_INFO "g %.1011s%.0s\n",
	};
	static const void *slots[sizeof(lane_fmts) / sizeof(lane_fmts[0])];
	static char str[PRB_TEXT_MAX + 64];
	int both = 0, refused = 0;

	memset(str, 'q', sizeof(str) - 1);
	for (size_t f = 0; f < sizeof(lane_fmts) / sizeof(lane_fmts[0]); f++) {
		const struct pk_sfmt *sf;

		assert_int_equal(pk_deferred_site(&slots[f], lane_fmts[f], headers, PRB_TEXT_MAX + 1 + 64, &sf),
				 PK_SITE_FMT_OK);
		assert_true(sf->simple);
		for (int round = 0; round < 4000; round++) {
			size_t n1 = round % 5 ? rnd() % 64 : rnd() % (PRB_TEXT_MAX + 40);
			size_t n2 = rnd() % (round % 3 ? 16 : PRB_TEXT_MAX + 40);
			char *s1 = str + sizeof(str) - 1 - n1, *s2 = str + sizeof(str) - 1 - n2;
			int lane, site;
			size_t room = PRB_TEXT_MAX;

			for (int pass = 0; pass < 2; pass++) {
				switch (f) {
				case 0:
					lane_and_site(sf, room, &lane, &site, round, s1, (unsigned long)round * 7);
					break;
				case 1:
					lane_and_site(sf, room, &lane, &site, s1, round);
					break;
				case 2:
					lane_and_site(sf, room, &lane, &site, round, s1);
					break;
				case 3:
				case 6:
				case 7:
					lane_and_site(sf, room, &lane, &site, s1, s2);
					break;
				case 4:
					lane_and_site(sf, room, &lane, &site, s1);
					break;
				default:
					lane_and_site(sf, room, &lane, &site, (long long)round << 33, 'a' + round % 26,
						      s1, round / 7.0);
					break;
				}
				if (pass == 0) {
					/* With all PRB_TEXT_MAX: the same answer, but
					 * for a %s that fills what is left. */
					if (site >= 0 && lane < 0)
						refused++;
					else
						assert_int_equal(lane >= 0, site >= 0);
					if (site < 0)
						break;
					both++;
					/* Then a lane's room around the blob's size. */
					size_t at = (size_t)site + (size_t)(rnd() % 7) - 3;

					room = at > PRB_TEXT_MAX ? PRB_TEXT_MAX : at;
				}
			}
		}
	}
	assert_true(both > 10000);
	assert_true(refused < both / 10);
}

/*
 * The lane walk reads a %s by words (deferred.h, pk_deferred_copy_str()),
 * never past the page of the string's last byte it needs: strings of
 * every length up to 40 that end at the end of a readable page before an
 * unreadable one (terminated there, or, for a %.Ns, cut by its precision
 * with no terminator at all), of bytes around the word walk's zero test
 * (0x01, 0x7f, 0x80, 0xff), in layouts with a program (plain %s, one or
 * two) and without (%.Ns, %Ns). Each blob is the site walk's; a read past
 * the page would crash the test.
 */
static void test_lane_walk_page_end(void **state)
{
	(void)state;
	static const char *const page_fmts[] = {
		KERN_INFO "w %d %s %lu us\n", KERN_INFO "d %s\n", KERN_INFO "h %s%s|%d\n",
		KERN_INFO "c %.5s %.40s\n", KERN_INFO "f %8s|%d\n",
	};
	static const void *slots[sizeof(page_fmts) / sizeof(page_fmts[0])];
	static const unsigned char bytes[] = { 'q', 0x01, 0x7f, 0x80, 0xff, 0xfe };
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int taken = 0;

	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
	assert_int_equal(mprotect(map + 3 * pg, (size_t)pg, PROT_NONE), 0);

	/* The first bytes that are not readable: terminated strings before
	 * @end, unterminated ones before @cut. */
	char *end = map + pg, *cut = map + 3 * pg;

	for (size_t f = 0; f < sizeof(page_fmts) / sizeof(page_fmts[0]); f++) {
		const struct pk_sfmt *sf;

		assert_int_equal(pk_deferred_site(&slots[f], page_fmts[f], headers, PRB_TEXT_MAX + 1 + 64, &sf),
				 PK_SITE_FMT_OK);
		assert_true(sf->simple);
		if (f < 3)
			assert_int_equal(sf->simple, PK_SFMT_PROG);
		for (size_t len = 0; len <= 40; len++) {
			for (size_t b = 0; b < sizeof(bytes); b++) {
				/* Terminated at the page's last byte; and len
				 * bytes with no terminator, up to the page's end. */
				char *t = end - 1 - len;
				int lane, site;

				for (size_t i = 0; i < len; i++)
					t[i] = (char)(i % 3 ? bytes[b] : bytes[(b + i) % sizeof(bytes)]);
				end[-1] = 0;
				switch (f) {
				case 0:
					lane_and_site(sf, PRB_TEXT_MAX, &lane, &site, (int)len, t, (unsigned long)len);
					break;
				case 1:
					lane_and_site(sf, PRB_TEXT_MAX, &lane, &site, t);
					break;
				case 2:
					lane_and_site(sf, PRB_TEXT_MAX, &lane, &site, t, t + len / 2, (int)b);
					break;
				case 3:
					/* Cut strings are read up to their
					 * precision only: no terminator. */
					for (size_t i = 0; i < 40; i++)
						cut[-1 - (ptrdiff_t)i] = (char)bytes[(b + i) % sizeof(bytes)];
					lane_and_site(sf, PRB_TEXT_MAX, &lane, &site, cut - 5, len == 40 ? cut - 40 : t);
					break;
				default:
					lane_and_site(sf, PRB_TEXT_MAX, &lane, &site, t, (int)len);
					break;
				}
				assert_true(lane >= 0);
				taken++;
			}
		}
	}
	assert_int_equal(taken, 5 * 41 * 6);
	munmap(map, (size_t)pg * 4);
}

/* ------------------------------------------------- a small signal stack -- */

#define READ_STACK_MAX (6 * 1024) /* printk's own bound (test_printk_misc.c) */

static int stack_mode;
static uint64_t stack_seq;
static struct pk_record stack_rec;

static void on_usr2(int sig)
{
	(void)sig;
	if (stack_mode == 1)
		pr_info("on a small stack: %d %s %e %lu\n", 42, "str", 1.5e300, 123456789UL);
	else if (stack_mode == 2)
		pk_log_read(pk_printk_log(), stack_seq, &stack_rec, 0);
}

static size_t stack_used_by(int mode, struct test_stack_probe *probe)
{
	stack_mode = mode;
	return test_stack_used(probe);
}

/* Storing a deferred record, and formatting one as a reader (a console's
 * loop reads the records it skips), from a signal handler on an alternate
 * stack: within printk's bound, so SIGSTKSZ still does. */
static void test_signal_stack_use(void **state)
{
	(void)state;
	if (!TEST_STACK_MEASURED || !deferral_built())
		skip();

	struct test_stack_probe probe;

	test_stack_probe_begin(&probe, SIGUSR2, on_usr2);

	size_t frame = stack_used_by(0, &probe);
	uint64_t d0 = pk_printk_deferred_here();

	stack_seq = next_seq();

	size_t store = stack_used_by(1, &probe) - frame;

	assert_int_equal(pk_printk_deferred_here(), d0 + 1);

	size_t read = stack_used_by(2, &probe) - frame;

	test_stack_probe_end(&probe);
	print_message("stack: signal frame %zu, deferred store %zu, read %zu bytes\n", frame, store,
		      read);
	assert_string_equal(stack_rec.text, "on a small stack: 42 str 1.500000e+300 123456789");
	assert_true(store <= READ_STACK_MAX);
	assert_true(read <= READ_STACK_MAX);
}

/* ------------------------------------------------------------ threads -- */

#define WRITERS 3
#define PER_WRITER 20000

static int writer_main(int t)
{
	for (int n = 0; n < PER_WRITER; n++) {
		switch (n % 4) {
		case 0:
			pr_info("w%d n%d a\n", t, n);
			break;
		case 1:
			pr_notice("w%d n%d %s\n", t, n, "bb");
			break;
		case 2:
			pr_info("w%d n%d %.1f\n", t, n, 2.5);
			break;
		default:
			pr_debug("w%d n%d never\n", t, n); /* compiled out */
			pr_warn("w%d n%d %c%c%c\n", t, n, 'd', 'd', 'd');
		}
	}
	return 0;
}

static void *writer_thread(void *arg)
{
	return (void *)(intptr_t)writer_main((int)(intptr_t)arg);
}

static _Atomic int readers_stop;

/* Every record a reader gets while writers run is one of theirs, whole. */
static void *reader_thread(void *arg)
{
	static struct pk_record r;
	uint64_t seq = 0;
	unsigned bad = 0;

	(void)arg;
	while (!atomic_load(&readers_stop)) {
		if (pk_log_read(pk_printk_log(), seq, &r, 0)) {
			sched_yield();
			continue;
		}
		seq = r.seq + 1;

		int t, n;
		char tail[8];

		if (sscanf(r.text, "w%d n%d %7s", &t, &n, tail) != 3)
			bad++;
		else if (strcmp(tail, (const char *[]){ "a", "bb", "2.5", "ddd" }[n % 4]))
			bad++;
	}
	return (void *)(uintptr_t)bad;
}

static void test_threads_read_whole_records(void **state)
{
	(void)state;
	pthread_t w[WRITERS], rd;
	void *ret;

	assert_int_equal(pthread_create(&rd, NULL, reader_thread, NULL), 0);
	for (int t = 0; t < WRITERS; t++)
		assert_int_equal(pthread_create(&w[t], NULL, writer_thread, (void *)(intptr_t)t), 0);
	for (int t = 0; t < WRITERS; t++)
		assert_int_equal(pthread_join(w[t], NULL), 0);
	atomic_store(&readers_stop, 1);
	assert_int_equal(pthread_join(rd, &ret), 0);
	assert_int_equal((uintptr_t)ret, 0);

	/* The newest records, read after the writers: all there, all whole. */
	uint64_t next = next_seq(), first = pk_log_first_seq(pk_printk_log());

	assert_true(next - first > 1000);
	for (uint64_t q = first; q < next; q++) {
		int t, n;

		read_seq(q, &rec);
		assert_int_equal(sscanf(rec.text, "w%d n%d", &t, &n), 2);
	}
}

/* Lanes are on by default, so the other tests' filtered lines go into a
 * lane and are merged as deferred records; ctest runs this program again
 * as test_deferred_lanes_off (PRINTK_OPTS=printk.lanes=0), where they are
 * stored into the shared ring at once. Each run checks it takes its path. */
static void test_path_as_configured(void **state)
{
	(void)state;
	const char *opts = getenv("PRINTK_OPTS");
	int off = opts && strstr(opts, "printk.lanes=0");
	struct prb *rb = pk_log_ring(pk_printk_log());
	uint64_t ring0 = prb_ring_next_seq(rb), d0 = pk_printk_deferred_here();

	assert_int_equal(pk_lanes(), !off);
	assert_int_equal(rb->lanes != NULL, !off);
	pr_info("path %s\n", off ? "ring" : "lane");
	assert_int_equal(pk_printk_deferred_here(), d0 + 1);
	/* In a lane the record waits for a reader; in the ring it is there. */
	assert_int_equal(prb_ring_next_seq(rb), ring0 + (off ? 1 : 0));

	struct pk_record r;

	assert_int_equal(pk_log_read(pk_printk_log(), ring0, &r, 0), 0);
	assert_string_equal(r.text, off ? "path ring" : "path lane");
	assert_int_equal(prb_ring_next_seq(rb), ring0 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_as_configured, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_random_calls_same_bytes, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_which_calls_defer, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_call_site_compiled_once, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_continuation_same_records, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_other_process_reads_same_text, setup_big, teardown_capture),
		cmocka_unit_test_teardown(test_table_full_falls_back, teardown_capture),
		cmocka_unit_test_setup_teardown(test_damaged_entry_placeholder, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_expand_hostile_blobs, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_expand_cached_plain, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_lane_walk_same_blob, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_lane_walk_page_end, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_threads_read_whole_records, setup_big, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_stack_use, setup_big, teardown_capture),
	};

	if (test_dir_make("deferred"))
		return 1;

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	test_dir_remove();
	return failed;
}
