// SPDX-License-Identifier: MIT
/*
 * syslog.c - the syslog(2) actions (klogctl) on a log, with the kernel's
 * numbering, semantics and return values (Linux 6.x do_syslog(),
 * syslog_print(), syslog_print_all(), find_first_fitting_seq()).
 *
 * Owns no state of its own: the positions live in the log's shared state
 * (struct pk_log_shared), so every process that uses the log shares them,
 * as /proc/kmsg readers share the kernel's:
 *   clear_seq       first record after the last CLEAR (READ_ALL starts there;
 *                   /dev/kmsg SEEK_DATA and kmsg_dump_rewind use it too);
 *   syslog_seq      READ's position, syslog_partial bytes into that record;
 *   console_loglevel, saved_console_loglevel, minimum_console_loglevel.
 *
 * Text: each line of each record as "<prio>[    ts.usec] line\n"
 * (textfmt.c, the kernel's record_print_text with a PRINTK_MESSAGE_MAX
 * buffer). Only finalized records are read; an open line appears once it is
 * finalized. A reader that fell behind the oldest record silently moves up
 * to it, as the kernel's do.
 *
 * Invariants:
 *   S1 syslog_seq and syslog_partial change together, under syslog_lock;
 *      syslog_partial < the formatted size of the record at syslog_seq.
 *   S2 The time flag used for a partly read record is the one in force when
 *      its first byte was read (syslog_fmt), so a second READ continues at
 *      the right byte even if printk.time changed in between.
 *
 * Deliberate differences from the kernel:
 *   - no permission checks (dmesg_restrict, CAP_SYSLOG): there is no
 *     privilege boundary inside a process;
 *   - sizes (READ_ALL's fitting, SIZE_UNREAD) are the bytes READ actually
 *     returns, i.e. after the 2047-byte per-record cut; the kernel counts a
 *     record with more lines than fit at its uncut size;
 *   - syslog_lock is per process: READs from two processes sharing one log
 *     are not serialised against each other (each still gets whole bytes);
 *   - a read-only handle (PK_LOG_RDONLY) refuses the actions that write the
 *     shared state (READ, READ_CLEAR, CLEAR, CONSOLE_*) with -EPERM, and
 *     SIZE_UNREAD on it does not move a lagging syslog_seq;
 *   - SIZE_BUFFER and SIZE_UNREAD saturate at INT_MAX (a 2 GiB log).
 *
 * Context: not async-signal-safe (READ sleeps and takes a mutex); every
 * action is thread-safe.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <printk/printk.h>
#include <printk/syslog.h>

#include "base/hints.h"
#include "base/printk_limits.h"
#include "format/record_read.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "record/textfmt.h"
#include "ring/caller.h"

/* A blocked READ looks again at least this often (see syslog_read()). */
#define SYSLOG_WAIT_SLICE_NS (200 * 1000 * 1000ll)

/* Serialises READ and SIZE_UNREAD (S1), and orders CLEAR/READ_CLEAR. */
static pthread_mutex_t syslog_lock = PTHREAD_MUTEX_INITIALIZER;
/* S2: the prefix settings of the record at syslog_seq once partly read. */
static struct pk_textfmt syslog_fmt;

/* ------------------------------------------------------------ helpers -- */

/* Bytes READ/READ_ALL give for @r. */
static size_t syslog_size(const struct prb_record *r, const struct pk_textfmt *f)
{
	return pk_format_record_text(NULL, PK_MESSAGE_MAX, r, f);
}

/* ------------------------------------------------------------- READ (2) -- */

