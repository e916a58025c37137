// SPDX-License-Identifier: MIT
/*
 * output.c - everything udmesg writes to stdout: a buffered writer and three
 * formats.
 *
 *  - Text, as util-linux dmesg prints a record (its print_record): decode
 *    prefix "%-6s:%-6s: ", the time formats side by side, caller "[%*s] ",
 *    the message with non-printable characters escaped as \xHH (multibyte
 *    characters the locale can print are kept), continuation lines indented
 *    under the message, colors from dmesg's default scheme. Plus, beyond
 *    dmesg: the partial-record marker and, with --dictionary, the
 *    dictionary as KEY=VALUE lines (never with -x alone: scripts that read
 *    `dmesg -x` expect one line per record line).
 *  - JSON, util-linux's shape: {"dmesg": [{"pri": N, "time": S.U, "msg":
 *    "..."}, ...]}, 3-space indentation, objects joined by "},{".
 *  - /dev/kmsg records (--kmsg), byte for byte as libprintk's kmsg_read
 *    returns them (its own formatter, through reader.h: the kernel's format
 *    cut at PK_MESSAGE_MAX bytes, ",partial" on a line never finished),
 *    each followed by a NUL byte: the format `dmesg -K` reads.
 *  - JSON lines (--journal-json), as the ,json consoles write them: one
 *    object per record with journald's field names (src/record/json_format.c).
 *
 * The writer is a large buffer flushed with write(2). The default text path
 * (time prefix, escaped message) avoids stdio and scans messages eight bytes
 * at a time, so dumping a large log costs little more than copying it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "outbuf.h"
#include "reader.h"
#include "udmesg.h"

const char *const ud_level_names[UD_NLEVELS] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

const char *const ud_facility_names[UD_NFACILITIES] = {
	"kern",	  "user",   "mail",	"daemon", "auth",   "syslog", "lpr",	"news",
	"uucp",	  "cron",   "authpriv", "ftp",	  "res0",   "res1",   "res2",	"res3",
	"local0", "local1", "local2",	"local3", "local4", "local5", "local6", "local7",
};

/* ------------------------------------------------------------ writer -- */

/*
 * Each thread writes into its current buffer (src/base/outbuf.h): stdout's
 * (written with write(2) when full) or, while a dump worker formats a chunk
 * of records, a capture buffer that grows instead and that the main thread
 * writes out in order later.
 */
#define OUT_BUF_SIZE (64 * 1024)

static int stdout_sink(void *arg, const char *p, size_t n)
{
	(void)arg;
	out_write_fd(p, n);
	return 0; /* out_write_fd() returns only when all was written */
}

static char stdout_mem[OUT_BUF_SIZE];
static struct pk_outbuf stdout_buf = {
	.buf = stdout_mem, .cap = OUT_BUF_SIZE, .sink = stdout_sink,
};
static _Thread_local struct pk_outbuf *ob = &stdout_buf;

void out_init(void)
{
	pk_outbuf_init(&stdout_buf, stdout_mem, OUT_BUF_SIZE, stdout_sink, NULL);
	ob = &stdout_buf;
}

void out_write_fd(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				exit(EXIT_SUCCESS); /* the reader is gone: nothing left to do */
			ud_fatal("write failed: %s", strerror(errno));
		}
		p += w;
		n -= (size_t)w;
	}
}

/* A capture buffer's grow hook: room for @n more bytes, or exit. */
static void out_grow(struct pk_outbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : OUT_BUF_SIZE;

	while (cap - b->len < n)
		cap *= 2;
	if (cap != b->cap) {
		char *nb = realloc(b->buf, cap);

		if (!nb)
			ud_fatal("out of memory");
		b->buf = nb;
		b->cap = cap;
	}
}

/* Only stdout's buffer: a capture is written when its turn comes. */
void out_flush(void)
{
	if (!ob->grow)
		pk_outbuf_flush(ob);
}

void out_write(const void *p, size_t n)
{
	/* A large piece that does not fit goes out as it is, not through the buffer. */
	if (!ob->grow && n > ob->cap - ob->len && n > ob->cap / 2) {
		pk_outbuf_flush(ob);
		out_write_fd(p, n);
		return;
	}
	pk_outbuf_put(ob, p, n);
}

void out_putc(char c)
{
	*pk_outbuf_reserve(ob, 1) = c;
	pk_outbuf_commit(ob, 1);
}

void out_puts(const char *s)
{
	out_write(s, strlen(s));
}

struct pk_outbuf *out_capture_new(void)
{
	struct pk_outbuf *b = malloc(sizeof(*b));

	if (!b)
		ud_fatal("out of memory");
	pk_outbuf_init(b, NULL, 0, stdout_sink, NULL);
	b->grow = out_grow;
	return b;
}

void out_capture_begin(struct pk_outbuf *b)
{
	b->len = 0;
	ob = b;
}

