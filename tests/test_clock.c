// SPDX-License-Identifier: MIT
/*
 * test_clock.c - the timestamp clock (src/base/clock.c): the decision rule fed
 * fake inputs, the automatic choice on this machine, a forced TSC clock
 * (non-decreasing, close to CLOCK_MONOTONIC), two processes sharing a log
 * file and one calibration, and calibrations in a file that must not be
 * trusted.
 *
 * Every process with a clock of its own is this program again
 * (/proc/self/exe --child ROLE), started with PRINTK_CLOCK and PRINTK_OPTS
 * set, as a user would start one: the clock reads PRINTK_CLOCK at load
 * time. Each writes what it saw to a file of its own and is judged from
 * outside, with a time limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "base/clock.h"
#include "base/clock_own.h"
#include "log/log_shared.h"
#include "readers/reader.h"
#include "testutil.h"

#define CHILD_ARG "--child"
#define CHILD_MS  20000
#define ROUNDS	  200
#define MS	  1000000ull

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------ the children -- */

#define CHILD_FAIL(...)                                                                            \
	do {                                                                                       \
		printf("FAIL: " __VA_ARGS__);                                                      \
		printf("\n");                                                                      \
		return 1;                                                                          \
	} while (0)

/* "clock KIND TSC0 NS0 MULT SHIFT" and, with a printk log file, "log GEN
 * KIND TSC0 NS0 MULT SHIFT BOOT0 BOOT1": what the parent compares. */
static void report(void)
{
	/* A TSC calibration still measuring (the TSC chosen, no calibration
	 * yet) finishes on the first call after its 10 ms. Calls go on until
	 * it did, not for a fixed time: a process preempted for longer than
	 * that time (a loaded machine) made no call after the 10 ms and
	 * reported CLOCK_MONOTONIC. */
	for (uint64_t t0 = mono(); mono() - t0 < CHILD_MS / 2 * MS;) {
		(void)pk_clock_ns();
		if (pk_clock_current(NULL) == PK_CLOCK_TSC ||
		    strncmp(pk_clock_describe(), "tsc", 3) != 0)
			break;
	}

	struct pk_clock_calib c = { 0 };
	enum pk_clock_kind k = pk_clock_current(&c);
	struct pk_log *log = pk_printk_log();

	printf("clock %d %" PRIu64 " %" PRIu64 " %u %u\n", (int)k, c.tsc0, c.ns0, c.mult, c.shift);
	printf("why %s\n", pk_clock_describe());
	if (log) {
		struct pk_log_clock *lc = &pk_log_shared(log)->clock;

		printf("log %u %u %" PRIu64 " %" PRIu64 " %u %u %" PRIu64 " %" PRIu64 "\n",
		       atomic_load(&lc->gen), atomic_load(&lc->kind), atomic_load(&lc->tsc0),
		       atomic_load(&lc->ns0), atomic_load(&lc->mult), atomic_load(&lc->shift),
		       atomic_load(&lc->boot_id[0]), atomic_load(&lc->boot_id[1]));
	}
}

struct spin {
	uint64_t calls;
	int fails;
};

static void *spin_thread(void *arg)
{
	struct spin *s = arg;
	uint64_t prev = 0;

	for (uint64_t i = 0; i < s->calls; i++) {
		uint64_t v = pk_clock_ns();

		if (v < prev)
			s->fails++;
		prev = v;
	}
	return NULL;
}

