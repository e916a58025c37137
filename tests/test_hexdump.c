// SPDX-License-Identifier: MIT
/*
 * test_hexdump.c - hex_dump_to_buffer() and print_hex_dump() against the
 * expectations of the kernel's own test, Linux lib/test_hexdump.c: its
 * 32 bytes, their groups of 1, 2, 4 and 8 in either byte order, rows of 16
 * and 32 bytes with and without text, every length, and every buffer size
 * from 0 to 131 bytes (a cut row is a prefix of the whole one, NUL
 * terminated, nothing written past it, the whole row's length returned).
 * Also: the corners of the return value, the sizes the kernel replaces
 * (rowsize 16, groupsize 1), the printed rows of print_hex_dump() with each
 * prefix type, print_hex_dump_bytes() with DEBUG (KERN_DEBUG, 16 bytes,
 * text), and hex_to_bin(), hex2bin(), bin2hex().
 */
#define DEBUG 1 /* print_hex_dump_bytes() prints; test_kernel_port.c checks it without */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

/* lib/test_hexdump.c's data and the rows it expects. */
static const unsigned char data_b[32] = {
	0xbe, 0x32, 0xdb, 0x7b, 0x0a, 0x18, 0x93, 0xb2, 0x70, 0xba, 0xc4, 0x24, 0x7d, 0x83, 0x34, 0x9b,
	0xa6, 0x9c, 0x31, 0xad, 0x9c, 0x0f, 0xac, 0xe9, 0x4c, 0xd1, 0x19, 0x99, 0x43, 0xb1, 0xaf, 0x0c,
};
static const char data_a[] = ".2.{....p..$}.4...1.....L...C...";

static const char *const groups_1[] = {
	"be", "32", "db", "7b", "0a", "18", "93", "b2", "70", "ba", "c4", "24", "7d", "83", "34", "9b",
	"a6", "9c", "31", "ad", "9c", "0f", "ac", "e9", "4c", "d1", "19", "99", "43", "b1", "af", "0c",
};
static const char *const groups_2_le[] = {
	"32be", "7bdb", "180a", "b293", "ba70", "24c4", "837d", "9b34",
	"9ca6", "ad31", "0f9c", "e9ac", "d14c", "9919", "b143", "0caf",
};
static const char *const groups_2_be[] = {
	"be32", "db7b", "0a18", "93b2", "70ba", "c424", "7d83", "349b",
	"a69c", "31ad", "9c0f", "ace9", "4cd1", "1999", "43b1", "af0c",
};
static const char *const groups_4_le[] = {
	"7bdb32be", "b293180a", "24c4ba70", "9b34837d", "ad319ca6", "e9ac0f9c", "9919d14c", "0cafb143",
};
static const char *const groups_4_be[] = {
	"be32db7b", "0a1893b2", "70bac424", "7d83349b", "a69c31ad", "9c0face9", "4cd11999", "43b1af0c",
};
static const char *const groups_8_le[] = {
	"b293180a7bdb32be", "9b34837d24c4ba70", "e9ac0f9cad319ca6", "0cafb1439919d14c",
};
static const char *const groups_8_be[] = {
	"be32db7b0a1893b2", "70bac4247d83349b", "a69c31ad9c0face9", "4cd1199943b1af0c",
};

/* The kernel's print_hex_dump() line buffer, the largest a test needs. */
#define BUF_SIZE (32 * 3 + 2 + 32 + 1)

static int host_is_big_endian(void)
{
	const uint16_t one = 1;
	unsigned char first;

	memcpy(&first, &one, 1);
	return first == 0;
}

/* The whole row as lib/test_hexdump.c builds it: groups joined by one
 * space, then with @ascii spaces up to the text column and the text. */
static size_t expected_row(char *out, size_t len, int rs, int gs, int ascii)
{
	const char *const *groups;
	const int be = host_is_big_endian();
	size_t n = 0;

	if (rs != 16 && rs != 32)
		rs = 16;
	if (len > (size_t)rs)
		len = (size_t)rs;
	if (gs != 1 && gs != 2 && gs != 4 && gs != 8)
		gs = 1;
	if (len % (size_t)gs)
		gs = 1;
	groups = gs == 8 ? (be ? groups_8_be : groups_8_le) :
		 gs == 4 ? (be ? groups_4_be : groups_4_le) :
		 gs == 2 ? (be ? groups_2_be : groups_2_le) : groups_1;
	for (size_t i = 0; i < len / (size_t)gs; i++) {
		if (i)
			out[n++] = ' ';
		memcpy(out + n, groups[i], strlen(groups[i]));
		n += strlen(groups[i]);
	}
	if (ascii && len) {
		size_t column = (size_t)(rs * 2 + rs / gs + 1);

		while (n < column)
			out[n++] = ' ';
		memcpy(out + n, data_a, len);
		n += len;
	}
	out[n] = '\0';
	return n;
}

