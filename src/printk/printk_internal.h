// SPDX-License-Identifier: MIT
/*
 * printk_internal.h - what the front end (printk.c) offers the modules built
 * on it (dev_printk.c) and start-up (setup.c).
 */
#ifndef PRINTK_PRINTK_INTERNAL_H
#define PRINTK_PRINTK_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* printk at facility 0 whose message always ends its line, as dev_printk's
 * do. Async-signal-safe, like printk. */
int pk_vprintk_emit_line(int level, const char *dict, size_t dictlen, const char *fmt, va_list args);
/* Deferred records the calling thread stored (pk_printk_lit), for tests. */
uint64_t pk_printk_deferred_here(void);

/* Store the notices printk still owes (lines lost nested too deep or
 * refused by the ring, normally said with the next line stored): at exit,
 * where no next line comes. Async-signal-safe. */
void pk_printk_report_lost(void);

/* The CODE_FILE=, CODE_LINE=, CODE_FUNC= dictionary of @site into @dict
 * (at least 1008 bytes; 0 when smaller): its length. Async-signal-safe. */
struct pk_site;
size_t pk_site_srcloc_dict(const struct pk_site *site, char *dict, size_t size);

#endif
