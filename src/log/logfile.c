// SPDX-License-Identifier: MIT
/*
 * logfile.c - a log in a shared file: creation, validation, attaching, the
 * writer registry, fork, and surviving a file that shrinks under us.
 *
 * File layout (all offsets, no pointers; the ring's own header says how it
 * is laid out, the log state in its user area says where the rest is):
 *
 *   0              the ring region: header page, descriptors, text data
 *   registry_off   PK_REGISTRY_ENTRIES writer entries of 64 bytes
 *   lock_off       one byte per entry, the targets of the writers' OFD locks
 *   file_size      page aligned
 *
 * A new file is built under no name (O_TMPFILE, or a temporary name) and
 * published with link(), which never replaces a file: openers never see a
 * half-initialised header, and two processes creating the same log at once
 * end up sharing one. Its blocks are reserved before it is mapped
 * (fallocate, or zeros written where the file system cannot reserve): a
 * sparse file on a full file system would raise SIGBUS at the first store
 * into a page the file system cannot back, so a file that does not fit is
 * refused with -ENOSPC instead and nothing is published.
 *
 * Everything read from an existing file is validated before it is mapped or
 * trusted: a foreign, truncated, corrupted file or one of another ABI
 * version is refused with a clear error and left untouched. Opening is
 * careful about who controls the name (another user may own the directory
 * entry even when root opens it):
 *  - the name is opened through pk_open_safe() (safe_open.c): a symbolic
 *    link in its last component is followed only if it belongs to us or to
 *    root (in a sticky world-writable directory: to us or to the
 *    directory's owner), and must still be the same link after the open.
 *    Refused: -ELOOP;
 *  - a writer refuses a file of another user, and one that the group or
 *    others may write (libprintk never makes one: the file is 0600 or 0640),
 *    with -EACCES: its records could be forged and its header bent;
 *  - anything but a regular file is refused before a byte is read (-EISDIR
 *    for a directory, -EPROTO otherwise), and so is a file of procfs, sysfs
 *    and the other pseudo file systems: reading /proc/kmsg consumes a
 *    kernel message.
 *
 * A writer repairs log levels that the file holds out of range (a bad
 * console_loglevel would mute or flood every writer's console): each is
 * reset to its default and the repair is recorded in the log, once per
 * field, as a KERN_NOTICE record.
 *
 * A file that shrinks under its mappings (truncated by anyone who may write
 * it) would kill every process that touches a lost page with SIGBUS, root's
 * `udmesg -B` included. While this process has log files mapped, a SIGBUS
 * handler is installed that recognises faults inside those mappings (their
 * address ranges are in a fixed table that the handler reads lock-free) and
 * replaces the whole mapping of that log with anonymous memory holding an
 * empty ring with the same geometry, the log state the file had when we
 * attached: the process stops using the file at once, and its writers go on
 * storing into a ring of their own (printk's consoles keep printing) instead
 * of into a file whose records are gone. The log is marked lost: the
 * pk_log_* calls on it return -ESTALE ("log file truncated"; -EIO when the
 * file still has its size and the page could not be read). Readers also
 * compare the file's size with the mapping when they find nothing new, so
 * they notice a truncation in parts they have not touched. Every other
 * SIGBUS goes on to the handler the program had, or kills the process as
 * it would have without us. A handler the program installs after ours
 * replaces it, and then the program is on its own; crash.c's fatal-signal
 * handler, installed after the log file, asks pk_logfile_repair_fault()
 * first.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "base/safe_open.h"
#include "log/log_internal.h"

#define PAGE 4096u

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pk_log *file_logs; /* writer file logs, for fork */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uint64_t round_page(uint64_t n)
{
	return (n + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

struct file_geometry {
	uint64_t region, registry_off, lock_off, file_size;
};

static void geometry_for(uint64_t region, struct file_geometry *g)
{
	g->region = region;
	g->registry_off = round_page(region);
	g->lock_off = g->registry_off + (uint64_t)PK_REGISTRY_ENTRIES * PK_REGISTRY_ENTRY_SIZE;
	g->file_size = round_page(g->lock_off + PK_REGISTRY_ENTRIES);
}

static int owner_alive(struct prb *rb, unsigned owner, uint32_t pid)
{
	return pk_registry_owner_alive(rb->owner_arg, owner, pid);
}

/* ---------------------------------------------------- lost mappings -- */

/*
 * The table the SIGBUS handler reads. A slot is taken and given back under
 * files_lock; the handler only reads it. It is published by storing start
 * last; before it is reused, start is cleared and the giver waits until no
 * handler holds it (users), so a handler never replaces memory that is no
 * longer a log's. The handler writes only the slot it holds.
 */
#define MAP_SLOTS 4096 /* log file handles open at once in one process */

enum { MAP_OK, MAP_REPAIRING, MAP_LOST };

struct map_slot {
	_Atomic uintptr_t start; /* 0: free */
	size_t len;
	int prot;
	int fd;
	unsigned char *pristine; /* the header page of an empty ring like the file's, or NULL */
	_Atomic int users;	 /* handlers looking at this slot */
	_Atomic int state;	 /* MAP_* */
	_Atomic int reason;	 /* once lost: -ESTALE (file shorter) or -EIO */
	bool used;		 /* files_lock */
};

static struct map_slot map_slots[MAP_SLOTS];
static unsigned map_slots_used;	  /* files_lock */
static struct sigaction prev_bus; /* written before our handler is installed */
static bool bus_installed;	  /* files_lock */

/*
 * The file behind @m lost pages we have mapped, or holds a ring too damaged
 * to write (@reason, or 0 to tell -ESTALE from -EIO by the file's size): put
 * anonymous memory over the whole mapping, an empty ring in it. One thread
 * does it; another that faults meanwhile waits for it (it cannot be this
 * thread: the new memory cannot fault). Async-signal-safe: fstat, mmap,
 * memcpy, mprotect.
 */
static bool repair_mapping(struct map_slot *m, int reason)
{
	int expect = MAP_OK;

	if (!atomic_compare_exchange_strong(&m->state, &expect, MAP_REPAIRING)) {
		while (atomic_load(&m->state) == MAP_REPAIRING)
			sched_yield();
		return atomic_load(&m->state) == MAP_LOST;
	}

	struct stat st;

	if (!reason)
		reason = fstat(m->fd, &st) == 0 && (uint64_t)st.st_size >= m->len ? -EIO : -ESTALE;

	void *start = (void *)atomic_load(&m->start);
	void *p = mmap(start, m->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED) {
		atomic_store(&m->state, MAP_OK); /* cannot help: the fault stays fatal */
		return false;
	}
	if (m->pristine) {
		/* Word by word, as atomics: other threads may be reading the
		 * header this very moment (atomics.h: every shared word is one). */
		pk_a64 *dst = p;

		for (size_t i = 0; i < PAGE / sizeof(uint64_t); i++) {
			uint64_t w;

			memcpy(&w, m->pristine + i * sizeof(w), sizeof(w));
			pk_store_relaxed(&dst[i], w);
		}
	}
	if (!(m->prot & PROT_WRITE))
		mprotect(p, m->len, PROT_READ);
	atomic_store(&m->reason, reason);
	atomic_store(&m->state, MAP_LOST);
	return true;
}

/* 1: @addr is in a log's mapping and the mapping is usable again; 0: the
 * fault is not ours (or could not be repaired). */
static bool repair_fault(void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	for (unsigned i = 0; i < MAP_SLOTS; i++) {
		struct map_slot *m = &map_slots[i];
		uintptr_t s = atomic_load(&m->start);

		if (!s || a - s >= m->len)
			continue;

		/* Hold the slot, then look again: it may have been given back. */
		bool ours = false, fixed = false;

		atomic_fetch_add(&m->users, 1);
		s = atomic_load(&m->start);
		if (s && a - s < m->len) {
			ours = true;
			fixed = repair_mapping(m, 0);
		}
		atomic_fetch_sub(&m->users, 1);
		if (ours)
			return fixed;
	}
	return false;
}

int pk_logfile_repair_fault(int sig, const siginfo_t *si)
{
	int saved = errno;
	bool fixed = sig == SIGBUS && si && si->si_code > 0 && repair_fault(si->si_addr);

	errno = saved;
	return fixed;
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	int saved = errno;

	if (!pk_logfile_repair_fault(sig, si))
		pk_signal_pass_on(sig, si, uctx, &prev_bus);
	errno = saved;
}

/* files_lock held. Read the old action first, install second, so the
 * handler never sees a half-copied previous action. */
static void bus_install(void)
{
	struct sigaction sa;

	if (bus_installed)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, NULL, &prev_bus) == 0 && sigaction(SIGBUS, &sa, NULL) == 0)
		bus_installed = true;
}

