// SPDX-License-Identifier: MIT
/*
 * log.c - log handles: who owns which ring, and the pk_log_* calls.
 *
 * A handle is process-local (malloc'ed at create/attach time, never on a
 * printing path); the ring it points to may live in memory the handle owns
 * (pk_log_create: an anonymous mapping), in memory the caller owns
 * (pk_log_create_in, pk_log_attach) or in a shared file (logfile.c).
 *
 * An image (pk_log_open_image) is a dead process's log in memory a reader
 * owns, a copy of what a core file holds: read-only, every word of it
 * untrusted, and nobody will ever finish what it left open.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/deferred.h"
#include "format/record_read.h"
#include "log/log_internal.h"
#include "readers/reader.h"
#include "ring/store.h"

struct pk_log *pk_log_alloc(void)
{
	struct pk_log *log = calloc(1, sizeof(*log));

	if (log) {
		log->fd = -1;
		log->map_slot = -1;
	}
	return log;
}

PK_HOT struct prb *pk_log_ring(struct pk_log *log)
{
	return &log->rb;
}

_Static_assert(sizeof(struct pk_log_shared) <= 2048, "log state must fit the ring's user area");

PK_HOT struct pk_log_shared *pk_log_shared(struct pk_log *log)
{
	return (struct pk_log_shared *)log->rb.user;
}

void pk_log_init_shared(struct pk_log *log)
{
	struct pk_log_shared *sh = pk_log_shared(log);

	memset(sh, 0, sizeof(*sh));
	atomic_store(&sh->console_loglevel, 7);
	atomic_store(&sh->saved_console_loglevel, PK_LOG_LEVEL_UNSAVED);
	atomic_store(&sh->minimum_console_loglevel, 1);
	atomic_store(&sh->default_console_loglevel, 7);
	atomic_store(&sh->realtime_offset_ns, (uint64_t)pk_realtime_offset_ns());
	sh->magic = PK_LOG_STATE_MAGIC;
}

/* log2 of the power of two that @len rounds up to, or 0 if out of range. */
unsigned pk_log_data_bits_for(size_t len)
{
	if (len == 0)
		len = PK_LOG_BUF_LEN_DEFAULT;
	if (len < PK_LOG_BUF_LEN_MIN || len > PK_LOG_BUF_LEN_MAX)
		return 0;

	unsigned bits = 0;

	while (((size_t)1 << bits) < len)
		bits++;
	if (bits < PRB_DATA_MIN_BITS || bits > PRB_DATA_MAX_BITS)
		return 0;
	return bits;
}

size_t pk_log_region_size(size_t log_buf_len)
{
	unsigned bits = pk_log_data_bits_for(log_buf_len);

	return bits ? prb_region_size(bits, 0) : 0;
}

static int create_in(struct pk_log **logp, void *region, size_t region_len, size_t log_buf_len,
		     bool fresh)
{
	unsigned bits = pk_log_data_bits_for(log_buf_len);

	if (!logp || !region || !bits)
		return -EINVAL;

	struct pk_log *log = pk_log_alloc();

	if (!log)
		return -ENOMEM;

	int err = fresh ? prb_format_fresh(&log->rb, region, region_len, bits, 0)
			: prb_format(&log->rb, region, region_len, bits, 0);

	if (err) {
		free(log);
		return err;
	}
	pk_log_init_shared(log);
	*logp = log;
	return 0;
}

int pk_log_create_in(struct pk_log **logp, void *region, size_t region_len, size_t log_buf_len)
{
	return create_in(logp, region, region_len, log_buf_len, false);
}

int pk_log_create(struct pk_log **logp, size_t log_buf_len)
{
	size_t len = pk_log_region_size(log_buf_len);

	if (!logp || !len)
		return -EINVAL;

	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return -ENOMEM;

	int err = create_in(logp, mem, len, log_buf_len, true); /* anonymous memory is zero */

	if (err) {
		munmap(mem, len);
		return err;
	}
	(*logp)->mapping = mem;
	(*logp)->mapping_len = len;
	return 0;
}

int pk_log_attach(struct pk_log **logp, void *region, size_t region_len, unsigned flags)
{
	if (!logp || !region || (flags & ~PK_LOG_RDONLY))
		return -EINVAL;

	struct pk_log *log = pk_log_alloc();

	if (!log)
		return -ENOMEM;

	int err = prb_attach(&log->rb, region, region_len, !(flags & PK_LOG_RDONLY));

	if (!err && pk_log_shared(log)->magic != PK_LOG_STATE_MAGIC)
		err = -EBADMSG;
	if (err) {
		free(log);
		return err;
	}
	*logp = log;
	return 0;
}

