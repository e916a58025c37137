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
 * A file console may also rotate by local time (daily, hourly): a record
 * whose wall-clock time (its timestamp plus CLOCK_REALTIME -
 * CLOCK_MONOTONIC, so a line printed late goes by when it was stored) has
 * reached the end of the file's period renames PATH to PATH.YYYY-MM-DD or
 * PATH.YYYY-MM-DD-HH, the period the file covers, and opens a new PATH;
 * then the oldest dated files beyond keep are removed. The end of the
 * period is computed once per period from the zone table of walltime.c
 * (no zone lookup while printing): a write compares one number. A clock
 * stepped back stays in the period it had; a period without lines leaves
 * no file. Lines are never cut: a line begun before the end is finished in
 * the old file. With a size as well, both rename PATH to the dated name,
 * the later pieces of one period numbered in the order written
 * (PATH.D, PATH.D.1, PATH.D.2 ...). Its own functions: rotate_time_due()
 * and what it calls, and prune_dated().
 *
 * When PATH is gone (renamed by logrotate), the console does not create it
 * at once: logrotate's create makes the new file right after its rename
 * with O_EXCL, and a file the console made first would be moved aside as
 * a backup. So a write opens PATH only if it exists; while it does not,
 * lines go on to the renamed file, for up to REOPEN_CREATE_WAIT_MS (or
 * until that file is removed), and then the console creates PATH itself
 * (logrotate's nocreate). A rotation by another libprintk process holds
 * flock(2) on PATH's directory from its rename until the new PATH exists:
 * a process that finds PATH gone waits for that lock before it looks
 * again, so our own rotations never send its lines to the old file.
 * pk_console_reopen() creates PATH at once, as asked.
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
#include <stdint.h>
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
#include "format/walltime.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/json_format.h"
#include "ring/caller.h"

#define CONSOLE_WRITE_BUDGET_MS 500
/* How long a rotation waits for another process's rotation (flock). */
#define ROTATE_LOCK_WAIT_MS 200
#define ROTATE_KEEP_MAX	    999
/* How long lines go on to a renamed file while PATH does not exist again,
 * before the console creates PATH itself (logrotate's create makes it
 * within microseconds of its rename; nocreate never does). */
#define REOPEN_CREATE_WAIT_MS 2000
/* The room a rotated name needs past PATH: ".YYYY-MM-DD-HH.9999" and the
 * NUL, or ".999". */
#define ROTATE_NAME_ROOM (1 + PK_WALL_LABEL_MAX + 5 + 1)
#define DATED_INDEX_MAX	 9999
#define DENTS_ROOM	 4096

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
	char *rename_from, *rename_to; /* path + ROTATE_NAME_ROOM, made at set-up */
	/* PATH went missing (renamed by someone) at this CLOCK_MONOTONIC ns:
	 * lines go on to the renamed file for a while; 0: it is there. */
	uint64_t missing_since;
	/* Rotation by time: the period's length (PK_WALL_DAY, PK_WALL_HOUR),
	 * 0 for none; the wall-clock ns when the file's period ends (0: not
	 * known yet, the first write decides); the name of that period; 1 if
	 * the last byte written did not end a line. */
	int rotate_unit;
	int64_t period_end_ns;
	char period_label[PK_WALL_LABEL_MAX];
	int mid_line;
	/* Made at set-up of a rotation: PATH's directory (its lock; the
	 * dated files are looked for there), where PATH's last component
	 * starts, and a buffer for reading the directory (by time). */
	char *dir_path;
	size_t base_off;
	char *dents;
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

/* Make @fd, a descriptor of PATH, the console's. */
static void take_fd(struct fd_console *fc, int fd)
{
	if (fc->owns_fd)
		close(fc->fd);
	fc->fd = fd;
	fc->owns_fd = 1;
	fc->kind = FD_UNKNOWN;
	fc->missing_since = 0;
	note_file(fc);
}

/* Open PATH again (it is another file now) in place of our fd, creating
 * it if it does not exist. */
static int switch_to_path(struct fd_console *fc)
{
	int fd = open_append(fc->path);

	if (fd < 0)
		return fd;
	take_fd(fc, fd);
	return 0;
}

/* The same, only if PATH exists: never a file of our own making where
 * logrotate is about to create one. */
static int switch_to_existing(struct fd_console *fc)
{
	int fd = pk_open_safe(fc->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY, 0, 0);

	if (fd < 0)
		return fd;
	take_fd(fc, fd);
	return 0;
}

/* flock(2) on PATH's directory, @how (LOCK_EX: a rotation from its
 * rename until the new PATH exists; LOCK_SH: a process that found PATH
 * gone, waiting for such a rotation), within ROTATE_LOCK_WAIT_MS; the
 * directory's descriptor (closing it lets go), or -1. *@waited says
 * whether the lock was busy at first. */
static int lock_dir(const struct fd_console *fc, int how, int *waited)
{
	int dfd = fc->dir_path ? open(fc->dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	*waited = 0;
	if (dfd < 0)
		return -1;
	for (int ms = 0;; ms++) {
		if (flock(dfd, how | LOCK_NB) == 0)
			return dfd;
		if ((errno != EWOULDBLOCK && errno != EINTR) || ms >= ROTATE_LOCK_WAIT_MS)
			break;
		*waited = 1;

		struct timespec one = { 0, 1000 * 1000 };

		nanosleep(&one, NULL);
	}
	close(dfd);
	return -1;
}

/* Whether another libprintk process is rotating PATH (it holds its
 * directory's lock from its rename until the new PATH exists): waits for
 * it, bounded, and returns 1 if there was one. */
static int rotation_under_way(struct fd_console *fc)
{
	int waited, dfd = lock_dir(fc, LOCK_SH, &waited);

	if (dfd >= 0)
		close(dfd);
	return waited;
}

/*
 * PATH is not the file we write (it is another one, or none): open the
 * one there. None there: another libprintk process's rotation is waited
 * for; else the file was renamed by someone (logrotate) who may create
 * PATH in a moment, so lines go on to the renamed file until PATH exists,
 * for REOPEN_CREATE_WAIT_MS at most and while that file has a name; then
 * we create PATH.
 */
static void follow_path(struct fd_console *fc)
{
	int err = switch_to_existing(fc);

	if (err != -ENOENT)
		return; /* opened, or cannot be (the file we have stays) */
	if (rotation_under_way(fc) && switch_to_existing(fc) != -ENOENT)
		return;

	struct stat own;
	uint64_t now = pk_clock_ns();

	if (fstat(fc->fd, &own) == 0 && own.st_nlink > 0) {
		if (!fc->missing_since)
			fc->missing_since = now ? now : 1;
		if (now - fc->missing_since < (uint64_t)REOPEN_CREATE_WAIT_MS * 1000000u)
			return;
	}
	switch_to_path(fc);
}

/* Our file's state after following PATH (one stat(2) when PATH is still
 * our file); -1 if it cannot be looked at: then we write on where we are. */
static int file_state(struct fd_console *fc, struct stat *st)
{
	if (stat(fc->path, st) == 0 && is_our_file(fc, st)) {
		fc->missing_since = 0;
		return 0;
	}
	follow_path(fc);
	return fstat(fc->fd, st) < 0 ? -1 : 0;
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

	if (file_state(fc, &st) < 0)
		return -1;
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

static void rename_dated(struct fd_console *fc);
static void prune_dated(struct fd_console *fc);

/* Move PATH to PATH.1 (and each PATH.N up one, the last dropped), or to
 * its dated name when rotating by time, and open a new PATH; under flock
 * on our file, which must still be PATH, so two processes sharing the file
 * never rotate it twice. The lock is taken on a descriptor of its own: the
 * console's may be shared with a forked child, and flock() locks belong to
 * the open file, so both would hold it. From the rename until the new
 * PATH exists it also holds a lock on PATH's directory: a process that
 * finds PATH gone meanwhile waits for that (follow_path), whichever file
 * it still writes. An empty file is not moved by time: a period without
 * lines leaves no file. */
static void rotate(struct fd_console *fc)
{
	struct stat st;
	int lk = pk_open_safe(fc->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0, 0);
	int done = 0;

	if (lk >= 0) {
		if (fstat(lk, &st) == 0 && is_our_file(fc, &st) && lock_for_rotation(lk) == 0 &&
		    stat(fc->path, &st) == 0 && is_our_file(fc, &st)) {
			int waited, dl = -1;

			done = 1;
			if (!fc->rotate_unit || st.st_size > 0)
				dl = lock_dir(fc, LOCK_EX, &waited);
			if (fc->rotate_unit && st.st_size > 0) {
				rename_dated(fc);
				switch_to_path(fc);
			} else if (!fc->rotate_unit) {
				for (unsigned i = fc->rotate_keep; i > 1; i--) {
					numbered_path(fc->rename_from, fc->path, i - 1);
					numbered_path(fc->rename_to, fc->path, i);
					rename(fc->rename_from, fc->rename_to); /* ENOENT: not that many yet */
				}
				numbered_path(fc->rename_to, fc->path, 1);
				if (rename(fc->path, fc->rename_to) == 0)
					switch_to_path(fc);
			}
			if (dl >= 0)
				close(dl);
			if (fc->rotate_unit && st.st_size > 0)
				prune_dated(fc);
		}
		close(lk); /* and the lock with it */
	}
	/* Rotated by another process meanwhile, PATH is new. */
	if (!done)
		follow_path(fc);
}

/* ------------------------------------------------- rotation by time -- */

/* "@path.@label" or "@path.@label.@n" (n > 0) into @buf (ROTATE_NAME_ROOM
 * past the path); no stdio in a writer. */
static void dated_path(char *buf, const char *path, const char *label, unsigned n)
{
	size_t len = strlen(path), l = strlen(label);

	memcpy(buf, path, len);
	buf[len++] = '.';
	memcpy(buf + len, label, l);
	len += l;
	buf[len] = '\0';
	if (n)
		numbered_path(buf, buf, n);
}

/* Whether @name is PATH's last component, a dot, a period name of this
 * console's length and, optionally, a dot and an index: then its index
 * (0 without) in *@idx and the period name at *@label. */
static int is_dated_name(const struct fd_console *fc, const char *name, const char **label, unsigned long *idx)
{
	const char *base = fc->path + fc->base_off;
	size_t blen = strlen(base), llen = fc->rotate_unit == PK_WALL_DAY ? 10 : 13;
	static const char shape[] = "dddd-dd-dd-dd";

	if (strncmp(name, base, blen) || name[blen] != '.')
		return 0;
	name += blen + 1;
	for (size_t i = 0; i < llen; i++)
		if (shape[i] == 'd' ? (name[i] < '0' || name[i] > '9') : name[i] != '-')
			return 0;
	*label = name;
	*idx = 0;
	name += llen;
	if (!*name)
		return 1;
	if (*name++ != '.' || !*name || *name == '0')
		return 0;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || *idx > DATED_INDEX_MAX)
			return 0;
		*idx = *idx * 10 + (unsigned long)(*name - '0');
	}
	return 1;
}

struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The highest index among the files of period @label in PATH's
 * directory (0 for PATH.@label itself), or -1 if there is none. */
static long newest_index(struct fd_console *fc, const char *label)
{
	int dfd = open(fc->dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t llen = strlen(label);
	long newest = -1, n;

	if (dfd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, dfd, fc->dents, DENTS_ROOM)) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64_raw *d = (struct dirent64_raw *)(fc->dents + off);
			const char *l;
			unsigned long idx;

			off += d->d_reclen;
			if (is_dated_name(fc, d->d_name, &l, &idx) && !strncmp(l, label, llen) && (long)idx > newest)
				newest = (long)idx;
		}
	}
	close(dfd);
	return newest;
}

