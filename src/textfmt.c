// SPDX-License-Identifier: MIT
/*
 * textfmt.c - record -> text (see textfmt.h for the two formats).
 *
 * Owns nothing: every function is a pure computation over a record that the
 * caller has already copied out of the ring, so all of them are
 * async-signal-safe, thread-safe and never fail. Numbers are written by hand
 * (no stdio, no locale); the text is never rescanned, so a record costs one
 * pass per line.
 */
#include <string.h>

#include "internal.h"
#include "textfmt.h"

void pk_textfmt_current(struct pk_textfmt *f, bool syslog)
{
	f->syslog = syslog;
	f->time = pk_cfg_printk_time() != 0;
	f->caller = pk_cfg_printk_caller() != 0;
}

/* Decimal of @v, right-aligned in @width with @pad, written backwards ending
 * at @end; returns the start. */
static char *put_uint(char *end, uint64_t v, int width, char pad)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (end - p < width)
		*--p = pad;
	return p;
}

/* Append the decimal of @v at @p; returns the end. */
static char *append_uint(char *p, uint64_t v)
{
	char tmp[24];
	char *s = put_uint(tmp + sizeof(tmp), v, 0, ' ');
	size_t n = (size_t)(tmp + sizeof(tmp) - s);

	memcpy(p, s, n);
	return p + n;
}

size_t pk_format_prefix(char *buf, const struct prb_record *r, const struct pk_textfmt *f)
{
	char *p = buf;

	if (f->syslog) {
		*p++ = '<';
		p = append_uint(p, ((unsigned)r->facility << 3) | r->level);
		*p++ = '>';
	}
	if (f->time) {
		/* "[%5lu.%06lu]": seconds padded to 5, microseconds to 6 digits. */
		char tmp[32];
		char *end = tmp + sizeof(tmp), *s = end;

		*--s = ']';
		s = put_uint(s, r->ts_nsec % 1000000000u / 1000u, 6, '0');
		*--s = '.';
		s = put_uint(s, r->ts_nsec / 1000000000u, 5, ' ');
		*--s = '[';
		memcpy(p, s, (size_t)(end - s));
		p += end - s;
	}
	if (f->caller) {
		/* "[%6s]" of "T<tid>", as console.c prints it. */
		char tmp[16];
		char *end = tmp + sizeof(tmp), *s = put_uint(end, r->caller.tid, 0, ' ');

		*--s = 'T';
		while (end - s < 6)
			*--s = ' ';
		*p++ = '[';
		memcpy(p, s, (size_t)(end - s));
		p += end - s;
		*p++ = ']';
	}
	if (f->time || f->caller)
		*p++ = ' ';
	*p = '\0';
	return (size_t)(p - buf);
}

/*
 * A forward rendition of the kernel's record_print_text() (which works in
 * place with memmove): @rem is the unprocessed text, cut short once it no
 * longer fits; a line that does not fit whole ends the output, and after a
 * cut the cut-off last piece is dropped ("Drop truncated line(s)").
 */
size_t pk_format_record_text(char *buf, size_t buf_size, const struct prb_record *r,
			     const struct pk_textfmt *f)
{
	char prefix[PK_PREFIX_MAX];
	size_t plen = pk_format_prefix(prefix, r, f);
	const char *text = r->text;
	size_t rem = r->text_len;
	size_t len = 0;
	bool truncated = false;

	/* The kernel reads the text into the output buffer first. */
	if (rem > buf_size)
		rem = buf_size;
	for (;;) {
		const char *nl = memchr(text, '\n', rem);
		size_t line_len;

		if (nl) {
			line_len = (size_t)(nl - text);
		} else {
			if (truncated)
				break;
			line_len = rem;
		}
		/* Room for the prefix, the rest, a newline and the NUL? (All terms
		 * are small: no overflow, even with PK_FMT_UNLIMITED.) */
		if (len + plen + rem + 2 > buf_size) {
			if (len + plen + line_len + 2 > buf_size)
				break;
			rem = buf_size - len - plen - 2;
			truncated = true;
		}
		if (buf) {
			memcpy(buf + len, prefix, plen);
			memcpy(buf + len + plen, text, line_len);
			buf[len + plen + line_len] = '\n';
		}
		len += plen + line_len + 1;
		if (rem == line_len)
			break; /* the last line: its newline is the one printk stripped */
		text += line_len + 1;
		rem -= line_len + 1;
	}
	if (buf && buf_size > 0)
		buf[len] = '\0';
	return len;
}

/* Appends to a buffer of @size, counting what does not fit (snprintf-like). */
struct sink {
	char *buf;
	size_t size;
	size_t len;
};

static void sink_bytes(struct sink *s, const char *p, size_t n)
{
	if (s->len < s->size) {
		size_t room = s->size - s->len;

		memcpy(s->buf + s->len, p, n < room ? n : room);
	}
	s->len += n;
}

static void sink_char(struct sink *s, char c)
{
	sink_bytes(s, &c, 1);
}

static void sink_uint(struct sink *s, uint64_t v)
{
	char tmp[24];
	char *p = put_uint(tmp + sizeof(tmp), v, 0, ' ');

	sink_bytes(s, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* The kernel's msg_add_ext_text() escaping. */
static void sink_escaped(struct sink *s, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	while (n > 0) {
		size_t run = 0;

		while (run < n) {
			unsigned char c = (unsigned char)p[run];

			if (c < 0x20 || c >= 0x7f || c == '\\')
				break;
			run++;
		}
		sink_bytes(s, p, run);
		p += run;
		n -= run;
		if (n > 0) {
			unsigned char c = (unsigned char)*p++;
			char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			sink_bytes(s, esc, sizeof(esc));
			n--;
		}
	}
}

size_t pk_format_kmsg_record(char *buf, size_t size, const struct prb_record *r, unsigned opts)
{
	struct sink s = { buf, size ? size - 1 : 0, 0 };

	sink_uint(&s, ((unsigned)r->facility << 3) | r->level);
	sink_char(&s, ',');
	sink_uint(&s, r->seq);
	sink_char(&s, ',');
	sink_uint(&s, r->ts_nsec / 1000u);
	sink_char(&s, ',');
	sink_char(&s, (r->flags & PRB_FLAG_CONT) ? 'c' : '-');
	if (opts & PK_KMSG_FMT_CALLER) {
		sink_bytes(&s, ",caller=T", 9);
		sink_uint(&s, r->caller.tid);
	}
	if ((opts & PK_KMSG_FMT_PARTIAL) &&
	    (!(r->flags & PRB_FLAG_NEWLINE) || (r->rflags & PRB_REC_UNFINALIZED)))
		sink_bytes(&s, ",partial", 8);
	sink_char(&s, ';');
	sink_escaped(&s, r->text, r->text_len);
	sink_char(&s, '\n');

	/* Dictionary entries are NUL-separated; empty ones print nothing. */
	const char *d = r->dict, *end = r->dict + r->dict_len;

	while (d < end) {
		const char *nul = memchr(d, '\0', (size_t)(end - d));
		size_t n = nul ? (size_t)(nul - d) : (size_t)(end - d);

		if (n > 0) {
			sink_char(&s, ' ');
			sink_escaped(&s, d, n);
			sink_char(&s, '\n');
		}
		d += n + 1;
	}
	if (size > 0)
		buf[s.len < size ? s.len : size - 1] = '\0';
	return s.len;
}
