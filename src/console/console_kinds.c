// SPDX-License-Identifier: MIT
/*
 * console_kinds.c - the table of console kinds: for each, its name, how its
 * spec's argument and options are read, how the console is made and how it
 * is freed (console_kinds.h). PRINTK_OPTS' console= (through options.h's
 * pk_opts_console_parser, set here), pk_console_create() (setup.c) and
 * pk-forward's target all go through pk_console_spec_parse() and
 * pk_console_spec_create(); pk_console_destroy() calls the kind's release,
 * whatever else the console has.
 *
 * Owns: the table (the syntax of every kind, the makers of the console
 * layer's own; higher layers' constructors complete their rows or add
 * new ones), the once-per-feature "not linked" warning, the automatic names of file consoles (file0,
 * file1, ...), and the levels and time styles specs asked for, kept from
 * creation to registration.
 *
 * Invariants:
 *   K1 The table is written only by constructors, before any thread, and
 *      read afterwards; a kind's name is in it at most once.
 *   K2 Parsing is pure (options.h's context: no allocation, no lock, no
 *      I/O): a spec parses the same way twice, whether or not the kind's
 *      console could be made.
 *   K3 Every console pk_console_spec_create() made has its kind's release
 *      as its release: freeing it is always that call.
 *   K4 An option is one of every kind's (threaded, extended, lossless,
 *      lossy, json, name=, loglevel=, time=) or its kind's own; any other
 *      trailing ",WORD" belongs to the argument (a path may hold commas).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <printk/console.h>

#include "console/console_internal.h"
#include "console/console_kinds.h"
#include "format/vsprintf.h"
#include "record/json_format.h"


/* ---------------------------------------------------- built-in kinds -- */

static int stderr_create(struct console **con, const struct pk_opts_console *c)
{
	(void)c;
	*con = pk_console_stderr();
	return 0;
}

static int fd_arg(struct pk_opts_console *c, const char *a, size_t n, struct pk_opts *o)
{
	unsigned long long fd;

	(void)o;
	if (pk_opts_parse_uint(a, n, (unsigned long long)PK_OPTS_CONSOLE_FD_MAX, &fd))
		return -EINVAL;
	c->fd = (int)fd;
	return 0;
}

static int fd_create(struct console **con, const struct pk_opts_console *c)
{
	char name[16];

	pk_fmt_snprintf(name, sizeof(name), "fd%d", c->fd);
	return pk_console_fd_create(con, c->fd, name);
}

static int file_option(struct pk_opts_console *c, const char *w, size_t n, struct pk_opts *o)
{
	unsigned long long x;

	if (n >= 7 && !memcmp(w, "rotate=", 7)) {
		if (pk_opts_is_word(w + 7, n - 7, "daily"))
			c->rotate_time = PK_ROTATE_DAILY;
		else if (pk_opts_is_word(w + 7, n - 7, "hourly"))
			c->rotate_time = PK_ROTATE_HOURLY;
		else
			return pk_opts_bad_console_option(o, w, n, "daily or hourly");
		return 1;
	}
	if (n >= 5 && !memcmp(w, "size=", 5)) {
		if (pk_opts_parse_size(w + 5, n - 5, 1, PK_OPTS_SIZE_MAX, &c->rotate_size))
			return -EINVAL;
		return 1;
	}
	if (n >= 5 && !memcmp(w, "keep=", 5)) {
		if (pk_opts_parse_uint(w + 5, n - 5, PK_OPTS_ROTATE_KEEP_MAX, &x) || x < 1)
			return -EINVAL;
		c->rotate_keep = (int)x;
		return 1;
	}
	return 0;
}

static int file_arg(struct pk_opts_console *c, const char *a, size_t n, struct pk_opts *o)
{
	(void)o;
	if (c->rotate_keep && !c->rotate_size && !c->rotate_time)
		return -EINVAL; /* keep= means nothing without size= or rotate= */
	if ((c->rotate_size || c->rotate_time) && !c->rotate_keep)
		c->rotate_keep = PK_OPTS_ROTATE_KEEP_DEFAULT;
	if (n >= sizeof(c->path))
		return -ENAMETOOLONG;
	memcpy(c->path, a, n);
	c->path[n] = '\0';
	return 0;
}

