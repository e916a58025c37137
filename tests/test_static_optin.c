// SPDX-License-Identifier: MIT
/*
 * test_static_optin - what a program linked statically against libprintk.a
 * that calls only pr_info() gets (tests/tools/static-printk.c):
 *
 *   - without pk_printk_link_all_options(): neither /dev/kmsg, nor dynamic
 *     debug, nor the forwarding consoles are in the binary; PRINTK_OPTS
 *     naming them warns once per feature, one line naming the option, and
 *     the rest of PRINTK_OPTS and the line printed work as before; a later
 *     pk_printk_configure() naming them again says nothing more;
 *   - with it: all three are in the binary and the same PRINTK_OPTS gives
 *     no such warning;
 *   - the same program linked against libprintk.so, without the opt-in:
 *     no such warning either (the shared library has every feature);
 *   - a static program that configures but never prints (no printk in it):
 *     a bad option still leaves its warning record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define OPTS                                                                   \
	"printk.time=0 console=stderr console=syslog:udp:127.0.0.1:9 "         \
	"printk.devkmsg=off dyndbg=\"file nosuch.c +p\""

#define NOT_LINKED " not linked into this program (see pk_printk_link_all_options()), ignored\n"
#define W_FWD	   "printk: PRINTK_OPTS: console=syslog: the forwarding consoles" NOT_LINKED
#define W_KMSG	   "printk: PRINTK_OPTS: printk.devkmsg: /dev/kmsg" NOT_LINKED
#define W_DYNDBG   "printk: PRINTK_OPTS: dyndbg: dynamic debug" NOT_LINKED
#define HELLO "hello from a static program\n"

struct run {
	const char *prog;
	const char *configure; /* argument: pk_printk_configure() it, or NULL */
};

static int exec_prog(void *arg)
{
	const struct run *r = arg;

	setenv("PRINTK_OPTS", OPTS, 1);
	if (r->configure)
		execl(r->prog, r->prog, r->configure, (char *)NULL);
	else
		execl(r->prog, r->prog, (char *)NULL);
	return 127;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* 1 if @sym is defined in @prog (nm). */
static int has_symbol(const char *prog, const char *sym)
{
	char cmd[1024], line[512];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "nm '%s'", prog);
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';

		char *name = strrchr(line, ' ');

		/* "ADDRESS TYPE NAME"; an undefined one ("U NAME") does not count */
		if (name && !strcmp(name + 1, sym) && name - line >= 2 && name[-1] != 'U')
			found = 1;
	}
	assert_int_equal(pclose(f), 0);
	return found;
}

static const char *const features[] = { "pk_set_devkmsg", "pk_dyndbg_boot",
					"pk_console_journal_create", "pk_console_syslog_create" };

static void test_plain_links_no_feature(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (has_symbol(STATIC_PRINTK_PLAIN, features[i]))
			fail_msg("%s is in the program that calls only pr_info()", features[i]);
	assert_true(has_symbol(STATIC_PRINTK_PLAIN, "pk_printk_configure")); /* start-up is */
}

static void test_plain_warns_once(void **state)
{
	struct run r = { STATIC_PRINTK_PLAIN, OPTS };
	struct child_result res;

	(void)state;
	run_child_ok(exec_prog, &r, 30000, &res);
	/* Start-up: one line per feature; the line printed; then
	 * pk_printk_configure() with the same options says nothing more. */
	assert_int_equal(count(res.out, W_FWD), 1);
	assert_int_equal(count(res.out, W_KMSG), 1);
	assert_int_equal(count(res.out, W_DYNDBG), 1);
	assert_int_equal(count(res.out, "not linked"), 3);
	assert_int_equal(count(res.out, "\n" HELLO) + !strncmp(res.out, HELLO, strlen(HELLO)), 1);
	char want[64];

	snprintf(want, sizeof(want), "configure: %d\n", -ENOSYS);
	assert_int_equal(count(res.out, want), 1);
	/* Nothing else: the three warnings, the line, the result. */
	assert_int_equal(count(res.out, "\n"), 5);
	child_result_free(&res);
}

static void test_optin_links_every_feature(void **state)
{
	struct run r = { STATIC_PRINTK_OPTIN, NULL };
	struct child_result res;

	(void)state;
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (!has_symbol(STATIC_PRINTK_OPTIN, features[i]))
			fail_msg("%s is not in the program that calls pk_printk_link_all_options()",
				 features[i]);
	run_child_ok(exec_prog, &r, 30000, &res);
	assert_int_equal(count(res.out, "not linked"), 0);
	assert_int_equal(count(res.out, HELLO), 1);
	child_result_free(&res);
}

static void test_shared_has_every_feature(void **state)
{
	struct run r = { SHARED_PRINTK, OPTS };
	struct child_result res;
	char want[64];

	(void)state;
	run_child_ok(exec_prog, &r, 30000, &res);
	assert_int_equal(count(res.out, "not linked"), 0);
	assert_int_equal(count(res.out, HELLO), 1);
	snprintf(want, sizeof(want), "configure: %d\n", 0);
	assert_int_equal(count(res.out, want), 1);
	child_result_free(&res);
}

static int exec_configure(void *arg)
{
	(void)arg;
	unsetenv("PRINTK_OPTS");
	execl(STATIC_CONFIGURE, STATIC_CONFIGURE, "frobnicate loglevel=4", (char *)NULL);
	return 127;
}

static void test_configure_without_printk(void **state)
{
	struct child_result res;
	char want[64];

	(void)state;
	assert_false(has_symbol(STATIC_CONFIGURE, "pk_printk"));
	run_child_ok(exec_configure, NULL, 30000, &res);
	assert_int_equal(count(res.out, "printk: PRINTK_OPTS: unknown option 'frobnicate', "
					"ignored\n"),
			 1);
	snprintf(want, sizeof(want), "configure: %d\n", -EINVAL);
	assert_int_equal(count(res.out, want), 1);
	child_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_links_no_feature),
		cmocka_unit_test(test_plain_warns_once),
		cmocka_unit_test(test_optin_links_every_feature),
		cmocka_unit_test(test_shared_has_every_feature),
		cmocka_unit_test(test_configure_without_printk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
