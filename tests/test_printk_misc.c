// SPDX-License-Identifier: MIT
/*
 * test_printk_misc.c - the rest of the printk front end:
 *   - dev_printk: "driver name: " prefix and the SUBSYSTEM=/DEVICE=
 *     dictionary (n<ifindex>, b/c<major>:<minor>, +subsystem:name, none),
 *     driver NULL, NULL device; a device message always ends its line;
 *   - %pV (struct va_format) through printk;
 *   - a signal handler that prints while the interrupted thread builds
 *     partial lines: no record and no console line mixes the two (one exact
 *     case with raise(), then a thread hammered with SIGUSR1); a handler that
 *     prints while the thread is inside a console write is not "recursion";
 *   - printk's stack use on a signal handler's alternate stack (one write,
 *     the general loop, an open line) stays under 6 KiB;
 *   - fork() while another thread prints: the child can print (a loop, and
 *     the exact case: the other thread stopped inside a reservation);
 *   - pk_printk_exit, then printk starts a fresh log;
 *   - pk_set_log_buf_len: -EBUSY after the first message, -EINVAL sizes.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/dev_printk.h>
#include <printk/printk.h>

#include "fixture.h"
#include "ring/ringbuffer.h"
#include "testutil.h"


static void assert_dict(const char *dict, size_t len)
{
	assert_int_equal(rec.dict_len, len);
	assert_memory_equal(rec.dict, dict, len);
}

/* ---- dev_printk ---- */

static const struct pk_device eth0 = {
	.name = "eth0", .driver = "e1000e", .subsystem = "net", .ifindex = 2
};

static void test_dev_info_net(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(dev_info(&eth0, "link up\n"), 20);
	assert_string_equal(capture_text(&cap), "e1000e eth0: link up\n");
	read_at(seq);
	assert_string_equal(rec.text, "e1000e eth0: link up");
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.facility, 0);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_dict("SUBSYSTEM=net\0DEVICE=n2", 23);

	dev_err(&eth0, "tx timeout %d ms\n", 5000);
	read_at(seq + 1);
	assert_string_equal(rec.text, "e1000e eth0: tx timeout 5000 ms");
	assert_int_equal(rec.level, 3);
	assert_dict("SUBSYSTEM=net\0DEVICE=n2", 23);
}

static void test_dev_dictionaries(void **state)
{
	(void)state;
	const struct pk_device sda = { .name = "sda", .driver = "sd", .subsystem = "block", .major = 8, .minor = 0 };
	const struct pk_device tty = { .name = "ttyS0", .driver = "serial", .subsystem = "tty", .major = 4, .minor = 64 };
	const struct pk_device pci = { .name = "0000:00:1f.2", .driver = "ahci", .subsystem = "pci" };
	const struct pk_device nosub = { .name = "thing", .driver = "drv" };
	const struct pk_device nodrv = { .name = "0000:00:1f.2", .subsystem = "pci" };
	uint64_t seq = next_seq();

	dev_warn(&sda, "a\n");
	dev_notice(&tty, "b\n");
	dev_crit(&pci, "c\n");
	dev_alert(&nosub, "d\n");
	dev_emerg(&nodrv, "e\n");
	dev_info(NULL, "f\n");
	dev_printk(KERN_INFO, &pci, "g\n");
	dev_printk(KERN_DEFAULT, &pci, "h\n");

	read_at(seq);
	assert_string_equal(rec.text, "sd sda: a");
	assert_int_equal(rec.level, 4);
	assert_dict("SUBSYSTEM=block\0DEVICE=b8:0", 27);
	read_at(seq + 1);
	assert_string_equal(rec.text, "serial ttyS0: b");
	assert_int_equal(rec.level, 5);
	assert_dict("SUBSYSTEM=tty\0DEVICE=c4:64", 26);
	read_at(seq + 2);
	assert_string_equal(rec.text, "ahci 0000:00:1f.2: c");
	assert_int_equal(rec.level, 2);
	assert_dict("SUBSYSTEM=pci\0DEVICE=+pci:0000:00:1f.2", 38);
	read_at(seq + 3);
	assert_string_equal(rec.text, "drv thing: d");
	assert_int_equal(rec.level, 1);
	assert_int_equal(rec.dict_len, 0);
	read_at(seq + 4);
	assert_string_equal(rec.text, "pci 0000:00:1f.2: e"); /* dev_driver_string: the subsystem */
	assert_int_equal(rec.level, 0);
	assert_dict("SUBSYSTEM=pci\0DEVICE=+pci:0000:00:1f.2", 38);
	read_at(seq + 5);
	assert_string_equal(rec.text, "(NULL device *): f");
	assert_int_equal(rec.level, 6);
	assert_int_equal(rec.dict_len, 0);
	read_at(seq + 6);
	assert_int_equal(rec.level, 6);
	read_at(seq + 7);
	assert_string_equal(rec.text, "ahci 0000:00:1f.2: h");
	assert_int_equal(rec.level, 4); /* KERN_DEFAULT: default_message_loglevel */
	assert_int_equal(next_seq(), seq + 8);
	assert_string_equal(capture_text(&cap), "sd sda: a\nserial ttyS0: b\nahci 0000:00:1f.2: c\ndrv thing: d\n"
						"pci 0000:00:1f.2: e\n(NULL device *): f\nahci 0000:00:1f.2: g\n"
						"ahci 0000:00:1f.2: h\n");
}

