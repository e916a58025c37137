// SPDX-License-Identifier: MIT
/*
 * stress_logfile.c - several processes on one log file (src/log/logfile.c,
 * src/log/registry.c, the shared-log paths of src/ring/ringbuffer.c), bounded in time.
 *
 * Every record is self-checking: its text is derived from (writer, thread,
 * counter) - numbers, a pseudo-random pad and a checksum - so a reader
 * regenerates it and spots a torn copy, and the counters tell it what is
 * missing.
 *
 * two writers: two forked processes, each with a handle of its own, store N
 *   records each into a 1 MiB log (large enough that nothing is overwritten)
 *   while the parent follows live, sleeping in prb_wait() when it is ahead,
 *   through a read-only handle or a writer handle (alternating rounds).
 *   Checked: every record arrives exactly once, seqs have no gap, each
 *   writer's counters arrive in order, nothing is torn, no counter moved;
 *   a post-mortem reader afterwards sees the same.
 *
 * SIGKILL loop (>= 200 iterations per configuration): the parent, itself a
 *   writer of the file, forks a writer child (1 or 2 threads storing records
 *   in a tight loop with pk_log_store(), or printk() lines built from
 *   pr_cont() fragments into the file through pk_set_log_buf_file()), waits
 *   until it writes, waits 0-3 ms more and SIGKILLs it. Then it stores a
 *   record of its own - retrying for at most 1 s: a dead writer's claimed
 *   record is reclaimed at once, an unclaimed slot after PRB_STALL_NS - and
 *   reads up to it, with a writer handle or a read-only one (alternating);
 *   in one configuration it then stores a whole lap of the ring, so that the
 *   tail is pushed over the dead record. Checked per iteration:
 *   nothing hangs (time bound), every record read is intact, each killed
 *   thread's counters are contiguous (only its in-flight record may be
 *   lost), at most one record per killed thread is missing beyond what was
 *   overwritten, and the holes + stolen counters grow by at most the number
 *   of killed threads overall. At the end a read-only post-mortem pass reads
 *   the whole file again.
 *
 * The same loop with lanes (docs/lanes.md; two configurations of 100
 *   iterations, a 1 MiB log and a 32 KiB one that wraps (the smallest log with lanes)): the log file is
 *   made with lanes on and the
 *   child's threads print pr_info() lines no console prints, so they go into
 *   their lanes and are merged into the ring by the child itself whenever a
 *   lane fills; the kill lands inside a lane store, inside a merge (the
 *   merge lock and the record in flight left behind) or inside a ring store.
 *   Each thread publishes in shared memory how many of its calls returned.
 *   The parent reads to the end (its own record, then the lane records a
 *   merge gives the next seqs): on odd iterations first through the
 *   read-only handle, which sees the unmerged records in its view, then
 *   through the writer handle, which merges them: the same records at the
 *   same seqs. Checked besides the above: every call that returned is read,
 *   exactly once and in its thread's order (at most the one in flight when
 *   the kill came is missing: a lane store is published by one release); no
 *   lane is left claimed or pending and none is counted damaged. A last
 *   child is killed with its records unmerged, and the file is read by a
 *   fresh read-only handle, then merged by a fresh writable one: the same.
 *
 * Regression (see test_logfile.c, test_dead_unclaimed_slot_passed): a writer
 * killed between its head CAS and its claim used to leave a slot readers never
 * passed while the ring was not full. The loop notices it (a reader still
 * blocked after 250 ms, 2.5 stall times, with nobody writing), counts it,
 * steps over it with PRB_READ_SKIP_UNFINISHED so that the other checks go on,
 * and fails at the end if it happened.
 *
 * A parent store refused for 1 s ("log full of records still being written")
 * in the 2-thread configuration is the bug test_logfile.c's
 * test_two_unclaimed_in_a_row pins down: both threads killed between their
 * head CAS and their extent tag block the tail for good (seen under TSan,
 * which widens that window).
 *
 * Duration: PRINTK_STRESS_MS for the two-writer rounds (default 1500 ms);
 * the SIGKILL loops run their iteration count (a few seconds each).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/printk.h>

#include "testutil.h"
#include "log/log_internal.h"

#ifdef PRINTK_RING_SMALL_IDS
/* Small ids: positions are 15 bits and descriptors must stay under half of
 * the 13-bit id space, so a 64 KiB ring, well inside both. */
#define BIG_LOG (64u * 1024)
#define TWO_WRITER_RECORDS 350
#else
#define BIG_LOG (1024u * 1024)
#define TWO_WRITER_RECORDS 5000
#endif

#define KILL_ITERATIONS	 200
#define LANE_ITERATIONS	 100 /* each reads up to the whole log twice */
#define STORE_BOUND_MS	 1000 /* the parent's store may stall this long at most */
/*
 * A reader blocked this long with nobody writing is a failure. Each slot a
 * killed thread allocated and never claimed is passed after the ring's stall
 * time (100 ms); a child with two threads can leave two in a row, and a
 * sanitizer build runs several times slower: 2 x 100 ms plus a wide margin.
 */
#define UNCLAIMED_WAIT_MS 600
#define ITERATION_MS	 5000 /* "nothing hangs" */

static char path[PATH_MAX];

/* ------------------------------------------------------------- helpers -- */

