// SPDX-License-Identifier: MIT
/*
 * file_console.c - bench/file_console: what a file log costs its caller and
 * how fast it fills the file, libprintk's default file console against
 * spdlog's file loggers, in the same run.
 *
 * Every case logs N messages (default 1,000,000) from one thread in a
 * sustained loop, "hello %d world %s" with (int)i and one of four words,
 * each line "[    1.234567] hello 42 world frame\n" on disk (spdlog with a
 * pattern that prints printk's time field), into a file in DIR:
 *
 *   printk_filtered  pr_info() below the console level, a default file
 *                    console registered: format, timestamp, store (the 2x
 *                    reference);
 *   printk_file      pr_info() on a default file console (pk_console_file_create,
 *                    flags 0: lossless, printed and batched by its thread);
 *   printk_lossy     the same with PK_CON_LOSSY: printed by the caller, one
 *                    write(2) a line (file consoles before they were lossless
 *                    by default);
 *   spdlog_file      spdlog basic_file_sink_mt (synchronous, stdio-buffered);
 *   spdlog_async     spdlog's async logger (queue 8192, one thread, blocks
 *                    when full) on that sink.
 *
 * Figures per run: caller ns per call (the loop's wall time / N), the time
 * until the last byte is in the file (the loop, then pr_flush() or spdlog's
 * flush) as lines per second, the file's bytes and lines (a lost line
 * shows), and CPU times: the caller thread's per call, and the whole
 * process's per line until the last byte is in the file (printk's printer
 * thread and spdlog's async thread included). Each run is a fresh process; runs are interleaved (run 1 of every
 * case, then run 2, ...), and each figure is the median of RUNS with its
 * minimum and maximum. Then the product owner's ratios: printk_file's
 * caller cost against spdlog_file's and against twice printk_filtered's,
 * and its throughput against spdlog_file's.
 *
 * Options: --lines N, --runs R (at most 32), --dir DIR, --only CASE[,CASE].
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "bench.h"
#include "file_console.h"

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

const char *const fc_word[4] = { "request", "packet", "job", "frame" };

enum { C_FILTERED, C_FILE, C_LOSSY, C_SPDLOG, C_ASYNC, NCASES };

static const char *const case_name[NCASES] = { "printk_filtered", "printk_file", "printk_lossy", "spdlog_file",
					       "spdlog_async" };

struct result {
	double call_ns;	 /* caller cost per message */
	double call_cpu; /* the caller thread's CPU time per message */
	double proc_cpu; /* the process's CPU time per message, until in the file */
	double total_ns; /* until the last byte is in the file */
	long long bytes, lines;
	int ok;
	char why[160];
};

static long n_lines = 1000000;
static const char *dir = "/tmp";

static void printk_log(long i)
{
	pr_info("hello %d world %s\n", (int)i, fc_word[i & 3]);
}

static long long count_lines(const char *path, long long *bytes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[1 << 16];
	long long lines = 0;
	ssize_t n;

	*bytes = 0;
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		*bytes += n;
		for (ssize_t k = 0; k < n; k++)
			lines += buf[k] == '\n';
	}
	close(fd);
	return lines;
}

static uint64_t cpu_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t wall_minus_mono(void)
{
	struct timespec w, m;

	clock_gettime(CLOCK_REALTIME, &w);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)w.tv_sec - m.tv_sec) * 1000000000 + (w.tv_nsec - m.tv_nsec);
}

