// SPDX-License-Identifier: MIT
/*
 * fuzz_reader.c - libFuzzer target: every reader of a log on hostile memory.
 *
 * The input is a log region image (ring header, descriptors, text data; see
 * fuzz_region.h for how it is loaded). It is attached read-only with
 * pk_log_attach(PK_LOG_RDONLY) and read by:
 *   - pk_log_read, every record from the oldest, with and without
 *     PK_READ_UNFINALIZED, and a few odd sequence numbers;
 *   - pk_rec_read_text (udmesg's fast path), which must agree with pk_log_read;
 *   - a /dev/kmsg file on the log (pk_kmsg_open_log, O_NONBLOCK): every
 *     record, seeks, poll events;
 *   - the syslog actions on the log that read (pk_do_syslog_log).
 *
 * Properties (a violation aborts: libFuzzer reports a crash): no crash, no
 * sanitizer report, no byte of the region changed, no hang (-timeout), only the
 * documented error codes, records sane and in increasing seq order, and
 * bounded work: a reader returning more records than the region can hold
 * is replaying for ever.
 */
#include <fcntl.h>
#include <poll.h>

#include <printk/kmsg.h>
#include <printk/syslog.h>

#include "format/deferred.h"
#include "format/record_read.h"
#include "fuzz_region.h"
#include "log/log_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pk_record rec;
static char line[PK_MESSAGE_MAX + 64];
static char text[PRB_TEXT_MAX + 8];
static char sysbuf[64 * 1024];

/* pk_rec_read_text into a buffer of exactly its documented size agrees with
 * pk_log_read, with a format cache (@fc, fresh for this file) or without. */
static int text_pass(struct pk_log *log, uint64_t first, uint64_t next, struct pk_dfmt_cache *fc)
{
	uint64_t ts, n = 0;

	for (uint64_t seq = first; seq <= next && n < READ_CAP; seq++, n++) {
		int len = pk_rec_read_text(pk_log_ring(log), seq, &ts, text, fc);

		if (len == -EAGAIN)
			continue;
		if (len < 0 || len > (int)PRB_TEXT_MAX)
			fail("pk_rec_read_text: bad result", len, (long long)seq);
		int err = pk_log_read(log, seq, &rec, 0);

		if (err == -EUCLEAN)
			return 1;
		if (err != 0 || rec.seq != seq)
			fail("pk_rec_read_text read a record pk_log_read does not", err, (long long)seq);
		if ((size_t)len != rec.text_len || memcmp(text, rec.text, (size_t)len) != 0 ||
		    ts != rec.ts_nsec)
			fail("pk_rec_read_text and pk_log_read disagree", len, rec.text_len);
	}
	return 0;
}

static uint64_t kmsg_seq(const char *buf, ssize_t len)
{
	const char *comma = memchr(buf, ',', (size_t)len);

	/* a record longer than the line is cut there, without its newline */
	if (!comma || (len < PK_MESSAGE_MAX && buf[len - 1] != '\n'))
		fail("kmsg record without a header or newline", len, 0);
	return strtoull(comma + 1, NULL, 10);
}

static void kmsg_pass(struct pk_log *log)
{
	struct kmsg_file *f;
	int err = pk_kmsg_open_log(&f, log, O_RDONLY | O_NONBLOCK);
	uint64_t prev = 0;
	unsigned n, records = 0, pipes = 0;

	if (err)
		fail("pk_kmsg_open_log", err, 0);
	(void)pk_kmsg_poll_events(f);
	for (n = 0;; n++) {
		ssize_t r = pk_kmsg_read(f, line, sizeof(line));

		if (n >= 2 * READ_CAP)
			fail("kmsg_read returns records without end", n, r);
		if (r == -EAGAIN || r == -EIO)
			break;
		if (r == -EPIPE) {
			/* once per gap: two in a row would be a reader that never moves */
			if (++pipes > 1)
				fail("kmsg_read: -EPIPE twice in a row", n, 0);
			continue;
		}
		if (r <= 0 || (size_t)r > PK_MESSAGE_MAX)
			fail("unexpected result from kmsg_read", r, n);
		pipes = 0;

		uint64_t seq = kmsg_seq(line, r);

		if (records++ && seq <= prev)
			fail("kmsg seqs not increasing", (long long)seq, (long long)prev);
		prev = seq;
	}
	(void)pk_kmsg_poll_events(f);
	if (pk_kmsg_llseek(f, 0, SEEK_DATA) < 0 || pk_kmsg_llseek(f, 0, SEEK_END) < 0 ||
	    pk_kmsg_llseek(f, 0, SEEK_SET) < 0)
		fail("kmsg_llseek failed", 0, 0);
	/* one record after the seek back, with a buffer too small for most */
	ssize_t r = pk_kmsg_read(f, line, 40);

	if (r > 40)
		fail("kmsg_read wrote past its buffer", r, 40);
	if (pk_kmsg_write(f, "x", 1) != -EBADF)
		fail("kmsg_write on a read-only file", 0, 0);
	pk_kmsg_close(f);
}

