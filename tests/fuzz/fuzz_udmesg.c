// SPDX-License-Identifier: MIT
/*
 * fuzz_udmesg.c - libFuzzer target: udmesg's file parsers and text formats.
 *
 * The input is a 5-byte header, then the content of the file udmesg reads:
 *   byte 0  bit 0: -K (/dev/kmsg records separated by NUL bytes) or -F
 *           (syslog-format text); bits 1..7: -r, -x, -J, colors, --noescape,
 *           -p, -d
 *   byte 1  bits 0..2: the time format (notime, ctime, delta, reltime, iso,
 *           raw); bit 3: -l, bit 4: -f; bits 5..7: the host's boot time
 *   byte 2  the levels of -l, a bit each
 *   byte 3  the facilities of -f, a bit for every eighth one
 *   byte 4  bits 0..1: --since, bits 2..3: --until (none, or a few seconds,
 *           minutes or years after boot)
 * The options are resolved as main.c resolves them (-J and -r override
 * what they override, -r with a filter is refused for -F, -p is dropped
 * for -F), and the buffer goes straight to the parser main.c's reader would
 * call: ud_print_syslog_buffer, ud_print_raw_buffer or
 * ud_print_kmsg_buffer. --kmsg is not among the formats: udmesg refuses it
 * for files, and it prints nothing for a record not read from a log.
 *
 * The output goes to an in-memory capture buffer (out_capture_*), no
 * file and no write(2) per execution. Properties (a violation aborts):
 * no crash, no sanitizer report, no hang (-timeout); udmesg exits only for
 * a -K record too large for its buffer, as it documents; reading the input
 * a second time prints the same bytes (no state of one read leaks into the
 * next: output.c keeps a few caches and statics); the output is
 * bounded by the input (a few hundred bytes of prefix per record, four
 * bytes per input byte); text ends with a newline; with -J it is one JSON
 * object (every string escaped: no raw control byte) or nothing; escaped
 * text (no --noescape, no colors) has no control byte but whitespace and
 * is valid UTF-8 (the locale is C.UTF-8).
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <printk/log.h>

#include "udmesg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define HEADER 5

static struct pk_outbuf *capture;
static int caller_width;
static jmp_buf fatal_jmp;
static char fatal_msg[256];

static void fail(const char *what, long long v)
{
	fprintf(stderr, "fuzz_udmesg: %s (%lld)\n", what, v);
	abort();
}

/* main.c's: here an exit is a jump back to the test, its message kept. */
_Noreturn void ud_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fatal_msg, sizeof(fatal_msg), fmt, ap);
	va_end(ap);
	longjmp(fatal_jmp, 1);
}

void ud_warn(const char *fmt, ...)
{
	(void)fmt;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	/* A zone west of UTC with a half-hour offset: iso's "-03:30". */
	setenv("TZ", "<-0330>3:30", 1);
	tzset();
	out_init();
	capture = out_capture_new();
	caller_width = ud_kmsg_caller_width();
	return 0;
}

/* ------------------------------------------------------- the options -- */

static const enum ud_timefmt time_formats[8] = {
	UD_TF_NONE, UD_TF_CTIME, UD_TF_DELTA, UD_TF_RELTIME,
	UD_TF_ISO,  UD_TF_TIME,	 UD_TF_TIME,  UD_TF_TIME,
};

/* What ud_host_boot_time() may say (main.c keeps it in ns: before 2262). */
static const int64_t boot_times[8] = {
	0, 1, 1700000000, 1700000000, 1700000000, 2147483647, 4102444800, 9000000000,
};

static const int64_t since_after_boot[4] = {0, 5, 600, 100LL * 365 * 86400};

