// SPDX-License-Identifier: MIT
/*
 * printk.c - the front end: printk() and friends, level headers and the
 * nesting limit.
 *
 * Owns: nothing but the count of messages dropped for nesting too deep. The
 * default log and the settings are settings.c's, the rules that turn a line
 * into a record store.h's, the consoles console.c's, PRINTK_OPTS and the
 * process hooks setup.c's.
 *
 * A message is formatted first (our own vsnprintf: async-signal-safe),
 * then stored, then printed:
 *   - its level headers are parsed as Linux 6.x does (facility 0 only; the
 *     first level wins; KERN_CONT marks a continuation; one trailing newline
 *     ends the line and is stripped);
 *   - store.h's pk_store_line() stores it: a continuation joins the
 *     caller's open line in the ring, a message without a newline stays
 *     open (committed, not finalized), so readers asking for the
 *     unfinalized tail see it at once;
 *   - then the consoles print it before printk returns, or the thread that
 *     holds the console lock does (console.c). When the record can go to the
 *     only console in one write(2), printk formats its text straight into
 *     that console line and makes the write from its own frame
 *     (console_line.h).
 * With lanes on, a call site's line no console prints usually takes
 * lane_fast() instead, before any of that: its arguments go straight into
 * the thread's lane (docs/lanes.md); whatever it cannot take goes the way
 * above from the start.
 * Nothing on that path allocates, locks or waits; a signal handler may call
 * printk while the code it interrupted is inside printk: it gets a deeper
 * caller context (pk_sigdepth_enter), so its fragments never join the
 * interrupted line. Nesting deeper than PRINTK_MAX_NESTING drops the message
 * and counts it.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <printk/kern_levels.h>
#include <printk/printk.h>

#include "base/clock.h"
#include "base/clock_own.h"
#include "base/fast_gate.h"
#include "base/hints.h"
#include "console/console_internal.h"
#include "console/console_line.h"
#include "format/deferred.h"
#include "format/vsprintf.h"
#include "log/log_internal.h"
#include "log/settings.h"
#include "printk/dyndbg_watch.h"
#include "printk/printk_internal.h"
#include "ring/caller.h"
#include "ring/lane_writer.h"
#include "ring/store.h"
#include "startup/setup_hooks.h"

#define PRINTK_MAX_NESTING 4 /* outermost call + 3 nested, like PRINTK_MAX_RECURSION */

/* Dynamic debug's look at the log's mailbox, when dyndbg.c is in the
 * program (dyndbg_watch.h). */
const struct pk_dyndbg_watch *_Atomic pk_printk_dyndbg_watch;

static pk_a64 nesting_dropped;
/* Lines the ring refused (-ENOBUFS: its oldest record was still being
 * written, e.g. by a process stopped inside it), not yet reported. */
static pk_a64 unstored;

/*
 * Strip the level headers at the start of @text (Linux 6.x rules): returns
 * the number of header bytes; *@level is set by the first level header only;
 * *@cont by a 'c' header.
 */
static size_t parse_headers(const char *text, size_t len, int *level, int *cont)
{
	size_t i = 0;

	while (i + 1 < len && text[i] == PK_KERN_SOH_ASCII) {
		char c = text[i + 1];

		if (c >= '0' && c <= '7') {
			if (*level == PK_LOGLEVEL_DEFAULT)
				*level = c - '0';
		} else if (c == 'c') {
			*cont = 1;
		} else {
			break;
		}
		i += 2;
	}
	return i;
}

/*
 * Say how many messages the counter @lost holds (and empty it), once printk
 * can store again: nested too deep (signal handlers inside printk inside
 * handlers...: the first printk at the outer level says so, as 3.5 did), or
 * refused by the ring (said with the next line stored, when the ring has room
 * again), so readers and consoles learn how many are missing. The line
 * just stored may not have needed room (a continuation that only ends its
 * line) while the notice does: a notice the ring refuses gives its count
 * back, for the next stored line to say, so each lost message is counted
 * in exactly one notice.
 */
