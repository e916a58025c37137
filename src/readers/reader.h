// SPDX-License-Identifier: MIT
/*
 * reader.h - the reader interface: what a program that reads libprintk logs
 * (udmesg) needs beyond <printk/log.h>, with the ring's internals kept out.
 *
 * This is the one private header the tools may include, besides the public
 * <printk/...> headers; it is never installed. Everything here is
 * implemented in reader.c on top of the library's internals, so a tool
 * never depends on how the ring, the log state or the writer registry are
 * laid out.
 *
 * A reader opens a log with pk_log_open_file(..., PK_LOG_RDONLY), reads its
 * records with pk_log_read() and uses this interface for the rest: the
 * log's shared state (pk_log_info), a fast text-only reader for dumps
 * (pk_text_read), waiting for new records (pk_log_wait), whether any writer
 * is left (pk_log_writers_alive), the /dev/kmsg form of a record
 * (pk_log_kmsg_format), its JSON line (pk_log_json_format) and its journal
 * export entry (pk_log_export_format), the syslog actions' way in (pk_log_open_control),
 * the log of PRINTK_OPTS (pk_opts_log_buf_file), how a reader keeps the
 * library's printk start-up away (PK_READER_ONLY_PROGRAM), and opening the
 * files a tool keeps (pk_tool_open: pk-forward's cursor) by the library's
 * rule for symbolic links, and a TLS client session for a tool's own
 * protocol (pk_tool_tls_*: pk-forward's https).
 *
 * Each function says its context: async-signal-safe or not, whether it may
 * block, whether it is thread-safe.
 *
 * One function is kmsg.c's, as it makes a /dev/kmsg reader:
 * pk_kmsg_open_reader(), for a program that follows a log file's name and
 * keeps the handle of the file its readers read. The pk_tool_tls_*
 * functions are forward/tool_tls.c's, over the consoles' TLS layer.
 */
#ifndef PRINTK_READER_H
#define PRINTK_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <printk/kmsg.h>
#include <printk/log.h>

struct stat;

/*
 * Room pk_text_read() needs at @dst: the text is copied in whole 16-byte
 * units, so up to 8 bytes past the longest text may be written.
 */
#define PK_TEXT_READ_ROOM (PK_TEXT_MAX + 8)

/* ------------------------------------------------- start-up of readers -- */

/*
 * A program that only reads logs says so once, at file scope:
 *
 *	PK_READER_ONLY_PROGRAM;
 *
 * The library's printk start-up (run when the library is loaded, because a
 * printk may come from a signal handler before anything else) then leaves
 * PRINTK_OPTS alone: it opens no log_buf_file= as a writer (which would
 * create a missing file, stamp this process's wall-clock offset into the
 * header and make a dead log look alive), registers no console and
 * installs no crash handler. The program still reads PRINTK_OPTS itself
 * (pk_opts_log_buf_file); a printk it makes anyway goes to a memory log.
 *
 * It is a definition the library looks for with a weak reference, so the
 * answer is there before any code runs (no constructor order involved).
 */
#define PK_READER_ONLY_PROGRAM                         \
	extern const char pk_reader_only_program_mark; \
	const char pk_reader_only_program_mark = 1

/* True in a program that used PK_READER_ONLY_PROGRAM: for the library's
 * start-up. Async-signal-safe, thread-safe, never blocks. */
bool pk_reader_only_program(void);

/* --------------------------------------------------------- log state -- */

/* A snapshot of what a log keeps next to its records. */
struct pk_log_info {
	uint64_t first_seq;	    /* the oldest record still in the ring */
	uint64_t next_reserve_seq;  /* what the next record will get: no record
				     * at or past it exists (cheap; the end of
				     * the complete ones is pk_log_next_seq()'s,
				     * which looks at records) */
	uint64_t clear_seq;	    /* the first record after the last clear */
	int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC as the
				     * writers saw it: the wall clock of time 0 */
	size_t buf_len;		    /* bytes of text area */
	int console_loglevel;
	int saved_console_loglevel; /* CONSOLE_OFF's saved level, -1 if none */
	int minimum_console_loglevel;
	int default_console_loglevel;
	int clock;	      /* the writers' timestamp clock: 0 none published,
			       * 1 CLOCK_MONOTONIC, 2 the TSC (docs/clock.md) */
	int clock_this_boot;  /* 1 if that clock was published in this boot */
};

/*
 * Fill @info from @log: a few loads of shared words (fields may come from
 * moments apart while writers run; the first call reads this boot's id). Async-signal-safe, thread-safe, never
 * blocks. Returns 0, or -EINVAL for NULL arguments.
 */
