// SPDX-License-Identifier: MIT
/*
 * test_dyndbg.c - dynamic debug: the call sites of a file built with
 * PRINTK_DYNAMIC_DEBUG start off, those of one built with DEBUG (the shared
 * object dyndbg_obj.c) on; each query keyword, line ranges and flags, as
 * Linux lib/dynamic_debug.c parses them; the kernel's error messages and
 * -EINVAL; the f/l/m/s/t prefixes byte for byte; the control listing's
 * lines; dev_dbg, netdev_dbg and print_hex_dump_debug sites; the
 * netdev_* and netif_* prefixes; PRINTK_OPTS dyndbg=; sites in a shared
 * object, gone with it; and a query posted through a log file by another
 * process (pk_dyndbg_post, udmesg --dyndbg) turning a site on; fork()
 * while another thread runs queries.
 */
#define PRINTK_DYNAMIC_DEBUG 1

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <printk/dev_printk.h>
#include <printk/dynamic_debug.h>
#include <printk/netdevice.h>
#include <printk/printk.h>

#include "fixture.h"
#include "readers/reader.h"
#include "remote_post.h"
#include "testutil.h"

/* ---- call sites, each in a function of its own; they return the line ---- */

static int site_a_line, site_b_line, site_c_line;

static int site_a(int x)
{
	site_a_line = __LINE__ + 1;
	return pr_debug("site a %d\n", x);
}

/* Two sites, for line ranges. */
static void site_bc(void)
{
	site_b_line = __LINE__ + 1;
	pr_debug("site b\n");
	site_c_line = __LINE__ + 1;
	pr_debug("unique-format c\ttab\n");
}

static int site_dev_line;

static int site_dev(const struct device *dev)
{
	site_dev_line = __LINE__ + 1;
	return dev_dbg(dev, "dev says %d\n", 5);
}

static void site_netdev(const struct net_device *nd)
{
	netdev_dbg(nd, "netdev says %s\n", "hi");
}

static void site_hexdump(void)
{
	static const unsigned char bytes[4] = { 1, 2, 3, 4 };

	print_hex_dump_debug("hd: ", DUMP_PREFIX_NONE, 16, 1, bytes, sizeof(bytes), false);
}

/* Sites declared by hand, and the dynamic_* names. */
static int site_by_hand(void)
{
	DEFINE_DYNAMIC_DEBUG_METADATA(my_site, "by hand %d\n");

	if (DYNAMIC_DEBUG_BRANCH(my_site))
		return __dynamic_pr_debug(&my_site, "by hand %d\n", 1);
	return -1;
}

static void site_dynamic_names(void)
{
	dynamic_pr_debug("named %d\n", 2);
}

static void site_ratelimited(const struct device *dev)
{
	for (int i = 0; i < 12; i++) {
		pr_debug_ratelimited("rl %d\n", i);
		dev_dbg_ratelimited(dev, "drl %d\n", i);
	}
}

static int site_remote(void)
{
	return pr_debug("remote site\n");
}

/* ------------------------------------------------------------------------- */

static int setup(void **state)
{
	setup_capture(state);
	pk_set_ignore_loglevel(1);
	pk_dyndbg_query("=_");
	return 0;
}

static int teardown(void **state)
{
	pk_dyndbg_query("=_");
	return teardown_capture(state);
}

/* The text of the newest record. */
static const char *last_text(void)
{
	read_at(next_seq() - 1);
	return rec.text;
}

static void test_sites_start_off(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	assert_int_equal(site_a(1), 0);
	site_bc();
	assert_int_equal(next_seq(), seq);
	assert_string_equal(capture_text(&cap), "");
}

static void test_func(void **state)
{
	(void)state;
	assert_int_equal(pk_dyndbg_query("func site_a +p"), 1);
	assert_int_equal(site_a(7), 8);
	assert_string_equal(last_text(), "site a 7");
	assert_int_equal(rec.level, 7);
	assert_string_equal(capture_text(&cap), "site a 7\n");

	assert_int_equal(pk_dyndbg_query("func site_a -p"), 1);
	uint64_t seq = next_seq();

	assert_int_equal(site_a(8), 0);
	assert_int_equal(next_seq(), seq);
	/* Wildcards, and a query matching nothing. */
	assert_int_equal(pk_dyndbg_query("func site_? +p"), 1);
	assert_int_equal(pk_dyndbg_query("func site_b? +p"), 2);
	assert_int_equal(pk_dyndbg_query("func site_bc* +p"), 2);
	assert_int_equal(pk_dyndbg_query("func nosuch +p"), 0);
}