/* A device message ends its line even without "\n"; pr_cont never extends it. */
static void test_dev_message_always_ends_line(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	dev_info(&eth0, "no newline");
	read_at(seq);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(rec.state, PK_REC_FINAL);
	pr_cont("cont\n");
	read_at(seq);
	assert_string_equal(rec.text, "e1000e eth0: no newline");
	read_at(seq + 1);
	assert_string_equal(rec.text, "cont");
	assert_int_equal(rec.flags, PK_REC_CONT | PK_REC_NEWLINE);
	assert_string_equal(capture_text(&cap), "e1000e eth0: no newline\ncont\n");
}

static void test_dev_message_without_dict_ends_line(void **state)
{
	(void)state;
	const struct pk_device nosub = { .name = "thing", .driver = "drv" };
	uint64_t seq = next_seq();

	dev_info(&nosub, "no newline");
	read_at(seq);
	/* BUG: pk_dev_printk() relies on the dictionary to force the end of
	 * the line (store() in printk.c sets PRB_FLAG_NEWLINE only for
	 * "newline || dictlen"), so a device without a subsystem (no
	 * dictionary) leaves its message open and pr_cont() joins it:
	 * "drv thing: no newlinecont". dev_printk.h says "A device message
	 * always ends its line" (the kernel passes dev_info even when it is
	 * empty, which forces LOG_NEWLINE). */
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
	assert_int_equal(rec.state, PK_REC_FINAL);
	pr_cont("cont\n");
	read_at(seq);
	assert_string_equal(rec.text, "drv thing: no newline");
	assert_string_equal(capture_text(&cap), "drv thing: no newline\ncont\n");
}

/* A dictionary that does not fit in dev_printk's buffer is cut, never overrun. */
static void test_dev_long_names(void **state)
{
	(void)state;
	char name[400];
	struct pk_device dev = { .driver = "d", .subsystem = "pci" };

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	dev.name = name;
	uint64_t seq = next_seq();

	assert_int_equal(dev_info(&dev, "x\n"), 2 + 399 + 3);
	read_at(seq);
	assert_int_equal(rec.text_len, 2 + 399 + 3);
	assert_memory_equal(rec.dict, "SUBSYSTEM=pci\0DEVICE=+pci:nnn", 29);
	assert_true(rec.dict_len < 256);
	assert_true(rec.dict_len > 29);
	assert_int_equal(rec.flags, PK_REC_NEWLINE);
}

