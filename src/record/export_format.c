// SPDX-License-Identifier: MIT
/*
 * export_format.c - a record as one entry of systemd's Journal Export
 * Format, the stream systemd-journal-remote reads on POST /upload
 * (pk-forward's journal-remote target).
 *
 * Owns: which fields an entry has, in which order, and when a value goes
 * in the binary form. The record's fields carry the journald console's
 * names (wire_journal.c: MESSAGE, PRIORITY, SYSLOG_FACILITY,
 * SYSLOG_IDENTIFIER, SYSLOG_PID, TID, PRINTK_SEQ, PRINTK_REALTIME_USEC,
 * the dictionary by json_format.c's key rule), so a record reads the same
 * in the journal whichever way it came; the address fields
 * __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP come first, as
 * journalctl -o export writes them. __CURSOR is not sent: journal-remote
 * ignores it and gives each entry its own.
 *
 * Invariants:
 *   E1 An entry is whole or not at all for a receiver: every field ends in
 *      '\n', the entry ends in one empty line, and no value can end it
 *      early: a value holding a newline, or anything journalctl would not
 *      print as a string (control bytes but tab, bytes that are not UTF-8),
 *      goes in the binary form (NAME\n, 64-bit little-endian length, the
 *      bytes, \n), which carries any bytes.
 *   E2 __REALTIME_TIMESTAMP is always sent and always in
 *      1..PK_EXPORT_REALTIME_MAX, __MONOTONIC_TIMESTAMP at most that:
 *      journal-remote drops an entry without the first (answering
 *      success) and aborts the connection on either out of range, which
 *      would stop a forwarder at a hostile record for good.
 *
 * A pure function: the record in, bytes out, into the caller's buffer; no
 * allocation, no lock, no libc formatting.
 */
#include <string.h>

#include <printk/log.h>

#include "base/bytebuf.h"
#include "record/export_format.h"
#include "record/json_format.h"

/* E1: NAME=VALUE\n, or the binary form. */
static void field(struct pk_bytebuf *b, const char *name, size_t nn, const char *v, size_t n)
{
	pk_bb_put(b, name, nn);
	if (!memchr(v, '\n', n) && pk_journal_printable(v, n)) {
		pk_bb_putc(b, '=');
		pk_bb_put(b, v, n);
	} else {
		unsigned char le[8];

		pk_bb_putc(b, '\n');
		for (int i = 0; i < 8; i++)
			le[i] = (unsigned char)((uint64_t)n >> (8 * i));
		pk_bb_put(b, le, 8);
		pk_bb_put(b, v, n);
	}
	pk_bb_putc(b, '\n');
}

static void field_str(struct pk_bytebuf *b, const char *name, const char *v, size_t n)
{
	field(b, name, strlen(name), v, n);
}

static void field_u64(struct pk_bytebuf *b, const char *name, uint64_t v)
{
	pk_bb_puts(b, name);
	pk_bb_putc(b, '=');
	pk_bb_u64(b, v);
	pk_bb_putc(b, '\n');
}

static uint64_t clamp(uint64_t us)
{
	return us > PK_EXPORT_REALTIME_MAX ? PK_EXPORT_REALTIME_MAX : us;
}

size_t pk_export_format_record(char *out, size_t cap, const struct pk_record *rec, const char *ident,
			       const char *hostname, const char *boot_id, int64_t rt_offset_ns)
{
	struct pk_bytebuf b = { out, 0, cap };
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;
	size_t dn = rec->dict_len > PK_DICT_MAX ? PK_DICT_MAX : rec->dict_len;
	uint64_t off = rt_offset_ns < 0 ? 0u - (uint64_t)rt_offset_ns : (uint64_t)rt_offset_ns;
	uint64_t rt_ns, rt_us, mono_us = rec->ts_nsec / 1000u;

	/* The wall clock, saturated at 0 and at the top (a log file is
	 * untrusted: any ts_nsec may be there). */
	if (rt_offset_ns >= 0)
		rt_ns = rec->ts_nsec > UINT64_MAX - off ? UINT64_MAX : rec->ts_nsec + off;
	else
		rt_ns = rec->ts_nsec > off ? rec->ts_nsec - off : 0;
	rt_us = rt_ns / 1000u;

	/* E2 */
	field_u64(&b, "__REALTIME_TIMESTAMP", rt_us < 1 ? 1 : clamp(rt_us));
	field_u64(&b, "__MONOTONIC_TIMESTAMP", clamp(mono_us));
	if (boot_id)
		field_str(&b, "_BOOT_ID", boot_id, strlen(boot_id));
	if (hostname)
		field_str(&b, "_HOSTNAME", hostname, strlen(hostname));
	field_str(&b, "MESSAGE", rec->text, tlen);
	field_u64(&b, "PRIORITY", rec->level & 7u);
	/* As the journald console: printk's 0 (kern) is the kernel's on a
	 * collector, so it goes as user (1), as do numbers past 23. */
	field_u64(&b, "SYSLOG_FACILITY", rec->facility == 0 || rec->facility > 23 ? 1 : rec->facility);
	if (ident)
		field_str(&b, "SYSLOG_IDENTIFIER", ident, strlen(ident));
	field_u64(&b, "SYSLOG_PID", rec->pid);
	field_u64(&b, "TID", rec->tid);
	field_u64(&b, "PRINTK_SEQ", rec->seq);
	field_u64(&b, "PRINTK_REALTIME_USEC", rt_us);

	/* The dictionary: entries without '=' or with an empty key are left
	 * out, as the consoles do; a key shared by entries makes a field
	 * the entry has more than once, as the journal keeps it. */
	for (size_t i = 0; i < dn;) {
		const char *e = rec->dict + i;
		const char *end = memchr(e, '\0', dn - i);
		size_t elen = end ? (size_t)(end - e) : dn - i;
		const char *eq = memchr(e, '=', elen);

		if (eq && eq != e) {
			char name[80];
			size_t kn = (size_t)(eq - e);
			size_t nn = pk_json_field_name(name, e, kn);

			field(&b, name, nn, eq + 1, elen - kn - 1);
		}
		i += elen + 1;
	}
	pk_bb_putc(&b, '\n');
	if (b.len > cap && cap)
		b.len = cap;
	return b.len;
}
