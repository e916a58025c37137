// SPDX-License-Identifier: MIT
/*
 * safe_open.c - opening a file by a name that someone else may control.
 *
 * Owns: the rule for symbolic links in the last component of a name that
 * libprintk opens to write (log files, file consoles and the files their
 * rotation creates, the crash dump file) or that its tools create, replace
 * or read (pk-forward's cursor and its temporary). Such names are often in
 * a shared directory (/tmp) while the program runs as root: anybody can
 * plant a link there, and root following it would write into whatever it
 * names. The kernel's protected_symlinks guards against that only where the
 * sysctl is on, so the rule is applied here whatever it says:
 *  - the last component is opened with O_NOFOLLOW;
 *  - a link there is followed only if it belongs to us or to root, and in a
 *    sticky world-writable directory only if it belongs to us or to the
 *    directory's owner;
 *  - after following it, the name must still be the same link (inode and
 *    owner), or the open is tried again: it cannot be swapped in between.
 * A link refused is -ELOOP, as the kernel's O_NOFOLLOW says.
 *
 * Renaming onto a name needs nothing of this: rename(2) replaces a link
 * planted at the target and never writes through it.
 *
 * Everything here is async-signal-safe (a file console reopens its file
 * from its write, which may run in a crash handler): system calls only, no
 * allocation, no stdio.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safe_open.h"

/* How often a name that changes under us is looked at again. */
#define SAFE_OPEN_TRIES 4

int pk_path_dir(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		if (size < 2)
			return -ENAMETOOLONG;
		dir[0] = '.';
		dir[1] = '\0';
		return 0;
	}

	size_t n = (size_t)(slash - path);

	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dir, path, n ? n : 1); /* "/name": the root */
	dir[n ? n : 1] = '\0';
	return 0;
}

/*
 * May the symbolic link @lst, the last component of @path, be followed?
 * Only ours or root's, and in a sticky world-writable directory only ours
 * or the directory owner's (protected_symlinks).
 */
static bool symlink_trusted(const char *path, const struct stat *lst)
{
	uid_t me = geteuid();
	char dir[PATH_MAX];
	struct stat dst;

	if (lst->st_uid != me && lst->st_uid != 0)
		return false;
	if (pk_path_dir(path, dir, sizeof(dir)) || stat(dir, &dst) < 0)
		return false;
	if ((dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH) && lst->st_uid != me &&
	    lst->st_uid != dst.st_uid)
		return false;
	return true;
}

static int not_regular(const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? -EISDIR : -EPROTO;
}

/*
 * PK_OPEN_REGULAR, before opening: what the name leads to (through a link
 * only if the link may be followed) must be a regular file. A missing file
 * is left to open(2) (O_CREAT, or its -ENOENT).
 */
static int check_regular(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode)) {
		if (!symlink_trusted(path, &st))
			return -ELOOP;
		if (stat(path, &st) < 0)
			return errno == ENOENT ? 0 : -errno;
	}
	return S_ISREG(st.st_mode) ? 0 : not_regular(&st);
}

static int open_new(const char *path, int oflags, mode_t mode)
{
	for (int tries = 0; tries < SAFE_OPEN_TRIES; tries++) {
		int fd = open(path, oflags | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
		struct stat st;

		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		if (lstat(path, &st) < 0) {
			if (errno == ENOENT)
				continue; /* gone meanwhile */
			return -errno;
		}
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		/* Ours from a run that died before it renamed or removed it;
		 * anything else is not ours to remove. */
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return -EEXIST;
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}

/* O_NOFOLLOW first; a link is followed only if trusted and still the same
 * link afterwards. */
static int open_careful(const char *path, int oflags, mode_t mode)
{
	for (int tries = 0; tries < SAFE_OPEN_TRIES; tries++) {
		int fd = open(path, oflags | O_NOFOLLOW, mode);

		if (fd >= 0)
			return fd;
		if (errno != ELOOP)
			return -errno;

		struct stat l1, l2;

		if (lstat(path, &l1) < 0)
			return -errno;
		if (!S_ISLNK(l1.st_mode))
			continue; /* replaced meanwhile, or a loop in the directories */
		if (!symlink_trusted(path, &l1))
			return -ELOOP;
		fd = open(path, oflags, mode);
		if (fd < 0)
			return -errno;
		if (lstat(path, &l2) == 0 && S_ISLNK(l2.st_mode) && l2.st_dev == l1.st_dev &&
		    l2.st_ino == l1.st_ino && l2.st_uid == l1.st_uid)
			return fd;
		close(fd); /* the link changed while we followed it: look again */
	}
	return -ELOOP;
}

int pk_open_safe(const char *path, int oflags, mode_t mode, unsigned how)
{
	if (!path || !*path)
		return -EINVAL;
	if (how & PK_OPEN_NEW)
		return open_new(path, oflags, mode);
	if (!(how & PK_OPEN_REGULAR))
		return open_careful(path, oflags, mode);

	int err = check_regular(path);

	if (err)
		return err;

	/* O_NONBLOCK: a FIFO put there since the check must not hang us. */
	int fd = open_careful(path, oflags | O_NONBLOCK, mode);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = not_regular(&st);
	else if (!(oflags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			err = -errno;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
