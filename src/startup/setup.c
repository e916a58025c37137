// SPDX-License-Identifier: MIT
/*
 * setup.c - start-up and the process hooks: PRINTK_OPTS, the log's size
 * and file, exit and fork.
 *
 * Owns: whether start-up ran, and the table through which it reaches
 * printk and the optional features (setup_hooks.h). It configures the
 * layers below it (the default log through settings.c, the consoles, the
 * crash handler) and depends on nothing above them: printk.c, /dev/kmsg's
 * mode, dynamic debug and the forwarding consoles fill the table from
 * their constructors, which is how a program linked statically gets this
 * file with printk and those features only when it links them.
 *
 * At load time (a constructor, where the compiler has them) it reads
 * PRINTK_OPTS and applies it, so the first printk, which may come from a
 * signal handler, finds the log and the consoles ready; at exit it ends the
 * consoles' open lines and drains them; in a forked child it abandons the
 * records the parent's other threads were writing in a memory log.
 *
 * Replacing the default log is only allowed before the first record is
 * stored (-EBUSY after): the consoles then restart at the new log's start.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <printk/console.h>
#include <printk/kern_levels.h>
#include <printk/kmsg_dump.h>
#include <printk/printk.h>

#include "console/console_internal.h"
#include "console/console_kinds.h"
#include "format/vsprintf.h"
#include "log/log_shared.h"
#include "log/modlevel.h"
#include "log/options.h"
#include "log/settings.h"
#include "readers/reader.h"
#include "ring/ringbuffer.h"
#include "startup/setup_hooks.h"

/* ---------------------------------------------------- the log's making -- */

/* Make @fresh the default log; the consoles restart at @start. */
static int install_log(struct pk_log *fresh, const char *path, unsigned flags, uint64_t start)
{
	struct pk_log *old;
	int err;

	if (path) /* one clock for every writer of the file (clock.c) */
		pk_clock_share(&pk_log_shared(fresh)->clock);
	err = pk_default_log_replace(fresh, path, flags, &old);

	if (err) {
		pk_log_destroy(fresh);
		return err;
	}
	pk_console_reset_positions(start);
	pk_log_destroy(old);
	return 0;
}

/*
 * An existing log file keeps the size it was made with: when that is not
 * the @asked one (a log_buf_len given with it), say so in the file, where
 * udmesg and the consoles show it. (Stored with pk_log_store: a notice
 * through printk would count as the program's first message.)
 */
static void note_kept_size(struct pk_log *fresh, const char *path, size_t asked)
{
	size_t want = 1, have = pk_log_buf_len(fresh);
	char text[PK_TEXT_MAX];

	while (want < asked)
		want <<= 1;
	if (!path || !asked || want == have)
		return;

	int n = pk_fmt_snprintf(text, sizeof(text), "printk: log file %s keeps its log_buf_len=%zu (%zu asked for)",
			    path, have, want);

	if (n > 0)
		pk_log_store(fresh, 0, PK_LOGLEVEL_NOTICE, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1,
			     NULL, 0);
}

int pk_set_log_buf_file(const char *path, unsigned flags)
{
	if (flags & ~(PK_LOG_GROUP_READ | PK_LOG_SYNC))
		return -EINVAL;
	if (pk_default_log_used())
		return -EBUSY;

	struct pk_log *fresh;
	int err = path ? pk_log_open_file(&fresh, path, pk_default_log_len(), flags)
		       : pk_log_create(&fresh, pk_default_log_len());

	if (err)
		return err;
	note_kept_size(fresh, path, pk_default_log_len());
	/* An attached file keeps its own console level and its records. */
	return install_log(fresh, path, flags, pk_log_first_seq(fresh));
}

int pk_set_log_buf_len(size_t len)
{
	if (len && !pk_log_region_size(len))
		return -EINVAL;
	if (pk_default_log_used())
		return -EBUSY;

	const char *path = pk_default_log_file();
	unsigned flags = pk_default_log_file_flags();
	struct pk_log *fresh;
	int err = path ? pk_log_open_file(&fresh, path, len, flags) : pk_log_create(&fresh, len);

	if (err)
		return err;
	note_kept_size(fresh, path, len);
	pk_default_log_set_len(len);
	if (!path) /* a file keeps the level it has */
		pk_default_log_take_level(fresh);
	return install_log(fresh, path, flags, 0);
}

/* ---------------------------------------------------------- PRINTK_OPTS -- */

struct pk_setup_hooks pk_setup_hooks;

/*
 * One warning line, through printk's entry (setup.c does not depend on
 * printk.c, whose entry is what brings start-up in). A static program that
 * configures but never prints has no printk: the line is only stored then,
 * as the record the warning always leaves.
 */
