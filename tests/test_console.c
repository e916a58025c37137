// SPDX-License-Identifier: MIT
/*
 * test_console.c - the console layer (src/console/console.c), exact bytes:
 *   - which records print: level < console_loglevel (default 7), or
 *     ignore_loglevel; console_silent / console_verbose; the setter's range;
 *     suppressed records leave the console's line alone;
 *   - the prefix "[%5lu.%06lu]", "[%6s]" of T<tid>, one space;
 *   - registration: PK_CON_PRINTBUFFER replays the log from its oldest
 *     record, without it only new records print; the errors; two consoles;
 *     the kernel-signature write callback;
 *   - printk from inside a console write: stored, printed after the write,
 *     then "BUG: recent printk recursion!" at level 2; records overwritten
 *     before a console printed them give "** N printk messages dropped **";
 *   - a console whose writes fail 3 times in a row is disabled with a notice;
 *   - pk_console_reopen without a reopen callback; a console disabled and
 *     reopened prints what it missed; pr_flush, also with a
 *     console stuck in a write (timeout, then caught up);
 *   - a thread cancelled inside a console's write or release: the console
 *     lock is let go, the cancel acts afterwards;
 *   - a thread stuck in a console's write: taken over after a second (by
 *     printk, pr_flush, exit); the other consoles get everything with a
 *     notice, the stuck one catches up when its write returns;
 *   - 4 threads and a slow console: every record exactly once, in order,
 *     and a printk that finds the console busy does not wait;
 *   - filtered writers: a printed line behind a filtered record still
 *     being written (and the reverse) prints when that record is
 *     committed; two threads flooding filtered records never make a call
 *     wait; threads mixing filtered and printed lines print each printed
 *     one once, in order;
 *   - PK_CON_COLOR: dmesg --color's escape sequences.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "console/console_internal.h"
#include "fixture.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "printk/printk_internal.h"
#include "ring/ringbuffer.h"
#include "testutil.h"

static struct capture cap2, cap3;

#ifdef PRINTK_TSAN
/* test_threaded_console_after_fork starts a printer thread in the child of
 * a threaded process, which TSan refuses unless told. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

static int teardown(void **state)
{
	(void)state;
	pk_unregister_console(&cap2.con);
	pk_unregister_console(&cap3.con);
	capture_teardown(&cap);
	return 0;
}

/* Another capture console, with the same write callback as cap. */
static void capture_init(struct capture *c, const char *name, short flags)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->con.name, name);
	c->con.write_checked = cap.con.write_checked;
	c->con.flags = flags;
}

static const char *const level_fmt[8] = {
	KERN_EMERG "%d\n", KERN_ALERT "%d\n", KERN_CRIT "%d\n", KERN_ERR "%d\n",
	KERN_WARNING "%d\n", KERN_NOTICE "%d\n", KERN_INFO "%d\n", KERN_DEBUG "%d\n",
};

static void print_all_levels(void)
{
	for (int i = 0; i < 8; i++) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
		printk(level_fmt[i], i);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
	}
}

/* ---- which records print ---- */

static void test_console_loglevel_filter(void **state)
{
	(void)state;
	assert_int_equal(pk_get_console_loglevel(), 7);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n4\n5\n6\n");

	capture_clear(&cap);
	assert_int_equal(pk_set_console_loglevel(4), 7);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n");

	capture_clear(&cap);
	assert_int_equal(pk_set_console_loglevel(1), 4);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n");

	capture_clear(&cap);
	assert_int_equal(pk_set_console_loglevel(8), 1);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n4\n5\n6\n7\n");

	/* Suppressed records are stored all the same. */
	assert_int_equal(next_seq(), 32);
}

/* Suppressed records between printed ones: skipped without disturbing the
 * console's line (the filtered fast path included). */
static void test_suppressed_between_printed(void **state)
{
	(void)state;
	for (int i = 0; i < 5; i++)
		printk(KERN_DEBUG "dbg %d\n", i);
	pr_err("e1\n");
	printk(KERN_DEBUG "dbg\n");
	printk(KERN_DEBUG "dbg\n");
	pr_info("i1\n");
	pr_info("a");
	printk(KERN_DEBUG "dbg\n"); /* ends "a" in the ring, prints nothing */
	pr_cont("b\n");	      /* a fragment of the same caller: same console line */
	printk(KERN_DEBUG "dbg\n");
	assert_string_equal(capture_text(&cap), "e1\ni1\nab\n");
	assert_int_equal(next_seq(), 13);

	/* Raising the level lets the next ones through at once. */
	pk_set_console_loglevel(8);
	printk(KERN_DEBUG "shown\n");
	assert_string_equal(capture_text(&cap), "e1\ni1\nab\nshown\n");

	/* A console that replays the log sees the same. */
	pk_set_console_loglevel(7);
	capture_init(&cap2, "replay", PK_CON_PRINTBUFFER);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	assert_string_equal(capture_text(&cap2), "e1\ni1\nab\n");
}

/* Lines no console prints, merged from their lanes while every console
 * stood idle at them, are passed there and then (the ring's merged hook):
 * a level raised after the merge does not print them. (Raised before it,
 * it does: test_levels_from_outside_site.) With lanes off the same holds
 * from the store on. */
static void test_merged_lines_pass_idle_consoles(void **state)
{
	(void)state;
	pr_info("first\n");
	assert_int_equal(pk_set_console_loglevel(4), 7);
	for (int i = 0; i < 5; i++)
		pr_info("quiet %d\n", i);
	assert_int_equal(next_seq(), 6); /* a writer's look: merges */
	assert_int_equal(pk_set_console_loglevel(8), 4);
	pr_info("last\n");
	assert_string_equal(capture_text(&cap), "first\nlast\n");
	assert_int_equal(next_seq(), 7);
}

/* A program that sizes its log after start-up (the consoles start again
 * on the new log, with no idle mark) and then logs only lines no console
 * prints, enough to wrap its log many times: the consoles stay idle past
 * those lines, and the first line that prints comes with no "messages
 * dropped" for lines nobody was to print. With lanes on, the lane path
 * gives the consoles their mark back (pk_console_catch_up()); with lanes
 * off each such line passes them as it is stored. On the stderr console,
 * as a program has it. */
static int filtered_only_child(void *arg)
{
	char path[256], got[256];

	(void)arg;
	snprintf(path, sizeof(path), "%s", test_dir_path("stderr.out"));
	CHILD_CHECK(pk_unregister_console(&cap.con) == 0);
	pk_printk_exit();

	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHILD_CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	close(fd);
	CHILD_CHECK(pk_register_console(pk_console_stderr()) == 0);
	pk_set_printk_time(0);
	pk_set_console_loglevel(4);
	/* A program that sizes its log after start-up: the log is replaced,
	 * the consoles start again at its first record. */
	CHILD_CHECK(pk_set_log_buf_len(1 << 16) == 0);
	pk_set_console_loglevel(4);
	for (int i = 0; i < 30000; i++)
		pr_info("quiet %d %s\n", i, "line");
	pr_err("end\n");
	dup2(saved, 2); /* the checks' words */
	close(saved);

	FILE *f = fopen(path, "r");
	size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;

	if (f)
		fclose(f);
	got[n] = '\0';
	if (strcmp(got, "end\n"))
		dprintf(2, "stderr console: %s\n", got);
	CHILD_CHECK(strcmp(got, "end\n") == 0);
	return 0;
}

static void test_filtered_only_then_printed(void **state)
{
	(void)state;
	struct child_result res;

	assert_int_equal(test_dir_make("pk_filtered_only"), 0);
	run_child_ok(filtered_only_child, NULL, 60000, &res);
	child_result_free(&res);
	test_dir_remove();
}

static void test_set_console_loglevel_range(void **state)
{
	(void)state;
	assert_int_equal(pk_set_console_loglevel(-1), -EINVAL);
	assert_int_equal(pk_set_console_loglevel(16), -EINVAL);
	assert_int_equal(pk_get_console_loglevel(), 7);
	assert_int_equal(pk_set_console_loglevel(0), 7);
	assert_int_equal(pk_set_console_loglevel(15), 0);
	assert_int_equal(pk_set_console_loglevel(16), -EINVAL);
	assert_int_equal(pk_get_console_loglevel(), 15);
}

/* The level lives in the log's shared state, which another process (or
 * damage to a log file) may have set to anything: values no setter stores
 * read as the default, 7, instead of muting every console. */
static void test_damaged_shared_loglevel(void **state)
{
	(void)state;
	struct pk_log_shared *sh = pk_log_shared(pk_printk_log());
	const uint32_t bad[] = { 16, 0x7fffffffu, 0x80000000u, 0xffffffffu };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		capture_clear(&cap);
		atomic_store(&sh->console_loglevel, bad[i]);
		assert_int_equal(pk_get_console_loglevel(), 7);
		print_all_levels();
		assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n4\n5\n6\n");
	}
	assert_int_equal(pk_set_console_loglevel(3), 7);
	assert_int_equal(atomic_load(&sh->console_loglevel), 3);
}

