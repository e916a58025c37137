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
 *
 * The stderr console remembers which file fd 2 was when it was registered
 * (device and inode): a daemon that closes fds 0-2 lets the next open(2)
 * take fd 2, and printk must not write into that file. When fd 2 turns out
 * to be another file (and not the one fd 1 is: that is a redirection), the
 * console disables itself with one notice.
 *
 * A file console may rotate by size, as spdlog's rotating file sink does:
 * before a write would take PATH past its size it renames PATH.N-1 to
 * PATH.N ... PATH to PATH.1 (the oldest falls off) and opens a new PATH;
 * nothing is copied. Several processes may append to one PATH: the one that
 * rotates holds flock(2) on the file it rotates and checks under it that
 * the file is still PATH, and each process looks up PATH before each write
 * (one stat(2)): finding another inode there (rotated by another process,
 * or by logrotate) it reopens, so what it writes goes to the current file.
 * Records are cut only between lines, so a file exceeds its size only by
 * one line longer than the room left in it.
 *
 * A file console's PATH is often in a shared directory while the program
 * runs as root: every open of it (creation, the reopen after another
 * process or logrotate moved it, the new PATH after a rotation) goes
 * through pk_open_safe(), so a symbolic link another user planted there is
 * not followed (-ELOOP at creation; later, the console writes on into the
 * file it has). The renames need no care: rename(2) replaces a link
 * planted at PATH.N instead of writing through it.
 *
 * A console made ,json (pk_console_fd_set_json) takes each record's fields
 * and writes it as one JSON line (json_format.c) through the same write,
 * into a buffer of its own made at set-up: its write never allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/log.h>

#include "base/atomics.h"
#include "base/hints.h"
#include "base/safe_open.h"
#include "console/console_line.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/json_format.h"
#include "ring/caller.h"

#define CONSOLE_WRITE_BUDGET_MS 500
/* How long a rotation waits for another process's rotation (flock). */
#define ROTATE_LOCK_WAIT_MS 200
#define ROTATE_KEEP_MAX	    999

enum fd_kind { FD_UNKNOWN, FD_REGULAR, FD_PIPE, FD_SOCKET, FD_TTY, FD_OTHER };

