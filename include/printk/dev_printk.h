/* SPDX-License-Identifier: MIT */
/*
 * printk/dev_printk.h - messages about a device, with the kernel's
 * SUBSYSTEM= and DEVICE= dictionary so readers can match them by device.
 *
 *     struct device eth0 = { .name = "eth0", .driver = "e1000e",
 *                            .subsystem = "net", .ifindex = 2 };
 *     dev_info(&eth0, "link up at %d Mbps\n", 1000);
 *
 * prints "e1000e eth0: link up at 1000 Mbps" with SUBSYSTEM=net, DEVICE=n2,
 * as the kernel's dev_printk: "<dev_driver_string()> <dev_name()>: text".
 * DEVICE= is b<major>:<minor> for a block device number, c<major>:<minor>
 * for another device number, n<ifindex> in the "net" subsystem, otherwise
 * +<subsystem>:<name>. A device message always ends its line.
 *
 * struct device is the kernel's name for the type; struct pk_device is the
 * same type (a macro). PRINTK_NO_DEVICE_NAME, or PRINTK_NO_KERNEL_NAMES,
 * keeps the tag out of the way of a program's own struct device: the type
 * is then struct pk_device only.
 */
#ifndef PRINTK_DEV_PRINTK_H
#define PRINTK_DEV_PRINTK_H

#include <printk/printk.h>
#include <printk/ratelimit.h>

PK_BEGIN_DECLS

#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_DEVICE_NAME)
#define pk_device device
#endif

/* Room for a name set by dev_set_name(), its NUL included. */
#define PK_DEVICE_NAME_MAX 64

/*
 * The parts of the kernel's struct device that its messages print. Set the
 * fields directly or with designated initializers; only dev_set_name()
 * writes into the struct (name_buf, then name points there: a copy of the
 * struct keeps pointing at the original's buffer).
 */
struct pk_device {
	const char *name;      /* dev_name() unless init_name: "eth0", "sda", "0000:00:1f.2" */
	const char *driver;    /* bound driver; NULL: the subsystem stands in (dev_driver_string()) */
	const char *subsystem; /* class or bus: "net", "block", "pci", ...; NULL: no dictionary */
	unsigned int major;    /* device number; major 0: none */
	unsigned int minor;
	int ifindex;			 /* network interface index (subsystem "net") */
	const char *init_name;		 /* the kernel's: the name until the device is added */
	struct pk_device *parent;	 /* the kernel's; printing does not use it */
	char name_buf[PK_DEVICE_NAME_MAX]; /* dev_set_name()'s copy */
};

/* The device's name: init_name if set, else name (the kernel's order).
 * Context: any (async-signal-safe). */
static inline const char *pk_dev_name(const struct pk_device *dev)
{
	return dev->init_name ? dev->init_name : dev->name;
}

/* The driver's name, else the subsystem's, else "" (the kernel's
 * dev_driver_string() with its bus-then-class fallback).
 * Context: any (async-signal-safe). */
static inline const char *pk_dev_driver_string(const struct pk_device *dev)
{
	return dev->driver ? dev->driver : dev->subsystem ? dev->subsystem : "";
}

/*
 * Format the device's name into its own buffer, as the kernel's
 * dev_set_name() (printk's conversions; a '/' becomes '!', as in a kobject
 * name), and point name at it. 0; -ENAMETOOLONG when it was cut to
 * PK_DEVICE_NAME_MAX - 1 bytes (the cut name is set); -EINVAL for NULL.
 * Context: any (async-signal-safe, no allocation); not thread-safe
 * against messages about the same device.
 */
PK_API int pk_dev_set_name(struct pk_device *dev, const char *fmt, ...) PK_PRINTF(2, 3);

/* @level is a KERN_<LEVEL> string. Returns the bytes of text stored.
 * Context: as pk_printk() (async-signal-safe, never waits for a lock; the
 * printing caller makes the consoles' writes). */
PK_API int pk_dev_printk(const char *level, const struct pk_device *dev, const char *fmt, ...)
	PK_PRINTF(3, 4);

/* The kernel's "probe again later" code (Linux include/linux/errno.h). */
#define PK_EPROBE_DEFER 517

