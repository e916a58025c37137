// SPDX-License-Identifier: MIT
/*
 * walltime.c - RFC 3339 text of a wall-clock time, for the console time
 * styles iso and iso-utc (walltime.h).
 *
 * Also the local periods a file console rotates by (pk_wall_period): the
 * end of a day or hour found from the same table, once per period.
 *
 * Owns the table of the local zone's UTC offsets: from a day before the
 * last refresh to 400 days after it, the offset at the start and the exact
 * second of each change (daylight saving time), found with localtime_r()
 * from normal context (walltime.h says when). Formatting reads it under a generation count (odd
 * while a refresh writes it): a reader that meets a refresh in progress -
 * a signal handler that interrupted it, say - takes the offset of the last
 * complete table instead of waiting. Outside the table the nearest end's
 * offset is used. The date is plain arithmetic on days (no C library), and
 * the digits are written here: settings.c calls in, so nothing above it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "format/walltime.h"

#define DAY	    86400
#define SPAN_DAYS   400
#define MAX_CHANGES 8

static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned gen;
static _Atomic int64_t tab_start;
static _Atomic int nchanges;
static _Atomic int64_t change_at[MAX_CHANGES];
static _Atomic int32_t offset_from[MAX_CHANGES + 1]; /* [i]: before change_at[i] */
static _Atomic int32_t last_offset;		     /* now's, at the last refresh */
static _Atomic int64_t refreshed_at = INT64_MIN;	     /* CLOCK_MONOTONIC seconds */

static int32_t offset_at(time_t t)
{
	struct tm tm;

	return localtime_r(&t, &tm) ? (int32_t)tm.tm_gmtoff : 0;
}

static int64_t mono_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec;
}

void pk_wall_refresh(void)
{
	pthread_mutex_lock(&refresh_lock);
	tzset();

	time_t now = time(NULL), start = now - DAY, end = now + (time_t)SPAN_DAYS * DAY;
	int32_t prev = offset_at(start);
	int n = 0;

	atomic_fetch_add(&gen, 1); /* odd: being written */
	atomic_store_explicit(&tab_start, (int64_t)start, memory_order_relaxed);
	atomic_store_explicit(&offset_from[0], prev, memory_order_relaxed);
	for (time_t t = start + DAY; t <= end && n < MAX_CHANGES; t += DAY) {
		int32_t o = offset_at(t);
		time_t lo = t - DAY, hi = t;

		if (o == prev)
			continue;
		/* The first second with the new offset. */
		while (hi - lo > 1) {
			time_t mid = lo + (hi - lo) / 2;

			if (offset_at(mid) == prev)
				lo = mid;
			else
				hi = mid;
		}
		o = offset_at(hi);
		atomic_store_explicit(&change_at[n], (int64_t)hi, memory_order_relaxed);
		atomic_store_explicit(&offset_from[n + 1], o, memory_order_relaxed);
		n++;
		prev = o;
		t = hi; /* the next day from the change: two in one day are found too */
	}
	atomic_store_explicit(&nchanges, n, memory_order_relaxed);
	atomic_store_explicit(&last_offset, offset_at(now), memory_order_relaxed);
	atomic_fetch_add(&gen, 1);
	atomic_store(&refreshed_at, mono_sec());
	pthread_mutex_unlock(&refresh_lock);
}

void pk_wall_refresh_maybe(void)
{
	int64_t last = atomic_load_explicit(&refreshed_at, memory_order_relaxed);

	if (last == INT64_MIN || mono_sec() - last >= 60)
		pk_wall_refresh();
}

/* The local offset at @t, lock-free. */
static int32_t local_offset(int64_t t)
{
	unsigned g = atomic_load_explicit(&gen, memory_order_acquire);
	int32_t off;

	if (g & 1)
		return atomic_load_explicit(&last_offset, memory_order_relaxed);
	int n = atomic_load_explicit(&nchanges, memory_order_relaxed);

	if (n > MAX_CHANGES)
		n = MAX_CHANGES;
	off = atomic_load_explicit(&offset_from[0], memory_order_relaxed);
	if (t >= atomic_load_explicit(&tab_start, memory_order_relaxed))
		for (int i = 0; i < n && t >= atomic_load_explicit(&change_at[i], memory_order_relaxed); i++)
			off = atomic_load_explicit(&offset_from[i + 1], memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&gen, memory_order_relaxed) != g)
		return atomic_load_explicit(&last_offset, memory_order_relaxed);
	return off;
}

/* A copy of the table, consistent (taken between two equal even
 * generations); during a refresh, the offset of now at the last one. */
struct zone_copy {
	int n;
	int64_t start;
	int64_t at[MAX_CHANGES];
	int32_t from[MAX_CHANGES + 1];
};