/* PATH to the next name of its period: PATH.D, then PATH.D.1 ... (a
 * later piece of the period, cut by size), after the highest there, so
 * the order written stays the order of the names when older ones were
 * removed. Under the rotation lock: no other libprintk process renames
 * meanwhile; a name taken by someone else is passed over. */
static void rename_dated(struct fd_console *fc)
{
	struct stat st;

	for (long n = newest_index(fc, fc->period_label) + 1; n <= DATED_INDEX_MAX; n++) {
		dated_path(fc->rename_to, fc->path, fc->period_label, (unsigned)n);
		if (lstat(fc->rename_to, &st) < 0 && errno == ENOENT) {
			rename(fc->path, fc->rename_to);
			return;
		}
	}
}

/* Remove the oldest dated files (by period, then index) beyond keep.
 * getdents64 on a buffer made at set-up: no allocation, async-signal-safe. */
static void prune_dated(struct fd_console *fc)
{
	int dfd = open(fc->dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return;
	for (int pass = 0; pass < 1000; pass++) {
		unsigned count = 0;
		const char *old_label = NULL;
		unsigned long old_idx = 0;
		size_t llen = fc->rotate_unit == PK_WALL_DAY ? 10 : 13;
		char *oldest = fc->rename_from; /* free while we hold the lock */
		long n;

		oldest[0] = '\0';
		if (lseek(dfd, 0, SEEK_SET) < 0)
			break;
		while ((n = syscall(SYS_getdents64, dfd, fc->dents, DENTS_ROOM)) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64_raw *d = (struct dirent64_raw *)(fc->dents + off);
				const char *label;
				unsigned long idx;

				off += d->d_reclen;
				if (!is_dated_name(fc, d->d_name, &label, &idx))
					continue;
				count++;

				int cmp = old_label ? strncmp(label, old_label, llen) : -1;

				if (cmp < 0 || (cmp == 0 && idx < old_idx)) {
					size_t l = strlen(d->d_name);

					if (l >= strlen(fc->path + fc->base_off) + ROTATE_NAME_ROOM)
						continue;
					memcpy(oldest, d->d_name, l + 1);
					old_label = oldest + (label - d->d_name);
					old_idx = idx;
				}
			}
		}
		if (count <= fc->rotate_keep || !oldest[0] || unlinkat(dfd, oldest, 0) < 0)
			break;
	}
	close(dfd);
}