int pk_log_info(struct pk_log *log, struct pk_log_info *info);

/* ------------------------------------------------- reading and waiting -- */

/*
 * The fast reader of a dump that needs only each record's time and text
 * (udmesg's default format). A text reader is a view of the log, valid as
 * long as the log handle: nothing to allocate or free.
 */
struct pk_text_reader;

/* @log's text reader. Async-signal-safe, thread-safe, never blocks. */
struct pk_text_reader *pk_log_text_reader(struct pk_log *log);

/*
 * A reading thread's memory of the formats of the deferred records it read
 * (their table entries copied, checked and parsed once): pass it to every
 * pk_text_read() of that thread. NULL when memory is short; reads then
 * work without it. Not for signal handlers (it is allocated).
 */
struct pk_text_cache;
struct pk_text_cache *pk_text_cache_new(void);
void pk_text_cache_free(struct pk_text_cache *cache);

/*
 * If record @seq is complete (finalized) and still in the ring, copy its
 * text to @dst (PK_TEXT_READ_ROOM bytes; not NUL-terminated), set
 * *@ts_nsec and return the text's length; a deferred record is expanded
 * through @cache, this thread's (NULL: none). -EAGAIN in every other case
 * (not written yet, still open, overwritten, a hole, a writer racing with
 * the copy): pk_log_read() then says what is there. Lock-free: async-
 * signal-safe with a NULL @cache, thread-safe (any number of threads may
 * read at once, each with its own cache), never blocks.
 */
int pk_text_read(struct pk_text_reader *tr, struct pk_text_cache *cache, uint64_t seq, uint64_t *ts_nsec,
		 char *dst);
/*
 * The same, and *@plain true when the text is known to hold only bytes
 * 0x20-0x7e, which dmesg prints as they are (a deferred record of plain
 * conversions expanded through @cache, its strings looked at as they were
 * copied); false: not known (look at the text).
 */
int pk_text_read_plain(struct pk_text_reader *tr, struct pk_text_cache *cache, uint64_t seq,
		       uint64_t *ts_nsec, char *dst, bool *plain);

/*
 * Sleep until a record with sequence number >= @seq may be readable, or
 * @timeout_ns passes (negative: no limit; a read-only handle looks again at
 * least every 50 ms, as it cannot ask writers to wake it). Returns 0,
 * -ETIMEDOUT or -EINTR (a signal handler ran). Blocks; thread-safe;
 * async-signal-safe (a futex wait).
 */
int pk_log_wait(struct pk_log *log, uint64_t seq, int64_t timeout_ns);

/*
 * 1 if a process (this one included) still writes @log, 0 if every writer
 * is gone (a post-mortem read: the newest record may stay open forever).
 * Memory logs: 1. The library's one test (logfile.c): each writer's lock
 * byte, confirmed by its pid. Thread-safe, does not block (a few system
 * calls per writer slot), not async-signal-safe.
 */
int pk_log_writers_alive(struct pk_log *log);

/*
 * @rec (from pk_log_read) as a /dev/kmsg read returns it, into @out of
 * PK_MESSAGE_MAX bytes, cut there as the kernel cuts it, not
 * NUL-terminated; returns the length. The library's own formatter: an
 * unfinalized record gets the ",partial" field kmsg_read gives it, the
 * caller field is there when printk.caller is on in this process
 * (pk_set_printk_caller). Async-signal-safe, thread-safe, never blocks.
 */
size_t pk_log_kmsg_format(const struct pk_record *rec, char *out);

/*
 * @rec as one JSON line with journald's field names (docs/json.md), into
 * @out of PK_LOG_JSON_MAX bytes; returns the length. @ident: the
 * SYSLOG_IDENTIFIER or NULL; @rt_offset_ns: the log's realtime offset
 * (pk_log_info). The ,json consoles' formatter. Async-signal-safe,
 * thread-safe, never blocks.
 */
#define PK_LOG_JSON_MAX 16384
size_t pk_log_json_format(const struct pk_record *rec, const char *ident, int64_t rt_offset_ns, char *out);

/*
 * @rec as one entry of systemd's Journal Export Format (the fields of the
 * journald console, the address fields first, the empty line that ends an
 * entry; docs/forwarding.md), into @out of PK_LOG_EXPORT_MAX bytes;
 * returns the length. @ident: SYSLOG_IDENTIFIER, @hostname: _HOSTNAME,
 * @boot_id: _BOOT_ID (32 hex digits), each NULL to leave it out;
 * @rt_offset_ns: the log's realtime offset. pk-forward's journal-remote
 * target. Async-signal-safe, thread-safe, never blocks.
 */