/* files_lock held: the last log file is gone; a handler installed on top of
 * ours stays (and may still chain to ours, which then passes everything on). */
static void bus_uninstall(void)
{
	struct sigaction cur;

	if (!bus_installed)
		return;
	if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_sigbus)
		sigaction(SIGBUS, &prev_bus, NULL);
	bus_installed = false;
}

/* Track @log's mapping (before anything in it is touched). Takes @pristine. */
static int map_track(struct pk_log *log, int prot, unsigned char *pristine)
{
	int err = -EMFILE;

	pthread_mutex_lock(&files_lock);
	for (unsigned i = 0; i < MAP_SLOTS; i++) {
		struct map_slot *m = &map_slots[i];

		if (m->used)
			continue;
		m->used = true;
		m->len = log->mapping_len;
		m->prot = prot;
		m->fd = log->fd;
		m->pristine = pristine;
		atomic_store(&m->state, MAP_OK);
		atomic_store(&m->reason, 0);
		atomic_store(&m->start, (uintptr_t)log->mapping);
		log->map_slot = (int)i;
		log->reg.lost = &m->state;
		if (map_slots_used++ == 0)
			bus_install();
		err = 0;
		break;
	}
	pthread_mutex_unlock(&files_lock);
	if (err)
		free(pristine);
	return err;
}

