// SPDX-License-Identifier: MIT
/*
 * gen_corpus.c - writes the seed corpora of the fuzz targets, one directory
 * per target under OUTDIR.
 *
 * fuzz_logfile: small, valid log files made with the library itself; and
 * fuzz_reader and fuzz_writer: the same logs made in memory
 * (pk_log_create_in), as region images (fuzz_writer's with its three
 * control bytes in front). Each shows one thing a reader must handle, with
 * the trailing zero bytes cut (the targets zero-extend an input that is
 * refused as truncated, so a cut seed reads in full):
 *
 *   empty       a fresh 4 KiB log, no record
 *   records     a few records with dictionaries, levels and facilities
 *   open_line   the newest record is an open line (committed, not final)
 *   wrapped     records of mixed sizes, the ring wrapped several times
 *   dead        writers killed at each test point: a claimed record (a
 *               hole to be), an unclaimed slot, a record not committed
 *   big_record  maximum text and dictionary, 8 KiB log
 *   deferred    deferred records (a format's reference and binary
 *               arguments) of several conversions, and the format string
 *               table they refer to, one entry with a byte changed
 *   lanes       a log with the lane pool (docs/lanes.md): deferred
 *               records merged from a lane into the ring, and records
 *               still waiting in the lane
 *
 * fuzz_lanes: the "lanes" region with its two control bytes in front, and
 * copies of it whose pool went wrong:
 *
 *   lanes          as made: records merged, records waiting in a lane
 *   lanes_merger   a merger died between storing the lane's oldest record
 *                  in the ring and moving the lane past it: the merge lock
 *                  names a dead process, the record is named in flight
 *   lanes_bounds   a lane's write index more than a lane ahead of its read
 *                  index
 *   lanes_record   the second waiting record's length word changed
 *
 * and, for fuzz_reader and fuzz_writer, damaged copies of "wrapped", each a
 * way a file was found to go wrong:
 *
 *   dmg_state   one descriptor's state word with a bit flipped
 *   dmg_tail    the tail word's id with a bit flipped
 *   dmg_head0   a head word of 0
 *   dmg_data    one byte of a record's text changed (its check fails)
 *   dmg_torn    4 KiB pages alternately from two moments of one log (as
 *               a crash leaves a file whose pages were written back apart)
 *
 * fuzz_opts: PRINTK_OPTS strings; fuzz_format: formats in both of the
 * target's input modes (see fuzz_format.c).
 *
 * usage: gen_corpus OUTDIR    (the committed files are in tests/fuzz/corpus)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "format/deferred.h"
#include "log/log_internal.h"

static char tmpdir[] = "/tmp/pk_gen_corpus.XXXXXX";
static const char *outdir;

static void die(const char *what, int err)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, err ? pk_log_strerror(err) : strerror(errno));
	exit(1);
}

static struct pk_log *fresh(const char *name, size_t len, char *path, size_t size)
{
	struct pk_log *log;
	int err;

	snprintf(path, size, "%s/%s", tmpdir, name);
	unlink(path);
	err = pk_log_open_file(&log, path, len, 0);
	if (err)
		die(path, err);
	return log;
}

static void store(struct pk_log *log, int fac, int level, const char *text, const char *dict,
		  size_t dict_len)
{
	int err = pk_log_store(log, fac, level, text, strlen(text), dict, dict_len);

	if (err)
		die("store", err);
}

/* Write @len bytes (a @pre_len prefix first) to OUTDIR/@name. */
static void emit_bytes(const char *name, const void *pre, size_t pre_len, const void *buf,
		       size_t len)
{
	char out[PATH_MAX];

	snprintf(out, sizeof(out), "%s/%s", outdir, name);

	FILE *f = fopen(out, "wb");

	if (!f || fwrite(pre, 1, pre_len, f) != pre_len || fwrite(buf, 1, len, f) != len ||
	    fclose(f))
		die(out, 0);
}

