// SPDX-License-Identifier: MIT
/*
 * fixture.h - the fixture most front-end tests share (capture.c): one capture
 * console, "cap", on a fresh default log, and "rec" to read records into.
 */
#ifndef PRINTK_TEST_FIXTURE_H
#define PRINTK_TEST_FIXTURE_H

#include <stdint.h>

#include <printk/log.h>

#include "capture.h"

/*
 * The fixture of the front-end tests: the console @cap on a fresh default
 * log (capture_setup with the default size), and @rec for reading records.
 */
extern struct capture cap;
extern struct pk_record rec;
int setup_capture(void **state);
/* setup_capture(), and the time prefix on. */
int setup_capture_time(void **state);
int teardown_capture(void **state);
/* pk_log_next_seq of the printk log. */
uint64_t next_seq(void);
/* Read record @seq (open or not) into rec; it must exist with exactly that seq. */
void read_at(uint64_t seq);

#endif
