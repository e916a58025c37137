// SPDX-License-Identifier: MIT
/*
 * fs.c - the pk-kmsgfs file system: a root directory holding one regular
 * file per served log ("kmsg", "NAME.kmsg"), each with the file operations
 * of Linux 6.x's /dev/kmsg, built on the library's own /dev/kmsg object
 * (<printk/kmsg.h>), so every byte a reader gets is what kmsg_read returns.
 *
 * Owns: the FUSE session and its event loop, one reader (a kmsg_file
 * opened read-only on the log file) per open(), the reads and poll
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
 *  - The waiter thread of a log only sleeps on the log (pk_log_wait: the
 *    futex, in slices for a read-only handle) while the loop has armed it
 *    with the end it saw before its last look, and wakes the loop through
 *    an eventfd when records came past it, the file stopped being whole
 *    or another file took its name (then readers opened since, which read
 *    the new file, are looked at after every slice).
 *    The end is taken before the look, so a record that lands in between
 *    ends the next sleep at once; no wake-up is lost, none spins.
 *  - The log file is untrusted: kmsg_read validates what it reads; when a
 *    reader finds nothing, the log is checked (pk_log_check, pk_log_read at
 *    the reader's position), and a truncated or damaged log is reported to
 *    that reader as an error instead of an endless wait.
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
#include <unistd.h>

#include <fuse_lowlevel.h>

#include <printk/kmsg.h>
#include <printk/log.h>

#include "kmsgfs.h"
#include "reader.h"

#define KFS_LOGS_MAX 64
#define KFS_ATTR_TIMEOUT 1.0
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

struct kfs_log {
	struct kfs *fs;
	fuse_ino_t ino;
	char name[KFS_NAME_MAX + 1];
	char *path;
	struct pk_log *log;	   /* read-only: waits and checks */
	dev_t file_dev;		   /* the file it maps (stat at open) */
	ino_t file_ino;
	struct pk_log *wlog;	   /* writable, opened at the first write() */
	struct kmsg_file *wfile;
	struct kfs_file *waiting; /* files with parked reads or a poll handle */

	/* The waiter thread, and what the loop asks of it. */
	pthread_t waiter;
	bool waiter_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, quit;
	uint64_t armed_seq;
};

