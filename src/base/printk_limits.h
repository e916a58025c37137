// SPDX-License-Identifier: MIT
/*
 * printk_limits.h - every size limit of the library, each defined once.
 *
 * The limits a user can see (text and dictionary bytes per record, record
 * flags) are defined in the public headers, as literals a C or C++ user can
 * read (PK_TEXT_MAX, PK_DICT_MAX, PK_REC_*, PK_MESSAGE_MAX in
 * <printk/log.h>); everything private is derived from them here. Changing the text
 * limit is: PK_TEXT_MAX in <printk/log.h>, PRB_ABI_VERSION (the on-file
 * record layout changes with it), and the tests that pin the kernel's
 * numbers (docs/kernel-compat.md).
 */
#ifndef PRINTK_PRINTK_LIMITS_H
#define PRINTK_PRINTK_LIMITS_H

#include <printk/log.h>

/* The longest /dev/kmsg write accepted: the kernel's PRINTKRB_RECORD_MAX,
 * a record's text and its NUL. */
#define PK_KMSG_WRITE_MAX (PK_TEXT_MAX + 1)

/* Longest record prefix a reader builds: "<2047>[99999999999.999999][T4294967295] "
 * and its NUL. */
#define PK_PREFIX_MAX 64

/* console_loglevel: the kernel's CONSOLE_LOGLEVEL_DEFAULT, and the highest
 * value a setter stores (console_verbose()'s CONSOLE_LOGLEVEL_MOTORMOUTH). */
#define PK_CONSOLE_LOGLEVEL_DEFAULT 7
#define PK_CONSOLE_LOGLEVEL_MAX	    15
/* The kernel's CONSOLE_LOGLEVEL_MIN: the lowest level another process's
 * setting can impose (settings.c); only a process's own may be 0. */
#define PK_CONSOLE_LOGLEVEL_MIN	    1

_Static_assert(PK_MESSAGE_MAX > PK_TEXT_MAX + PK_PREFIX_MAX,
	       "a formatted record holds a whole text and its prefix");

#endif
