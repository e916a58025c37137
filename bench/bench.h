// SPDX-License-Identifier: MIT
/*
 * bench.h - what the benchmarks share: the clock, a series of run results
 * with its median, minimum and maximum, the time-stamp counter, and the build variant for the
 * report header. Header-only; every benchmark is one program.
 */
#ifndef PRINTK_BENCH_H
#define PRINTK_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The time-stamp counter, read with __rdtsc(), for the floor figures. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define MAX_RUNS 32

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One figure per run. */
struct series {
	double v[MAX_RUNS];
	unsigned n;
};

static inline void add(struct series *s, double v)
{
	s->v[s->n++] = v;
}

static inline double median(const struct series *s)
{
	double tmp[MAX_RUNS];

	memcpy(tmp, s->v, s->n * sizeof(double));
	qsort(tmp, s->n, sizeof(double), cmp_double);
	return s->n % 2 ? tmp[s->n / 2] : (tmp[s->n / 2 - 1] + tmp[s->n / 2]) / 2;
}

static inline double minimum(const struct series *s)
{
	double m = s->v[0];

	for (unsigned i = 1; i < s->n; i++)
		if (s->v[i] < m)
			m = s->v[i];
	return m;
}

static inline double maximum(const struct series *s)
{
	double m = s->v[0];

	for (unsigned i = 1; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

/* The sanitizer a build was made with: a sanitized figure is not a result. */
static inline const char *variant(void)
{
#if defined(PRINTK_SANITIZER_ADDRESS)
	return "asan";
#elif defined(PRINTK_TSAN)
	return "tsan";
#else
	return "none";
#endif
}

#endif
