// SPDX-License-Identifier: MIT
/*
 * test_kernel_port.c - code shaped like a Linux driver, built against
 * libprintk with only its #include lines changed, prints what the kernel
 * prints for the same calls, byte for byte.
 *
 * The first part is the "driver" (written for this test): a probe that
 * prints with dev_info/dev_notice/dev_warn_once/dev_dbg, dumps a
 * descriptor with print_hex_dump() and print_hex_dump_bytes(), names a
 * child device with dev_set_name(), fails on a bad descriptor with
 * dev_err(), or with dev_err_probe()/dev_warn_probe(); an interrupt handler that reports with pr_info_once,
 * pr_warn_once, printk_deferred_once and dev_err_ratelimited. The second
 * part plays the bus and the test: it makes the devices, calls the driver,
 * and compares the console with the lines a kernel prints for these calls.
 * The expected bytes follow the kernel's documented behaviour: dev_printk's
 * "<driver> <device>: " prefix and SUBSYSTEM=/DEVICE= entries
 * (drivers/base/core.c, Documentation/ABI/testing/dev-kmsg),
 * print_hex_dump()'s rows (lib/hexdump.c, lib/test_hexdump.c), *_once's
 * one message per call site (include/linux/once_lite.h), the rate limit's
 * 10 messages per 5 s and "<function>: N callbacks suppressed"
 * (lib/ratelimit.c), and the console's "[%5lu.%06lu] " prefix. Without
 * DEBUG, dev_dbg(), print_hex_dump_bytes() and pr_debug_once() print
 * nothing, as in a kernel without dynamic debug.
 *
 * Also: many threads racing through one *_once call site print once; a
 * report with pr_info() and printk(KERN_ERR ...) is held back by the level
 * of its module, named by KBUILD_MODNAME (docs/levels.md).
 */

/* ---- the driver ---------------------------------------------------------- */

/* Kbuild passes this on the command line; a port's build does the same. */
#define KBUILD_MODNAME "frobdev"
#define pr_fmt(fmt)    KBUILD_MODNAME ": " fmt

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The only lines a port changes: <linux/device.h>, <linux/printk.h> and
 * <linux/ratelimit.h>. */
#include <printk/dev_printk.h>
#include <printk/printk.h>
#include <printk/ratelimit.h>

#define FROB_DESC_LEN 18

struct frob_priv {
	struct device *dev;
	struct device child;
	unsigned char desc[FROB_DESC_LEN];
	unsigned int fw_major, fw_minor;
	unsigned long irqs;
};

static void frob_read_desc(const unsigned char *hw, struct frob_priv *priv)
{
	memcpy(priv->desc, hw, FROB_DESC_LEN);
	priv->fw_major = hw[12];
	priv->fw_minor = hw[13];
}

static int frob_probe(struct device *dev, struct frob_priv *priv, const unsigned char *hw)
{
	int ret;

	priv->dev = dev;
	dev_info(dev, "probing (irq %d)\n", 17);
	frob_read_desc(hw, priv);
	dev_dbg(dev, "descriptor read, %u bytes\n", priv->desc[0]);
	print_hex_dump_bytes("frobdev raw: ", DUMP_PREFIX_NONE, priv->desc, FROB_DESC_LEN);

	if (priv->desc[0] != FROB_DESC_LEN || priv->desc[1] != 0x01) {
		dev_err(dev, "bad descriptor: length %u type %#04x\n", priv->desc[0], priv->desc[1]);
		print_hex_dump(KERN_ERR, "frobdev bad: ", DUMP_PREFIX_OFFSET, 16, 1, priv->desc,
			       FROB_DESC_LEN, true);
		return -EINVAL;
	}
	print_hex_dump(KERN_INFO, "frobdev desc: ", DUMP_PREFIX_OFFSET, 16, 1, priv->desc,
		       FROB_DESC_LEN, true);
	if (priv->fw_major < 7)
		dev_warn_once(dev, "firmware %u.%u is old, please update\n", priv->fw_major,
			      priv->fw_minor);

	ret = dev_set_name(&priv->child, "frob%d", dev_name(dev)[5] - '0');
	if (ret)
		return ret;
	dev_notice(&priv->child, "registered, parent %s\n", dev_name(priv->child.parent));
	return 0;
}

