// SPDX-License-Identifier: MIT
/*
 * kmsg_format.c - a record in /dev/kmsg form (kmsg_format.h): the header
 * "<prefix>,<seq>,<usec>,<flag>[,caller=T<tid>][,partial];", the text with
 * the kernel's escapes (bytes below space, 127 and above, backslash as
 * \xNN), and " KEY=VALUE" dictionary lines. One implementation for every
 * reader (kmsg_read, the kmsg_dump iterator, udmesg --kmsg) and for the
 * extended consoles. Stateless and async-signal-safe; output is cut at
 * PK_MESSAGE_MAX bytes exactly where the kernel cuts it.
 */
#include <string.h>

#include <printk/log.h>

#include "format/vsprintf.h"
#include "log/settings.h"
#include "record/kmsg_format.h"

/* scnprintf(p, e - p, "\\x%02x", c) as the kernel's msg_add_ext_text calls
 * it: with fewer than 5 bytes left it stores what fits before its NUL. */
static void put_escape(char **pp, char *e, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	const char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
	size_t room = (size_t)(e - *pp);

	if (room == 0)
		return;
	size_t n = room - 1 < sizeof(esc) ? room - 1 : sizeof(esc);

	memcpy(*pp, esc, n);
	*pp += n;
}

/* The kernel's append_char: a byte is stored while there is room. */
static void put_char(char **pp, char *e, char c)
{
	if (*pp < e)
		*(*pp)++ = c;
}

/* The kernel's msg_add_ext_text. */
static void put_text(char **pp, char *e, const char *text, size_t len, char endc)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < ' ' || c >= 127 || c == '\\')
			put_escape(pp, e, c);
		else
			put_char(pp, e, (char)c);
	}
	put_char(pp, e, endc);
}

/* info_print_ext_header + msg_print_ext_body into @out. Returns the length. */
size_t pk_kmsg_format_record(const struct prb_record *r, char *out, bool partial)
{
	char caller[24] = "";
	char *p = out, *e = out + PK_MESSAGE_MAX;

	if (pk_cfg_printk_caller())
		pk_fmt_snprintf(caller, sizeof(caller), ",caller=T%u", (unsigned)r->caller.tid);
	/* A line its writer never finished (post-mortem view) is marked with an
	 * extra field, which parsers that ignore unknown fields skip. */
	p += pk_scnprintf(out, PK_MESSAGE_MAX, "%u,%llu,%llu,%c%s%s;",
			  ((unsigned)r->facility << 3) | r->level, (unsigned long long)r->seq,
			  (unsigned long long)(r->ts_nsec / 1000),
			  (r->flags & PRB_FLAG_CONT) ? 'c' : '-', caller, partial ? ",partial" : "");
	put_text(&p, e, r->text, r->text_len, '\n');

	/* Dictionary: one " KEY=VALUE\n" per non-empty NUL-separated entry,
	 * escaped like the text (msg_add_dict_text). */
	size_t i = 0;

	while (i < r->dict_len) {
		const char *entry = r->dict + i;
		size_t n = strnlen(entry, r->dict_len - i);

		if (n) {
			put_char(&p, e, ' ');
			put_text(&p, e, entry, n, '\n');
		}
		i += n + 1;
	}
	return (size_t)(p - out);
}
