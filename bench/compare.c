// SPDX-License-Identifier: MIT
/*
 * bench/compare - what one log message costs with libprintk and with what C
 * (and C++) programs log with today, the same message in every case:
 *
 *   "worker %d processed %s in %lu us"  (int)(i & 7), cmp_what[i & 3], i * 3
 *
 * Cases, each from 1 and 2 threads:
 *   printk_filtered  pr_info, no console prints level 6 (a /dev/null console
 *                    with console_loglevel 1): timestamp, store the
 *                    message deferred (its format's reference and the
 *                    arguments: docs/deferred.md);
 *   printk_eager     the same message through printk() (never deferred):
 *                    format, timestamp, store;
 *   printk_file      pr_info printed on a file console (DIR, default /tmp);
 *   printk_logfile   pr_info into a log kept in a shared file in DIR
 *                    (log_buf_file), no console;
 *   floor_memory     clock_gettime + glibc snprintf of "[time] message" +
 *                    a copy into a buffer of the thread: the least a log
 *                    in memory costs (bench/printk's floor);
 *   floor_write      the same line written with one write(2) to a file in
 *                    DIR: the least a file console costs;
 *   stdio_file       the same line with fprintf(3) to a file in DIR
 *                    (stdio-buffered, flushed at the end of each run);
 *   spdlog_null      spdlog, null sink: formats the message, writes nothing;
 *   spdlog_file      spdlog, basic file sink in DIR (stdio-buffered);
 *   spdlog_async     spdlog async logger on a basic file sink in DIR;
 *   syslog           glibc syslog(3) to /dev/log: when nothing listens there
 *                    the bench binds it and a thread reads and discards
 *                    each datagram (a daemon that does nothing);
 *   journal          sd_journal_send(3) to journald's socket, or, when no
 *                    journald runs, the same discarding receiver bound there;
 *   kmsg             snprintf + write(2) to /dev/kmsg (root, and only with
 *                    kernel.printk_devkmsg=on: under the default rate limit
 *                    the kernel drops all but a few lines).
 *
 * Each logger runs in a process of its own, set up once (a logger's set-up
 * cannot leak into another's figures, and libprintk's log can be in memory
 * in one and in a file in another). A run is RUN_MS of messages from N
 * threads started together, then the wait until they are delivered
 * (pr_flush, the spdlog sink's flush or the async queue drained); ns/msg is
 * the run's wall time x N / messages, the time one caller spends per
 * message. The runs are interleaved (run 1 of every case, then run 2, ...)
 * and each figure is the median of RUNS, with its minimum and maximum.
 * The ratio is to printk_filtered with the same number of threads; the
 * floors' ratios (printk_filtered/floor_memory, printk_file/floor_write)
 * and printk_logfile/printk_filtered follow the table.
 *
 * Output: a table on stdout, cases that could not run with one "skipped"
 * line each, and the same figures in a CSV file (--csv, default
 * compare.csv). Options: --quick, --runs N, --run-ms MS, --dir DIR,
 * --only CASE[,CASE...].
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "bench.h"
#include "compare.h"

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

#define MAX_THREADS 2
#define BATCH	    64 /* messages between two looks at the clock */

const char *const cmp_what[4] = { "request", "packet", "job", "frame" };

/* ------------------------------------------------------------ backends -- */

/* A logger under test, as its child process sees it. */
struct backend {
	const char *name;  /* table and CSV key */
	const char *label; /* what the plot calls it */
	/* 0, 1 when a stand-in receives the messages (@note says which), or
	 * -1 with the reason to skip in @note. */
	int (*setup)(const struct backend *b, char *note, size_t len);
	void (*log)(long i);
	void (*finish)(void);	/* in the timed span: until delivered */
	bool counted;		/* count the messages that reached path */
	void (*reset)(void);	/* between runs, not timed */
	void (*teardown)(void); /* the child's last act */
	int spdlog_kind;
};

static const char *dir = "/tmp";
static char path[PATH_MAX]; /* the case's file in dir, if it has one */

static void make_path(const char *what)
{
	snprintf(path, sizeof(path), "%s/pk-compare.%d.%s", dir, (int)getpid(), what);
	unlink(path);
}

static void truncate_path(void)
{
	if (truncate(path, 0) != 0)
		perror(path);
}