/* In a child of its own: one run of case @c into @path. */
static void run_case(int c, const char *path, struct result *r)
{
	struct console *con = NULL;
	int err;

	memset(r, 0, sizeof(*r));
	unlink(path);
	if (c == C_SPDLOG || c == C_ASYNC) {
		if (fc_spdlog_setup(c == C_ASYNC ? FC_SPDLOG_ASYNC : FC_SPDLOG_FILE, path, wall_minus_mono(), r->why,
				    sizeof(r->why)))
			return;
	} else {
		if ((err = pk_console_file_create(&con, path))) {
			snprintf(r->why, sizeof(r->why), "file console: %s", strerror(-err));
			return;
		}
		if (c == C_LOSSY)
			con->flags |= PK_CON_LOSSY;
		pk_unregister_console(pk_console_stderr());
		if ((err = pk_register_console(con))) {
			snprintf(r->why, sizeof(r->why), "register: %s", strerror(-err));
			return;
		}
		pk_set_console_loglevel(c == C_FILTERED ? 1 : 7);
	}

	uint64_t p0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), c0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t t0 = mono_ns();

	if (c == C_SPDLOG || c == C_ASYNC) {
		for (long i = 0; i < n_lines; i++)
			fc_spdlog_log(i);
	} else {
		for (long i = 0; i < n_lines; i++)
			printk_log(i);
	}

	uint64_t t1 = mono_ns(), c1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);

	if (c == C_SPDLOG || c == C_ASYNC)
		fc_spdlog_flush();
	else if (!pr_flush(60000, 0))
		snprintf(r->why, sizeof(r->why), "pr_flush timed out");

	uint64_t t2 = mono_ns(), p2 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);

	r->call_ns = (double)(t1 - t0) / (double)n_lines;
	r->call_cpu = (double)(c1 - c0) / (double)n_lines;
	r->proc_cpu = (double)(p2 - p0) / (double)n_lines;
	r->total_ns = (double)(t2 - t0);
	r->lines = count_lines(path, &r->bytes);
	r->ok = !r->why[0];
	if (c == C_SPDLOG || c == C_ASYNC)
		fc_spdlog_teardown();
	unlink(path);
}

