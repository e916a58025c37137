/* SPDX-License-Identifier: MIT */
/*
 * printk/hexdump.h - the kernel's hex dumps and hex helpers, with the
 * kernel's output byte for byte (Linux lib/hexdump.c).
 *
 *     print_hex_dump(KERN_INFO, "desc: ", DUMP_PREFIX_OFFSET, 16, 1,
 *                    buf, len, true);
 *
 * prints one printk record per row of 16 bytes:
 *
 *     desc: 00000000: 12 01 00 02 00 00 00 40 6b 1d 02 00 06 06 03 02  .......@k.......
 *
 * <printk/printk.h> includes this header, as the kernel's printk.h
 * declares print_hex_dump(). Groups of 2, 4 and 8 bytes are read in the
 * host's byte order, as the kernel reads them. PRINTK_NO_HEX_NAMES hides
 * the generic helper names (hex_asc, hex_to_bin, hex2bin, bin2hex,
 * hex_byte_pack); PRINTK_NO_KERNEL_NAMES hides every kernel name.
 */
#ifndef PRINTK_HEXDUMP_H
#define PRINTK_HEXDUMP_H

#include <stddef.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include <printk/compiler.h>
#include <printk/dynamic_debug.h>
#include <printk/kern_levels.h>

PK_BEGIN_DECLS

/* @prefix_type of print_hex_dump(): nothing, the address of the row (as
 * printk's %p prints it: hashed), or its offset ("%.8x"). */
enum {
	PK_DUMP_PREFIX_NONE,
	PK_DUMP_PREFIX_ADDRESS,
	PK_DUMP_PREFIX_OFFSET
};

/* The digits, as the kernel's hex_asc[] and hex_asc_upper[] (string
 * literals: nothing to link, and sizeof is the kernel's 17). */
#define PK_HEX_ASC		   "0123456789abcdef"
#define PK_HEX_ASC_UPPER	   "0123456789ABCDEF"
#define pk_hex_asc_lo(x)	   PK_HEX_ASC[((x) & 0x0f)]
#define pk_hex_asc_hi(x)	   PK_HEX_ASC[((x) & 0xf0) >> 4]
#define pk_hex_asc_upper_lo(x) PK_HEX_ASC_UPPER[((x) & 0x0f)]
#define pk_hex_asc_upper_hi(x) PK_HEX_ASC_UPPER[((x) & 0xf0) >> 4]

/* Two lower-case digits of @byte at @buf; returns @buf + 2 (no NUL).
 * Context: any (async-signal-safe). */
static inline char *pk_hex_byte_pack(char *buf, unsigned char byte)
{
	*buf++ = pk_hex_asc_hi(byte);
	*buf++ = pk_hex_asc_lo(byte);
	return buf;
}

static inline char *pk_hex_byte_pack_upper(char *buf, unsigned char byte)
{
	*buf++ = pk_hex_asc_upper_hi(byte);
	*buf++ = pk_hex_asc_upper_lo(byte);
	return buf;
}

/* The value of one hex digit (either case), or -1.
 * Context: any (async-signal-safe). */
static inline int pk_hex_to_bin(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch |= 0x20; /* ASCII lower case; only letters can match below */
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* @count bytes from 2 * @count hex digits at @src. 0, or -EINVAL at the
 * first pair that is not two hex digits (the bytes before it are stored).
 * Context: any (async-signal-safe). */
PK_API int pk_hex2bin(unsigned char *dst, const char *src, size_t count);
/* 2 * @count lower-case digits of @src at @dst, no NUL; returns the end.
 * Context: any (async-signal-safe). */
PK_API char *pk_bin2hex(char *dst, const void *src, size_t count);

/*
 * One row of a hex dump into @linebuf: at most @rowsize (16 or 32; other
 * values mean 16) of the @len bytes, in groups of @groupsize (1, 2, 4 or 8;
 * another size, or one that does not divide the row's length, means 1),
 * then, with @ascii, the bytes as text (0x20..0x7e, else '.') starting in
 * the column a full row's groups would end at, plus one space. The text
 * is cut to fit @linebuflen with its NUL. Returns the length the whole
 * row has, as snprintf does; as in the kernel, -1 when @linebuflen and
 * @len are both 0 without @ascii.
 * Context: any (async-signal-safe, lock-free).
 */
PK_API int pk_hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize,
				 char *linebuf, size_t linebuflen, bool ascii);