void pk_logfile_untrack(struct pk_log *log)
{
	if (log->map_slot < 0)
		return;

	struct map_slot *m = &map_slots[log->map_slot];

	pthread_mutex_lock(&files_lock);
	atomic_store(&m->start, 0);
	while (atomic_load(&m->users))
		sched_yield();
	free(m->pristine);
	m->pristine = NULL;
	m->used = false;
	if (--map_slots_used == 0)
		bus_uninstall();
	pthread_mutex_unlock(&files_lock);
	log->map_slot = -1;
	log->reg.lost = NULL;
}

int pk_log_go_private(struct pk_log *log, int reason)
{
	if (log->map_slot < 0 || reason >= 0)
		return -EINVAL;
	if (!repair_mapping(&map_slots[log->map_slot], reason))
		return -EIO;
	prb_memory_replaced(&log->rb);
	return 0;
}

int pk_logfile_lost(struct pk_log *log)
{
	if (log->map_slot < 0)
		return 0;

	struct map_slot *m = &map_slots[log->map_slot];

	switch (atomic_load(&m->state)) {
	case MAP_OK:
		return 0;
	case MAP_LOST:
		return atomic_load(&m->reason);
	default:
		return -ESTALE;
	}
}

int pk_logfile_check(struct pk_log *log)
{
	int err = pk_logfile_lost(log);
	struct stat st;

	if (err || log->map_slot < 0)
		return err;
	if (fstat(log->fd, &st) == 0 && (uint64_t)st.st_size < log->mapping_len)
		return -ESTALE; /* not touched yet, but gone */
	return 0;
}

/* log2 of @v, a power of two (the ring's sizes, validated at attach). */
static unsigned log2_of(uint64_t v)
{
	unsigned bits = 0;

	while (v > 1) {
		v >>= 1;
		bits++;
	}
	return bits;
}

/*
 * The header page of an empty ring of the geometry of @file (checked from
 * the file's header page @file_page), with the file's log state: what a
 * lost mapping is replaced with. NULL if the ring would not match the
 * handle (another id base): the mapping is then replaced with zeros.
 */