/*
 * A probe's failure, the kernel's way: returns @err; prints
 * "<driver> <device>: error <%pe of err>: <text>" with dev_err (dev_warn
 * for pk_dev_warn_probe), except for -EPROBE_DEFER (nothing: the kernel
 * records the reason for its deferred-probe list instead, which a process
 * has no use for) and -ENOMEM (nothing: the allocator has said enough).
 * Context: as pk_dev_printk().
 */
PK_API int pk_dev_err_probe(const struct pk_device *dev, int err, const char *fmt, ...)
	PK_PRINTF(3, 4);
PK_API int pk_dev_warn_probe(const struct pk_device *dev, int err, const char *fmt, ...)
	PK_PRINTF(3, 4);

/* #define dev_fmt(fmt) "mydrv: " fmt before the include prefixes the
 * text of dev_emerg() ... dev_dbg() (not dev_printk()), as in the kernel. */
#ifndef dev_fmt
#define dev_fmt(fmt) fmt
#endif

#define PK_DEV(level, dev, ...) \
	pk_dev_printk(level, dev, dev_fmt(PK_FIRST(__VA_ARGS__)) PK_REST(__VA_ARGS__))
#define pk_dev_emerg(dev, ...)	PK_DEV(PK_KERN_EMERG, dev, __VA_ARGS__)
#define pk_dev_alert(dev, ...)	PK_DEV(PK_KERN_ALERT, dev, __VA_ARGS__)
#define pk_dev_crit(dev, ...)	PK_DEV(PK_KERN_CRIT, dev, __VA_ARGS__)
#define pk_dev_err(dev, ...)	PK_DEV(PK_KERN_ERR, dev, __VA_ARGS__)
#define pk_dev_warn(dev, ...)	PK_DEV(PK_KERN_WARNING, dev, __VA_ARGS__)
#define pk_dev_notice(dev, ...) PK_DEV(PK_KERN_NOTICE, dev, __VA_ARGS__)
#define pk_dev_info(dev, ...)	PK_DEV(PK_KERN_INFO, dev, __VA_ARGS__)
#if PK_DYNDBG_ON
#define pk_dev_dbg(dev, ...)                                                                 \
	PK_DYNDBG_EXPR(PK_FIRST(__VA_ARGS__),                                                \
		       pk__dynamic_dev_dbg(&pk_dd_site_, dev, dev_fmt(PK_FIRST(__VA_ARGS__)) \
					   PK_REST(__VA_ARGS__)))
#elif defined(DEBUG)
#define pk_dev_dbg(dev, ...) PK_DEV(PK_KERN_DEBUG, dev, __VA_ARGS__)
#else
#define pk_dev_dbg(dev, ...)                                  \
	do {                                                  \
		if (0)                                        \
			PK_DEV(PK_KERN_DEBUG, dev, __VA_ARGS__); \
	} while (0)
#endif

/* Once per call site (the kernel's dev_level_once; dev_dbg_once marks its
 * site even when dev_dbg is compiled out, as there). */
#define pk_dev_emerg_once(dev, ...)  PK_DO_ONCE(pk_dev_emerg(dev, __VA_ARGS__))
#define pk_dev_alert_once(dev, ...)  PK_DO_ONCE(pk_dev_alert(dev, __VA_ARGS__))
#define pk_dev_crit_once(dev, ...)   PK_DO_ONCE(pk_dev_crit(dev, __VA_ARGS__))
#define pk_dev_err_once(dev, ...)    PK_DO_ONCE(pk_dev_err(dev, __VA_ARGS__))
#define pk_dev_warn_once(dev, ...)   PK_DO_ONCE(pk_dev_warn(dev, __VA_ARGS__))
#define pk_dev_notice_once(dev, ...) PK_DO_ONCE(pk_dev_notice(dev, __VA_ARGS__))
#define pk_dev_info_once(dev, ...)   PK_DO_ONCE(pk_dev_info(dev, __VA_ARGS__))
#define pk_dev_dbg_once(dev, ...)    PK_DO_ONCE(pk_dev_dbg(dev, __VA_ARGS__))

/* One rate limit per call site: 10 messages per 5 s, then
 * "<function>: N callbacks suppressed" (the kernel's dev_level_ratelimited). */
