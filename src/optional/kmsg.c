// SPDX-License-Identifier: MIT
/*
 * kmsg.c - /dev/kmsg as a library object (<printk/kmsg.h>): Linux 6.x's
 * devkmsg_open/read/write/llseek/poll/release on a pk_log.
 *
 * Owns: the open files (struct kmsg_file), the printk.devkmsg mode, and the
 * poll doorbell table through which writers make the files' poll descriptors
 * readable.
 *
 * Invariants:
 *  - A file's position (seq) is the next record it returns. It starts at the
 *    oldest readable record; only read and llseek move it; read moves it past
 *    a record before checking the caller's buffer, so a too small buffer
 *    loses that record for this file (-EINVAL, as Linux 6.18 does;
 *    docs/kernel-compat.md, section 7.1).
 *  - read returns finalized records only, one per call, formatted exactly as
 *    the kernel formats them into its 2048-byte buffer (cut there, possibly
 *    inside an escape and without the final newline; section 6.4).
 *  - A write stores at most one record, through the printk store path when
 *    the file is on the default log (so consoles print it) and straight into
 *    the ring otherwise, with the same rules: text up to the first NUL and
 *    1023 bytes, a trailing newline ends the record, no newline leaves it
 *    open (invisible to readers until the next record; section 4.4),
 *    facility >= 1.
 *  - Poll descriptors: while a file has one, it sits in the doorbell table
 *    and counts as a poller of its ring; writers ring the doorbell only
 *    while the ring has pollers. The descriptor (an eventfd) is readable
 *    whenever a record is available at the file's position: writers
 *    increment it when a new record is readable past the position; the file
 *    drains it when it finds nothing to read and then looks once more, so no
 *    wake-up is lost. A writer racing with a read or seek may leave it
 *    readable with nothing new (it judged by the old position); the next
 *    read then says -EAGAIN and drains it, as event loops expect.
 *    Writers ring through the ring handle they write with (prb doorbell),
 *    so only writes through the file's own pk_log handle, in this process,
 *    wake poll descriptors; blocking reads (futex) see every writer.
 *  - The doorbell runs in writers, possibly in signal handlers: it only
 *    loads atomics, reads the ring (lock-free) and calls write(2). A table
 *    slot's descriptor is closed only when no doorbell holds the slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <printk/kern_levels.h>
#include <printk/kmsg.h>
#include <printk/printk.h>
#include <printk/ratelimit.h>

#include "base/hints.h"
#include "base/printk_limits.h"
#include "format/record_read.h"
#include "format/vsprintf.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "readers/reader.h"
#include "record/kmsg_format.h"
#include "ring/caller.h"
#include "ring/store.h"
#include "startup/setup_hooks.h"

#define KMSG_OUT_MAX	    PK_MESSAGE_MAX
#define KMSG_COMM_LEN	    16			/* TASK_COMM_LEN, NUL included */
#define KMSG_DEFAULT_LEVEL  4 /* CONFIG_MESSAGE_LOGLEVEL_DEFAULT, see default_level() */
/* A blocked read sleeps in slices this long and looks again, so a wake-up
 * lost between processes costs at most one slice. */
#define KMSG_WAIT_SLICE_NS  (5 * 1000000000ll)

/* poll(2) bits, spelled out so <poll.h>'s names do not leak into the API. */
#define KMSG_POLLIN	0x001
#define KMSG_POLLPRI	0x002
#define KMSG_POLLERR	0x008
#define KMSG_POLLNVAL	0x020
#define KMSG_POLLRDNORM 0x040

enum devkmsg_mode { DEVKMSG_ON, DEVKMSG_OFF, DEVKMSG_RATELIMIT };

/* Our default is "on": the kernel's "ratelimit" drops writes while reporting
 * success, which a program logging through us would not expect. */
static _Atomic int devkmsg_mode = DEVKMSG_ON;

struct kmsg_file {
	struct pk_log *log;
	struct prb *rb;
	int flags;	  /* O_ACCMODE bits and O_NONBLOCK */
	bool via_printk;  /* the default log: store through printk, consoles print */
	pk_a64 seq;	  /* the next record to return */
	_Atomic int bell_fd; /* the poll descriptor, -1 until asked for */
	int bell_slot;
	pthread_mutex_t read_lock; /* one reader at a time (the kernel's user->lock) */
	/* devkmsg_open's: DEFAULT_RATELIMIT_INTERVAL and _BURST, with
	 * RATELIMIT_MSG_ON_RELEASE, so misses add up until the close reports them. */
	struct ratelimit_state rs;
	bool owns_log;	  /* opened by pk_kmsg_open_file: closed with the file */
	bool postmortem;  /* every writer was gone at open: show the open line too */
	struct prb_record rec; /* read_lock's scratch */
	char out[KMSG_OUT_MAX];
};

