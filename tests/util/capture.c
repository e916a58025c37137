// SPDX-License-Identifier: MIT
#include <string.h>

#include <printk/printk.h>

#include "capture.h"
#include "internal.h"
#include "testutil.h"

static int capture_write(struct console *con, const char *text, size_t len)
{
	struct capture *cap = (struct capture *)con;

	cap->writes++;
	if (cap->fail_writes > 0) {
		cap->fail_writes--;
		return -5; /* -EIO */
	}
	if (cap->len + len < sizeof(cap->buf)) {
		memcpy(cap->buf + cap->len, text, len);
		cap->len += len;
		cap->buf[cap->len] = '\0';
	}
	if (cap->on_write)
		cap->on_write(cap, text, len);
	return 0;
}

void capture_setup(struct capture *cap, size_t log_len)
{
	pk_printk_exit();
	test_clock_off();
#ifdef PRINTK_RING_SMALL_IDS
	/* Positions are 15 bits wide there: 128 KiB is the largest log. */
	if (log_len > (size_t)128 * 1024)
		log_len = (size_t)128 * 1024;
#endif
	assert_int_equal(pk_set_log_buf_len(log_len), 0);
	pk_set_console_loglevel(7);
	pk_set_default_message_loglevel(4);
	pk_set_ignore_loglevel(0);
	pk_set_printk_time(0);
	pk_set_printk_caller(0);
	memset(cap, 0, sizeof(*cap));
	strcpy(cap->con.name, "capture");
	cap->con.write_checked = capture_write;
	cap->con.flags = PK_CON_ENABLED;
	assert_int_equal(pk_register_console(&cap->con), 0);
}

void capture_teardown(struct capture *cap)
{
	pk_unregister_console(&cap->con);
	pk_printk_exit();
	test_clock_off();
}

const char *capture_text(struct capture *cap)
{
	cap->buf[cap->len] = '\0';
	return cap->buf;
}

void capture_clear(struct capture *cap)
{
	cap->len = 0;
	cap->buf[0] = '\0';
}

static const uint64_t *clock_values;
static size_t clock_n, clock_i;

static uint64_t fake_clock(void)
{
	uint64_t v = clock_values[clock_i < clock_n ? clock_i : clock_n - 1];

	if (clock_i < clock_n)
		clock_i++;
	return v;
}

void test_clock_set(const uint64_t *ns, size_t n)
{
	clock_values = ns;
	clock_n = n;
	clock_i = 0;
	pk_set_test_clock(fake_clock);
}

void test_clock_off(void)
{
	pk_set_test_clock(NULL);
}
