// SPDX-License-Identifier: MIT
/*
 * timefmt.c - clocks and times for udmesg.
 *
 *  - the list of time formats and how util-linux resolves it (several
 *    formats print side by side; --notime and the deltas merge);
 *  - the wall clock of a record: for a libprintk log, the log header's
 *    CLOCK_REALTIME - CLOCK_MONOTONIC offset plus the record's time, to the
 *    nanosecond, so -T and iso stay right after the writer is gone; for text
 *    files (-F, -K), the host's boot time with current util-linux's
 *    arithmetic (boot time plus record time, both to the microsecond: the
 *    boot time's fraction carries into the seconds);
 *  - the --since/--until grammar of util-linux (systemd's timestamps);
 *  - the iso-8601 format of util-linux (comma before the microseconds);
 *  - test hooks: UDMESG_TEST_NOW=<sec> replaces "now" for relative times,
 *    UDMESG_TEST_BOOTTIME=<sec>[.<fraction>] replaces the host boot time
 *    (a decimal fraction: ".5" is half a second).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "udmesg.h"

#define USEC_PER_SEC INT64_C(1000000)
#define NSEC_PER_SEC INT64_C(1000000000)

/* "SEC" or "SEC.FRACTION" into usec; -1 on junk. */
static int parse_sec_usec(const char *s, int64_t *usec)
{
	char *end;
	long long sec, frac = 0;
	int digits = 0;

	errno = 0;
	sec = strtoll(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end == '.') {
		const char *f = end + 1;

		for (; isdigit((unsigned char)*f) && digits < 6; f++, digits++)
			frac = frac * 10 + (*f - '0');
		while (isdigit((unsigned char)*f))
			f++;
		for (; digits < 6; digits++)
			frac *= 10;
		end = (char *)f;
	}
	if (*end)
		return -1;
	*usec = sec * USEC_PER_SEC + frac;
	return 0;
}

int64_t ud_now_usec(void)
{
	const char *t = getenv("UDMESG_TEST_NOW");
	int64_t usec;
	struct timeval tv;

	if (t && parse_sec_usec(t, &usec) == 0)
		return usec;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * USEC_PER_SEC + tv.tv_usec;
}

int ud_host_boot_time(int64_t *sec, int64_t *usec)
{
	const char *t = getenv("UDMESG_TEST_BOOTTIME");
	int64_t u;

	if (t) {
		if (parse_sec_usec(t, &u) != 0 || u < 0)
			return -1;
		*sec = u / USEC_PER_SEC;
		*usec = u % USEC_PER_SEC;
		return 0;
	}

	/* util-linux: gettimeofday() - CLOCK_BOOTTIME, plus the time spent
	 * suspended (CLOCK_BOOTTIME - CLOCK_MONOTONIC), to the microsecond. */
	struct timeval now;
	struct timespec up, mono;

	if (gettimeofday(&now, NULL) != 0 || clock_gettime(CLOCK_BOOTTIME, &up) != 0)
		return -1;

	int64_t b = (int64_t)now.tv_sec * USEC_PER_SEC + now.tv_usec -
		    ((int64_t)up.tv_sec * USEC_PER_SEC + up.tv_nsec / 1000);

	if (clock_gettime(CLOCK_MONOTONIC, &mono) == 0)
		b += (int64_t)(up.tv_sec - mono.tv_sec) * USEC_PER_SEC +
		     (up.tv_nsec - mono.tv_nsec) / 1000;
	*sec = b / USEC_PER_SEC;
	*usec = b % USEC_PER_SEC;
	return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * Timestamps and the boot time come from files another process wrote (a
 * record's 64-bit timestamp, the log's realtime offset, a -F line's
 * seconds): sums and products saturate instead of overflowing, so a
 * hostile value prints as a time far away, never as undefined behaviour.
 */
static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t sat_mul(int64_t a, int64_t m) /* m > 0 */
{
	if (a > INT64_MAX / m)
		return INT64_MAX;
	if (a < INT64_MIN / m)
		return INT64_MIN;
	return a * m;
}

static int64_t ts_ns(const struct urec *rec)
{
	return rec->ts_nsec > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)rec->ts_nsec;
}

/*
 * A file's record: boot time + record time as util-linux adds them, in
 * usec. Kept as seconds plus a carry so that a record's seconds near
 * INT64_MAX saturate in seconds (and print as a time the calendar cannot
 * hold) instead of in usec.
 */
