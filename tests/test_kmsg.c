// SPDX-License-Identifier: MIT
/*
 * test_kmsg.c - /dev/kmsg semantics (the byte-exact transcripts are in
 * test_kmsg_golden.c):
 *   - every error code: EINVAL, EPERM, EBADF, EAGAIN, EPIPE, ESPIPE, EFAULT,
 *     EINTR;
 *   - the record format: caller field, 'c' flag, dictionary lines, escaping;
 *   - the <N> prefix table, the devkmsg modes and the ratelimit windows;
 *   - overflow while reading: -EPIPE once, then the oldest record, lost count
 *     equal to the gap;
 *   - blocking reads woken by a writer thread (within a bound well below the
 *     reader's safety-net slice), by a finalizing record, and interrupted;
 *   - poll descriptors with poll() and epoll: readable exactly while a record
 *     is available, rung from threads and signal handlers, no lost wake-ups.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <printk/kmsg.h>
#include <printk/printk.h>

#include "capture.h"
#include "log/log_shared.h"
#include "ring/caller.h"
#include "kmsgutil.h"
#include "testutil.h"

static struct capture cap;
static uint64_t clock_now;
static char line[4096];

static uint64_t manual_clock(void)
{
	return clock_now;
}

static int setup(void **state)
{
	(void)state;
	capture_setup(&cap, 0);
	assert_int_equal(pk_set_devkmsg("on"), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(pk_set_devkmsg("on"), 0);
	capture_teardown(&cap);
	return 0;
}

static struct kmsg_file *open_log_or_die(struct pk_log *log, int flags)
{
	struct kmsg_file *f = NULL;

	assert_int_equal(kmsg_open_log(&f, log, flags), 0);
	assert_non_null(f);
	return f;
}

static ssize_t rd(struct kmsg_file *f)
{
	return kmsg_read_str(f, line, sizeof(line));
}

/* The seq field of a line. */
static uint64_t line_seq(const char *l)
{
	unsigned prio;
	unsigned long long seq;

	assert_int_equal(sscanf(l, "%u,%llu,", &prio, &seq), 2);
	return seq;
}

/* The part after the header's ';'. */
static const char *line_body(const char *l)
{
	const char *semi = strchr(l, ';');

	assert_non_null(semi);
	return semi + 1;
}

static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);

	assert_true(r >= 0);
	return r == 1 && (p.revents & POLLIN);
}

/* ---- open -------------------------------------------------------------- */

static void test_open_errors(void **state)
{
	(void)state;
	struct kmsg_file *f = NULL;
	struct pk_log *log = pk_printk_log();

	assert_int_equal(kmsg_open(NULL, O_RDONLY), -EINVAL);
	assert_int_equal(kmsg_open_log(NULL, log, O_RDONLY), -EINVAL);
	assert_int_equal(kmsg_open_log(&f, NULL, O_RDONLY), -EINVAL);
	assert_int_equal(kmsg_open(&f, O_ACCMODE), -EINVAL);
	assert_int_equal(kmsg_open(&f, O_RDONLY | O_APPEND), -EINVAL);
	assert_int_equal(kmsg_open(&f, O_RDWR | O_CREAT), -EINVAL);
	assert_null(f);

	/* printk.devkmsg=off: every open fails, readers included. */
	assert_int_equal(pk_set_devkmsg("off"), 0);
	assert_int_equal(kmsg_open(&f, O_RDONLY), -EPERM);
	assert_int_equal(kmsg_open(&f, O_WRONLY), -EPERM);
	assert_int_equal(kmsg_open(&f, O_RDWR | O_NONBLOCK), -EPERM);
	assert_int_equal(kmsg_open_log(&f, log, O_RDONLY), -EPERM);
	assert_null(f);
	assert_int_equal(pk_set_devkmsg("ratelimit"), 0);
	f = kmsg_open_or_die(O_RDWR | O_NONBLOCK | O_CLOEXEC);
	kmsg_close(f);

	assert_int_equal(pk_set_devkmsg(NULL), -EINVAL);
	assert_int_equal(pk_set_devkmsg(""), -EINVAL);
	assert_int_equal(pk_set_devkmsg("ON"), -EINVAL);
	assert_int_equal(pk_set_devkmsg("on\n"), -EINVAL);
	assert_int_equal(pk_set_devkmsg("rate"), -EINVAL);
	assert_int_equal(pk_set_devkmsg("on"), 0);
	kmsg_close(NULL); /* harmless */
}

