// SPDX-License-Identifier: MIT
/*
 * setup_hooks.h - what start-up (setup.c) reaches without naming it: printk
 * itself, and the features PRINTK_OPTS can name beyond the core: /dev/kmsg
 * (printk.devkmsg=), dynamic debug (dyndbg=) and the forwarding consoles
 * (console=journal, console=syslog:).
 *
 * Each file that provides an entry fills it from a constructor of priority
 * PK_SETUP_HOOK_PRIORITY, which runs before start-up's (setup.c's has none),
 * so setup.c depends on none of them and the object graph has no cycle:
 * printk.c's entries are what brings setup.c into a program linked
 * statically against printk, and a feature is in such a program only when
 * the program uses it or calls pk_printk_link_all_options() (optin.c). An
 * entry whose file is not in the program stays NULL: PRINTK_OPTS naming it
 * warns once. In the shared library every file is there, every entry set.
 *
 * Written by constructors only, before any thread can exist; read by
 * setup.c afterwards.
 */
#ifndef PRINTK_SETUP_HOOKS_H
#define PRINTK_SETUP_HOOKS_H

#include <printk/compiler.h>

struct console;

#define PK_SETUP_HOOK_PRIORITY 101

struct pk_setup_hooks {
	/* printk.c: start-up's warnings; the lost-message report at exit */
	int (*printk)(const char *fmt, ...) PK_PRINTF(1, 2);
	void (*report_lost)(void);
	/* kmsg.c: printk.devkmsg= */
	int (*set_devkmsg)(const char *mode);
	/* dyndbg.c: dyndbg= */
	int (*dyndbg_boot)(const char *query);
	/* console_net.c: console=journal[:PATH], console=syslog:TARGET */
	int (*journal_create)(struct console **con, const char *path);
	/* framing, bom: 0 not given, else the PK_SYSLOG_FRAMING_* value or
	 * the yes/no, plus one (options.h's encoding) */
	int (*syslog_create)(struct console **con, const char *target, int format,
			     int framing, int bom);
	/* why the last create failed, in words ("Name or service not known") */
	const char *(*create_strerror)(int err);
};

/* setup.c's; each field written only by the file named above it. */
extern struct pk_setup_hooks pk_setup_hooks;

#endif
