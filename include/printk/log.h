/* SPDX-License-Identifier: MIT */
/*
 * printk/log.h - log handles: a record ring you can create, attach to,
 * read and destroy.
 *
 * A log is a lock-free ring of records (sequence number, timestamp, level,
 * facility, flags, caller, text up to 1023 bytes, optional KEY=VALUE
 * dictionary). When it is full the oldest records are overwritten whole; a
 * reader never sees a torn record and learns how many it lost from the gap
 * in sequence numbers. The printk() family writes to the default log.
 *
 * All functions return 0 (or a count) on success and a negative errno value
 * on failure, like the kernel. Storing and reading are lock-free and
 * async-signal-safe; making, attaching and destroying handles are not. A
 * handle may be used by any number of threads, but destroyed only when none
 * uses it any more.
 */
#ifndef PRINTK_LOG_H
#define PRINTK_LOG_H

#include <stddef.h>
#include <stdint.h>

#include <printk/compiler.h>

PK_BEGIN_DECLS

#define PK_LOG_BUF_LEN_DEFAULT ((size_t)128 * 1024) /* the kernel's default log_buf_len */
#define PK_LOG_BUF_LEN_MIN     ((size_t)4096)
#define PK_LOG_BUF_LEN_MAX     ((size_t)1 << 31)

#define PK_TEXT_MAX 1023 /* bytes of text per record (the kernel's limit) */
#define PK_DICT_MAX 1024 /* bytes of dictionary per record */
#define PK_LOG_WRITERS_MAX 1023 /* processes writing one log file at once */
/* One record formatted for a reader (a kmsg_read() line with its dictionary,
 * a syslog(2) line, a kmsg_dump line) takes at most this many bytes, its
 * terminating NUL included; the rest is cut, as the kernel cuts it (its
 * PRINTK_MESSAGE_MAX). A buffer this big never gets -EINVAL from kmsg_read(). */
#define PK_MESSAGE_MAX 2048

/* pk_record.flags (the kernel's enum printk_info_flags). */
#define PK_REC_NEWLINE 0x02 /* the message ended its line */
#define PK_REC_CONT    0x08 /* a continuation fragment that could not join its line */

/* pk_record.state */
#define PK_REC_FINAL	   0 /* complete and immutable */
#define PK_REC_UNFINALIZED 1 /* the newest record, a line still open for continuation */

/* pk_log_read() flags */
#define PK_READ_UNFINALIZED 0x1 /* also return the open newest record */

/* pk_log_attach() and pk_log_open_file() flags */
#define PK_LOG_RDONLY	  0x1 /* never write to the log (a reader) */
#define PK_LOG_GROUP_READ 0x2 /* a new file gets mode 0640 instead of 0600 */
#define PK_LOG_SYNC	  0x4 /* pk_log_sync() at clean exit and on panic (printk's log) */

struct pk_log;

struct pk_record {
	uint64_t seq;
	uint64_t ts_nsec; /* CLOCK_MONOTONIC unless the writer chose otherwise */
	uint32_t pid;
	uint32_t tid;
	uint8_t sigdepth; /* printk nesting depth of the writer (0: not nested) */
	uint8_t level;	  /* 0 (emerg) .. 7 (debug) */
	uint8_t facility; /* syslog facility number (0 = kernel/printk) */
	uint8_t flags;	  /* PK_REC_NEWLINE, PK_REC_CONT */
	uint8_t state;	  /* PK_REC_FINAL or PK_REC_UNFINALIZED */
	uint16_t text_len;
	uint16_t dict_len;
	char text[PK_TEXT_MAX + 1]; /* NUL-terminated */
	char dict[PK_DICT_MAX + 1]; /* KEY=VALUE entries separated by NUL bytes */
};

/*
 * Create a log in memory this call allocates. @log_buf_len is rounded up to a
 * power of two; 0 means PK_LOG_BUF_LEN_DEFAULT. -EINVAL outside
 * [PK_LOG_BUF_LEN_MIN, PK_LOG_BUF_LEN_MAX], -ENOMEM.
 *
 * Context: thread-safe; does not block; not async-signal-safe (allocates).
 */