#define PK_LOG_EXPORT_MAX 8192
size_t pk_log_export_format(const struct pk_record *rec, const char *ident, const char *hostname,
			    const char *boot_id, int64_t rt_offset_ns, char *out);

/*
 * fstat(2) of the file @log maps (a file log keeps its descriptor open):
 * which file a handle reads, whatever its name means by now, so a program
 * that follows a name can tell another file took it. 0, -EINVAL for a
 * memory log or an image, or fstat's error. Thread-safe, never blocks,
 * async-signal-safe.
 */
int pk_log_file_stat(struct pk_log *log, struct stat *st);

/*
 * A /dev/kmsg reader on @log, a read-only handle of a log file that the
 * caller keeps (it must outlive the reader; any number of readers may share
 * it): what pk_kmsg_open_file(path, @flags) gives, the post-mortem rule
 * included (no writer alive at the open: the newest record is returned
 * even if open, ",partial"), on a file the caller has identified and can
 * check and wait on. @flags: O_RDONLY, optionally | O_NONBLOCK; -EINVAL
 * otherwise. Errors as pk_kmsg_open_log()'s. Thread-safe; does not block;
 * not async-signal-safe (allocates).
 */
int pk_kmsg_open_reader(struct kmsg_file **filep, struct pk_log *log, int flags);

/* ---------------------------------------------- logs in memory images -- */

/*
 * A log found in a copy of another process's memory (udmesg --core reads
 * one out of an ELF core file). Everything in such an image is untrusted,
 * and nothing ever writes to it: it is validated as a log file's header is.
 */

/* What pk_log_image_probe() found. */
struct pk_log_image_info {
	size_t region_len; /* bytes the log spans from its start */
	bool file;	   /* the ring at the start of a log file's mapping (else
			    * a memory log: pk_log_create, pk_log_create_in) */
	bool printk;	   /* a process made it its printk log */
};

/*
 * Is there the start of a log at @head, with @avail bytes readable from
 * there? Any alignment; only the header is looked at, and the first 8 bytes
 * alone decide most places (a scan over a whole core stays cheap). Returns
 * 0 and @info (whose region_len may be more than @avail: the caller says
 * "truncated"), or -EPROTO (no log here), -EPROTONOSUPPORT, -EBADMSG as
 * pk_log_open_file() says them, -ENOSPC when the header itself is cut off
 * (@info->region_len is then what the header claims if enough of it is
 * there, else 0). Thread-safe, never blocks,
 * async-signal-safe.
 */
int pk_log_image_probe(const void *head, size_t avail, struct pk_log_image_info *info);

/*
 * A read-only handle on the log whose region (pk_log_image_probe's
 * *region_len bytes) starts at @image, which must be 64-byte aligned and
 * stay unchanged and mapped until pk_log_destroy(); the caller may well map
 * it read-only. @pid and @comm (NULL: unknown) name the process the image
 * comes from, for pk_log_writer_name(). The log is post-mortem:
 * pk_log_writers_alive() says 0, pk_log_read() passes over records their
 * writer never finished and hands out the newest one, open, with
 * PK_READ_UNFINALIZED. Errors as pk_log_attach()'s (-EBADMSG: a header
 * whose words contradict each other or the descriptors). Not
 * async-signal-safe (allocates); thread-safe.
 */
int pk_log_open_image(struct pk_log **logp, const void *image, size_t len, uint32_t pid,
		      const char *comm);

/* --------------------------------------------------- changing a log -- */

/*
 * Open the existing log file @path to apply syslog actions to it
 * (pk_do_syslog_log: clear, console level): writable, but never created
 * (-ENOENT), and the header keeps the wall-clock offset its writers left
 * (opening as a writer stamps this process's). Errors as
 * pk_log_open_file()'s. Not async-signal-safe (allocates); thread-safe.
 */
int pk_log_open_control(struct pk_log **logp, const char *path);

/* ------------------------------------------------------- PRINTK_OPTS -- */

/*
 * log_buf_file= of PRINTK_OPTS in this process's environment, into @buf of
 * @size bytes (PATH_MAX is always enough). Returns its length, 0 when
 * PRINTK_OPTS names no log file, -ENAMETOOLONG when @size is too small.
 * Reads the environment: not thread-safe against setenv(), not
 * async-signal-safe; never blocks.
 */
int pk_opts_log_buf_file(char *buf, size_t size);

/* ------------------------------------------------ geometry and writers -- */

/* What a log is made of, and the losses it counts (udmesg --info). Read
 * from the handle's validated geometry and the shared header's counters. */
