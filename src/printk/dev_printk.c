// SPDX-License-Identifier: MIT
/*
 * dev_printk.c - device messages: the "driver name: " prefix and the
 * SUBSYSTEM=/DEVICE= dictionary, built on the stack (async-signal-safe);
 * dev_set_name() into the device's own buffer.
 *
 * Owns no state. Invariants: the prefix and the dictionary are the
 * kernel's (drivers/base/core.c): "%s %s: " of dev_driver_string() and
 * dev_name(), a NULL name printing as printk prints a NULL string; a
 * device message always ends its line; nothing here allocates.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <printk/dev_printk.h>

#include "format/vsprintf.h"
#include "printk/dev_internal.h"
#include "printk/printk_internal.h"

static int emit_line(int level, const char *dict, size_t dictlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = pk_vprintk_emit_line(level, dict, dictlen, fmt, ap);
	va_end(ap);
	return r;
}

/* Length of the dictionary for @dev written to @dict (NUL-separated). */
static size_t build_dict(const struct pk_device *dev, char *dict, size_t size)
{
	int n, m;

	if (!dev->subsystem || !*dev->subsystem)
		return 0;
	n = pk_scnprintf(dict, size, "SUBSYSTEM=%s", dev->subsystem);
	if ((size_t)n + 1 >= size)
		return (size_t)n;
	dict += n + 1;
	size -= (size_t)n + 1;
	if (dev->major)
		m = pk_scnprintf(dict, size, "DEVICE=%c%u:%u",
				 strcmp(dev->subsystem, "block") == 0 ? 'b' : 'c', dev->major, dev->minor);
	else if (strcmp(dev->subsystem, "net") == 0)
		m = pk_scnprintf(dict, size, "DEVICE=n%d", dev->ifindex);
	else
		m = pk_scnprintf(dict, size, "DEVICE=+%s:%s", dev->subsystem, pk_dev_name(dev));
	return (size_t)n + 1 + (size_t)m;
}

int pk_dev_emit(int level, const struct pk_device *dev, const char *fmt, ...)
{
	char dict[256];
	size_t dictlen = build_dict(dev, dict, sizeof(dict));
	va_list ap;

	va_start(ap, fmt);
	int r = pk_vprintk_emit_line(level, dictlen ? dict : NULL, dictlen, fmt, ap);
	va_end(ap);
	return r;
}

int pk_dev_printk(const char *level, const struct pk_device *dev, const char *fmt, ...)
{
	char dict[256];
	size_t dictlen = 0;
	int lvl = PK_LOGLEVEL_DEFAULT;
	va_list ap;
	struct va_format vaf;
	int r;

	if (level && pk_printk_get_level(level) >= '0' && pk_printk_get_level(level) <= '7')
		lvl = pk_printk_get_level(level) - '0';
	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	if (!dev) {
		r = pk_printk_emit(0, lvl, NULL, 0, "(NULL device *): %pV", &vaf);
	} else {
		dictlen = build_dict(dev, dict, sizeof(dict));
		/* Like the kernel's dev_vprintk_emit: a device message ends its line. */
		r = emit_line(lvl, dictlen ? dict : NULL, dictlen, "%s %s: %pV",
			      pk_dev_driver_string(dev), pk_dev_name(dev), &vaf);
	}
	va_end(ap);
	return r;
}

/* drivers/base/core.c's dev_probe_failed(). */
static void probe_failed(const struct pk_device *dev, int err, int fatal, const char *fmt,
			 va_list ap)
{
	va_list copy; /* a va_list parameter may be an array that decayed: &ap is no va_list * */
	const void *errptr = (const void *)(intptr_t)err; /* ERR_PTR(err), for %pe */

	/* -EPROBE_DEFER: the kernel's dev_dbg() there is compiled out unless
	 * CONFIG_DEBUG_DRIVER; it also records the reason in debugfs, which a
	 * process does not have. -ENOMEM prints nothing. */
	if (err == -PK_EPROBE_DEFER || err == -ENOMEM)
		return;
	va_copy(copy, ap);
	struct va_format vaf = { .fmt = fmt, .va = &copy };

	pk_dev_printk(fatal ? PK_KERN_ERR : PK_KERN_WARNING, dev, "error %pe: %pV", errptr, &vaf);
	va_end(copy);
}

int pk_dev_err_probe(const struct pk_device *dev, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	probe_failed(dev, err, 1, fmt, ap);
	va_end(ap);
	return err;
}

int pk_dev_warn_probe(const struct pk_device *dev, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	probe_failed(dev, err, 0, fmt, ap);
	va_end(ap);
	return err;
}

int pk_dev_set_name(struct pk_device *dev, const char *fmt, ...)
{
	char name[PK_DEVICE_NAME_MAX + 1]; /* one byte more shows a cut */
	va_list ap;

	if (!dev || !fmt)
		return -EINVAL;
	va_start(ap, fmt);
	int n = pk_vscnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);

	int cut = n > PK_DEVICE_NAME_MAX - 1;

	if (cut)
		n = PK_DEVICE_NAME_MAX - 1;
	/* A kobject name never holds '/' (it would be a path in sysfs): the
	 * kernel's kobject_set_name_vargs() turns each into '!'. */
	for (int i = 0; i < n; i++)
		dev->name_buf[i] = name[i] == '/' ? '!' : name[i];
	dev->name_buf[n] = '\0';
	dev->name = dev->name_buf;
	return cut ? -ENAMETOOLONG : 0;
}