/* PRINTK_CLOCK=tsc: the calibration, then a million calls. */
static int child_calib(void)
{
	uint64_t t0 = mono(), prev = 0, v;
	struct pk_clock_calib c;

	if (pk_clock_current(&c) != PK_CLOCK_MONOTONIC)
		CHILD_FAIL("calibrated before its measuring time");
	/* Measuring: CLOCK_MONOTONIC until the first call 10 ms on. */
	while (pk_clock_current(&c) != PK_CLOCK_TSC) {
		v = pk_clock_ns();
		if (v < prev)
			CHILD_FAIL("went back while calibrating: %" PRIu64 " < %" PRIu64, v, prev);
		prev = v;
		if (mono() - t0 > 2000 * MS)
			CHILD_FAIL("no TSC calibration after 2 s: %s", pk_clock_describe());
	}

	uint64_t a = mono();

	v = pk_clock_ns();

	uint64_t b = mono();

	if (v + MS < a || v > b + MS)
		CHILD_FAIL("right after calibration %" PRIu64 " is not within 1 ms of [%" PRIu64
			   ", %" PRIu64 "]",
			   v, a, b);
	if (v < prev)
		CHILD_FAIL("went back at the switch: %" PRIu64 " < %" PRIu64, v, prev);
	if (c.ns0 < t0 || c.ns0 > a)
		CHILD_FAIL("calibration point %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", c.ns0,
			   t0, a);
	if (c.ns0 - t0 < 10 * MS)
		CHILD_FAIL("pairs only %" PRIu64 " ns apart", c.ns0 - t0);
	if (c.shift < 1 || c.shift > 32 || c.mult == 0)
		CHILD_FAIL("mult %u shift %u", c.mult, c.shift);
	prev = v;
	for (int i = 0; i < 1000000; i++) {
		v = pk_clock_ns();
		if (v < prev)
			CHILD_FAIL("call %d went back: %" PRIu64 " < %" PRIu64, i, v, prev);
		prev = v;
	}

	struct spin s[2] = { { 200000, 0 }, { 200000, 0 } };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spin_thread, &s[i]))
			CHILD_FAIL("pthread_create");
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		if (s[i].fails)
			CHILD_FAIL("thread %d saw the clock go back %d times", i, s[i].fails);
	}
	if (strcmp(pk_clock_describe(), "tsc (PRINTK_CLOCK=tsc)") != 0)
		CHILD_FAIL("described as \"%s\"", pk_clock_describe());
	report();
	return 0;
}

/* PRINTK_CLOCK=monotonic: never the TSC, however long it runs. */
static int child_monotonic(void)
{
	uint64_t t0 = mono(), prev = 0;

	while (mono() - t0 < 30 * MS) {
		uint64_t v = pk_clock_ns();

		if (v < prev)
			CHILD_FAIL("went back");
		prev = v;
	}
	if (pk_clock_current(NULL) != PK_CLOCK_MONOTONIC)
		CHILD_FAIL("not CLOCK_MONOTONIC");
	if (strcmp(pk_clock_describe(), "CLOCK_MONOTONIC (PRINTK_CLOCK=monotonic)") != 0)
		CHILD_FAIL("described as \"%s\"", pk_clock_describe());
	report();
	return 0;
}

/* One side of the ping-pong: fd 3 is read, fd 4 written. */
static int child_ping(int first)
{
	char byte = 'x';

	if (!pk_printk_log())
		CHILD_FAIL("no printk log");
	for (int i = 0; i < ROUNDS; i++) {
		if (!first && read(3, &byte, 1) != 1)
			CHILD_FAIL("read %d", i);
		printk(KERN_INFO "%s %d\n", first ? "A" : "B", i);
		if (write(4, &byte, 1) != 1)
			CHILD_FAIL("write %d", i);
		if (first && read(3, &byte, 1) != 1)
			CHILD_FAIL("read %d", i);
	}
	report();
	return 0;
}

struct watch {
	_Atomic int stop;
	_Atomic uint64_t fails, calls;
	_Atomic uint64_t latest, cross_fails; /* the newest value any thread saw */
};

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	uint64_t prev = 0;

	while (!atomic_load(&w->stop)) {
		uint64_t seen = atomic_load(&w->latest);
		uint64_t v = pk_clock_ns();

		if (v < prev)
			atomic_fetch_add(&w->fails, 1);
		/* After another thread's value: at most the grain before it. */
		if (v + PK_CLOCK_GRAIN_NS <= seen)
			atomic_fetch_add(&w->cross_fails, 1);
		while (v > seen && !atomic_compare_exchange_weak(&w->latest, &seen, v))
			;
		prev = v;
		atomic_fetch_add(&w->calls, 1);
	}
	return NULL;
}

/* PRINTK_CLOCK=tsc, calibrated, then adopting the calibration of the log
 * file named by TEST_CLOCK_LOG while two threads read the clock. */
