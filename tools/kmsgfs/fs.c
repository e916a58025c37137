// SPDX-License-Identifier: MIT
/*
 * fs.c - the pk-kmsgfs file system: a root directory holding one regular
 * file per served log ("kmsg", "NAME.kmsg"), each with the file operations
 * of Linux 6.x's /dev/kmsg, built on the library's own /dev/kmsg object
 * (<printk/kmsg.h>), so every byte a reader gets is what kmsg_read returns.
 *
 * Owns: the FUSE session and its event loop, the files each log's name
 * has meant (one read-only handle each, shared by its readers), one
 * reader (a kmsg_file on such a handle) per open(), the reads and poll
 * handles parked until a record comes, and a waiter thread per log.
 *
 * Invariants:
 *  - Every request is answered from the one thread that runs kfs_run():
 *    handlers never block (the readers are non-blocking; a read that
 *    would wait is parked, not slept in), so one thread serves any number
 *    of blocked readers, and interrupts (called by libfuse from that same
 *    thread) need no lock against the replies.
 *  - A parked read is on its file's queue until exactly one reply is sent
 *    for it: a record, an error, EINTR for an interrupt, or ENOTCONN when
 *    the server stops. The queue is first in, first out.
 *  - The waiter thread of a log only sleeps on the name's current file
 *    (pk_log_wait: the futex, in slices for a read-only handle) while the
 *    loop has armed it with the end it saw before its last look, and
 *    wakes the loop through an eventfd when records came past it, another
 *    file took the name, or (while readers of earlier files wait) after
 *    every slice. The end is taken before the look, so a record that
 *    lands in between ends the next sleep at once; no wake-up is lost,
 *    none spins.
 *  - A log's name is followed: a file that takes it (a log renamed over
 *    it, one a writer made after moving a damaged file aside) becomes the
 *    file later opens read, numbered to continue after the highest
 *    sequence number handed out for the name; a reader whose file cannot
 *    go on (truncated, damaged) moves to it, with one EPIPE, at its oldest
 *    record. Readers of an old file that is still whole stay on it.
 *  - The log file is untrusted: kmsg_read validates what it reads; when a
 *    reader finds nothing, its file is checked (pk_log_check, pk_log_read
 *    at the reader's position). A file that cannot go on is reported to a
 *    non-blocking read as an error; a blocking read or a poll waits for the
 *    file that replaces it (an error would end a follower for good).
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include <printk/kmsg.h>
#include <printk/log.h>

#include "kmsgfs.h"
#include "reader.h"

#define KFS_LOGS_MAX 64
#define KFS_ATTR_TIMEOUT 1.0
#define KFS_SLICE_NS 50000000L /* pk_log_wait's slice on a read-only handle */
/* The size a log's file reports: lseek(SEEK_END) puts the kernel's file
 * position there, which the next read shows us (see seek_from_offset). */
#define KFS_END_POS ((off_t)1 << 62)

struct kfs_file;

/* A read waiting for a record. */
struct kfs_pend {
	fuse_req_t req;
	size_t size;
	off_t off;
	struct kfs_file *f;
	struct kfs_pend *next;
};

/*
 * A file that a log's name has meant. The readers opened while it was the
 * name's file read it through its one read-only handle, which the waiter
 * also sleeps on and the loop checks. Freed with its last reference.
 */
struct kfs_src {
	struct pk_log *log;
	dev_t dev; /* the file the handle maps */
	ino_t ino;
	uint64_t delta; /* readers see the file's sequence numbers + delta */
	unsigned refs;	/* under the log's lock: l->cur, each reader, the waiter */
};

/* What a name was when the loop last looked: a file, or nothing there. */
struct kfs_name {
	bool there;
	dev_t dev;
	ino_t ino;
};

struct kfs_log {
	struct kfs *fs;
	fuse_ino_t ino;
	char name[KFS_NAME_MAX + 1];
	char *path;
	struct kfs_src *cur;	   /* the name's file (changed under lock) */
	uint64_t cur_gen;	   /* counts changes of cur (under lock) */
	struct kfs_name seen;	   /* the name at the last look (under lock) */
	uint64_t next_num;	   /* the number after the highest handed out */
	struct pk_log *wlog;	   /* writable, opened at the first write() */
	struct kmsg_file *wfile;
	struct kfs_file *waiting; /* files with parked reads or a poll handle */

	/* The waiter thread, and what the loop asks of it. */
	pthread_t waiter;
	bool waiter_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, quit;
	uint64_t armed_gen; /* armed_seq's file: cur when cur_gen was this */
	uint64_t armed_seq;
	bool armed_others; /* readers of earlier files wait too */
};

