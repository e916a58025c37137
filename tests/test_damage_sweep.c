// SPDX-License-Identifier: MIT
/*
 * test_damage_sweep.c - one flipped bit anywhere in a log file costs a new
 * writer no line on its own console, and no reader its bound
 * (src/ring/ringbuffer.c, "Damage"; src/log/logfile.c; docs/design.md).
 *
 * A log is written by one process (4 KiB of text, 40 lines made of three
 * fragments each; or 300, so that the ring wrapped) and kept as it is. Then, for each damaged copy of it (one
 * bit flipped):
 *  - a reader (pk_log_read() from the oldest record on) ends within its
 *    time limit and never goes back to a seq it passed;
 *  - a writer started with `console=fd:1 ignore_loglevel` prints 300 lines:
 *    its console shows all of them, in order, and no "printk messages
 *    dropped" notice. Whatever the file holds, either the ring takes the
 *    writer's records, or the log is declared damaged and printk goes on
 *    in memory (a "printk: ..." notice, which is allowed);
 *  - the file, or the damaged copy the writer moved aside, reads within
 *    its time limit afterwards.
 * Fixed cases first, the fields that used to lose lines: the seq word of a
 * descriptor the first log never used (all zero in the file), whose high
 * bit gave every record the writer stored in that slot a seq nobody looks
 * for; and the id field of such a slot's state word, which made the claim
 * fail and left a hole. Then random flips over the whole file: the same
 * ones every run, from a random stream with a fixed start, which
 * PK_FLIP_SWEEP=0x... changes (PK_FLIP_COUNT=N: N flips); a failure names
 * the byte, the bit and the start, so that it repeats.
 *
 * A third sweep flips bits in the lane pool of a 32 KiB log made with
 * printk.lanes (docs/lanes.md; the 4 KiB logs of the others have none), holding records merged from lanes and records still in
 * them: the same checks, and the writer (lanes on) merges what is left.
 *
 * Every process that touches a damaged file is a child judged from outside
 * with a time limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "log/log_internal.h"
#include "testutil.h"

#define CHILD_ARG   "--sweep-child"
#define CHILD_MS    20000
#define FIRST_LINES 40
#define LINES	    300
#define DESC_BYTES  64 /* a descriptor: eight 64-bit words */
#define D_STATE	    0  /* its state word: [state:2][spare:2][reopen:12][owner:16][id] */
#define D_SEQ	    1  /* its seq word, stored XORed with the slot's start value */

/* Random flips per run: a sanitizer build starts each child far slower. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FLIPS 200
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FLIPS 200
#endif
#endif
#ifndef FLIPS
#define FLIPS 1000
#endif

static unsigned char *orig;
static size_t orig_len;
static char first_path[PATH_MAX], flip_path[PATH_MAX], moved_path[PATH_MAX + 16];

/* ------------------------------------------------------------ children -- */

static int sweep_child(const char *mode)
{
	if (!strcmp(mode, "first")) {
		for (int i = 0; i < FIRST_LINES; i++) {
			pr_info("first %d: ", i);
			pr_cont("part");
			pr_cont(" done\n");
		}
		return 0;
	}
	if (!strcmp(mode, "wrapped")) {
		for (int i = 0; i < LINES; i++) {
			pr_info("wrapped %d: ", i);
			pr_cont("part");
			pr_cont(" done\n");
		}
		return 0;
	}
	if (!strcmp(mode, "lanes")) {
		/* lanes on, console_loglevel 1: every line into a lane; the
		 * first half merged by a reader, the rest left there */
		for (int i = 0; i < FIRST_LINES; i++) {
			pr_info("lane rec %d\n", i);
			if (i == FIRST_LINES / 2)
				(void)pk_log_next_seq(pk_printk_log());
		}
		return 0;
	}
	if (!strcmp(mode, "writer")) {
		for (int i = 0; i < LINES; i++)
			pr_info("flip line %d\n", i);
		return 0;
	}
	return 2;
}

static const char *child_opts;
static const char *child_mode;

static int exec_child(void *arg)
{
	char *argv[] = { "test_damage_sweep", CHILD_ARG, (char *)child_mode, NULL };

	(void)arg;
	setenv("PRINTK_OPTS", child_opts, 1);
	execv("/proc/self/exe", argv);
	return 127;
}

/* This program again, as `CHILD_ARG @mode` with PRINTK_OPTS=@opts. */
static void run_exec(const char *opts, const char *mode, struct child_result *res)
{
	child_opts = opts;
	child_mode = mode;
	run_child(exec_child, NULL, CHILD_MS, res);
}

/* Read @arg's log from its oldest record to its newest: exit 0, or 3 if a
 * read went back. The parent's time limit catches a reader that loops. */
static int read_all(void *arg)
{
	static struct pk_record rec;
	struct pk_log *log;
	int err = pk_log_open_file(&log, arg, 0, PK_LOG_RDONLY);

	if (err)
		return 0; /* refused (a damaged header): bounded too */

	uint64_t seq = pk_log_first_seq(log);

	while ((err = pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED)) == 0) {
		if (rec.seq < seq) {
			printf("went back: asked for %" PRIu64 ", got %" PRIu64 "\n", seq, rec.seq);
			return 3;
		}
		seq = rec.seq + 1;
	}
	pk_log_destroy(log);
	return 0;
}