struct pk_log_geometry {
	uint64_t record_slots;	 /* record descriptors: the most records it holds */
	uint64_t data_bytes;	 /* the text area (log_buf_len) */
	uint64_t region_bytes;	 /* the ring: header page, descriptors, text area */
	uint64_t file_bytes;	 /* the whole file; 0 for a memory log */
	unsigned writer_slots;	 /* entries in the writer table; 0 for a memory log */
	uint64_t reserve_failed; /* stores refused: the oldest record was still being written */
	uint64_t holes;		 /* records whose writer died while writing them */
	uint64_t corrupt;	 /* damaged records skipped or repaired */
	uint64_t stolen;	 /* slots taken from reservations that never claimed them */
	unsigned format_version; /* 4: with the pool of lanes; 3: without (docs/lanes.md) */
	unsigned lanes;		 /* lanes in the pool; 0: none */
	uint64_t lane_bytes;	 /* the size of each */
	uint64_t lanes_in_use;	 /* lanes a thread owns */
	uint64_t lane_pending;	 /* lane records not merged into the ring yet */
	uint64_t lane_merged;	 /* lane records merged */
	uint64_t lane_full;	 /* records that found their lane full (stored in the ring) */
	uint64_t lane_corrupt;	 /* lane contents that did not validate (records lost) */
};

/* 0, or -EINVAL for NULL arguments. Async-signal-safe, thread-safe, never
 * blocks. */
int pk_log_geometry(struct pk_log *log, struct pk_log_geometry *g);

/* One entry of a log file's writer table. */
struct pk_log_writer {
	uint32_t pid;		    /* as the writer saw itself (its pid namespace) */
	int alive;		    /* 1 while it holds its entry (or cannot be told), 0 once gone */
	int64_t attach_realtime_ns; /* CLOCK_REALTIME when it registered */
	char name[16];		    /* its program name, "" if unknown */
	/* The writer that held the entry before it (gone), 0 if none: so a
	 * restarted program still names the run before. */
	uint32_t prev_pid;
	char prev_name[16];
};

/*
 * Entry @slot (1 to writer_slots - 1; 0 is never a writer) of @log's writer
 * table into @w: 0, -ENOENT (never used), -ERANGE (no such entry, or a
 * memory log), -EINVAL (NULL). The fields come from the file and may have
 * been written by any process. Thread-safe; never blocks (fcntl, kill and
 * /proc reads); not async-signal-safe.
 */
int pk_log_writer_at(struct pk_log *log, unsigned slot, struct pk_log_writer *w);

/*
 * Set the level of the consoles named @name (1 to 15 bytes) in every
 * process printing @log: its own level @level (0 to 15), or -1 to follow
 * console_loglevel again. Kept in the log's shared state (up to
 * PK_LOG_CONSOLE_LEVELS names; it outlives the processes, as the console
 * level does) and applied by each writer before it next prints, to the
 * consoles of that name it has then or registers later. 0, -EINVAL,
 * -EPERM (a read-only handle) or -ENOSPC (every entry names another
 * console). Async-signal-safe, thread-safe, never blocks.
 */
int pk_log_set_console_level(struct pk_log *log, const char *name, int level);
/* Entry @i (0 to PK_LOG_CONSOLE_LEVELS - 1) of that table: the console
 * name into @name (16 bytes, NUL-terminated, bytes as the file holds them)
 * and its level into *@level (-1: follows console_loglevel). 0, -ENOENT
 * (a free entry, or one holding no valid level), -ERANGE (no such entry),
 * -EINVAL. Async-signal-safe, thread-safe, never blocks. */
int pk_log_console_level_at(struct pk_log *log, unsigned i, char name[16], int *level);

/* A forwarding console of a process writing the log, as that process last
 * published it (its pk_console_stats()). */
struct pk_log_forwarder {
	uint32_t pid;
	bool alive;	 /* the process is still there (kill(pid, 0)) */
	char name[16];	 /* NUL-terminated, bytes as the file holds them */
	int state;	 /* PK_CONSOLE_* of <printk/forward.h>, -1 if the file holds no valid one */
	int last_error;	 /* errno of the last failure, positive; 0: none */
	uint64_t delivered, waiting, lost, changes;
};
/* Entry @i (0 up) of the log's table of forwarding consoles: 0, -ENOENT (a
 * free entry), -ERANGE (past the last entry), -EINVAL. The entry is read as
 * untrusted. Async-signal-safe, thread-safe, never blocks. */
int pk_log_forwarder_at(struct pk_log *log, unsigned i, struct pk_log_forwarder *f);