/* One open() of a log's file. */
struct kfs_file {
	struct kfs_log *l;
	struct kmsg_file *kf; /* NULL when opened write-only */
	struct kfs_src *src;  /* the file kf reads */
	bool pipe;	      /* moved to the name's new file: EPIPE owed */
	struct kfs_pend *head, *tail;
	struct fuse_pollhandle *ph;
	bool listed;
	struct kfs_file *prev, *next; /* in l->waiting */
	struct kfs_file *aprev, *anext; /* in fs->files */
	uint64_t next_seq;	      /* the reader's position, when known */
	bool next_known;
	off_t pos; /* the kernel's file position after our last answer */
};

struct kfs {
	struct fuse_session *se;
	char *mountpoint;
	struct kfs_log *logs[KFS_LOGS_MAX];
	int nlogs;
	struct kfs_file *files; /* every open file, for the end of the session */
	bool read_only;
	bool stopping;
	int wake_fd; /* the waiters ring the loop */
	char in[PK_MESSAGE_MAX];  /* kmsg_read's line */
	char out[PK_MESSAGE_MAX]; /* the line a reader gets (renumbered) */
	struct pk_record rec;	  /* the loop's scratch for log checks */
};

#define ROOT_INO FUSE_ROOT_ID

/* ----------------------------------------------------------- helpers -- */

static struct kfs_log *log_by_ino(struct kfs *fs, fuse_ino_t ino)
{
	if (ino <= ROOT_INO || ino - ROOT_INO > (fuse_ino_t)fs->nlogs)
		return NULL;
	return fs->logs[ino - ROOT_INO - 1];
}

static struct kfs_file *file_of(struct fuse_file_info *fi)
{
	return (struct kfs_file *)(uintptr_t)fi->fh;
}

static void fill_attr(struct kfs *fs, fuse_ino_t ino, struct stat *st)
{
	struct kfs_log *l = log_by_ino(fs, ino);
	struct stat ls;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (!l) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	/* The log file's owner and read/write bits: with default_permissions
	 * the kernel checks them as it checks /dev/kmsg's. */
	st->st_mode = S_IFREG | 0644;
	st->st_nlink = 1;
	st->st_size = KFS_END_POS;
	if (stat(l->path, &ls) == 0) {
		st->st_mode = S_IFREG | (ls.st_mode & 0666);
		st->st_uid = ls.st_uid;
		st->st_gid = ls.st_gid;
		st->st_atim = ls.st_atim;
		st->st_mtim = ls.st_mtim;
		st->st_ctim = ls.st_ctim;
	}
	st->st_blksize = 4096;
}

/*
 * The kmsg line @in of @n bytes ("prio,seq,...") into @out (PK_MESSAGE_MAX
 * bytes) with @delta added to its sequence number, cut at PK_MESSAGE_MAX
 * as kmsg_read cuts a line (the kernel's buffer); its file's number into
 * *@seq. Returns the length, or 0 when @in has no number (then @out is
 * not written).
 */
static size_t renumber(const char *in, size_t n, uint64_t delta, char *out, uint64_t *seq)
{
	const char *comma = memchr(in, ',', n), *p;
	uint64_t v = 0;
	char num[24];

	if (!comma)
		return 0;
	for (p = comma + 1; p < in + n && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (p == comma + 1)
		return 0;
	*seq = v;

	size_t head = (size_t)(comma + 1 - in);
	size_t len = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)(v + delta));
	size_t tail = (size_t)(in + n - p);

	if (head + len > PK_MESSAGE_MAX)
		return 0;
	memcpy(out, in, head);
	memcpy(out + head, num, len);
	len += head;
	if (tail > PK_MESSAGE_MAX - len)
		tail = PK_MESSAGE_MAX - len;
	memcpy(out + len, p, tail);
	return len + tail;
}

/* ------------------------------------------------- the name's files -- */

static void src_get(struct kfs_log *l, struct kfs_src *src)
{
	pthread_mutex_lock(&l->lock);
	src->refs++;
	pthread_mutex_unlock(&l->lock);
}

static void src_put(struct kfs_log *l, struct kfs_src *src)
{
	pthread_mutex_lock(&l->lock);
	bool last = --src->refs == 0;
	pthread_mutex_unlock(&l->lock);
	if (last) {
		pk_log_destroy(src->log);
		free(src);
	}
}

/* A read-only handle on the file at @l's name, and which file it is. */
static int src_open(struct kfs_log *l, struct kfs_src **srcp)
{
	struct kfs_src *src = calloc(1, sizeof(*src));
	struct stat st;
	int err;

	if (!src)
		return -ENOMEM;
	err = pk_log_open_file(&src->log, l->path, 0, PK_LOG_RDONLY);
	if (!err) {
		err = pk_log_file_stat(src->log, &st);
		if (err)
			pk_log_destroy(src->log);
	}
	if (err) {
		free(src);
		return err;
	}
	src->dev = st.st_dev;
	src->ino = st.st_ino;
	src->refs = 1;
	*srcp = src;
	return 0;
}