static void test_rows_every_length_and_group(void **state)
{
	(void)state;
	static const int rowsizes[] = { 16, 32 };
	static const int groupsizes[] = { 1, 2, 4, 8 };

	for (int a = 0; a <= 1; a++)
		for (size_t r = 0; r < 2; r++)
			for (size_t g = 0; g < 4; g++)
				for (size_t len = 0; len <= 32; len++) {
					char want[BUF_SIZE], got[BUF_SIZE];
					int rs = rowsizes[r], gs = groupsizes[g];
					size_t n = expected_row(want, len, rs, gs, a);
					int ret = hex_dump_to_buffer(data_b, len, rs, gs, got, sizeof(got), a);

					if (strcmp(got, want) != 0 || ret != (int)n)
						fail_msg("len %zu rs %d gs %d ascii %d: %d '%s', want %zu '%s'",
							 len, rs, gs, a, ret, got, n, want);
				}
}

/* lib/test_hexdump.c's overflow test, for every buffer size it tries. */
static void test_cut_rows(void **state)
{
	(void)state;

	for (int a = 0; a <= 1; a++)
		for (int rs = 16; rs <= 32; rs += 16)
			for (int gs = 1; gs <= 8; gs *= 2)
				for (size_t len = (size_t)gs; len <= (size_t)rs; len += (size_t)gs)
					for (size_t buflen = 0; buflen <= BUF_SIZE; buflen++) {
						char want[BUF_SIZE + 1], got[BUF_SIZE + 1];
						int full = (int)expected_row(want, len, rs, gs, a);
						int e = a ? rs * 2 + rs / gs + 1 + (int)len :
							    (gs * 2 + 1) * (int)len / gs - 1;
						size_t keep = buflen ? ((size_t)e < buflen - 1 ? (size_t)e : buflen - 1) : 0;
						int ret;

						assert_int_equal(full, e);
						memset(got, '#', sizeof(got));
						ret = hex_dump_to_buffer(data_b, len, rs, gs, got, buflen, a);
						assert_int_equal(ret, e);
						if (buflen) {
							assert_memory_equal(got, want, keep);
							assert_int_equal(got[keep], '\0');
							keep++;
						}
						for (size_t i = keep; i < sizeof(got); i++)
							if (got[i] != '#')
								fail_msg("len %zu rs %d gs %d ascii %d buflen %zu: byte %zu written",
									 len, rs, gs, a, buflen, i);
					}
}

static void test_return_value_corners(void **state)
{
	(void)state;
	char buf[BUF_SIZE] = "untouched";

	/* Nothing to dump: the kernel's overflow formula when there is no
	 * buffer (-1 without text: no groups, "minus the trailing space"). */
	assert_int_equal(hex_dump_to_buffer(data_b, 0, 16, 1, buf, 0, false), -1);
	assert_int_equal(hex_dump_to_buffer(data_b, 0, 16, 1, buf, 0, true), 16 * 2 + 16 + 1);
	assert_int_equal(hex_dump_to_buffer(data_b, 0, 32, 4, buf, 0, true), 32 * 2 + 8 + 1);
	assert_string_equal(buf, "untouched");
	/* ... and an empty string when there is one, text or not. */
	assert_int_equal(hex_dump_to_buffer(data_b, 0, 16, 1, buf, sizeof(buf), true), 0);
	assert_string_equal(buf, "");
	/* A buffer of one byte: just the NUL. */
	strcpy(buf, "xx");
	assert_int_equal(hex_dump_to_buffer(data_b, 4, 16, 4, buf, 1, false), 8);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'x');
}

