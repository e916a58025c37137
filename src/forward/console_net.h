// SPDX-License-Identifier: MIT
/*
 * console_net.h - the forwarding consoles' private side (console_net.c),
 * for the tests: the wire formats by themselves and the memfd threshold.
 * (pk_console_destroy() frees a forwarder through its release callback,
 * so console_fd.c does not depend on this file.)
 */
#ifndef PRINTK_CONSOLE_NET_H
#define PRINTK_CONSOLE_NET_H

#include <stddef.h>
#include <stdint.h>

struct console;
struct pk_record;

/* 1 if @con was made by pk_console_journal_create/pk_console_syslog_create. */
int pk_console_net_owns(const struct console *con);
/* Journal: send payloads over @n bytes through a memfd (0: only when the
 * socket refuses the datagram). For the tests of that path. */
void pk_console_net_set_max_datagram(struct console *con, size_t n);
/* TCP: how long after it was written a record is kept for a resend once
 * the send queue is empty (N7; default 2000 ms). For tests under load. */
void pk_console_net_set_resend_slack(struct console *con, unsigned ms);

/* A record as one syslog message (no framing) into @out; its length, cut
 * at @cap. @rt_offset: CLOCK_REALTIME - CLOCK_MONOTONIC. @format may have
 * PK_NET_NO_BOM: no BOM before UTF-8 text. */
#define PK_NET_NO_BOM 0x100
size_t pk_net_format_syslog(char *out, size_t cap, const struct pk_record *rec, int format,
			    unsigned enterprise, const char *host, const char *app,
			    int64_t rt_offset);
/* A record as one journal native-protocol payload. */
size_t pk_net_format_journal(char *out, size_t cap, const struct pk_record *rec, const char *app,
			     int64_t rt_offset);
/* A dictionary key as an RFC 5424 SD-NAME (@out: 33 bytes) or a journal
 * field name (@out: 65 bytes); the name's length. */
size_t pk_net_sd_name(char *out, const char *key, size_t n);
int pk_net_utf8_valid(const char *s, size_t n);
/* The reason, in words, a forwarding console could not be made with error
 * @err on this thread (a host name that does not resolve: the resolver's
 * own words). */
const char *pk_net_create_strerror(int err);

#endif