/* ---- %pV ---- */

static int PK_PRINTF(2, 3) wrapped(const char *prefix, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	r = printk(KERN_NOTICE "%s: %pV!\n", prefix, &vaf);
	va_end(ap);
	return r;
}

static int PK_PRINTF(1, 2) twice_wrapped(const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	r = wrapped("outer", "[%pV]", &vaf);
	va_end(ap);
	return r;
}

static void test_pV(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(wrapped("mod", "inner %d %s", 42, "x"), 16);
	read_at(seq);
	assert_string_equal(rec.text, "mod: inner 42 x!");
	assert_int_equal(rec.level, 5);
	assert_int_equal(twice_wrapped("%05.1f|%c", 2.25, 'z'), 17);
	read_at(seq + 1);
	assert_string_equal(rec.text, "outer: [002.2|z]!");
	assert_string_equal(capture_text(&cap), "mod: inner 42 x!\nouter: [002.2|z]!\n");
}

/* ---- a signal handler printing into a thread's partial lines ---- */

struct big_console {
	struct console con;
	char *buf;
	size_t len, cap;
};

static struct big_console bigc;

static int big_write(struct console *con, const char *text, size_t len)
{
	struct big_console *b = (struct big_console *)con;

	if (b->len + len <= b->cap) {
		memcpy(b->buf + b->len, text, len);
		b->len += len;
	}
	return 0;
}

static void big_console_start(size_t size)
{
	memset(&bigc, 0, sizeof(bigc));
	strcpy(bigc.con.name, "big");
	bigc.con.write_checked = big_write;
	bigc.cap = size;
	bigc.buf = malloc(size);
	assert_non_null(bigc.buf);
	assert_int_equal(pk_register_console(&bigc.con), 0);
}

static void big_console_stop(void)
{
	pk_unregister_console(&bigc.con);
	free(bigc.buf);
	bigc.buf = NULL;
}

static atomic_int sig_handled, sig_stop;

static void on_usr1(int sig)
{
	(void)sig;
	printk("H\n");
	pr_cont("h");
	atomic_fetch_add(&sig_handled, 1);
}

/* Exact case: the signal arrives between pr_info("A") and pr_cont("A\n"). */
static void test_signal_between_fragments(void **state)
{
	(void)state;
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	uint64_t seq = next_seq();

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	pr_info("A");
	raise(SIGUSR1); /* delivered before raise() returns: printk("H\n"); pr_cont("h") */
	pr_cont("A");
	pr_cont("\n");
	pr_info("next\n");
	sigaction(SIGUSR1, &old, NULL);

	read_at(seq);
	assert_string_equal(rec.text, "A");
	read_at(seq + 1);
	assert_string_equal(rec.text, "H");
	read_at(seq + 2);
	/* Regression: with a caller context taken from the nesting depth only,
	 * the handler had the thread's caller id and the thread's pr_cont("A")
	 * joined the handler's open fragment (record "hA"). Expected: "h" alone
	 * (a PK_REC_CONT record), then the thread's "A" as its own fragment. */
	assert_string_equal(rec.text, "h");
	assert_int_equal(rec.flags, PK_REC_CONT);
	read_at(seq + 3);
	assert_string_equal(rec.text, "A");
	assert_int_equal(rec.flags, PK_REC_CONT | PK_REC_NEWLINE);
	read_at(seq + 4);
	assert_string_equal(rec.text, "next");
	assert_string_equal(capture_text(&cap), "A\nH\nh\nA\nnext\n");
}

/* A handler installed with SA_NODEFER and an empty sa_mask does not change
 * the signal mask, so printk cannot tell it from the code it interrupted: it
 * brackets itself, as printk.h documents. */
static void on_usr1_bracketed(int sig)
{
	pk_printk_handler_enter();
	on_usr1(sig);
	pk_printk_handler_leave();
}