void out_capture_end(void)
{
	ob = &stdout_buf;
}

void out_capture_write(struct pk_outbuf *b)
{
	out_flush();
	pk_outbuf_flush(b);
}

void out_capture_free(struct pk_outbuf *b)
{
	if (b) {
		free(b->buf);
		free(b);
	}
}

const char *out_capture_data(const struct pk_outbuf *b, size_t *len)
{
	*len = b->len;
	return b->buf;
}

/* Room for @n bytes at the end of the buffer (n is small). */
static char *out_reserve(size_t n)
{
	return pk_outbuf_reserve(ob, n);
}

static void out_commit(size_t n)
{
	pk_outbuf_commit(ob, n);
}

static void out_spaces(int n)
{
	while (n-- > 0)
		out_putc(' ');
}

static void out_hex(unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char *p = out_reserve(4);

	p[0] = '\\';
	p[1] = 'x';
	p[2] = hex[c >> 4];
	p[3] = hex[c & 15];
	out_commit(4);
}

/* ------------------------------------------------------------ colors -- */

/* util-linux's default dmesg scheme (lib/colors.h sequences). */
#define COLOR_RESET	"\033[0m"
#define COLOR_SUBSYS	"\033[33m"
#define COLOR_TIME	"\033[32m"
#define COLOR_TIMEBREAK "\033[32m\033[1m"
#define COLOR_ALERT	"\033[7m\033[31m"
#define COLOR_CRIT	"\033[1m\033[31m"
#define COLOR_ERR	"\033[31m"
#define COLOR_WARN	"\033[1m"
#define COLOR_SEGFAULT	"\033[2m\033[31m"

static const char *level_color(int level, const char *mesg, size_t size)
{
	switch (level) {
	case 1:
		return COLOR_ALERT;
	case 2:
		return COLOR_CRIT;
	case 3:
		return COLOR_ERR;
	case 4:
		return COLOR_WARN;
	default:
		break;
	}
	/* Important words in messages of other levels. */
	if (size >= 11 && memmem(mesg, size, "segfault at", 11))
		return COLOR_SEGFAULT;
	return NULL;
}

/* The end of a "subsystem: " prefix ("usb 1-1: "), or NULL. */
static const char *subsys_delimiter(const char *mesg, size_t size)
{
	const char *p = mesg;
	size_t sz = size;

	while (sz > 0) {
		const char *d = memchr(p, ':', sz);

		if (!d)
			return NULL;
		sz -= (size_t)(d - p) + 1;
		if (sz) {
			if (sz >= 2 && (d[1] == ' ' || d[1] == '\t'))
				return d + 2;
			p = d + 1;
		}
	}
	return NULL;
}

/* ---------------------------------------------------------- escaping -- */

#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Length of the leading run of bytes in 0x20..0x7e: printed as they are. */
static size_t plain_run(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i + 8 <= n) {
		uint64_t x, y;

		memcpy(&x, p + i, 8);
		y = x ^ (0x7f * ONES);
		if (((x & HIGHS) | ((x - 0x20 * ONES) & ~x & HIGHS) | ((y - ONES) & ~y & HIGHS)))
			break;
		i += 8;
	}
	while (i < n && p[i] >= 0x20 && p[i] < 0x7f)
		i++;
	return i;
}

/*
 * util-linux's safe_fwrite: bytes the locale cannot print become \xHH
 * (NUL included; tab, newline and the other spaces stay), unless --noescape.
 * A newline followed by more text is followed by @indent spaces. The byte
 * after @size must be readable: like dmesg, "followed by more text" looks
 * at it.
 */
static void safe_write(const struct ud_ctl *ctl, const char *buf, size_t size, int indent)
{
	mbstate_t st;
	size_t i = 0;

	memset(&st, 0, sizeof(st));
	while (i < size) {
		const char *p = buf + i;
		unsigned char c = (unsigned char)*p;
		size_t len = 1;
		int hex = 0;

		if (ctl->noesc) {
			const char *nl = memchr(p, '\n', size - i);
			size_t run = nl ? (size_t)(nl - p) : size - i;

			if (run) {
				out_write(p, run);
				i += run;
				continue;
			}
		} else {
			size_t run = plain_run((const unsigned char *)p, size - i);

			if (run) {
				out_write(p, run);
				i += run;
				continue;
			}
			if (c == '\0') {
				hex = 1;
			} else if (c >= 0x80) {
				wchar_t wc;

				len = mbrtowc(&wc, p, size - i, &st);
				if (len == (size_t)-1 || len == (size_t)-2) {
					memset(&st, 0, sizeof(st));
					len = 1;
					hex = 1;
				} else if (len > 1) {
					if (!iswprint((wint_t)wc) && !iswspace((wint_t)wc))
						hex = 1;
				} else {
					len = 1;
					if (!isprint(c) && !isspace(c))
						hex = 1;
				}
			} else if (!isprint(c) && !isspace(c)) {
				hex = 1;
			}
		}
		if (hex) {
			for (size_t k = 0; k < len; k++)
				out_hex((unsigned char)p[k]);
		} else if (c == '\n' && p[1] && indent) {
			out_putc('\n');
			out_spaces(indent);
		} else {
			out_write(p, len);
		}
		i += len;
	}
}

