// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "capture.h"
#include "testutil.h"

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned stress_ms(unsigned def)
{
	const char *s = getenv("PRINTK_STRESS_MS");

	return s && *s ? (unsigned)strtoul(s, NULL, 10) : def;
}

void run_child(int (*fn)(void *), void *arg, int timeout_ms, struct child_result *res)
{
	int p[2];

	memset(res, 0, sizeof(*res));
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		_exit(fn(arg));
	}
	close(p[1]);

	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int status = 0;
	int open = 1;

	assert_non_null(buf);
	while (open) {
		int64_t left = (int64_t)(deadline - now_ms());

		if (left <= 0) {
			res->timed_out = 1;
			kill(pid, SIGKILL);
			break;
		}

		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (poll(&pfd, 1, (int)(left > 50 ? 50 : left)) > 0) {
			if (len + 1024 > cap) {
				cap *= 2;
				buf = realloc(buf, cap);
				assert_non_null(buf);
			}

			ssize_t n = read(p[0], buf + len, cap - len - 1);

			if (n > 0)
				len += (size_t)n;
			else if (n == 0)
				open = 0;
		}
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	buf[len] = '\0';
	res->out = buf;
	res->out_len = len;
	res->exited = WIFEXITED(status);
	res->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	res->signaled = WIFSIGNALED(status);
	res->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

void child_result_free(struct child_result *res)
{
	free(res->out);
	res->out = NULL;
}

void run_child_ok(int (*fn)(void *), void *arg, int timeout_ms, struct child_result *res)
{
	run_child(fn, arg, timeout_ms, res);
	if (res->timed_out || !res->exited || res->status)
		print_message("child: exited %d, status %d, signal %d, timed out %d: %s\n", res->exited,
			      res->status, res->sig, res->timed_out, res->out);
	assert_false(res->timed_out);
	assert_true(res->exited);
	assert_int_equal(res->status, 0);
}

static atomic_uint thread_fails;
static char thread_first_fail[512];

void thread_fail_reset(void)
{
	atomic_store(&thread_fails, 0);
	thread_first_fail[0] = '\0';
}

void thread_fail(const char *tag, const char *fmt, ...)
{
	unsigned n = atomic_fetch_add(&thread_fails, 1);
	char buf[sizeof(thread_first_fail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n == 0)
		memcpy(thread_first_fail, buf, sizeof(buf));
	if (n < 10)
		fprintf(stderr, "[%s] FAIL: %s\n", tag, buf);
}

unsigned thread_fail_count(void)
{
	return atomic_load(&thread_fails);
}

const char *thread_fail_first(void)
{
	return thread_first_fail;
}

/* ------------------------------------------------- a temporary directory -- */

static char tmp_dir[PATH_MAX - 64];

int test_dir_make(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(tmp_dir, sizeof(tmp_dir), "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
			     prefix) >= sizeof(tmp_dir))
		return -1;
	return mkdtemp(tmp_dir) ? 0 : -1;
}

const char *test_dir(void)
{
	return tmp_dir;
}

const char *test_dir_path(const char *name)
{
	static char paths[8][PATH_MAX];
	static unsigned next;
	char *p = paths[next++ % 8];

	if ((size_t)snprintf(p, PATH_MAX, "%s/%s", tmp_dir, name) >= PATH_MAX)
		fail_msg("path too long: %s/%s", tmp_dir, name);
	return p;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int test_dir_remove(void)
{
	return nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------ children, logs -- */

char *test_slurp_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	assert_non_null(buf);
	for (;;) {
		if (n + 1 == cap)
			assert_non_null(buf = realloc(buf, cap *= 2));

		ssize_t k = read(fd, buf + n, cap - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		assert_true(k >= 0);
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *test_slurp(const char *path, size_t *len)
{
	return test_slurp_fd(open(path, O_RDONLY | O_CLOEXEC), len);
}

void test_temp_file(char *path, const char *tmpl)
{
	strcpy(path, tmpl);

	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
}

void test_crash_child_reset(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	pk_printk_exit();
	test_clock_off();
	pk_set_printk_time(0);
	pk_console_stderr()->flags &= ~PK_CON_COLOR;
	pk_register_console(pk_console_stderr());
}

void test_reap(pid_t pid, int *status, unsigned ms)
{
	uint64_t t0 = now_ms();
	pid_t r;

	while ((r = waitpid(pid, status, WNOHANG)) == 0 && now_ms() - t0 < ms)
		usleep(1000);
	if (r == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		fail_msg("child %d hung", (int)pid);
	}
	assert_int_equal(r, pid);
}

static pid_t spawn_udmesg(const char *path, bool noescape, const char *const *args, int *out_fd)
{
	const char *build = getenv("PRINTK_TEST_BUILD_DIR");
	const char *argv[16] = { "udmesg", "-B", path, "-P", "--noescape" };
	char udmesg[PATH_MAX];
	unsigned n = noescape ? 5 : 4;
	int fds[2];

	assert_non_null(build);
	snprintf(udmesg, sizeof(udmesg), "%s/tools/udmesg", build);
	if (access(udmesg, X_OK))
		fail_msg("%s is not built", udmesg);
	for (; args && *args; args++) {
		assert_true(n + 1 < sizeof(argv) / sizeof(argv[0]));
		argv[n++] = *args;
	}
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(udmesg, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	*out_fd = fds[0];
	return pid;
}

pid_t test_spawn_udmesg(const char *path, const char *const *args, int *out_fd)
{
	return spawn_udmesg(path, true, args, out_fd);
}

static size_t udmesg_output(const char *path, bool noescape, const char *const *args, char *out, size_t size)
{
	int fd, status;
	pid_t pid = spawn_udmesg(path, noescape, args, &fd);
	size_t n = 0;
	ssize_t k;

	while (n + 1 < size && (k = read(fd, out + n, size - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(fd);
	test_reap(pid, &status, 30000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return n;
}

size_t test_udmesg_output(const char *path, const char *const *args, char *out, size_t size)
{
	return udmesg_output(path, true, args, out, size);
}

size_t test_udmesg_output_escaped(const char *path, const char *const *args, char *out, size_t size)
{
	return udmesg_output(path, false, args, out, size);
}

void test_fill_record(struct pk_record *r, const char *text, size_t tn, const char *dict,
		      size_t dn)
{
	memset(r, 0, sizeof(*r));
	r->seq = 42;
	r->ts_nsec = 1291025123456ull; /* 1291.025123456 s */
	r->pid = 100;
	r->tid = 101;
	r->level = 6;
	r->facility = 3;
	memcpy(r->text, text, tn);
	r->text_len = (uint16_t)tn;
	memcpy(r->dict, dict, dn);
	r->dict_len = (uint16_t)dn;
}

void test_log_store(struct pk_log *log, const char *text)
{
	assert_int_equal(pk_log_store(log, 0, 6, text, strlen(text), NULL, 0), 0);
}

void test_make_log(const char *path, size_t len, unsigned n)
{
	struct pk_log *log;
	char text[32];

	unlink(path);
	assert_int_equal(pk_log_open_file(&log, path, len, 0), 0);
	for (unsigned i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "record %u", i);
		test_log_store(log, text);
	}
	pk_log_destroy(log);
}

int test_match(const char *s, const char *p)
{
	while (*p) {
		if (*p == '*') {
			for (p++;; s++) {
				if (test_match(s, p))
					return 1;
				if (!*s)
					return 0;
			}
		}
		if (*p == '#' || *p == '%') {
			size_t n = strspn(s, *p == '#' ? "0123456789" : "0123456789abcdef");

			if (n == 0)
				return 0;
			s += n;
			p++;
		} else if (*s++ != *p++) {
			return 0;
		}
	}
	return *s == '\0';
}

void test_stack_probe_begin(struct test_stack_probe *p, int sig, void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = SA_ONSTACK };

	p->sig = sig;
	p->alt = malloc(TEST_ALT_STACK_SIZE);
	assert_non_null(p->alt);

	stack_t ss = { .ss_sp = p->alt, .ss_size = TEST_ALT_STACK_SIZE };

	assert_int_equal(sigaltstack(&ss, &p->old_ss), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(sig, &sa, &p->old_sa), 0);
}

size_t test_stack_used(struct test_stack_probe *p)
{
	size_t untouched = 0;

	memset(p->alt, 0xa5, TEST_ALT_STACK_SIZE);
	raise(p->sig);
	while (untouched < TEST_ALT_STACK_SIZE && (unsigned char)p->alt[untouched] == 0xa5)
		untouched++;
	return TEST_ALT_STACK_SIZE - untouched;
}

void test_stack_probe_end(struct test_stack_probe *p)
{
	sigaction(p->sig, &p->old_sa, NULL);
	sigaltstack(&p->old_ss, NULL);
	free(p->alt);
	p->alt = NULL;
}
