// SPDX-License-Identifier: MIT
/*
 * test_export_format.c - a record as a Journal Export Format entry
 * (src/record/export_format.c), exact bytes: the fields and their order,
 * the binary form for a value with a newline, control bytes or bytes that
 * are not UTF-8 (a tab and valid UTF-8 stay text), the dictionary's keys
 * named as the journald console names them, the realtime clamp
 * journal-remote needs, that the largest record fits
 * PK_EXPORT_RECORD_MAX, and that random records read back as
 * journal-remote's importer reads them give their bytes back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <printk/log.h>

#include "readers/reader.h"
#include "record/export_format.h"
#include "record/json_format.h"
#include "testutil.h"

#define OFFSET 1700000000000000000ll
#define BOOT   "0123456789abcdef0123456789abcdef"

static char out[PK_EXPORT_RECORD_MAX];

/* The expected bytes, built piece by piece (binary values hold NULs). */
struct want {
	char b[PK_EXPORT_RECORD_MAX];
	size_t n;
};

static void w_put(struct want *w, const void *p, size_t n)
{
	assert_true(w->n + n <= sizeof(w->b));
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void w_str(struct want *w, const char *s)
{
	w_put(w, s, strlen(s));
}

/* NAME\n, the length as 8 little-endian bytes, the bytes, \n. */
static void w_bin(struct want *w, const char *name, const char *v, size_t n)
{
	unsigned char le[8];

	w_str(w, name);
	w_str(w, "\n");
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)((uint64_t)n >> (8 * i));
	w_put(w, le, 8);
	w_put(w, v, n);
	w_str(w, "\n");
}

static void check(const struct pk_record *r, const char *ident, const char *host, const char *boot,
		  int64_t offset, const struct want *w)
{
	size_t n = pk_export_format_record(out, sizeof(out), r, ident, host, boot, offset);

	if (n != w->n || memcmp(out, w->b, n)) {
		print_error("got %zu bytes, want %zu\n", n, w->n);
		for (size_t i = 0; i < n && i < w->n; i++) {
			if (out[i] != w->b[i]) {
				print_error("first difference at byte %zu: got 0x%02x, want 0x%02x\n", i,
					    (unsigned char)out[i], (unsigned char)w->b[i]);
				break;
			}
		}
		fail();
	}
	/* The tools' way in gives the same bytes. */
	static char via[PK_LOG_EXPORT_MAX];

	assert_int_equal(pk_log_export_format(r, ident, host, boot, offset, via), n);
	assert_memory_equal(via, out, n);
}

#define ADDR  "__REALTIME_TIMESTAMP=1700001291025123\n__MONOTONIC_TIMESTAMP=1291025123\n"
#define IDS   "SYSLOG_PID=100\nTID=101\nPRINTK_SEQ=42\nPRINTK_REALTIME_USEC=1700001291025123\n"

static void test_fields(void **state)
{
	struct pk_record r;
	struct want w = { .n = 0 };

	(void)state;
	test_fill_record(&r, "link up", 7, "SUBSYSTEM=net\0DEVICE=n2", 23);
	w_str(&w, ADDR "_BOOT_ID=" BOOT "\n_HOSTNAME=h1\nMESSAGE=link up\nPRIORITY=6\n"
		     "SYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=daemon\n" IDS "SUBSYSTEM=net\nDEVICE=n2\n\n");
	check(&r, "daemon", "h1", BOOT, OFFSET, &w);

	/* Without identifier, host and boot: left out. printk's facility 0
	 * and numbers past 23 go as user (1); the level is the low 3 bits;
	 * an empty text is an empty value. */
	test_fill_record(&r, "", 0, "", 0);
	r.facility = 0;
	r.level = 0x0f;
	w.n = 0;
	w_str(&w, ADDR "MESSAGE=\nPRIORITY=7\nSYSLOG_FACILITY=1\n" IDS "\n");
	check(&r, NULL, NULL, NULL, OFFSET, &w);
	r.facility = 24;
	check(&r, NULL, NULL, NULL, OFFSET, &w);
	r.facility = 23;
	r.level = 0;
	w.n = 0;
	w_str(&w, ADDR "MESSAGE=\nPRIORITY=0\nSYSLOG_FACILITY=23\n" IDS "\n");
	check(&r, NULL, NULL, NULL, OFFSET, &w);
}