static _Atomic unsigned file_console_count; /* the automatic names file0, file1, ... */

static int file_create(struct console **con, const struct pk_opts_console *c)
{
	int err = pk_console_file_create(con, c->path);

	if (err)
		return err;
	pk_fmt_snprintf((*con)->name, sizeof((*con)->name), "file%u",
			atomic_fetch_add_explicit(&file_console_count, 1, memory_order_relaxed));
	if (c->rotate_size)
		err = pk_console_file_set_rotation(*con, (unsigned long long)c->rotate_size, (unsigned)c->rotate_keep);
	if (!err && c->rotate_time)
		err = pk_console_set_rotate_time(*con, c->rotate_time, (unsigned)c->rotate_keep);
	if (err) {
		pk_console_fd_release(*con);
		*con = NULL;
	}
	return err;
}

/* journal[:PATH] */
static int journal_arg(struct pk_opts_console *c, const char *a, size_t n, struct pk_opts *o)
{
	(void)o;
	if (n >= sizeof(c->path))
		return -ENAMETOOLONG;
	memcpy(c->path, a, n);
	c->path[n] = '\0';
	return 0;
}

/* syslog:TARGET's own options: ,rfc5424 ,rfc3164 ,framing=octet|lf
 * ,bom=yes|no ,enterprise=N (what they mean: <printk/forward.h>), and
 * TLS's ,tls ,ca=F ,cert=F ,key=F ,peer=NAME, kept in c->tls_opts for the
 * target (docs/forwarding.md, "TLS"). */
static int syslog_option(struct pk_opts_console *c, const char *w, size_t n, struct pk_opts *o)
{
	unsigned long long x;

	if (pk_opts_is_word(w, n, "rfc3164")) {
		c->format = 1; /* PK_SYSLOG_RFC3164 */
	} else if (pk_opts_is_word(w, n, "rfc5424")) {
		c->format = 0;
	} else if (n >= 8 && !memcmp(w, "framing=", 8)) {
		if (pk_opts_is_word(w + 8, n - 8, "octet"))
			c->framing = 0 + 1; /* PK_SYSLOG_FRAMING_OCTET + 1 */
		else if (pk_opts_is_word(w + 8, n - 8, "lf"))
			c->framing = 1 + 1; /* PK_SYSLOG_FRAMING_LF + 1 */
		else
			return pk_opts_bad_console_option(o, w, n, "octet or lf");
	} else if (n >= 4 && !memcmp(w, "bom=", 4)) {
		if (pk_opts_is_word(w + 4, n - 4, "yes"))
			c->bom = 2;
		else if (pk_opts_is_word(w + 4, n - 4, "no"))
			c->bom = 1;
		else
			return pk_opts_bad_console_option(o, w, n, "yes or no");
	} else if (pk_opts_is_word(w, n, "tls") || (n >= 3 && !memcmp(w, "ca=", 3)) ||
		   (n >= 5 && !memcmp(w, "cert=", 5)) || (n >= 4 && !memcmp(w, "key=", 4)) ||
		   (n >= 5 && !memcmp(w, "peer=", 5))) {
		/* TLS's: kept, in any order, for the target (forward/tls.c) */
		size_t have = strlen(c->tls_opts);

		if (w[n - 1] == '=')
			return pk_opts_bad_console_option(o, w, n, "a file or a name");
		if (have + n + 2 > sizeof(c->tls_opts))
			return -EINVAL;
		c->tls_opts[have] = ',';
		memcpy(c->tls_opts + have + 1, w, n);
		c->tls_opts[have + 1 + n] = '\0';
	} else if (n >= 11 && !memcmp(w, "enterprise=", 11)) {
		if (pk_opts_parse_uint(w + 11, n - 11, 4294967295ull, &x) || x == 0)
			return pk_opts_bad_console_option(o, w, n, "1 to 4294967295");
		c->enterprise = (unsigned)x;
	} else {
		return 0;
	}
	return 1;
}