/* Each file starts at the oldest record and has its own position. */
static void test_open_position_and_independence(void **state)
{
	(void)state;
	struct kmsg_file *w = kmsg_open_or_die(O_WRONLY);

	kmsg_write_str(w, "one\n");
	kmsg_write_str(w, "two\n");

	struct kmsg_file *a = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);
	struct kmsg_file *b = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);

	assert_true(rd(a) > 0);
	assert_string_equal(line_body(line), "one\n");
	assert_true(rd(a) > 0);
	assert_string_equal(line_body(line), "two\n");
	assert_int_equal(rd(a), -EAGAIN);
	assert_true(rd(b) > 0);
	assert_string_equal(line_body(line), "one\n");
	kmsg_close(a);
	kmsg_close(b);
	kmsg_close(w);
}

/* ---- EBADF, EFAULT, EINVAL, EPERM ------------------------------------------ */

static void test_ebadf(void **state)
{
	(void)state;
	struct kmsg_file *r = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);
	struct kmsg_file *w = kmsg_open_or_die(O_WRONLY | O_NONBLOCK);

	assert_int_equal(kmsg_write(r, "x\n", 2), -EBADF);
	assert_int_equal(kmsg_read(w, line, sizeof(line)), -EBADF);
	/* lseek and poll work on any open /dev/kmsg file. */
	assert_int_equal(kmsg_llseek(w, 0, SEEK_END), 0);
	assert_int_equal(kmsg_poll_events(w), 0);

	assert_int_equal(kmsg_read(NULL, line, sizeof(line)), -EBADF);
	assert_int_equal(kmsg_write(NULL, "x\n", 2), -EBADF);
	assert_int_equal(kmsg_llseek(NULL, 0, SEEK_SET), -EBADF);
	assert_int_equal(kmsg_poll_fd(NULL), -EBADF);
	assert_int_equal(kmsg_poll_events(NULL), POLLERR | POLLNVAL);
	kmsg_close(r);
	kmsg_close(w);
}

static void test_write_limits_and_efault(void **state)
{
	(void)state;
	struct kmsg_file *f = kmsg_open_or_die(O_RDWR | O_NONBLOCK);
	struct pk_log *log = pk_printk_log();
	char big[1100];

	memset(big, 'y', sizeof(big));
	uint64_t before = pk_log_next_seq(log);

	assert_int_equal(kmsg_write(f, big, 1025), -EINVAL);
	assert_int_equal(kmsg_write(f, big, (size_t)-1), -EINVAL);
	assert_int_equal(kmsg_write(f, NULL, 10), -EFAULT);
	assert_int_equal(pk_log_next_seq(log), before);
	assert_int_equal(kmsg_write(f, NULL, 0), 0); /* an empty record */
	assert_int_equal(kmsg_write(f, "done\n", 5), 5);
	assert_int_equal(pk_log_next_seq(log), before + 2);

	/* A NULL read buffer: EFAULT, and the record is consumed like EINVAL. */
	assert_int_equal(kmsg_read(f, NULL, 100), -EFAULT);
	assert_true(rd(f) > 0);
	assert_string_equal(line_body(line), "done\n");
	kmsg_close(f);
}

static void test_readonly_handle_eperm(void **state)
{
	(void)state;
	size_t need = pk_log_region_size(8192);
	void *region = NULL;
	struct pk_log *owner, *ro;

	assert_int_equal(posix_memalign(&region, 64, need), 0);
	assert_int_equal(pk_log_create_in(&owner, region, need, 8192), 0);
	assert_int_equal(pk_log_store(owner, 1, 6, "stored by the owner", 19, NULL, 0), 0);
	assert_int_equal(pk_log_attach(&ro, region, need, PK_LOG_RDONLY), 0);

	struct kmsg_file *f = open_log_or_die(ro, O_RDWR | O_NONBLOCK);

	assert_int_equal(kmsg_write(f, "nope\n", 5), -EPERM);
	assert_int_equal(kmsg_poll_fd(f), -EOPNOTSUPP); /* it may not announce itself */
	assert_int_equal(kmsg_write(f, "nope\n", 2000), -EINVAL); /* the length first */
	assert_true(rd(f) > 0);
	assert_string_equal(line_body(line), "stored by the owner\n");
	assert_int_equal(rd(f), -EAGAIN);
	kmsg_close(f);

	f = open_log_or_die(ro, O_RDONLY);
	assert_int_equal(kmsg_write(f, "nope\n", 5), -EBADF);
	kmsg_close(f);
	pk_log_destroy(ro);
	pk_log_destroy(owner);
	free(region);
}

static void test_eagain_nonblock(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 4096), 0);

	struct kmsg_file *f = open_log_or_die(log, O_RDWR | O_NONBLOCK);

	assert_int_equal(rd(f), -EAGAIN); /* empty log */
	kmsg_write_str(f, "a\n");
	assert_true(rd(f) > 0);
	assert_int_equal(rd(f), -EAGAIN);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_SET), 0);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_END), 0);
	assert_int_equal(rd(f), -EAGAIN);
	kmsg_close(f);
	pk_log_destroy(log);
}

/* ---- record format ---------------------------------------------------------- */