static void file_wall(const struct ud_ctl *ctl, const struct urec *rec, int64_t *sec, int64_t *usec)
{
	int64_t base_us = floor_div(ctl->base_ns, 1000);
	int64_t base_sec = floor_div(base_us, USEC_PER_SEC);
	/* A -F record's microseconds are whatever strtol() read: any int64. */
	int64_t frac = sat_add(base_us - base_sec * USEC_PER_SEC, rec->usec);
	int64_t rem = frac % USEC_PER_SEC;

	*sec = sat_add(sat_add(base_sec, rec->sec), frac / USEC_PER_SEC - (rem < 0));
	*usec = rem < 0 ? rem + USEC_PER_SEC : rem;
}

void ud_record_wall(const struct ud_ctl *ctl, const struct urec *rec, time_t *sec, long *usec)
{
	if (ctl->base_by_usec) {
		int64_t s, us;

		file_wall(ctl, rec, &s, &us);
		*sec = (time_t)s;
		*usec = (long)us;
		return;
	}

	int64_t ns = sat_add(ctl->base_ns, ts_ns(rec));

	*sec = (time_t)floor_div(ns, NSEC_PER_SEC);
	*usec = (long)((ns - floor_div(ns, NSEC_PER_SEC) * NSEC_PER_SEC) / 1000);
}

int64_t ud_record_wall_usec(const struct ud_ctl *ctl, const struct urec *rec)
{
	if (ctl->base_by_usec) {
		int64_t s, us;

		file_wall(ctl, rec, &s, &us);
		return sat_add(sat_mul(s, USEC_PER_SEC), us);
	}
	return floor_div(sat_add(ctl->base_ns, ts_ns(rec)), 1000);
}

size_t ud_format_iso(time_t sec, long usec, char *buf, size_t len)
{
	struct tm tm;
	int n;

	if (!localtime_r(&sec, &tm)) {
		*buf = '\0';
		return 0;
	}

	int tmin = (int)(tm.tm_gmtoff / 60);

	n = snprintf(buf, len, "%4ld-%.2d-%.2dT%02d:%02d:%02d,%06ld%+03d:%02d",
		     (long)tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, usec, tmin / 60, abs(tmin % 60));
	return n < 0 ? 0 : (size_t)n;
}

int ud_kmsg_caller_width(void)
{
	char buf[20] = "";
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 11; /* util-linux's PID_CHARS_DEFAULT */
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return 11;
	return (int)strnlen(buf, sizeof(buf)); /* newline included, as util-linux counts */
}

/* ------------------------------------------------------ time formats -- */

bool ud_time_fmt_is(const struct ud_ctl *ctl, enum ud_timefmt fmt)
{
	if (!ctl->ntime_fmts)
		return fmt == UD_TF_TIME;
	for (size_t i = 0; i < ctl->ntime_fmts; i++)
		if (ctl->time_fmts[i] == fmt)
			return true;
	return false;
}

void ud_time_fmt_include(struct ud_ctl *ctl, enum ud_timefmt fmt)
{
	if (ctl->ntime_fmts && ud_time_fmt_is(ctl, fmt))
		return;
	if (ctl->ntime_fmts < UD_TF_COUNT)
		ctl->time_fmts[ctl->ntime_fmts++] = fmt;
}

static void time_fmts_only(struct ud_ctl *ctl, enum ud_timefmt fmt)
{
	ctl->time_fmts[0] = fmt;
	ctl->ntime_fmts = 1;
}

/* @delta leaves the list; @old becomes @new where it stands. */
static void time_fmt_merge(struct ud_ctl *ctl, enum ud_timefmt delta, enum ud_timefmt old,
			   enum ud_timefmt new)
{
	size_t n = 0;

	for (size_t i = 0; i < ctl->ntime_fmts; i++)
		if (ctl->time_fmts[i] != delta)
			ctl->time_fmts[n++] = ctl->time_fmts[i];
	ctl->ntime_fmts = n;
	for (size_t i = 0; i < n; i++) {
		if (ctl->time_fmts[i] == old) {
			ctl->time_fmts[i] = new;
			break;
		}
	}
}

/*
 * Current util-linux dmesg's rules, in its order: JSON has its own time;
 * --notime wins over every stamp but a delta (-t -d: the delta alone); -d
 * (raw time with delta) and -T merge into "[ctime <delta>]"; the bare delta
 * of --time-format delta merges into raw time, else into ctime. Anything
 * else prints side by side.
 */