/* The same with handlers whose signal mask differs little from the
 * interrupted code's: SA_NODEFER (bracketed), and a SIGUSR1 handler whose
 * sa_mask adds SIGINT (an early 8-bit fold of the mask confused it with the
 * empty mask; the whole mask is compared now). */
static void signal_between_fragments_with(int sa_flags, int extra_sig)
{
	struct sigaction sa = { .sa_handler = (sa_flags & SA_NODEFER) ? on_usr1_bracketed : on_usr1,
				.sa_flags = sa_flags },
			 old;
	sigset_t mask;
	uint64_t seq = next_seq();

	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	assert_false(sigismember(&mask, SIGUSR1));
	assert_false(sigismember(&mask, SIGINT));
	sigemptyset(&sa.sa_mask);
	if (extra_sig)
		sigaddset(&sa.sa_mask, extra_sig);
	sigaction(SIGUSR1, &sa, &old);
	pr_info("A");
	raise(SIGUSR1);
	pr_cont("A");
	pr_cont("\n");
	sigaction(SIGUSR1, &old, NULL);

	read_at(seq + 2);
	assert_string_equal(rec.text, "h");
	read_at(seq + 3);
	assert_string_equal(rec.text, "A");
	assert_string_equal(capture_text(&cap), "A\nH\nh\nA\n");
}

static void test_signal_between_fragments_nodefer(void **state)
{
	(void)state;
	signal_between_fragments_with(SA_NODEFER, 0);
}

static void test_signal_between_fragments_mask_alias(void **state)
{
	(void)state;
	signal_between_fragments_with(0, SIGINT);
}

static void raise_in_write(struct capture *c, const char *text, size_t len)
{
	(void)c;
	(void)len;
	if (text[0] == 'x')
		raise(SIGUSR1);
}

/* A handler that prints while the thread is inside a console write: its
 * record is printed after the write, and nothing claims recursion. */
static void on_usr1_line(int sig)
{
	(void)sig;
	printk("H\n");
}

static void test_signal_during_console_write_not_recursion(void **state)
{
	(void)state;
	struct sigaction sa = { .sa_handler = on_usr1_line }, old;
	uint64_t seq = next_seq();

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	cap.on_write = raise_in_write;
	printk("x\n");
	cap.on_write = NULL;
	sigaction(SIGUSR1, &old, NULL);

	read_at(seq);
	assert_string_equal(rec.text, "x");
	read_at(seq + 1);
	assert_string_equal(rec.text, "H");
	/* BUG: pk_console_flush() sees in_console_write set (the handler runs
	 * on the thread that is inside the console write) and reports printk
	 * recursion: a level-2 record "BUG: recent printk recursion!" follows,
	 * although no console called printk. */
	assert_int_equal(next_seq(), seq + 2);
	assert_string_equal(capture_text(&cap), "x\nH\n");
}

static pthread_t victim;

static void *signaller(void *arg)
{
	(void)arg;
	unsigned spin = 0;

	while (!atomic_load(&sig_stop)) {
		int before = atomic_load(&sig_handled);

		pthread_kill(victim, SIGUSR1);
		uint64_t t0 = now_ms();

		while (atomic_load(&sig_handled) == before && !atomic_load(&sig_stop) && now_ms() - t0 < 20)
			;
		/* vary where the next one lands */
		spin = spin * 1103515245u + 12345u;
		for (volatile unsigned i = 0; i < (spin >> 20) % 2000; i++)
			;
	}
	return NULL;
}

static int all_of(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]))
			return 0;
	return 1;
}

