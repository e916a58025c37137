// SPDX-License-Identifier: MIT
/*
 * test_printk_partial.c - partial lines on the console, with exact console
 * bytes (docs/kernel-compat.md, section 4.3):
 *   - the frobnozzle hang: a partial line is on the console before the code
 *     after it runs (checked from outside, on a child that hangs);
 *   - "Testing tracer function: PASSED": a continuation from the same thread
 *     follows on the same console line without a second prefix, and readers
 *     get one merged record;
 *   - the interleaving example of Steven Rostedt's 2012 patch "printk: Have
 *     printk() never buffer its data": another thread's messages end the
 *     half line first; the late continuation starts a new line without a
 *     prefix and is its own record flagged as a fragment;
 *   - the open line is in the ring at once (the unfinalized view).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <unistd.h>

#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"


/* ---- the frobnozzle hang, judged from outside ---- */

static int frobnozzle_child(void *arg)
{
	(void)arg;
	pk_set_printk_time(0);
	printk("testing the frobnozzle ...");
	for (;;)
		pause(); /* do_test() hangs */
	return 0;
}

static void test_frobnozzle_hang(void **state)
{
	(void)state;
	struct child_result res;
	uint64_t t0 = now_ms();

	/* The child has the default stderr console (the fork keeps this
	 * process's consoles, so give it a fresh library state first). */
	capture_teardown(&cap);
	pk_register_console(pk_console_stderr());
	run_child(frobnozzle_child, NULL, 300, &res);
	pk_unregister_console(pk_console_stderr());
	capture_setup(&cap, 0);

	assert_true(res.timed_out); /* it hung, and we killed it */
	assert_string_equal(res.out, "testing the frobnozzle ...");
	assert_true(now_ms() - t0 < 2000);
	child_result_free(&res);
}

/* ---- Testing tracer function: PASSED ---- */

static void test_tracer_passed(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 1291025000ull, 1600000000ull };

	pk_set_printk_time(1);
	test_clock_set(ts, 2);
	assert_int_equal(pr_info("Testing tracer function: "), 25);
	/* On the console before the test runs. */
	assert_string_equal(capture_text(&cap), "[    1.291025] Testing tracer function: ");
	assert_int_equal(pr_cont("PASSED\n"), 6);
	assert_string_equal(capture_text(&cap), "[    1.291025] Testing tracer function: PASSED\n");

	/* Readers see one record, with the first fragment's time. */
	struct pk_log *log = pk_printk_log();
	uint64_t first = pk_log_first_seq(log);

	assert_int_equal(pk_log_read(log, first, &rec, 0), 0);
	assert_string_equal(rec.text, "Testing tracer function: PASSED");
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(rec.ts_nsec, 1291025000ull);
	assert_int_equal(pk_log_next_seq(log), first + 1);
}

/* ---- the open line is in the ring at once ---- */

static void test_open_line_visible_unfinalized(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();
	uint64_t seq = pk_log_next_seq(log);

	pr_info("Testing foo: ");
	assert_int_equal(pk_log_read(log, seq, &rec, 0), -EAGAIN);
	assert_int_equal(pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED), 0);
	assert_int_equal(rec.state, PK_REC_UNFINALIZED);
	assert_string_equal(rec.text, "Testing foo: ");
	pr_cont("ok");
	assert_int_equal(pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "Testing foo: ok");
	pr_cont("\n");
	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_int_equal(rec.state, PK_REC_FINAL);
	assert_string_equal(rec.text, "Testing foo: ok");
	assert_string_equal(capture_text(&cap), "Testing foo: ok\n");
}

/* ---- the 2012 patch's example: ftrace ops test, clocksource switch ---- */

static sem_t go_other, go_back;

static void *other_thread(void *arg)
{
	(void)arg;
	sem_wait(&go_other);
	printk(KERN_INFO "Refined TSC clocksource calibration: 2659.999 MHz.\n");
	printk(KERN_INFO "Switching to clocksource tsc\n");
	sem_post(&go_back);
	return NULL;
}

static void test_patch_example_interleaving(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 2099752000ull, 2099800000ull, 2099900000ull, 2247911000ull,
				       2254229000ull, 2300000000ull, 2400000000ull, 2500000000ull };
	pthread_t th;
	struct pk_log *log = pk_printk_log();
	uint64_t first = pk_log_next_seq(log);

	pk_set_printk_time(1);
	test_clock_set(ts, sizeof(ts) / sizeof(ts[0]));
	sem_init(&go_other, 0, 0);
	sem_init(&go_back, 0, 0);
	assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);

	pr_info("Testing dynamic ftrace ops #1: ");
	pr_cont("(1 0 1 1 0) ");
	pr_cont("(1 1 2 1 0) ");
	sem_post(&go_other);
	sem_wait(&go_back);
	pr_cont("(2 1 3 1 22) ");
	pr_cont("(2 2 4 1 4044) ");
	pr_cont("PASSED\n");
	pthread_join(th, NULL);

	assert_string_equal(capture_text(&cap),
			    "[    2.099752] Testing dynamic ftrace ops #1: (1 0 1 1 0) (1 1 2 1 0) \n"
			    "[    2.247911] Refined TSC clocksource calibration: 2659.999 MHz.\n"
			    "[    2.254229] Switching to clocksource tsc\n"
			    "(2 1 3 1 22) (2 2 4 1 4044) PASSED\n");

	/* Readers: the first line, the two messages, then the late continuation
	 * as its own record flagged as a fragment, at the default level. */
	assert_int_equal(pk_log_read(log, first, &rec, 0), 0);
	assert_string_equal(rec.text, "Testing dynamic ftrace ops #1: (1 0 1 1 0) (1 1 2 1 0) ");
	assert_int_equal(rec.flags, 0);
	assert_int_equal(pk_log_read(log, first + 1, &rec, 0), 0);
	assert_string_equal(rec.text, "Refined TSC clocksource calibration: 2659.999 MHz.");
	assert_int_equal(pk_log_read(log, first + 2, &rec, 0), 0);
	assert_string_equal(rec.text, "Switching to clocksource tsc");
	assert_int_equal(pk_log_read(log, first + 3, &rec, 0), 0);
	assert_string_equal(rec.text, "(2 1 3 1 22) (2 2 4 1 4044) PASSED");
	assert_int_equal(rec.flags, PK_REC_CONT | PK_REC_NEWLINE);
	assert_int_equal(rec.level, 4);
	assert_int_equal(pk_log_next_seq(log), first + 4);
}

/* ---- another thread ends the half line first; no line holds two threads ---- */

static void *one_line(void *arg)
{
	printk(KERN_INFO "%s\n", (const char *)arg);
	return NULL;
}

static void test_other_thread_breaks_line(void **state)
{
	(void)state;
	pthread_t th;

	pr_info("half ");
	pthread_create(&th, NULL, one_line, "from another thread");
	pthread_join(th, NULL);
	pr_info("new line\n");
	assert_string_equal(capture_text(&cap), "half \nfrom another thread\nnew line\n");
}

/* A message from the same thread without KERN_CONT starts a new line too. */
static void test_same_thread_new_message_breaks_line(void **state)
{
	(void)state;
	pr_info("first ");
	pr_info("second\n");
	pr_cont("orphan\n");
	assert_string_equal(capture_text(&cap), "first \nsecond\norphan\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frobnozzle_hang, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_tracer_passed, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_open_line_visible_unfinalized, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_patch_example_interleaving, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_other_thread_breaks_line, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_same_thread_new_message_breaks_line, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
