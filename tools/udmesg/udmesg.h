// SPDX-License-Identifier: MIT
/*
 * udmesg.h - the dmesg of libprintk: what the three parts of the tool share.
 *
 *   main.c    options, the action to run, and the flow between the parts
 *   source.c  readers: a libprintk log file (-B, live or post-mortem, with
 *             follow mode), syslog-format text (-F, and the text -S gets from
 *             the syslog actions), /dev/kmsg records separated by NUL (-K)
 *   output.c  the buffered writer and the formats: util-linux dmesg's text
 *             (time formats, decode, colors, escaping), its JSON, and the
 *             /dev/kmsg format (--kmsg)
 *   timefmt.c clocks, the --since/--until parser, time formatting helpers
 *   core.c    --core: the log of a dead process out of its ELF core file
 *
 * A reader turns whatever it reads into a struct urec and hands it to
 * print_record(), the way util-linux dmesg's readers hand a dmesg_record to
 * its print_record(); everything a user sees is decided there.
 */
#ifndef UDMESG_H
#define UDMESG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define UDMESG_NAME "udmesg"

struct pk_record;

/* util-linux's facility table: kern .. local7 (24 names). */
#define UD_NFACILITIES 24
#define UD_NLEVELS     8

/* What to do (the syslog action numbers, as dmesg keeps them). */
enum ud_action {
	UD_ACT_READ_ALL = 3,
	UD_ACT_READ_CLEAR = 4,
	UD_ACT_CLEAR = 5,
	UD_ACT_CONSOLE_OFF = 6,
	UD_ACT_CONSOLE_ON = 7,
	UD_ACT_CONSOLE_LEVEL = 8,
};

/* Where the records come from. */
enum ud_source {
	UD_SRC_LOG,    /* -B: a libprintk log file */
	UD_SRC_FILE,   /* -F: syslog-format text */
	UD_SRC_KMSG,   /* -K: /dev/kmsg records separated by NUL bytes */
	UD_SRC_SYSLOG, /* -S: the log's syslog actions (READ_ALL) */
};

/*
 * dmesg's time formats. Current util-linux keeps a list of them and prints
 * the stamps side by side in the order given (--time-format raw --ctime:
 * "[    1.000000] [Mon Nov 14 ...] "); ud_time_fmts_resolve() merges the
 * delta into its neighbours as it does.
 */
enum ud_timefmt {
	UD_TF_NONE,
	UD_TF_CTIME,
	UD_TF_CTIME_DELTA,
	UD_TF_DELTA,
	UD_TF_RELTIME,
	UD_TF_TIME,
	UD_TF_TIME_DELTA,
	UD_TF_ISO,
	UD_TF_COUNT
};

/* One record as the output side sees it, whatever the source. */
struct urec {
	const char *mesg; /* text; the byte after it is readable (NUL or more input) */
	size_t mesg_size;
	int level;    /* 0..7, -1 unknown */
	int facility; /* 0..UD_NFACILITIES, -1 unknown (util-linux's parse) */
	long pri;     /* the raw priority number, -1 if there was none */
	int64_t sec;  /* timestamp since boot, as printed "[%5ld.%06ld]" */
	int64_t usec;
	uint64_t ts_nsec; /* the same in ns (exact for log records) */
	uint64_t seq;	  /* log and kmsg records */
	char caller[24];  /* "T123": shown when non-empty */
	uint32_t pid;	  /* --writer: the writing process (log records) */
	char program[16]; /* --writer: its name, "" when the log does not know it */
	bool has_writer;  /* pid and program are set */
	const char *dict; /* KEY=VALUE entries separated by NUL bytes */
	size_t dict_len;
	char flag;    /* kmsg flag: '-' or 'c' */
	bool partial; /* the unfinalized newest record of a log */
	const struct pk_record *log_rec; /* the record itself (-B), for --kmsg */
};

struct ud_ctl {
	/* --- options --- */
	enum ud_action action;
	int console_level;
	enum ud_source source;
	const char *log_path;  /* -B, or log_buf_file= of PRINTK_OPTS */
	const char *file_path; /* -F, -K */
	uint8_t levels;	       /* bit per level */
	uint32_t facilities;   /* bit per facility */
	bool fltr_lev, fltr_fac;
	/* The time formats in the order given; none: the default (UD_TF_TIME).
	 * After ud_time_fmts_resolve(), at least one. */
	enum ud_timefmt time_fmts[UD_TF_COUNT];
	size_t ntime_fmts;
	bool raw, noesc, decode, json, force_prefix, follow, follow_new, color;
	bool kmsg_out;	      /* --kmsg */
	bool journal_json;    /* --journal-json */
	bool caller;	      /* --caller */
	bool dict;	      /* --dictionary: KEY=VALUE lines under each record */
	bool writer;	      /* --writer: the writing process of each record */
	int partial;	      /* --partial: 1 on, 0 off, -1 auto (on for a dead log) */
	bool fast;	      /* the default text format and nothing else: the fast path */
	size_t bufsize;	      /* -s */
	int64_t since, until; /* wall clock, usec; 0 = not given */

	/* --- time base: wall clock of timestamp 0 --- */
	bool base_by_usec; /* files: util-linux's boot time + record time, in usec */
	int64_t base_ns;   /* CLOCK_REALTIME - CLOCK_MONOTONIC (or the boot time) */
	int caller_width;  /* "[%*s] " */
	struct pk_log *log; /* -B: the log, to name the writers */
	bool info;	    /* --info: the log's geometry, losses and writers */
	const char *console_name; /* -n NAME=LEVEL: that console's level (-1: follow -n's) */

