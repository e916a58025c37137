// SPDX-License-Identifier: MIT
/*
 * safe_open.h - opening a file by a name that someone else may control
 * (safe_open.c): every file libprintk or its tools create, replace, append
 * to or read by a name a user gave goes through pk_open_safe().
 *
 * Base layer: depends on nothing. Async-signal-safe (open, lstat, stat,
 * unlink only; no allocation) and thread-safe.
 */
#ifndef PRINTK_SAFE_OPEN_H
#define PRINTK_SAFE_OPEN_H

#include <sys/types.h>

/* Only a regular file: anything else at the name (a FIFO, whose open would
 * wait for a writer; a device, whose open may have effects) is refused
 * before it is opened: -EISDIR for a directory, -EPROTO otherwise. */
#define PK_OPEN_REGULAR 1u
/* A new file (O_CREAT | O_EXCL is added): a leftover regular file that we
 * own at the name is removed first; a symbolic link there is -ELOOP and
 * anything else -EEXIST. */
#define PK_OPEN_NEW 2u

/*
 * open(2) @path with @oflags (and @mode, when a file is created), with the
 * last component opened with O_NOFOLLOW. A symbolic link there is followed
 * only if it belongs to us or to root, and in a sticky world-writable
 * directory (/tmp) only if it belongs to us or to the directory's owner:
 * the kernel's protected_symlinks rule, applied whatever the sysctl says.
 * After the open it must still be the same link, so it cannot be swapped
 * in between. @how: 0 or PK_OPEN_* above.
 *
 * Returns the descriptor or a negative errno: -ELOOP for a link refused.
 */
int pk_open_safe(const char *path, int oflags, mode_t mode, unsigned how);

/* The directory part of @path into @dir ("." for a bare name, "/" for a
 * name in the root): 0, or -ENAMETOOLONG if it does not fit in @size. */
int pk_path_dir(const char *path, char *dir, size_t size);

#endif
