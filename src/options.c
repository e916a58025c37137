// SPDX-License-Identifier: MIT
/*
 * options.c - parse PRINTK_OPTS.
 *
 * Syntax as the kernel command line: words separated by white space, each
 * "name" or "name=value". Known names are a table, like the kernel's
 * sysctl.c; the parser only describes what was asked for and never acts, so
 * it can run before the log exists and be tested on its own.
 *
 *   log_buf_len=N[KMG]   size of the log (power of two, rounded up)
 *   loglevel=N           console_loglevel (0..15)
 *   quiet / debug        console_loglevel 4 / 10
 *   ignore_loglevel      print every level on the consoles
 *   printk.time=B        timestamp prefix (1/0, y/n, Y/N, on/off)
 *   printk.caller=B      caller prefix
 *   console=C            stderr, none, fd:N or file:PATH; repeatable
 *   log_buf_file=PATH    keep the log in a file shared with other processes
 *   log_buf_file_group=B a new log file is group-readable (0640)
 *   log_buf_file_sync=B  msync the log file at exit and on panic
 *   printk.devkmsg=M     on, off or ratelimit: what kmsg writers may do
 *   crash_dump=B         install the fatal-signal handler
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static void warn(struct pk_opts *o, const char *word, size_t wlen, const char *why)
{
	if (o->nwarnings >= PK_OPTS_MAX_WARNINGS)
		return;
	snprintf(o->warnings[o->nwarnings++], sizeof(o->warnings[0]),
		 "printk: PRINTK_OPTS: %s '%.*s', ignored", why, (int)(wlen > 100 ? 100 : wlen), word);
}

static int parse_bool(const char *v, size_t n, int *out)
{
	if ((n == 1 && (*v == '1' || *v == 'y' || *v == 'Y')) || (n == 2 && !strncmp(v, "on", 2)))
		*out = 1;
	else if ((n == 1 && (*v == '0' || *v == 'n' || *v == 'N')) || (n == 3 && !strncmp(v, "off", 3)))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

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

static int parse_size(const char *v, size_t n, long long *out)
{
	unsigned long long x, mult = 1;

	if (n > 0) {
		switch (v[n - 1]) {
		case 'k': case 'K': mult = 1ull << 10; n--; break;
		case 'm': case 'M': mult = 1ull << 20; n--; break;
		case 'g': case 'G': mult = 1ull << 30; n--; break;
		}
	}
	if (parse_uint(v, n, 1ull << 40, &x) || x > (1ull << 40) / mult)
		return -EINVAL;
	*out = (long long)(x * mult);
	return 0;
}

static int parse_console(const char *v, size_t n, struct pk_opts *o)
{
	struct pk_opts_console c = { 0 };
	unsigned long long fd;

	if (n == 6 && !strncmp(v, "stderr", 6)) {
		c.kind = PK_OPTCON_STDERR;
	} else if (n == 4 && !strncmp(v, "none", 4)) {
		c.kind = PK_OPTCON_NONE;
	} else if (n > 3 && !strncmp(v, "fd:", 3)) {
		if (parse_uint(v + 3, n - 3, 1u << 30, &fd))
			return -EINVAL;
		c.kind = PK_OPTCON_FD;
		c.fd = (int)fd;
	} else if (n > 5 && !strncmp(v, "file:", 5)) {
		if (n - 5 >= sizeof(c.path))
			return -ENAMETOOLONG;
		c.kind = PK_OPTCON_FILE;
		memcpy(c.path, v + 5, n - 5);
	} else {
		return -EINVAL;
	}
	if (o->nconsoles >= PK_OPTS_MAX_CONSOLES)
		return -ENOSPC;
	o->consoles[o->nconsoles++] = c;
	return 0;
}

/* One option; @v is NULL for a bare word. -ENOENT: no such option. */
static int apply_word(struct pk_opts *o, const char *name, size_t nlen, const char *v, size_t vlen)
{
	unsigned long long x;
	int b;

#define IS(lit) (nlen == sizeof(lit) - 1 && !strncmp(name, lit, nlen))
#define BOOL_OPT(field)                                        \
	do {                                                   \
		if (!v || parse_bool(v, vlen, &b))             \
			return -EINVAL;                        \
		o->field = b;                                  \
		return 0;                                      \
	} while (0)
	if (IS("log_buf_len"))
		return v ? parse_size(v, vlen, &o->log_buf_len) : -EINVAL;
	if (IS("loglevel")) {
		if (!v || parse_uint(v, vlen, 15, &x))
			return -EINVAL;
		o->console_loglevel = (int)x;
		return 0;
	}
	if (IS("quiet") || IS("debug")) {
		if (v)
			return -EINVAL;
		o->console_loglevel = IS("quiet") ? 4 : 10;
		return 0;
	}
	if (IS("ignore_loglevel") || IS("printk.ignore_loglevel")) {
		if (!v) {
			o->ignore_loglevel = 1;
			return 0;
		}
		BOOL_OPT(ignore_loglevel);
	}
	if (IS("printk.time"))
		BOOL_OPT(printk_time);
	if (IS("printk.caller"))
		BOOL_OPT(printk_caller);
	if (IS("console"))
		return v ? parse_console(v, vlen, o) : -EINVAL;
	if (IS("log_buf_file")) {
		if (!v || vlen == 0 || vlen >= sizeof(o->log_buf_file))
			return -EINVAL;
		memcpy(o->log_buf_file, v, vlen);
		o->log_buf_file[vlen] = '\0';
		return 0;
	}
	if (IS("log_buf_file_group"))
		BOOL_OPT(log_buf_file_group);
	if (IS("crash_dump"))
		BOOL_OPT(crash_dump);
	if (IS("printk.devkmsg")) {
		if (!v || !((vlen == 2 && !strncmp(v, "on", 2)) || (vlen == 3 && !strncmp(v, "off", 3)) ||
			    (vlen == 9 && !strncmp(v, "ratelimit", 9))))
			return -EINVAL;
		memcpy(o->devkmsg, v, vlen);
		o->devkmsg[vlen] = '\0';
		return 0;
	}
	if (IS("log_buf_file_sync"))
		BOOL_OPT(log_buf_file_sync);
#undef BOOL_OPT
#undef IS
	return -ENOENT;
}

int pk_opts_parse(const char *s, struct pk_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->log_buf_len = -1;
	o->console_loglevel = -1;
	o->ignore_loglevel = -1;
	o->printk_time = -1;
	o->printk_caller = -1;
	o->log_buf_file_group = -1;
	o->log_buf_file_sync = -1;
	o->crash_dump = -1;
	if (!s)
		return 0;
	while (*s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;

		const char *word = s;

		while (*s && *s != ' ' && *s != '\t' && *s != '\n')
			s++;

		size_t wlen = (size_t)(s - word);
		const char *eq = memchr(word, '=', wlen);
		size_t nlen = eq ? (size_t)(eq - word) : wlen;
		int err = apply_word(o, word, nlen, eq ? eq + 1 : NULL, eq ? wlen - nlen - 1 : 0);

		if (err == -ENOENT)
			warn(o, word, wlen, "unknown option");
		else if (err)
			warn(o, word, wlen, "bad value in");
	}
	return o->nwarnings ? -EINVAL : 0;
}