/* @text alone in an entry: its MESSAGE field is @as_text ("MESSAGE=...\n")
 * or, when NULL, the binary form. */
static void check_text(const char *text, size_t n, const char *as_text)
{
	struct pk_record r;
	struct want w = { .n = 0 };

	test_fill_record(&r, text, n, "", 0);
	w_str(&w, ADDR);
	if (as_text)
		w_str(&w, as_text);
	else
		w_bin(&w, "MESSAGE", text, n);
	w_str(&w, "PRIORITY=6\nSYSLOG_FACILITY=3\n" IDS "\n");
	check(&r, NULL, NULL, NULL, OFFSET, &w);
}

static void test_hostile_text(void **state)
{
	(void)state;
	/* A newline would end the field, an empty line the entry. */
	check_text("first\nsecond", 12, NULL);
	check_text("\n", 1, NULL);
	check_text("ends\n\n", 6, NULL);
	check_text("MESSAGE=forged\n\nMESSAGE=x", 25, NULL);
	/* Control bytes, DEL, C1, and bytes that are not UTF-8. */
	check_text("bell\a", 5, NULL);
	check_text("nul\0in", 6, NULL);
	check_text("esc\x1b[31m", 8, NULL);
	check_text("del\x7f", 4, NULL);
	check_text("c1\xc2\x85", 4, NULL);
	check_text("bad\xff", 4, NULL);
	check_text("overlong\xc0\xaf", 10, NULL);
	check_text("cut\xc3", 4, NULL);
	check_text("surrogate\xed\xa0\x80", 12, NULL);
	check_text("\r", 1, NULL);
	/* A tab and valid UTF-8 stay text, as journalctl prints them. */
	check_text("a\ttab", 5, "MESSAGE=a\ttab\n");
	check_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
		   "MESSAGE=caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n");
	check_text("x=y=z", 5, "MESSAGE=x=y=z\n");
}

static void test_dictionary(void **state)
{
	static const char dict[] = "my key=v\0_under=1\0" "9lives=2\0PRIORITY=x\0=novalue\0noeq\0"
				   "K=a\nb\0K=1\0k=2\0E=a=b\0CTRL=\x01\0EMPTY=\0last=unterminated";
	struct pk_record r;
	struct want w = { .n = 0 };

	(void)state;
	test_fill_record(&r, "t", 1, dict, sizeof(dict) - 1);
	w_str(&w, ADDR "MESSAGE=t\nPRIORITY=6\nSYSLOG_FACILITY=3\n" IDS
		       "MY_KEY=v\nX_UNDER=1\nX9LIVES=2\nDICT_PRIORITY=x\n");
	w_bin(&w, "K", "a\nb", 3);
	w_str(&w, "K=1\nK=2\nE=a=b\n");
	w_bin(&w, "CTRL", "\x01", 1);
	w_str(&w, "EMPTY=\nLAST=unterminated\n\n");
	check(&r, NULL, NULL, NULL, OFFSET, &w);

	/* A long key is cut at journald's 64 characters, DICT_ included. */
	char key[200];

	memset(key, 'a', 100);
	memcpy(key + 100, "=v", 3);
	test_fill_record(&r, "t", 1, key, 102);
	w.n = 0;
	w_str(&w, ADDR "MESSAGE=t\nPRIORITY=6\nSYSLOG_FACILITY=3\n" IDS);
	memset(key, 'A', 64);
	key[64] = '\0';
	w_str(&w, key);
	w_str(&w, "=v\n\n");
	check(&r, NULL, NULL, NULL, OFFSET, &w);
}

/* journal-remote drops an entry without __REALTIME_TIMESTAMP and aborts
 * the connection for a realtime of 0 or a timestamp of 2^55 and above:
 * clamped. */
