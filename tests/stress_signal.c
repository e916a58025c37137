// SPDX-License-Identifier: MIT
/*
 * stress_signal.c - signal reentrancy of the record ring (src/ring/ringbuffer.c),
 * the method in docs/design.md, "Testing the ring", applied to signals.
 *
 * How: one writer thread logs continuously, plain records and lines built
 * with prb_store(final=false) + prb_extend(). A per-thread POSIX timer
 * (SIGEV_THREAD_ID, 20 kHz) and a sibling thread's pthread_kill() interrupt
 * it at random instructions, including inside the ring's own functions. The
 * two signals do not block each other, so handlers nest two deep. A handler
 * logs its own tagged records with ctx = its nesting depth: plain records,
 * two-fragment lines of its own, sometimes a probe prb_extend() that must
 * never join the line of the frame it interrupted, and now and then a burst
 * that wraps the whole ring onto a record the interrupted frame is still
 * writing (it must fail fast with -ENOBUFS, not wait: it would wait forever).
 * A reader thread follows concurrently and drains the ring at the end.
 *
 * Checked: every record is a run of consecutive, intact fragments of one
 * line of one source (main or the handler at depth d), its caller ctx is
 * that depth (handler text is never glued onto an interrupted line), the
 * CONT/NEWLINE flags match the run; main lines arrive in order; every probe
 * prb_extend() said -ENOENT; the main writer never gets -ENOBUFS (nothing it
 * does not own is ever left RESERVED); successful stores = next_reserve_seq
 * (failures consume no seq) and handler failures = the reserve_failed delta;
 * reader read + lost = next_seq; everything ends finalized; and a watchdog
 * turns a deadlock into a failure.
 *
 * Handlers use only async-signal-safe code: the ring, atomics, hand-made
 * formatting (no printf, no malloc, no cmocka asserts); they count failures
 * in atomics that the test asserts on afterwards.
 *
 * Under ThreadSanitizer (PRINTK_TSAN) this is a short smoke test only: TSan
 * defers asynchronous signal handlers to its own safe points (intercepted
 * calls), so a handler never really interrupts the ring code there.
 *
 * The last two tests reproduce ring bugs these suites found (see their
 * comments), both fixed since: a reader could return a record that its
 * writer extended afterwards (readers now hand out only finalized records),
 * and prb_extend() could report a wrong seq. They guard against regressions.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "payload.h"
#include "testutil.h"
#include "ring/ringbuffer.h"

/* glibc before 2.41 spells the SIGEV_THREAD_ID target only as the union member. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define FRAG_HDR   28 /* "Td.llllllll.i/n.pp.kkkkkkkk|" */
#define FRAG_PAY   40 /* payload bytes at most */
#define MAIN_FRAG  5  /* fragments of a main line at most */
#define MAX_DEPTH  4
#define WRITER_TID 7

#ifdef PRINTK_TSAN
#define SIGNAL_MS stress_ms(300)
#else
#define SIGNAL_MS stress_ms(1500)
#endif

/* ------------------------------------------------------------ fragments -- */

/* Fragment @i of @n of source @src's line @line; async-signal-safe. */
static size_t make_frag(unsigned src, uint32_t line, unsigned i, unsigned n, char *p)
{
	struct rng g = rng_for(src, (uint64_t)line << 8 | i);
	size_t plen = (size_t)(rng_next(&g) % (FRAG_PAY + 1));

	for (size_t k = 0; k < plen; k++)
		p[FRAG_HDR + k] = (char)('a' + rng_next(&g) % 26);
	p[0] = src ? 'H' : 'M';
	p[1] = (char)('0' + src);
	p[2] = '.';
	put_hex(p + 3, line, 8);
	p[11] = '.';
	put_hex(p + 12, i, 1);
	p[13] = '/';
	put_hex(p + 14, n, 1);
	p[15] = '.';
	put_hex(p + 16, plen, 2);
	p[18] = '.';
	put_hex(p + 19, fnv1a(p + FRAG_HDR, plen), 8);
	p[27] = '|';
	return FRAG_HDR + plen;
}

static unsigned main_line_frags(uint32_t line)
{
	struct rng g = rng_for(0, (uint64_t)line << 8 | 0xff);

	return 1 + (unsigned)(rng_next(&g) % MAIN_FRAG);
}

/* --------------------------------------------------------------- state -- */

static struct prb ring;
static void *ring_mem;
static size_t ring_size;
static uint32_t my_pid;
static atomic_bool stop, writer_done, armed;
static _Atomic uint64_t end_seq;

