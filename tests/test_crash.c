// SPDX-License-Identifier: MIT
/*
 * test_crash.c - panic() and the fatal-signal handler, each in a forked
 * child judged from outside (how it died, what reached stderr, what the
 * dumpers wrote):
 *   - panic(): dies of SIGABRT; stderr holds the earlier records, the open
 *     line ended, the panic line and the end marker; a dumper ran with
 *     reason Panic and saw the log; with the crash handler installed the
 *     abort() is not reported a second time;
 *   - panic() while another thread is stuck in a console write holding the
 *     console: the crash-safe stderr console is taken over after the wait;
 *   - SIGSEGV right after a partial printk: dies of SIGSEGV (re-raised),
 *     stderr shows the open line then the BUG line, the file dumper's file
 *     holds the records including the open line marked partial; after
 *     lines no console prints (in a lane): they come before the report;
 *   - chaining: the program's own handler runs after the report (exit 42),
 *     with the fault's siginfo; a handler that returns keeps the program
 *     going and each signal is reported; uninstall restores it;
 *   - stack overflow is reported from the alternate stack;
 *   - a crash inside a console write: the BUG line still reaches stderr;
 *   - a crash in another thread; abort().
 * Under the sanitizers each child first resets the five signals to SIG_DFL,
 * replacing the runtime's own handlers, so that "the previous disposition"
 * is the default one in every build.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "capture.h"
#include "testutil.h"

#define CHILD_TIMEOUT_MS 15000

static struct capture cap;
static int *volatile null_ptr;

static NO_SANITIZE_NULL void store_to_null(int v)
{
	*null_ptr = v;
}
static char dump_path[64];

static int setup(void **state)
{
	(void)state;
	capture_setup(&cap, 0);
	test_temp_file(dump_path, "/tmp/pk_crashXXXXXX");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(dump_path);
	capture_teardown(&cap);
	return 0;
}

/* The fatal-signal report's call trace, after its BUG line. */
#define TRACE "Call Trace:\n <TASK>\n*\n </TASK>\n"

static void run(int (*fn)(void *), struct child_result *res)
{
	run_child(fn, NULL, CHILD_TIMEOUT_MS, res);
	assert_false(res->timed_out);
}

/* ---- panic ---- */

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_APPEND);

	if (fd >= 0) {
		if (write(fd, text, len) < 0)
			abort();
		close(fd);
	}
}

static void panic_dump(struct kmsg_dumper *d, enum kmsg_dump_reason reason)
{
	struct kmsg_dump_iter it;
	char buf[2048];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "reason=%s\n", kmsg_dump_reason_str(reason));
	size_t len;

	(void)d;
	kmsg_dump_rewind(&it);
	kmsg_dump_get_buffer(&it, false, buf + n, sizeof(buf) - n, &len);
	write_file(dump_path, buf, n + len);
}

static struct kmsg_dumper panic_dumper = { .dump = panic_dump };

static int panic_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	kmsg_dump_register(&panic_dumper);
	pr_info("before panic\n");
	pr_info("partial ");
	panic("the frobnozzle broke: %d\n", 42);
}

static void test_panic(void **state)
{
	(void)state;
	struct child_result res;

	run(panic_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGABRT);
	assert_string_equal(res.out,
			    "before panic\n"
			    "partial \n"
			    "Kernel panic - not syncing: the frobnozzle broke: 42\n"
			    "---[ end Kernel panic - not syncing: the frobnozzle broke: 42 ]---\n");
	assert_file_equal(dump_path, "reason=Panic\n"
				     "before panic\n"
				     "partial \n"
				     "Kernel panic - not syncing: the frobnozzle broke: 42\n");
	child_result_free(&res);
}

/* With the crash handler installed, panic's abort() is not a second report. */
static int panic_with_handler_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	if (pk_crash_handler_install())
		return 10;
	panic("with the handler");
}

static void test_panic_with_crash_handler(void **state)
{
	(void)state;
	struct child_result res;

	run(panic_with_handler_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGABRT);
	assert_string_equal(res.out,
			    "Kernel panic - not syncing: with the handler\n"
			    "---[ end Kernel panic - not syncing: with the handler ]---\n");
	child_result_free(&res);
}