static struct kfs_name name_now(const char *path)
{
	struct kfs_name n = { false, 0, 0 };
	struct stat st;

	if (stat(path, &st) == 0) {
		n.there = true;
		n.dev = st.st_dev;
		n.ino = st.st_ino;
	}
	return n;
}

static bool name_is(struct kfs_name n, dev_t dev, ino_t ino)
{
	return n.there && n.dev == dev && n.ino == ino;
}

static bool name_same(struct kfs_name a, struct kfs_name b)
{
	return a.there == b.there && (!a.there || (a.dev == b.dev && a.ino == b.ino));
}

/* The oldest record a reader of @log starts at (past holes), in the
 * file's numbers. */
static uint64_t first_readable(struct kfs *fs, struct pk_log *log)
{
	uint64_t seq = pk_log_first_seq(log);

	return pk_log_read(log, seq, &fs->rec, 0) == 0 ? fs->rec.seq : seq;
}

/*
 * Does @l's name still mean l->cur? If another file that opens as a log
 * took it, that file becomes l->cur, numbered to continue: its oldest
 * record gets the number after the highest one handed out for the name,
 * or after the old file's newest one when the old file is still whole and
 * went further (kmsg followers such as journald drop a record whose number
 * is not above the last they saw). Readers of the old file stay on it
 * until it cannot go on (follow_name()). 0, or the error that the name's
 * file gives: then l->cur is kept.
 */
static int refresh(struct kfs_log *l)
{
	struct kfs_name now = name_now(l->path);
	struct kfs_src *cur = l->cur, *src;
	int err;

	pthread_mutex_lock(&l->lock);
	l->seen = now;
	pthread_mutex_unlock(&l->lock);
	if (name_is(now, cur->dev, cur->ino))
		return 0;
	if (!now.there)
		return -ENOENT;
	err = src_open(l, &src);
	if (err)
		return err;
	if (src->dev == cur->dev && src->ino == cur->ino) {
		src_put(l, src); /* moved away and back meanwhile */
		return 0;
	}

	uint64_t next = l->next_num;

	if (pk_log_check(cur->log) == 0 && pk_log_next_seq(cur->log) + cur->delta > next)
		next = pk_log_next_seq(cur->log) + cur->delta;
	l->next_num = next;
	src->delta = next - first_readable(l->fs, src->log); /* modulo 2^64 */
	pthread_mutex_lock(&l->lock);
	l->cur = src;
	l->cur_gen++;
	l->seen = (struct kfs_name){ true, src->dev, src->ino };
	pthread_mutex_unlock(&l->lock);
	src_put(l, cur);
	return 0;
}

/*
 * For an open(): the name's file in l->cur, and what opening it says now
 * (the library validates a log file at each open: a file that was
 * truncated or overwritten since l->cur was opened fails as
 * kmsg_open_file would fail on it).
 */
static int open_check(struct kfs_log *l)
{
	struct kfs_src *src;
	int err = refresh(l);

	if (!err)
		err = src_open(l, &src);
	if (!err)
		src_put(l, src);
	return err;
}

/* -------------------------------------------------------- the waiter -- */

static void *waiter_main(void *arg)
{
	struct kfs_log *l = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->armed && !l->quit)
			pthread_cond_wait(&l->cond, &l->lock);
		if (l->quit)
			break;

		struct kfs_src *src = l->cur;
		/* armed_seq counts in another file's numbers: look at once. */
		uint64_t seq = l->armed_gen == l->cur_gen ? l->armed_seq : 0;
		bool others = l->armed_others;
		struct kfs_name seen = l->seen;

		src->refs++;
		pthread_mutex_unlock(&l->lock);
		/* A read-only handle sleeps in slices of 50 ms (writers cannot
		 * know it waits): after each, look whether anything changed.
		 * A file that lost its pages is no longer one to sleep on (the
		 * wait returns at once): a plain slice then. */
		if (pk_log_check(src->log) == 0) {
			pk_log_wait(src->log, seq, 1000 * 1000 * 1000);
		} else {
			struct timespec slice = { 0, KFS_SLICE_NS };

			nanosleep(&slice, NULL);
		}

		/* Records past the end the loop saw; another file took the
		 * name (readers of a file that cannot go on move to it); or
		 * readers of earlier files wait, whose records this sleep does
		 * not see. A file that stops being whole is no reason: its
		 * waiting readers wait on, for its replacement; and this
		 * thread leaves its pages alone (checked first, by its size):
		 * the fault of a lost page is then the loop's, whose handler
		 * swaps the mapping under no other reader of it. */
		bool fire = others || !name_same(name_now(l->path), seen) ||
			    (pk_log_check(src->log) == 0 && pk_log_next_seq(src->log) > seq);

		pthread_mutex_lock(&l->lock);
		if (fire && l->armed) {
			l->armed = false;
			ssize_t r = write(l->fs->wake_fd, &one, sizeof(one));

			(void)r; /* a saturated counter is readable anyway */
		}
		if (--src->refs == 0) {
			pthread_mutex_unlock(&l->lock);
			pk_log_destroy(src->log);
			free(src);
			pthread_mutex_lock(&l->lock);
		}
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* The end of @l's current file before a look at its readers: what arm()
 * is given after the look. */
