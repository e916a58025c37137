// SPDX-License-Identifier: MIT
/*
 * kmsgfs.h - pk-kmsgfs: libprintk logs served as /dev/kmsg files through
 * FUSE, so that unmodified readers of /dev/kmsg (util-linux dmesg,
 * systemd-journald, rsyslog's imkmsg) read them.
 *
 * fs.c is the file system (one regular file per log, the /dev/kmsg file
 * operations, the event loop); main.c is the command line and the two
 * ways to run it (a mount point, or --exec in a private mount namespace).
 */
#ifndef PK_KMSGFS_H
#define PK_KMSGFS_H

#include <stdbool.h>
#include <sys/types.h>

#define KFS_NAME_MAX 64 /* bytes of a log's file name ("kmsg", "NAME.kmsg") */

struct kfs;

/* Make a file system with no logs yet. NULL when out of memory. */
struct kfs *kfs_new(bool read_only);

/*
 * Serve the log file @path as the file @name of the root directory.
 * Opens it read-only now, to refuse a file that is not a log before
 * anything is mounted. 0, or a negative errno value (the errors of
 * pk_log_open_file).
 */
int kfs_add_log(struct kfs *fs, const char *name, const char *path);

/* Create the FUSE session and mount it on @mountpoint (mount(2): root).
 * @debug: libfuse's request trace on stderr. 0, or -1 after one line on
 * stderr saying why. */
int kfs_mount(struct kfs *fs, const char *mountpoint, bool debug);

/*
 * Serve requests until the file system is unmounted or @ctl_fd's handler
 * says stop. @ctl_fd (-1: none) is watched with the FUSE device; when it
 * becomes readable, @on_ctl(@arg) runs and returns true to end the loop.
 * Returns 0, or -1 after printing why.
 */
int kfs_run(struct kfs *fs, int ctl_fd, bool (*on_ctl)(struct kfs *fs, void *arg), void *arg);

/*
 * The server is going away: every read parked waiting for a record fails
 * now with ENOTCONN, as does every later read that would wait, and poll
 * waiters are woken. Non-blocking reads and writes go on working until the
 * session ends.
 */
void kfs_stop_readers(struct kfs *fs);

/* Unmount (unless @unmount is false: the caller did it) and free
 * everything. */
void kfs_destroy(struct kfs *fs, bool unmount);

#endif
