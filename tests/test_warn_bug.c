// SPDX-License-Identifier: MIT
/*
 * test_warn_bug.c - WARN*, BUG* and the crash report's trace:
 *   - WARN_ON returns its condition and prints the kernel's report line by
 *     line (patterns only where ids, addresses and offsets vary), each
 *     record at the kernel's level; a later report shows the W taint;
 *     (gcc moves an unlikely branch to a ".cold" part, named so in traces);
 *   - WARN_ON as a function's last statement still shows that function;
 *   - WARN prints its message between the cut line and the WARNING line;
 *   - dump_stack_lvl(KERN_ERR) stores every line at level 3;
 *   - WARN_ONCE / WARN_ON_ONCE print once per call site and return the
 *     condition every time;
 *   - BUG_ON(0) does nothing; BUG() in a child dies of SIGABRT after the
 *     oops report with its trace and the panic lines, and the dumper ran
 *     for the oops and the panic;
 *   - a SIGSEGV inside a signal handler, with the crash handler installed,
 *     is reported with a Call Trace that starts at the faulting function
 *     and goes on through the signal frame to the code that raised it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

#define CHILD_TIMEOUT_MS 15000
#define BARRIER()	 __asm__ volatile("" ::: "memory")

int wb_warn_on(int cond);
int wb_warn_msg(int cond);
int wb_warn_once(int cond);
int wb_warn_on_once(int cond);
void wb_bug(int cond);
void wb_fault(void);
void wb_raiser(void);
void wb_warn_last(int cond);

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

__attribute__((noinline)) int wb_warn_on(int cond)
{
	int r = WARN_ON(cond > 1);

	BARRIER();
	return r;
}

__attribute__((noinline)) int wb_warn_msg(int cond)
{
	int r = WARN(cond, "frobnicator %d out of range\n", cond);

	BARRIER();
	return r;
}

__attribute__((noinline)) int wb_warn_once(int cond)
{
	int r = WARN_ONCE(cond, "once: %d\n", cond);

	BARRIER();
	return r;
}

__attribute__((noinline)) int wb_warn_on_once(int cond)
{
	int r = WARN_ON_ONCE(cond);

	BARRIER();
	return r;
}

static void test_warn_on_layout(void **state)
{
	(void)state;
	uint64_t first = next_seq();

	assert_int_equal(wb_warn_on(1), 0);
	assert_string_equal(capture_text(&cap), "");
	assert_int_equal(wb_warn_on(7), 1);
	assert_match(capture_text(&cap), "------------[ cut here ]------------\n"
					 "WARNING: CPU: 0 PID: # at " __FILE__ ":# wb_warn_on*+0x%/0x%\n"
					 "CPU: 0 UID: # PID: # Comm: * Not tainted libprintk *\n"
					 "Call Trace:\n"
					 " <TASK>\n"
					 " wb_warn_on*+0x%/0x%\n"
					 " test_warn_on_layout+0x%/0x%\n"
					 "*"
					 " </TASK>\n"
					 "---[ end trace 0000000000000000 ]---\n");
	/* The levels: warning for the kernel's pr_warn lines, the default
	 * (4 here) for the task line and the trace. */
	uint64_t end = next_seq();

	for (uint64_t seq = first; seq < end; seq++) {
		read_at(seq);
		assert_int_equal(rec.level, 4);
	}

	/* The thread is tainted now. */
	capture_clear(&cap);
	assert_int_equal(wb_warn_on(2), 1);
	assert_match(capture_text(&cap), "------------[ cut here ]------------\n"
					 "WARNING: *\n"
					 "CPU: 0 UID: # PID: # Comm: * Tainted: G        W           libprintk *\n"
					 "Tainted: [W]=WARN\n"
					 "Call Trace:\n*");
}

/* WARN_ON as a function's last statement: no tail call may drop the
 * function's frame from its own report. */
__attribute__((noinline)) void wb_warn_last(int cond)
{
	WARN_ON(cond);
}

