// SPDX-License-Identifier: MIT
/*
 * pk-forward.h - what the parts of pk-forward share.
 *
 *   main.c    the options, parsed into a struct pkf_opts
 *   cursor.c  the cursor file: read, and replaced crash-safely
 *   forward.c the forwarding console, the log, and the loop that sends
 *             records and commits the cursor
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

/* forward.c: the whole run after the options; the exit status. */
int pkf_run(const struct pkf_opts *o);

#endif /* PK_FORWARD_H */
