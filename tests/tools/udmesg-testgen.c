// SPDX-License-Identifier: MIT
/*
 * udmesg-testgen.c - makes the libprintk logs udmesg's tests and
 * benchmark read (a test tool, built with the tests, never installed). It
 * stores records through the ring's private interface on purpose: odd
 * logs (open lines, killed and stuck writers) are its point.
 *
 *   udmesg-testgen golden FILE      a log with fixed records: every level,
 *                                   several facilities, multi-line, control
 *                                   bytes and UTF-8, a dictionary, a
 *                                   continuation fragment, an empty record;
 *                                   fixed timestamps, callers and wall-clock
 *                                   offset, so every output is reproducible
 *   udmesg-testgen partial FILE     two records and an open line, then the
 *                                   writer kills itself (SIGKILL)
 *   udmesg-testgen live FILE        one record per stdin line "LEVEL TEXT"
 *                                   (timestamps 1 s, 2 s, ...); "open TEXT"
 *                                   stores an unfinalized line
 *   udmesg-testgen bench FILE MIB   a MIB MiB log filled (and wrapped) with
 *                                   dmesg-like lines
 *   udmesg-testgen deferred FILE MIB  FILE made the printk log (MIB MiB), no
 *                                   console printing level 6, then filled
 *                                   (and wrapped) by pr_info() of one message
 *                                   with three arguments: deferred records
 *   udmesg-testgen lanes FILE N     FILE made the printk log (64 KiB) with
 *                                   printk.lanes on and level 6 printed by no
 *                                   console; 3 threads print N lines each,
 *                                   "lane T line I <pad>", into their lanes
 *                                   (merged into the ring as lanes fill);
 *                                   prints "pending K" (lane records not
 *                                   merged, K > 0), then SIGKILLs itself
 *   udmesg-testgen merge FILE       FILE opened by a writer, which merges
 *                                   what waits in its lanes; prints "next N"
 *   udmesg-testgen mixed FILE       a 4 MiB log of such lines mixed with
 *                                   empty, escaped, multi-line, UTF-8 and
 *                                   1023-byte records, timestamps that grow
 *                                   from 5 to 7 digits of seconds, and an
 *                                   open line at the end
 *   udmesg-testgen stuck FILE       a 4 MiB log whose writer stays alive in
 *                                   the middle of one record ("stuck record")
 *                                   while another thread stores 3000 more;
 *                                   prints "ready", exits at end of stdin
 *   udmesg-testgen kmsg FILE [caller]  the log as libprintk's kmsg_read returns
 *                                   it (kmsg_open_file: an open line of a log
 *                                   with no writer left included), each
 *                                   record followed by a NUL byte
 *   udmesg-testgen state FILE       the shared state the syslog actions change
 *   udmesg-testgen writers FILE     a record from each of two processes named
 *                                   "alpha" and "beta" (real pids, through
 *                                   pk_log_store); prints "NAME PID" for each
 *
 * Records are stored with prb_store() on the log's ring so that timestamps,
 * callers and flags are exactly what the test says.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/kmsg.h>
#include <printk/log.h>
#include <printk/printk.h>

#include "log/log_shared.h"
#include "ring/ringbuffer.h"

#define NS 1000000000ull
/* The wall-clock offset of the golden log: 2023-11-14 22:13:20.25 UTC at 0. */
#define GOLDEN_OFFSET_NS (1700000000ll * 1000000000ll + 250000000ll)

static void die(const char *what, int err)
{
	fprintf(stderr, "udmesg-testgen: %s: %s\n", what, err < 0 ? pk_log_strerror(err) : "");
	exit(1);
}

static struct pk_log *create_log(const char *path, size_t len)
{
	struct pk_log *log;
	int err;

	unlink(path);
	err = pk_log_open_file(&log, path, len, 0);
	if (err)
		die(path, err);
	return log;
}

static void store(struct pk_log *log, int fac, int level, uint64_t ts, uint32_t tid, int flags,
		  const char *text, size_t len, const char *dict, size_t dict_len, int final)
{
	struct prb_meta meta = {
		.ts_nsec = ts,
		.caller = {.pid = 4242, .tid = tid, .ctx = 0},
		.level = (uint8_t)level,
		.facility = (uint8_t)fac,
		.flags = (uint8_t)(PRB_FLAG_NEWLINE | flags),
	};
	int err = prb_store(pk_log_ring(log), &meta, text, len, dict, dict_len, final, NULL);

	if (err)
		die("prb_store", err);
}

#define S(s) s, sizeof(s) - 1