/* Bytes of @buf without its trailing zero bytes, rounded up to 16. */
static size_t cut_zeros(const unsigned char *buf, size_t len, size_t max)
{
	while (len > 0 && buf[len - 1] == 0)
		len--;
	len = (len + 15) & ~(size_t)15;
	return len < max ? len : max;
}

/* Copy @path to OUTDIR/@name without its trailing zero bytes. */
static void emit(const char *path, const char *name)
{
	FILE *in = fopen(path, "rb");
	struct stat st;

	if (!in || fstat(fileno(in), &st) < 0)
		die(path, 0);

	unsigned char *buf = malloc((size_t)st.st_size);

	if (!buf || fread(buf, 1, (size_t)st.st_size, in) != (size_t)st.st_size)
		die(path, 0);
	fclose(in);

	size_t len = cut_zeros(buf, (size_t)st.st_size, (size_t)st.st_size);

	emit_bytes(name, NULL, 0, buf, len);
	printf("%-25s %6zu bytes (file %lld)\n", name, len, (long long)st.st_size);
	free(buf);
}

static enum prb_testpoint kill_at;

static void die_here(enum prb_testpoint tp)
{
	if (tp == kill_at)
		raise(SIGKILL);
}

static void writer_dies_at(struct pk_log *log, enum prb_testpoint tp, const char *text)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork", 0);
	if (pid == 0) {
		kill_at = tp;
		prb_set_testpoint_hook(die_here);
		pk_log_store(log, 0, 3, text, strlen(text), NULL, 0);
		_exit(0);
	}
	waitpid(pid, &status, 0);
}

/* The formats below have no level headers. */
static size_t no_headers(const char *text, size_t len, int *level, int *cont)
{
	(void)text, (void)len, (void)level, (void)cont;
	return 0;
}

/* A deferred record of @fmt (the literal whose address names it) and the
 * arguments, as printk stores one. */
static int to_lane; /* store_deferred() stores in the thread's lane */

static void store_deferred(struct pk_log *log, int level, const char *fmt, ...)
{
	struct prb *rb = pk_log_ring(log);
	struct prb_meta m = { .ts_nsec = 777, .level = (uint8_t)level,
			      .flags = PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED };
	char blob[PK_TEXT_MAX];
	uint64_t ref;
	va_list ap;
	int len, err;
	void *slot;
	const struct pk_dfmt *f = pk_deferred_fmt(rb, fmt, no_headers, 2 * PK_TEXT_MAX, &slot);

	if (!f)
		die("deferred format", 0);
	pk_caller_get(&m.caller);
	err = pk_deferred_ref(rb, slot, &ref);
	if (err)
		die("deferred ref", err);
	va_start(ap, fmt);
	len = pk_deferred_encode(f, ref, &ap, blob, sizeof(blob));
	va_end(ap);
	if (len < 0)
		die("deferred encode", 0);
	if (to_lane)
		err = prb_lane_store(rb, m.ts_nsec + (uint64_t)to_lane++, m.level, blob, (size_t)len, true);
	else
		err = prb_store(rb, &m, blob, (size_t)len, NULL, 0, true, NULL);
	if (err)
		die("deferred store", err);
}