static void unlink_path(void)
{
	unlink(path);
}

/* libprintk */

static void printk_log(long i)
{
	pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), cmp_what[i & 3],
		(unsigned long)i * 3);
}

/* The same message through printk(), which always formats at once. */
static void printk_eager_log(long i)
{
	printk(KERN_INFO "worker %d processed %s in %lu us\n", (int)(i & 7), cmp_what[i & 3],
	       (unsigned long)i * 3);
}

static void printk_finish(void)
{
	pk_pr_flush(10000, 0);
}

static int printk_filtered_setup(const struct backend *b, char *note, size_t len)
{
	struct console *con;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int err = fd < 0 ? -errno : pk_console_fd_create(&con, fd, "null");

	(void)b;
	if (err) {
		snprintf(note, len, "/dev/null console: %s", strerror(-err));
		return -1;
	}
	pk_unregister_console(pk_console_stderr());
	pk_register_console(con);
	pk_set_console_loglevel(1);
	return 0;
}

static int printk_file_setup(const struct backend *b, char *note, size_t len)
{
	struct console *con;
	int err;

	(void)b;
	make_path("console");
	err = pk_console_file_create(&con, path);
	if (err) {
		snprintf(note, len, "file console %s: %s", path, strerror(-err));
		return -1;
	}
	pk_unregister_console(pk_console_stderr());
	pk_register_console(con);
	pk_set_console_loglevel(7);
	return 0;
}

static int printk_logfile_setup(const struct backend *b, char *note, size_t len)
{
	int err;

	(void)b;
	make_path("log");
	err = pk_set_log_buf_file(path, 0);
	if (err) {
		snprintf(note, len, "log_buf_file %s: %s", path, strerror(-err));
		return -1;
	}
	pk_unregister_console(pk_console_stderr());
	return 0;
}

/* Hand-rolled: what a C program does without a logging library. */

static FILE *stdio_file;
static int write_fd = -1;

static int stdio_setup(const struct backend *b, char *note, size_t len)
{
	(void)b;
	make_path("stdio");
	stdio_file = fopen(path, "ae");
	if (!stdio_file) {
		snprintf(note, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void stdio_log(long i)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stdio_file, "[%5lu.%06lu] worker %d processed %s in %lu us\n",
		(unsigned long)ts.tv_sec, (unsigned long)ts.tv_nsec / 1000, (int)(i & 7),
		cmp_what[i & 3], (unsigned long)i * 3);
}

static void stdio_finish(void)
{
	fflush(stdio_file);
}

static void stdio_teardown(void)
{
	fclose(stdio_file);
	unlink_path();
}

/* The same line with snprintf, at the least cost a logger can keep it. */
static int line(char *buf, size_t len, long i)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return snprintf(buf, len, "[%5lu.%06lu] worker %d processed %s in %lu us\n",
			(unsigned long)ts.tv_sec, (unsigned long)ts.tv_nsec / 1000, (int)(i & 7),
			cmp_what[i & 3], (unsigned long)i * 3);
}

/* Floor of a log in memory: the line appended to a buffer of the thread. */
static void floor_memory_log(long i)
{
	static _Thread_local char buf[1 << 16];
	static _Thread_local size_t pos;
	char text[128];
	int n = line(text, sizeof(text), i);

	if (pos + (size_t)n > sizeof(buf))
		pos = 0;
	memcpy(buf + pos, text, (size_t)n);
	pos += (size_t)n;
}

static int floor_memory_setup(const struct backend *b, char *note, size_t len)
{
	(void)b, (void)note, (void)len;
	return 0;
}

