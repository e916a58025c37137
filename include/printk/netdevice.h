/* SPDX-License-Identifier: MIT */
/*
 * printk/netdevice.h - messages about a network interface, the kernel's
 * netdev_err() ... netdev_dbg() and the netif_*() family that filters them
 * by a driver's msg_enable bits (Linux include/linux/net_debug.h,
 * include/linux/netdevice.h, net/core/dev.c).
 *
 *     struct device pdev = { .name = "0000:00:1f.6", .driver = "e1000e",
 *                            .subsystem = "pci" };
 *     struct net_device nd = { .name = "eth0", .dev.parent = &pdev };
 *     netdev_info(&nd, "link up\n");
 *
 * prints "e1000e 0000:00:1f.6 eth0: link up" with the parent's
 * SUBSYSTEM=/DEVICE= dictionary, the kernel's "%s %s %s%s: " of the
 * parent's driver and name, the interface's name and its registration
 * state. Without a parent: "eth0: link up"; a NULL device:
 * "(NULL net_device): link up"; an empty name, or one still holding a
 * '%' (a template such as "eth%d"): "(unnamed net_device)".
 *
 * The registration state: the kernel prints " (uninitialized)",
 * " (unregistering)" ... after the name of an interface that is not
 * registered. A process has no register_netdev(), so here the state that
 * a zeroed struct has, 0, is PK_NETREG_REGISTERED (no suffix), where the
 * kernel's 0 is NETREG_UNINITIALIZED; set reg_state to print the others.
 *
 * struct net_device is the kernel's name for the type (a macro for
 * struct pk_net_device); PRINTK_NO_NET_DEVICE_NAME, or
 * PRINTK_NO_KERNEL_NAMES, keeps the tag and IFNAMSIZ, NETREG_* and
 * NETIF_MSG_* out of the way of a program's own. Include <net/if.h>
 * first when a file uses both: its IFNAMSIZ is then the one defined.
 */
#ifndef PRINTK_NETDEVICE_H
#define PRINTK_NETDEVICE_H

#include <string.h>

#include <printk/dev_printk.h>
#include <printk/dynamic_debug.h>
#include <printk/printk.h>

PK_BEGIN_DECLS

#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_NET_DEVICE_NAME)
#define pk_net_device net_device
#endif

/* The kernel's IFNAMSIZ: an interface name and its NUL. */
#define PK_IFNAMSIZ 16

enum pk_netdev_reg_state {
	PK_NETREG_REGISTERED = 0, /* the kernel's value is 1; see above */
	PK_NETREG_UNINITIALIZED,
	PK_NETREG_UNREGISTERING,
	PK_NETREG_UNREGISTERED,
	PK_NETREG_RELEASED,
	PK_NETREG_DUMMY,
};

/* The parts of the kernel's struct net_device that its messages print. */
struct pk_net_device {
	char name[PK_IFNAMSIZ];	 /* "eth0" */
	struct pk_device dev;	 /* dev.parent: the bus device that prefixes messages */
	int ifindex;		 /* the kernel's; printing does not use it */
	unsigned char reg_state; /* enum pk_netdev_reg_state */
};

/* The name messages print: "(unnamed net_device)" for an empty name or
 * one with a '%' (the kernel's netdev_name()).
 * Context: any (async-signal-safe). */
static inline const char *pk_netdev_name(const struct pk_net_device *dev)
{
	if (!dev->name[0] || memchr(dev->name, '%', sizeof(dev->name)))
		return "(unnamed net_device)";
	return dev->name;
}

/* The suffix after the name: "" when registered, else " (uninitialized)",
 * " (unregistering)", " (unregistered)", " (released)", " (dummy)" or
 * " (unknown)" (the kernel's netdev_reg_state()).
 * Context: any (async-signal-safe). */
static inline const char *pk_netdev_reg_state(const struct pk_net_device *dev)
{
	switch (dev->reg_state) {
	case PK_NETREG_REGISTERED: return "";
	case PK_NETREG_UNINITIALIZED: return " (uninitialized)";
	case PK_NETREG_UNREGISTERING: return " (unregistering)";
	case PK_NETREG_UNREGISTERED: return " (unregistered)";
	case PK_NETREG_RELEASED: return " (released)";
	case PK_NETREG_DUMMY: return " (dummy)";
	}
	return " (unknown)";
}