/* ------------------------------------------------------------ images -- */

/* Every writer of an image is dead (records of a log file's ring carry
 * their writer's registry slot; a memory log's carry none). */
static int image_owner_alive(struct prb *rb, unsigned owner, uint32_t pid)
{
	(void)rb;
	(void)owner;
	(void)pid;
	return 0;
}

int pk_log_image_probe(const void *head, size_t avail, struct pk_log_image_info *info)
{
	static const size_t page_size = 4096; /* the ring's header: one page */
	_Alignas(64) unsigned char page[4096];
	struct prb probe;

	if (!head || !info)
		return -EINVAL;
	info->region_len = 0;
	if (avail < 8)
		return -EPROTO;
	/* The magic alone first: most places of a core are not a log. */
	memcpy(page, head, 8);
	int err = prb_check_header(&probe, page, 8, SIZE_MAX);

	if (err != -ENOSPC)
		return err ? err : -EPROTO;

	size_t n = avail < page_size ? avail : page_size;

	memcpy(page, head, n);
	memset(page + n, 0, page_size - n);
	err = prb_check_header(&probe, page, n, SIZE_MAX);
	if (err)
		return err;
	info->region_len = probe.region_size;
	if (n < page_size)
		return -ENOSPC; /* the header page itself is cut off */

	struct pk_log_shared sh;

	memcpy(&sh, probe.user, sizeof(sh));
	if (sh.magic != PK_LOG_STATE_MAGIC)
		return -EBADMSG;
	info->file = sh.file_size != 0;
	info->printk = (atomic_load(&sh.roles) & PK_LOG_ROLE_PRINTK) != 0;
	return 0;
}

int pk_log_open_image(struct pk_log **logp, const void *image, size_t len, uint32_t pid,
		      const char *comm)
{
	if (!logp || !image)
		return -EINVAL;

	struct pk_log *log = pk_log_alloc();

	if (!log)
		return -ENOMEM;

	/* Read-only: the ring keeps a read-only handle's own state in the
	 * handle, never in the region (ringbuffer.h), so the cast is safe. */
	int err = prb_attach(&log->rb, (void *)(uintptr_t)image, len, false);

	if (!err && pk_log_shared(log)->magic != PK_LOG_STATE_MAGIC)
		err = -EBADMSG;
	if (err) {
		free(log);
		return err;
	}
	log->rb.owner_alive = image_owner_alive;
	log->image = true;
	log->image_pid = pid;
	if (comm) {
		size_t n = strnlen(comm, sizeof(log->image_comm) - 1);

		memcpy(log->image_comm, comm, n);
		log->image_comm[n] = '\0';
	}
	*logp = log;
	return 0;
}

void pk_log_destroy(struct pk_log *log)
{
	if (!log)
		return;
	if (log->fops)
		log->fops->release(log);
	pk_deferred_forget(&log->rb);
	prb_lanes_forget(&log->rb);
	if (log->mapping)
		munmap(log->mapping, log->mapping_len);
	if (log->fd >= 0)
		close(log->fd);
	free(log->path);
	free(log->damaged_copy);
	free(log);
}

size_t pk_log_buf_len(const struct pk_log *log)
{
	return log ? (size_t)log->rb.data_size : 0;
}

int pk_log_store(struct pk_log *log, int facility, int level, const char *text, size_t text_len,
		 const char *dict, size_t dict_len)
{
	if (!log || level < 0 || level > 7 || facility < 0 || facility > 255 || (text_len && !text) ||
	    (dict_len && !dict))
		return -EINVAL;
	if (text_len > PRB_TEXT_MAX || dict_len > PRB_DICT_MAX)
		return -E2BIG; /* refused whole, as documented: pk_store_line() would cut it */

	int lost = log->fops ? log->fops->lost(log) : 0;

	if (lost)
		return lost; /* the file is gone: this log stores nothing more */

	struct pk_line l = {
		.ts_nsec = pk_clock_ns(),
		.facility = facility,
		.level = level,
		.text = text,
		.len = text_len,
		.dict = dict,
		.dict_len = dict_len,
		.newline = true,
	};
	struct prb_caller me;
	uint64_t seq;

	/* Counted as printk counts itself: a printk in a signal handler that
	 * interrupted this store must not wait for the record it holds. */
	pk_sigdepth_enter();

	int r = pk_store_line(&log->rb, &l, &me, &seq);

	pk_sigdepth_leave();
	return r < 0 ? r : 0;
}