static int setup_dir(void **state)
{
	(void)state;
	if (test_dir_make("pk_stress_logfile"))
		return -1;
	snprintf(path, sizeof(path), "%s", test_dir_path("shared.log"));
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	return test_dir_remove();
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint32_t fnv32(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static unsigned pad(char *p, uint64_t key, unsigned max)
{
	uint64_t r = mix(key);
	unsigned n = (unsigned)(r % (max + 1));

	for (unsigned i = 0; i < n; i++)
		p[i] = (char)('a' + (mix(r + i) % 26));
	return n;
}

/* "w<writer> t<thread> c<counter> <pad> #<checksum>" */
static size_t make_text(char *buf, unsigned w, unsigned t, unsigned c)
{
	int n = sprintf(buf, "w%u t%u c%u ", w, t, c);

	n += (int)pad(buf + n, (uint64_t)w << 40 ^ (uint64_t)t << 32 ^ c, 40);
	n += sprintf(buf + n, " #%08x", fnv32(buf, (size_t)n));
	return (size_t)n;
}

/* Parse and regenerate: 0 if @text is exactly the record of (w, t, c). */
static int check_text(const char *text, size_t len, unsigned *w, unsigned *t, unsigned *c)
{
	char want[128];

	if (sscanf(text, "w%u t%u c%u ", w, t, c) != 3)
		return -1;

	size_t n = make_text(want, *w, *t, *c);

	return n == len && memcmp(want, text, n) == 0 ? 0 : -1;
}

/* printk lines: fragment k of line c of writer w, "[w.c.k|pad] ". */
#define FRAGS 4

static size_t make_frag(char *buf, unsigned w, unsigned c, unsigned k)
{
	int n = sprintf(buf, "[%u.%u.%u|", w, c, k);

	n += (int)pad(buf + n, (uint64_t)w << 40 ^ (uint64_t)c << 8 ^ k ^ 0x5a5a0000, 12);
	n += sprintf(buf + n, "] ");
	return (size_t)n;
}

/*
 * @text must be whole, intact fragments of writer w in increasing (line,
 * fragment) order; each is regenerated and compared. Sets the line and
 * fragment of the first and the last; returns how many fragments are missing
 * in between (printk drops those it cannot store, and a pr_cont() after a
 * dropped line end joins the line still open), or -1.
 */
struct frag_span {
	unsigned w, c_first, k_first, c_last, k_last;
};

static int check_frags(const char *text, size_t len, struct frag_span *sp)
{
	char want[64];
	size_t off = 0;
	unsigned w, c, k, n = 0;
	int missing = 0;

	while (off < len) {
		if (sscanf(text + off, "[%u.%u.%u|", &w, &c, &k) != 3 || k >= FRAGS)
			return -1;
		if (n == 0) {
			sp->w = w;
			sp->c_first = c;
			sp->k_first = k;
		} else if (w != sp->w || c < sp->c_last || (c == sp->c_last && k <= sp->k_last)) {
			return -1;
		} else if (c == sp->c_last) {
			missing += (int)(k - sp->k_last - 1);
		} else {
			missing += (int)(FRAGS - 1 - sp->k_last + k) +
				   (int)(c - sp->c_last - 1) * FRAGS;
		}

		size_t m = make_frag(want, w, c, k);

		if (off + m > len || memcmp(text + off, want, m) != 0)
			return -1;
		off += m;
		sp->c_last = c;
		sp->k_last = k;
		n++;
	}
	return n ? missing : -1;
}

static void store_or_retry(struct pk_log *log, const char *text, size_t len, uint64_t *max_stall)
{
	uint64_t t0 = now_ms();
	int err;

	while ((err = pk_log_store(log, 0, 6, text, len, NULL, 0)) == -ENOBUFS &&
	       now_ms() - t0 < STORE_BOUND_MS)
		usleep(1000);
	if (err) {
		struct prb_stats st;

		prb_get_stats(pk_log_ring(log), &st);
		print_message("parent store: %s after %llu ms (first %llu, next %llu, "
			      "reserve %llu, holes %llu, stolen %llu, failed %llu)\n",
			      pk_log_strerror(err),
			      (unsigned long long)(now_ms() - t0),
			      (unsigned long long)pk_log_first_seq(log),
			      (unsigned long long)pk_log_next_seq(log),
			      (unsigned long long)prb_next_reserve_seq(pk_log_ring(log)),
			      (unsigned long long)st.holes, (unsigned long long)st.stolen,
			      (unsigned long long)st.reserve_failed);
	}
	assert_int_equal(err, 0);
	if (max_stall && now_ms() - t0 > *max_stall)
		*max_stall = now_ms() - t0;
}

/* One byte from a child within @ms. */
static void wait_ready(int fd, unsigned ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, (int)ms) != 1 || read(fd, &c, 1) != 1)
		fail_msg("a child did not start");
}

static void get_stats(struct pk_log *log, struct prb_stats *st)
{
	prb_get_stats(pk_log_ring(log), st);
}

/* ---------------------------------------------------------- two writers -- */

static struct pk_record rec;

static void two_writer_child(unsigned w, unsigned n, int start_fd)
{
	struct pk_log *log;
	char text[128], c;
	unsigned failed = 0;

	if (pk_log_open_file(&log, path, 0, 0))
		_exit(100);
	if (read(start_fd, &c, 1) != 0) /* the parent closes it: go */
		_exit(101);
	for (unsigned i = 0; i < n; i++) {
		size_t len = make_text(text, w, 0, i);

		while (pk_log_store(log, 0, 6, text, len, NULL, 0) != 0)
			failed++;
	}
	pk_log_destroy(log);
	_exit(failed > 99 ? 99 : (int)failed);
}

