// SPDX-License-Identifier: MIT
/*
 * test_log_image.c - logs read from a memory image (src/log/log.c:
 * pk_log_image_probe, pk_log_open_image), as udmesg --core reads a dead
 * process's log out of its core: found by its header, validated, read-only
 * (the copy is mapped without write permission: a write would crash the
 * test), post-mortem (a record a thread was still writing is lost, the rest
 * reads), and printk's log tells itself from others.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "log/log_shared.h"
#include "readers/reader.h"
#include "testutil.h"

static struct pk_record rec, img_rec;

/* A read-only copy of @log's region at @offset bytes into fresh memory. */
static unsigned char *copy_of(struct pk_log *log, size_t offset, size_t *len)
{
	struct prb *rb = pk_log_ring(log);
	size_t n = rb->region_size;
	unsigned char *p =
		mmap(NULL, n + offset, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memcpy(p + offset, rb->hdr, n);
	*len = n;
	return p;
}

static void seal(unsigned char *p, size_t len)
{
	assert_int_equal(mprotect(p, len, PROT_READ), 0);
}

static void test_printk_log_image(void **state)
{
	(void)state;
	struct pk_log *log = pk_printk_log();
	struct pk_log_image_info info;
	struct pk_log *img;
	size_t len;

	printk(KERN_ERR "image: first line\n");
	printk(KERN_WARNING "image: second line\n");
	printk(KERN_INFO "image: the open line");

	unsigned char *copy = copy_of(log, 0, &len);

	seal(copy, len);
	memset(&info, 0xff, sizeof(info));
	assert_int_equal(pk_log_image_probe(copy, len, &info), 0);
	assert_int_equal(info.region_len, len);
	assert_false(info.file);
	assert_true(info.printk); /* the default log says it is printk's */

	assert_int_equal(pk_log_open_image(&img, copy, len, 4321, "dumped-prog"), 0);
	assert_int_equal(pk_log_writers_alive(img), 0);
	assert_int_equal(pk_log_first_seq(img), pk_log_first_seq(log));

	/* Every record as the live log has it; the open line, open, last. */
	uint64_t seq = pk_log_first_seq(log), n = 0;

	while (pk_log_read(img, seq, &img_rec, PK_READ_UNFINALIZED) == 0) {
		assert_int_equal(pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED), 0);
		assert_int_equal(img_rec.seq, rec.seq);
		assert_int_equal(img_rec.ts_nsec, rec.ts_nsec);
		assert_int_equal(img_rec.level, rec.level);
		assert_int_equal(img_rec.state, rec.state);
		assert_int_equal(img_rec.text_len, rec.text_len);
		assert_memory_equal(img_rec.text, rec.text, rec.text_len);
		seq = img_rec.seq + 1;
		n++;
	}
	assert_true(n >= 3);
	assert_int_equal(img_rec.state, PK_REC_UNFINALIZED);
	assert_string_equal(img_rec.text, "image: the open line");
	/* Without the flag, the open line is not handed out. */
	assert_int_equal(pk_log_read(img, img_rec.seq, &rec, 0), -EAGAIN);

	/* The core's process names its records; no other pid is known. */
	char name[16];

	assert_int_equal(pk_log_writer_name(img, 4321, name, sizeof(name)), 0);
	assert_string_equal(name, "dumped-prog");
	assert_int_equal(pk_log_writer_name(img, (uint32_t)getpid(), name, sizeof(name)), -ENOENT);
	/* Nothing is ever written (the copy is read-only: a write would fault). */
	assert_int_equal(pk_log_store(img, 0, 6, "no", 2, NULL, 0), -EPERM);
	pk_log_destroy(img);
	munmap(copy, len);

	printk(KERN_CONT "\n");
}