struct kfs_end {
	uint64_t gen, seq;
};

static struct kfs_end log_end(struct kfs_log *l)
{
	/* cur and cur_gen change in the loop's thread only: no lock here. */
	return (struct kfs_end){ l->cur_gen, pk_log_next_seq(l->cur->log) };
}

/* Sleep on @l's current file until records past @end (taken before the
 * last look; if the name's file changed since, the waiter looks at once);
 * @others: readers of earlier files wait too. */
static void arm(struct kfs_log *l, struct kfs_end end, bool others)
{
	uint64_t seq = end.seq;

	pthread_mutex_lock(&l->lock);
	if (end.gen != l->cur_gen)
		seq = 0;
	if (!l->armed || l->armed_gen != l->cur_gen) {
		l->armed_gen = l->cur_gen;
		l->armed_seq = seq;
		l->armed_others = others;
	} else {
		if (seq < l->armed_seq)
			l->armed_seq = seq;
		l->armed_others = l->armed_others || others;
	}
	l->armed = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/* ----------------------------------------------------------- reading -- */

/* Why a reader that found nothing will never find anything in its file:
 * 0 if the file is whole, else the error its readers get. */
static int log_trouble(struct kfs_file *f)
{
	struct pk_log *log = f->src->log;
	int err = pk_log_check(log);

	if (err)
		return err;
	if (f->next_known) {
		err = pk_log_read(log, f->next_seq, &f->l->fs->rec, 0);
		if (err == -EUCLEAN || err == -EIO || err == -ESTALE)
			return err;
	}
	return 0;
}

/*
 * @f's file cannot go on: if another whole file has taken the name, move
 * @f to it, at its oldest record, owing one EPIPE (records were lost, as a
 * /dev/kmsg reader is told). False if there is none to move to.
 */
static bool follow_name(struct kfs_file *f)
{
	struct kfs_log *l = f->l;
	struct kmsg_file *kf;

	refresh(l);
	if (l->cur == f->src || pk_log_check(l->cur->log) != 0 ||
	    pk_kmsg_open_reader(&kf, l->cur->log, O_RDONLY | O_NONBLOCK) != 0)
		return false;
	pk_kmsg_close(f->kf);
	src_put(l, f->src);
	f->kf = kf;
	f->src = l->cur;
	src_get(l, f->src);
	f->next_known = false;
	f->pipe = true;
	return true;
}

/*
 * One record for @f into fs->out, at most @size bytes: its length or a
 * negative errno value. Nothing to read in a file that cannot go on is
 * -EAGAIN for a reader that waits (@wait: a blocking read or a poll),
 * which waits for the file that replaces it, and that file's error for
 * one that does not.
 */
static ssize_t read_one(struct kfs_file *f, size_t size, bool wait)
{
	struct kfs *fs = f->l->fs;
	uint64_t seq;
	ssize_t n;

	if (f->pipe) {
		f->pipe = false;
		return -EPIPE;
	}
	n = pk_kmsg_read(f->kf, fs->in, sizeof(fs->in));
	if (n >= 0) {
		size_t len = renumber(fs->in, (size_t)n, f->src->delta, fs->out, &seq);

		f->next_known = len != 0;
		if (!len) {
			memcpy(fs->out, fs->in, (size_t)n);
		} else {
			n = (ssize_t)len;
			f->next_seq = seq + 1;
			if (seq + 1 + f->src->delta > f->l->next_num)
				f->l->next_num = seq + 1 + f->src->delta;
		}
		/* Consumed all the same, as kmsg_read does. */
		if ((size_t)n > size)
			n = -EINVAL;
	} else if (n == -EPIPE) {
		f->next_known = false; /* at the oldest record now */
	} else if (n == -EAGAIN) {
		int err = log_trouble(f);

		if (err && follow_name(f)) {
			f->pipe = false;
			n = -EPIPE;
		} else if (err && !wait) {
			n = err;
		}
	}
	return n;
}

static void reply_read(fuse_req_t req, struct kfs_file *f, off_t off, ssize_t n)
{
	if (n >= 0) {
		f->pos = off + n; /* where the kernel moves the file position */
		fuse_reply_buf(req, f->l->fs->out, (size_t)n);
	} else {
		fuse_reply_err(req, (int)-n);
	}
}

/*
 * FUSE keeps SEEK_SET, SEEK_CUR and SEEK_END to the kernel, which only
 * moves the file's position; reads then come at that position. A read at
 * another position than our last answer left is such a seek: 0 was
 * SEEK_SET (the oldest record), KFS_END_POS was SEEK_END (after the
 * newest), anything else (SEEK_CUR, offsets that /dev/kmsg refuses)
 * changes nothing.
 */
static void seek_from_offset(struct kfs_file *f, off_t off)
{
	if (off == f->pos)
		return;
	if (off == 0)
		pk_kmsg_llseek(f->kf, 0, SEEK_SET);
	else if (off == KFS_END_POS)
		pk_kmsg_llseek(f->kf, 0, SEEK_END);
	else
		return;
	f->pos = off;
	f->next_known = false;
	f->pipe = false;
}

static void list_file(struct kfs_file *f)
{
	struct kfs_log *l = f->l;

	if (f->listed)
		return;
	f->prev = NULL;
	f->next = l->waiting;
	if (l->waiting)
		l->waiting->prev = f;
	l->waiting = f;
	f->listed = true;
}

static void unlist_file(struct kfs_file *f)
{
	if (!f->listed)
		return;
	if (f->prev)
		f->prev->next = f->next;
	else
		f->l->waiting = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->listed = false;
}

static void unlink_pend(struct kfs_pend *p)
{
	struct kfs_file *f = p->f;
	struct kfs_pend **pp = &f->head, *prev = NULL;

	while (*pp && *pp != p) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = p->next;
	if (f->tail == p)
		f->tail = prev;
}

/* libfuse calls this from the loop's thread when the reader's kernel task
 * got a signal: answer at once, or a SIGKILL waits for the next record. */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct kfs_pend *p = data;

	(void)req;
	unlink_pend(p);
	fuse_reply_err(p->req, EINTR);
	free(p);
}