/* Floor of a file console: one write(2) per line, appending. */
static int floor_write_setup(const struct backend *b, char *note, size_t len)
{
	(void)b;
	make_path("write");
	write_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (write_fd < 0) {
		snprintf(note, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void floor_write_log(long i)
{
	char text[128];
	int n = line(text, sizeof(text), i);

	if (write(write_fd, text, (size_t)n) != n)
		abort(); /* a figure of failed writes would mean nothing */
}

static void floor_write_teardown(void)
{
	close(write_fd);
	unlink_path();
}

/* spdlog */

static int spdlog_setup(const struct backend *b, char *note, size_t len)
{
	if (b->spdlog_kind != CMP_SPDLOG_NULL)
		make_path("spdlog");
	return cmp_spdlog_setup((enum cmp_spdlog_kind)b->spdlog_kind, path, note, len);
}

static void spdlog_reset(void)
{
	cmp_spdlog_finish();
	truncate_path();
}

static void spdlog_teardown(void)
{
	cmp_spdlog_teardown();
	if (path[0])
		unlink_path();
}

/*
 * A datagram receiver on a logging socket (/dev/log, journald's socket)
 * when no daemon listens there: a thread reads and drops every datagram.
 * It stands for a daemon that does no work, so the figure is what the
 * client side costs, the socket included.
 */
struct receiver {
	int fd;
	pthread_t th;
	bool running;
	const char *sock;
	const char *dirs[2]; /* directories made for the socket, innermost last */
	int ndirs;
};

static struct receiver rcv = { .fd = -1 };

static void *receive(void *arg)
{
	static char buf[1 << 16];
	struct receiver *r = arg;

	for (;;)
		if (recv(r->fd, buf, sizeof(buf), 0) < 0 && errno != EINTR)
			break;
	return NULL;
}

/* 1 if a daemon listens on @sock, 0 if nobody does, -errno if unknown. */
static int listening(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret = 1;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		ret = errno == ENOENT || errno == ECONNREFUSED ? 0 : -errno;
	close(fd);
	return ret;
}

/* 0 with a daemon listening (@note names it), 1 with the bench's own
 * receiver listening, or -1 and @note says why neither can be used. */
static int receiver_start(const char *sock, const char *const *dirs, int ndirs,
			  const char *daemon, char *note, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err = listening(sock);

	if (err == 1) {
		snprintf(note, len, "%s", daemon);
		return 0;
	}
	if (err < 0) {
		snprintf(note, len, "%s: %s", sock, strerror(-err));
		return -1;
	}
	for (int i = 0; i < ndirs; i++) {
		if (mkdir(dirs[i], 0755) == 0)
			rcv.dirs[rcv.ndirs++] = dirs[i];
		else if (errno != EEXIST)
			goto fail;
	}
	unlink(sock); /* a socket nobody listens on, left by a dead daemon */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	rcv.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rcv.fd < 0 || bind(rcv.fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto fail;
	rcv.sock = sock;
	chmod(sock, 0666);
	if ((errno = pthread_create(&rcv.th, NULL, receive, &rcv)) != 0)
		goto fail;
	rcv.running = true;
	snprintf(note, len, "no daemon: a thread of the bench discards what arrives on %s", sock);
	return 1;
fail:
	snprintf(note, len, "no daemon on %s, and cannot listen there: %s", sock,
		 strerror(errno));
	return -1;
}

static void receiver_stop(void)
{
	if (rcv.running) {
		pthread_cancel(rcv.th);
		pthread_join(rcv.th, NULL);
	}
	if (rcv.sock)
		unlink(rcv.sock);
	if (rcv.fd >= 0)
		close(rcv.fd);
	while (rcv.ndirs > 0)
		rmdir(rcv.dirs[--rcv.ndirs]);
}

/* glibc syslog(3) */

static int syslog_setup(const struct backend *b, char *note, size_t len)
{
	(void)b;
	int ret = receiver_start("/dev/log", NULL, 0, "to the system's syslog daemon on /dev/log",
				 note, len);

	if (ret >= 0)
		openlog("compare", LOG_NDELAY, LOG_USER);
	return ret;
}

static void syslog_log(long i)
{
	syslog(LOG_INFO, "worker %d processed %s in %lu us", (int)(i & 7), cmp_what[i & 3],
	       (unsigned long)i * 3);
}

static void syslog_teardown(void)
{
	closelog();
	receiver_stop();
}

/* sd_journal_send(3) */

static int journal_setup(const struct backend *b, char *note, size_t len)
{
	static const char *const dirs[] = { "/run/systemd", "/run/systemd/journal" };

	(void)b;
	return receiver_start("/run/systemd/journal/socket", dirs, 2, "to journald", note, len);
}

static void journal_log(long i)
{
	sd_journal_send("MESSAGE=worker %d processed %s in %lu us", (int)(i & 7), cmp_what[i & 3],
			(unsigned long)i * 3, "PRIORITY=6", NULL);
}

/* write(2) to /dev/kmsg */

static int kmsg_fd = -1;

static int kmsg_setup(const struct backend *b, char *note, size_t len)
{
	char mode[32] = "";
	FILE *f;

	(void)b;
	if (geteuid() != 0) {
		snprintf(note, len, "writing /dev/kmsg needs root");
		return -1;
	}
	f = fopen("/proc/sys/kernel/printk_devkmsg", "re");
	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = 0;
		fclose(f);
		mode[strcspn(mode, "\n")] = 0;
	}
	if (strcmp(mode, "on") != 0) {
		snprintf(note, len,
			 "kernel.printk_devkmsg=%s: the kernel drops all but 10 lines a writer"
			 " writes in 5 s (sysctl kernel.printk_devkmsg=on to measure it;"
			 " every line then goes into the kernel log)",
			 mode[0] ? mode : "?");
		return -1;
	}
	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (kmsg_fd < 0) {
		snprintf(note, len, "/dev/kmsg: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void kmsg_log(long i)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "<6>worker %d processed %s in %lu us\n", (int)(i & 7),
			 cmp_what[i & 3], (unsigned long)i * 3);

	if (write(kmsg_fd, line, (size_t)n) < 0)
		abort(); /* a figure of failed writes would mean nothing */
}

static const struct backend backends[] = {
	{ .name = "printk_filtered", .label = "libprintk filtered",
	  .setup = printk_filtered_setup, .log = printk_log, .finish = printk_finish },
	{ .name = "printk_eager", .label = "libprintk filtered, formatted at once",
	  .setup = printk_filtered_setup, .log = printk_eager_log, .finish = printk_finish },
	{ .name = "printk_file", .label = "libprintk file console", .setup = printk_file_setup,
	  .log = printk_log, .finish = printk_finish, .counted = true, .reset = truncate_path,
	  .teardown = unlink_path },
	{ .name = "printk_logfile", .label = "libprintk log_buf_file",
	  .setup = printk_logfile_setup, .log = printk_log, .finish = printk_finish,
	  .teardown = unlink_path },
	{ .name = "floor_memory", .label = "floor: clock + snprintf + copy",
	  .setup = floor_memory_setup, .log = floor_memory_log },
	{ .name = "floor_write", .label = "floor: clock + snprintf + write(2)",
	  .setup = floor_write_setup, .log = floor_write_log, .counted = true,
	  .reset = truncate_path, .teardown = floor_write_teardown },
	{ .name = "stdio_file", .label = "fprintf to a file", .setup = stdio_setup,
	  .log = stdio_log, .finish = stdio_finish, .counted = true, .reset = truncate_path,
	  .teardown = stdio_teardown },
	{ .name = "spdlog_null", .label = "spdlog null sink", .setup = spdlog_setup,
	  .log = cmp_spdlog_log, .finish = cmp_spdlog_finish, .teardown = spdlog_teardown,
	  .spdlog_kind = CMP_SPDLOG_NULL },
	{ .name = "spdlog_file", .label = "spdlog file sink", .setup = spdlog_setup,
	  .log = cmp_spdlog_log, .finish = cmp_spdlog_finish, .counted = true,
	  .reset = spdlog_reset, .teardown = spdlog_teardown, .spdlog_kind = CMP_SPDLOG_FILE },
	{ .name = "spdlog_async", .label = "spdlog async file sink", .setup = spdlog_setup,
	  .log = cmp_spdlog_log, .finish = cmp_spdlog_finish, .counted = true,
	  .reset = spdlog_reset, .teardown = spdlog_teardown, .spdlog_kind = CMP_SPDLOG_ASYNC },
	{ .name = "syslog", .label = "glibc syslog(3)", .setup = syslog_setup, .log = syslog_log,
	  .teardown = syslog_teardown },
	{ .name = "journal", .label = "sd_journal_send", .setup = journal_setup,
	  .log = journal_log, .teardown = receiver_stop },
	{ .name = "kmsg", .label = "write(2) to /dev/kmsg", .setup = kmsg_setup, .log = kmsg_log },
};

#define NBACKENDS (int)(sizeof(backends) / sizeof(backends[0]))

/* --------------------------------------------------------------- a run -- */

struct cmd {
	uint32_t threads; /* 0: tear down and exit */
	uint32_t run_ms;
};

struct reply {
	int ok;
	int standin;	 /* a stand-in receives the messages */
	char note[256];	 /* set-up: the reason to skip, or what was measured */
	double ns;	 /* per message per caller */
	double rate;	 /* messages per second, all callers */
	double lost;	 /* share of the messages missing from the file, or -1 */
};

static void (*log_fn)(long i);
static pthread_barrier_t start_line;
static uint64_t deadline;

struct caller {
	pthread_t th;
	long base;
	uint64_t msgs;
};

static void *call(void *arg)
{
	struct caller *c = arg;
	long i = c->base;

	pthread_barrier_wait(&start_line);
	do {
		for (int k = 0; k < BATCH; k++)
			log_fn(i++);
	} while (mono_ns() < deadline);
	c->msgs = (uint64_t)(i - c->base);
	return NULL;
}

/*
 * The messages of the last run that are in the case's file. A printk
 * console may lose some: printk never waits for a console, and records
 * the log overwrote before the console printed them are replaced by one
 * "** N printk messages dropped **" line.
 */
static uint64_t count_lines(void)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t n = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		n += strstr(line, "worker ") != NULL;
	free(line);
	fclose(f);
	return n;
}

static struct reply run(const struct backend *b, unsigned threads, unsigned ms)
{
	struct caller c[MAX_THREADS];
	struct reply rep = { .ok = 1 };
	uint64_t t0, t1, msgs = 0;

	log_fn = b->log;
	pthread_barrier_init(&start_line, NULL, threads + 1);
	for (unsigned t = 0; t < threads; t++) {
		c[t].base = (long)t << 32;
		if ((errno = pthread_create(&c[t].th, NULL, call, &c[t])) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	t0 = mono_ns();
	deadline = t0 + (uint64_t)ms * 1000000u;
	pthread_barrier_wait(&start_line);
	for (unsigned t = 0; t < threads; t++) {
		pthread_join(c[t].th, NULL);
		msgs += c[t].msgs;
	}
	if (b->finish)
		b->finish();
	t1 = mono_ns();
	pthread_barrier_destroy(&start_line);
	rep.ns = (double)(t1 - t0) * threads / (double)msgs;
	rep.lost = b->counted ? 1.0 - (double)count_lines() / (double)msgs : -1;
	rep.rate = (double)msgs * 1e9 / (double)(t1 - t0);
	return rep;
}

static bool read_full(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0 && !(n < 0 && errno == EINTR))
			return false;
		if (n > 0)
			got += (size_t)n;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	for (size_t put = 0; put < len;) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);

		if (n < 0 && errno != EINTR)
			return false;
		if (n > 0)
			put += (size_t)n;
	}
	return true;
}

/* The child of one backend: set up, then one run per command. Ctrl-C
 * reaches the parent; the child notices its pipe closing and cleans up. */
static void serve(const struct backend *b, int in, int out)
{
	struct reply rep = { 0 };
	struct cmd cmd;

	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int ret = b->setup(b, rep.note, sizeof(rep.note));

	rep.ok = ret >= 0;
	rep.standin = ret == 1;
	if (!write_full(out, &rep, sizeof(rep)) || !rep.ok)
		goto out;
	while (read_full(in, &cmd, sizeof(cmd)) && cmd.threads) {
		rep = run(b, cmd.threads, cmd.run_ms);
		if (!write_full(out, &rep, sizeof(rep)))
			break;
		if (b->reset)
			b->reset();
	}
out:
	if (b->teardown && rep.ok)
		b->teardown();
	_exit(0);
}

/* --------------------------------------------------------------- parent -- */

struct child {
	const struct backend *b;
	pid_t pid;
	int in, out; /* the child's command pipe and reply pipe, our ends */
	bool ok, standin;
	char note[256];
	struct series ns[MAX_THREADS], rate[MAX_THREADS], lost[MAX_THREADS];
};

static bool spawn(struct child *ch)
{
	int cmdp[2], repp[2];
	struct reply rep;

	if (pipe2(cmdp, O_CLOEXEC) || pipe2(repp, O_CLOEXEC)) {
		perror("pipe");
		exit(1);
	}
	fflush(NULL);
	ch->pid = fork();
	if (ch->pid < 0) {
		perror("fork");
		exit(1);
	}
	if (ch->pid == 0) {
		close(cmdp[1]);
		close(repp[0]);
		serve(ch->b, cmdp[0], repp[1]);
	}
	close(cmdp[0]);
	close(repp[1]);
	ch->in = cmdp[1];
	ch->out = repp[0];
	if (!read_full(ch->out, &rep, sizeof(rep))) {
		snprintf(rep.note, sizeof(rep.note), "its process died while setting up");
		rep.ok = 0;
	}
	rep.note[sizeof(rep.note) - 1] = 0;
	ch->ok = rep.ok;
	ch->standin = rep.standin;
	snprintf(ch->note, sizeof(ch->note), "%s", rep.note);
	return ch->ok;
}

static struct reply order(struct child *ch, unsigned threads, unsigned ms)
{
	struct cmd cmd = { threads, ms };
	struct reply rep;

	if (!write_full(ch->in, &cmd, sizeof(cmd)) || !read_full(ch->out, &rep, sizeof(rep))) {
		fprintf(stderr, "bench/compare: the %s process died during a run\n", ch->b->name);
		exit(1);
	}
	return rep;
}

static void reap(struct child *ch)
{
	struct cmd cmd = { 0, 0 };

	if (ch->ok)
		write_full(ch->in, &cmd, sizeof(cmd));
	close(ch->in);
	close(ch->out);
	waitpid(ch->pid, NULL, 0);
}

static bool wanted(const char *only, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = only; p && *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, name, n))
			return true;
		p += n + (p[n] == ',');
	}
	return !only;
}

