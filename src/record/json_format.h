// SPDX-License-Identifier: MIT
/*
 * json_format.h - a record as one line of JSON with journald's field names,
 * as `journalctl -o json` prints an entry (json_format.c): the ,json
 * consoles (console_fd.c) and udmesg --journal-json (through reader.h).
 */
#ifndef PRINTK_JSON_FORMAT_H
#define PRINTK_JSON_FORMAT_H

#include <stddef.h>
#include <stdint.h>

struct console;
struct pk_record;

/*
 * Room for any record's line: at most 4 bytes out per byte of text,
 * identifier and dictionary value ("255," in an array of byte numbers),
 * about 14 per dictionary entry (3 bytes at least) for its name's
 * growth and punctuation, and 400 for the fixed fields: under 14,000.
 */
#define PK_JSON_RECORD_MAX 16384

/*
 * @rec as one JSON object and a newline, into @out of @cap bytes (at least
 * PK_JSON_RECORD_MAX: never cut; less: cut, no longer JSON). @ident: the
 * SYSLOG_IDENTIFIER, or NULL to leave that field out. @rt_offset_ns:
 * CLOCK_REALTIME - CLOCK_MONOTONIC, for __REALTIME_TIMESTAMP. The fields
 * and the rule for values are in docs/json.md. Returns the length (without
 * a NUL). Pure: async-signal-safe, thread-safe, no allocation.
 */
size_t pk_json_format_record(char *out, size_t cap, const struct pk_record *rec, const char *ident,
			     int64_t rt_offset_ns);

/*
 * 1 if journalctl prints @v (@n bytes) as a string: well-formed UTF-8
 * (shortest form, no surrogate, at most U+10FFFF, no noncharacter) without
 * control characters but tab and newline. Pure.
 */
int pk_journal_printable(const char *v, size_t n);

/*
 * A dictionary key as a journal field name: upper case, [A-Z0-9_], an 'X'
 * before a leading '_' or digit, 64 characters at most. @out: 65 bytes.
 * Returns the length.
 */
size_t pk_journal_key_name(char *out, const char *key, size_t n);

/*
 * A dictionary key as the JSON consoles and the journal forwarder name it (its field-name rule:
 * upper case, [A-Z0-9_], an 'X' before a leading '_' or digit, 64
 * characters at most), with "DICT_" before a name that is one of the
 * fields the record itself gives. @out: 70 bytes. Returns the length.
 */
size_t pk_json_field_name(char *out, const char *key, size_t n);

/* console_fd.c: make the stderr/fd/file console @con print each record as
 * JSON lines. 0, -EINVAL (not such a console, or registered), -ENOMEM.
 * Not async-signal-safe (allocates its line buffer). */
int pk_console_fd_set_json(struct console *con);

#endif