void ud_print_raw_buffer(struct ud_ctl *ctl, const char *buf, size_t size)
{
	if (!size)
		return;
	safe_write(ctl, buf, size, 0);
	if (buf[size - 1] != '\n')
		out_putc('\n');
}

/* -------------------------------------------------------- time stamps -- */

/* "%5ld.%06ld" for the common case, snprintf for the rest. */
static size_t fmt_sec_usec(char *buf, size_t len, int64_t sec, int64_t usec)
{
	if (sec < 0 || sec > 999999999999 || usec < 0 || usec > 999999)
		return (size_t)snprintf(buf, len, "%5ld.%06ld", (long)sec, (long)usec);

	char tmp[24];
	int n = 0;
	uint64_t s = (uint64_t)sec;

	do {
		tmp[n++] = (char)('0' + s % 10);
		s /= 10;
	} while (s);

	size_t o = 0;

	for (int pad = 5 - n; pad > 0; pad--)
		buf[o++] = ' ';
	while (n)
		buf[o++] = tmp[--n];
	buf[o++] = '.';
	for (int k = 5, u = (int)usec; k >= 0; k--, u /= 10)
		buf[o + (size_t)k] = (char)('0' + u % 10);
	o += 6;
	buf[o] = '\0';
	return o;
}

static int timerisset_(int64_t sec, int64_t usec)
{
	return sec || usec;
}

/* util-linux's record_count_delta (no delta before the first non-zero time). */
static double record_count_delta(struct ud_ctl *ctl, const struct urec *rec)
{
	double delta = 0;

	if (timerisset_(ctl->last_sec, ctl->last_usec))
		delta = ((double)rec->sec - (double)ctl->last_sec) +
			((double)rec->usec - (double)ctl->last_usec) / 1E6;
	ctl->last_sec = rec->sec;
	ctl->last_usec = rec->usec;
	return delta;
}

/* False for a time the calendar cannot hold (its year does not fit an
 * int): it then prints as an empty field, like --time-format=iso's, never
 * as what glibc left half-filled in @tm. */
static bool record_localtime(const struct ud_ctl *ctl, const struct urec *rec, struct tm *tm)
{
	time_t t;
	long usec;

	ud_record_wall(ctl, rec, &t, &usec);
	if (localtime_r(&t, tm))
		return true;
	memset(tm, 0, sizeof(*tm));
	return false;
}

static const char *record_ctime(const struct ud_ctl *ctl, const struct urec *rec, char *buf,
				size_t len)
{
	struct tm tm;

	if (!record_localtime(ctl, rec, &tm) || strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm) == 0)
		*buf = '\0';
	return buf;
}

/* ------------------------------------------------------------- filter -- */

static bool accept_record(const struct ud_ctl *ctl, const struct urec *rec)
{
	if (ctl->fltr_lev &&
	    (rec->facility < 0 || rec->level < 0 || !(ctl->levels & (1u << rec->level))))
		return false;
	if (ctl->fltr_fac &&
	    (rec->facility < 0 || !(ctl->facilities & (UINT32_C(1) << rec->facility))))
		return false;
	if (ctl->since || ctl->until) {
		int64_t t = ud_record_wall_usec(ctl, rec);

		if (ctl->since && ctl->since >= t)
			return false;
		if (ctl->until && ctl->until <= t)
			return false;
	}
	return true;
}

static bool facpri_valid(const struct urec *rec)
{
	return rec->level > -1 && rec->level < UD_NLEVELS && rec->facility > -1 &&
	       rec->facility < UD_NFACILITIES;
}

/* util-linux's LOG_RAW_FAC_PRI(fac, pri), also for facility -1. */
static long raw_fac_pri(const struct urec *rec)
{
	return (long)(int)(((unsigned)rec->facility << 3) | (unsigned)rec->level);
}

/* --------------------------------------------------------------- JSON -- */

static void json_string(const char *s, size_t size)
{
	out_putc('"');
	for (size_t i = 0; i < size && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out_putc('\\');
			out_putc((char)c);
		} else if (c >= 0x20) {
			out_putc((char)c);
		} else {
			switch (c) {
			case '\b':
				out_puts("\\b");
				break;
			case '\t':
				out_puts("\\t");
				break;
			case '\n':
				out_puts("\\n");
				break;
			case '\f':
				out_puts("\\f");
				break;
			case '\r':
				out_puts("\\r");
				break;
			default: {
				char u[8];

				snprintf(u, sizeof(u), "\\u00%02x", c);
				out_puts(u);
			}
			}
		}
	}
	out_putc('"');
}