static void two_writers_round(int writable_reader, unsigned n, unsigned *records)
{
	struct pk_log *log;
	int start[2];
	pid_t pid[2];
	unsigned next[2] = { 0, 0 }, done = 0, gaps = 0, failed = 0;
	uint32_t pids[2];

	unlink(path);
	assert_int_equal(pk_log_open_file(&log, path, BIG_LOG, 0), 0);
	if (!writable_reader) {
		pk_log_destroy(log);
		assert_int_equal(pk_log_open_file(&log, path, 0, PK_LOG_RDONLY), 0);
	}
	assert_int_equal(pipe2(start, O_CLOEXEC), 0);
	for (unsigned w = 0; w < 2; w++) {
		pid[w] = fork();
		assert_true(pid[w] >= 0);
		if (pid[w] == 0) {
			close(start[1]);
			two_writer_child(w, n, start[0]);
		}
		pids[w] = (uint32_t)pid[w];
	}
	close(start[0]);
	close(start[1]);

	uint64_t seq = 0, t0 = now_ms();

	while (next[0] < n || next[1] < n) {
		int err = pk_log_read(log, seq, &rec, 0);
		unsigned w, t, c;

		if (err == -EAGAIN) {
			assert_true(now_ms() - t0 < 60 * 1000);
			prb_wait(pk_log_ring(log), seq, 200 * 1000 * 1000);
			continue;
		}
		assert_int_equal(err, 0);
		/* Nothing lost. A writer descheduled for PRB_STALL_NS between its
		 * reservation and its claim (a loaded machine) has its slot stolen:
		 * a counted gap, and its store fails and is made again. */
		assert_true(rec.seq >= seq);
		gaps += (unsigned)(rec.seq - seq);
		seq = rec.seq;
		assert_int_equal(check_text(rec.text, rec.text_len, &w, &t, &c), 0);
		assert_true(w < 2);
		assert_int_equal(t, 0);
		assert_int_equal(c, next[w]); /* once, in order */
		assert_int_equal(rec.pid, pids[w]);
		assert_int_equal(rec.state, PK_REC_FINAL);
		next[w]++;
		seq++;
		done++;
	}
	for (unsigned w = 0; w < 2; w++) {
		int status;

		test_reap(pid[w], &status, 60 * 1000);
		assert_true(WIFEXITED(status));
		failed += (unsigned)WEXITSTATUS(status); /* stores refused (and made again) */
	}
	assert_int_equal(pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED), -EAGAIN);
	assert_int_equal(pk_log_next_seq(log), 2 * n + gaps);

	struct prb_stats st;

	get_stats(log, &st);
	if (gaps)
		print_message("%u slots stolen from stalled writers (loaded machine)\n", gaps);
	assert_int_equal(st.holes, 0);
	assert_int_equal(st.stolen, gaps); /* every gap is a steal... */
	assert_int_equal(failed, gaps);	   /* ...whose store failed and was made again */
	assert_int_equal(st.corrupt, 0);
	assert_int_equal(st.reserve_failed, gaps); /* the late claim counts there */
	pk_log_destroy(log);

	/* Post-mortem: every writer is gone; the file says the same. */
	assert_int_equal(pk_log_open_file(&log, path, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(pk_log_first_seq(log), 0);
	next[0] = next[1] = 0;
	for (seq = 0; seq < 2 * n + gaps; seq++) {
		unsigned w, t, c;

		assert_int_equal(pk_log_read(log, seq, &rec, 0), 0);
		if (rec.seq != seq) { /* a stolen slot, as the live reader saw */
			assert_true(gaps > 0 && rec.seq > seq);
			seq = rec.seq;
		}
		assert_int_equal(check_text(rec.text, rec.text_len, &w, &t, &c), 0);
		assert_int_equal(c, next[w]++);
	}
	assert_int_equal(next[0] + next[1], 2 * n);
	pk_log_destroy(log);
	*records += done;
}

static void test_two_writers_live_reader(void **state)
{
	(void)state;
	unsigned ms = stress_ms(1500), rounds = 0, records = 0;
	uint64_t t0 = now_ms();

	while (rounds < 2 || now_ms() - t0 < ms) {
		two_writers_round(rounds & 1, TWO_WRITER_RECORDS, &records);
		rounds++;
	}
	print_message("two writers: %u rounds, %u records, each read exactly once\n", rounds,
		      records);
}

/* -------------------------------------------------------- SIGKILL loop -- */

struct kill_cfg {
	const char *name;
	size_t log_len;
	unsigned threads; /* writer threads in the child (pk_log_store) */
	int printk;	  /* the child writes printk lines instead */
	int wrap;	  /* after each kill the parent stores a whole lap of the ring */
	int lanes;	  /* the child's threads print filtered pr_info() lines: lanes */
	unsigned iterations; /* 0: KILL_ITERATIONS */
};

/* Lanes: how many calls of each child thread returned (shared memory). */
static _Atomic unsigned *lane_done;

struct killer_thread {
	struct pk_log *log;
	unsigned w, t;
	int ready_fd;
};

static void *child_writer(void *arg)
{
	struct killer_thread *k = arg;
	char text[128];
	unsigned c = 0;
	int said = 0;

	for (;;) {
		size_t len = make_text(text, k->w, k->t, c);

		if (pk_log_store(k->log, 0, 6, text, len, NULL, 0) == 0) {
			c++; /* counters advance only on success: no gap is legitimate */
			if (!said && k->t == 0) {
				said = 1;
				if (write(k->ready_fd, "r", 1) != 1)
					_exit(5);
			}
		}
	}
	return NULL;
}

static void child_printk(unsigned w, int ready_fd)
{
	char frag[64];

	pk_printk_exit(); /* forget the inherited default log: no consoles either */
	if (pk_set_log_buf_file(path, 0) != 0)
		_exit(6);
	for (unsigned c = 0;; c++) {
		for (unsigned k = 0; k < FRAGS; k++) {
			make_frag(frag, w, c, k);
			if (k == 0)
				printk(KERN_INFO "%s", frag);
			else if (k < FRAGS - 1)
				pr_cont("%s", frag);
			else
				pr_cont("%s\n", frag);
		}
		if (c == 0 && write(ready_fd, "r", 1) != 1)
			_exit(5);
	}
}

/* make_text()'s line, printed: the format is a literal, so the line, which
 * no console prints, goes into the thread's lane. */
static void lane_line(unsigned w, unsigned t, unsigned c)
{
	char text[128], padbuf[64];
	size_t n = make_text(text, w, t, c);
	int pre = snprintf(padbuf, sizeof(padbuf), "w%u t%u c%u ", w, t, c);
	size_t plen = n - 10 - (size_t)pre; /* " #" and 8 digits end it */

	memcpy(padbuf, text + pre, plen);
	padbuf[plen] = '\0';
	pr_info("w%u t%u c%u %s #%08x\n", w, t, c, padbuf, fnv32(text, n - 10));
}

struct lane_thread {
	unsigned w, t;
	int ready_fd;
};

static void *child_lane_writer(void *arg)
{
	struct lane_thread *k = arg;

	for (unsigned c = 0;; c++) {
		lane_line(k->w, k->t, c);
		atomic_store(&lane_done[k->t], c + 1);
		if (c == 0 && k->t == 0 && write(k->ready_fd, "r", 1) != 1)
			_exit(5);
	}
	return NULL;
}

static void child_lanes(const struct kill_cfg *cfg, unsigned w, int ready_fd)
{
	pk_printk_exit(); /* forget the inherited default log: no consoles either */
	pk_set_lanes(1);
	if (pk_set_log_buf_file(path, 0) != 0)
		_exit(6);
	pk_set_console_loglevel(1); /* pr_info() is filtered: lanes */

	struct lane_thread k[4];
	pthread_t th[4];

	for (unsigned t = 0; t < cfg->threads; t++) {
		k[t] = (struct lane_thread){ .w = w, .t = t, .ready_fd = ready_fd };
		if (t + 1 < cfg->threads && pthread_create(&th[t], NULL, child_lane_writer, &k[t]))
			_exit(7);
	}
	child_lane_writer(&k[cfg->threads - 1]);
	_exit(0);
}

static void kill_child_main(const struct kill_cfg *cfg, struct pk_log *log, unsigned w,
			    int ready_fd)
{
	if (cfg->printk)
		child_printk(w, ready_fd);
	if (cfg->lanes)
		child_lanes(cfg, w, ready_fd);

	struct killer_thread k[4];
	pthread_t th[4];

	for (unsigned t = 0; t < cfg->threads; t++) {
		k[t] = (struct killer_thread){ .log = log, .w = w, .t = t, .ready_fd = ready_fd };
		if (t + 1 < cfg->threads && pthread_create(&th[t], NULL, child_writer, &k[t]))
			_exit(7);
	}
	child_writer(&k[cfg->threads - 1]);
	_exit(0);
}

struct kill_totals {
	unsigned iterations;
	unsigned killed_threads; /* sum over iterations */
	uint64_t records;	 /* records read */
	uint64_t overwritten;	 /* skipped because the ring wrapped before we read */
	uint64_t missing;	 /* lost beyond the overwritten: dead writers' records */
	uint64_t max_stall_ms;	 /* longest wait of a parent store */
	uint64_t max_iter_ms;
	unsigned unclaimed_blocked; /* readers stuck at an unclaimed slot: must be 0 */
	/* lanes: where the kills came (pool words 0 and 4, lanes.c) */
	unsigned kill_pending;	 /* lane records not merged yet */
	unsigned kill_in_merge;	 /* the child held the merge lock */
	unsigned kill_inflight;	 /* ...with a record named in flight */
	unsigned ro_views;	 /* read-only reads that then matched the merge */
};

/* Lanes: (seq, text hash) of every record a read-only pass read, to be
 * found again at the same seqs by the writer handle after it merged. */
struct seen_rec {
	uint64_t seq;
	uint32_t hash;
	char text[80];
};
static struct seen_rec *captured;
static size_t ncaptured, capcap;
static int capturing;

static void capture(uint64_t seq, const char *text, size_t len)
{
	if (!capturing)
		return;
	if (ncaptured == capcap) {
		capcap = capcap ? 2 * capcap : 4096;
		captured = realloc(captured, capcap * sizeof(*captured));
		assert_non_null(captured);
	}
	captured[ncaptured] = (struct seen_rec){ seq, fnv32(text, len), "" };
	memcpy(captured[ncaptured].text, text, len < 79 ? len : 79);
	captured[ncaptured++].text[len < 79 ? len : 79] = '\0';
}

/* A lane record still waits in a lane (not merged). */
static uint64_t lanes_pending(struct pk_log *log)
{
	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(log), &st);
	return st.pending;
}