static void set_options(struct ud_ctl *ctl, const uint8_t *h)
{
	int64_t boot = boot_times[h[1] >> 5];

	memset(ctl, 0, sizeof(*ctl));
	ctl->action = UD_ACT_READ_ALL;
	ctl->source = (h[0] & 1) ? UD_SRC_KMSG : UD_SRC_FILE;
	ctl->file_path = "fuzz-input";
	ctl->partial = -1;
	ctl->raw = h[0] & 2;
	ctl->decode = h[0] & 4;
	ctl->json = h[0] & 8;
	ctl->color = h[0] & 16;
	ctl->noesc = h[0] & 32;
	ctl->force_prefix = h[0] & 64;
	ud_time_fmt_include(ctl, time_formats[h[1] & 7]);
	if (h[0] & 128)
		ud_time_fmt_include(ctl, UD_TF_TIME_DELTA); /* -d */
	ctl->fltr_lev = h[1] & 8;
	ctl->fltr_fac = h[1] & 16;
	ctl->levels = h[2];
	for (int i = 0; i < UD_NFACILITIES; i++)
		if (h[3] & (1u << (i % 8)))
			ctl->facilities |= UINT32_C(1) << i;
	if (h[4] & 3)
		ctl->since = (boot + since_after_boot[h[4] & 3]) * 1000000;
	if ((h[4] >> 2) & 3)
		ctl->until = (boot + since_after_boot[(h[4] >> 2) & 3]) * 1000000;

	/* util-linux's exclusive groups: -r with -x, -d, -e, -T, -t, -L */
	if (ctl->raw) {
		ctl->decode = false;
		ctl->ntime_fmts = 0;
	}
	/* main.c's resolve() */
	if (ctl->json) {
		ctl->force_prefix = false;
		ctl->raw = false;
		ctl->noesc = true;
		ctl->color = false;
	}
	ud_time_fmts_resolve(ctl);
	ctl->base_ns = boot * 1000000000;
	ctl->base_by_usec = true;
	ctl->caller_width = ctl->source == UD_SRC_KMSG ? caller_width : 6;
	/* main.c's run_read() */
	if (ctl->source == UD_SRC_FILE) {
		ctl->force_prefix = false;
		if (ctl->raw)
			ctl->fltr_lev = ctl->fltr_fac = false; /* refused */
	}
}

/* --------------------------------------------------------------- JSON -- */

static const char *json_value(const char *p, const char *e, int depth);

static const char *json_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static const char *json_string(const char *p, const char *e)
{
	for (p++; p < e; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= e)
			return NULL;
		if (*p == 'u') {
			for (int i = 0; i < 4; i++)
				if (++p >= e || !strchr("0123456789abcdefABCDEF", *p))
					return NULL;
		} else if (!strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return NULL;
}

/* Any run of digits, '-' and '.': util-linux prints "%5ld.%06ld" of what
 * the file says, a negative microsecond part included. */
static const char *json_number(const char *p, const char *e)
{
	const char *b = p;
	bool digit = false;

	for (; p < e && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '.'); p++)
		digit |= *p >= '0' && *p <= '9';
	return digit && p > b ? p : NULL;
}

static const char *json_members(const char *p, const char *e, int depth, char close, bool named)
{
	p = json_ws(p + 1, e);
	if (p < e && *p == close)
		return p + 1;
	for (;;) {
		if (named) {
			if (p >= e || *p != '"' || !(p = json_string(p, e)))
				return NULL;
			p = json_ws(p, e);
			if (p >= e || *p != ':')
				return NULL;
			p++;
		}
		p = json_value(p, e, depth + 1);
		if (!p)
			return NULL;
		p = json_ws(p, e);
		if (p >= e)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = json_ws(p + 1, e);
	}
}

static const char *json_value(const char *p, const char *e, int depth)
{
	p = json_ws(p, e);
	if (p >= e || depth > 8)
		return NULL;
	switch (*p) {
	case '{':
		return json_members(p, e, depth, '}', true);
	case '[':
		return json_members(p, e, depth, ']', false);
	case '"':
		return json_string(p, e);
	case 't':
		return (size_t)(e - p) >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
	case 'n':
		return (size_t)(e - p) >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
	default:
		return json_number(p, e);
	}
}

static void check_json(const char *out, size_t len)
{
	if (!len)
		return; /* no record printed (@out may be NULL) */

	const char *e = out + len, *p;

	if (*out != '{')
		fail("JSON output does not start with an object", len);
	p = json_value(out, e, 0);
	if (!p)
		fail("JSON output does not parse", len);
	if (json_ws(p, e) != e)
		fail("bytes after the JSON object", e - p);
}