static void warn_line(const char *line)
{
	if (pk_setup_hooks.printk)
		(pk_setup_hooks.printk)(PK_KERN_WARNING "%s\n", line);
	else
		pk_log_store(pk_printk_log(), 0, PK_LOGLEVEL_WARNING, line, strlen(line), NULL, 0);
}

/*
 * PRINTK_OPTS named @option, a feature whose file is not in this program (a
 * program linked statically that neither uses it nor calls
 * pk_printk_link_all_options(): setup_hooks.h). One warning per feature for
 * the process's lifetime, *@said remembering it; -ENOSYS. (A console kind
 * that is not linked is console_kinds.c's to say.)
 */
static int not_linked(struct pk_opts *o, int *said, const char *option, const char *feature)
{
	if (!*said) {
		*said = 1;
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "%s: %s not linked into this program "
			     "(see pk_printk_link_all_options()), ignored", option, feature);
	}
	return -ENOSYS;
}

static int said_devkmsg, said_dyndbg;

/*
 * The consoles PRINTK_OPTS and pk_printk_configure() registered (the
 * default stderr one included): what a later console=none takes away.
 * Consoles the program registered itself are not ours to remove.
 */
#define OPT_CONSOLES_MAX 64
static struct console *opt_consoles[OPT_CONSOLES_MAX];
static int n_opt_consoles;

static void remember_opt_console(struct console *con)
{
	if (n_opt_consoles < OPT_CONSOLES_MAX)
		opt_consoles[n_opt_consoles++] = con;
}

static void register_default_console(void)
{
	if (!pk_register_console(pk_console_stderr()))
		remember_opt_console(pk_console_stderr());
}

/* console=none at run time: unregister (and free) what options made. */
static void remove_opt_consoles(void)
{
	int kept = 0;

	for (int i = 0; i < n_opt_consoles; i++) {
		struct console *con = opt_consoles[i];

		if (pk_unregister_console(con) == -EBUSY) {
			opt_consoles[kept++] = con; /* stuck in a write: stays */
			continue;
		}
		if (con != pk_console_stderr())
			pk_console_destroy(con);
	}
	n_opt_consoles = kept;
}

/* console=-NAME: unregister the console of that name; one options made
 * is freed too, one the program registered stays the program's. */
static int remove_named_console(const char *name, struct pk_opts *o)
{
	for (int i = 0; i < n_opt_consoles; i++) {
		struct console *con = opt_consoles[i];

		if (strncmp(con->name, name, sizeof(con->name)))
			continue;

		int err = pk_unregister_console(con);

		if (err == -EBUSY) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=-%s: busy in a write, not removed", name);
			return err;
		}
		opt_consoles[i] = opt_consoles[--n_opt_consoles];
		if (con != pk_console_stderr())
			pk_console_destroy(con);
		return 0;
	}

	struct console *con = pk_console_find(name);
	int err = con ? pk_unregister_console(con) : -ENOENT;

	if (err)
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=-%s: %s, ignored", name,
			     err == -ENOENT ? "no such console" : "busy in a write");
	return err;
}

/* One console= entry: made by its kind's row (console_kinds.c), which
 * warns when it cannot; registered here. */
static int register_opt_console(const struct pk_opts_console *c, struct pk_opts *o)
{
	struct console *con = NULL;
	int err;

	if (c->kind == PK_OPTCON_NONE)
		return 0;
	if (c->kind == PK_OPTCON_REMOVE)
		return remove_named_console(c->name, o);
	err = pk_console_spec_create(&con, c, o);
	if (err == -ENOENT)
		return -ENOSYS; /* not linked: said once */
	if (err) {
		if (err != -EBUSY)
			pk_console_spec_unusable(c, err, o);
		return err;
	}
	err = pk_register_console(con);
	if (err) {
		pk_console_kinds_forget(con);
		if (con != pk_console_stderr())
			pk_console_destroy(con);
		if (err != -EBUSY)
			pk_console_spec_unusable(c, err, o);
		return err;
	}
	remember_opt_console(con);
	return 0;
}

/* Apply parsed options; @startup: the log may still be resized and, with no
 * console= given, stderr is registered. */