static void test_ignore_loglevel(void **state)
{
	(void)state;
	pk_set_console_loglevel(1);
	pk_set_ignore_loglevel(1);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n4\n5\n6\n7\n");
	capture_clear(&cap);
	pk_set_ignore_loglevel(0);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n");
}

static void test_silent_and_verbose(void **state)
{
	(void)state;
	console_silent();
	assert_int_equal(pk_get_console_loglevel(), 0);
	print_all_levels();
	assert_string_equal(capture_text(&cap), ""); /* not even KERN_EMERG */
	console_verbose(); /* stays silent */
	assert_int_equal(pk_get_console_loglevel(), 0);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "");

	pk_set_console_loglevel(7);
	console_verbose();
	assert_int_equal(pk_get_console_loglevel(), 15);
	print_all_levels();
	assert_string_equal(capture_text(&cap), "0\n1\n2\n3\n4\n5\n6\n7\n");
}

/* ---- prefix ---- */

static void test_time_prefix(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 1291025000ull, 1999999000ull, 0ull, 123456789012345ull,
				       123456000000001ull, 99999999999ull, UINT64_MAX };

	pk_set_printk_time(1);
	test_clock_set(ts, 7);
	pr_info("text\n");
	pr_info("same second\n");
	pr_info("zero\n");
	pr_info("wide\n");
	pr_info("wide again\n");
	pr_info("edge\n");
	pr_info("the end of time\n");
	assert_string_equal(capture_text(&cap), "[    1.291025] text\n"
						"[    1.999999] same second\n"
						"[    0.000000] zero\n"
						"[123456.789012] wide\n"
						"[123456.000000] wide again\n"
						"[   99.999999] edge\n"
						"[18446744073.709551] the end of time\n");
	read_at(0);
	assert_int_equal(rec.ts_nsec, 1291025000ull);

	/* A line left open is ended before the next record's prefix; seconds
	 * wider than five digits and an odd digit count. */
	static const uint64_t ts2[] = { 7000001000ull, 1234567000000000ull };

	capture_clear(&cap);
	test_clock_set(ts2, 2);
	pr_info("open");
	pr_info("next\n");
	assert_string_equal(capture_text(&cap), "[    7.000001] open\n"
						"[1234567.000000] next\n");
}

static char tidbuf[32];

static const char *caller_field(void)
{
	char id[16];

	snprintf(id, sizeof(id), "T%ld", (long)syscall(SYS_gettid));
	snprintf(tidbuf, sizeof(tidbuf), "[%6s]", id);
	return tidbuf;
}

static void *caller_thread(void *arg)
{
	pr_info("from thread\n");
	strcpy(arg, caller_field());
	return NULL;
}

static void test_caller_prefix(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 1291025000ull };
	char want[256], other[32];
	pthread_t th;

	pk_set_printk_time(1);
	pk_set_printk_caller(1);
	test_clock_set(ts, 1);
	pr_info("text\n");
	snprintf(want, sizeof(want), "[    1.291025]%s text\n", caller_field());
	assert_string_equal(capture_text(&cap), want);

	capture_clear(&cap);
	pk_set_printk_time(0);
	pr_info("no time\n");
	snprintf(want, sizeof(want), "%s no time\n", caller_field());
	assert_string_equal(capture_text(&cap), want);

	capture_clear(&cap);
	assert_int_equal(pthread_create(&th, NULL, caller_thread, other), 0);
	pthread_join(th, NULL);
	snprintf(want, sizeof(want), "%s from thread\n", other);
	assert_string_equal(capture_text(&cap), want);
	read_at(next_seq() - 1);
	assert_int_equal(rec.pid, (uint32_t)getpid());
	assert_int_not_equal(rec.tid, (uint32_t)syscall(SYS_gettid));
}

/* Multi-line record with time and caller: each line gets both. */
static void test_caller_prefix_every_line(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 5000001000ull };
	char want[256], field[32];

	pk_set_printk_time(1);
	pk_set_printk_caller(1);
	test_clock_set(ts, 1);
	strcpy(field, caller_field());
	pr_info("one\ntwo\n");
	snprintf(want, sizeof(want), "[    5.000001]%s one\n[    5.000001]%s two\n", field, field);
	assert_string_equal(capture_text(&cap), want);
}

/* ---- registration ---- */

static void test_printbuffer_replay(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 1000000ull, 2000000ull, 3000000ull, 4000000ull };

	pk_set_printk_time(1);
	test_clock_set(ts, 3);
	pr_err("first\n");
	printk(KERN_DEBUG "suppressed\n");
	pr_info("two\nlines\n");

	capture_init(&cap2, "replay", PK_CON_PRINTBUFFER);
	capture_init(&cap3, "new", 0);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	assert_int_equal(pk_register_console(&cap3.con), 0);
	assert_true(cap2.con.flags & PK_CON_ENABLED);
	assert_true(cap3.con.flags & PK_CON_ENABLED);
	/* The replay is printed at registration, from the oldest record. */
	assert_string_equal(capture_text(&cap2), "[    0.001000] first\n"
						 "[    0.003000] two\n"
						 "[    0.003000] lines\n");
	assert_string_equal(capture_text(&cap3), "");

	/* (registration reads the clock too) */
	test_clock_set(ts + 3, 1);
	pr_warn("after\n");
	assert_string_equal(capture_text(&cap2), "[    0.001000] first\n"
						 "[    0.003000] two\n"
						 "[    0.003000] lines\n"
						 "[    0.004000] after\n");
	assert_string_equal(capture_text(&cap3), "[    0.004000] after\n");
	assert_string_equal(capture_text(&cap), "[    0.001000] first\n"
						"[    0.003000] two\n"
						"[    0.003000] lines\n"
						"[    0.004000] after\n");
}

/* Replay after the ring wrapped: from the oldest record still there. */
static void test_printbuffer_replay_after_wrap(void **state)
{
	(void)state;
	char want[8192];
	size_t n = 0;

	capture_teardown(&cap);
	capture_setup(&cap, 4096);
	for (int i = 0; i < 300; i++)
		printk("line %03d\n", i);

	uint64_t first = pk_log_first_seq(pk_printk_log());

	assert_true(first > 0);
	for (uint64_t s = first; s < 300; s++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "line %03u\n", (unsigned)s);
	capture_init(&cap2, "replay", PK_CON_PRINTBUFFER);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	assert_string_equal(capture_text(&cap2), want);
}

/* An open line at registration: the replay shows it at once, and its
 * continuation follows on the same console line. */
static void test_printbuffer_replay_open_line(void **state)
{
	(void)state;
	pr_info("Testing foo: ");
	capture_init(&cap2, "replay", PK_CON_PRINTBUFFER);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	assert_string_equal(capture_text(&cap2), "Testing foo: ");
	pr_cont("ok\n");
	assert_string_equal(capture_text(&cap2), "Testing foo: ok\n");
	assert_string_equal(capture_text(&cap), "Testing foo: ok\n");
}

static void kwrite(struct console *con, const char *text, unsigned len);

static void test_register_errors(void **state)
{
	(void)state;
	struct console none = { .name = "none" };
	struct console unknown = { .name = "unknown", .write = kwrite };

	assert_int_equal(pk_register_console(&cap.con), -EBUSY);
	assert_int_equal(pk_register_console(NULL), -EINVAL);
	assert_int_equal(pk_register_console(&none), -EINVAL);
	assert_int_equal(pk_unregister_console(&unknown), -EINVAL);
	assert_int_equal(pk_unregister_console(NULL), -EINVAL);

	capture_init(&cap2, "c2", 0);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	assert_int_equal(pk_register_console(&cap2.con), -EBUSY);
	assert_int_equal(pk_unregister_console(&cap2.con), 0);
	assert_int_equal(pk_unregister_console(&cap2.con), -EINVAL);
	printk("not on c2\n");
	assert_string_equal(capture_text(&cap2), "");
	/* Registered again: works as new. */
	assert_int_equal(pk_register_console(&cap2.con), 0);
	printk("on c2\n");
	assert_string_equal(capture_text(&cap2), "on c2\n");
	assert_string_equal(capture_text(&cap), "not on c2\non c2\n");
}

static void test_two_consoles(void **state)
{
	(void)state;
	capture_init(&cap2, "c2", 0);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	pr_info("one\n");
	pr_info("half ");
	pr_cont("done\n");
	pr_err("two\nlines\n");
	printk(KERN_DEBUG "dbg\n");
	static const char want[] = "one\nhalf done\ntwo\nlines\n";

	assert_string_equal(capture_text(&cap), want);
	assert_string_equal(capture_text(&cap2), want);
}

static char kbuf[4096];
static size_t klen;
static int kwrites;

static void kwrite(struct console *con, const char *text, unsigned len)
{
	assert_string_equal(con->name, "kernel");
	memcpy(kbuf + klen, text, len);
	klen += len;
	kwrites++;
}

