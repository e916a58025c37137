// SPDX-License-Identifier: MIT
/*
 * walltime.h - the wall-clock time styles of console lines (printk.time=iso,
 * iso-utc): a record's timestamp as RFC 3339 text, async-signal-safe.
 *
 * localtime_r() is not async-signal-safe (it may read the zone file and
 * takes a lock), so the local UTC offset comes from a table of the zone's
 * transitions that pk_wall_refresh() fills from normal context (a style
 * change; a console's registration, at most once a minute);
 * formatting only reads the table and does its own civil-from-days
 * arithmetic. docs/clock.md says how the time is found and its error.
 */
#ifndef PRINTK_WALLTIME_H
#define PRINTK_WALLTIME_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SS.uuuuuu+hh:mm" (32 bytes) or "...uuuuuuZ" (27). */
#define PK_WALL_TEXT_MAX 32

/* Re-read the local zone (TZ, /etc/localtime) for the next year of
 * transitions. Not async-signal-safe; thread-safe. */
void pk_wall_refresh(void);
/* pk_wall_refresh() if the last one is a minute old or more. Same context. */
void pk_wall_refresh_maybe(void);

/* @wall_ns (nanoseconds since the epoch) as RFC 3339 text with
 * microseconds into @out (PK_WALL_TEXT_MAX bytes, not terminated): local
 * time with its offset, or UTC with "Z" when @utc; returns the length.
 * Async-signal-safe. */
size_t pk_wall_format(char *out, int64_t wall_ns, int utc);

/* Local calendar periods, for file consoles rotating by time. */
#define PK_WALL_HOUR	      3600
#define PK_WALL_DAY	      86400
#define PK_WALL_LABEL_MAX     14 /* "YYYY-MM-DD-HH" and its NUL */
/* The local period (@unit: PK_WALL_HOUR or PK_WALL_DAY) that holds @sec
 * (seconds since the epoch): its name into @label ("YYYY-MM-DD" for a day,
 * "YYYY-MM-DD-HH" for an hour, NUL-terminated), and as the return value the
 * first second after @sec whose local time lies in a later period. Local
 * time that goes back (the end of daylight saving time) does not start a
 * period: an hour repeated is one period of two hours; an hour skipped is
 * none. From the zone table, as pk_wall_format(): async-signal-safe. */
int64_t pk_wall_period(int64_t sec, int unit, char *label);

#endif