static void test_format_caller_flag_dict(void **state)
{
	(void)state;
	struct pk_log *log;
	static const uint64_t ts[] = { 5000999ull };

	assert_int_equal(pk_log_create(&log, 8192), 0);
	test_clock_set(ts, 1);

	struct kmsg_file *f = open_log_or_die(log, O_RDWR | O_NONBLOCK);
	struct prb *rb = pk_log_ring(log);
	unsigned tid = (unsigned)syscall(SYS_gettid);
	char want[256];

	/* caller=T<tid> only while printk_caller is on (when reading: the
	 * kernel's CONFIG_PRINTK_CALLER); the writer's id. */
	kmsg_write_str(f, "<6>plain\n");
	kmsg_write_str(f, "<6>with caller\n");
	assert_int_equal(rd(f), (ssize_t)strlen("14,0,5000,-;plain\n"));
	assert_string_equal(line, "14,0,5000,-;plain\n");
	pk_set_printk_caller(1);
	rd(f);
	snprintf(want, sizeof(want), "14,1,5000,-,caller=T%u;with caller\n", tid);
	assert_string_equal(line, want);
	pk_set_printk_caller(0);

	/* 'c': a continuation fragment that became its own record. */
	struct prb_meta meta = { .ts_nsec = 7000000, .level = 4, .facility = 0,
				 .flags = PRB_FLAG_CONT | PRB_FLAG_NEWLINE };

	pk_caller_get(&meta.caller);
	assert_int_equal(prb_store(rb, &meta, "fragment", 8, NULL, 0, true, NULL), 0);
	rd(f);
	assert_string_equal(line, "4,2,7000,c;fragment\n");

	/* Dictionary lines, escaped, empty entries skipped. */
	static const char dict[] = "SUBSYSTEM=acpi\0\0DEVICE=+acpi:PNP0A03:00\0K\\=v\x01\xff";

	meta.flags = PRB_FLAG_NEWLINE;
	meta.level = 7;
	meta.ts_nsec = 424069000;
	assert_int_equal(prb_store(rb, &meta, "pci_root PNP0A03:00: host bridge window", 39, dict,
				   sizeof(dict) - 1, true, NULL),
			 0);
	rd(f);
	assert_string_equal(line, "7,3,424069,-;pci_root PNP0A03:00: host bridge window\n"
				  " SUBSYSTEM=acpi\n"
				  " DEVICE=+acpi:PNP0A03:00\n"
				  " K\\x5c=v\\x01\\xff\n");

	/* Facility 0 level 0, every escaped byte class. */
	meta.level = 0;
	meta.ts_nsec = 999;
	assert_int_equal(prb_store(rb, &meta, "\x00\x1f \x7e\x7f\x80\\;,", 9, NULL, 0, true, NULL),
			 0);
	rd(f);
	assert_string_equal(line, "0,4,0,-;\\x00\\x1f ~\\x7f\\x80\\x5c;,\n");

	kmsg_close(f);
	pk_log_destroy(log);
	test_clock_off();
}

/* ---- writes: prefix, caller, devkmsg modes -------------------------------- */

static void test_prefix_table(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int level, facility;
		const char *text;
	} t[] = {
		{ "no prefix\n", 4, 1, "no prefix" },
		{ "<6>info\n", 6, 1, "info" },
		{ "<0>emerg\n", 0, 1, "emerg" },
		{ "<30>daemon\n", 6, 3, "daemon" },
		{ "<191>local7\n", 7, 23, "local7" },
		{ "<1238>f154\n", 6, 154, "f154" },
		{ "<2054>masked\n", 6, 1, "masked" },
		{ "<2047>all ones\n", 7, 255, "all ones" },
		{ "<abc>bogus\n", 4, 1, "<abc>bogus" },
		{ "<>empty\n", 0, 1, "empty" },
		{ "< 6>space\n", 4, 1, "< 6>space" },
		{ "<+6>sign\n", 4, 1, "<+6>sign" },
		{ "<6><3>double\n", 6, 1, "<3>double" },
		{ "<4294967302>wrap\n", 6, 1, "wrap" },
		{ "<18446744073709551623>wrap64\n", 7, 1, "wrap64" },
		{ "<06>zero\n", 6, 1, "zero" },
		{ "<6\n", 4, 1, "<6" },
		{ "<\n", 4, 1, "<" },
		{ "<6>\n", 6, 1, "" },
		{ "\0016soh\n", 4, 1, "\0016soh" },
		{ " <6>late\n", 4, 1, " <6>late" },
	};
	struct kmsg_file *f = kmsg_open_or_die(O_WRONLY);
	struct pk_log *log = pk_printk_log();
	struct pk_record rec;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t seq = pk_log_next_seq(log);

		kmsg_write_str(f, t[i].in);
		assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
		assert_int_equal(rec.seq, seq);
		assert_string_equal(rec.text, t[i].text);
		assert_int_equal(rec.level, t[i].level);
		assert_int_equal(rec.facility, t[i].facility);
		assert_int_equal(rec.flags, PK_REC_NEWLINE);
	}

	/* The prefix is cut before the NUL test: "<1\0>" has no prefix. */
	uint64_t seq = pk_log_next_seq(log);

	assert_int_equal(kmsg_write(f, "<1\0>x\n", 6), 6);
	kmsg_write_str(f, "next\n");
	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_string_equal(rec.text, "<1");
	assert_int_equal(rec.level, 4);

	/* default_message_loglevel applies to writes without a prefix. */
	pk_set_default_message_loglevel(6);
	seq = pk_log_next_seq(log);
	kmsg_write_str(f, "default six\n");
	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_int_equal(rec.level, 6);
	pk_set_default_message_loglevel(4);
	kmsg_close(f);
}

