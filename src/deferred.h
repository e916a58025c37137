// SPDX-License-Identifier: MIT
/*
 * deferred.h - deferred records: a message stored as its format string's
 * reference and its binary arguments, formatted when it is read.
 *
 * printk stores a message no console prints this way when its format is a
 * string literal that deferred.c can walk (pk_deferred_encode() says which);
 * the ring's readers (prb_read(), prb_read_text()) call
 * pk_deferred_expand_in_place(), so everything above the ring sees ordinary
 * text, byte for byte what formatting at store time would have stored.
 * docs/deferred.md has every conversion's rule.
 *
 * The format strings live in a table in the log's own memory, after the
 * ring's data area (pk_deferred_table_size() bytes), so another process, or
 * a reader of a core dump, never needs the writer's address space. The
 * table and the record blob are untrusted input for a reader: every offset
 * and length is checked, and what does not validate reads as
 * PK_DEFERRED_BAD_TEXT.
 *
 * Context: every function here is async-signal-safe, lock-free and
 * thread-safe; nothing allocates.
 */
#ifndef PRINTK_DEFERRED_H
#define PRINTK_DEFERRED_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"

struct prb;

/* Bytes of format string table for a data area of 2^@data_bits bytes: a
 * quarter of it, at least 4 KiB and at most 1 MiB. */
static inline size_t pk_deferred_table_size(unsigned data_bits)
{
	size_t n = ((size_t)1 << data_bits) / 4;

	if (n < 4096)
		n = 4096;
	if (n > ((size_t)1 << 20))
		n = (size_t)1 << 20;
	return n;
}

/* Longest format (after its level headers, without its newline) the table
 * takes. */
#define PK_DEFERRED_FMT_MAX 1000

/* What a reader gets for a deferred record whose format entry or arguments
 * do not validate (a damaged log, or a table entry its writer never
 * finished). */
#define PK_DEFERRED_BAD_TEXT "(deferred message: its format string is damaged)"

/*
 * The reference of format @body (@len bytes, not NUL-terminated past @len)
 * in @rb's table, adding it the first time this process uses @key (the
 * address of the literal it came from): stored in *@ref (8 bytes, for
 * pk_deferred_encode()). Returns 0, -ENOSPC when the table is full
 * (counted: pk_deferred_table_stats()), -EBUSY when another thread is adding
 * the same format right now or this process's cache has no room: the
 * caller formats eagerly.
 */
int pk_deferred_ref(struct prb *rb, const void *key, const char *body, size_t len, uint64_t *ref);

/* @rb's memory is going away (its log is destroyed, no printk runs on it):
 * this process's cache forgets its table, so another log may take its place.
 * Not async-signal-safe against printk on @rb. */
void pk_deferred_forget(const struct prb *rb);

/*
 * Encode the arguments @ap holds for format @body (@len bytes) after @ref
 * into @blob (@cap bytes). Returns the blob's length, or -1 when the format
 * cannot be deferred (a conversion without a rule, a %s that does not fit,
 * an output that might reach @out_max bytes): @ap is then consumed partly,
 * and the caller formats from its own copy.
 */
int pk_deferred_encode(uint64_t ref, const char *body, size_t len, va_list *ap, char *blob,
		       size_t cap, size_t out_max);

/*
 * Replace the deferred record @len bytes at @text by its text, cut at
 * PK_TEXT_MAX bytes and NUL-terminated (@text has room for PK_TEXT_MAX + 1),
 * and clear PRB_FLAG_DEFERRED in *@flags. Returns the text's length. A blob
 * or table entry that does not validate gives PK_DEFERRED_BAD_TEXT.
 */
size_t pk_deferred_expand_in_place(const struct prb *rb, char *text, size_t len, uint8_t *flags);

/* The table's counters. */
struct pk_deferred_stats {
	uint64_t used;	 /* bytes of entries */
	uint64_t size;	 /* bytes of room for entries */
	uint64_t full;	 /* messages formatted eagerly because the table was full */
};
void pk_deferred_table_stats(const struct prb *rb, struct pk_deferred_stats *st);

#endif
