// SPDX-License-Identifier: MIT
/*
 * json_format.c - a record as one JSON object per line, with the field
 * names journald gives its entries and `journalctl -o json` prints.
 *
 * Owns: which fields a JSON line has, their names (the dictionary keys
 * named by the journal forwarder's rule) and how a value is written:
 * printable UTF-8 as a JSON string, anything else (control bytes, bytes
 * that are not UTF-8, surrogates, overlong forms) as an array of byte
 * numbers, journalctl's rule, so a line is valid JSON and valid UTF-8
 * whatever the record holds and the bytes can be had back exactly.
 * docs/json.md has the fields and the rule.
 *
 * A pure function: the record in, bytes out, into the caller's buffer; no
 * allocation, no lock, no libc formatting, so a console on the crash path
 * and a signal handler may use it.
 */
#include <string.h>

#include <printk/log.h>

#include "base/bytebuf.h"
#include "record/json_format.h"

#define JOURNAL_NAME_MAX 64 /* journald's field names */

/*
 * The length of the character at @s (@n bytes left) if it is one
 * journalctl prints in a string: well-formed UTF-8 (shortest form, no
 * surrogate, at most U+10FFFF), not a noncharacter (U+FDD0..U+FDEF,
 * U+xFFFE, U+xFFFF), not a control but tab and newline (C0, DEL, C1).
 * 0 otherwise.
 */
static size_t printable_char(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0x80) {
		c = s[0];
		len = 1;
	} else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		c = s[0] & 0x1fu;
		len = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		c = s[0] & 0x0fu;
		len = 3;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		c = s[0] & 0x07u;
		len = 4;
	} else {
		return 0; /* a continuation byte, C0/C1 (overlong), F5..FF */
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) || c > 0x10ffff)
		return 0; /* overlong, or past Unicode */
	if ((c & 0xfffff800u) == 0xd800 || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
		return 0; /* surrogate, noncharacter */
	if ((c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7f && c <= 0x9f))
		return 0;
	return len;
}

int pk_journal_printable(const char *v, size_t n)
{
	const unsigned char *u = (const unsigned char *)v;

	for (size_t i = 0; i < n;) {
		size_t l = printable_char(u + i, n - i);

		if (!l)
			return 0;
		i += l;
	}
	return 1;
}

/* A value journalctl's way: a string if printable, else its bytes. */
static void put_value(struct pk_bytebuf *b, const char *v, size_t n)
{
	if (!pk_journal_printable(v, n)) {
		pk_bb_putc(b, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				pk_bb_putc(b, ',');
			pk_bb_u64(b, (unsigned char)v[i]);
		}
		pk_bb_putc(b, ']');
		return;
	}
	pk_bb_putc(b, '"');
	for (size_t i = 0; i < n;) {
		size_t run = i;

		while (run < n && v[run] != '"' && v[run] != '\\' && v[run] != '\n' && v[run] != '\t')
			run++;
		pk_bb_put(b, v + i, run - i);
		if (run == n)
			break;
		pk_bb_putc(b, '\\');
		pk_bb_putc(b, v[run] == '\n' ? 'n' : v[run] == '\t' ? 't' : v[run]);
		i = run + 1;
	}
	pk_bb_putc(b, '"');
}

static void put_name(struct pk_bytebuf *b, const char *name, size_t n)
{
	pk_bb_putc(b, ',');
	pk_bb_putc(b, '"');
	pk_bb_put(b, name, n); /* [A-Z0-9_] only: nothing to escape */
	pk_bb_puts(b, "\":");
}

static void field_u64(struct pk_bytebuf *b, const char *name, uint64_t v)
{
	put_name(b, name, strlen(name));
	pk_bb_putc(b, '"');
	pk_bb_u64(b, v);
	pk_bb_putc(b, '"');
}

/* The fields the record gives: a dictionary key with one of these names
 * gets DICT_ before it: the journal forwarder's own names and this
 * file's (one list, so a record's fields have the same names in the
 * journal and in a JSON line). */
static const char *const own_fields[] = {
	"MESSAGE",    "PRIORITY", "SYSLOG_FACILITY",	  "SYSLOG_IDENTIFIER",
	"SYSLOG_PID", "TID",	  "PRINTK_REALTIME_USEC", "PRINTK_SEQ",
	"PRINTK_PARTIAL",
};