PK_API int pk_log_create(struct pk_log **logp, size_t log_buf_len);

/* Bytes of region a log of @log_buf_len needs (0 if the size is invalid).
 * Context: any (async-signal-safe, lock-free). */
PK_API size_t pk_log_region_size(size_t log_buf_len);

/*
 * Create a log inside @region (64-byte aligned, at least
 * pk_log_region_size(@log_buf_len) bytes): a static array, or a mapping that
 * another process can attach to. The region holds offsets only.
 *
 * Context: thread-safe; does not block; not async-signal-safe (allocates
 * the handle).
 */
PK_API int pk_log_create_in(struct pk_log **logp, void *region, size_t region_len,
			    size_t log_buf_len);

/*
 * Attach to a region that holds a log (made here or by another process).
 * -EPROTO: not a libprintk log; -EPROTONOSUPPORT: another ABI version or
 * byte order; -EBADMSG: corrupted header; -ENOSPC: region shorter than the
 * log (truncated). pk_log_strerror() says it in words.
 *
 * Context: thread-safe; does not block; not async-signal-safe (allocates
 * the handle).
 */
PK_API int pk_log_attach(struct pk_log **logp, void *region, size_t region_len, unsigned flags);

/*
 * Open the log in the file @path, shared with every process that opens it:
 * several processes write it concurrently, lock-free, and readers follow it
 * live or read it after every writer died. A missing file is created (unless
 * PK_LOG_RDONLY) with mode 0600 whatever the umask (0640 with
 * PK_LOG_GROUP_READ) and a text area of @log_buf_len (0: the default); an
 * existing one is attached as it is. Errors: -ENOENT; -EPROTO (not a
 * libprintk log, not a regular file, or a file of procfs, sysfs or another
 * kernel interface: refused before anything is read); -EISDIR (a
 * directory); -EPROTONOSUPPORT (another ABI version); -EBADMSG (corrupted);
 * -ENOSPC (truncated, or no room on the file system for a new file: its
 * blocks are reserved when it is created); -EACCES (a writer opening a file
 * that another user owns or that the group or others may write, or no
 * permission); -ELOOP (the last component is a symbolic link that neither
 * we nor root own, or, in a sticky world-writable directory such as /tmp,
 * neither we nor the directory's owner: not followed); -EUSERS (too many
 * writers). A file that is refused is left untouched, with one exception: a
 * writer that finds it damaged (-EBADMSG, e.g. pages of a machine crash's
 * torn write-back) while no other process writes it moves it aside to
 * "@path.damaged" and starts a new log at @path, whose first record (a
 * KERN_WARNING) says so. A writer resets log levels that the file holds
 * out of range (0..15) to their defaults and stores a KERN_NOTICE record
 * saying so.
 *
 * A file truncated under its users kills nobody: while file logs are open,
 * a SIGBUS handler replaces a mapping whose file lost pages with private
 * memory (an empty log); from then on the handle's calls return -ESTALE
 * ("log file truncated"), and printk's writers go on writing into that
 * private log. A SIGBUS that is not about a log's mapping goes to the
 * program's previous handler or kills the process as before. A program
 * that installs its own SIGBUS handler later must chain to the previous
 * one to keep this.
 *
 * Durability: everything committed survives the crash of any process (the
 * page cache is the shared memory). After a machine crash only what was
 * written back survives: pk_log_sync() forces it (printk calls it at exit and
 * on panic with PK_LOG_SYNC).
 *
 * Context: thread-safe; may block (file system calls, a mutex over the
 * process's open log files); not async-signal-safe (allocates).
 */
PK_API int pk_log_open_file(struct pk_log **logp, const char *path, size_t log_buf_len,
			    unsigned flags);

/* msync the log's file (0 for a memory log).
 * Context: thread-safe; may block (waits for the write-back); not
 * async-signal-safe. */
PK_API int pk_log_sync(struct pk_log *log);

