// SPDX-License-Identifier: MIT
/*
 * bench/journal_send - one sender of bench/forward.sh's journald leg (and,
 * with a syslog console, of its rsyslogd and syslog-ng legs): every line of
 * FILE, once, to systemd-journald, then exit.
 *
 *   journal_send printk FILE   pr_info() of each line; the consoles come
 *                              from PRINTK_OPTS (forward.sh gives
 *                              console=journal,lossless, or a syslog
 *                              console,lossless). Before exit it
 *                              waits until the consoles sent everything
 *                              (pr_flush, as long as they make progress):
 *                              exit alone drains for console_drain_ms only.
 *   journal_send sd FILE       sd_journal_send(3) of each line, with the
 *                              fields libprintk's journal console sends
 *                              (MESSAGE, PRIORITY, SYSLOG_FACILITY,
 *                              SYSLOG_IDENTIFIER, SYSLOG_PID, TID);
 *                              libsystemd adds CODE_FILE, CODE_LINE and
 *                              CODE_FUNC. Only when built with libsystemd.
 *
 * FILE is read whole before the first send, so both senders do the same
 * work per line. The timing is forward.sh's, from outside (start until the
 * last entry is in the journal).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef BENCH_HAVE_SD_JOURNAL
#include <sys/syscall.h>
#include <systemd/sd-journal.h>
#endif

#include <printk/printk.h>

/* The lines of @path, each NUL-terminated in place; *@n of them. */
static char **read_lines(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, **lines;
	size_t len = 0, cap = 0, k = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 2) {
			char *more = realloc(buf, cap = cap * 2 + 65536);

			if (!more)
				break;
			buf = more;
		}
		size_t got = fread(buf + len, 1, cap - len - 1, f);

		len += got;
		if (!got)
			break;
	}
	if (!buf || ferror(f) || !feof(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		k += buf[i] == '\n';
	k += len && buf[len - 1] != '\n';
	lines = malloc((k + 1) * sizeof(*lines));
	if (!lines) {
		free(buf);
		return NULL;
	}
	*n = 0;
	for (char *p = buf, *e; *n < k; p = e + 1) {
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		*e = '\0';
		lines[(*n)++] = p;
	}
	return lines;
}

int main(int argc, char **argv)
{
	char **lines;
	size_t n;

	if (argc != 3 || (strcmp(argv[1], "printk") && strcmp(argv[1], "sd"))) {
		fprintf(stderr, "usage: journal_send printk|sd FILE\n");
		return 2;
	}
#ifndef BENCH_HAVE_SD_JOURNAL
	if (!strcmp(argv[1], "sd")) {
		fprintf(stderr, "journal_send: built without libsystemd\n");
		return 2;
	}
#endif
	lines = read_lines(argv[2], &n);
	if (!lines) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "printk")) {
		/* Linked statically: the syslog consoles (forward.sh's rsyslogd
		 * and syslog-ng legs) are linked in only when asked for. */
		pk_printk_link_all_options();
		for (size_t i = 0; i < n; i++)
			pr_info("%s\n", lines[i]);
		/* A console that makes no progress for 10 s has lost its journald. */
		if (!pr_flush(10000, 1)) {
			fprintf(stderr, "journal_send: the consoles did not catch up\n");
			return 1;
		}
		return 0;
	}
#ifdef BENCH_HAVE_SD_JOURNAL
	const char *ident = program_invocation_short_name;
	int pid = (int)getpid(), tid = (int)syscall(SYS_gettid);

	for (size_t i = 0; i < n; i++) {
		int err = sd_journal_send("MESSAGE=%s", lines[i], "PRIORITY=6", "SYSLOG_FACILITY=1",
					  "SYSLOG_IDENTIFIER=%s", ident, "SYSLOG_PID=%d", pid,
					  "TID=%d", tid, NULL);

		if (err < 0) {
			fprintf(stderr, "journal_send: sd_journal_send: %s\n", strerror(-err));
			return 1;
		}
	}
#endif
	return 0;
}
