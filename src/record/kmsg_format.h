// SPDX-License-Identifier: MIT
/*
 * kmsg_format.h - the /dev/kmsg form of a record (kmsg.c), the one
 * implementation every reader uses: kmsg_read, the kmsg_dump iterator and
 * udmesg --kmsg.
 */
#ifndef PRINTK_KMSG_FORMAT_H
#define PRINTK_KMSG_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/printk_limits.h"
#include "ring/ringbuffer.h"

/*
 * @r as a /dev/kmsg read returns it, into @out of PK_MESSAGE_MAX bytes, cut
 * there as the kernel cuts it: "<level>,<seq>,<usec>,<flag>[,caller=...]
 * [,partial];text\n" and the dictionary's " KEY=VALUE\n" lines. @partial
 * adds the ",partial" field of a line its writer never finished.
 * Async-signal-safe. Returns the length.
 */
size_t pk_kmsg_format_record(const struct prb_record *r, char *out, bool partial);

#endif