static void report_lost(pk_a64 *lost, int level, const char *why)
{
	uint64_t n = atomic_exchange_explicit(lost, 0, memory_order_relaxed);
	uint64_t seq;

	if (!n)
		return;
	if (pk_store_notice_seq(&seq, level, "printk: %llu messages %s\n", (unsigned long long)n, why) < 0)
		pk_fetch_add_relaxed(lost, n);
	else /* a console that drops the notice counts what it stood for */
		pk_console_note_weight(seq, n);
}

#define NESTED_WHY   "lost: printk nested too deep"
#define UNSTORED_WHY "not stored: the log's oldest record was still being written"

/* The "nested too deep" notice; the fast gate's bit cleared before the
 * count is taken (a message dropped after that sets it again), and set
 * again if the count was given back. */
static void report_nesting(void)
{
	pk_fast_gate_clear(PK_GATE_NESTING);
	if (pk_load_relaxed(&nesting_dropped))
		report_lost(&nesting_dropped, PK_LOGLEVEL_CRIT, NESTED_WHY);
	if (PK_UNLIKELY(pk_load_relaxed(&nesting_dropped)))
		pk_fast_gate_set(PK_GATE_NESTING);
}

void pk_printk_report_lost(void)
{
	report_nesting();
	if (pk_load_relaxed(&unstored))
		report_lost(&unstored, PK_LOGLEVEL_WARNING, UNSTORED_WHY);
}

/* Start-up (setup.c) prints its warnings, and at exit the lines still
 * unreported, through these; they are also what brings start-up into a
 * program linked statically against printk. Before setup.c's constructor. */
__attribute__((constructor(PK_SETUP_HOOK_PRIORITY))) static void provide_to_setup(void)
{
	pk_setup_hooks.printk = pk_printk;
	pk_setup_hooks.report_lost = pk_printk_report_lost;
}

/* How long one printk waits for the ring's oldest record to be finished:
 * by a thread of this process (it runs again soon), by another process (it
 * may be stopped: the ring takes its record after PRB_TAKEOVER_NS). */
#define BLOCKED_WAIT_LOCAL_NS (1000 * 1000 * 1000)
#define BLOCKED_WAIT_OTHER_NS (20 * 1000 * 1000)
/* A wait ran out and no line was stored since: the next ones do not wait. */
static pk_a32 blocked_gave_up;

static uint64_t wait_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The ring refused the line (-ENOBUFS): its oldest record is still being
 * written. The kernel meets that case only briefly (its writers are not
 * preempted inside a record); a thread here can be taken off the CPU
 * between its reservation and its commit, and until it runs again every
 * store of every other thread fails: a burst of four threads on a busy
 * two-CPU machine lost up to half its lines that way. So wait for it:
 * retry, yielding the CPU and then sleeping with a growing pause, for at
 * most BLOCKED_WAIT_LOCAL_NS while the writer in the way is one of ours,
 * BLOCKED_WAIT_OTHER_NS if it is another process's. Only the outermost
 * printk of a thread waits (@depth 1): a nested one may have interrupted
 * that very writer. Never on the crash path. A wait that runs out makes
 * the next lines fail at once, until one is stored. Returns as
 * pk_store_line().
 */
static PK_NOINLINE int store_when_unblocked(struct prb *rb, struct pk_line *l, struct prb_caller *me,
					    uint64_t *seq, unsigned depth)
{
	if (depth != 1 || pk_load_relaxed(&blocked_gave_up) || pk_console_crashing())
		return -ENOBUFS;

	uint64_t start = wait_clock_ns();
	long pause_ns = 0;

	for (;;) {
		if (pause_ns) {
			struct timespec ts = { 0, pause_ns };

			nanosleep(&ts, NULL);
			pause_ns = pause_ns < 500000 ? pause_ns * 2 : 1000000;
		} else {
			sched_yield();
		}
		int r = pk_store_line(rb, l, me, seq);

		if (r != -ENOBUFS)
			return r;
		uint64_t waited = wait_clock_ns() - start;

		if (waited >= (prb_tail_writer_local(rb) ? BLOCKED_WAIT_LOCAL_NS : BLOCKED_WAIT_OTHER_NS)) {
			pk_store_relaxed(&blocked_gave_up, 1);
			return r;
		}
		if (!pause_ns && waited > 50000)
			pause_ns = 20000;
	}
}

