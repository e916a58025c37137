// SPDX-License-Identifier: MIT
/*
 * printk_internal.h - what the front end (printk.c) offers the modules built
 * on it (dev_printk.c).
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

#endif
