// SPDX-License-Identifier: MIT
/*
 * test_console_create.c - pk_console_create() and the table of console
 * kinds (src/console/console_kinds.c):
 *   - every kind from a spec (stderr, fd, file, journal, syslog over each
 *     transport), with its options applied: name, flags, rotation, format,
 *     framing, BOM, enterprise number; ,loglevel= and ,time= on
 *     registration;
 *   - bad specs, with their exact error codes, and the one printk warning
 *     an option that names itself gives (nothing else is written);
 *   - a kind registered with only write and release: made, named, flagged,
 *     and always released by pk_console_destroy() (its release counted),
 *     as is any console with a release (the old destroy freed only the
 *     library's own);
 *   - a registered fd console from a spec printing exact bytes;
 *   - a syslog spec's options on the wire (a UDP datagram: enterprise
 *     number, no BOM, RFC 5424).
 * Tests that print or warn run in child processes, their output captured.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/printk.h>

#include "console/console_kinds.h"
#include "forward/console_net.h"
#include "testutil.h"

/* ----------------------------------------------- a kind of the test's -- */

static int released, written;
static char last_text[256];

static void counted_write(struct console *con, const char *text, unsigned len)
{
	(void)con;
	written++;
	snprintf(last_text, sizeof(last_text), "%.*s", (int)len, text);
}

static void counted_release(struct console *con)
{
	released++;
	free(con);
}

/* "counted[:ARG]": a console with only write and release. */
static int counted_create(struct console **conp, const struct pk_opts_console *c)
{
	struct console *con = calloc(1, sizeof(*con));

	if (!con)
		return -ENOMEM;
	snprintf(con->name, sizeof(con->name), "counted");
	con->write = counted_write;
	con->flags = PK_CON_ENABLED;
	if (c->path[0] == 'x') {
		free(con);
		return -EIO; /* the kind's own error, passed on */
	}
	*conp = con;
	return 0;
}

static const struct pk_console_kind kind_counted = {
	.name = "counted", .id = PK_OPTCON_OTHER, .flags = PK_KIND_ARG | PK_KIND_ARG_OPTIONAL,
	.create = counted_create, .release = counted_release,
};

static void test_counted_kind_released(void **state)
{
	struct console *con = NULL;

	(void)state;
	released = 0;
	assert_int_equal(pk_console_create(&con, "counted"), 0);
	assert_non_null(con);
	assert_ptr_equal(con->release, counted_release); /* the row's */
	assert_string_equal(con->name, "counted");
	pk_console_destroy(con);
	assert_int_equal(released, 1);

	/* the options every kind takes */
	assert_int_equal(pk_console_create(&con, "counted:arg,threaded,name=cnt"), 0);
	assert_string_equal(con->name, "cnt");
	assert_int_equal(con->flags, PK_CON_ENABLED | PK_CON_THREADED);
	pk_console_destroy(con);
	assert_int_equal(released, 2);

	/* the kind's error, and nothing to release */
	con = (struct console *)&con;
	assert_int_equal(pk_console_create(&con, "counted:x"), -EIO);
	assert_null(con);
	assert_int_equal(released, 2);

	/* registered, printing, unregistered, released */
	written = 0;
	assert_int_equal(pk_console_create(&con, "counted"), 0);
	assert_int_equal(pk_register_console(con), 0);
	printk(KERN_ERR "to the counted console\n");
	assert_int_equal(pk_unregister_console(con), 0);
	assert_true(written >= 1);
	assert_non_null(strstr(last_text, "to the counted console\n"));
	pk_console_destroy(con);
	assert_int_equal(released, 3);

	/* a console the program made, with write and release: its release too */
	con = calloc(1, sizeof(*con));
	assert_non_null(con);
	con->write = counted_write;
	con->release = counted_release;
	pk_console_destroy(con);
	assert_int_equal(released, 4);

	/* a second row of that name is refused */
	assert_int_equal(pk_console_kind_register(&kind_counted), -EEXIST);
}

/* ------------------------------------------------------- every kind -- */

