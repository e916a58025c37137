// SPDX-License-Identifier: MIT
/*
 * reader.c - the reader interface of reader.h, on the library's internals.
 *
 * Owns nothing: every function here is a view of state other modules own
 * (the ring, the log state, the writer registry, kmsg.c's formatter,
 * options.c's parser, safe_open.c's link rule), so a tool reads a log
 * through one narrow door and each rule keeps one implementation.
 *
 * Invariants:
 *  - Nothing here writes to a log except pk_log_open_control(), which puts
 *    back the wall-clock offset its own writable open replaced.
 *  - pk_text_read() costs what pk_rec_read_text() costs (the ring's text
 *    copy and, for a deferred record, its expansion): the text reader is
 *    the ring itself behind an opaque type, and the call is one jump.
 */
#include "readers/reader.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <printk/forward.h>

#include "base/safe_open.h" /* repeats PK_OPEN_*: the compiler holds them equal */
#include "format/deferred.h"
#include "format/record_read.h"
#include "log/log_internal.h"
#include "log/log_shared.h"
#include "log/options.h"
#include "log/registry.h"
#include "record/export_format.h"
#include "record/json_format.h"
#include "record/kmsg_format.h"

_Static_assert(PK_TEXT_READ_ROOM >= PRB_TEXT_MAX + 8, "pk_rec_read_text() writes this far");

/* ------------------------------------------------- start-up of readers -- */

/* Defined by PK_READER_ONLY_PROGRAM, or nowhere: then its address is NULL. */
extern const char pk_reader_only_program_mark __attribute__((weak));

bool pk_reader_only_program(void)
{
	return &pk_reader_only_program_mark != NULL;
}

/* --------------------------------------------------------- log state -- */

int pk_log_info(struct pk_log *log, struct pk_log_info *info)
{
	if (!log || !info)
		return -EINVAL;

	struct prb *rb = pk_log_ring(log);
	struct pk_log_shared *sh = pk_log_shared(log);
	uint32_t saved = pk_load_relaxed(&sh->saved_console_loglevel);

	info->first_seq = prb_first_seq(rb);
	info->next_reserve_seq = prb_next_reserve_seq(rb);
	info->clear_seq = pk_load_acquire(&sh->clear_seq);
	info->realtime_offset_ns = (int64_t)pk_load_relaxed(&sh->realtime_offset_ns);
	info->buf_len = pk_log_buf_len(log);
	info->console_loglevel = (int)pk_load_relaxed(&sh->console_loglevel);
	info->saved_console_loglevel = saved == PK_LOG_LEVEL_UNSAVED ? -1 : (int)saved;
	info->minimum_console_loglevel = (int)pk_load_relaxed(&sh->minimum_console_loglevel);
	info->default_console_loglevel = (int)pk_load_relaxed(&sh->default_console_loglevel);
	info->clock = (int)pk_clock_of_log(&sh->clock, &info->clock_this_boot);
	return 0;
}

/* ------------------------------------------------- reading and waiting -- */

struct pk_text_reader *pk_log_text_reader(struct pk_log *log)
{
	return (struct pk_text_reader *)(void *)pk_log_ring(log);
}

struct pk_text_cache *pk_text_cache_new(void)
{
	return (struct pk_text_cache *)(void *)pk_dfmt_cache_new();
}

void pk_text_cache_free(struct pk_text_cache *cache)
{
	pk_dfmt_cache_free((struct pk_dfmt_cache *)(void *)cache);
}

int pk_text_read(struct pk_text_reader *tr, struct pk_text_cache *cache, uint64_t seq, uint64_t *ts_nsec,
		 char *dst)
{
	return pk_rec_read_text((struct prb *)(void *)tr, seq, ts_nsec, dst, (struct pk_dfmt_cache *)(void *)cache);
}

int pk_text_read_plain(struct pk_text_reader *tr, struct pk_text_cache *cache, uint64_t seq,
		       uint64_t *ts_nsec, char *dst, bool *plain)
{
	return pk_rec_read_text_plain((struct prb *)(void *)tr, seq, ts_nsec, dst,
				      (struct pk_dfmt_cache *)(void *)cache, plain);
}

int pk_log_wait(struct pk_log *log, uint64_t seq, int64_t timeout_ns)
{
	return prb_wait(pk_log_ring(log), seq, timeout_ns);
}

int pk_log_file_stat(struct pk_log *log, struct stat *st)
{
	if (!log || !st || !log->path || log->image || log->fd < 0)
		return -EINVAL;
	return fstat(log->fd, st) == 0 ? 0 : -errno;
}

_Static_assert(PK_LOG_JSON_MAX >= PK_JSON_RECORD_MAX, "a JSON line fits");

size_t pk_log_json_format(const struct pk_record *rec, const char *ident, int64_t rt_offset_ns, char *out)
{
	return pk_json_format_record(out, PK_LOG_JSON_MAX, rec, ident, rt_offset_ns);
}

