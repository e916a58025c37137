// SPDX-License-Identifier: MIT
/*
 * pk-forward.h - what the parts of pk-forward share.
 *
 *   main.c    the options, parsed into a struct pkf_opts
 *   cursor.c  the cursor file: read, and replaced crash-safely
 *   forward.c the forwarding console, the log, and the loop that sends
 *             records and commits the cursor
 *   journal_remote.c  the journal-remote:http://... target: batches of
 *             Journal Export Format entries posted over HTTP
 *
 * The layout follows udmesg's (tools/udmesg/udmesg.h).
 */
#ifndef PK_FORWARD_H
#define PK_FORWARD_H

#include <stdint.h>

#define PKF_NAME "pk-forward"

/* The command line, parsed. */
struct pkf_opts {
	const char *cursor_path; /* -c; NULL: no cursor */
	const char *target;      /* TARGET */
	const char *log_path;    /* LOGFILE */
	int format;              /* PK_SYSLOG_RFC5424 or PK_SYSLOG_RFC3164 */
	unsigned enterprise;     /* 0: the console's default */
	int once;                /* -o: stop at the end of the log */
};

/* The position the collector last confirmed: the log's identity and the next seq. */
struct pkf_cursor {
	uint64_t id[2];
	uint64_t next_seq;
};

/* cursor.c */
int pkf_cursor_read(const char *path, struct pkf_cursor *c, const char **why);
int pkf_cursor_write(const char *path, const struct pkf_cursor *c);

/*
 * journal_remote.c, used as forward.c uses a forwarding console:
 * pkf_jr_send() adds a record to the batch (-EAGAIN while the target waits
 * after a failure), pkf_jr_lost() says @n records were lost before the
 * next one, pkf_jr_commit() posts the batch: 0 once the receiver
 * acknowledged it, -EAGAIN (the batch is dropped: send it again).
 * pkf_jr_create(): 0, or -1 after one line on stderr.
 */
struct pk_log;
struct pk_record;
struct pkf_jr;
int pkf_jr_is_target(const char *target);
int pkf_jr_create(struct pkf_jr **jrp, const char *target, struct pk_log *log);
void pkf_jr_set_log(struct pkf_jr *jr, struct pk_log *log);
int pkf_jr_send(struct pkf_jr *jr, const struct pk_record *rec);
void pkf_jr_lost(struct pkf_jr *jr, uint64_t n);
int pkf_jr_commit(struct pkf_jr *jr);
void pkf_jr_destroy(struct pkf_jr *jr);

/* forward.c: the whole run after the options; the exit status. */
int pkf_run(const struct pkf_opts *o);

#endif /* PK_FORWARD_H */
