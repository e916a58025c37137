// SPDX-License-Identifier: MIT
/*
 * test_module_levels.c - module levels (docs/levels.md): a message below
 * its module's level is not stored (records counted) and its arguments
 * are not evaluated; the module is the file's base name here (no
 * KBUILD_MODNAME); patterns, clearing, ignore_loglevel, pr_debug under
 * dynamic debug, pr_cont, printk() with and without a level header;
 * PRINTK_OPTS printk.module= and its one warning for a bad value; the
 * "module M level L" query; a level posted through a log file by another
 * process (pk_dyndbg_post and udmesg --dyndbg) and listed by udmesg
 * --module-levels; printk.srcloc's CODE_FILE=, CODE_LINE=, CODE_FUNC=
 * entries in the record, its /dev/kmsg form, its JSON line and the
 * journald console's payload.
 */
#define PRINTK_DYNAMIC_DEBUG 1

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <printk/dynamic_debug.h>
#include <printk/printk.h>

#include "fixture.h"
#include "forward/console_net.h"
#include "printk/printk_internal.h"
#include "readers/reader.h"
#include "remote_post.h"
#include "testutil.h"

#define MOD "test_module_levels"

static int evaluated;

static int count_me(void)
{
	return ++evaluated;
}

/* One message of each level of the pr_* macros, each with an argument
 * that counts its evaluation. */
static void every_level(void)
{
	pr_emerg("emerg %d\n", count_me());
	pr_alert("alert %d\n", count_me());
	pr_crit("crit %d\n", count_me());
	pr_err("err %d\n", count_me());
	pr_warn("warn %d\n", count_me());
	pr_notice("notice %d\n", count_me());
	pr_info("info %d\n", count_me());
}

static int setup(void **state)
{
	setup_capture(state);
	pk_module_clear_levels();
	pk_set_ignore_loglevel(0);
	pk_set_printk_srcloc(0);
	evaluated = 0;
	return 0;
}

static int teardown(void **state)
{
	pk_module_clear_levels();
	pk_set_printk_srcloc(0);
	pk_dyndbg_query("=_");
	return teardown_capture(state);
}

static void test_no_level_stores_all(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	every_level();
	assert_int_equal(next_seq(), seq + 7);
	assert_int_equal(evaluated, 7);
	assert_int_equal(pk_module_get_level(MOD), -ENOENT);
}

static void test_level_suppresses(void **state)
{
	(void)state;
	assert_int_equal(pk_module_set_level(MOD, 4), 0);
	assert_int_equal(pk_module_get_level(MOD), 4);

	uint64_t seq = next_seq();

	every_level();
	/* emerg, alert, crit, err: below 4. */
	assert_int_equal(next_seq(), seq + 4);
	assert_int_equal(evaluated, 4);
	read_at(seq + 3);
	assert_string_equal(rec.text, "err 4");
	assert_int_equal(rec.level, 3);

	/* printk() is a site too: its header, or the default level (4). */
	seq = next_seq();
	assert_int_equal(printk(KERN_INFO "printk info\n"), 0);
	assert_int_equal(printk("printk default\n"), 0);
	assert_int_equal(printk(KERN_ERR "printk err\n"), (int)strlen("printk err"));
	assert_int_equal(next_seq(), seq + 1);
	pk_set_default_message_loglevel(3);
	assert_true(printk("printk default at 3\n") > 0);
	pk_set_default_message_loglevel(4);
	assert_int_equal(next_seq(), seq + 2);

	/* Level 0 stores nothing, 8 everything. */
	assert_int_equal(pk_module_set_level(MOD, 0), 0);
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_module_set_level(MOD, 8), 0);
	every_level();
	assert_int_equal(next_seq(), seq + 7);

	/* Cleared: back to storing everything. */
	assert_int_equal(pk_module_set_level(MOD, 1), 0);
	assert_int_equal(pk_module_set_level(MOD, -1), 0);
	assert_int_equal(pk_module_get_level(MOD), -ENOENT);
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq + 7);
}

static void test_other_module_untouched(void **state)
{
	(void)state;
	assert_int_equal(pk_module_set_level("netd", 0), 0);
	assert_int_equal(pk_module_set_level("test_module_levelsx", 0), 0);

	uint64_t seq = next_seq();

	every_level();
	assert_int_equal(next_seq(), seq + 7);
}