static void golden(const char *path)
{
	struct pk_log *log = create_log(path, 64 * 1024);
	static const char ctl[] = "ctl \x01 bell \x07 tab \t del \x7f utf8 \xc3\xa9 bad \xff end "
				  "back\\slash \"quoted\"";
	static const char dict[] = "SUBSYSTEM=net\0DEVICE=+net:eth0\0NOTE=tab\there\0"
				   "FORGED=a\n[   99.000000] fake\x1b[31m";

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	store(log, 0, 6, 0, 1, 0, S("Linux version 6.6.0 (libprintk golden log)"), NULL, 0, 1);
	store(log, 0, 0, 100000, 2, 0, S("emerg: the sky is falling"), NULL, 0, 1);
	store(log, 0, 1, 500000000, 3, 0, S("alert: thing"), NULL, 0, 1);
	store(log, 0, 2, 1250000000, 4, 0, S("crit: x"), NULL, 0, 1);
	store(log, 0, 3, 2000001000, 5, 0, S("usb 1-1: device descriptor read/64, error -71"), NULL,
	      0, 1);
	store(log, 0, 4, 9999999000, 6, 0, S("ACPI: something to warn about"), NULL, 0, 1);
	store(log, 0, 5, 10 * NS, 7, 0, S("audit: type=2000 audit(0.000:1): state=initialized"),
	      NULL, 0, 1);
	store(log, 0, 6, 39 * NS + 500000000, 8, 0, S("smp: Brought up 1 node, 2 CPUs"), NULL, 0,
	      1);
	store(log, 0, 7, 41 * NS, 9, 0, S("debug: next minute"), NULL, 0, 1);
	store(log, 1, 4, 42 * NS + 500000000, 42, 0, S("app[42]: user warning"), NULL, 0, 1);
	store(log, 3, 6, 43 * NS, 43, 0, S("netd: link up"), dict, sizeof(dict) - 1, 1);
	store(log, 1, 6, 44 * NS, 44, 0, S("multi line1\nline2\nline3"), NULL, 0, 1);
	store(log, 1, 5, 45 * NS, 45, 0, ctl, sizeof(ctl) - 1, NULL, 0, 1);
	store(log, 16, 6, 46 * NS, 46, 0, S("local0 facility message"), NULL, 0, 1);
	store(log, 23, 7, 47 * NS, 47, 0, S("local7 debug message"), NULL, 0, 1);
	store(log, 0, 6, 48 * NS, 48, 0, S("traps: app[99] segfault at 0 ip 0000 sp 0000 error 4"),
	      NULL, 0, 1);
	store(log, 1, 6, 49 * NS, 49, 0, S(""), NULL, 0, 1);
	store(log, 0, 4, 50 * NS, 50, PRB_FLAG_CONT, S(" continuation fragment"), NULL, 0, 1);
	store(log, 1, 6, 3700 * NS, 51, 0, S("an hour later"), NULL, 0, 1);
	store(log, 1, 6, 3700 * NS + 5000, 52, 0, S("trailing newline\n"), NULL, 0, 1);
	store(log, 1, 3, 3701 * NS, 123456, 0, S("empty lines\n\nin the middle"), NULL, 0, 1);
	store(log, 1, 6, 2 * 86400 * NS + 5 * NS, 7, 0, S("two days later"), NULL, 0, 1);
	pk_log_destroy(log);
}

static void partial(const char *path)
{
	struct pk_log *log = create_log(path, 16 * 1024);

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	store(log, 0, 6, 1 * NS, 10, 0, S("first complete line"), NULL, 0, 1);
	store(log, 0, 4, 2 * NS, 10, 0, S("second complete line"), NULL, 0, 1);
	store(log, 0, 6, 3 * NS, 10, 0, S("an open line, its writer killed before the newline"),
	      NULL, 0, 0);
	raise(SIGKILL);
}

static void live(const char *path)
{
	struct pk_log *log;
	char line[2048];
	uint64_t n = 0;
	int err = pk_log_open_file(&log, path, 16 * 1024, 0);

	if (err)
		die(path, err);
	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	while (fgets(line, sizeof(line), stdin)) {
		size_t len = strcspn(line, "\n");
		char *sp = memchr(line, ' ', len);
		int open = !strncmp(line, "open ", 5);

		if (!sp)
			continue;
		line[len] = '\0';
		n++;
		store(log, 0, open ? 6 : atoi(line), n * NS, 1, 0, sp + 1, strlen(sp + 1), NULL, 0,
		      !open);
		printf("stored %llu\n", (unsigned long long)n);
		fflush(stdout);
	}
	pk_log_destroy(log);
}