static void test_file_and_line(void **state)
{
	(void)state;
	char q[256];

	site_bc(); /* sets the lines */
	snprintf(q, sizeof(q), "file test_dyndbg.c line %d +p", site_b_line);
	assert_int_equal(pk_dyndbg_query(q), 1);
	snprintf(q, sizeof(q), "file %s line %d -p", __FILE__, site_b_line);
	assert_int_equal(pk_dyndbg_query(q), 1);
	snprintf(q, sizeof(q), "file test_dyn*.c:%d +p", site_c_line);
	assert_int_equal(pk_dyndbg_query(q), 1);
	assert_int_equal(pk_dyndbg_query("file test_dyndbg.c:site_bc =_"), 2);
	assert_int_equal(pk_dyndbg_query("file other.c +p"), 0);

	/* Ranges: N-M, N-, -M. */
	snprintf(q, sizeof(q), "line %d-%d +p", site_b_line, site_c_line);
	assert_int_equal(pk_dyndbg_query(q), 2);
	snprintf(q, sizeof(q), "func site_bc line %d- =_", site_c_line);
	assert_int_equal(pk_dyndbg_query(q), 1);
	snprintf(q, sizeof(q), "func site_bc line -%d =_", site_b_line);
	assert_int_equal(pk_dyndbg_query(q), 1);

	uint64_t seq = next_seq();

	snprintf(q, sizeof(q), "line %d +p", site_c_line);
	assert_int_equal(pk_dyndbg_query(q), 1);
	site_bc();
	assert_int_equal(next_seq(), seq + 1);
	assert_string_equal(last_text(), "unique-format c\ttab");
}

static void test_module_and_format(void **state)
{
	(void)state;
	/* The program's sites belong to the module named after it. */
	assert_int_equal(pk_dyndbg_query("module test_dyndbg func site_a +p"), 1);
	assert_int_equal(pk_dyndbg_query("module test_dyn* func site_a +p"), 1);
	assert_int_equal(pk_dyndbg_query("module nosuch +p"), 0);
	/* Substring, anchored, escaped (\t and \011), quoted. */
	assert_int_equal(pk_dyndbg_query("format unique-format =p"), 1);
	assert_int_equal(pk_dyndbg_query("format ^unique =p"), 1);
	assert_int_equal(pk_dyndbg_query("format ^format =p"), 0);
	assert_int_equal(pk_dyndbg_query("format c\\ttab =p"), 1);
	assert_int_equal(pk_dyndbg_query("format c\\011tab =p"), 1);
	assert_int_equal(pk_dyndbg_query("format \"site a %d\" =p"), 1);
	assert_int_equal(pk_dyndbg_query("format 'site a' =p"), 1);
	/* A class: no site has one. */
	assert_int_equal(pk_dyndbg_query("class FOO +p"), 0);
}

static void test_several_queries(void **state)
{
	(void)state;
	/* ';' and newlines separate; comments and empty queries are skipped. */
	assert_int_equal(pk_dyndbg_query("func site_a +p;; func site_bc +p\n# comment\n"), 3);
	assert_int_equal(pk_dyndbg_query("  "), 0);
	assert_int_equal(pk_dyndbg_query("func site_a +p # trailing comment"), 1);
}