static void test_kernel_signature_write(void **state)
{
	(void)state;
	struct console kcon = { .name = "kernel", .write = kwrite };

	klen = 0;
	kwrites = 0;
	assert_int_equal(pk_register_console(&kcon), 0);
	pr_info("kernel style\n");
	pr_info("partial ");
	pr_cont("line\n");
	assert_int_equal(pk_unregister_console(&kcon), 0);
	kbuf[klen] = 0;
	assert_string_equal(kbuf, "kernel style\npartial line\n");
	assert_int_equal(kwrites, 3);
}

/* ---- recursion ---- */

static int write_depth, max_write_depth, nested_ret;

static void recursing_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	(void)len;
	write_depth++;
	if (write_depth > max_write_depth)
		max_write_depth = write_depth;
	if (strncmp(text, "outer", 5) == 0)
		nested_ret = printk("nested\n");
	write_depth--;
}

static void test_recursion(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	write_depth = max_write_depth = nested_ret = 0;
	cap.on_write = recursing_write;
	assert_int_equal(printk(KERN_INFO "outer\n"), 5);
	cap.on_write = NULL;
	assert_int_equal(nested_ret, 6);
	assert_int_equal(max_write_depth, 1); /* never re-entered */
	assert_string_equal(capture_text(&cap), "outer\nnested\nBUG: recent printk recursion!\n");
	read_at(seq + 1);
	assert_string_equal(rec.text, "nested");
	read_at(seq + 2);
	assert_string_equal(rec.text, "BUG: recent printk recursion!");
	assert_int_equal(rec.level, 2);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(next_seq(), seq + 3);

	/* Later messages: no more BUG lines. */
	printk("calm\n");
	assert_string_equal(capture_text(&cap), "outer\nnested\nBUG: recent printk recursion!\ncalm\n");
}

/* ---- dropped notice ---- */

static uint64_t trigger_seq, seen_first, seen_next;
static int fired;
static char pad60[61];

static void flooding_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	(void)len;
	if (fired || strncmp(text, "trigger", 7) != 0)
		return;
	fired = 1;
	for (int i = 0; i < 200; i++)
		printk("%03d:%s\n", i, pad60); /* 64 bytes of text */
	seen_first = pk_log_first_seq(pk_printk_log());
	seen_next = pk_log_next_seq(pk_printk_log());
}

/* On a 4 KiB log: "before", then "trigger", whose write runs @hook. */
static void flood(void (*hook)(struct capture *c, const char *text, size_t len))
{
	capture_teardown(&cap);
	capture_setup(&cap, 4096);
	memset(pad60, 'p', 60);
	fired = 0;
	printk("before\n");
	trigger_seq = next_seq();
	cap.on_write = hook;
	printk("trigger\n");
	cap.on_write = NULL;
}

/* What the console printed: the notice of @dropped messages, then the
 * flood from its line @kept on, then the recursion warning. */
static void assert_flood_printed(uint64_t kept, uint64_t dropped)
{
	static char want[1 << 16];
	size_t n = (size_t)snprintf(want, sizeof(want),
				    "before\ntrigger\n** %llu printk messages dropped **\n",
				    (unsigned long long)dropped);

	for (uint64_t i = kept; i < 200; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%03u:%s\n", (unsigned)i, pad60);
	snprintf(want + n, sizeof(want) - n, "BUG: recent printk recursion!\n");
	assert_string_equal(capture_text(&cap), want);
}

static void test_dropped_notice(void **state)
{
	(void)state;
	flood(flooding_write);

	assert_int_equal(seen_next, trigger_seq + 201);
	uint64_t lost = seen_first - (trigger_seq + 1);

	assert_true(seen_first > trigger_seq + 1); /* they did overflow */
	assert_true(lost < 200);
	assert_flood_printed(lost, lost);

	/* Later records: no second notice. */
	capture_clear(&cap);
	printk("after\n");
	assert_string_equal(capture_text(&cap), "after\n");
}

/*
 * A "printk: N messages not stored" notice stands for N messages: a
 * console that drops it counts N, not one, so the dropped counts and the
 * notices it prints still sum to every message. The notice is stored
 * first of the flood and overwritten by it.
 */
static int weighted_in_flood;

static void flooding_weighted_write(struct capture *c, const char *text, size_t len)
{
	uint64_t seq = ~0ull;

	if (!weighted_in_flood) {
		flooding_write(c, text, len);
		return;
	}
	if (fired || strncmp(text, "trigger", 7) != 0)
		return;
	assert_int_equal(pk_store_notice_seq(&seq, 4, "printk: 3 messages not stored: the test's\n"), 0);
	assert_int_equal(seq, trigger_seq + 1);
	pk_console_note_weight(seq, 3);
	weighted_in_flood = 0;
	flooding_write(c, text, len);
	weighted_in_flood = 1;
}

static void test_dropped_notice_weight(void **state)
{
	(void)state;
	weighted_in_flood = 1;
	flood(flooding_weighted_write);
	weighted_in_flood = 0;

	assert_int_equal(seen_next, trigger_seq + 202);
	/* the notice and the first of the flood overwritten */
	assert_true(seen_first > trigger_seq + 2);

	uint64_t lost = seen_first - (trigger_seq + 2); /* of the flood */

	assert_true(lost < 200);
	assert_flood_printed(lost, lost + 3); /* 1 + lost records, 3 + lost messages */
}

/* ---- failing console ---- */

static void test_failing_console_disabled(void **state)
{
	(void)state;
	capture_init(&cap2, "flaky", 0);
	cap2.fail_writes = 3;
	assert_int_equal(pk_register_console(&cap2.con), 0);
	printk("a\n");
	printk("b\n");
	assert_true(cap2.con.flags & PK_CON_ENABLED); /* two failures: still on */
	uint64_t seq = next_seq();

	printk("c\n");
	assert_false(cap2.con.flags & PK_CON_ENABLED);
	read_at(seq + 1);
	assert_string_equal(rec.text, "printk: console [flaky] disabled after 3 failed writes (error 5)");
	assert_int_equal(rec.level, 3);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	printk("d\n");
	assert_string_equal(capture_text(&cap),
			    "a\nb\nc\nprintk: console [flaky] disabled after 3 failed writes (error 5)\nd\n");
	assert_string_equal(capture_text(&cap2), "");
	assert_int_equal(cap2.writes, 3);
	assert_int_equal(pk_console_reopen(&cap2.con), -EINVAL); /* no reopen callback */
}

static int reopen_ok(struct console *con)
{
	(void)con;
	return 0;
}

/* A console enabled again by pk_console_reopen prints what it missed while
 * disabled: the idle seq published meanwhile (every enabled console caught
 * up) must not move it past those records. */
static void test_reopen_disabled_console_catches_up(void **state)
{
	(void)state;
	capture_init(&cap2, "flaky", 0);
	cap2.con.reopen = reopen_ok;
	cap2.fail_writes = 3;
	assert_int_equal(pk_register_console(&cap2.con), 0);
	printk("a\n");
	printk("b\n");
	printk("c\n");
	assert_false(cap2.con.flags & PK_CON_ENABLED);
	printk("d\n");
	printk("e\n"); /* the only enabled console is idle here */
	assert_int_equal(pk_console_reopen(&cap2.con), 0);
	assert_true(cap2.con.flags & PK_CON_ENABLED);
	printk("f\n");
	assert_string_equal(capture_text(&cap2),
			    "printk: console [flaky] disabled after 3 failed writes (error 5)\nd\ne\nf\n");
	assert_string_equal(capture_text(&cap),
			    "a\nb\nc\nprintk: console [flaky] disabled after 3 failed writes (error 5)\nd\ne\nf\n");
}

/* Failures that are not consecutive do not add up. */
static void test_failures_reset_by_success(void **state)
{
	(void)state;
	capture_init(&cap2, "flaky", 0);
	cap2.fail_writes = 2;
	assert_int_equal(pk_register_console(&cap2.con), 0);
	printk("a\n");
	printk("b\n");
	printk("c\n");
	cap2.fail_writes = 2;
	printk("d\n");
	printk("e\n");
	printk("f\n");
	assert_true(cap2.con.flags & PK_CON_ENABLED);
	assert_string_equal(capture_text(&cap2), "c\nf\n");
	assert_string_equal(capture_text(&cap), "a\nb\nc\nd\ne\nf\n");
}

static void test_reopen_and_flush(void **state)
{
	(void)state;
	assert_int_equal(pk_console_reopen(&cap.con), -EINVAL);
	assert_int_equal(pk_console_reopen(NULL), -EINVAL);
	printk("x\n");
	pr_info("open");
	assert_int_equal(pr_flush(1000, 0), 1);
	assert_int_equal(pr_flush(0, 0), 1);
	assert_int_equal(pr_flush(-1, 1), 1);
	assert_string_equal(capture_text(&cap), "x\nopen");
}

/* pr_flush while another thread is stuck in a console write: 0 after the
 * timeout, 1 once the console caught up; printk meanwhile does not wait.
 * The write lasts until the test lets it go (half a minute at most), not
 * a fixed time a loaded machine may let pass unseen. */
#define SLOW_WRITE_MS 30000

static sem_t in_slow_write, leave_slow_write;

static void slow_on_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	(void)len;
	if (strncmp(text, "slow", 4) == 0) {
		struct timespec until;

		sem_post(&in_slow_write);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += SLOW_WRITE_MS / 1000;
		while (sem_timedwait(&leave_slow_write, &until) != 0 && errno == EINTR)
			;
	}
}

