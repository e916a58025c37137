// SPDX-License-Identifier: MIT
/*
 * source.c - where udmesg's records come from.
 *
 *  -B  a libprintk log file, opened read-only and read through the
 *      library's reader interface (reader.h): records from the last clear
 *      (like dmesg's SEEK_DATA on /dev/kmsg) or, with -W, from the end; -w
 *      then waits for more (pk_log_wait, no busy loop) until SIGINT/SIGTERM.
 *      The unfinalized newest record is shown with --partial, by default
 *      when no writer of the log is alive (pk_log_writers_alive).
 *  -F  syslog-format text, parsed as current util-linux parses it
 *      (get_next_syslog_record: a record starts at "\n<"; "<N>", "[s.us]"
 *      and the caller "[  T123]" are optional, with util-linux's laxness
 *      kept byte for byte).
 *  -K  /dev/kmsg records separated by NUL bytes, parsed as util-linux 2.40
 *      parses them (parse_kmsg_record), plus what udmesg adds: the
 *      dictionary lines and the ",partial" field libprintk's kmsg_read
 *      gives a line its writer never finished.
 *      The files of -F and -K are read whole into memory: a pipe or a FIFO
 *      to its end, a character or block device not at all (refused before
 *      it is opened).
 *  -S  the log's syslog actions: SIZE_BUFFER, READ_ALL, then the -F parser.
 *  -C -c -D -E -n: the syslog actions that change the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/syslog.h>

#include "reader.h"
#include "udmesg.h"

/* ----------------------------------------------------------- helpers -- */

/* Open @path as a log, or exit with one clear line. */
static struct pk_log *open_log(const char *path, unsigned flags)
{
	struct pk_log *log;
	struct stat st;
	int err;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		ud_fatal("%s: %s", path, strerror(EISDIR));
	err = pk_log_open_file(&log, path, 0, flags);
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		ud_fatal("cannot open %s: %s", path, strerror(-err));
	if (err)
		ud_fatal("%s: %s", path, pk_log_tool_strerror(err));
	return log;
}

/* A device is never a text log: /dev/zero would be read until memory ran
 * out, a terminal until someone typed an end. Pipes and FIFOs are read. */
static void refuse_device(const char *path, const struct stat *st)
{
	if (S_ISCHR(st->st_mode))
		ud_fatal("%s: a character device, not a log file", path);
	if (S_ISBLK(st->st_mode))
		ud_fatal("%s: a block device, not a log file", path);
}

/* Read a whole file into memory, NUL-terminated (one byte more is readable). */
static char *slurp(const char *path, size_t *size)
{
	size_t cap = 1 << 16, len = 0;
	char *buf;
	struct stat st;

	/* Before it is opened: a device's open may have effects. */
	if (stat(path, &st) == 0)
		refuse_device(path, &st);

	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		ud_fatal("cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0) {
		refuse_device(path, &st);
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			cap = (size_t)st.st_size + 2;
	}
	buf = malloc(cap);
	if (!buf)
		ud_fatal("%s: %s", path, strerror(ENOMEM));
	for (;;) {
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				ud_fatal("%s: %s", path, strerror(ENOMEM));
			}
			buf = nb;
			cap *= 2;
		}

		ssize_t n = read(fd, buf + len, cap - len - 1);

		if (n < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			free(buf); /* exits next: leak checkers stay quiet */
			ud_fatal("cannot read %s: %s", path, strerror(err));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*size = len;
	return buf;
}

/* util-linux's skip_item: past the first byte of @sep (or a NUL), or @end. */
static const char *skip_item(const char *begin, const char *end, const char *sep)
{
	while (begin < end) {
		int c = *begin++;

		if (c == '\0' || strchr(sep, c))
			break;
	}
	return begin;
}

void ud_decode_pri(long num, int *fac, int *lev)
{
	*fac = (int)((num & 0x3f8) >> 3); /* LOG_FAC */
	*lev = (int)(num & 7);		  /* LOG_PRI */
	if (*fac > UD_NFACILITIES)
		*fac = -1;
}