/* What the reader learned about one killed thread in this iteration. */
struct thread_seen {
	int any;
	unsigned last;
};

/* Read from *@seq up to and including the parent's record @until_text;
 * check everything; count what is missing. */
static void read_to_parent(struct pk_log *log, const struct kill_cfg *cfg, unsigned iter,
			   uint32_t child_pid, int drops, const char *until_text, uint64_t *seq,
			   struct kill_totals *tot)
{
	struct thread_seen seen[4] = { { 0 } };
	uint64_t first = pk_log_first_seq(log); /* nobody writes now: stable */
	uint64_t missing = 0, overwritten = 0, t_end = 0;
	int seen_parent = 0;

	if (*seq < first) {
		overwritten = first - *seq;
		tot->overwritten += overwritten;
		*seq = first;
	}
	for (;;) {
		int err = pk_log_read(log, *seq, &rec, 0);

		/* Lanes: the records a merge numbers after the parent's; the end
		 * is where nothing waits in a lane (a read-only view shows them
		 * all; a writer handle merges them as the ring takes them). */
		if (err == -EAGAIN && cfg->lanes && seen_parent && *seq >= pk_log_next_seq(log)) {
			if (!pk_log_ring(log)->writable || !lanes_pending(log))
				break;
			if (!t_end)
				t_end = now_ms();
			if (now_ms() - t_end > 10000)
				fail_msg("%s iteration %u: %llu lane records not merged after 10 s",
					 cfg->name, iter, (unsigned long long)lanes_pending(log));
			usleep(1000);
			continue;
		}
		if (err == -EAGAIN) {
			/* Nobody writes: a reader must not stay blocked. */
			uint64_t t0 = now_ms();

			while ((err = pk_log_read(log, *seq, &rec, 0)) == -EAGAIN &&
			       now_ms() - t0 < UNCLAIMED_WAIT_MS)
				usleep(5 * 1000);
			if (err == -EAGAIN) {
				struct prb_record r;

				/* Stuck at a dead writer's unclaimed slot: step over it. */
				char why[256];

				prb_describe_slot(pk_log_ring(log), *seq, why, sizeof(why));
				print_message("reader blocked at %s\n", why);
				tot->unclaimed_blocked++;
				assert_int_equal(prb_read(pk_log_ring(log), *seq, &r,
							  PRB_READ_SKIP_UNFINISHED),
						 0);
				missing += r.seq - *seq;
				*seq = r.seq;
				continue;
			}
		}
		assert_int_equal(err, 0);
		missing += rec.seq - *seq;
		*seq = rec.seq + 1;
		tot->records++;
		capture(rec.seq, rec.text, rec.text_len);
		if (!strcmp(rec.text, until_text)) {
			assert_false(seen_parent); /* once */
			seen_parent = 1;
			if (!cfg->lanes)
				break;
			continue;
		}

		unsigned w, t, c;

		if (rec.pid != child_pid) {
			/* The parent's wrap records of this iteration. */
			assert_int_equal(strncmp(rec.text, "parent ", 7), 0);
			continue;
		}
		if (cfg->printk) {
			struct frag_span sp;
			unsigned long refused;
			int end = 0;

			/* The child's own count of lines the ring refused while a
			 * killed writer's record blocked it (stored with its next
			 * line, or the one after if the ring refused it too). */
			if (sscanf(rec.text, "printk: %lu messages not stored: %n", &refused, &end) == 1 &&
			    end > 0 && refused > 0)
				continue;

			int gaps = check_frags(rec.text, rec.text_len, &sp);

			if (gaps < 0)
				print_message("%s iteration %u: bad record %llu flags %#x "
					      "state %u: \"%s\"\n", cfg->name, iter,
					      (unsigned long long)rec.seq, rec.flags, rec.state,
					      rec.text);
			assert_true(gaps >= 0); /* whole, intact fragments */
			/* Nobody else writes, so lines are whole - unless the child's
			 * printk dropped fragments while the ring was blocked. */
			if (!drops) {
				assert_int_equal(gaps, 0);
				assert_int_equal(sp.k_first, 0);
				assert_int_equal(sp.c_first, sp.c_last);
			}
			if (sp.k_first > 0)
				assert_true(rec.flags & PK_REC_CONT);
			if (sp.k_last < FRAGS - 1)
				assert_int_equal(rec.flags & PK_REC_NEWLINE, 0); /* the open line */
			w = sp.w;
			c = sp.c_first;
			t = 0;
			/* Contiguous lines (checked below from the first line). */
			if (seen[0].any && !drops)
				assert_int_equal(c, seen[0].last + 1);
			seen[0].any = 1;
			seen[0].last = sp.c_last;
			assert_int_equal(w, iter);
			continue;
		}
		assert_int_equal(check_text(rec.text, rec.text_len, &w, &t, &c), 0);
		assert_int_equal(w, iter);
		assert_true(t < cfg->threads);
		/* Contiguous: no loss inside (the writers retry a failed store). */
		if (seen[t].any)
			assert_int_equal(c, seen[t].last + 1);
		seen[t].any = 1;
		seen[t].last = c;
	}
	if (cfg->lanes) {
		/* Every call that returned is there (the newest records are never
		 * the overwritten ones), and at most the one in flight beyond. */
		for (unsigned t = 0; t < cfg->threads; t++) {
			unsigned done = atomic_load(&lane_done[t]);

			if (!seen[t].any) {
				if (done && !overwritten)
					fail_msg("%s iteration %u: thread %u returned from %u calls, "
						 "none read", cfg->name, iter, t, done);
				continue;
			}
			if (seen[t].last + 1 < done || seen[t].last > done)
				fail_msg("%s iteration %u: thread %u returned from %u calls, "
					 "the last read is call %u", cfg->name, iter, t, done,
					 seen[t].last);
		}
	}
	/* Only the in-flight record of each killed thread may be missing. */
	if (missing > cfg->threads)
		print_message("%s iteration %u: %llu records missing\n", cfg->name, iter,
			      (unsigned long long)missing);
	assert_true(missing <= cfg->threads);
	tot->missing += missing;
}