_Thread_local PK_TLS_IE uint64_t pk_con_write_ts;

static int64_t timespec_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, from a realtime read between two
 * monotonic ones that lie close together: a pair torn by preemption, or
 * by both clocks jumping at once between the reads (as libfaketime makes
 * them), is read again, so one bad pair does not end a period early. */
static int64_t wall_offset_ns(void)
{
	int64_t off = 0;

	for (int tries = 0; tries < 4; tries++) {
		struct timespec m0, rt, m1;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &m1);

		int64_t a = timespec_ns(&m0), b = timespec_ns(&m1);

		off = timespec_ns(&rt) - (a + (b - a) / 2);
		if (b >= a && b - a < 1000000)
			break;
	}
	return off;
}

/* The wall-clock time of the record this write carries, in ns. */
static int64_t record_wall_ns(void)
{
	uint64_t ts = pk_con_write_ts;
	struct timespec now;

	if (ts)
		return (int64_t)ts + wall_offset_ns();
	clock_gettime(CLOCK_REALTIME, &now);
	return timespec_ns(&now);
}

static int64_t floor_sec(int64_t ns)
{
	return ns / 1000000000 - (ns % 1000000000 < 0);
}

/*
 * A line of @wall_ns is due and the period has ended (or is not known
 * yet): rotate, and take the period of @wall_ns. The first time, the file
 * at PATH covers the period of its last change: one of an earlier period
 * (a program started again the next day) is rotated under that period's
 * name.
 */
