// SPDX-License-Identifier: MIT
/*
 * options.c - parse PRINTK_OPTS.
 *
 * Owns: the table of known options (pk_opts_table), their "not given"
 * defaults (pk_opts_init), the syntax and range of every value, and the one
 * way a warning is recorded (pk_opts_warn). It describes what was asked for
 * and never acts, so it can run before the log exists and be tested alone;
 * src/startup/setup.c applies the result.
 *
 * Syntax as the kernel command line: words separated by white space, each
 * "name" or "name=value".
 *
 *   log_buf_len=N[KMG]   size of the log (power of two, rounded up)
 *   loglevel=N           console_loglevel (0..15)
 *   quiet / debug        console_loglevel 4 / 10
 *   ignore_loglevel      print every level on the consoles
 *   printk.time=T        time prefix: kernel, iso, iso-utc or none (or
 *                        1/0, y/n, Y/N, on/off: kernel/none)
 *   printk.caller=B      caller prefix
 *   console=C            stderr, none, fd:N or file:PATH, each optionally
 *                        followed by ,threaded ,extended ,lossless ,name=NAME
 *                        ,json (JSON lines, json_format.c)
 *                        ,loglevel=N ,time=T (and for files ,size=N[KMG] ,keep=N:
 *                        rotation); or the forwarders journal[:PATH] and
 *                        syslog:TARGET[,rfc5424|,rfc3164][,bom=yes|no]
 *                        [,framing=octet|lf] (tcp: only), and TLS's
 *                        [,tls][,ca=F][,cert=F][,key=F][,peer=NAME]
 *                        (tls:, relp:; kept with the target, which
 *                        console_net.c parses); or -NAME, which
 *                        removes the console of that name; repeatable
 *   log_buf_file=PATH    keep the log in a file shared with other processes
 *   log_buf_file_group=B a new log file is group-readable (0640)
 *   log_buf_file_sync=B  msync the log file at exit and on panic
 *   printk.devkmsg=M     on, off or ratelimit: what kmsg writers may do
 *   crash_dump=B         install the fatal-signal handler
 *   console_drain_ms=N   what exit waits for printer threads (0..600000)
 *   no_hash_pointers     %p prints addresses instead of their hashes
 *   lossless_timeout_ms=N how long a lossless console may print nothing
 *                        while a printk waits for it (0..3600000)
 *   dyndbg="QUERY"       dynamic debug queries (src/optional/dyndbg.c)
 *
 * A value may be quoted, "...", to hold white space; the quotes are
 * dropped (the kernel's next_arg()).
 *
 * Invariants:
 *  - a new option is one row in pk_opts_table and one field in struct
 *    pk_opts; its "not given" value follows from the row's kind, so no
 *    field can be left at 0 by mistake;
 *  - a word is applied whole or not at all: a rejected value leaves the
 *    field as it was and adds one warning, "unknown option" for a name not
 *    in the table, "bad console option" for a forwarder's option whose
 *    value is not one it takes or a time= that names no style (or
 *    "framing= is for tcp: targets only", "time= is for stderr, fd: and
 *    file: consoles"), "bad value in" for anything else;
 *  - nothing here allocates, locks or formats with the C library (see
 *    options.h for the calling context).
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <printk/console.h>
#include <printk/forward.h>

#include "log/options.h"

/* Largest log_buf_len= accepted here; setup.c narrows it to what it can use. */
#define LOG_BUF_LEN_MAX (1ll << 40)
/* Largest console=fd:N. */
#define CONSOLE_FD_MAX (1ll << 30)

static const char *const devkmsg_choices[] = { "on", "off", "ratelimit", NULL };

#define FIELD(f) .off = offsetof(struct pk_opts, f), .size = sizeof(((struct pk_opts *)0)->f)

