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

#include "format/vsprintf.h"
#include "printk/printk_internal.h"

/* One entry's value, with room for the others. */
#define VALUE_MAX 320

size_t pk_site_srcloc_dict(const struct pk_site *site, char *dict, size_t size)
{
	size_t n = 0;

	if (size < 3 * (VALUE_MAX + 16))
		return 0;
	n += (size_t)pk_scnprintf(dict + n, VALUE_MAX + 16, "CODE_FILE=%s", site->file ? site->file : "") + 1;
	n += (size_t)pk_scnprintf(dict + n, VALUE_MAX + 16, "CODE_LINE=%u", site->line) + 1;
	n += (size_t)pk_scnprintf(dict + n, VALUE_MAX + 16, "CODE_FUNC=%s", site->func ? site->func : "");
	return n;
}

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