/* The records each seed log holds (see the list at the top). */
static void fill(struct pk_log *log, const char *name)
{
	char text[PK_TEXT_MAX + 1], dict[PK_DICT_MAX];

	if (!strcmp(name, "records")) {
		store(log, 0, 6, "Linux version 6.18.0 (fuzz@corpus)", NULL, 0);
		store(log, 3, 4, "daemon: something odd", "SUBSYSTEM=net\0DEVICE=n2", 23);
		store(log, 0, 0, "", NULL, 0);
		store(log, 23, 7, "local7 debug line with a \x01 control byte", "K=v", 3);
	} else if (!strcmp(name, "open_line")) {
		store(log, 0, 6, "a complete line", NULL, 0);

		struct prb_meta m = { .ts_nsec = 12345, .level = 4 };

		pk_caller_get(&m.caller);
		struct prb *rb = pk_log_ring(log);

		if (prb_store(rb, &m, "testing the frobnozzle ...", 26, NULL, 0, false, NULL) ||
		    prb_extend(rb, &m.caller, " still going", 12, PK_TEXT_MAX, false, 0, NULL))
			die("open line", 0);
	} else if (!strcmp(name, "wrapped")) {
		for (unsigned i = 0; i < 700; i++) {
			int k = snprintf(text, sizeof(text), "rec %u ", i);
			size_t n = (size_t)k + (i * 37) % 200;

			memset(text + k, 'a' + (int)(i % 26), n - (size_t)k);
			text[n] = '\0';
			store(log, 0, (int)(i % 8), text, i % 5 ? NULL : "I=x", i % 5 ? 0 : 3);
		}
	} else if (!strcmp(name, "dead")) {
		store(log, 0, 6, "before the crashes", NULL, 0);
		writer_dies_at(log, PRB_TP_CLAIMED, "claimed, never written");
		store(log, 0, 6, "between", NULL, 0);
		writer_dies_at(log, PRB_TP_HEAD_RESERVED, "never claimed");
		store(log, 0, 6, "between again", NULL, 0);
		writer_dies_at(log, PRB_TP_BEFORE_COMMIT, "written, never committed");
		store(log, 0, 6, "after the crashes", NULL, 0);
	} else if (!strcmp(name, "big_record")) {
		memset(text, 'T', PK_TEXT_MAX);
		text[PK_TEXT_MAX] = '\0';
		memset(dict, 'D', sizeof(dict));
		memcpy(dict, "KEY=", 4);
		store(log, 0, 2, text, dict, sizeof(dict));
		store(log, 0, 2, "small one after it", NULL, 0);
	} else if (!strcmp(name, "deferred")) {
		static const char f1[] = "worker %d processed %s in %lu us\n";
		static const char f2[] = "x%-8s|%*d|%.*s|%#llx|%hhu%c\n";
		static const char f3[] = "x%e %g %.3f %a %%\n";

		store(log, 0, 6, "an eager one first", NULL, 0);
		for (unsigned i = 0; i < 6; i++) {
			store_deferred(log, 6, f1, (int)i, "job", 42ul * i);
			store_deferred(log, 7, f2, "ab", -5, (int)i, 2, "xyz", 0xdeadULL, 300, 'q');
			store_deferred(log, 5, f3, 1.5, -2e-300, 3.25, 0.1);
		}
		/* A byte of the second entry's format changed: its check fails. */
		struct prb *rb = pk_log_ring(log);

		pk_store_relaxed(&rb->strtab[8 + 1 + 6], pk_load_relaxed(&rb->strtab[8 + 1 + 6]) ^ 1);
	} else if (!strcmp(name, "lanes")) {
		/* A log with the lane pool (docs/lanes.md): records merged into
		 * the ring, and records still waiting in a lane. */
		static const char f1[] = "worker %d processed %s in %lu us\n";

		store(log, 0, 6, "an eager one first", NULL, 0);
		to_lane = 1;
		for (unsigned i = 0; i < 4; i++)
			store_deferred(log, 6, f1, (int)i, "merged", 42ul * i);
		prb_lanes_merge(pk_log_ring(log));
		for (unsigned i = 0; i < 5; i++)
			store_deferred(log, 6, f1, (int)i, "waiting", 7ul * i);
		to_lane = 0;
	}
}

/* fuzz_lanes's control bytes (fuzz_lanes.c): lines to store, whether to
 * free the merge lock, a length seed. */
static const unsigned char lanes_ctrl[][2] = { { 0x25, 17 }, { 0x03, 90 }, { 0x3f, 200 } };