static unsigned char *make_pristine(const struct prb *file, const unsigned char *file_page)
{
	unsigned dbits = log2_of(file->data_size);
	unsigned cbits = log2_of(file->desc_count);
	void *mem = mmap(NULL, file->region_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned char *page = NULL;
	struct prb tmp;

	if (mem == MAP_FAILED)
		return NULL;
	if (prb_format_fresh(&tmp, mem, file->region_size, dbits, cbits) == 0 &&
	    tmp.id_base == file->id_base && tmp.region_size == file->region_size &&
	    tmp.user_size == file->user_size && (page = malloc(PAGE))) {
		size_t uoff = (size_t)(tmp.user - (uint8_t *)mem);

		memcpy(page, mem, PAGE);
		memcpy(page + uoff, file_page + uoff, tmp.user_size);

		/* Positions in the file's numbering mean nothing in a new ring. */
		struct pk_log_shared *sh = (struct pk_log_shared *)(page + uoff);

		atomic_store(&sh->clear_seq, 0);
		atomic_store(&sh->syslog_seq, 0);
		atomic_store(&sh->syslog_partial, 0);
		atomic_store(&sh->pollers, 0);
	}
	munmap(mem, file->region_size);
	return page;
}

/* ------------------------------------------------------------- fork -- */

static int register_writer(struct pk_log *log)
{
	int code = pk_registry_register(&log->reg);

	if (code < 0)
		return code;
	log->rb.owner = (uint16_t)code;
	log->writer = 1;
	return 0;
}

/*
 * The child shares the parent's open file description and with it the
 * parent's registry lock: it needs its own, or its records would look like
 * the parent's (and die with it). A new description of the same file comes
 * from /proc/self/fd, whatever the file is called by now.
 */
static void files_after_fork_child(void)
{
	pthread_mutex_init(&files_lock, NULL);
	for (struct pk_log *log = file_logs; log; log = log->next_file) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", log->fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue; /* keep the parent's identity: better than none */
		close(log->fd);
		log->fd = fd;
		log->reg.fd = fd;
		if (log->map_slot >= 0)
			map_slots[log->map_slot].fd = fd;
		register_writer(log);
	}
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, files_after_fork_child);
}

void pk_logfile_forget(struct pk_log *log)
{
	pthread_mutex_lock(&files_lock);
	for (struct pk_log **pp = &file_logs; *pp; pp = &(*pp)->next_file) {
		if (*pp == log) {
			*pp = log->next_file;
			break;
		}
	}
	pthread_mutex_unlock(&files_lock);
	log->file = 0;
}

static void release(struct pk_log *log)
{
	if (log->file)
		pk_logfile_forget(log);
	pk_logfile_untrack(log);
}

/* For log.c, through each handle made here (log_internal.h). */
static const struct pk_logfile_ops file_ops = {
	.release = release,
	.lost = pk_logfile_lost,
	.check = pk_logfile_check,
};

/* ---------------------------------------------------------- creating -- */

/*
 * Give the new (unpublished, all-zero) file its blocks now, so that no
 * store into its mapping can ever meet a page the file system cannot back.
 * Where the file system cannot reserve, zeros are written: the same
 * guarantee, paid for once at creation.
 */
static int reserve_blocks(int fd, uint64_t size)
{
	int err = posix_fallocate(fd, 0, (off_t)size);

	if (err != EOPNOTSUPP && err != ENOSYS)
		return -err;

	static const char zeros[PAGE];

	for (uint64_t off = 0; off < size; off += PAGE) {
		ssize_t n = pwrite(fd, zeros, PAGE, (off_t)off);

		if (n < 0)
			return -errno;
		if (n != PAGE)
			return -ENOSPC;
	}
	return 0;
}