static void rotate_by_time(struct fd_console *fc, int64_t wall_ns)
{
	int64_t sec = floor_sec(wall_ns);

	if (!fc->period_end_ns) {
		struct stat st;

		if (file_state(fc, &st) == 0 && st.st_size > 0 &&
		    pk_wall_period((int64_t)st.st_mtime, fc->rotate_unit, fc->period_label) <= sec)
			rotate(fc);
	} else {
		rotate(fc);
	}
	int64_t end = pk_wall_period(sec, fc->rotate_unit, fc->period_label);

	fc->period_end_ns = end < INT64_MAX / 1000000000 ? end * 1000000000 : INT64_MAX;
}

/* The cheap part, on every write: the record's time against the end of
 * the period. */
static PK_ALWAYS_INLINE int rotate_time_due(struct fd_console *fc, int64_t *wall_ns)
{
	*wall_ns = record_wall_ns();
	return *wall_ns >= fc->period_end_ns;
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

/* A write to a file rotating by size (or never, following PATH), or by
 * neither: what follows the check of the period. */
static int file_write(struct fd_console *fc, const char *text, size_t len)
{
	int err;

	if (!len)
		return 0;
	if (fc->rotate_size) {
		err = rotating_write(fc, text, len);
	} else {
		struct stat st;

		file_state(fc, &st); /* follow PATH, as a size rotation does */
		err = write_all(fc, text, len);
	}
	if (!err)
		fc->mid_line = text[len - 1] != '\n';
	return err;
}

/* A file rotating by time: a line begun in the old period is finished in
 * its file first; a write of no complete line leaves the rotation to the
 * next one. */
static PK_NOINLINE int time_rotating_write(struct fd_console *fc, const char *text, size_t len)
{
	int64_t wall;

	if (rotate_time_due(fc, &wall) && len) {
		if (fc->mid_line) {
			const char *nl = memchr(text, '\n', len);
			size_t head = nl ? (size_t)(nl - text) + 1 : len;
			int err = file_write(fc, text, head);

			if (err || head == len)
				return err;
			text += head;
			len -= head;
		}
		rotate_by_time(fc, wall);
	}
	return file_write(fc, text, len);
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
	if (PK_UNLIKELY(fc->rotate_unit))
		err = time_rotating_write(fc, text, len);
	else if (fc->rotate_size)
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
	if (fc->check_identity || fc->rotate_size || fc->rotate_unit)
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
	 * rotates, and only looks PATH up (logrotate). A rotation by time
	 * dates each write by its one record: a batch could cross the end of
	 * a period. */
	return pk_console_fd_is_file(con) && (fc->rotate_size == 0 || fc->rotate_size == ULLONG_MAX) &&
	       !fc->rotate_unit;
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
	free(fc->dir_path);
	free(fc->dents);
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

/* The names a rotation renames to, made at set-up (a write never allocates). */
static int rename_buffers(struct fd_console *fc)
{
	if (fc->rename_from)
		return 0;

	size_t room = strlen(fc->path) + ROTATE_NAME_ROOM, dir_room = strlen(fc->path) + 2;
	const char *slash = strrchr(fc->path, '/');

	fc->rename_from = malloc(room);
	fc->rename_to = malloc(room);
	fc->dir_path = malloc(dir_room);
	if (!fc->rename_from || !fc->rename_to || !fc->dir_path || pk_path_dir(fc->path, fc->dir_path, dir_room)) {
		free(fc->rename_from);
		free(fc->rename_to);
		free(fc->dir_path);
		fc->rename_from = fc->rename_to = fc->dir_path = NULL;
		return -ENOMEM;
	}
	fc->base_off = slash ? (size_t)(slash - fc->path) + 1 : 0;
	return 0;
}

int pk_console_file_set_rotation(struct console *con, unsigned long long size, unsigned keep)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (!con || !pk_console_fd_is_file(con) || (size && (keep < 1 || keep > ROTATE_KEEP_MAX)))
		return -EINVAL;
	if (size && rename_buffers(fc))
		return -ENOMEM;
	if (size || !fc->rotate_unit)
		fc->rotate_keep = size ? keep : 0;
	fc->rotate_size = size;
	return 0;
}

int pk_console_set_rotate_time(struct console *con, int period, unsigned keep)
{
	struct fd_console *fc = (struct fd_console *)con;

	if (!con || !pk_console_fd_is_file(con) || period < PK_ROTATE_NONE || period > PK_ROTATE_DAILY ||
	    (period && (keep < 1 || keep > ROTATE_KEEP_MAX)))
		return -EINVAL;
	if (period == PK_ROTATE_NONE) {
		fc->rotate_unit = 0;
		if (!fc->rotate_size)
			fc->rotate_keep = 0;
		return 0;
	}
	if (rename_buffers(fc) || (!fc->dents && !(fc->dents = malloc(DENTS_ROOM))))
		return -ENOMEM;
	/* The zone's changes for the next year, read here: printing never
	 * reads the zone. */
	pk_wall_refresh();
	fc->rotate_unit = period == PK_ROTATE_DAILY ? PK_WALL_DAY : PK_WALL_HOUR;
	fc->rotate_keep = keep;
	fc->period_end_ns = 0;
	return 0;
}
