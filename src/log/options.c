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
 *   printk.lanes=B       lines no console prints go into per-thread lanes
 *                        of the log (docs/lanes.md; on by default); a log
 *                        of 32 KiB or more made with it on has the pool
 *   printk.lane_clock=C  fast (the default) or ordered: whether a lane
 *                        line's TSC read is fenced (docs/clock.md)
 *   console=C            a console spec KIND[:ARG][,OPTION...] (stderr,
 *                        fd:N, file:PATH, journal[:PATH], syslog:TARGET ...),
 *                        none, or -NAME, which removes the console of that
 *                        name; repeatable. The kinds, their arguments and
 *                        options are the console layer's table
 *                        (src/console/console_kinds.c), which parses the
 *                        value through pk_opts_console_parser
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
 *   printk.module=M:L[,M:L...] module levels (modlevel.c, docs/levels.md)
 *   printk.srcloc=B      CODE_FILE=/CODE_LINE=/CODE_FUNC= with each record
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

#include "log/modlevel.h"
#include "log/options.h"

/* Largest log_buf_len= accepted here; setup.c narrows it to what it can use. */
#define LOG_BUF_LEN_MAX PK_OPTS_SIZE_MAX

static const char *const devkmsg_choices[] = { "on", "off", "ratelimit", NULL };
static const char *const lane_clock_choices[] = { "fast", "ordered", NULL };

#define FIELD(f) .off = offsetof(struct pk_opts, f), .size = sizeof(((struct pk_opts *)0)->f)

