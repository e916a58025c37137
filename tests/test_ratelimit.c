// SPDX-License-Identifier: MIT
/*
 * test_ratelimit.c - the kernel's rate limiting (docs/kernel-compat.md,
 * section 10) with a fixed clock:
 *   - burst, then suppression, then "<func>: N callbacks suppressed" at
 *     KERN_WARNING on the first call after the window, exact text and count;
 *   - the window boundary is strict (begin + interval is still inside);
 *   - interval 0: no limit; burst 0: always suppressed; RATELIMIT_MSG_ON_RELEASE
 *     and ratelimit_state_exit()'s "output lines suppressed" notice;
 *   - printk_ratelimit() (10 per 5 s), printk_timed_ratelimit(),
 *     printk_ratelimited / pr_*_ratelimited at a call site;
 *   - the lock-free paths: a state whose lock is held (as a signal handler
 *     interrupting the holder finds it) and threads racing on one state
 *     never allow more than burst per window, and count every miss.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <printk/printk.h>
#include <printk/ratelimit.h>

#include "capture.h"
#include "ring/caller.h"
#include "testutil.h"

static struct capture cap;

static uint64_t clock_now;
static void at_ms(uint64_t ms)
{
	clock_now = ms * 1000000ull;
	test_clock_set(&clock_now, 1);
}

static int setup(void **state)
{
	(void)state;
	capture_setup(&cap, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	capture_teardown(&cap);
	return 0;
}

static void test_burst_then_notice(void **state)
{
	(void)state;
	DEFINE_RATELIMIT_STATE(rs, DEFAULT_RATELIMIT_INTERVAL, DEFAULT_RATELIMIT_BURST);
	int allowed = 0;

	at_ms(100000);
	for (int i = 0; i < 15; i++)
		allowed += __ratelimit(&rs);
	assert_int_equal(allowed, 10);
	assert_int_equal(rs.missed, 5);
	/* begin + interval exactly is still the same window. */
	at_ms(105000);
	assert_int_equal(__ratelimit(&rs), 0);
	assert_string_equal(capture_text(&cap), "");
	/* The first call after it reports the misses, then is allowed. */
	at_ms(105001);
	assert_int_equal(__ratelimit(&rs), 1);
	assert_string_equal(capture_text(&cap), "test_burst_then_notice: 6 callbacks suppressed\n");
	assert_int_equal(rs.missed, 0);

	struct pk_log *log = pk_printk_log();
	struct pk_record rec;

	assert_int_equal(pk_log_read(log, pk_log_next_seq(log) - 1, &rec, 0), 0);
	assert_int_equal(rec.level, 4);
	assert_string_equal(rec.text, "test_burst_then_notice: 6 callbacks suppressed");

	/* A window without misses reports nothing. */
	capture_clear(&cap);
	for (int i = 0; i < 9; i++)
		assert_int_equal(__ratelimit(&rs), 1);
	at_ms(200000);
	assert_int_equal(___ratelimit(&rs, "other"), 1);
	assert_string_equal(capture_text(&cap), "");
}

static void test_interval_and_burst_zero(void **state)
{
	(void)state;
	struct ratelimit_state unlimited = RATELIMIT_STATE_INIT(0, 10);
	struct ratelimit_state never = RATELIMIT_STATE_INIT(5000, 0);
	struct ratelimit_state negative = RATELIMIT_STATE_INIT(-1, 3);
	struct ratelimit_state both_zero = RATELIMIT_STATE_INIT(0, 0);

	at_ms(1000);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(___ratelimit(&unlimited, "f"), 1);
		assert_int_equal(___ratelimit(&never, "f"), 0);
		assert_int_equal(___ratelimit(&negative, "f"), 1);
		assert_int_equal(___ratelimit(&both_zero, "f"), 1);
	}
	assert_int_equal(unlimited.missed, 0);
	assert_int_equal(never.missed, 100);
	/* No window is ever opened, so nothing is ever reported. */
	at_ms(100000);
	assert_int_equal(___ratelimit(&never, "f"), 0);
	assert_string_equal(capture_text(&cap), "");
}

static void test_msg_on_release(void **state)
{
	(void)state;
	struct ratelimit_state rs = RATELIMIT_STATE_INIT(5000, 10);
	int allowed = 0;

	rs.flags = RATELIMIT_MSG_ON_RELEASE;
	at_ms(1000);
	for (int i = 0; i < 12; i++)
		allowed += ___ratelimit(&rs, "kx");
	/* The misses of the earlier window still count at release, as on Linux
	 * 6.18 (docs/kernel-compat.md, section 8.4). */
	at_ms(7000);
	allowed += ___ratelimit(&rs, "kx");
	assert_int_equal(allowed, 11);
	assert_string_equal(capture_text(&cap), "");
	pk_ratelimit_state_exit(&rs, "rl2");
	assert_string_equal(capture_text(&cap),
			    "rl2: 2 output lines suppressed due to ratelimiting\n");
	/* Reported once; without the flag, exit says nothing. */
	pk_ratelimit_state_exit(&rs, "rl2");
	struct ratelimit_state plain = RATELIMIT_STATE_INIT(5000, 1);

	___ratelimit(&plain, "p");
	___ratelimit(&plain, "p");
	pk_ratelimit_state_exit(&plain, "p");
	assert_string_equal(capture_text(&cap),
			    "rl2: 2 output lines suppressed due to ratelimiting\n");
}