static void *print_slow(void *arg)
{
	(void)arg;
	printk("slow\n");
	return NULL;
}

static void test_pr_flush_timeout(void **state)
{
	(void)state;
	pthread_t th;

	sem_init(&in_slow_write, 0, 0);
	sem_init(&leave_slow_write, 0, 0);
	cap.on_write = slow_on_write;
	assert_int_equal(pthread_create(&th, NULL, print_slow, NULL), 0);
	sem_wait(&in_slow_write);

	uint64_t t0 = now_ms();

	printk("queued\n"); /* left to the printing thread */
	/* Had it waited for the write, it would have waited for it to end */
	assert_true(now_ms() - t0 < SLOW_WRITE_MS / 2);
	/* (cap is not read here: the printing thread owns it until it lets go) */
	assert_int_equal(pr_flush(50, 0), 0);
	sem_post(&leave_slow_write);
	assert_int_equal(pr_flush(SLOW_WRITE_MS, 0), 1);
	assert_string_equal(capture_text(&cap), "slow\nqueued\n");
	pthread_join(th, NULL);
	cap.on_write = NULL;
	sem_destroy(&in_slow_write);
	sem_destroy(&leave_slow_write);
}

/* ---- a thread cancelled while it prints ---- */

static atomic_int cancel_in_write;

static void slow_cancellable_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	(void)text;
	(void)len;
	atomic_store(&cancel_in_write, 1);
	usleep(50 * 1000); /* a cancellation point */
}

static void *cancelled_printer(void *arg)
{
	(void)arg;
	pr_info("printed by a thread about to be cancelled\n");
	for (;;)
		pause(); /* a cancellation point: the pending cancel acts here */
	return NULL;
}

/* pthread_cancel() of a thread inside a console's write: the write and the
 * line finish, the console lock is let go, and the cancel acts afterwards.
 * Without that the lock stays held and every console goes silent. */
static void test_cancel_inside_console_write(void **state)
{
	(void)state;
	pthread_t th;
	void *ret;

	capture_init(&cap2, "slow", 0);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	atomic_store(&cancel_in_write, 0);
	cap2.on_write = slow_cancellable_write;
	assert_int_equal(pthread_create(&th, NULL, cancelled_printer, NULL), 0);
	while (!atomic_load(&cancel_in_write))
		usleep(1000);
	assert_int_equal(pthread_cancel(th), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_ptr_equal(ret, PTHREAD_CANCELED);
	cap2.on_write = NULL;
	pr_info("after the cancel\n");
	assert_string_equal(capture_text(&cap2),
			    "printed by a thread about to be cancelled\nafter the cancel\n");
	assert_string_equal(capture_text(&cap),
			    "printed by a thread about to be cancelled\nafter the cancel\n");
}

/* The same inside a console's release, which pk_printk_exit() calls
 * holding the console lock: the release finishes, the lock is let go. In a
 * child: without that, registering the next console waits for ever. */
static atomic_int cancel_in_release;

static void slow_cancellable_release(struct console *con)
{
	(void)con;
	atomic_store(&cancel_in_release, 1);
	usleep(50 * 1000); /* a cancellation point */
}

static void *cancelled_exiter(void *arg)
{
	(void)arg;
	pk_printk_exit();
	for (;;)
		pause();
	return NULL;
}

static int cancel_in_release_child(void *arg)
{
	(void)arg;
	pthread_t th;
	void *ret;

	capture_init(&cap2, "released", 0);
	cap2.con.release = slow_cancellable_release;
	if (pk_register_console(&cap2.con) != 0 || pthread_create(&th, NULL, cancelled_exiter, NULL) != 0)
		return 2;
	while (!atomic_load(&cancel_in_release))
		usleep(1000);
	pthread_cancel(th);
	pthread_join(th, &ret);
	if (ret != PTHREAD_CANCELED)
		return 3;
	capture_init(&cap3, "next", 0);
	if (pk_register_console(&cap3.con) != 0)
		return 4;
	pr_info("after the cancel\n");
	return strcmp(capture_text(&cap3), "after the cancel\n") == 0 ? 0 : 5;
}

static void test_cancel_inside_console_release(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(cancel_in_release_child, NULL, 5000, &res);
	child_result_free(&res);
}

/* ---- a holder stuck in a console's write is taken over ---- */

#define STUCK_NOTICE "printk: console [capture] stuck in a write for over 1000 ms: the others go on without it\n"

static sem_t in_stuck_write, leave_stuck_write;

/* cap (the first console) blocks on the record "first" until told. */
static void stuck_on_first(struct capture *c, const char *text, size_t len)
{
	(void)c;
	if (len >= 5 && strncmp(text, "first", 5) == 0) {
		sem_post(&in_stuck_write);
		while (sem_wait(&leave_stuck_write) != 0)
			;
	}
}

static void *print_first(void *arg)
{
	(void)arg;
	printk("first\n");
	return NULL;
}

/* A second console "other", and a thread stuck in cap's write of "first". */
static void start_stuck_first(pthread_t *th)
{
	sem_init(&in_stuck_write, 0, 0);
	sem_init(&leave_stuck_write, 0, 0);
	capture_init(&cap2, "other", 0);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	cap.on_write = stuck_on_first;
	assert_int_equal(pthread_create(th, NULL, print_first, NULL), 0);
	sem_wait(&in_stuck_write);
}

/* Let that write return; the thread finishes and is gone. */
static void end_stuck_first(pthread_t th)
{
	sem_post(&leave_stuck_write);
	pthread_join(th, NULL);
	cap.on_write = NULL;
	sem_destroy(&in_stuck_write);
	sem_destroy(&leave_stuck_write);
}

/*
 * A thread stuck in the first console's write: printk never waits for it;
 * after a second of the same write, the next printk takes the lock over and
 * the other console gets everything, with a notice; the stuck console is
 * not unregistered under its thread; when its write returns it prints what
 * it missed, each record once, in order.
 */
static void test_stuck_holder_taken_over(void **state)
{
	(void)state;
	pthread_t th;

	start_stuck_first(&th);

	uint64_t t0 = now_ms();

	printk("second\n");
	assert_true(now_ms() - t0 < 100);
	/* Not yet: the write has not lasted a second (the other console
	 * waits behind the first, as before). */
	assert_int_equal(pr_flush(0, 0), 0);
	usleep(1100 * 1000);
	printk("third\n");
	assert_string_equal(capture_text(&cap2), "first\nsecond\nthird\n" STUCK_NOTICE);

	/* The stuck console's state is its thread's: not unregistered,
	 * never counted as flushed. */
	assert_int_equal(pk_unregister_console(&cap.con), -EBUSY);
	assert_int_equal(pr_flush(20, 0), 0);

	end_stuck_first(th);
	/* The returning thread printed what its console missed. */
	assert_string_equal(capture_text(&cap), "first\nsecond\nthird\n" STUCK_NOTICE);
	printk("fourth\n");
	assert_int_equal(pr_flush(1000, 0), 1);
	assert_string_equal(capture_text(&cap), "first\nsecond\nthird\n" STUCK_NOTICE "fourth\n");
	assert_string_equal(capture_text(&cap2), "first\nsecond\nthird\n" STUCK_NOTICE "fourth\n");
}

/* The same with pr_flush as the one that takes over. */
static void test_stuck_holder_pr_flush(void **state)
{
	(void)state;
	pthread_t th;

	start_stuck_first(&th);
	printk("second\n");
	/* Waits, takes over after a second, prints to the other console;
	 * still 0: the stuck console is behind. */
	assert_int_equal(pr_flush(2500, 0), 0);
	assert_string_equal(capture_text(&cap2), "first\nsecond\n" STUCK_NOTICE);
	end_stuck_first(th);
	assert_int_equal(pr_flush(1000, 0), 1);
	assert_string_equal(capture_text(&cap), "first\nsecond\n" STUCK_NOTICE);
}

/* Threads printing while the first console stalls twice for over a second:
 * after the last flush, both consoles hold every record of the log exactly
 * once, in order, the notices included. */
#define STALL_THREADS 3
#define STALL_MSGS    300

static atomic_int stall_notices; /* the other console's takeover notices */

static void count_stall_notices(struct capture *c, const char *text, size_t len)
{
	(void)c;
	if (len >= 31 && strncmp(text, "printk: console [capture] stuck", 31) == 0)
		atomic_fetch_add(&stall_notices, 1);
}

/* The first stall lasts until another thread took the consoles over (half
 * a minute at most): a fixed 1.1 s could pass, under load, without anyone
 * seeing the write last the second a takeover needs. The second may come
 * while the stalled thread catches its console up, where nobody takes it
 * over: 1.1 s, and a second notice or none. */
static void stall_twice(struct capture *c, const char *text, size_t len)
{
	(void)c;
	if (len >= 7 && strncmp(text, "T0 0050", 7) == 0) {
		uint64_t t0 = now_ms();

		while (atomic_load(&stall_notices) == 0 && now_ms() - t0 < 30000)
			usleep(1000);
	} else if (len >= 7 && strncmp(text, "T1 0150", 7) == 0) {
		struct timespec d = { 1, 100 * 1000 * 1000 };

		nanosleep(&d, NULL);
	}
}

static void *stall_printer(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int j = 0; j < STALL_MSGS; j++) {
		printk("T%d %04d\n", id, j);
		usleep(5000);
	}
	return NULL;
}