static int child_switch(void)
{
	const char *path = getenv("TEST_CLOCK_LOG");
	struct pk_clock_calib own, now;
	struct watch w = { 0 };
	pthread_t t[2];
	uint64_t t0 = mono();

	while (pk_clock_current(&own) != PK_CLOCK_TSC) {
		(void)pk_clock_ns();
		if (mono() - t0 > 2000 * MS)
			CHILD_FAIL("no TSC calibration after 2 s");
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, watch_thread, &w))
			CHILD_FAIL("pthread_create");
	while (atomic_load(&w.calls) < 10000)
		sched_yield();

	uint64_t before = pk_clock_ns();

	if (!path || pk_set_log_buf_file(path, 0) != 0)
		CHILD_FAIL("cannot make %s the log", path ? path : "(unset)");

	uint64_t after = pk_clock_ns(), calls = atomic_load(&w.calls);

	while (atomic_load(&w.calls) < calls + 10000)
		sched_yield();
	atomic_store(&w.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (after < before)
		CHILD_FAIL("went back across the change: %" PRIu64 " < %" PRIu64, after, before);
	if (atomic_load(&w.fails))
		CHILD_FAIL("the threads saw the clock go back %" PRIu64 " times",
			   (uint64_t)atomic_load(&w.fails));
	if (atomic_load(&w.cross_fails))
		CHILD_FAIL("a thread read a value a grain or more before one another thread had read, %" PRIu64
			   " times",
			   (uint64_t)atomic_load(&w.cross_fails));
	if (pk_clock_current(&now) != PK_CLOCK_TSC || now.tsc0 == own.tsc0)
		CHILD_FAIL("the log's calibration was not adopted");
	report();
	return 0;
}

static int child_main(const char *role)
{
	int ret;

	if (strcmp(role, "calib") == 0)
		ret = child_calib();
	else if (strcmp(role, "monotonic") == 0)
		ret = child_monotonic();
	else if (strcmp(role, "switch") == 0)
		ret = child_switch();
	else if (strcmp(role, "pingA") == 0)
		ret = child_ping(1);
	else if (strcmp(role, "pingB") == 0)
		ret = child_ping(0);
	else if (strcmp(role, "report") == 0) {
		report();
		ret = 0;
	} else
		ret = 99;
	fflush(stdout);
	return ret;
}

/* -------------------------------------------------------- the parent -- */

struct spawn {
	const char *role;
	const char *clock;    /* PRINTK_CLOCK, or NULL: unset */
	const char *log_file; /* log_buf_file=, or NULL */
	const char *later;    /* TEST_CLOCK_LOG: a log file the child attaches itself */
	int in, out;	      /* become fds 3 and 4, or -1 */
	int cpu0;	      /* pinned to CPU 0 */
};