static int syslog_read(struct pk_log *log, char *buf, int size)
{
	struct prb *rb = pk_log_ring(log);
	struct pk_log_shared *sh = pk_log_shared(log);
	struct prb_record r;
	char text[PK_MESSAGE_MAX];
	int len = 0;
	uint64_t seq;

	if (!buf || size < 0)
		return -EINVAL;
	if (size == 0)
		return 0;
	if (!rb->writable)
		return -EPERM;

	/* Wait for a record at syslog_seq, which may move while we sleep: wait
	 * without the lock, then check that nobody consumed it meanwhile. */
	pthread_mutex_lock(&syslog_lock);
	do {
		seq = pk_load_acquire(&sh->syslog_seq);
		pthread_mutex_unlock(&syslog_lock);
		/* Readable, as SIZE_UNREAD counts it: the next record, or one
		 * after a slot its dead writer never finished, which readers
		 * pass once it stalled for the ring's bound. Waiting in slices
		 * sees that bound run out, as no writer may wake us for it. */
		while (prb_next_seq(rb) <= seq && pk_rec_read(rb, seq, &r, 0) != 0) {
			if (prb_wait(rb, seq, SYSLOG_WAIT_SLICE_NS) == -EINTR)
				return -EINTR; /* the kernel's -ERESTARTSYS */
		}
		pthread_mutex_lock(&syslog_lock);
	} while (pk_load_acquire(&sh->syslog_seq) != seq);

	/* Whole records while they fit; the first one in part if it does not. */
	uint64_t partial = pk_load_relaxed(&sh->syslog_partial);

	do {
		if (pk_rec_read(rb, seq, &r, 0))
			break;
		if (r.seq != seq) {
			seq = r.seq; /* lost: go on from the oldest left */
			partial = 0;
		}
		if (partial == 0)
			pk_textfmt_current(&syslog_fmt, true);

		size_t n = pk_format_record_text(text, sizeof(text), &r, &syslog_fmt);
		size_t skip = partial < n ? (size_t)partial : n;

		if (n - skip <= (size_t)size) {
			seq = r.seq + 1;
			n -= skip;
			partial = 0;
		} else if (len == 0) {
			/* Exactly @size bytes, the rest later (docs/kernel-compat.md,
			 * section 9.3). */
			n = (size_t)size;
			partial += n;
		} else {
			n = 0;
		}
		if (n == 0)
			break;
		memcpy(buf, text + skip, n);
		len += (int)n;
		size -= (int)n;
		buf += n;
	} while (size > 0);
	pk_store_relaxed(&sh->syslog_partial, partial);
	pk_store_release(&sh->syslog_seq, seq);
	pthread_mutex_unlock(&syslog_lock);
	return len;
}

/* ----------------------------------------------- READ_ALL / READ_CLEAR -- */

static int syslog_read_all(struct pk_log *log, char *buf, int size, bool clear)
{
	struct prb *rb = pk_log_ring(log);
	struct pk_log_shared *sh = pk_log_shared(log);
	struct prb_record r;
	struct pk_textfmt f;
	char text[PK_MESSAGE_MAX];
	int len = 0;

	if (!buf || size < 0)
		return -EINVAL;
	if (size == 0)
		return 0;
	if (clear && !rb->writable)
		return -EPERM;
	pk_textfmt_current(&f, true);

	/* Sizes as READ_ALL copies them: each record cut at PK_MESSAGE_MAX. */
	uint64_t seq = pk_first_fitting_seq(rb, pk_load_acquire(&sh->clear_seq), UINT64_MAX,
					    (size_t)size, PK_MESSAGE_MAX, &f, 0, &r, NULL);

	/* Copy from there; stop at the first record that no longer fits. */
	while (pk_rec_read(rb, seq, &r, 0) == 0) {
		size_t n = pk_format_record_text(text, sizeof(text), &r, &f);

		if ((size_t)len + n > (size_t)size)
			break;
		memcpy(buf + len, text, n);
		len += (int)n;
		seq = r.seq + 1;
	}
	if (clear) {
		/* After the last record copied; Linux steps back one when a late
		 * record does not fit (docs/kernel-compat.md, section 9.4). */
		pthread_mutex_lock(&syslog_lock);
		pk_store_release(&sh->clear_seq, seq);
		pthread_mutex_unlock(&syslog_lock);
	}
	return len;
}

/* ------------------------------------------------------ SIZE_UNREAD (9) -- */

static int syslog_size_unread(struct pk_log *log)
{
	struct prb *rb = pk_log_ring(log);
	struct pk_log_shared *sh = pk_log_shared(log);
	struct prb_record r;
	struct pk_textfmt f;
	uint64_t total = 0;

	pthread_mutex_lock(&syslog_lock);

	uint64_t seq = pk_load_acquire(&sh->syslog_seq);
	uint64_t partial = pk_load_relaxed(&sh->syslog_partial);

	if (pk_rec_read(rb, seq, &r, 0)) {
		pthread_mutex_unlock(&syslog_lock);
		return 0; /* nothing unread */
	}
	if (r.seq != seq) {
		/* Lost: move to the oldest record, as READ would. */
		seq = r.seq;
		partial = 0;
		if (rb->writable) {
			pk_store_relaxed(&sh->syslog_partial, 0);
			pk_store_release(&sh->syslog_seq, seq);
		}
	}
	/* A partly read record keeps the settings it was started with (S2). */
	if (partial)
		f = syslog_fmt;
	else
		pk_textfmt_current(&f, true);
	do {
		total += syslog_size(&r, &f);
		pk_textfmt_current(&f, true);
		seq = r.seq + 1;
	} while (pk_rec_read(rb, seq, &r, 0) == 0);
	total -= partial < total ? partial : total;
	pthread_mutex_unlock(&syslog_lock);
	return total > INT_MAX ? INT_MAX : (int)total;
}

