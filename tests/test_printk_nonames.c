// SPDX-License-Identifier: MIT
/*
 * test_printk_nonames.c - PRINTK_NO_KERNEL_NAMES: the kernel spellings
 * (printk, pr_info, KERN_INFO, register_console, dev_info, ...) are not
 * defined, so a program may have its own functions called printk and
 * pr_info, and still log through the pk_ names.
 */
#define PRINTK_NO_KERNEL_NAMES 1

#include <string.h>

#include <printk/console.h>
#include <printk/dev_printk.h>
#include <printk/err.h>
#include <printk/netdevice.h>
#include <printk/printk.h>

#include "fixture.h"
#include "testutil.h"

#if defined(printk) || defined(vprintk) || defined(pr_info) || defined(pr_cont) || defined(pr_err) || \
	defined(pr_debug) || defined(KERN_INFO) || defined(KERN_CONT) || defined(LOGLEVEL_DEFAULT) ||   \
	defined(register_console) || defined(CON_PRINTBUFFER) || defined(dev_info) ||                 \
	defined(console_silent) || defined(pr_flush) || defined(netdev_info) || defined(netif_err) ||  \
	defined(IFNAMSIZ) || defined(pk_net_device) || defined(pk_device)
#error "PRINTK_NO_KERNEL_NAMES must hide the kernel names"
#endif
#if defined(scnprintf) || defined(kasprintf) || defined(kfree) || defined(gfp_t) ||             \
	defined(GFP_KERNEL) || defined(snprintf) || defined(ERR_PTR) || defined(IS_ERR) ||       \
	defined(MAX_ERRNO) || defined(pr_err_ratelimited) || defined(printk_ratelimited)
#error "PRINTK_NO_KERNEL_NAMES must hide the names of sprintf.h, err.h and ratelimit.h"
#endif

/* The program's own printk and pr_info: external symbols, no clash. */
int printk(int x);
const char *pr_info(void);
int printk(int x)
{
	return x * 2;
}

const char *pr_info(void)
{
	return "my pr_info";
}


static void test_own_names_and_pk_names(void **state)
{
	(void)state;
	struct pk_log *log;
	uint64_t seq;

	capture_setup(&cap, 0);
	log = pk_printk_log();
	seq = pk_log_next_seq(log);

	assert_int_equal(printk(21), 42);
	assert_string_equal(pr_info(), "my pr_info");

	assert_int_equal(pk_printk(PK_KERN_ERR "via pk_printk %d\n", 1), 15);
	assert_int_equal(pk_pr_info("via pk_pr_info "), 15);
	assert_int_equal(pk_pr_cont("%s\n", pr_info()), 10);
	struct pk_device dev = { .name = "eth0", .driver = "e1000e", .subsystem = "net", .ifindex = 2 };

	assert_int_equal(pk_dev_info(&dev, "up\n"), 15);

	assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
	assert_string_equal(rec.text, "via pk_printk 1");
	assert_int_equal(rec.level, PK_LOGLEVEL_ERR);
	assert_int_equal(pk_log_read(log, seq + 1, &rec, 0), 0);
	assert_string_equal(rec.text, "via pk_pr_info my pr_info");
	assert_int_equal(rec.level, PK_LOGLEVEL_INFO);
	assert_string_equal(capture_text(&cap), "via pk_printk 1\nvia pk_pr_info my pr_info\ne1000e eth0: up\n");
	capture_teardown(&cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_names_and_pk_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