static int create_file(const char *path, size_t log_buf_len, unsigned flags)
{
	unsigned bits = pk_log_data_bits_for(log_buf_len);

	if (!bits)
		return -EINVAL;

	struct file_geometry g;
	char dir[PATH_MAX], tmp[PATH_MAX];
	int fd, named = 0, err;

	geometry_for(prb_region_size(bits, 0), &g);
	err = pk_path_dir(path, dir, sizeof(dir));
	if (err)
		return err;
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* No O_TMPFILE here: a temporary name in the same directory. */
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp))
			return -ENAMETOOLONG;
		fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		named = 1;
	}
	/* The mode is ours, whatever the umask. */
	if (fchmod(fd, (flags & PK_LOG_GROUP_READ) ? 0640 : 0600) < 0 ||
	    ftruncate(fd, (off_t)g.file_size) < 0) {
		err = -errno;
		goto out;
	}
	err = reserve_blocks(fd, g.file_size);
	if (err)
		goto out;

	void *map = mmap(NULL, g.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}

	struct pk_log *log = pk_log_alloc();

	if (!log) {
		munmap(map, g.file_size);
		err = -ENOMEM;
		goto out;
	}
	log->fops = &file_ops;
	err = prb_format_fresh(&log->rb, map, g.file_size, bits, 0); /* the file is all zeros */
	if (!err) {
		pk_log_init_shared(log);

		struct pk_log_shared *sh = pk_log_shared(log);

		sh->file_size = g.file_size;
		sh->registry_off = g.registry_off;
		sh->lock_off = g.lock_off;
		sh->registry_entries = PK_REGISTRY_ENTRIES;
		sh->file_flags = flags & PK_LOG_GROUP_READ;
		/* A recreated file is another log to a reader that kept a
		 * position (a forwarder's cursor): it gets a new identity. */
		if (getrandom(sh->creation_id, sizeof(sh->creation_id), 0) !=
		    (ssize_t)sizeof(sh->creation_id)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			sh->creation_id[0] = (uint64_t)ts.tv_sec << 30 ^ (uint64_t)ts.tv_nsec;
			sh->creation_id[1] = (uint64_t)getpid();
		}
		msync(map, g.file_size, MS_SYNC);
	}
	free(log);
	munmap(map, g.file_size);
	if (err)
		goto out;

	/* Publish: link() never replaces an existing file. */
	if (named) {
		if (link(tmp, path) < 0)
			err = -errno;
	} else {
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
			err = -errno;
	}
out:
	if (named)
		unlink(tmp);
	close(fd);
	return err;
}

/* ---------------------------------------------------------- opening -- */

/* Files of kernel interfaces: reading them has effects (/proc/kmsg consumes
 * messages) or blocks, and none of them holds a log. */
static bool on_pseudo_fs(int fd)
{
	static const unsigned long magics[] = {
		0x9fa0,	    /* procfs */
		0x62656572, /* sysfs */
		0x64626720, /* debugfs */
		0x74726163, /* tracefs */
		0x73636673, /* securityfs */
		0x27e0eb,   /* cgroup */
		0x63677270, /* cgroup2 */
		0x62656570, /* configfs */
		0xcafe4a11, /* bpf */
		0xde5e81e4, /* efivarfs */
		0x6165676c, /* pstore */
	};
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if ((unsigned long)sf.f_type == magics[i])
			return true;
	return false;
}

/* ---------------------------------------------------------- attaching -- */

/* Check what the file says about itself (its header page, read into @page)
 * before mapping any of it; @probe gets the ring's geometry. */
static int validate_file(int fd, const struct stat *st, struct file_geometry *g,
			 unsigned char *page, struct prb *probe)
{
	ssize_t n = st->st_size ? pread(fd, page, PAGE, 0) : 0;

	if (n < 0)
		return -errno;
	memset(page + n, 0, PAGE - (size_t)n);

	int err = prb_check_header(probe, page, (size_t)n, (size_t)st->st_size);

	if (err)
		return err;

	struct pk_log_shared sh;

	memcpy(&sh, probe->user, sizeof(sh));
	geometry_for(probe->region_size, g);
	if (sh.magic != PK_LOG_STATE_MAGIC || sh.file_size != g->file_size ||
	    sh.registry_off != g->registry_off || sh.lock_off != g->lock_off ||
	    sh.registry_entries != PK_REGISTRY_ENTRIES)
		return -EBADMSG;
	if ((uint64_t)st->st_size < g->file_size)
		return -ENOSPC;
	return 0;
}

/*
 * A writer makes sure every page of an existing file is backed (a file
 * made sparse by an older libprintk, or copied with holes) where the file
 * system can tell; without that it relies on the SIGBUS handler.
 */
