// SPDX-License-Identifier: MIT
/*
 * logfile.c - a log in a shared file: creation, validation, attaching, the
 * writer registry, fork.
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
 * end up sharing one. Everything read from an existing file is validated
 * before it is mapped or trusted: a foreign, truncated, corrupted file or one
 * of another ABI version is refused with a clear error and left untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_internal.h"

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

/* ---------------------------------------------------------- creating -- */

static int create_file(const char *path, size_t log_buf_len, unsigned flags)
{
	unsigned bits = pk_log_data_bits_for(log_buf_len);

	if (!bits)
		return -EINVAL;

	struct file_geometry g;
	char dir[PATH_MAX], tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, named = 0, err = 0;

	geometry_for(prb_region_size(bits, 0), &g);
	if (slash) {
		size_t n = (size_t)(slash - path);

		if (n >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, n ? n : 1);
		dir[n ? n : 1] = '\0';
	} else {
		strcpy(dir, ".");
	}
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
	err = prb_format_fresh(&log->rb, map, g.file_size, bits, 0); /* ftruncate zero-fills */
	if (!err) {
		pk_log_init_shared(log);

		struct pk_log_shared *sh = pk_log_shared(log);

		sh->file_size = g.file_size;
		sh->registry_off = g.registry_off;
		sh->lock_off = g.lock_off;
		sh->registry_entries = PK_REGISTRY_ENTRIES;
		sh->file_flags = flags & PK_LOG_GROUP_READ;
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

/* ---------------------------------------------------------- attaching -- */

/* Check what the file says about itself before mapping any of it. */
static int validate_file(int fd, const struct stat *st, struct file_geometry *g)
{
	static _Alignas(64) unsigned char page[PAGE]; /* only touched under files_lock */
	struct prb probe;
	ssize_t n = pread(fd, page, sizeof(page), 0);

	if (n < 0)
		return -errno;
	memset(page + n, 0, sizeof(page) - (size_t)n);

	int err = prb_check_header(&probe, page, (size_t)n, (size_t)st->st_size);

	if (err)
		return err;

	struct pk_log_shared sh;

	memcpy(&sh, probe.user, sizeof(sh));
	geometry_for(probe.region_size, g);
	if (sh.magic != PK_LOG_STATE_MAGIC || sh.file_size != g->file_size ||
	    sh.registry_off != g->registry_off || sh.lock_off != g->lock_off ||
	    sh.registry_entries != PK_REGISTRY_ENTRIES)
		return -EBADMSG;
	if ((uint64_t)st->st_size < g->file_size)
		return -ENOSPC;
	return 0;
}

static int attach_file(struct pk_log **logp, const char *path, unsigned flags)
{
	int writable = !(flags & PK_LOG_RDONLY);
	/* O_NONBLOCK: opening a FIFO (not a log, refused below) must not hang. */
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	struct file_geometry g = { 0 };
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EPROTO;
		goto fail;
	}
	if (writable && st.st_uid != geteuid()) {
		err = -EACCES; /* another user's log: never write into it */
		goto fail;
	}
	pthread_mutex_lock(&files_lock);
	err = validate_file(fd, &st, &g);
	pthread_mutex_unlock(&files_lock);
	if (err)
		goto fail;

	void *map = mmap(NULL, g.file_size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
			 fd, 0);

	if (map == MAP_FAILED) {
		err = -errno;
		goto fail;
	}

	struct pk_log *log = pk_log_alloc();

	if (!log) {
		munmap(map, g.file_size);
		err = -ENOMEM;
		goto fail;
	}
	log->mapping = map;
	log->mapping_len = g.file_size;
	log->fd = fd;
	log->flags = flags;
	log->path = strdup(path);
	err = prb_attach(&log->rb, map, g.file_size, writable);
	if (!err && pk_log_shared(log)->magic != PK_LOG_STATE_MAGIC)
		err = -EBADMSG;
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
	close(fd);
	return err;
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
	return err;
}

int pk_log_writers_alive(struct pk_log *log)
{
	if (!log->path)
		return 1;
	if (log->writer)
		return 1;
	for (unsigned slot = 1; slot < log->reg.nentries; slot++) {
		struct pk_registry_entry *e = &log->reg.entries[slot];

		if (atomic_load(&e->gen) == 0)
			continue; /* never used */
		unsigned gen = atomic_load(&e->gen) & ((1u << PK_REGISTRY_GEN_BITS) - 1);

		if (pk_registry_owner_alive(&log->reg, slot << PK_REGISTRY_GEN_BITS | gen,
					    atomic_load(&e->pid)))
			return 1;
	}
	return 0;
}

int pk_log_sync(struct pk_log *log)
{
	if (!log || !log->path || !log->mapping || !log->rb.writable)
		return 0;
	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)pk_realtime_offset_ns());
	return msync(log->mapping, log->mapping_len, MS_SYNC) < 0 ? -errno : 0;
}