static void test_realtime_clamp(void **state)
{
	struct pk_record r;
	struct want w = { .n = 0 };

	(void)state;
	test_fill_record(&r, "t", 1, "", 0);
	w_str(&w, "__REALTIME_TIMESTAMP=1\n__MONOTONIC_TIMESTAMP=1291025123\nMESSAGE=t\nPRIORITY=6\n"
		  "SYSLOG_FACILITY=3\nSYSLOG_PID=100\nTID=101\nPRINTK_SEQ=42\nPRINTK_REALTIME_USEC=0\n\n");
	check(&r, NULL, NULL, NULL, -2000000000000ll, &w);
	check(&r, NULL, NULL, NULL, -1291025123456ll, &w);
	/* The sum saturates instead of wrapping (2^64 ns is below 2^55 us,
	 * so the upper clamp is there for a wider clock only). */
	r.ts_nsec = UINT64_MAX - 5;
	w.n = 0;
	w_str(&w, "__REALTIME_TIMESTAMP=18446744073709551\n__MONOTONIC_TIMESTAMP=18446744073709551\n"
		  "MESSAGE=t\nPRIORITY=6\nSYSLOG_FACILITY=3\nSYSLOG_PID=100\nTID=101\nPRINTK_SEQ=42\n"
		  "PRINTK_REALTIME_USEC=18446744073709551\n\n");
	check(&r, NULL, NULL, NULL, INT64_MAX, &w);
	check(&r, NULL, NULL, NULL, 10, &w);
	w.n = 0;
	w_str(&w, "__REALTIME_TIMESTAMP=18446744073709545\n__MONOTONIC_TIMESTAMP=18446744073709551\n"
		  "MESSAGE=t\nPRIORITY=6\nSYSLOG_FACILITY=3\nSYSLOG_PID=100\nTID=101\nPRINTK_SEQ=42\n"
		  "PRINTK_REALTIME_USEC=18446744073709545\n\n");
	check(&r, NULL, NULL, NULL, -6000, &w);
	/* The most negative offset. */
	r.ts_nsec = 1291025123456ull;
	w.n = 0;
	w_str(&w, "__REALTIME_TIMESTAMP=1\n__MONOTONIC_TIMESTAMP=1291025123\nMESSAGE=t\nPRIORITY=6\n"
		  "SYSLOG_FACILITY=3\nSYSLOG_PID=100\nTID=101\nPRINTK_SEQ=42\nPRINTK_REALTIME_USEC=0\n\n");
	check(&r, NULL, NULL, NULL, INT64_MIN, &w);
}

/* The largest entry: text all newlines, the dictionary the worst growth. */
static void test_largest_fits(void **state)
{
	static struct pk_record r;
	size_t n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.seq = UINT64_MAX;
	r.ts_nsec = UINT64_MAX;
	r.pid = r.tid = UINT32_MAX;
	memset(r.text, '\n', PK_TEXT_MAX);
	r.text_len = PK_TEXT_MAX;
	for (size_t i = 0; i + 4 <= PK_DICT_MAX; i += 4)
		memcpy(r.dict + i, "1=\x01", 4);
	r.dict_len = PK_DICT_MAX;
	char ident[16] = "fifteen-charact", host[65];

	memset(host, 'h', 64);
	host[64] = '\0';
	n = pk_export_format_record(out, sizeof(out), &r, ident, host, BOOT, INT64_MAX);
	assert_true(n < PK_EXPORT_RECORD_MAX);
	assert_true(n > 4000);
	assert_memory_equal(out + n - 2, "\n\n", 2);
	/* A smaller buffer is filled and the length says so. */
	assert_int_equal(pk_export_format_record(out, 100, &r, ident, host, BOOT, 0), 100);
}

/*
 * Random records, read back as journal-remote's importer reads an entry:
 * NAME=VALUE up to the newline, or NAME, a newline, 8 length bytes, the
 * value and a newline; the first empty line ends the entry. The entry
 * must end exactly at the end of the bytes (no text or dictionary value
 * ends it early), every name must be a journal field name, and MESSAGE
 * and the dictionary's values must come back byte for byte.
 */
struct parsed {
	char name[80];
	const char *v;
	size_t n;
};