/* The f/l/m/s/t prefixes: "[tid] module:function:file:line: ". */
static void test_prefix_flags(void **state)
{
	(void)state;
	char want[512];

	site_a(0);
	assert_int_equal(pk_dyndbg_query("func site_a =pf"), 1);
	site_a(1);
	assert_string_equal(last_text(), "site_a: site a 1");
	assert_int_equal(pk_dyndbg_query("func site_a =pl"), 1);
	site_a(2);
	snprintf(want, sizeof(want), "%d: site a 2", site_a_line);
	assert_string_equal(last_text(), want);
	assert_int_equal(pk_dyndbg_query("func site_a =pm"), 1);
	site_a(3);
	assert_string_equal(last_text(), "test_dyndbg: site a 3");
	assert_int_equal(pk_dyndbg_query("func site_a =ps"), 1);
	site_a(4);
	snprintf(want, sizeof(want), "%s: site a 4", __FILE__);
	assert_string_equal(last_text(), want);
	assert_int_equal(pk_dyndbg_query("func site_a =pt"), 1);
	site_a(5);
	snprintf(want, sizeof(want), "[%d] site a 5", (int)syscall(SYS_gettid));
	assert_string_equal(last_text(), want);
	/* All of them, in the kernel's order whatever the query's. */
	assert_int_equal(pk_dyndbg_query("func site_a =tlsfmp"), 1);
	site_a(6);
	snprintf(want, sizeof(want), "[%d] test_dyndbg:site_a:%s:%d: site a 6",
		 (int)syscall(SYS_gettid), __FILE__, site_a_line);
	assert_string_equal(last_text(), want);
	/* Flags without p: nothing printed; + and - change only theirs. */
	assert_int_equal(pk_dyndbg_query("func site_a -p"), 1);
	uint64_t seq = next_seq();

	site_a(7);
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_dyndbg_query("func site_a +p -fslm"), -EINVAL); /* one flags word */
	assert_int_equal(pk_dyndbg_query("func site_a -fslm"), 1);
	assert_int_equal(pk_dyndbg_query("func site_a +p"), 1);
	site_a(8);
	snprintf(want, sizeof(want), "[%d] site a 8", (int)syscall(SYS_gettid));
	assert_string_equal(last_text(), want);
	assert_int_equal(pk_dyndbg_query("func site_a =_"), 1);
}

/* Each bad query: -EINVAL and the kernel's two messages. */
static void check_bad(const char *query, const char *msg1, const char *msg2)
{
	uint64_t seq = next_seq();

	assert_int_equal(pk_dyndbg_query(query), -EINVAL);
	assert_int_equal(next_seq(), seq + 2);
	read_at(seq);
	assert_int_equal(rec.level, 3);
	assert_string_equal(rec.text, msg1);
	read_at(seq + 1);
	assert_string_equal(rec.text, msg2);
}

static void test_bad_queries(void **state)
{
	(void)state;
	check_bad("func site_a", "dyndbg: bad flag-op s, at start of site_a", "dyndbg: flags parse failed");
	check_bad("func site_a +x", "dyndbg: unknown flag 'x'", "dyndbg: flags parse failed");
	check_bad("func +p", "dyndbg: expecting pairs of match-spec <value>", "dyndbg: query parse failed");
	check_bad("funk site_a +p", "dyndbg: unknown keyword \"funk\"", "dyndbg: query parse failed");
	check_bad("line 20-10 +p", "dyndbg: last-line:10 < 1st-line:20", "dyndbg: query parse failed");
	check_bad("line x +p", "dyndbg: bad line-number: x", "dyndbg: query parse failed");
	check_bad("line 1 line 2 +p", "dyndbg: match-spec: line used 2x", "dyndbg: query parse failed");
	check_bad("func a func b +p", "dyndbg: match-spec:func val:a overridden by b",
		  "dyndbg: query parse failed");
	check_bad("format 'open +p", "dyndbg: unclosed quote: open +p", "dyndbg: tokenize failed");
	check_bad("a b c d e f g h i j +p", "dyndbg: too many words, legal max <=9",
		  "dyndbg: tokenize failed");
	assert_int_equal(pk_dyndbg_query(NULL), -EINVAL);

	/* A bad query does not stop the others; the error is returned. */
	assert_int_equal(pk_dyndbg_query("func site_a +p; funk x +p; func site_bc +p"), -EINVAL);
	uint64_t seq = next_seq();

	site_a(1);
	site_bc();
	assert_int_equal(next_seq(), seq + 3);
}

/* The listing: the kernel's header and one line per site. */
static void test_control(void **state)
{
	(void)state;
	char *text = NULL, want[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	site_a(0);
	site_bc();
	assert_int_equal(pk_dyndbg_query("func site_a +pfl"), 1);
	int n = pk_dyndbg_write_control(f);

	fclose(f);
	assert_true(n >= 8);
	assert_memory_equal(text, "# filename:lineno [module]function flags format\n", 48);
	snprintf(want, sizeof(want), "\n%s:%d [test_dyndbg]site_a =pfl \"site a %%d\\n\"\n", __FILE__,
		 site_a_line);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\n%s:%d [test_dyndbg]site_bc =_ \"unique-format c\\ttab\\n\"\n",
		 __FILE__, site_c_line);
	assert_non_null(strstr(text, want));
	/* One line per site after the header. */
	int lines = 0;

	for (char *p = text; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, n + 1);
	free(text);
	assert_int_equal(pk_dyndbg_write_control(NULL), -EINVAL);
}

