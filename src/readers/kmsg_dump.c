// SPDX-License-Identifier: MIT
/*
 * kmsg_dump.c - crash dumpers (the Linux 5.13+ API): registration,
 * kmsg_dump(), the dump iterator, and the built-in file dumper.
 *
 * Owns: the list of registered dumpers and the file dumper's state.
 *
 * The list is singly linked through kmsg_dumper.next and is read without any
 * lock, because kmsg_dump() runs from panic() and from the fatal-signal
 * handler, possibly while the interrupted code holds whatever lock we could
 * have used. Writers (register, unregister: normal context only) serialise
 * on a mutex and publish with release stores; readers follow the links with
 * acquire loads (GNU __atomic builtins: the public struct has plain fields).
 *
 * Invariants:
 *   D1 A dumper reachable from the list head is fully initialised (its dump
 *      and max_reason were written before the release store that linked it).
 *   D2 Unlinking never changes the removed dumper's next: a walker standing
 *      on it continues into the list. Unregister then waits until no
 *      kmsg_dump() that might have seen it is running (a counter standing in
 *      for the kernel's synchronize_rcu()), unless it is called from a dump
 *      callback itself, where waiting would wait for itself.
 *
 * The iterator (rewind, get_line, get_buffer) reads the printk log. It must
 * give a crash dump the last words, so unlike the kernel's (which gets the
 * same effect from panic-time rules in its ring) it
 *   - ends at prb_next_reserve_seq(), not prb_next_seq(), and reads with
 *     PRB_READ_UNFINALIZED: the newest record is included while it is still
 *     an open line (committed, not finalized);
 *   - reads with PRB_READ_SKIP_UNFINISHED: a record whose writer stopped in
 *     the middle (the crashing thread) is skipped as lost instead of ending
 *     the dump there. The price, outside a crash: a record that another
 *     thread is writing at that very moment is left out of the dump.
 * The iterator functions, kmsg_dump() and the file dumper's dump are
 * async-signal-safe; register/unregister/create/destroy are not.
 *
 * Deliberate differences from the kernel:
 *   - get_line stops at the iterator's next_seq (the kernel reads on to the
 *     end of the ring, which never ends while other threads keep printing);
 *   - get_buffer always makes progress: when even the youngest record left
 *     does not fit, it returns as many of its lines as fit (maybe none) and
 *     moves next_seq before it; the kernel returns true with nothing and
 *     stays where it is, so "while (get_buffer(...))" would spin forever.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "base/hints.h"
#include "base/outbuf.h"
#include "base/printk_limits.h"
#include "base/safe_open.h"
#include "format/record_read.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/kmsg_format.h"
#include "record/textfmt.h"
#include "ring/caller.h"

#define ITER_READ_FLAGS (PRB_READ_UNFINALIZED | PRB_READ_SKIP_UNFINISHED)

static struct kmsg_dumper *dump_list; /* accessed with __atomic builtins */
static pthread_mutex_t dump_list_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int dumps_running;     /* D2 */
static _Thread_local PK_TLS_IE int in_dump;

/* -------------------------------------------------------- registration -- */

int pk_kmsg_dump_register(struct kmsg_dumper *dumper)
{
	int err = 0;

	if (!dumper || !dumper->dump)
		return -EINVAL;
	pthread_mutex_lock(&dump_list_lock);
	if (__atomic_load_n(&dumper->registered, __ATOMIC_RELAXED)) {
		err = -EBUSY;
	} else {
		struct kmsg_dumper **pp = &dump_list;

		while (*pp)
			pp = &(*pp)->next;
		__atomic_store_n(&dumper->next, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&dumper->registered, true, __ATOMIC_RELAXED);
		__atomic_store_n(pp, dumper, __ATOMIC_RELEASE); /* D1 */
	}
	pthread_mutex_unlock(&dump_list_lock);
	return err;
}