/* Lanes: where the kill came, from the pool's words (lanes.c: word 0 the
 * merge lock, pid | tid << 32; word 4 the record in flight). */
static void note_lane_kill(struct pk_log *w, uint32_t pid, struct kill_totals *tot)
{
	pk_a64 *pool = pk_log_ring(w)->lanes;
	uint64_t lock = pk_load_relaxed(&pool[0]);

	tot->kill_pending += lanes_pending(w) > 0;
	if ((uint32_t)lock == pid) {
		tot->kill_in_merge++;
		tot->kill_inflight += pk_load_relaxed(&pool[4]) != 0;
	}
}

/* The writer handle merges what a read-only view showed up to @end: every
 * record captured is at the same seq with the same text. */
static void merged_as_viewed(struct pk_log *w, uint64_t end, const struct kill_cfg *cfg,
			     unsigned iter)
{
	uint64_t t0 = now_ms();

	for (;;) {
		/* A writer handle's merges; a dead writer's unfinished record
		 * holds the ring's next seq back until it is read. */
		pk_log_next_seq(w);

		uint64_t next = prb_next_reserve_seq(pk_log_ring(w));

		if (next >= end && !lanes_pending(w))
			break;
		if (now_ms() - t0 > 10000) {
			struct prb_lanes_stats ls;
			struct prb_stats rs;

			prb_lanes_stats(pk_log_ring(w), &ls);
			prb_get_stats(pk_log_ring(w), &rs);
			print_message("lanes: in_use %llu merged %llu corrupt %llu full %llu; ring: holes "
				      "%llu stolen %llu corrupt %llu reserve_failed %llu reserve %llu\n",
				      (unsigned long long)ls.in_use, (unsigned long long)ls.merged,
				      (unsigned long long)ls.corrupt, (unsigned long long)ls.full,
				      (unsigned long long)rs.holes, (unsigned long long)rs.stolen,
				      (unsigned long long)rs.corrupt, (unsigned long long)rs.reserve_failed,
				      (unsigned long long)prb_next_reserve_seq(pk_log_ring(w)));
			for (size_t i = 0; i < ncaptured; i++) {
				if (pk_log_read(w, captured[i].seq, &rec, 0) || rec.seq != captured[i].seq ||
				    fnv32(rec.text, rec.text_len) != captured[i].hash) {
					print_message("first difference: view's record %zu of %zu, seq %llu "
						      "\"%s\": merged %llu \"%s\"\n", i, ncaptured,
						      (unsigned long long)captured[i].seq, captured[i].text,
						      (unsigned long long)rec.seq, rec.text);
					char why[256];

					prb_describe_slot(pk_log_ring(w), captured[i].seq, why, sizeof(why));
					print_message("slot: %s\n", why);
					break;
				}
			}
			fail_msg("%s iteration %u: %llu lane records not merged after 10 s (next %llu, "
				 "view's end %llu)", cfg->name, iter,
				 (unsigned long long)lanes_pending(w),
				 (unsigned long long)pk_log_next_seq(w), (unsigned long long)end);
		}
		usleep(1000);
	}
	assert_int_equal(prb_next_reserve_seq(pk_log_ring(w)), end);

	uint64_t first = pk_log_first_seq(w);

	for (size_t i = 0; i < ncaptured; i++) {
		if (captured[i].seq < first)
			continue; /* overwritten by the merge's stores (a small ring) */
		assert_int_equal(pk_log_read(w, captured[i].seq, &rec, 0), 0);
		if (rec.seq != captured[i].seq || fnv32(rec.text, rec.text_len) != captured[i].hash)
			fail_msg("%s iteration %u: the view's record %llu is \"%s\" (%llu) merged",
				 cfg->name, iter, (unsigned long long)captured[i].seq, rec.text,
				 (unsigned long long)rec.seq);
	}
}