/*
 * Answer what can be answered for @f: its parked reads in order while
 * records come, then its poll handle if a read would not wait. Keeps @f
 * on its log's waiting list while something is left.
 */
static void service_file(struct kfs_file *f)
{
	struct kfs *fs = f->l->fs;

	while (f->head) {
		struct kfs_pend *p = f->head;
		ssize_t n = read_one(f, p->size, true);

		if (n == -EAGAIN && !fs->stopping)
			break;
		if (n == -EAGAIN)
			n = -ENOTCONN;
		f->head = p->next;
		if (!f->head)
			f->tail = NULL;
		reply_read(p->req, f, p->off, n);
		free(p);
	}
	if (f->ph && (fs->stopping || f->pipe || pk_kmsg_poll_events(f->kf) ||
		      (log_trouble(f) && follow_name(f)))) {
		fuse_lowlevel_notify_poll(f->ph);
		fuse_pollhandle_destroy(f->ph);
		f->ph = NULL;
	}
	if (!f->head && !f->ph)
		unlist_file(f);
	else
		list_file(f);
}

static void service_log(struct kfs_log *l)
{
	struct kfs_file *f, *next;
	bool others = false;

	refresh(l); /* the name may mean another file now */

	struct kfs_end end = log_end(l); /* before the look: see arm() */

	for (f = l->waiting; f; f = next) {
		next = f->next;
		service_file(f);
	}
	for (f = l->waiting; f; f = f->next)
		others = others || f->src != l->cur;
	if (l->waiting)
		arm(l, end, others);
}

