// SPDX-License-Identifier: MIT
/*
 * log_internal.h - the log handle, shared by the two files of the log
 * module: log.c (handles in memory) and logfile.c (handles on a file).
 */
#ifndef PRINTK_LOG_INTERNAL_H
#define PRINTK_LOG_INTERNAL_H

#include "base/hints.h"
#include "log/log_shared.h"
#include "log/registry.h"
#include "ring/caller.h"

struct pk_logfile_ops;

struct pk_log {
	struct prb rb;
	void *mapping; /* non-NULL when we mmap'ed the region ourselves */
	size_t mapping_len;
	/* File logs only: */
	int fd;		   /* -1 for memory logs; holds our registry lock */
	char *path;
	unsigned flags;	   /* PK_LOG_* */
	int file;	   /* on the list of file logs (fork handling) */
	int writer;	   /* registered as a writer */
	struct pk_registry reg;
	struct pk_log *next_file;
	int map_slot;	   /* logfile.c's entry for the SIGBUS handler, or -1 */
	const struct pk_logfile_ops *fops; /* logfile.c's; NULL: not on a file */
	char *damaged_copy; /* this open moved a damaged file here and began anew */
	/* Images (pk_log_open_image): a dead process's log, read in memory
	 * the caller owns; nobody writes it any more. */
	bool image;
	uint32_t image_pid; /* the process the image comes from, 0 if unknown */
	char image_comm[16]; /* its name, "" if unknown */
};

struct pk_log *pk_log_alloc(void);
void pk_log_init_shared(struct pk_log *log);
unsigned pk_log_data_bits_for(size_t len);
/* logfile.c: take a destroyed file log off the fork list. */
void pk_logfile_forget(struct pk_log *log);
/* logfile.c: stop watching the mapping for SIGBUS (before it is unmapped). */
void pk_logfile_untrack(struct pk_log *log);
/* logfile.c: -ESTALE (truncated) or -EIO once the file under the mapping
 * lost pages we touched and the mapping was replaced; 0 otherwise (and for
 * memory logs). One load: async-signal-safe. */
int pk_logfile_lost(struct pk_log *log);
/* pk_logfile_lost(), or -ESTALE if the file is shorter than the mapping. */
int pk_logfile_check(struct pk_log *log);

/*
 * What log.c asks of a log on a file, through the handle's fops: logfile.c
 * sets it on every handle it makes, so log.c does not depend on logfile.c
 * (the object graph has no cycle) and a memory log needs none of it.
 */
struct pk_logfile_ops {
	/* Before the mapping is unmapped: off the fork list, SIGBUS watch ended. */
	void (*release)(struct pk_log *log);
	int (*lost)(struct pk_log *log);  /* pk_logfile_lost() */
	int (*check)(struct pk_log *log); /* pk_logfile_check() */
};

#endif