static const struct child *find(const struct child *ch, int nch, const char *name)
{
	for (int c = 0; c < nch; c++)
		if (ch[c].ok && !strcmp(ch[c].b->name, name))
			return &ch[c];
	return NULL;
}

/* "ratio a/b = 1 thread, 2 threads", when both ran. */
static void print_ratio(const struct child *ch, int nch, const char *a, const char *b)
{
	const struct child *x = find(ch, nch, a), *y = find(ch, nch, b);

	if (!x || !y)
		return;
	printf("ratio %s/%s =", a, b);
	for (int t = 0; t < MAX_THREADS; t++)
		printf(" %.2f (%d thread%s)%s", median(&x->ns[t]) / median(&y->ns[t]), t + 1,
		       t ? "s" : "", t + 1 < MAX_THREADS ? "," : "\n");
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--quick] [--runs N] [--run-ms MS] [--dir DIR] [--csv FILE]"
		" [--only CASE,...]\n",
		argv0);
	exit(2);
}

static void loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "re");

	buf[0] = 0;
	if (f) {
		if (fscanf(f, "%15s", buf) != 1)
			buf[0] = 0;
		fclose(f);
	}
	if (!buf[0])
		snprintf(buf, len, "?");
}

int main(int argc, char **argv)
{
	unsigned runs = 7, run_ms = 200;
	const char *csv = "compare.csv", *only = NULL;
	struct child ch[NBACKENDS];
	char load0[16], load1[16];
	int nch = 0;
	FILE *out;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			runs = 3;
			run_ms = 50;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--run-ms") && i + 1 < argc) {
			run_ms = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			csv = argv[++i];
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else {
			usage(argv[0]);
		}
	}
	if (runs < 1 || runs > MAX_RUNS || run_ms < 1)
		usage(argv[0]);
	if (getenv("PRINTK_OPTS"))
		fprintf(stderr, "bench/compare: PRINTK_OPTS is set; the libprintk cases run with it\n");

	loadavg(load0, sizeof(load0));
	printf("bench/compare: ns per message, \"worker %%d processed %%s in %%lu us\"; %u runs x %u ms,"
	       " median, runs interleaved\n",
	       runs, run_ms);
	printf("machine: %ld CPUs, load %s; build %s, sanitizer %s, compiler \"%s\"; files in %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), load0, BENCH_BUILD_TYPE, variant(), __VERSION__, dir);

	for (int i = 0; i < NBACKENDS; i++) {
		if (!wanted(only, backends[i].name))
			continue;
		memset(&ch[nch], 0, sizeof(ch[nch]));
		ch[nch].b = &backends[i];
		if (!spawn(&ch[nch]))
			printf("skipped: %s: %s\n", backends[i].name, ch[nch].note);
		else if (ch[nch].note[0])
			printf("note: %s: %s\n", backends[i].name, ch[nch].note);
		nch++;
	}
	fflush(stdout);

	/* Warm-up, not counted: page faults, first files, the CPU's clock. */
	for (int c = 0; c < nch; c++)
		for (unsigned t = 1; ch[c].ok && t <= MAX_THREADS; t++)
			order(&ch[c], t, run_ms / 2 + 1);
	for (unsigned r = 0; r < runs; r++) {
		for (int c = 0; c < nch; c++) {
			for (unsigned t = 1; ch[c].ok && t <= MAX_THREADS; t++) {
				struct reply rep = order(&ch[c], t, run_ms);

				add(&ch[c].ns[t - 1], rep.ns);
				add(&ch[c].rate[t - 1], rep.rate);
				add(&ch[c].lost[t - 1], rep.lost);
			}
		}
	}
	for (int c = 0; c < nch; c++)
		reap(&ch[c]);
	loadavg(load1, sizeof(load1));

	double base[MAX_THREADS] = { 0 };

	for (int c = 0; c < nch; c++)
		if (ch[c].ok && !strcmp(ch[c].b->name, "printk_filtered"))
			for (int t = 0; t < MAX_THREADS; t++)
				base[t] = median(&ch[c].ns[t]);

	out = fopen(csv, "we");
	if (!out) {
		fprintf(stderr, "bench/compare: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	fprintf(out, "case,label,threads,ns_per_msg,ns_min,ns_max,ratio_to_filtered,msgs_per_s,"
		     "lost_share\n");
	printf("%-16s %7s %10s %10s %10s %10s %7s\n", "case", "threads", "ns/msg", "min", "max",
	       "x filtered", "lost");
	for (int c = 0; c < nch; c++) {
		for (int t = 0; ch[c].ok && t < MAX_THREADS; t++) {
			double ns = median(&ch[c].ns[t]), lost = median(&ch[c].lost[t]);
			double ratio = base[t] > 0 ? ns / base[t] : 0;
			char lost_s[16] = "-";

			if (lost >= 0)
				snprintf(lost_s, sizeof(lost_s), "%.1f%%", lost * 100);
			printf("%-16s %7d %10.1f %10.1f %10.1f %10.2f %7s\n", ch[c].b->name, t + 1,
			       ns, minimum(&ch[c].ns[t]), maximum(&ch[c].ns[t]), ratio, lost_s);
			fprintf(out, "%s,%s%s,%d,%.1f,%.1f,%.1f,%.3f,%.0f,", ch[c].b->name,
				ch[c].b->label, ch[c].standin ? " (stand-in receiver)" : "", t + 1,
				ns, minimum(&ch[c].ns[t]), maximum(&ch[c].ns[t]), ratio,
				median(&ch[c].rate[t]));
			if (lost >= 0)
				fprintf(out, "%.3f", lost);
			fputc('\n', out);
		}
		if (!ch[c].ok)
			fprintf(out, "# skipped %s: %s\n", ch[c].b->name, ch[c].note);
	}
	print_ratio(ch, nch, "printk_filtered", "floor_memory");
	print_ratio(ch, nch, "printk_file", "floor_write");
	print_ratio(ch, nch, "printk_logfile", "printk_filtered");
	print_ratio(ch, nch, "printk_filtered", "printk_eager");
	print_ratio(ch, nch, "printk_filtered", "spdlog_null");
	print_ratio(ch, nch, "printk_eager", "spdlog_null");
	print_ratio(ch, nch, "printk_filtered", "spdlog_async");
	printf("ns/msg: wall time x threads / messages, the time one caller spends per message;"
	       " x filtered: against printk_filtered with as many threads;"
	       " lost: messages missing from the file\n");
	printf("load at the end %s; csv: %s\n", load1, csv);
	if (fclose(out) != 0) {
		fprintf(stderr, "bench/compare: %s: %s\n", csv, strerror(errno));
		return 1;
	}
	return 0;
}