static void init_rec(struct urec *r)
{
	memset(r, 0, sizeof(*r));
	r->level = -1;
	r->facility = -1;
	r->pri = -1;
	r->flag = '-';
}

static bool needs_faclev(const struct ud_ctl *ctl)
{
	return ctl->fltr_lev || ctl->fltr_fac || ctl->decode || ctl->color || ctl->json;
}

static void set_time(struct urec *r, int64_t sec, int64_t usec)
{
	r->sec = sec;
	r->usec = usec;
	r->ts_nsec = (uint64_t)sec * 1000000000u + (uint64_t)usec * 1000u; /* wraps, never UB */
}

/* ------------------------------------------------- syslog text (-F) -- */

/* util-linux's parse_faclev for "<N>": a number ended by the '>', which
 * must come before @end; else nothing is taken (2.38 took any number and
 * skipped the byte after it). */
static const char *parse_faclev_syslog(const char *str, const char *end, struct urec *r)
{
	char *num_end = NULL;
	long num;

	if (!memchr(str, '>', (size_t)(end - str)))
		return str;
	errno = 0;
	num = strtol(str, &num_end, 10);
	if (!errno && num_end && num_end > str && *num_end == '>') {
		r->pri = num;
		ud_decode_pri(num, &r->facility, &r->level);
		return num_end + 1;
	}
	return str;
}

/* util-linux's parse_syslog_timestamp: "sec.usec]", its ']' before @end.
 * The seconds stay in the record even when the rest does not parse. */
static const char *parse_syslog_timestamp(const char *str0, const char *end, struct urec *r)
{
	const char *str = str0;
	char *num_end = NULL;
	long sec, usec = 0;

	if (!memchr(str0, ']', (size_t)(end - str0)))
		return str0;
	errno = 0;
	sec = strtol(str, &num_end, 10);
	set_time(r, sec, 0);
	if (!errno && num_end && *num_end == '.' && num_end[1]) {
		str = num_end + 1;
		num_end = NULL;
		usec = strtol(str, &num_end, 10);
		set_time(r, sec, usec);
	}
	if (errno || !num_end || num_end == str || *num_end != ']')
		return str0;
	return num_end + 1;
}

/* util-linux's room for a caller id: the digits of LONG_MAX and a NUL. */
#define SYSLOG_CALLER_MAX 20
_Static_assert(SYSLOG_CALLER_MAX <= sizeof(((struct urec *)0)->caller), "a caller id fits");

/*
 * util-linux's caller field after the time: "[" then ' ', 'T' or 'C'. The
 * id is what follows the spaces up to the ']' (or the record's end, its
 * last byte then dropped, as util-linux copies it), cut at a NUL; an id too
 * long for the field is dropped, the field skipped all the same. The text
 * starts one byte after the ']'. Returns the text, and its size in *@size.
 */
static const char *parse_syslog_caller(const char *begin, const char *end, struct urec *r,
				       size_t *size)
{
	const char *start = begin + 1;
	const char *after;
	size_t n;

	while (start < end && *start == ' ')
		start++;
	after = skip_item(begin, end, "]");
	n = after > start ? (size_t)(after - start) : 0;
	if (n < SYSLOG_CALLER_MAX) {
		/* util-linux copies n - 1 bytes; for n == 0 it overruns its
		 * buffer: here the id is empty. */
		size_t len = n ? strnlen(start, n - 1) : 0;

		memcpy(r->caller, start, len);
		r->caller[len] = '\0';
	}
	if (after >= end) {
		*size = 0;
		return end;
	}
	*size = (size_t)(end - after) - 1;
	return after + 1;
}