int pk_log_read(struct pk_log *log, uint64_t seq, struct pk_record *rec, unsigned flags)
{
	if (!log || !rec || (flags & ~PK_READ_UNFINALIZED))
		return -EINVAL;

	struct prb_record r;
	int err = log->fops ? log->fops->lost(log) : 0;
	unsigned rflags = flags & PK_READ_UNFINALIZED ? PRB_READ_UNFINALIZED : 0;

	/* A dead process finishes nothing: what it was writing is lost. */
	if (log->image)
		rflags |= PRB_READ_SKIP_UNFINISHED;
	if (!err)
		err = pk_rec_read(&log->rb, seq, &r, rflags);
	/* Only the newest record of a dead process is an open line; an older
	 * one merely waited for the finalizing its writer never got to. */
	if (!err && log->image && (r.rflags & PRB_REC_UNFINALIZED) &&
	    r.seq + 1 != prb_next_reserve_seq(&log->rb))
		r.rflags &= (uint8_t)~PRB_REC_UNFINALIZED;
	/* Nothing new: is the file still all there? And a record read while
	 * the file went away may be half the file's, half the new ring's. */
	if (err == -EAGAIN || !err) {
		int lost = !log->fops ? 0 : err ? log->fops->check(log) : log->fops->lost(log);

		if (lost)
			err = lost;
	}
	if (err)
		return err;
	pk_record_from_ring(rec, &r);
	return 0;
}

void pk_record_from_ring(struct pk_record *rec, const struct prb_record *r)
{
	rec->seq = r->seq;
	rec->ts_nsec = r->ts_nsec;
	rec->pid = r->caller.pid;
	rec->tid = r->caller.tid;
	rec->sigdepth = (uint8_t)(r->caller.ctx >> 56); /* printk nesting depth */
	rec->level = r->level;
	rec->facility = r->facility;
	rec->flags = r->flags;
	rec->state = (r->rflags & PRB_REC_UNFINALIZED) ? PK_REC_UNFINALIZED : PK_REC_FINAL;
	rec->text_len = r->text_len;
	rec->dict_len = r->dict_len;
	memcpy(rec->text, r->text, (size_t)r->text_len + 1);
	memcpy(rec->dict, r->dict, (size_t)r->dict_len + 1);
}

int pk_log_check(struct pk_log *log)
{
	if (!log)
		return -EINVAL;
	return log->fops ? log->fops->check(log) : 0;
}

int pk_log_realtime_offset(struct pk_log *log, int64_t *offset_ns)
{
	if (!log || !offset_ns)
		return -EINVAL;
	*offset_ns = (int64_t)atomic_load_explicit(&pk_log_shared(log)->realtime_offset_ns, memory_order_relaxed);
	return 0;
}

uint64_t pk_log_first_seq(struct pk_log *log)
{
	return prb_first_seq(&log->rb);
}

uint64_t pk_log_next_seq(struct pk_log *log)
{
	return prb_next_seq(&log->rb);
}

const char *pk_log_strerror(int err)
{
	switch (err) {
	case -E2BIG:
		return "record text or dictionary too long";
	case -ENOBUFS:
		return "log full of records still being written";
	case -EAGAIN:
		return "no record available yet";
	case -EPERM:
		return "log handle is read-only";
	case -ENOMEM:
		return "out of memory";
	case -ENOENT:
		return "no such log file";
	case -EACCES:
		return "permission denied (or the log file is another user's, or others may write it)";
	case -EUSERS:
		return "too many processes write this log";
	case -EISDIR:
		return "the log file is a directory";
	case -ELOOP:
		return "the log file is a symbolic link that another user controls (not followed)";
	case -ESTALE:
		return "log file truncated: its records are gone";
	case -EIO:
		return "log file unreadable or corrupted (I/O error)";
	case -ENOSPC:
		return "no space for the log (file system full, or file or region truncated)";
	case -EDQUOT:
		return "disk quota exceeded";
	case -EMFILE:
		return "too many log files open in this process";
	case -EBUSY:
		return "the log is in use: its size and file are fixed once a message was stored";
	case -EEXIST:
		return "file exists";
	case -ENAMETOOLONG:
		return "log file name too long";
	case -EBADF:
		return "bad file descriptor";
	case -EROFS:
		return "read-only file system";
	case -ENOTDIR:
		return "a component of the log file's path is not a directory";
	default:
		return prb_strerror(err);
	}
}