static void test_patterns(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(pk_module_set_level("test_*", 2), 0);
	every_level();
	assert_int_equal(next_seq(), seq + 2);
	/* The last level set that matches applies. */
	assert_int_equal(pk_module_set_level("test_module_?evels", 5), 0);
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq + 5);
	assert_int_equal(pk_module_set_level("test_*", 1), 0); /* set again: now last */
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq + 1);
	pk_module_clear_levels();
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq + 7);
}

static void test_ignore_loglevel(void **state)
{
	(void)state;
	assert_int_equal(pk_module_set_level(MOD, 0), 0);
	pk_set_ignore_loglevel(1);

	uint64_t seq = next_seq();

	every_level();
	assert_int_equal(next_seq(), seq + 7);
	pk_set_ignore_loglevel(0);
	seq = next_seq();
	every_level();
	assert_int_equal(next_seq(), seq);
}

static void debug_site(void)
{
	pr_debug("debug site %d\n", 1);
}

static void test_debug_and_cont(void **state)
{
	(void)state;
	assert_int_equal(pk_module_set_level(MOD, 0), 0);

	uint64_t seq = next_seq();

	/* Dynamic debug decides pr_debug alone. */
	debug_site();
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_dyndbg_query("func debug_site +p"), 1);
	debug_site();
	assert_int_equal(next_seq(), seq + 1);
	read_at(seq);
	assert_string_equal(rec.text, "debug site 1");

	/* A continuation goes with its line: stored with a line stored ... */
	assert_int_equal(pk_module_set_level(MOD, 4), 0);
	pr_err("a ");
	pr_cont("b\n");
	assert_int_equal(next_seq(), seq + 2);
	read_at(seq + 1);
	assert_string_equal(rec.text, "a b");
	/* ... held back with a line held back, to the fragment that ends it. */
	pr_info("held ");
	pr_cont("c1 ");
	pr_cont("c2\n");
	pr_cont("c3\n"); /* after the end: a line of its own, as ever */
	assert_int_equal(next_seq(), seq + 3);
	read_at(seq + 2);
	assert_string_equal(rec.text, "c3");
	/* A line held back and left open, then one stored: the stored one
	 * starts afresh and its continuations join it. */
	pr_info("held again ");
	pr_err("d ");
	pr_cont("e\n");
	assert_int_equal(next_seq(), seq + 4);
	read_at(seq + 3);
	assert_string_equal(rec.text, "d e");
	/* A format that is not a literal: the library looks at its end. */
	const char *open_fmt = KERN_INFO "open %d ";

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	printk(open_fmt, 1);
#pragma GCC diagnostic pop
	pr_cont("f\n");
	assert_int_equal(next_seq(), seq + 4);
}

static void test_api_errors(void **state)
{
	(void)state;
	char name[PK_MODULE_NAME_MAX + 1];

	assert_int_equal(pk_module_set_level(NULL, 1), -EINVAL);
	assert_int_equal(pk_module_set_level("", 1), -EINVAL);
	assert_int_equal(pk_module_set_level("a b", 1), -EINVAL);
	assert_int_equal(pk_module_set_level("a:b", 1), -EINVAL);
	assert_int_equal(pk_module_set_level("a", 16), -EINVAL);
	assert_int_equal(pk_module_set_level("a", -2), -EINVAL);
	memset(name, 'x', PK_MODULE_NAME_MAX);
	name[PK_MODULE_NAME_MAX] = '\0';
	assert_int_equal(pk_module_set_level(name, 1), -EINVAL);
	name[PK_MODULE_NAME_MAX - 1] = '\0';
	assert_int_equal(pk_module_set_level(name, 1), 0);
	assert_int_equal(pk_module_get_level(name), 1);
	assert_int_equal(pk_module_get_level(NULL), -EINVAL);
	/* Clearing a module without a level: nothing to do. */
	assert_int_equal(pk_module_set_level("never", -1), 0);
	for (int i = 1; i < PK_MODULE_LEVELS_MAX; i++) {
		char m[16];

		snprintf(m, sizeof(m), "m%d", i);
		assert_int_equal(pk_module_set_level(m, i % 16), 0);
	}
	assert_int_equal(pk_module_set_level("one-too-many", 3), -ENOSPC);
	assert_int_equal(pk_module_set_level("m3", 7), 0); /* a change takes no room */
	assert_int_equal(pk_module_get_level("m3"), 7);
}