static void test_replaced_sizes(void **state)
{
	(void)state;
	char got[BUF_SIZE], want[BUF_SIZE];

	/* Any rowsize but 16 and 32 is 16: one row of at most 16 bytes. */
	expected_row(want, 16, 16, 1, 1);
	assert_int_equal(hex_dump_to_buffer(data_b, 32, 20, 1, got, sizeof(got), true), 16 * 3 + 1 + 16);
	assert_string_equal(got, want);
	assert_int_equal(hex_dump_to_buffer(data_b, 32, 0, 1, got, sizeof(got), true), 16 * 3 + 1 + 16);
	/* More bytes than a row: the first row only. */
	hex_dump_to_buffer(data_b, 20, 16, 4, got, sizeof(got), false);
	assert_string_equal(got, host_is_big_endian() ? "be32db7b 0a1893b2 70bac424 7d83349b" :
							 "7bdb32be b293180a 24c4ba70 9b34837d");
	/* Groups of 3, 16, 0 or -4 bytes are single bytes. */
	for (int gs = -4; gs <= 16; gs++) {
		if (gs == 1 || gs == 2 || gs == 4 || gs == 8)
			continue;
		hex_dump_to_buffer(data_b, 8, 16, gs, got, sizeof(got), false);
		assert_string_equal(got, "be 32 db 7b 0a 18 93 b2");
	}
	/* A group size that does not divide the length falls back to 1,
	 * and the text column moves with it. */
	hex_dump_to_buffer(data_b, 6, 16, 4, got, sizeof(got), true);
	assert_string_equal(got, "be 32 db 7b 0a 18                                .2.{..");
	hex_dump_to_buffer(data_b, 8, 16, 4, got, sizeof(got), true);
	assert_string_equal(got, host_is_big_endian() ? "be32db7b 0a1893b2                    .2.{...." :
							 "7bdb32be b293180a                    .2.{....");
}

/* The text column is 0x20..0x7e; everything else, DEL and 0x80 up, is '.'. */
static void test_text_column(void **state)
{
	(void)state;
	const unsigned char bytes[16] = { 0x00, 0x1f, 0x20, 0x41, 0x7e, 0x7f, 0x80, 0xa0,
					  0xe9, 0xff, '%', 's', '\\', '\t', '\n', 'z' };
	char got[BUF_SIZE];

	hex_dump_to_buffer(bytes, sizeof(bytes), 16, 1, got, sizeof(got), true);
	assert_string_equal(got, "00 1f 20 41 7e 7f 80 a0 e9 ff 25 73 5c 09 0a 7a  .. A~.....%s\\..z");
}

static void test_print_hex_dump_offset(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	print_hex_dump(KERN_INFO, "raw: ", DUMP_PREFIX_OFFSET, 16, 1, data_b, 20, true);
	assert_string_equal(capture_text(&cap),
			    "raw: 00000000: be 32 db 7b 0a 18 93 b2 70 ba c4 24 7d 83 34 9b  .2.{....p..$}.4.\n"
			    "raw: 00000010: a6 9c 31 ad                                      ..1.\n");
	read_at(seq);
	assert_int_equal(rec.level, 6);
	assert_string_equal(rec.text, "raw: 00000000: be 32 db 7b 0a 18 93 b2 70 ba c4 24 7d 83 34 9b  .2.{....p..$}.4.");
	read_at(seq + 1);
	assert_int_equal(rec.level, 6);
	assert_int_equal(pk_log_next_seq(pk_printk_log()), seq + 2);
}

static void test_print_hex_dump_none_rows_of_32(void **state)
{
	(void)state;

	print_hex_dump(KERN_ERR, "", DUMP_PREFIX_NONE, 32, 8, data_b, 32, false);
	assert_string_equal(capture_text(&cap),
			    host_is_big_endian() ?
				    "be32db7b0a1893b2 70bac4247d83349b a69c31ad9c0face9 4cd1199943b1af0c\n" :
				    "b293180a7bdb32be 9b34837d24c4ba70 e9ac0f9cad319ca6 0cafb1439919d14c\n");
	capture_clear(&cap);
	/* Nothing to dump prints nothing; a bad prefix type prints none. */
	print_hex_dump(KERN_ERR, "x", DUMP_PREFIX_OFFSET, 16, 1, data_b, 0, true);
	print_hex_dump(KERN_ERR, "x ", 7, 16, 2, data_b, 2, false);
	assert_string_equal(capture_text(&cap), host_is_big_endian() ? "x be32\n" : "x 32be\n");
}