/* Nesting depth of handlers on the writer thread (only it takes the signals). */
static volatile sig_atomic_t depth;
/* Set while the main writer has a line open (between its first and last fragment). */
static volatile sig_atomic_t main_line_open;

/* Per-depth state; index d is touched only by handlers running at depth d. */
static _Atomic uint32_t h_line[MAX_DEPTH + 1];

static _Atomic uint64_t main_stores, main_enobufs, main_extend_ok, main_extend_enoent;
static _Atomic uint64_t h_signals, h_stores, h_enobufs, h_extend_ok, h_extend_enoent;
static _Atomic uint64_t h_probes, h_probes_open, h_bursts, h_burst_enobufs, h_nested;
static _Atomic uint64_t h_fail; /* anything unexpected inside a handler */
static _Atomic int h_fail_what; /* code of the first one */

/* Failures seen outside handlers: testutil's thread_fail(). */
#define report(...) thread_fail("stress_signal", __VA_ARGS__)

enum { HF_GLUED = 1, HF_STORE, HF_EXTEND };

static void h_failed(int what)
{
	int zero = 0;

	atomic_compare_exchange_strong(&h_fail_what, &zero, what);
	atomic_fetch_add_explicit(&h_fail, 1, memory_order_relaxed);
}

static const char *h_fail_text(int what)
{
	switch (what) {
	case HF_GLUED:
		return "a probe prb_extend() joined another ctx's line";
	case HF_STORE:
		return "prb_store() failed other than with -ENOBUFS";
	default:
		return "prb_extend() failed other than with -ENOENT/-ENOBUFS";
	}
}

static void count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------- handlers -- */

static int h_store(const struct prb_meta *m, const char *t, size_t len, bool final)
{
	int rc = prb_store(&ring, m, t, len, NULL, 0, final, NULL);

	if (rc == 0)
		count(&h_stores);
	else if (rc == -ENOBUFS)
		count(&h_enobufs);
	else
		h_failed(HF_STORE);
	return rc;
}

static void handler(int sig)
{
	int saved = errno;

	(void)sig;
	if (!atomic_load_explicit(&armed, memory_order_relaxed)) {
		errno = saved;
		return;
	}
	depth++;
	count(&h_signals);
	if (depth > 1)
		count(&h_nested);

	unsigned d = depth > MAX_DEPTH ? MAX_DEPTH : (unsigned)depth;
	const struct prb_caller me = { .pid = my_pid, .tid = WRITER_TID, .ctx = (uint8_t)d };
	struct prb_meta m = { .caller = me, .level = 4, .facility = (uint8_t)d };
	char buf[FRAG_HDR + FRAG_PAY];
	uint32_t line = atomic_fetch_add_explicit(&h_line[d], 1, memory_order_relaxed);
	uint64_t r = rng_next(&(struct rng){ mix64(line ^ d << 28) });

	if (r % 8 == 0) {
		/* The newest record, if open, belongs to a frame we interrupted:
		 * a different ctx, so the probe must never join it. */
		bool open = main_line_open;

		count(&h_probes);
		if (open)
			count(&h_probes_open);
		if (prb_extend(&ring, &me, "PROBE", 5, PRB_TEXT_MAX, false, 0, NULL) != -ENOENT)
			h_failed(HF_GLUED);
	}
	if (r % 64 == 7) {
		/* Burst: far more than the ring holds. If the interrupted frame is
		 * inside a reservation, the ring wraps onto it and we must get
		 * -ENOBUFS quickly (waiting would deadlock). */
		count(&h_bursts);
		for (unsigned k = 0; k < 300; k++) {
			size_t len = make_frag(d, line, 0, 1, buf);

			m.flags = PRB_FLAG_NEWLINE;
			if (h_store(&m, buf, len, true) == -ENOBUFS) {
				count(&h_burst_enobufs);
				break;
			}
			line = atomic_fetch_add_explicit(&h_line[d], 1, memory_order_relaxed);
		}
	} else if (r % 8 >= 5) {
		/* A two-fragment line of our own (a deeper handler may break it). */
		size_t len = make_frag(d, line, 0, 2, buf);

		m.flags = 0;
		if (h_store(&m, buf, len, false) == 0) {
			len = make_frag(d, line, 1, 2, buf);
			for (;;) {
				int rc = prb_extend(&ring, &me, buf, len, PRB_TEXT_MAX, true,
						    PRB_FLAG_NEWLINE, NULL);

				if (rc == 0) {
					count(&h_extend_ok);
				} else if (rc == -ENOENT) {
					count(&h_extend_enoent);
					m.flags = PRB_FLAG_CONT | PRB_FLAG_NEWLINE;
					h_store(&m, buf, len, true);
				} else if (rc == -ENOBUFS) {
					/* Give the line up: we may not wait. Close it so
					 * that no later handler at this depth joins it. */
					count(&h_enobufs);
					prb_finalize_last(&ring);
				} else {
					h_failed(HF_EXTEND);
				}
				break;
			}
		}
	} else {
		size_t len = make_frag(d, line, 0, 1, buf);

		m.flags = PRB_FLAG_NEWLINE;
		h_store(&m, buf, len, true);
	}
	depth--;
	errno = saved;
}