static void test_stuck_holder_under_load(void **state)
{
	(void)state;
	pthread_t th[STALL_THREADS];

	capture_init(&cap2, "other", 0);
	atomic_store(&stall_notices, 0);
	cap2.on_write = count_stall_notices;
	assert_int_equal(pk_register_console(&cap2.con), 0);
	cap.on_write = stall_twice;
	for (int i = 0; i < STALL_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, stall_printer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < STALL_THREADS; i++)
		pthread_join(th[i], NULL);
	/* (the last stall may be taken over by this very flush) */
	assert_int_equal(pr_flush(120000, 0), 1);
	cap.on_write = NULL;

	struct pk_log *log = pk_printk_log();
	uint64_t next = pk_log_next_seq(log);
	static char want[sizeof(cap.buf)];
	size_t n = 0;
	int notices = 0;

	assert_int_equal(pk_log_first_seq(log), 0);
	for (uint64_t seq = 0; seq < next; seq++) {
		assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
		assert_true(n + rec.text_len + 1 < sizeof(want));
		memcpy(want + n, rec.text, rec.text_len);
		n += rec.text_len;
		want[n++] = '\n';
		notices += strncmp(rec.text, "printk: console [capture] stuck", 31) == 0;
	}
	want[n] = '\0';
	assert_int_equal(next, STALL_THREADS * STALL_MSGS + notices);
	assert_in_range(notices, 1, 2);
	assert_string_equal(capture_text(&cap), want);
	assert_string_equal(capture_text(&cap2), want);
}

/* At exit, a console stuck for good: the other consoles still get the last
 * words (exit takes the lock over), and exit does not hang. In a child;
 * the other console is its stdout. */
static int stuck_at_exit_child(void *arg)
{
	(void)arg;
	pthread_t th;
	struct console *out;

	sem_init(&in_stuck_write, 0, 0);
	sem_init(&leave_stuck_write, 0, 0); /* never posted */
	cap.on_write = stuck_on_first;
	if (pk_console_fd_create(&out, 1, "out") != 0 || pk_register_console(out) != 0)
		return 2;
	if (pthread_create(&th, NULL, print_first, NULL) != 0)
		return 3;
	sem_wait(&in_stuck_write);
	printk("last words\n");
	exit(0); /* pk_printk_exit() runs from atexit */
}

static void test_stuck_holder_at_exit(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(stuck_at_exit_child, NULL, 5000, &res);
	assert_string_equal(res.out, "first\nlast words\n" STUCK_NOTICE);
	child_result_free(&res);
}

/* ---- extended consoles ---- */

/* PK_CON_EXTENDED: each record whole, once final, in /dev/kmsg form, with
 * the dictionary; suppressed levels skipped; an open line waits. */
static void test_extended_console(void **state)
{
	(void)state;
	/* One clock reading per call, the continuation's included. */
	static const uint64_t ts[] = { 1291025000ull, 1500000000ull, 2000000999ull, 3000000000ull, 4000000000ull };
	static const char dict[] = "SUBSYSTEM=net\0DEVICE=+net:eth0";

	capture_init(&cap2, "ext", PK_CON_EXTENDED);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	test_clock_set(ts, 5);
	pr_info("Testing: ");
	assert_string_equal(capture_text(&cap2), ""); /* not final yet */
	assert_string_equal(capture_text(&cap), "Testing: "); /* text at once */
	pr_cont("PASSED\n");
	printk_emit(3, 6, dict, sizeof(dict) - 1, "link up\x01\\\n");
	printk(KERN_DEBUG "not printed\n");
	pr_err("two\nlines\n");
	assert_string_equal(capture_text(&cap2), "6,0,1291025,-;Testing: PASSED\n"
						 "30,1,2000000,-;link up\\x01\\x5c\n"
						 " SUBSYSTEM=net\n"
						 " DEVICE=+net:eth0\n"
						 "3,3,4000000,-;two\\x0alines\n");
	assert_string_equal(capture_text(&cap), "Testing: PASSED\nlink up\x01\\\ntwo\nlines\n");
}

/* A console with write_record gets the fields of each final record. */
static char recbuf[4096];
static size_t reclen;
static int rec_fail;

static int record_write(struct console *con, const struct pk_record *r)
{
	(void)con;
	if (rec_fail) {
		rec_fail--;
		return -EPIPE;
	}
	reclen += (size_t)snprintf(recbuf + reclen, sizeof(recbuf) - reclen, "%llu %u/%u %s %u [%s|",
				   (unsigned long long)r->seq, r->facility, r->level,
				   r->pid == (uint32_t)getpid() ? "me" : "other", r->dict_len, r->text);
	for (size_t i = 0; i < r->dict_len && reclen < sizeof(recbuf) - 1; i++)
		recbuf[reclen++] = r->dict[i] ? r->dict[i] : ';';
	reclen += (size_t)snprintf(recbuf + reclen, sizeof(recbuf) - reclen, "]\n");
	return 0;
}

static void test_record_console(void **state)
{
	(void)state;
	static const char dict[] = "A=1\0B=2";
	struct console rcon = { .name = "fields", .write_record = record_write };

	reclen = 0;
	rec_fail = 0;
	assert_int_equal(pk_register_console(&rcon), 0);
	pr_info("half ");
	assert_int_equal(reclen, 0);
	pr_cont("whole\n");
	printk_emit(3, 5, dict, sizeof(dict) - 1, "esc\x01 two\nlines\n");
	printk(KERN_DEBUG "suppressed\n");
	rec_fail = 3; /* three failed writes in a row disable it, with a notice */
	pr_info("lost 1\n");
	pr_info("lost 2\n");
	pr_info("lost 3\n");
	pr_info("not printed\n");
	recbuf[reclen] = '\0';
	assert_string_equal(recbuf, "0 0/6 me 0 [half whole|]\n"
				    "1 3/5 me 7 [esc\x01 two\nlines|A=1;B=2]\n");
	assert_false(rcon.flags & PK_CON_ENABLED);
	assert_non_null(strstr(capture_text(&cap), "printk: console [fields] disabled after 3 failed writes (error 32)\n"));
	assert_int_equal(pk_unregister_console(&rcon), 0);
}

/* ---- consoles with a thread of their own ---- */

static struct capture tcap;
static atomic_int tcap_writes, tcap_partial;

static sem_t tcap_gate;
static atomic_int tcap_gated;

static void threaded_on_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	if (atomic_load(&tcap_gated)) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += SLOW_WRITE_MS / 1000;
		while (sem_timedwait(&tcap_gate, &until) != 0 && errno == EINTR)
			;
	}

	if (len >= 9 && memcmp(text, "Testing: ", 9) == 0)
		atomic_store(&tcap_partial, 1);
	atomic_fetch_add(&tcap_writes, 1);
}

static void threaded_init(short flags)
{
	capture_init(&tcap, "threaded", PK_CON_THREADED | flags);
	tcap.on_write = threaded_on_write;
	atomic_store(&tcap_writes, 0);
	atomic_store(&tcap_partial, 0);
	assert_int_equal(pk_register_console(&tcap.con), 0);
}

/* printk never waits for a threaded console: its writes last until the
 * test lets them go (half a minute at most), three printk calls return
 * long before; pr_flush waits for it; the bytes are those the print loop
 * gives (prefix rules, open lines printed at once). */
static void test_threaded_console(void **state)
{
	(void)state;
	sem_init(&tcap_gate, 0, 0);
	atomic_store(&tcap_gated, 1);
	threaded_init(0);

	uint64_t t0 = now_ms();

	pr_info("one\n");
	pr_info("two\n");
	pr_info("three\n");
	assert_true(now_ms() - t0 < SLOW_WRITE_MS / 2);
	assert_string_equal(capture_text(&cap), "one\ntwo\nthree\n");
	atomic_store(&tcap_gated, 0);
	sem_post(&tcap_gate);
	assert_int_equal(pr_flush(60000, 0), 1);
	assert_string_equal(capture_text(&tcap), "one\ntwo\nthree\n");

	/* An open line reaches it before its end is written. */
	pr_info("Testing: ");
	for (int i = 0; i < 60000 && !atomic_load(&tcap_partial); i++)
		usleep(1000);
	assert_int_equal(atomic_load(&tcap_partial), 1);
	pr_cont("PASSED\n");
	pr_warn("after\n");
	assert_int_equal(pr_flush(60000, 0), 1);
	assert_string_equal(capture_text(&tcap), "one\ntwo\nthree\nTesting: PASSED\nafter\n");
	assert_int_equal(pk_unregister_console(&tcap.con), 0);
	assert_null(tcap.con.state);
	pr_info("gone\n");
	assert_string_equal(capture_text(&tcap), "one\ntwo\nthree\nTesting: PASSED\nafter\n");
	/* And once more: a console can come back with a new thread. */
	assert_int_equal(pk_register_console(&tcap.con), 0);
	pr_info("back\n");
	assert_int_equal(pr_flush(60000, 0), 1);
	assert_string_equal(capture_text(&tcap), "one\ntwo\nthree\nTesting: PASSED\nafter\nback\n");
	assert_int_equal(pk_unregister_console(&tcap.con), 0);
	sem_destroy(&tcap_gate);
}

