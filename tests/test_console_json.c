// SPDX-License-Identifier: MIT
/*
 * test_console_json.c - console=...,json as a user gives it: PRINTK_OPTS
 * syntax (its warnings for a bad use), a process that logs hostile text
 * (control bytes, invalid UTF-8, surrogates, overlong forms, quotes,
 * a terminal escape) and device dictionaries to a file console, every line
 * checked with jq and Python's json (the bytes decoded back must be the
 * bytes logged), and udmesg --journal-json on the same log printing the
 * same bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <printk/console.h>
#include <printk/dev_printk.h>
#include <printk/printk.h>

#include "log/options.h"
#include "testutil.h"

static void test_option_parses(void **state)
{
	static struct pk_opts o;
	static const char *const bad[] = {
		"console=journal,json",
		"console=syslog:udp:h:514,json",
		"console=none,json",
		"console=-file0,json",
		"console=fd:1,json,extended",
		"console=fd:1,extended,json",
	};

	(void)state;
	assert_int_equal(pk_opts_parse("console=file:/x,json console=fd:1,threaded,json,name=j console=stderr,json", &o),
			 0);
	assert_int_equal(o.nconsoles, 3);
	assert_string_equal(o.consoles[0].path, "/x");
	assert_int_equal(o.consoles[0].json, 1);
	assert_int_equal(o.consoles[1].json, 1);
	assert_int_equal(o.consoles[1].flags, PK_CON_THREADED);
	assert_string_equal(o.consoles[1].name, "j");
	assert_int_equal(o.consoles[2].kind, PK_OPTCON_STDERR);
	assert_int_equal(o.consoles[2].json, 1);
	assert_int_equal(pk_opts_parse("console=fd:1", &o), 0);
	assert_int_equal(o.consoles[0].json, 0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *takes = strstr(bad[i], "extended") ? "not with ,extended"
							       : "for stderr, fd: and file: consoles only";
		char want[256];

		print_message("%s\n", bad[i]);
		assert_true(pk_opts_parse(bad[i], &o) < 0);
		assert_int_equal(o.nconsoles, 0);
		assert_int_equal(o.nwarnings, 1);
		snprintf(want, sizeof(want), "printk: PRINTK_OPTS: bad console option 'json' (%s), console ignored",
			 takes);
		assert_string_equal(o.warnings[0], want);
	}
}

/* What the child logs: each text and the bytes a reader must get back. */
static const struct {
	const char *text;
	size_t len;
} hostile[] = {
#define T(s) { s, sizeof(s) - 1 }
	T("plain line"),
	T("quote \" backslash \\ slash / tab\tend"),
	T("bell \a escape \x1b[31mred\x1b[0m del \x7f"),
	T("invalid \xff\xfe utf-8 \xc3"),
	T("surrogate \xed\xa0\x80 lone"),
	T("overlong \xc0\xaf \xe0\x80\xaf"),
	T("c1 \xc2\x85 and \xef\xbf\xbe nonchar"),
	T("utf-8 gr\xc3\xbc\xc3\x9f \xf0\x9f\x98\x80"),
	T("two\nlines"),
#undef T
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static char log_path[512], out_path[512], want_path[512];

static int hostile_child(void *arg)
{
	char opts[600];

	CHILD_CHECK(pk_set_log_buf_file(log_path, 0) == 0);
	snprintf(opts, sizeof(opts), "console=file:%s,json%s loglevel=8", out_path, (const char *)arg);
	CHILD_CHECK(pk_printk_configure(opts) == 0);
	for (size_t i = 0; i < NHOSTILE; i++)
		CHILD_CHECK(printk(KERN_INFO "%.*s\n", (int)hostile[i].len, hostile[i].text) > 0);

	struct device dev = { .name = "we\"ird\x01\xff", .driver = "drv", .subsystem = "sub\\sys" };

	dev_err(&dev, "device %d\n", 7);
	CHILD_CHECK(pr_flush(10000, 0));
	return 0;
}

static void write_wanted(void)
{
	FILE *f = fopen(want_path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < NHOSTILE; i++) {
		for (size_t j = 0; j < hostile[i].len; j++)
			fprintf(f, "%02x", (unsigned char)hostile[i].text[j]);
		fputc('\n', f);
	}
	fclose(f);
}

/* Python's json on each line: every line an object, MESSAGE decoding back
 * to the bytes logged (a string as UTF-8, an array as bytes), the device
 * record's dictionary fields as dev_printk gave them. */
static const char py_check[] =
	"import json, sys\n"
	"want = [bytes.fromhex(l.strip()) for l in open(sys.argv[2])]\n"
	"def raw(v):\n"
	"    return bytes(v) if isinstance(v, list) else v.encode('utf-8')\n"
	"lines = open(sys.argv[1], 'rb').read().split(b'\\n')\n"
	"assert lines[-1] == b'', 'no newline at the end'\n"
	"objs = [json.loads(l.decode('utf-8', 'strict')) for l in lines[:-1]]\n"
	"msgs = [o for o in objs if o['PRIORITY'] == '6']\n"
	"assert [raw(o['MESSAGE']) for o in msgs] == want, [o['MESSAGE'] for o in msgs]\n"
	"d = [o for o in objs if o['PRIORITY'] == '3']\n"
	"assert len(d) == 1, d\n"
	"assert raw(d[0]['MESSAGE']) == b'drv we\"ird\\x01\\xff: device 7', d[0]\n"
	"assert d[0]['SUBSYSTEM'] == 'sub\\\\sys' and raw(d[0]['DEVICE']) == b'+sub\\\\sys:we\"ird\\x01\\xff', d[0]\n"
	"for o in objs:\n"
	"    for k in ('__REALTIME_TIMESTAMP', '__MONOTONIC_TIMESTAMP', 'SYSLOG_FACILITY', '_PID', 'TID', 'PRINTK_SEQ'):\n"
	"        assert o[k].isdigit(), (k, o)\n"
	"    assert o['SYSLOG_IDENTIFIER'] == 'test_console_js', o\n"
	"print('python ok', len(objs))\n";

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* @variant: more options after ,json. */
static void check_hostile_records(const char *variant)
{
	struct child_result res;
	char cmd[2048], py_path[512];
	const char *bin = getenv("PRINTK_TEST_BUILD_DIR");

	if (run("command -v jq >/dev/null") != 0)
		fail_msg("jq is not installed (scripts/setup.sh installs it): the JSON lines cannot be checked");
	if (run("command -v python3 >/dev/null") != 0)
		fail_msg("python3 is not installed (scripts/setup.sh installs it)");
	assert_int_equal(test_dir_make("pk_console_json"), 0);
	snprintf(log_path, sizeof(log_path), "%s", test_dir_path("log"));
	snprintf(out_path, sizeof(out_path), "%s", test_dir_path("out.json"));
	snprintf(want_path, sizeof(want_path), "%s", test_dir_path("want.hex"));
	snprintf(py_path, sizeof(py_path), "%s", test_dir_path("check.py"));
	write_wanted();
	FILE *f = fopen(py_path, "w");

	assert_non_null(f);
	fputs(py_check, f);
	fclose(f);

	print_message("console=file:PATH,json%s\n", variant);
	run_child_ok(hostile_child, (void *)variant, 30000, &res);
	child_result_free(&res);

	/* jq: the whole file is a stream of objects, one per record (the
	 * stores the configure call itself makes are records too). */
	snprintf(cmd, sizeof(cmd), "jq -e 'type == \"object\"' '%s' | sort -u | grep -qx true && "
		 "test \"$(jq -c . '%s' | wc -l)\" = \"$(wc -l < '%s')\"", out_path, out_path, out_path);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s'", py_path, out_path, want_path);
	assert_int_equal(run(cmd), 0);

	/* udmesg on the log: the same bytes as the console wrote. */
	if (bin) {
		size_t n, m;
		char *a, *b;

		snprintf(cmd, sizeof(cmd), "'%s/tools/udmesg' -B '%s' --journal-json > '%s.udmesg'", bin, log_path,
			 out_path);
		assert_int_equal(run(cmd), 0);
		a = test_slurp(out_path, &n);
		assert_non_null(a);
		snprintf(cmd, sizeof(cmd), "%s.udmesg", out_path);
		b = test_slurp(cmd, &m);
		assert_non_null(b);
		assert_int_equal(n, m);
		assert_memory_equal(a, b, n);
		free(a);
		free(b);
	}
	test_dir_remove();
}

/* Printed by the caller, by a printer thread, and by a lossless one. */
static void test_hostile_records(void **state)
{
	(void)state;
	check_hostile_records("");
	check_hostile_records(",threaded");
	check_hostile_records(",lossless");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_parses),
		cmocka_unit_test(test_hostile_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