/* ------------------------------------------------------------ doorbell -- */

/*
 * The doorbell table. A slot is free when rb is NULL and word is 0. word
 * packs the descriptor (high 32 bits), BELL_ACTIVE and the number of
 * doorbells inside the slot (low bits): a doorbell announces itself with one
 * fetch_add and touches the descriptor only if the slot was active then, and
 * close waits for the count to drop before it closes the descriptor, so a
 * writer can never write to a descriptor number that was reused. Statically
 * allocated: a doorbell may look at a slot at any time, so slots are never
 * freed.
 */
#define BELL_SLOTS  256
#define BELL_ACTIVE (UINT64_C(1) << 31)
#define BELL_USERS  (BELL_ACTIVE - 1)

struct bell_slot {
	_Atomic(struct prb *) rb;
	pk_a64 word;
	_Atomic(struct kmsg_file *) file;
};

static struct bell_slot bells[BELL_SLOTS];
static _Atomic unsigned bells_used;	/* slots at or above this were never used */
static pthread_mutex_t bells_lock = PTHREAD_MUTEX_INITIALIZER; /* registration only */

static void bell_ring_fd(int fd)
{
	uint64_t one = 1;
	/* EAGAIN: the counter is saturated, the descriptor readable anyway. */
	ssize_t r = write(fd, &one, sizeof(one));

	(void)r;
}

static void bell_drain_fd(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	(void)r;
}

/* Called by writers (prb's doorbell) after a record became readable, while
 * the ring has pollers. Async-signal-safe. */
static void kmsg_doorbell(struct prb *rb)
{
	unsigned n = atomic_load_explicit(&bells_used, memory_order_acquire);
	uint64_t next = 0;
	bool have_next = false;
	int saved = errno;

	for (unsigned i = 0; i < n; i++) {
		struct bell_slot *s = &bells[i];

		if (atomic_load_explicit(&s->rb, memory_order_relaxed) != rb)
			continue;

		uint64_t w = atomic_fetch_add_explicit(&s->word, 1, memory_order_acq_rel);

		if ((w & BELL_ACTIVE) && atomic_load_explicit(&s->rb, memory_order_acquire) == rb) {
			struct kmsg_file *f = atomic_load_explicit(&s->file, memory_order_acquire);

			if (!have_next) {
				next = prb_next_seq(rb);
				have_next = true;
			}
			/* Only a record at or past the file's position makes it readable;
			 * an open (unfinalized) record is not counted by prb_next_seq. */
			if (next > pk_load_acquire(&f->seq))
				bell_ring_fd((int)(w >> 32));
		}
		atomic_fetch_sub_explicit(&s->word, 1, memory_order_release);
	}
	errno = saved;
}

/* Called with bells_lock held. */
static int bell_register(struct kmsg_file *f, int fd)
{
	int slot = -1;

	for (int i = 0; i < BELL_SLOTS && slot < 0; i++) {
		struct bell_slot *s = &bells[i];
		uint64_t expect = 0;

		if (atomic_load_explicit(&s->rb, memory_order_relaxed) != NULL)
			continue;
		uint64_t active = (uint64_t)(uint32_t)fd << 32 | BELL_ACTIVE;

		/* Publish the file before the slot turns active (the CAS releases it). */
		atomic_store_explicit(&s->file, f, memory_order_relaxed);
		if (atomic_compare_exchange_strong_explicit(&s->word, &expect, active,
							    memory_order_acq_rel,
							    memory_order_relaxed))
			slot = i;
		/* else a stale doorbell is passing through this free slot: skip it */
	}
	if (slot < 0)
		return -EMFILE; /* too many poll descriptors */
	atomic_store_explicit(&bells[slot].rb, f->rb, memory_order_release);
	if (atomic_load(&bells_used) < (unsigned)slot + 1)
		atomic_store_explicit(&bells_used, (unsigned)slot + 1, memory_order_release);
	/* Idempotent; under the lock because the handle's arg field is plain. */
	prb_set_doorbell(f->rb, kmsg_doorbell, NULL);
	/* The slot is visible before the count rises: a writer that sees the
	 * count (seq_cst) also sees the slot. prb_pollers_add fences, so the
	 * caller's following look at the ring pairs with the writers' (P5). */
	prb_pollers_add(f->rb, 1);
	f->bell_slot = slot;
	return 0;
}