static size_t parse_entry(const char *p, size_t len, struct parsed *f, size_t max)
{
	size_t at = 0, k = 0;

	for (;;) {
		const char *nl = memchr(p + at, '\n', len - at);
		const char *eq = memchr(p + at, '=', len - at);

		assert_non_null(nl);
		if (nl == p + at) { /* the empty line */
			assert_int_equal(at + 1, len);
			return k;
		}
		assert_true(k < max);
		if (eq && eq < nl) {
			size_t nn = (size_t)(eq - (p + at));

			assert_true(nn < sizeof(f[k].name));
			memcpy(f[k].name, p + at, nn);
			f[k].name[nn] = '\0';
			f[k].v = eq + 1;
			f[k].n = (size_t)(nl - eq - 1);
			at = (size_t)(nl - p) + 1;
		} else {
			size_t nn = (size_t)(nl - (p + at));
			uint64_t vl = 0;

			assert_true(nn < sizeof(f[k].name));
			memcpy(f[k].name, p + at, nn);
			f[k].name[nn] = '\0';
			at = (size_t)(nl - p) + 1;
			assert_true(at + 8 <= len);
			for (int i = 7; i >= 0; i--)
				vl = vl << 8 | (unsigned char)p[at + (size_t)i];
			at += 8;
			assert_true(vl <= len - at - 1);
			f[k].v = p + at;
			f[k].n = (size_t)vl;
			at += (size_t)vl;
			assert_int_equal(p[at], '\n');
			at++;
		}
		for (const char *c = f[k].name; *c; c++)
			assert_true((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
		assert_true(f[k].name[0] && strlen(f[k].name) <= 64);
		k++;
	}
}

static uint64_t rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A byte that is often a troublemaker: newline, NUL, '=', a control, high. */
static char rnd_byte(void)
{
	static const char hard[] = "\n\n\n=\0\x01\x1b\t\r\x7f\xc3\xa9\xff\xe2\x82\xac";

	return rnd(3) ? (char)(' ' + rnd(95)) : hard[rnd(sizeof(hard) - 1)];
}

static void test_random_read_back(void **state)
{
	static struct pk_record r;
	static struct parsed f[600];

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		size_t tn = rnd(4) ? rnd(40) : rnd(PK_TEXT_MAX + 1), dn = 0;
		struct {
			size_t k, kn, v, vn;
		} ents[400];
		size_t ne = 0;

		memset(&r, 0, offsetof(struct pk_record, text));
		r.seq = rnd(1000000);
		r.ts_nsec = (uint64_t)rnd(1000000) * 1000003u;
		r.level = (uint8_t)rnd(256);
		r.facility = (uint8_t)rnd(256);
		for (size_t i = 0; i < tn; i++)
			r.text[i] = rnd_byte();
		r.text_len = (uint16_t)tn;
		/* Entries KEY=VALUE: a key without NUL or '=' and not empty. */
		for (unsigned e = rnd(6); e-- && dn + 40 < PK_DICT_MAX;) {
			size_t kn = 1 + rnd(8), vn = rnd(20);

			ents[ne].k = dn;
			ents[ne].kn = kn;
			for (size_t i = 0; i < kn; i++) {
				char c;

				do
					c = rnd_byte();
				while (c == '\0' || c == '=');
				r.dict[dn++] = c;
			}
			r.dict[dn++] = '=';
			ents[ne].v = dn;
			ents[ne].vn = vn;
			for (size_t i = 0; i < vn; i++) {
				char c;

				do
					c = rnd_byte();
				while (c == '\0');
				r.dict[dn++] = c;
			}
			r.dict[dn++] = '\0';
			ne++;
		}
		r.dict_len = (uint16_t)(dn ? dn - 1 : 0);

		size_t n = pk_export_format_record(out, sizeof(out), &r, rnd(2) ? "id\nent" : NULL,
						   NULL, NULL, (int64_t)rnd(1000) * 1000000007ll);
		size_t k = parse_entry(out, n, f, sizeof(f) / sizeof(f[0]));
		size_t msg = k, first_dict = 0;

		for (size_t i = 0; i < k; i++) {
			if (!strcmp(f[i].name, "MESSAGE"))
				msg = i;
			if (!strcmp(f[i].name, "PRINTK_REALTIME_USEC"))
				first_dict = i + 1;
		}
		assert_true(msg < k);
		assert_int_equal(f[msg].n, tn);
		assert_memory_equal(f[msg].v, r.text, tn);
		assert_int_equal(k - first_dict, ne);
		for (size_t e = 0; e < ne; e++) {
			char name[80];

			pk_json_field_name(name, r.dict + ents[e].k, ents[e].kn);
			assert_string_equal(f[first_dict + e].name, name);
			assert_int_equal(f[first_dict + e].n, ents[e].vn);
			assert_memory_equal(f[first_dict + e].v, r.dict + ents[e].v, ents[e].vn);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_dictionary),
		cmocka_unit_test(test_realtime_clamp),
		cmocka_unit_test(test_largest_fits),
		cmocka_unit_test(test_random_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
