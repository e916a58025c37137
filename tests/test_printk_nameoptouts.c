// SPDX-License-Identifier: MIT
/*
 * test_printk_nameoptouts.c - each generic kernel name has its own
 * opt-out: PRINTK_NO_PANIC_NAME (panic), PRINTK_NO_HZ (HZ),
 * PRINTK_NO_DO_SYSLOG_NAME (do_syslog), PRINTK_NO_HEX_NAMES (hex_asc,
 * hex_to_bin, hex2bin, bin2hex, hex_byte_pack...), PRINTK_NO_DEVICE_NAME
 * (the struct device tag) and PRINTK_NO_NET_DEVICE_NAME (the struct
 * net_device tag, IFNAMSIZ, NETREG_*, NETIF_MSG_*), PRINTK_NO_SPRINTF_NAMES
 * (scnprintf, kasprintf, kfree, gfp_t, GFP_KERNEL ...) and PRINTK_NO_ERR_NAMES
 * (ERR_PTR, IS_ERR ...). With them the program defines those names itself,
 * and every other kernel name is still there.
 */
#define PRINTK_NO_PANIC_NAME	 1
#define PRINTK_NO_HZ		 1
#define PRINTK_NO_DO_SYSLOG_NAME 1
#define PRINTK_NO_HEX_NAMES	 1
#define PRINTK_NO_DEVICE_NAME	 1
#define PRINTK_NO_NET_DEVICE_NAME 1
#define PRINTK_NO_SPRINTF_NAMES	 1
#define PRINTK_NO_ERR_NAMES	 1

#include <string.h>

#include <printk/console.h>
#include <printk/dev_printk.h>
#include <printk/err.h>
#include <printk/kmsg.h>
#include <printk/kmsg_dump.h>
#include <printk/netdevice.h>
#include <printk/printk.h>
#include <printk/ratelimit.h>
#include <printk/syslog.h>

#include "fixture.h"
#include "testutil.h"

#if defined(panic) || defined(HZ) || defined(do_syslog) || defined(hex_asc) || defined(hex_to_bin) || \
	defined(hex2bin) || defined(bin2hex) || defined(hex_byte_pack) || defined(hex_asc_lo)
#error "an opt-out macro left its name defined"
#endif
#if defined(IFNAMSIZ) || defined(NETREG_REGISTERED) || defined(NETIF_MSG_LINK)
#error "PRINTK_NO_NET_DEVICE_NAME left a name defined"
#endif
#if defined(scnprintf) || defined(vscnprintf) || defined(kasprintf) || defined(kvasprintf) || \
	defined(kfree) || defined(gfp_t) || defined(GFP_KERNEL) || defined(GFP_ATOMIC) ||       \
	defined(ERR_PTR) || defined(PTR_ERR) || defined(IS_ERR) || defined(IS_ERR_OR_NULL) ||   \
	defined(ERR_CAST) || defined(PTR_ERR_OR_ZERO) || defined(MAX_ERRNO)
#error "PRINTK_NO_SPRINTF_NAMES or PRINTK_NO_ERR_NAMES left a name defined"
#endif
#if !defined(netdev_info) || !defined(netif_err) || !defined(netif_msg_link)
#error "PRINTK_NO_NET_DEVICE_NAME hid more than its own names"
#endif
#if !defined(printk) || !defined(pr_info_once) || !defined(KERN_INFO) || !defined(dev_info) ||        \
	!defined(kmsg_dump) || !defined(print_hex_dump) || !defined(DUMP_PREFIX_OFFSET) ||            \
	!defined(SYSLOG_ACTION_READ) || !defined(DEFAULT_RATELIMIT_INTERVAL) || !defined(dev_name) || \
	!defined(register_console)
#error "an opt-out macro hid more than its own name"
#endif

/* The program's own names. */
struct device {
	int own;
};
struct net_device {
	int own;
};
enum { HZ = 100 };
static int panic_calls;
static void panic(const char *why)
{
	(void)why;
	panic_calls++;
}
static int do_syslog(int x)
{
	return x + 1;
}
static int hex_to_bin(int c)
{
	return c * 2;
}
static const char *hex_asc = "mine";
typedef int gfp_t;
static int kfree_calls;
static void kfree(const void *p)
{
	(void)p;
	kfree_calls++;
}
static int IS_ERR(int x)
{
	return x < 0;
}

static void test_own_names_and_kernel_names(void **state)
{
	(void)state;
	struct device mine = { .own = HZ };
	struct pk_device dev = { .name = "eth0", .driver = "e1000e", .subsystem = "net", .ifindex = 2 };

	panic("not the library's");
	assert_int_equal(panic_calls, 1);
	assert_int_equal(mine.own, 100);
	assert_int_equal(do_syslog(1), 2);
	assert_int_equal(hex_to_bin(3), 6);
	assert_string_equal(hex_asc, "mine");
	assert_int_equal(pk_hex_to_bin('f'), 15);
	assert_int_equal(PK_HZ, 1000);
	gfp_t g = 3;
	char buf[8];
	char *p = pk_kasprintf(PK_GFP_KERNEL, "%d", g);

	kfree(p);
	assert_int_equal(kfree_calls, 1);
	pk_kfree(p);
	assert_true(IS_ERR(-1));
	assert_true(pk_is_err(pk_err_ptr(-5)));
	assert_int_equal(pk_scnprintf(buf, sizeof(buf), "%.0d", 0), 1);
	struct net_device own_nd = { .own = 1 };
	struct pk_net_device nd = { .name = "eth1" };

	assert_int_equal(own_nd.own, 1);
	netdev_info(&nd, "up\n");
	dev_info(&dev, "up\n");
	assert_string_equal(dev_name(&dev), "eth0");
	assert_string_equal(capture_text(&cap), "eth1: up\ne1000e eth0: up\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_names_and_kernel_names, setup_capture,
						teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
