// SPDX-License-Identifier: MIT
/*
 * bench/lossless - what a lossless console costs: printk with a file console
 * printed by its own thread, lossy (PK_CON_THREADED | PK_CON_LOSSY: a file
 * console is lossless unless marked lossy) against lossless
 * (PK_CON_LOSSLESS), by 1 and 2 writer threads, with the default log.
 *
 *   ns/line     wall time of the burst divided by the lines printk'd, the
 *               drain at the end (pr_flush) included: lossless writers wait
 *               for the console's thread, lossy ones do not;
 *   in file     the lines the file got (lossy: the rest were overwritten
 *               before the thread printed them).
 *
 * Each figure is the median of RUNS runs, the runs of both kinds
 * interleaved. --quick runs shorter. The file is in $TMPDIR (default /tmp).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#define RUNS 5

static long lines = 200000;
static char path[4096];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *writer(void *arg)
{
	long t = (long)arg;

	for (long i = 0; i < lines; i++)
		printk("worker %ld processed request %ld in %lu us\n", t, i, (unsigned long)(i % 977));
	return NULL;
}

static long count_lines(void)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		n += strstr(buf, "] worker ") != NULL || strncmp(buf, "worker ", 7) == 0;
	fclose(f);
	return n;
}

/* One burst; returns ns per line, *@kept the lines in the file. */
static double burst(short flags, int threads, long *kept)
{
	struct console *con;
	pthread_t t[8];

	unlink(path);
	if (pk_console_file_create(&con, path)) {
		perror(path);
		exit(1);
	}
	con->flags |= flags;
	if (pk_register_console(con)) {
		fprintf(stderr, "register failed\n");
		exit(1);
	}

	double t0 = now_ns();

	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	pr_flush(60000, 1);

	double ns = (now_ns() - t0) / (double)(lines * threads);

	pk_unregister_console(con);
	pk_console_destroy(con);
	*kept = count_lines();
	return ns;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		lines = 50000;
	snprintf(path, sizeof(path), "%s/bench-lossless-%d.log", tmp ? tmp : "/tmp", (int)getpid());
	pk_unregister_console(pk_console_stderr());
	printf("printk to a file console by its own thread, default log, %ld lines per writer, median of %d\n",
	       lines, RUNS);
	for (int threads = 1; threads <= 2; threads++) {
		double ns[2][RUNS];
		long kept[2][RUNS];

		for (int r = 0; r < RUNS; r++) {
			ns[0][r] = burst(PK_CON_THREADED | PK_CON_LOSSY, threads, &kept[0][r]);
			ns[1][r] = burst(PK_CON_LOSSLESS, threads, &kept[1][r]);
		}
		for (int k = 0; k < 2; k++) {
			long worst = kept[k][0];

			for (int r = 1; r < RUNS; r++)
				if (kept[k][r] < worst)
					worst = kept[k][r];
			qsort(ns[k], RUNS, sizeof(double), cmp);
			printf("%d writer%s  %-9s %8.1f ns/line   in file: at least %ld of %ld\n", threads,
			       threads > 1 ? "s" : " ", k ? "lossless" : "lossy", ns[k][RUNS / 2], worst,
			       lines * threads);
		}
	}
	unlink(path);
	return 0;
}