static void test_warn_in_tail_position(void **state)
{
	(void)state;
	wb_warn_last(1);
	assert_match(capture_text(&cap), "------------[ cut here ]------------\n"
					 "WARNING: CPU: 0 PID: # at " __FILE__ ":# wb_warn_last*+0x%/0x%\n"
					 "CPU: *\n"
					 "Call Trace:\n"
					 " <TASK>\n"
					 " wb_warn_last*+0x%/0x%\n"
					 " test_warn_in_tail_position+0x%/0x%\n"
					 "*");
}

static void test_warn_message(void **state)
{
	(void)state;
	assert_int_equal(wb_warn_msg(0), 0);
	assert_string_equal(capture_text(&cap), "");
	assert_int_equal(wb_warn_msg(3), 1);
	assert_match(capture_text(&cap), "------------[ cut here ]------------\n"
					 "frobnicator 3 out of range\n"
					 "WARNING: CPU: 0 PID: # at " __FILE__ ":# wb_warn_msg*+0x%/0x%\n"
					 "CPU: *\n"
					 "Call Trace:\n"
					 " <TASK>\n"
					 " wb_warn_msg*+0x%/0x%\n"
					 " test_warn_message+0x%/0x%\n"
					 "*"
					 "---[ end trace 0000000000000000 ]---\n");
}

static void test_warn_message_level(void **state)
{
	(void)state;
	uint64_t first = next_seq();

	assert_int_equal(WARN(1, KERN_ERR "bad thing\n"), 1);
	read_at(first + 1);
	assert_string_equal(rec.text, "bad thing");
	assert_int_equal(rec.level, 3);

	/* With another default level: the kernel's pr_warn lines stay at 4,
	 * its KERN_DEFAULT ones (a bare WARN_ON's cut line, the task line and
	 * the trace) move; WARN's cut line is pr_warn. */
	pk_set_default_message_loglevel(5);
	first = next_seq();
	assert_int_equal(wb_warn_on(3), 1);
	uint64_t end = next_seq();
	static const char *const want[][2] = { { "------------[ cut here ]------------", "5" },
					       { "WARNING: ", "4" },
					       { "CPU: 0 ", "5" },
					       { "Tainted: [W]=WARN", "5" },
					       { "Call Trace:", "5" },
					       { " <TASK>", "5" },
					       { " wb_warn_on", "5" },
					       { "---[ end trace", "4" } };
	for (uint64_t seq = first; seq < end; seq++) {
		read_at(seq);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strncmp(rec.text, want[i][0], strlen(want[i][0])) == 0)
				assert_int_equal(rec.level, want[i][1][0] - '0');
	}
	first = next_seq();
	assert_int_equal(wb_warn_msg(2), 1);
	read_at(first);
	assert_string_equal(rec.text, "------------[ cut here ]------------");
	assert_int_equal(rec.level, 4);
	read_at(first + 1);
	assert_int_equal(rec.level, 5); /* the message: no header, the default */
	pk_set_default_message_loglevel(4);
}

static void test_dump_stack_lvl(void **state)
{
	(void)state;
	uint64_t first = next_seq();

	dump_stack_lvl(KERN_ERR);
	uint64_t end = next_seq();

	assert_true(end - first >= 4); /* task line, Call Trace, <TASK>, </TASK> */
	for (uint64_t seq = first; seq < end; seq++) {
		read_at(seq);
		assert_int_equal(rec.level, 3);
	}
	read_at(end - 1);
	assert_string_equal(rec.text, " </TASK>");
}

static void test_warn_once(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wb_warn_once(0), 0);
		assert_int_equal(wb_warn_once(5), 1);
		assert_int_equal(wb_warn_on_once(0), 0);
		assert_int_equal(wb_warn_on_once(9), 1);
	}
	const char *text = capture_text(&cap);

	assert_int_equal(count(text, "------------[ cut here ]------------\n"), 2);
	assert_int_equal(count(text, "once: 5\n"), 1);
	assert_int_equal(count(text, " wb_warn_once"), 2); /* WARNING line, frame */
	assert_int_equal(count(text, " wb_warn_on_once"), 2);
	assert_int_equal(count(text, "---[ end trace 0000000000000000 ]---\n"), 2);
}

/* ---- in children ---- */