void ud_print_syslog_buffer(struct ud_ctl *ctl, const char *buf, size_t size)
{
	const char *next = buf;
	size_t next_size = size;
	struct urec rec;

	while (next && next_size) {
		const char *begin = NULL;
		int found = 0;

		init_rec(&rec);
		for (size_t i = 0; i < next_size; i++) {
			const char *p = next + i;
			const char *end = NULL;

			if (!begin)
				begin = p;
			if (i + 1 == next_size) {
				end = p + 1;
				i++;
			} else if (*p == '\n' && p[1] == '<') {
				end = p;
			}
			if (begin && !*begin)
				begin = NULL; /* zero(s) at the end of the buffer? */
			if (!begin || !end)
				continue;
			if (end <= begin)
				continue; /* an empty line */

			if (*begin == '<') {
				if (needs_faclev(ctl))
					begin = parse_faclev_syslog(begin + 1, end, &rec);
				else
					begin = skip_item(begin, end, ">");
			}
			if (*begin == '[' &&
			    (begin[1] == ' ' || (begin[1] >= '0' && begin[1] <= '9'))) {
				begin = parse_syslog_timestamp(begin + 1, end, &rec);
				if (begin < end && *begin == ' ')
					begin++;
			}
			if (*begin == '[' &&
			    (begin[1] == ' ' || begin[1] == 'T' || begin[1] == 'C')) {
				rec.mesg = parse_syslog_caller(begin, end, &rec, &rec.mesg_size);
			} else {
				rec.mesg = begin;
				rec.mesg_size = (size_t)(end - begin);
			}
			/* The newline that ends the last record is not part of
			 * it (unless "<N" took it: the text is empty). */
			if (rec.mesg_size && *end != '\n' && end[-1] == '\n')
				rec.mesg_size--;

			next_size -= (size_t)(end - next);
			next = next_size > 0 ? end + 1 : NULL;
			if (next_size > 0)
				next_size--;
			found = 1;
			break;
		}
		if (!found)
			break;
		ud_print_record(ctl, &rec);
	}
}

int ud_read_syslog_file(struct ud_ctl *ctl)
{
	size_t size;
	char *buf = slurp(ctl->file_path, &size);

	if (size) {
		if (ctl->raw)
			ud_print_raw_buffer(ctl, buf, size);
		else
			ud_print_syslog_buffer(ctl, buf, size);
	}
	ud_output_finish(ctl);
	free(buf);
	return 0;
}

/* -------------------------------------------------- kmsg records (-K) -- */

/* The longest record: util-linux reads records into PRINTK_MESSAGE_MAX + 1
 * bytes, and kmsg_read cuts them at PRINTK_MESSAGE_MAX. */
#define KMSG_REC_MAX PK_MESSAGE_MAX

static const char *parse_faclev_kmsg(const char *str, const char *end, struct urec *r)
{
	char *num_end = NULL;
	long num;

	if (!memchr(str, ',', (size_t)(end - str)))
		return str;
	errno = 0;
	num = strtol(str, &num_end, 10);
	if (!errno && num_end && *num_end == ',' && num_end > str) {
		r->pri = num;
		ud_decode_pri(num, &r->facility, &r->level);
		return num_end + 1;
	}
	return str;
}

static const char *parse_kmsg_timestamp(const char *str0, const char *end, struct urec *r)
{
	char *num_end = NULL;
	unsigned long long usec;

	if (!memchr(str0, ',', (size_t)(end - str0)) && !memchr(str0, ';', (size_t)(end - str0)))
		return str0;
	errno = 0;
	usec = strtoull(str0, &num_end, 10);
	if (errno || !num_end || num_end > end || (*num_end != ';' && *num_end != ','))
		return str0;
	r->sec = (int64_t)(usec / 1000000);
	r->usec = (int64_t)(usec % 1000000);
	r->ts_nsec = (uint64_t)usec * 1000;
	return num_end + 1;
}

static const char *parse_callerid(const char *p, const char *end, struct urec *r)
{
	const char *cid = strstr(p, "caller=");
	const char *semi = strchr(p, ';');

	if (cid && semi && cid < semi) {
		const char *id = cid + 7;
		const char *after = skip_item(id, end, ",;");
		size_t n = (size_t)(after - id);

		if (n >= sizeof(r->caller))
			return p;
		/* Less its separator; an id that is the record's last byte
		 * (util-linux copies past its buffer there) is empty. */
		if (n)
			n--;
		memcpy(r->caller, id, n);
		r->caller[n] = '\0';
		return after;
	}
	return p;
}

/* util-linux's unhexmangle_to_buffer: \xHH into bytes, in place. Returns the
 * decoded length plus one (its NUL). */