/* ---------------------------------------------------- files by name -- */

/* @how of pk_tool_open() (safe_open.h's values, which it must repeat):
 * PK_OPEN_REGULAR opens nothing but a regular file (a FIFO or a device at
 * the name is refused before it is opened: -EISDIR for a directory,
 * -EPROTO for the rest); PK_OPEN_NEW makes a new file (O_CREAT | O_EXCL),
 * removing a leftover regular file of ours at the name first (-ELOOP for a
 * symbolic link there, -EEXIST for anything else). */
#define PK_OPEN_REGULAR 1u
#define PK_OPEN_NEW	2u

/*
 * open(2) @path (@oflags, @mode) as the library opens the files it writes:
 * a symbolic link in its last component is followed only if it belongs to
 * us or to root, and in a sticky world-writable directory only if it
 * belongs to us or to the directory's owner (-ELOOP otherwise, whatever
 * fs.protected_symlinks says). Returns the descriptor or a negative errno.
 * Async-signal-safe, thread-safe; blocks only as open(2) does (a FIFO
 * without PK_OPEN_REGULAR).
 */
int pk_tool_open(const char *path, int oflags, mode_t mode, unsigned how);

/* ------------------------------------------------- TLS for a tool -- */

/*
 * pk-forward's own HTTP client (journal-remote over https) speaks TLS
 * through the forwarding consoles' session layer (forward/tls.c): the
 * same library loaded at run time, the same verification (the chain to a
 * CA of @ca, the name or address @peer in the certificate, TLS 1.2 at
 * least) and the same words for a refusal. Implemented in
 * forward/tool_tls.c. Not thread-safe per handle; may block only as long
 * as the timeouts given.
 */
struct pk_tool_tls;
struct pk_tool_tls_opts {
	const char *ca;	  /* PEM file of the CAs (NULL: the system's) */
	const char *cert; /* optional client certificate chain (PEM)... */
	const char *key;  /* ...and its key, together */
	const char *peer; /* the name or address the server must carry */
};

/* The reasons' room: OpenSSL's words with a file name. */
#define PK_TOOL_TLS_WHY 320

/* The context, its files read now: 0; -EPROTONOSUPPORT without
 * libssl.so.3 (@why: "TLS needs libssl.so.3 (Debian: libssl3)"); -EINVAL
 * with @why naming the file that cannot be used; -ENOMEM. */
int pk_tool_tls_new(struct pk_tool_tls **tp, const struct pk_tool_tls_opts *o, char *why,
		    size_t why_len);
/* A session on @fd (connected; the caller keeps and closes it) within
 * @timeout_ms: 0, or -EKEYREJECTED ("certificate refused: ..."), -EPROTO,
 * -ETIMEDOUT or the socket's error, with @why. A session still open is
 * closed first. The handshake does not wait for the server's first
 * record: a request-answer protocol learns of a refused client
 * certificate from its first read (pk_tool_tls_why). */
int pk_tool_tls_connect(struct pk_tool_tls *t, int fd, int timeout_ms, char *why, size_t why_len);
/* All of @n bytes, each step within @timeout_ms: 0 or a negative errno. */
int pk_tool_tls_write(struct pk_tool_tls *t, const void *p, size_t n, int timeout_ms);
/* Up to @n bytes, the first within @timeout_ms: the count, 0 when the
 * server closed, or a negative errno. */
ssize_t pk_tool_tls_read(struct pk_tool_tls *t, void *p, size_t n, int timeout_ms);
/* After a read failed: OpenSSL's words for it (a server that refused our
 * certificate says so in its first answer: "refused by the peer: tlsv13
 * alert certificate required"), or "". Valid until the session ends. */
const char *pk_tool_tls_why(const struct pk_tool_tls *t);
/* An idle session: 0 while the server is there (what it sent meanwhile,
 * TLS's own records such as session tickets, taken and dropped), 1 when
 * it closed or the connection failed. Never blocks. */
int pk_tool_tls_idle_gone(struct pk_tool_tls *t);
/* End the session (@clean: send close_notify); the context stays. */
void pk_tool_tls_close(struct pk_tool_tls *t, int clean);
/* The session, if any, and the context. */
void pk_tool_tls_free(struct pk_tool_tls *t);

/* What a tool prints for @err (negative) from opening or reading a log
 * file: pk_log_strerror()'s words for the codes only a log gives (a
 * truncated file, a foreign or damaged one, no room), strerror()'s for
 * the others, so "No such file or directory" reads as everywhere else. */
const char *pk_log_tool_strerror(int err);

#endif
