// SPDX-License-Identifier: MIT
/*
 * options.h - PRINTK_OPTS, in kernel command-line syntax, parsed into a
 * plain description (struct pk_opts) with no side effects; the library's
 * start-up code (src/startup/setup.c) applies it, and udmesg reads log_buf_file
 * from it.
 *
 * Every function here:
 *  - allocates nothing, takes no lock, reads no environment and leaves
 *    errno alone;
 *  - touches only the struct pk_opts it is given (the table below is
 *    const), so it is thread-safe on distinct structs and async-signal-safe
 *    (string functions from the POSIX.1-2016 list and the library's own
 *    pk_fmt_vsnprintf, src/format/vsprintf.h);
 *  - is not reentrant on one struct. A struct pk_opts is several KiB: keep
 *    it static rather than on a small (signal or thread) stack.
 */
#ifndef PRINTK_OPTIONS_H
#define PRINTK_OPTIONS_H

#include <stddef.h>

#include "format/vsprintf.h"

#define PK_OPTS_MAX_CONSOLES 8
#define PK_OPTS_MAX_WARNINGS 8
#define PK_OPTS_WARNING_LEN  192
#define PK_OPTS_PATH_MAX     512

/* Every warning text starts with this (string-literal concatenation). */
#define PK_OPTS_WARN_PREFIX "printk: PRINTK_OPTS: "

enum pk_opts_console_kind {
	PK_OPTCON_STDERR,
	PK_OPTCON_NONE,
	PK_OPTCON_FD,
	PK_OPTCON_FILE,
	PK_OPTCON_JOURNAL, /* path: the socket, "" for the default */
	PK_OPTCON_SYSLOG,  /* path: the target, "udp:HOST:PORT" ... */
	PK_OPTCON_REMOVE,  /* console=-NAME: name: the console to take away */
	PK_OPTCON_OTHER,   /* a kind registered beyond these (row says which) */
	PK_OPTCON_LAST = PK_OPTCON_OTHER
};

struct pk_console_kind; /* a row of the console layer's table (console/console_kinds.h) */

#define PK_OPTS_CONSOLE_NAME_MAX 16 /* struct console's name[], with its NUL */
#define PK_OPTS_ROTATE_KEEP_MAX	 999
#define PK_OPTS_ROTATE_KEEP_DEFAULT 5

struct pk_opts_console {
	enum pk_opts_console_kind kind;
	/* the kind's row, NULL for none, -NAME and a kind whose file is not
	 * in this program (console_kinds.c knows its name, not its row) */
	const struct pk_console_kind *row;
	int fd;
	char path[PK_OPTS_PATH_MAX];
	short flags; /* PK_CON_THREADED, PK_CON_EXTENDED, PK_CON_LOSSLESS, PK_CON_LOSSY */
	int format;  /* syslog: PK_SYSLOG_RFC5424 or PK_SYSLOG_RFC3164 */
	char name[PK_OPTS_CONSOLE_NAME_MAX]; /* ,name=: "" for the automatic one */
	int loglevel;	    /* ,loglevel=N (0..15), or -1: console_loglevel */
	long long rotate_size; /* file: ,size=N[KMG] (bytes), or 0: no rotation */
	int rotate_keep;    /* file: ,keep=N (1..999) old files, with a size or a period */
	int rotate_time;    /* file: ,rotate=hourly|daily: PK_ROTATE_*, 0: none */
	int framing;	    /* syslog:tcp: ,framing=octet|lf: PK_SYSLOG_FRAMING_* + 1, 0: not given */
	int bom;	    /* syslog: ,bom=yes|no: 2 yes, 1 no, 0: not given */
	unsigned enterprise; /* syslog: ,enterprise=N, or 0: the default */
	char tls_opts[PK_OPTS_PATH_MAX]; /* syslog: ",tls,ca=F,..." as given, for the target */
	int json;	    /* ,json: one JSON line per record (stderr, fd:, file:) */
	int time_style;	    /* ,time=STYLE (enum pk_time_style), or -1: printk.time */
};

/*
 * "Not given": -1 in an int or long long field, "" in a string field, and
 * no console= entries. pk_opts_init() sets exactly that, from the table.
 */
struct pk_opts {
	long long log_buf_len; /* bytes */
	char log_buf_file[PK_OPTS_PATH_MAX];
	int log_buf_file_group;
	int log_buf_file_sync;
	char devkmsg[16];  /* printk.devkmsg=: "on", "off" or "ratelimit" */
	int crash_dump;	   /* crash_dump= */
	int console_drain_ms; /* console_drain_ms= */
	int no_hash_pointers; /* no_hash_pointers: %p prints addresses unhashed */
	int lossless_timeout_ms; /* lossless_timeout_ms= */
	char dyndbg[PK_OPTS_PATH_MAX]; /* dyndbg="QUERY": dynamic debug queries */
	char modules[PK_OPTS_PATH_MAX]; /* printk.module=: checked "M:L,..." */
	int srcloc; /* printk.srcloc= */
	int console_loglevel;
	int ignore_loglevel;
	int printk_time;
	int printk_caller;
	int lanes;	   /* printk.lanes=: per-thread lanes for lines no console prints */
	char lane_clock[16]; /* printk.lane_clock=: "fast" or "ordered" */
	int nconsoles; /* console= entries, in order */
	struct pk_opts_console consoles[PK_OPTS_MAX_CONSOLES];
	int nwarnings; /* texts in warnings[], at most PK_OPTS_MAX_WARNINGS */
	char warnings[PK_OPTS_MAX_WARNINGS][PK_OPTS_WARNING_LEN];
	int warnings_dropped; /* pk_opts_warn() calls beyond the bound */
};