/* @level is a KERN_<LEVEL> string. With a parent the message ends its
 * line and carries the parent's dictionary (dev_printk_emit()); otherwise
 * it is a printk.
 * Context: as pk_printk() (async-signal-safe). */
PK_API void pk_netdev_printk(const char *level, const struct pk_net_device *dev, const char *fmt,
			     ...) PK_PRINTF(3, 4);

#define pk_netdev_emerg(dev, ...)  pk_netdev_printk(PK_KERN_EMERG, dev, __VA_ARGS__)
#define pk_netdev_alert(dev, ...)  pk_netdev_printk(PK_KERN_ALERT, dev, __VA_ARGS__)
#define pk_netdev_crit(dev, ...)   pk_netdev_printk(PK_KERN_CRIT, dev, __VA_ARGS__)
#define pk_netdev_err(dev, ...)	   pk_netdev_printk(PK_KERN_ERR, dev, __VA_ARGS__)
#define pk_netdev_warn(dev, ...)   pk_netdev_printk(PK_KERN_WARNING, dev, __VA_ARGS__)
#define pk_netdev_notice(dev, ...) pk_netdev_printk(PK_KERN_NOTICE, dev, __VA_ARGS__)
#define pk_netdev_info(dev, ...)   pk_netdev_printk(PK_KERN_INFO, dev, __VA_ARGS__)
#if PK_DYNDBG_ON
#define pk_netdev_dbg(dev, ...)                                                     \
	PK_DYNDBG_CALL(PK_FIRST(__VA_ARGS__),                                       \
		       pk__dynamic_netdev_dbg(&pk_dd_site_, dev, __VA_ARGS__))
#elif defined(DEBUG)
#define pk_netdev_dbg(dev, ...) pk_netdev_printk(PK_KERN_DEBUG, dev, __VA_ARGS__)
#else
#define pk_netdev_dbg(dev, ...)                                        \
	do {                                                           \
		if (0)                                                 \
			pk_netdev_printk(PK_KERN_DEBUG, dev, __VA_ARGS__); \
	} while (0)
#endif
/* VERBOSE_DEBUG makes netdev_vdbg() a netdev_dbg(), as in the kernel. */
#ifdef VERBOSE_DEBUG
#define pk_netdev_vdbg pk_netdev_dbg
#else
#define pk_netdev_vdbg(dev, ...)                                       \
	do {                                                           \
		if (0)                                                 \
			pk_netdev_printk(PK_KERN_DEBUG, dev, __VA_ARGS__); \
	} while (0)
#endif

#define pk_netdev_emerg_once(dev, ...)	PK_DO_ONCE(pk_netdev_emerg(dev, __VA_ARGS__))
#define pk_netdev_alert_once(dev, ...)	PK_DO_ONCE(pk_netdev_alert(dev, __VA_ARGS__))
#define pk_netdev_crit_once(dev, ...)	PK_DO_ONCE(pk_netdev_crit(dev, __VA_ARGS__))
#define pk_netdev_err_once(dev, ...)	PK_DO_ONCE(pk_netdev_err(dev, __VA_ARGS__))
#define pk_netdev_warn_once(dev, ...)	PK_DO_ONCE(pk_netdev_warn(dev, __VA_ARGS__))
#define pk_netdev_notice_once(dev, ...) PK_DO_ONCE(pk_netdev_notice(dev, __VA_ARGS__))
#define pk_netdev_info_once(dev, ...)	PK_DO_ONCE(pk_netdev_info(dev, __VA_ARGS__))

/* A driver's msg_enable bits (the kernel's NETIF_MSG_*). */
enum {
	PK_NETIF_MSG_DRV = 0x0001,
	PK_NETIF_MSG_PROBE = 0x0002,
	PK_NETIF_MSG_LINK = 0x0004,
	PK_NETIF_MSG_TIMER = 0x0008,
	PK_NETIF_MSG_IFDOWN = 0x0010,
	PK_NETIF_MSG_IFUP = 0x0020,
	PK_NETIF_MSG_RX_ERR = 0x0040,
	PK_NETIF_MSG_TX_ERR = 0x0080,
	PK_NETIF_MSG_TX_QUEUED = 0x0100,
	PK_NETIF_MSG_INTR = 0x0200,
	PK_NETIF_MSG_TX_DONE = 0x0400,
	PK_NETIF_MSG_RX_STATUS = 0x0800,
	PK_NETIF_MSG_PKTDATA = 0x1000,
	PK_NETIF_MSG_HW = 0x2000,
	PK_NETIF_MSG_WOL = 0x4000,
};

