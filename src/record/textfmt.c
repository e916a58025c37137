// SPDX-License-Identifier: MIT
/*
 * textfmt.c - record -> text (see textfmt.h for the two formats), and
 * find_first_fitting_seq() for the readers that copy whole records.
 *
 * Owns nothing: the formatters are pure computations over a record that the
 * caller has already copied out of the ring, and pk_first_fitting_seq() only
 * reads the ring (lock-free), so all of them are async-signal-safe,
 * thread-safe and never fail. Numbers are written by hand (no stdio, no
 * locale); the text is never rescanned, so a record costs one pass per line.
 */
#include <string.h>

#include "format/record_read.h"
#include "log/settings.h"
#include "record/textfmt.h"

void pk_textfmt_current(struct pk_textfmt *f, bool syslog)
{
	f->syslog = syslog;
	/* syslog(2) and kmsg_dump are the kernel's interfaces: the kernel's
	 * time field whatever style the consoles use. */
	f->time = pk_cfg_printk_time() != 0;
	f->caller = pk_cfg_printk_caller() != 0;
}

#define PAIRS_OF(t) #t "0" #t "1" #t "2" #t "3" #t "4" #t "5" #t "6" #t "7" #t "8" #t "9"
const char pk_digit_pairs[201] = PAIRS_OF(0) PAIRS_OF(1) PAIRS_OF(2) PAIRS_OF(3) PAIRS_OF(4)
	PAIRS_OF(5) PAIRS_OF(6) PAIRS_OF(7) PAIRS_OF(8) PAIRS_OF(9);

/* Append the decimal of @v at @p; returns the end. */
static char *append_uint(char *p, uint64_t v)
{
	char tmp[24];
	char *s = pk_put_uint(tmp + sizeof(tmp), v, 0, ' ');
	size_t n = (size_t)(tmp + sizeof(tmp) - s);

	memcpy(p, s, n);
	return p + n;
}

size_t pk_format_prefix(char *buf, const struct prb_record *r, const struct pk_textfmt *f)
{
	/* Time and caller backwards from the end of @tmp (the console's
	 * builder), then "<prio>" and they forwards. */
	char tmp[PK_PREFIX_MAX];
	char *end = tmp + sizeof(tmp);
	char *s = pk_put_prefix(end, r->ts_nsec, r->caller.tid, f->time, f->caller,
				pk_put_seconds_field);
	char *p = buf;

	if (f->syslog) {
		*p++ = '<';
		p = append_uint(p, ((unsigned)r->facility << 3) | r->level);
		*p++ = '>';
	}
	memcpy(p, s, (size_t)(end - s));
	p += end - s;
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

uint64_t pk_first_fitting_seq(struct prb *rb, uint64_t start, uint64_t end, size_t size,
			      size_t record_max, const struct pk_textfmt *f,
			      unsigned int read_flags, struct prb_record *r, uint64_t *youngest)
{
	uint64_t seq = start, lim;
	size_t total = 0;

	while (seq < end && pk_rec_read(rb, seq, r, read_flags) == 0 && r->seq < end) {
		total += pk_format_record_text(NULL, record_max, r, f);
		if (youngest)
			*youngest = r->seq;
		seq = r->seq + 1;
	}
	lim = seq; /* after the last record counted */
	seq = start;
	while (total > size && seq < lim && pk_rec_read(rb, seq, r, read_flags) == 0 && r->seq < lim) {
		size_t n = pk_format_record_text(NULL, record_max, r, f);

		/* Never below 0, whatever changed: a record skipped as unfinished
		 * in the first pass may be readable now. */
		total -= n < total ? n : total;
		seq = r->seq + 1;
	}
	return seq;
}
