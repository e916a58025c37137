// SPDX-License-Identifier: MIT
/*
 * test_console_lossless.c - lossless consoles (PK_CON_LOSSLESS,
 * console=file:PATH,lossless):
 *   - a burst of N threads x LINES lines to a lossless file console with the
 *     default log: every line in the file, each thread's lines in order,
 *     no "dropped" line; the same burst to a lossy file console loses lines
 *     (the check can fail); a lossy one is a file console marked ,lossy;
 *   - a file console's default, from PRINTK_OPTS (console=file:PATH) and from
 *     the C API (pk_console_file_create(), no flag): 4 threads x 5,000 lines,
 *     then a normal exit without pr_flush(): the file holds exactly those
 *     20,000 lines, each thread's in order, and nothing else;
 *   - the burst with signal handlers that print: handlers never wait, so
 *     lines may drop, but every line is printed or counted dropped;
 *   - a lossless console whose write blocks: writers wait for it for
 *     lossless_timeout_ms, then it turns lossy with a notice and they go on;
 *   - panic() with a full log and a stuck lossless console does not wait;
 *   - a crash (fatal signal, crash_dump=1) with lines a default file
 *     console's thread has not written yet: the crash handler writes them;
 *   - a forked child logs losslessly through its own printer thread.
 * The bursts run in fresh processes (this program run again, with
 * PRINTK_OPTS in the environment), checked from outside through the file.
 * tests/stress_lossless.c is this program with the full burst sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

#ifndef LOSSLESS_LINES
#if defined(PRINTK_TSAN) || defined(PRINTK_SANITIZER_ADDRESS)
#define LOSSLESS_LINES 5000
#else
#define LOSSLESS_LINES 25000
#endif
#endif
#ifndef LOSSLESS_THREADS
#define LOSSLESS_THREADS 4
#endif

#ifdef PRINTK_TSAN
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

/* ------------------------------------------------- the burst (child) -- */

struct burst {
	int threads, lines, signals;
	pthread_t tid[64];
	_Atomic int running;
	_Atomic long handler_lines;
};

static struct burst burst;
static _Thread_local int my_index = -1;
static _Thread_local int my_handler_count;

static void on_usr1(int sig)
{
	(void)sig;
	if (my_index < 0)
		return;
	printk("H%d %d\n", my_index, my_handler_count++);
	atomic_fetch_add(&burst.handler_lines, 1);
}

static void *burst_writer(void *arg)
{
	my_index = (int)(long)arg;
	for (int i = 0; i < burst.lines; i++)
		printk("T%d %d\n", my_index, i);
	atomic_fetch_sub(&burst.running, 1);
	return NULL;
}