static void test_printk_opts(void **state)
{
	(void)state;
	assert_int_equal(pk_printk_configure("printk.module=" MOD ":err,netd:4,db:debug"), 0);
	assert_int_equal(pk_module_get_level(MOD), 4);
	assert_int_equal(pk_module_get_level("netd"), 4);
	assert_int_equal(pk_module_get_level("db"), 8);

	uint64_t seq = next_seq();

	every_level();
	assert_int_equal(next_seq(), seq + 4);
	assert_int_equal(pk_printk_configure("printk.module=" MOD ":default"), 0);
	assert_int_equal(pk_module_get_level(MOD), -ENOENT);

	/* A bad value: one warning naming the option, nothing applied. */
	seq = next_seq();
	assert_int_equal(pk_printk_configure("printk.module=db:3,netd:x"), -EINVAL);
	assert_int_equal(next_seq(), seq + 1);
	read_at(seq);
	assert_string_equal(rec.text, "printk: PRINTK_OPTS: bad value in 'printk.module=db:3,netd:x', ignored");
	assert_int_equal(rec.level, 4);
	assert_int_equal(pk_module_get_level("db"), 8);
	assert_int_equal(pk_module_get_level("netd"), 4);
	seq = next_seq();
	assert_int_equal(pk_printk_configure("printk.srcloc=2"), -EINVAL);
	assert_int_equal(next_seq(), seq + 1);
	read_at(seq);
	assert_string_equal(rec.text, "printk: PRINTK_OPTS: bad value in 'printk.srcloc=2', ignored");
	assert_int_equal(pk_get_printk_srcloc(), 0);
}

static void test_query(void **state)
{
	(void)state;
	assert_int_equal(pk_dyndbg_query("module " MOD " level 3"), 1);
	assert_int_equal(pk_module_get_level(MOD), 3);

	uint64_t seq = next_seq();

	every_level();
	assert_int_equal(next_seq(), seq + 3);
	assert_int_equal(pk_dyndbg_query("module " MOD " level notice; module netd level 0"), 2);
	assert_int_equal(pk_module_get_level(MOD), 6);
	assert_int_equal(pk_module_get_level("netd"), 0);
	assert_int_equal(pk_dyndbg_query("module " MOD " level default"), 1);
	assert_int_equal(pk_module_get_level(MOD), -ENOENT);

	/* Errors, with the kernel's "dyndbg: " prefix, at KERN_ERR. */
	seq = next_seq();
	assert_int_equal(pk_dyndbg_query("module " MOD " level bogus"), -EINVAL);
	assert_int_equal(pk_dyndbg_query("func f level 3"), -EINVAL);
	assert_int_equal(next_seq(), seq + 2);
	read_at(seq);
	assert_string_equal(rec.text, "dyndbg: bad level: bogus (0..15, emerg..debug or default)");
	assert_int_equal(rec.level, 3);
	read_at(seq + 1);
	assert_string_equal(rec.text, "dyndbg: level goes with one module: \"module NAME level LEVEL\"");
	assert_int_equal(pk_module_get_level(MOD), -ENOENT);
	/* In PRINTK_OPTS dyndbg=, the same language. */
	assert_int_equal(pk_printk_configure("dyndbg=\"module " MOD " level 2\""), 0);
	assert_int_equal(pk_module_get_level(MOD), 2);
}

/* ---- another process sets a level through the log file ---- */

static int count_info(void)
{
	uint64_t seq = next_seq();

	pr_info("info\n");
	pr_warn("warn\n");
	pr_err("err\n");
	return (int)(next_seq() - seq);
}

