// SPDX-License-Identifier: MIT
/*
 * info.c - udmesg --info: what a libprintk log is made of (its record
 * slots, text area and file size), what it holds, its console level, its
 * writers' timestamp clock, the losses it counts, and the processes that
 * wrote it, alive or gone; and
 * -n NAME=LEVEL, a named console's level in the log's shared state.
 *
 * --info is read-only: the log is opened PK_LOG_RDONLY and never written. Every
 * number comes from the file, which any writer may have damaged; the
 * library validated the geometry when it opened it, and the rest is only
 * printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <printk/forward.h>
#include <printk/log.h>

#include "reader.h"
#include "udmesg.h"

static struct pk_log *open_ro(const char *path)
{
	struct pk_log *log;
	struct stat st;
	int err;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		ud_fatal("%s: %s", path, strerror(EISDIR));
	err = pk_log_open_file(&log, path, 0, PK_LOG_RDONLY);
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		ud_fatal("cannot open %s: %s", path, strerror(-err));
	if (err)
		ud_fatal("%s: %s", path, pk_log_strerror(err));
	return log;
}

/* A writer's name as a log file holds it: printable bytes only. */
static void print_name(const char *name)
{
	if (!*name) {
		out_puts("?");
		return;
	}
	for (const char *p = name; *p; p++)
		out_putc(*p > ' ' && *p < 0x7f ? *p : '?');
}

/* The forwarding consoles the writers published: one line each, with the
 * state and counters of pk_console_stats() and the last failure in words. */
static void print_forwarders(struct pk_log *log)
{
	static const char *const states[] = { "idle", "delivering", "cannot connect", "lost" };
	char line[512];

	for (unsigned i = 0, any = 0;; i++) {
		struct pk_log_forwarder f;
		int err = pk_log_forwarder_at(log, i, &f);

		if (err == -ERANGE)
			break;
		if (err)
			continue;
		if (!any++)
			out_puts("forwarding:\n");
		snprintf(line, sizeof(line), "  pid %" PRIu32 " [", f.pid);
		out_puts(line);
		print_name(f.name);
		snprintf(line, sizeof(line),
			 "] %s: %" PRIu64 " delivered, %" PRIu64 " waiting, %" PRIu64 " lost, %" PRIu64
			 " state change%s",
			 f.state < 0 ? "unknown state" : states[f.state], f.delivered, f.waiting, f.lost,
			 f.changes, f.changes == 1 ? "" : "s");
		out_puts(line);
		if (f.last_error && f.state != PK_CONSOLE_DELIVERING) {
			out_puts(", last error: ");
			out_puts(strerror(f.last_error));
		}
		out_puts(f.alive ? "\n" : " (process gone)\n");
	}
}