int pk_kmsg_dump_unregister(struct kmsg_dumper *dumper)
{
	int err = -EINVAL;

	if (!dumper)
		return -EINVAL;
	pthread_mutex_lock(&dump_list_lock);
	for (struct kmsg_dumper **pp = &dump_list; *pp; pp = &(*pp)->next) {
		if (*pp == dumper) {
			__atomic_store_n(pp, dumper->next, __ATOMIC_RELEASE); /* D2: next kept */
			__atomic_store_n(&dumper->registered, false, __ATOMIC_RELAXED);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&dump_list_lock);
	if (err == 0 && !in_dump) {
		while (atomic_load(&dumps_running) > 0) {
			struct timespec ts = { 0, 100 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return err;
}

const char *pk_kmsg_dump_reason_str(enum kmsg_dump_reason reason)
{
	switch (reason) {
	case PK_KMSG_DUMP_PANIC:
		return "Panic";
	case PK_KMSG_DUMP_OOPS:
		return "Oops";
	case PK_KMSG_DUMP_EMERG:
		return "Emergency";
	case PK_KMSG_DUMP_SHUTDOWN:
		return "Shutdown";
	default:
		return "Unknown";
	}
}

void pk_kmsg_dump(enum kmsg_dump_reason reason)
{
	atomic_fetch_add(&dumps_running, 1);
	in_dump++;
	for (struct kmsg_dumper *d = __atomic_load_n(&dump_list, __ATOMIC_ACQUIRE); d;
	     d = __atomic_load_n(&d->next, __ATOMIC_ACQUIRE)) {
		enum kmsg_dump_reason max = d->max_reason;

		/* UNDEF: up to OOPS (the kernel's default without always_kmsg_dump). */
		if (max == PK_KMSG_DUMP_UNDEF)
			max = PK_KMSG_DUMP_OOPS;
		if ((int)reason > (int)max || !__atomic_load_n(&d->registered, __ATOMIC_RELAXED))
			continue;
		d->dump(d, reason);
	}
	in_dump--;
	atomic_fetch_sub(&dumps_running, 1);
}

/* ------------------------------------------------------------ iterator -- */

static uint64_t clear_seq_of(struct pk_log *log)
{
	return pk_load_acquire(&pk_log_shared(log)->clear_seq);
}

void pk_kmsg_dump_rewind(struct kmsg_dump_iter *iter)
{
	struct pk_log *log = pk_printk_log();

	if (!iter)
		return;
	if (!log) {
		iter->cur_seq = iter->next_seq = 0;
		return;
	}

	struct prb *rb = pk_log_ring(log);
	uint64_t clear = clear_seq_of(log), first = prb_first_seq(rb);

	iter->cur_seq = clear > first ? clear : first;
	prb_lanes_merge(rb); /* lane records enter the sequence (docs/lanes.md) */
	iter->next_seq = prb_next_reserve_seq(rb); /* the open line included */
}

/*
 * The ring an iterator reads, its cur_seq first raised to clear_seq (a
 * clear since the rewind hides what it cleared); NULL without an iterator
 * or a log.
 */
static struct prb *iter_ring(struct kmsg_dump_iter *iter)
{
	struct pk_log *log = pk_printk_log();

	if (!iter || !log)
		return NULL;

	uint64_t min_seq = clear_seq_of(log);

	if (iter->cur_seq < min_seq)
		iter->cur_seq = min_seq;
	return pk_log_ring(log);
}

bool pk_kmsg_dump_get_line(struct kmsg_dump_iter *iter, bool syslog, char *line, size_t size,
			   size_t *len)
{
	struct prb *rb = iter_ring(iter);
	struct prb_record r;
	struct pk_textfmt f;
	size_t l = 0;
	bool ret = false;

	if (!rb || iter->cur_seq >= iter->next_seq ||
	    pk_rec_read(rb, iter->cur_seq, &r, ITER_READ_FLAGS) || r.seq >= iter->next_seq)
		goto out;
	pk_textfmt_current(&f, syslog);
	if (line)
		l = pk_format_record_text(line, size, &r, &f);
	else
		l = pk_format_record_text(NULL, PK_FMT_UNLIMITED, &r, &f);
	iter->cur_seq = r.seq + 1;
	ret = true;
out:
	if (len)
		*len = l;
	return ret;
}

bool pk_kmsg_dump_get_buffer(struct kmsg_dump_iter *iter, bool syslog, char *buf, size_t size,
			     size_t *len_out)
{
	struct prb *rb = iter_ring(iter);
	struct prb_record r;
	struct pk_textfmt f;
	size_t len = 0;
	bool ret = false;

	if (!rb || !buf || size == 0)
		goto out;
	/* Records gone since: start at the oldest one left. */
	if (pk_rec_read(rb, iter->cur_seq, &r, ITER_READ_FLAGS) == 0 && r.seq > iter->cur_seq)
		iter->cur_seq = r.seq;
	if (iter->cur_seq >= iter->next_seq)
		goto out;
	pk_textfmt_current(&f, syslog);

	/* The records of [cur_seq, next_seq) that fit in size - 1 bytes (the NUL). */
	uint64_t youngest = UINT64_MAX;
	uint64_t seq = pk_first_fitting_seq(rb, iter->cur_seq, iter->next_seq, size - 1,
					    PK_FMT_UNLIMITED, &f, ITER_READ_FLAGS, &r, &youngest);

	if (youngest != UINT64_MAX && seq > youngest)
		seq = youngest; /* nothing fits whole: its lines that fit, and move on */

	uint64_t start = seq;

	while (seq < iter->next_seq && pk_rec_read(rb, seq, &r, ITER_READ_FLAGS) == 0 &&
	       r.seq < iter->next_seq) {
		len += pk_format_record_text(buf + len, size - len, &r, &f);
		seq = r.seq + 1;
	}
	iter->next_seq = start; /* the next call returns the block before this one */
	ret = true;
out:
	if (len_out)
		*len_out = len;
	return ret;
}

/* ------------------------------------------------------ the file dumper -- */

/*
 * Writes the whole log (from the oldest record, whatever clear_seq says) in
 * /dev/kmsg format, the open line marked ",partial". The file is opened once,
 * at creation (0600, O_CLOEXEC, truncated), so a crash needs no path lookup
 * and survives a chdir(); each dump truncates it and writes from offset 0
 * with pwrite(), all async-signal-safe. Two threads dumping at once: the
 * second skips (busy), the file holds one consistent dump.
 */
struct file_dumper {
	struct kmsg_dumper dumper; /* first: container_of is a cast */
	int fd;
	_Atomic int busy;
};

/* The dump file, written from its start with pwrite(2). */
struct file_sink {
	int fd;
	off_t off;
};

static int file_sink_write(void *arg, const char *p, size_t n)
{
	struct file_sink *f = arg;

	while (n > 0) {
		ssize_t w = pwrite(f->fd, p, n, f->off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		f->off += w;
	}
	return 0;
}

static void file_dump(struct kmsg_dumper *dumper, enum kmsg_dump_reason reason)
{
	struct file_dumper *fdump = (struct file_dumper *)dumper;
	struct prb *rb = pk_printk_ring();
	int idle = 0;

	(void)reason;
	if (!rb || !atomic_compare_exchange_strong(&fdump->busy, &idle, 1))
		return;

	int saved_errno = errno;
	struct file_sink sink = { .fd = fdump->fd };
	struct pk_outbuf o;
	char obuf[4096];
	struct prb_record r;
	char text[PK_MESSAGE_MAX];

	if (ftruncate(fdump->fd, 0) == 0) {
		prb_lanes_merge(rb);

		uint64_t end = prb_next_reserve_seq(rb);

		pk_outbuf_init(&o, obuf, sizeof(obuf), file_sink_write, &sink);
		for (uint64_t seq = prb_first_seq(rb);
		     seq < end && pk_rec_read(rb, seq, &r, ITER_READ_FLAGS) == 0 && r.seq < end;
		     seq = r.seq + 1) {
			/* A line that never ended: still open when read, or cut by
			 * the next message (the crashing thread's last words). */
			bool partial = !(r.flags & PRB_FLAG_NEWLINE) || (r.rflags & PRB_REC_UNFINALIZED);
			size_t n = pk_kmsg_format_record(&r, text, partial);

			pk_outbuf_put(&o, text, n);
		}
		pk_outbuf_flush(&o);
	}
	errno = saved_errno;
	atomic_store(&fdump->busy, 0);
}

int pk_kmsg_dump_file_create(struct kmsg_dumper **dumperp, const char *path)
{
	if (!dumperp || !path || !*path)
		return -EINVAL;

	/* Truncated here: through a link another user planted, that would
	 * empty the file it names (pk_open_safe() refuses it: -ELOOP). */
	int fd = pk_open_safe(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600, 0);

	if (fd < 0)
		return fd;

	struct file_dumper *d = calloc(1, sizeof(*d));

	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->dumper.dump = file_dump;
	d->dumper.max_reason = PK_KMSG_DUMP_UNDEF; /* panic and crashes (up to OOPS) */
	d->fd = fd;
	*dumperp = &d->dumper;
	return 0;
}

void pk_kmsg_dump_file_destroy(struct kmsg_dumper *dumper)
{
	if (!dumper || dumper->dump != file_dump)
		return;

	struct file_dumper *d = (struct file_dumper *)dumper;

	pk_kmsg_dump_unregister(dumper); /* -EINVAL if it was not registered: fine */
	close(d->fd);
	free(d);
}