static int reserve_existing(int fd, const struct stat *st, uint64_t size)
{
	if ((uint64_t)st->st_blocks * 512 >= size)
		return 0;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) == 0)
		return 0;
	if (errno == ENOSPC || errno == EDQUOT)
		return -ENOSPC;
	return 0; /* cannot reserve here (compressed, or no fallocate): go on */
}

/* A log level kept in the file: 0..15 (the console's range), or @unsaved. */
static unsigned repair_level(struct pk_log *log, pk_a32 *v, const char *name, uint32_t def,
			     bool unsaved_ok)
{
	uint32_t cur = atomic_load(v);

	if (cur <= 15 || (unsaved_ok && cur == PK_LOG_LEVEL_UNSAVED))
		return 0;
	if (!atomic_compare_exchange_strong(v, &cur, def))
		return 0; /* another writer did it */

	char text[128];
	int n = snprintf(text, sizeof(text),
			 "printk: log file %s: %s was %u, out of range: reset to %u",
			 log->path ? log->path : "?", name, cur, def);

	if (n > 0)
		pk_log_store(log, 0, 5, text,
			     (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1, NULL, 0);
	return 1;
}

/*
 * The levels are read on every printk by every writer: one out of range
 * (written by a broken or hostile program) would mute or flood them all.
 * A writer puts each back to its default and says so in the log (a reader
 * cannot write: it leaves them).
 */
static void repair_levels(struct pk_log *log)
{
	struct pk_log_shared *sh = pk_log_shared(log);

	repair_level(log, &sh->default_console_loglevel, "default_console_loglevel", 7, false);
	repair_level(log, &sh->minimum_console_loglevel, "minimum_console_loglevel", 1, false);
	repair_level(log, &sh->console_loglevel, "console_loglevel",
		     atomic_load(&sh->default_console_loglevel), false);
	repair_level(log, &sh->saved_console_loglevel, "saved_console_loglevel",
		     PK_LOG_LEVEL_UNSAVED, true);
}

/*
 * The newest record may be a line whose writer died before ending it. It
 * is finalized as it is: continued by us (a new process can have the dead
 * one's pid and thread id: pid 1 of every container), or printed by our
 * consoles as if it were ours, with its old timestamp, it would mislead.
 */
static void end_dead_open_line(struct pk_log *log)
{
	struct prb_record *r = malloc(sizeof(*r));

	if (!r)
		return;
	if (prb_read(&log->rb, prb_next_seq(&log->rb), r, PRB_READ_UNFINALIZED) == 0 &&
	    (r->rflags & PRB_REC_UNFINALIZED) &&
	    !pk_registry_pid_writes(&log->reg, r->caller.pid, log->rb.owner))
		prb_finalize_last_of(&log->rb, r->caller.pid);
	free(r);
}

static int other_writer_alive(struct pk_log *log, unsigned mine);

/*
 * The first writer after a crash (no other writer alive) makes holes of
 * what nobody will finish and of records that fail their checks (a file
 * whose pages were written back at different moments), at once rather than
 * one stall at a time, and says so in the log.
 */
static void recover_after_crash(struct pk_log *log)
{
	struct prb_record *r;

	if (other_writer_alive(log, log->rb.owner >> PK_REGISTRY_GEN_BITS) || !(r = malloc(sizeof(*r))))
		return;
	struct prb_stats before, after;

	prb_get_stats(&log->rb, &before);
	/* A lanes' merger that died in a batch: its records go where it
	 * reserved them before what nobody finishes becomes holes. */
	prb_lanes_finish(&log->rb);
	unsigned made = prb_recover(&log->rb, r);

	free(r);
	prb_get_stats(&log->rb, &after);
	if (after.corrupt > before.corrupt) {
		char note[160];
		int n = snprintf(note, sizeof(note),
				 "printk: %llu damaged records of this log file dropped (%u records made holes)",
				 (unsigned long long)(after.corrupt - before.corrupt), made);

		if (n > 0)
			pk_log_store(log, 0, 4, note, (size_t)n, NULL, 0);
	}
}

static int attach_file(struct pk_log **logp, const char *path, unsigned flags)
{
	int writable = !(flags & PK_LOG_RDONLY);
	int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
	/* O_NONBLOCK: opening a FIFO (not a log, refused below) must not hang. */
	int fd = pk_open_safe(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
			      0, 0);
	struct stat st;
	struct file_geometry g = { 0 };
	struct prb probe;
	unsigned char *page = NULL, *pristine;
	int err;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || on_pseudo_fs(fd)) {
		err = -EPROTO;
		goto fail;
	}
	if (writable && st.st_uid != geteuid()) {
		err = -EACCES; /* another user's log: never write into it */
		goto fail;
	}
	if (writable && (st.st_mode & 0022)) {
		err = -EACCES; /* others may write it: forged records, bent header */
		goto fail;
	}
	page = aligned_alloc(64, PAGE);
	if (!page) {
		err = -ENOMEM;
		goto fail;
	}
	err = validate_file(fd, &st, &g, page, &probe);
	if (!err && writable)
		err = reserve_existing(fd, &st, g.file_size);
	if (err)
		goto fail;
	pristine = make_pristine(&probe, page);
	free(page);
	page = NULL;

	void *map = mmap(NULL, g.file_size, prot, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED) {
		free(pristine);
		err = -errno;
		goto fail;
	}

	struct pk_log *log = pk_log_alloc();

	if (!log) {
		munmap(map, g.file_size);
		free(pristine);
		err = -ENOMEM;
		goto fail;
	}
	log->fops = &file_ops;
	log->mapping = map;
	log->mapping_len = g.file_size;
	log->fd = fd;
	log->flags = flags;
	log->path = strdup(path);
	err = map_track(log, prot, pristine); /* before the first access */
	if (!err && fstat(fd, &st) == 0 && (uint64_t)st.st_size < g.file_size)
		err = -ENOSPC; /* truncated since we checked */
	if (!err)
		err = prb_attach(&log->rb, map, g.file_size, writable);
	if (!err && pk_log_shared(log)->magic != PK_LOG_STATE_MAGIC)
		err = -EBADMSG;
	if (!err)
		err = pk_logfile_lost(log);
	if (err) {
		log->fd = -1;
		pk_log_destroy(log);
		goto fail;
	}
	log->reg.entries = (struct pk_registry_entry *)((uint8_t *)map + g.registry_off);
	log->reg.fd = fd;
	log->reg.lock_off = g.lock_off;
	log->reg.nentries = PK_REGISTRY_ENTRIES;
	log->rb.owner_arg = &log->reg;
	log->rb.owner_alive = owner_alive;
	if (writable) {
		err = register_writer(log);
		if (err) {
			pk_log_destroy(log);
			return err;
		}
		/* The wall-clock offset as this writer sees it (for readers' -T). */
		atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)pk_realtime_offset_ns());
		end_dead_open_line(log);
		recover_after_crash(log);
		repair_levels(log);
		pthread_once(&atfork_once, install_atfork);
		pthread_mutex_lock(&files_lock);
		log->next_file = file_logs;
		file_logs = log;
		log->file = 1;
		pthread_mutex_unlock(&files_lock);
	}
	*logp = log;
	return 0;