	/* --- output state (dmesg's dmesg_control) --- */
	int64_t last_sec, last_usec; /* last printed timestamp, for deltas */
	struct tm lasttm;	     /* reltime: the last minute printed */
	int indent;
	bool json_open;
	bool any_output;

	/* --- --core --- */
	const char *core_path; /* the core file; its log is then ctl->log */
	const char *core_exe;  /* the program it is a core of, if given */
	bool core_list;	       /* --core-list: list the logs found, read none */
};

/* main.c */
_Noreturn void ud_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ud_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* info.c: --info, for ctl->log_path; exits with a message on errors. */
void ud_print_info(struct ud_ctl *ctl);
/* info.c: -n NAME=LEVEL, for ctl->log_path; exits with a message on errors. */
void ud_set_console_level(struct ud_ctl *ctl);

/* source.c: each returns 0, or exits with a message on errors. */
int ud_read_log(struct ud_ctl *ctl);
int ud_read_syslog_file(struct ud_ctl *ctl);
int ud_read_kmsg_file(struct ud_ctl *ctl);
int ud_read_syslog_action(struct ud_ctl *ctl);
/* The syslog actions that change the log: -C, -D, -E, -n (and -c's clear). */
int ud_log_action(struct ud_ctl *ctl, int action, int arg);
/* Parse syslog-format text (util-linux's get_next_syslog_record) and print
 * every record; @buf must be NUL-terminated at @size. */
void ud_print_syslog_buffer(struct ud_ctl *ctl, const char *buf, size_t size);
/* Parse /dev/kmsg records separated by NUL bytes (-K) and print each; exits
 * with a message naming ctl->file_path on a record too large. */
void ud_print_kmsg_buffer(struct ud_ctl *ctl, const char *buf, size_t size);
/* util-linux's parse_faclev on a number: facility (-1 if out of range), level. */
void ud_decode_pri(long num, int *fac, int *lev);

/* core.c: find the log in ctl->core_path and open it as ctl->log (with
 * ctl->log_path naming the core), or exit with one line; --core-list lists
 * the logs and exits. */
int ud_core_open(struct ud_ctl *ctl);

/* output.c */
void out_init(void);
void out_flush(void);
void out_write(const void *p, size_t n);
void out_putc(char c);
void out_puts(const char *s);
void out_write_fd(const char *p, size_t n);
/* Dump workers: format into a private buffer, written out later in order. */
struct pk_outbuf;
struct pk_outbuf *out_capture_new(void);
void out_capture_begin(struct pk_outbuf *b); /* empties it; this thread writes there */
void out_capture_end(void);
void out_capture_write(struct pk_outbuf *b); /* to stdout, then empties it */
void out_capture_free(struct pk_outbuf *b);
/* What @b holds now (for tests that look at the output). */
const char *out_capture_data(const struct pk_outbuf *b, size_t *len);
void ud_print_record(struct ud_ctl *ctl, const struct urec *rec);
/* The default text format (ctl->fast) needs nothing but the time and the text. */
void ud_print_fast(const struct ud_ctl *ctl, uint64_t ts_nsec, const char *text, size_t len);
/*
 * The same straight from a log, records @seq up to @end: each record's text
 * is copied once, by pk_text_read(), into the output buffer where its line
 * goes, and the prefix is written in front of it. Stops at the first record
 * pk_text_read() does not return (not written yet, open, overwritten, ...:
 * pk_log_read() sorts those out) and returns its seq, or @end. @cache: the
 * calling thread's (pk_text_cache_new()), or NULL.
 */
struct pk_text_reader;
struct pk_text_cache;
uint64_t ud_fast_run(const struct ud_ctl *ctl, struct pk_text_reader *tr, struct pk_text_cache *cache,
		     uint64_t seq, uint64_t end);
void ud_print_raw_buffer(struct ud_ctl *ctl, const char *buf, size_t size);
void ud_print_kmsg(struct ud_ctl *ctl, const struct urec *rec);
void ud_output_finish(struct ud_ctl *ctl);
extern const char *const ud_level_names[UD_NLEVELS];
extern const char *const ud_facility_names[UD_NFACILITIES];

/* timefmt.c */
/* Add a time format to the list (util-linux's include_time_fmt: once each). */
void ud_time_fmt_include(struct ud_ctl *ctl, enum ud_timefmt fmt);
/* Whether @fmt is in the list (the empty list holds UD_TF_TIME). */
bool ud_time_fmt_is(const struct ud_ctl *ctl, enum ud_timefmt fmt);
/* The list as util-linux resolves it after the options: JSON's raw time,
 * --notime against the deltas, the delta merged into raw or ctime. */
void ud_time_fmts_resolve(struct ud_ctl *ctl);
int ud_parse_timestamp(const char *s, int64_t *usec);
/* Seconds and ns of "now" on CLOCK_REALTIME, or UDMESG_TEST_NOW. */
int64_t ud_now_usec(void);
/* The host's wall-clock time of timestamp 0 for files (-F, -K): boot time as
 * util-linux computes it, or UDMESG_TEST_BOOTTIME. Returns 0 or -1. */
int ud_host_boot_time(int64_t *sec, int64_t *usec);
/* The wall clock of @rec in usec and as seconds + usec (for ctime/iso). */
int64_t ud_record_wall_usec(const struct ud_ctl *ctl, const struct urec *rec);
void ud_record_wall(const struct ud_ctl *ctl, const struct urec *rec, time_t *sec, long *usec);
/* util-linux's strtimeval_iso(ISO_TIMESTAMP_COMMA_T). */
size_t ud_format_iso(time_t sec, long usec, char *buf, size_t len);
/* Width of the caller field when reading kmsg (util-linux's pid_max rule). */
int ud_kmsg_caller_width(void);

#endif