/* --------------------------------------------------------------- text -- */

/* The length of the UTF-8 sequence at @p (Unicode's well-formed table), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *e)
{
	unsigned char c = *p;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if ((size_t)(e - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static void check_escaped(const char *out, size_t len)
{
	if (!len)
		return; /* nothing captured yet: @out may be NULL */

	const unsigned char *p = (const unsigned char *)out, *e = p + len;

	while (p < e) {
		size_t n = utf8_len(p, e);

		if (!n)
			fail("escaped text is not UTF-8 at", (const char *)p - out);
		if (*p < 0x20 && !(*p >= '\t' && *p <= '\r'))
			fail("escaped text has a control byte at", (const char *)p - out);
		if (*p == 0x7f)
			fail("escaped text has DEL at", (const char *)p - out);
		p += n;
	}
}

/* ------------------------------------------------------------ the run -- */

/* Records of a -K input too large for udmesg's record buffer. */
static bool kmsg_too_large(const char *buf, size_t size)
{
	for (size_t pos = 0; pos < size;) {
		size_t len = strnlen(buf + pos, size - pos);

		if (len > PK_MESSAGE_MAX)
			return true;
		pos += len + 1;
	}
	return false;
}

/* One read of @buf (@n bytes and a NUL) into the capture buffer, as
 * main.c's reader runs it. False: udmesg would have exited. */
static bool run(struct ud_ctl *ctl, const uint8_t *h, const char *buf, size_t n, bool too_large)
{
	set_options(ctl, h);
	fatal_msg[0] = '\0';
	out_capture_begin(capture);
	if (setjmp(fatal_jmp) == 0) {
		if (ctl->source == UD_SRC_KMSG)
			ud_print_kmsg_buffer(ctl, buf, n);
		else if (ctl->raw && n)
			ud_print_raw_buffer(ctl, buf, n);
		else if (n)
			ud_print_syslog_buffer(ctl, buf, n);
		ud_output_finish(ctl);
		if (too_large)
			fail("a -K record too large went through", (long long)n);
	} else if (!too_large || strcmp(fatal_msg, "fuzz-input: record too large") != 0) {
		fprintf(stderr, "fuzz_udmesg: udmesg exits: %s\n", fatal_msg);
		abort();
	}
	out_capture_end();
	return !fatal_msg[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ud_ctl ctl;
	static char *first;
	static size_t first_cap;
	const char *out;
	char *buf;
	size_t len, n;
	bool too_large, done;

	if (size < HEADER)
		return -1;
	n = size - HEADER;
	/* Exactly the bytes a reader has: the content and slurp()'s NUL. */
	buf = malloc(n + 1);
	if (!buf)
		abort();
	memcpy(buf, data + HEADER, n);
	buf[n] = '\0';
	too_large = data[0] & 1 && kmsg_too_large(buf, n);

	/* Twice: nothing of one read may leak into the next (caches, statics). */
	done = run(&ctl, data, buf, n, too_large);
	out = out_capture_data(capture, &len);
	if (len > first_cap) {
		free(first);
		first_cap = len;
		first = malloc(first_cap);
		if (!first)
			abort();
	}
	if (len)
		memcpy(first, out, len);
	if (run(&ctl, data, buf, n, too_large) != done)
		fail("a second read of the same input ends differently", (long long)n);
	free(buf);
	if (!done)
		return 0;
	out = out_capture_data(capture, &n);
	if (n != len || (len && memcmp(first, out, len) != 0))
		fail("a second read of the same input prints differently", (long long)len);

	if (len > (size - HEADER + 1) * 1024)
		fail("output out of proportion to the input", (long long)len);
	if (ctl.json) {
		check_json(out, len);
		return 0;
	}
	if (len && out[len - 1] != '\n')
		fail("text output does not end with a newline", (long long)len);
	if (!ctl.noesc && !ctl.color)
		check_escaped(out, len);
	return 0;
}
