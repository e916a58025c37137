// SPDX-License-Identifier: MIT
/*
 * textfmt.h - record -> text, shared by the readers that print whole records:
 * syslog(2) actions, the kmsg_dump iterator and the crash-dump file
 * (private to libprintk).
 *
 * Two formats:
 *   - the console/syslog text of the kernel's record_print_text(): every line
 *     of the record gets the same prefix ("<prio>", "[%5lu.%06lu]", "[%6s]"
 *     of "T<tid>", then one space if the time or the caller was printed), the
 *     stripped trailing newline is put back, text bytes are passed raw;
 *   - the /dev/kmsg record ("<prio>,<seq>,<ts_usec>,<flags>[,...];<escaped
 *     text>\n" plus " KEY=VALUE\n" dictionary lines).
 *
 * Every function here is pure (no global state, no allocation, no locks),
 * hence async-signal-safe and thread-safe: the crash handler uses them.
 */
#ifndef PRINTK_TEXTFMT_H
#define PRINTK_TEXTFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringbuffer.h"

/* Longest prefix: "<2047>[99999999999.999999][T4294967295] " and its NUL. */
#define PK_PREFIX_MAX 64

/* The kernel's PRINTK_MESSAGE_MAX: syslog formats each record into a buffer
 * this big, so one record gives at most this minus 1 bytes of text. */
#define PK_MESSAGE_MAX 2048

/* No limit for pk_format_record_text(): the size a record needs. */
#define PK_FMT_UNLIMITED SIZE_MAX

/* Room for any record in kmsg format: header, 4 bytes per escaped text byte
 * and newline, 4 bytes per escaped dictionary byte plus " " and "\n" per
 * entry, and the NUL. */
#define PK_KMSG_RECORD_MAX (128 + 4 * PRB_TEXT_MAX + 1 + 6 * PRB_DICT_MAX + 1)

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

/* pk_format_kmsg_record() options. */
#define PK_KMSG_FMT_CALLER  0x1 /* add ",caller=T<tid>" after the flags */
#define PK_KMSG_FMT_PARTIAL 0x2 /* add ",partial" to a record whose line did not end */

/*
 * @r as /dev/kmsg prints it (§5.1): "<prio>,<seq>,<ts_usec>,<c|->" then the
 * optional fields, ";", the text with every byte < 0x20, >= 0x7f and '\\'
 * written as "\xHH", "\n", then one " <escaped KEY=VALUE>\n" line per
 * non-empty dictionary entry.
 *
 * With PK_KMSG_FMT_PARTIAL, a record whose line never ended - it has no
 * newline flag: it was still open when it was read, or another message cut
 * it (the crashing thread's last, unfinished line) - gets a ",partial" field
 * after the flags: "6,12,123456,-,partial;testing the frobnozzle ...".
 * Readers that follow the ABI document ignore fields they do not know.
 *
 * snprintf semantics: returns the full length, writes at most @size - 1
 * bytes and a NUL when @size > 0. PK_KMSG_RECORD_MAX always suffices.
 */
size_t pk_format_kmsg_record(char *buf, size_t size, const struct prb_record *r, unsigned opts);

#endif
