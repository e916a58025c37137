// SPDX-License-Identifier: MIT
/*
 * test_forward_wire.c - the forwarding consoles' wire formats by
 * themselves (src/forward/wire_syslog.c, wire_journal.c): pure functions,
 * exact bytes, hostile records. What each pins:
 *   - RFC 5424: control bytes and newlines in the text go as they are (one
 *     record, one message), the BOM only before valid UTF-8 and never with
 *     PK_NET_NO_BOM, header fields made printable ASCII and cut (HOSTNAME
 *     255, APP-NAME 48), SD-NAMEs cut at 32 and mapped, PARAM-VALUEs escaped
 *     and made UTF-8, a dictionary without its last NUL, a text longer
 *     than PK_TEXT_MAX read only to PK_TEXT_MAX;
 *   - RFC 3164: APP-NAME cut at 32;
 *   - the journal: newlines in any value (the text, a dictionary value)
 *     in the binary form, other control bytes as they are, hostile keys
 *     mapped to field names;
 *   - RFC 6587 framing: octet prefix, LF framing with "#012";
 *   - every function stops at its capacity, exactly, and writes nothing
 *     past it.
 * No socket, no log, no thread: the functions are called on records built
 * here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <printk/forward.h>
#include <printk/log.h>

#include "forward/wire.h"

static struct pk_record *make_rec(uint64_t seq, int fac, int level, const char *text, size_t text_len,
				  const char *dict, size_t dict_len)
{
	static struct pk_record r;

	memset(&r, 0, sizeof(r));
	r.seq = seq;
	r.ts_nsec = 5 * 1000000000ull + 123456789;
	r.pid = 4242;
	r.tid = 4243;
	r.facility = (uint8_t)fac;
	r.level = (uint8_t)level;
	r.text_len = (uint16_t)text_len;
	memcpy(r.text, text, text_len);
	r.dict_len = (uint16_t)dict_len;
	memcpy(r.dict, dict, dict_len);
	return &r;
}

/* 2026-12-04T14:00:00Z minus the record's 5.123456789 s. */
#define OFFSET ((int64_t)1796392800 * 1000000000 - 5123456789)
#define HDR    "<14>1 2026-12-04T14:00:00.000000Z "

static void test_5424_control_bytes(void **state)
{
	(void)state;
	char out[512];
	static const char text[] = "a\nb\rc\x1b[31md\x7f\0e"; /* NUL inside, too */
	struct pk_record *r = make_rec(1, 1, 6, text, sizeof(text) - 1, "", 0);
	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 32473, "h", "a", OFFSET);
	static const char want[] = HDR "h a 4242 - [printk@32473 seq=\"1\" tid=\"4243\"] "
				   "\xef\xbb\xbf" "a\nb\rc\x1b[31md\x7f\0e";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);

	/* the same without the BOM */
	n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424 | PK_NET_NO_BOM, 32473, "h", "a",
				 OFFSET);
	static const char want2[] = HDR "h a 4242 - [printk@32473 seq=\"1\" tid=\"4243\"] "
				    "a\nb\rc\x1b[31md\x7f\0e";

	assert_int_equal(n, sizeof(want2) - 1);
	assert_memory_equal(out, want2, n);
}

static void test_5424_invalid_utf8(void **state)
{
	(void)state;
	char out[512];
	/* a surrogate, an overlong slash, a cut sequence: no BOM, bytes as they are */
	static const char text[] = "x\xed\xa0\x80y\xc0\xafz\xe2\x82";
	static const char dict[] = "K=\xed\xa0\x80\xc0";
	struct pk_record *r = make_rec(2, 1, 6, text, sizeof(text) - 1, dict, sizeof(dict) - 1);
	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 1, "h", "a", OFFSET);
	static const char want[] = HDR "h a 4242 - [printk@1 seq=\"2\" tid=\"4243\" "
				   "K=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"] "
				   "x\xed\xa0\x80y\xc0\xafz\xe2\x82";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
}

static void test_5424_header_fields(void **state)
{
	(void)state;
	char out[1024], host[300], app[80], want[1024];

	memset(host, 'H', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	host[0] = ' ';
	host[1] = '\xc3';
	memset(app, 'A', sizeof(app) - 1);
	app[sizeof(app) - 1] = '\0';
	app[2] = '\t';

	struct pk_record *r = make_rec(3, 1, 6, "", 0, "", 0);
	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 1, host, app, OFFSET);
	int w = snprintf(want, sizeof(want), HDR "__%.253s AA_%.45s 4242 - [printk@1 seq=\"3\" tid=\"4243\"]",
			 host + 2, app + 3);

	assert_int_equal(n, (size_t)w);
	assert_memory_equal(out, want, n);

	/* RFC 3164: the tag is 32 bytes at most */
	setenv("TZ", "UTC", 1);
	tzset();
	n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC3164, 1, "h", app, OFFSET);
	w = snprintf(want, sizeof(want), "<14>Dec  4 14:00:00 h AA_%.29s[4242]: ", app + 3);
	assert_int_equal(n, (size_t)w);
	assert_memory_equal(out, want, n);
}

