// SPDX-License-Identifier: MIT
/*
 * ring-demo - three threads log into one small libprintk log while a reader
 * follows it; the reader prints every record it gets and, when the writers
 * outrun it, exactly how many records it lost. Public API only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <printk/log.h>

#define RECORDS 60

static struct pk_log *demo_log;
static atomic_int writers_done;

static void *writer(void *arg)
{
	int id = (int)(long)arg;
	char text[128];

	for (int i = 0; i < RECORDS; i++) {
		int n = snprintf(text, sizeof(text), "writer %d: record %d of %d: the quick brown fox jumps over the lazy dog", id, i + 1, RECORDS);

		pk_log_store(demo_log, 0, 4 + id, text, (size_t)n, NULL, 0);
		if (id == 0) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

int main(void)
{
	static struct pk_record rec;
	pthread_t th[3];
	uint64_t next = 0, lost = 0, read = 0;
	int err = pk_log_create(&demo_log, 4096);

	if (err) {
		fprintf(stderr, "ring-demo: %s\n", pk_log_strerror(err));
		return 1;
	}
	printf("ring-demo: a %zu-byte log, 3 writers x %d records, one reader\n\n",
	       pk_log_buf_len(demo_log), RECORDS);
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, writer, (void *)i);
	for (;;) {
		err = pk_log_read(demo_log, next, &rec, 0);
		if (err == -EAGAIN) {
			if (atomic_load(&writers_done) == 3 && pk_log_next_seq(demo_log) == next)
				break;
			struct timespec ts = { 0, 5 * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (rec.seq != next) {
			printf("** %llu records lost (overwritten before we read them) **\n",
			       (unsigned long long)(rec.seq - next));
			lost += rec.seq - next;
		}
		printf("<%d>[%5llu.%06llu] seq %-4llu %s\n", rec.level,
		       (unsigned long long)(rec.ts_nsec / 1000000000),
		       (unsigned long long)(rec.ts_nsec % 1000000000 / 1000),
		       (unsigned long long)rec.seq, rec.text);
		next = rec.seq + 1;
		read++;
		struct timespec ts = { 0, 1000 * 1000 };

		nanosleep(&ts, NULL); /* a slow reader: the writers will overrun it */
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("\nread %llu, lost %llu, total %llu = next seq %llu\n", (unsigned long long)read,
	       (unsigned long long)lost, (unsigned long long)(read + lost),
	       (unsigned long long)pk_log_next_seq(demo_log));
	pk_log_destroy(demo_log);
	return read + lost == 3 * RECORDS ? 0 : 1;
}