static void test_dev_dbg(void **state)
{
	(void)state;
	struct device dev = { .name = "sda", .driver = "sd", .subsystem = "block", .major = 8 };

	assert_int_equal(site_dev(&dev), 0);
	assert_int_equal(pk_dyndbg_query("func site_dev +pf"), 1);
	assert_int_equal(site_dev(&dev), (int)strlen("site_dev: sd sda: dev says 5"));
	assert_string_equal(last_text(), "site_dev: sd sda: dev says 5");
	assert_int_equal(rec.level, 7);
	assert_memory_equal(rec.dict, "SUBSYSTEM=block\0DEVICE=b8:0", 28);
	site_dev(NULL);
	assert_string_equal(last_text(), "(NULL device *): dev says 5");
}

static void test_netdev(void **state)
{
	(void)state;
	struct device pdev = { .name = "0000:00:1f.6", .driver = "e1000e", .subsystem = "pci" };
	struct net_device nd = { .name = "eth0", .dev.parent = &pdev };
	struct net_device lone = { .name = "lo" };
	struct net_device unnamed = { .name = "eth%d" };
	struct {
		unsigned msg_enable;
	} priv = { NETIF_MSG_LINK };

	netdev_info(&nd, "link up %d\n", 1000);
	assert_string_equal(last_text(), "e1000e 0000:00:1f.6 eth0: link up 1000");
	assert_int_equal(rec.level, 6);
	assert_memory_equal(rec.dict, "SUBSYSTEM=pci\0DEVICE=+pci:0000:00:1f.6", 38);
	netdev_err(&lone, "down\n");
	assert_string_equal(last_text(), "lo: down");
	assert_int_equal(rec.level, 3);
	assert_int_equal(rec.dict_len, 0);
	netdev_warn(NULL, "who\n");
	assert_string_equal(last_text(), "(NULL net_device): who");
	netdev_notice(&unnamed, "x\n");
	assert_string_equal(last_text(), "(unnamed net_device): x");
	lone.reg_state = NETREG_UNREGISTERING;
	netdev_info(&lone, "going\n");
	assert_string_equal(last_text(), "lo (unregistering): going");
	lone.reg_state = NETREG_UNINITIALIZED;
	netdev_printk(KERN_CRIT, &lone, "raw\n");
	assert_string_equal(last_text(), "lo (uninitialized): raw");
	assert_int_equal(rec.level, 2);
	lone.reg_state = NETREG_REGISTERED;

	/* netif_*: only the types msg_enable has. */
	uint64_t seq = next_seq();

	netif_err(&priv, probe, &lone, "not shown\n");
	assert_int_equal(next_seq(), seq);
	netif_err(&priv, link, &lone, "shown %d\n", 2);
	assert_string_equal(last_text(), "lo: shown 2");
	netif_printk(&priv, link, KERN_INFO, &lone, "printk\n");
	assert_string_equal(last_text(), "lo: printk");
	assert_int_equal(rec.level, 6);

	/* netdev_dbg: a dynamic site; the prefix only with a parent. */
	seq = next_seq();
	site_netdev(&nd);
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_dyndbg_query("func site_netdev +pf"), 1);
	site_netdev(&nd);
	assert_string_equal(last_text(), "site_netdev: e1000e 0000:00:1f.6 eth0: netdev says hi");
	assert_int_equal(rec.level, 7);
	site_netdev(&lone);
	assert_string_equal(last_text(), "lo: netdev says hi");
	site_netdev(NULL);
	assert_string_equal(last_text(), "(NULL net_device): netdev says hi");
	assert_int_equal(pk_dyndbg_query("format shown +p"), 2);
	netif_dbg(&priv, probe, &lone, "not shown\n");
	netif_dbg(&priv, link, &lone, "debug shown\n");
	assert_string_equal(last_text(), "lo: debug shown");
}

