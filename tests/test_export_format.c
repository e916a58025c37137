// SPDX-License-Identifier: MIT
/*
 * test_export_format.c - a record as a Journal Export Format entry
 * (src/record/export_format.c), exact bytes: the fields and their order,
 * the binary form for a value with a newline, control bytes or bytes that
 * are not UTF-8 (a tab and valid UTF-8 stay text), the dictionary's keys
 * named as the journald console names them, the realtime clamp
 * journal-remote needs, and that the largest record fits
 * PK_EXPORT_RECORD_MAX.
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

static void set_rec(struct pk_record *r, const char *text, size_t tn, const char *dict, size_t dn)
{
	memset(r, 0, sizeof(*r));
	r->seq = 42;
	r->ts_nsec = 1291025123456ull; /* 1291.025123456 s */
	r->pid = 100;
	r->tid = 101;
	r->level = 6;
	r->facility = 3;
	memcpy(r->text, text, tn);
	r->text_len = (uint16_t)tn;
	memcpy(r->dict, dict, dn);
	r->dict_len = (uint16_t)dn;
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
	set_rec(&r, "link up", 7, "SUBSYSTEM=net\0DEVICE=n2", 23);
	w_str(&w, ADDR "_BOOT_ID=" BOOT "\n_HOSTNAME=h1\nMESSAGE=link up\nPRIORITY=6\n"
		     "SYSLOG_FACILITY=3\nSYSLOG_IDENTIFIER=daemon\n" IDS "SUBSYSTEM=net\nDEVICE=n2\n\n");
	check(&r, "daemon", "h1", BOOT, OFFSET, &w);

	/* Without identifier, host and boot: left out. printk's facility 0
	 * and numbers past 23 go as user (1); the level is the low 3 bits;
	 * an empty text is an empty value. */
	set_rec(&r, "", 0, "", 0);
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

	set_rec(&r, text, n, "", 0);
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
	set_rec(&r, "t", 1, dict, sizeof(dict) - 1);
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
	set_rec(&r, "t", 1, key, 102);
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
	set_rec(&r, "t", 1, "", 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_dictionary),
		cmocka_unit_test(test_realtime_clamp),
		cmocka_unit_test(test_largest_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