static int remote_child(void *arg)
{
	const char *how = arg;
	const char *path = test_dir_path("levels.log");
	char out[512];

	pk_printk_exit();
	pk_module_clear_levels();
	if (pk_set_log_buf_file(path, 0))
		return 10;
	pk_printk(KERN_INFO "started\n"); /* the first look at the log */
	if (count_info() != 3)
		return 11;

	pid_t pid = fork();

	if (pid == 0) {
		struct pk_log *log;

		if (!strcmp(how, "udmesg")) {
#ifdef UDMESG
			if (run_udmesg(path, NULL, 0, "--dyndbg", "module " MOD " level bogus") != 1)
				_exit(24);
			_exit(run_udmesg(path, NULL, 0, "--dyndbg", "module " MOD " level 4"));
#endif
			_exit(99);
		}
		if (pk_log_open_control(&log, path))
			_exit(20);
		if (pk_dyndbg_post(log, "module " MOD " level bogus") != -EINVAL)
			_exit(21);
		if (pk_dyndbg_post(log, "module " MOD " level 4 x") != -EINVAL)
			_exit(23);
		_exit(pk_dyndbg_post(log, "module " MOD " level 4") ? 22 : 0);
	}
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 12;
	if (WEXITSTATUS(status))
		return WEXITSTATUS(status);
	if (pk_module_get_level(MOD) != -ENOENT)
		return 13; /* nothing looked yet */
	/* The next printk looks and applies: the message after it is the
	 * first the level holds back. */
	uint64_t seq = next_seq();

	pk_printk(KERN_WARNING "poke\n");
	if (next_seq() != seq + 1 || pk_module_get_level(MOD) != 4)
		return 14;
	if (count_info() != 1)
		return 15;
#ifdef UDMESG
	if (run_udmesg(path, out, sizeof(out), "--module-levels", NULL) != 0)
		return 16;
	if (strcmp(out, MOD " 4\n"))
		return 17;
	pk_module_set_level("netd", 0);
	if (run_udmesg(path, out, sizeof(out), "--module-levels", NULL) != 0 ||
	    strcmp(out, MOD " 4\nnetd 0\n"))
		return 18;
	pk_module_clear_levels();
	if (run_udmesg(path, out, sizeof(out), "--module-levels", NULL) != 0 || strcmp(out, ""))
		return 19;
	/* printk.srcloc's entries, shown on request as any dictionary. */
	pk_set_printk_srcloc(1);
	int line = __LINE__ + 1;
	pr_err("located\n");
	pk_set_printk_srcloc(0);

	char want[512], big[8192];

	snprintf(want, sizeof(want), "located\nCODE_FILE=%s\nCODE_LINE=%d\nCODE_FUNC=remote_child\n",
		 __FILE__, line);
	if (run_udmesg(path, big, sizeof(big), "--dictionary", "--notime") != 0)
		return 30;
	if (strlen(big) < strlen(want) || strcmp(big + strlen(big) - strlen(want), want)) {
		fprintf(stderr, "udmesg --dictionary:\n%s\nwanted at its end:\n%s", big, want);
		return 31;
	}
#else
	(void)out;
#endif
	pk_printk_exit();
	return 0;
}

static void test_remote_post(void **state)
{
	(void)state;
	run_remote("levels", remote_child, "post");
}

static void test_remote_udmesg(void **state)
{
	(void)state;
#ifdef UDMESG
	run_remote("levels", remote_child, "udmesg");
#else
	fail_msg("built without udmesg: --dyndbg and --module-levels untested");
#endif
}

/* ---- printk.srcloc ---- */

static int srcloc_line;

static void srcloc_site(void)
{
	srcloc_line = __LINE__ + 1;
	pr_info("hello %d\n", 5);
}

