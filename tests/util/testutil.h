// SPDX-License-Identifier: MIT
/*
 * testutil.h - helpers shared by the test programs: child processes judged
 * from outside (crash and hang cases), pipes, temporary files and files
 * read back whole, a formatter's test record.
 */
#ifndef PRINTK_TESTUTIL_H
#define PRINTK_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

struct child_result {
	int exited;	/* exited normally */
	int status;	/* exit status when exited */
	int signaled;	/* killed by a signal */
	int sig;	/* that signal */
	int timed_out;	/* we killed it after the timeout */
	char *out;	/* everything it wrote to stdout+stderr (NUL-terminated, malloc'ed) */
	size_t out_len;
};

/*
 * Run @fn(@arg) in a forked child with stdout and stderr captured; kill it
 * with SIGKILL after @timeout_ms. The child exits with fn's return value.
 */
void run_child(int (*fn)(void *), void *arg, int timeout_ms, struct child_result *res);
void child_result_free(struct child_result *res);
/* run_child(), and the child must have exited with 0 (not timed out, not
 * killed); on failure its state and output are printed first. */
void run_child_ok(int (*fn)(void *), void *arg, int timeout_ms, struct child_result *res);

/* Monotonic milliseconds. */
uint64_t now_ms(void);

/*
 * Failures seen by threads that may not use cmocka's asserts (they longjmp):
 * thread_fail() counts one and keeps the first message, printing the first
 * ten with @tag; the test resets the count before a run and asserts on it
 * afterwards.
 */
void thread_fail_reset(void);
void thread_fail(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
unsigned thread_fail_count(void);
const char *thread_fail_first(void);

/*
 * A fresh directory for a test program's files: test_dir_make() creates
 * $TMPDIR/@prefix.XXXXXX (or under /tmp), test_dir() names it,
 * test_dir_path() names @name inside it (eight buffers, reused in turn),
 * test_dir_remove() removes it with everything in it. 0 or -1.
 */
int test_dir_make(const char *prefix);
const char *test_dir(void);
const char *test_dir_path(const char *name);
int test_dir_remove(void);

/*
 * The whole file at @path (test_slurp()) or from @fd to its end
 * (test_slurp_fd(), which closes it): malloc'ed and NUL-terminated, its
 * length (the NUL not counted) in *@len unless @len is NULL. NULL when the
 * file cannot be opened (@fd < 0, errno left as open() set it); a failed
 * read fails the test.
 */
char *test_slurp(const char *path, size_t *len);
char *test_slurp_fd(int fd, size_t *len);
/* The file at @path must exist and hold exactly the string @text. */
#define assert_file_equal(path, text)                   \
	do {                                            \
		char *file_ = test_slurp((path), NULL); \
		assert_non_null(file_);                 \
		assert_string_equal(file_, (text));     \
		free(file_);                            \
	} while (0)

/* A fresh empty file made by mkstemp() from @tmpl ("...XXXXXX"), its name
 * in @path (room for @tmpl and its NUL). */
void test_temp_file(char *path, const char *tmpl);

/*
 * In a child that is to crash: no core file, the default disposition of
 * SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (no sanitizer handler to
 * chain to), a fresh library with only the stderr console (no colour, even
 * on a terminal), no time prefix, the real clock.
 */
void test_crash_child_reset(void);

/* A store through NULL that really faults: UBSan (part of the "address"
 * sanitizer build) would otherwise catch it first and exit(1). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define NO_SANITIZE_NULL __attribute__((no_sanitize("null")))
#endif
#endif
#ifndef NO_SANITIZE_NULL
#define NO_SANITIZE_NULL
#endif

/* Reap @pid within @ms, or kill it and fail the test: nothing may hang. */
void test_reap(pid_t pid, int *status, unsigned ms);

/* The built udmesg ($PRINTK_TEST_BUILD_DIR/tools/udmesg) run with
 * "-B @path -P --noescape" and the NULL-terminated @args after them, its
 * stdout into a pipe whose reading end goes to *@out_fd: its pid. Fails the
 * test when udmesg is not built. */
pid_t test_spawn_udmesg(const char *path, const char *const *args, int *out_fd);
/* test_spawn_udmesg() to its end: its stdout in @out (NUL-terminated, at
 * most @size - 1 bytes), and it must exit 0 within 30 s. Returns the bytes. */
size_t test_udmesg_output(const char *path, const char *const *args, char *out, size_t size);
/* The same without --noescape: udmesg's default escapes. */
size_t test_udmesg_output_escaped(const char *path, const char *const *args, char *out, size_t size);

struct pk_log;
struct pk_record;
/* The formatters' test record: seq 42, at 1291.025123456 s, pid 100, tid
 * 101, level 6, facility 3, @tn bytes of @text and @dn of @dict, the rest
 * zeros. */
void test_fill_record(struct pk_record *r, const char *text, size_t tn, const char *dict,
		      size_t dn);
/* pk_log_store() of @text at facility 0, level 6, which must succeed. */
void test_log_store(struct pk_log *log, const char *text);
/* A fresh log file at @path, its text area @len bytes, holding @n records
 * "record <i>". */
void test_make_log(const char *path, size_t len, unsigned n);

/* Environment knob for test durations: PRINTK_STRESS_MS, default @def. */
unsigned stress_ms(unsigned def);

/*
 * 1 if @s matches @pattern whole, where '#' stands for one or more decimal
 * digits, '%' for one or more lower-case hex digits and '*' for anything
 * (shortest first): reports whose pids, addresses and call-trace frames
 * vary from run to run.
 */
int test_match(const char *s, const char *pattern);

/*
 * How much of a signal stack printk uses: a handler for @sig on an
 * alternate stack of TEST_ALT_STACK_SIZE bytes filled with a pattern;
 * test_stack_used() raises @sig and counts the bytes the pattern lost.
 * Sanitizers' own frames would be counted too: TEST_STACK_MEASURED is 0
 * under them, and the tests skip.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_STACK_MEASURED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_STACK_MEASURED 0
#endif
#endif
#ifndef TEST_STACK_MEASURED
#define TEST_STACK_MEASURED 1
#endif
#define TEST_ALT_STACK_SIZE (64 * 1024)

struct test_stack_probe {
	int sig;
	char *alt;
	stack_t old_ss;
	struct sigaction old_sa;
};

void test_stack_probe_begin(struct test_stack_probe *p, int sig, void (*handler)(int));
size_t test_stack_used(struct test_stack_probe *p);
void test_stack_probe_end(struct test_stack_probe *p);

#define assert_match(s, pattern)                                                      \
	do {                                                                          \
		if (!test_match((s), (pattern)))                                      \
			fail_msg("\"%s\"\n does not match\n\"%s\"", (s), (pattern)); \
	} while (0)

/* In a forked child that reports by its exit status: a failed condition is
 * said on stderr with its line, and the child returns 1. */
#define CHILD_CHECK(cond)                                                                   \
	do {                                                                                \
		if (!(cond)) {                                                              \
			dprintf(2, "child check failed at line %d: %s\n", __LINE__, #cond); \
			return 1;                                                           \
		}                                                                           \
	} while (0)

#endif