static void test_hexdump_site(void **state)
{
	(void)state;
	uint64_t seq = next_seq();

	site_hexdump();
	assert_int_equal(next_seq(), seq);
	/* The site's format is the dump's prefix. */
	assert_int_equal(pk_dyndbg_query("format \"hd: \" +pf"), 1);
	site_hexdump();
	assert_string_equal(last_text(), "hd: 01 02 03 04");
}

static void test_kernel_site_names(void **state)
{
	(void)state;
	assert_int_equal(site_by_hand(), -1);
	assert_int_equal(pk_dyndbg_query("func site_by_hand +pf"), 1);
	assert_int_equal(site_by_hand(), (int)strlen("site_by_hand: by hand 1"));
	assert_string_equal(last_text(), "site_by_hand: by hand 1");
	uint64_t seq = next_seq();

	site_dynamic_names();
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_dyndbg_query("format named +p"), 1);
	site_dynamic_names();
	assert_string_equal(last_text(), "named 2");
}

/* An off site takes no rate limit slot: turned on later, it still has
 * its burst of 10. */
static void test_ratelimited(void **state)
{
	(void)state;
	struct device dev = { .name = "sda", .driver = "sd" };
	uint64_t seq = next_seq();

	site_ratelimited(&dev);
	assert_int_equal(next_seq(), seq);
	assert_int_equal(pk_dyndbg_query("func site_ratelimited +p"), 2);
	site_ratelimited(&dev);
	assert_int_equal(next_seq(), seq + 20);
	read_at(seq);
	assert_string_equal(rec.text, "rl 0");
	read_at(seq + 1);
	assert_string_equal(rec.text, "sd sda: drl 0");
}

static void test_printk_opts(void **state)
{
	(void)state;
	/* Quoted, with spaces and ';', as on the kernel's command line. */
	assert_int_equal(pk_printk_configure("dyndbg=\"func site_a +p; func site_bc +p\""), 0);
	uint64_t seq = next_seq();

	site_a(1);
	site_bc();
	assert_int_equal(next_seq(), seq + 3);
	/* A bad one: the kernel's messages, then the PRINTK_OPTS warning-free
	 * result -EINVAL; the good queries still apply. */
	pk_dyndbg_query("=_");
	assert_int_equal(pk_printk_configure("dyndbg=\"funk x +p;func site_a +p\""), -EINVAL);
	seq = next_seq();
	site_a(2);
	assert_int_equal(next_seq(), seq + 1);
	assert_int_equal(pk_printk_configure("dyndbg=\"func nosuch -p\""), 0);
}

/* fork() while another thread runs queries (and so holds the table's lock
 * now and then): every child can still query. A lock held by a thread the
 * child does not have would make the child's query wait for good. */
#define FORK_ROUNDS 100

static _Atomic int querying;

static void *query_loop(void *arg)
{
	(void)arg;
	while (atomic_load(&querying)) {
		pk_dyndbg_query("func site_a +p");
		pk_dyndbg_query("func site_a -p");
	}
	return NULL;
}

static int child_query(void *arg)
{
	(void)arg;
	return pk_dyndbg_query("func site_a +p") == 1 ? 0 : 1;
}

static void test_fork_while_querying(void **state)
{
	(void)state;
	pthread_t t;
	struct child_result res;

	atomic_store(&querying, 1);
	assert_int_equal(pthread_create(&t, NULL, query_loop, NULL), 0);
	for (int i = 0; i < FORK_ROUNDS; i++) {
		run_child_ok(child_query, NULL, 5000, &res);
		child_result_free(&res);
	}
	atomic_store(&querying, 0);
	pthread_join(t, NULL);
}