/* Signals to the writers, one every 50 us, while they run. */
static void *burst_signaller(void *arg)
{
	(void)arg;
	while (atomic_load(&burst.running) > 0) {
		for (int t = 0; t < burst.threads; t++)
			pthread_kill(burst.tid[t], SIGUSR1);
		struct timespec ts = { 0, 50 * 1000 };

		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * The C API's default: a file console made with pk_console_file_create()
 * and registered with no flag added is lossless (printed by its thread);
 * PK_CON_LOSSY with PK_CON_LOSSLESS is refused. Returns 0 or a code.
 */
static int register_default_file(const char *path)
{
	struct console *con;

	if (pk_console_file_create(&con, path))
		return 10;
	if (con->flags & (PK_CON_LOSSLESS | PK_CON_THREADED | PK_CON_LOSSY))
		return 11; /* decided at registration, not before */
	con->flags |= PK_CON_LOSSY | PK_CON_LOSSLESS;
	if (pk_register_console(con) != -EINVAL)
		return 12;
	con->flags &= (short)~(PK_CON_LOSSY | PK_CON_LOSSLESS);
	if (pk_register_console(con))
		return 13;
	if ((con->flags & (PK_CON_LOSSLESS | PK_CON_THREADED)) != (PK_CON_LOSSLESS | PK_CON_THREADED))
		return 14;
	return 0;
}

/* argv: "burst" THREADS LINES SIGNALS [exit | capi:PATH]; PRINTK_OPTS names
 * the console, or capi:PATH registers a file console on PATH through the C
 * API with its defaults. exit, or capi: no pr_flush(), normal exit drains. */
static int burst_main(int argc, char **argv)
{
	pthread_t sig_thread;
	int at_exit = argc >= 6;

	burst.threads = atoi(argv[2]);
	burst.lines = atoi(argv[3]);
	burst.signals = atoi(argv[4]);
	if (burst.threads < 1 || burst.threads > 64)
		return 2;
	if (at_exit && !strncmp(argv[5], "capi:", 5)) {
		int err = register_default_file(argv[5] + 5);

		if (err)
			return err;
	}
	if (burst.signals) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
	}
	atomic_store(&burst.running, burst.threads);
	for (int t = 0; t < burst.threads; t++)
		if (pthread_create(&burst.tid[t], NULL, burst_writer, (void *)(long)t))
			return 3;
	if (burst.signals && pthread_create(&sig_thread, NULL, burst_signaller, NULL))
		return 4;
	for (int t = 0; t < burst.threads; t++)
		pthread_join(burst.tid[t], NULL);
	if (burst.signals)
		pthread_join(sig_thread, NULL);
	printf("handler_lines=%ld\n", atomic_load(&burst.handler_lines));
	fflush(stdout);
	if (at_exit)
		return 0; /* exit drains (console_drain_ms) */
	return pr_flush(30000, 1) == 1 ? 0 : 5; /* exit drains again, bounded */
}

/* argv: "fork" LINES: the parent logs, forks; the child logs LINES lines. */
static int fork_main(char **argv)
{
	int lines = atoi(argv[2]);

	printk("parent before fork\n");
	if (pr_flush(5000, 0) != 1) /* or the child prints it too */
		return 4;

	pid_t pid = fork();

	if (pid < 0)
		return 2;
	if (pid == 0) {
		for (int i = 0; i < lines; i++)
			printk("C %d\n", i);
		exit(0);
	}

	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 3;
	printk("parent after child\n");
	return 0;
}

/* ------------------------------------------------------ the checking -- */

static char self_exe[4096];

/* Run this program again with @args and PRINTK_OPTS=@opts; its output
 * (stdout) in @out (malloc'ed). Returns its exit status, -1 if killed. */
static int run_self(const char *opts, const char *const args[], char **out, unsigned timeout_ms)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[8] = { self_exe };
		int n = 1;

		for (; args[n - 1] && n < 7; n++)
			argv[n] = (char *)args[n - 1];
		argv[n] = NULL;
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		setenv("PRINTK_OPTS", opts, 1);
		execv(self_exe, argv);
		_exit(127);
	}
	close(fds[1]);

	size_t room = 4096, len = 0;
	char *buf = malloc(room);
	ssize_t n;

	assert_non_null(buf);
	while ((n = read(fds[0], buf + len, room - len - 1)) > 0) {
		len += (size_t)n;
		if (room - len < 2) {
			room *= 2;
			buf = realloc(buf, room);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	close(fds[0]);

	int status;

	test_reap(pid, &status, timeout_ms);
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What a burst's file holds. */
struct tally {
	long lines[64];	   /* T lines per thread */
	long handler;	   /* H lines */
	long dropped;	   /* sum of "** N printk messages dropped **" */
	long unstored;	   /* sum of "printk: N messages not stored: ..." */
	long out_of_order; /* T lines not right after the same thread's previous one */
	long other;	   /* any other line */
};

static void tally_file(const char *path, int threads, struct tally *t)
{
	size_t len;
	char *buf = test_slurp(path, &len);
	long next[64] = { 0 };

	assert_non_null(buf);
	memset(t, 0, sizeof(*t));
	for (char *line = buf, *nl; *line; line = nl + 1) {
		int a, b;
		long n;

		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (sscanf(line, "T%d %d", &a, &b) == 2 && a >= 0 && a < threads) {
			/* lines may be missing (lossy), never out of order */
			if (b < next[a])
				t->out_of_order++;
			next[a] = b + 1;
			t->lines[a]++;
		} else if (sscanf(line, "H%d %d", &a, &b) == 2) {
			t->handler++;
		} else if (sscanf(line, "** %ld printk messages dropped **", &n) == 1) {
			t->dropped += n;
		} else if (sscanf(line, "printk: %ld messages not stored: ", &n) == 1) {
			t->unstored += n; /* lines the ring refused: counted */
		} else {
			if (t->other++ < 3)
				print_message("unexpected line: %s\n", line);
		}
	}
	free(buf);
}

static long tally_lines(const struct tally *t, int threads)
{
	long sum = 0;

	for (int i = 0; i < threads; i++)
		sum += t->lines[i];
	return sum;
}

static void run_burst(const char *flags, int signals, struct tally *t, long *handler_total)
{
	char opts[1024], threads[16], lines[16], sig[4];
	const char *path = test_dir_path("burst.log");
	char *out;

	unlink(path);
	snprintf(opts, sizeof(opts), "printk.time=0 console=file:%s%s", path, flags);
	snprintf(threads, sizeof(threads), "%d", LOSSLESS_THREADS);
	snprintf(lines, sizeof(lines), "%d", LOSSLESS_LINES);
	snprintf(sig, sizeof(sig), "%d", signals);

	const char *args[] = { "burst", threads, lines, sig, NULL };

	assert_int_equal(run_self(opts, args, &out, 240000), 0);
	assert_int_equal(sscanf(out, "handler_lines=%ld", handler_total), 1);
	free(out);
	tally_file(path, LOSSLESS_THREADS, t);
}

static void test_burst_lossless(void **state)
{
	(void)state;
	struct tally t;
	long handler;

	run_burst(",lossless", 0, &t, &handler);
	for (int i = 0; i < LOSSLESS_THREADS; i++)
		assert_int_equal(t.lines[i], LOSSLESS_LINES);
	assert_int_equal(t.out_of_order, 0);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.other, 0);
}

/* The sanity check: the same burst to a lossy console (,lossy: printed by
 * the console lock's holder, as before file consoles were lossless by
 * default) misses lines. */
static void test_burst_lossy_loses(void **state)
{
	(void)state;
	struct tally t;
	long handler;

	run_burst(",lossy", 0, &t, &handler);
	print_message("lossy console: %ld of %ld lines, %ld counted dropped\n", tally_lines(&t, LOSSLESS_THREADS),
		      (long)LOSSLESS_THREADS * LOSSLESS_LINES, t.dropped);
#if !defined(PRINTK_TSAN) && !defined(PRINTK_SANITIZER_ADDRESS) /* sanitized writers let the console keep up */
	assert_true(tally_lines(&t, LOSSLESS_THREADS) < (long)LOSSLESS_THREADS * LOSSLESS_LINES);
	assert_true(t.dropped > 0);
#endif
	assert_int_equal(t.out_of_order, 0);
	/* ...and counts every line it misses: the records it did not print,
	 * and the lines the ring refused, which a notice (a record of its own,
	 * printed or counted like the others) says (printk waits for a writer
	 * preempted inside the oldest record, so such notices are rare). */
	assert_int_equal(tally_lines(&t, LOSSLESS_THREADS) + t.dropped + t.unstored,
			 (long)LOSSLESS_THREADS * LOSSLESS_LINES);
	assert_int_equal(t.other, 0);
}

/*
 * A file console's default: 4 threads x DEFAULT_LINES lines (20,000) at
 * once into the default 128 KiB log, and the program exits without
 * pr_flush(): the file holds exactly every line, each thread's in order,
 * and nothing else (no "dropped" notice), byte for byte. @console: the
 * console= option (PRINTK_OPTS), or NULL for the C API's default
 * (pk_console_file_create(), registered with no flag added).
 */
#define DEFAULT_THREADS 4
#define DEFAULT_LINES	5000

static void check_default_burst(const char *console)
{
	char opts[1024], threads[16], lines[16], capi[600];
	const char *path = test_dir_path("default.log");
	const char *args[] = { "burst", threads, lines, "0", capi, NULL };
	char *out;
	size_t len, want = 0;

	unlink(path);
	/* The exit drain's bound far above what 20,000 lines take. */
	if (console)
		snprintf(opts, sizeof(opts), "printk.time=0 console_drain_ms=120000 console=%s%s", console, path);
	else
		snprintf(opts, sizeof(opts), "printk.time=0 console_drain_ms=120000 console=none");
	snprintf(threads, sizeof(threads), "%d", DEFAULT_THREADS);
	snprintf(lines, sizeof(lines), "%d", DEFAULT_LINES);
	snprintf(capi, sizeof(capi), console ? "exit" : "capi:%s", path);
	assert_int_equal(run_self(opts, args, &out, 240000), 0);
	assert_string_equal(out, "handler_lines=0\n");
	free(out);

	char *buf = test_slurp(path, &len);
	int next[DEFAULT_THREADS] = { 0 };
	char line[64];

	assert_non_null(buf);
	for (char *p = buf; *p;) {
		int a, b, n;

		if (sscanf(p, "T%d %d\n%n", &a, &b, &n) != 2 || a < 0 || a >= DEFAULT_THREADS || b != next[a])
			fail_msg("%s: at byte %zu: \"%.40s\"", console ? console : "C API", (size_t)(p - buf), p);
		/* exactly the line printk was given */
		snprintf(line, sizeof(line), "T%d %d\n", a, b);
		assert_memory_equal(p, line, strlen(line));
		p += strlen(line);
		next[a]++;
	}
	for (int i = 0; i < DEFAULT_THREADS; i++) {
		assert_int_equal(next[i], DEFAULT_LINES);
		for (int k = 0; k < DEFAULT_LINES; k++)
			want += (size_t)snprintf(line, sizeof(line), "T%d %d\n", i, k);
	}
	assert_int_equal(len, want);
	free(buf);
}

static void test_burst_file_default(void **state)
{
	(void)state;
	check_default_burst("file:");
}

static void test_burst_file_capi_default(void **state)
{
	(void)state;
	check_default_burst(NULL);
}

/*
 * A crash with lines still due: a default file console's thread writes in
 * batches, so when the program dies of a fatal signal (crash_dump=1: the
 * crash handler) lines may be stored that it has not written yet. The
 * crash handler takes the console over between two batches and writes
 * them: the file holds every line, in order, then the crash report.
 */
#define CRASH_LINES 20000

static int crash_main(char **argv)
{
	int lines = atoi(argv[2]);

	for (int i = 0; i < lines; i++)
		printk("L %d\n", i);
	abort(); /* SIGABRT: the crash handler's under every sanitizer */
}

static void test_crash_writes_what_is_stored(void **state)
{
	(void)state;
	char opts[1024], lines[16];
	const char *path = test_dir_path("crash.log");
	const char *args[] = { "crash", lines, NULL };
	char *out, want[32];
	size_t len;

	unlink(path);
	snprintf(opts, sizeof(opts), "printk.time=0 crash_dump=1 console=file:%s", path);
	snprintf(lines, sizeof(lines), "%d", CRASH_LINES);
	assert_int_equal(run_self(opts, args, &out, 120000), -1); /* killed by its SIGABRT */
	free(out);

	char *buf = test_slurp(path, &len), *p = buf;

	assert_non_null(buf);
	for (int i = 0; i < CRASH_LINES; i++) {
		size_t n = (size_t)snprintf(want, sizeof(want), "L %d\n", i);

		if (strncmp(p, want, n) != 0)
			fail_msg("line %d missing: at \"%.40s\"", i, p);
		p += n;
	}
	assert_non_null(strstr(p, "BUG: SIGABRT"));
	free(buf);
}

/* Handlers never wait: their lines (and the lines they push out) may drop,
 * but each is printed or counted. */
static void test_burst_lossless_signals(void **state)
{
	(void)state;
	struct tally t;
	long handler;

	run_burst(",lossless", 1, &t, &handler);
	print_message("lossless console with handlers: %ld handler lines, %ld printed, %ld dropped\n", handler,
		      t.handler, t.dropped);
	assert_true(handler > 0);
	assert_int_equal(t.out_of_order, 0);
	assert_int_equal(t.other, 0);
	/* A handler that interrupted its thread inside a record may find the
	 * ring come round to that very record: its line is refused, and said. */
	assert_int_equal(tally_lines(&t, LOSSLESS_THREADS) + t.handler + t.dropped + t.unstored,
			 (long)LOSSLESS_THREADS * LOSSLESS_LINES + handler);
}

static void test_fork_child_lossless(void **state)
{
	(void)state;
	char opts[1024], lines[16];
	const char *path = test_dir_path("fork.log");
	char *out;

	unlink(path);
	snprintf(opts, sizeof(opts), "printk.time=0 console=file:%s,lossless", path);
	snprintf(lines, sizeof(lines), "%d", LOSSLESS_LINES);

	const char *args[] = { "fork", lines, NULL };

	assert_int_equal(run_self(opts, args, &out, 120000), 0);
	free(out);

	size_t len;
	char *buf = test_slurp(path, &len);
	char *p = buf;
	char want[64];

	assert_non_null(buf);
	assert_true(strncmp(p, "parent before fork\n", 19) == 0);
	p += 19;
	for (int i = 0; i < LOSSLESS_LINES; i++) {
		size_t n = (size_t)snprintf(want, sizeof(want), "C %d\n", i);

		if (strncmp(p, want, n) != 0)
			fail_msg("child line %d missing: at \"%.40s\"", i, p);
		p += n;
	}
	assert_string_equal(p, "parent after child\n");
	free(buf);
}

/* ------------------------------------------- a console that blocks -- */

static sem_t stuck_release;
static _Atomic int stuck_writes;
static _Atomic int stuck_blocking;

static int stuck_write(struct console *con, const char *text, size_t len)
{
	(void)con;
	(void)text;
	(void)len;
	if (atomic_fetch_add(&stuck_writes, 1) == 0 || atomic_load(&stuck_blocking)) {
		while (sem_wait(&stuck_release) && errno == EINTR)
			;
	}
	return 0;
}

static struct console stuck_con = { .name = "stuck", .write_checked = stuck_write };

/* Lines enough to go round the default log more than once. */
#define FILL_LINES 40000

static void test_stuck_console_turns_lossy(void **state)
{
	(void)state;
	sem_init(&stuck_release, 0, 0);
	atomic_store(&stuck_writes, 0);
	assert_int_equal(pk_printk_configure("lossless_timeout_ms=300"), 0);
	stuck_con.flags = PK_CON_LOSSLESS;
	assert_int_equal(pk_register_console(&stuck_con), 0);
	assert_true(stuck_con.flags & PK_CON_THREADED);
	pk_set_console_loglevel(8);
	printk("first\n"); /* the console's thread blocks in its write of it */
	for (int i = 0; i < 1000 && atomic_load(&stuck_writes) == 0; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&stuck_writes), 1);

	uint64_t t0 = now_ms();

	for (int i = 0; i < FILL_LINES; i++)
		printk(KERN_DEBUG "fill %d\n", i);

	uint64_t took = now_ms() - t0;

	/* waited for the timeout once, then went on */
	print_message("writers held %llu ms\n", (unsigned long long)took);
	assert_true(took >= 250);
	assert_true(took < 5000);

	const char *notice = "printk: console [stuck] printed nothing for 300 ms: no longer lossless, records it misses are dropped\n";

	assert_non_null(strstr(capture_text(&cap), notice));
	sem_post(&stuck_release);
	assert_int_equal(pk_unregister_console(&stuck_con), 0);
	assert_int_equal(pk_printk_configure("lossless_timeout_ms=5000"), 0);
	sem_destroy(&stuck_release);
}