fail:
	free(page);
	close(fd);
	return err;
}

/*
 * A writer found @path damaged beyond what attaching can take (-EBADMSG: a
 * torn write-back after a machine crash, a flipped bit): if no process
 * writes it (none holds any lock on it: every writer holds its registry
 * byte), move it aside to "@path.damaged" (replacing an older one) and make
 * a fresh log at @path. The whole-file lock held meanwhile keeps a second
 * process from doing the same to the fresh file. Returns 0 (and the copy's
 * name in @kept), -EBADMSG if a writer still uses the file, -EAGAIN if it
 * was replaced meanwhile (attach again), or another negative errno.
 */
static int start_new_generation(const char *path, size_t log_buf_len, unsigned flags, char *kept,
				size_t kept_size)
{
	int fd = pk_open_safe(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0, 0);

	if (fd < 0)
		return fd;

	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
	struct stat a, b;
	int err;

	if (fcntl(fd, F_OFD_SETLK, &fl) < 0)
		err = errno == EAGAIN || errno == EACCES ? -EBADMSG : -errno;
	else if (fstat(fd, &a) < 0 || stat(path, &b) < 0 || a.st_dev != b.st_dev ||
		 a.st_ino != b.st_ino)
		err = -EAGAIN;
	else if ((size_t)snprintf(kept, kept_size, "%s.damaged", path) >= kept_size)
		err = -ENAMETOOLONG;
	else if (rename(path, kept) < 0)
		err = -errno;
	else if ((err = create_file(path, log_buf_len, flags)) == -EEXIST)
		err = -EAGAIN;
	close(fd);
	return err;
}

