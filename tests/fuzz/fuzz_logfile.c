// SPDX-License-Identifier: MIT
/*
 * fuzz_logfile.c - libFuzzer target: the log file reader on hostile input.
 *
 * The input is a log file image (ring header, descriptors, data, writer
 * registry). It is written to a memfd and opened by its /proc/self/fd path
 * with pk_log_open_file(PK_LOG_RDONLY), as a post-mortem reader opens a log
 * it finds on disk; if that works, every record is read with pk_log_read(),
 * once with and once without PK_READ_UNFINALIZED, from pk_log_first_seq() on,
 * and a few odd sequence numbers are read as well. pk_log_read() may give up
 * with -EUCLEAN when neither head nor tail can be trusted: the rest of that
 * input is then skipped.
 *
 * A log file is large (a 4 KiB log makes an 84 KiB file, mostly the writer
 * registry), so an input the reader refuses as truncated (-ENOSPC) is tried
 * a second time zero-extended to 1 MiB: the seeds in corpus/fuzz_logfile/
 * are log files with their trailing zeros cut, and mutations stay in the
 * bytes that matter.
 *
 * Properties (any violation aborts, which libFuzzer reports as a crash):
 * no crash, no sanitizer report, no hang (libFuzzer's -timeout), only the
 * documented error codes, and every returned record is sane: lengths within
 * the limits, NUL-terminated, seq never behind the one asked for, seqs
 * strictly increasing while reading forward.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <printk/log.h>

#include "format/deferred.h"
#include "format/record_read.h"
#include "log/log_internal.h"

#define EXTENDED_SIZE (1u << 20)
#define READ_CAP      20000 /* records per pass: far more than a 1 MiB file can hold */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];
static struct pk_record rec;
static int gave_up; /* pk_log_read said -EUCLEAN (the header contradicts itself) */

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "fuzz_logfile: %s (%lld, %lld)\n", what, a, b);
	abort();
}

static void check_open_error(int err)
{
	switch (err) {
	case -EPROTO:
	case -EPROTONOSUPPORT:
	case -EBADMSG:
	case -ENOSPC:
		return;
	default:
		fail("unexpected error from pk_log_open_file", err, 0);
	}
}

static void check_record(uint64_t asked)
{
	if (rec.seq < asked)
		fail("record behind the seq asked for", (long long)rec.seq, (long long)asked);
	if (rec.text_len > PK_TEXT_MAX || rec.dict_len > PK_DICT_MAX)
		fail("record lengths out of range", rec.text_len, rec.dict_len);
	if (rec.text[rec.text_len] != '\0' || rec.dict[rec.dict_len] != '\0')
		fail("record not NUL-terminated", rec.text_len, rec.dict_len);
	if (rec.level > 7 || rec.state > PK_REC_UNFINALIZED)
		fail("record level or state out of range", rec.level, rec.state);
}

static void read_pass(struct pk_log *log, uint64_t seq, unsigned flags)
{
	uint64_t prev = 0;
	unsigned n;

	for (n = 0; n < READ_CAP; n++) {
		int err = pk_log_read(log, seq, &rec, flags);

		if (err == -EUCLEAN)
			gave_up = 1;
		if (err == -EAGAIN || err == -EUCLEAN)
			break;
		if (err)
			fail("unexpected error from pk_log_read", err, (long long)seq);
		check_record(seq);
		if (n && rec.seq <= prev)
			fail("seqs not increasing", (long long)rec.seq, (long long)prev);
		prev = rec.seq;
		if (rec.seq == UINT64_MAX)
			break;
		seq = rec.seq + 1;
	}
}

/*
 * udmesg's fast path: pk_rec_read_text() into a buffer of exactly the size it
 * documents (ASan catches a word past it) must agree with pk_log_read() on
 * every record it accepts, with a format cache (@fc, fresh for this file)
 * or without: nobody writes the file while we read it.
 */
static void text_pass(struct pk_log *log, uint64_t first, uint64_t next, struct pk_dfmt_cache *fc)
{
	static char *dst;
	uint64_t ts;

	if (!dst && !(dst = malloc(PRB_TEXT_MAX + 8)))
		abort();
	for (uint64_t seq = first, n = 0; seq <= next && n < READ_CAP; seq++, n++) {
		int len = pk_rec_read_text(pk_log_ring(log), seq, &ts, dst, fc);

		if (len == -EAGAIN)
			continue;
		if (len < 0 || len > (int)PRB_TEXT_MAX)
			fail("pk_rec_read_text: bad result", len, (long long)seq);
		if (pk_log_read(log, seq, &rec, 0) != 0 || rec.seq != seq)
			fail("pk_rec_read_text read a record pk_log_read does not", len,
			     (long long)seq);
		if ((size_t)len != rec.text_len || memcmp(dst, rec.text, (size_t)len) != 0 ||
		    ts != rec.ts_nsec)
			fail("pk_rec_read_text and pk_log_read disagree", len, rec.text_len);
	}
}

static int try_open(void)
{
	struct pk_log *log;
	int err = pk_log_open_file(&log, memfd_path, 0, PK_LOG_RDONLY);

	if (err) {
		check_open_error(err);
		if (!pk_log_strerror(err))
			fail("no words for an error", err, 0);
		return err;
	}
	uint64_t first = pk_log_first_seq(log);
	uint64_t next = pk_log_next_seq(log);

	(void)pk_log_buf_len(log);
	gave_up = 0;
	read_pass(log, first, 0);
	if (!gave_up)
		read_pass(log, first, PK_READ_UNFINALIZED);
	if (!gave_up) {
		struct pk_dfmt_cache *fc = pk_dfmt_cache_new();

		if (!fc)
			abort();
		text_pass(log, first, next, NULL);
		text_pass(log, first, next, fc);
		text_pass(log, first, next, fc); /* every format met */
		pk_dfmt_cache_free(fc);
	}

	/* Odd places: behind the oldest, at and past the newest, the far end. */
	const uint64_t odd[] = { first - 1, next, next + 1, UINT64_MAX, 0 };

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]) && !gave_up; i++) {
		int r = pk_log_read(log, odd[i], &rec, PK_READ_UNFINALIZED);

		if (r == 0)
			check_record(odd[i]);
		else if (r == -EUCLEAN)
			gave_up = 1;
		else if (r != -EAGAIN)
			fail("unexpected error from pk_log_read", r, (long long)odd[i]);
	}
	if (pk_log_store(log, 0, 6, "x", 1, NULL, 0) != -EPERM)
		fail("a read-only handle stored a record", 0, 0);
	pk_log_destroy(log);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memfd < 0) {
		memfd = memfd_create("pk_fuzz_logfile", MFD_CLOEXEC);
		if (memfd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) < 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(memfd, data + off, size - off, (off_t)off);

		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	if (try_open() == -ENOSPC && size < EXTENDED_SIZE) {
		if (ftruncate(memfd, EXTENDED_SIZE) < 0)
			abort();
		try_open();
	}
	return 0;
}