/* A process that is gone: its pid. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork", 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	return pid;
}

static void emit_lanes_seed(const char *name, const unsigned char *mem, size_t size, unsigned v)
{
	char out[PATH_MAX];
	size_t len = cut_zeros(mem, size, size);

	snprintf(out, sizeof(out), "fuzz_lanes/%s", name);
	emit_bytes(out, lanes_ctrl[v % 3], 2, mem, len);
	printf("%-25s %6zu bytes (region %zu)\n", out, len, size);
}

/*
 * fuzz_lanes's seeds from the live "lanes" log in @mem (see the list at the
 * top). Pool words as lanes.c lays them out: the merge lock at word 0, the
 * record in flight (lane + 1 | its read index << 8) at word 4, lane i's
 * control at word 8 + 24 i (write index +0, read index +8), its data at
 * byte 4096 + i * lane_bytes.
 */
static void emit_lanes(struct pk_log *log, const unsigned char *mem, size_t size)
{
	struct prb *rb = pk_log_ring(log);
	unsigned char *copy = malloc(size);
	pk_a64 *pool = rb->lanes;
	uint64_t lb = rb->lane_bytes;

	if (!copy || !pool)
		die("lanes seeds", 0);

	size_t pool_off = (size_t)((const unsigned char *)pool - mem);
	pk_a64 *c0 = pool + 8;
	uint64_t ridx = pk_load_relaxed(&c0[8]), widx = pk_load_relaxed(&c0[0]);
	const pk_a64 *d0 = pool + 4096 / 8;

	if (widx == ridx)
		die("lanes seeds: nothing waits in lane 0", 0);
	emit_lanes_seed("lanes", mem, size, 0);

	/* the second waiting record's length word */
	uint64_t w0 = pk_load_relaxed(&d0[(ridx % lb) / 8]);
	uint64_t second = ridx + 8 * (3 + ((w0 & 0xffff) + 7) / 8);

	memcpy(copy, mem, size);
	copy[pool_off + 4096 + second % lb] ^= 0x40;
	emit_lanes_seed("lanes_record", copy, size, 1);

	/* the write index far ahead */
	memcpy(copy, mem, size);
	uint64_t bad = ridx + 3 * lb + 8;

	memcpy(copy + pool_off + 8 * 8, &bad, 8);
	emit_lanes_seed("lanes_bounds", copy, size, 2);

	/* A merger that stored the oldest waiting record and died: the same
	 * record in the ring, the lock a dead process's, the record named. */
	uint64_t at = (ridx % lb) / 8, len = w0 & 0xffff;
	struct prb_meta m = {
		.ts_nsec = pk_load_relaxed(&d0[at + 1]),
		.level = (uint8_t)((w0 >> 16) & 7),
		.flags = (uint8_t)(w0 >> 24),
	};
	uint64_t caller = pk_load_relaxed(&d0[at + 2]);
	char text[PK_TEXT_MAX + 8];

	m.caller.pid = (uint32_t)caller;
	m.caller.tid = (uint32_t)(caller >> 32);
	for (uint64_t k = 0; k < (len + 7) / 8; k++) {
		uint64_t v = pk_load_relaxed(&d0[at + 3 + k]);

		memcpy(text + 8 * k, &v, 8);
	}
	if (prb_store(rb, &m, text, len, NULL, 0, true, NULL))
		die("lanes seeds: the merger's store", 0);
	pk_store_relaxed(&pool[0], (uint64_t)(uint32_t)dead_pid() | (uint64_t)1 << 32);
	pk_store_relaxed(&pool[4], 1 | ridx << 8);
	emit_lanes_seed("lanes_merger", mem, size, 0);
	free(copy);
}

/* fuzz_writer's control bytes: records to store, a length seed, levels. */
static const unsigned char writer_ctrl[][3] = { { 0, 0, 0 }, { 5, 17, 0x36 }, { 31, 200, 0x75 } };

/* One damaged copy of the region @mem (@size bytes) to both region
 * targets' corpora. */
static void emit_region(const char *name, const unsigned char *mem, size_t size)
{
	char out[PATH_MAX];
	size_t len = cut_zeros(mem, size, size);

	snprintf(out, sizeof(out), "fuzz_reader/%s", name);
	emit_bytes(out, NULL, 0, mem, len);
	snprintf(out, sizeof(out), "fuzz_writer/%s", name);
	emit_bytes(out, writer_ctrl[1], 3, mem, len);
	printf("%-25s %6zu bytes (region %zu)\n", out, len, size);
}

