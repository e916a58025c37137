// SPDX-License-Identifier: MIT
/*
 * options.h - PRINTK_OPTS, in kernel command-line syntax, parsed into a
 * plain description with no side effects; printk.c applies it.
 */
#ifndef PRINTK_OPTIONS_H
#define PRINTK_OPTIONS_H

#include <stddef.h>

#define PK_OPTS_MAX_CONSOLES 8
#define PK_OPTS_MAX_WARNINGS 8
#define PK_OPTS_PATH_MAX     512

enum pk_opts_console_kind { PK_OPTCON_STDERR, PK_OPTCON_NONE, PK_OPTCON_FD, PK_OPTCON_FILE };

struct pk_opts_console {
	enum pk_opts_console_kind kind;
	int fd;
	char path[PK_OPTS_PATH_MAX];
};

/* -1 in an int field: not given. */
struct pk_opts {
	long long log_buf_len; /* bytes, -1 if not given */
	char log_buf_file[PK_OPTS_PATH_MAX]; /* "" if not given */
	int log_buf_file_group;
	int log_buf_file_sync;
	char devkmsg[16];  /* printk.devkmsg=: "" if not given */
	int crash_dump;	   /* crash_dump=: -1 if not given */
	int console_loglevel;
	int ignore_loglevel;
	int printk_time;
	int printk_caller;
	int nconsoles; /* console= entries, in order */
	struct pk_opts_console consoles[PK_OPTS_MAX_CONSOLES];
	int nwarnings;
	char warnings[PK_OPTS_MAX_WARNINGS][192];
};

/*
 * Parse @s (NULL or empty: nothing given). Unknown or malformed options are
 * skipped with a warning text in o->warnings; returns 0 if there was none,
 * -EINVAL otherwise.
 */
int pk_opts_parse(const char *s, struct pk_opts *o);

#endif
