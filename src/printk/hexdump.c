// SPDX-License-Identifier: MIT
/*
 * hexdump.c - the kernel's hex dumps (Linux lib/hexdump.c):
 * hex_dump_to_buffer(), print_hex_dump(), hex2bin() and bin2hex().
 *
 * Owns no state. Invariants:
 *   H1 A row is built whole in a buffer on the stack (a 32-byte row with
 *      text is 129 bytes) and then cut to the caller's buffer, so a short
 *      buffer always holds a prefix of the full row, and the return value
 *      is the full row's length: what the kernel's step-by-step writes
 *      amount to (its lib/test_hexdump.c checks exactly that).
 *   H2 The kernel's return value for a zero-length buffer is a formula
 *      that gives -1 for an empty row without text, while an empty row in
 *      a real buffer returns 0; both corners are kept.
 *   H3 Groups of 2, 4 and 8 bytes are loaded with memcpy (any alignment)
 *      in host byte order, as the kernel's get_unaligned().
 * Async-signal-safe: no allocation, no locks; printing goes through printk.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <printk/hexdump.h>
#include <printk/printk.h>

/* 32 bytes of hex with spaces, two spaces, 32 bytes of text, NUL: the
 * kernel's print_hex_dump() line buffer. */
#define ROW_MAX (32 * 3 + 2 + 32 + 1)

static char *put_hex(char *p, uint64_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--)
		*p++ = pk_hex_asc_lo((unsigned)(v >> (4 * i)));
	return p;
}

static uint64_t load(const unsigned char *p, int size)
{
	uint16_t v2;
	uint32_t v4;
	uint64_t v8;

	switch (size) {
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	case 8:
		memcpy(&v8, p, 8);
		return v8;
	default:
		return *p;
	}
}

int pk_hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize, char *linebuf,
			  size_t linebuflen, bool ascii)
{
	const unsigned char *bytes = buf;
	char row[ROW_MAX];
	char *p = row;

	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	if (len > (size_t)rowsize)
		len = (size_t)rowsize;
	if (groupsize <= 0 || groupsize > 8 || (groupsize & (groupsize - 1)) ||
	    len % (size_t)groupsize)
		groupsize = 1;

	int ngroups = (int)len / groupsize;
	int ascii_column = rowsize * 2 + rowsize / groupsize + 1;

	if (!linebuflen) /* H2 */
		return ascii ? ascii_column + (int)len : (groupsize * 2 + 1) * ngroups - 1;
	if (!len) {
		linebuf[0] = '\0';
		return 0;
	}
	for (int i = 0; i < ngroups; i++) {
		if (i)
			*p++ = ' ';
		p = put_hex(p, load(bytes + (size_t)i * (size_t)groupsize, groupsize),
			    groupsize * 2);
	}
	if (ascii) {
		while (p < row + ascii_column)
			*p++ = ' ';
		for (size_t i = 0; i < len; i++)
			*p++ = bytes[i] >= 0x20 && bytes[i] < 0x7f ? (char)bytes[i] : '.';
	}

	size_t full = (size_t)(p - row);
	size_t n = full < linebuflen - 1 ? full : linebuflen - 1; /* H1 */

	memcpy(linebuf, row, n);
	linebuf[n] = '\0';
	return (int)full;
}

void pk_print_hex_dump(const char *level, const char *prefix_str, int prefix_type, int rowsize,
		       int groupsize, const void *buf, size_t len, bool ascii)
{
	const unsigned char *bytes = buf;
	char row[ROW_MAX];

	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	/* The level goes through "%s", as in the kernel: printk reads level
	 * headers from the formatted text. */
	for (size_t off = 0; off < len; off += (size_t)rowsize) {
		size_t n = len - off < (size_t)rowsize ? len - off : (size_t)rowsize;

		pk_hex_dump_to_buffer(bytes + off, n, rowsize, groupsize, row, sizeof(row), ascii);
		switch (prefix_type) {
		case PK_DUMP_PREFIX_ADDRESS:
			pk_printk("%s%s%p: %s\n", level, prefix_str, (const void *)(bytes + off),
				  row);
			break;
		case PK_DUMP_PREFIX_OFFSET:
			/* The kernel's offset is an int: a dump past 2 GiB wraps as its does. */
			pk_printk("%s%s%.8x: %s\n", level, prefix_str, (unsigned)off, row);
			break;
		default:
			pk_printk("%s%s%s\n", level, prefix_str, row);
			break;
		}
	}
}

int pk_hex2bin(unsigned char *dst, const char *src, size_t count)
{
	while (count--) {
		int hi = pk_hex_to_bin((unsigned char)*src++);

		if (hi < 0)
			return -EINVAL;

		int lo = pk_hex_to_bin((unsigned char)*src++);

		if (lo < 0)
			return -EINVAL;
		*dst++ = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

char *pk_bin2hex(char *dst, const void *src, size_t count)
{
	const unsigned char *s = src;

	while (count--)
		dst = pk_hex_byte_pack(dst, *s++);
	return dst;
}