struct fd_console {
	struct console con; /* first: container_of is a cast */
	int fd;
	int owns_fd;
	enum fd_kind kind;
	char *path; /* file consoles */
	/* The stderr console: the file fd 2 was at set-up (check_identity). */
	int check_identity;
	int identity_closed; /* fd 2 was closed at set-up */
	int identity_lost;   /* fd 2 is another file: said so once, writes nothing */
	dev_t dev;
	ino_t ino;
	/* Rotation (file consoles): 0 for none; the inode this fd holds. */
	unsigned long long rotate_size;
	unsigned rotate_keep;
	dev_t file_dev;
	ino_t file_ino;
	char *rename_from, *rename_to; /* path + ".NNN", made at set-up */
	char *json_line; /* ,json: PK_JSON_RECORD_MAX bytes, made at set-up */
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

/* Write all of @len bytes within the budget; 0 or a negative errno. */
static int write_all(struct fd_console *fc, const char *text, size_t len)
{
	uint64_t deadline = 0; /* read the clock only when we have to wait */
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
	return err;
}

/* ------------------------------------------------- stderr's identity -- */

static void identity_take(struct fd_console *fc)
{
	struct stat st;

	fc->check_identity = 1;
	fc->identity_lost = 0;
	fc->identity_closed = fstat(fc->fd, &st) < 0;
	fc->dev = fc->identity_closed ? 0 : st.st_dev;
	fc->ino = fc->identity_closed ? 0 : st.st_ino;
}

/*
 * 1 if fd 2 is now another open file than at set-up. A closed fd 2 is not
 * another file: its writes fail, and the console layer counts them. A new
 * fd 2 that is the file fd 1 is too was redirected on purpose, as a shell's
 * 2>&1 or a forked child's dup2() of one pipe onto both does: it is taken
 * as the new stderr. A file that took fd 2 by accident (after a daemon
 * closed 0-2) is not fd 1 as well.
 */
static int identity_changed(struct fd_console *fc)
{
	struct stat st, out;

	if (fstat(fc->fd, &st) < 0)
		return 0;
	if (!fc->identity_closed && st.st_dev == fc->dev && st.st_ino == fc->ino)
		return 0;
	if (fstat(1, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino) {
		fc->identity_closed = 0;
		fc->dev = st.st_dev;
		fc->ino = st.st_ino;
		fc->kind = FD_UNKNOWN; /* a pipe now, perhaps */
		return 0;
	}
	return 1;
}

/* ----------------------------------------------------------- rotation -- */

/* "@path.@n" into @buf (sized at set-up: path + 5); no stdio in a writer. */
static void numbered_path(char *buf, const char *path, unsigned n)
{
	char digits[8];
	int i = 0;
	size_t len = strlen(path);

	do {
		digits[i++] = (char)('0' + n % 10);
		n /= 10;
	} while (n && i < (int)sizeof(digits));
	memcpy(buf, path, len);
	buf[len++] = '.';
	while (i)
		buf[len++] = digits[--i];
	buf[len] = '\0';
}

static void note_file(struct fd_console *fc)
{
	struct stat st;

	if (fstat(fc->fd, &st) == 0) {
		fc->file_dev = st.st_dev;
		fc->file_ino = st.st_ino;
	}
}

/* Whether @st is the file this console writes. */
static int is_our_file(const struct fd_console *fc, const struct stat *st)
{
	return st->st_dev == fc->file_dev && st->st_ino == fc->file_ino;
}

static int open_append(const char *path);

/* Open PATH again (it is another file now) in place of our fd. */
static int switch_to_path(struct fd_console *fc)
{
	int fd = open_append(fc->path);

	if (fd < 0)
		return fd;
	if (fc->owns_fd)
		close(fc->fd);
	fc->fd = fd;
	fc->owns_fd = 1;
	fc->kind = FD_UNKNOWN;
	note_file(fc);
	return 0;
}

/*
 * The size of the file at PATH if it is the one we write, after reopening
 * PATH if it is not (another process rotated it, or logrotate moved it).
 * Returns -1 if PATH cannot be looked up or opened: then we write on where
 * we are.
 */
static long long current_size(struct fd_console *fc)
{
	struct stat st;

	if (stat(fc->path, &st) < 0 || !is_our_file(fc, &st)) {
		if (switch_to_path(fc) < 0 || fstat(fc->fd, &st) < 0)
			return -1;
	}
	return (long long)st.st_size;
}

static int lock_for_rotation(int fd)
{
	for (int waited = 0;; waited++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= ROTATE_LOCK_WAIT_MS)
			return -1;

		struct timespec ms = { 0, 1000 * 1000 };

		nanosleep(&ms, NULL);
	}
}

/* Move PATH to PATH.1 (and each PATH.N up one, the last dropped) and open a
 * new PATH; under flock on our file, which must still be PATH, so two
 * processes sharing the file never rotate it twice. The lock is taken on a
 * descriptor of its own: the console's may be shared with a forked child,
 * and flock() locks belong to the open file, so both would hold it. */
static void rotate(struct fd_console *fc)
{
	struct stat st;
	int lk = pk_open_safe(fc->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0, 0);

	if (lk >= 0) {
		if (fstat(lk, &st) == 0 && is_our_file(fc, &st) && lock_for_rotation(lk) == 0 &&
		    stat(fc->path, &st) == 0 && is_our_file(fc, &st)) {
			for (unsigned i = fc->rotate_keep; i > 1; i--) {
				numbered_path(fc->rename_from, fc->path, i - 1);
				numbered_path(fc->rename_to, fc->path, i);
				rename(fc->rename_from, fc->rename_to); /* ENOENT: not that many yet */
			}
			numbered_path(fc->rename_to, fc->path, 1);
			rename(fc->path, fc->rename_to);
		}
		close(lk); /* and the lock with it */
	}
	/* Rotated by us or by another process meanwhile, PATH is new; if
	 * neither, this opens our file again and the caller writes on. */
	switch_to_path(fc);
}

/* The last newline in @text[0, @n), as the length up to and including it. */
static size_t last_line_end(const char *text, size_t n)
{
	while (n > 0 && text[n - 1] != '\n')
		n--;
	return n;
}

static int rotating_write(struct fd_console *fc, const char *text, size_t len)
{
	while (len > 0) {
		long long cur = current_size(fc);
		size_t cut;

		if (cur < 0 || (unsigned long long)cur + len <= fc->rotate_size)
			return write_all(fc, text, len);
		/* Whole lines up to the size, then a new file for the rest. */
		unsigned long long used = (unsigned long long)cur;
		size_t room = used < fc->rotate_size ? (size_t)(fc->rotate_size - used) : 0;

		cut = last_line_end(text, room < len ? room : len);
		if (cut == 0 && cur == 0) {
			/* One line longer than a file: it gets a file of its own. */
			const char *nl = memchr(text, '\n', len);

			cut = nl ? (size_t)(nl - text) + 1 : len;
		}
		if (cut > 0) {
			int err = write_all(fc, text, cut);

			if (err)
				return err;
			text += cut;
			len -= cut;
		}
		if (len > 0 || cut == 0) {
			ino_t was = fc->file_ino;

			rotate(fc);
			if (fc->file_ino == was) /* could not rotate: write on here */
				return write_all(fc, text, len);
		}
	}
	return 0;
}

static int fd_write(struct console *con, const char *text, size_t len)
{
	struct fd_console *fc = (struct fd_console *)con;
	int saved_errno = errno;
	int err;

	if (PK_UNLIKELY(fc->check_identity) && identity_changed(fc)) {
		/* Under the console lock: the flag is the console layer's to
		 * read before the next write, and a notice is only stored. */
		con->flags &= ~PK_CON_ENABLED;
		/* Once: the console layer may enable it again as the fallback
		 * of a failed console, and it must still write nothing. */
		if (!fc->identity_lost)
			pk_store_notice(4, "printk: console [%s] disabled: fd %d is no longer the file it was at start-up\n",
					con->name, fc->fd);
		fc->identity_lost = 1;
		errno = saved_errno;
		return 0;
	}
	if (fc->rotate_size)
		err = rotating_write(fc, text, len);
	else
		err = write_all(fc, text, len);
	errno = saved_errno;
	return err;
}

static struct fd_console stderr_console;

/* A ,json console's write_record: the console lock (or its printer
 * thread) makes it the only user of its line buffer. Dated by the log's
 * realtime offset, as udmesg -T and the forwarders date records. */
static int fd_write_json(struct console *con, const struct pk_record *rec)
{
	struct fd_console *fc = (struct fd_console *)con;
	struct pk_log *log = pk_printk_log_peek();
	int64_t rt = log ? (int64_t)pk_load_relaxed(&pk_log_shared(log)->realtime_offset_ns)
			 : pk_realtime_offset_ns();
	char ident[16];
	int known = log && pk_log_writer_name(log, rec->pid, ident, sizeof(ident)) == 0;
	size_t n = pk_json_format_record(fc->json_line, PK_JSON_RECORD_MAX, rec, known ? ident : NULL, rt);

	int err = fd_write(con, fc->json_line, n);

	/* From write_record, -EAGAIN would mean "not taken, offer it again"
	 * (console.h); a write that failed is counted as one. */
	return err == -EAGAIN ? -EIO : err;
}

int pk_console_fd_set_json(struct console *con)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (!con || con->write_checked != fd_write || con->state)
		return -EINVAL;
	if (!fc->json_line && !(fc->json_line = malloc(PK_JSON_RECORD_MAX)))
		return -ENOMEM;
	/* Lines for programs: no colour, no terminal escapes (a JSON string
	 * escapes what it must). */
	con->flags &= ~(PK_CON_COLOR | PK_CON_ESCAPE);
	con->write_record = fd_write_json;
	return 0;
}