static int frob_get_resources(struct device *dev, int clk_err, int irq_err)
{
	if (clk_err)
		return dev_err_probe(dev, clk_err, "failed to get clock %s\n", "ref");
	if (irq_err)
		return dev_warn_probe(dev, irq_err, "no wake irq, wake-up disabled\n");
	return 0;
}

static void frob_irq(struct frob_priv *priv, int status)
{
	priv->irqs++;
	pr_info_once("first interrupt, status %d\n", status);
	if (status < 0) {
		pr_warn_once("interrupt errors seen, check the cable\n");
		dev_err_ratelimited(priv->dev, "irq error %d (irq #%lu)\n", status, priv->irqs);
		return;
	}
	printk_deferred_once(KERN_NOTICE "frobdev: clock running\n");
	pr_debug_once("irq ok\n");
}

static void frob_report(const struct frob_priv *priv)
{
	pr_info("%lu interrupts\n", priv->irqs);
	printk(KERN_ERR pr_fmt("firmware %u.%u\n"), priv->fw_major, priv->fw_minor);
}

/* ---- the bus and the test ------------------------------------------------- */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "fixture.h"
#include "testutil.h"

/* A USB-style device descriptor; the firmware version sits in bytes 12, 13. */
static const unsigned char good_hw[FROB_DESC_LEN] = {
	0x12, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x40, 0x6b, 0x1d,
	0x02, 0x00, 0x06, 0x06, 0x03, 0x02, 0x01, 0x01,
};
static const unsigned char bad_hw[FROB_DESC_LEN] = {
	0x09, 0x02, 0x19, 0x00, 0x01, 0x01, 0x00, 0xe0, 0x00, 0x09,
	0x04, 0x00, 0x00, 0x01, 0x09, 0x00, 0x00, 0x00,
};

#define T0 12345678000ull /* 12.345678 s */

static void assert_dict(const char *dict, size_t len)
{
	assert_int_equal(rec.dict_len, len);
	assert_memory_equal(rec.dict, dict, len);
}

static void test_probe_prints_as_the_kernel(void **state)
{
	(void)state;
	static const uint64_t t0 = T0; /* static: the test clock keeps pointing at it */
	struct device pdev0 = { .init_name = "frob.0", .driver = "frobdev", .subsystem = "platform" };
	struct device pdev1 = { .init_name = "frob.1", .driver = "frobdev", .subsystem = "platform" };
	static struct frob_priv priv0, priv1;
	uint64_t seq;

	test_clock_set(&t0, 1);
	pk_set_printk_time(1);
	memset(&priv0, 0, sizeof(priv0));
	memset(&priv1, 0, sizeof(priv1));
	priv0.child = (struct device){ .subsystem = "frob", .major = 240, .minor = 0, .parent = &pdev0 };
	priv1.child = (struct device){ .subsystem = "frob", .major = 240, .minor = 1, .parent = &pdev1 };
	seq = next_seq();

	assert_int_equal(frob_probe(&pdev0, &priv0, good_hw), 0);
	assert_int_equal(frob_probe(&pdev1, &priv1, good_hw), 0);
	assert_string_equal(
		capture_text(&cap),
		"[   12.345678] frobdev frob.0: probing (irq 17)\n"
		"[   12.345678] frobdev desc: 00000000: 12 01 00 02 00 00 00 40 6b 1d 02 00 06 06 03 02  .......@k.......\n"
		"[   12.345678] frobdev desc: 00000010: 01 01                                            ..\n"
		"[   12.345678] frobdev frob.0: firmware 6.6 is old, please update\n"
		"[   12.345678] frob frob0: registered, parent frob.0\n"
		"[   12.345678] frobdev frob.1: probing (irq 17)\n"
		"[   12.345678] frobdev desc: 00000000: 12 01 00 02 00 00 00 40 6b 1d 02 00 06 06 03 02  .......@k.......\n"
		"[   12.345678] frobdev desc: 00000010: 01 01                                            ..\n"
		"[   12.345678] frob frob1: registered, parent frob.1\n");

	/* What /dev/kmsg readers get: levels and the device dictionaries. */
	read_at(seq);
	assert_int_equal(rec.level, 6);
	assert_dict("SUBSYSTEM=platform\0DEVICE=+platform:frob.0", 42);
	read_at(seq + 1);
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.dict_len, 0);
	read_at(seq + 3);
	assert_int_equal(rec.level, 4);
	read_at(seq + 4);
	assert_int_equal(rec.level, 5);
	assert_string_equal(rec.text, "frob frob0: registered, parent frob.0");
	assert_dict("SUBSYSTEM=frob\0DEVICE=c240:0", 28);
	assert_int_equal(next_seq(), seq + 9);
}

