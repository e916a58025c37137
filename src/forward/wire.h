// SPDX-License-Identifier: MIT
/*
 * wire.h - the forwarding consoles' wire formats (wire_syslog.c,
 * wire_journal.c): a record in, the bytes of one message out.
 *
 * Every function here is pure: no I/O, no allocation, no state of its own;
 * what it writes depends on its arguments only (RFC 3164's local time also
 * on the process's time zone, as localtime_r() reads it). Output is cut at
 * the capacity given, never past it, and the returned length is what was
 * written. The transports (transport_*.c) never look inside a message, and
 * these files never see a socket.
 */
#ifndef PRINTK_FORWARD_WIRE_H
#define PRINTK_FORWARD_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct pk_record;

#define PK_WIRE_SD_NAME_MAX	 32 /* RFC 5424 */
#define PK_WIRE_JOURNAL_NAME_MAX 64 /* journald's field names */

/* @format may have PK_NET_NO_BOM: no BOM before UTF-8 text (RFC 5424). */
#define PK_NET_NO_BOM 0x100

/* A record as one syslog message (no framing) into @out; its length, cut
 * at @cap. @format: PK_SYSLOG_RFC5424 or PK_SYSLOG_RFC3164 (<printk/forward.h>),
 * optionally | PK_NET_NO_BOM. @rt_offset: CLOCK_REALTIME - CLOCK_MONOTONIC. */
size_t pk_net_format_syslog(char *out, size_t cap, const struct pk_record *rec, int format,
			    unsigned enterprise, const char *host, const char *app,
			    int64_t rt_offset);
/* A record as one journal native-protocol payload. */
size_t pk_net_format_journal(char *out, size_t cap, const struct pk_record *rec, const char *app,
			     int64_t rt_offset);
/* A dictionary key as an RFC 5424 SD-NAME (@out: 33 bytes); its length. */
size_t pk_net_sd_name(char *out, const char *key, size_t n);
/* 1 if @s holds only well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF). */
int pk_net_utf8_valid(const char *s, size_t n);

/* RFC 6587 octet counting: the "LEN SP" prefix of a @n-byte message into
 * @out (PK_WIRE_OCTET_ROOM bytes); the prefix's length. */
#define PK_WIRE_OCTET_ROOM 24
size_t pk_wire_octet_prefix(char *out, size_t n);
/* RFC 6587 non-transparent framing: @msg with each newline as "#012" (the
 * escape rsyslog writes for a control character) and one newline at the
 * end, into @out (@cap: 4 * @n + 1 holds any message); the frame's length,
 * cut at @cap. */
size_t pk_wire_frame_lf(char *out, size_t cap, const char *msg, size_t n);

/* The syslog facility a record goes with: printk's 0 (kern) is reserved
 * for the kernel on a receiver, so it goes as user (1), as do numbers
 * past 23. */
unsigned pk_wire_facility(unsigned facility);
/* Call @fn for each KEY=VALUE of @rec's dictionary (entries without '='
 * or with an empty key are skipped); at most PK_DICT_MAX bytes are read. */
void pk_wire_each_dict(const struct pk_record *rec,
		       void (*fn)(void *, const char *, size_t, const char *, size_t), void *arg);

/* A bounded writer: what does not fit is dropped, the length never passes
 * the capacity. */
struct pk_wire_buf {
	char *p;
	size_t len, cap;
};

static inline void pk_wire_put(struct pk_wire_buf *b, const void *s, size_t n)
{
	if (n > b->cap - b->len)
		n = b->cap - b->len;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void pk_wire_str(struct pk_wire_buf *b, const char *s)
{
	pk_wire_put(b, s, strlen(s));
}

static inline void pk_wire_ch(struct pk_wire_buf *b, char c)
{
	pk_wire_put(b, &c, 1);
}

static inline void pk_wire_u64(struct pk_wire_buf *b, uint64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v);

	pk_wire_put(b, t, (size_t)n);
}

#endif