/* dmesg-like lines of 50 to 90 bytes. */
static int bench_line(char *text, size_t size, unsigned i)
{
	unsigned a = i % 97;

	switch (i % 8) {
	case 0:
		return snprintf(text, size,
				"usb %u-1: new high-speed USB device number %u using xhci_hcd", a,
				i);
	case 1:
		return snprintf(text, size,
				"EXT4-fs (sda%u): mounted filesystem with ordered data mode. Quota "
				"mode: none. %u",
				a, i);
	case 2:
		return snprintf(text, size,
				"audit: type=1400 audit(%u.123:%u): apparmor=\"STATUS\" "
				"operation=\"profile_load\"",
				a, i);
	case 3:
		return snprintf(text, size,
				"e1000e 0000:00:1f.%u eth0: NIC Link is Up 1000 Mbps Full Duplex, "
				"Flow Control: %u",
				a, i);
	case 4:
		return snprintf(
			text, size,
			"systemd[1]: Started Session %u of User root (unit session-%u.scope).", a,
			i);
	case 5:
		return snprintf(text, size,
				"CPU%u: Core temperature above threshold, cpu clock throttled "
				"(total events = %u)",
				a, i);
	case 6:
		return snprintf(text, size, "nvme nvme%u: I/O %u QID 3 timeout, aborting", a, i);
	default:
		return snprintf(text, size,
				"app[%u]: worker %u finished a batch of requests without incident",
				a, i);
	}
}

static void bench(const char *path, unsigned mib)
{
	size_t len = (size_t)mib << 20;
	struct pk_log *log = create_log(path, len);
	uint64_t total = 0;
	char text[256];

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	for (unsigned i = 0; total < len + len / 4; i++) {
		int n = bench_line(text, sizeof(text), i);

		store(log, i % 3 == 0 ? 1 : 0, (int)(3 + i % 5), (uint64_t)i * 1234567u,
		      100 + i % 7, 0, text, (size_t)n, NULL, 0, 1);
		total += (uint64_t)n;
	}
	pk_log_sync(log);
	pk_log_destroy(log);
}

/* printk's own path: FILE the printk log, every record deferred. */
static void deferred(const char *path, unsigned mib)
{
	static const char *const what[4] = { "request", "packet", "job", "frame" };
	int err;

	unlink(path);
	if ((err = pk_set_log_buf_len((size_t)mib << 20)) || (err = pk_set_log_buf_file(path, 0)))
		die(path, err);
	pk_unregister_console(pk_console_stderr());
	pk_set_console_loglevel(1);

	struct pk_log *log = pk_printk_log();
	uint64_t wrapped_at = 0;

	for (unsigned long i = 0;; i++) {
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3], i * 3);
		/* Once the oldest record is gone, a quarter more. */
		if (!wrapped_at && pk_log_first_seq(log) > 0)
			wrapped_at = i;
		if (wrapped_at && i >= wrapped_at + wrapped_at / 4)
			break;
	}
	pk_log_sync(log);
}

/* "lanes": one thread's lines. */
struct lane_job {
	unsigned t, n;
};