static void bell_unregister(struct kmsg_file *f)
{
	struct bell_slot *s = &bells[f->bell_slot];

	pthread_mutex_lock(&bells_lock);
	atomic_store_explicit(&s->rb, NULL, memory_order_release);
	atomic_fetch_and_explicit(&s->word, ~BELL_ACTIVE, memory_order_acq_rel);
	prb_pollers_add(f->rb, -1);
	/* Wait until no doorbell is inside the slot, then free it. A doorbell
	 * arriving now sees it inactive and leaves at once. */
	for (;;) {
		uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);

		if ((w & BELL_USERS) == 0 &&
		    atomic_compare_exchange_weak_explicit(&s->word, &w, 0, memory_order_acq_rel,
							  memory_order_relaxed))
			break;
		sched_yield();
	}
	atomic_store_explicit(&s->file, NULL, memory_order_relaxed);
	pthread_mutex_unlock(&bells_lock);
}

/* ------------------------------------------------------------- reading -- */

/* True if a read at the position would return something (a record, or
 * -EPIPE). @r is scratch. */
static bool record_ready(struct kmsg_file *f, struct prb_record *r)
{
	uint64_t seq = pk_load_acquire(&f->seq);

	/* Cheap test first: nothing finalized at or past the position. */
	if (prb_next_seq(f->rb) <= seq)
		return false;
	return pk_rec_read(f->rb, seq, r, 0) == 0;
}

enum bell_sync_mode {
	SYNC_AFTER_READ,  /* a record was read: the cheap test decides "still ready" */
	SYNC_AFTER_EMPTY, /* nothing to read: drain unless the exact test says ready */
	SYNC_RING,	  /* the position moved, or the descriptor is new: ring if ready */
};

/*
 * Make the poll descriptor match the position: drained when nothing is
 * available (then look again, for a record that came before the drain), rung
 * for SYNC_RING when something is (no writer rang for records that were
 * already there). Otherwise a readable descriptor stays so: writers rang it
 * for the records still pending.
 *
 * After a read, prb_next_seq beyond the position is taken as "ready" without
 * copying the record; it is wrong only for holes a dead writer left at the
 * end, and then the next read says -EAGAIN, whose exact test drains.
 */
static void bell_sync(struct kmsg_file *f, struct prb_record *r, enum bell_sync_mode mode)
{
	int fd = atomic_load_explicit(&f->bell_fd, memory_order_acquire);

	if (fd < 0)
		return;
	if (mode == SYNC_AFTER_READ ? prb_next_seq(f->rb) > pk_load_acquire(&f->seq)
				    : record_ready(f, r)) {
		if (mode == SYNC_RING)
			bell_ring_fd(fd);
		return;
	}
	bell_drain_fd(fd);
	if (record_ready(f, r))
		bell_ring_fd(fd);
}

ssize_t pk_kmsg_read(struct kmsg_file *f, char *buf, size_t len)
{
	ssize_t ret;

	if (!f)
		return -EBADF;
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF; /* the VFS refuses read on a write-only file */

	pthread_mutex_lock(&f->read_lock);

	uint64_t seq;

	unsigned rflags = f->postmortem ? PRB_READ_UNFINALIZED : 0;

	for (;;) {
		seq = pk_load_acquire(&f->seq);
		if (pk_rec_read(f->rb, seq, &f->rec, rflags) == 0)
			break;
		if (f->flags & O_NONBLOCK) {
			bell_sync(f, &f->rec, SYNC_AFTER_EMPTY);
			ret = -EAGAIN;
			goto out;
		}
		/* Sleep until a record past both our position and whatever
		 * prb_next_seq already counts (holes a dead writer left at the end
		 * are counted but never readable: waiting for them would spin).
		 * Taken before the second look, so a record finalized after it
		 * ends the wait at once. */
		uint64_t next = prb_next_seq(f->rb);

		if (pk_rec_read(f->rb, seq, &f->rec, rflags) == 0)
			break;
		/* The kernel returns -ERESTARTSYS; without SA_RESTART the caller
		 * sees EINTR, and with it futex restarts by itself. */
		if (prb_wait(f->rb, next > seq ? next : seq, KMSG_WAIT_SLICE_NS) == -EINTR) {
			ret = -EINTR;
			goto out;
		}
	}
	if (f->rec.seq != seq) {
		/* Our record was overwritten: say so once, resume at the oldest. */
		pk_store_release(&f->seq, f->rec.seq);
		ret = -EPIPE;
		goto sync;
	}
	pk_store_release(&f->seq, seq + 1);

	size_t n = pk_kmsg_format_record(&f->rec, f->out, f->rec.rflags & PRB_REC_UNFINALIZED);

	if (n > len) {
		ret = -EINVAL; /* consumed all the same (docs/kernel-compat.md, section 7.1) */
	} else if (!buf) {
		ret = -EFAULT;
	} else {
		memcpy(buf, f->out, n);
		ret = (ssize_t)n;
	}
sync:
	bell_sync(f, &f->rec, SYNC_AFTER_READ);
out:
	pthread_mutex_unlock(&f->read_lock);
	return ret;
}