static char dump_path[64];

static void append_file(const char *text, size_t len)
{
	int fd = open(dump_path, O_WRONLY | O_APPEND);

	if (fd >= 0) {
		if (write(fd, text, len) < 0)
			abort();
		close(fd);
	}
}

static void dumper(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "reason=%s\n", kmsg_dump_reason_str(reason));

	(void)d;
	append_file(line, (size_t)n);
}

static struct kmsg_dumper the_dumper = { .dump = dumper };

__attribute__((noinline)) void wb_bug(int cond)
{
	BUG_ON(cond == 1);
	if (cond == 2)
		BUG();
	BARRIER();
}

static int bug_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	kmsg_dump_register(&the_dumper);
	wb_bug(0); /* BUG_ON(0): nothing */
	pr_info("still here\n");
	wb_bug(2);
	return 0;
}

static int setup_dump(void **state)
{
	(void)state;
	test_temp_file(dump_path, "/tmp/pk_bugXXXXXX");
	return 0;
}

static int teardown_dump(void **state)
{
	(void)state;
	unlink(dump_path);
	return 0;
}

static void test_bug_aborts(void **state)
{
	(void)state;
	struct child_result res;

	run_child(bug_child, NULL, CHILD_TIMEOUT_MS, &res);
	assert_false(res.timed_out);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGABRT);
	assert_match(res.out, "still here\n"
			      "------------[ cut here ]------------\n"
			      "kernel BUG at " __FILE__ ":#!\n"
			      "Oops: invalid opcode: 0000 [*1] PREEMPT SMP\n" /* "[#1]" */
			      "CPU: 0 UID: # PID: # Comm: *\n"
			      "Call Trace:\n"
			      " <TASK>\n"
			      " wb_bug*+0x%/0x%\n"
			      " bug_child+0x%/0x%\n"
			      "*"
			      " </TASK>\n"
			      "---[ end trace 0000000000000000 ]---\n"
			      "Kernel panic - not syncing: Fatal exception\n"
			      "---[ end Kernel panic - not syncing: Fatal exception ]---\n");
	assert_file_equal(dump_path, "reason=Oops\nreason=Panic\n");
	child_result_free(&res);
}

static int *volatile null_ptr;

__attribute__((noinline)) NO_SANITIZE_NULL void wb_fault(void)
{
	*null_ptr = 1;
	BARRIER();
}

static void usr1_crashes(int sig)
{
	(void)sig;
	wb_fault();
	BARRIER();
}

__attribute__((noinline)) void wb_raiser(void)
{
	raise(SIGUSR1);
	BARRIER();
}

static int crash_in_handler_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	signal(SIGUSR1, usr1_crashes);
	if (pk_crash_handler_install())
		return 3;
	wb_raiser();
	return 0;
}

static void test_crash_in_signal_handler(void **state)
{
	(void)state;
	struct child_result res;

#ifdef PRINTK_TSAN
	/* Skipped under TSan: it runs a program's handler for an asynchronous
	 * signal later, from its own code, with every signal blocked, so the
	 * fault in the handler finds SIGSEGV blocked and the kernel kills the
	 * process at once, before any handler runs. The plain and ASan builds
	 * run it. */
	skip();
#endif
	run_child(crash_in_handler_child, NULL, CHILD_TIMEOUT_MS, &res);
	assert_false(res.timed_out);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	/* The faulting function first, at its exact pc, then the handler, then
	 * (past the signal frame and raise()'s libc frames) the raiser. */
	assert_match(res.out, "BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n"
			      "Call Trace:\n"
			      " <TASK>\n"
			      " wb_fault+0x%/0x%\n"
			      " usr1_crashes+0x%/0x%\n"
			      "*"
			      " wb_raiser+0x%/0x%\n"
			      " crash_in_handler_child+0x%/0x%\n"
			      "*"
			      " </TASK>\n");
	child_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_warn_on_layout, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_warn_message, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_warn_in_tail_position, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_warn_message_level, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dump_stack_lvl, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_warn_once, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_bug_aborts, setup_dump, teardown_dump),
		cmocka_unit_test(test_crash_in_signal_handler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