static int run_child(int c, struct result *r)
{
	char path[PATH_MAX];
	int fds[2];

	if (pipe(fds))
		return -1;
	snprintf(path, sizeof(path), "%s/pk-bench-file-console.%d.%s", dir, (int)getpid(), case_name[c]);

	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct result res;

		close(fds[0]);
		run_case(c, path, &res);
		if (write(fds[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(1);
		_exit(0); /* printk's exit drain is not the figure's business */
	}
	close(fds[1]);

	ssize_t n = read(fds[0], r, sizeof(*r));
	int st;

	close(fds[0]);
	waitpid(pid, &st, 0);
	if (n != (ssize_t)sizeof(*r)) {
		memset(r, 0, sizeof(*r));
		snprintf(r->why, sizeof(r->why), "the child died (status %d)", st);
	}
	return r->ok ? 0 : -1;
}

static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

int main(int argc, char **argv)
{
	int runs = 5, want[NCASES];
	struct series call[NCASES], tput[NCASES], ccpu[NCASES], pcpu[NCASES];
	long long bytes[NCASES], lines[NCASES];
	char why[NCASES][160];

	for (int c = 0; c < NCASES; c++)
		want[c] = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--lines") && i + 1 < argc) {
			n_lines = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			const char *list = argv[++i];

			for (int c = 0; c < NCASES; c++) {
				const char *p = strstr(list, case_name[c]);
				size_t k = strlen(case_name[c]);

				want[c] = p && (p == list || p[-1] == ',') && (p[k] == ',' || p[k] == '\0');
			}
		} else {
			fprintf(stderr, "usage: %s [--lines N] [--runs R] [--dir DIR] [--only CASE,...]\n", argv[0]);
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS || n_lines < 1) {
		fprintf(stderr, "%s: --runs 1..%d, --lines 1 or more\n", argv[0], MAX_RUNS);
		return 2;
	}
	printf("bench/file_console: %ld lines per run, 1 thread, %d runs interleaved, files in %s\n", n_lines, runs,
	       dir);
	printf("build %s, sanitizer %s, load average %.2f at the start\n", BENCH_BUILD_TYPE, variant(), loadavg());
	fflush(stdout);
	memset(call, 0, sizeof(call));
	memset(tput, 0, sizeof(tput));
	memset(ccpu, 0, sizeof(ccpu));
	memset(pcpu, 0, sizeof(pcpu));
	memset(why, 0, sizeof(why));
	for (int run = 0; run < runs; run++) {
		for (int c = 0; c < NCASES; c++) {
			struct result r;

			if (!want[c] || why[c][0])
				continue;
			if (run_child(c, &r)) {
				snprintf(why[c], sizeof(why[c]), "%s", r.why);
				continue;
			}
			add(&call[c], r.call_ns);
			add(&ccpu[c], r.call_cpu);
			add(&pcpu[c], r.proc_cpu);
			add(&tput[c], (double)n_lines / (r.total_ns / 1e9));
			bytes[c] = r.bytes;
			lines[c] = r.lines;
		}
	}
	printf("\n| case | caller ns/call (median) | min-max | lines/s to the file (median) | min-max | bytes | lines |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (int c = 0; c < NCASES; c++) {
		if (!want[c])
			continue;
		if (why[c][0]) {
			printf("| %s | skipped: %s |\n", case_name[c], why[c]);
			continue;
		}
		printf("| `%s` | %.1f | %.1f-%.1f | ", case_name[c], median(&call[c]), minimum(&call[c]),
		       maximum(&call[c]));
		if (c == C_FILTERED)
			printf("- | - | - | - |\n");
		else
			printf("%.0f | %.0f-%.0f | %lld | %lld |\n", median(&tput[c]), minimum(&tput[c]),
			       maximum(&tput[c]), bytes[c], lines[c]);
	}
	printf("load average %.2f at the end\n\n", loadavg());
	printf("CPU time (medians): the caller thread's per call, and the process's (every thread) per line\n"
	       "until the last byte is in the file; a loaded machine inflates wall time, these much less\n\n");
	printf("| case | caller CPU ns/call | min-max | process CPU ns/line | min-max |\n");
	printf("| --- | ---: | ---: | ---: | ---: |\n");
	for (int c = 0; c < NCASES; c++)
		if (want[c] && !why[c][0])
			printf("| `%s` | %.1f | %.1f-%.1f | %.1f | %.1f-%.1f |\n", case_name[c], median(&ccpu[c]),
			       minimum(&ccpu[c]), maximum(&ccpu[c]), median(&pcpu[c]), minimum(&pcpu[c]),
			       maximum(&pcpu[c]));
	printf("\n");

	int have_f = want[C_FILE] && !why[C_FILE][0], have_s = want[C_SPDLOG] && !why[C_SPDLOG][0];
	int have_0 = want[C_FILTERED] && !why[C_FILTERED][0];

	if (have_f && have_s) {
		double a = median(&call[C_FILE]), b = median(&call[C_SPDLOG]);

		printf("caller cost printk_file / spdlog_file = %.2f (target <= 1.00: %s)\n", a / b,
		       a <= b ? "met" : "not met");
		printf("throughput printk_file / spdlog_file = %.2f (target >= 1.00: %s)\n",
		       median(&tput[C_FILE]) / median(&tput[C_SPDLOG]),
		       median(&tput[C_FILE]) >= median(&tput[C_SPDLOG]) ? "met" : "not met");
		printf("bytes on disk printk_file - spdlog_file = %lld\n", bytes[C_FILE] - bytes[C_SPDLOG]);
		printf("caller CPU printk_file / spdlog_file = %.2f; process CPU per line %.2f\n",
		       median(&ccpu[C_FILE]) / median(&ccpu[C_SPDLOG]), median(&pcpu[C_FILE]) / median(&pcpu[C_SPDLOG]));
	}
	if (have_f && have_0) {
		double a = median(&call[C_FILE]), f = median(&call[C_FILTERED]);

		printf("caller cost printk_file / printk_filtered = %.2f (target <= 2.00: %s)\n", a / f,
		       a <= 2 * f ? "met" : "not met");
		printf("caller CPU printk_file / printk_filtered = %.2f\n", median(&ccpu[C_FILE]) / median(&ccpu[C_FILTERED]));
	}
	if (want[C_ASYNC] && !why[C_ASYNC][0] && have_f)
		printf("caller cost printk_file / spdlog_async = %.2f\n",
		       median(&call[C_FILE]) / median(&call[C_ASYNC]));
	if (want[C_LOSSY] && !why[C_LOSSY][0] && have_f)
		printf("caller cost printk_file / printk_lossy = %.2f\n",
		       median(&call[C_FILE]) / median(&call[C_LOSSY]));
	return 0;
}
