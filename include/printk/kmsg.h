/* SPDX-License-Identifier: MIT */
/*
 * printk/kmsg.h - /dev/kmsg as a library object: the same file operations,
 * meanings and error codes as Linux 6.x's /dev/kmsg, on this process's log.
 *
 * Reading: one record per kmsg_read(), as
 *     <prio>,<seq>,<ts_usec>,<flags>[,caller=T<tid>];<escaped text>\n
 * followed by dictionary lines " KEY=VALUE\n" (prio = facility << 3 | level,
 * flags '-' or 'c'). -EPIPE once when records were lost since the last read,
 * -EAGAIN with O_NONBLOCK when nothing is new, -EINVAL when @len is too small
 * (the record is consumed, as Linux 6.18 does). Writing: one record per
 * kmsg_write(), with an optional "<N>" priority prefix.
 *
 * Functions return the count or 0 on success and a negative errno value on
 * failure, like the kernel's file operations.
 */
#ifndef PRINTK_KMSG_H
#define PRINTK_KMSG_H

#include <stddef.h>
#include <sys/types.h>

#include <printk/compiler.h>
#include <printk/log.h>

PK_BEGIN_DECLS

struct kmsg_file;

/* Open the printk log. @flags: O_RDONLY, O_WRONLY or O_RDWR, optionally | O_NONBLOCK.
 * Context: thread-safe; does not block; not async-signal-safe (allocates). */
PK_API int pk_kmsg_open(struct kmsg_file **filep, int flags);
/* Open a given log handle (which must outlive the file).
 * Context: as pk_kmsg_open(). */
PK_API int pk_kmsg_open_log(struct kmsg_file **filep, struct pk_log *log, int flags);
/*
 * Open the log in the file @path (see pk_log_open_file): O_RDONLY opens it
 * read-only and never writes to it. When no writer is alive any more (a
 * post-mortem read), the newest record is returned even if its line was
 * never finished, marked with a ",partial" field after the flags. Errors as
 * pk_log_open_file's.
 *
 * Context: as pk_log_open_file(): thread-safe; may block (file system
 * calls); not async-signal-safe.
 */
PK_API int pk_kmsg_open_file(struct kmsg_file **filep, const char *path, int flags);
/* Context: thread-safe (a mutex per file serialises its readers); may block
 * (without O_NONBLOCK it sleeps until a record comes; -EINTR when a signal
 * interrupts the wait); not async-signal-safe. */
PK_API ssize_t pk_kmsg_read(struct kmsg_file *f, char *buf, size_t len);
/* Context: thread-safe; as pk_printk() on the printk log (the caller may
 * print on the consoles); not async-signal-safe in "ratelimit" mode, which
 * takes the file's ratelimit mutex. */
PK_API ssize_t pk_kmsg_write(struct kmsg_file *f, const char *buf, size_t len);
/* offset must be 0: SEEK_SET (oldest), SEEK_DATA (after the last clear), SEEK_END.
 * Context: any (async-signal-safe, lock-free); a read running at the same
 * time on the same file may return the record before or after the seek. */
PK_API off_t pk_kmsg_llseek(struct kmsg_file *f, off_t offset, int whence);
/* A descriptor that poll/epoll report readable (POLLIN) while a record is
 * available to this file; owned by the file. -EOPNOTSUPP on a read-only
 * handle.
 * Context: thread-safe (takes a mutex the first time); does not block; not
 * async-signal-safe. */
PK_API int pk_kmsg_poll_fd(struct kmsg_file *f);
/* POLLIN|POLLRDNORM when a record is readable, plus POLLERR|POLLPRI when
 * records were lost, 0 otherwise: what poll() on /dev/kmsg reports.
 * Context: any (async-signal-safe, lock-free). */
PK_API int pk_kmsg_poll_events(struct kmsg_file *f);
/* Close the file; a ratelimited file logs its suppression notice (as
 * pk_printk()).
 * Context: once no other thread uses the file; may block briefly (waits for
 * writers ringing its poll descriptor); not async-signal-safe (frees). */
PK_API void pk_kmsg_close(struct kmsg_file *f);

/* printk.devkmsg: "on" (our default: every write is stored), "off" (writes
 * are accepted and dropped, opens fail with -EPERM), "ratelimit" (10 writes
 * per 5 s per open file, like the kernel's default). -EINVAL otherwise.
 * Context: any (async-signal-safe, lock-free). */
PK_API int pk_set_devkmsg(const char *mode);

#ifndef PRINTK_NO_KERNEL_NAMES
#define kmsg_open	 pk_kmsg_open
#define kmsg_open_log	 pk_kmsg_open_log
#define kmsg_open_file	 pk_kmsg_open_file
#define kmsg_read	 pk_kmsg_read
#define kmsg_write	 pk_kmsg_write
#define kmsg_llseek	 pk_kmsg_llseek
#define kmsg_poll_fd	 pk_kmsg_poll_fd
#define kmsg_poll_events pk_kmsg_poll_events
#define kmsg_close	 pk_kmsg_close
#endif

PK_END_DECLS

#endif