static int apply_options(struct pk_opts *o, int startup)
{
	int err = 0;

	/* Before the log is made: a log made with lanes on has their pool. */
	if (o->lanes >= 0)
		pk_set_lanes(o->lanes);
	if (o->lane_clock[0])
		pk_set_lane_clock_ordered(!strcmp(o->lane_clock, "ordered"));
	if (o->log_buf_file[0]) {
		unsigned fl = (o->log_buf_file_group > 0 ? PK_LOG_GROUP_READ : 0) |
			      (o->log_buf_file_sync > 0 ? PK_LOG_SYNC : 0);

		if (o->log_buf_len >= 0)
			pk_default_log_set_len((size_t)o->log_buf_len);

		const char *now = pk_default_log_file();
		/* The same file again is no change; another one once a message
		 * was stored is refused, as log_buf_len= is. */
		int e = now && !strcmp(now, o->log_buf_file) && pk_default_log_file_flags() == fl
				? 0
				: pk_set_log_buf_file(o->log_buf_file, fl);

		if (e == -EBUSY) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "log_buf_file=%s after the first message, ignored",
				     o->log_buf_file);
			err = e;
		} else if (e) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "log_buf_file=%s unusable: %s, using memory",
				     o->log_buf_file, pk_log_strerror(e));
			err = e;
		}
		const char *kept = e ? NULL : pk_log_damaged_copy(pk_printk_log_peek());

		if (kept)
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "log_buf_file=%s was damaged: kept as %s, a new log started",
				     o->log_buf_file, kept);
		o->log_buf_len = -1; /* applied with the file (an existing file keeps its size) */
	}
	if (o->log_buf_len >= 0) {
		int e = pk_set_log_buf_len((size_t)o->log_buf_len);

		if (e) {
			/* The bounds this build's ring takes (a small-ids build
			 * stops at 128K). */
			unsigned max_bits = PRB_DATA_MAX_BITS;
			char range[32];

			pk_fmt_snprintf(range, sizeof(range), "out of range (4K..%u%c)",
					max_bits >= 30 ? 1u << (max_bits - 30) : 1u << (max_bits - 10),
					max_bits >= 30 ? 'G' : 'K');
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "log_buf_len=%lld %s, ignored", o->log_buf_len,
				     e == -EBUSY ? "after the first message" : range);
			err = e;
		}
	}
	if (o->console_loglevel >= 0)
		pk_set_console_loglevel(o->console_loglevel);
	if (o->ignore_loglevel >= 0)
		pk_set_ignore_loglevel(o->ignore_loglevel);
	if (o->printk_time >= 0)
		pk_set_printk_time_style(o->printk_time);
	if (o->printk_caller >= 0)
		pk_set_printk_caller(o->printk_caller);
	if (o->srcloc >= 0)
		pk_set_printk_srcloc(o->srcloc);
	if (o->modules[0] && pk_modlevel_parse_list(o->modules, strlen(o->modules), 1)) {
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "printk.module=%.100s: more than %d module levels, the last ignored",
			     o->modules, PK_MODULE_LEVELS_MAX);
		err = -ENOSPC;
	}
	if (o->devkmsg[0] && pk_setup_hooks.set_devkmsg)
		pk_setup_hooks.set_devkmsg(o->devkmsg);
	else if (o->devkmsg[0])
		not_linked(o, &said_devkmsg, "printk.devkmsg", "/dev/kmsg");
	pk_printk_log();
	/* The kernel's warning banner (lib/vsprintf.c), once. */
	if (o->no_hash_pointers > 0 && pk_no_hash_pointers_enable())
		for (int i = 0; i < PK_NO_HASH_POINTERS_BANNER_LINES; i++)
			warn_line(pk_no_hash_pointers_banner[i]);
	int removals = 0;

	for (int i = 0; i < o->nconsoles; i++)
		removals += o->consoles[i].kind == PK_OPTCON_REMOVE;
	if (startup && o->nconsoles == removals)
		register_default_console();
	int usable = 0, wanted = 0;

	for (int i = 0; i < o->nconsoles; i++) {
		/* At run time console=none takes away what options made before;
		 * the consoles after it in the same string are added. */
		if (!startup && o->consoles[i].kind == PK_OPTCON_NONE)
			remove_opt_consoles();

		int e = register_opt_console(&o->consoles[i], o);

		wanted += o->consoles[i].kind != PK_OPTCON_NONE && o->consoles[i].kind != PK_OPTCON_REMOVE;
		usable += !e || e == -EBUSY;
		if (e && e != -EBUSY && !err)
			err = e;
	}
	/* Consoles were asked for and none works: the warnings must still be seen. */
	if (startup && wanted && !usable)
		register_default_console();
	/* After the consoles: the messages of a bad query are seen. */
	if (o->dyndbg[0] && !pk_setup_hooks.dyndbg_boot)
		not_linked(o, &said_dyndbg, "dyndbg", "dynamic debug");
	else if (o->dyndbg[0] && pk_setup_hooks.dyndbg_boot(o->dyndbg) < 0 && !err)
		err = -EINVAL;
	/* After the log and the consoles exist: the handler finds them ready. */
	if (o->console_drain_ms >= 0)
		pk_console_set_drain_ms(o->console_drain_ms);
	if (o->lossless_timeout_ms >= 0)
		pk_console_set_lossless_timeout_ms(o->lossless_timeout_ms);
	if (o->crash_dump == 1) {
		int e = pk_crash_handler_install();

		if (e) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "crash_dump=1 failed (error %d), ignored", -e);
			if (!err)
				err = e;
		}
	} else if (o->crash_dump == 0) {
		pk_crash_handler_uninstall();
	}
	for (int i = 0; i < o->nwarnings; i++)
		warn_line(o->warnings[i]);
	if (o->warnings_dropped) {
		char line[96];

		pk_snprintf(line, sizeof(line), PK_OPTS_WARN_PREFIX "%d more warnings not shown",
			    o->warnings_dropped);
		warn_line(line);
	}
	return err ? err : (o->nwarnings ? -EINVAL : 0);
}

