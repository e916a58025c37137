// SPDX-License-Identifier: MIT
/*
 * pk-emit - logs the records its arguments describe through printk, with the
 * consoles PRINTK_OPTS names, waits until the consoles sent them, and exits;
 * the sender the receivers' shell tests (tests/daemon/test_syslog_ng.sh)
 * start.
 *
 *   pk-emit FACILITY:LEVEL:DICT:TEXT ...
 *
 * DICT is KEY=VALUE entries separated by ';', no ':' (empty: no dictionary); TEXT
 * is the rest of the argument, taken as it is (newlines included). It
 * prints "pid N" on stdout first, so that the test knows the PROCID to
 * expect. Exit status 1 with one line on stderr when an argument is not of
 * that form or the consoles did not catch up within a minute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/printk.h>

/* The number in [0, max] at *@p up to @end (a ':'), or -1. */
static int field(const char **p, int max)
{
	char *end;
	long v = strtol(*p, &end, 10);

	if (end == *p || *end != ':' || v < 0 || v > max)
		return -1;
	*p = end + 1;
	return (int)v;
}

int main(int argc, char **argv)
{
	printf("pid %ld\n", (long)getpid());
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		const char *p = argv[i], *colon;
		int facility = field(&p, 23), level = facility < 0 ? -1 : field(&p, 7);
		char dict[1024];
		size_t len;

		colon = level < 0 ? NULL : strchr(p, ':');
		len = colon ? (size_t)(colon - p) : 0;
		if (!colon || len >= sizeof(dict)) {
			fprintf(stderr, "pk-emit: '%s' is not FACILITY:LEVEL:DICT:TEXT\n", argv[i]);
			return 1;
		}
		memcpy(dict, p, len);
		for (size_t k = 0; k < len; k++)
			if (dict[k] == ';')
				dict[k] = '\0';
		pk_printk_emit(facility, level, len ? dict : NULL, len, "%s", colon + 1);
	}
	if (!pk_pr_flush(60000, 1)) {
		fprintf(stderr, "pk-emit: the consoles did not send every record within a minute\n");
		return 1;
	}
	return 0;
}