/* One child of kill_child_main() for iteration @iter, on @w (with lanes,
 * lane_done cleared first): let write, then killed somewhere in the next
 * 0-3 ms, and reaped. Returns its pid. */
static pid_t kill_one_child(const struct kill_cfg *cfg, struct pk_log *w, unsigned iter)
{
	int ready[2], status;

	if (cfg->lanes)
		for (unsigned t = 0; t < 4; t++)
			atomic_store(&lane_done[t], 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);

	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		kill_child_main(cfg, w, iter, ready[1]);
	}
	close(ready[1]);
	wait_ready(ready[0], ITERATION_MS);
	close(ready[0]);
	usleep((useconds_t)(rand() % 3001));
	assert_int_equal(kill(pid, SIGKILL), 0);
	test_reap(pid, &status, ITERATION_MS);
	assert_true(WIFSIGNALED(status));
	return pid;
}

/* Lanes, post-mortem: a last child killed with its records in its lanes;
 * every handle closed; the file read by a fresh read-only handle (the view),
 * then merged by a fresh writable one. Every call that returned is read
 * once, at the seq the view gave it. */
static void lanes_post_mortem(const struct kill_cfg *cfg, struct pk_log **w, struct pk_log **ro)
{
	unsigned iter = 100000; /* numbers no iteration had */
	struct pk_log *r;

	/* A kill right after a merge (of all lanes) may leave nothing in
	 * them: another child then, until one does. */
	for (;; iter++) {
		assert_true(iter < 100010);
		kill_one_child(cfg, *w, iter);
		assert_int_equal(pk_log_open_file(&r, path, 0, PK_LOG_RDONLY), 0);

		uint64_t waiting = prb_lanes_view_count(pk_log_ring(r));

		pk_log_destroy(r);
		if (waiting)
			break;
	}
	pk_log_destroy(*ro);
	pk_log_destroy(*w);

	struct thread_seen seen[4] = { { 0 } };

	assert_int_equal(pk_log_open_file(&r, path, 0, PK_LOG_RDONLY), 0);
	assert_true(prb_lanes_view_count(pk_log_ring(r)) > 0);
	ncaptured = 0;
	capturing = 1;

	uint64_t seq = pk_log_first_seq(r), end = pk_log_next_seq(r);
	bool older = false; /* a record of an earlier iteration is still there */

	while (seq < end) {
		int err = pk_log_read(r, seq, &rec, 0);

		if (err == -EAGAIN) { /* the child's unfinished ring record */
			struct prb_record pr;

			assert_int_equal(prb_read(pk_log_ring(r), seq, &pr, PRB_READ_SKIP_UNFINISHED), 0);
			seq = pr.seq;
			continue;
		}
		assert_int_equal(err, 0);
		capture(rec.seq, rec.text, rec.text_len);
		seq = rec.seq + 1;

		unsigned a, t, c;

		if (strncmp(rec.text, "parent ", 7) == 0)
			continue;
		assert_int_equal(check_text(rec.text, rec.text_len, &a, &t, &c), 0);
		if (a != iter) {
			older = true;
			continue;
		}
		assert_true(t < cfg->threads);
		if (seen[t].any)
			assert_int_equal(c, seen[t].last + 1);
		seen[t].any = 1;
		seen[t].last = c;
	}
	capturing = 0;
	for (unsigned t = 0; t < cfg->threads; t++) {
		unsigned done = atomic_load(&lane_done[t]);

		/* A thread starved while the other filled the ring may have
		 * lost all its lines of this iteration: only when the ring
		 * holds none older (wrap, or a small ring). */
		assert_true(seen[t].any || !done || cfg->wrap || !older);
		assert_true(!seen[t].any || (seen[t].last + 1 >= done && seen[t].last <= done));
	}
	pk_log_destroy(r);

	/* A writable open: the merge gives them the seqs the view did. */
	assert_int_equal(pk_log_open_file(w, path, 0, 0), 0);
	merged_as_viewed(*w, end, cfg, iter);
	assert_int_equal(pk_log_open_file(ro, path, 0, PK_LOG_RDONLY), 0);
	assert_int_equal(prb_lanes_view_count(pk_log_ring(*ro)), 0);
}