const struct pk_opt_def pk_opts_table[] = {
	{ "log_buf_len", PK_OPT_SIZE, .min = 0, .max = LOG_BUF_LEN_MAX, FIELD(log_buf_len) },
	{ "loglevel", PK_OPT_UINT, .min = 0, .max = 15, FIELD(console_loglevel) },
	{ "quiet", PK_OPT_FLAG, .min = 4, .max = 4, FIELD(console_loglevel) },
	{ "debug", PK_OPT_FLAG, .min = 10, .max = 10, FIELD(console_loglevel) },
	{ "ignore_loglevel", PK_OPT_BOOL, .bare_ok = 1, .max = 1, FIELD(ignore_loglevel) },
	{ "printk.ignore_loglevel", PK_OPT_BOOL, .bare_ok = 1, .max = 1, FIELD(ignore_loglevel) },
	{ "printk.time", PK_OPT_TIME, FIELD(printk_time) },
	{ "printk.caller", PK_OPT_BOOL, .max = 1, FIELD(printk_caller) },
	{ "console", PK_OPT_CONSOLE, .min = 0, .max = CONSOLE_FD_MAX, FIELD(consoles) },
	{ "log_buf_file", PK_OPT_STRING, FIELD(log_buf_file) },
	{ "log_buf_file_group", PK_OPT_BOOL, .max = 1, FIELD(log_buf_file_group) },
	{ "log_buf_file_sync", PK_OPT_BOOL, .max = 1, FIELD(log_buf_file_sync) },
	{ "printk.devkmsg", PK_OPT_CHOICE, .choices = devkmsg_choices, FIELD(devkmsg) },
	{ "crash_dump", PK_OPT_BOOL, .max = 1, FIELD(crash_dump) },
	{ "console_drain_ms", PK_OPT_UINT, .min = 0, .max = 600000, FIELD(console_drain_ms) },
	{ "no_hash_pointers", PK_OPT_FLAG, .min = 1, .max = 1, FIELD(no_hash_pointers) },
	{ "lossless_timeout_ms", PK_OPT_UINT, .min = 0, .max = 3600000, FIELD(lossless_timeout_ms) },
	{ "dyndbg", PK_OPT_STRING, FIELD(dyndbg) },
};
const size_t pk_opts_table_len = sizeof(pk_opts_table) / sizeof(pk_opts_table[0]);

#undef FIELD

static int *int_field(struct pk_opts *o, const struct pk_opt_def *d)
{
	return (int *)(void *)((char *)o + d->off);
}

static long long *ll_field(struct pk_opts *o, const struct pk_opt_def *d)
{
	return (long long *)(void *)((char *)o + d->off);
}

static char *str_field(struct pk_opts *o, const struct pk_opt_def *d)
{
	return (char *)o + d->off;
}

void pk_opts_init(struct pk_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < pk_opts_table_len; i++) {
		const struct pk_opt_def *d = &pk_opts_table[i];

		switch (d->kind) {
		case PK_OPT_FLAG:
		case PK_OPT_BOOL:
		case PK_OPT_UINT:
		case PK_OPT_TIME:
			*int_field(o, d) = -1;
			break;
		case PK_OPT_SIZE:
			*ll_field(o, d) = -1;
			break;
		case PK_OPT_STRING:
		case PK_OPT_CHOICE:
			str_field(o, d)[0] = '\0';
			break;
		case PK_OPT_CONSOLE:
			o->nconsoles = 0;
			break;
		}
	}
}

void pk_opts_warn(struct pk_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->nwarnings >= PK_OPTS_MAX_WARNINGS) {
		o->warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	pk_fmt_vsnprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]), fmt, ap);
	va_end(ap);
}

static int is_word(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !strncmp(s, lit, n);
}

