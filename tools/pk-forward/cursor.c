// SPDX-License-Identifier: MIT
/*
 * cursor.c - pk-forward's cursor file: where a restart resumes.
 *
 * The cursor is often in a shared directory and pk-forward often root: the
 * cursor and its temporary are opened by the library's rule for symbolic
 * links (reader.h's pk_tool_open), and the cursor is read only from a
 * regular file (a FIFO there would block start-up in open(2) forever).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pk-forward.h"
#include "reader.h"

/* Words for what pk_tool_open() refused. */
static const char *file_strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link that another user controls (not followed)";
	case -EPROTO:
		return "not a regular file";
	default:
		return strerror(-err);
	}
}

/*
 * The cursor file: three lines,
 *   pk-forward cursor 1
 *   log <32 hex digits>
 *   next-seq <decimal>
 * 1 read, 0 no file, -1 malformed (@why says where).
 */
int pkf_cursor_read(const char *path, struct pkf_cursor *c, const char **why)
{
	char buf[256];
	int fd = pk_tool_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0, PK_OPEN_REGULAR);
	ssize_t n;

	if (fd < 0) {
		if (fd == -ENOENT)
			return 0;
		*why = file_strerror(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		*why = strerror(errno);
		return -1;
	}
	buf[n] = '\0';

	char hex[33];
	unsigned long long seq;
	int used = 0;

	*why = "not a pk-forward cursor file";
	if (sscanf(buf, "pk-forward cursor 1\nlog %32[0-9a-f]\nnext-seq %20llu\n%n", hex, &seq,
		   &used) != 2 ||
	    used != n || strlen(hex) != 32 || buf[n - 1] != '\n')
		return -1;

	char half[17];

	memcpy(half, hex, 16);
	half[16] = '\0';
	c->id[0] = strtoull(half, NULL, 16);
	c->id[1] = strtoull(hex + 16, NULL, 16);
	c->next_seq = seq;
	return 1;
}

/*
 * Replace the cursor file: a new temporary file next to it, fsync, rename
 * over it, fsync of the directory. The temporary is made with O_EXCL and
 * never through a symbolic link (pk_tool_open: a link another user planted
 * at CURSOR.tmp would have root write into the file it names); a leftover
 * one of ours is removed first. 0, or -1 after one line on stderr.
 */
int pkf_cursor_write(const char *path, const struct pkf_cursor *c)
{
	char tmp[PATH_MAX], dir[PATH_MAX], buf[128];
	int n = snprintf(buf, sizeof(buf), "pk-forward cursor 1\nlog %016" PRIx64 "%016" PRIx64
					   "\nnext-seq %" PRIu64 "\n",
			 c->id[0], c->id[1], c->next_seq);

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		fprintf(stderr, "%s: %s: cannot save the cursor: %s\n", PKF_NAME, path,
			strerror(ENAMETOOLONG));
		return -1;
	}

	int fd = pk_tool_open(tmp, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0600, PK_OPEN_NEW);
	int err = 0;

	if (fd < 0) {
		fprintf(stderr, "%s: %s: cannot save the cursor: %s: %s\n", PKF_NAME, path, tmp,
			fd == -EEXIST ? "exists and is not a file of ours (not removed)"
				      : file_strerror(fd));
		return -1;
	}
	if (write(fd, buf, (size_t)n) != n || fsync(fd) < 0)
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		fprintf(stderr, "%s: %s: cannot save the cursor: %s\n", PKF_NAME, path,
			strerror(-err));
		return -1;
	}
	/* The rename itself must survive a crash. */
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');

	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}