static void test_srcloc(void **state)
{
	(void)state;
	char want[1024], out[PK_LOG_JSON_MAX + 1];
	uint64_t seq = next_seq();

	/* Off: no dictionary. */
	srcloc_site();
	read_at(seq);
	assert_int_equal(rec.dict_len, 0);

	assert_int_equal(pk_set_printk_srcloc(1), 0);
	assert_int_equal(pk_get_printk_srcloc(), 1);
	srcloc_site();
	read_at(seq + 1);
	assert_string_equal(rec.text, "hello 5");
	assert_int_equal(rec.level, 6);

	int n = snprintf(want, sizeof(want), "CODE_FILE=%s%cCODE_LINE=%d%cCODE_FUNC=srcloc_site", __FILE__, 0,
			 srcloc_line, 0);

	assert_int_equal(rec.dict_len, n);
	assert_memory_equal(rec.dict, want, (size_t)n);

	/* /dev/kmsg's form: one " KEY=VALUE" line per entry. */
	snprintf(want, sizeof(want), "6,%llu,%llu,-;hello 5\n CODE_FILE=%s\n CODE_LINE=%d\n CODE_FUNC=srcloc_site\n",
		 (unsigned long long)rec.seq, (unsigned long long)(rec.ts_nsec / 1000), __FILE__, srcloc_line);
	out[pk_log_kmsg_format(&rec, out)] = '\0'; /* it returns the length, unterminated */
	assert_string_equal(out, want);

	/* The JSON line (the ,json consoles' formatter): journald's names. */
	size_t jl = pk_log_json_format(&rec, "app", 0, out);

	out[jl] = '\0';
	snprintf(want, sizeof(want), "\"CODE_FILE\":\"%s\",\"CODE_LINE\":\"%d\",\"CODE_FUNC\":\"srcloc_site\"}\n",
		 __FILE__, srcloc_line);
	assert_true(strlen(out) > strlen(want));
	assert_string_equal(out + strlen(out) - strlen(want), want);

	/* The journald console's payload: journald's own CODE_* fields, as
	 * systemd's sd_journal_print() sends them. */
	size_t jn = pk_net_format_journal(out, sizeof(out), &rec, "app", 0);

	out[jn] = '\0';
	snprintf(want, sizeof(want), "\nCODE_FILE=%s\nCODE_LINE=%d\nCODE_FUNC=srcloc_site\n", __FILE__,
		 srcloc_line);
	assert_true(jn > strlen(want));
	assert_string_equal(out + jn - strlen(want), want);

	/* A level still applies first; printk() sites carry it too. */
	assert_int_equal(pk_module_set_level(MOD, 6), 0);
	srcloc_site();
	assert_int_equal(next_seq(), seq + 2);
	assert_int_equal(pk_module_set_level(MOD, -1), 0);
	printk(KERN_NOTICE "from printk\n");
	read_at(seq + 2);
	assert_string_equal(rec.text, "from printk");
	assert_non_null(memmem(rec.dict, rec.dict_len, "CODE_FUNC=test_srcloc", 21));

	/* A level no console prints: formatted at once all the same (a
	 * deferred record has no dictionary), the entries with it. */
	int was = pk_set_console_loglevel(1);
	uint64_t deferred = pk_printk_deferred_here();

	srcloc_site();
	assert_int_equal(pk_printk_deferred_here(), deferred);
	pk_set_console_loglevel(was);
	read_at(seq + 3);
	assert_string_equal(rec.text, "hello 5");
	assert_int_equal(rec.dict_len, n);
	snprintf(want, sizeof(want), "CODE_FILE=%s%cCODE_LINE=%d%cCODE_FUNC=srcloc_site", __FILE__, 0, srcloc_line, 0);
	assert_memory_equal(rec.dict, want, (size_t)n);
	seq++;

	/* Off again: no dictionary. */
	assert_int_equal(pk_set_printk_srcloc(0), 1);
	srcloc_site();
	read_at(seq + 3);
	assert_int_equal(rec.dict_len, 0);

	/* PRINTK_OPTS printk.srcloc=1. */
	assert_int_equal(pk_printk_configure("printk.srcloc=1"), 0);
	srcloc_site();
	read_at(seq + 4);
	assert_int_equal(rec.dict_len, n);
}

/* ---- levels changing while other threads print ---- */

#define RACE_ROUNDS 2000

static atomic_int race_done;

static void *race_setter(void *arg)
{
	(void)arg;
	for (int i = 0; i < RACE_ROUNDS; i++) {
		pk_module_set_level(MOD, i & 1 ? -1 : 0);
		pk_set_printk_srcloc(i & 2);
		if (pk_module_set_level("other*", i % 9))
			break;
	}
	atomic_store(&race_done, 1);
	return NULL;
}

static void *race_printer(void *arg)
{
	long *stored = arg;

	while (!atomic_load(&race_done))
		*stored += pr_err("race\n") > 0;
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t setter, printer;
	long stored = 0;
	uint64_t seq = next_seq();

	pk_set_console_loglevel(0); /* stored, not printed: the ring's pace */
	atomic_store(&race_done, 0);
	assert_int_equal(pthread_create(&printer, NULL, race_printer, &stored), 0);
	assert_int_equal(pthread_create(&setter, NULL, race_setter, NULL), 0);
	pthread_join(setter, NULL);
	pthread_join(printer, NULL);
	/* Every call the printer saw stored is a record, none else. */
	assert_int_equal(next_seq() - seq, (uint64_t)stored);
	assert_int_equal(pk_module_get_level(MOD), -ENOENT); /* the last round cleared it */
	pk_set_console_loglevel(7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_level_stores_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_level_suppresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_module_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ignore_loglevel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_debug_and_cont, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printk_opts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_udmesg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_srcloc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
