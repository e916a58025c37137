// SPDX-License-Identifier: MIT
/*
 * test_syslog.c - the syslog(2) actions against the kernel's documented
 * results, byte for byte (docs/kernel-compat.md, section 9, with the calls
 * recorded on Linux 6.18):
 *   - READ_ALL: the newest records that fit whole, multi-line and empty
 *     records, raw bytes, argument errors, the 2047-byte per-record cut;
 *   - READ: partial reads that continue inside a record, SIZE_UNREAD going
 *     down exactly, blocking until a writer prints, the silent jump past
 *     lost records, the time flag kept for a partly read record;
 *   - CLEAR / READ_CLEAR and clear_seq (which /dev/kmsg SEEK_DATA and
 *     kmsg_dump use);
 *   - CONSOLE_OFF / ON / LEVEL and their effect on the consoles;
 *   - other log handles, read-only handles, unknown actions.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/printk.h>
#include <printk/syslog.h>

#include "fixture.h"
#include "log/log_shared.h"
#include "testutil.h"

static char buf[1 << 18];

/* A record from userspace-style facility 1 ("<12>" for level 4). */
static void emit(uint64_t ns, int level, const char *text)
{
	test_clock_at(ns);
	pk_printk_emit(1, level, NULL, 0, "%s\n", text);
}

/* READ_ALL's result as a string. */
static const char *read_all(int len)
{
	int n = do_syslog(SYSLOG_ACTION_READ_ALL, buf, len);

	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

/* ---- READ_ALL, sizes, argument errors (docs/kernel-compat.md, section 9.2) ---- */

static void store_a7(void)
{
	char longtext[400];

	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	memcpy(longtext, "pkspec: ", 8);
	emit(1707902076000ull, 4, longtext);
	emit(1707902095000ull, 4, "pkspec: after-long");
	emit(1713978694000ull, 4, "pkspec: rs-1 first");
	emit(1713978722000ull, 4, "pkspec: rs-2 second");
	emit(1713978728000ull, 4, "pkspec: rs-3 third");
}

static void test_read_all_newest_that_fit(void **state)
{
	(void)state;
	store_a7();
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 200), 153);
	buf[153] = '\0';
	assert_string_equal(buf, "<12>[ 1707.902095] pkspec: after-long\n"
				 "<12>[ 1713.978694] pkspec: rs-1 first\n"
				 "<12>[ 1713.978722] pkspec: rs-2 second\n"
				 "<12>[ 1713.978728] pkspec: rs-3 third\n");
	/* Exactly big enough for the last two; one byte less: only the last. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 77), 77);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 76), 38);
	buf[38] = '\0';
	assert_string_equal(buf, "<12>[ 1713.978728] pkspec: rs-3 third\n");
	/* Smaller than the newest record: nothing (not a cut record). */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 37), 0);

	/* Everything: the long one too (19 + 399 + 1 bytes), and SIZE_UNREAD
	 * (nothing read yet) counts the same bytes. */
	int all = do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf));

	assert_int_equal(all, 419 + 153);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), all);
	/* Non-destructive. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 200), 153);
}

static void test_argument_errors(void **state)
{
	(void)state;
	store_a7();
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, NULL, 100), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, -1), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_CLEAR, buf, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_CLEAR, NULL, 10), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_CLEAR, buf, -1), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, NULL, 10), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, -1), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 0), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 9), -EINVAL);
	assert_int_equal(do_syslog(11, buf, 10), -EINVAL);
	assert_int_equal(do_syslog(-1, buf, 10), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CLOSE, NULL, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_OPEN, NULL, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), 131072);
	/* READ_CLEAR with len 0 cleared nothing. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, 200), 153);
}

static void test_multiline_empty_raw(void **state)
{
	(void)state;
	emit(1703202055000ull, 4,
	     "pkspec: esc tab\there bs\\ bell\a del\x7f utf8 \xc3\xa9 semi; comma,");
	emit(1703202082000ull, 4, "pkspec: multi line1\nline2\nline3");
	emit(1703202088000ull, 4, "pkspec: two trailing newlines\n");
	emit(1706278056000ull, 4, "");
	assert_string_equal(read_all(sizeof(buf)),
			    "<12>[ 1703.202055] pkspec: esc tab\there bs\\ bell\a del\x7f utf8 "
			    "\xc3\xa9 semi; comma,\n"
			    "<12>[ 1703.202082] pkspec: multi line1\n"
			    "<12>[ 1703.202082] line2\n"
			    "<12>[ 1703.202082] line3\n"
			    "<12>[ 1703.202088] pkspec: two trailing newlines\n"
			    "<12>[ 1703.202088] \n"
			    "<12>[ 1706.278056] \n");
}

static void test_prefix_variants(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();

	test_clock_at(1500000000ull);
	pr_err("kernel facility\n");
	pk_printk_emit(3, 6, NULL, 0, "daemon facility\n");
	emit(2000000ull, 4, "small time");
	assert_string_equal(read_all(sizeof(buf)), "<3>[    1.500000] kernel facility\n"
						   "<30>[    1.500000] daemon facility\n"
						   "<12>[    0.002000] small time\n");
	/* Time off: no space after "<N>", as the kernel's info_print_prefix(). */
	pk_set_printk_time(0);
	assert_string_equal(read_all(sizeof(buf)),
			    "<3>kernel facility\n<30>daemon facility\n<12>small time\n");
	/* Caller on: "[%6s]" of T<tid>, then the space. */
	pk_set_printk_caller(1);

	char tid[16], want[128];

	assert_int_equal(pk_log_read(log, pk_log_first_seq(log), &rec, 0), 0);
	snprintf(tid, sizeof(tid), "T%u", rec.tid);
	snprintf(want, sizeof(want), "<3>[%6s] kernel facility\n", tid);
	assert_true(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)) > 0);
	assert_memory_equal(buf, want, strlen(want));
	pk_set_printk_caller(0);
}