int pk_printk_configure(const char *options)
{
	static struct pk_opts o; /* large; configuration is not reentrant anyway */

	pk_opts_parse(options, &o);
	return apply_options(&o, 0);
}

/*
 * A console from a spec as console= takes it: the same parser and maker
 * (console_kinds.c), the warnings that say why an option was refused
 * through printk as PRINTK_OPTS' are (a console that cannot be made says
 * so by its error alone), and no console= semantics beyond the one console
 * (none and -NAME are not consoles: -EINVAL).
 */
int pk_console_create(struct console **conp, const char *spec)
{
	struct pk_opts *o;
	struct pk_opts_console c;
	struct console *con = NULL;
	int err;

	if (!conp)
		return -EINVAL;
	*conp = NULL;
	if (!spec || !*spec)
		return -EINVAL;
	if (!(o = malloc(sizeof(*o)))) /* several KiB: not on a caller's stack */
		return -ENOMEM;
	pk_opts_init(o);
	err = pk_console_spec_parse(spec, strlen(spec), &c, o);
	if (err == -EALREADY || err == -ERANGE)
		err = -EINVAL;
	if (!err && !c.row && (c.kind == PK_OPTCON_NONE || c.kind == PK_OPTCON_REMOVE))
		err = -EINVAL;
	if (!err)
		err = pk_console_spec_create(&con, &c, o);
	for (int i = 0; i < o->nwarnings; i++)
		warn_line(o->warnings[i]);
	free(o);
	if (!err)
		*conp = con;
	return err;
}

/* --------------------------------------------------- start, exit, fork -- */

static _Atomic int started;

static void printk_atexit(void)
{
	struct pk_log *log = pk_printk_log_peek();

	if (pk_setup_hooks.report_lost)
		pk_setup_hooks.report_lost(); /* no next line will say it */
	if (log)
		pk_console_shutdown(pk_log_ring(log), 0);
	pk_printk_sync();
}

static void printk_after_fork_child(void)
{
	struct pk_log *log = pk_printk_log_peek();

	/* A memory log was copied: what other threads were writing when we
	 * forked will never be finished in this copy (a file log is shared: the
	 * parent's threads finish their records there). */
	if (log && !pk_default_log_file())
		prb_abandon_unfinished(pk_log_ring(log));
	pk_console_after_fork();
}

static void printk_start(void)
{
	static struct pk_opts o;

	if (atomic_exchange(&started, 1))
		return;
	pthread_atfork(NULL, NULL, printk_after_fork_child);
	atexit(printk_atexit);
	/* The stderr console remembers what fd 2 is now, at start-up, even
	 * when other consoles are asked for: it may become their fallback. */
	pk_console_stderr();
	pk_opts_parse(getenv("PRINTK_OPTS"), &o);
	apply_options(&o, 1);
}

#if defined(__GNUC__) || defined(__clang__)
/* At load time, so the first printk (which may come from a signal handler)
 * finds the log and the consoles ready; not in a program that only reads
 * logs (reader.h: PK_READER_ONLY_PROGRAM), where start-up would open
 * log_buf_file= as a writer. */
__attribute__((constructor)) static void printk_init(void)
{
	if (!pk_reader_only_program())
		printk_start();
}
#endif

void pk_printk_exit(void)
{
	struct pk_log *log = pk_printk_log_peek();

	if (pk_setup_hooks.report_lost)
		pk_setup_hooks.report_lost(); /* no next line will say it */
	/* The consoles drain first, while the log is still printk's: printer
	 * threads read it through the default log, which, taken away, a
	 * thread would find empty (or make anew) and drain nothing. */
	int running = pk_console_shutdown(log ? pk_log_ring(log) : NULL, 1);

	n_opt_consoles = 0; /* unregistered and released by the shutdown */
	pk_printk_sync();
	pk_default_log_replace(NULL, NULL, 0, &log); /* cannot fail without a path */
	/* A printer thread still in a write (console_drain_ms ran out) or a
	 * console lock never had: the log is left to them, not freed. */
	if (running == 0)
		pk_log_destroy(log);
}