static bool json_first_value;

static void json_name(const char *name)
{
	if (!json_first_value)
		out_puts(",\n");
	json_first_value = false;
	out_puts("         \"");
	out_puts(name);
	out_puts("\": ");
}

static void print_json(struct ud_ctl *ctl, const struct urec *rec)
{
	char buf[64];

	if (!ctl->json_open) {
		out_puts("{\n   \"dmesg\": [\n      {\n");
		ctl->json_open = true;
	} else {
		out_puts(",{\n");
	}
	json_first_value = true;
	if (facpri_valid(rec)) {
		if (ctl->decode) {
			json_name("fac");
			json_string(ud_facility_names[rec->facility], SIZE_MAX);
			json_name("pri");
			json_string(ud_level_names[rec->level], SIZE_MAX);
		} else {
			json_name("pri");
			snprintf(buf, sizeof(buf), "%ld", raw_fac_pri(rec));
			out_puts(buf);
		}
	}
	json_name("time");
	fmt_sec_usec(buf, sizeof(buf), rec->sec, rec->usec);
	out_puts(buf);
	if (rec->caller[0]) {
		json_name("caller");
		json_string(rec->caller, SIZE_MAX);
	}
	if (rec->has_writer) {
		json_name("pid");
		snprintf(buf, sizeof(buf), "%u", rec->pid);
		out_puts(buf);
		json_name("program");
		if (rec->program[0])
			json_string(rec->program, SIZE_MAX);
		else
			out_puts("null");
	}
	json_name("msg");
	if (rec->mesg_size && rec->mesg[0])
		json_string(rec->mesg, rec->mesg_size);
	else
		out_puts("null");
	if (rec->partial) {
		json_name("partial");
		out_puts("true");
	}
	out_puts("\n      }");
	if (ctl->follow)
		out_flush();
}

void ud_output_finish(struct ud_ctl *ctl)
{
	if (ctl->json && ctl->json_open) {
		out_puts("\n   ]\n}\n");
		ctl->json_open = false;
	}
	out_flush();
}

/* ----------------------------------------------------------- /dev/kmsg -- */

void ud_print_kmsg(struct ud_ctl *ctl, const struct urec *rec)
{
	char out[PK_MESSAGE_MAX + 1];
	size_t n;

	if (!accept_record(ctl, rec) || !rec->log_rec)
		return;
	n = pk_log_kmsg_format(rec->log_rec, out);
	out[n++] = '\0';
	out_write(out, n);
	if (ctl->follow)
		out_flush();
}

/* ------------------------------------------------------ journal JSON -- */

/* The ,json consoles' line (src/record/json_format.c), dated by the log's
 * realtime offset as -T dates it, named by the log's writer table. */
static void print_journal_json(struct ud_ctl *ctl, const struct urec *rec)
{
	char out[PK_LOG_JSON_MAX];
	char ident[16];
	const struct pk_record *r = rec->log_rec;

	if (!accept_record(ctl, rec) || !r)
		return;
	bool known = ctl->log && pk_log_writer_name(ctl->log, r->pid, ident, sizeof(ident)) == 0;

	out_write(out, pk_log_json_format(r, known ? ident : NULL, ctl->base_ns, out));
	if (ctl->follow)
		out_flush();
}

/* --------------------------------------------------------------- text -- */

/* One dictionary entry: a control byte (but tab) prints as \xNN, as the
 * kernel's /dev/kmsg prints it, so a value can neither start a line that
 * looks like a record nor drive a terminal; the rest as text is printed. */
static void print_dict_entry(const struct ud_ctl *ctl, const char *entry, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)entry[i];

		if ((c >= 0x20 && c != 0x7f) || c == '\t') {
			run++;
			continue;
		}
		if (run)
			safe_write(ctl, entry + i - run, run, 0);
		run = 0;
		out_write((char[4]){ '\\', 'x', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15] },
			  4);
	}
	if (run)
		safe_write(ctl, entry + len - run, run, 0);
}

static void print_dict(const struct ud_ctl *ctl, const struct urec *rec)
{
	for (size_t i = 0; i < rec->dict_len;) {
		const char *entry = rec->dict + i;
		size_t len = strnlen(entry, rec->dict_len - i);

		if (len) {
			out_putc('\n');
			out_spaces(ctl->indent);
			print_dict_entry(ctl, entry, len);
		}
		i += len + 1;
	}
}

/* ---------------------------------------------------------- fast path -- */

/* "00" "01" ... "99": the time prefix takes its digits two at a time. */
static const char digit_pairs[201] = "0001020304050607080910111213141516171819"
				     "2021222324252627282930313233343536373839"
				     "4041424344454647484950515253545556575859"
				     "6061626364656667686970717273747576777879"
				     "8081828384858687888990919293949596979899";