static size_t unhexmangle(const char *s, char *buf, size_t len)
{
	static const char hexd[] = "0123456789abcdef";
	size_t sz = 0;
	char *buf0 = buf;

	while (*s && sz < len - 1) {
		const char *h2, *h3;

		if (*s == '\\' && sz + 3 < len - 1 && s[1] == 'x' && s[2] && s[3] &&
		    (h2 = strchr(hexd, s[2] | 0x20)) && (h3 = strchr(hexd, s[3] | 0x20))) {
			*buf++ = (char)((h2 - hexd) << 4 | (h3 - hexd));
			s += 4;
			sz += 4;
		} else {
			*buf++ = *s++;
			sz++;
		}
	}
	*buf = '\0';
	return (size_t)(buf - buf0) + 1;
}

/*
 * One record of @sz bytes in @buf (NUL-terminated, modified in place).
 * Returns -1 for an empty one. @dict receives the dictionary lines.
 */
static int parse_kmsg_record(struct ud_ctl *ctl, struct urec *rec, char *buf, size_t sz, char *dict)
{
	const char *p = buf, *end;

	if (sz == 0 || !*buf)
		return -1;
	end = buf + (sz - 1);
	init_rec(rec);
	while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
		p++;

#define LAST_FIELD(s) (!(s) || !*(s) || ((s) > buf && (s)[-1] == ';'))
	/* A) priority and facility */
	if (needs_faclev(ctl) || ctl->raw)
		p = parse_faclev_kmsg(p, end, rec);
	else
		p = skip_item(p, end, ",");
	if (LAST_FIELD(p))
		goto mesg;
	/* B) sequence number */
	{
		const char *q = skip_item(p, end, ",;");

		rec->seq = strtoull(p, NULL, 10);
		p = q;
	}
	if (LAST_FIELD(p))
		goto mesg;
	/* C) timestamp */
	p = parse_kmsg_timestamp(p, end, rec);
	if (LAST_FIELD(p))
		goto mesg;
	/* D) the flags field ("-", "c") */
	{
		const char *q = skip_item(p, end, ",;");

		if (q > p && (*p == 'c' || *p == '-'))
			rec->flag = *p;
		p = q;
	}
	/* the optional caller field, then libprintk's optional "partial" */
	p = parse_callerid(p, end, rec);
	if (end - p >= 7 && !memcmp(p, "partial", 7) && (p[7] == ';' || p[7] == ',')) {
		rec->partial = true;
		p += 8;
	}
#undef LAST_FIELD

mesg:
	/* E) message text, up to its newline */
	rec->mesg = p;
	p = skip_item(p, end, "\n");
	/*
	 * util-linux steps back from the byte after the newline onto it, or
	 * from where skip_item() stopped. In a one-byte record that is the
	 * byte before the buffer, which util-linux reads: here it stays
	 * unread and is taken for no newline, and the length given to
	 * unhexmangle() wraps to 0 (the whole text) as util-linux's does.
	 */
	bool before_buf = false;

	if (*p && *p != '\n') {
		if (p > buf)
			p--;
		else
			before_buf = true;
	}

	/* F) dictionary: " KEY=VALUE\n" lines after the text's newline */
	{
		const char *d = (!before_buf && *p == '\n') ? p + 1 : NULL;
		size_t dl = 0;

		while (d && *d == ' ') {
			const char *nl = strchr(d, '\n');
			size_t n = nl ? (size_t)(nl - d) : strlen(d);
			char tmp[KMSG_REC_MAX + 1];

			memcpy(tmp, d + 1, n - 1);
			tmp[n - 1] = '\0';
			dl += unhexmangle(tmp, dict + dl, n); /* includes its NUL */
			d = nl ? nl + 1 : NULL;
		}
		rec->dict = dict;
		rec->dict_len = dl;
	}

	rec->mesg_size = unhexmangle(rec->mesg, (char *)rec->mesg,
				     before_buf ? 0 : (size_t)(p - rec->mesg) + 1) -
			 1;
	return 0;
}

