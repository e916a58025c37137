// SPDX-License-Identifier: MIT
/*
 * export_format.h - a record as one entry of systemd's Journal Export
 * Format (export_format.c): what pk-forward posts to
 * systemd-journal-remote (through reader.h's pk_log_export_format).
 */
#ifndef PRINTK_EXPORT_FORMAT_H
#define PRINTK_EXPORT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

struct pk_record;

/*
 * Room for any record's entry: the text (1023 bytes) and 11 bytes of
 * framing; a dictionary of 1024 bytes grows at most 13 times per 4 bytes
 * ("1=\x01" is "X1\n", 8 length bytes, the byte and "\n"): 3,328; the fixed
 * fields under 500. Under 5,000.
 */
#define PK_EXPORT_RECORD_MAX 8192

/* The timestamps journal-remote accepts (systemd's VALID_REALTIME and
 * VALID_MONOTONIC): below 2^55 microseconds (realtime: above 0 too). */
#define PK_EXPORT_REALTIME_MAX ((1ull << 55) - 1)

/*
 * @rec as one export entry, ended by its empty line, into @out of @cap
 * bytes (at least PK_EXPORT_RECORD_MAX: never cut; less: cut, no longer
 * an entry). @ident: SYSLOG_IDENTIFIER, NULL to leave it out; @hostname:
 * _HOSTNAME, NULL to leave it out; @boot_id: _BOOT_ID (32 hex digits, the
 * boot of the record's monotonic time), NULL to leave it out.
 * @rt_offset_ns: CLOCK_REALTIME - CLOCK_MONOTONIC, for
 * __REALTIME_TIMESTAMP (clamped into 1..PK_EXPORT_REALTIME_MAX, and
 * __MONOTONIC_TIMESTAMP to at most that: the receiver aborts the
 * connection for a value outside). The fields and the
 * rule for values are in docs/forwarding.md ("systemd-journal-remote").
 * Returns the length. Pure: async-signal-safe, thread-safe, no allocation.
 */
size_t pk_export_format_record(char *out, size_t cap, const struct pk_record *rec, const char *ident,
			       const char *hostname, const char *boot_id, int64_t rt_offset_ns);

#endif
