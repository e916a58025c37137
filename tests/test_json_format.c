// SPDX-License-Identifier: MIT
/*
 * test_json_format.c - the JSON line of a record (src/record/json_format.c):
 * exact bytes of its fields, journalctl's rule for values (printable UTF-8
 * as a string, anything else as an array of byte numbers) on hostile text
 * and dictionaries, the dictionary's field names as the journal forwarder
 * sends them, and that the largest record fits PK_JSON_RECORD_MAX.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <printk/log.h>

#include "forward/console_net.h"
#include "record/json_format.h"
#include "testutil.h"

static char line[PK_JSON_RECORD_MAX];

static const char *fmt(const struct pk_record *r, const char *ident)
{
	size_t n = pk_json_format_record(line, sizeof(line), r, ident, 1700000000000000000ll);

	assert_true(n < sizeof(line));
	line[n] = '\0';
	return line;
}

#define HEAD                                                                                              \
	"{\"__REALTIME_TIMESTAMP\":\"1700001291025123\",\"__MONOTONIC_TIMESTAMP\":\"1291025123\","        \
	"\"PRIORITY\":\"6\",\"SYSLOG_FACILITY\":\"3\""
#define IDS "\"_PID\":\"100\",\"TID\":\"101\",\"PRINTK_SEQ\":\"42\""

static void check_text(const char *text, size_t n, const char *message)
{
	struct pk_record r;
	char want[8192];

	test_fill_record(&r, text, n, "", 0);
	snprintf(want, sizeof(want), HEAD "," IDS ",\"MESSAGE\":%s}\n", message);
	assert_string_equal(fmt(&r, NULL), want);
}

static void test_fields(void **state)
{
	struct pk_record r;

	(void)state;
	test_fill_record(&r, "link up", 7, "SUBSYSTEM=net\0DEVICE=n2", 23);
	assert_string_equal(fmt(&r, "daemon"),
			    HEAD ",\"SYSLOG_IDENTIFIER\":\"daemon\"," IDS ",\"MESSAGE\":\"link up\","
				 "\"SUBSYSTEM\":\"net\",\"DEVICE\":\"n2\"}\n");
	/* printk's facility 0 goes as user (1), as the journal forwarder sends
	 * it; the level is the low 3 bits; an open line says so. */
	r.facility = 0;
	r.level = 3;
	r.state = PK_REC_UNFINALIZED;
	r.dict_len = 0;
	assert_string_equal(fmt(&r, NULL),
			    "{\"__REALTIME_TIMESTAMP\":\"1700001291025123\",\"__MONOTONIC_TIMESTAMP\":\"1291025123\","
			    "\"PRIORITY\":\"3\",\"SYSLOG_FACILITY\":\"1\"," IDS ",\"PRINTK_PARTIAL\":\"1\","
			    "\"MESSAGE\":\"link up\"}\n");
	/* A wall clock before the epoch counts as the epoch. */
	size_t n = pk_json_format_record(line, sizeof(line), &r, NULL, -2000000000000ll);

	line[n] = '\0';
	assert_non_null(strstr(line, "{\"__REALTIME_TIMESTAMP\":\"0\","));
}

static void test_values(void **state)
{
	(void)state;
	/* Printable: quotes, backslashes, tab and newline escaped, UTF-8 kept. */
	check_text("a\"b\\c\td\ne", 9, "\"a\\\"b\\\\c\\td\\ne\"");
	check_text("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80", 15,
		   "\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80\"");
	check_text("", 0, "\"\"");
	/* Not printable: the bytes as numbers. */
	check_text("a\rb", 3, "[97,13,98]");	      /* C0 control */
	check_text("a\0b", 3, "[97,0,98]");	      /* NUL */
	check_text("\x1b[31m", 5, "[27,91,51,49,109]"); /* terminal escape */
	check_text("\x7f", 1, "[127]");		      /* DEL */
	check_text("\xc2\x85", 2, "[194,133]");	      /* C1 control (NEL) in UTF-8 */
	check_text("\xff", 1, "[255]");		      /* never UTF-8 */
	check_text("\x80", 1, "[128]");		      /* lone continuation */
	check_text("\xc3", 1, "[195]");		      /* cut sequence */
	check_text("\xe2\x82", 2, "[226,130]");	      /* cut sequence */
	check_text("\xc0\xaf", 2, "[192,175]");	      /* overlong '/' */
	check_text("\xe0\x80\xaf", 3, "[224,128,175]");    /* overlong '/' */
	check_text("\xf0\x80\x80\xaf", 4, "[240,128,128,175]");
	check_text("\xed\xa0\x80", 3, "[237,160,128]");    /* lone surrogate U+D800 */
	check_text("\xed\xbf\xbf", 3, "[237,191,191]");    /* U+DFFF */
	check_text("\xf4\x90\x80\x80", 4, "[244,144,128,128]"); /* past U+10FFFF */
	check_text("\xef\xbf\xbe", 3, "[239,191,190]");    /* noncharacter U+FFFE */
	check_text("\xef\xb7\x90", 3, "[239,183,144]");    /* noncharacter U+FDD0 */
	/* The edges that are printable. */
	check_text("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbd", 10,
		   "\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbd\"");
}