/* Threads printing at once to a threaded extended console: every record
 * once, in seq order, after pr_flush. */
static void *threaded_burst(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int j = 0; j < 200; j++)
		printk("B%d %03d\n", id, j);
	return NULL;
}

static void test_threaded_extended_burst(void **state)
{
	(void)state;
	pthread_t th[3];

	threaded_init(PK_CON_EXTENDED);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, threaded_burst, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(pr_flush(5000, 0), 1);

	struct pk_log *log = pk_printk_log();
	const char *p = capture_text(&tcap);
	uint64_t next = pk_log_next_seq(log);

	assert_int_equal(next, 600);
	for (uint64_t seq = 0; seq < next; seq++) {
		unsigned long long got;
		char text[16];

		assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
		assert_int_equal(sscanf(p, "4,%llu,%*u,-;%15[^\n]\n", &got, text), 2);
		assert_int_equal(got, seq);
		assert_string_equal(text, rec.text);
		p = strchr(p, '\n') + 1;
	}
	assert_string_equal(p, "");
	assert_int_equal(pk_unregister_console(&tcap.con), 0);
}

/* At exit, a threaded console prints everything before the process ends;
 * one whose write never returns holds exit up for console_drain_ms only,
 * and says what it leaves. In children; their stdout is the threaded
 * console. Exit's wait is a deadline shared by all printer threads, so the
 * test never makes a working thread race it: the first child waits up to
 * a minute (exit returns once drained), the second lets exit begin only
 * once its working console printed everything (under load its thread may
 * get no CPU within the 300 ms the stuck one is given). */
static struct capture echo;
static atomic_int echo_lines;

static void echo_to_stdout(struct capture *c, const char *text, size_t len)
{
	c->len = 0;
	if (write(1, text, len) == (ssize_t)len && len && text[len - 1] == '\n')
		atomic_fetch_add(&echo_lines, 1);
}

static int threaded_exit_child(void *arg)
{
	struct console *out;
	int stuck = arg != NULL;

	if (!stuck) {
		if (pk_printk_configure("console_drain_ms=60000"))
			return 4;
		if (pk_console_fd_create(&out, 1, "out") != 0)
			return 2;
		out->flags |= PK_CON_THREADED;
		if (pk_register_console(out) != 0)
			return 3;
		for (int i = 0; i < 100; i++)
			printk("line %d\n", i);
		exit(0);
	}
	if (pk_printk_configure("console_drain_ms=300"))
		return 4;
	capture_init(&echo, "out", PK_CON_THREADED);
	echo.on_write = echo_to_stdout;
	if (pk_register_console(&echo.con) != 0)
		return 3;
	sem_init(&leave_stuck_write, 0, 0); /* never posted */
	threaded_init(0);
	tcap.on_write = stuck_on_first;
	printk("first\n");
	for (int i = 0; i < 100; i++)
		printk("line %d\n", i);

	uint64_t t0 = now_ms();

	while (atomic_load(&echo_lines) < 101)
		if (now_ms() - t0 > 60000)
			return 5;
		else
			usleep(1000);
	exit(0);
}

static void test_threaded_console_at_exit(void **state)
{
	(void)state;
	struct child_result res;
	char want[2048];
	size_t n = 0;

	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "line %d\n", i);
	run_child_ok(threaded_exit_child, NULL, 120000, &res);
	assert_string_equal(res.out, want);
	child_result_free(&res);

	char want_stuck[sizeof(want) + 256];

	snprintf(want_stuck, sizeof(want_stuck),
		 "first\n%sprintk: console [threaded] did not print its last 101 records within console_drain_ms=300 at exit\n",
		 want);
	run_child_ok(threaded_exit_child, (void *)1, 120000, &res);
	assert_string_equal(res.out, want_stuck);
	child_result_free(&res);
}

/* After fork the child's threaded console has a thread of its own. */
static int threaded_fork_child(void *arg)
{
	(void)arg;
	struct console *out;

	if (pk_console_fd_create(&out, 1, "out") != 0)
		return 2;
	out->flags |= PK_CON_THREADED;
	if (pk_register_console(out) != 0)
		return 3;
	printk("parent\n");
	if (pr_flush(60000, 0) != 1)
		return 4;

	pid_t pid = fork();

	if (pid == 0) {
		printk("child\n");
		_exit(pr_flush(60000, 0) == 1 ? 0 : 5);
	}

	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 6;
	return WEXITSTATUS(status);
}

static void test_threaded_console_after_fork(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(threaded_fork_child, NULL, 150000, &res);
	assert_string_equal(res.out, "parent\nchild\n");
	child_result_free(&res);
}

/*
 * Only threaded consoles: printk stores (deferred, for a literal format),
 * wakes the thread and returns; the thread formats what it reads. Each
 * round waits until the thread slept; the thread sleeps two minutes
 * without a wake-up (not the default second), so a lost wake-up shows as
 * a round that reaches the test's minute, which no load explains (timing
 * rounds against the second did: under load a woken thread can wait that
 * long for a CPU). The text is what eager formatting gives. In a child:
 * its consoles are its own.
 */
#define WAKE_WAIT_MS 60000

/* Up to WAKE_WAIT_MS for the thread's @target-th write; 0 if it came. */
static int wait_tcap_writes(int target, int spin)
{
	uint64_t t0 = now_ms();

	while (atomic_load(&tcap_writes) < target) {
		if (now_ms() - t0 > WAKE_WAIT_MS)
			return -1;
		if (!spin)
			usleep(100);
	}
	return 0;
}

static int threads_only_child(void *arg)
{
	(void)arg;
	char want[8192];
	size_t n = 0;

	pk_console_set_printer_idle_ms(2 * WAKE_WAIT_MS);
	pk_unregister_console(&cap.con);
	pk_unregister_console(pk_console_stderr());
	threaded_init(0);

	uint64_t deferred0 = pk_printk_deferred_here();

	for (int i = 0; i < 200; i++) {
		usleep(2000); /* the thread goes to sleep */
		pr_info("round %d of %s\n", i, "200");
		if (wait_tcap_writes(i + 1, 0))
			return 5;
		n += (size_t)snprintf(want + n, sizeof(want) - n, "round %d of 200\n", i);
	}
	if (pr_flush(WAKE_WAIT_MS, 0) != 1)
		return 2;
	if (strcmp(capture_text(&tcap), want))
		return 3;
	if (pk_printk_deferred_here() - deferred0 != 200)
		return 4;
	/* The next record right as the thread goes to sleep: the window
	 * between its last look and its announcement. */
	for (int i = 0; i < 3000; i++) {
		int target = atomic_load(&tcap_writes) + 1;

		pr_info("again %d\n", i);
		if (wait_tcap_writes(target, 1))
			return 7;
		for (volatile int spin = 0; spin < (i % 64) * 20; spin++)
			;
	}
	/* A synchronous console back: printk formats and prints at once. */
	capture_setup(&cap, 0);
	pr_info("sync %d\n", 1);
	if (strcmp(capture_text(&cap), "sync 1\n") || pk_printk_deferred_here() - deferred0 != 3200)
		return 6;
	return 0;
}

static void test_threads_only_store_and_wake(void **state)
{
	(void)state;
	struct child_result res;

	run_child_ok(threads_only_child, NULL, 4 * WAKE_WAIT_MS, &res);
	child_result_free(&res);
}

/* ---- filtered writers ---- */

static uint64_t now_ns(void);

/* A printer thread of the test's own: stops in its record right before
 * the commit until told to go on. */
static pthread_t pending_thread;
static _Thread_local int in_pending_thread;
static _Atomic int pending_armed;
static sem_t pending_in, pending_go;

static void stop_before_commit(enum prb_testpoint tp)
{
	if (tp == PRB_TP_BEFORE_COMMIT && in_pending_thread && atomic_exchange(&pending_armed, 0)) {
		sem_post(&pending_in);
		sem_wait(&pending_go);
	}
}

static void *store_pending(void *arg)
{
	in_pending_thread = 1;
	printk("%s", (const char *)arg);
	return NULL;
}