struct writer_arg {
	struct kmsg_file *f;
	unsigned tid;
};

static void *write_from_thread(void *p)
{
	struct writer_arg *a = p;

	a->tid = (unsigned)syscall(SYS_gettid);
	kmsg_write_str(a->f, "from a thread\n");
	return NULL;
}

/* Both store paths record the writer's caller id; the default log's
 * writes reach the consoles, another log's do not. */
static void test_writer_caller_and_consoles(void **state)
{
	(void)state;
	struct pk_log *own;
	struct pk_record rec;

	assert_int_equal(pk_log_create(&own, 4096), 0);

	struct kmsg_file *logs[2] = { kmsg_open_or_die(O_WRONLY), open_log_or_die(own, O_WRONLY) };
	struct pk_log *handles[2] = { pk_printk_log(), own };

	for (int i = 0; i < 2; i++) {
		struct writer_arg a = { .f = logs[i] };
		pthread_t th;
		uint64_t seq = pk_log_next_seq(handles[i]);

		assert_int_equal(pthread_create(&th, NULL, write_from_thread, &a), 0);
		pthread_join(th, NULL);
		assert_int_equal(pk_log_read(handles[i], seq, &rec, 0), 0);
		assert_int_equal(rec.tid, a.tid);
		assert_int_equal(rec.pid, (uint32_t)getpid());
		assert_string_equal(rec.text, "from a thread");
		kmsg_close(logs[i]);
	}
	assert_string_equal(capture_text(&cap), "from a thread\n"); /* once: the default log */
	pk_log_destroy(own);
}

static void test_devkmsg_off_and_on(void **state)
{
	(void)state;
	struct kmsg_file *f = kmsg_open_or_die(O_RDWR | O_NONBLOCK);
	struct pk_log *log = pk_printk_log();
	uint64_t seq = pk_log_next_seq(log);

	/* off: accepted and dropped (an open file keeps working). */
	assert_int_equal(pk_set_devkmsg("off"), 0);
	assert_int_equal(kmsg_write(f, "dropped\n", 8), 8);
	assert_int_equal(kmsg_write(f, "x", 1025), -EINVAL);
	assert_int_equal(pk_log_next_seq(log), seq);

	/* on (our default): nothing is dropped, no notice at close. */
	assert_int_equal(pk_set_devkmsg("on"), 0);
	for (int i = 0; i < 100; i++)
		kmsg_write_str(f, "kept\n");
	kmsg_close(f);
	assert_int_equal(pk_log_next_seq(log), seq + 100);
}

static void test_ratelimit_windows(void **state)
{
	(void)state;
	struct pk_log *log;
	struct pk_record rec;
	char msg[32];

	assert_int_equal(pk_log_create(&log, 16384), 0);
	pk_set_test_clock(manual_clock);
	clock_now = 1000000000ull;
	assert_int_equal(pk_set_devkmsg("ratelimit"), 0);

	struct kmsg_file *f = open_log_or_die(log, O_WRONLY);
	struct kmsg_file *g = open_log_or_die(log, O_WRONLY);

	for (int i = 0; i < 12; i++) {
		snprintf(msg, sizeof(msg), "w%d\n", i);
		kmsg_write_str(f, msg); /* 10 stored, 2 missed; all "succeed" */
	}
	assert_int_equal(pk_log_next_seq(log), 10);
	kmsg_write_str(g, "other file\n"); /* its own burst */
	assert_int_equal(pk_log_next_seq(log), 11);

	clock_now += 5000000000ull; /* exactly the interval: still the same window */
	kmsg_write_str(f, "missed\n");
	assert_int_equal(pk_log_next_seq(log), 11);
	clock_now += 1; /* past it: a new burst */
	kmsg_write_str(f, "new window\n");
	assert_int_equal(pk_log_next_seq(log), 12);
	for (int i = 0; i < 12; i++)
		kmsg_write_str(f, "burst\n"); /* 9 more stored, 3 missed */
	assert_int_equal(pk_log_next_seq(log), 21);

	/* The notice counts every miss, across windows: 2 + 1 + 3. */
	kmsg_close(f);
	assert_int_equal(pk_log_read(log, 21, &rec, 0), 0);
	snprintf(msg, sizeof(msg), "%.15s", program_invocation_short_name);

	char want[128];

	snprintf(want, sizeof(want), "printk: %s: 6 output lines suppressed due to ratelimiting",
		 msg);
	assert_string_equal(rec.text, want);
	assert_int_equal(rec.level, 4);
	assert_int_equal(rec.facility, 0);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	kmsg_close(g); /* nothing suppressed: no notice */
	assert_int_equal(pk_log_next_seq(log), 22);

	/* comm is cut to 15 bytes, like the kernel's task comm. */
	char *saved = program_invocation_short_name;
	char longname[] = "a-very-long-program-name";

	program_invocation_short_name = longname;
	f = open_log_or_die(log, O_WRONLY);
	for (int i = 0; i < 11; i++)
		kmsg_write_str(f, "x\n");
	kmsg_close(f);
	program_invocation_short_name = saved;
	assert_int_equal(pk_log_read(log, pk_log_next_seq(log) - 1, &rec, 0), 0);
	assert_string_equal(rec.text, "printk: a-very-long-pro: 1 output lines suppressed "
				      "due to ratelimiting");

	assert_int_equal(pk_set_devkmsg("on"), 0);
	test_clock_off();
	pk_log_destroy(log);
}

