// SPDX-License-Identifier: MIT
/*
 * fuzz_opts.c - libFuzzer target: PRINTK_OPTS parsing (pk_opts_parse).
 *
 * The input, cut at its first NUL, is the option string. Properties (a
 * violation aborts): no crash, no sanitizer report; the result is 0 exactly
 * when there is no warning, -EINVAL otherwise; counts within their arrays;
 * every string in the result NUL-terminated inside its field; integer
 * fields -1 (not given) or in their documented ranges; parsing the same
 * string twice gives the same result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <printk/console.h>
#include <printk/printk.h>

#include "log/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_MAX 4096

static char input[INPUT_MAX + 1];
static struct pk_opts a, b;

static void fail(const char *what, long long v)
{
	fprintf(stderr, "fuzz_opts: %s (%lld)\n", what, v);
	abort();
}

static void check_str(const char *s, size_t size, const char *what)
{
	if (!memchr(s, '\0', size))
		fail(what, (long long)size);
}

static void check_flag(int v, const char *what)
{
	if (v < -1 || v > 1)
		fail(what, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int r1, r2, i;

	if (size > INPUT_MAX)
		size = INPUT_MAX;
	memcpy(input, data, size);
	input[size] = '\0';
	memset(&a, 0x5a, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	r1 = pk_opts_parse(input, &a);
	r2 = pk_opts_parse(input, &b);
	if (r1 != (a.nwarnings ? -EINVAL : 0))
		fail("result does not match the warnings", r1);
	if (r1 != r2 || memcmp(&a, &b, sizeof(a)) != 0)
		fail("two parses of one string differ", r2);
	if (a.nwarnings < 0 || a.nwarnings > PK_OPTS_MAX_WARNINGS)
		fail("nwarnings", a.nwarnings);
	if (a.nconsoles < 0 || a.nconsoles > PK_OPTS_MAX_CONSOLES)
		fail("nconsoles", a.nconsoles);
	for (i = 0; i < a.nwarnings; i++)
		check_str(a.warnings[i], sizeof(a.warnings[i]), "warning not terminated");
	for (i = 0; i < a.nconsoles; i++) {
		const struct pk_opts_console *c = &a.consoles[i];

		check_str(c->path, sizeof(c->path), "console path not terminated");
		if (c->kind == PK_OPTCON_FD && c->fd < 0)
			fail("console fd", c->fd);
		if (c->kind > PK_OPTCON_LAST)
			fail("console kind", c->kind);
		if (c->flags & ~(PK_CON_THREADED | PK_CON_EXTENDED | PK_CON_LOSSLESS | PK_CON_LOSSY))
			fail("console flags", c->flags);
		/* ,lossy: file consoles only, never with ,lossless */
		if ((c->flags & PK_CON_LOSSY) &&
		    (c->kind != PK_OPTCON_FILE || (c->flags & PK_CON_LOSSLESS)))
			fail("console lossy", c->flags);
		check_str(c->name, sizeof(c->name), "console name not terminated");
		if (c->kind == PK_OPTCON_REMOVE && (!c->name[0] || c->flags || c->loglevel != -1))
			fail("console removal", c->kind);
		if (c->loglevel < -1 || c->loglevel > 15)
			fail("console loglevel", c->loglevel);
		if (c->time_style < -1 || c->time_style > PK_TIME_ISO_UTC ||
		    (c->time_style >= 0 && c->kind != PK_OPTCON_STDERR && c->kind != PK_OPTCON_FD &&
		     c->kind != PK_OPTCON_FILE))
			fail("console time style", c->time_style);
		if (c->json && c->kind != PK_OPTCON_STDERR && c->kind != PK_OPTCON_FD && c->kind != PK_OPTCON_FILE)
			fail("console json", c->json);
		if (c->rotate_size < 0 || (c->rotate_size && c->kind != PK_OPTCON_FILE))
			fail("console size", c->rotate_size);
		if (c->rotate_size ? c->rotate_keep < 1 || c->rotate_keep > PK_OPTS_ROTATE_KEEP_MAX : c->rotate_keep != 0)
			fail("console keep", c->rotate_keep);
	}
	check_str(a.log_buf_file, sizeof(a.log_buf_file), "log_buf_file not terminated");
	check_str(a.devkmsg, sizeof(a.devkmsg), "devkmsg not terminated");
	check_str(a.dyndbg, sizeof(a.dyndbg), "dyndbg not terminated");
	if (a.log_buf_len < -1)
		fail("log_buf_len", a.log_buf_len);
	if (a.console_loglevel < -1 || a.console_loglevel > 15)
		fail("console_loglevel", a.console_loglevel);
	check_flag(a.ignore_loglevel, "ignore_loglevel");
	if (a.printk_time < -1 || a.printk_time > PK_TIME_ISO_UTC) /* -1: not given, else a style */
		fail("printk_time", a.printk_time);
	check_flag(a.printk_caller, "printk_caller");
	check_flag(a.log_buf_file_group, "log_buf_file_group");
	check_flag(a.log_buf_file_sync, "log_buf_file_sync");
	check_flag(a.crash_dump, "crash_dump");
	if (a.console_drain_ms < -1 || a.console_drain_ms > 600000)
		fail("console_drain_ms", a.console_drain_ms);
	if (a.lossless_timeout_ms < -1 || a.lossless_timeout_ms > 3600000)
		fail("lossless_timeout_ms", a.lossless_timeout_ms);
	return 0;
}