void ud_time_fmts_resolve(struct ud_ctl *ctl)
{
	if (ctl->json)
		ctl->ntime_fmts = 0;
	if (ud_time_fmt_is(ctl, UD_TF_NONE)) {
		if (ud_time_fmt_is(ctl, UD_TF_TIME_DELTA) || ud_time_fmt_is(ctl, UD_TF_DELTA))
			time_fmts_only(ctl, UD_TF_DELTA);
		else
			time_fmts_only(ctl, UD_TF_NONE);
	}
	if (ud_time_fmt_is(ctl, UD_TF_TIME_DELTA) && ud_time_fmt_is(ctl, UD_TF_CTIME))
		time_fmt_merge(ctl, UD_TF_TIME_DELTA, UD_TF_CTIME, UD_TF_CTIME_DELTA);
	if (ud_time_fmt_is(ctl, UD_TF_DELTA)) {
		if (ud_time_fmt_is(ctl, UD_TF_TIME))
			time_fmt_merge(ctl, UD_TF_DELTA, UD_TF_TIME, UD_TF_TIME_DELTA);
		else if (ud_time_fmt_is(ctl, UD_TF_CTIME))
			time_fmt_merge(ctl, UD_TF_DELTA, UD_TF_CTIME, UD_TF_CTIME_DELTA);
	}
	if (!ctl->ntime_fmts)
		time_fmts_only(ctl, UD_TF_TIME);
}

/* ------------------------------------------------- --since / --until -- */

static const struct {
	const char *suffix;
	int64_t usec;
} time_units[] = {
	{"seconds", USEC_PER_SEC},
	{"second", USEC_PER_SEC},
	{"sec", USEC_PER_SEC},
	{"s", USEC_PER_SEC},
	{"minutes", 60 * USEC_PER_SEC},
	{"minute", 60 * USEC_PER_SEC},
	{"min", 60 * USEC_PER_SEC},
	{"months", 2629800 * USEC_PER_SEC},
	{"month", 2629800 * USEC_PER_SEC},
	{"msec", 1000},
	{"ms", 1000},
	{"m", 60 * USEC_PER_SEC},
	{"hours", 3600 * USEC_PER_SEC},
	{"hour", 3600 * USEC_PER_SEC},
	{"hr", 3600 * USEC_PER_SEC},
	{"h", 3600 * USEC_PER_SEC},
	{"days", 86400 * USEC_PER_SEC},
	{"day", 86400 * USEC_PER_SEC},
	{"d", 86400 * USEC_PER_SEC},
	{"weeks", 604800 * USEC_PER_SEC},
	{"week", 604800 * USEC_PER_SEC},
	{"w", 604800 * USEC_PER_SEC},
	{"years", 31557600 * USEC_PER_SEC},
	{"year", 31557600 * USEC_PER_SEC},
	{"y", 31557600 * USEC_PER_SEC},
	{"usec", 1},
	{"us", 1},
	{"", USEC_PER_SEC},
};

#define WHITESPACE " \t\n\r"

/* A time span: "5min", "1h 30m", "2.5s", "3" (seconds). */
static int parse_span(const char *s, int64_t *out)
{
	int64_t total = 0;
	int something = 0;

	for (;;) {
		long long whole, frac = 0;
		int fdigits = 0;
		char *e;

		s += strspn(s, WHITESPACE);
		if (!*s)
			break;
		errno = 0;
		whole = strtoll(s, &e, 10);
		if (errno || whole < 0)
			return -1;
		if (*e == '.') {
			char *b = e + 1;

			frac = strtoll(b, &e, 10);
			if (errno || frac < 0 || e == b)
				return -1;
			fdigits = (int)(e - b);
		} else if (e == s) {
			return -1;
		}
		e += strspn(e, WHITESPACE);

		size_t i;

		for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++) {
			size_t n = strlen(time_units[i].suffix);

			if (strncmp(e, time_units[i].suffix, n) == 0) {
				int64_t k = frac * time_units[i].usec;

				for (; fdigits > 0; fdigits--)
					k /= 10;
				total += whole * time_units[i].usec + k;
				s = e + n;
				something = 1;
				break;
			}
		}
		if (i == sizeof(time_units) / sizeof(time_units[0]))
			return -1;
	}
	if (!something)
		return -1;
	*out = total;
	return 0;
}

