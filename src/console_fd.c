// SPDX-License-Identifier: MIT
/*
 * console_fd.c - the built-in consoles: stderr, any file descriptor, a file
 * opened for appending.
 *
 * Owns: how bytes get onto a file descriptor without ever hanging printk or
 * killing the program. A write completes short writes, retries EINTR and
 * EAGAIN, and waits for a slow reader with poll() - all within a time budget
 * (CONSOLE_WRITE_BUDGET_MS); then it gives up with an error and the console
 * layer disables a console that keeps failing. A closed pipe or socket never
 * raises SIGPIPE. Everything here is async-signal-safe, so these consoles are
 * crash safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <printk/console.h>

#include "caller.h"
#include "console_line.h"
#include "hints.h"

#define CONSOLE_WRITE_BUDGET_MS 500

enum fd_kind { FD_UNKNOWN, FD_REGULAR, FD_PIPE, FD_SOCKET, FD_TTY, FD_OTHER };

struct fd_console {
	struct console con; /* first: container_of is a cast */
	int fd;
	int owns_fd;
	enum fd_kind kind;
	char *path; /* file consoles */
};

static enum fd_kind fd_kind_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return FD_OTHER;
	if (S_ISREG(st.st_mode))
		return FD_REGULAR;
	if (S_ISFIFO(st.st_mode))
		return FD_PIPE;
	if (S_ISSOCK(st.st_mode))
		return FD_SOCKET;
	if (isatty(fd))
		return FD_TTY;
	return FD_OTHER;
}

/* write() to a pipe with SIGPIPE blocked; a SIGPIPE it raised is consumed. */
static ssize_t write_nosigpipe(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, pending, old;
	int was_pending;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);

	ssize_t n = write(fd, buf, len);
	int saved = errno;

	if (n < 0 && errno == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

/* Whether a write to this kind of file can block for long (a reader that
 * does not read, a terminal stopped with ^S): then we poll first, bounded. */
static int may_block(enum fd_kind kind)
{
	return kind == FD_PIPE || kind == FD_SOCKET || kind == FD_TTY;
}

static int fd_write(struct console *con, const char *text, size_t len)
{
	struct fd_console *fc = (struct fd_console *)con;
	uint64_t deadline = 0; /* read the clock only when we have to wait */
	int saved_errno = errno;
	int err = 0;

	if (fc->kind == FD_UNKNOWN)
		fc->kind = fd_kind_of(fc->fd);
	while (len > 0) {
		ssize_t n;

		if (may_block(fc->kind) || deadline) {
			uint64_t now = pk_clock_ns();

			if (!deadline)
				deadline = now + (uint64_t)CONSOLE_WRITE_BUDGET_MS * 1000000u;
			if (now >= deadline) {
				err = -ETIMEDOUT;
				break;
			}

			struct pollfd pfd = { .fd = fc->fd, .events = POLLOUT };
			int r = poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1);

			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				err = -ETIMEDOUT;
				break;
			}
			if (r > 0 && (pfd.revents & POLLNVAL)) {
				err = -EBADF;
				break;
			}
		}
		if (fc->kind == FD_SOCKET)
			n = send(fc->fd, text, len, MSG_NOSIGNAL);
		else if (fc->kind == FD_PIPE)
			n = write_nosigpipe(fc->fd, text, len);
		else
			n = write(fc->fd, text, len);
		if (n > 0) {
			text += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			if (!deadline)
				deadline = pk_clock_ns() + (uint64_t)CONSOLE_WRITE_BUDGET_MS * 1000000u;
			continue;
		}
		err = n < 0 ? -errno : -EIO;
		break;
	}
	errno = saved_errno;
	return err;
}

int pk_console_fd_direct(struct console *con)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (con->write_checked != fd_write)
		return -1;
	if (fc->kind == FD_UNKNOWN)
		fc->kind = fd_kind_of(fc->fd);
	return fc->kind == FD_REGULAR || fc->kind == FD_OTHER ? fc->fd : -1;
}

long pk_raw_write_fallback(int fd, const void *buf, size_t len)
{
	int saved_errno = errno;
	long n = syscall(SYS_write, fd, buf, len);

	if (n < 0)
		n = -errno;
	errno = saved_errno;
	return n;
}

static void fd_console_init(struct fd_console *fc, int fd, const char *name)
{
	memset(fc, 0, sizeof(*fc));
	strncpy(fc->con.name, name, sizeof(fc->con.name) - 1);
	fc->con.write_checked = fd_write;
	fc->con.flags = PK_CON_ENABLED | PK_CON_CRASH_SAFE;
	if (isatty(fd))
		fc->con.flags |= PK_CON_COLOR | PK_CON_ESCAPE;
	fc->fd = fd;
	fc->kind = fd_kind_of(fd);
}

static struct fd_console stderr_console;

struct console *pk_console_stderr(void)
{
	/* Set up on first use, in normal context (registration is not AS-safe). */
	if (stderr_console.con.write_checked == NULL)
		fd_console_init(&stderr_console, 2, "stderr");
	return &stderr_console.con;
}

static void release_created(struct console *con)
{
	pk_console_destroy(con);
}

int pk_console_fd_create(struct console **conp, int fd, const char *name)
{
	if (!conp || fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;

	struct fd_console *fc = malloc(sizeof(*fc));

	if (!fc)
		return -ENOMEM;
	fd_console_init(fc, fd, name ? name : "fd");
	fc->con.release = release_created;
	*conp = &fc->con;
	return 0;
}

static int open_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);

	return fd < 0 ? -errno : fd;
}

static int file_reopen(struct console *con)
{
	struct fd_console *fc = (struct fd_console *)con;
	int fd = open_append(fc->path);

	if (fd < 0)
		return fd;
	close(fc->fd);
	fc->fd = fd;
	fc->kind = FD_UNKNOWN;
	return 0;
}

int pk_console_file_create(struct console **conp, const char *path)
{
	if (!conp || !path || !*path)
		return -EINVAL;

	int fd = open_append(path);

	if (fd < 0)
		return fd;

	struct fd_console *fc = malloc(sizeof(*fc));
	char *copy = strdup(path);

	if (!fc || !copy) {
		free(fc);
		free(copy);
		close(fd);
		return -ENOMEM;
	}
	fd_console_init(fc, fd, "file");
	fc->con.flags &= ~(PK_CON_COLOR | PK_CON_ESCAPE);
	fc->owns_fd = 1;
	fc->path = copy;
	fc->con.reopen = file_reopen;
	fc->con.release = release_created;
	*conp = &fc->con;
	return 0;
}

void pk_console_destroy(struct console *con)
{
	/* The forwarders (console_net.c) free themselves through their
	 * release; naming them here would tie this file to that one. */
	if (con && con->write_record && con->release) {
		con->release(con);
		return;
	}
	if (!con || con == &stderr_console.con || con->write_checked != fd_write)
		return;

	struct fd_console *fc = (struct fd_console *)con;

	if (fc->owns_fd)
		close(fc->fd);
	free(fc->path);
	free(fc);
}
