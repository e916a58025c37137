/* SPDX-License-Identifier: MIT */
/*
 * printk/syslog.h - the syslog(2) actions (klogctl) on the printk log, with
 * the kernel's numbering, semantics and return values. Text is returned as
 * lines "<prio>[    ts.usec] text\n", one per line of each record.
 */
#ifndef PRINTK_SYSLOG_H
#define PRINTK_SYSLOG_H

#include <printk/compiler.h>
#include <printk/log.h>

PK_BEGIN_DECLS

#define PK_SYSLOG_ACTION_CLOSE	       0
#define PK_SYSLOG_ACTION_OPEN	       1
#define PK_SYSLOG_ACTION_READ	       2  /* blocks for unread records; consumes them */
#define PK_SYSLOG_ACTION_READ_ALL      3  /* the newest records that fit */
#define PK_SYSLOG_ACTION_READ_CLEAR    4
#define PK_SYSLOG_ACTION_CLEAR	       5
#define PK_SYSLOG_ACTION_CONSOLE_OFF   6
#define PK_SYSLOG_ACTION_CONSOLE_ON    7
#define PK_SYSLOG_ACTION_CONSOLE_LEVEL 8
#define PK_SYSLOG_ACTION_SIZE_UNREAD   9
#define PK_SYSLOG_ACTION_SIZE_BUFFER   10

/*
 * The printk log. Returns bytes, 0, or a negative errno value.
 *
 * Context: thread-safe (a mutex orders READ, SIZE_UNREAD and the clears);
 * READ may block (sleeps until a record comes; -EINTR when a signal
 * interrupts the wait); not async-signal-safe.
 */
PK_API int pk_do_syslog(int type, char *buf, int len);
/* The same on a given log handle. Context: as pk_do_syslog(). */
PK_API int pk_do_syslog_log(struct pk_log *log, int type, char *buf, int len);

#ifndef PRINTK_NO_KERNEL_NAMES
#define SYSLOG_ACTION_CLOSE	    PK_SYSLOG_ACTION_CLOSE
#define SYSLOG_ACTION_OPEN	    PK_SYSLOG_ACTION_OPEN
#define SYSLOG_ACTION_READ	    PK_SYSLOG_ACTION_READ
#define SYSLOG_ACTION_READ_ALL	    PK_SYSLOG_ACTION_READ_ALL
#define SYSLOG_ACTION_READ_CLEAR    PK_SYSLOG_ACTION_READ_CLEAR
#define SYSLOG_ACTION_CLEAR	    PK_SYSLOG_ACTION_CLEAR
#define SYSLOG_ACTION_CONSOLE_OFF   PK_SYSLOG_ACTION_CONSOLE_OFF
#define SYSLOG_ACTION_CONSOLE_ON    PK_SYSLOG_ACTION_CONSOLE_ON
#define SYSLOG_ACTION_CONSOLE_LEVEL PK_SYSLOG_ACTION_CONSOLE_LEVEL
#define SYSLOG_ACTION_SIZE_UNREAD   PK_SYSLOG_ACTION_SIZE_UNREAD
#define SYSLOG_ACTION_SIZE_BUFFER   PK_SYSLOG_ACTION_SIZE_BUFFER
#ifndef PRINTK_NO_DO_SYSLOG_NAME
#define do_syslog		    pk_do_syslog
#endif
#endif

PK_END_DECLS

#endif