_Static_assert(PK_LOG_EXPORT_MAX >= PK_EXPORT_RECORD_MAX, "an export entry fits");

size_t pk_log_export_format(const struct pk_record *rec, const char *ident, const char *hostname,
			    const char *boot_id, int64_t rt_offset_ns, char *out)
{
	return pk_export_format_record(out, PK_LOG_EXPORT_MAX, rec, ident, hostname, boot_id,
				       rt_offset_ns);
}

size_t pk_log_kmsg_format(const struct pk_record *rec, char *out)
{
	/* Only the fields the formatter reads; its text and dictionary are
	 * NUL-terminated like prb_read()'s. */
	struct prb_record r;

	r.seq = rec->seq;
	r.ts_nsec = rec->ts_nsec;
	r.caller.pid = rec->pid;
	r.caller.tid = rec->tid;
	r.caller.ctx = 0;
	r.level = rec->level;
	r.facility = rec->facility;
	r.flags = rec->flags;
	r.rflags = rec->state == PK_REC_UNFINALIZED ? PRB_REC_UNFINALIZED : 0;
	r.text_len = rec->text_len > PRB_TEXT_MAX ? PRB_TEXT_MAX : rec->text_len;
	r.dict_len = rec->dict_len > PRB_DICT_MAX ? PRB_DICT_MAX : rec->dict_len;
	memcpy(r.text, rec->text, r.text_len);
	r.text[r.text_len] = '\0';
	memcpy(r.dict, rec->dict, r.dict_len);
	r.dict[r.dict_len] = '\0';
	return pk_kmsg_format_record(&r, out, rec->state == PK_REC_UNFINALIZED);
}

/* --------------------------------------------------- changing a log -- */

int pk_log_open_control(struct pk_log **logp, const char *path)
{
	struct pk_log *ro, *log;
	int err = pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY);

	if (err)
		return err;

	uint64_t offset = pk_load_relaxed(&pk_log_shared(ro)->realtime_offset_ns);

	pk_log_destroy(ro);
	err = pk_log_open_file(&log, path, 0, 0);
	if (err)
		return err;
	pk_store_relaxed(&pk_log_shared(log)->realtime_offset_ns, offset);
	*logp = log;
	return 0;
}

/* ------------------------------------------------------- PRINTK_OPTS -- */

int pk_opts_log_buf_file(char *buf, size_t size)
{
	const char *env = getenv("PRINTK_OPTS");
	struct pk_opts o; /* a few KiB: on the stack, so any thread may ask */

	if (!env || !*env)
		return 0;
	pk_opts_parse(env, &o);

	size_t n = strnlen(o.log_buf_file, sizeof(o.log_buf_file));

	if (n >= size)
		return n ? -ENAMETOOLONG : 0;
	memcpy(buf, o.log_buf_file, n);
	buf[n] = '\0';
	return (int)n;
}

/* ------------------------------------------------ geometry and writers -- */

int pk_log_geometry(struct pk_log *log, struct pk_log_geometry *g)
{
	if (!log || !g)
		return -EINVAL;

	struct prb *rb = pk_log_ring(log);
	struct prb_stats st;

	prb_get_stats(rb, &st);
	memset(g, 0, sizeof(*g));
	g->record_slots = rb->desc_count;
	g->data_bytes = rb->data_size;
	g->region_bytes = rb->region_size;
	if (log->path) {
		g->file_bytes = log->mapping_len;
		g->writer_slots = log->reg.nentries;
	}
	g->reserve_failed = st.reserve_failed;
	g->holes = st.holes;
	g->corrupt = st.corrupt;
	g->stolen = st.stolen;
	g->format_version = prb_format_version(rb);
	if (rb->lanes) {
		struct prb_lanes_stats ls;

		prb_lanes_stats(rb, &ls);
		g->lanes = PRB_LANES;
		g->lane_bytes = rb->lane_bytes;
		g->lanes_in_use = ls.in_use;
		g->lane_pending = ls.pending;
		g->lane_merged = ls.merged;
		g->lane_full = ls.full;
		g->lane_corrupt = ls.corrupt;
	}
	return 0;
}