static const char forwarding[] = "the forwarding consoles";

/* K1: the built-in rows, then the registered ones. */
static struct pk_console_kind kinds[PK_CONSOLE_KINDS_MAX] = {
	{ .name = "stderr", .id = PK_OPTCON_STDERR, .flags = PK_KIND_TEXT, .create = stderr_create },
	{ .name = "fd", .id = PK_OPTCON_FD, .flags = PK_KIND_ARG | PK_KIND_TEXT,
	  .arg = fd_arg, .create = fd_create, .release = pk_console_fd_release },
	{ .name = "file", .id = PK_OPTCON_FILE, .flags = PK_KIND_ARG | PK_KIND_TEXT,
	  .option = file_option, .arg = file_arg, .create = file_create, .release = pk_console_fd_release },
	/* made by src/forward/console_net.c */
	{ .name = "journal", .id = PK_OPTCON_JOURNAL, .flags = PK_KIND_ARG | PK_KIND_ARG_OPTIONAL,
	  .arg = journal_arg, .feature = forwarding },
	{ .name = "syslog", .id = PK_OPTCON_SYSLOG, .flags = PK_KIND_ARG,
	  .option = syslog_option, .feature = forwarding },
};
static int nkinds = 5;

/* The features whose absence was said (once each, for the process's life). */
#define FEATURES_MAX 4
static const char *features_said[FEATURES_MAX];
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

int pk_console_kind_register(const struct pk_console_kind *k)
{
	if (!k || !k->name || !k->create)
		return -EINVAL;
	for (int i = 0; i < nkinds; i++) {
		if (strcmp(kinds[i].name, k->name))
			continue;
		if (kinds[i].create)
			return -EEXIST;
		kinds[i].create = k->create;
		kinds[i].release = k->release;
		kinds[i].strerror = k->strerror;
		kinds[i].check = k->check;
		return 0;
	}
	if (nkinds >= PK_CONSOLE_KINDS_MAX)
		return -ENOSPC;
	kinds[nkinds++] = *k;
	return 0;
}

static const struct pk_console_kind *find_kind(const char *name, size_t n)
{
	for (int i = 0; i < nkinds; i++)
		if (pk_opts_is_word(name, n, kinds[i].name))
			return &kinds[i];
	return NULL;
}

/* ------------------------------------------------------------ parsing -- */

/* K4: one ",WORD" every kind takes: 1 taken, 0 not one of these, or an error. */
static int common_option(struct pk_opts_console *c, const char *w, size_t n, struct pk_opts *o)
{
	unsigned long long x;

	if (pk_opts_is_word(w, n, "threaded")) {
		c->flags |= PK_CON_THREADED;
	} else if (pk_opts_is_word(w, n, "extended")) {
		c->flags |= PK_CON_EXTENDED;
	} else if (pk_opts_is_word(w, n, "lossless")) {
		c->flags |= PK_CON_LOSSLESS;
	} else if (pk_opts_is_word(w, n, "lossy")) {
		c->flags |= PK_CON_LOSSY;
	} else if (pk_opts_is_word(w, n, "json")) {
		c->json = 1;
	} else if (n >= 5 && !memcmp(w, "name=", 5)) {
		if (!pk_opts_valid_console_name(w + 5, n - 5))
			return -EINVAL;
		memcpy(c->name, w + 5, n - 5);
		c->name[n - 5] = '\0';
	} else if (n >= 9 && !memcmp(w, "loglevel=", 9)) {
		if (pk_opts_parse_uint(w + 9, n - 9, 15, &x))
			return -EINVAL;
		c->loglevel = (int)x;
	} else if (n >= 5 && !memcmp(w, "time=", 5)) {
		if (pk_opts_parse_time_style(w + 5, n - 5, &c->time_style))
			return pk_opts_bad_console_option(o, w, n, "kernel, iso, iso-utc or none");
	} else {
		return 0;
	}
	return 1;
}