/*
 * How a value is read. A bare word ("quiet") has no value; "name=" has an
 * empty one, which no kind accepts.
 */
enum pk_opt_kind {
	PK_OPT_FLAG,	/* bare word only: stores .min (== .max) in an int */
	PK_OPT_BOOL,	/* 1/0, y/n, Y/N, on/off into an int; bare: 1 if .bare_ok */
	PK_OPT_UINT,	/* decimal digits, .min to .max, into an int */
	PK_OPT_SIZE,	/* decimal digits with an optional k/K, m/M or g/G
			 * (binary multiples), .min to .max bytes, into a long long */
	PK_OPT_STRING,	/* any non-empty text that fits the char[] field */
	PK_OPT_CHOICE,	/* one of .choices, copied into the char[] field */
	PK_OPT_CONSOLE, /* a console spec: KIND[:ARG][,OPTION...], none or
			 * -NAME (remove), parsed by pk_opts_console_parser
			 * (the console layer's table of kinds) and appended
			 * to consoles[] */
	PK_OPT_MODULES, /* printk.module=NAME:LEVEL[,NAME:LEVEL...] (modlevel.c),
			 * checked, into the char[] field */
	PK_OPT_TIME,	/* a time style: none, kernel, iso or iso-utc, or a
			 * PK_OPT_BOOL word (0: none, 1: kernel), as enum
			 * pk_time_style into an int */
};

/* One row of the table: one name. Rows may share a field (quiet, debug). */
struct pk_opt_def {
	const char *name;
	enum pk_opt_kind kind;
	int bare_ok;	 /* PK_OPT_BOOL: the bare word means 1 */
	long long min, max;
	size_t off, size; /* offsetof and sizeof the field in struct pk_opts */
	const char *const *choices; /* PK_OPT_CHOICE: NULL-terminated */
};

/* Every known option, in the order of the option list in options.c. */
extern const struct pk_opt_def pk_opts_table[];
extern const size_t pk_opts_table_len;

/* Reset @o to "nothing given": no warnings, every table field not given. */
void pk_opts_init(struct pk_opts *o);

/*
 * Parse @s (NULL or empty: nothing given) into @o, which need not be
 * initialised. Unknown or malformed words are skipped with a warning text
 * (pk_opts_warn); the others are applied in order, a later word overriding
 * an earlier one. Returns 0 if there was no warning, -EINVAL otherwise.
 */
int pk_opts_parse(const char *s, struct pk_opts *o);

/*
 * Add a warning text to @o: formatted by pk_fmt_vsnprintf and cut to
 * PK_OPTS_WARNING_LEN - 1 bytes. Once PK_OPTS_MAX_WARNINGS are held, the text
 * is dropped and o->warnings_dropped counted instead, so the first warnings
 * are the ones kept. Texts start with PK_OPTS_WARN_PREFIX and have no
 * trailing newline, e.g.
 *	pk_opts_warn(o, PK_OPTS_WARN_PREFIX "crash_dump=1 failed (error %d), ignored", -e);
 */
void pk_opts_warn(struct pk_opts *o, const char *fmt, ...) PK_PRINTF_FORMAT(2, 3);

/*
 * The parser of a console= value (@v, @n bytes, no quotes) into @c, with
 * its warnings in @o: 0, -EALREADY (rejected, and it said why) or another
 * negative errno (rejected: the caller says "bad value in"). The console
 * layer's table of kinds (src/console/console_kinds.c) sets it from a
 * constructor, as setup_hooks.h is filled, since the kinds and their
 * options are that layer's; NULL (a program without it): every console=
 * value is a bad one.
 */
extern int (*pk_opts_console_parser)(const char *v, size_t n, struct pk_opts_console *c,
				     struct pk_opts *o);

/* The words the kinds' parsers share (exact, no white space). */
int pk_opts_is_word(const char *s, size_t n, const char *lit);
/* Decimal digits only, at most @max: 0, -EINVAL or -ERANGE. */
int pk_opts_parse_uint(const char *v, size_t n, unsigned long long max, unsigned long long *out);
/* N[KMG] bytes, @min to @max: 0 or -EINVAL. */
int pk_opts_parse_size(const char *v, size_t n, unsigned long long min, unsigned long long max,
		       long long *out);
/* none, kernel, iso, iso-utc (enum pk_time_style): 0 or -EINVAL. */
int pk_opts_parse_time_style(const char *v, size_t n, int *out);
/* A console name pk_console_find() can look for: 1 if valid. */
int pk_opts_valid_console_name(const char *v, size_t n);
/* A bad value of a console option that names itself: one warning saying
 * which option and what it @takes; returns -EALREADY. */
int pk_opts_bad_console_option(struct pk_opts *o, const char *w, size_t n, const char *takes);

/* The largest log_buf_len= (and console file size=) accepted here. */
#define PK_OPTS_SIZE_MAX (1ll << 40)
/* The largest console=fd:N (the console row's .max, console_kinds.c's fd kind). */
#define PK_OPTS_CONSOLE_FD_MAX (1ll << 30)

#endif