/* ----------------------------------------------------- console actions -- */

/* 6: save the level (unless saved already), then drop to the minimum. */
static void console_off(struct pk_log_shared *sh)
{
	uint32_t unsaved = PK_LOG_LEVEL_UNSAVED;

	atomic_compare_exchange_strong(&sh->saved_console_loglevel, &unsaved,
				       atomic_load(&sh->console_loglevel));
	atomic_store(&sh->console_loglevel, atomic_load(&sh->minimum_console_loglevel));
}

/* 7: restore a saved level and forget it. */
static void console_on(struct pk_log_shared *sh)
{
	uint32_t saved = atomic_exchange(&sh->saved_console_loglevel, PK_LOG_LEVEL_UNSAVED);

	if (saved != PK_LOG_LEVEL_UNSAVED)
		atomic_store(&sh->console_loglevel, saved);
}

/* 8: 1..8, raised to the minimum; it also forgets a saved level, so a later
 * CONSOLE_ON does not undo it (the kernel's "implicitly re-enable"). */
static int console_level(struct pk_log_shared *sh, int level)
{
	if (level < 1 || level > 8)
		return -EINVAL;

	uint32_t min = atomic_load(&sh->minimum_console_loglevel);

	if ((uint32_t)level < min)
		level = (int)min;
	atomic_store(&sh->console_loglevel, (uint32_t)level);
	atomic_store(&sh->saved_console_loglevel, PK_LOG_LEVEL_UNSAVED);
	return 0;
}

/* ------------------------------------------------------------- entries -- */

int pk_do_syslog_log(struct pk_log *log, int type, char *buf, int len)
{
	if (!log)
		return -EINVAL;

	struct prb *rb = pk_log_ring(log);
	struct pk_log_shared *sh = pk_log_shared(log);

	switch (type) {
	case PK_SYSLOG_ACTION_CLOSE:
	case PK_SYSLOG_ACTION_OPEN:
		return 0;
	case PK_SYSLOG_ACTION_READ:
		return syslog_read(log, buf, len);
	case PK_SYSLOG_ACTION_READ_ALL:
		return syslog_read_all(log, buf, len, false);
	case PK_SYSLOG_ACTION_READ_CLEAR:
		return syslog_read_all(log, buf, len, true);
	case PK_SYSLOG_ACTION_CLEAR:
		if (!rb->writable)
			return -EPERM;
		pthread_mutex_lock(&syslog_lock);
		pk_store_release(&sh->clear_seq, prb_next_seq(rb));
		pthread_mutex_unlock(&syslog_lock);
		return 0;
	case PK_SYSLOG_ACTION_CONSOLE_OFF:
		if (!rb->writable)
			return -EPERM;
		console_off(sh);
		return 0;
	case PK_SYSLOG_ACTION_CONSOLE_ON:
		if (!rb->writable)
			return -EPERM;
		console_on(sh);
		return 0;
	case PK_SYSLOG_ACTION_CONSOLE_LEVEL:
		if (len < 1 || len > 8)
			return -EINVAL; /* a bad level is refused on any handle */
		if (!rb->writable)
			return -EPERM;
		return console_level(sh, len);
	case PK_SYSLOG_ACTION_SIZE_UNREAD:
		return syslog_size_unread(log);
	case PK_SYSLOG_ACTION_SIZE_BUFFER: {
		size_t n = pk_log_buf_len(log);

		return n > INT_MAX ? INT_MAX : (int)n;
	}
	default:
		return -EINVAL;
	}
}

int pk_do_syslog(int type, char *buf, int len)
{
	struct pk_log *log = pk_printk_log();

	if (!log)
		return -ENOMEM;
	return pk_do_syslog_log(log, type, buf, len);
}