off_t pk_kmsg_llseek(struct kmsg_file *f, off_t offset, int whence)
{
	if (!f)
		return -EBADF;
	if (offset)
		return -ESPIPE; /* before whence: lseek(SEEK_CUR, 1) is ESPIPE */

	uint64_t seq;
	struct prb_record r;

	switch (whence) {
	case SEEK_SET:
		seq = prb_first_seq(f->rb);
		if (pk_rec_read(f->rb, seq, &r, 0) == 0)
			seq = r.seq; /* prb_first_valid_seq: skip holes */
		break;
	case SEEK_DATA:
		seq = pk_load_acquire(&pk_log_shared(f->log)->clear_seq);
		break;
	case SEEK_END:
		seq = prb_next_seq(f->rb);
		break;
	default:
		return -EINVAL; /* SEEK_CUR included (docs/kernel-compat.md, section 7.3) */
	}
	pk_store_release(&f->seq, seq);
	bell_sync(f, &r, SYNC_RING);
	return 0;
}

int pk_kmsg_poll_events(struct kmsg_file *f)
{
	if (!f)
		return KMSG_POLLERR | KMSG_POLLNVAL; /* what poll() says for a bad fd */

	struct prb_record r;
	uint64_t seq = pk_load_acquire(&f->seq);

	if (pk_rec_read(f->rb, seq, &r, 0) != 0)
		return 0;
	if (r.seq != seq)
		return KMSG_POLLIN | KMSG_POLLRDNORM | KMSG_POLLERR | KMSG_POLLPRI;
	return KMSG_POLLIN | KMSG_POLLRDNORM;
}

int pk_kmsg_poll_fd(struct kmsg_file *f)
{
	if (!f)
		return -EBADF;
	/* Registering as a poller writes the ring header, which a read-only
	 * handle must not; and no writer uses that handle to ring. */
	if (!f->rb->writable)
		return -EOPNOTSUPP;

	int fd = atomic_load_explicit(&f->bell_fd, memory_order_acquire);

	if (fd >= 0)
		return fd;

	/* Two threads asking at once: one descriptor wins. Not read_lock: a
	 * blocked reader holds it. */
	bool made = false;

	pthread_mutex_lock(&bells_lock);
	fd = atomic_load_explicit(&f->bell_fd, memory_order_relaxed);
	if (fd < 0) {
		fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
		} else {
			int err = bell_register(f, fd);

			if (err) {
				close(fd);
				fd = err;
			} else {
				atomic_store_explicit(&f->bell_fd, fd, memory_order_release);
				made = true;
			}
		}
	}
	pthread_mutex_unlock(&bells_lock);
	if (made) {
		struct prb_record r;

		/* Records already waiting: no writer will ring for them. */
		bell_sync(f, &r, SYNC_RING);
	}
	return fd;
}

/* ------------------------------------------------------------- writing -- */

/* default_message_loglevel for writes without a prefix on logs other than the
 * default one (there printk applies it itself). */
static int default_level(void)
{
	return pk_cfg_default_message_loglevel();
}

/* Store @text straight into a log that is not printk's (no consoles there):
 * the same cuts and flags as printk's store path. */
/* The kernel stores a /dev/kmsg write through printk_emit(facility, level,
 * "%s", line): cut to a record's text, then one trailing newline stripped. */