static int store_deferred(struct prb *rb, const char *fmt, va_list args, uint64_t ts, bool lazy_ts,
			  int *ret, unsigned depth, struct pk_site *site);
static _Thread_local PK_TLS_IE uint64_t deferred_here;

/*
 * The calling thread's last line was held back by its module's level and
 * left open (<printk/printk_site.h>): its continuations are held back too,
 * rather than stored as lines of their own. Cleared by the next message
 * that is not a continuation, or by a continuation whose format ends the
 * line.
 */
static _Thread_local PK_TLS_IE unsigned char held_open;

void pk__site_held(const char *fmt)
{
	size_t n = fmt ? strlen(fmt) : 0;

	held_open = !n || fmt[n - 1] != '\n';
}

/* A message while held_open: 1 to drop it (a continuation of the held
 * line), 0 to store it (it starts a line of its own). */
static PK_NOINLINE int held_continuation(int facility, const char *fmt)
{
	if (facility == 0 && fmt && fmt[0] == PK_KERN_SOH_ASCII && fmt[1] == 'c') {
		size_t n = strlen(fmt);

		if (fmt[n - 1] == '\n')
			held_open = 0;
		return 1;
	}
	held_open = 0;
	return 0;
}

/*
 * Format (into @line's buffer, where a console line needs the text), store,
 * print; @end_line: the message ends its line even without a newline. A
 * console line for the caller to write may come back in @line (see
 * pk_console_flush_line()): the caller passes it to write_line().
 */
PK_HOT static int store(int facility, int level, const char *dict, size_t dictlen, const char *fmt,
			va_list args, int end_line, struct pk_con_line *line, int literal,
			struct pk_site *site)
{
	struct prb *rb = pk_printk_ring();
	unsigned depth = pk_sigdepth_enter();
	int ret = 0;

	line->len = 0;

	if (!rb || !fmt)
		goto out;
	if (PK_UNLIKELY(held_open) && held_continuation(facility, fmt))
		goto out;
	pk_dyndbg_check(rb);
	if (depth > PRINTK_MAX_NESTING) {
		pk_fetch_add_relaxed(&nesting_dropped, 1);
		pk_fast_gate_set(PK_GATE_NESTING);
		goto out;
	}
	if (PK_UNLIKELY(pk_fast_gate_load() & PK_GATE_NESTING) && depth == 1)
		report_nesting();

	/* Like the kernel: the time of the call, before formatting. With
	 * lanes on, a literal's line reads it where it knows whether the line
	 * goes into a lane (before its arguments are copied: @lazy_ts). */
	bool lazy_ts = literal && PK_UNLIKELY(prb_lanes_enabled());
	uint64_t ts = lazy_ts ? 0 : pk_clock_ns();

	if (literal && store_deferred(rb, fmt, args, ts, lazy_ts, &ret, depth, site))
		goto out;
	if (lazy_ts)
		ts = pk_clock_ns();
	char *buf = line->buf + PK_CON_PREFIX_ROOM;
	char last = 0;
	va_list ap;

	va_copy(ap, args);
	int full = pk_vsnprintf_last(buf, PK_PRINTK_FMT_MAX, &last, fmt, ap);
	va_end(ap);

	size_t len = full < 0 ? 0 : (size_t)full;

	if (len > PK_PRINTK_FMT_MAX - 1)
		len = PK_PRINTK_FMT_MAX - 1;

	/* One trailing newline ends the line; it is stripped before the headers,
	 * as the kernel does. A message cut at the size limit keeps its newline
	 * (Linux 6.18 leaves such a line open). */
	int newline = full > 0 && last == '\n';

	if (newline && (size_t)full == len)
		len--;

	struct pk_line l = {
		.ts_nsec = ts,
		.facility = facility,
		.text = buf,
		.dict = dict,
		.dict_len = dictlen,
		.newline = newline || end_line,
	};
	int cont = 0;

