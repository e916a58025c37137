// SPDX-License-Identifier: MIT
/*
 * bytebuf.h - a bounded byte builder for formatters that say how long
 * their whole output would be: bytes past the capacity are dropped but
 * counted, so after the last put, len is the length the output needs and
 * min(len, cap) bytes were written. Nothing is NUL-terminated. Pure,
 * async-signal-safe. (forward/wire.h keeps a variant whose length stops
 * at the capacity: the wire formats cut, they do not ask again.)
 */
#ifndef PRINTK_BYTEBUF_H
#define PRINTK_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pk_bytebuf {
	char *out;
	size_t len, cap;
};

static inline void pk_bb_put(struct pk_bytebuf *b, const void *p, size_t n)
{
	if (b->len < b->cap) {
		size_t room = b->cap - b->len;

		memcpy(b->out + b->len, p, n < room ? n : room);
	}
	b->len += n;
}

static inline void pk_bb_putc(struct pk_bytebuf *b, char c)
{
	pk_bb_put(b, &c, 1);
}

static inline void pk_bb_puts(struct pk_bytebuf *b, const char *s)
{
	pk_bb_put(b, s, strlen(s));
}

/* @v in decimal, no locale. */
static inline void pk_bb_u64(struct pk_bytebuf *b, uint64_t v)
{
	char t[20];
	size_t i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	pk_bb_put(b, t + i, sizeof(t) - i);
}

#endif