static void test_5424_dictionary(void **state)
{
	(void)state;
	char out[2048];
	/* a key past 32 bytes, keys with space, '=', ']', '"', DEL, a value
	 * with every escape, an empty value, an entry with no '=', an empty
	 * key, and the last entry without its NUL */
	static const char dict[] = "0123456789012345678901234567890123456789=long\0"
				   "a b\x7f]\"=v\0"
				   "E=\"\\]\0"
				   "Z=\0"
				   "noeq\0"
				   "=novalue\0"
				   "LAST=end";
	struct pk_record *r = make_rec(4, 1, 6, "t", 1, dict, sizeof(dict) - 1);
	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 1, "h", "a", OFFSET);
	static const char want[] = HDR "h a 4242 - [printk@1 seq=\"4\" tid=\"4243\" "
				   "01234567890123456789012345678901=\"long\" a_b___=\"v\" "
				   "E=\"\\\"\\\\\\]\" Z=\"\" LAST=\"end\"] \xef\xbb\xbft";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
}

static void test_5424_long_text_and_capacity(void **state)
{
	(void)state;
	static char out[4096];
	struct pk_record *r = make_rec(5, 1, 6, "", 0, "", 0);

	/* a text_len past PK_TEXT_MAX (a damaged record) is read to PK_TEXT_MAX */
	memset(r->text, 'x', PK_TEXT_MAX);
	r->text[PK_TEXT_MAX] = '\0';
	r->text_len = PK_TEXT_MAX + 500;

	size_t n = pk_net_format_syslog(out, sizeof(out), r, PK_SYSLOG_RFC5424, 1, "h", "a", OFFSET);
	size_t head = sizeof(HDR "h a 4242 - [printk@1 seq=\"5\" tid=\"4243\"] \xef\xbb\xbf") - 1;

	assert_int_equal(n, head + PK_TEXT_MAX);
	assert_int_equal(out[n - 1], 'x');

	/* every capacity: exactly that many bytes or the whole message, and
	 * nothing written past it */
	static char full[4096], cut[4096];
	size_t whole = pk_net_format_syslog(full, sizeof(full), r, PK_SYSLOG_RFC5424, 1, "h", "a", OFFSET);

	for (size_t cap = 0; cap <= whole + 1; cap += cap < 80 ? 1 : 97) {
		memset(cut, '#', sizeof(cut));
		n = pk_net_format_syslog(cut, cap, r, PK_SYSLOG_RFC5424, 1, "h", "a", OFFSET);
		assert_int_equal(n, cap < whole ? cap : whole);
		assert_memory_equal(cut, full, n);
		assert_int_equal(cut[n], '#');
	}
}

static void test_journal_hostile(void **state)
{
	(void)state;
	char out[2048];
	/* control bytes but newline go as they are; a dictionary value with a
	 * newline goes binary; keys are made field names */
	static const char text[] = "a\x01\tb";
	static const char dict[] = "weird key!=x\0MESSAGE=spoof\0V=1\n2\0"
				   "9lead=d\0_=u";
	struct pk_record *r = make_rec(6, 24, 15, text, sizeof(text) - 1, dict, sizeof(dict) - 1);
	size_t n = pk_net_format_journal(out, sizeof(out), r, "app", OFFSET);
	static const char want[] =
		"MESSAGE=a\x01\tb\n"
		"PRIORITY=7\nSYSLOG_FACILITY=1\nSYSLOG_IDENTIFIER=app\nSYSLOG_PID=4242\n"
		"TID=4243\nPRINTK_SEQ=6\nPRINTK_REALTIME_USEC=1796392800000000\n"
		"WEIRD_KEY_=x\nDICT_MESSAGE=spoof\nV\n\x03\0\0\0\0\0\0\0" "1\n2\n"
		"X9LEAD=d\nX_=u\n";

	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);

	/* capacity, exactly */
	static char full[2048], cut[2048];
	size_t whole = pk_net_format_journal(full, sizeof(full), r, "app", OFFSET);

	for (size_t cap = 0; cap <= whole + 1; cap++) {
		memset(cut, '#', sizeof(cut));
		n = pk_net_format_journal(cut, cap, r, "app", OFFSET);
		assert_int_equal(n, cap < whole ? cap : whole);
		assert_memory_equal(cut, full, n);
		assert_int_equal(cut[n], '#');
	}
}

static void test_framing(void **state)
{
	(void)state;
	char out[64], t[PK_WIRE_OCTET_ROOM];

	assert_int_equal(pk_wire_octet_prefix(t, 0), 2);
	assert_memory_equal(t, "0 ", 2);
	assert_int_equal(pk_wire_octet_prefix(t, 8192), 5);
	assert_memory_equal(t, "8192 ", 5);

	size_t n = pk_wire_frame_lf(out, sizeof(out), "a\nb\r\n\n", 6);

	assert_int_equal(n, 16);
	assert_memory_equal(out, "a#012b\r#012#012\n", 16);
	n = pk_wire_frame_lf(out, sizeof(out), "", 0);
	assert_int_equal(n, 1);
	assert_memory_equal(out, "\n", 1);

	/* cut at the capacity: no newline then (the caller's buffer holds 4n+1) */
	memset(out, '#', sizeof(out));
	n = pk_wire_frame_lf(out, 3, "a\nb", 3);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "a#0#", 4);
}

static void test_facility(void **state)
{
	(void)state;
	assert_int_equal(pk_wire_facility(0), 1);
	assert_int_equal(pk_wire_facility(1), 1);
	assert_int_equal(pk_wire_facility(23), 23);
	assert_int_equal(pk_wire_facility(24), 1);
	assert_int_equal(pk_wire_facility(255), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_5424_control_bytes),
		cmocka_unit_test(test_5424_invalid_utf8),
		cmocka_unit_test(test_5424_header_fields),
		cmocka_unit_test(test_5424_dictionary),
		cmocka_unit_test(test_5424_long_text_and_capacity),
		cmocka_unit_test(test_journal_hostile),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_facility),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