/* The damaged seeds (see the list at the top), from "wrapped" in memory. */
static void emit_damaged(void)
{
	size_t size = pk_log_region_size(4096);
	unsigned char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	unsigned char *moment = malloc(size), *copy = malloc(size);
	struct pk_log *log;
	int err;

	if (mem == MAP_FAILED || !moment || !copy)
		die("malloc", 0);
	err = pk_log_create_in(&log, mem, size, 4096);
	if (err)
		die("pk_log_create_in", err);
	for (unsigned i = 0; i < 40; i++)
		store(log, 0, 6, "an early record of the torn log", NULL, 0);
	memcpy(moment, mem, size);
	fill(log, "wrapped");

	struct prb *rb = pk_log_ring(log);
	size_t desc_off = (size_t)((unsigned char *)rb->descs - mem);
	size_t data_off = (size_t)((unsigned char *)rb->data - mem);

	pk_log_destroy(log);

	memcpy(copy, mem, size);
	copy[desc_off + 5 * 64 + 7] ^= 0x40; /* slot 5: the state word's top byte */
	emit_region("dmg_state", copy, size);

	memcpy(copy, mem, size);
	copy[128 + 4] ^= 0x10; /* the tail word: bit 4 of its id (bits 32-63) */
	emit_region("dmg_tail", copy, size);

	memcpy(copy, mem, size);
	memset(copy + 64, 0, 8); /* the head word */
	emit_region("dmg_head0", copy, size);

	memcpy(copy, mem, size);
	copy[data_off + 1000] ^= 0x01;
	emit_region("dmg_data", copy, size);

	for (size_t off = 0; off < size; off += 4096)
		memcpy(copy + off, ((off / 4096) % 2 ? moment : mem) + off,
		       size - off < 4096 ? size - off : 4096);
	emit_region("dmg_torn", copy, size);
	munmap(mem, size);
	free(moment);
	free(copy);
}

static const struct {
	const char *name;
	size_t len;
} logs[] = {
	{ "empty", 4096 }, { "records", 4096 }, { "open_line", 4096 },
	{ "wrapped", 4096 }, { "dead", 4096 }, { "big_record", 8192 }, { "deferred", 4096 },
	{ "lanes", 32768 }, /* the lane pool needs 32 KiB (docs/lanes.md) */
};


static const char *const opts_seeds[] = {
	"console=none",
	"log_buf_len=1M loglevel=7 printk.time=1 printk.caller=0",
	"console=fd:2 console=file:/tmp/x.log console=stderr quiet",
	"log_buf_file=/tmp/pk.log log_buf_file_group=1 log_buf_file_sync=y crash_dump=0",
	"printk.devkmsg=ratelimit ignore_loglevel debug unknown=1 loglevel=99",
	"log_buf_len=0x1000 log_buf_len=4k\tprintk.ignore_loglevel=off\nlog_buf_len=",
	"console=file:/tmp/x,threaded,lossy console=file:/tmp/y,lossy,lossless console=fd:3,lossy",
};

/* fuzz_format raw mode (mode byte 0x20: a 16-byte small buffer). */
static const char *const format_seeds[] = {
	"worker %d processed %s in %lu us\n",
	"%-8s|%08.3f|%+e|%#x|%#o|%5c|%%|%p|%n|%m|%#m",
	"%2$s=%1$d %3$*4$.*5$d %1$hhx",
	"%ls|%S|%5.2ls|%lc|%C",
	"%.30f %La %g %G %A %10.4e %-+#12.0f %'d %Id",
	"% 99999999999d|%2147483648d|%.2147483648s|%*d|%.*f",
	"abc%",
	"%hs %hp %hf %k %y %0$d %5$d %65$d",
	"%.3s|%.0s|%10s|%-10s",
};