/* Is @type's bit set in (p)->msg_enable? (the kernel's netif_msg_<type>()) */
#define pk_netif_msg_drv(p)	  ((p)->msg_enable & PK_NETIF_MSG_DRV)
#define pk_netif_msg_probe(p)	  ((p)->msg_enable & PK_NETIF_MSG_PROBE)
#define pk_netif_msg_link(p)	  ((p)->msg_enable & PK_NETIF_MSG_LINK)
#define pk_netif_msg_timer(p)	  ((p)->msg_enable & PK_NETIF_MSG_TIMER)
#define pk_netif_msg_ifdown(p)	  ((p)->msg_enable & PK_NETIF_MSG_IFDOWN)
#define pk_netif_msg_ifup(p)	  ((p)->msg_enable & PK_NETIF_MSG_IFUP)
#define pk_netif_msg_rx_err(p)	  ((p)->msg_enable & PK_NETIF_MSG_RX_ERR)
#define pk_netif_msg_tx_err(p)	  ((p)->msg_enable & PK_NETIF_MSG_TX_ERR)
#define pk_netif_msg_tx_queued(p) ((p)->msg_enable & PK_NETIF_MSG_TX_QUEUED)
#define pk_netif_msg_intr(p)	  ((p)->msg_enable & PK_NETIF_MSG_INTR)
#define pk_netif_msg_tx_done(p)	  ((p)->msg_enable & PK_NETIF_MSG_TX_DONE)
#define pk_netif_msg_rx_status(p) ((p)->msg_enable & PK_NETIF_MSG_RX_STATUS)
#define pk_netif_msg_pktdata(p)	  ((p)->msg_enable & PK_NETIF_MSG_PKTDATA)
#define pk_netif_msg_hw(p)	  ((p)->msg_enable & PK_NETIF_MSG_HW)
#define pk_netif_msg_wol(p)	  ((p)->msg_enable & PK_NETIF_MSG_WOL)

/* netif_err(priv, link, dev, ...) prints when priv->msg_enable has
 * NETIF_MSG_LINK (@type is the lower-case name after NETIF_MSG_). */