/* A record with more lines than fit in the kernel's 2048-byte buffer: whole
 * lines only, 97 of the 200 (checked against a port of record_print_text). */
static void test_record_cut_at_2047(void **state)
{
	(void)state;
	char text[400];

	for (int i = 0; i < 200; i++) {
		text[2 * i] = 'a';
		text[2 * i + 1] = '\n';
	}
	text[399] = '\0';
	emit(1000000000ull, 4, text);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 97 * 21);
	for (int i = 0; i < 97; i++)
		assert_memory_equal(buf + 21 * i, "<12>[    1.000000] a\n", 21);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 97 * 21);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, sizeof(buf)), 97 * 21);
}

/* ---- READ, partial reads, SIZE_UNREAD (docs/kernel-compat.md, section 9.3) ---- */

static void store_bench(int from, int to)
{
	static const uint64_t ts[] = { 1353293681000ull, 1353293682000ull, 1353293682000ull,
				       1353293683000ull, 1353293684000ull, 1353293685000ull };

	for (int i = from; i < to; i++) {
		test_clock_at(ts[i - 125]);
		pk_printk_emit(1, 7, NULL, 0,
			       "pkbench: t0 worker %d processed request in 1000 us........\n", i);
	}
}

static void test_read_partial(void **state)
{
	(void)state;
	store_bench(125, 130); /* 5 records of 79 bytes */
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 5 * 79);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 25), 25);
	assert_memory_equal(buf, "<15>[ 1353.293681] pkbenc", 25);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 5 * 79 - 25);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 25), 25);
	assert_memory_equal(buf, "h: t0 worker 125 processe", 25);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 5 * 79 - 50);

	/* The rest of that record and the three whole records that fit. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 300), 266);
	buf[266] = '\0';
	assert_string_equal(buf, "d request in 1000 us........\n"
				 "<15>[ 1353.293682] pkbench: t0 worker 126 processed request in "
				 "1000 us........\n"
				 "<15>[ 1353.293682] pkbench: t0 worker 127 processed request in "
				 "1000 us........\n"
				 "<15>[ 1353.293683] pkbench: t0 worker 128 processed request in "
				 "1000 us........\n");
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 79);
	/* READ consumed them; READ_ALL does not care. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 5 * 79);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, sizeof(buf)), 79);
	assert_memory_equal(buf, "<15>[ 1353.293684] pkbench: t0 worker 129", 41);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 0);
}

/* The time flag of a partly read record is the one it was started with. */
static void test_read_partial_keeps_time_flag(void **state)
{
	(void)state;
	store_bench(125, 127);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 10), 10);
	pk_set_printk_time(0);
	/* 79 - 10 for the started record, 64 for the next one without time
	 * (and without the space). */
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 69 + 64);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, sizeof(buf)), 69 + 64);
	buf[133] = '\0';
	assert_string_equal(buf, ".293681] pkbench: t0 worker 125 processed request in 1000 "
				 "us........\n"
				 "<15>pkbench: t0 worker 126 processed request in 1000 "
				 "us........\n");
}

