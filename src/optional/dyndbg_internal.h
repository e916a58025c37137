// SPDX-License-Identifier: MIT
/*
 * dyndbg_internal.h - what dynamic debug (dyndbg.c) shares with the
 * modules that print debug messages (netdev_printk.c); printk.c sees it
 * through the mailbox of printk/dyndbg_watch.h only, and setup.c reaches
 * its PRINTK_OPTS dyndbg= through setup_hooks.h.
 */
#ifndef PRINTK_DYNDBG_INTERNAL_H
#define PRINTK_DYNDBG_INTERNAL_H

#include <printk/dynamic_debug.h>

#include "printk/dyndbg_watch.h"

/* PRINTK_OPTS dyndbg=: check and apply @query now, and again to every
 * object registered later. The sites matched, or the first error (the
 * kernel's messages are logged). Start-up only. */
int pk_dyndbg_boot(const char *query);

/* The f/l/m/s/t prefix of @site's message into @buf (128 bytes), the
 * kernel's __dynamic_emit_prefix(). Returns @buf. Async-signal-safe. */
const char *pk_dyndbg_prefix(const struct pk_dyndbg *site, char *buf);
#define PK_DYNDBG_PREFIX_SIZE 128

#endif