static void syslog_pass(struct pk_log *log)
{
	static const int sizes[] = { sizeof(sysbuf), 100 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int r = pk_do_syslog_log(log, PK_SYSLOG_ACTION_READ_ALL, sysbuf, sizes[i]);

		if (r > sizes[i] || (r < 0 && r != -EIO))
			fail("syslog READ_ALL: bad result", r, sizes[i]);
	}
	int unread = pk_do_syslog_log(log, PK_SYSLOG_ACTION_SIZE_UNREAD, NULL, 0);
	int buflen = pk_do_syslog_log(log, PK_SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);

	if (unread < 0 || buflen != (int)pk_log_buf_len(log))
		fail("syslog sizes", unread, buflen);
	/* the consuming actions need a writable log */
	if (pk_do_syslog_log(log, PK_SYSLOG_ACTION_READ_CLEAR, sysbuf, 100) != -EPERM ||
	    pk_do_syslog_log(log, PK_SYSLOG_ACTION_CLEAR, NULL, 0) != -EPERM)
		fail("syslog changed a read-only log", 0, 0);
}

static int try_attach(size_t len)
{
	struct pk_log *log;
	int err = pk_log_attach(&log, region, len, PK_LOG_RDONLY);

	if (err) {
		check_attach_error(err);
		return err;
	}
	uint64_t first = pk_log_first_seq(log);
	uint64_t next = pk_log_next_seq(log);
	int gave_up;

	gave_up = read_pass(log, first, 0, &rec);
	if (!gave_up)
		gave_up = read_pass(log, first, PK_READ_UNFINALIZED, &rec);
	if (!gave_up)
		gave_up = text_pass(log, first, next, NULL);
	if (!gave_up) {
		struct pk_dfmt_cache *fc = pk_dfmt_cache_new();

		if (!fc)
			abort();
		gave_up = text_pass(log, first, next, fc);
		if (!gave_up)
			gave_up = text_pass(log, first, next, fc); /* every format met */
		pk_dfmt_cache_free(fc);
	}

	/* Odd places: behind the oldest, at and past the newest, the far end. */
	const uint64_t odd[] = { first - 1, next, next + 1, UINT64_MAX, 0 };

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]) && !gave_up; i++) {
		int r = pk_log_read(log, odd[i], &rec, PK_READ_UNFINALIZED);

		if (r == 0)
			check_record(&rec, odd[i]);
		else if (r == -EUCLEAN)
			gave_up = 1;
		else if (r != -EAGAIN)
			fail("unexpected error from pk_log_read", r, (long long)odd[i]);
	}
	if (!gave_up) {
		kmsg_pass(log);
		syslog_pass(log);
	}
	if (pk_log_store(log, 0, 6, "x", 1, NULL, 0) != -EPERM)
		fail("a read-only handle stored a record", 0, 0);
	pk_log_destroy(log);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;
	int err;

	region_init();
	len = region_load(data, size, 0);
	err = try_attach(len);
	region_check_unchanged(data, size, len);
	if (err == -ENOSPC && size < REGION_MAX) {
		len = region_load(data, size, 1);
		try_attach(len);
		region_check_unchanged(data, size, len);
	}
	return 0;
}
