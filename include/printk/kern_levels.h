/* SPDX-License-Identifier: MIT */
/*
 * printk/kern_levels.h - message levels, spelled as in Linux 6.x.
 *
 * A level is a two-byte header at the start of a printk format: KERN_SOH
 * (0x01) and a digit, or 'c' for a continuation. KERN_DEFAULT is empty, as in
 * modern kernels: the message gets default_message_loglevel.
 */
#ifndef PRINTK_KERN_LEVELS_H
#define PRINTK_KERN_LEVELS_H

#define PK_KERN_SOH	  "\001"
#define PK_KERN_SOH_ASCII '\001'

#define PK_KERN_EMERG	PK_KERN_SOH "0" /* system is unusable */
#define PK_KERN_ALERT	PK_KERN_SOH "1" /* action must be taken immediately */
#define PK_KERN_CRIT	PK_KERN_SOH "2" /* critical conditions */
#define PK_KERN_ERR	PK_KERN_SOH "3" /* error conditions */
#define PK_KERN_WARNING PK_KERN_SOH "4" /* warning conditions */
#define PK_KERN_NOTICE	PK_KERN_SOH "5" /* normal but significant condition */
#define PK_KERN_INFO	PK_KERN_SOH "6" /* informational */
#define PK_KERN_DEBUG	PK_KERN_SOH "7" /* debug-level messages */
#define PK_KERN_DEFAULT ""		/* the default level */
#define PK_KERN_CONT	PK_KERN_SOH "c" /* continues the caller's line */

#define PK_LOGLEVEL_SCHED   -2
#define PK_LOGLEVEL_DEFAULT -1
#define PK_LOGLEVEL_EMERG   0
#define PK_LOGLEVEL_ALERT   1
#define PK_LOGLEVEL_CRIT    2
#define PK_LOGLEVEL_ERR	    3
#define PK_LOGLEVEL_WARNING 4
#define PK_LOGLEVEL_NOTICE  5
#define PK_LOGLEVEL_INFO    6
#define PK_LOGLEVEL_DEBUG   7

#ifndef PRINTK_NO_KERNEL_NAMES
#define KERN_SOH	  PK_KERN_SOH
#define KERN_SOH_ASCII	  PK_KERN_SOH_ASCII
#define KERN_EMERG	  PK_KERN_EMERG
#define KERN_ALERT	  PK_KERN_ALERT
#define KERN_CRIT	  PK_KERN_CRIT
#define KERN_ERR	  PK_KERN_ERR
#define KERN_WARNING	  PK_KERN_WARNING
#define KERN_NOTICE	  PK_KERN_NOTICE
#define KERN_INFO	  PK_KERN_INFO
#define KERN_DEBUG	  PK_KERN_DEBUG
#define KERN_DEFAULT	  PK_KERN_DEFAULT
#define KERN_CONT	  PK_KERN_CONT
#define LOGLEVEL_SCHED	  PK_LOGLEVEL_SCHED
#define LOGLEVEL_DEFAULT  PK_LOGLEVEL_DEFAULT
#define LOGLEVEL_EMERG	  PK_LOGLEVEL_EMERG
#define LOGLEVEL_ALERT	  PK_LOGLEVEL_ALERT
#define LOGLEVEL_CRIT	  PK_LOGLEVEL_CRIT
#define LOGLEVEL_ERR	  PK_LOGLEVEL_ERR
#define LOGLEVEL_WARNING  PK_LOGLEVEL_WARNING
#define LOGLEVEL_NOTICE	  PK_LOGLEVEL_NOTICE
#define LOGLEVEL_INFO	  PK_LOGLEVEL_INFO
#define LOGLEVEL_DEBUG	  PK_LOGLEVEL_DEBUG
#endif

#endif