void ud_print_kmsg_buffer(struct ud_ctl *ctl, const char *buf, size_t size)
{
	static char str[KMSG_REC_MAX + 1], dict[KMSG_REC_MAX + 1];
	struct urec rec;
	size_t pos = 0;

	while (pos < size) {
		size_t len = strnlen(buf + pos, size - pos);

		if (len >= sizeof(str))
			ud_fatal("%s: record too large", ctl->file_path);
		memcpy(str, buf + pos, len);
		str[len] = '\0';
		if (parse_kmsg_record(ctl, &rec, str, len, dict) == 0)
			ud_print_record(ctl, &rec);
		pos += len;
		if (pos < size)
			pos++;
	}
}

int ud_read_kmsg_file(struct ud_ctl *ctl)
{
	size_t size;
	char *buf = slurp(ctl->file_path, &size);

	ud_print_kmsg_buffer(ctl, buf, size);
	ud_output_finish(ctl);
	free(buf);
	return 0;
}

/* ------------------------------------------------------ the log (-B) -- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void log_rec_to_urec(const struct ud_ctl *ctl, const struct pk_record *r, struct urec *u)
{
	u->mesg = r->text;
	u->mesg_size = r->text_len;
	u->pri = (long)r->facility << 3 | r->level;
	ud_decode_pri(u->pri, &u->facility, &u->level);
	u->ts_nsec = r->ts_nsec;
	u->sec = (int64_t)(r->ts_nsec / 1000000000u);
	u->usec = (int64_t)(r->ts_nsec % 1000000000u / 1000u);
	u->seq = r->seq;
	if (ctl->caller)
		snprintf(u->caller, sizeof(u->caller), "T%u", r->tid);
	else
		u->caller[0] = '\0';
	u->has_writer = ctl->writer;
	if (ctl->writer) {
		u->pid = r->pid;
		if (pk_log_writer_name(ctl->log, r->pid, u->program, sizeof(u->program)))
			u->program[0] = '\0';
	}
	u->dict = r->dict;
	u->dict_len = r->dict_len;
	u->flag = (r->flags & PK_REC_CONT) ? 'c' : '-';
	u->partial = r->state == PK_REC_UNFINALIZED;
	u->log_rec = r;
}

static void set_log_time_base(struct ud_ctl *ctl, const struct pk_log_info *info)
{
	ctl->base_ns = info->realtime_offset_ns;
	ctl->base_by_usec = false;
}

/*
 * Dumping a large log in the default format: threads (one per CPU, at most
 * four) read and format chunks of records into private buffers; the main
 * thread formats too and writes the chunks out in order. A chunk is a range
 * of sequence numbers; a record lost to overwriting while we read shows up
 * as a gap, exactly as in a sequential read. A chunk that meets a record
 * still being written stops there, and so does the dump: what follows is the
 * sequential reader's, as if there had been no threads.
 */
#define DUMP_CHUNK   1024
#define DUMP_SLOTS   8
#define DUMP_THREADS 4
#define DUMP_DONE    UINT64_MAX /* a chunk that printed all of its range */

struct dump {
	const struct ud_ctl *ctl;
	struct pk_log *log;
	struct pk_text_reader *tr;
	uint64_t seq0, end;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under the lock: */
	size_t nchunks;					/* lowered to i + 1 when chunk i stops early */
	uint64_t stop_seq;				/* end, or where the first early stop was */
	size_t next;					/* the next chunk to format */
	size_t written;					/* chunks written out */
	struct pk_outbuf *done[DUMP_SLOTS];		/* chunk i at i % DUMP_SLOTS, formatted */
	struct pk_outbuf *pool[DUMP_SLOTS + DUMP_THREADS]; /* empty buffers, reused */
	int npool;
};

/* Format chunk @i into @b (@cache: the thread's); returns DUMP_DONE or the
 * seq it stopped at. */