	if (facility == 0) {
		size_t skip = parse_headers(buf, len, &level, &cont);

		l.text += skip;
		len -= skip;
	}
	if (level < 0)
		level = pk_cfg_default_message_loglevel();
	l.level = level;
	l.len = len;
	l.cont = cont;

	struct prb_caller me;
	uint64_t seq;

	/* Lane records older than this line enter the sequence before it
	 * (docs/lanes.md: causal order across the two paths): in
	 * pk_store_line(). */
	int stored = pk_store_line(rb, &l, &me, &seq);

	if (PK_UNLIKELY(stored == -EUCLEAN) && pk_printk_log_damaged(stored))
		stored = pk_store_line(rb, &l, &me, &seq); /* into the log's private ring */
	if (PK_UNLIKELY(stored == -ENOBUFS))
		stored = store_when_unblocked(rb, &l, &me, &seq, depth);
	if (stored < 0) {
		if (stored == -ENOBUFS)
			pk_fetch_add_relaxed(&unstored, 1);
		goto out;
	}
	ret = (int)l.len;
	pk_default_log_mark_used();
	if (PK_UNLIKELY(pk_load_relaxed(&blocked_gave_up)))
		pk_store_relaxed(&blocked_gave_up, 0);
	if (PK_UNLIKELY(pk_load_relaxed(&unstored)))
		report_lost(&unstored, PK_LOGLEVEL_WARNING, UNSTORED_WHY);
	if (stored == PK_STORED_JOINED) {
		pk_console_flush(rb, NULL);
		goto out;
	}

	int suppressed = pk_console_level_suppressed(l.level);

	if (pk_console_threads_only()) {
		if (!suppressed)
			pk_console_wake_printers();
		goto out;
	}
	/* A complete line no console prints: done without the console lock. */
	if (suppressed && l.newline && !pk_console_in_write() && pk_console_skip_suppressed(seq))
		goto out;

	const struct pk_con_rec hint = {
		.seq = seq,
		.ts_nsec = ts,
		.caller = me,
		.level = l.level & 7,
		.flags = pk_line_flags(&l),
		.open = !l.newline,
		.suppressed = suppressed,
		.text = l.text,
		.text_len = l.len,
	};

	pk_console_flush_line(rb, &hint, line);
out:
	pk_sigdepth_leave();
	return ret;
}

/* The write pk_console_flush_line() left to us, made in our caller's frame. */
static PK_ALWAYS_INLINE void write_line(struct pk_con_line *line)
{
	if (line->len)
		pk_console_line_done(line, pk_raw_write(line->fd, line->p, line->len));
}

/* store(), then the console write it left (inlined: still in our caller's frame). */
static PK_ALWAYS_INLINE int store_write(int facility, int level, const char *dict, size_t dictlen,
					const char *fmt, va_list args, int end_line, int literal,
					struct pk_site *site)
{
	struct pk_con_line line;
	int r = store(facility, level, dict, dictlen, fmt, args, end_line, &line, literal, site);

	write_line(&line);
	return r;
}

PK_HOT int pk_vprintk_emit(int facility, int level, const char *dict, size_t dictlen, const char *fmt,
		    va_list args)
{
	if (facility < 0 || facility > 255 || level < PK_LOGLEVEL_DEFAULT)
		return 0;
	/* The kernel keeps three bits of any level it is given (vprintk_store()
	 * stores level & 7): 8 is an emergency, 9 an alert. */
	if (level > 7)
		level &= 7;

	return store_write(facility, level, dict, dictlen, fmt, args, 0, 0, NULL);
}

int pk_vprintk_emit_line(int level, const char *dict, size_t dictlen, const char *fmt, va_list args)
{
	return store_write(0, level, dict, dictlen, fmt, args, 1, 0, NULL);
}

int pk_printk_emit(int facility, int level, const char *dict, size_t dictlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = pk_vprintk_emit(facility, level, dict, dictlen, fmt, ap);
	va_end(ap);
	return r;
}

PK_HOT int pk_vprintk(const char *fmt, va_list args)
{
	return store_write(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, args, 0, 0, NULL);
}

PK_HOT int pk_printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = store_write(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, ap, 0, 0, NULL);
	va_end(ap);
	return r;
}