/* ---- llseek ------------------------------------------------------------------ */

static void test_seek_data_clear_seq(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 8192), 0);

	struct kmsg_file *f = open_log_or_die(log, O_RDWR | O_NONBLOCK);

	for (int i = 0; i < 5; i++)
		kmsg_write_str(f, "<6>r\n");
	atomic_store(&pk_log_shared(log)->clear_seq, 3); /* as SYSLOG_ACTION_CLEAR would */
	assert_int_equal(kmsg_llseek(f, 0, SEEK_DATA), 0);
	assert_true(rd(f) > 0);
	assert_int_equal(line_seq(line), 3);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_SET), 0);
	assert_true(rd(f) > 0);
	assert_int_equal(line_seq(line), 0);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_END), 0);
	assert_int_equal(rd(f), -EAGAIN);
	assert_int_equal(kmsg_llseek(f, 7, SEEK_DATA), -ESPIPE);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_CUR), -EINVAL);
	kmsg_close(f);
	pk_log_destroy(log);
}

/* ---- overflow while reading ----------------------------------------------- */

static void test_overflow_epipe_once(void **state)
{
	(void)state;
	struct pk_log *log;
	char msg[64];

	assert_int_equal(pk_log_create(&log, 4096), 0);

	struct kmsg_file *f = open_log_or_die(log, O_RDWR | O_NONBLOCK);
	int pfd = kmsg_poll_fd(f);

	assert_true(pfd >= 0);
	kmsg_write_str(f, "<6>first\n");
	assert_true(rd(f) > 0);
	assert_int_equal(line_seq(line), 0);
	uint64_t expected = 1;

	for (int i = 1; i <= 300; i++) {
		snprintf(msg, sizeof(msg), "<6>record %03d padding padding\n", i);
		kmsg_write_str(f, msg);
	}
	uint64_t first = pk_log_first_seq(log);
	uint64_t next = pk_log_next_seq(log);

	assert_true(first > expected);
	assert_int_equal(next, 301);
	assert_true(readable(pfd, 0));
	assert_int_equal(kmsg_poll_events(f), POLLIN | POLLRDNORM | POLLERR | POLLPRI);

	/* -EPIPE once; then the oldest record; lost = the gap. */
	assert_int_equal(rd(f), -EPIPE);
	assert_true(readable(pfd, 0));
	assert_int_equal(kmsg_poll_events(f), POLLIN | POLLRDNORM);
	assert_true(rd(f) > 0);

	uint64_t got = line_seq(line);

	assert_int_equal(got, first);
	assert_int_equal(got - expected, first - 1); /* records 1 .. first-1 were lost */
	snprintf(msg, sizeof(msg), "record %03d padding padding\n", (int)got);
	assert_string_equal(line_body(line), msg);

	/* Then every record in order, without another EPIPE, until EAGAIN. */
	for (uint64_t s = got + 1; s < next; s++) {
		assert_true(rd(f) > 0);
		assert_int_equal(line_seq(line), s);
	}
	assert_int_equal(rd(f), -EAGAIN);
	assert_false(readable(pfd, 0));
	kmsg_close(f);
	pk_log_destroy(log);
}

/* ---- blocking reads -------------------------------------------------------- */

struct reader_arg {
	struct kmsg_file *f;
	ssize_t n;
	uint64_t done_ms;
	atomic_int finished;
	char buf[256];
};

