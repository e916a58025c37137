// SPDX-License-Identifier: MIT
/*
 * setup_hooks.h - what start-up (setup.c) reaches without naming it: printk
 * itself, and the features PRINTK_OPTS can name beyond the core: /dev/kmsg
 * (printk.devkmsg=) and dynamic debug (dyndbg=). (The forwarding consoles,
 * console=journal and console=syslog:, are rows of the console layer's
 * table of kinds, console/console_kinds.h, added the same way: from a
 * constructor of this priority.)
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
};

/* setup.c's; each field written only by the file named above it. */
extern struct pk_setup_hooks pk_setup_hooks;

#endif