static void test_signal_handler_never_mixes(void **state)
{
	(void)state;
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	pthread_t th;
	struct pk_log *log;
	unsigned ms = stress_ms(300);
	int lines = 0;

	capture_teardown(&cap);
	capture_setup(&cap, 4 << 20);
	big_console_start(8 << 20);
	log = pk_printk_log();
	atomic_store(&sig_handled, 0);
	atomic_store(&sig_stop, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	victim = pthread_self();
	assert_int_equal(pthread_create(&th, NULL, signaller, NULL), 0);

	uint64_t t0 = now_ms();

	/* At least @ms and 200 signals, at most 3 s (a loaded machine delivers
	 * fewer signals); lines are 4 console bytes each. */
	while ((now_ms() - t0 < ms || atomic_load(&sig_handled) < 200) && now_ms() - t0 < 3000 &&
	       lines < 1500000) {
		pr_info("A");
		pr_cont("A");
		pr_cont("A");
		pr_cont("\n");
		lines++;
	}
	atomic_store(&sig_stop, 1);
	pthread_join(th, NULL);
	sigaction(SIGUSR1, &old, NULL);
	pr_flush(1000, 0);

	int handled = atomic_load(&sig_handled);

	print_message("%d lines, %d signals handled\n", lines, handled);
	assert_true(handled >= 20);

	/* Records: only A's (the thread's) or only H/h (the handler's). */
	uint64_t first = pk_log_first_seq(log), next = pk_log_next_seq(log);
	uint64_t mixed = 0, a_recs = 0, h_recs = 0, bug_recs = 0;
	char example[128] = "";

	for (uint64_t s = first; s < next; s++) {
		assert_int_equal(pk_log_read(log, s, &rec, 0), 0);
		if (all_of(rec.text, rec.text_len, "A"))
			a_recs++;
		else if (all_of(rec.text, rec.text_len, "Hh"))
			h_recs++;
		else if (strcmp(rec.text, "BUG: recent printk recursion!") == 0)
			bug_recs++;
		else if (mixed++ == 0)
			snprintf(example, sizeof(example), "seq %llu: \"%.40s\"", (unsigned long long)s, rec.text);
	}
	print_message("records: %llu thread, %llu handler, %llu \"recursion\" notices, %llu mixed %s\n",
		      (unsigned long long)a_recs, (unsigned long long)h_recs, (unsigned long long)bug_recs,
		      (unsigned long long)mixed, example);

	/* Console lines: the same rule. */
	uint64_t mixed_lines = 0;
	char line_example[64] = "";
	size_t start = 0;

	for (size_t i = 0; i < bigc.len; i++) {
		if (bigc.buf[i] != '\n')
			continue;
		const char *l = bigc.buf + start;
		size_t n = i - start;

		if (n && !all_of(l, n, "A") && !all_of(l, n, "Hh") &&
		    !(n == 29 && memcmp(l, "BUG: recent printk recursion!", 29) == 0) && mixed_lines++ == 0)
			snprintf(line_example, sizeof(line_example), "\"%.*s\"", (int)(n < 40 ? n : 40), l);
		start = i + 1;
	}
	print_message("console lines mixed: %llu %s\n", (unsigned long long)mixed_lines, line_example);
	big_console_stop();
	/* A handler that interrupts the thread *between* two printk calls must
	 * not share its caller id (see test_signal_between_fragments): else the
	 * handler's open pr_cont("h") fragment is extended by the thread's next
	 * pr_cont("A") (record "hA..."), or the console continues the handler's
	 * line with the thread's text. */
	assert_int_equal(mixed, 0);
	assert_int_equal(mixed_lines, 0);
	/* BUG: a handler that interrupts the thread while it is inside a
	 * console's write callback finds in_console_write set (console.c,
	 * pk_console_flush) and is taken for printk recursion from the console
	 * driver: its record is deferred (fine) but a level-2 "BUG: recent
	 * printk recursion!" record is stored and printed each time, although no
	 * console called printk. */
	assert_int_equal(bug_recs, 0);
}

/* ---- printk on a signal handler's small stack ---- */

/*
 * How much stack printk takes from a signal handler on an alternate stack:
 * the stack is filled with a pattern, the handler prints, and the bytes no
 * longer holding the pattern are counted, minus what an empty handler
 * takes (the kernel's signal frame). Four paths: the one-write path (one
 * lossy file console), the general loop (two consoles), an open line joined
 * by a continuation, and a default (lossless) file console, printed by its
 * thread. Sanitizers grow every frame: not measured there.
 */
#define PRINTK_STACK_MAX (6 * 1024) /* measured: 2.3 KiB at -O2, 3.7 KiB at -O3 */

static int stack_mode;

static void on_usr2_print(int sig)
{
	(void)sig;
	if (stack_mode == 1) {
		pr_info("from a handler: %d %s %lu\n", 42, "on a small stack", 123456789UL);
	} else if (stack_mode == 2) {
		pr_warn("an open line ");
		pr_cont("joined %d\n", 7);
	}
}

static size_t stack_used_by(int mode, struct test_stack_probe *probe)
{
	stack_mode = mode;
	return test_stack_used(probe);
}

/* A lossless file console (the default) alone, for the measurement: the
 * most printk took of 50 handlers; the two consoles registered before
 * (the capture and the lossy file) are unregistered and stay so. */
struct lossless_stack {
	struct test_stack_probe *probe;
	size_t frame;
	const char *path;
	struct console *file; /* the lossy one, registered with the capture */
};

static size_t lossless_stack_max(struct lossless_stack *ls)
{
	struct console *con;
	size_t most = 0;

	assert_int_equal(pk_unregister_console(&cap.con), 0);
	assert_int_equal(pk_unregister_console(ls->file), 0);
	assert_int_equal(pk_console_file_create(&con, ls->path), 0);
	assert_int_equal(pk_register_console(con), 0);
	assert_true(con->flags & PK_CON_LOSSLESS);
	for (int i = 0; i < 50; i++) {
		size_t used = stack_used_by(1, ls->probe) - ls->frame;

		if (used > most)
			most = used;
	}
	assert_int_equal(pk_unregister_console(con), 0);
	pk_console_destroy(con);
	return most;
}

static int lossless_stack_child(void *arg)
{
	size_t most = lossless_stack_max(arg);

	if (most > PRINTK_STACK_MAX) {
		fprintf(stderr, "printk took %zu bytes of the handler's stack\n", most);
		return 1;
	}
	return 0;
}

static void test_printk_stack_use(void **state)
{
	(void)state;
	if (!TEST_STACK_MEASURED)
		skip();

	char path[] = "/tmp/pk_printk_misc_stack_XXXXXX";
	int fd = mkstemp(path);
	struct test_stack_probe probe;
	struct console *file;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pk_console_file_create(&file, path), 0);
	file->flags |= PK_CON_LOSSY; /* the one-write path: printed by the caller */
	test_stack_probe_begin(&probe, SIGUSR2, on_usr2_print);

	size_t frame = stack_used_by(0, &probe);

	assert_int_equal(pk_unregister_console(&cap.con), 0);
	assert_int_equal(pk_register_console(file), 0);

	size_t one_write = stack_used_by(1, &probe) - frame;

	assert_int_equal(pk_register_console(&cap.con), 0);

	size_t loop = stack_used_by(1, &probe) - frame;
	size_t open_line = stack_used_by(2, &probe) - frame;

	/* A default file console: lossless, printed by its thread; the
	 * caller stores and wakes it. Measured in fresh children too: what
	 * a process does only once (the first call of a library function,
	 * bound lazily by the dynamic linker) is measured only where it has
	 * not happened yet, and the first wake comes at no fixed point. */
	struct lossless_stack ls = { .probe = &probe, .frame = frame, .path = path, .file = file };
	size_t lossless_used = 0;
	int over = 0;

	for (int i = 0; i < 60; i++) {
		struct child_result res;

		run_child(lossless_stack_child, &ls, 60000, &res);
		if (!res.exited || res.status != 0) {
			if (over++ == 0)
				print_message("child %d: exited %d status %d: %s", i, res.exited, res.status,
					      res.out);
		}
		child_result_free(&res);
	}
	assert_int_equal(over, 0);
	lossless_used = lossless_stack_max(&ls);

	assert_int_equal(pk_register_console(&cap.con), 0);
	test_stack_probe_end(&probe);
	pk_console_destroy(file);
	unlink(path);
	print_message("stack: signal frame %zu, printk: one write %zu, loop %zu, open line %zu, lossless %zu bytes\n",
		      frame, one_write, loop, open_line, lossless_used);
	assert_true(lossless_used <= PRINTK_STACK_MAX);
	assert_true(one_write <= PRINTK_STACK_MAX);
	assert_true(loop <= PRINTK_STACK_MAX);
	assert_true(open_line <= PRINTK_STACK_MAX);
	assert_string_equal(capture_text(&cap),
			    "from a handler: 42 on a small stack 123456789\nan open line joined 7\n");
}