/* A module level (docs/levels.md) names the module by KBUILD_MODNAME, as
 * the kernel's build defines it. */
static void test_module_level(void **state)
{
	(void)state;
	static struct frob_priv priv = { .irqs = 3, .fw_major = 6, .fw_minor = 6 };
	uint64_t seq = next_seq();

	assert_int_equal(pk_module_set_level("test_kernel_port", 0), 0); /* not its module */
	assert_int_equal(pk_module_set_level(KBUILD_MODNAME, 4), 0);
	frob_report(&priv);
	assert_int_equal(next_seq(), seq + 1);
	read_at(seq);
	assert_string_equal(rec.text, "frobdev: firmware 6.6");
	pk_module_clear_levels();
	frob_report(&priv);
	assert_int_equal(next_seq(), seq + 3);
	read_at(seq + 1);
	assert_string_equal(rec.text, "frobdev: 3 interrupts");
}

static void test_probe_error_path(void **state)
{
	(void)state;
	struct device pdev = { .init_name = "frob.2", .driver = "frobdev", .subsystem = "platform" };
	static struct frob_priv priv;
	uint64_t seq = next_seq();

	memset(&priv, 0, sizeof(priv));
	assert_int_equal(frob_probe(&pdev, &priv, bad_hw), -EINVAL);
	assert_string_equal(
		capture_text(&cap),
		"frobdev frob.2: probing (irq 17)\n"
		"frobdev frob.2: bad descriptor: length 9 type 0x02\n"
		"frobdev bad: 00000000: 09 02 19 00 01 01 00 e0 00 09 04 00 00 01 09 00  ................\n"
		"frobdev bad: 00000010: 00 00                                            ..\n");
	read_at(seq + 1);
	assert_int_equal(rec.level, 3);
	assert_dict("SUBSYSTEM=platform\0DEVICE=+platform:frob.2", 42);
}

/* dev_err_probe(): "error <name of the code>: ", nothing for -EPROBE_DEFER
 * (a debug message) and -ENOMEM; dev_warn_probe() at KERN_WARNING. */
static void test_probe_helpers(void **state)
{
	(void)state;
	struct device pdev = { .init_name = "frob.4", .driver = "frobdev", .subsystem = "platform" };
	uint64_t seq = next_seq();

	assert_int_equal(frob_get_resources(&pdev, -EPROBE_DEFER, 0), -517);
	assert_int_equal(frob_get_resources(&pdev, -ENOMEM, 0), -ENOMEM);
	assert_int_equal(next_seq(), seq);
	assert_int_equal(frob_get_resources(&pdev, -ENOENT, 0), -ENOENT);
	assert_int_equal(frob_get_resources(&pdev, -1234, 0), -1234);
	assert_int_equal(frob_get_resources(&pdev, 0, -ENXIO), -ENXIO);
	assert_int_equal(frob_get_resources(&pdev, 0, 0), 0);
	assert_string_equal(capture_text(&cap),
			    "frobdev frob.4: error -ENOENT: failed to get clock ref\n"
			    "frobdev frob.4: error -1234: failed to get clock ref\n"
			    "frobdev frob.4: error -ENXIO: no wake irq, wake-up disabled\n");
	read_at(seq);
	assert_int_equal(rec.level, 3);
	assert_dict("SUBSYSTEM=platform\0DEVICE=+platform:frob.4", 42);
	read_at(seq + 2);
	assert_int_equal(rec.level, 4);
}

