// SPDX-License-Identifier: MIT
/*
 * wire_journal.c - a record as one payload of systemd-journald's native
 * protocol: MESSAGE, PRIORITY, SYSLOG_FACILITY, SYSLOG_IDENTIFIER,
 * SYSLOG_PID, TID, PRINTK_SEQ, PRINTK_REALTIME_USEC and each dictionary
 * entry, its key made a journal field name (json_format.c's mapping, which
 * gives a key that would stand for one of these fields a DICT_ prefix).
 *
 * Invariants (wire.h): a pure function, bounded by the capacity given. A
 * value holding a newline goes in the protocol's binary form (NAME\n, its
 * length as 64-bit little endian, the bytes, \n), so no value can end a
 * field early or start another; other bytes go as they are (the protocol
 * carries any byte).
 */
#include <printk/log.h>

#include "forward/wire.h"
#include "record/json_format.h"

/* One field: KEY=VALUE\n, or, when the value holds a newline,
 * KEY\n, its length as 64-bit little endian, the value, \n. */
static void jfield(struct pk_wire_buf *b, const char *name, const char *v, size_t n)
{
	pk_wire_str(b, name);
	if (!memchr(v, '\n', n)) {
		pk_wire_ch(b, '=');
		pk_wire_put(b, v, n);
	} else {
		unsigned char le[8];

		pk_wire_ch(b, '\n');
		for (int i = 0; i < 8; i++)
			le[i] = (unsigned char)((uint64_t)n >> (8 * i));
		pk_wire_put(b, le, 8);
		pk_wire_put(b, v, n);
	}
	pk_wire_ch(b, '\n');
}

static void jfield_u64(struct pk_wire_buf *b, const char *name, uint64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

	jfield(b, name, t, (size_t)n);
}

static void journal_param(void *arg, const char *k, size_t kn, const char *v, size_t vn)
{
	char name[PK_WIRE_JOURNAL_NAME_MAX + 8];

	pk_json_field_name(name, k, kn);
	jfield(arg, name, v, vn);
}

size_t pk_net_format_journal(char *out, size_t cap, const struct pk_record *rec, const char *app,
			     int64_t rt_offset)
{
	struct pk_wire_buf b = { out, 0, cap };
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;

	jfield(&b, "MESSAGE", rec->text, tlen);
	jfield_u64(&b, "PRIORITY", rec->level & 7u);
	jfield_u64(&b, "SYSLOG_FACILITY", pk_wire_facility(rec->facility));
	jfield(&b, "SYSLOG_IDENTIFIER", app, strlen(app));
	jfield_u64(&b, "SYSLOG_PID", rec->pid);
	jfield_u64(&b, "TID", rec->tid);
	jfield_u64(&b, "PRINTK_SEQ", rec->seq);
	jfield_u64(&b, "PRINTK_REALTIME_USEC", (rec->ts_nsec + (uint64_t)rt_offset) / 1000u);
	pk_wire_each_dict(rec, journal_param, &b);
	return b.len;
}
