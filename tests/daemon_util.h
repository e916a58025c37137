// SPDX-License-Identifier: MIT
/*
 * daemon_util.h - what the tests of the forwarding consoles share: a real
 * collector started by the test (rsyslogd, systemd-journald), its JSON
 * output read back, and the rule for a collector that cannot be started:
 * the test fails when run as root (CI runs as root and installs the
 * daemons with scripts/setup.sh), and is skipped otherwise.
 */
#ifndef PRINTK_DAEMON_UTIL_H
#define PRINTK_DAEMON_UTIL_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* The collector could not be started: fail loudly as root, else skip. */
#define daemon_unavailable(...)                                                                    \
	do {                                                                                       \
		print_message("daemon unavailable: " __VA_ARGS__);                                 \
		print_message("\n");                                                               \
		if (geteuid() == 0)                                                                \
			fail_msg("a collector the test needs did not start (root: CI)");           \
		skip();                                                                            \
	} while (0)

/*
 * The string value of "@key" in one JSON object on one line, unescaped
 * (\uXXXX below 0x80 as that byte, others as UTF-8), malloc'ed; NULL if the
 * key is missing. Enough for the flat objects rsyslog's jsonf and
 * journalctl -o json write (a journal field holding non-text bytes comes as
 * an array of numbers: returned as those bytes).
 */
static inline char *json_get(const char *line, const char *key, size_t *lenp)
{
	size_t klen = strlen(key);
	const char *p = line;

	for (;;) {
		p = strchr(p, '"');
		if (!p)
			return NULL;
		if (!strncmp(p + 1, key, klen) && p[1 + klen] == '"' && p[2 + klen] == ':') {
			p += klen + 2;
			while (*p == ' ' || *p == ':')
				p++;
			break;
		}
		/* skip this string */
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (!*p)
			return NULL;
		p++;
	}

	char *out = malloc(strlen(p) + 1);
	size_t n = 0;

	if (*p == '[') { /* bytes as numbers */
		for (p++; *p && *p != ']';) {
			out[n++] = (char)strtol(p, (char **)&p, 10);
			while (*p == ',' || *p == ' ')
				p++;
		}
	} else if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p != '\\') {
				out[n++] = *p;
				continue;
			}
			p++;
			switch (*p) {
			case 'n':
				out[n++] = '\n';
				break;
			case 't':
				out[n++] = '\t';
				break;
			case 'r':
				out[n++] = '\r';
				break;
			case 'b':
				out[n++] = '\b';
				break;
			case 'f':
				out[n++] = '\f';
				break;
			case 'u': {
				char hex[5] = { p[1], p[2], p[3], p[4], 0 };
				unsigned cp = (unsigned)strtoul(hex, NULL, 16);

				p += 4;
				if (cp < 0x80) {
					out[n++] = (char)cp;
				} else if (cp < 0x800) {
					out[n++] = (char)(0xc0 | cp >> 6);
					out[n++] = (char)(0x80 | (cp & 0x3f));
				} else {
					out[n++] = (char)(0xe0 | cp >> 12);
					out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
					out[n++] = (char)(0x80 | (cp & 0x3f));
				}
				break;
			}
			default:
				out[n++] = *p;
				break;
			}
		}
	} else { /* a number */
		while (*p && *p != ',' && *p != '}' && *p != ' ')
			out[n++] = *p++;
	}
	out[n] = '\0';
	if (lenp)
		*lenp = n;
	return out;
}

/* The whole of @path, NUL-terminated (NULL if missing), malloc'ed. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;

	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap + 1);

	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

#endif