/* ------------------------------------------------------ deferred records -- */

/*
 * The fast path of a message whose format is a string literal (deferred.h):
 * a complete line of a level no console prints, or any complete line while
 * only printer threads print (C9 in console.c), is stored as the format's
 * reference and its arguments, and formatted by whoever reads it. Returns 1
 * when the message was dealt with here (*@ret: what printk returns), 0 to
 * format it eagerly: a continuation, a line left open, a format deferred.c
 * has no rule for, a level a console lock's holder prints, a full format
 * table, a broken ring (the eager path moves to the log's private ring).
 */
static int store_deferred(struct prb *rb, const char *fmt, va_list args, uint64_t ts, bool lazy_ts,
			  int *ret, unsigned depth, struct pk_site *site)
{
#ifdef PRINTK_NO_DEFERRED
	(void)rb, (void)fmt, (void)args, (void)ts, (void)lazy_ts, (void)ret, (void)depth, (void)site;
	return 0;
#else
	void *slot = NULL;
	const struct pk_dfmt *f;
	const struct pk_sfmt *sf = NULL;
	/* Format once per call site: the site's slot holds its literal's
	 * compiled form after its first call (deferred.h); a site that has
	 * none (the pool is used up, another thread compiling it) and a call
	 * without a site look the literal up in the per-log cache. */
	int how = site ? pk_deferred_site_fmt(&site->format, fmt, parse_headers, PK_PRINTK_FMT_MAX, &sf)
		       : PK_SITE_FMT_NONE;

	if (how == PK_SITE_FMT_OK)
		f = &sf->f;
	else if (how == PK_SITE_FMT_EAGER || !(f = pk_deferred_fmt(rb, fmt, parse_headers,
								  PK_PRINTK_FMT_MAX, &slot)))
		return 0;

	int level = f->level < 0 ? pk_cfg_default_message_loglevel() : f->level;
	int suppressed = pk_console_level_suppressed(level);
	int threads_only = pk_console_threads_only();

	/* A printer thread formats what it reads (C9 in console.c). */
	if (!suppressed && !threads_only)
		return 0;

	uint64_t ref;
	char blob[PRB_TEXT_MAX];
	va_list ap;

	if (sf ? pk_deferred_site_ref(rb, sf, fmt, parse_headers, PK_PRINTK_FMT_MAX, &ref)
	       : pk_deferred_ref(rb, slot, &ref))
		return 0;
	va_copy(ap, args);
	/* Eager formatting keeps the newline, and so leaves the line open,
	 * only when the output reaches PK_PRINTK_FMT_MAX: f->out_max keeps a
	 * deferred output below. */
	int len = sf ? pk_deferred_encode_site(sf, ref, &ap, blob, sizeof(blob))
		     : pk_deferred_encode(f, ref, &ap, blob, sizeof(blob));

	va_end(ap);
	if (len < 0)
		return 0;

	/*
	 * The flight recorder (docs/lanes.md): a line no console prints goes
	 * into the calling thread's lane, the same blob whichever walk made it.
	 */
	if (PK_UNLIKELY(prb_lanes_enabled())) {
		/* A level set from outside and not applied yet may let the
		 * line print: the ring path takes it to the console lock's
		 * holder, which applies it (pk_console_skip_suppressed()). */
		if (suppressed && (threads_only || pk_console_levels_settled())) {
			/* The clock without the process-wide floor: the merge
			 * keeps the order across threads (docs/lanes.md). */
			if (lazy_ts) {
				ts = pk_clock_ns_own();
				lazy_ts = false;
			}
			/* Merges tell the consoles what they need not read. */
			if (PK_UNLIKELY(atomic_load_explicit(&rb->merged, memory_order_relaxed) !=
					pk_console_lanes_merged)) {
				atomic_store_explicit(&rb->merged, pk_console_lanes_merged, memory_order_release);
				pk_console_catch_up(rb);
			}

			int e = prb_lane_store(rb, ts, (uint8_t)(level & 7), blob, (size_t)len, depth == 1);

			/* Full: merge (this lane's records first enter the
			 * sequence, so the thread's order holds), try again. */
			for (int tries = 0; e == -ENOSPC && tries < 4; tries++) {
				int room = prb_lane_make_room(rb);

				pk_console_catch_up(rb);
				if (room)
					break;
				e = prb_lane_store(rb, ts, (uint8_t)(level & 7), blob, (size_t)len, false);
			}
			if (e == 0) {
				*ret = len;
				deferred_here++;
				pk_default_log_mark_used();
				return 1;
			}
			if (e == -ENOSPC) {
				prb_lane_fell_back(rb);
				/* Older lines of this thread wait in its lane: one
				 * stored in the ring now would come before them.
				 * Not so a signal handler's inside printk (it may
				 * have interrupted this thread's own merge, which
				 * is why there is no room): its line goes into the
				 * ring, as one that interrupted a lane store does. */
				if (depth == 1 && !prb_lane_own_empty(rb)) {
					pk_fetch_add_relaxed(&unstored, 1);
					*ret = 0;
					return 1;
				}
			}
			/* No lane, a nested store, or room again: the ring. */
		}
	}
	/* As pk_store_line() does: lane records first (docs/lanes.md). */
	prb_lanes_merge_pending(rb);

	if (lazy_ts)
		ts = pk_clock_ns();

	struct prb_meta meta = {
		.ts_nsec = ts,
		.level = (uint8_t)(level & 7),
		.flags = PRB_FLAG_NEWLINE | PRB_FLAG_DEFERRED,
	};
	uint64_t seq;

	pk_caller_get(&meta.caller);

	int err = prb_store(rb, &meta, blob, (size_t)len, NULL, 0, true, &seq);

	/* A broken ring: the eager path moves to the private one. Refused:
	 * the eager path waits for the writer in the way, or counts the line. */
	if (err == -EUCLEAN || err == -ENOBUFS)
		return 0;
	*ret = 0;
	if (err)
		return 1;
	*ret = len;
	deferred_here++;
	pk_default_log_mark_used();
	if (PK_UNLIKELY(pk_load_relaxed(&blocked_gave_up)))
		pk_store_relaxed(&blocked_gave_up, 0);
	if (PK_UNLIKELY(pk_load_relaxed(&unstored)))
		report_lost(&unstored, PK_LOGLEVEL_WARNING, UNSTORED_WHY);
	if (threads_only) {
		if (!suppressed)
			pk_console_wake_printers();
		return 1;
	}
	if (!pk_console_in_write() && pk_console_skip_suppressed(seq))
		return 1;
	pk_console_flush(rb, NULL);
	return 1;
#endif
}