static uint64_t dump_chunk(struct dump *d, size_t i, struct pk_outbuf *b, struct pk_text_cache *cache)
{
	static _Thread_local struct pk_record rec;
	uint64_t seq = d->seq0 + (uint64_t)i * DUMP_CHUNK;
	uint64_t end = seq + DUMP_CHUNK < d->end ? seq + DUMP_CHUNK : d->end;
	uint64_t stop = DUMP_DONE;

	out_capture_begin(b);
	for (;;) {
		seq = ud_fast_run(d->ctl, d->tr, cache, seq, end);
		if (seq >= end)
			break;
		if (pk_log_read(d->log, seq, &rec, 0) != 0) {
			stop = seq;
			break;
		}
		if (rec.seq >= end)
			break; /* lost up to the next chunk */
		ud_print_fast(d->ctl, rec.ts_nsec, rec.text, rec.text_len);
		seq = rec.seq + 1;
	}
	out_capture_end();
	return stop;
}

static void dump_loop(struct dump *d, bool writer)
{
	struct pk_text_cache *cache = pk_text_cache_new();

	pthread_mutex_lock(&d->lock);
	for (;;) {
		if (writer) {
			while (d->written < d->nchunks && d->done[d->written % DUMP_SLOTS]) {
				struct pk_outbuf *b = d->done[d->written % DUMP_SLOTS];

				d->done[d->written % DUMP_SLOTS] = NULL;
				d->written++;
				pthread_cond_broadcast(&d->cond);
				pthread_mutex_unlock(&d->lock);
				out_capture_write(b);
				pthread_mutex_lock(&d->lock);
				d->pool[d->npool++] = b;
			}
			if (d->written == d->nchunks)
				break;
		}
		if (d->next < d->nchunks && d->next < d->written + DUMP_SLOTS) {
			size_t i = d->next++;
			struct pk_outbuf *b = d->npool ? d->pool[--d->npool] : out_capture_new();

			pthread_mutex_unlock(&d->lock);
			uint64_t stop = dump_chunk(d, i, b, cache);

			pthread_mutex_lock(&d->lock);
			if (i < d->nchunks) {
				d->done[i % DUMP_SLOTS] = b;
				if (stop != DUMP_DONE) {
					d->nchunks = i + 1;
					d->stop_seq = stop;
				}
			} else {
				d->pool[d->npool++] = b; /* after an early stop: not wanted */
			}
			pthread_cond_broadcast(&d->cond);
			continue;
		}
		if (!writer && d->next >= d->nchunks)
			break;
		pthread_cond_wait(&d->cond, &d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	pk_text_cache_free(cache);
}

static void *dump_worker(void *arg)
{
	dump_loop(arg, false);
	return NULL;
}

/*
 * UDMESG_THREADS, or the CPUs we may run on. Not fewer when the machine is
 * busy: the load average lags by a minute, and a second thread that has to
 * share a CPU costs about nothing (docs/performance.md).
 */
static int dump_threads(void)
{
	const char *env = getenv("UDMESG_THREADS");
	cpu_set_t set;
	int n = 1;

	if (env && *env)
		n = atoi(env);
	else if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n > DUMP_THREADS)
		n = DUMP_THREADS;
	return n < 1 ? 1 : n;
}

/*
 * Where the dump workers run: each on an allowed CPU other than the one the
 * main thread is on, in turn. Left to the scheduler, a new thread may
 * start on its creator's CPU and stay there for part of the dump
 * (docs/performance.md has the figures). Nothing is pinned when we cannot
 * tell the CPUs or there is no other one.
 */
struct worker_cpus {
	cpu_set_t allowed;
	int main_cpu, next, count;
};

static void worker_cpus_init(struct worker_cpus *w)
{
	w->main_cpu = sched_getcpu();
	w->next = 0;
	w->count = 0;
	if (w->main_cpu >= 0 && sched_getaffinity(0, sizeof(w->allowed), &w->allowed) == 0)
		w->count = CPU_COUNT(&w->allowed) - (CPU_ISSET(w->main_cpu, &w->allowed) ? 1 : 0);
}

/* The next worker's CPU into @one; false: leave the worker unpinned. */
static bool worker_cpus_next(struct worker_cpus *w, cpu_set_t *one)
{
	if (w->count < 1)
		return false;
	for (int tries = 0; tries < CPU_SETSIZE; tries++) {
		int cpu = w->next;

		w->next = (w->next + 1) % CPU_SETSIZE;
		if (CPU_ISSET(cpu, &w->allowed) && cpu != w->main_cpu) {
			CPU_ZERO(one);
			CPU_SET(cpu, one);
			return true;
		}
	}
	return false;
}

/* Print the finalized records from *@seq on in parallel; *@seq moves past them. */
static void dump_parallel(const struct ud_ctl *ctl, struct pk_log *log, uint64_t *seq)
{
	int nthreads = dump_threads();
	struct pk_log_info info;

	if (nthreads < 2)
		return;

	/* Up to the newest reservation: a chunk stops at a record that is not
	 * finalized (pk_log_next_seq() would find it by reading every record). */
	pk_log_info(log, &info);

	uint64_t first = info.first_seq, end = info.next_reserve_seq;
	uint64_t seq0 = *seq > first ? *seq : first;
	pthread_t tids[DUMP_THREADS];
	int started = 0;

	if (end <= seq0 || end - seq0 < 4 * DUMP_CHUNK)
		return;

	struct dump d = {
		.ctl = ctl,
		.log = log,
		.tr = pk_log_text_reader(log),
		.seq0 = seq0,
		.end = end,
		.nchunks = (size_t)((end - seq0 + DUMP_CHUNK - 1) / DUMP_CHUNK),
		.stop_seq = end,
	};

	pthread_mutex_init(&d.lock, NULL);
	pthread_cond_init(&d.cond, NULL);

	struct worker_cpus cpus;

	worker_cpus_init(&cpus);
	for (int i = 1; i < nthreads; i++) {
		pthread_attr_t attr;
		cpu_set_t one;

		pthread_attr_init(&attr);
		if (worker_cpus_next(&cpus, &one))
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		/* A CPU we may not use after all (the cpuset changed): unpinned. */
		if (pthread_create(&tids[started], &attr, dump_worker, &d) == 0 ||
		    pthread_create(&tids[started], NULL, dump_worker, &d) == 0)
			started++;
		pthread_attr_destroy(&attr);
	}
	dump_loop(&d, true);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	while (d.npool)
		out_capture_free(d.pool[--d.npool]);
	for (int i = 0; i < DUMP_SLOTS; i++)
		out_capture_free(d.done[i]); /* formatted past an early stop */
	pthread_cond_destroy(&d.cond);
	pthread_mutex_destroy(&d.lock);
	*seq = d.stop_seq;
}

/* Stop cleanly on the signals that end a -w. */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: the wait returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * The records are read with pk_log_read(), except on the fast path, where
 * pk_text_read() copies each text straight into the output: dumping a
 * large log is dominated by per-record costs.
 */
int ud_read_log(struct ud_ctl *ctl)
{
	struct pk_log *log = ctl->log ? ctl->log : open_log(ctl->log_path, PK_LOG_RDONLY);
	struct pk_text_reader *tr = pk_log_text_reader(log);
	struct pk_text_cache *cache = ctl->fast ? pk_text_cache_new() : NULL;
	static struct pk_record rec;
	struct pk_log_info info;
	struct urec u;
	uint64_t seq;
	int partial = ctl->partial;

	ctl->log = log;
	pk_log_info(log, &info);
	set_log_time_base(ctl, &info);
	ctl->caller_width = 6; /* the kernel's "[%6s]" */
	if (partial < 0)
		partial = !pk_log_writers_alive(log);
	if (ctl->follow) {
		partial = 0; /* an open line may still grow */
		catch_stop_signals();
	}

	if (ctl->follow_new)
		seq = pk_log_next_seq(log);
	else
		seq = info.clear_seq;

	if (ctl->fast && !ctl->follow)
		dump_parallel(ctl, log, &seq);

	init_rec(&u);
	while (!stop_signal) {
		if (ctl->fast)
			seq = ud_fast_run(ctl, tr, cache, seq, UINT64_MAX);

		int err = pk_log_read(log, seq, &rec, partial ? PK_READ_UNFINALIZED : 0);

		if (err == 0) {
			seq = rec.seq + 1;
			if (ctl->fast && rec.state == PK_REC_FINAL) {
				ud_print_fast(ctl, rec.ts_nsec, rec.text, rec.text_len);
				continue;
			}
			log_rec_to_urec(ctl, &rec, &u);
			ud_print_record(ctl, &u);
			if (u.partial && !ctl->follow)
				break; /* the newest record: nothing after it */
			continue;
		}
		if (err == -EAGAIN)
			err = pk_log_check(log); /* nothing new: is the file still whole? */
		if (err && err != -EAGAIN)
			ud_fatal("%s: read failed: %s", ctl->log_path, pk_log_tool_strerror(err));
		if (!ctl->follow)
			break;
		out_flush();
		pk_log_wait(log, seq, 500 * 1000 * 1000);
	}
	ud_output_finish(ctl);
	pk_text_cache_free(cache);
	pk_log_destroy(log);
	return 0;
}

/* ------------------------------------------------ syslog actions (-S) -- */

static const char *action_name(int action)
{
	switch (action) {
	case PK_SYSLOG_ACTION_READ_ALL:
		return "READ_ALL";
	case PK_SYSLOG_ACTION_CLEAR:
		return "CLEAR";
	case PK_SYSLOG_ACTION_CONSOLE_OFF:
		return "CONSOLE_OFF";
	case PK_SYSLOG_ACTION_CONSOLE_ON:
		return "CONSOLE_ON";
	case PK_SYSLOG_ACTION_CONSOLE_LEVEL:
		return "CONSOLE_LEVEL";
	case PK_SYSLOG_ACTION_SIZE_BUFFER:
		return "SIZE_BUFFER";
	default:
		return "?";
	}
}

int ud_read_syslog_action(struct ud_ctl *ctl)
{
	struct pk_log *log = ctl->log ? ctl->log : open_log(ctl->log_path, PK_LOG_RDONLY);
	size_t bufsize = ctl->bufsize;
	struct pk_log_info info;
	char *buf;
	int n;

	pk_log_info(log, &info);
	set_log_time_base(ctl, &info);
	if (!bufsize) {
		n = pk_do_syslog_log(log, PK_SYSLOG_ACTION_SIZE_BUFFER, NULL, 0);
		if (n < 0)
			ud_fatal("%s: syslog %s failed: %s", ctl->log_path,
				 action_name(PK_SYSLOG_ACTION_SIZE_BUFFER), strerror(-n));
		bufsize = (size_t)n;
	}
	if (bufsize > (size_t)INT32_MAX - 8)
		bufsize = (size_t)INT32_MAX - 8;
	buf = malloc(bufsize + 8 + 1);
	if (!buf)
		ud_fatal("%s", strerror(ENOMEM));
	n = pk_do_syslog_log(log, PK_SYSLOG_ACTION_READ_ALL, buf, (int)(bufsize + 8));
	if (n < 0)
		ud_fatal("%s: syslog %s failed: %s", ctl->log_path,
			 action_name(PK_SYSLOG_ACTION_READ_ALL), strerror(-n));
	buf[n] = '\0';
	if (n > 0) {
		if (ctl->raw)
			ud_print_raw_buffer(ctl, buf, (size_t)n);
		else
			ud_print_syslog_buffer(ctl, buf, (size_t)n);
	}
	ud_output_finish(ctl);
	free(buf);
	pk_log_destroy(log);
	return 0;
}

int ud_log_action(struct ud_ctl *ctl, int action, int arg)
{
	/* Validated read-only first, for the messages a reader gets; the
	 * writable open then neither creates a file nor restamps its clock. */
	struct pk_log *log = open_log(ctl->log_path, PK_LOG_RDONLY);
	int err;

	pk_log_destroy(log);
	err = pk_log_open_control(&log, ctl->log_path);
	if (err)
		ud_fatal("cannot open %s for writing: %s", ctl->log_path, pk_log_tool_strerror(err));
	err = pk_do_syslog_log(log, action, NULL, arg);
	pk_log_destroy(log);
	if (err < 0)
		ud_fatal("%s: syslog %s failed: %s", ctl->log_path, action_name(action),
			 strerror(-err));
	return 0;
}