/* One partial read of a multi-line record, then the rest. */
static void test_read_partial_multiline(void **state)
{
	(void)state;
	emit(1000000000ull, 4, "one\ntwo");
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 23), 23);
	assert_memory_equal(buf, "<12>[    1.000000] one\n", 23);
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 23);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, 100), 23);
	assert_memory_equal(buf, "<12>[    1.000000] two\n", 23);
}

struct reader {
	int ret;
	_Atomic int done;
	char buf[256];
};

static void *blocking_reader(void *arg)
{
	struct reader *r = arg;

	r->ret = do_syslog(SYSLOG_ACTION_READ, r->buf, sizeof(r->buf) - 1);
	atomic_store(&r->done, 1);
	return NULL;
}

static void test_read_blocks_until_a_record(void **state)
{
	(void)state;
	static struct reader r;
	pthread_t th;

	emit(1000000000ull, 4, "old");
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, sizeof(buf)), 23);
	memset(&r, 0, sizeof(r));
	uint64_t t0 = now_ms();

	assert_int_equal(pthread_create(&th, NULL, blocking_reader, &r), 0);
	usleep(150 * 1000);
	assert_int_equal(atomic_load(&r.done), 0); /* still waiting */
	/* An open line does not wake it: only finalized records are read. */
	test_clock_at(2000000000ull);
	pk_printk_emit(1, 4, NULL, 0, "wakeup");
	usleep(50 * 1000);
	assert_int_equal(atomic_load(&r.done), 0);
	pr_cont("\n");
	pthread_join(th, NULL);
	assert_true(now_ms() - t0 >= 150);
	assert_int_equal(r.ret, 26);
	r.buf[26] = '\0';
	assert_string_equal(r.buf, "<12>[    2.000000] wakeup\n");
}

/* syslog_seq fell behind the oldest record: READ moves up to it silently. */
static void test_read_after_loss(void **state)
{
	(void)state;
	capture_teardown(&cap);
	capture_setup(&cap, 4096);
	pk_set_printk_time(1);

	struct pk_log *log = pk_printk_log();

	for (int i = 0; i < 300; i++) {
		test_clock_at(1000000000ull + (uint64_t)i * 1000);
		pk_printk_emit(1, 4, NULL, 0, "filler message number %03d\n", i);
	}
	uint64_t first = pk_log_first_seq(log);

	assert_true(first > 0);
	assert_int_equal(pk_load_acquire(&pk_log_shared(log)->syslog_seq), 0);

	char want[PK_TEXT_MAX + 64];

	assert_int_equal(pk_log_read(log, first, &rec, 0), 0);
	snprintf(want, sizeof(want), "<12>[    1.%06llu] %s\n",
		 (unsigned long long)(rec.ts_nsec % 1000000000ull / 1000), rec.text);
	int size = do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0);

	assert_int_equal(pk_load_acquire(&pk_log_shared(log)->syslog_seq), first);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ, buf, (int)strlen(want)), (int)strlen(want));
	assert_memory_equal(buf, want, strlen(want));
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), size - (int)strlen(want));
}

/* ---- CLEAR, READ_CLEAR, clear_seq ---- */

static void test_clear(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();

	store_a7();
	assert_int_equal(do_syslog(SYSLOG_ACTION_CLEAR, NULL, 0), 0);
	assert_int_equal(pk_load_acquire(&pk_log_shared(log)->clear_seq), pk_log_next_seq(log));
	assert_int_equal(pk_log_next_seq(log), 5);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 0);
	emit(1800000000000ull, 4, "pkspec: newer");
	assert_string_equal(read_all(sizeof(buf)), "<12>[ 1800.000000] pkspec: newer\n");
	/* Nothing is erased: READ still sees everything. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 419 + 153 + 33);
}

static void test_read_clear(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();

	store_a7();
	/* The newest that fit, then clear_seq after the last one copied. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_CLEAR, buf, 80), 77);
	buf[77] = '\0';
	assert_string_equal(buf, "<12>[ 1713.978722] pkspec: rs-2 second\n"
				 "<12>[ 1713.978728] pkspec: rs-3 third\n");
	assert_int_equal(pk_load_acquire(&pk_log_shared(log)->clear_seq), 5);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 0);
	emit(1800000000000ull, 4, "pkspec: newer");
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_CLEAR, buf, sizeof(buf)), 33);
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 0);
}

/* ---- console actions ---- */

