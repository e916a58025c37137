// SPDX-License-Identifier: MIT
/*
 * kmsgutil.h - what the /dev/kmsg tests (test_kmsg.c, test_kmsg_golden.c)
 * share: opening a handle, writing a string and reading a record, each
 * asserting that it worked.
 */
#ifndef PRINTK_TEST_KMSGUTIL_H
#define PRINTK_TEST_KMSGUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include <printk/kmsg.h>

/* kmsg_open(), which must succeed. */
struct kmsg_file *kmsg_open_or_die(int flags);
/* kmsg_write() of @len bytes (NULs allowed), which must take them all. */
void kmsg_write_all(struct kmsg_file *f, const char *s, size_t len);
/* kmsg_write() of the string @s, which must take it all. */
void kmsg_write_str(struct kmsg_file *f, const char *s);
/* kmsg_read() into @buf of @size bytes, NUL-terminated; returns its result. */
ssize_t kmsg_read_str(struct kmsg_file *f, char *buf, size_t size);

#endif