static void test_interrupts_once_and_ratelimited(void **state)
{
	(void)state;
	static const uint64_t t0 = T0, t1 = T0 + 6000000000ull; /* one window later; static, as above */
	struct device pdev = { .init_name = "frob.3", .driver = "frobdev", .subsystem = "platform" };
	static struct frob_priv priv;
	char want[8192];
	size_t n = 0;

	memset(&priv, 0, sizeof(priv));
	priv.dev = &pdev;
	test_clock_set(&t0, 1);
	for (int i = 0; i < 3; i++)
		frob_irq(&priv, 0);
	for (int i = 0; i < 15; i++)
		frob_irq(&priv, -5);
	test_clock_set(&t1, 1);
	frob_irq(&priv, -5);

	n += (size_t)snprintf(want + n, sizeof(want) - n,
			      "frobdev: first interrupt, status 0\n"
			      "frobdev: clock running\n"
			      "frobdev: interrupt errors seen, check the cable\n");
	for (int i = 0; i < 10; i++) /* the burst: irqs #4 to #13 */
		n += (size_t)snprintf(want + n, sizeof(want) - n, "frobdev frob.3: irq error -5 (irq #%d)\n",
				      4 + i);
	/* irqs #14 to #18 were suppressed; the next window reports them first */
	snprintf(want + n, sizeof(want) - n,
		 "frob_irq: 5 callbacks suppressed\n"
		 "frobdev frob.3: irq error -5 (irq #19)\n");
	assert_string_equal(capture_text(&cap), want);
}

/* One call site, many threads: exactly one message (the flag is atomic). */
#define RACERS 8

static pthread_barrier_t start;

static void *racer(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < 1000; i++)
		pr_err_once("raced %d\n", i);
	return NULL;
}

static void test_once_under_threads(void **state)
{
	(void)state;
	pthread_t t[RACERS];
	uint64_t seq = next_seq();

	assert_int_equal(pthread_barrier_init(&start, NULL, RACERS), 0);
	for (int i = 0; i < RACERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, racer, NULL), 0);
	for (int i = 0; i < RACERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	assert_int_equal(next_seq(), seq + 1);
	assert_string_equal(capture_text(&cap), "frobdev: raced 0\n");
}

/* dev_set_name(): printk's format, '/' turned into '!', cut at 63 bytes. */
static void test_dev_set_name(void **state)
{
	(void)state;
	struct device d = { .driver = "drv", .subsystem = "block", .major = 8, .minor = 16 };
	char longname[100];

	assert_int_equal(dev_set_name(&d, "%s/%d", "cciss", 3), 0);
	assert_string_equal(dev_name(&d), "cciss!3");
	assert_ptr_equal(d.name, d.name_buf);
	d.init_name = "early";
	assert_string_equal(dev_name(&d), "early"); /* init_name wins, as in the kernel */
	d.init_name = NULL;
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(dev_set_name(&d, "%s", longname), -ENAMETOOLONG);
	assert_int_equal(strlen(dev_name(&d)), PK_DEVICE_NAME_MAX - 1);
	assert_int_equal(dev_set_name(NULL, "x"), -EINVAL);

	/* A device without a name prints as the kernel's "%s" of NULL. */
	struct device nameless = { .subsystem = "misc" };

	assert_string_equal(dev_driver_string(&nameless), "misc");
	dev_warn(&nameless, "hello\n");
	assert_string_equal(capture_text(&cap), "misc (null): hello\n");
	/* struct pk_device is the same type. */
	struct pk_device *same = &nameless;

	assert_ptr_equal(same, &nameless);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_prints_as_the_kernel, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_probe_error_path, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_probe_helpers, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_interrupts_once_and_ratelimited, setup_capture,
						teardown_capture),
		cmocka_unit_test_setup_teardown(test_once_under_threads, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_set_name, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_module_level, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