/*
 * fuzz_format generated mode (mode byte 0x21): conversion tokens are
 * [byte >= 0x40][flags][width/precision/length selector][value bytes...]
 * [conversion index], literal runs [byte < 0x40: length - 1][bytes].
 */
static const unsigned char format_programs[][40] = {
	{ 0x02, 'i', 'd', '=', 0x40, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 42 },
	{ 0x40, 0x11, 0x05, 7, 9, 3, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x41, 0x00, 0x66, 3, 14 },
	{ 0x40, 0x00, 0x1e, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 7, 9 },
	{ 0x40, 0x08, 0x47, 3, 10, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 15 },
};

int main(int argc, char **argv)
{
	char path[PATH_MAX], name[PATH_MAX];
	struct pk_log *log;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (!mkdtemp(tmpdir))
		die("mkdtemp", 0);
	static const char *const dirs[] = { "fuzz_logfile", "fuzz_reader", "fuzz_writer",
					    "fuzz_opts", "fuzz_format", "fuzz_lanes" };

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(name, sizeof(name), "%s/%s", outdir, dirs[i]);
		if (mkdir(name, 0755) < 0 && errno != EEXIST)
			die(name, 0);
	}

	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		/* a log file (with the lane pool: made while lanes are on) */
		pk_set_lanes(!strcmp(logs[i].name, "lanes"));
		log = fresh(logs[i].name, logs[i].len, path, sizeof(path));
		fill(log, logs[i].name);
		pk_log_destroy(log);
		snprintf(name, sizeof(name), "fuzz_logfile/%s", logs[i].name);
		emit(path, name);

		/* the same log in memory, shared with the writers killed in "dead" */
		size_t size = pk_log_region_size(logs[i].len);
		unsigned char *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		int err;

		if (mem == MAP_FAILED)
			die("mmap", 0);
		err = pk_log_create_in(&log, mem, size, logs[i].len);
		if (err)
			die("pk_log_create_in", err);
		fill(log, logs[i].name);

		size_t len = cut_zeros(mem, size, size);

		snprintf(name, sizeof(name), "fuzz_reader/%s", logs[i].name);
		emit_bytes(name, NULL, 0, mem, len);
		printf("%-25s %6zu bytes (region %zu)\n", name, len, size);
		snprintf(name, sizeof(name), "fuzz_writer/%s", logs[i].name);
		emit_bytes(name, writer_ctrl[i % 3], 3, mem, len);
		if (!strcmp(logs[i].name, "lanes"))
			emit_lanes(log, mem, size); /* changes the log: last */
		pk_log_destroy(log);
		munmap(mem, size);
	}

	emit_damaged();
	for (i = 0; i < sizeof(opts_seeds) / sizeof(opts_seeds[0]); i++) {
		snprintf(name, sizeof(name), "fuzz_opts/opts_%zu", i);
		emit_bytes(name, NULL, 0, opts_seeds[i], strlen(opts_seeds[i]));
	}
	for (i = 0; i < sizeof(format_seeds) / sizeof(format_seeds[0]); i++) {
		/* the body after the format: bytes for the doubles */
		static const unsigned char raw_tail[] = "\0\x18\x2d\x44\x54\xfb\x21\x09\x40"
							"\x00\x00\x00\x00\x00\x00\xf0\x7f";

		snprintf(name, sizeof(name), "fuzz_format/raw_%zu", i);
		char pre = 0x20;
		size_t n = strlen(format_seeds[i]);
		unsigned char body[256];

		memcpy(body, format_seeds[i], n);
		memcpy(body + n, raw_tail, sizeof(raw_tail) - 1);
		emit_bytes(name, &pre, 1, body, n + sizeof(raw_tail) - 1);
	}
	for (i = 0; i < sizeof(format_programs) / sizeof(format_programs[0]); i++) {
		char pre = 0x21;

		snprintf(name, sizeof(name), "fuzz_format/gen_%zu", i);
		emit_bytes(name, &pre, 1, format_programs[i], sizeof(format_programs[i]));
	}

	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : 1;
}
