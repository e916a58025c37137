// SPDX-License-Identifier: MIT
#include <string.h>

#include "kmsgutil.h"
#include "testutil.h"

struct kmsg_file *kmsg_open_or_die(int flags)
{
	struct kmsg_file *f = NULL;

	assert_int_equal(kmsg_open(&f, flags), 0);
	assert_non_null(f);
	return f;
}

void kmsg_write_all(struct kmsg_file *f, const char *s, size_t len)
{
	assert_int_equal(kmsg_write(f, s, len), (ssize_t)len);
}

void kmsg_write_str(struct kmsg_file *f, const char *s)
{
	kmsg_write_all(f, s, strlen(s));
}

ssize_t kmsg_read_str(struct kmsg_file *f, char *buf, size_t size)
{
	ssize_t n = kmsg_read(f, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}