static void test_console_off_on(void **state)
{
	(void)state;
	struct pk_log_shared *sh = pk_log_shared(pk_printk_log());

	pk_set_printk_time(0);
	assert_int_equal(pk_get_console_loglevel(), 7);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_OFF, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 1);
	assert_int_equal(atomic_load(&sh->saved_console_loglevel), 7);
	pr_err("err while off\n");
	pr_emerg("emerg while off\n");
	/* A second OFF keeps the first saved level. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_OFF, NULL, 0), 0);
	assert_int_equal(atomic_load(&sh->saved_console_loglevel), 7);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_ON, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 7);
	assert_int_equal(atomic_load(&sh->saved_console_loglevel), PK_LOG_LEVEL_UNSAVED);
	pr_info("info while on\n");
	/* ON without a saved level changes nothing. */
	pk_set_console_loglevel(5);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_ON, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 5);
	assert_string_equal(capture_text(&cap), "emerg while off\ninfo while on\n");
}

static void test_console_level(void **state)
{
	(void)state;
	struct pk_log_shared *sh = pk_log_shared(pk_printk_log());

	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 3), 0);
	assert_int_equal(pk_get_console_loglevel(), 3);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 8), 0);
	assert_int_equal(pk_get_console_loglevel(), 8);
	/* It forgets a saved level: a later ON does not undo it. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_OFF, NULL, 0), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 5), 0);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_ON, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 5);
	/* Below the minimum: raised to it; OFF drops to it. */
	atomic_store(&sh->minimum_console_loglevel, 4);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 2), 0);
	assert_int_equal(pk_get_console_loglevel(), 4);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 0), -EINVAL);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 9), -EINVAL);
	assert_int_equal(pk_get_console_loglevel(), 4);
	pk_set_console_loglevel(7);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_OFF, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 4);
	assert_int_equal(do_syslog(SYSLOG_ACTION_CONSOLE_ON, NULL, 0), 0);
	assert_int_equal(pk_get_console_loglevel(), 7);
}

/* ---- other handles ---- */

static void test_other_log_and_readonly(void **state)
{
	(void)state;
	size_t region_len = pk_log_region_size(4096);
	void *region = aligned_alloc(64, region_len);
	struct pk_log *log, *ro;

	assert_non_null(region);
	assert_int_equal(pk_log_create_in(&log, region, region_len, 4096), 0);
	test_clock_at(3000000000ull);
	assert_int_equal(pk_log_store(log, 0, 6, "own log", 7, NULL, 0), 0);
	assert_int_equal(pk_do_syslog_log(log, SYSLOG_ACTION_SIZE_BUFFER, NULL, 0), 4096);
	assert_int_equal(pk_do_syslog_log(log, SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 26);
	assert_memory_equal(buf, "<6>[    3.000000] own log\n", 26);
	/* The printk log is untouched. */
	assert_int_equal(do_syslog(SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 0);

	assert_int_equal(pk_log_attach(&ro, region, region_len, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_READ_ALL, buf, sizeof(buf)), 26);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 26);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_READ, buf, sizeof(buf)), -EPERM);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_CLEAR, NULL, 0), -EPERM);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_READ_CLEAR, buf, 10), -EPERM);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_CONSOLE_OFF, NULL, 0), -EPERM);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 9), -EINVAL);
	assert_int_equal(pk_do_syslog_log(NULL, SYSLOG_ACTION_OPEN, NULL, 0), -EINVAL);
	/* Through the writable handle, the same log's READ works. */
	assert_int_equal(pk_do_syslog_log(log, SYSLOG_ACTION_READ, buf, sizeof(buf)), 26);
	assert_int_equal(pk_do_syslog_log(ro, SYSLOG_ACTION_SIZE_UNREAD, NULL, 0), 0);
	pk_log_destroy(ro);
	pk_log_destroy(log);
	free(region);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_all_newest_that_fit, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_argument_errors, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_multiline_empty_raw, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_prefix_variants, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_record_cut_at_2047, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_partial, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_partial_keeps_time_flag,
						setup_capture_time, teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_partial_multiline, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_blocks_until_a_record, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_after_loss, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_clear, setup_capture_time, teardown_capture),
		cmocka_unit_test_setup_teardown(test_read_clear, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_console_off_on, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_console_level, setup_capture_time,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_other_log_and_readonly, setup_capture_time,
						teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