static void *lane_lines(void *arg)
{
	const struct lane_job *j = arg;
	static const char pad[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (unsigned i = 0; i < j->n; i++)
		pr_info("lane %u line %u %.*s\n", j->t, i, (int)((i * 7 + j->t) % 30), pad);
	return NULL;
}

static void lanes(const char *path, unsigned n)
{
	struct lane_job job[3];
	pthread_t th[3];
	int err;

	unlink(path);
	pk_set_lanes(1);
	if ((err = pk_set_log_buf_len(64 * 1024)) || (err = pk_set_log_buf_file(path, 0)))
		die(path, err);
	pk_unregister_console(pk_console_stderr());
	pk_set_console_loglevel(1);
	for (unsigned t = 0; t < 3; t++) {
		job[t] = (struct lane_job){ t, n };
		if (pthread_create(&th[t], NULL, lane_lines, &job[t]))
			die("pthread_create", -EAGAIN);
	}
	for (unsigned t = 0; t < 3; t++)
		pthread_join(th[t], NULL);

	/* Records still in the lanes: the exited threads gave their lanes
	 * back; their records wait for a merge. */
	struct prb_lanes_stats st;

	prb_lanes_stats(pk_log_ring(pk_printk_log()), &st);
	if (!st.pending)
		die("no lane record left unmerged", -EAGAIN);
	printf("pending %llu\n", (unsigned long long)st.pending);
	fflush(stdout);
	raise(SIGKILL);
}

static void merge(const char *path)
{
	struct pk_log *log;
	struct prb_lanes_stats st;
	int err = pk_log_open_file(&log, path, 0, 0);

	if (err)
		die(path, err);

	uint64_t next = pk_log_next_seq(log); /* a writer's: merges */

	prb_lanes_stats(pk_log_ring(log), &st);
	if (st.pending)
		die("lane records left after a merge", -EAGAIN);
	printf("next %llu\n", (unsigned long long)next);
	pk_log_destroy(log);
}

/* Fill @log with bench lines up to @bytes of text, timestamps from @ts0 in
 * steps of @step ns; returns the next timestamp. */
static uint64_t fill(struct pk_log *log, size_t bytes, uint64_t ts0, uint64_t step)
{
	uint64_t total = 0, ts = ts0;
	char text[256];

	for (unsigned i = 0; total < bytes; i++, ts += step) {
		int n = bench_line(text, sizeof(text), i);

		store(log, i % 3 == 0 ? 1 : 0, (int)(3 + i % 5), ts, 100 + i % 7, 0, text,
		      (size_t)n, NULL, 0, 1);
		total += (uint64_t)n;
	}
	return ts;
}

static void mixed(const char *path)
{
	static const struct {
		const char *text;
		size_t len;
	} odd[] = {
		{S("")},
		{S("tab\tand escape \033[1m and DEL \177 here")},
		{S("first line\nsecond line\n\nfourth after an empty one")},
		{S("UTF-8: gr\xc3\xbc\xc3\x9f dich, \xe2\x82\xac 5, broken \xc3(")},
		{S("\001\002 control bytes at the start")},
		{S("ends with a control byte\037")},
	};
	struct pk_log *log = create_log(path, 4u << 20);
	uint64_t ts = 99990 * NS;
	char big[PRB_TEXT_MAX];

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	memset(big, 'x', sizeof(big));
	for (unsigned round = 0; round < 40; round++) {
		/* 64 KiB of lines 0.1 s apart per round, 2.5 MiB in all (no
		 * wrap): the seconds reach 100000 (one digit more) in the first
		 * round and, after a jump in the middle, 1000000. */
		ts = fill(log, 64u << 10, ts, NS / 10);
		if (round == 20)
			ts += 900000 * NS;
		for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++, ts += NS / 10)
			store(log, 0, 6, ts, 7, 0, odd[k].text, odd[k].len, NULL, 0, 1);
		store(log, 0, 6, ts, 7, 0, big, sizeof(big), NULL, 0, 1);
	}
	store(log, 0, 6, ts + NS, 7, 0, S("an open line at the end"), NULL, 0, 0);
	pk_log_sync(log);
	pk_log_destroy(log);
}

/* The stuck writer: it blocks in its record, between writing and commit. */
static _Thread_local int stuck_here;
static pthread_mutex_t stuck_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stuck_cond = PTHREAD_COND_INITIALIZER;
static int stuck_reached;

static void stuck_hook(enum prb_testpoint tp)
{
	if (tp != PRB_TP_BEFORE_COMMIT || !stuck_here)
		return;
	pthread_mutex_lock(&stuck_lock);
	stuck_reached = 1;
	pthread_cond_broadcast(&stuck_cond);
	pthread_mutex_unlock(&stuck_lock);
	for (;;)
		pause(); /* until the process exits */
}

static void *stuck_writer(void *arg)
{
	/* Its real pid: readers ask the log's registry whether it still runs. */
	struct prb_meta meta = {
		.ts_nsec = 500 * NS,
		.caller = {.pid = (uint32_t)getpid(), .tid = 9},
		.level = 6,
		.flags = PRB_FLAG_NEWLINE,
	};

	stuck_here = 1;
	prb_store(pk_log_ring(arg), &meta, S("stuck record"), NULL, 0, true, NULL);
	return NULL;
}