/* "[%5lu." of @sec into @out (at least 24 bytes), not terminated; returns
 * its length (7 to 22). */
static size_t seconds_field(char *out, uint64_t sec)
{
	char tmp[24];
	char *e = tmp + sizeof(tmp), *b = e;

	*--b = '.';
	while (sec >= 100) {
		b -= 2;
		memcpy(b, digit_pairs + 2 * (sec % 100), 2);
		sec /= 100;
	}
	if (sec >= 10) {
		b -= 2;
		memcpy(b, digit_pairs + 2 * sec, 2);
	} else {
		*--b = (char)('0' + sec);
	}
	while (e - b < 6) /* five digits and the dot */
		*--b = ' ';
	*--b = '[';
	memcpy(out, b, (size_t)(e - b));
	return (size_t)(e - b);
}

/* The six digits of @usec (< 1000000) at @p. */
static inline void put_6digits(char *p, uint32_t usec)
{
	/* Both quotients straight from @usec: two short dependency chains. */
	uint32_t hi = usec / 10000, q = usec / 100;

	memcpy(p, digit_pairs + 2 * hi, 2);
	memcpy(p + 2, digit_pairs + 2 * (q - hi * 100), 2);
	memcpy(p + 4, digit_pairs + 2 * (usec - q * 100), 2);
}

/* "[%5lu." of the seconds, kept per thread: consecutive records rarely
 * differ in them. */
static _Thread_local uint64_t cached_sec = UINT64_MAX;
static _Thread_local char sec_str[24];
static _Thread_local size_t sec_len;

/*
 * The fast path's last microsecond in this thread (records stored in a
 * burst share theirs), with the length of its seconds part in sec_str and
 * its prefix's last 8 bytes ("%06lu] "). Valid while sec_str holds its
 * second: sec_part() forgets it when it changes sec_str.
 */
static _Thread_local uint64_t fast_us = UINT64_MAX;
static _Thread_local size_t fast_us_n;
static _Thread_local uint64_t fast_us_tail;

/* Length of "[%5lu." for @sec (7 to 22 bytes), now in sec_str. */
static size_t sec_part(uint64_t sec)
{
	if (sec != cached_sec) {
		sec_len = seconds_field(sec_str, sec);
		cached_sec = sec;
		fast_us = UINT64_MAX;
	}
	return sec_len;
}

/* "%06lu] " of @usec (< 1000000) as the 8 bytes of a word, built in a
 * register where the byte order is known (its bytes are stored at once,
 * and a load of them right after does not wait for narrower stores). */
static inline uint64_t usec_tail(uint32_t usec)
{
	uint64_t w;
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t hi = usec / 10000, q = usec / 100;
	uint16_t a, b, c;

	memcpy(&a, digit_pairs + 2 * hi, 2);
	memcpy(&b, digit_pairs + 2 * (q - hi * 100), 2);
	memcpy(&c, digit_pairs + 2 * (usec - q * 100), 2);
	w = a | (uint64_t)b << 16 | (uint64_t)c << 32 | (uint64_t)']' << 48 | (uint64_t)' ' << 56;
#else
	char t[8];

	put_6digits(t, usec);
	t[6] = ']';
	t[7] = ' ';
	memcpy(&w, t, 8);
#endif
	return w;
}

/* The longest "[%5lu.%06lu] ": 22 bytes of seconds, 6 digits, "] ". */
#define UD_PREFIX_MAX 30

/* The @n bytes of "[%5lu." sec_part() left in sec_str at @p, and nothing
 * past them, by fixed-size copies. */
static inline void put_sec_part(char *p, size_t n)
{
	if (n <= 8) {
		memcpy(p, sec_str, 4);
		memcpy(p + n - 4, sec_str + n - 4, 4);
	} else if (n <= 16) {
		memcpy(p, sec_str, 8);
		memcpy(p + n - 8, sec_str + n - 8, 8);
	} else {
		memcpy(p, sec_str, 16);
		memcpy(p + n - 16, sec_str + n - 16, 16);
	}
}

/*
 * "[%5lu.%06lu] " at @p, exactly its 15 to 30 bytes and nothing past them,
 * the seconds part being the @n bytes sec_part() left in sec_str; returns
 * the end. Fixed-size copies only: the prefix is written straight into the
 * output, next to text already there.
 */
static inline char *fmt_prefix_n(char *p, size_t n, uint32_t usec)
{
	put_sec_part(p, n);
	p += n;
	put_6digits(p, usec);
	p[6] = ']';
	p[7] = ' ';
	return p + 8;
}

static char *fmt_prefix(char *p, uint64_t sec, uint32_t usec)
{
	return fmt_prefix_n(p, sec_part(sec), usec);
}

/* plain_prefix_len() reads whole 32-byte blocks: up to this many bytes past
 * the text. */
#define UD_SCAN_SLACK 32

