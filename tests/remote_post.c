// SPDX-License-Identifier: MIT
/*
 * remote_post.c - another process posting to a test's log file
 * (remote_post.h says what each call does). Compiled into each test that
 * uses it, with that test's UDMESG (the build's udmesg, when there is one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "remote_post.h"
#include "testutil.h"

#ifdef UDMESG
int run_udmesg(const char *path, char *out, size_t size, const char *a1, const char *a2)
{
	int fds[2];

	if (pipe(fds))
		return -1;

	pid_t pid = fork();
	int status;

	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		freopen("/dev/null", "w", stderr);
		execl(UDMESG, "udmesg", "-B", path, a1, a2, (char *)NULL);
		_exit(99);
	}
	close(fds[1]);

	size_t len = 0;
	ssize_t n;
	char sink[256];

	while ((n = read(fds[0], out ? out + len : sink, out ? size - 1 - len : sizeof(sink))) > 0)
		len += out ? (size_t)n : 0;
	close(fds[0]);
	if (out)
		out[len] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}
#endif

void run_remote(const char *dir, int (*child)(void *), const char *how)
{
	struct child_result res;

	assert_int_equal(test_dir_make(dir), 0);
	run_child(child, (void *)how, 20000, &res);
	if (!res.exited || res.status)
		fprintf(stderr, "child: exited %d status %d signal %d\n%s\n", res.exited,
			res.status, res.sig, res.out ? res.out : "");
	assert_true(res.exited);
	assert_int_equal(res.status, 0);
	child_result_free(&res);
	test_dir_remove();
}