/* A shared object's sites: on (DEBUG), in their module, gone with it. */
static void test_shared_object(void **state)
{
	(void)state;
	void *h = dlopen(DYNDBG_OBJ, RTLD_NOW);

	assert_non_null(h);
	int (*hello)(int) = (int (*)(int))dlsym(h, "dyndbg_obj_hello");
	int (*line)(void) = (int (*)(void))dlsym(h, "dyndbg_obj_line");

	assert_non_null(hello);
	assert_non_null(line);
	assert_int_equal(hello(3), (int)strlen("obj hello 3"));
	assert_string_equal(last_text(), "obj hello 3");
	assert_int_equal(pk_dyndbg_query("module libdyndbg_obj =pm"), 1);
	hello(4);
	assert_string_equal(last_text(), "libdyndbg_obj: obj hello 4");
	assert_int_equal(pk_dyndbg_query("module libdyndbg_obj -p"), 1);
	assert_int_equal(hello(5), 0);

	char *text = NULL, want[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int n = pk_dyndbg_write_control(f);

	fclose(f);
	snprintf(want, sizeof(want), "dyndbg_obj.c:%d [libdyndbg_obj]dyndbg_obj_hello =m \"obj hello %%d\\n\"\n",
		 line());
	assert_non_null(strstr(text, want));
	free(text);
	assert_int_equal(dlclose(h), 0);

	f = open_memstream(&text, &len);
	assert_int_equal(pk_dyndbg_write_control(f), n - 1);
	fclose(f);
	assert_null(strstr(text, "libdyndbg_obj"));
	free(text);
	assert_int_equal(pk_dyndbg_query("module libdyndbg_obj +p"), 0);
}

/* ---- another process changes this one's sites through the log file ---- */

static int remote_child(void *arg)
{
	const char *how = arg;
	const char *path = test_dir_path("dyndbg.log");
	struct pk_log *log;

	pk_printk_exit();
	if (pk_set_log_buf_file(path, 0))
		return 10;
	pk_printk(KERN_INFO "started\n"); /* the first look at the log */
	if (site_remote() != 0)
		return 11;

#ifdef UDMESG
	if (!strcmp(how, "udmesg") &&
	    run_udmesg(path, NULL, 0, "--dyndbg", "func site_remote +p; funk x") != 1)
		return 16;
#endif
	pk_printk(KERN_INFO "after the bad one\n");
	if (site_remote() != 0)
		return 17;

	pid_t pid = fork();

	if (pid == 0) {
		if (!strcmp(how, "udmesg")) {
#ifdef UDMESG
			_exit(run_udmesg(path, NULL, 0, "--dyndbg", "func site_remote +p"));
#endif
			_exit(99);
		}
		if (pk_log_open_control(&log, path))
			_exit(20);
		if (pk_dyndbg_post(log, "func site_remote +p; funk x") != -EINVAL)
			_exit(21);
		_exit(pk_dyndbg_post(log, "func site_remote +p") ? 22 : 0);
	}
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 12;
	if (WEXITSTATUS(status))
		return WEXITSTATUS(status);
	/* Not applied yet: nothing has looked. */
	if (site_remote() != 0)
		return 13;
	pk_printk(KERN_INFO "poke\n"); /* printk looks */
	if (site_remote() != (int)strlen("remote site"))
		return 14;
	/* Seen once: a second look applies nothing. */
	pk_dyndbg_query("func site_remote -p");
	if (pk_dyndbg_poll() != 0 || site_remote() != 0)
		return 15;
	pk_printk_exit();
	return 0;
}

static void test_remote_post(void **state)
{
	(void)state;
	run_remote("dyndbg", remote_child, "post");
}

static void test_remote_udmesg(void **state)
{
	(void)state;
#ifdef UDMESG
	run_remote("dyndbg", remote_child, "udmesg");
#else
	skip();
#endif
}

static void test_post_errors(void **state)
{
	(void)state;
	char big[PK_DYNDBG_QUERY_MAX + 1];
	uint64_t seq = next_seq();

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(pk_dyndbg_post(pk_printk_log(), big), -E2BIG);
	assert_int_equal(pk_dyndbg_post(pk_printk_log(), "bogus +p"), -EINVAL);
	assert_int_equal(pk_dyndbg_post(NULL, "+p"), -EINVAL);
	/* Checked quietly. */
	assert_int_equal(next_seq(), seq);
	/* A post to our own log applies at our next look. */
	pk_printk(KERN_INFO "look\n");
	assert_int_equal(pk_dyndbg_post(pk_printk_log(), "func site_a +p"), 0);
	assert_int_equal(pk_dyndbg_poll(), 1);
	assert_int_equal(pk_dyndbg_poll(), 0);
	assert_int_equal(site_a(1), (int)strlen("site a 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sites_start_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_func, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_and_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_and_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefix_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dev_dbg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hexdump_site, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_site_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ratelimited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_printk_opts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_while_querying, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_udmesg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_post_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