static void test_every_kind(void **state)
{
	struct console *con = NULL;
	int p[2];
	char spec[PATH_MAX + 64], name[16];

	(void)state;
	assert_int_equal(pk_console_create(&con, "stderr"), 0);
	assert_ptr_equal(con, pk_console_stderr());
	pk_console_destroy(con); /* nothing: the built-in console */

	assert_int_equal(pipe(p), 0);
	snprintf(spec, sizeof(spec), "fd:%d", p[1]);
	assert_int_equal(pk_console_create(&con, spec), 0);
	snprintf(name, sizeof(name), "fd%d", p[1]);
	assert_string_equal(con->name, name);
	assert_non_null(con->write_checked);
	assert_null(con->write_record);
	pk_console_destroy(con);
	assert_int_equal(fcntl(p[1], F_GETFD) >= 0, 1); /* not owned: still open */

	snprintf(spec, sizeof(spec), "fd:%d,json,lossless,name=j", p[1]);
	assert_int_equal(pk_console_create(&con, spec), 0);
	assert_string_equal(con->name, "j");
	assert_non_null(con->write_record); /* JSON lines take records */
	assert_true(con->flags & PK_CON_LOSSLESS);
	pk_console_destroy(con);
	close(p[0]);
	close(p[1]);

	assert_int_equal(test_dir_make("console-create"), 0);
	snprintf(spec, sizeof(spec), "file:%s,size=1M,keep=2,extended", test_dir_path("a,b.log"));
	assert_int_equal(pk_console_create(&con, spec), 0);
	assert_int_equal(strncmp(con->name, "file", 4), 0);
	assert_true(con->flags & PK_CON_EXTENDED);
	assert_non_null(con->reopen);
	struct stat st;

	assert_int_equal(stat(test_dir_path("a,b.log"), &st), 0);
	pk_console_destroy(con);

	struct pk_console_stats cs;

	assert_int_equal(pk_console_create(&con, "journal"), 0);
	assert_true(pk_console_net_owns(con));
	assert_string_equal(con->name, "journal");
	assert_int_equal(pk_console_syslog_set_bom(con, 0), -EINVAL); /* a journal console */
	pk_console_destroy(con);
	snprintf(spec, sizeof(spec), "journal:%s", test_dir_path("j.sock"));
	assert_int_equal(pk_console_create(&con, spec), 0);
	assert_int_equal(pk_console_stats(con, &cs), 0);
	assert_int_equal(cs.state, PK_CONSOLE_IDLE);
	pk_console_destroy(con);

	static const char *const syslogs[] = {
		"syslog:unix:/dev/log",
		"syslog:udp:127.0.0.1:514,rfc3164",
		"syslog:tcp:127.0.0.1:601,rfc3164,threaded",
		"syslog:tcp:[::1]:601,framing=lf,bom=no,enterprise=7,rfc5424",
	};

	for (size_t i = 0; i < sizeof(syslogs) / sizeof(syslogs[0]); i++) {
		print_message("%s\n", syslogs[i]);
		assert_int_equal(pk_console_create(&con, syslogs[i]), 0);
		assert_true(pk_console_net_owns(con));
		assert_string_equal(con->name, "syslog");
		assert_true(con->flags & PK_CON_THREADED);
		/* framing: the tcp ones take it, the others refuse it */
		assert_int_equal(pk_console_syslog_set_framing(con, PK_SYSLOG_FRAMING_OCTET),
				 strstr(syslogs[i], ":tcp:") ? 0 : -EINVAL);
		pk_console_destroy(con);
	}
	test_dir_remove();
}

/* ------------------------------------------------------- bad specs -- */

static int bad_specs_child(void *arg)
{
	static const struct {
		const char *spec;
		int err;
	} bad[] = {
		{ "", -EINVAL },
		{ "bogus", -ENOENT },
		{ "bogus:x", -ENOENT },
		{ "Fd:3", -ENOENT },
		{ "fd", -EINVAL },
		{ "fd:", -EINVAL },
		{ "fd:x", -EINVAL },
		{ "fd:-1", -EINVAL },
		{ "fd:3x", -EINVAL },
		{ "fd:1073741825", -EINVAL },
		{ "stderr:x", -EINVAL },
		{ "stderr,bogus", -EINVAL },
		{ "fd:1,loglevel=16", -EINVAL },
		{ "fd:1,name=", -EINVAL },
		{ "fd:1,name=a b", -EINVAL },
		{ "file:", -EINVAL },
		{ "file:/x,keep=3", -EINVAL },
		{ "file:/x,size=0", -EINVAL },
		{ "journal:", -EINVAL },
		{ "syslog", -EINVAL },
		{ "syslog:", -EINVAL },
		{ "syslog:udp", -EINVAL },
		{ "syslog:ftp:h:1", -EINVAL },
		{ "syslog:udp:127.0.0.1:0", -EINVAL },
		{ "syslog:udp:127.0.0.1:514,bogus", -EINVAL },
		{ "none", -EINVAL },
		{ "-stderr", -EINVAL },
		{ "fd:999999", -EBADF },
		{ "file:/nonexistent-pk-dir/x/log", -ENOENT },
		/* these say why, one warning each (below) */
		{ "syslog:tcp:127.0.0.1:601,framing=LF", -EINVAL },
		{ "syslog:udp:127.0.0.1:514,framing=lf", -EINVAL },
		{ "stderr,json,extended", -EINVAL },
		{ "journal,time=iso", -EINVAL },
		{ "syslog:udp:127.0.0.1:514,enterprise=0", -EINVAL },
		{ "syslog:udp:127.0.0.1:514,enterprise=4294967296", -EINVAL },
	};
	struct console *con;
	char longpath[700];

	(void)arg;
	pk_set_printk_time(0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		con = (struct console *)&con;
		if (pk_console_create(&con, bad[i].spec) != bad[i].err || con) {
			dprintf(2, "FAIL %s\n", bad[i].spec);
			return 1;
		}
	}
	memset(longpath, 'p', sizeof(longpath));
	memcpy(longpath, "file:/", 6);
	longpath[sizeof(longpath) - 1] = '\0';
	if (pk_console_create(&con, longpath) != -ENAMETOOLONG)
		return 2;
	if (pk_console_create(NULL, "stderr") != -EINVAL || pk_console_create(&con, NULL) != -EINVAL)
		return 3;
	return 0;
}