/* ---- fork while another thread prints ---- */

static atomic_int printer_stop;

static void *printer(void *arg)
{
	(void)arg;
	for (int i = 0; !atomic_load(&printer_stop); i++)
		printk("loop %d\n", i);
	return NULL;
}

static int forked_child(void *arg)
{
	int k = *(int *)arg;

	if (pk_register_console(pk_console_stderr()) != 0)
		return 2;
	printk("child %d says hi\n", k);
	pr_flush(1000, 0);
	return 0;
}

static void test_fork_while_printing(void **state)
{
	(void)state;
	pthread_t th;
	struct child_result res;
	char want[64];
	int bad = 0;

	atomic_store(&printer_stop, 0);
	assert_int_equal(pthread_create(&th, NULL, printer, NULL), 0);
	for (int k = 0; k < 30; k++) {
		run_child(forked_child, &k, 5000, &res);
		snprintf(want, sizeof(want), "child %d says hi\n", k);
		if (!res.exited || res.status != 0 || strcmp(res.out, want) != 0) {
			if (bad++ == 0)
				print_message("child %d: exited %d status %d timed out %d output \"%s\"\n", k,
					      res.exited, res.status, res.timed_out, res.out);
		}
		child_result_free(&res);
	}
	atomic_store(&printer_stop, 1);
	pthread_join(th, NULL);
	/* BUG (see test_fork_during_reservation): a child forked while the
	 * printer thread is between reserving and committing a record never
	 * shows its own messages. */
	print_message("%d of 30 children printed nothing or the wrong text\n", bad);
	assert_int_equal(bad, 0);
}