int pk_console_fd_direct(struct console *con)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (con->write_checked != fd_write)
		return -1;
	/* The console layer asks this when it registers a console: the
	 * moment the stderr console is registered is when it takes the file
	 * fd 2 is. (Made the fallback of a failed console, it keeps the one
	 * it has: console.c does not ask then.) */
	if (con == &stderr_console.con)
		identity_take(fc);
	/* These look before they write: through fd_write() only. */
	if (fc->check_identity || fc->rotate_size)
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

struct console *pk_console_stderr(void)
{
	/* Set up on first use, in normal context (registration is not AS-safe). */
	if (stderr_console.con.write_checked == NULL) {
		fd_console_init(&stderr_console, 2, "stderr");
		identity_take(&stderr_console);
	}
	return &stderr_console.con;
}

int pk_console_fd_is_file(const struct console *con)
{
	return con->write_checked == fd_write && ((const struct fd_console *)con)->path != NULL;
}

int pk_console_fd_batchable(const struct console *con)
{
	const struct fd_console *fc = (const struct fd_console *)con;

	/* A size rotation looks at the size before each write: processes
	 * sharing the file pass it by one write each. The largest size never
	 * rotates, and only looks PATH up (logrotate). */
	return pk_console_fd_is_file(con) && (fc->rotate_size == 0 || fc->rotate_size == ULLONG_MAX);
}

