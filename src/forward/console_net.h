// SPDX-License-Identifier: MIT
/*
 * console_net.h - the forwarding consoles' private side (console_net.c),
 * for the tests: the wire formats by themselves (wire.h) and the knobs the
 * tests turn. (pk_console_destroy() frees a forwarder through its release
 * callback, so the console layer does not depend on this file.)
 */
#ifndef PRINTK_CONSOLE_NET_H
#define PRINTK_CONSOLE_NET_H

#include <stddef.h>
#include <stdint.h>

#include "forward/wire.h"

struct console;

/* 1 if @con was made by pk_console_journal_create/pk_console_syslog_create. */
int pk_console_net_owns(const struct console *con);
/* Journal: send payloads over @n bytes through a memfd (0: only when the
 * socket refuses the datagram). For the tests of that path. */
void pk_console_net_set_max_datagram(struct console *con, size_t n);
/* TCP: how long after it was written a record is kept for a resend once
 * the send queue is empty (N7; default 2000 ms). For tests under load. */
void pk_console_net_set_resend_slack(struct console *con, unsigned ms);
/* The reason, in words, a forwarding console could not be made with error
 * @err on this thread (a host name that does not resolve: the resolver's
 * own words). */
const char *pk_net_create_strerror(int err);

#endif