/* Exact case: fork() while the other thread holds a claimed, uncommitted
 * reservation (stopped there with the ring's test point). */
static sem_t at_point, may_go;
static atomic_int tp_armed;
static pthread_t tp_thread;

static void tp_hook(enum prb_testpoint tp)
{
	if (tp == PRB_TP_CLAIMED && pthread_equal(pthread_self(), tp_thread) && atomic_exchange(&tp_armed, 0)) {
		sem_post(&at_point);
		sem_wait(&may_go);
	}
}

static void *one_message(void *arg)
{
	(void)arg;
	printk("from the other thread\n");
	return NULL;
}

static void test_fork_during_reservation(void **state)
{
	(void)state;
	struct child_result res;
	int k = 99;

	sem_init(&at_point, 0, 0);
	sem_init(&may_go, 0, 0);
	printk("before\n");
	atomic_store(&tp_armed, 1);
	prb_set_testpoint_hook(tp_hook);
	assert_int_equal(pthread_create(&tp_thread, NULL, one_message, NULL), 0);
	sem_wait(&at_point);
	run_child(forked_child, &k, 5000, &res);
	sem_post(&may_go);
	pthread_join(tp_thread, NULL);
	prb_set_testpoint_hook(NULL);
	sem_destroy(&at_point);
	sem_destroy(&may_go);
	assert_string_equal(capture_text(&cap), "before\nfrom the other thread\n");

	static char out[256];

	snprintf(out, sizeof(out), "%s", res.out);
	child_result_free(&res);
	assert_true(res.exited);
	assert_int_equal(res.status, 0);
	/* BUG: the other thread's reservation (claimed, never committed in the
	 * child, where that thread does not exist) stays reserved for ever;
	 * readers stop at it, so the child's own records are stored but never
	 * readable: no console prints them and pk_log_next_seq() does not move.
	 * Nothing in the atfork hooks (printk.c printk_after_fork_child,
	 * console.c pk_console_after_fork, caller.c) repairs the ring. */
	assert_string_equal(out, "child 99 says hi\n");
}

