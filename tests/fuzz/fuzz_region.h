// SPDX-License-Identifier: MIT
/*
 * fuzz_region.h - what fuzz_reader, fuzz_writer and fuzz_lanes share: a
 * log region made from the fuzzer's input, in memory (no file per
 * execution), and the checks every record read from it (or from a
 * /dev/kmsg file on it) must pass.
 *
 * The region lives in one mapping of REGION_MAX bytes, 64-byte aligned as
 * pk_log_attach() requires. An input is first attached at its own length;
 * if the log is refused as truncated (-ENOSPC) it is tried again with the
 * rest of the mapping zeroed, so seeds can be stored with their trailing
 * zeros cut and mutations stay in the bytes that matter.
 */
#ifndef PRINTK_FUZZ_REGION_H
#define PRINTK_FUZZ_REGION_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <printk/kmsg.h>
#include <printk/log.h>

#define REGION_MAX (64u * 1024) /* a 16 KiB log's region fits */
#define READ_CAP   20000	 /* records per pass: more than REGION_MAX can hold */

static unsigned char *region;
static size_t region_dirty; /* bytes past it are zero */

static inline void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "%s: %s (%lld, %lld)\n", program_invocation_short_name, what, a, b);
	abort();
}

static inline void region_init(void)
{
	if (region)
		return;
	region = mmap(NULL, REGION_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		abort();
}

/*
 * Load @data into the region: its own length, or all of it zero-extended.
 * Only the bytes an earlier input may have changed are cleared (a writer
 * writes only inside the length it attached with).
 */
static inline size_t region_load(const uint8_t *data, size_t size, int extended)
{
	if (size > REGION_MAX)
		size = REGION_MAX;
	memcpy(region, data, size);
	if (region_dirty > size)
		memset(region + size, 0, region_dirty - size);
	region_dirty = extended ? REGION_MAX : size;
	return region_dirty;
}

/*
 * A read-only handle must never write: the region still holds @data and
 * zeros up to @len. (Checked after the fact: an mprotect() per input would
 * cost more than the whole input, a TLB shootdown on every CPU.)
 */
static inline void region_check_unchanged(const uint8_t *data, size_t size, size_t len)
{
	static const unsigned char zeros[4096];

	if (size > len)
		size = len;
	if (memcmp(region, data, size) != 0)
		fail("a read-only handle wrote to the region", (long long)size, 0);
	for (size_t off = size; off < len; off += sizeof(zeros)) {
		size_t n = len - off < sizeof(zeros) ? len - off : sizeof(zeros);

		if (memcmp(region + off, zeros, n) != 0)
			fail("a read-only handle wrote past the input", (long long)off, 0);
	}
}

#define REGION_CTRL_MAX 4 /* control bytes an input may start with */

/*
 * A target's whole execution, for an input of @nctrl control bytes (zeros
 * where it is shorter) followed by a region image: @run with the image
 * loaded at its own length, then, if that was refused as truncated, with
 * it zero-extended. @run gets the image, the length it is loaded at and
 * the control bytes, and returns what pk_log_attach() returned. Returns 0,
 * what LLVMFuzzerTestOneInput() returns.
 */
typedef int (*region_run_fn)(const uint8_t *data, size_t size, size_t len, const uint8_t *ctrl);

static inline int region_run_input(const uint8_t *data, size_t size, size_t nctrl,
				   region_run_fn run)
{
	uint8_t ctrl[REGION_CTRL_MAX] = { 0 };
	size_t n = size < nctrl ? size : nctrl;
	size_t len;

	if (nctrl > REGION_CTRL_MAX)
		abort();
	region_init();
	memcpy(ctrl, data, n);
	data += n;
	size -= n;
	len = region_load(data, size, 0);
	if (run(data, size, len, ctrl) == -ENOSPC && size < REGION_MAX) {
		len = region_load(data, size, 1);
		run(data, size, len, ctrl);
	}
	return 0;
}

static inline void check_attach_error(int err)
{
	switch (err) {
	case -EPROTO:
	case -EPROTONOSUPPORT:
	case -EBADMSG:
	case -ENOSPC:
		if (!pk_log_strerror(err))
			fail("no words for an error", err, 0);
		return;
	default:
		fail("unexpected error from pk_log_attach", err, 0);
	}
}

static inline void check_record(const struct pk_record *rec, uint64_t asked)
{
	if (rec->seq < asked)
		fail("record behind the seq asked for", (long long)rec->seq, (long long)asked);
	if (rec->text_len > PK_TEXT_MAX || rec->dict_len > PK_DICT_MAX)
		fail("record lengths out of range", rec->text_len, rec->dict_len);
	if (rec->text[rec->text_len] != '\0' || rec->dict[rec->dict_len] != '\0')
		fail("record not NUL-terminated", rec->text_len, rec->dict_len);
	if (rec->level > 7 || rec->state > PK_REC_UNFINALIZED)
		fail("record level or state out of range", rec->level, rec->state);
}

/*
 * Every record from @seq on, forward. Returns 1 if pk_log_read gave up
 * with -EUCLEAN (a log whose head and tail contradict each other). More
 * than READ_CAP records, or seqs that do not increase, is a reader
 * replaying for ever.
 */
static inline int read_pass(struct pk_log *log, uint64_t seq, unsigned flags, struct pk_record *rec)
{
	uint64_t prev = 0;
	unsigned n;

	for (n = 0;; n++) {
		int err = pk_log_read(log, seq, rec, flags);

		if (err == -EUCLEAN)
			return 1;
		if (err == -EAGAIN)
			return 0;
		if (err)
			fail("unexpected error from pk_log_read", err, (long long)seq);
		if (n >= READ_CAP)
			fail("pk_log_read returns records without end", n, (long long)seq);
		check_record(rec, seq);
		if (n && rec->seq <= prev)
			fail("seqs not increasing", (long long)rec->seq, (long long)prev);
		prev = rec->seq;
		if (rec->seq == UINT64_MAX)
			return 0;
		seq = rec->seq + 1;
	}
}

/*
 * Read @f, a non-blocking /dev/kmsg file, into @buf until it ends (-EAGAIN,
 * or -EIO on a log that stopped making sense): each read one record that
 * fits a kmsg line, a gap (-EPIPE) passed over, and an end within twice
 * READ_CAP reads.
 */
static inline void kmsg_read_all(struct kmsg_file *f, char *buf, size_t cap)
{
	for (unsigned n = 0;; n++) {
		ssize_t r = pk_kmsg_read(f, buf, cap);

		if (n >= 2 * READ_CAP)
			fail("kmsg_read returns records without end", n, r);
		if (r == -EAGAIN || r == -EIO)
			break;
		if (r == -EPIPE)
			continue;
		if (r <= 0 || (size_t)r > PK_MESSAGE_MAX)
			fail("unexpected result from kmsg_read", r, n);
	}
}

#endif