/* --------------------------------------------------------- main writer -- */

static pid_t writer_tid;
static atomic_bool writer_ready;

static void *main_writer(void *arg)
{
	(void)arg;
	const struct prb_caller me = { .pid = my_pid, .tid = WRITER_TID, .ctx = 0 };
	struct prb_meta m = { .caller = me, .level = 6 };
	char buf[FRAG_HDR + FRAG_PAY];
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	timer_t timer;
	struct itimerspec its = { .it_interval = { 0, 50000 }, .it_value = { 0, 50000 } };

	writer_tid = (pid_t)syscall(SYS_gettid);
	sev.sigev_notify_thread_id = writer_tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0 ||
	    timer_settime(timer, 0, &its, NULL) != 0) {
		report("timer_create/timer_settime: %s", strerror(errno));
		atomic_store(&writer_ready, true);
		return NULL;
	}
	atomic_store(&writer_ready, true);

	for (uint32_t line = 0; !atomic_load_explicit(&stop, memory_order_relaxed); line++) {
		unsigned n = main_line_frags(line);
		bool joined_ok = false;

		for (unsigned i = 0; i < n; i++) {
			size_t len = make_frag(0, line, i, n, buf);
			bool last = i == n - 1;

			for (;;) {
				int rc;

				if (joined_ok) {
					rc = prb_extend(&ring, &me, buf, len, PRB_TEXT_MAX, last,
							last ? PRB_FLAG_NEWLINE : 0, NULL);
					if (rc == 0) {
						count(&main_extend_ok);
						break;
					}
					if (rc == -ENOBUFS) {
						count(&main_enobufs);
						continue;
					}
					if (rc != -ENOENT)
						report("main prb_extend: %d", rc);
					count(&main_extend_enoent);
					joined_ok = false;
				}
				m.flags = (uint8_t)((i ? PRB_FLAG_CONT : 0) |
						    (last ? PRB_FLAG_NEWLINE : 0));
				rc = prb_store(&ring, &m, buf, len, NULL, 0, last, NULL);
				if (rc == -ENOBUFS) {
					count(&main_enobufs);
					continue;
				}
				if (rc != 0) {
					report("main prb_store: %d", rc);
					break;
				}
				count(&main_stores);
				joined_ok = !last;
				break;
			}
			main_line_open = !last;
		}
	}

	/* No more signals: block them (pending ones die with the thread). */
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	timer_delete(timer);
	return NULL;
}

