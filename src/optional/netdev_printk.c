// SPDX-License-Identifier: MIT
/*
 * netdev_printk.c - messages about a network interface: the kernel's
 * "<driver> <bus device> <interface><state>: " prefix with the parent's
 * dictionary, "<interface><state>: " without a parent (Linux
 * net/core/dev.c __netdev_printk(), lib/dynamic_debug.c
 * __dynamic_netdev_dbg()).
 *
 * Owns no state. Invariants: nothing here allocates; the dynamic debug
 * prefix (f, l, m, s, t) goes before everything else, and only on the
 * message of an interface with a parent, as in the kernel (one without a
 * parent, or a NULL device, gets none).
 */
#include <stdarg.h>

#include <printk/netdevice.h>

#include "optional/dyndbg_internal.h"
#include "printk/dev_internal.h"

static void netdev_vemit(int level, const char *level_str, const char *prefix,
			 const struct pk_net_device *dev, struct va_format *vaf)
{
	if (dev && dev->dev.parent)
		pk_dev_emit(level, dev->dev.parent, "%s%s %s %s%s: %pV", prefix,
			    pk_dev_driver_string(dev->dev.parent), pk_dev_name(dev->dev.parent),
			    pk_netdev_name(dev), pk_netdev_reg_state(dev), vaf);
	else if (dev)
		pk_printk("%s%s%s: %pV", level_str, pk_netdev_name(dev), pk_netdev_reg_state(dev),
			  vaf);
	else
		pk_printk("%s(NULL net_device): %pV", level_str, vaf);
}

void pk_netdev_printk(const char *level, const struct pk_net_device *dev, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	int lvl = PK_LOGLEVEL_DEFAULT;

	if (level && pk_printk_get_level(level) >= '0' && pk_printk_get_level(level) <= '7')
		lvl = pk_printk_get_level(level) - '0';
	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	netdev_vemit(lvl, level ? level : "", "", dev, &vaf);
	va_end(ap);
}

void pk__dynamic_netdev_dbg(struct pk_dyndbg *site, const struct pk_net_device *dev, const char *fmt,
			    ...)
{
	char prefix[PK_DYNDBG_PREFIX_SIZE];
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	netdev_vemit(PK_LOGLEVEL_DEBUG, PK_KERN_DEBUG, pk_dyndbg_prefix(site, prefix), dev, &vaf);
	va_end(ap);
}
