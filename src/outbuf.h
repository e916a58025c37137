// SPDX-License-Identifier: MIT
/*
 * outbuf.h - output staged in a fixed buffer and handed to a sink in pieces
 * of at most its size: the console loop's lines and the file dumper's
 * records.
 *
 * Once the sink fails, everything after is dropped (the caller counts or
 * reports it); the buffer is then reusable. Pure and inline: no allocation,
 * no lock, so it is as async-signal-safe as the sink.
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
		size_t k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == o->cap)
			pk_outbuf_flush(o);
	}
}

#endif