/* Release the handle, and the memory if pk_log_create() allocated it.
 * Context: once no other thread uses the handle; does not block (a file log
 * takes a mutex briefly); not async-signal-safe (frees). */
PK_API void pk_log_destroy(struct pk_log *log);

/* The size of the log's text area in bytes.
 * Context: any (async-signal-safe, lock-free). */
PK_API size_t pk_log_buf_len(const struct pk_log *log);

/*
 * Store a complete record at @level/@facility (no level parsing, no
 * continuation: that is printk's job). Returns 0, -E2BIG, -EINVAL, -EPERM
 * (read-only handle), -ENOBUFS (the oldest record is still being written by
 * another writer, which blocks that for one second at most; or this call was
 * stopped inside its record for so long that the record was taken from it),
 * -ESTALE (the log's file was truncated: see pk_log_open_file()) or
 * -EUCLEAN (the log's head and tail words contradict each other: it is
 * damaged and takes no more records).
 *
 * Context: any (async-signal-safe, lock-free, thread-safe); never waits for
 * another writer or a reader. On a shared file its slow path asks whether a
 * stalled writer is dead (fcntl(2), async-signal-safe).
 */
PK_API int pk_log_store(struct pk_log *log, int facility, int level, const char *text,
			size_t text_len, const char *dict, size_t dict_len);

/*
 * Read the record @seq, or the oldest one after it if it was overwritten:
 * rec->seq - @seq records were lost. Returns 0, -EAGAIN if no record at or
 * after @seq is available yet, -EUCLEAN if neither its head nor its tail
 * can be trusted (a corrupted file), -EIO if its file could not be read, or
 * -ESTALE if the log's file was truncated (checked whenever there is nothing
 * new to read). A damaged record is skipped like a lost one.
 *
 * Context: any (async-signal-safe, lock-free, thread-safe); never waits.
 */
PK_API int pk_log_read(struct pk_log *log, uint64_t seq, struct pk_record *rec, unsigned flags);

/*
 * 0 if the log is still whole: -ESTALE if its file was truncated (shorter
 * than the log, even in parts not read yet), -EIO if it could not be read.
 * For readers that walk the ring themselves and wait for more.
 *
 * Context: any (async-signal-safe: fstat(2)), thread-safe; never waits.
 */
PK_API int pk_log_check(struct pk_log *log);

/*
 * The program name of the process @pid that wrote into @log (a record's
 * pid), into @buf of @size bytes (at most 15 characters, as the kernel's
 * comm; NUL-terminated, cut to fit). This process's own name for its own
 * pid; another writer of a shared log file is named by the log's writer
 * table, which keeps a dead writer's name until two later writers have
 * taken its place (a program restarted once still names its last run).
 * 0, -EINVAL, or -ENOENT (unknown: a memory log of another process, a
 * place taken twice since, a file of an older version).
 *
 * Context: any (async-signal-safe, lock-free).
 */
PK_API int pk_log_writer_name(struct pk_log *log, uint32_t pid, char *buf, size_t size);

/* CLOCK_REALTIME - CLOCK_MONOTONIC in nanoseconds as the log last
 * recorded it: a record's wall-clock time is its ts_nsec plus this. Writers
 * record it when they open the log, at pk_log_sync(), and when a
 * wall-clock console sees the clock stepped (docs/clock.md). 0 or -EINVAL.
 * Context: any (async-signal-safe, lock-free). */
PK_API int pk_log_realtime_offset(struct pk_log *log, int64_t *offset_ns);

/* Sequence number of the oldest record in the log.
 * Context: any (async-signal-safe, lock-free). */
PK_API uint64_t pk_log_first_seq(struct pk_log *log);

/* Sequence number after the newest complete record.
 * Context: any (async-signal-safe, lock-free). */
PK_API uint64_t pk_log_next_seq(struct pk_log *log);

/* Words for an error returned by the pk_log_* calls (a static string).
 * Context: any (async-signal-safe, lock-free). */
PK_API const char *pk_log_strerror(int err);

PK_END_DECLS

#endif
