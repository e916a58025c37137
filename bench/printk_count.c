// SPDX-License-Identifier: MIT
/*
 * bench/printk_count - a fixed number of pr_info() calls, for counting
 * instructions with callgrind rather than timing them (a count does not move
 * with the machine's load):
 *
 *   valgrind --tool=callgrind bench/printk_count N [printed|srcloc|held|lanes]
 *
 * N calls of bench/printk's message with a console on /dev/null that
 * filters level 6 out (console_loglevel 1), or prints it ("printed",
 * console_loglevel 7); "srcloc": filtered, with printk.srcloc=1; "held":
 * held back by its module's level (docs/levels.md); "lanes": filtered,
 * with printk.lanes on (a log of 1 MiB, whose lanes of 64 KiB the calling
 * thread merges when full); every other mode runs with printk.lanes off
 * unless PRINTK_OPTS sets printk.lanes.
 * Run it with two values of N: the difference over
 * the difference of N is the cost of one call, without start-up and exit.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <printk/console.h>
#include <printk/printk.h>

int main(int argc, char **argv)
{
	struct console *con;
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	int printed = argc > 2 && !strcmp(argv[2], "printed");
	int srcloc = argc > 2 && !strcmp(argv[2], "srcloc");
	int held = argc > 2 && !strcmp(argv[2], "held");
	int lanes = argc > 2 && !strcmp(argv[2], "lanes");
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (n <= 0 || fd < 0 || pk_console_fd_create(&con, fd, "null")) {
		fprintf(stderr, "usage: printk_count N [printed|srcloc|held|lanes] (N > 0; /dev/null must open)\n");
		return 2;
	}
	/* Lanes are on by default: the other modes count the shared ring's
	 * path, as their figures always did (docs/performance.md), unless
	 * PRINTK_OPTS says printk.lanes= itself. */
	const char *opts = getenv("PRINTK_OPTS");

	if (lanes || !opts || !strstr(opts, "printk.lanes"))
		pk_set_lanes(lanes);
	if (lanes)
		pk_set_log_buf_len(1 << 20);
	pk_unregister_console(pk_console_stderr());
	if (pk_register_console(con)) {
		fprintf(stderr, "printk_count: cannot register the /dev/null console\n");
		return 1;
	}
	pk_set_console_loglevel(printed ? 7 : 1);
	if (srcloc)
		pk_set_printk_srcloc(1);
	if (held)
		pk_module_set_level("printk_count", 4);
	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), "request", (unsigned long)i);
	return 0;
}
