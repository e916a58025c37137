// SPDX-License-Identifier: MIT
/*
 * test_torn_writeback.c - a log file as a machine crash can leave it: its
 * 4 KiB pages written back at different moments, so the file holds some
 * pages of one moment and some of a later one.
 *
 * Two snapshots of one log file are taken, the second after the ring
 * wrapped; 150 files mix their pages (a seeded choice per page). For each,
 * in a child process with a time limit:
 *   - a reader either refuses the file with a clear error or reads records
 *     that are each exactly one of the texts that were stored: never NUL
 *     bytes, never a mix, within a bounded number of reads;
 *   - a writer opens it (a file damaged past attaching is moved aside and
 *     a new log started; otherwise the first writer after the crash drops
 *     the damaged records, with a notice), stores a record and reads it
 *     back at once as the newest.
 * Nothing may hang, crash or show a record that was never written. Both
 * outcomes occur among the mixes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <printk/log.h>

#include "testutil.h"

#define LOG_LEN	  8192u
#define PAGE	  4096
#define MIXES	  150
#define FIRST	  40  /* records in the first snapshot */
#define SECOND	  200 /* records by the second: the ring has wrapped */
#define READS_MAX 10000

static struct pk_record rec;

/* The text of record @i: its number and a length that varies. */
static size_t text_of(unsigned i, char *buf, size_t size)
{
	int n = snprintf(buf, size, "record %u ", i);

	for (unsigned k = 0; k < i % 97 && (size_t)n + 1 < size; k++)
		buf[n++] = (char)('a' + (i + k) % 26);
	buf[n] = '\0';
	return (size_t)n;
}

/* Is @r exactly a text that was stored (at any number)? */
static int known_text(const struct pk_record *r)
{
	char want[256];
	unsigned i;

	if (memchr(r->text, '\0', r->text_len) || sscanf(r->text, "record %u ", &i) != 1 || i >= SECOND)
		return 0;
	size_t n = text_of(i, want, sizeof(want));

	return r->text_len == n && memcmp(r->text, want, n) == 0;
}

static char *slurp_file(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);

	char *buf = malloc((size_t)st.st_size);

	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_file(const char *path, const char *buf, size_t len)
{
	unlink(path);

	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

struct mix {
	const char *path;
	int refused, read, stored, renewed;
};

/* The reader's and the writer's checks; exit codes name what failed. */
static int check_mix(void *arg)
{
	struct mix *m = arg;
	struct pk_log *log;
	char fresh[64];

	alarm(10); /* a hang is a failure (SIGALRM) */
	int err = pk_log_open_file(&log, m->path, 0, PK_LOG_RDONLY);

	if (err == 0) {
		unsigned reads = 0;
		uint64_t seq = pk_log_first_seq(log);

		while ((err = pk_log_read(log, seq, &rec, 0)) == 0) {
			if (!known_text(&rec)) {
				dprintf(1, "reader: seq %llu holds text never stored: %.*s\n",
				       (unsigned long long)rec.seq, (int)rec.text_len, rec.text);
				return 10;
			}
			if (rec.seq < seq || ++reads > READS_MAX)
				return 11; /* going backwards, or for ever */
			seq = rec.seq + 1;
		}
		if (err != -EAGAIN && err != -EIO && err != -EUCLEAN)
			return 12;
		pk_log_destroy(log);
	} else if (err != -EBADMSG && err != -EPROTO && err != -ENOSPC && err != -EPROTONOSUPPORT) {
		dprintf(1, "reader: open: %s\n", pk_log_strerror(err));
		return 13;
	}

	err = pk_log_open_file(&log, m->path, 0, 0);
	if (err) {
		dprintf(1, "writer: open: %s\n", pk_log_strerror(err));
		return 20;
	}
	snprintf(fresh, sizeof(fresh), "after the crash");
	err = pk_log_store(log, 0, 6, fresh, strlen(fresh), NULL, 0);
	if (err == 0) {
		uint64_t next = pk_log_next_seq(log);
		int rerr = next ? pk_log_read(log, next - 1, &rec, 0) : -ENOENT;

		if (rerr || rec.seq != next - 1 || strcmp(rec.text, fresh)) {
			dprintf(1, "writer: its record is not the newest (next %llu, read %d, seq %llu: %s)\n",
				(unsigned long long)next, rerr, (unsigned long long)rec.seq,
				rerr ? "" : rec.text);
			return 21;
		}
	} else if (err != -EUCLEAN) {
		dprintf(1, "writer: store: %s\n", pk_log_strerror(err));
		return 22;
	}
	/* The writer's recovery said what it dropped. */
	for (uint64_t seq = pk_log_first_seq(log); pk_log_read(log, seq, &rec, 0) == 0; seq = rec.seq + 1)
		if (strstr(rec.text, "damaged records of this log file dropped"))
			dprintf(1, "dropped\n");
	pk_log_destroy(log);
	return 0;
}

static void test_torn_writeback(void **state)
{
	(void)state;
	const char *orig = test_dir_path("orig.log");
	const char *mixed = test_dir_path("mixed.log");
	char damaged[PATH_MAX + 16], text[256];
	struct pk_log *log;
	size_t len_a, len_b;
	unsigned refused = 0, dropped = 0;

	snprintf(damaged, sizeof(damaged), "%s.damaged", mixed);
	unlink(orig);
	assert_int_equal(pk_log_open_file(&log, orig, LOG_LEN, 0), 0);
	for (unsigned i = 0; i < FIRST; i++)
		assert_int_equal(pk_log_store(log, 0, 6, text, text_of(i, text, sizeof(text)), NULL, 0), 0);
	char *a = slurp_file(orig, &len_a);

	for (unsigned i = FIRST; i < SECOND; i++)
		assert_int_equal(pk_log_store(log, 0, 6, text, text_of(i, text, sizeof(text)), NULL, 0), 0);
	char *b = slurp_file(orig, &len_b);

	pk_log_destroy(log);
	assert_int_equal(len_a, len_b);

	char *m = malloc(len_a);
	unsigned seed = 12345;

	assert_non_null(m);
	for (unsigned k = 0; k < MIXES; k++) {
		for (size_t off = 0; off < len_a; off += PAGE) {
			seed = seed * 1103515245u + 12345u;
			size_t n = len_a - off < PAGE ? len_a - off : PAGE;

			memcpy(m + off, ((seed >> 16) & 1) ? b + off : a + off, n);
		}
		write_file(mixed, m, len_a);
		unlink(damaged);

		struct mix mx = { .path = mixed };
		struct child_result res;

		run_child(check_mix, &mx, 20000, &res);
		if (!res.exited || res.status != 0)
			fail_msg("mix %u: child %s %d: %s", k, res.exited ? "exited" : "killed by signal",
				 res.exited ? res.status : res.sig, res.out);
		refused += access(damaged, F_OK) == 0;
		dropped += res.out && strstr(res.out, "dropped\n") != NULL;
		child_result_free(&res);
	}
	print_message("%u of %d mixes were damaged past attaching: moved aside, a new log started\n",
		      refused, MIXES);
	print_message("%u of %d mixes had damaged records: dropped, with a notice\n", dropped, MIXES);
	assert_true(refused > 0 && dropped > 0);
	free(m);
	free(a);
	free(b);
}

static int setup_dir(void **state)
{
	(void)state;
	return test_dir_make("pk_test_torn");
}

static int teardown_dir(void **state)
{
	(void)state;
	return test_dir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_writeback),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