/* Without the console stuck: a lossless console never makes anyone wait
 * long, and registration gives it a thread. */
static void test_lossless_registration(void **state)
{
	(void)state;
	struct console c = { .name = "ll", .write_checked = stuck_write };

	atomic_store(&stuck_writes, 1); /* never blocks */
	atomic_store(&stuck_blocking, 0);
	c.flags = PK_CON_LOSSLESS;
	assert_int_equal(pk_register_console(&c), 0);
	assert_int_equal(c.flags & (PK_CON_THREADED | PK_CON_LOSSLESS | PK_CON_ENABLED),
			 PK_CON_THREADED | PK_CON_LOSSLESS | PK_CON_ENABLED);
	for (int i = 0; i < FILL_LINES; i++)
		printk("line %d\n", i);
	assert_int_equal(pr_flush(10000, 0), 1);
	assert_int_equal(pk_unregister_console(&c), 0);
}

/* panic() with the log full of records a stuck lossless console has not
 * printed: the crash path stores and prints without waiting for it. */
static void *filler(void *arg)
{
	(void)arg;
	for (int i = 0;; i++)
		printk("fill %d\n", i); /* blocks once the log is full */
	return NULL;
}

static int panic_child(void *arg)
{
	(void)arg;
	pthread_t t;

	sem_init(&stuck_release, 0, 0);
	atomic_store(&stuck_writes, 0);
	atomic_store(&stuck_blocking, 1);
	if (pk_printk_configure("lossless_timeout_ms=600000"))
		return 2;
	stuck_con.flags = PK_CON_LOSSLESS;
	if (pk_register_console(&stuck_con))
		return 3;
	int e = pk_register_console(pk_console_stderr());

	if (e && e != -EBUSY)
		return 6;
	if (pthread_create(&t, NULL, filler, NULL))
		return 4;
	usleep(500 * 1000); /* the filler waits for the stuck console by now */
	panic("lossless test");
	return 5;
}

