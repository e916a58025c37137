// SPDX-License-Identifier: MIT
/*
 * dev_internal.h - what dev_printk.c offers the modules that print about a
 * device in their own layout (dyndbg.c, netdev_printk.c).
 */
#ifndef PRINTK_DEV_INTERNAL_H
#define PRINTK_DEV_INTERNAL_H

#include <printk/dev_printk.h>

/* The kernel's dev_printk_emit(): @fmt as given (no "driver name: "
 * added), with @dev's SUBSYSTEM=/DEVICE= dictionary; the message ends its
 * line. @level 0..7. Returns the bytes of text stored. Async-signal-safe. */
int pk_dev_emit(int level, const struct pk_device *dev, const char *fmt, ...) PK_PRINTF(3, 4);

#endif
