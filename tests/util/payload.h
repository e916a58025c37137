// SPDX-License-Identifier: MIT
/*
 * payload.h - self-checking record payloads for the stress tests: a
 * splitmix64 stream seeded by (source, key), so a reader re-derives what a
 * writer wrote, an FNV-1a checksum, and fixed-width hex fields. All
 * async-signal-safe (the signal stress test writes from handlers).
 */
#ifndef PRINTK_TEST_PAYLOAD_H
#define PRINTK_TEST_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s;
};

/* The stream of source @src (a writer, or a handler depth) for @key. */
static inline struct rng rng_for(unsigned src, uint64_t key)
{
	struct rng g = { mix64(((uint64_t)src + 1) * 0x9e3779b97f4a7c15ull ^ mix64(key)) };

	return g;
}

static inline uint64_t rng_next(struct rng *g)
{
	g->s += 0x9e3779b97f4a7c15ull;
	return mix64(g->s);
}

static inline uint32_t fnv1a(const char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static inline void put_hex(char *p, uint64_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
}

/* Parse exactly @digits lowercase hex digits; false on anything else. */
static inline bool get_hex(const char *p, int digits, uint64_t *v)
{
	uint64_t r = 0;

	for (int i = 0; i < digits; i++) {
		char c = p[i];

		if (c >= '0' && c <= '9')
			r = r << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			r = r << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*v = r;
	return true;
}

#endif