static int parse_bool(const char *v, size_t n, int *out)
{
	static const char *const yes[] = { "1", "y", "Y", "on" };
	static const char *const no[] = { "0", "n", "N", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (is_word(v, n, yes[i]) || is_word(v, n, no[i])) {
			*out = is_word(v, n, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

/* A time style's name (enum pk_time_style of <printk/printk.h>). */
static int parse_time_style(const char *v, size_t n, int *out)
{
	static const char *const names[] = { "none", "kernel", "iso", "iso-utc" };

	for (int i = 0; i < 4; i++) {
		if (is_word(v, n, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal digits only (no sign, no white space), at most @max. */
static int parse_uint(const char *v, size_t n, unsigned long long max, unsigned long long *out)
{
	unsigned long long x = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		x = x * 10 + (unsigned)(v[i] - '0');
		if (x > max)
			return -ERANGE;
	}
	*out = x;
	return 0;
}

/* Like memparse() in the kernel's lib/cmdline.c, but decimal only and no suffix past g. */
static int parse_size(const char *v, size_t n, unsigned long long min, unsigned long long max,
		      long long *out)
{
	unsigned long long x, mult = 1;

	if (n > 0) {
		switch (v[n - 1]) {
		case 'k': case 'K': mult = 1ull << 10; n--; break;
		case 'm': case 'M': mult = 1ull << 20; n--; break;
		case 'g': case 'G': mult = 1ull << 30; n--; break;
		}
	}
	/* Compared before multiplying: the product cannot wrap. */
	if (parse_uint(v, n, max, &x) || x > max / mult || x * mult < min)
		return -EINVAL;
	*out = (long long)(x * mult);
	return 0;
}

/* A console name: what pk_console_find() looks for; kept to characters
 * that need no quoting in PRINTK_OPTS, a shell or a notice. */
static int valid_console_name(const char *v, size_t n)
{
	if (n == 0 || n >= PK_OPTS_CONSOLE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9') ||
		      v[i] == '_' || v[i] == '-' || v[i] == '.'))
			return 0;
	return 1;
}

/* A bad value of a console option that names itself: one warning that says
 * which option and what it takes; the word is then ignored with no other
 * warning (pk_opts_parse() knows -EALREADY). */
static int bad_console_option(struct pk_opts *o, const char *w, size_t n, const char *takes)
{
	pk_opts_warn(o, PK_OPTS_WARN_PREFIX "bad console option '%.*s' (%s), console ignored",
		     (int)(n > 60 ? 60 : n), w, takes);
	return -EALREADY;
}

/* One trailing ",WORD" of a console= value. Returns 1 if it was one of the
 * console options (stored in @c), 0 if it is not (it belongs to the path),
 * -EINVAL for a known option with a bad value (-EALREADY: and it said so). */
static int console_suffix(const char *w, size_t n, int is_file, int is_syslog, struct pk_opts_console *c,
			  struct pk_opts *o)
{
	unsigned long long x;

	if (is_word(w, n, "threaded")) {
		c->flags |= PK_CON_THREADED;
	} else if (is_word(w, n, "extended")) {
		c->flags |= PK_CON_EXTENDED;
	} else if (is_word(w, n, "lossless")) {
		c->flags |= PK_CON_LOSSLESS;
	} else if (is_word(w, n, "json")) {
		c->json = 1;
	} else if (is_syslog && is_word(w, n, "rfc3164")) {
		c->format = PK_SYSLOG_RFC3164;
	} else if (is_syslog && is_word(w, n, "rfc5424")) {
		c->format = 0;
	} else if (is_syslog && n >= 8 && !memcmp(w, "framing=", 8)) {
		if (is_word(w + 8, n - 8, "octet"))
			c->framing = PK_SYSLOG_FRAMING_OCTET + 1;
		else if (is_word(w + 8, n - 8, "lf"))
			c->framing = PK_SYSLOG_FRAMING_LF + 1;
		else
			return bad_console_option(o, w, n, "octet or lf");
	} else if (is_syslog && (is_word(w, n, "tls") || (n >= 3 && !memcmp(w, "ca=", 3)) ||
				 (n >= 5 && !memcmp(w, "cert=", 5)) || (n >= 4 && !memcmp(w, "key=", 4)) ||
				 (n >= 5 && !memcmp(w, "peer=", 5)))) {
		/* TLS's: kept, in any order, for the target (console_net.c) */
		size_t have = strlen(c->tls_opts);

		if (w[n - 1] == '=')
			return bad_console_option(o, w, n, "a file or a name");
		if (have + n + 2 > sizeof(c->tls_opts))
			return -EINVAL;
		c->tls_opts[have] = ',';
		memcpy(c->tls_opts + have + 1, w, n);
		c->tls_opts[have + 1 + n] = '\0';
	} else if (is_syslog && n >= 4 && !memcmp(w, "bom=", 4)) {
		if (is_word(w + 4, n - 4, "yes"))
			c->bom = 2;
		else if (is_word(w + 4, n - 4, "no"))
			c->bom = 1;
		else
			return bad_console_option(o, w, n, "yes or no");
	} else if (n >= 5 && !memcmp(w, "name=", 5)) {
		if (!valid_console_name(w + 5, n - 5))
			return -EINVAL;
		memcpy(c->name, w + 5, n - 5);
		c->name[n - 5] = '\0';
	} else if (n >= 9 && !memcmp(w, "loglevel=", 9)) {
		if (parse_uint(w + 9, n - 9, 15, &x))
			return -EINVAL;
		c->loglevel = (int)x;
	} else if (n >= 5 && !memcmp(w, "time=", 5)) {
		if (parse_time_style(w + 5, n - 5, &c->time_style))
			return bad_console_option(o, w, n, "kernel, iso, iso-utc or none");
	} else if (is_file && n >= 5 && !memcmp(w, "size=", 5)) {
		if (parse_size(w + 5, n - 5, 1, LOG_BUF_LEN_MAX, &c->rotate_size))
			return -EINVAL;
	} else if (is_file && n >= 5 && !memcmp(w, "keep=", 5)) {
		if (parse_uint(w + 5, n - 5, PK_OPTS_ROTATE_KEEP_MAX, &x) || x < 1)
			return -EINVAL;
		c->rotate_keep = (int)x;
	} else {
		return 0;
	}
	return 1;
}

/* Strips the console options (",threaded", ",extended", ",lossless", ",name=N",
 * ",loglevel=N"; for files ",size=N" and ",keep=N"; for syslog the format)
 * from the end of @v into @c: a path may hold commas before them. Returns
 * the length of what is left, or -EINVAL. */
static long console_suffixes(const char *v, size_t n, struct pk_opts_console *c, struct pk_opts *o)
{
	int is_file = n > 5 && !strncmp(v, "file:", 5);
	int is_syslog = n > 7 && !strncmp(v, "syslog:", 7);

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
		int r = console_suffix(comma + 1, n - at - 1, is_file, is_syslog, c, o);

		if (r < 0)
			return r;
		if (r == 0)
			return (long)n;
		n = at;
	}
}

static int parse_console(const char *v, size_t n, unsigned long long fd_max, struct pk_opts *o)
{
	struct pk_opts_console c;
	unsigned long long fd;

	memset(&c, 0, sizeof(c)); /* padding too: two parses compare equal */
	c.loglevel = -1;
	c.time_style = -1;

	long head = console_suffixes(v, n, &c, o);

	if (head < 0)
		return (int)head;
	n = (size_t)head;
	if (c.rotate_keep && !c.rotate_size)
		return -EINVAL; /* keep= means nothing without size= */
	if (c.rotate_size && !c.rotate_keep)
		c.rotate_keep = PK_OPTS_ROTATE_KEEP_DEFAULT;

	if (is_word(v, n, "stderr")) {
		c.kind = PK_OPTCON_STDERR;
	} else if (is_word(v, n, "none")) {
		c.kind = PK_OPTCON_NONE;
	} else if (n > 3 && !strncmp(v, "fd:", 3)) {
		if (parse_uint(v + 3, n - 3, fd_max, &fd))
			return -EINVAL;
		c.kind = PK_OPTCON_FD;
		c.fd = (int)fd;
	} else if (n > 5 && !strncmp(v, "file:", 5)) {
		if (n - 5 >= sizeof(c.path))
			return -ENAMETOOLONG;
		c.kind = PK_OPTCON_FILE;
		memcpy(c.path, v + 5, n - 5);
	} else if (is_word(v, n, "journal") || (n > 8 && !strncmp(v, "journal:", 8))) {
		if (n > 8 && n - 8 >= sizeof(c.path))
			return -ENAMETOOLONG;
		c.kind = PK_OPTCON_JOURNAL;
		if (n > 8)
			memcpy(c.path, v + 8, n - 8);
	} else if (n > 7 && !strncmp(v, "syslog:", 7)) {
		/* The forwarders print from a thread of their own anyway. */
		if (n - 7 >= sizeof(c.path))
			return -ENAMETOOLONG;
		c.kind = PK_OPTCON_SYSLOG;
		memcpy(c.path, v + 7, n - 7);
		if (c.framing && strncmp(c.path, "tcp:", 4)) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=syslog:%.100s: framing= is for tcp: targets only, console ignored",
				     c.path);
			return -EALREADY;
		}
		if (c.tls_opts[0] && strncmp(c.path, "tls:", 4) && strncmp(c.path, "relp:", 5)) {
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=syslog:%.100s: TLS options are for tls: and relp: targets only, console ignored",
				     c.path);
			return -EALREADY;
		}
		if (n - 7 + strlen(c.tls_opts) >= sizeof(c.path))
			return -ENAMETOOLONG;
		memcpy(c.path + n - 7, c.tls_opts, strlen(c.tls_opts) + 1);
	} else if (n > 1 && v[0] == '-') {
		if (!valid_console_name(v + 1, n - 1) || c.flags || c.name[0] || c.loglevel >= 0)
			return -EINVAL;
		c.kind = PK_OPTCON_REMOVE;
		memcpy(c.name, v + 1, n - 1);
	} else {
		return -EINVAL;
	}
	/* JSON lines are the fd consoles' form; a forwarder has its own, and
	 * an extended console's /dev/kmsg form is another one. */
	if (c.json && c.kind != PK_OPTCON_STDERR && c.kind != PK_OPTCON_FD && c.kind != PK_OPTCON_FILE)
		return bad_console_option(o, "json", 4, "for stderr, fd: and file: consoles only");
	if (c.json && (c.flags & PK_CON_EXTENDED))
		return bad_console_option(o, "json", 4, "not with ,extended");
	/* Only the text consoles print a time prefix. */
	if (c.time_style >= 0 && c.kind != PK_OPTCON_STDERR && c.kind != PK_OPTCON_FD && c.kind != PK_OPTCON_FILE) {
		pk_opts_warn(o, PK_OPTS_WARN_PREFIX "console=%.*s: time= is for stderr, fd: and file: consoles, console ignored",
			     (int)(n > 100 ? 100 : n), v);
		return -EALREADY;
	}
	/* "none" and "stderr" take no options but a level (and stderr a name). */
	if (c.kind == PK_OPTCON_NONE && (c.flags || c.name[0] || c.loglevel >= 0))
		return -EINVAL;
	if (o->nconsoles >= PK_OPTS_MAX_CONSOLES)
		return -ENOSPC;
	o->consoles[o->nconsoles++] = c;
	return 0;
}

static int store_string(const char *v, size_t n, char *field, size_t size)
{
	if (n == 0 || n >= size)
		return -EINVAL;
	memcpy(field, v, n);
	field[n] = '\0';
	return 0;
}

/* Apply one word to the field of row @d; @v is NULL for a bare word. */
static int apply_row(struct pk_opts *o, const struct pk_opt_def *d, const char *v, size_t vlen)
{
	unsigned long long x;
	int b;

	if (!v) {
		if (d->kind == PK_OPT_FLAG) {
			*int_field(o, d) = (int)d->min;
			return 0;
		}
		if (d->kind == PK_OPT_BOOL && d->bare_ok) {
			*int_field(o, d) = 1;
			return 0;
		}
		return -EINVAL;
	}
	switch (d->kind) {
	case PK_OPT_FLAG:
		return -EINVAL;
	case PK_OPT_BOOL:
		if (parse_bool(v, vlen, &b))
			return -EINVAL;
		*int_field(o, d) = b;
		return 0;
	case PK_OPT_UINT:
		if (parse_uint(v, vlen, (unsigned long long)d->max, &x) ||
		    x < (unsigned long long)d->min)
			return -EINVAL;
		*int_field(o, d) = (int)x;
		return 0;
	case PK_OPT_SIZE:
		return parse_size(v, vlen, (unsigned long long)d->min, (unsigned long long)d->max,
				  ll_field(o, d));
	case PK_OPT_STRING:
		return store_string(v, vlen, str_field(o, d), d->size);
	case PK_OPT_CHOICE:
		for (const char *const *c = d->choices; *c; c++)
			if (is_word(v, vlen, *c))
				return store_string(v, vlen, str_field(o, d), d->size);
		return -EINVAL;
	case PK_OPT_CONSOLE:
		return parse_console(v, vlen, (unsigned long long)d->max, o);
	case PK_OPT_TIME:
		if (!parse_bool(v, vlen, &b)) {
			*int_field(o, d) = b; /* PK_TIME_NONE, PK_TIME_KERNEL */
			return 0;
		}
		return parse_time_style(v, vlen, int_field(o, d));
	}
	return -EINVAL;
}

static const struct pk_opt_def *find_row(const char *name, size_t nlen)
{
	for (size_t i = 0; i < pk_opts_table_len; i++)
		if (is_word(name, nlen, pk_opts_table[i].name))
			return &pk_opts_table[i];
	return NULL;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

int pk_opts_parse(const char *s, struct pk_opts *o)
{
	pk_opts_init(o);
	if (!s)
		return 0;
	while (*s) {
		while (is_space(*s))
			s++;
		if (!*s)
			break;

		const char *word = s;

		for (int quoted = 0; *s && (quoted || !is_space(*s)); s++)
			quoted ^= *s == '"';

		size_t wlen = (size_t)(s - word);
		const char *eq = memchr(word, '=', wlen);
		size_t nlen = eq ? (size_t)(eq - word) : wlen;
		const struct pk_opt_def *d = find_row(word, nlen);
		const char *why = NULL;
		int r;
		const char *v = eq ? eq + 1 : NULL;
		size_t vlen = eq ? wlen - nlen - 1 : 0;

		if (v && vlen && *v == '"') {
			v++;
			vlen -= 1 + (vlen > 1 && v[vlen - 2] == '"');
		}
		if (!d)
			why = "unknown option";
		else if ((r = apply_row(o, d, v, vlen)) && r != -EALREADY)
			why = "bad value in";
		/* Up to 100 bytes of the word: a warning stays one readable line. */
		if (why)
			pk_opts_warn(o, PK_OPTS_WARN_PREFIX "%s '%.*s', ignored", why,
				     (int)(wlen > 100 ? 100 : wlen), word);
	}
	return o->nwarnings ? -EINVAL : 0;
}