/*
 * Offset of the first byte of @text[0, @len) dmesg would escape (a control
 * character or DEL; bytes >= 0x80 take the careful path too), or @len.
 * With SSE2 it reads whole 32-byte blocks: @text must have UD_SCAN_SLACK
 * readable bytes after @len.
 */
static size_t plain_prefix_len(const char *text, size_t len)
{
#ifdef __SSE2__
	const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);

	/* 32 bytes a round: records are mostly longer than 16. */
	for (size_t i = 0;; i += 32) {
		__m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
		__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(text + i + 16));
		uint64_t bad = (uint32_t)_mm_movemask_epi8(
				       _mm_or_si128(_mm_cmplt_epi8(v0, space), _mm_cmpeq_epi8(v0, del))) |
			       (uint64_t)(uint32_t)_mm_movemask_epi8(
				       _mm_or_si128(_mm_cmplt_epi8(v1, space), _mm_cmpeq_epi8(v1, del)))
				       << 16;

		if (len - i < 32)
			bad |= UINT64_C(1) << (len - i); /* stop at the end */
		if (bad) {
			size_t n = i + (size_t)__builtin_ctzll(bad);

			return n < len ? n : len;
		}
	}
#else
	return plain_run((const unsigned char *)text, len);
#endif
}

/* Length of this thread's last time prefix: where the next text goes. */
static _Thread_local size_t fast_prefix_len = 15; /* "[%5lu.%06lu] " */

/*
 * Room for one line of the fast path: the prefix, then the text, which
 * goes fast_prefix_len bytes in (where the line's prefix most likely ends;
 * fast_finish() moves it when the prefix turns out longer or shorter) and
 * needs room for what pk_text_read() may write, its newline and what
 * plain_prefix_len() may read past it.
 */
#define UD_FAST_ROOM (UD_PREFIX_MAX + PK_TEXT_MAX + UD_SCAN_SLACK)
_Static_assert(UD_SCAN_SLACK >= PK_TEXT_READ_ROOM - PK_TEXT_MAX,
	       "the scan's slack covers the text reader's");
_Static_assert(UD_SCAN_SLACK >= 1, "the newline after the text fits");
_Static_assert(UD_FAST_ROOM <= OUT_BUF_SIZE / 2, "a line fits stdout's buffer");

static char *fast_text_slot(void)
{
	return pk_outbuf_reserve(ob, UD_FAST_ROOM) + fast_prefix_len;
}

/* The escaping tail of fast_finish(): the text from byte @i on. */
static __attribute__((noinline)) void
fast_finish_escaped(const struct ud_ctl *ctl, const char *text, size_t i, size_t len, size_t plen)
{
	/* It moves, so it must leave the buffer first. */
	char rest[PK_TEXT_MAX + 1];

	memcpy(rest, text + i, len - i);
	rest[len - i] = '\0'; /* safe_write looks one byte past the end */
	ob->len += plen + i;
	safe_write(ctl, rest, len - i, (int)plen);
	out_putc('\n');
}

/* @plain: the text is known to hold only bytes plain_prefix_len() passes. */
static inline __attribute__((always_inline)) void
fast_finish(const struct ud_ctl *ctl, uint64_t ts_nsec, char *text, size_t len, bool plain)
{
	char *start = ob->buf + ob->len;
	size_t plen, i;

	if (!len) {
		*start = '\n'; /* dmesg prints an empty record as an empty line */
		ob->len++;
		return;
	}
	uint64_t us = ts_nsec / 1000u;

	if (us != fast_us) {
		fast_us_n = sec_part(us / 1000000u);
		fast_us_tail = usec_tail((uint32_t)(us % 1000000u));
		fast_us = us;
	}

	size_t n = fast_us_n;

	plen = n + 8;
	if (__builtin_expect(plen != fast_prefix_len, 0)) {
		/* The seconds grew a digit (or the first guess was wrong). */
		memmove(start + plen, text, len);
		text = start + plen;
		fast_prefix_len = plen;
	}
	put_sec_part(start, n);
	memcpy(start + n, &fast_us_tail, 8);
	i = plain ? len : plain_prefix_len(text, len);
	if (__builtin_expect(i == len, 1)) {
		text[len] = '\n';
		ob->len += plen + len + 1;
		return;
	}
	fast_finish_escaped(ctl, text, i, len, plen);
}

uint64_t ud_fast_run(const struct ud_ctl *ctl, struct pk_text_reader *tr, struct pk_text_cache *cache,
		     uint64_t seq, uint64_t end)
{
	for (; seq < end; seq++) {
		uint64_t ts;
		bool plain;

		char *text = fast_text_slot();
		int len = pk_text_read_plain(tr, cache, seq, &ts, text, &plain);

		if (len < 0)
			break;
		fast_finish(ctl, ts, text, (size_t)len, plain);
	}
	return seq;
}