static void stuck(const char *path)
{
	struct pk_log *log = create_log(path, 4u << 20);
	uint64_t ts = fill(log, 5u << 20, NS, NS / 1000);
	pthread_t th;
	char text[256];

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)GOLDEN_OFFSET_NS);
	store(log, 0, 6, ts, 8, 0, S("the last record before the stuck one"), NULL, 0, 1);
	prb_set_testpoint_hook(stuck_hook);
	if (pthread_create(&th, NULL, stuck_writer, log) != 0)
		die("pthread_create", 0);
	pthread_mutex_lock(&stuck_lock);
	while (!stuck_reached)
		pthread_cond_wait(&stuck_cond, &stuck_lock);
	pthread_mutex_unlock(&stuck_lock);
	prb_set_testpoint_hook(NULL);
	for (unsigned i = 0; i < 3000; i++) {
		int n = bench_line(text, sizeof(text), i);

		store(log, 0, 6, 600 * NS + i, 8, 0, text, (size_t)n, NULL, 0, 1);
	}
	printf("ready\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	exit(0); /* the stuck thread goes with the process */
}

static void kmsg(const char *path, int caller)
{
	struct kmsg_file *f;
	static char buf[4096];
	int err;

	pk_set_printk_caller(caller);
	err = pk_kmsg_open_file(&f, path, O_RDONLY | O_NONBLOCK);
	if (err)
		die(path, err);
	for (;;) {
		ssize_t n = pk_kmsg_read(f, buf, sizeof(buf));

		if (n == -EPIPE)
			continue;
		if (n < 0)
			break;
		fwrite(buf, 1, (size_t)n, stdout);
		fputc('\0', stdout);
	}
	pk_kmsg_close(f);
}

static void state(const char *path)
{
	struct pk_log *log;
	int err = pk_log_open_file(&log, path, 0, PK_LOG_RDONLY);

	if (err)
		die(path, err);

	struct pk_log_shared *sh = pk_log_shared(log);
	uint32_t saved = pk_load_relaxed(&sh->saved_console_loglevel);

	printf("console_loglevel=%u saved_console_loglevel=%d clear_seq=%llu "
	       "realtime_offset_ns=%lld\n",
	       pk_load_relaxed(&sh->console_loglevel),
	       saved == PK_LOG_LEVEL_UNSAVED ? -1 : (int)saved,
	       (unsigned long long)pk_load_relaxed(&sh->clear_seq),
	       (long long)pk_load_relaxed(&sh->realtime_offset_ns));
	pk_log_destroy(log);
}

/* Times at the ends of their ranges, as a damaged or hostile file may hold
 * them: the largest realtime offset and timestamps 0 and 2^64 - 1 ns. */
static void far(const char *path)
{
	struct pk_log *log = create_log(path, 64 * 1024);

	atomic_store(&pk_log_shared(log)->realtime_offset_ns, (uint64_t)INT64_MAX);
	store(log, 0, 6, 0, 1, 0, S("at boot"), NULL, 0, 1);
	store(log, 0, 6, UINT64_MAX, 2, 0, S("at the end of time"), NULL, 0, 1);
	pk_log_destroy(log);
}

/* Two writer processes with names of their own, each storing one record. */
static void writers(const char *path)
{
	static const char *const names[] = { "alpha", "beta" };

	unlink(path);
	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork", errno);
		if (pid == 0) {
			struct pk_log *log;
			char text[32];
			int n = snprintf(text, sizeof(text), "from %s", names[i]);

			program_invocation_short_name = (char *)names[i];
			_exit(pk_log_open_file(&log, path, 64 * 1024, 0) ||
			      pk_log_store(log, 0, 6, text, (size_t)n, NULL, 0));
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("writer", EIO);
		printf("%s %d\n", names[i], (int)pid);
	}
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "golden"))
		golden(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "partial"))
		partial(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "live"))
		live(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "mixed"))
		mixed(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "stuck"))
		stuck(argv[2]);
	else if (argc >= 4 && !strcmp(argv[1], "bench"))
		bench(argv[2], (unsigned)atoi(argv[3]));
	else if (argc >= 4 && !strcmp(argv[1], "deferred"))
		deferred(argv[2], (unsigned)atoi(argv[3]));
	else if (argc >= 3 && !strcmp(argv[1], "merge"))
		merge(argv[2]);
	else if (argc >= 4 && !strcmp(argv[1], "lanes"))
		lanes(argv[2], (unsigned)atoi(argv[3]));
	else if (argc >= 3 && !strcmp(argv[1], "state"))
		state(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "writers"))
		writers(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "far"))
		far(argv[2]);
	else if (argc >= 3 && !strcmp(argv[1], "kmsg"))
		kmsg(argv[2], argc >= 4 && !strcmp(argv[3], "caller"));
	else {
		fprintf(stderr, "usage: udmesg-testgen golden|partial|live|mixed|stuck|state|far|kmsg|merge "
				"FILE | bench|deferred FILE MIB | lanes FILE N\n");
		return 2;
	}
	return 0;
}