static void *reader_thread(void *p)
{
	struct reader_arg *a = p;

	a->n = kmsg_read(a->f, a->buf, sizeof(a->buf) - 1);
	if (a->n > 0)
		a->buf[a->n] = '\0';
	a->done_ms = now_ms();
	atomic_store(&a->finished, 1);
	return NULL;
}

struct delayed_write {
	struct kmsg_file *f;
	unsigned delay_ms;
	const char *text;
	uint64_t when_ms;
};

static void *delayed_writer(void *p)
{
	struct delayed_write *d = p;

	usleep(d->delay_ms * 1000);
	d->when_ms = now_ms();
	kmsg_write_str(d->f, d->text);
	return NULL;
}

static void test_blocking_read_woken_by_writer(void **state)
{
	(void)state;
	/* Both store paths: printk's (default log) and the direct one. */
	struct pk_log *own;

	assert_int_equal(pk_log_create(&own, 4096), 0);
	struct pk_log *logs[2] = { pk_printk_log(), own };

	for (int i = 0; i < 2; i++) {
		struct reader_arg a = { .f = open_log_or_die(logs[i], O_RDONLY) };
		struct delayed_write d = { .f = open_log_or_die(logs[i], O_WRONLY),
					   .delay_ms = 100,
					   .text = "<5>wake up\n" };
		pthread_t rt, wt;

		assert_int_equal(kmsg_llseek(a.f, 0, SEEK_END), 0);
		assert_int_equal(pthread_create(&rt, NULL, reader_thread, &a), 0);
		assert_int_equal(pthread_create(&wt, NULL, delayed_writer, &d), 0);
		pthread_join(wt, NULL);
		pthread_join(rt, NULL);
		assert_true(a.n > 0);
		assert_string_equal(line_body(a.buf), "wake up\n");
		assert_true(a.done_ms >= d.when_ms);
		/* Woken by the write, not by the 5 s safety-net slice (which
		 * would come 4.9 s after the write: 4 s leaves room for a
		 * loaded machine). */
		assert_true(a.done_ms - d.when_ms < 4000);
		kmsg_close(a.f);
		kmsg_close(d.f);
	}
	pk_log_destroy(own);
}

/* An open record does not wake the reader; the record that ends it does. */
static void test_blocking_read_woken_by_finalize(void **state)
{
	(void)state;
	struct reader_arg a = { .f = kmsg_open_or_die(O_RDONLY) };
	struct kmsg_file *w = kmsg_open_or_die(O_WRONLY);
	pthread_t rt;

	assert_int_equal(kmsg_llseek(a.f, 0, SEEK_END), 0);
	assert_int_equal(pthread_create(&rt, NULL, reader_thread, &a), 0);
	usleep(50 * 1000);
	kmsg_write_str(w, "half a line");
	usleep(200 * 1000);
	assert_int_equal(a.done_ms, 0); /* still asleep */
	uint64_t t = now_ms();

	kmsg_write_str(w, "next\n");
	pthread_join(rt, NULL);
	assert_string_equal(line_body(a.buf), "half a line\n");
	assert_true(a.done_ms - t < 4000); /* the write, not the 5 s slice */
	kmsg_close(w);
	kmsg_close(a.f);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void test_blocking_read_eintr(void **state)
{
	(void)state;
	struct sigaction sa, old;
	struct reader_arg a = { .f = kmsg_open_or_die(O_RDONLY) };
	pthread_t rt;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: the read fails with EINTR */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(kmsg_llseek(a.f, 0, SEEK_END), 0);
	assert_int_equal(pthread_create(&rt, NULL, reader_thread, &a), 0);
	/* A signal that comes before the thread is blocked in the read only
	 * runs the handler, and the read would then wait for ever: signal
	 * every 20 ms until the read returns (30 s at most). What is pinned is
	 * that a read blocked when a signal comes returns -EINTR. */
	for (int i = 0; i < 1500 && !atomic_load(&a.finished); i++) {
		pthread_kill(rt, SIGUSR1);
		usleep(20 * 1000);
	}
	assert_true(atomic_load(&a.finished));
	pthread_join(rt, NULL);
	assert_int_equal(a.n, -EINTR);
	sigaction(SIGUSR1, &old, NULL);
	kmsg_close(a.f);
}

/* ---- poll descriptors ---------------------------------------------------------- */

static void test_poll_fd_readiness(void **state)
{
	(void)state;
	struct kmsg_file *f = kmsg_open_or_die(O_RDWR | O_NONBLOCK);
	int fd = kmsg_poll_fd(f);

	assert_true(fd >= 0);
	assert_int_equal(kmsg_poll_fd(f), fd); /* one per file */
	assert_false(readable(fd, 0));	       /* empty log */
	assert_int_equal(kmsg_poll_events(f), 0);

	kmsg_write_str(f, "one\n");
	kmsg_write_str(f, "two\n");
	assert_true(readable(fd, 1000));
	assert_int_equal(kmsg_poll_events(f), POLLIN | POLLRDNORM);
	assert_true(rd(f) > 0);
	assert_true(readable(fd, 0)); /* "two" is still there */
	assert_true(rd(f) > 0);
	assert_false(readable(fd, 0)); /* drained once nothing is left */

	/* An open record is not available: not readable. */
	kmsg_write_str(f, "open");
	assert_false(readable(fd, 100));
	kmsg_write_str(f, "closer\n");
	assert_true(readable(fd, 1000));
	assert_true(rd(f) > 0);
	assert_string_equal(line_body(line), "open\n");
	assert_true(rd(f) > 0);
	assert_false(readable(fd, 0));

	/* Position moves: back makes it readable, to the end does not. */
	assert_int_equal(kmsg_llseek(f, 0, SEEK_SET), 0);
	assert_true(readable(fd, 0));
	assert_int_equal(kmsg_llseek(f, 0, SEEK_END), 0);
	assert_false(readable(fd, 0));

	/* A file that asks for its descriptor late sees the waiting records. */
	struct kmsg_file *g = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);

	assert_true(readable(kmsg_poll_fd(g), 0));
	kmsg_close(g);
	kmsg_close(f);
}

