// SPDX-License-Identifier: MIT
/*
 * printk_site.c - the printing end of a call site that stores its source
 * location (printk.srcloc, <printk/printk_site.h>): the record carries
 * CODE_FILE=, CODE_LINE= and CODE_FUNC= dictionary entries, the names
 * journald gives a message's source, as dev_printk's records carry
 * SUBSYSTEM= and DEVICE=.
 *
 * Owns no state. The dictionary is built on the stack (async-signal-safe,
 * like printk); each entry is cut to fit PK_DICT_MAX, never dropped, so a
 * reader always finds all three keys.
 */
#include <stdarg.h>
#include <string.h>

#include <printk/printk.h>

#include "printk/printk_internal.h"

/* Room for the longest value of an entry; longer ones are cut. */
#define VALUE_MAX 320

static size_t put(char *d, const char *key, size_t klen, const char *v)
{
	size_t n = v ? strnlen(v, VALUE_MAX) : 0;

	memcpy(d, key, klen);
	if (n)
		memcpy(d + klen, v, n);
	return klen + n;
}

size_t pk_site_srcloc_dict(const struct pk_site *site, char *dict, size_t size)
{
	char num[12];
	size_t n = 0, i = sizeof(num);
	unsigned int line = site->line;

	if (size < 3 * (VALUE_MAX + 16))
		return 0;
	do {
		num[--i] = (char)('0' + line % 10);
		line /= 10;
	} while (line);
	n += put(dict + n, "CODE_FILE=", 10, site->file);
	dict[n++] = '\0';
	memcpy(dict + n, "CODE_LINE=", 10);
	memcpy(dict + n + 10, num + i, sizeof(num) - i);
	n += 10 + sizeof(num) - i;
	dict[n++] = '\0';
	n += put(dict + n, "CODE_FUNC=", 10, site->func);
	return n;
}

/* Formatted at once, never deferred: a deferred record carries no
 * dictionary, and passing one down that path would cost every filtered
 * printk (docs/performance.md). */
int pk__printk_site(struct pk_site *site, const char *fmt, ...)
{
	char dict[3 * (VALUE_MAX + 16)];
	size_t len = pk_site_srcloc_dict(site, dict, sizeof(dict));
	va_list ap;

	va_start(ap, fmt);
	int r = pk_vprintk_emit(0, PK_LOGLEVEL_DEFAULT, dict, len, fmt, ap);
	va_end(ap);
	return r;
}