/* Start a thread that stores @text and stops before its commit. */
static void pending_start(const char *text)
{
	sem_init(&pending_in, 0, 0);
	sem_init(&pending_go, 0, 0);
	prb_set_testpoint_hook(stop_before_commit);
	atomic_store(&pending_armed, 1);
	assert_int_equal(pthread_create(&pending_thread, NULL, store_pending, (void *)text), 0);
	sem_wait(&pending_in);
}

static void pending_finish(void)
{
	sem_post(&pending_go);
	pthread_join(pending_thread, NULL);
	prb_set_testpoint_hook(NULL);
	sem_destroy(&pending_in);
	sem_destroy(&pending_go);
}

/* A line a console prints, stored behind a filtered record still being
 * written: the console waits for the record before it (as the kernel's
 * does), and the filtered record's writer prints the line once it has
 * committed its own: the consoles were not idle at its record. */
static void test_printed_behind_pending_filtered(void **state)
{
	(void)state;
	pr_info("before\n");
	pending_start(KERN_DEBUG "pending debug\n");
	printk(KERN_DEBUG "behind debug\n");
	pr_err("behind\n");
	assert_string_equal(capture_text(&cap), "before\n");
	pending_finish();
	assert_string_equal(capture_text(&cap), "before\nbehind\n");
	printk(KERN_DEBUG "after debug\n");
	pr_info("after\n");
	assert_string_equal(capture_text(&cap), "before\nbehind\nafter\n");
	assert_int_equal(next_seq(), 6);
}

/* The same with the pending record a printed one: its writer prints it and
 * what came behind it, filtered records skipped. */
static void test_filtered_behind_pending_printed(void **state)
{
	(void)state;
	pending_start("pending\n");
	for (int i = 0; i < 100; i++)
		printk(KERN_DEBUG "debug %d\n", i);
	assert_string_equal(capture_text(&cap), "");
	pr_err("last\n");
	assert_string_equal(capture_text(&cap), "");
	pending_finish();
	assert_string_equal(capture_text(&cap), "pending\nlast\n");
}

/* Two threads store filtered records as fast as they can for a while: no
 * call waits for the other thread's flood. A writer that goes through the
 * console lock (the idle mark was not where its record needed it) passes
 * the other's filtered records without reading them, so it catches up with
 * the other writer, which keeps it printing by its notes (C2); one that
 * read, and so formatted, each of them would stay as long as they came as
 * fast as it read them. */
#define FLOOD_THREADS 2
#define FLOOD_MS      6000 /* the longest printk waits for a preempted writer (1 s), and room to be preempted on a loaded machine */

static _Atomic int flood_filtered_stop;

static void *flood_filtered(void *arg)
{
	uint64_t *slowest = arg;

	for (int i = 0; !atomic_load(&flood_filtered_stop); i++) {
		uint64_t t0 = now_ns();

		printk(KERN_DEBUG "worker %d processed %s in %lu us\n", i, "request", (unsigned long)i);

		uint64_t dt = now_ns() - t0;

		if (dt > *slowest)
			*slowest = dt;
	}
	return NULL;
}

static void test_filtered_flood_never_waits(void **state)
{
	(void)state;
	pthread_t t[FLOOD_THREADS];
	uint64_t slowest[FLOOD_THREADS] = { 0 };
	struct timespec run = { FLOOD_MS / 1000, FLOOD_MS % 1000 * 1000000L };

	atomic_store(&flood_filtered_stop, 0);
	for (int i = 0; i < FLOOD_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, flood_filtered, &slowest[i]), 0);
	nanosleep(&run, NULL);
	pr_err("main\n");
	atomic_store(&flood_filtered_stop, 1);
	for (int i = 0; i < FLOOD_THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < FLOOD_THREADS; i++) {
		printf("slowest filtered printk of thread %d: %.3f ms\n", i, slowest[i] / 1e6);
		/* A call is microseconds; one held for the flood lasts it.
		 * Two thirds: a 1 s wait for a preempted writer plus 3 s of a
		 * loaded machine's preemption still pass. */
		assert_true(slowest[i] < FLOOD_MS * 1000000ull * 2 / 3);
	}

	/* A holder preempted while the flood wraps the log finds its position
	 * overwritten and says so, as the kernel does (filtered records
	 * count); nothing else comes before the line. */
	const char *text = capture_text(&cap);
	unsigned long dropped;
	int n = 0;

	while (sscanf(text, "** %lu printk messages dropped **\n%n", &dropped, &n) == 1 && n > 0) {
		text += n;
		n = 0;
	}
	assert_string_equal(text, "main\n");
}

/* Threads that mix filtered and printed lines: every printed line exactly
 * once, each thread's in order, no filtered one, nothing dropped. */
#define MIX_THREADS 4
#ifdef PRINTK_RING_SMALL_IDS
#define MIX_MSGS 800 /* the whole run fits the small build's 4096 descriptors and 128 KiB */
#else
#define MIX_MSGS 4000
#endif
#define MIX_EVERY 8

static pthread_barrier_t mix_barrier;

static void *mix_thread(void *arg)
{
	int id = (int)(intptr_t)arg;

	pthread_barrier_wait(&mix_barrier);
	for (int j = 0; j < MIX_MSGS; j++) {
		if (j % MIX_EVERY == 0)
			pr_err("T%d %d\n", id, j);
		else
			printk(KERN_DEBUG "d%d %d\n", id, j);
	}
	return NULL;
}

static void test_threads_mix_filtered_and_printed(void **state)
{
	(void)state;
	pthread_t t[MIX_THREADS];

	/* A log that holds the whole run: nothing may be overwritten. */
	capture_teardown(&cap);
	capture_setup(&cap, 4 << 20);
	pthread_barrier_init(&mix_barrier, NULL, MIX_THREADS);
	for (int i = 0; i < MIX_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, mix_thread, (void *)(intptr_t)i), 0);
	for (int i = 0; i < MIX_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&mix_barrier);

	int next[MIX_THREADS] = { 0 }, lines = 0;
	const char *p = capture_text(&cap);

	while (*p) {
		int id, j, n = 0;

		assert_int_equal(sscanf(p, "T%d %d\n%n", &id, &j, &n), 2);
		assert_true(n > 0 && id >= 0 && id < MIX_THREADS);
		assert_int_equal(j, next[id]);
		next[id] += MIX_EVERY;
		lines++;
		p += n;
	}
	assert_int_equal(lines, MIX_THREADS * MIX_MSGS / MIX_EVERY);
	assert_int_equal(next_seq(), MIX_THREADS * MIX_MSGS);
}

/* ---- several threads, a slow console ---- */

#define HO_THREADS 4
#ifdef PRINTK_RING_SMALL_IDS
#define HO_MSGS 900 /* the whole run must fit the small build's 4096 descriptors */
#else
#define HO_MSGS 2000
#endif

struct slow_console {
	struct console con;
	char *buf;
	size_t len, cap;
	uint64_t busy_ns;
	long writes;
};

static struct slow_console slow;
static _Thread_local int tl_wrote;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int slow_write(struct console *con, const char *text, size_t len)
{
	struct slow_console *s = (struct slow_console *)con;
	uint64_t t0 = now_ns();
	struct timespec d = { 0, 50 * 1000 };

	tl_wrote = 1;
	if (s->len + len <= s->cap) {
		memcpy(s->buf + s->len, text, len);
		s->len += len;
	}
	s->writes++;
	nanosleep(&d, NULL);
	s->busy_ns += now_ns() - t0;
	return 0;
}

struct ho_result {
	int id;
	uint64_t max_quiet_ns; /* slowest call that did not write */
	uint64_t max_any_ns;
	int calls_that_wrote;
};

static pthread_barrier_t ho_barrier;

static void *ho_thread(void *arg)
{
	struct ho_result *r = arg;

	pthread_barrier_wait(&ho_barrier);
	for (int j = 0; j < HO_MSGS; j++) {
		tl_wrote = 0;
		uint64_t t0 = now_ns();

		printk("T%d %04d\n", r->id, j);

		uint64_t dt = now_ns() - t0;

		if (dt > r->max_any_ns)
			r->max_any_ns = dt;
		if (tl_wrote)
			r->calls_that_wrote++;
		else if (dt > r->max_quiet_ns)
			r->max_quiet_ns = dt;
	}
	return NULL;
}

/* pr_flush() keeps to its timeout while another thread stores faster than
 * the console prints (its print loop would otherwise never run dry). */
static _Atomic int flood_stop;

static int crawl_write(struct console *con, const char *text, size_t len)
{
	(void)con, (void)text, (void)len;
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return 0;
}

static void *flood_thread(void *arg)
{
	(void)arg;
	uint64_t t0 = now_ms();

	for (int i = 0; !atomic_load(&flood_stop) && now_ms() - t0 < 20000; i++)
		printk("flood %d\n", i);
	return NULL;
}