/* Another thread holds the console lock forever, inside a console write. */
static sem_t stuck_entered;

static int stuck_write(struct console *con, const char *text, size_t len)
{
	(void)con;
	(void)text;
	(void)len;
	sem_post(&stuck_entered);
	for (;;)
		pause();
	return 0;
}

static struct console stuck_console = {
	.name = "stuck", .write_checked = stuck_write, .flags = PK_CON_ENABLED
};

static void *stuck_printer(void *arg)
{
	(void)arg;
	pr_info("stuck in a console\n");
	return NULL;
}

static int panic_takeover_child(void *arg)
{
	pthread_t th;

	(void)arg;
	test_crash_child_reset();
	sem_init(&stuck_entered, 0, 0);
	pk_register_console(&stuck_console); /* after stderr: stderr prints first */
	pthread_create(&th, NULL, stuck_printer, NULL);
	sem_wait(&stuck_entered);
	pr_info("while stuck\n"); /* stored; the holder would print it, but it is stuck */
	panic("the holder does not let go");
}

static void test_panic_takes_over_console(void **state)
{
	(void)state;
	struct child_result res;
	uint64_t t0 = now_ms();

	run(panic_takeover_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGABRT);
	assert_string_equal(res.out,
			    "stuck in a console\n"
			    "while stuck\n"
			    "Kernel panic - not syncing: the holder does not let go\n"
			    "printk: console [stuck] stuck in a write for over 1000 ms: the others go on "
			    "without it\n"
			    "---[ end Kernel panic - not syncing: the holder does not let go "
			    "]---\n");
	/* panic's pr_flush takes the lock over after a second in the same
	 * write; the emergency flush leaves the stuck console alone. */
	assert_true(now_ms() - t0 < 10000);
	child_result_free(&res);
}

/* ---- the fatal-signal handler ---- */

/* @arg non-NULL: stderr is printed by a thread of its own, which the crash
 * handler prints too, the open line and the report included. */
static int segv_child(void *arg)
{
	struct kmsg_dumper *d;

	test_crash_child_reset();
	if (arg) {
		pk_unregister_console(pk_console_stderr());
		pk_console_stderr()->flags |= PK_CON_THREADED;
		if (pk_register_console(pk_console_stderr()))
			return 9;
	}
	if (pk_kmsg_dump_file_create(&d, dump_path) || kmsg_dump_register(d))
		return 10;
	if (pk_crash_handler_install())
		return 11;
	pr_info("first line\n");
	pr_info("testing the frobnozzle ...");
	store_to_null(1);
	return 12;
}

static void check_segv(void *threaded)
{
	struct child_result res;

	run_child(segv_child, threaded, CHILD_TIMEOUT_MS, &res);
	assert_false(res.timed_out);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	assert_match(res.out, "first line\n"
			      "testing the frobnozzle ...\n"
			      "BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n" TRACE);
	/* The whole log in kmsg format, the open line marked. */
	char *dump = test_slurp(dump_path, NULL);

	assert_non_null(dump);
	assert_match(dump,
		     "6,0,#,-;first line\n"
		     "6,1,#,-,partial;testing the frobnozzle ...\n"
		     "0,2,#,-;BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n"
		     "0,3,#,-;Call Trace:\n0,4,#,-; <TASK>\n*\n0,#,#,-; </TASK>\n");
	free(dump);
	child_result_free(&res);
}

static void test_segv_after_partial_printk(void **state)
{
	(void)state;
	check_segv(NULL);
}

static void test_segv_threaded_console(void **state)
{
	(void)state;
	check_segv((void *)1);
}

/* Lines no console prints wait in the thread's lane (lanes are on by
 * default): the crash report, stored after them, comes after them in the
 * log too, not before (the report merges the lanes first). */