/* One open() of a log's file. */
struct kfs_file {
	struct kfs_log *l;
	struct kmsg_file *kf; /* NULL when opened write-only */
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
	char out[PK_MESSAGE_MAX];
	struct pk_record rec; /* the loop's scratch for log checks */
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

/* The sequence number a kmsg line starts with ("prio,seq,..."). */
static bool line_seq(const char *line, size_t n, uint64_t *seq)
{
	const char *p = memchr(line, ',', n);
	uint64_t v = 0;

	if (!p)
		return false;
	for (p++; p < line + n && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*seq = v;
	return true;
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

		uint64_t seq = l->armed_seq;

		pthread_mutex_unlock(&l->lock);
		/* A read-only handle sleeps in slices (writers cannot know it
		 * waits): after each, look whether anything changed. */
		pk_log_wait(l->log, seq, 1000 * 1000 * 1000);

		bool fire = pk_log_next_seq(l->log) > seq || pk_log_check(l->log) != 0;
		struct stat st;

		/* The file was replaced (moved aside as damaged, rotated):
		 * readers opened since read another file than l->log, whose
		 * records this sleep does not see; they are looked at after
		 * each slice instead. */
		if (stat(l->path, &st) != 0 || st.st_ino != l->file_ino ||
		    st.st_dev != l->file_dev)
			fire = true;

		pthread_mutex_lock(&l->lock);
		if (fire && l->armed) {
			l->armed = false;
			ssize_t r = write(l->fs->wake_fd, &one, sizeof(one));

			(void)r; /* a saturated counter is readable anyway */
		}
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Sleep on @l until records past @seq (the end seen before the last look). */
static void arm(struct kfs_log *l, uint64_t seq)
{
	pthread_mutex_lock(&l->lock);
	if (!l->armed || seq < l->armed_seq)
		l->armed_seq = seq;
	l->armed = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/* ----------------------------------------------------------- reading -- */

/* Why a reader that found nothing will never find anything: 0 if the log
 * is whole, else the error its readers get. */
static int log_trouble(struct kfs_file *f)
{
	struct kfs_log *l = f->l;
	int err = pk_log_check(l->log);

	if (err)
		return err;
	if (f->next_known) {
		err = pk_log_read(l->log, f->next_seq, &l->fs->rec, 0);
		if (err == -EUCLEAN || err == -EIO || err == -ESTALE)
			return err;
	}
	return 0;
}

/* One kmsg_read of at most @size bytes into fs->out: its length or a
 * negative errno value. */
static ssize_t read_one(struct kfs_file *f, size_t size)
{
	struct kfs *fs = f->l->fs;
	ssize_t n = pk_kmsg_read(f->kf, fs->out, size < sizeof(fs->out) ? size : sizeof(fs->out));

	if (n >= 0) {
		f->next_known = line_seq(fs->out, (size_t)n, &f->next_seq);
		f->next_seq++;
	} else if (n == -EPIPE) {
		f->next_known = false; /* at the oldest record now */
	} else if (n == -EAGAIN) {
		int err = log_trouble(f);

		if (err)
			n = err;
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
		ssize_t n = read_one(f, p->size);

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
	if (f->ph && (fs->stopping || pk_kmsg_poll_events(f->kf) || log_trouble(f))) {
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
	uint64_t seq = pk_log_next_seq(l->log); /* before the look: see arm() */
	struct kfs_file *f = l->waiting, *next;

	for (; f; f = next) {
		next = f->next;
		service_file(f);
	}
	if (l->waiting)
		arm(l, seq);
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
		/* A reader of its own on the file, as kmsg_open_file gives:
		 * at the oldest record, the open line of a log with no writer
		 * left included. Non-blocking: waits are parked here. */
		int err = pk_kmsg_open_file(&f->kf, l->path, O_RDONLY | O_NONBLOCK);

		if (err) {
			free(f);
			fuse_reply_err(req, -err);
			return;
		}
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
	uint64_t seq;
	ssize_t n;

	(void)ino;
	if (!f->kf) {
		fuse_reply_err(req, EBADF);
		return;
	}
	seq = 0;
	if (f->head) {
		n = -EAGAIN; /* another read of this file waits first */
		seq = pk_log_next_seq(f->l->log);
	} else {
		seek_from_offset(f, off);
		n = read_one(f, size);
		if (n == -EAGAIN && !nonblock) {
			/* The end before a second look (see arm()): a record
			 * that lands after this look ends the waiter's sleep. */
			seq = pk_log_next_seq(f->l->log);
			n = read_one(f, size);
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
	arm(f->l, seq);
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
	uint64_t seq;
	unsigned ev;

	(void)ino;
	if (!f->kf) { /* /dev/kmsg's answer for a write-only open */
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLERR | POLLNVAL);
		return;
	}
	seq = pk_log_next_seq(f->l->log);
	ev = (unsigned)pk_kmsg_poll_events(f->kf);
	if (!ev && log_trouble(f))
		ev = POLLIN | POLLRDNORM | POLLERR; /* a read says what is wrong */
	if (ph) {
		if (f->ph)
			fuse_pollhandle_destroy(f->ph);
		f->ph = NULL;
		if (ev || fs->stopping) {
			fuse_pollhandle_destroy(ph);
		} else {
			f->ph = ph;
			list_file(f);
			arm(f->l, seq);
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
	if (f->kf)
		pk_kmsg_close(f->kf);
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
	err = pk_log_open_file(&l->log, path, 0, PK_LOG_RDONLY);
	if (err) {
		free(l->path);
		free(l);
		return err;
	}

	struct stat st;

	if (stat(path, &st) == 0) {
		l->file_dev = st.st_dev;
		l->file_ino = st.st_ino;
	}
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
		pk_log_destroy(l->log);
		pthread_cond_destroy(&l->cond);
		pthread_mutex_destroy(&l->lock);
		free(l->path);
		free(l);
	}
	close(fs->wake_fd);
	free(fs);
}