/* Strips the options from the end of @v into @c; the length left. */
static long strip_options(const char *v, size_t n, const struct pk_console_kind *k, struct pk_opts_console *c,
			  struct pk_opts *o)
{
	for (;;) {
		const char *comma = NULL;

		for (size_t i = n; i > 0; i--) {
			if (v[i - 1] == ',') {
				comma = v + i - 1;
				break;
			}
		}
		if (!comma)
			return (long)n;

		size_t at = (size_t)(comma - v);
		int r = common_option(c, comma + 1, n - at - 1, o);

		if (r == 0 && k && k->option)
			r = k->option(c, comma + 1, n - at - 1, o);
		if (r < 0)
			return r;
		if (r == 0)
			return (long)n;
		n = at;
	}
}

int pk_console_spec_parse(const char *v, size_t n, struct pk_opts_console *c, struct pk_opts *o)
{
	size_t name_len = 0;

	memset(c, 0, sizeof(*c)); /* padding too: two parses compare equal */
	c->loglevel = -1;
	c->time_style = -1;
	while (name_len < n && v[name_len] != ':' && v[name_len] != ',')
		name_len++;

	const struct pk_console_kind *k = n && v[0] != '-' ? find_kind(v, name_len) : NULL;

	long left = strip_options(v, n, k, c, o);

	if (left < 0)
		return (int)left;
	n = (size_t)left;
	if (k) {
		c->kind = (enum pk_opts_console_kind)k->id;
		c->row = k;
		if (n != name_len && v[name_len] != ':')
			return -EINVAL;
		if (n == name_len ? (k->flags & PK_KIND_ARG) && !(k->flags & PK_KIND_ARG_OPTIONAL)
				  : !(k->flags & PK_KIND_ARG) || n == name_len + 1)
			return -EINVAL;

		const char *a = n > name_len ? v + name_len + 1 : v + n;
		size_t an = n > name_len ? n - name_len - 1 : 0;
		int err;

		if (k->arg)
			err = k->arg(c, a, an, o);
		else if (an >= sizeof(c->path))
			err = -ENAMETOOLONG;
		else
			memcpy(c->path, a, an), err = 0;
		if (err)
			return err;
	} else if (pk_opts_is_word(v, n, "none")) {
		c->kind = PK_OPTCON_NONE;
	} else if (n > 1 && v[0] == '-') {
		if (!pk_opts_valid_console_name(v + 1, n - 1) || c->flags || c->name[0] || c->loglevel >= 0)
			return -EINVAL;
		c->kind = PK_OPTCON_REMOVE;
		memcpy(c->name, v + 1, n - 1);
	} else {
		return -ENOENT;
	}

	int text = k && (k->flags & PK_KIND_TEXT);

	/* Only a file console is lossless unless told otherwise. */
	if ((c->flags & PK_CON_LOSSY) && c->kind != PK_OPTCON_FILE)
		return pk_opts_bad_console_option(o, "lossy", 5,
						  "for file: consoles only: the others are lossy unless ,lossless");
	if ((c->flags & PK_CON_LOSSY) && (c->flags & PK_CON_LOSSLESS))
		return pk_opts_bad_console_option(o, "lossy", 5, "not with ,lossless");

	/* JSON lines are the text consoles' form; a forwarder has its own,
	 * and an extended console's /dev/kmsg form is another one. */
	if (c->json && !text)
		return pk_opts_bad_console_option(o, "json", 4, "for stderr, fd: and file: consoles only");
	if (c->json && (c->flags & PK_CON_EXTENDED))
		return pk_opts_bad_console_option(o, "json", 4, "not with ,extended");
	/* Only the text consoles print a time prefix. */
	if (c->time_style >= 0 && !text) {
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%.*s: time= is for stderr, fd: and file: consoles, console ignored",
			     (int)(n > 100 ? 100 : n), v);
		return -EALREADY;
	}
	/* "none" takes no options. */
	if (c->kind == PK_OPTCON_NONE && (c->flags || c->name[0] || c->loglevel >= 0))
		return -EINVAL;
	return k && k->check ? k->check(c, o) : 0;
}

/* ------------------------------------------------------------- making -- */