static void test_poll_two_files_and_close(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 8192), 0);

	struct kmsg_file *a = open_log_or_die(log, O_RDWR | O_NONBLOCK);
	struct kmsg_file *b = open_log_or_die(log, O_RDONLY | O_NONBLOCK);
	int fa = kmsg_poll_fd(a), fb = kmsg_poll_fd(b);

	assert_true(fa >= 0 && fb >= 0 && fa != fb);
	kmsg_write_str(a, "<6>to both\n");
	assert_true(readable(fa, 1000));
	assert_true(readable(fb, 1000));
	assert_true(rd(a) > 0);
	assert_false(readable(fa, 0));
	assert_true(readable(fb, 0)); /* b has not read it */
	kmsg_close(b);
	kmsg_write_str(a, "<6>to a\n");
	assert_true(readable(fa, 1000));
	assert_true(rd(a) > 0);
	assert_false(readable(fa, 0));

	/* A file on another log is not rung by this log's writers. */
	struct kmsg_file *c = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);
	int fc = kmsg_poll_fd(c);

	assert_int_equal(kmsg_llseek(c, 0, SEEK_END), 0);
	kmsg_write_str(a, "<6>only a\n");
	assert_true(readable(fa, 1000));
	assert_false(readable(fc, 50));
	kmsg_close(c);

	/* A closed file's descriptor number, reused, is never written to. */
	struct kmsg_file *d = open_log_or_die(log, O_RDONLY | O_NONBLOCK);
	int fd_d = kmsg_poll_fd(d);
	int p[2];
	char byte;

	kmsg_close(d);
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(p[0] == fd_d || p[1] == fd_d);
	kmsg_write_str(a, "<6>after close\n");
	assert_true(readable(fa, 1000));
	assert_int_equal(read(p[0], &byte, 1), -1);
	assert_int_equal(errno, EAGAIN);
	close(p[0]);
	close(p[1]);
	kmsg_close(a);
	pk_log_destroy(log);
}

/* The doorbell table is bounded: past it, -EMFILE; a freed slot is reused. */
static void test_poll_table_full(void **state)
{
	(void)state;
	enum { N = 256 };
	static struct kmsg_file *files[N + 1];
	struct pk_log *log;
	int n = 0;

	assert_int_equal(pk_log_create(&log, 4096), 0);
	for (;;) {
		files[n] = open_log_or_die(log, O_RDONLY | O_NONBLOCK);
		int fd = kmsg_poll_fd(files[n]);

		if (fd < 0) {
			assert_int_equal(fd, -EMFILE);
			break;
		}
		n++;
		assert_true(n <= N);
	}
	assert_int_equal(n, N);
	kmsg_close(files[0]);
	assert_true(kmsg_poll_fd(files[N]) >= 0);
	for (int i = 1; i <= N; i++)
		kmsg_close(files[i]);
	pk_log_destroy(log);
}

static struct kmsg_file *epoll_writer_file;
static const int epoll_records = 200;

static void *paced_writer(void *p)
{
	(void)p;
	for (int i = 0; i < epoll_records; i++) {
		char msg[32];

		snprintf(msg, sizeof(msg), "<6>ev %d\n", i);
		kmsg_write_str(epoll_writer_file, msg);
		if (i % 20 == 0)
			usleep(5 * 1000); /* let the reader catch up and sleep */
	}
	return NULL;
}

/* An event loop: epoll on the descriptor, read until -EAGAIN, repeat. Every
 * record arrives, in order, and no wait times out (no lost wake-ups). */