static void store_direct(struct kmsg_file *f, int facility, int level, const char *text,
			 size_t len)
{
	struct pk_line l = { .facility = facility, .level = level, .text = text, .len = len };
	struct prb_caller me;
	uint64_t seq;

	pk_sigdepth_enter(); /* the caller context printk would record */
	l.ts_nsec = pk_clock_ns();
	if (l.len > PRB_TEXT_MAX)
		l.len = PRB_TEXT_MAX;
	if (l.len && text[l.len - 1] == '\n') {
		l.len--;
		l.newline = true;
	}
	pk_store_line(f->rb, &l, &me, &seq);
	pk_sigdepth_leave();
}

ssize_t pk_kmsg_write(struct kmsg_file *f, const char *buf, size_t len)
{
	if (!f)
		return -EBADF;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF; /* the VFS refuses write on a read-only file */
	if (len > PK_KMSG_WRITE_MAX)
		return -EINVAL;
	if (!f->rb->writable)
		return -EPERM; /* an attached read-only handle */

	int mode = atomic_load_explicit(&devkmsg_mode, memory_order_relaxed);

	if (mode == DEVKMSG_OFF)
		return (ssize_t)len; /* accepted and dropped */
	if (mode == DEVKMSG_RATELIMIT && !pk___ratelimit(&f->rs, __func__))
		return (ssize_t)len; /* suppressed, reported as success */
	if (len && !buf)
		return -EFAULT;

	/* The kernel copies the write and appends a NUL, then formats "%s". */
	size_t n = len ? strnlen(buf, len) : 0;
	const char *line = buf;
	int level = PK_LOGLEVEL_DEFAULT;
	int facility = 1; /* LOG_USER */

	if (n && line[0] == '<') {
		/* simple_strtoul(base 10): digits only, wrapping; valid if it
		 * stops at '>'. Zero digits are allowed ("<>" is 0). */
		uint32_t u = 0;
		size_t i = 1;

		while (i < n && line[i] >= '0' && line[i] <= '9')
			u = u * 10 + (uint32_t)(line[i++] - '0');
		if (i < n && line[i] == '>') {
			level = (int)(u & 7);
			if ((u >> 3) & 0xff)
				facility = (int)((u >> 3) & 0xff);
			line += i + 1;
			n -= i + 1;
		}
	}
	/* vprintk_store keeps the first 1023 bytes and only then looks for the
	 * newline: a 1024-byte line loses it and stays open (docs/kernel-compat.md,
	 * section 8.1). */
	if (n > PRB_TEXT_MAX)
		n = PRB_TEXT_MAX;
	if (f->via_printk) {
		pk_printk_emit(facility, level, NULL, 0, "%.*s", (int)n, line);
	} else {
		if (level == PK_LOGLEVEL_DEFAULT)
			level = default_level();
		store_direct(f, facility, level, line, n);
	}
	return (ssize_t)len;
}

/* ------------------------------------------------------- open and close -- */

int pk_set_devkmsg(const char *mode)
{
	int m;

	if (!mode)
		return -EINVAL;
	if (!strcmp(mode, "on"))
		m = DEVKMSG_ON;
	else if (!strcmp(mode, "off"))
		m = DEVKMSG_OFF;
	else if (!strcmp(mode, "ratelimit"))
		m = DEVKMSG_RATELIMIT;
	else
		return -EINVAL;
	atomic_store(&devkmsg_mode, m);
	return 0;
}

/* PRINTK_OPTS printk.devkmsg= works only when this file is in the program
 * (setup_hooks.h). */
__attribute__((constructor(PK_SETUP_HOOK_PRIORITY))) static void provide_to_setup(void)
{
	pk_setup_hooks.set_devkmsg = pk_set_devkmsg;
}