/* ------------------------------------------------------------- helpers -- */

static int setup(void **state)
{
	(void)state;
	return test_dir_make("pk_test_sweep");
}

static int teardown(void **state)
{
	(void)state;
	free(orig);
	orig = NULL;
	return test_dir_remove();
}

/* The log the first process leaves behind, in orig: FIRST_LINES lines
 * (@mode "first"), or enough to wrap the ring ("wrapped"). */
static void make_first_log(const char *mode)
{
	char opts[PATH_MAX + 128];
	struct child_result res;

	snprintf(first_path, sizeof(first_path), "%s", test_dir_path("first.log"));
	snprintf(flip_path, sizeof(flip_path), "%s", test_dir_path("flipped.log"));
	snprintf(moved_path, sizeof(moved_path), "%s.damaged", flip_path);
	/* The lane pool needs a log of 32 KiB (docs/lanes.md): a smaller one,
	 * as the other sweeps' 4 KiB, is made without it, lanes on or not. */
	snprintf(opts, sizeof(opts), "log_buf_len=%s log_buf_file=%s console=none%s",
		 !strcmp(mode, "lanes") ? "32K" : "4K", first_path,
		 !strcmp(mode, "lanes") ? " printk.lanes=1 loglevel=1" : "");
	run_exec(opts, mode, &res);
	if (!res.exited || res.status)
		fail_msg("the first writer failed (%d/%d):\n%s", res.exited, res.status, res.out);
	child_result_free(&res);
	orig = (unsigned char *)test_slurp(first_path, &orig_len);
	assert_non_null(orig);
}

/* Where the descriptor of the record @seq would be, in the file. */
static size_t desc_offset(uint64_t seq, uint64_t *first_next)
{
	struct pk_log *log;

	assert_int_equal(pk_log_open_file(&log, first_path, 0, PK_LOG_RDONLY), 0);

	struct prb *rb = pk_log_ring(log);
	size_t descs = (size_t)((uint8_t *)rb->descs - (uint8_t *)log->mapping);
	uint64_t slot = (seq + rb->id_base) & (rb->desc_count - 1);

	*first_next = pk_log_next_seq(log);
	pk_log_destroy(log);
	return descs + (size_t)slot * DESC_BYTES;
}

static void describe(char *buf, size_t size, size_t off, unsigned bit, const char *how)
{
	snprintf(buf, size, "byte %zu bit %u (0x%02x -> 0x%02x), %s", off, bit, orig[off],
		 orig[off] ^ (1u << bit), how);
}

/* Does the writer's output hold its LINES lines, in order, and nothing but
 * printk's own notices besides? NULL if so, else what is wrong. */
static int lanes_sweep; /* the lane pool sweep: its records may print */

static const char *judge_console(const char *out)
{
	static char why[128];
	int next = 0;

	for (const char *p = out; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char want[32];
		int wn = snprintf(want, sizeof(want), "flip line %d", next);

		if (memmem(p, n, "dropped", 7))
			return "a dropped-messages notice";
		if (next < LINES && n == (size_t)wn && !memcmp(p, want, n))
			next++;
		else if (lanes_sweep && n >= 9 && !memcmp(p, "lane rec ", 9))
			; /* the first log's lane records, merged by the writer's console */
		else if (n < 8 || memcmp(p, "printk: ", 8) != 0) {
			snprintf(why, sizeof(why), "line %d expected, found \"%.*s\"", next,
				 (int)(n > 60 ? 60 : n), p);
			return why;
		}
		p += n + (nl != NULL);
	}
	if (next != LINES) {
		snprintf(why, sizeof(why), "%d of %d lines", next, LINES);
		return why;
	}
	return NULL;
}

static void reader_bounded(const char *path, const char *what)
{
	struct child_result res;

	if (access(path, F_OK))
		return;
	run_child(read_all, (void *)path, CHILD_MS, &res);
	if (res.timed_out || !res.exited || res.status)
		fail_msg("%s: a reader of %s %s:\n%s", what, path,
			 res.timed_out ? "did not end in time" : "failed", res.out);
	child_result_free(&res);
}

/* One damaged copy of the first log: readers bounded, the writer's console
 * complete. @what names the flip in a failure. */
static void check_flip(size_t off, unsigned bit, const char *what)
{
	char opts[PATH_MAX + 96];
	struct child_result res;

	unlink(flip_path);
	unlink(moved_path);
	orig[off] ^= (unsigned char)(1u << bit);

	int fd = open(flip_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, orig, orig_len), (ssize_t)orig_len);
	close(fd);
	orig[off] ^= (unsigned char)(1u << bit);

	reader_bounded(flip_path, what);
	snprintf(opts, sizeof(opts), "log_buf_file=%s console=fd:1 ignore_loglevel printk.time=0%s",
		 flip_path, lanes_sweep ? " printk.lanes=1" : "");
	run_exec(opts, "writer", &res);
	if (res.timed_out || !res.exited || res.status)
		fail_msg("%s: the writer %s (status %d):\n%s", what,
			 res.timed_out ? "did not end in time" : "failed", res.status, res.out);

	const char *wrong = judge_console(res.out);

	if (wrong) {
		print_message("the writer's output:\n%.4000s\n", res.out);
		fail_msg("%s: the writer's console: %s", what, wrong);
	}
	child_result_free(&res);
	reader_bounded(flip_path, what);
	reader_bounded(moved_path, what);
}