const char *pk_log_damaged_copy(const struct pk_log *log)
{
	return log ? log->damaged_copy : NULL;
}

int pk_log_open_file(struct pk_log **logp, const char *path, size_t log_buf_len, unsigned flags)
{
	if (!logp || !path || !*path || (flags & ~(PK_LOG_RDONLY | PK_LOG_GROUP_READ | PK_LOG_SYNC)))
		return -EINVAL;
	if (log_buf_len && !pk_log_data_bits_for(log_buf_len))
		return -EINVAL;

	int err = attach_file(logp, path, flags);

	if (err == -ENOENT && !(flags & PK_LOG_RDONLY)) {
		err = create_file(path, log_buf_len, flags);
		if (err && err != -EEXIST)
			return err;
		err = attach_file(logp, path, flags);
	}
	if (err == -EBADMSG && !(flags & PK_LOG_RDONLY)) {
		char kept[PATH_MAX], note[PATH_MAX + 128];
		int moved = start_new_generation(path, log_buf_len, flags, kept, sizeof(kept));

		if (moved == 0 || moved == -EAGAIN)
			err = attach_file(logp, path, flags);
		if (!err && moved == 0) {
			int n = snprintf(note, sizeof(note),
					 "printk: log file %s was damaged: kept as %s, a new log starts here",
					 path, kept);

			size_t len = n < 0 ? 0 : (size_t)n;

			(*logp)->damaged_copy = strdup(kept);
			pk_log_store(*logp, 0, 4, note, len > PK_TEXT_MAX ? PK_TEXT_MAX : len, NULL, 0);
		}
	}
	return err;
}

/* 1 if a writer other than the one in registry slot @mine is alive. */
static int other_writer_alive(struct pk_log *log, unsigned mine)
{
	for (unsigned slot = 1; slot < log->reg.nentries; slot++) {
		struct pk_registry_entry *e = &log->reg.entries[slot];

		if (slot == mine || atomic_load(&e->gen) == 0)
			continue; /* ours, or never used */
		unsigned gen = atomic_load(&e->gen) & ((1u << PK_REGISTRY_GEN_BITS) - 1);

		if (pk_registry_owner_alive(&log->reg, slot << PK_REGISTRY_GEN_BITS | gen,
					    atomic_load(&e->pid)))
			return 1;
	}
	return 0;
}

int pk_log_writer_name(struct pk_log *log, uint32_t pid, char *buf, size_t size)
{
	char name[16];
	int err = 0;

	if (!log || !buf || !size)
		return -EINVAL;
	if (log->image) {
		/* A core names its one process. */
		if (pid != log->image_pid || !log->image_comm[0])
			return -ENOENT;
		memcpy(name, log->image_comm, sizeof(name));
	} else if (pid == (uint32_t)getpid())
		pk_registry_own_name(name);
	else if (!log->path || (err = pk_registry_name(&log->reg, pid, name)))
		return err ? err : -ENOENT;

	size_t n = strnlen(name, sizeof(name) - 1);

	if (n >= size)
		n = size - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return 0;
}

int pk_log_writers_alive(struct pk_log *log)
{
	if (log->image)
		return 0;
	if (!log->path)
		return 1;
	if (log->writer)
		return 1;
	return other_writer_alive(log, 0);
}

int pk_log_sync(struct pk_log *log)
{
	if (!log || !log->path || !log->mapping || !log->rb.writable)
		return 0;

	int lost = pk_logfile_lost(log);

	if (lost)
		return lost;
	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)pk_realtime_offset_ns());
	return msync(log->mapping, log->mapping_len, MS_SYNC) < 0 ? -errno : 0;
}
