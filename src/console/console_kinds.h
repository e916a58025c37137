// SPDX-License-Identifier: MIT
/*
 * console_kinds.h - the table of console kinds (console_kinds.c): what a
 * console spec ("fd:3,threaded", "file:/var/log/x.log,size=1M",
 * "syslog:tcp:127.0.0.1:601,rfc3164") names, how its argument and its
 * options are read, how the console is made and how it is freed. One
 * parser and one maker serve PRINTK_OPTS' console= (options.c, setup.c),
 * pk_console_create() and pk-forward's target.
 *
 * Every kind's spec parses the same way in every program (PRINTK_OPTS
 * means one thing whatever is linked), so the rows of console_kinds.c
 * hold the syntax of every kind the library has: stderr, fd and file
 * whole, journal and syslog without their maker. A kind of a higher layer
 * (the forwarding consoles) supplies create and release with
 * pk_console_kind_register() from a constructor of priority
 * PK_CONSOLE_KIND_PRIORITY; a program linked statically without that layer
 * keeps a row with no create, and a spec naming it warns once that the
 * row's .feature is not linked. A kind with no row here (a program's own)
 * registers a whole row, its syntax included.
 */
#ifndef PRINTK_CONSOLE_KINDS_H
#define PRINTK_CONSOLE_KINDS_H

#include <stddef.h>

#include "log/options.h"

struct console;

/* A row's flags. */
#define PK_KIND_ARG	     0x01 /* takes ":ARG" (required unless PK_KIND_ARG_OPTIONAL) */
#define PK_KIND_ARG_OPTIONAL 0x02 /* "NAME" alone is fine too */
#define PK_KIND_TEXT	     0x04 /* a text console: ,json and ,time= apply */

struct pk_console_kind {
	const char *name; /* the spec's head: "fd" in "fd:3" */
	int id;		  /* enum pk_opts_console_kind (PK_OPTCON_OTHER for a new kind) */
	unsigned flags;	  /* PK_KIND_* */
	/*
	 * One trailing ",WORD" that is not one of every kind's (threaded,
	 * extended, lossless, json, name=, loglevel=, time=): 1 if it is this
	 * kind's option (stored in @c), 0 if not (it belongs to the argument:
	 * a path may hold commas), -EINVAL for a bad value, -EALREADY for a
	 * bad value it warned about (pk_opts_bad_console_option). NULL: none.
	 * Pure: no allocation, no I/O (options.h's context).
	 */
	int (*option)(struct pk_opts_console *c, const char *w, size_t n, struct pk_opts *o);
	/* The argument after "NAME:" (@n 0: none, with PK_KIND_ARG_OPTIONAL),
	 * once the options are read: 0 or as .option. NULL: stored in c->path. */
	int (*arg)(struct pk_opts_console *c, const char *a, size_t n, struct pk_opts *o);
	/* Make the console @c describes, not registered: 0 or a negative errno. */
	int (*create)(struct console **con, const struct pk_opts_console *c);
	/* Free a console create made (pk_console_destroy()); NULL: nothing to free. */
	void (*release)(struct console *con);
	/* Optional: an error of create in words (a resolver's), for the warning. */
	const char *(*strerror)(int err);
	/* Optional, supplied with create: what only the maker knows about a
	 * parsed spec (syslog: which transports take framing=): 0 or as .option. */
	int (*check)(const struct pk_opts_console *c, struct pk_opts *o);
	/* A row without create: the feature whose absence a spec names. */
	const char *feature;
};

#define PK_CONSOLE_KIND_PRIORITY 101 /* before start-up's constructor (setup_hooks.h's) */
#define PK_CONSOLE_KINDS_MAX	 32
/*
 * From a constructor of PK_CONSOLE_KIND_PRIORITY, before any thread (K1):
 * @k's create, release, strerror and check complete the row of its name
 * that has no create yet; @k is a new row if there is none. 0, -EEXIST
 * (that row has its create), -EINVAL (no name or create), -ENOSPC.
 */
int pk_console_kind_register(const struct pk_console_kind *k);

/* PRINTK_OPTS' console= value, or a pk_console_create() spec, into @c
 * (pk_opts_console_parser's contract: options.h). */
int pk_console_spec_parse(const char *v, size_t n, struct pk_opts_console *c, struct pk_opts *o);

/*
 * The console @c describes (a kind, not none or -NAME), not registered,
 * its flags and name applied, and its ,loglevel= and ,time= kept for its
 * registration (pk_register_console() applies them). 0, or a negative
 * errno: -ENOENT when the kind is not linked into this program (said in
 * @o once per feature for the process's lifetime), else the kind's own
 * error, which the caller may report (pk_console_spec_unusable()).
 */
int pk_console_spec_create(struct console **con, const struct pk_opts_console *c, struct pk_opts *o);
/* The warning for @c's console that could not be made or registered. */
void pk_console_spec_unusable(const struct pk_opts_console *c, int err, struct pk_opts *o);
/* pk_register_console()'s: the spec's own level and time style, now that
 * @con is registered; pk_console_destroy()'s: forget them. */
void pk_console_kinds_registered(struct console *con);
void pk_console_kinds_forget(struct console *con);

#endif