/* ---- exit and start again ---- */

static void test_exit_then_printk(void **state)
{
	(void)state;
	printk("one\n");
	printk("two\n");
	pr_info("open line");
	assert_int_equal(next_seq(), 2);
	pk_printk_exit();
	/* The open line was ended on the console, and the console released. */
	assert_string_equal(capture_text(&cap), "one\ntwo\nopen line\n");
	assert_null(cap.con.state);

	assert_int_equal(printk("fresh\n"), 5);
	struct pk_log *log = pk_printk_log();

	assert_int_equal(pk_log_first_seq(log), 0);
	assert_int_equal(pk_log_next_seq(log), 1);
	assert_int_equal(pk_log_read(log, 0, &rec, 0), 0);
	assert_int_equal(rec.seq, 0);
	assert_string_equal(rec.text, "fresh");
	assert_int_equal(pk_log_buf_len(log), PK_LOG_BUF_LEN_DEFAULT);

	/* A console registered now replays the fresh log only. */
	capture_clear(&cap);
	cap.con.flags = PK_CON_PRINTBUFFER;
	assert_int_equal(pk_register_console(&cap.con), 0);
	printk("again\n");
	assert_string_equal(capture_text(&cap), "fresh\nagain\n");

	/* And a second exit in a row is harmless. */
	pk_printk_exit();
	pk_printk_exit();
	assert_int_equal(printk("third life\n"), 10);
	assert_int_equal(pk_log_next_seq(pk_printk_log()), 1);
}

/* ---- pk_set_log_buf_len ---- */

static void test_set_log_buf_len(void **state)
{
	(void)state;
	/* Nothing stored yet (registering a console stores nothing). */
	assert_int_equal(pk_set_log_buf_len(1000), -EINVAL);
	assert_int_equal(pk_set_log_buf_len(PK_LOG_BUF_LEN_MAX + 1), -EINVAL);
	assert_int_equal(pk_set_log_buf_len(5000), 0);
	assert_int_equal(pk_log_buf_len(pk_printk_log()), 8192); /* rounded up */
	assert_int_equal(pk_set_log_buf_len(0), 0);
	assert_int_equal(pk_log_buf_len(pk_printk_log()), PK_LOG_BUF_LEN_DEFAULT);
	assert_int_equal(pk_set_log_buf_len(16384), 0);

	/* The registered console follows the new log. */
	printk("first\n");
	assert_string_equal(capture_text(&cap), "first\n");
	assert_int_equal(pk_log_buf_len(pk_printk_log()), 16384);

	assert_int_equal(pk_set_log_buf_len(65536), -EBUSY);
	assert_int_equal(pk_set_log_buf_len(1000), -EINVAL);
	assert_int_equal(pk_log_buf_len(pk_printk_log()), 16384);
	assert_int_equal(pk_log_next_seq(pk_printk_log()), 1);

	/* A partial line counts as a message too. */
	pk_printk_exit();
	pr_info("partial");
	assert_int_equal(pk_set_log_buf_len(65536), -EBUSY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dev_info_net, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_dictionaries, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_message_always_ends_line, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_message_without_dict_ends_line, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_dev_long_names, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_pV, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_between_fragments, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_between_fragments_nodefer, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_between_fragments_mask_alias, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_during_console_write_not_recursion, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_signal_handler_never_mixes, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_printk_stack_use, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_fork_while_printing, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_fork_during_reservation, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_exit_then_printk, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_set_log_buf_len, setup_capture, teardown_capture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