/* The sibling: a second, unsynchronized signal source that nests with the timer. */
static void *killer(void *arg)
{
	pthread_t target = *(pthread_t *)arg;
	struct timespec ts = { 0, 20000 };

	/* Stops before the writer is joined: pthread_kill() of a dead thread is undefined. */
	while (!atomic_load(&stop)) {
		pthread_kill(target, SIGRTMIN + 1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* -------------------------------------------------------------- reader -- */

struct reader_state {
	uint64_t read, lost;
	bool have[MAX_DEPTH + 1];
	uint64_t last_line[MAX_DEPTH + 1];
	unsigned last_i[MAX_DEPTH + 1], last_n[MAX_DEPTH + 1];
	uint64_t lost_at[MAX_DEPTH + 1];
};

static void check_record(struct reader_state *rs, const struct prb_record *r)
{
	char frag[FRAG_HDR + FRAG_PAY];
	size_t off = 0;
	unsigned nfr = 0, src0 = 0, i0 = 0, iend = 0, n0 = 0;
	uint64_t line0 = 0;

	while (off < r->text_len) {
		const char *p = r->text + off;
		uint64_t line, i, n, plen, sum;
		unsigned src;

		if (r->text_len - off < FRAG_HDR || (p[0] != 'M' && p[0] != 'H') || p[1] < '0' ||
		    p[1] > '0' + MAX_DEPTH || (p[0] == 'M') != (p[1] == '0') || p[2] != '.' ||
		    p[11] != '.' || p[13] != '/' || p[15] != '.' || p[18] != '.' || p[27] != '|' ||
		    !get_hex(p + 3, 8, &line) || !get_hex(p + 12, 1, &i) ||
		    !get_hex(p + 14, 1, &n) || !get_hex(p + 16, 2, &plen) ||
		    !get_hex(p + 19, 8, &sum) || i >= n || plen > FRAG_PAY ||
		    r->text_len - off < FRAG_HDR + plen) {
			report("seq %llu: garbled fragment at offset %zu of %u (%.28s)",
			       (unsigned long long)r->seq, off, r->text_len, p);
			return;
		}
		src = (unsigned)(p[1] - '0');

		size_t fl = make_frag(src, (uint32_t)line, (unsigned)i, (unsigned)n, frag);

		if (fl != FRAG_HDR + plen || memcmp(frag, p, fl) != 0 ||
		    sum != fnv1a(p + FRAG_HDR, plen)) {
			report("seq %llu: torn fragment %.28s", (unsigned long long)r->seq, p);
			return;
		}
		if (nfr == 0) {
			src0 = src;
			line0 = line;
			i0 = (unsigned)i;
			n0 = (unsigned)n;
		} else if (src != src0 || line != line0 || i != iend + 1) {
			/* e.g. a handler's fragment glued onto the line it interrupted */
			report("seq %llu: fragment %.28s glued onto source %u line %llu #%u",
			       (unsigned long long)r->seq, p, src0, (unsigned long long)line0,
			       iend);
			return;
		}
		iend = (unsigned)i;
		nfr++;
		off += fl;
	}
	if (nfr == 0) {
		report("seq %llu: empty record", (unsigned long long)r->seq);
		return;
	}

	uint8_t flags =
		(uint8_t)((i0 ? PRB_FLAG_CONT : 0) | (iend == n0 - 1 ? PRB_FLAG_NEWLINE : 0));

	if (r->caller.ctx != src0 || r->caller.tid != WRITER_TID || r->caller.pid != my_pid ||
	    r->flags != flags || r->dict_len != 0 || r->rflags != 0)
		report("seq %llu: source %u but ctx %u tid %u, flags %#x (expected %#x), "
		       "rflags %#x",
		       (unsigned long long)r->seq, src0, (unsigned)r->caller.ctx,
		       (unsigned)r->caller.tid, r->flags, flags, r->rflags);

	/* Order per source: main lines continue exactly when nothing was lost;
	 * handler lines only increase (a handler gives up on -ENOBUFS). */
	if (rs->have[src0]) {
		uint64_t pl = rs->last_line[src0];
		bool exact = src0 == 0 && rs->lost == rs->lost_at[src0];
		uint64_t nl = rs->last_i[src0] + 1 < rs->last_n[src0] ? pl : pl + 1;
		unsigned ni = rs->last_i[src0] + 1 < rs->last_n[src0] ? rs->last_i[src0] + 1 : 0;

		if (exact && (line0 != nl || i0 != ni))
			report("seq %llu: main line %llu #%u follows line %llu #%u with nothing "
			       "lost",
			       (unsigned long long)r->seq, (unsigned long long)line0, i0,
			       (unsigned long long)pl, rs->last_i[src0]);
		else if (line0 < pl || (line0 == pl && i0 <= rs->last_i[src0]))
			report("seq %llu: source %u line %llu #%u not after line %llu #%u",
			       (unsigned long long)r->seq, src0, (unsigned long long)line0, i0,
			       (unsigned long long)pl, rs->last_i[src0]);
	}
	rs->have[src0] = true;
	rs->last_line[src0] = line0;
	rs->last_i[src0] = iend;
	rs->last_n[src0] = n0;
	rs->lost_at[src0] = rs->lost;
}

static void *reader(void *arg)
{
	struct reader_state *rs = arg;
	struct prb_record *r = malloc(sizeof(*r));
	uint64_t want = 0;

	if (!r) {
		report("reader: out of memory");
		return NULL;
	}
	for (;;) {
		bool done = atomic_load(&writer_done); /* before the read it may blame */
		int rc = prb_read(&ring, want, r, 0);

		if (rc == -EAGAIN) {
			if (done) {
				if (want >= atomic_load(&end_seq))
					break;
				report("reader: -EAGAIN at %llu after the writer finished "
				       "(end %llu)",
				       (unsigned long long)want,
				       (unsigned long long)atomic_load(&end_seq));
				break;
			}
			prb_wait(&ring, want, 10 * 1000 * 1000);
			continue;
		}
		if (rc != 0 || r->seq < want) {
			report("reader: prb_read(%llu) = %d, seq %llu", (unsigned long long)want,
			       rc, (unsigned long long)r->seq);
			break;
		}
		rs->lost += r->seq - want;
		rs->read++;
		check_record(rs, r);
		want = r->seq + 1;
	}
	free(r);
	return NULL;
}

/* ------------------------------------------------------------ watchdog -- */

static atomic_bool wd_done;
static unsigned wd_limit_ms;

/* A writer or handler that waits for the frame it interrupted never returns:
 * turn that into a failure with a message instead of a ctest timeout. */
static void *watchdog(void *arg)
{
	(void)arg;
	uint64_t t0 = now_ms();
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (!atomic_load(&wd_done)) {
		if (now_ms() - t0 > wd_limit_ms) {
			fprintf(stderr, "watchdog: no progress after %u ms: deadlock?\n",
				wd_limit_ms);
			abort();
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ---------------------------------------------------------------- runs -- */

static void reset(void)
{
	atomic_store(&stop, false);
	atomic_store(&writer_done, false);
	atomic_store(&writer_ready, false);
	atomic_store(&armed, false);
	atomic_store(&end_seq, 0);
	thread_fail_reset();
	depth = 0;
	main_line_open = 0;
	for (unsigned d = 0; d <= MAX_DEPTH; d++)
		atomic_store(&h_line[d], 0);
	_Atomic uint64_t *counters[] = { &main_stores,	      &main_enobufs,  &main_extend_ok,
					 &main_extend_enoent, &h_signals,     &h_stores,
					 &h_enobufs,	      &h_extend_ok,   &h_extend_enoent,
					 &h_probes,	      &h_probes_open, &h_bursts,
					 &h_burst_enobufs,    &h_nested,      &h_fail };

	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		atomic_store(counters[i], 0);
	atomic_store(&h_fail_what, 0);
}

static void run_signals(const char *name, unsigned data_bits, unsigned desc_bits)
{
	unsigned ms = SIGNAL_MS;
	struct sigaction sa;
	struct prb_stats st0, st1;
	struct reader_state rs;
	pthread_t wth, kth, rth, dth;

	reset();
	memset(&rs, 0, sizeof(rs));
	my_pid = (uint32_t)getpid();
	ring_size = prb_region_size(data_bits, desc_bits);
	assert_true(ring_size > 0);
	ring_mem = aligned_alloc(64, (ring_size + 63) & ~(size_t)63);
	assert_non_null(ring_mem);
	memset(ring_mem, 0xa5, ring_size);
	assert_int_equal(prb_format(&ring, ring_mem, ring_size, data_bits, desc_bits), 0);
	prb_get_stats(&ring, &st0);

	/* Neither signal blocks the other: handlers nest. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGRTMIN, &sa, NULL), 0);
	assert_int_equal(sigaction(SIGRTMIN + 1, &sa, NULL), 0);

	wd_limit_ms = 20 * ms + 60000;
	atomic_store(&wd_done, false);
	assert_int_equal(pthread_create(&dth, NULL, watchdog, NULL), 0);
	assert_int_equal(pthread_create(&rth, NULL, reader, &rs), 0);
	atomic_store(&armed, true);
	assert_int_equal(pthread_create(&wth, NULL, main_writer, NULL), 0);
	while (!atomic_load(&writer_ready))
		sched_yield();
	assert_int_equal(pthread_create(&kth, NULL, killer, &wth), 0);

	uint64_t t0 = now_ms();

	while (now_ms() - t0 < ms)
		usleep(10 * 1000);
	atomic_store(&stop, true);
	pthread_join(kth, NULL);
	pthread_join(wth, NULL);
	atomic_store(&armed, false);

	uint64_t end = prb_next_reserve_seq(&ring);

	/* Main lines are always completed, handlers close what they give up. */
	assert_int_equal(prb_next_seq(&ring), end);
	atomic_store(&end_seq, end);
	atomic_store(&writer_done, true);
	pthread_join(rth, NULL);
	atomic_store(&wd_done, true);
	pthread_join(dth, NULL);
	prb_get_stats(&ring, &st1);

	printf("[%s] %llu ms: %llu records (main %llu, handlers %llu); %llu signals, %llu "
	       "nested; main extend ok %llu / -ENOENT %llu; handler extend ok %llu / -ENOENT "
	       "%llu; %llu probes (%llu into an open main line); %llu bursts, %llu hit "
	       "-ENOBUFS; handler -ENOBUFS %llu; reader read %llu lost %llu\n",
	       name, (unsigned long long)(now_ms() - t0), (unsigned long long)end,
	       (unsigned long long)main_stores, (unsigned long long)h_stores,
	       (unsigned long long)h_signals, (unsigned long long)h_nested,
	       (unsigned long long)main_extend_ok, (unsigned long long)main_extend_enoent,
	       (unsigned long long)h_extend_ok, (unsigned long long)h_extend_enoent,
	       (unsigned long long)h_probes, (unsigned long long)h_probes_open,
	       (unsigned long long)h_bursts, (unsigned long long)h_burst_enobufs,
	       (unsigned long long)h_enobufs, (unsigned long long)rs.read,
	       (unsigned long long)rs.lost);
	fflush(stdout);

	if (thread_fail_count())
		fail_msg("[%s] %u failures; first: %s", name, thread_fail_count(), thread_fail_first());
	if (h_fail)
		fail_msg("[%s] %llu failures inside handlers; first: %s", name,
			 (unsigned long long)h_fail, h_fail_text(h_fail_what));
	/* Nothing the main writer does not own is ever left RESERVED. */
	assert_int_equal(main_enobufs, 0);
	/* Every successful store took one seq, failed ones none. */
	assert_int_equal(main_stores + h_stores, end);
	assert_int_equal(st1.reserve_failed - st0.reserve_failed, h_enobufs);
	assert_int_equal(st1.corrupt - st0.corrupt, 0);
	assert_int_equal(rs.read + rs.lost, end);
	assert_true(main_stores > 0);
#ifndef PRINTK_TSAN
	/* The handlers really ran, nested, and probed open lines. */
	assert_true(h_stores > 0);
	assert_true(h_nested > 0);
	assert_true(h_probes_open > 0);
#endif

	signal(SIGRTMIN, SIG_DFL);
	signal(SIGRTMIN + 1, SIG_DFL);
	free(ring_mem);
}

static void test_signals_64k(void **state)
{
	(void)state;
	run_signals("64 KiB", 16, 0);
}

/* Tiny ring: handler bursts wrap onto the record the writer is inside. */
static void test_signals_4k_64d(void **state)
{
	(void)state;
	run_signals("4 KiB, 64 descriptors", 12, 6);
#ifndef PRINTK_TSAN
	assert_true(h_burst_enobufs > 0);
#endif
}

/* ------------------------------------------------ a fixed ring bug -- */

/*
 * REPRODUCER of a fixed bug (src/ring/ringbuffer.c, prb_extend() vs prb_read()):
 * a reader could return a COMMITTED record that was no longer the newest as
 * complete, and its writer's prb_extend() could still reopen and extend it.
 * Fixed: readers hand out only FINAL records (or ask for unfinalized ones),
 * and the finalize CAS decides between a reader and a late reopen.
 *
 * prb_extend() checks "head.id == id" and the COMMITTED state, then reopens
 * the record with a CAS on its state word alone. If another writer reserves a
 * newer record in between (head CAS) and has not yet finalized ours, the CAS
 * still succeeds; when the new text fits in the record's last 16-byte unit,
 * head is never looked at again, and prb_extend() returns 0. prb_read() (and
 * prb_next_seq()) used to treat a COMMITTED record that was not the newest
 * as final: a reader that copied it in the window returned the old text, and
 * the record changed afterwards. The test asserts that no reader sees that.
 *
 * Sequence forced here: writer A stores "0123456789abcdefg" (17 bytes, open
 * line). A signal lands in A's prb_extend() between its head load and its
 * reopen CAS; the handler lets thread B reserve a newer record (B then
 * pauses at PRB_TP_HEAD_RESERVED, before it would finalize A's record) and
 * reads A's record through a read-only handle: 17 bytes, rflags 0. A resumes,
 * the reopen CAS succeeds, "+EXTENSION" fits in the same 32 bytes, and
 * prb_extend() returns 0: the record now holds 27 bytes. Whether the signal
 * lands in that window is random; it takes tens to hundreds of attempts.
 */
static _Atomic int rp_go, rp_cas_done, rp_release, rp_in_extend, rp_b_stores;
static _Atomic int rp_seen_rc;
static _Thread_local bool rp_is_b;
static struct prb rp_ro;
static struct prb_record rp_seen;
static uint64_t rp_line_seq;
static atomic_bool rp_stop;

static void rp_spin_until(_Atomic int *flag)
{
	for (unsigned long i = 0; !atomic_load(flag); i++) {
		if (i > 100000000ul || atomic_load(&rp_stop))
			return;
		if (i % 1024 == 1023)
			sched_yield();
	}
}

static void rp_hook(enum prb_testpoint tp)
{
	if (tp != PRB_TP_HEAD_RESERVED || !rp_is_b)
		return;
	atomic_store(&rp_cas_done, 1);
	rp_spin_until(&rp_release);
}

static void *rp_writer_b(void *arg)
{
	struct prb_meta m = { .caller = { .pid = my_pid, .tid = 2, .ctx = 0 } };

	(void)arg;
	rp_is_b = true;
	for (;;) {
		rp_spin_until(&rp_go);
		if (atomic_load(&rp_stop))
			break;
		atomic_store(&rp_go, 0);
		if (prb_store(&ring, &m, "B", 1, NULL, 0, true, NULL) != 0)
			report("reproducer: B's store failed");
		atomic_fetch_add(&rp_b_stores, 1);
	}
	return NULL;
}

static void rp_handler(int sig)
{
	int saved = errno;

	(void)sig;
	if (atomic_load(&rp_in_extend) && !atomic_load(&rp_cas_done)) {
		atomic_store(&rp_go, 1);
		rp_spin_until(&rp_cas_done);
		if (atomic_load(&rp_cas_done))
			atomic_store(&rp_seen_rc, prb_read(&rp_ro, rp_line_seq, &rp_seen, 0));
	}
	errno = saved;
}

/* TSan defers the handlers out of the windows these tests aim at. */
static bool under_tsan(void)
{
#ifdef PRINTK_TSAN
	return true;
#else
	return false;
#endif
}

/* TSan defers signal handlers: the window can never be hit there. */
static bool cannot_interrupt(void)
{
	return under_tsan();
}

static void test_reader_never_sees_a_record_extended_later(void **state)
{
	(void)state;
	if (cannot_interrupt())
		skip();

	static _Alignas(64) unsigned char mem[1 << 16];
	struct prb_meta m = { .caller = { .pid = (uint32_t)getpid(), .tid = 1, .ctx = 0 } };
	const struct prb_caller me = m.caller;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { .it_interval = { 0, 7000 }, .it_value = { 0, 7000 } };
	struct sigaction sa;
	static struct prb_record now;
	pthread_t bth;
	timer_t timer;
	long attempts = 0, hits = 0;
	unsigned ms = stress_ms(1500);

	reset();
	my_pid = (uint32_t)getpid();
	atomic_store(&rp_stop, false);
	assert_int_equal(prb_format(&ring, mem, sizeof(mem), 14, 0), 0);
	assert_int_equal(prb_attach(&rp_ro, mem, sizeof(mem), false), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rp_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGRTMIN, &sa, NULL), 0);
	assert_int_equal(pthread_create(&bth, NULL, rp_writer_b, NULL), 0);
	prb_set_testpoint_hook(rp_hook);
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);

	uint64_t t0 = now_ms();

	while (now_ms() - t0 < ms) {
		attempts++;
		atomic_store(&rp_seen_rc, 1);
		atomic_store(&rp_cas_done, 0);
		atomic_store(&rp_release, 0);

		int b_before = atomic_load(&rp_b_stores);

		assert_int_equal(
			prb_store(&ring, &m, "0123456789abcdefg", 17, NULL, 0, false, &rp_line_seq),
			0);
		atomic_store(&rp_in_extend, 1);
		int rc = prb_extend(&ring, &me, "+EXTENSION", 10, PRB_TEXT_MAX, true,
				    PRB_FLAG_NEWLINE, NULL);
		atomic_store(&rp_in_extend, 0);

		if (atomic_load(&rp_cas_done)) {
			atomic_store(&rp_release, 1);
			while (atomic_load(&rp_b_stores) == b_before)
				sched_yield();
		}
		if (rc == 0 && atomic_load(&rp_seen_rc) == 0 && rp_seen.text_len == 17 &&
		    rp_seen.rflags == 0) {
			assert_int_equal(prb_read(&ring, rp_line_seq, &now, 0), 0);
			if (hits++ == 0)
				printf("attempt %ld: a reader got seq %llu as \"%s\" (%u bytes, "
				       "rflags 0); prb_extend() then returned 0 and it now "
				       "reads \"%s\" (%u bytes)\n",
				       attempts, (unsigned long long)rp_line_seq, rp_seen.text,
				       rp_seen.text_len, now.text, now.text_len);
			break;
		}
	}
	timer_delete(timer);
	signal(SIGRTMIN, SIG_DFL);
	atomic_store(&rp_stop, true);
	atomic_store(&rp_release, 1);
	pthread_join(bth, NULL);
	prb_set_testpoint_hook(NULL);
	printf("reopen race: %ld attempts, %ld hits\n", attempts, hits);
	if (hits)
		fail_msg("REGRESSION: prb_extend() reopened and extended a record that a "
			 "reader had already returned as complete");
	assert_int_equal(thread_fail_count(), 0);
}

/*
 * REGRESSION TEST (src/ring/ringbuffer.c, prb_extend()'s *seq_out), for a bug
 * stress_ring found and the ring has fixed since (it now reads D_SEQ while
 * the record is still its own, before commit()). The bug was:
 * prb_extend() looked its record's seq up with seq_of_id() AFTER commit(),
 * when the record no longer belonged to it. If the writer is delayed between
 * the two (preempted, or interrupted by a signal whose handler logs), the
 * ring can move on and recycle the slot:
 *  - after N more records, seq_of_id() failed and *seq_out was set to 0,
 *    which is also a valid seq and the caller cannot tell it from a real one;
 *  - with PRINTK_RING_SMALL_IDS, after 2^13 more records the slot holds id
 *    + 8192 ≡ id again and *seq_out was the new occupant's seq, seq + 8192
 *    (stress_ring's continuation writers hit this without any signal).
 *
 * Forced here: a timer signal lands somewhere in prb_extend(); the handler
 * (ctx 1, async-signal-safe) stores N records (2^13 in the small build). When
 * it lands after the commit, a lookup made there returns a seq that is not
 * the line's. With the bug, landing there took tens of attempts.
 */
static _Atomic int sq_in_extend, sq_fired;
static unsigned sq_burst;

static void sq_handler(int sig)
{
	int saved = errno;

	(void)sig;
	if (atomic_load(&sq_in_extend) && !atomic_load(&sq_fired)) {
		struct prb_meta m = { .caller = { .pid = my_pid, .tid = 1, .ctx = 1 } };

		atomic_store(&sq_fired, 1);
		for (unsigned i = 0; i < sq_burst; i++)
			if (prb_store(&ring, &m, "h", 1, NULL, 0, true, NULL) != 0)
				break; /* the ring wrapped onto the extension: fine */
	}
	errno = saved;
}

static void test_extend_reports_its_records_seq(void **state)
{
	(void)state;
	if (under_tsan())
		skip();

	static _Alignas(64) unsigned char mem[1 << 16];
	struct prb_meta m = { .caller = { .pid = (uint32_t)getpid(), .tid = 1, .ctx = 0 } };
	const struct prb_caller me = m.caller;
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { .it_interval = { 0, 20000 }, .it_value = { 0, 20000 } };
	struct sigaction sa;
	timer_t timer;
	long attempts = 0, fired = 0, hits = 0;
	uint64_t line_seq = 0, got = 0;
	unsigned ms = stress_ms(1500);

	reset();
	my_pid = m.caller.pid;
	assert_int_equal(prb_format(&ring, mem, sizeof(mem), 14, 0), 0);
#ifdef PRINTK_RING_SMALL_IDS
	sq_burst = 1u << 13; /* a whole id space: the slot's id comes back */
#else
	sq_burst = (unsigned)ring.desc_count; /* one lap: the slot is recycled */
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sq_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGRTMIN, &sa, NULL), 0);
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	assert_int_equal(timer_settime(timer, 0, &its, NULL), 0);

	uint64_t t0 = now_ms();

	while (now_ms() - t0 < ms) {
		attempts++;
		atomic_store(&sq_fired, 0);
		assert_int_equal(prb_store(&ring, &m, "line", 4, NULL, 0, false, &line_seq), 0);
		atomic_store(&sq_in_extend, 1);
		int rc = prb_extend(&ring, &me, "+more", 5, PRB_TEXT_MAX, true, PRB_FLAG_NEWLINE,
				    &got);
		atomic_store(&sq_in_extend, 0);

		fired += atomic_load(&sq_fired);
		if (rc == 0 && got != line_seq) {
			hits++;
			printf("attempt %ld: prb_extend() returned 0 for the line at seq %llu but "
			       "reported seq %llu (%+lld)\n",
			       attempts, (unsigned long long)line_seq, (unsigned long long)got,
			       (long long)(got - line_seq));
			break;
		}
		prb_finalize_last(&ring); /* the handler may have left it open */
	}
	timer_delete(timer);
	signal(SIGRTMIN, SIG_DFL);
	printf("extend seq: %ld attempts, %ld interrupted, %ld wrong seqs\n", attempts, fired,
	       hits);
	if (hits)
		fail_msg("RING BUG (regression): prb_extend() reported a seq that is not its "
			 "record's (looked up after commit(), once the slot could be recycled)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals_64k),
		cmocka_unit_test(test_signals_4k_64d),
		cmocka_unit_test(test_reader_never_sees_a_record_extended_later),
		cmocka_unit_test(test_extend_reports_its_records_seq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