PK_HOT int pk_printk_lit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int r = store_write(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, ap, 0, 1, NULL);
	va_end(ap);
	return r;
}

/*
 * The lane's fast path (docs/lanes.md, "The writer's fast path"): a call
 * site whose literal is compiled, a line no console prints, a thread that
 * owns a lane of the default log with room in it. The arguments are
 * encoded by the site's layout straight into the lane (no blob on the
 * stack, no copy) and published with the one release of the lane's write
 * index. Returns true and what printk returns in *@ret, or false when
 * anything is not so: nothing was stored, and store() takes the call from
 * the start (it claims the lane, merges a full one, goes to the ring ...).
 * The records are byte for byte store_deferred()'s.
 *
 * What store() does that this path may leave out: its nesting depth
 * (this path calls nothing that logs, so it cannot recurse; a signal
 * handler that interrupts it once the lane is reserved finds the lane's
 * busy flag and goes to store(), into the ring, L5 in lanes.c; one that
 * interrupts it before finds a lane nobody writes), the console lock and
 * the printer threads (a suppressed line wakes none), the lane's claim
 * (store(), at depth 1). What it keeps: dynamic debug's mailbox, the
 * levels read on every call, the format table's entry checked, the log's
 * existence (no log yet: store() makes it), a pending "nested too deep"
 * notice or a held line (store() deals with them first).
 *
 * @gate is the fast gate (base/fast_gate.h) as the caller found it, with
 * no bit but PK_GATE_DYNDBG: lanes on, the log used, ignore_loglevel off,
 * no "nested too deep" notice pending; the conditions that hold in other
 * words (another process's, or the thread's held line) are read here.
 */
