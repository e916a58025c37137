// SPDX-License-Identifier: MIT
/*
 * pk-daemon-demo - a small daemon logging with libprintk, as README's
 * "Daemons" section recommends.
 *
 * Worker threads log with pr_info()/pr_warn() ("worker W: request N").
 * Where the lines go:
 *  - PRINTK_OPTS names consoles: there (the library set them up);
 *  - run by systemd ($JOURNAL_STREAM or $INVOCATION_ID set): to journald,
 *    each record with its fields (console=journal), and not to stderr,
 *    which systemd would put in the journal a second time;
 *  - else to the file LOGFILE (default /var/log/pk-daemon-demo.log), a
 *    lossless console: a burst makes the workers wait for the file instead
 *    of dropping lines.
 * The file is rotated by logrotate (pk-daemon-demo.logrotate: its default
 * rename and create; no copytruncate, which loses what is written between
 * the copy and the truncation, and no signal, which kills a program that
 * does not catch it) or, with -s SIZE, by the console itself (then without
 * the snippet: both would number the old files). Either way the console
 * looks PATH up before each write and, finding another file there, opens
 * it; finding none, it writes on into the renamed file until logrotate's
 * new one is there (2 s at most, then it creates PATH), so the daemon
 * needs no SIGHUP handler and logrotate never finds a file in its way.
 *
 * usage: pk-daemon-demo [-t THREADS] [-n REQUESTS] [-p MICROSECONDS] [-s SIZE [-k KEEP]] [LOGFILE]
 *   -t  worker threads (default 4)
 *   -n  requests per worker, then exit (default 0: until SIGTERM or SIGINT)
 *   -p  pause between two requests of a worker (default 10000)
 *   -s  rotate the file by itself at SIZE bytes, keeping KEEP old files
 *       (default 5); without it the file is logrotate's to rotate
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#define MAX_WORKERS 64

static atomic_int stopping;
static unsigned long requests_per_worker; /* 0: until stopped */
static unsigned long pause_us = 10000;	  /* between two requests */

struct worker {
	pthread_t thread;
	int id;
};

static void *work(void *arg)
{
	const struct worker *w = arg;
	unsigned long n = 0;

	while (!atomic_load(&stopping) && (!requests_per_worker || n < requests_per_worker)) {
		n++;
		if (n % 1000 == 0)
			pr_warn("worker %d: request %lu slow\n", w->id, n);
		else
			pr_info("worker %d: request %lu\n", w->id, n);
		if (pause_us) {
			/* Waiting for the next request. */
			struct timespec pause = { (time_t)(pause_us / 1000000), (long)(pause_us % 1000000) * 1000 };

			nanosleep(&pause, NULL);
		}
	}
	/* The count, so that a reader of the log can tell a line missing. */
	pr_info("worker %d: done, %lu requests\n", w->id, n);
	return NULL;
}

/* Consoles, unless PRINTK_OPTS chose them. */
static int set_up_consoles(const char *path, unsigned long long size, unsigned keep)
{
	const char *opts = getenv("PRINTK_OPTS");

	if (opts && strstr(opts, "console="))
		return 0;
	if (getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID"))
		return pk_printk_configure("console=none console=journal");

	struct console *con;
	int err = pk_console_file_create(&con, path);

	if (err)
		return err;
	/* A size rotates the file; the largest one never does, but still
	 * makes each write look PATH up first, so that the line after
	 * logrotate renamed the file goes to the new one. */
	err = pk_console_file_set_rotation(con, size ? size : ULLONG_MAX, keep);
	if (!err) {
		con->flags |= PK_CON_LOSSLESS;
		err = pk_printk_configure("console=none");
	}
	if (!err)
		err = pk_register_console(con);
	if (err)
		pk_console_destroy(con);
	return err;
}

static void usage(void)
{
	fprintf(stderr, "usage: pk-daemon-demo [-t THREADS] [-n REQUESTS] [-p MICROSECONDS] [-s SIZE [-k KEEP]] [LOGFILE]\n");
	exit(2);
}

static unsigned long long number(const char *s, unsigned long long max)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || end == s || *end || s[0] == '-' || v > max)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	const char *path = "/var/log/pk-daemon-demo.log";
	unsigned long long size = 0;
	unsigned keep = 5;
	int nworkers = 4;
	int c;

	while ((c = getopt(argc, argv, "t:n:p:s:k:")) != -1) {
		switch (c) {
		case 't': nworkers = (int)number(optarg, MAX_WORKERS); break;
		case 'n': requests_per_worker = (unsigned long)number(optarg, ULONG_MAX); break;
		case 'p': pause_us = (unsigned long)number(optarg, 60000000); break;
		case 's': size = number(optarg, ULLONG_MAX - 1); break;
		case 'k': keep = (unsigned)number(optarg, 999); break;
		default: usage();
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind != argc || nworkers < 1 || keep < 1)
		usage();

	/* SIGTERM and SIGINT for sigwait() below: blocked before the first
	 * thread (the library's console threads included) inherits the mask. */
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	int err = set_up_consoles(path, size, keep);

	if (err) {
		fprintf(stderr, "pk-daemon-demo: cannot log to %s: %s\n", path, strerror(-err));
		return 1;
	}
	pr_info("pk-daemon-demo: %d workers started\n", nworkers);

	static struct worker workers[MAX_WORKERS];

	for (int i = 0; i < nworkers; i++) {
		workers[i].id = i;
		if (pthread_create(&workers[i].thread, NULL, work, &workers[i])) {
			pr_err("pk-daemon-demo: cannot start worker %d\n", i);
			nworkers = i;
			atomic_store(&stopping, 1);
			break;
		}
	}
	if (!requests_per_worker && !atomic_load(&stopping)) {
		int sig;

		sigwait(&stop, &sig);
		atomic_store(&stopping, 1);
	}
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	pr_info("pk-daemon-demo: stopped\n");

	/* Every line in the file before exit, however slow the disk: the wait
	 * starts again while the console makes progress. */
	pr_flush(10000, 1);
	/* Unregisters the consoles and frees them, the file console made
	 * above included (its release). */
	pk_printk_exit();
	return 0;
}