static void test_bad_specs(void **state)
{
	struct child_result res;

	(void)state;
	run_child_ok(bad_specs_child, NULL, 60000, &res);
	assert_string_equal(res.out,
			    "printk: PRINTK_OPTS: bad console option 'framing=LF' (octet or lf), console ignored\n"
			    "printk: PRINTK_OPTS: console=syslog:udp:127.0.0.1:514: framing= is for tcp: targets only, console ignored\n"
			    "printk: PRINTK_OPTS: bad console option 'json' (not with ,extended), console ignored\n"
			    "printk: PRINTK_OPTS: console=journal: time= is for stderr, fd: and file: consoles, console ignored\n"
			    "printk: PRINTK_OPTS: bad console option 'enterprise=0' (1 to 4294967295), console ignored\n"
			    "printk: PRINTK_OPTS: bad console option 'enterprise=4294967296' (1 to 4294967295), console ignored\n");
	child_result_free(&res);
}

/* ------------------------------------------------ printing, exactly -- */

static int fd_prints_child(void *arg)
{
	struct console *con;
	int p[2];
	char spec[64], buf[512];
	ssize_t n;

	(void)arg;
	if (pipe(p) || fcntl(p[0], F_SETFL, O_NONBLOCK))
		return 1;
	/* printk.time stays as it is: the console's own style is none */
	snprintf(spec, sizeof(spec), "fd:%d,loglevel=4,time=none,name=pipe", p[1]);
	if (pk_console_create(&con, spec) || strcmp(con->name, "pipe"))
		return 2;
	if (pk_console_get_loglevel(con) != -1) /* not registered: not yet */
		return 3;
	if (pk_register_console(con))
		return 4;
	if (pk_console_get_loglevel(con) != 4 || pk_console_get_time_style(con) != PK_TIME_NONE)
		return 5;
	pr_info("not shown: level 6\n");
	pr_warn("not shown: level 4\n");
	pr_err("shown %d\n", 3);
	printk(KERN_CRIT "two\nlines\n");
	pr_flush(1000, 1);
	n = read(p[0], buf, sizeof(buf) - 1);
	if (n < 0)
		return 6;
	buf[n] = '\0';
	dprintf(2, "PIPE<%s>\n", buf);
	if (pk_unregister_console(con))
		return 7;
	pk_console_destroy(con);
	return 0;
}

static void test_fd_prints(void **state)
{
	struct child_result res;

	(void)state;
	run_child_ok(fd_prints_child, NULL, 60000, &res);
	assert_non_null(strstr(res.out, "PIPE<shown 3\ntwo\nlines\n>\n"));
	child_result_free(&res);
}

/* A spec's syslog options reach the wire: a forwarder made from
 * "syslog:udp:...,enterprise=7,bom=no,rfc5424" sends one datagram. */
static void test_syslog_spec_on_the_wire(void **state)
{
	struct sockaddr_in sa = { 0 };
	socklen_t sl = sizeof(sa);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct console *con;
	static struct pk_record r;
	char spec[128], buf[2048];

	(void)state;
	assert_true(s >= 0);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	snprintf(spec, sizeof(spec), "syslog:udp:127.0.0.1:%u,enterprise=7,bom=no,rfc5424", ntohs(sa.sin_port));
	assert_int_equal(pk_console_create(&con, spec), 0);
	r.seq = 5;
	r.pid = 11;
	r.tid = 12;
	r.level = 3;
	r.facility = 1;
	r.text_len = 5;
	memcpy(r.text, "hello", 5);
	assert_int_equal(pk_console_forward_send(con, &r), 0);

	struct timeval tv = { 30, 0 }; /* a bound, not a timer: the datagram is local */

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	ssize_t n = recv(s, buf, sizeof(buf) - 1, 0);

	assert_true(n > 0);
	buf[n] = '\0';
	assert_int_equal(strncmp(buf, "<11>1 ", 6), 0);
	assert_non_null(strstr(buf, " 11 - [printk@7 seq=\"5\" tid=\"12\"] hello"));
	assert_memory_equal(buf + n - 7, "] hello", 7); /* no BOM */
	pk_console_destroy(con);
	close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counted_kind_released),
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_fd_prints),
		cmocka_unit_test(test_syslog_spec_on_the_wire),
	};

	/* before any thread: the table is written by constructors' time only */
	if (pk_console_kind_register(&kind_counted))
		return 99;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
