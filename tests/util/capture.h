// SPDX-License-Identifier: MIT
/*
 * capture.h - a console that records every byte it is given, for tests that
 * assert exact console output; and a fixed test clock.
 */
#ifndef PRINTK_TEST_CAPTURE_H
#define PRINTK_TEST_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include <printk/console.h>

struct capture {
	struct console con;
	char buf[1 << 16];
	size_t len;
	int writes;
	int fail_writes; /* next N writes fail with -EIO */
	void (*on_write)(struct capture *c, const char *text, size_t len);
};

/* Reset the library (fresh default log of @log_len bytes, no consoles, time
 * prefix off, caller off, default levels), then register @cap. */
void capture_setup(struct capture *c, size_t log_len);
/* Unregister and tear the library down. */
void capture_teardown(struct capture *c);
/* The captured bytes as a NUL-terminated string. */
const char *capture_text(struct capture *c);
void capture_clear(struct capture *c);

/* The test clock returns each of these in turn (then keeps the last). */
void test_clock_set(const uint64_t *ns, size_t n);
/* The test clock returns @ns from now on: every record stored gets it. */
void test_clock_at(uint64_t ns);
void test_clock_off(void);

#endif