/* --------------------------------------------------------------- tests -- */

/*
 * The seq word of a descriptor the first log never used: zero in the file
 * (the slot's start value, stored XORed), and its bit 31 set. Only the
 * low bits of a seq follow from the record's id; the writer took the rest
 * from the seq the slot held, so each of its records in that slot got a seq
 * 2^31 away from its own, and its console counted them as dropped. In the
 * report this came from it was byte 8971 of the 88 KiB file, 0x00 -> 0x80:
 * the slot of seq 81, the same byte in every build of this geometry.
 */
static void test_unused_seq_word(void **state)
{
	(void)state;
	make_first_log("first");

	uint64_t first_next;
	size_t desc = desc_offset(81, &first_next);
	size_t off = desc + 8 * D_SEQ + 3;
	char what[128];

	assert_int_equal(orig_len, 88 * 1024);
	assert_int_equal(off, 8971);
	assert_true(first_next < 81); /* never used: the slot's words are zero */
	for (unsigned i = 0; i < DESC_BYTES; i++)
		assert_int_equal(orig[desc + i], 0);
	describe(what, sizeof(what), off, 7, "the seq word of an unused slot");
	check_flip(off, 7, what);
}

/*
 * The id field of an unused slot's state word, a bit above the slot
 * number: the slot seemed to hold another lap's record, so the claim of
 * the writer's record there failed as if the record had been stolen from
 * it, and the id became a hole its console announced as a dropped message.
 */
static void test_unused_state_id(void **state)
{
	(void)state;
	make_first_log("first");

	uint64_t first_next;
	size_t desc = desc_offset(81, &first_next);
	size_t off = desc + 8 * D_STATE + 1; /* bits 8..15: bit 10 is id bit 10 */
	char what[128];

	describe(what, sizeof(what), off, 2, "the id of an unused slot's state word");
	check_flip(off, 2, what);
}

static uint64_t next_random(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Where the lane pool lies in the first log's file, and its length. */
static size_t lanes_offset(size_t *len)
{
	struct pk_log *log;

	assert_int_equal(pk_log_open_file(&log, first_path, 0, PK_LOG_RDONLY), 0);

	struct prb *rb = pk_log_ring(log);

	assert_non_null(rb->lanes);

	size_t off = (size_t)((uint8_t *)rb->lanes - (uint8_t *)log->mapping);

	*len = (size_t)rb->lanes_size;
	pk_log_destroy(log);
	return off;
}

/* @flips random bits over the whole file: header, descriptors, text, the
 * format table, the shared state and the writer registry (the lane pool
 * only, for "lanes"). */
static void random_flips(const char *first, unsigned flips)
{
	make_first_log(first);

	size_t base = 0, span = orig_len;

	if (!strcmp(first, "lanes"))
		base = lanes_offset(&span);

	const char *env = getenv("PK_FLIP_SWEEP");
	/* The same flips every run unless asked for others. */
	uint64_t start = env && *env ? strtoull(env, NULL, 0) : UINT64_C(0x6a09e667f3bcc908);
	uint64_t x = start ? start : 1;
	char what[160];

	const char *count = getenv("PK_FLIP_COUNT");

	if (count && *count)
		flips = (unsigned)strtoul(count, NULL, 0);
	print_message("%u random flips in a %s log from PK_FLIP_SWEEP=%#" PRIx64 "\n", flips,
		      first, start);
	for (unsigned i = 0; i < flips; i++) {
		uint64_t r = next_random(&x);
		size_t off = base + (size_t)(r % span);
		unsigned bit = (unsigned)(r >> 61);
		char how[96];

		snprintf(how, sizeof(how), "flip %u of %u in the %s log from PK_FLIP_SWEEP=%#" PRIx64,
			 i + 1, flips, first, start);
		describe(what, sizeof(what), off, bit, how);
		check_flip(off, bit, what);
	}
}

/* The log of the report: a first writer's 40 lines, most slots unused. */
static void test_random_flips(void **state)
{
	(void)state;
	random_flips("first", FLIPS);
}

/* A log with the lane pool: flips in the pool only. */
static void test_random_flips_lanes(void **state)
{
	(void)state;
	lanes_sweep = 1;
	random_flips("lanes", FLIPS / 4);
	lanes_sweep = 0;
}

/* A log whose ring wrapped: every slot used, the tail moving. */
static void test_random_flips_wrapped(void **state)
{
	(void)state;
	random_flips("wrapped", FLIPS / 2);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], CHILD_ARG))
		return sweep_child(argv[2]);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unused_seq_word, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unused_state_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_flips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_flips_wrapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_flips_lanes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