/* --------------------------------------------------- file operations -- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* O_TRUNC comes with open() (ignored there), as on a device, instead
	 * of a separate truncate. */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;

	if (parent != ROOT_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	for (int i = 0; i < fs->nlogs; i++) {
		if (strcmp(fs->logs[i]->name, name))
			continue;
		memset(&e, 0, sizeof(e));
		e.ino = fs->logs[i]->ino;
		e.attr_timeout = KFS_ATTR_TIMEOUT;
		e.entry_timeout = KFS_ATTR_TIMEOUT;
		fill_attr(fs, e.ino, &e.attr);
		fuse_reply_entry(req, &e);
		return;
	}
	fuse_reply_err(req, ENOENT);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	if (ino != ROOT_INO && !log_by_ino(fs, ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(fs, ino, &st);
	fuse_reply_attr(req, &st, KFS_ATTR_TIMEOUT);
}

/* chmod, chown, utimes and truncate change nothing, and fail nowhere: a
 * shell's "> /dev/kmsg" must work. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	(void)attr;
	(void)to_set;
	op_getattr(req, ino, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct kfs *fs = fuse_req_userdata(req);
	char buf[4096 + (KFS_LOGS_MAX + 2) * (KFS_NAME_MAX + 32)];
	size_t len = 0;
	struct stat st;

	(void)fi;
	if (ino != ROOT_INO) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	memset(&st, 0, sizeof(st));
	for (int i = 0; i < fs->nlogs + 2; i++) {
		const char *name = i == 0 ? "." : i == 1 ? ".." : fs->logs[i - 2]->name;

		st.st_ino = i < 2 ? ROOT_INO : fs->logs[i - 2]->ino;
		st.st_mode = i < 2 ? S_IFDIR : S_IFREG;
		len += fuse_add_direntry(req, buf + len, sizeof(buf) - len, name, &st, i + 1);
	}
	/* Entry i's offset is i + 1: the entries from @off on. */
	size_t start = 0;

	for (off_t i = 0; i < off && start < len; i++) {
		const char *name = i == 0 ? "." : i == 1 ? ".." : fs->logs[i - 2]->name;

		start += fuse_add_direntry(req, NULL, 0, name, NULL, 0);
	}
	if (start >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	size_t n = len - start;
	/* Whole entries only: cut at the last one that fits. */
	if (n > size) {
		size_t keep = 0;

		for (int i = (int)off; i < fs->nlogs + 2; i++) {
			const char *name = i == 0 ? "." : i == 1 ? ".." : fs->logs[i - 2]->name;
			size_t e = fuse_add_direntry(req, NULL, 0, name, NULL, 0);

			if (keep + e > size)
				break;
			keep += e;
		}
		n = keep;
	}
	fuse_reply_buf(req, buf + start, n);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct kfs_log *l = log_by_ino(fs, ino);
	struct kfs_file *f;

	if (!l) {
		fuse_reply_err(req, ino == ROOT_INO ? EISDIR : ENOENT);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->l = l;
	if ((fi->flags & O_ACCMODE) != O_WRONLY) {
		/* A reader of its own on the name's file, as kmsg_open_file
		 * gives: at the oldest record, the open line of a log with no
		 * writer left included. Non-blocking: waits are parked here. */
		int err = open_check(l);

		if (!err)
			err = pk_kmsg_open_reader(&f->kf, l->cur->log, O_RDONLY | O_NONBLOCK);
		if (err) {
			free(f);
			fuse_reply_err(req, -err);
			return;
		}
		f->src = l->cur;
		src_get(l, f->src);
	}
	f->anext = fs->files;
	if (fs->files)
		fs->files->aprev = f;
	fs->files = f;
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1; /* every read reaches us: no page cache */
	fi->keep_cache = 0;
	/* Seekable: a nonseekable file gets ESPIPE for every lseek, while
	 * dmesg needs SEEK_DATA ("after the last clear") and SEEK_END. */
	fi->nonseekable = 0;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct kfs_file *f = file_of(fi);
	bool nonblock = fi->flags & O_NONBLOCK;
	struct kfs_pend *p;
	struct kfs_end end = { 0, 0 };
	ssize_t n;

	(void)ino;
	if (!f->kf) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (f->head) {
		n = -EAGAIN; /* another read of this file waits first */
		end = log_end(f->l);
	} else {
		seek_from_offset(f, off);
		n = read_one(f, size, !nonblock);
		if (n == -EAGAIN && !nonblock) {
			/* The end before a second look (see arm()): a record
			 * that lands after this look ends the waiter's sleep. */
			end = log_end(f->l);
			n = read_one(f, size, true);
		}
	}
	if (n != -EAGAIN || nonblock) {
		reply_read(req, f, off, n);
		return;
	}
	if (fs->stopping) {
		fuse_reply_err(req, ENOTCONN);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	p->req = req;
	p->size = size;
	p->off = off;
	p->f = f;
	if (f->tail)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
	list_file(f);
	arm(f->l, end, f->src != f->l->cur);
	/* Last: if the task was interrupted already, this answers it (and
	 * frees p) at once. */
	fuse_req_interrupt_func(req, on_interrupt, p);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct kfs_log *l = file_of(fi)->l;
	ssize_t n;

	(void)ino;
	(void)off;
	if (fs->read_only) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (l->wfile) {
		/* Records go to the file the name means, as readers read. */
		struct stat st;

		refresh(l);
		if (pk_log_file_stat(l->wlog, &st) != 0 || st.st_dev != l->cur->dev ||
		    st.st_ino != l->cur->ino) {
			pk_kmsg_close(l->wfile);
			pk_log_destroy(l->wlog);
			l->wfile = NULL;
			l->wlog = NULL;
		}
	}
	if (!l->wfile) {
		/* The first write makes this process a writer of the log (a
		 * control open: never created, the wall-clock offset kept). */
		int err = pk_log_open_control(&l->wlog, l->path);

		if (!err) {
			err = pk_kmsg_open_log(&l->wfile, l->wlog, O_WRONLY);
			if (err) {
				pk_log_destroy(l->wlog);
				l->wlog = NULL;
			}
		}
		if (err) {
			fuse_reply_err(req, EPERM);
			return;
		}
	}
	n = pk_kmsg_write(l->wfile, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct kfs *fs = fuse_req_userdata(req);
	struct kfs_file *f = file_of(fi);
	struct kfs_end end;
	unsigned ev;

	(void)ino;
	if (!f->kf) { /* /dev/kmsg's answer for a write-only open */
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLERR | POLLNVAL);
		return;
	}
	end = log_end(f->l);
	ev = (unsigned)pk_kmsg_poll_events(f->kf);
	/* A file that cannot go on: readable once another took the name
	 * (the read says EPIPE, as for lost records); until then nothing to
	 * read, so that a poller such as journald waits instead of reading
	 * an error it would stop at. */
	if (f->pipe || (!ev && log_trouble(f) && follow_name(f)))
		ev = POLLIN | POLLRDNORM | POLLERR | POLLPRI;
	if (ph) {
		if (f->ph)
			fuse_pollhandle_destroy(f->ph);
		f->ph = NULL;
		if (ev || fs->stopping) {
			fuse_pollhandle_destroy(ph);
		} else {
			f->ph = ph;
			list_file(f);
			arm(f->l, end, f->src != f->l->cur);
		}
	}
	fuse_reply_poll(req, ev);
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct kfs_file *f = file_of(fi);
	off_t r;

	(void)ino;
	if (!f->kf) {
		fuse_reply_err(req, EBADF);
		return;
	}
	r = pk_kmsg_llseek(f->kf, off, whence);
	if (r < 0) {
		fuse_reply_err(req, (int)-r);
		return;
	}
	f->next_known = false;
	f->pipe = false;
	f->pos = 0; /* /dev/kmsg's answer, and the position reads come at */
	fuse_reply_lseek(req, 0);
	if (f->ph)
		service_file(f); /* the new position may be readable */
}

/* Forget @f; its parked reads get @err, or nothing when the session is
 * gone (@err 0). */
static void free_file(struct kfs *fs, struct kfs_file *f, int err)
{
	while (f->head) {
		struct kfs_pend *p = f->head;

		f->head = p->next;
		if (err)
			fuse_reply_err(p->req, err);
		free(p);
	}
	if (f->ph)
		fuse_pollhandle_destroy(f->ph);
	unlist_file(f);
	if (f->aprev)
		f->aprev->anext = f->anext;
	else
		fs->files = f->anext;
	if (f->anext)
		f->anext->aprev = f->aprev;
	if (f->kf) {
		pk_kmsg_close(f->kf);
		src_put(f->l, f->src);
	}
	free(f);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	/* The kernel releases a file only when no read of it is pending. */
	free_file(fuse_req_userdata(req), file_of(fi), EBADF);
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops kfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.poll = op_poll,
	.lseek = op_lseek,
	.release = op_release,
};

/* --------------------------------------------------------- lifecycle -- */

struct kfs *kfs_new(bool read_only)
{
	struct kfs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->read_only = read_only;
	fs->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fs->wake_fd < 0) {
		free(fs);
		return NULL;
	}
	return fs;
}

int kfs_add_log(struct kfs *fs, const char *name, const char *path)
{
	struct kfs_log *l;
	int err;

	if (fs->nlogs == KFS_LOGS_MAX)
		return -EMFILE;
	if (strlen(name) > KFS_NAME_MAX)
		return -ENAMETOOLONG;
	for (int i = 0; i < fs->nlogs; i++)
		if (!strcmp(fs->logs[i]->name, name))
			return -EEXIST;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->path = strdup(path);
	if (!l->path) {
		free(l);
		return -ENOMEM;
	}
	/* The file served at the start keeps its own numbers (delta 0). */
	err = src_open(l, &l->cur);
	if (err) {
		free(l->path);
		free(l);
		return err;
	}
	l->seen = (struct kfs_name){ true, l->cur->dev, l->cur->ino };
	strcpy(l->name, name);
	l->fs = fs;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	fs->logs[fs->nlogs++] = l;
	l->ino = ROOT_INO + (fuse_ino_t)fs->nlogs;
	return 0;
}

int kfs_mount(struct kfs *fs, const char *mountpoint, bool debug)
{
	char *argv[] = { "pk-kmsgfs", debug ? "-d" : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(debug ? 2 : 1, argv);
	char opts[160], devfd[32];
	int fd, err;

	fs->se = fuse_session_new(&args, &kfs_ops, sizeof(kfs_ops), fs);
	fuse_opt_free_args(&args);
	if (!fs->se)
		return -1;
	/*
	 * Mounted here with mount(2), as root, and handed to libfuse as
	 * /dev/fd/N: no fusermount3, and the unmount stays ours (--exec
	 * detaches the mount point long before the end). allow_other: root's
	 * processes in other namespaces and other users read it too, as the
	 * file's mode allows them (default_permissions).
	 */
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "pk-kmsgfs: cannot open /dev/fuse: %s\n", strerror(errno));
		goto fail;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other,default_permissions", fd,
		 (unsigned)getuid(), (unsigned)getgid());
	if (mount("pk-kmsgfs", mountpoint, "fuse.pk-kmsgfs", MS_NOSUID | MS_NODEV, opts) != 0) {
		err = errno;
		close(fd);
		fprintf(stderr, "pk-kmsgfs: cannot mount on %s: %s%s\n", mountpoint, strerror(err),
			err == EPERM ? " (root needed)" : "");
		goto fail;
	}
	snprintf(devfd, sizeof(devfd), "/dev/fd/%d", fd);
	if (fuse_session_mount(fs->se, devfd) != 0) {
		umount2(mountpoint, MNT_DETACH);
		close(fd);
		goto fail;
	}
	fs->mountpoint = strdup(mountpoint);
	return 0;
fail:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return -1;
}

void kfs_stop_readers(struct kfs *fs)
{
	fs->stopping = true;
	for (int i = 0; i < fs->nlogs; i++)
		service_log(fs->logs[i]);
}

int kfs_run(struct kfs *fs, int ctl_fd, bool (*on_ctl)(struct kfs *fs, void *arg), void *arg)
{
	struct fuse_buf buf;
	int ret = 0;

	memset(&buf, 0, sizeof(buf));
	for (int i = 0; i < fs->nlogs; i++) {
		struct kfs_log *l = fs->logs[i];

		if (pthread_create(&l->waiter, NULL, waiter_main, l) != 0) {
			fprintf(stderr, "pk-kmsgfs: cannot start a thread\n");
			return -1;
		}
		l->waiter_started = true;
	}
	while (!fuse_session_exited(fs->se)) {
		struct pollfd p[3] = {
			{ .fd = fuse_session_fd(fs->se), .events = POLLIN },
			{ .fd = fs->wake_fd, .events = POLLIN },
			{ .fd = ctl_fd, .events = POLLIN },
		};

		if (poll(p, ctl_fd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pk-kmsgfs: poll: %s\n", strerror(errno));
			ret = -1;
			break;
		}
		if (p[1].revents) {
			uint64_t v;
			ssize_t r = read(fs->wake_fd, &v, sizeof(v));

			(void)r;
			for (int i = 0; i < fs->nlogs; i++)
				service_log(fs->logs[i]);
		}
		if (ctl_fd >= 0 && p[2].revents && on_ctl(fs, arg))
			break;
		if (p[0].revents) {
			int r = fuse_session_receive_buf(fs->se, &buf);

			if (r == -EINTR || r == -EAGAIN)
				continue;
			if (r <= 0) { /* unmounted (0) or the device failed */
				if (r < 0) {
					fprintf(stderr, "pk-kmsgfs: /dev/fuse: %s\n", strerror(-r));
					ret = -1;
				}
				break;
			}
			fuse_session_process_buf(fs->se, &buf);
		}
	}
	free(buf.mem);
	return ret;
}

void kfs_destroy(struct kfs *fs, bool unmount)
{
	if (!fs)
		return;
	for (int i = 0; i < fs->nlogs; i++) {
		struct kfs_log *l = fs->logs[i];

		if (l->waiter_started) {
			pthread_mutex_lock(&l->lock);
			l->quit = true;
			pthread_cond_signal(&l->cond);
			pthread_mutex_unlock(&l->lock);
			pthread_join(l->waiter, NULL);
		}
	}
	if (fs->se) {
		/* Lazily: files still open keep working until the device
		 * closes, then fail with ENOTCONN. */
		if (unmount && fs->mountpoint)
			umount2(fs->mountpoint, MNT_DETACH);
		fuse_session_destroy(fs->se);
	}
	free(fs->mountpoint);
	/* Files still open when the session ended are never released. */
	while (fs->files)
		free_file(fs, fs->files, 0);
	for (int i = 0; i < fs->nlogs; i++) {
		struct kfs_log *l = fs->logs[i];

		if (l->wfile)
			pk_kmsg_close(l->wfile);
		if (l->wlog)
			pk_log_destroy(l->wlog);
		src_put(l, l->cur);
		pthread_cond_destroy(&l->cond);
		pthread_mutex_destroy(&l->lock);
		free(l->path);
		free(l);
	}
	close(fs->wake_fd);
	free(fs);
}