static void test_epoll_event_loop(void **state)
{
	(void)state;
	struct pk_log *log;

	assert_int_equal(pk_log_create(&log, 65536), 0);

	struct kmsg_file *r = open_log_or_die(log, O_RDONLY | O_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 };
	pthread_t th;
	int got = 0, waits = 0;

	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, kmsg_poll_fd(r), &ev), 0);
	epoll_writer_file = open_log_or_die(log, O_WRONLY);
	assert_int_equal(pthread_create(&th, NULL, paced_writer, NULL), 0);
	while (got < epoll_records) {
		struct epoll_event out;
		int n = epoll_wait(ep, &out, 1, 2000);

		assert_int_equal(n, 1);
		assert_int_equal(out.data.u32, 7);
		waits++;
		for (;;) {
			ssize_t len = rd(r);

			if (len == -EAGAIN)
				break;
			assert_true(len > 0);
			assert_int_equal(line_seq(line), (uint64_t)got);
			got++;
		}
	}
	pthread_join(th, NULL);
	assert_int_equal(epoll_wait(ep, &ev, 1, 0), 0);
	assert_true(waits >= 1);
	close(ep);
	kmsg_close(epoll_writer_file);
	kmsg_close(r);
	pk_log_destroy(log);
}

static void on_usr2(int sig)
{
	(void)sig;
	pr_info("from a signal handler\n"); /* printk is async-signal-safe: so is the bell */
}

static void test_poll_rung_from_signal_handler(void **state)
{
	(void)state;
	struct sigaction sa, old;
	struct kmsg_file *f = kmsg_open_or_die(O_RDONLY | O_NONBLOCK);
	int fd = kmsg_poll_fd(f);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	assert_int_equal(kmsg_llseek(f, 0, SEEK_END), 0);
	assert_false(readable(fd, 0));
	raise(SIGUSR2);
	assert_true(readable(fd, 1000));
	assert_true(rd(f) > 0);
	assert_string_equal(line_body(line), "from a signal handler\n");
	assert_false(readable(fd, 0));
	sigaction(SIGUSR2, &old, NULL);
	kmsg_close(f);
}

/* Writers ringing while poll files come and go (TSan checks the table). */
static struct pk_log *churn_log;
static _Atomic int churn_stop;

static void *churn_writer(void *p)
{
	struct kmsg_file *w = open_log_or_die(churn_log, O_WRONLY);

	(void)p;
	while (!atomic_load(&churn_stop))
		kmsg_write_str(w, "<6>churn\n");
	kmsg_close(w);
	return NULL;
}

static void test_poll_churn(void **state)
{
	(void)state;
	pthread_t th[2];

	assert_int_equal(pk_log_create(&churn_log, 16384), 0);
	atomic_store(&churn_stop, 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn_writer, NULL), 0);
	for (int i = 0; i < 200; i++) {
		struct kmsg_file *f = open_log_or_die(churn_log, O_RDONLY | O_NONBLOCK);
		int fd = kmsg_poll_fd(f);

		assert_true(fd >= 0);
		assert_int_equal(kmsg_llseek(f, 0, SEEK_END), 0);
		/* The writers keep going: a record comes soon. A doorbell that
		 * raced with the seek may have rung for nothing: then -EAGAIN. */
		ssize_t n;

		do {
			assert_true(readable(fd, 2000));
			n = rd(f);
		} while (n == -EAGAIN);
		assert_true(n > 0 || n == -EPIPE);
		kmsg_close(f);
	}
	atomic_store(&churn_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pk_log_destroy(churn_log);
}

/* Every test starts from a fresh default log with devkmsg "on". */
#define KMSG_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		KMSG_TEST(test_open_errors),
		KMSG_TEST(test_open_position_and_independence),
		KMSG_TEST(test_ebadf),
		KMSG_TEST(test_write_limits_and_efault),
		KMSG_TEST(test_readonly_handle_eperm),
		KMSG_TEST(test_eagain_nonblock),
		KMSG_TEST(test_format_caller_flag_dict),
		KMSG_TEST(test_prefix_table),
		KMSG_TEST(test_writer_caller_and_consoles),
		KMSG_TEST(test_devkmsg_off_and_on),
		KMSG_TEST(test_ratelimit_windows),
		KMSG_TEST(test_seek_data_clear_seq),
		KMSG_TEST(test_overflow_epipe_once),
		KMSG_TEST(test_blocking_read_woken_by_writer),
		KMSG_TEST(test_blocking_read_woken_by_finalize),
		KMSG_TEST(test_blocking_read_eintr),
		KMSG_TEST(test_poll_fd_readiness),
		KMSG_TEST(test_poll_two_files_and_close),
		KMSG_TEST(test_poll_table_full),
		KMSG_TEST(test_epoll_event_loop),
		KMSG_TEST(test_poll_rung_from_signal_handler),
		KMSG_TEST(test_poll_churn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
