// SPDX-License-Identifier: MIT
/*
 * textfmt.h - record -> text, shared by the readers that print whole records:
 * syslog(2) actions and the kmsg_dump iterator (private to libprintk), and
 * which records of a log fit in a reader's buffer.
 *
 * The console/syslog text of the kernel's record_print_text(): every line of
 * the record gets the same prefix ("<prio>", "[%5lu.%06lu]", "[%6s]" of
 * "T<tid>", then one space if the time or the caller was printed), the
 * stripped trailing newline is put back, text bytes are passed raw. (The
 * /dev/kmsg form is kmsg.c's pk_kmsg_format_record.)
 *
 * Every function here is pure (no global state, no allocation, no locks;
 * pk_first_fitting_seq() only reads the lock-free ring), hence
 * async-signal-safe and thread-safe: the crash handler uses them.
 */
#ifndef PRINTK_TEXTFMT_H
#define PRINTK_TEXTFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hints.h"
#include "ring/ringbuffer.h"

/* No limit for pk_format_record_text(): the size a record needs. */
#define PK_FMT_UNLIMITED SIZE_MAX

/* "00" "01" ... "99": two decimal digits per division. */
extern const char pk_digit_pairs[201];

/* Decimal of @v, right-aligned in at least @width characters padded with
 * @pad, written backwards ending at @end; returns the start. */
static inline char *pk_put_uint(char *end, uint64_t v, int width, char pad)
{
	char *p = end;

	while (v >= 100) {
		p -= 2;
		memcpy(p, pk_digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, pk_digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	while (end - p < width)
		*--p = pad;
	return p;
}

/* Exactly six digits of @v (< 1000000), backwards ending at @end; returns
 * the start: the microseconds of "[%5lu.%06lu]". */
static inline char *pk_put_6digits(char *end, uint32_t v)
{
	/* Both quotients straight from @v: two short dependency chains
	 * instead of one long one (printk waits for them before write(2)). */
	uint32_t hi = v / 10000, q = v / 100;

	memcpy(end - 6, pk_digit_pairs + 2 * hi, 2);
	memcpy(end - 4, pk_digit_pairs + 2 * (q - hi * 100), 2);
	memcpy(end - 2, pk_digit_pairs + 2 * (v - q * 100), 2);
	return end - 6;
}

/* "[%5lu." of @sec into @out (at least 24 bytes), forward, not terminated;
 * returns its length (7 to 22). */
static inline size_t pk_seconds_field(char *out, uint64_t sec)
{
	char tmp[24];
	char *e = tmp + sizeof(tmp), *b = e;

	*--b = '.';
	b = pk_put_uint(b, sec, 5, ' ');
	*--b = '[';
	memcpy(out, b, (size_t)(e - b));
	return (size_t)(e - b);
}

/* "%06lu]" of @ts_nsec, whose whole seconds are @sec, backwards ending at
 * @end; returns the start. The "[%5lu." before it is pk_seconds_field()'s. */
static inline char *pk_put_usec_field(char *end, uint64_t ts_nsec, uint64_t sec)
{
	*--end = ']';
	/* Both quotients straight from the timestamp (see pk_put_6digits). */
	return pk_put_6digits(end, (uint32_t)(ts_nsec / 1000u - sec * 1000000u));
}

/* "[%6s]" of "T<tid>", the caller field of the console and syslog prefix,
 * backwards ending at @end (at most 13 bytes); returns the start. */
static inline char *pk_put_caller_field(char *end, uint32_t tid)
{
	char *p = end;

	*--p = ']';
	p = pk_put_uint(p, tid, 0, ' ');
	*--p = 'T';
	while (end - p < 7) /* "T<tid>" padded to 6, plus the ']' */
		*--p = ' ';
	*--p = '[';
	return p;
}

/* "[%5lu." of @sec backwards ending at @end; returns the start. The plain
 * seconds field for pk_put_prefix() (the console keeps its own cache). */
static inline char *pk_put_seconds_field(char *end, uint64_t sec)
{
	*--end = '.';
	end = pk_put_uint(end, sec, 5, ' ');
	*--end = '[';
	return end;
}

/*
 * The one builder of a line's prefix after "<prio>": "[%5lu.%06lu]" for
 * the time, "[%6s]" of "T<tid>" for the caller, then a space, as the kernel
 * prints them; backwards ending at @end (at most PK_PREFIX_MAX bytes, plus
 * whatever @put_seconds writes before its field). Returns the start; @end
 * itself when neither is on. @put_seconds writes "[%5lu." of its second
 * backwards (pk_put_seconds_field, or the console's cached copy): always
 * inlined, so a constant one is a direct call or none.
 */
static PK_ALWAYS_INLINE char *pk_put_prefix(char *end, uint64_t ts_nsec, uint32_t tid,
					    bool time, bool caller,
					    char *(*put_seconds)(char *end, uint64_t sec))
{
	char *p = end;

	if (!time && !caller)
		return p;
	*--p = ' ';
	if (caller)
		p = pk_put_caller_field(p, tid);
	if (time) {
		uint64_t sec = ts_nsec / 1000000000u;

		p = put_seconds(pk_put_usec_field(p, ts_nsec, sec), sec);
	}
	return p;
}

/* What goes into the prefix of a text line. */
struct pk_textfmt {
	bool syslog; /* "<prio>" */
	bool time;   /* "[%5lu.%06lu]" */
	bool caller; /* "[%6s]" of "T<tid>" */
};

/* The settings now in force (printk.time, printk.caller), with @syslog. */
void pk_textfmt_current(struct pk_textfmt *f, bool syslog);

/* The prefix of every line of @r into @buf (PK_PREFIX_MAX bytes, NUL
 * terminated); returns its length. */
size_t pk_format_prefix(char *buf, const struct prb_record *r, const struct pk_textfmt *f);

/*
 * The kernel's record_print_text(): @r as prefixed lines into @buf of
 * @buf_size bytes. Only whole lines are written: when the next line and its
 * newline do not fit in @buf_size - 1 bytes, it and every later line are left
 * out (so a record that does not fit at all gives 0 bytes). The result is
 * NUL-terminated when @buf_size > 0. @buf may be NULL to only measure; with
 * @buf_size PK_FMT_UNLIMITED that is the size the whole record needs
 * (prefix length * lines + text length + 1). Returns the length written.
 */
size_t pk_format_record_text(char *buf, size_t buf_size, const struct prb_record *r,
			     const struct pk_textfmt *f);

/*
 * The kernel's find_first_fitting_seq(), for the readers that copy a block of
 * whole records (syslog READ_ALL, kmsg_dump_get_buffer): add up the sizes of
 * the records in [@start, @end), each as pk_format_record_text(NULL,
 * @record_max, r, @f) counts it, then drop the oldest until the rest fits in
 * @size bytes; returns the first record kept (the seq after the last one
 * counted when none fits). Records are read with @read_flags into @r, the
 * caller's scratch. Records that come in meanwhile are not counted; records
 * lost meanwhile make it drop more than needed (best effort, no retry
 * loop). When @youngest is not NULL and a record was counted, *@youngest is
 * the seq of the last one. Lock-free: reads the ring only.
 */
uint64_t pk_first_fitting_seq(struct prb *rb, uint64_t start, uint64_t end, size_t size,
			      size_t record_max, const struct pk_textfmt *f,
			      unsigned int read_flags, struct prb_record *r, uint64_t *youngest);


#endif