static void test_printk_ratelimit(void **state)
{
	(void)state;
	int allowed = 0;

	at_ms(50000000);
	for (int i = 0; i < 12; i++)
		allowed += printk_ratelimit();
	assert_int_equal(allowed, 10);
	at_ms(50005001);
	assert_int_equal(printk_ratelimit(), 1);
	assert_string_equal(capture_text(&cap), "test_printk_ratelimit: 2 callbacks suppressed\n");
}

static void test_timed_ratelimit(void **state)
{
	(void)state;
	unsigned long last = 0;

	at_ms(10000);
	assert_true(printk_timed_ratelimit(&last, 1000));
	assert_int_equal(last, 10000);
	at_ms(10500);
	assert_false(printk_timed_ratelimit(&last, 1000));
	at_ms(11000);
	assert_false(printk_timed_ratelimit(&last, 1000)); /* not more than 1000 ms yet */
	at_ms(11001);
	assert_true(printk_timed_ratelimit(&last, 1000));
	assert_int_equal(last, 11001);
	/* A clock at 0 still leaves a mark. */
	unsigned long zero = 0;

	at_ms(0);
	assert_true(printk_timed_ratelimit(&zero, 1000));
	assert_false(printk_timed_ratelimit(&zero, 1000));
}

/* One call site, one state: the notice names the enclosing function. */
static void rl_site(int i)
{
	pr_info_ratelimited("msg %d\n", i);
}

static void test_printk_ratelimited_macro(void **state)
{
	(void)state;
	char want[512] = "";

	at_ms(3000000);
	for (int i = 0; i < 15; i++)
		rl_site(i);
	for (int i = 0; i < 10; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "msg %d\n", i);
	assert_string_equal(capture_text(&cap), want);
	at_ms(3006000);
	rl_site(15);
	strcat(want, "rl_site: 5 callbacks suppressed\nmsg 15\n");
	assert_string_equal(capture_text(&cap), want);

	/* printk_ratelimited takes a full format with its level. */
	capture_clear(&cap);
	for (int i = 0; i < 12; i++)
		printk_ratelimited(KERN_ERR "err %d\n", i);
	assert_int_equal(strlen(capture_text(&cap)), 10 * 6);
}

/* The lock is held (the holder was interrupted by a signal handler, or is
 * another thread): callers take what is left of the window without it. */
static void test_contended_lock(void **state)
{
	(void)state;
	struct ratelimit_state rs = RATELIMIT_STATE_INIT(5000, 3);

	at_ms(1000);
	assert_int_equal(___ratelimit(&rs, "f"), 1);
	rs.lock = 1;
	assert_int_equal(___ratelimit(&rs, "f"), 1);
	assert_int_equal(___ratelimit(&rs, "f"), 1);
	assert_int_equal(___ratelimit(&rs, "f"), 0);
	assert_int_equal(rs.missed, 1);
	/* No new window while it is held, even after the interval. */
	at_ms(10000);
	assert_int_equal(___ratelimit(&rs, "f"), 0);
	assert_string_equal(capture_text(&cap), "");
	rs.lock = 0;
	assert_int_equal(___ratelimit(&rs, "f"), 1);
	assert_string_equal(capture_text(&cap), "f: 2 callbacks suppressed\n");
}

#define RACERS 4
#define CALLS  20000
static struct ratelimit_state race_rs = RATELIMIT_STATE_INIT(5000, 100);
static _Atomic int race_allowed;

static void *racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		if (___ratelimit(&race_rs, "racer"))
			atomic_fetch_add(&race_allowed, 1);
	return NULL;
}

static void test_threads_one_window(void **state)
{
	(void)state;
	pthread_t th[RACERS];

	at_ms(1000); /* one window for the whole race */
	(void)pk_clock_ns(); /* the test clock's first read writes its index: not in the race */
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, racer, NULL), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&race_allowed), 100);
	assert_int_equal(race_rs.missed, RACERS * CALLS - 100);
	assert_int_equal(race_rs.lock, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_burst_then_notice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_and_burst_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_msg_on_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printk_ratelimit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timed_ratelimit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printk_ratelimited_macro, setup, teardown),
		cmocka_unit_test_setup_teardown(test_contended_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_one_window, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
