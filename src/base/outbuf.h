// SPDX-License-Identifier: MIT
/*
 * outbuf.h - output staged in a buffer and handed to a sink in pieces of
 * at most its size: the console loop's lines, the file dumper's records and
 * everything udmesg writes.
 *
 * Once the sink fails, everything after is dropped (the caller counts or
 * reports it); the buffer is then reusable. Pure and inline: no allocation,
 * no lock, so it is as async-signal-safe as the sink. A buffer may instead
 * grow when full (udmesg's dump workers format into memory): the grow hook
 * allocates, so only a program's own buffers have one, never the library's.
 */
#ifndef PRINTK_OUTBUF_H
#define PRINTK_OUTBUF_H

#include <stddef.h>
#include <string.h>

struct pk_outbuf {
	char *buf;
	size_t cap;
	size_t len;
	int failed;
	/* Writes all of @n bytes or returns non-zero. */
	int (*sink)(void *arg, const char *p, size_t n);
	void *arg;
	/* NULL: a full buffer goes to the sink. Else called instead, to make
	 * room for @need more bytes (o->buf and o->cap replaced) or not return. */
	void (*grow)(struct pk_outbuf *o, size_t need);
};

static inline void pk_outbuf_init(struct pk_outbuf *o, char *buf, size_t cap,
				  int (*sink)(void *arg, const char *p, size_t n), void *arg)
{
	/* Not "= { 0 }" of the buffer: clearing it for every record is measurable. */
	o->buf = buf;
	o->cap = cap;
	o->len = 0;
	o->failed = 0;
	o->sink = sink;
	o->arg = arg;
	o->grow = NULL;
}

static inline void pk_outbuf_flush(struct pk_outbuf *o)
{
	if (o->len && !o->failed && o->sink(o->arg, o->buf, o->len))
		o->failed = 1;
	o->len = 0;
}

static inline void pk_outbuf_put(struct pk_outbuf *o, const char *s, size_t n)
{
	while (n > 0) {
		size_t room = o->cap - o->len;

		if (n > room && o->grow) {
			o->grow(o, n);
			room = o->cap - o->len;
		}
		size_t k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == o->cap && !o->grow)
			pk_outbuf_flush(o);
	}
}

/*
 * Room for @n contiguous bytes at the end of what is staged, to be written
 * in place and counted with pk_outbuf_commit(); @n at most the buffer's
 * size unless it grows.
 */
static inline char *pk_outbuf_reserve(struct pk_outbuf *o, size_t n)
{
	if (n > o->cap - o->len) {
		if (o->grow)
			o->grow(o, n);
		else
			pk_outbuf_flush(o);
	}
	return o->buf + o->len;
}

static inline void pk_outbuf_commit(struct pk_outbuf *o, size_t n)
{
	o->len += n;
}

#endif