int pk_log_writer_at(struct pk_log *log, unsigned slot, struct pk_log_writer *w)
{
	if (!log || !w)
		return -EINVAL;
	if (!log->path || !log->reg.entries || slot == 0 || slot >= log->reg.nentries)
		return -ERANGE;

	struct pk_registry_entry *e = &log->reg.entries[slot];
	unsigned gen = atomic_load(&e->gen);
	char name[16];

	if (gen == 0)
		return -ENOENT;
	memset(w, 0, sizeof(*w));
	w->pid = atomic_load(&e->pid);
	w->attach_realtime_ns = (int64_t)atomic_load(&e->attach_ns);
	w->alive = pk_registry_owner_alive(&log->reg, slot << PK_REGISTRY_GEN_BITS |
							      (gen & ((1u << PK_REGISTRY_GEN_BITS) - 1)),
					  w->pid);
	if (pk_registry_name(&log->reg, w->pid, name) == 0)
		memcpy(w->name, name, sizeof(w->name));
	w->name[sizeof(w->name) - 1] = '\0';
	w->prev_pid = atomic_load(&e->prev_pid);
	if (w->prev_pid == w->pid)
		w->prev_pid = 0; /* the same process again (a fork's parent) */
	if (w->prev_pid && pk_registry_name(&log->reg, w->prev_pid, name) == 0)
		memcpy(w->prev_name, name, sizeof(w->prev_name));
	w->prev_name[sizeof(w->prev_name) - 1] = '\0';
	return 0;
}

/* ------------------------------------- console levels from outside -- */

int pk_log_set_console_level(struct pk_log *log, const char *name, int level)
{
	size_t len = name ? strnlen(name, 16) : 0;

	if (!log || len == 0 || len >= 16 || level < -1 || level > 15)
		return -EINVAL;
	if (!pk_log_ring(log)->writable)
		return -EPERM;

	struct pk_log_shared *sh = pk_log_shared(log);
	struct pk_log_console_level *found = NULL;
	uint64_t w[2] = { 0, 0 };

	memcpy(w, name, len);
	for (int i = 0; i < PK_LOG_CONSOLE_LEVELS && !found; i++) {
		struct pk_log_console_level *e = &sh->console_levels[i];

		if (pk_load_relaxed(&e->name[0]) == w[0] && pk_load_relaxed(&e->name[1]) == w[1])
			found = e;
	}
	/* A free entry: claimed by its first word, so two setters never
	 * share one. */
	for (int i = 0; i < PK_LOG_CONSOLE_LEVELS && !found; i++) {
		struct pk_log_console_level *e = &sh->console_levels[i];
		uint64_t zero = 0;

		if (atomic_compare_exchange_strong(&e->name[0], &zero, w[0])) {
			pk_store_relaxed(&e->name[1], w[1]);
			found = e;
		}
	}
	if (!found)
		return -ENOSPC;
	pk_store_relaxed(&found->level, (uint32_t)(level + 1));
	atomic_fetch_add(&sh->console_levels_gen, 1); /* seq_cst: after the entry */
	return 0;
}

int pk_log_console_level_at(struct pk_log *log, unsigned i, char name[16], int *level)
{
	if (!log || !name || !level)
		return -EINVAL;
	if (i >= PK_LOG_CONSOLE_LEVELS)
		return -ERANGE;

	struct pk_log_console_level *e = &pk_log_shared(log)->console_levels[i];
	uint64_t w[2] = { pk_load_relaxed(&e->name[0]), pk_load_relaxed(&e->name[1]) };
	uint32_t plus1 = pk_load_relaxed(&e->level);

	if (!w[0] || plus1 > 16)
		return -ENOENT;
	memcpy(name, w, 16);
	name[15] = '\0';
	*level = (int)plus1 - 1;
	return 0;
}

int pk_log_forwarder_at(struct pk_log *log, unsigned i, struct pk_log_forwarder *f)
{
	if (!log || !f)
		return -EINVAL;
	if (i >= PK_LOG_CONSOLE_STATES)
		return -ERANGE;

	struct pk_log_console_state *e = &pk_log_shared(log)->console_states[i];
	uint64_t w[2] = { pk_load_relaxed(&e->name[0]), pk_load_relaxed(&e->name[1]) };
	uint32_t state = pk_load_relaxed(&e->state);

	memset(f, 0, sizeof(*f));
	f->pid = pk_load_relaxed(&e->pid);
	if (!f->pid)
		return -ENOENT;
	f->alive = kill((pid_t)f->pid, 0) == 0 || errno != ESRCH;
	memcpy(f->name, w, sizeof(f->name));
	f->name[sizeof(f->name) - 1] = '\0';
	f->state = state <= PK_CONSOLE_LOST ? (int)state : -1;
	f->last_error = (int)(pk_load_relaxed(&e->last_error) & 0xffff);
	f->delivered = pk_load_relaxed(&e->delivered);
	f->waiting = pk_load_relaxed(&e->waiting);
	f->lost = pk_load_relaxed(&e->lost);
	f->changes = pk_load_relaxed(&e->changes);
	return 0;
}

const char *pk_log_tool_strerror(int err)
{
	switch (err) {
	case -EPROTO:
	case -EPROTONOSUPPORT:
	case -EBADMSG:
	case -ENOSPC:
	case -ESTALE:
		return pk_log_strerror(err);
	default:
		return strerror(-err);
	}
}

int pk_tool_open(const char *path, int oflags, mode_t mode, unsigned how)
{
	return pk_open_safe(path, oflags, mode, how);
}