static void kill_loop(const struct kill_cfg *cfg)
{
	struct pk_log *w, *ro;
	struct kill_totals tot = { 0 };
	struct prb_stats st0, st1;
	uint64_t rseq = 0;
	unsigned seed = (unsigned)getpid() ^ (unsigned)now_ms();
	char text[128];

	srand(seed);
	unlink(path);
	if (cfg->lanes) {
		/* The file gets the lane pool when it is made with lanes on. */
		lane_done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		assert_true(lane_done != MAP_FAILED);
		pk_set_lanes(1);
	}
	assert_int_equal(pk_log_open_file(&w, path, cfg->log_len, 0), 0);
	pk_set_lanes(0);
	assert_int_equal(pk_log_open_file(&ro, path, 0, PK_LOG_RDONLY), 0);
	assert_true(!cfg->lanes || pk_log_ring(w)->lanes);

	uint64_t lap = pk_log_ring(w)->desc_count + pk_log_buf_len(w) / 32;
	uint64_t t_start = now_ms();

	unsigned iterations = cfg->iterations ? cfg->iterations : KILL_ITERATIONS;

	for (unsigned iter = 0; iter < iterations; iter++) {
		uint64_t t_iter = now_ms();

		get_stats(w, &st0);

		pid_t pid = kill_one_child(cfg, w, iter);

		tot.killed_threads += cfg->printk ? 1 : cfg->threads;
		if (cfg->lanes)
			note_lane_kill(w, (uint32_t)pid, &tot);

		/* The log keeps working for the writers that live on. */
		int n = snprintf(text, sizeof(text), "parent %u done", iter);

		store_or_retry(w, text, (size_t)n, &tot.max_stall_ms);
		get_stats(w, &st1);
		if (cfg->lanes && (iter & 1)) {
			/* The read-only view first, then the merge: the same. */
			ncaptured = 0;
			capturing = 1;
			read_to_parent(ro, cfg, iter, (uint32_t)pid,
				       st1.reserve_failed != st0.reserve_failed, text, &rseq, &tot);
			capturing = 0;
			merged_as_viewed(w, rseq, cfg, iter);
			tot.ro_views++;
		} else {
			read_to_parent(iter & 1 ? ro : w, cfg, iter, (uint32_t)pid,
				       st1.reserve_failed != st0.reserve_failed, text, &rseq, &tot);
		}
		if (cfg->lanes) {
			struct prb_lanes_stats ls;

			prb_lanes_stats(pk_log_ring(w), &ls);
			assert_int_equal(ls.pending, 0);
			assert_int_equal(ls.in_use, 0); /* the dead child's lanes are free */
			assert_int_equal(ls.corrupt, 0);
		}
		if (cfg->wrap) {
			/* A lap: the tail passes the dead record (a hole already if a
			 * writer handle read it, still RESERVED if a read-only one did). */
			for (uint64_t i = 0; i < lap; i++) {
				n = snprintf(text, sizeof(text), "parent %u wrap %llu", iter,
					     (unsigned long long)i);
				store_or_retry(w, text, (size_t)n, &tot.max_stall_ms);
			}
		}

		/* Each killed thread had one record in flight at most. */
		get_stats(w, &st1);
		assert_true(st1.holes + st1.stolen <= tot.killed_threads);
		assert_int_equal(st1.corrupt, 0);

		uint64_t took = now_ms() - t_iter;

		if (took > tot.max_iter_ms)
			tot.max_iter_ms = took;
		assert_true(took < ITERATION_MS); /* nothing hangs */
		tot.iterations++;
	}

	/* Post-mortem, read-only: everything still there is intact, up to the
	 * parent's last record (stepping over an unclaimed slot if stuck). */
	uint64_t seq = pk_log_first_seq(ro), n = 0, end = prb_next_reserve_seq(pk_log_ring(ro));
	unsigned pm_blocked = 0;
	int last_is_parent = 0;

	while (seq < end) {
		int err = pk_log_read(ro, seq, &rec, PK_READ_UNFINALIZED);
		uint64_t t0 = now_ms();

		/* A read-only reader passes an unclaimed slot after the stall time. */
		while (err == -EAGAIN && now_ms() - t0 < UNCLAIMED_WAIT_MS) {
			usleep(5 * 1000);
			err = pk_log_read(ro, seq, &rec, PK_READ_UNFINALIZED);
		}
		if (err != 0) {
			struct prb_record r;

			pm_blocked++;
			assert_int_equal(prb_read(pk_log_ring(ro), seq, &r,
						  PRB_READ_SKIP_UNFINISHED), 0);
			seq = r.seq;
			continue;
		}

		unsigned a, b, c2;
		struct frag_span sp;
		int ok = 1;

		last_is_parent = !strcmp(rec.text, text);
		if (strncmp(rec.text, "parent ", 7) != 0)
			ok = cfg->printk ? check_frags(rec.text, rec.text_len, &sp) >= 0
					 : check_text(rec.text, rec.text_len, &a, &b, &c2) == 0;
		assert_true(ok);
		seq = rec.seq + 1;
		n++;
	}
	assert_true(last_is_parent || cfg->lanes); /* lanes: merged records come after it */
	tot.unclaimed_blocked += pm_blocked;
	if (cfg->lanes)
		lanes_post_mortem(cfg, &w, &ro);
	get_stats(w, &st1);
	print_message("%s: %u iterations in %llu ms (longest %llu ms, seed %u), %llu records read, "
		      "%llu overwritten before reading, %llu lost in %u killed threads "
		      "(holes %llu, stolen %llu), longest parent store stall %llu ms, "
		      "post-mortem %llu records (blocked %u times), readers blocked by an "
		      "unclaimed slot %u times\n",
		      cfg->name, tot.iterations, (unsigned long long)(now_ms() - t_start),
		      (unsigned long long)tot.max_iter_ms, seed, (unsigned long long)tot.records,
		      (unsigned long long)tot.overwritten, (unsigned long long)tot.missing,
		      tot.killed_threads, (unsigned long long)st1.holes,
		      (unsigned long long)st1.stolen, (unsigned long long)tot.max_stall_ms,
		      (unsigned long long)n, pm_blocked, tot.unclaimed_blocked);
	if (cfg->lanes) {
		struct prb_lanes_stats ls;

		prb_lanes_stats(pk_log_ring(w), &ls);
		print_message("%s: kills with lane records unmerged %u, inside a merge %u "
			      "(a record in flight %u), read-only views matched by the merge %u; "
			      "%llu lane records merged, %llu found their lane full\n",
			      cfg->name, tot.kill_pending, tot.kill_in_merge, tot.kill_inflight,
			      tot.ro_views, (unsigned long long)ls.merged,
			      (unsigned long long)ls.full);
		assert_true(ls.merged > 0);
		assert_true(tot.kill_pending > 0);
		munmap((void *)lane_done, 4096);
	}
	pk_log_destroy(ro);
	pk_log_destroy(w);
	assert_true(tot.max_stall_ms <= STORE_BOUND_MS);
	/* Readers pass the unclaimed slot of a writer killed between its head CAS
	 * and its claim within the stall time (test_dead_unclaimed_slot_passed). */
	assert_int_equal(tot.unclaimed_blocked, 0);
}