void ud_print_fast(const struct ud_ctl *ctl, uint64_t ts_nsec, const char *text, size_t len)
{
	char *dst = fast_text_slot();

	if (len > PK_TEXT_MAX)
		len = PK_TEXT_MAX;
	memcpy(dst, text, len);
	fast_finish(ctl, ts_nsec, dst, len, false);
}

/* ------------------------------------------------------- text records -- */

/* One time format's stamp into @tsbuf; returns its width. */
static int format_one_time(struct ud_ctl *ctl, enum ud_timefmt fmt, const struct urec *rec,
			   double delta, char *tsbuf, size_t size, int *timebreak)
{
	char buf[128];

	switch (fmt) {
	case UD_TF_NONE:
	case UD_TF_COUNT:
		break;
	case UD_TF_CTIME:
		return snprintf(tsbuf, size, "[%s] ", record_ctime(ctl, rec, buf, sizeof(buf)));
	case UD_TF_CTIME_DELTA:
		return snprintf(tsbuf, size, "[%s <%12.06f>] ",
				record_ctime(ctl, rec, buf, sizeof(buf)), delta);
	case UD_TF_DELTA:
		return snprintf(tsbuf, size, "[<%12.06f>] ", delta);
	case UD_TF_RELTIME: {
		struct tm cur;
		int n;
		bool known = record_localtime(ctl, rec, &cur);

		if (!known || cur.tm_min != ctl->lasttm.tm_min ||
		    cur.tm_hour != ctl->lasttm.tm_hour || cur.tm_yday != ctl->lasttm.tm_yday) {
			*timebreak = 1;
			if (!known || strftime(buf, sizeof(buf), "%b%e %H:%M", &cur) == 0)
				*buf = '\0';
			n = snprintf(tsbuf, size, "[%s] ", buf);
		} else if (delta < 10) {
			n = snprintf(tsbuf, size, "[  %+8.06f] ", delta);
		} else {
			n = snprintf(tsbuf, size, "[ %+9.06f] ", delta);
		}
		ctl->lasttm = cur;
		return n;
	}
	case UD_TF_TIME: {
		if (rec->sec >= 0 && rec->usec >= 0 && rec->usec < 1000000) {
			char *e = fmt_prefix(tsbuf, (uint64_t)rec->sec, (uint32_t)rec->usec);

			*e = '\0';
			return (int)(e - tsbuf);
		}
		fmt_sec_usec(buf, sizeof(buf), rec->sec, rec->usec);
		return snprintf(tsbuf, size, "[%s] ", buf);
	}
	case UD_TF_TIME_DELTA:
		fmt_sec_usec(buf, sizeof(buf), rec->sec, rec->usec);
		return snprintf(tsbuf, size, "[%s <%12.06f>] ", buf, delta);
	case UD_TF_ISO: {
		time_t t;
		long usec;

		ud_record_wall(ctl, rec, &t, &usec);
		ud_format_iso(t, usec, buf, sizeof(buf));
		return snprintf(tsbuf, size, "%s ", buf);
	}
	}
	*tsbuf = '\0';
	return 0;
}

/* The longest stamp of one format (far times included), with its NUL. */
#define UD_STAMP_MAX 160

/*
 * The time column of util-linux's print_record into @tsbuf (room for a
 * stamp of every format): the stamps of the formats side by side, in their
 * order. Returns the width util-linux indents continuation lines by: the
 * last stamp's alone, as it does. *@timebreak: reltime starts a new minute.
 */
static int format_time(struct ud_ctl *ctl, const struct urec *rec, double delta, char *tsbuf,
		       size_t size, int *timebreak)
{
	char one[UD_STAMP_MAX];
	size_t len = 0;
	int width = 0;

	*tsbuf = '\0';
	for (size_t i = 0; i < ctl->ntime_fmts; i++) {
		enum ud_timefmt fmt = ctl->time_fmts[i];

		if (fmt == UD_TF_NONE)
			return 0; /* resolved to be alone */
		width = format_one_time(ctl, fmt, rec, delta, one, sizeof(one), timebreak);
		if (width < 0)
			width = 0;
		if ((size_t)width >= sizeof(one))
			width = (int)sizeof(one) - 1; /* cut, as snprintf left it */
		if (len + (size_t)width < size) {
			memcpy(tsbuf + len, one, (size_t)width + 1);
			len += (size_t)width;
		}
	}
	return width;
}

/* What goes in front of each printed line of a record. */
struct line_prefix {
	char fp[32]; /* decode: "%-6s:%-6s: " */
	/* The time column, or raw's "<pri>[time] ". */
	char ts[UD_STAMP_MAX * UD_TF_COUNT];
	int timebreak;
};

/* The prefix of the first line (@first) or of a --force-prefix line after
 * it; the caller column widens the indent each time, as in util-linux. */