const struct pk_opt_def pk_opts_table[] = {
	{ "log_buf_len", PK_OPT_SIZE, .min = 0, .max = LOG_BUF_LEN_MAX, FIELD(log_buf_len) },
	{ "loglevel", PK_OPT_UINT, .min = 0, .max = 15, FIELD(console_loglevel) },
	{ "quiet", PK_OPT_FLAG, .min = 4, .max = 4, FIELD(console_loglevel) },
	{ "debug", PK_OPT_FLAG, .min = 10, .max = 10, FIELD(console_loglevel) },
	{ "ignore_loglevel", PK_OPT_BOOL, .bare_ok = 1, .max = 1, FIELD(ignore_loglevel) },
	{ "printk.ignore_loglevel", PK_OPT_BOOL, .bare_ok = 1, .max = 1, FIELD(ignore_loglevel) },
	{ "printk.lanes", PK_OPT_BOOL, .bare_ok = 1, .max = 1, FIELD(lanes) },
	{ "printk.lane_clock", PK_OPT_CHOICE, .choices = lane_clock_choices, FIELD(lane_clock) },
	{ "printk.time", PK_OPT_TIME, FIELD(printk_time) },
	{ "printk.caller", PK_OPT_BOOL, .max = 1, FIELD(printk_caller) },
	{ "console", PK_OPT_CONSOLE, .min = 0, .max = PK_OPTS_CONSOLE_FD_MAX, FIELD(consoles) },
	{ "log_buf_file", PK_OPT_STRING, FIELD(log_buf_file) },
	{ "log_buf_file_group", PK_OPT_BOOL, .max = 1, FIELD(log_buf_file_group) },
	{ "log_buf_file_sync", PK_OPT_BOOL, .max = 1, FIELD(log_buf_file_sync) },
	{ "printk.devkmsg", PK_OPT_CHOICE, .choices = devkmsg_choices, FIELD(devkmsg) },
	{ "crash_dump", PK_OPT_BOOL, .max = 1, FIELD(crash_dump) },
	{ "console_drain_ms", PK_OPT_UINT, .min = 0, .max = 600000, FIELD(console_drain_ms) },
	{ "no_hash_pointers", PK_OPT_FLAG, .min = 1, .max = 1, FIELD(no_hash_pointers) },
	{ "lossless_timeout_ms", PK_OPT_UINT, .min = 0, .max = 3600000, FIELD(lossless_timeout_ms) },
	{ "dyndbg", PK_OPT_STRING, FIELD(dyndbg) },
	{ "printk.module", PK_OPT_MODULES, FIELD(modules) },
	{ "printk.srcloc", PK_OPT_BOOL, .max = 1, FIELD(srcloc) },
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
		case PK_OPT_MODULES:
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

int pk_opts_is_word(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !strncmp(s, lit, n);
}

static int parse_bool(const char *v, size_t n, int *out)
{
	static const char *const yes[] = { "1", "y", "Y", "on" };
	static const char *const no[] = { "0", "n", "N", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (pk_opts_is_word(v, n, yes[i]) || pk_opts_is_word(v, n, no[i])) {
			*out = pk_opts_is_word(v, n, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

/* A time style's name (enum pk_time_style of <printk/printk.h>). */
int pk_opts_parse_time_style(const char *v, size_t n, int *out)
{
	static const char *const names[] = { "none", "kernel", "iso", "iso-utc" };

	for (int i = 0; i < 4; i++) {
		if (pk_opts_is_word(v, n, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal digits only (no sign, no white space), at most @max. */
int pk_opts_parse_uint(const char *v, size_t n, unsigned long long max, unsigned long long *out)
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
int pk_opts_parse_size(const char *v, size_t n, unsigned long long min, unsigned long long max,
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
	if (pk_opts_parse_uint(v, n, max, &x) || x > max / mult || x * mult < min)
		return -EINVAL;
	*out = (long long)(x * mult);
	return 0;
}

int (*pk_opts_console_parser)(const char *v, size_t n, struct pk_opts_console *c, struct pk_opts *o);

/* A console name: what pk_console_find() looks for; kept to characters
 * that need no quoting in PRINTK_OPTS, a shell or a notice. */
int pk_opts_valid_console_name(const char *v, size_t n)
{
	if (n == 0 || n >= PK_OPTS_CONSOLE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9') ||
		      v[i] == '_' || v[i] == '-' || v[i] == '.'))
			return 0;
	return 1;
}

/* The word is then ignored with no other warning (pk_opts_parse() knows
 * -EALREADY). */
int pk_opts_bad_console_option(struct pk_opts *o, const char *w, size_t n, const char *takes)
{
	pk_opts_warn(o, PK_OPTS_WARN_PREFIX "bad console option '%.*s' (%s), console ignored",
		     (int)(n > 60 ? 60 : n), w, takes);
	return -EALREADY;
}

/* A console= value: the console layer's table of kinds parses it
 * (console_kinds.c), appended to consoles[] when it is accepted. */
static int parse_console(const char *v, size_t n, struct pk_opts *o)
{
	struct pk_opts_console c;
	int err;

	if (!pk_opts_console_parser)
		return -EINVAL;
	if ((err = pk_opts_console_parser(v, n, &c, o)))
		return err;
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
		if (pk_opts_parse_uint(v, vlen, (unsigned long long)d->max, &x) ||
		    x < (unsigned long long)d->min)
			return -EINVAL;
		*int_field(o, d) = (int)x;
		return 0;
	case PK_OPT_SIZE:
		return pk_opts_parse_size(v, vlen, (unsigned long long)d->min, (unsigned long long)d->max,
				  ll_field(o, d));
	case PK_OPT_STRING:
		return store_string(v, vlen, str_field(o, d), d->size);
	case PK_OPT_CHOICE:
		for (const char *const *c = d->choices; *c; c++)
			if (pk_opts_is_word(v, vlen, *c))
				return store_string(v, vlen, str_field(o, d), d->size);
		return -EINVAL;
	case PK_OPT_CONSOLE:
		return parse_console(v, vlen, o);
	case PK_OPT_MODULES:
		if (pk_modlevel_parse_list(v, vlen, 0))
			return -EINVAL;
		return store_string(v, vlen, str_field(o, d), d->size);
	case PK_OPT_TIME:
		if (!parse_bool(v, vlen, &b)) {
			*int_field(o, d) = b; /* PK_TIME_NONE, PK_TIME_KERNEL */
			return 0;
		}
		return pk_opts_parse_time_style(v, vlen, int_field(o, d));
	}
	return -EINVAL;
}

static const struct pk_opt_def *find_row(const char *name, size_t nlen)
{
	for (size_t i = 0; i < pk_opts_table_len; i++)
		if (pk_opts_is_word(name, nlen, pk_opts_table[i].name))
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