static void test_pr_flush_bounded_under_flood(void **state)
{
	(void)state;
	/* Static, and every assertion comes after the clean-up: a failed one
	 * longjmps out of this frame, and a console left registered on a dead
	 * stack frame (or a flood thread still printing to it) crashes the
	 * teardown's walk of the console list with the console lock held, so
	 * every later test waits for that lock for ever. */
	static struct console crawl;
	pthread_t th;
	int r = 1;
	uint64_t took = 0; /* the longest call */

	crawl = (struct console){ .name = "crawl", .write_checked = crawl_write };
	assert_int_equal(pk_register_console(&crawl), 0);
	atomic_store(&flood_stop, 0);
	assert_int_equal(pthread_create(&th, NULL, flood_thread, NULL), 0);
	usleep(50 * 1000);

	/* The flood thread prints its own records whenever nobody else holds
	 * the lock: pr_flush() may take it at such a moment, find the console
	 * caught up and rightly return 1. Try again until a call meets the
	 * flood (the thread then stores faster than the console prints). */
	for (int i = 0; i < 50 && r == 1; i++) {
		uint64_t t0 = now_ms();

		r = pr_flush(200, 0);

		uint64_t t = now_ms() - t0;

		if (t > took)
			took = t;
		if (r == 1)
			usleep(1000);
	}

	atomic_store(&flood_stop, 1);
	pthread_join(th, NULL);

	int unreg = pk_unregister_console(&crawl);

	print_message("pr_flush(200) under a flood: %d after %llu ms\n", r, (unsigned long long)took);
	assert_true(took < 5000); /* the flood lasts 20 s */
	assert_int_equal(r, 0);
	assert_int_equal(unreg, 0);
}

static void test_handover_slow_console(void **state)
{
	(void)state;
	pthread_t th[HO_THREADS];
	struct ho_result res[HO_THREADS];
	struct pk_log *log;

	capture_teardown(&cap);
	capture_setup(&cap, 1 << 20);
	assert_int_equal(pk_unregister_console(&cap.con), 0);
	memset(&slow, 0, sizeof(slow));
	strcpy(slow.con.name, "slow");
	slow.con.write_checked = slow_write;
	slow.cap = 1 << 20;
	slow.buf = malloc(slow.cap);
	assert_non_null(slow.buf);
	assert_int_equal(pk_register_console(&slow.con), 0);
	log = pk_printk_log();

	pthread_barrier_init(&ho_barrier, NULL, HO_THREADS);
	for (int i = 0; i < HO_THREADS; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		res[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, ho_thread, &res[i]), 0);
	}
	for (int i = 0; i < HO_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&ho_barrier);

	/* Every printk returned; before any flush, every record is on the
	 * console exactly once, in seq order. */
	uint64_t first = pk_log_first_seq(log), next = pk_log_next_seq(log);

	assert_int_equal(first, 0);
	assert_int_equal(next, HO_THREADS * HO_MSGS);

	char *want = malloc(1 << 20);
	size_t n = 0;
	int last[HO_THREADS];

	assert_non_null(want);
	for (int i = 0; i < HO_THREADS; i++)
		last[i] = -1;
	for (uint64_t s = first; s < next; s++) {
		int t, j;

		assert_int_equal(pk_log_read(log, s, &rec, 0), 0);
		assert_int_equal(rec.seq, s);
		assert_int_equal(sscanf(rec.text, "T%d %d", &t, &j), 2);
		assert_in_range(t, 0, HO_THREADS - 1);
		assert_int_equal(j, last[t] + 1); /* per-thread order in the log */
		last[t] = j;
		memcpy(want + n, rec.text, rec.text_len);
		n += rec.text_len;
		want[n++] = '\n';
	}
	assert_int_equal(slow.len, n);
	assert_memory_equal(slow.buf, want, n);
	assert_int_equal(slow.writes, HO_THREADS * HO_MSGS);

	/* Nobody waited for the console lock: a call that found the console
	 * busy returned at once, although the console was busy for much
	 * longer (>= 8000 * 50 us). */
	uint64_t max_quiet = 0, max_any = 0;
	int never_wrote = 0;

	for (int i = 0; i < HO_THREADS; i++) {
		if (res[i].max_quiet_ns > max_quiet)
			max_quiet = res[i].max_quiet_ns;
		if (res[i].max_any_ns > max_any)
			max_any = res[i].max_any_ns;
		if (res[i].calls_that_wrote == 0)
			never_wrote++;
	}
	print_message("console busy %.1f ms; slowest non-printing printk %.3f ms; slowest printk %.1f ms; "
		      "threads that never wrote: %d\n",
		      slow.busy_ns / 1e6, max_quiet / 1e6, max_any / 1e6, never_wrote);
	assert_true(slow.busy_ns >= (uint64_t)HO_THREADS * HO_MSGS * 50000u);
	assert_true(max_quiet < slow.busy_ns / 4);

	assert_int_equal(pk_unregister_console(&slow.con), 0);
	free(want);
	free(slow.buf);
	slow.buf = NULL;
	assert_int_equal(pk_register_console(&cap.con), 0);
}

/* ---- colour ---- */

static void test_color(void **state)
{
	(void)state;
	static const uint64_t ts[] = { 1000000000ull };
	static const char *const text_on[8] = {
		"\033[7m\033[31m", "\033[7m\033[31m", "\033[1m\033[31m", "\033[31m", "\033[1m", "", "", "",
	};
	static char want[4096];
	size_t n = 0;

	pk_set_printk_time(1);
	pk_set_ignore_loglevel(1);
	test_clock_set(ts, 1);
	capture_init(&cap2, "color", PK_CON_COLOR);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	print_all_levels();
	for (int i = 0; i < 8; i++)
		n += (size_t)snprintf(want + n, sizeof(want) - n, "\033[32m[    1.000000]\033[0m %s%d%s\n", text_on[i],
				      i, *text_on[i] ? "\033[0m" : "");
	assert_string_equal(capture_text(&cap2), want);
	/* The plain console has no escapes. */
	assert_null(strchr(capture_text(&cap), '\033'));

	/* Each line of a record is coloured on its own; without a prefix, only
	 * the text is. */
	capture_clear(&cap2);
	pr_err("one\ntwo\n");
	pk_set_printk_time(0);
	pr_err("bare\n");
	pr_info("info\n");
	assert_string_equal(capture_text(&cap2), "\033[32m[    1.000000]\033[0m \033[31mone\033[0m\n"
						 "\033[32m[    1.000000]\033[0m \033[31mtwo\033[0m\n"
						 "\033[31mbare\033[0m\n"
						 "info\n");
}

/* PK_CON_ESCAPE: control bytes a terminal would act on print as \xNN;
 * tab, UTF-8 text and the line structure stay as they are. The plain
 * console gets the raw bytes, as the kernel's console does. */
static void test_escape(void **state)
{
	(void)state;
	pk_set_printk_time(0);
	capture_init(&cap2, "esc", PK_CON_ESCAPE);
	assert_int_equal(pk_register_console(&cap2.con), 0);
	pr_info("a\033[31mb\a\r\x7f|\xc2\x9b|\xc2\xa0|\t|\xc3\xa9|\\\n");
	pr_info("two\nli\x01nes\n");
	pr_info("open\x1b");
	pr_cont("]0;title\a\n");
	assert_string_equal(capture_text(&cap2), "a\\x1b[31mb\\x07\\x0d\\x7f|\\xc2\\x9b|\xc2\xa0|\t|\xc3\xa9|\\\n"
						 "two\nli\\x01nes\n"
						 "open\\x1b]0;title\\x07\n");
	assert_string_equal(capture_text(&cap), "a\033[31mb\a\r\x7f|\xc2\x9b|\xc2\xa0|\t|\xc3\xa9|\\\n"
						"two\nli\x01nes\n"
						"open\x1b]0;title\a\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_console_loglevel_filter, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_suppressed_between_printed, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_merged_lines_pass_idle_consoles, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_filtered_only_then_printed, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_set_console_loglevel_range, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_shared_loglevel, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_ignore_loglevel, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_silent_and_verbose, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_time_prefix, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_caller_prefix, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_caller_prefix_every_line, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_printbuffer_replay, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_printbuffer_replay_after_wrap, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_printbuffer_replay_open_line, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_register_errors, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_two_consoles, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_signature_write, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_recursion, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_notice, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_notice_weight, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_failing_console_disabled, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_disabled_console_catches_up, setup_capture,
						teardown),
		cmocka_unit_test_setup_teardown(test_failures_reset_by_success, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_and_flush, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_pr_flush_timeout, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_inside_console_write, setup_capture,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel_inside_console_release, setup_capture,
						teardown),
		cmocka_unit_test_setup_teardown(test_stuck_holder_taken_over, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_holder_pr_flush, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_holder_under_load, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_holder_at_exit, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_extended_console, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_record_console, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threaded_console, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threaded_extended_burst, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threaded_console_at_exit, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threaded_console_after_fork, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threads_only_store_and_wake, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_handover_slow_console, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_pr_flush_bounded_under_flood, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_printed_behind_pending_filtered, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_filtered_behind_pending_printed, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_filtered_flood_never_waits, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_threads_mix_filtered_and_printed, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_color, setup_capture, teardown),
		cmocka_unit_test_setup_teardown(test_escape, setup_capture, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
