/* SPDX-License-Identifier: MIT */
/*
 * printk/dev_printk.h - messages about a device, with the kernel's
 * SUBSYSTEM= and DEVICE= dictionary so readers can match them by device.
 *
 *     struct pk_device eth0 = { .name = "eth0", .driver = "e1000e",
 *                               .subsystem = "net", .ifindex = 2 };
 *     dev_info(&eth0, "link up at %d Mbps\n", 1000);
 *
 * prints "e1000e eth0: link up at 1000 Mbps" with SUBSYSTEM=net, DEVICE=n2.
 * DEVICE= is b<major>:<minor> for a block device number, c<major>:<minor>
 * for another device number, n<ifindex> in the "net" subsystem, otherwise
 * +<subsystem>:<name>. A device message always ends its line.
 */
#ifndef PRINTK_DEV_PRINTK_H
#define PRINTK_DEV_PRINTK_H

#include <printk/printk.h>

PK_BEGIN_DECLS

struct pk_device {
	const char *name;      /* dev_name(): "eth0", "sda", "0000:00:1f.2" */
	const char *driver;    /* bound driver; NULL: the subsystem stands in, as dev_driver_string() */
	const char *subsystem; /* class or bus: "net", "block", "pci", ...; NULL: no dictionary */
	unsigned int major;    /* device number; major 0: none */
	unsigned int minor;
	int ifindex;	       /* network interface index (subsystem "net") */
};

/* @level is a KERN_<LEVEL> string. Returns the bytes of text stored.
 * Context: as pk_printk() (async-signal-safe, never waits for a lock; the
 * printing caller makes the consoles' writes). */
PK_API int pk_dev_printk(const char *level, const struct pk_device *dev, const char *fmt, ...)
	PK_PRINTF(3, 4);

#define pk_dev_emerg(dev, ...)	pk_dev_printk(PK_KERN_EMERG, dev, __VA_ARGS__)
#define pk_dev_alert(dev, ...)	pk_dev_printk(PK_KERN_ALERT, dev, __VA_ARGS__)
#define pk_dev_crit(dev, ...)	pk_dev_printk(PK_KERN_CRIT, dev, __VA_ARGS__)
#define pk_dev_err(dev, ...)	pk_dev_printk(PK_KERN_ERR, dev, __VA_ARGS__)
#define pk_dev_warn(dev, ...)	pk_dev_printk(PK_KERN_WARNING, dev, __VA_ARGS__)
#define pk_dev_notice(dev, ...) pk_dev_printk(PK_KERN_NOTICE, dev, __VA_ARGS__)
#define pk_dev_info(dev, ...)	pk_dev_printk(PK_KERN_INFO, dev, __VA_ARGS__)
#ifdef DEBUG
#define pk_dev_dbg(dev, ...) pk_dev_printk(PK_KERN_DEBUG, dev, __VA_ARGS__)
#else
#define pk_dev_dbg(dev, ...)                                             \
	do {                                                             \
		if (0)                                                   \
			pk_dev_printk(PK_KERN_DEBUG, dev, __VA_ARGS__); \
	} while (0)
#endif

#ifndef PRINTK_NO_KERNEL_NAMES
#define dev_printk pk_dev_printk
#define dev_emerg  pk_dev_emerg
#define dev_alert  pk_dev_alert
#define dev_crit   pk_dev_crit
#define dev_err	   pk_dev_err
#define dev_warn   pk_dev_warn
#define dev_notice pk_dev_notice
#define dev_info   pk_dev_info
#define dev_dbg	   pk_dev_dbg
#endif

PK_END_DECLS

#endif