static void print_prefix(struct ud_ctl *ctl, const struct urec *rec, const struct line_prefix *pf,
			 bool first)
{
	if (*pf->fp)
		out_puts(pf->fp);
	if (*pf->ts) {
		if (ctl->color)
			out_puts(pf->timebreak ? COLOR_TIMEBREAK : COLOR_TIME);
		if (!ud_time_fmt_is(ctl, UD_TF_RELTIME) || ctl->raw || first)
			out_puts(pf->ts);
		else
			out_puts("[  +0.000000] "); /* reltime: later lines are 0 after the first */
		if (ctl->color)
			out_puts(COLOR_RESET);
	}
	if (rec->caller[0]) {
		char cid[64];
		int n = snprintf(cid, sizeof(cid), "[%*s] ", ctl->caller_width, rec->caller);

		ctl->indent += n;
		/* From the file with -K: escaped as the text is, so that it
		 * cannot drive a terminal (a kernel's ids are plain). */
		safe_write(ctl, cid, strlen(cid), 0);
	}
	if (rec->has_writer) {
		char wid[48];
		int n = snprintf(wid, sizeof(wid), "[%u:%s] ", rec->pid, rec->program[0] ? rec->program : "?");

		ctl->indent += n;
		/* A name is whatever the writer's argv[0] said: escaped. */
		safe_write(ctl, wid, strlen(wid), 0);
	}
}

/* One line (or the whole message) of a record, colored as dmesg colors it. */
static void print_line(struct ud_ctl *ctl, const struct urec *rec, const char *line,
		       size_t size)
{
	const char *subsys, *color;

	if (!ctl->color) {
		safe_write(ctl, line, size, ctl->indent);
		return;
	}
	subsys = subsys_delimiter(line, size);
	if (subsys) {
		out_puts(COLOR_SUBSYS);
		safe_write(ctl, line, (size_t)(subsys - line), ctl->indent);
		out_puts(COLOR_RESET);
		size -= (size_t)(subsys - line);
		line = subsys;
	}
	color = level_color(rec->level, line, size);
	if (color)
		out_puts(color);
	safe_write(ctl, line, size, ctl->indent);
	if (color)
		out_puts(COLOR_RESET);
}

/* The prefix and the message; with --force-prefix, every non-empty line of
 * it on its own prefixed line (util-linux's strtok loop). */
static void print_text(struct ud_ctl *ctl, const struct urec *rec, double delta)
{
	struct line_prefix pf = {.fp = "", .ts = "", .timebreak = 0};
	char *copy;
	const char *line;

	if (ctl->raw) {
		char ts[48];

		fmt_sec_usec(ts, sizeof(ts), rec->sec, rec->usec);
		ctl->indent = snprintf(pf.ts, sizeof(pf.ts), "<%ld>[%s] ", raw_fac_pri(rec), ts);
	} else {
		if (ctl->decode && facpri_valid(rec))
			snprintf(pf.fp, sizeof(pf.fp), "%-6s:%-6s: ",
				 ud_facility_names[rec->facility], ud_level_names[rec->level]);
		ctl->indent = format_time(ctl, rec, delta, pf.ts, sizeof(pf.ts), &pf.timebreak);
		ctl->indent += (int)strlen(pf.fp);
	}
	print_prefix(ctl, rec, &pf, true);
	if (!ctl->force_prefix) {
		print_line(ctl, rec, rec->mesg, rec->mesg_size);
		return;
	}
	copy = strndup(rec->mesg, rec->mesg_size);
	if (!copy)
		ud_fatal("out of memory");
	for (line = strtok(copy, "\n"); line;) {
		print_line(ctl, rec, line, strlen(line));
		line = strtok(NULL, "\n");
		if (!line || !*line)
			break;
		out_putc('\n');
		print_prefix(ctl, rec, &pf, false);
	}
	free(copy);
}

void ud_print_record(struct ud_ctl *ctl, const struct urec *rec)
{
	double delta;

	if (ctl->kmsg_out) {
		ud_print_kmsg(ctl, rec);
		return;
	}
	if (ctl->journal_json) {
		print_journal_json(ctl, rec);
		return;
	}
	if (!accept_record(ctl, rec)) {
		/* Current util-linux: the next delta counts from the record
		 * read last, shown or not (2.38 counted from the last shown). */
		ctl->last_sec = rec->sec;
		ctl->last_usec = rec->usec;
		return;
	}
	ctl->any_output = true;
	if (!rec->mesg_size) {
		if (!ctl->json)
			out_putc('\n');
		return;
	}
	delta = record_count_delta(ctl, rec);
	if (ctl->json) {
		print_json(ctl, rec);
		return;
	}
	print_text(ctl, rec, delta);
	if (rec->partial)
		out_puts(" [partial]");
	if (ctl->dict && rec->dict_len)
		print_dict(ctl, rec);
	out_putc('\n');
	if (ctl->follow)
		out_flush();
}