static void test_panic_does_not_wait(void **state)
{
	(void)state;
	const char *args[] = { "panic", NULL };
	char *out;
	uint64_t t0 = now_ms();

	/* killed by SIGABRT (-1), without waiting for the stuck console */
	assert_int_equal(run_self("printk.time=0", args, &out, 60000), -1);
	assert_true(now_ms() - t0 < 30000); /* a wait would last 600 s */
	assert_non_null(strstr(out, "Kernel panic - not syncing: lossless test"));
	free(out);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "burst"))
		return burst_main(argc, argv);
	if (argc >= 3 && !strcmp(argv[1], "fork"))
		return fork_main(argv);
	if (argc >= 2 && !strcmp(argv[1], "panic"))
		return panic_child(NULL);
	if (argc >= 3 && !strcmp(argv[1], "crash"))
		return crash_main(argv);

	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	if (test_dir_make("lossless"))
		return 1;

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_lossless),
		cmocka_unit_test(test_burst_lossy_loses),
		cmocka_unit_test(test_burst_file_default),
		cmocka_unit_test(test_burst_file_capi_default),
		cmocka_unit_test(test_burst_lossless_signals),
		cmocka_unit_test(test_fork_child_lossless),
		cmocka_unit_test_setup_teardown(test_lossless_registration, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_stuck_console_turns_lossy, setup_capture, teardown_capture),
		cmocka_unit_test(test_panic_does_not_wait),
		cmocka_unit_test(test_crash_writes_what_is_stored),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	test_dir_remove();
	return failed;
}