#define pk_netif_printk(priv, type, level, dev, ...)                   \
	do {                                                           \
		if (pk_netif_msg_##type(priv))                         \
			pk_netdev_printk(level, dev, __VA_ARGS__);     \
	} while (0)
#define PK_NETIF_LEVEL(level, priv, type, dev, ...)                    \
	do {                                                           \
		if (pk_netif_msg_##type(priv))                         \
			pk_netdev_##level(dev, __VA_ARGS__);           \
	} while (0)
#define pk_netif_emerg(priv, type, dev, ...)  PK_NETIF_LEVEL(emerg, priv, type, dev, __VA_ARGS__)
#define pk_netif_alert(priv, type, dev, ...)  PK_NETIF_LEVEL(alert, priv, type, dev, __VA_ARGS__)
#define pk_netif_crit(priv, type, dev, ...)   PK_NETIF_LEVEL(crit, priv, type, dev, __VA_ARGS__)
#define pk_netif_err(priv, type, dev, ...)    PK_NETIF_LEVEL(err, priv, type, dev, __VA_ARGS__)
#define pk_netif_warn(priv, type, dev, ...)   PK_NETIF_LEVEL(warn, priv, type, dev, __VA_ARGS__)
#define pk_netif_notice(priv, type, dev, ...) PK_NETIF_LEVEL(notice, priv, type, dev, __VA_ARGS__)
#define pk_netif_info(priv, type, dev, ...)   PK_NETIF_LEVEL(info, priv, type, dev, __VA_ARGS__)
#define pk_netif_dbg(priv, type, dev, ...)    PK_NETIF_LEVEL(dbg, priv, type, dev, __VA_ARGS__)
#define pk_netif_vdbg(priv, type, dev, ...)   PK_NETIF_LEVEL(vdbg, priv, type, dev, __VA_ARGS__)

#ifndef PRINTK_NO_KERNEL_NAMES
#define netdev_name(dev)   pk_netdev_name(dev)
#define netdev_reg_state(dev) pk_netdev_reg_state(dev)
#define netdev_printk	   pk_netdev_printk
#define netdev_emerg	   pk_netdev_emerg
#define netdev_alert	   pk_netdev_alert
#define netdev_crit	   pk_netdev_crit
#define netdev_err	   pk_netdev_err
#define netdev_warn	   pk_netdev_warn
#define netdev_notice	   pk_netdev_notice
#define netdev_info	   pk_netdev_info
#define netdev_dbg	   pk_netdev_dbg
#define netdev_vdbg	   pk_netdev_vdbg
#define netdev_emerg_once  pk_netdev_emerg_once
#define netdev_alert_once  pk_netdev_alert_once
#define netdev_crit_once   pk_netdev_crit_once
#define netdev_err_once	   pk_netdev_err_once
#define netdev_warn_once   pk_netdev_warn_once
#define netdev_notice_once pk_netdev_notice_once
#define netdev_info_once   pk_netdev_info_once
#define netif_msg_drv	   pk_netif_msg_drv
#define netif_msg_probe	   pk_netif_msg_probe
#define netif_msg_link	   pk_netif_msg_link
#define netif_msg_timer	   pk_netif_msg_timer
#define netif_msg_ifdown   pk_netif_msg_ifdown
#define netif_msg_ifup	   pk_netif_msg_ifup
#define netif_msg_rx_err   pk_netif_msg_rx_err
#define netif_msg_tx_err   pk_netif_msg_tx_err
#define netif_msg_tx_queued pk_netif_msg_tx_queued
#define netif_msg_intr	   pk_netif_msg_intr
#define netif_msg_tx_done  pk_netif_msg_tx_done
#define netif_msg_rx_status pk_netif_msg_rx_status
#define netif_msg_pktdata  pk_netif_msg_pktdata
#define netif_msg_hw	   pk_netif_msg_hw
#define netif_msg_wol	   pk_netif_msg_wol
#define netif_printk	   pk_netif_printk
#define netif_emerg	   pk_netif_emerg
#define netif_alert	   pk_netif_alert
#define netif_crit	   pk_netif_crit
#define netif_err	   pk_netif_err
#define netif_warn	   pk_netif_warn
#define netif_notice	   pk_netif_notice
#define netif_info	   pk_netif_info
#define netif_dbg	   pk_netif_dbg
#define netif_vdbg	   pk_netif_vdbg
#ifndef PRINTK_NO_NET_DEVICE_NAME
/* <net/if.h> has it too (16): whichever comes first defines it. */
#ifndef IFNAMSIZ
#define IFNAMSIZ	      PK_IFNAMSIZ
#endif
#define NETREG_REGISTERED     PK_NETREG_REGISTERED
#define NETREG_UNINITIALIZED  PK_NETREG_UNINITIALIZED
#define NETREG_UNREGISTERING  PK_NETREG_UNREGISTERING
#define NETREG_UNREGISTERED   PK_NETREG_UNREGISTERED
#define NETREG_RELEASED	      PK_NETREG_RELEASED
#define NETREG_DUMMY	      PK_NETREG_DUMMY
#define NETIF_MSG_DRV	      PK_NETIF_MSG_DRV
#define NETIF_MSG_PROBE	      PK_NETIF_MSG_PROBE
#define NETIF_MSG_LINK	      PK_NETIF_MSG_LINK
#define NETIF_MSG_TIMER	      PK_NETIF_MSG_TIMER
#define NETIF_MSG_IFDOWN      PK_NETIF_MSG_IFDOWN
#define NETIF_MSG_IFUP	      PK_NETIF_MSG_IFUP
#define NETIF_MSG_RX_ERR      PK_NETIF_MSG_RX_ERR
#define NETIF_MSG_TX_ERR      PK_NETIF_MSG_TX_ERR
#define NETIF_MSG_TX_QUEUED   PK_NETIF_MSG_TX_QUEUED
#define NETIF_MSG_INTR	      PK_NETIF_MSG_INTR
#define NETIF_MSG_TX_DONE     PK_NETIF_MSG_TX_DONE
#define NETIF_MSG_RX_STATUS   PK_NETIF_MSG_RX_STATUS
#define NETIF_MSG_PKTDATA     PK_NETIF_MSG_PKTDATA
#define NETIF_MSG_HW	      PK_NETIF_MSG_HW
#define NETIF_MSG_WOL	      PK_NETIF_MSG_WOL
#endif
#endif

PK_END_DECLS

#endif