static int segv_filtered_child(void *arg)
{
	struct kmsg_dumper *d;

	(void)arg;
	test_crash_child_reset();
	pk_set_console_loglevel(1);
	if (pk_kmsg_dump_file_create(&d, dump_path) || kmsg_dump_register(d))
		return 10;
	if (pk_crash_handler_install())
		return 11;
	for (int i = 0; i < 3; i++)
		pr_info("filtered %d\n", i);
	store_to_null(1);
	return 12;
}

static void test_segv_after_filtered_lines(void **state)
{
	(void)state;
	struct child_result res;

	run_child(segv_filtered_child, NULL, CHILD_TIMEOUT_MS, &res);
	assert_false(res.timed_out);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	char *dump = test_slurp(dump_path, NULL);

	assert_non_null(dump);
	assert_match(dump,
		     "6,0,#,-;filtered 0\n6,1,#,-;filtered 1\n6,2,#,-;filtered 2\n"
		     "0,3,#,-;BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n"
		     "0,4,#,-;Call Trace:\n0,5,#,-; <TASK>\n*\n0,#,#,-; </TASK>\n");
	free(dump);
	child_result_free(&res);
}

/* The program had its own handler: it runs after our report, with the
 * fault's siginfo. */
static void program_handler(int sig, siginfo_t *si, void *uctx)
{
	static const char ok[] = "program handler: SIGSEGV at NULL\n";
	static const char bad[] = "program handler: wrong siginfo\n";

	(void)uctx;
	if (sig == SIGSEGV && si && si->si_addr == NULL) {
		if (write(2, ok, sizeof(ok) - 1) < 0)
			_exit(1);
	} else if (write(2, bad, sizeof(bad) - 1) < 0) {
		_exit(1);
	}
	_exit(42);
}

static int chain_child(void *arg)
{
	struct sigaction sa;

	(void)arg;
	test_crash_child_reset();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = program_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (pk_crash_handler_install())
		return 11;
	pr_info("chained\n");
	store_to_null(1);
	return 12;
}

static void test_chains_to_program_handler(void **state)
{
	(void)state;
	struct child_result res;

	run(chain_child, &res);
	assert_true(res.exited);
	assert_int_equal(res.status, 42);
	assert_match(res.out, "chained\n"
			      "BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n" TRACE
			      "program handler: SIGSEGV at NULL\n");
	child_result_free(&res);
}

/* A program handler that returns: the program goes on, every signal is
 * reported; after uninstall the program's handler is back alone. */
static volatile sig_atomic_t fpe_count;

static void counting_handler(int sig)
{
	(void)sig;
	fpe_count++;
}

static int returning_handler_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	signal(SIGFPE, counting_handler);
	if (pk_crash_handler_install())
		return 11;
	raise(SIGFPE);
	raise(SIGFPE);
	pk_crash_handler_uninstall();
	raise(SIGFPE);
	pr_info("still running\n");
	return fpe_count;
}

static void test_returning_program_handler(void **state)
{
	(void)state;
	struct child_result res;

	run(returning_handler_child, &res);
	assert_true(res.exited);
	assert_int_equal(res.status, 3);
	assert_match(res.out, "BUG: SIGFPE (signal 8) sent by pid # in pid # tid #\n" TRACE
			      "BUG: SIGFPE (signal 8) sent by pid # in pid # tid #\n" TRACE
			      "still running\n");
	child_result_free(&res);
}

/* Stack overflow: only the alternate stack can run the handler. */
static volatile int never;

static int recurse(int depth)
{
	volatile char pad[512];

	pad[0] = (char)depth;
	if (never)
		return pad[0];
	return recurse(depth + 1) + pad[0];
}

static int overflow_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	if (pk_crash_handler_install())
		return 11;
	pr_info("about to overflow\n");
	return recurse(0);
}