static PK_ALWAYS_INLINE bool lane_fast(struct pk_site *site, const char *fmt, va_list *args,
				       uint32_t gate, int *ret)
{
#ifdef PRINTK_NO_DEFERRED
	(void)site, (void)fmt, (void)args, (void)gate, (void)ret;
	return false;
#else
	const struct pk_sfmt *sf = __atomic_load_n((const struct pk_sfmt *const *)(const void *)&site->format,
						   __ATOMIC_ACQUIRE);
	struct pk_log *log = atomic_load_explicit(&pk_printk_log_ptr, memory_order_acquire);

	/* lane_lit: the literal and a simple layout, one compare. */
	if (PK_UNLIKELY((uintptr_t)sf <= PK_SITE_FMT_MARKS) || PK_UNLIKELY(sf->lane_lit != fmt) ||
	    PK_UNLIKELY(!log) || PK_UNLIKELY(held_open))
		return false;

	struct prb *rb = &log->rb;

	if (PK_UNLIKELY(gate & PK_GATE_DYNDBG))
		pk_dyndbg_check(rb);

	int level = sf->f.level < 0 ? pk_cfg_default_message_loglevel() : sf->f.level;

	/* A level set from another process that waits to be applied may
	 * print this line: the console lock's holder decides (store()). */
	if (!pk_console_level_suppressed_gated(rb, level) || !pk_console_levels_settled_inline())
		return false;

	uint64_t ref;

	if (PK_UNLIKELY(!pk_deferred_site_ref_cached(rb, sf, &ref))) {
		uint64_t r; /* its own: @ref's address stays here (a register) */

		if (pk_deferred_site_ref(rb, sf, fmt, parse_headers, PK_PRINTK_FMT_MAX, &r))
			return false;
		ref = r;
	}

	uint64_t hdr = prb_lane_hdr((unsigned)level);

	/* Where the program's arguments are (the register save area, or
	 * NULL: va_arg()), found before the reservation. */
	const char *regs = pk_deferred_lane_regs(sf, args);
	size_t cap;
	char *blob;

	if (!prb_lane_reserve(rb, &blob, &cap, sf->fixed_size, sf->lane_cap))
		return false;

	/* The lane's clock, read where store_deferred() reads it: after
	 * the level checks, before the arguments are copied. */
	prb_lane_stamp(blob, pk_clock_ns_own_inline());

	size_t len;

	/* Not deferrable, or more than the lane's contiguous room: store()
	 * decides (it encodes with the whole PRB_TEXT_MAX, pads, merges). */
	if (PK_UNLIKELY(!pk_deferred_lane_walk(sf, ref, args, regs, blob, cap, &len))) {
		prb_lane_cancel();
		return false;
	}
	prb_lane_publish(blob, hdr, len);
	deferred_here++;
	*ret = (int)len;
	return true;
#endif
}

/* pk_printk_lit() of a call site (the pr_*() macros): its literal is
 * compiled once, into the site's format slot. */
PK_HOT int pk__printk_lit_site(struct pk_site *site, const char *fmt, ...)
{
	va_list ap;
	int r;
	/* Lanes on and none of the fast path's rare conditions (but dynamic
	 * debug's mailbox, which it looks at): one load and one test. */
	uint32_t gate = pk_fast_gate_load();

	if (PK_UNLIKELY(!(gate & ~PK_GATE_DYNDBG))) {
		/* A va_list of its own, which nothing outside sees; store()
		 * gets one started afresh. */
		va_list fa;

		va_start(fa, fmt);

		bool done = lane_fast(site, fmt, &fa, gate, &r);

		va_end(fa);
		if (PK_LIKELY(done))
			return r;
		/* It may have read some of the arguments: store() reads
		 * them from the start. */
	}
	va_start(ap, fmt);
	r = store_write(0, PK_LOGLEVEL_DEFAULT, NULL, 0, fmt, ap, 0, 1, site);
	va_end(ap);
	return r;
}

uint64_t pk_printk_deferred_here(void)
{
	return deferred_here;
}