void ud_print_info(struct ud_ctl *ctl)
{
	struct pk_log *log = open_ro(ctl->log_path);
	struct pk_log_geometry g;
	struct pk_log_info info;
	char line[512];
	unsigned used = 0, alive = 0;

	pk_log_geometry(log, &g);
	pk_log_info(log, &info);

	uint64_t first = pk_log_first_seq(log), next = pk_log_next_seq(log);

	snprintf(line, sizeof(line), "file:           %s, %" PRIu64 " bytes\n", ctl->log_path, g.file_bytes);
	out_puts(line);
	snprintf(line, sizeof(line), "text area:      %" PRIu64 " bytes (log_buf_len)\n", g.data_bytes);
	out_puts(line);
	snprintf(line, sizeof(line), "record slots:   %" PRIu64 "\n", g.record_slots);
	out_puts(line);
	if (g.lanes)
		snprintf(line, sizeof(line), "format:         %u, %u lanes of %" PRIu64 " bytes\n", g.format_version,
			 g.lanes, g.lane_bytes);
	else
		snprintf(line, sizeof(line), "format:         %u, no lanes\n", g.format_version);
	out_puts(line);
	if (next > first)
		snprintf(line, sizeof(line), "records:        %" PRIu64 " (seq %" PRIu64 " to %" PRIu64 ")\n",
			 next - first, first, next - 1);
	else
		snprintf(line, sizeof(line), "records:        0 (next seq %" PRIu64 ")\n", next);
	out_puts(line);
	snprintf(line, sizeof(line), "console level:  %d\n", info.console_loglevel);
	out_puts(line);
	for (unsigned i = 0, any = 0;; i++) {
		char name[16];
		int level, err = pk_log_console_level_at(log, i, name, &level);

		if (err == -ERANGE) {
			if (any)
				out_puts("\n");
			break;
		}
		if (err)
			continue;
		out_puts(any++ ? ", " : "console levels: ");
		print_name(name);
		if (level < 0) {
			out_puts("=default");
		} else {
			snprintf(line, sizeof(line), "=%d", level);
			out_puts(line);
		}
	}
	if (info.clock) { /* logs of older versions have none */
		snprintf(line, sizeof(line), "clock:          %s (%s)\n",
			 info.clock == 2 ? "tsc" : "CLOCK_MONOTONIC",
			 info.clock_this_boot ? "this boot" : "an earlier boot");
		out_puts(line);
	}
	snprintf(line, sizeof(line),
		 "lost:           %" PRIu64 " stores refused (oldest record unfinished), %" PRIu64
		 " records of writers that died, %" PRIu64 " damaged, %" PRIu64 " stalled reservations\n",
		 g.reserve_failed, g.holes, g.corrupt, g.stolen);
	out_puts(line);
	if (g.lanes) {
		snprintf(line, sizeof(line),
			 "lanes:          %" PRIu64 " in use, %" PRIu64 " records not merged, %" PRIu64
			 " merged, %" PRIu64 " stored in the ring (lane full), %" PRIu64 " damaged\n",
			 g.lanes_in_use, g.lane_pending, g.lane_merged, g.lane_full, g.lane_corrupt);
		out_puts(line);
	}

	for (unsigned slot = 1; slot < g.writer_slots; slot++) {
		struct pk_log_writer w;

		if (pk_log_writer_at(log, slot, &w) == 0) {
			used += 1 + (w.prev_pid != 0);
			alive += w.alive != 0;
		}
	}
	snprintf(line, sizeof(line), "writers:        %u known, %u alive, %u slots\n", used, alive,
		 g.writer_slots ? g.writer_slots - 1 : 0);
	out_puts(line);
	for (unsigned slot = 1; slot < g.writer_slots; slot++) {
		struct pk_log_writer w;

		if (pk_log_writer_at(log, slot, &w) != 0)
			continue;
		if (w.prev_pid) { /* the slot's earlier writer first */
			snprintf(line, sizeof(line), "  pid %" PRIu32 " ", w.prev_pid);
			out_puts(line);
			print_name(w.prev_name);
			out_puts(" gone\n");
		}
		snprintf(line, sizeof(line), "  pid %" PRIu32 " ", w.pid);
		out_puts(line);
		print_name(w.name);
		out_puts(w.alive ? " alive\n" : " gone\n");
	}
	print_forwarders(log);
	out_flush();
	pk_log_destroy(log);
}

void ud_set_console_level(struct ud_ctl *ctl)
{
	/* Validated read-only first, as the other actions: the writable open
	 * then neither creates a file nor restamps its clock. */
	struct pk_log *log = open_ro(ctl->log_path);
	int err;

	pk_log_destroy(log);
	err = pk_log_open_control(&log, ctl->log_path);
	if (err)
		ud_fatal("cannot open %s for writing: %s", ctl->log_path, pk_log_strerror(err));
	err = pk_log_set_console_level(log, ctl->console_name, ctl->console_level);
	pk_log_destroy(log);
	if (err == -ENOSPC)
		ud_fatal("%s: every console level entry names another console", ctl->log_path);
	if (err)
		ud_fatal("%s: cannot set the level of console %s: %s", ctl->log_path, ctl->console_name,
			 strerror(-err));
}