/* DUMP_PREFIX_ADDRESS prints each row's address as printk's %p does. */
static void test_print_hex_dump_address(void **state)
{
	(void)state;
	char want[512];

	pk_printk(KERN_INFO "%p\n%p\n", (const void *)data_b, (const void *)(data_b + 16));
	const char *text = capture_text(&cap);
	char a0[32], a1[32];

	assert_int_equal(sscanf(text, "%31s %31s", a0, a1), 2);
	assert_int_equal(strlen(a0), 2 * sizeof(void *));
	capture_clear(&cap);
	print_hex_dump(KERN_INFO, "p ", DUMP_PREFIX_ADDRESS, 16, 1, data_b, 17, false);
	snprintf(want, sizeof(want),
		 "p %s: be 32 db 7b 0a 18 93 b2 70 ba c4 24 7d 83 34 9b\np %s: a6\n", a0, a1);
	assert_string_equal(capture_text(&cap), want);
}

/* The level travels through "%s" and still sets the record's level. */
static void test_print_hex_dump_levels(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	print_hex_dump(KERN_DEBUG, "d: ", DUMP_PREFIX_NONE, 16, 1, data_b, 1, false);
	print_hex_dump(KERN_EMERG, "e: ", DUMP_PREFIX_NONE, 16, 1, data_b, 1, false);
	read_at(seq);
	assert_int_equal(rec.level, 7);
	assert_string_equal(rec.text, "d: be");
	read_at(seq + 1);
	assert_int_equal(rec.level, 0);
	/* console_loglevel 7 lets the KERN_EMERG row through only */
	assert_string_equal(capture_text(&cap), "e: be\n");
}

/* With DEBUG, print_hex_dump_bytes() is print_hex_dump(KERN_DEBUG, ...,
 * 16, 1, ..., true). */
static void test_print_hex_dump_bytes_debug(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	pk_set_ignore_loglevel(1);
	print_hex_dump_bytes("b: ", DUMP_PREFIX_OFFSET, data_b, 18);
	print_hex_dump_debug("g: ", DUMP_PREFIX_NONE, 32, 2, data_b, 4, true);
	pk_set_ignore_loglevel(0);
	assert_string_equal(capture_text(&cap),
			    "b: 00000000: be 32 db 7b 0a 18 93 b2 70 ba c4 24 7d 83 34 9b  .2.{....p..$}.4.\n"
			    "b: 00000010: a6 9c                                            ..\n"
			    "g: 32be 7bdb                                                                        .2.{\n");
	read_at(seq);
	assert_int_equal(rec.level, 7);
}

static void test_hex_helpers(void **state)
{
	(void)state;
	unsigned char bin[4] = { 0 };
	char hex[9];

	for (int c = 0; c < 256; c++) {
		int want = c >= '0' && c <= '9' ? c - '0' :
			   c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			   c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		assert_int_equal(hex_to_bin((unsigned char)c), want);
	}
	assert_int_equal(hex2bin(bin, "c0FfEe", 3), 0);
	assert_memory_equal(bin, "\xc0\xff\xee", 3);
	memset(bin, 0, sizeof(bin));
	/* The bytes before a bad pair are stored. */
	assert_int_equal(hex2bin(bin, "01g2", 2), -EINVAL);
	assert_int_equal(bin[0], 0x01);
	assert_int_equal(hex2bin(bin, "0", 1), -EINVAL);
	memset(hex, 'x', sizeof(hex));
	assert_ptr_equal(bin2hex(hex, "\x00\xab\x7f\xff", 4), hex + 8);
	assert_memory_equal(hex, "00ab7fffx", 9);
	assert_ptr_equal(hex_byte_pack(hex, 0x5e), hex + 2);
	assert_ptr_equal(hex_byte_pack_upper(hex + 2, 0xcd), hex + 4);
	assert_memory_equal(hex, "5eCD", 4);
	assert_int_equal(hex_asc_hi(0xa5), 'a');
	assert_int_equal(hex_asc_lo(0xa5), '5');
	assert_int_equal(hex_asc_upper_hi(0xa5), 'A');
	assert_int_equal(sizeof(hex_asc), 17);
	assert_string_equal(hex_asc_upper, "0123456789ABCDEF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_every_length_and_group),
		cmocka_unit_test(test_cut_rows),
		cmocka_unit_test(test_return_value_corners),
		cmocka_unit_test(test_replaced_sizes),
		cmocka_unit_test(test_text_column),
		cmocka_unit_test_setup_teardown(test_print_hex_dump_offset, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_print_hex_dump_none_rows_of_32, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_print_hex_dump_address, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_print_hex_dump_levels, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_print_hex_dump_bytes_debug, setup_capture,
						teardown_capture),
		cmocka_unit_test(test_hex_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