/* What a made fd or file console owns (its row's release in
 * console_kinds.c; pk_console_destroy() and exit call it). */
void pk_console_fd_release(struct console *con)
{
	if (!con || con == &stderr_console.con || con->write_checked != fd_write)
		return;

	struct fd_console *fc = (struct fd_console *)con;

	if (fc->owns_fd)
		close(fc->fd);
	free(fc->path);
	free(fc->rename_from);
	free(fc->rename_to);
	free(fc->json_line);
	free(fc);
}

int pk_console_fd_create(struct console **conp, int fd, const char *name)
{
	if (!conp || fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;

	struct fd_console *fc = malloc(sizeof(*fc));

	if (!fc)
		return -ENOMEM;
	fd_console_init(fc, fd, name ? name : "fd");
	fc->con.release = pk_console_fd_release;
	*conp = &fc->con;
	return 0;
}

static int open_append(const char *path)
{
	return pk_open_safe(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644, 0);
}

static int file_reopen(struct console *con)
{
	struct fd_console *fc = (struct fd_console *)con;
	return switch_to_path(fc);
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
	note_file(fc);
	fc->con.reopen = file_reopen;
	fc->con.release = pk_console_fd_release;
	*conp = &fc->con;
	return 0;
}

int pk_console_file_set_rotation(struct console *con, unsigned long long size, unsigned keep)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (!con || con->write_checked != fd_write || !fc->path || (size && (keep < 1 || keep > ROTATE_KEEP_MAX)))
		return -EINVAL;
	if (size && !fc->rename_from) {
		size_t room = strlen(fc->path) + 5; /* ".999" and the NUL */

		fc->rename_from = malloc(room);
		fc->rename_to = malloc(room);
		if (!fc->rename_from || !fc->rename_to) {
			free(fc->rename_from);
			free(fc->rename_to);
			fc->rename_from = fc->rename_to = NULL;
			return -ENOMEM;
		}
	}
	fc->rotate_keep = size ? keep : 0;
	fc->rotate_size = size;
	return 0;
}