static void test_stack_overflow(void **state)
{
	(void)state;
	struct child_result res;

#ifdef PRINTK_TSAN
	/* Skipped under TSan: every function entry calls into the TSan runtime,
	 * so the overflow often lands inside it (TraceSwitchPartImpl, holding
	 * its trace semaphore), and the first instrumented function entry in
	 * the handler then waits for that semaphore forever - a deadlock of
	 * the sanitizer, seen with gdb, not of libprintk. The plain and ASan
	 * builds run it. */
	skip();
#endif
	run(overflow_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	assert_match(res.out, "about to overflow\n"
			      "BUG: SIGSEGV (signal 11) at address 0x% in pid # tid #\n" TRACE);
	child_result_free(&res);
}

/* A console whose write faults: the crashing thread holds the console lock;
 * the handler takes the consoles over and stderr still gets the BUG line. */
static int crashing_write(struct console *con, const char *text, size_t len)
{
	(void)con;
	(void)text;
	(void)len;
	store_to_null(1);
	return 0;
}

static struct console bad_console = {
	.name = "bad", .write_checked = crashing_write, .flags = PK_CON_ENABLED
};

static int console_crash_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	if (pk_crash_handler_install())
		return 11;
	pr_info("before the bad console\n");
	pk_register_console(&bad_console);
	pr_info("this kills the bad console\n");
	return 12;
}

static void test_crash_inside_console_write(void **state)
{
	(void)state;
	struct child_result res;

	run(console_crash_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	assert_match(res.out, "before the bad console\n"
			      "this kills the bad console\n"
			      "BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n" TRACE);
	child_result_free(&res);
}

/* A crash in a thread other than the one that installed the handler. */
static void *faulting_thread(void *arg)
{
	(void)arg;
	pr_info("thread about to fault\n");
	store_to_null(2);
	return NULL;
}

static int thread_crash_child(void *arg)
{
	pthread_t th;

	(void)arg;
	test_crash_child_reset();
	if (pk_crash_handler_install())
		return 11;
	pthread_create(&th, NULL, faulting_thread, NULL);
	pthread_join(th, NULL);
	return 12;
}

static void test_crash_in_other_thread(void **state)
{
	(void)state;
	struct child_result res;

	run(thread_crash_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGSEGV);
	assert_match(res.out, "thread about to fault\n"
			      "BUG: SIGSEGV (signal 11) at address 0x0 in pid # tid #\n" TRACE);
	child_result_free(&res);
}

static int abort_child(void *arg)
{
	(void)arg;
	test_crash_child_reset();
	if (pk_crash_handler_install())
		return 11;
	pr_info("calling abort");
	abort();
}

static void test_abort(void **state)
{
	(void)state;
	struct child_result res;

	run(abort_child, &res);
	assert_true(res.signaled);
	assert_int_equal(res.sig, SIGABRT);
	assert_match(res.out, "calling abort\n"
			      "BUG: SIGABRT (signal 6) sent by pid # in pid # tid #\n" TRACE);
	child_result_free(&res);
}

/* ---- install / uninstall, in process ---- */

static void test_install_uninstall(void **state)
{
	(void)state;
	struct sigaction before, during, after;
	stack_t ss;

	assert_int_equal(sigaction(SIGBUS, NULL, &before), 0);
	assert_int_equal(pk_crash_handler_install(), 0);
	assert_int_equal(pk_crash_handler_install(), 0); /* idempotent */
	assert_int_equal(sigaction(SIGBUS, NULL, &during), 0);
	assert_true(during.sa_flags & SA_SIGINFO);
	assert_true(during.sa_flags & SA_ONSTACK);
	assert_true(sigismember(&during.sa_mask, SIGSEGV));
	assert_int_equal(sigaltstack(NULL, &ss), 0);
	assert_false(ss.ss_flags & SS_DISABLE);
	assert_true(ss.ss_size >= 64 * 1024);
	pk_crash_handler_uninstall();
	pk_crash_handler_uninstall();
	assert_int_equal(sigaction(SIGBUS, NULL, &after), 0);
	assert_true(after.sa_handler == before.sa_handler);
	assert_int_equal(after.sa_flags, before.sa_flags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_panic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_panic_with_crash_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_panic_takes_over_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segv_after_partial_printk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segv_threaded_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segv_after_filtered_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chains_to_program_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_returning_program_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_inside_console_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_in_other_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_install_uninstall, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