static void test_other_log_and_alignment(void **state)
{
	(void)state;
	struct pk_log_image_info info;
	struct pk_log *log, *img;
	size_t len;

	assert_int_equal(pk_log_create(&log, 16384), 0);
	assert_int_equal(pk_log_store(log, 1, 5, "a program's own log", 19, NULL, 0), 0);

	/* Probed at any alignment; opened only at 64 bytes. */
	unsigned char *copy = copy_of(log, 8, &len);

	seal(copy, len + 8);
	assert_int_equal(pk_log_image_probe(copy + 8, len, &info), 0);
	assert_false(info.printk); /* not printk's */
	assert_int_equal(pk_log_open_image(&img, copy + 8, len, 0, NULL), -EINVAL);
	munmap(copy, len + 8);

	copy = copy_of(log, 0, &len);
	seal(copy, len);
	assert_int_equal(pk_log_open_image(&img, copy, len - 1, 0, NULL), -ENOSPC);
	assert_int_equal(pk_log_open_image(&img, copy, len, 0, NULL), 0);
	assert_int_equal(pk_log_read(img, 0, &rec, PK_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "a program's own log");
	assert_int_equal(rec.state, PK_REC_FINAL);
	char name[16];

	assert_int_equal(pk_log_writer_name(img, 0, name, sizeof(name)), -ENOENT);
	pk_log_destroy(img);
	munmap(copy, len);
	pk_log_destroy(log);
}

static void test_probe_errors(void **state)
{
	(void)state;
	struct pk_log_image_info info;
	struct pk_log *log;
	size_t len;

	static const unsigned char zeros[4096];

	assert_int_equal(pk_log_image_probe(zeros, sizeof(zeros), &info), -EPROTO);
	assert_int_equal(pk_log_image_probe(zeros, 0, &info), -EPROTO);
	assert_int_equal(pk_log_image_probe(NULL, 4096, &info), -EINVAL);
	assert_int_equal(pk_log_image_probe(zeros, 4096, NULL), -EINVAL);

	assert_int_equal(pk_log_create(&log, 16384), 0);

	unsigned char *copy = copy_of(log, 0, &len);

	/* The magic alone, or a header cut off: not enough to read it. */
	assert_int_equal(pk_log_image_probe(copy, 8, &info), -ENOSPC);
	assert_int_equal(pk_log_image_probe(copy, 200, &info), -ENOSPC);
	assert_int_equal(info.region_len, 0); /* not even the geometry */
	assert_int_equal(pk_log_image_probe(copy, 1024, &info), -ENOSPC);
	assert_int_equal(info.region_len, len); /* what the header claims */
	/* A region longer than what is there: the probe says how long. */
	assert_int_equal(pk_log_image_probe(copy, 4096, &info), 0);
	assert_int_equal(info.region_len, len);
	/* Another ABI version, a bent geometry, no log state. */
	copy[8] ^= 0x40;
	assert_int_equal(pk_log_image_probe(copy, len, &info), -EPROTONOSUPPORT);
	copy[8] ^= 0x40;
	copy[24] = 7; /* data bits */
	assert_int_equal(pk_log_image_probe(copy, len, &info), -EBADMSG);
	munmap(copy, len);
	copy = copy_of(log, 0, &len);
	copy[2048] ^= 1; /* the log state's magic */
	assert_int_equal(pk_log_image_probe(copy, len, &info), -EBADMSG);
	struct pk_log *img;

	assert_int_equal(pk_log_open_image(&img, copy, len, 0, NULL), -EBADMSG);
	munmap(copy, len);
	pk_log_destroy(log);
}

/* A thread that dies inside its record: it stops at the claim. */
static sem_t in_record, may_go;
static _Atomic(pthread_t *) stuck_thread;

static void stop_in_record(enum prb_testpoint tp)
{
	pthread_t *t = atomic_load(&stuck_thread);

	if (tp == PRB_TP_CLAIMED && t && pthread_equal(*t, pthread_self())) {
		sem_post(&in_record);
		sem_wait(&may_go);
	}
}

static void *store_stuck(void *arg)
{
	pk_log_store(arg, 0, 3, "never finished", 14, NULL, 0);
	return NULL;
}

static void test_unfinished_record_passed_over(void **state)
{
	(void)state;
	struct pk_log *log, *img;
	pthread_t t;
	size_t len;

	assert_int_equal(pk_log_create(&log, 16384), 0);
	assert_int_equal(pk_log_store(log, 0, 6, "before", 6, NULL, 0), 0);
	sem_init(&in_record, 0, 0);
	sem_init(&may_go, 0, 0);
	prb_set_testpoint_hook(stop_in_record);
	atomic_store(&stuck_thread, &t);
	assert_int_equal(pthread_create(&t, NULL, store_stuck, log), 0);
	sem_wait(&in_record);
	assert_int_equal(pk_log_store(log, 0, 6, "after one", 9, NULL, 0), 0);
	assert_int_equal(pk_log_store(log, 0, 6, "after two", 9, NULL, 0), 0);

	/* The process "dies" here: its memory as a core holds it. */
	unsigned char *copy = copy_of(log, 0, &len);

	sem_post(&may_go);
	pthread_join(t, NULL);
	atomic_store(&stuck_thread, NULL);
	prb_set_testpoint_hook(NULL);
	seal(copy, len);

	assert_int_equal(pk_log_open_image(&img, copy, len, 0, NULL), 0);
	assert_int_equal(pk_log_read(img, 0, &rec, PK_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "before");
	/* The record its writer never finished is lost (seq 1); the rest reads. */
	assert_int_equal(pk_log_read(img, 1, &rec, PK_READ_UNFINALIZED), 0);
	assert_int_equal(rec.seq, 2);
	assert_string_equal(rec.text, "after one");
	assert_int_equal(pk_log_read(img, 3, &rec, PK_READ_UNFINALIZED), 0);
	assert_string_equal(rec.text, "after two");
	assert_int_equal(rec.state, PK_REC_FINAL);
	assert_int_equal(pk_log_read(img, 4, &rec, PK_READ_UNFINALIZED), -EAGAIN);
	pk_log_destroy(img);
	munmap(copy, len);
	pk_log_destroy(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printk_log_image),
		cmocka_unit_test(test_other_log_and_alignment),
		cmocka_unit_test(test_probe_errors),
		cmocka_unit_test(test_unfinished_record_passed_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