static void zone_copy(struct zone_copy *z)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned g = atomic_load_explicit(&gen, memory_order_acquire);

		if (g & 1)
			continue;
		z->n = atomic_load_explicit(&nchanges, memory_order_relaxed);
		if (z->n > MAX_CHANGES)
			z->n = MAX_CHANGES;
		z->start = atomic_load_explicit(&tab_start, memory_order_relaxed);
		z->from[0] = atomic_load_explicit(&offset_from[0], memory_order_relaxed);
		for (int i = 0; i < z->n; i++) {
			z->at[i] = atomic_load_explicit(&change_at[i], memory_order_relaxed);
			z->from[i + 1] = atomic_load_explicit(&offset_from[i + 1], memory_order_relaxed);
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&gen, memory_order_relaxed) == g)
			return;
	}
	z->n = 0;
	z->start = INT64_MIN;
	z->from[0] = atomic_load_explicit(&last_offset, memory_order_relaxed);
}

/* Floor division: times before 1970 stay right. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return q - ((a % b) != 0 && ((a < 0) != (b < 0)));
}

/* Days since 1970-01-01 -> year, month (1..12), day (1..31): the proleptic
 * Gregorian calendar in 400-year eras of 146097 days, each counted from
 * March 1st so that the leap day is the era year's last. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468; /* 0000-03-01 to 1970-01-01 */
	int64_t era = floor_div(z, 146097);
	unsigned doe = (unsigned)(z - era * 146097);			      /* 0..146096 */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);		      /* 0..365 */
	unsigned mp = (5 * doy + 2) / 153;				      /* March = 0 */

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static char *put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
	return p + 2;
}

/* "YYYY-MM-DD" of day @days since 1970-01-01: 10 bytes, not terminated. */
static char *put_date(char *p, int64_t days)
{
	int64_t y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	if (y < 0)
		y = 0; /* RFC 3339 has four digits of year */
	if (y > 9999)
		y = 9999;
	p = put2(p, (unsigned)(y / 100));
	p = put2(p, (unsigned)(y % 100));
	*p++ = '-';
	p = put2(p, m);
	*p++ = '-';
	return put2(p, d);
}

size_t pk_wall_format(char *out, int64_t wall_ns, int utc)
{
	int64_t sec = floor_div(wall_ns, 1000000000);
	uint32_t usec = (uint32_t)((wall_ns - sec * 1000000000) / 1000);
	int32_t off = utc ? 0 : local_offset(sec);
	int64_t local = sec + off, days = floor_div(local, DAY);
	unsigned sod = (unsigned)(local - days * DAY);
	char *p = out;

	p = put_date(p, days);
	*p++ = 'T';
	p = put2(p, sod / 3600);
	*p++ = ':';
	p = put2(p, sod / 60 % 60);
	*p++ = ':';
	p = put2(p, sod % 60);
	*p++ = '.';
	p = put2(put2(put2(p, usec / 10000), usec / 100 % 100), usec % 100);
	if (utc) {
		*p++ = 'Z';
	} else {
		unsigned a = (unsigned)(off < 0 ? -off : off) / 60;

		*p++ = off < 0 ? '-' : '+';
		p = put2(p, a / 60);
		*p++ = ':';
		p = put2(p, a % 60);
	}
	return (size_t)(p - out);
}

/* The index of the table's segment that holds @t: offset z->from[i],
 * from z->at[i - 1] (or the beginning of time) to z->at[i] (or the end). */
static int zone_segment(const struct zone_copy *z, int64_t t)
{
	int i = 0;

	if (t >= z->start)
		while (i < z->n && t >= z->at[i])
			i++;
	return i;
}

int64_t pk_wall_period(int64_t sec, int unit, char *label)
{
	struct zone_copy z;

	zone_copy(&z);

	int seg = zone_segment(&z, sec);
	int64_t local = sec + z.from[seg];
	int64_t index = floor_div(local, unit), days = floor_div(local, DAY);
	int64_t next_local = (index + 1) * unit, next = INT64_MAX;
	char *p = label;

	/* The first second from @sec on whose local time is next_local or
	 * later: within each segment local time is the second plus the
	 * segment's offset. */
	for (int i = seg; i <= z.n; i++) {
		int64_t begin = i == seg ? sec : z.at[i - 1];
		int64_t end = i < z.n ? z.at[i] : INT64_MAX;
		int64_t at = next_local - z.from[i];

		if (at < begin)
			at = begin;
		if (at < end) {
			next = at;
			break;
		}
	}
	if (next <= sec)
		next = sec + 1;

	p = put_date(p, days);
	if (unit < DAY) {
		*p++ = '-';
		p = put2(p, (unsigned)(local - days * DAY) / 3600);
	}
	*p = '\0';
	return next;
}