#define PK_DEV_RATELIMITED(call)                                                       \
	do {                                                                           \
		static PK_DEFINE_RATELIMIT_STATE(pk_dev_rs_, PK_DEFAULT_RATELIMIT_INTERVAL, \
						 PK_DEFAULT_RATELIMIT_BURST);          \
		if (pk___ratelimit(&pk_dev_rs_, __func__))                             \
			call;                                                          \
	} while (0)
#define pk_dev_emerg_ratelimited(dev, ...)  PK_DEV_RATELIMITED(pk_dev_emerg(dev, __VA_ARGS__))
#define pk_dev_alert_ratelimited(dev, ...)  PK_DEV_RATELIMITED(pk_dev_alert(dev, __VA_ARGS__))
#define pk_dev_crit_ratelimited(dev, ...)   PK_DEV_RATELIMITED(pk_dev_crit(dev, __VA_ARGS__))
#define pk_dev_err_ratelimited(dev, ...)    PK_DEV_RATELIMITED(pk_dev_err(dev, __VA_ARGS__))
#define pk_dev_warn_ratelimited(dev, ...)   PK_DEV_RATELIMITED(pk_dev_warn(dev, __VA_ARGS__))
#define pk_dev_notice_ratelimited(dev, ...) PK_DEV_RATELIMITED(pk_dev_notice(dev, __VA_ARGS__))
#define pk_dev_info_ratelimited(dev, ...)   PK_DEV_RATELIMITED(pk_dev_info(dev, __VA_ARGS__))
/* Without DEBUG the kernel's dev_dbg_ratelimited() takes no rate limit slot. */
#if PK_DYNDBG_ON
/* The site is checked first: one that is off takes no slot (the kernel's). */
#define pk_dev_dbg_ratelimited(dev, ...)                                                          \
	PK_DYNDBG_CALL(PK_FIRST(__VA_ARGS__),                                                     \
		       PK_DEV_RATELIMITED(pk__dynamic_dev_dbg(&pk_dd_site_, dev,                  \
							      dev_fmt(PK_FIRST(__VA_ARGS__))      \
							      PK_REST(__VA_ARGS__))))
#elif defined(DEBUG)
#define pk_dev_dbg_ratelimited(dev, ...) PK_DEV_RATELIMITED(pk_dev_dbg(dev, __VA_ARGS__))
#else
#define pk_dev_dbg_ratelimited(dev, ...) pk_dev_dbg(dev, __VA_ARGS__)
#endif

#ifndef PRINTK_NO_KERNEL_NAMES
/* Function-like, so that variables named dev_name keep working. */
#define dev_name(dev)		pk_dev_name(dev)
#define dev_set_name(...)	pk_dev_set_name(__VA_ARGS__)
#define dev_driver_string(dev)	pk_dev_driver_string(dev)
#define dev_printk		pk_dev_printk
#define dev_emerg		pk_dev_emerg
#define dev_alert		pk_dev_alert
#define dev_crit		pk_dev_crit
#define dev_err			pk_dev_err
#define dev_warn		pk_dev_warn
#define dev_notice		pk_dev_notice
#define dev_info		pk_dev_info
#define dev_dbg			pk_dev_dbg
#define dev_emerg_once		pk_dev_emerg_once
#define dev_alert_once		pk_dev_alert_once
#define dev_crit_once		pk_dev_crit_once
#define dev_err_once		pk_dev_err_once
#define dev_warn_once		pk_dev_warn_once
#define dev_notice_once		pk_dev_notice_once
#define dev_info_once		pk_dev_info_once
#define dev_dbg_once		pk_dev_dbg_once
#define dev_emerg_ratelimited	pk_dev_emerg_ratelimited
#define dev_alert_ratelimited	pk_dev_alert_ratelimited
#define dev_crit_ratelimited	pk_dev_crit_ratelimited
#define dev_err_ratelimited	pk_dev_err_ratelimited
#define dev_warn_ratelimited	pk_dev_warn_ratelimited
#define dev_notice_ratelimited	pk_dev_notice_ratelimited
#define dev_info_ratelimited	pk_dev_info_ratelimited
#define dev_dbg_ratelimited	pk_dev_dbg_ratelimited
#define dev_err_probe		pk_dev_err_probe
#define dev_warn_probe		pk_dev_warn_probe
#ifndef EPROBE_DEFER
#define EPROBE_DEFER PK_EPROBE_DEFER
#endif
#endif

PK_END_DECLS

#endif
