// SPDX-License-Identifier: MIT
/*
 * fuzz_writer.c - libFuzzer target: writing to a log on hostile memory.
 *
 * Input: three control bytes, then a log region image (see fuzz_region.h
 * for how it is loaded). The region is attached read-write with
 * pk_log_attach(); the control bytes decide how many records to store with
 * pk_log_store() (up to 31, text lengths up to past PK_TEXT_MAX, with and
 * without dictionaries, valid and invalid levels). After each store that
 * succeeds the newest record is read back; then every record is read
 * forward, a /dev/kmsg file on the log writes and reads, and the syslog
 * actions that read all, clear and count run.
 *
 * Properties (a violation aborts: libFuzzer reports a crash): no crash, no
 * sanitizer report, no hang (-timeout): a writer on a corrupted log gives up
 * with an error instead of spinning; only the documented error codes; a
 * record that was stored and is read back at its seq has the text, level
 * and facility it was stored with; records read forward are sane, in
 * increasing seq order, and finite in number.
 */
#include <fcntl.h>

#include <printk/kmsg.h>
#include <printk/syslog.h>

#include "fuzz_region.h"
#include "log/log_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CTRL 3

static struct pk_record rec;
static char text[PK_TEXT_MAX + 100];
static char line[PK_MESSAGE_MAX + 64];
static char sysbuf[16 * 1024];
static const char dict[] = "SUBSYSTEM=fuzz\0DEVICE=+fuzz:w";

static void store_one(struct pk_log *log, unsigned i, const uint8_t *ctrl)
{
	size_t len = ((size_t)ctrl[1] * (i + 1) * 37u + i) % (PK_TEXT_MAX + 40);
	int level = (int)((ctrl[2] + i) % 9); /* 8: invalid */
	int facility = (ctrl[2] >> 4) + (int)i % 3;
	size_t dict_len = (i % 3 == 0) ? sizeof(dict) - 1 : 0;

	memset(text, 'a' + (int)(i % 26), len);
	if (len > 4)
		memcpy(text, "rec:", 4);

	int err = pk_log_store(log, facility, level, text, len, dict_len ? dict : NULL, dict_len);

	switch (err) {
	case 0:
		break;
	case -E2BIG:
	case -EINVAL:
	case -ENOBUFS:
	case -EUCLEAN:
		return;
	default:
		fail("unexpected error from pk_log_store", err, (long long)len);
	}
	if (len > PK_TEXT_MAX || level > 7)
		fail("pk_log_store accepted what it must refuse", (long long)len, level);

	/* Not pk_log_next_seq() - 1: a record a dead writer left behind holds
	 * that back. Nobody else writes: the newest reservation is ours. */
	uint64_t seq = prb_next_reserve_seq(pk_log_ring(log)) - 1;

	err = pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED);
	if (err == 0 && rec.seq == seq &&
	    (rec.text_len != len || memcmp(rec.text, text, len) != 0 || rec.level != level ||
	     rec.facility != facility || rec.dict_len != dict_len))
		fail("a stored record reads back different", rec.text_len, (long long)len);
}

static void kmsg_pass(struct pk_log *log)
{
	struct kmsg_file *f;
	int err = pk_kmsg_open_log(&f, log, O_RDWR | O_NONBLOCK);

	if (err)
		fail("pk_kmsg_open_log", err, 0);
	ssize_t w = pk_kmsg_write(f, "<5>kmsg write\n", 14);

	if (w != 14 && w != -ENOBUFS && w != -EIO)
		fail("kmsg_write", w, 0);
	kmsg_read_all(f, line, sizeof(line));
	pk_kmsg_close(f);
}

static void syslog_pass(struct pk_log *log)
{
	int unread = pk_do_syslog_log(log, PK_SYSLOG_ACTION_SIZE_UNREAD, NULL, 0);

	if (unread < 0)
		fail("syslog SIZE_UNREAD", unread, 0);
	/*
	 * Not READ: it waits for a record past syslog_seq, and behind a record
	 * a dead writer left unfinished it can wait for ever even when
	 * SIZE_UNREAD is not 0.
	 */
	int r = pk_do_syslog_log(log, PK_SYSLOG_ACTION_READ_CLEAR, sysbuf, sizeof(sysbuf));

	if (r > (int)sizeof(sysbuf) || (r < 0 && r != -EIO))
		fail("syslog READ_CLEAR", r, 0);
	if (pk_do_syslog_log(log, PK_SYSLOG_ACTION_CLEAR, NULL, 0) != 0)
		fail("syslog CLEAR", 0, 0);
	r = pk_do_syslog_log(log, PK_SYSLOG_ACTION_READ_ALL, sysbuf, sizeof(sysbuf));
	if (r > (int)sizeof(sysbuf) || (r < 0 && r != -EIO))
		fail("syslog READ_ALL", r, 0);
}

static int try_attach(const uint8_t *data, size_t size, size_t len, const uint8_t *ctrl)
{
	struct pk_log *log;
	int err = pk_log_attach(&log, region, len, 0);

	(void)data; /* a writer changes the region: nothing to compare it with */
	(void)size;
	if (err) {
		check_attach_error(err);
		return err;
	}
	unsigned nstore = ctrl[0] & 31;

	for (unsigned i = 0; i < nstore; i++)
		store_one(log, i, ctrl);
	if (!read_pass(log, pk_log_first_seq(log), PK_READ_UNFINALIZED, &rec)) {
		kmsg_pass(log);
		syslog_pass(log);
	}
	pk_log_destroy(log);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return region_run_input(data, size, CTRL, try_attach);
}