static void test_kill_store_1thread(void **state)
{
	(void)state;
	static const struct kill_cfg cfg = { "kill/store/1 thread", BIG_LOG, 1, 0, 0, 0, 0 };

	kill_loop(&cfg);
}

static void test_kill_store_2threads_wrap(void **state)
{
	(void)state;
	static const struct kill_cfg cfg = { "kill/store/2 threads/wrap", 16384, 2, 0, 1, 0, 0 };

	kill_loop(&cfg);
}

static void test_kill_printk_lines(void **state)
{
	(void)state;
	static const struct kill_cfg cfg = { "kill/printk lines", BIG_LOG, 1, 1, 0, 0, 0 };

	kill_loop(&cfg);
}

static void test_kill_lanes(void **state)
{
	(void)state;
	static const struct kill_cfg cfg = { "kill/lanes/2 threads", BIG_LOG, 2, 0, 0, 1, LANE_ITERATIONS };

	kill_loop(&cfg);
}

static void test_kill_lanes_wrap(void **state)
{
	(void)state;
	static const struct kill_cfg cfg = { "kill/lanes/2 threads/wrap", 32768, 2, 0, 1, 1, LANE_ITERATIONS };

	kill_loop(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_writers_live_reader),
		cmocka_unit_test(test_kill_store_1thread),
		cmocka_unit_test(test_kill_store_2threads_wrap),
		cmocka_unit_test(test_kill_printk_lines),
		cmocka_unit_test(test_kill_lanes),
		cmocka_unit_test(test_kill_lanes_wrap),
	};
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
