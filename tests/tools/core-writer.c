// SPDX-License-Identifier: MIT
/*
 * core-writer - a program whose log udmesg --core reads out of its core
 * (tests/cli/test_udmesg_core.sh).
 *
 *   core-writer [N [extra]]
 *
 * Logs through printk() into the log PRINTK_OPTS gives it (a memory log
 * without log_buf_file=, a log file with it): a few lines of every kind, N
 * numbered ones (default 40), a continued line, and last an open line (no
 * newline). With "extra", a second memory log of its own (pk_log_create)
 * gets a line after all that: the core then holds two logs, printk's
 * written first. Then it prints "ready" on stdout and waits to be killed or
 * dumped. Time stamps come from a test clock and the wall-clock offset is
 * fixed, so two runs, one into memory and one into a file, log the same
 * bytes.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "caller.h"
#include "log_shared.h"
#include "settings.h"

static uint64_t now_ns = 1000000000ull;

static uint64_t test_clock(void)
{
	return now_ns += 1234567;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	struct pk_log *log = pk_printk_log();

	/* gcore is not our parent: let it attach where Yama allows only that. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pk_set_test_clock(test_clock);
	atomic_store(&pk_log_shared(log)->realtime_offset_ns, 1700000000ull * 1000000000ull);

	printk(KERN_ERR "core-writer: an error, code %d\n", -5);
	printk(KERN_WARNING "escapes: bell\a tab\there del\x7f utf-8 caf\xc3\xa9\n");
	printk(KERN_NOTICE "multi line1\nline2\nline3\n");
	printk(KERN_DEBUG "a debug line\n");
	printk(KERN_CRIT "critical\n");
	for (int i = 0; i < n; i++)
		printk(KERN_INFO "record %d of %d: %s\n", i, n, i % 7 ? "filler text" : "seventh");
	printk(KERN_NOTICE "start of a line,");
	pr_cont(" continued");
	pr_cont(" and ended\n");
	printk(KERN_INFO "the open line, never finished");
	if (argc > 2 && !strcmp(argv[2], "extra")) {
		static const char text[] = "the program's own log, written last";
		struct pk_log *own;

		if (pk_log_create(&own, 0) || pk_log_store(own, 1, 6, text, sizeof(text) - 1, NULL, 0))
			return 1;
	}

	/* "ready" goes out only once everything above is in the log. */
	if (write(STDOUT_FILENO, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
}