static int open_common(struct kmsg_file **filep, struct pk_log *log, int flags, bool via_printk)
{
	if (atomic_load(&devkmsg_mode) == DEVKMSG_OFF)
		return -EPERM; /* every open, readers included */
	if ((flags & O_ACCMODE) == O_ACCMODE || (flags & ~(O_ACCMODE | O_NONBLOCK | O_CLOEXEC)))
		return -EINVAL;

	struct kmsg_file *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->log = log;
	f->rb = pk_log_ring(log);
	f->flags = flags & (O_ACCMODE | O_NONBLOCK);
	f->via_printk = via_printk;
	atomic_init(&f->bell_fd, -1);
	f->bell_slot = -1;
	pthread_mutex_init(&f->read_lock, NULL);
	f->rs.interval = PK_DEFAULT_RATELIMIT_INTERVAL;
	f->rs.burst = PK_DEFAULT_RATELIMIT_BURST;
	f->rs.flags = PK_RATELIMIT_MSG_ON_RELEASE;

	/* prb_first_valid_seq: the oldest record, past any holes. */
	uint64_t seq = prb_first_seq(f->rb);

	if (pk_rec_read(f->rb, seq, &f->rec, 0) == 0)
		seq = f->rec.seq;
	atomic_init(&f->seq, seq);
	*filep = f;
	return 0;
}

int pk_kmsg_open(struct kmsg_file **filep, int flags)
{
	if (!filep)
		return -EINVAL;

	struct pk_log *log = pk_printk_log();

	if (!log)
		return -ENOMEM;
	return open_common(filep, log, flags, true);
}

int pk_kmsg_open_log(struct kmsg_file **filep, struct pk_log *log, int flags)
{
	if (!filep || !log)
		return -EINVAL;
	/* Writes to the default log go through printk so consoles print them. */
	return open_common(filep, log, flags, log == pk_printk_log_peek());
}

int pk_kmsg_open_file(struct kmsg_file **filep, const char *path, int flags)
{
	struct pk_log *log;

	if (!filep || !path)
		return -EINVAL;
	if ((flags & O_ACCMODE) == O_ACCMODE || (flags & ~(O_ACCMODE | O_NONBLOCK | O_CLOEXEC)))
		return -EINVAL;

	int err = pk_log_open_file(&log, path, 0,
				   (flags & O_ACCMODE) == O_RDONLY ? PK_LOG_RDONLY : 0);

	if (err)
		return err;
	err = open_common(filep, log, flags, false);
	if (err) {
		pk_log_destroy(log);
		return err;
	}
	(*filep)->owns_log = true;
	(*filep)->postmortem = !pk_log_writers_alive(log);
	return 0;
}

int pk_kmsg_open_reader(struct kmsg_file **filep, struct pk_log *log, int flags)
{
	if (!filep || !log || (flags & ~(O_ACCMODE | O_NONBLOCK)) || (flags & O_ACCMODE) != O_RDONLY)
		return -EINVAL;

	int err = open_common(filep, log, flags, false);

	if (!err)
		(*filep)->postmortem = !pk_log_writers_alive(log);
	return err;
}

/* ratelimit_state_exit's pr_warn, with printk.c's pr_fmt "printk: ". */
#define KMSG_SUPPRESSED_FMT "printk: %s: %d output lines suppressed due to ratelimiting\n"

/* current->comm: the program name, cut to 15 bytes. */
static void get_comm(char comm[KMSG_COMM_LEN])
{
	const char *name = program_invocation_short_name;

	if (!name)
		name = "";
	size_t n = strnlen(name, KMSG_COMM_LEN - 1);

	memcpy(comm, name, n);
	comm[n] = '\0';
}

void pk_kmsg_close(struct kmsg_file *f)
{
	if (!f)
		return;

	int fd = atomic_load(&f->bell_fd);

	if (fd >= 0) {
		bell_unregister(f);
		close(fd);
	}

	/* ratelimit_state_exit: report what the ratelimit swallowed (also in
	 * earlier intervals), as pr_warn from printk.c ("printk: " is its pr_fmt),
	 * into this file's log. Not pk_ratelimit_state_exit(), which prints to
	 * the default log only. No write can race with the close. */
	if (f->rs.missed && f->rb->writable) {
		char comm[KMSG_COMM_LEN];

		get_comm(comm);
		if (f->via_printk) {
			pk_printk_emit(0, PK_LOGLEVEL_WARNING, NULL, 0, KMSG_SUPPRESSED_FMT, comm,
				       f->rs.missed);
		} else {
			char text[128];
			int n = pk_scnprintf(text, sizeof(text), KMSG_SUPPRESSED_FMT, comm,
					     f->rs.missed);

			store_direct(f, 0, PK_LOGLEVEL_WARNING, text, (size_t)n);
		}
	}
	pthread_mutex_destroy(&f->read_lock);
	if (f->owns_log)
		pk_log_destroy(f->log);
	free(f);
}
