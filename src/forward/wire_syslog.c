// SPDX-License-Identifier: MIT
/*
 * wire_syslog.c - a record as a syslog message: RFC 5424 (header, the
 * structured data "[printk@N seq tid KEY...]", the BOM before UTF-8 text)
 * and RFC 3164 ("<PRI>Mmm dd hh:mm:ss HOST APP[PID]: TEXT"), and RFC 6587's
 * two framings for a stream. Also the parts the journal's form shares: the
 * facility mapping and the dictionary walk.
 *
 * Invariants (wire.h): pure functions, output bounded by the capacity
 * given; header fields hold printable US-ASCII only (anything else is
 * '_', an empty one is "-"); SD-NAMEs hold no '=', ']', '"' or space;
 * PARAM-VALUEs are UTF-8 with '"', '\' and ']' escaped (bytes that are not
 * UTF-8 become U+FFFD); the text itself goes as it is: one record is one
 * message whatever bytes it holds, and the framing keeps it one.
 */
#include <time.h>

#include <printk/forward.h>
#include <printk/log.h>

#include "forward/wire.h"

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none
 * (overlong forms, surrogates and code points past U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int pk_net_utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0, l; i < n; i += l)
		if (!(l = utf8_seq(u + i, n - i)))
			return 0;
	return 1;
}

size_t pk_net_sd_name(char *out, const char *key, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n && len < PK_WIRE_SD_NAME_MAX; i++) {
		unsigned char c = (unsigned char)key[i];

		out[len++] =
			(c < 33 || c > 126 || c == '=' || c == ']' || c == '"') ? '_' : (char)c;
	}
	out[len] = '\0';
	return len;
}

unsigned pk_wire_facility(unsigned facility)
{
	return facility == 0 || facility > 23 ? 1 : facility;
}

void pk_wire_each_dict(const struct pk_record *rec,
		       void (*fn)(void *, const char *, size_t, const char *, size_t), void *arg)
{
	size_t n = rec->dict_len > PK_DICT_MAX ? PK_DICT_MAX : rec->dict_len;

	for (size_t i = 0; i < n;) {
		const char *e = rec->dict + i;
		const char *end = memchr(e, '\0', n - i);
		size_t elen = end ? (size_t)(end - e) : n - i;
		const char *eq = memchr(e, '=', elen);

		if (eq && eq != e)
			fn(arg, e, (size_t)(eq - e), eq + 1, elen - (size_t)(eq - e) - 1);
		i += elen + 1;
	}
}

/* A PARAM-VALUE: '"', '\' and ']' escaped; bytes that are not UTF-8 as
 * U+FFFD, since the RFC allows UTF-8 only there. */
static void sd_value(struct pk_wire_buf *b, const char *v, size_t n)
{
	const unsigned char *u = (const unsigned char *)v;

	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq(u + i, n - i);

		if (!l) {
			pk_wire_str(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (v[i] == '"' || v[i] == '\\' || v[i] == ']')
			pk_wire_ch(b, '\\');
		pk_wire_put(b, v + i, l);
		i += l;
	}
}

/* Printable US-ASCII but space, at most @max bytes, or "-". */
static void header_field(struct pk_wire_buf *b, const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n] && n < max; n++)
		pk_wire_ch(b, (s[n] > 32 && s[n] < 127) ? s[n] : '_');
	if (!n)
		pk_wire_ch(b, '-');
}

static void sd_param(void *arg, const char *k, size_t kn, const char *v, size_t vn)
{
	struct pk_wire_buf *b = arg;
	char name[PK_WIRE_SD_NAME_MAX + 1];

	pk_wire_ch(b, ' ');
	pk_wire_put(b, name, pk_net_sd_name(name, k, kn));
	pk_wire_str(b, "=\"");
	sd_value(b, v, vn);
	pk_wire_ch(b, '"');
}

size_t pk_net_format_syslog(char *out, size_t cap, const struct pk_record *rec, int format,
			    unsigned enterprise, const char *host, const char *app,
			    int64_t rt_offset)
{
	struct pk_wire_buf b = { out, 0, cap };
	uint64_t rt = rec->ts_nsec + (uint64_t)rt_offset;
	time_t secs = (time_t)(rt / 1000000000u);
	struct tm tm;
	char t[64];
	size_t tlen = rec->text_len > PK_TEXT_MAX ? PK_TEXT_MAX : rec->text_len;
	int no_bom = format & PK_NET_NO_BOM;

	format &= ~PK_NET_NO_BOM;
	pk_wire_ch(&b, '<');
	pk_wire_u64(&b, pk_wire_facility(rec->facility) * 8u + (rec->level & 7u));
	pk_wire_ch(&b, '>');
	if (format == PK_SYSLOG_RFC3164) {
		static const char mon[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
						 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

		localtime_r(&secs, &tm);
		snprintf(t, sizeof(t), "%s %2d %02d:%02d:%02d ", mon[tm.tm_mon % 12], tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
		pk_wire_str(&b, t);
		header_field(&b, host, 255);
		pk_wire_ch(&b, ' ');
		header_field(&b, app, 32);
		snprintf(t, sizeof(t), "[%u]: ", rec->pid);
		pk_wire_str(&b, t);
		pk_wire_put(&b, rec->text, tlen);
		return b.len;
	}
	gmtime_r(&secs, &tm);
	snprintf(t, sizeof(t), "1 %04d-%02d-%02dT%02d:%02d:%02d.%06uZ ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(rt % 1000000000u / 1000u));
	pk_wire_str(&b, t);
	header_field(&b, host, 255);
	pk_wire_ch(&b, ' ');
	header_field(&b, app, 48);
	snprintf(t, sizeof(t), " %u - [printk@%u seq=\"%llu\" tid=\"%u\"", rec->pid, enterprise,
		 (unsigned long long)rec->seq, rec->tid);
	pk_wire_str(&b, t);
	pk_wire_each_dict(rec, sd_param, &b);
	pk_wire_ch(&b, ']');
	if (tlen) {
		pk_wire_ch(&b, ' ');
		if (!no_bom && pk_net_utf8_valid(rec->text, tlen))
			pk_wire_str(&b, "\xef\xbb\xbf");
		pk_wire_put(&b, rec->text, tlen);
	}
	return b.len;
}

size_t pk_wire_octet_prefix(char *out, size_t n)
{
	int k = snprintf(out, PK_WIRE_OCTET_ROOM, "%zu ", n);

	return k > 0 ? (size_t)k : 0;
}

size_t pk_wire_frame_lf(char *out, size_t cap, const char *msg, size_t n)
{
	struct pk_wire_buf b = { out, 0, cap };

	for (size_t i = 0; i < n; i++) {
		if (msg[i] == '\n')
			pk_wire_put(&b, "#012", 4);
		else
			pk_wire_ch(&b, msg[i]);
	}
	pk_wire_ch(&b, '\n');
	return b.len;
}
