// SPDX-License-Identifier: MIT
/*
 * bench/rotate - what a file console's rotation checks cost per line,
 * against a plain file console measured in the same run.
 *
 *   plain    pr_info() to a file console that never looks at its path
 *            (printk's one-write path);
 *   follow   the same console following its path (a size that never
 *            rotates: one stat(2) per line, as under logrotate);
 *   daily    rotating by local time (rotate=daily): the follow's stat,
 *            the record's wall-clock time (three clock reads) against the
 *            period's end; no rotation happens in the run.
 *   daily+size  both, with a size that is never reached.
 *
 * Each file is in DIR (default /dev/shm, so the disk is not measured) and
 * removed after. Each figure is the median of RUNS runs, the runs of all
 * figures interleaved. --quick runs shorter.
 *
 *   bench/rotate [--quick] [DIR]
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "bench.h"

#define RUNS 7

enum mode { PLAIN, FOLLOW, DAILY, DAILY_SIZE, NMODES };
static const char *const names[NMODES] = { "plain", "follow", "daily", "daily+size" };

static long lines = 200000;

static double run(enum mode m, const char *dir)
{
	char path[512];
	struct console *con;
	int err;

	snprintf(path, sizeof(path), "%s/pk-bench-rotate-%d.log", dir, (int)getpid());
	unlink(path);
	err = pk_console_file_create(&con, path);
	if (!err && (m == FOLLOW || m == DAILY_SIZE))
		err = pk_console_file_set_rotation(con, ULLONG_MAX / 2, 5);
	if (!err && (m == DAILY || m == DAILY_SIZE))
		err = pk_console_set_rotate_time(con, PK_ROTATE_DAILY, 5);
	if (!err)
		err = pk_register_console(con);
	if (err) {
		fprintf(stderr, "rotate: %s: error %d\n", path, err);
		exit(1);
	}

	uint64_t t0 = mono_ns();

	for (long i = 0; i < lines; i++)
		pr_info("worker %d processed request %ld in %d us\n", 3, i, 42);

	uint64_t t1 = mono_ns();

	pk_unregister_console(con);
	pk_console_destroy(con);
	unlink(path);
	return (double)(t1 - t0) / (double)lines;
}

int main(int argc, char **argv)
{
	const char *dir = "/dev/shm";
	struct series s[NMODES];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			lines = 20000;
		else
			dir = argv[i];
	}
	memset(s, 0, sizeof(s));
	pk_printk_configure("console=none printk.time=1");
	for (int r = 0; r < RUNS; r++)
		for (int m = 0; m < NMODES; m++)
			add(&s[m], run((enum mode)m, dir));

	double base = median(&s[PLAIN]);

	printf("file console in %s, %ld lines per run, median of %d runs (ns per line)\n", dir, lines, RUNS);
	/* The period check is what daily adds to follow. */
	for (int m = 0; m < NMODES; m++)
		printf("  %-11s %8.1f  (%.2f x plain, %+.1f ns; %.2f x follow)\n", names[m], median(&s[m]),
		       median(&s[m]) / base, median(&s[m]) - base, median(&s[m]) / median(&s[FOLLOW]));
	return 0;
}