/* ".123" or ",123456" after a time: up to six digits. */
static int parse_subsec(const char *t, int64_t *usec)
{
	int64_t r = 0, factor = USEC_PER_SEC / 10;

	if (*t != '.' && *t != ',')
		return -1;
	while (*++t) {
		if (!isdigit((unsigned char)*t) || factor < 1)
			return -1;
		r += (*t - '0') * factor;
		factor /= 10;
	}
	*usec = r;
	return 0;
}

/* strptime @fmt over all of @t (optionally + subseconds when @subsec). */
static int try_format(const char *t, const char *fmt, struct tm *tm, const struct tm *base,
		      int subsec, int64_t *usec)
{
	const char *k;

	*tm = *base;
	k = strptime(t, fmt, tm);
	if (!k)
		return -1;
	if (*k == '\0')
		return 0;
	if (subsec && parse_subsec(k, usec) == 0)
		return 0;
	return -1;
}

int ud_parse_timestamp(const char *t, int64_t *usec)
{
	static const struct {
		const char *name;
		int nr;
	} days[] = {
		{"Sunday", 0}, {"Sun", 0},	 {"Monday", 1},	  {"Mon", 1},	   {"Tuesday", 2},
		{"Tue", 2},    {"Wednesday", 3}, {"Wed", 3},	  {"Thursday", 4}, {"Thu", 4},
		{"Friday", 5}, {"Fri", 5},	 {"Saturday", 6}, {"Sat", 6},
	};
	time_t now = (time_t)(ud_now_usec() / USEC_PER_SEC);
	struct tm tm, base;
	int64_t plus = 0, minus = 0, sub = 0;
	int weekday = -1;
	size_t tl = strlen(t);

	localtime_r(&now, &base);
	base.tm_isdst = -1;
	tm = base;

	if (!strcmp(t, "now")) {
		/* as it is */
	} else if (!strcmp(t, "today") || !strcmp(t, "yesterday") || !strcmp(t, "tomorrow")) {
		tm.tm_mday += t[0] == 'y' ? -1 : t[2] == 'm' ? 1 : 0;
		tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
	} else if (t[0] == '+') {
		if (parse_span(t + 1, &plus))
			return -1;
	} else if (t[0] == '-') {
		if (parse_span(t + 1, &minus))
			return -1;
	} else if (t[0] == '@') {
		if (try_format(t + 1, "%s", &tm, &base, 1, &sub))
			return -1;
	} else if (tl > 4 && !strcmp(t + tl - 4, " ago")) {
		char *z = strndup(t, tl - 4);
		int r;

		if (!z)
			return -1;
		r = parse_span(z, &minus);
		free(z);
		if (r)
			return -1;
	} else {
		for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
			size_t n = strlen(days[i].name);

			if (strncasecmp(t, days[i].name, n) == 0 && t[n] == ' ') {
				weekday = days[i].nr;
				t += n + 1;
				break;
			}
		}
		if (!try_format(t, "%y-%m-%d %H:%M:%S", &tm, &base, 1, &sub) ||
		    !try_format(t, "%Y-%m-%d %H:%M:%S", &tm, &base, 1, &sub) ||
		    !try_format(t, "%Y-%m-%dT%H:%M:%S", &tm, &base, 1, &sub)) {
			/* done */
		} else if (!try_format(t, "%y-%m-%d %H:%M", &tm, &base, 0, &sub) ||
			   !try_format(t, "%Y-%m-%d %H:%M", &tm, &base, 0, &sub)) {
			tm.tm_sec = 0;
		} else if (!try_format(t, "%y-%m-%d", &tm, &base, 0, &sub) ||
			   !try_format(t, "%Y-%m-%d", &tm, &base, 0, &sub)) {
			tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
		} else if (!try_format(t, "%H:%M:%S", &tm, &base, 1, &sub)) {
			/* today */
		} else if (!try_format(t, "%H:%M", &tm, &base, 0, &sub)) {
			tm.tm_sec = 0;
		} else if (!try_format(t, "%Y%m%d%H%M%S", &tm, &base, 1, &sub)) {
			/* done */
		} else {
			return -1;
		}
	}

	time_t x = mktime(&tm);

	if (x == (time_t)-1)
		return -1;
	if (weekday >= 0 && tm.tm_wday != weekday)
		return -1;

	int64_t r = (int64_t)x * USEC_PER_SEC + sub + plus;

	r = r > minus ? r - minus : 0;
	*usec = r;
	return 0;
}
