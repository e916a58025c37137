// SPDX-License-Identifier: MIT
#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "ring/caller.h"
#include "testutil.h"

static int capture_write(struct console *con, const char *text, size_t len)
{
	struct capture *c = (struct capture *)con;

	c->writes++;
	if (c->fail_writes > 0) {
		c->fail_writes--;
		return -5; /* -EIO */
	}
	if (c->len + len < sizeof(c->buf)) {
		memcpy(c->buf + c->len, text, len);
		c->len += len;
		c->buf[c->len] = '\0';
	}
	if (c->on_write)
		c->on_write(c, text, len);
	return 0;
}

void capture_setup(struct capture *c, size_t log_len)
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
	memset(c, 0, sizeof(*c));
	strcpy(c->con.name, "capture");
	c->con.write_checked = capture_write;
	c->con.flags = PK_CON_ENABLED;
	assert_int_equal(pk_register_console(&c->con), 0);
}

void capture_teardown(struct capture *c)
{
	pk_unregister_console(&c->con);
	pk_printk_exit();
	test_clock_off();
}

const char *capture_text(struct capture *c)
{
	c->buf[c->len] = '\0';
	return c->buf;
}

void capture_clear(struct capture *c)
{
	c->len = 0;
	c->buf[0] = '\0';
}

struct capture cap;
struct pk_record rec;

int setup_capture(void **state)
{
	(void)state;
	capture_setup(&cap, 0);
	return 0;
}

int setup_capture_time(void **state)
{
	setup_capture(state);
	pk_set_printk_time(1);
	return 0;
}

int teardown_capture(void **state)
{
	(void)state;
	capture_teardown(&cap);
	return 0;
}

uint64_t next_seq(void)
{
	return pk_log_next_seq(pk_printk_log());
}

void read_at(uint64_t seq)
{
	assert_int_equal(pk_log_read(pk_printk_log(), seq, &rec, PK_READ_UNFINALIZED), 0);
	assert_int_equal(rec.seq, seq);
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

void test_clock_at(uint64_t ns)
{
	static uint64_t now;

	now = ns;
	test_clock_set(&now, 1);
}

void test_clock_off(void)
{
	pk_set_test_clock(NULL);
}