size_t pk_journal_key_name(char *out, const char *key, size_t n)
{
	size_t len = 0;

	if (n && (key[0] == '_' || (key[0] >= '0' && key[0] <= '9')))
		out[len++] = 'X';
	for (size_t i = 0; i < n && len < JOURNAL_NAME_MAX; i++) {
		char c = key[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		out[len++] = c;
	}
	out[len] = '\0';
	return len;
}

size_t pk_json_field_name(char *out, const char *key, size_t n)
{
	size_t len = pk_journal_key_name(out + 5, key, n);

	for (size_t i = 0; i < sizeof(own_fields) / sizeof(own_fields[0]); i++) {
		if (!strcmp(out + 5, own_fields[i])) {
			memcpy(out, "DICT_", 5);
			len += 5;
			if (len > JOURNAL_NAME_MAX)
				len = JOURNAL_NAME_MAX;
			out[len] = '\0';
			return len;
		}
	}
	memmove(out, out + 5, len + 1);
	return len;
}

/* The dictionary's I-th KEY=VALUE entry from @pos; 0 at the end. Entries
 * without '=' or with an empty key are passed over, as the forwarders do. */
static int dict_next(const char *dict, size_t dn, size_t *pos, const char **k, size_t *kn, const char **v,
		     size_t *vn)
{
	while (*pos < dn) {
		const char *e = dict + *pos;
		const char *end = memchr(e, '\0', dn - *pos);
		size_t elen = end ? (size_t)(end - e) : dn - *pos;
		const char *eq = memchr(e, '=', elen);

		*pos += elen + 1;
		if (eq && eq != e) {
			*k = e;
			*kn = (size_t)(eq - e);
			*v = eq + 1;
			*vn = elen - *kn - 1;
			return 1;
		}
	}
	return 0;
}

/*
 * The dictionary as fields. Keys that end up with one name (FOO twice, or
 * foo and FOO) make one field whose value is the array of their values,
 * as journalctl prints a field an entry has more than once. Quadratic in
 * the entries, with no memory but the stack: at most 342 in 1 KiB.
 */
static void put_dict(struct pk_bytebuf *b, const char *dict, size_t dn)
{
	size_t pos = 0;
	const char *k, *v;
	size_t kn, vn;

	while (dict_next(dict, dn, &pos, &k, &kn, &v, &vn)) {
		char name[JOURNAL_NAME_MAX + 8], other[JOURNAL_NAME_MAX + 8];
		size_t len = pk_json_field_name(name, k, kn);
		size_t at = 0, count = 0, first = pos;
		const char *k2, *v2;
		size_t kn2, vn2;

		/* Already written with an earlier entry of that name? */
		while (at < first && dict_next(dict, first, &at, &k2, &kn2, &v2, &vn2)) {
			if (at >= first)
				break; /* this entry itself */
			if (pk_json_field_name(other, k2, kn2) == len && !memcmp(other, name, len))
				break;
		}
		if (at < first)
			continue;
		for (at = first; dict_next(dict, dn, &at, &k2, &kn2, &v2, &vn2);)
			if (pk_json_field_name(other, k2, kn2) == len && !memcmp(other, name, len))
				count++;
		put_name(b, name, len);
		if (!count) {
			put_value(b, v, vn);
			continue;
		}
		pk_bb_putc(b, '[');
		put_value(b, v, vn);
		for (at = first; dict_next(dict, dn, &at, &k2, &kn2, &v2, &vn2);) {
			if (pk_json_field_name(other, k2, kn2) == len && !memcmp(other, name, len)) {
				pk_bb_putc(b, ',');
				put_value(b, v2, vn2);
			}
		}
		pk_bb_putc(b, ']');
	}
}

size_t pk_json_format_record(char *out, size_t cap, const struct pk_record *rec, const char *ident,
			     int64_t rt_offset_ns)
{
	struct pk_bytebuf b = { out, 0, cap };
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;
	size_t dlen = rec->dict_len > PK_DICT_MAX ? PK_DICT_MAX : rec->dict_len;
	/* The wall clock of the record: before the epoch (a clock set back
	 * past it) counts as the epoch. */
	int64_t rt = (int64_t)rec->ts_nsec + rt_offset_ns;

	pk_bb_puts(&b, "{\"__REALTIME_TIMESTAMP\":\"");
	pk_bb_u64(&b, rt > 0 ? (uint64_t)rt / 1000u : 0);
	pk_bb_putc(&b, '"');
	field_u64(&b, "__MONOTONIC_TIMESTAMP", rec->ts_nsec / 1000u);
	field_u64(&b, "PRIORITY", rec->level & 7u);
	/* As the journal forwarder sends it: facility 0 (kern) is the
	 * kernel's on a collector, so printk's goes as 1 (user). */
	field_u64(&b, "SYSLOG_FACILITY", rec->facility == 0 || rec->facility > 23 ? 1 : rec->facility);
	if (ident) {
		put_name(&b, "SYSLOG_IDENTIFIER", 17);
		put_value(&b, ident, strlen(ident));
	}
	field_u64(&b, "_PID", rec->pid);
	field_u64(&b, "TID", rec->tid);
	field_u64(&b, "PRINTK_SEQ", rec->seq);
	if (rec->state == PK_REC_UNFINALIZED)
		field_u64(&b, "PRINTK_PARTIAL", 1);
	put_name(&b, "MESSAGE", 7);
	put_value(&b, rec->text, tlen);
	put_dict(&b, rec->dict, dlen);
	pk_bb_puts(&b, "}\n");
	if (b.len > cap && cap)
		b.len = cap;
	return b.len;
}