static void test_dictionary(void **state)
{
	struct pk_record r;
	static const char dict[] = "subsystem=net\0_SECRET=x\0MESSAGE=fake\0PRIORITY=0\0"
				   "9lives=cat\0a.b-c=d\0noequals\0=empty key\0BIN=\x01\x02\0"
				   "dup=1\0DUP=2\0x=y\0Dup=\"3\"";

	(void)state;
	test_fill_record(&r, "t", 1, dict, sizeof(dict) - 1);
	assert_string_equal(fmt(&r, NULL),
			    HEAD "," IDS ",\"MESSAGE\":\"t\",\"SUBSYSTEM\":\"net\",\"X_SECRET\":\"x\","
				 "\"DICT_MESSAGE\":\"fake\",\"DICT_PRIORITY\":\"0\",\"X9LIVES\":\"cat\","
				 "\"A_B_C\":\"d\",\"BIN\":[1,2],\"DUP\":[\"1\",\"2\",\"\\\"3\\\"\"],"
				 "\"X\":\"y\"}\n");
}

/* The names are the journal forwarder's (console_net.c), so one record
 * has the same field names in the journal and in a JSON line. */
static void test_names_match_journal_forwarder(void **state)
{
	static const char *const keys[] = { "subsystem", "_PID", "0x", "a.b", "SYSLOG_IDENTIFIER", "TID",
					    "printk_seq", "x" };
	char a[80], b[80];

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		pk_journal_key_name(a, keys[i], strlen(keys[i]));
		size_t m = pk_json_field_name(b, keys[i], strlen(keys[i]));

		if (m > 5 && !memcmp(b, "DICT_", 5))
			assert_string_equal(b + 5, a);
		else
			assert_string_equal(b, a);
	}
	char long_key[200];

	memset(long_key, 'k', sizeof(long_key));
	assert_int_equal(pk_json_field_name(b, long_key, sizeof(long_key)), 64);
}

/* A record near the worst: every byte of text, identifier and dictionary
 * a number, 204 dictionary entries whose names grow; it fits, and a short
 * buffer cuts without writing past it. */
static void test_largest_record_fits(void **state)
{
	struct pk_record r;
	char dict[PK_DICT_MAX];
	char text[PK_TEXT_MAX];

	(void)state;
	memset(text, 0xff, sizeof(text));
	memset(dict, 0, sizeof(dict));
	/* 204 entries "0a=\xff", "1a=\xff" ... with distinct keys: each name
	 * grows to "X0A", each value is "[255]". */
	for (size_t i = 0; i + 5 <= sizeof(dict); i += 5) {
		dict[i] = (char)('0' + (i / 5) % 10);
		dict[i + 1] = (char)('a' + (i / 50) % 26);
		dict[i + 2] = '=';
		dict[i + 3] = (char)0xff;
		dict[i + 4] = '\0';
	}
	test_fill_record(&r, text, sizeof(text), dict, sizeof(dict));
	size_t n = pk_json_format_record(line, sizeof(line), &r, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e",
					 0);

	print_message("largest line: %zu bytes\n", n);
	assert_true(n < PK_JSON_RECORD_MAX);
	assert_int_equal(line[n - 1], '\n');

	char small[64];

	memset(small, 'Z', sizeof(small));
	assert_int_equal(pk_json_format_record(small, 32, &r, NULL, 0), 32);
	for (size_t i = 32; i < sizeof(small); i++)
		assert_int_equal(small[i], 'Z');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_dictionary),
		cmocka_unit_test(test_names_match_journal_forwarder),
		cmocka_unit_test(test_largest_record_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