/*
 * printk each row of @buf as "<level><prefix_str>[<address or offset>: ]<row>\n"
 * (rows as pk_hex_dump_to_buffer()). One record per row.
 * Context: as pk_printk() (async-signal-safe; the rows are built on the
 * stack).
 */
PK_API void pk_print_hex_dump(const char *level, const char *prefix_str, int prefix_type,
			      int rowsize, int groupsize, const void *buf, size_t len, bool ascii);

/* Without DEBUG the kernel's print_hex_dump_debug() (and so
 * print_hex_dump_bytes()) prints nothing; its arguments are still
 * evaluated, as the kernel's empty inline function's are. */
static inline void pk_print_hex_dump_nothing(const char *prefix_str, int prefix_type, int rowsize,
					     int groupsize, const void *buf, size_t len, bool ascii)
{
	(void)prefix_str;
	(void)prefix_type;
	(void)rowsize;
	(void)groupsize;
	(void)buf;
	(void)len;
	(void)ascii;
}

#if PK_DYNDBG_ON
/* A dynamic debug site whose format is the prefix when it is a constant,
 * else "hexdump" (the kernel's dynamic_hex_dump()); the f/l/m/s/t flags
 * add nothing to a dump's rows, as there. */
#define pk_print_hex_dump_debug(prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii)  \
	PK_DYNDBG_CALL(__builtin_constant_p(prefix_str) ? (prefix_str) : "hexdump",             \
		       pk_print_hex_dump(PK_KERN_DEBUG, prefix_str, prefix_type, rowsize,       \
					 groupsize, buf, len, ascii))
#elif defined(DEBUG)
#define pk_print_hex_dump_debug(prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii) \
	pk_print_hex_dump(PK_KERN_DEBUG, prefix_str, prefix_type, rowsize, groupsize, buf, len, ascii)
#else
#define pk_print_hex_dump_debug pk_print_hex_dump_nothing
#endif
/* KERN_DEBUG, 16 bytes a row, single bytes, with text: a debug message. */
#define pk_print_hex_dump_bytes(prefix_str, prefix_type, buf, len) \
	pk_print_hex_dump_debug(prefix_str, prefix_type, 16, 1, buf, len, true)

#ifndef PRINTK_NO_KERNEL_NAMES
#define DUMP_PREFIX_NONE     PK_DUMP_PREFIX_NONE
#define DUMP_PREFIX_ADDRESS  PK_DUMP_PREFIX_ADDRESS
#define DUMP_PREFIX_OFFSET   PK_DUMP_PREFIX_OFFSET
#define hex_dump_to_buffer   pk_hex_dump_to_buffer
#define print_hex_dump	     pk_print_hex_dump
#define print_hex_dump_debug pk_print_hex_dump_debug
#define print_hex_dump_bytes pk_print_hex_dump_bytes
#ifndef PRINTK_NO_HEX_NAMES
#define hex_asc		     PK_HEX_ASC
#define hex_asc_upper	     PK_HEX_ASC_UPPER
#define hex_asc_lo	     pk_hex_asc_lo
#define hex_asc_hi	     pk_hex_asc_hi
#define hex_asc_upper_lo     pk_hex_asc_upper_lo
#define hex_asc_upper_hi     pk_hex_asc_upper_hi
#define hex_byte_pack	     pk_hex_byte_pack
#define hex_byte_pack_upper  pk_hex_byte_pack_upper
#define hex_to_bin	     pk_hex_to_bin
#define hex2bin		     pk_hex2bin
#define bin2hex		     pk_bin2hex
#endif
#endif

PK_END_DECLS

#endif