/* K3 and the spec's level and style, from creation to registration. */
#define PENDING_MAX 64
static struct {
	struct console *con;
	int loglevel, time_style;
} pending[PENDING_MAX];
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static void pending_take(struct console *con, int *loglevel, int *time_style)
{
	*loglevel = *time_style = -1;
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < PENDING_MAX; i++) {
		if (pending[i].con == con) {
			*loglevel = pending[i].loglevel;
			*time_style = pending[i].time_style;
			pending[i].con = NULL;
		}
	}
	pthread_mutex_unlock(&pending_lock);
}

static int pending_put(struct console *con, int loglevel, int time_style)
{
	int err = -ENOSPC, dummy1, dummy2;

	pending_take(con, &dummy1, &dummy2);
	pthread_mutex_lock(&pending_lock);
	for (int i = 0; i < PENDING_MAX && err; i++) {
		if (!pending[i].con) {
			pending[i].con = con;
			pending[i].loglevel = loglevel;
			pending[i].time_style = time_style;
			err = 0;
		}
	}
	pthread_mutex_unlock(&pending_lock);
	return err;
}

void pk_console_kinds_registered(struct console *con)
{
	int loglevel, time_style;

	pending_take(con, &loglevel, &time_style);
	if (loglevel >= 0)
		pk_console_set_loglevel(con, loglevel);
	if (time_style >= 0)
		pk_console_set_time_style(con, time_style);
}

void pk_console_kinds_forget(struct console *con)
{
	int loglevel, time_style;

	pending_take(con, &loglevel, &time_style);
}

void pk_console_destroy(struct console *con)
{
	if (!con)
		return;
	pk_console_kinds_forget(con);
	if (con->release) /* K3; the stderr console has none */
		con->release(con);
}

void pk_console_spec_unusable(const struct pk_opts_console *c, int err, struct pk_opts *o)
{
	const struct pk_console_kind *k = c->row;

	if (!k)
		return;
	if (k->strerror)
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%s:%s unusable (%s), ignored", k->name, c->path,
			     k->strerror(err));
	else if (c->kind == PK_OPTCON_FD)
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=fd:%d unusable (error %d), ignored", c->fd, -err);
	else if (k->flags & PK_KIND_ARG)
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%s:%s unusable (error %d), ignored", k->name, c->path,
			     -err);
	else
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%s unusable (error %d), ignored", k->name, -err);
}

int pk_console_spec_create(struct console **conp, const struct pk_opts_console *c, struct pk_opts *o)
{
	const struct pk_console_kind *k = c->row;
	struct console *con = NULL;
	int err;

	if (!k)
		return -EINVAL; /* none, -NAME: no console to make */
	if (!k->create) {
		int said = 0, i;

		pthread_mutex_lock(&said_lock);
		for (i = 0; i < FEATURES_MAX && features_said[i]; i++)
			said |= features_said[i] == k->feature;
		if (!said && i < FEATURES_MAX)
			features_said[i] = k->feature;
		pthread_mutex_unlock(&said_lock);
		if (!said)
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%s: %s not linked into this program "
				     "(see pk_printk_link_all_options()), ignored",
				     k->name, k->feature ? k->feature : "its kind");
		return -ENOENT;
	}
	err = k->create(&con, c);
	if (!err && k->release)
		con->release = k->release; /* K3 */
	if (!err && c->json) {
		err = pk_console_fd_set_json(con);
		if (err && con != pk_console_stderr())
			pk_console_destroy(con);
	}
	if (!err) {
		con->flags |= c->flags;
		if (c->name[0])
			pk_fmt_snprintf(con->name, sizeof(con->name), "%s", c->name);
		if ((c->loglevel >= 0 || c->time_style >= 0) &&
		    (err = pending_put(con, c->loglevel, c->time_style)) && con != pk_console_stderr())
			pk_console_destroy(con);
	}
	if (err)
		return err;
	*conp = con;
	return 0;
}

/* K1: options.c parses console= values through this file's table. */
__attribute__((constructor(PK_CONSOLE_KIND_PRIORITY))) static void provide_parser(void)
{
	pk_opts_console_parser = pk_console_spec_parse;
}