/* Start this program as @sp's child, its output into test_dir's @outname. */
static pid_t spawn(const struct spawn *sp, const char *outname)
{
	char out[4096], opts[4096];

	snprintf(out, sizeof(out), "%s", test_dir_path(outname));
	if (sp->log_file)
		snprintf(opts, sizeof(opts), "console=none log_buf_file=%s", sp->log_file);
	else
		snprintf(opts, sizeof(opts), "console=none");

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		char *argv[] = { "test_clock", CHILD_ARG, (char *)sp->role, NULL };

		if (fd < 0)
			_exit(120);
		if (sp->in >= 0 && (dup2(sp->in, 3) < 0 || dup2(sp->out, 4) < 0))
			_exit(121);
		dup2(fd, 1);
		dup2(fd, 2);
		if (sp->cpu0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(0, &set);
			if (sched_setaffinity(0, sizeof(set), &set) < 0)
				_exit(122);
		}
		if (sp->clock)
			setenv("PRINTK_CLOCK", sp->clock, 1);
		else
			unsetenv("PRINTK_CLOCK");
		setenv("PRINTK_OPTS", opts, 1);
		if (sp->later)
			setenv("TEST_CLOCK_LOG", sp->later, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

struct seen {
	int kind;
	struct pk_clock_calib c;
	char why[128];
	int has_log;
	uint32_t log_gen, log_kind;
	struct pk_clock_calib log;
	uint64_t boot[2];
};

/* Wait for the child, which must exit 0, and parse its report. */
static void judge(pid_t pid, const char *outname, struct seen *s)
{
	int status;

	test_reap(pid, &status, CHILD_MS);

	char *out = test_slurp(test_dir_path(outname), NULL);

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_message("child %s: status 0x%x: %s\n", outname, status, out ? out : "");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(out);
	memset(s, 0, sizeof(*s));

	char *line = strstr(out, "clock ");

	assert_non_null(line);
	assert_int_equal(sscanf(line, "clock %d %" SCNu64 " %" SCNu64 " %u %u", &s->kind, &s->c.tsc0,
				&s->c.ns0, &s->c.mult, &s->c.shift),
			 5);
	line = strstr(out, "why ");
	assert_non_null(line);
	sscanf(line, "why %127[^\n]", s->why);
	line = strstr(out, "log ");
	if (line) {
		s->has_log = 1;
		assert_int_equal(sscanf(line,
					"log %u %u %" SCNu64 " %" SCNu64 " %u %u %" SCNu64 " %" SCNu64,
					&s->log_gen, &s->log_kind, &s->log.tsc0, &s->log.ns0,
					&s->log.mult, &s->log.shift, &s->boot[0], &s->boot[1]),
				 8);
	}
	free(out);
}

static pid_t start(const char *role, const char *clock, const char *log_file, const char *outname)
{
	struct spawn sp = { role, clock, log_file, NULL, -1, -1, 0 };

	return spawn(&sp, outname);
}

static void run(const char *role, const char *clock, const char *log_file, struct seen *s)
{
	judge(start(role, clock, log_file, "run.out"), "run.out", s);
}

static int same_calib(const struct pk_clock_calib *a, const struct pk_clock_calib *b)
{
	return a->tsc0 == b->tsc0 && a->ns0 == b->ns0 && a->mult == b->mult && a->shift == b->shift;
}

static int is_tsc_clocksource(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return strcmp(buf, "tsc\n") == 0;
}

static int setup(void **state)
{
	(void)state;
	return test_dir_make("test_clock");
}

static int teardown(void **state)
{
	(void)state;
	return test_dir_remove();
}

/* ----------------------------------------------------------- the tests -- */

static void test_choose(void **state)
{
	(void)state;
	enum pk_clock_kind tsc = PK_CLOCK_TSC;

#if !defined(__x86_64__)
	tsc = PK_CLOCK_MONOTONIC; /* nothing else can be read here */
#endif
	/* The kernel's word and CPUID's, both needed. */
	assert_int_equal(pk_clock_choose(NULL, "tsc\n", 1), tsc);
	assert_int_equal(pk_clock_choose(NULL, "tsc", 1), tsc);
	assert_int_equal(pk_clock_choose(NULL, "tsc\n", 0), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "kvm-clock\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "hpet\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, NULL, 1), PK_CLOCK_MONOTONIC);
	/* Exactly "tsc": no prefix, suffix or second line. */
	assert_int_equal(pk_clock_choose(NULL, "tsc2\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "tsc \n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "tsc\ntsc\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose(NULL, "xtsc\n", 1), PK_CLOCK_MONOTONIC);
	/* PRINTK_CLOCK overrides; anything but its two words decides as unset. */
	assert_int_equal(pk_clock_choose("monotonic", "tsc\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose("tsc", "kvm-clock\n", 0), tsc);
	assert_int_equal(pk_clock_choose("tsc", NULL, 0), tsc);
	assert_int_equal(pk_clock_choose("", "tsc\n", 1), tsc);
	assert_int_equal(pk_clock_choose("TSC", "kvm-clock\n", 1), PK_CLOCK_MONOTONIC);
	assert_int_equal(pk_clock_choose("auto", "tsc\n", 1), tsc);
}

/* This process: no PRINTK_CLOCK, so the kernel decides. */
static void test_automatic_here(void **state)
{
	(void)state;
	if (getenv("PRINTK_CLOCK"))
		skip();

	enum pk_clock_kind k = pk_clock_current(NULL);

	if (is_tsc_clocksource())
		return; /* a machine where the TSC may be chosen: either is right */
	assert_int_equal(k, PK_CLOCK_MONOTONIC);
	assert_non_null(strstr(pk_clock_describe(), "CLOCK_MONOTONIC"));

	/* And it stays so after the measuring time a TSC would need. */
	uint64_t t0 = mono(), prev = 0;

	while (mono() - t0 < 20 * MS) {
		uint64_t v = pk_clock_ns();

		assert_true(v >= prev);
		prev = v;
	}
	assert_int_equal(pk_clock_current(NULL), PK_CLOCK_MONOTONIC);

	char want[160], src[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	if (f && fgets(src, sizeof(src), f)) {
		src[strcspn(src, "\n")] = '\0';
		snprintf(want, sizeof(want), "CLOCK_MONOTONIC (tsc not stable here: clocksource is %s)",
			 src);
		assert_string_equal(pk_clock_describe(), want);
	}
	if (f)
		fclose(f);
}

static void test_forced_tsc(void **state)
{
	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	struct seen s;

	run("calib", "tsc", NULL, &s);
	assert_int_equal(s.kind, PK_CLOCK_TSC);
	assert_string_equal(s.why, "tsc (PRINTK_CLOCK=tsc)");
}

static void test_forced_monotonic(void **state)
{
	(void)state;
	struct seen s;

	run("monotonic", "monotonic", NULL, &s);
	assert_int_equal(s.kind, PK_CLOCK_MONOTONIC);
}

/* What a reader is told of @log's (file @p's) clock: pk_log_info() and
 * udmesg --info. */
static void expect_info(struct pk_log *log, const char *p, int kind, int this_boot)
{
	struct pk_log_info info;

	assert_int_equal(pk_log_info(log, &info), 0);
	assert_int_equal(info.clock, kind);
	assert_int_equal(info.clock_this_boot, this_boot);
#ifdef UDMESG
	char cmd[8192], want[128], line[512];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "'%s' --info -B '%s'", UDMESG, p);
	snprintf(want, sizeof(want), "clock:          %s (%s)\n",
		 kind == PK_CLOCK_TSC ? "tsc" : "CLOCK_MONOTONIC",
		 this_boot ? "this boot" : "an earlier boot");

	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		found += strncmp(line, "clock:", 6) == 0 && strcmp(line, want) == 0;
	assert_int_equal(pclose(f), 0);
	assert_int_equal(found, kind ? 1 : 0);
#else
	(void)p;
#endif
}

/* Two processes on one CPU take turns: the log's timestamps follow its
 * record order, and both convert with the one calibration. */
static void test_two_processes_one_calibration(void **state)
{
	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	char p[4096];

	snprintf(p, sizeof(p), "%s", test_dir_path("ping.log"));
	int ab[2], ba[2];

	assert_int_equal(pipe(ab), 0);
	assert_int_equal(pipe(ba), 0);

	struct spawn a = { "pingA", "tsc", p, NULL, ba[0], ab[1], 1 };
	struct spawn b = { "pingB", "tsc", p, NULL, ab[0], ba[1], 1 };
	pid_t pa = spawn(&a, "A.out");
	pid_t pb = spawn(&b, "B.out");

	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);

	struct seen sa, sb;

	judge(pa, "A.out", &sa);
	judge(pb, "B.out", &sb);
	assert_int_equal(sa.kind, PK_CLOCK_TSC);
	assert_int_equal(sb.kind, PK_CLOCK_TSC);
	assert_true(same_calib(&sa.c, &sb.c));
	assert_int_equal(sa.log_kind, PK_CLOCK_TSC);
	assert_true(same_calib(&sa.c, &sa.log));
	assert_int_equal(sa.log_gen, 2); /* published once */

	struct pk_log *log;
	struct pk_record rec;
	uint64_t prev = 0;
	unsigned n = 0;

	assert_int_equal(pk_log_open_file(&log, p, 0, PK_LOG_RDONLY), 0);
	expect_info(log, p, PK_CLOCK_TSC, 1);
	for (uint64_t seq = pk_log_first_seq(log); seq < pk_log_next_seq(log); seq++) {
		char want[32];

		assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
		snprintf(want, sizeof(want), "%s %u", n % 2 ? "B" : "A", n / 2);
		assert_string_equal(rec.text, want);
		if (rec.ts_nsec < prev)
			fail_msg("record %" PRIu64 " (%s) at %" PRIu64 " before the one ahead of it at %" PRIu64,
				 seq, rec.text, rec.ts_nsec, prev);
		prev = rec.ts_nsec;
		n++;
	}
	assert_int_equal(n, 2 * ROUNDS);
	pk_log_destroy(log);
}

/* Write @kind/@c/@boot as the clock of the log file @p (as a damaged or
 * foreign file would hold it), with generation @gen. */
static void forge(const char *p, uint32_t gen, uint32_t kind, const struct pk_clock_calib *c,
		  const uint64_t boot[2])
{
	struct pk_log *log;

	assert_int_equal(pk_log_open_file(&log, p, 0, 0), 0);

	struct pk_log_clock *lc = &pk_log_shared(log)->clock;

	atomic_store(&lc->kind, kind);
	atomic_store(&lc->tsc0, c->tsc0);
	atomic_store(&lc->ns0, c->ns0);
	atomic_store(&lc->mult, c->mult);
	atomic_store(&lc->shift, c->shift);
	atomic_store(&lc->boot_id[0], boot[0]);
	atomic_store(&lc->boot_id[1], boot[1]);
	atomic_store(&lc->gen, gen);
	pk_log_destroy(log);
}

/* A TSC writer meets @forged in the file: it must not adopt it, and
 * publishes its own calibration in its place. */
static void expect_replaced(const char *p, uint32_t gen, const struct pk_clock_calib *forged,
			    const uint64_t boot[2], const char *what)
{
	struct seen s;

	forge(p, gen, PK_CLOCK_TSC, forged, boot);
	run("report", "tsc", p, &s);
	if (s.kind != PK_CLOCK_TSC || same_calib(&s.c, forged) || !same_calib(&s.c, &s.log) ||
	    s.log_gen <= gen)
		fail_msg("%s: the writer's clock %d %" PRIu64 "/%u/%u, the file's gen %u %" PRIu64
			 "/%u/%u",
			 what, s.kind, s.c.tsc0, s.c.mult, s.c.shift, s.log_gen, s.log.tsc0,
			 s.log.mult, s.log.shift);
}

static void test_untrusted_calibration(void **state)
{
	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	char p[4096];
	struct seen good, s;
	struct pk_log *ro;

	snprintf(p, sizeof(p), "%s", test_dir_path("forged.log"));

	/* A file of an older version (no clock in it) gets one. */
	test_make_log(p, 8192, 1);
	assert_int_equal(pk_log_open_file(&ro, p, 0, PK_LOG_RDONLY), 0);
	expect_info(ro, p, PK_CLOCK_NONE, 0);
	pk_log_destroy(ro);
	run("report", "tsc", p, &good);
	assert_int_equal(good.kind, PK_CLOCK_TSC);
	assert_true(good.has_log);
	assert_int_equal(good.log_gen, 2);
	assert_int_equal(good.log_kind, PK_CLOCK_TSC);
	assert_true(same_calib(&good.c, &good.log));
	assert_true(good.boot[0] || good.boot[1]);

	/* Intact: adopted as it is, the file unchanged. */
	run("report", "tsc", p, &s);
	assert_true(same_calib(&s.c, &good.c));
	assert_int_equal(s.log_gen, 2);

	struct pk_clock_calib bad = good.c;
	uint64_t other_boot[2] = { good.boot[0] ^ 1, good.boot[1] };

	bad.mult = 0;
	expect_replaced(p, 10, &bad, good.boot, "mult 0");
	bad = good.c;
	bad.shift = 200;
	expect_replaced(p, 20, &bad, good.boot, "shift 200");
	bad = good.c;
	bad.mult = 0xffffffffu;
	bad.shift = 1; /* two billion ns a tick */
	expect_replaced(p, 30, &bad, good.boot, "rate");
	forge(p, 40, PK_CLOCK_TSC, &good.c, other_boot);
	assert_int_equal(pk_log_open_file(&ro, p, 0, PK_LOG_RDONLY), 0);
	expect_info(ro, p, PK_CLOCK_TSC, 0);
	pk_log_destroy(ro);
	expect_replaced(p, 40, &good.c, other_boot, "another boot");
	expect_replaced(p, 50, &good.c, (const uint64_t[2]){ 0, 0 }, "no boot id");
	bad = good.c;
	bad.ns0 += 3600 * 1000 * MS; /* calibrated an hour from now */
	expect_replaced(p, 60, &bad, good.boot, "ns0 ahead");
	bad = good.c;
	bad.ns0 -= 100 * MS; /* a tenth of a second behind CLOCK_MONOTONIC */
	expect_replaced(p, 70, &bad, good.boot, "ns0 behind");
	/* A writer that died while writing it (gen odd): overtaken. */
	expect_replaced(p, 81, &good.c, other_boot, "gen odd");
}

/* A process that adopts a log's calibration while its threads read the
 * clock: the log's clock is half a millisecond behind the process's own
 * (within what a calibration may be off), and nobody sees time go back:
 * not within a thread, and not by a grain (PK_CLOCK_GRAIN_NS) after another
 * thread's value. */
/*
 * The TSC conversion (clock_own.h) is one 128-bit product where the
 * compiler has it: the same value as the two 32-bit halves with 64-bit
 * products it replaces (the halves' sum is the exact product's floor),
 * for deltas of every size up to centuries of uptime, every shift and
 * multipliers up to 2^32 - 1.
 */
static void test_tsc_conversion_same_value(void **state)
{
	(void)state;
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);

	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;

		struct pk_clock_calib c = {
			.tsc0 = x >> 20,
			.ns0 = (x >> 3) & 0xffffffffffu,
			.shift = 1 + (unsigned)(x % 32),
		};

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		c.mult = (uint32_t)(x >> 32) | (i & 1 ? 0x80000000u : 0);

		/* Deltas whose result fits 64 bits (about 2^64 ns). */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned bits = 64 - 32 + c.shift - 1 - (unsigned)(i % 8);
		uint64_t d = bits >= 64 ? x : x & ((UINT64_C(1) << bits) - 1);
		uint64_t halves = c.ns0 + (((d >> 32) * c.mult) << (32 - c.shift)) +
				  (((d & 0xffffffffu) * c.mult) >> c.shift);

		assert_int_equal(pk_clock_delta_to_ns(&c, d), halves);
		assert_int_equal(pk_clock_tsc_to_ns(&c, c.tsc0 + d), halves);
	}
}

static void test_switch_clamped(void **state)
{
	(void)state;
#if !defined(__x86_64__)
	skip();
#endif
	char p[4096];
	struct seen good, s;

	snprintf(p, sizeof(p), "%s", test_dir_path("switch.log"));
	test_make_log(p, 8192, 1);
	run("report", "tsc", p, &good);
	assert_int_equal(good.log_kind, PK_CLOCK_TSC);

	struct pk_clock_calib behind = good.c;

	behind.ns0 -= MS / 2;
	forge(p, 4, PK_CLOCK_TSC, &behind, good.boot);

	struct spawn sp = { "switch", "tsc", NULL, p, -1, -1, 0 };

	judge(spawn(&sp, "switch.out"), "switch.out", &s);
	assert_int_equal(s.kind, PK_CLOCK_TSC);
	assert_true(same_calib(&s.c, &behind));
	assert_int_equal(s.log_gen, 4);
}

/* Writers of a log agree on CLOCK_MONOTONIC too, and a process the kernel
 * does not let use the TSC keeps CLOCK_MONOTONIC. */
static void test_monotonic_logs(void **state)
{
	(void)state;
	char p[4096], q[4096];
	struct seen s;

	snprintf(p, sizeof(p), "%s", test_dir_path("mono.log"));

	test_make_log(p, 8192, 1);
	run("report", "monotonic", p, &s);
	assert_int_equal(s.kind, PK_CLOCK_MONOTONIC);
	assert_int_equal(s.log_kind, PK_CLOCK_MONOTONIC);
	assert_int_equal(s.log_gen, 2);

	struct pk_log *ro;

	assert_int_equal(pk_log_open_file(&ro, p, 0, PK_LOG_RDONLY), 0);
	expect_info(ro, p, PK_CLOCK_MONOTONIC, 1);
	pk_log_destroy(ro);
#if defined(__x86_64__)
	/* Told to use the TSC: it does, and leaves the log's clock alone. */
	run("report", "tsc", p, &s);
	if (s.kind != PK_CLOCK_TSC)
		fail_msg("told to use the TSC, the child reports clock %d (%s)", s.kind, s.why);
	assert_int_equal(s.log_kind, PK_CLOCK_MONOTONIC);
	assert_int_equal(s.log_gen, 2);

	if (is_tsc_clocksource())
		return;
	/* A log whose writers use a TSC forced on them: an automatic writer
	 * here keeps CLOCK_MONOTONIC and the log's clock as it is. */
	struct seen t;

	snprintf(q, sizeof(q), "%s", test_dir_path("forced.log"));
	test_make_log(q, 8192, 1);
	run("report", "tsc", q, &t);
	assert_int_equal(t.log_kind, PK_CLOCK_TSC);
	run("report", NULL, q, &s);
	assert_int_equal(s.kind, PK_CLOCK_MONOTONIC);
	assert_int_equal(s.log_kind, PK_CLOCK_TSC);
	assert_true(same_calib(&s.log, &t.c));
	assert_int_equal(s.log_gen, 2);
#endif
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], CHILD_ARG) == 0)
		return child_main(argv[2]);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_automatic_here),
		cmocka_unit_test_setup_teardown(test_forced_tsc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forced_monotonic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_one_calibration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_calibration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_monotonic_logs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switch_clamped, setup, teardown),
		cmocka_unit_test(test_tsc_conversion_same_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
