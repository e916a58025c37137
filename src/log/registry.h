// SPDX-License-Identifier: MIT
/*
 * registry.h - the writer registry of a log file: which processes write it,
 * and whether a writer that claimed a record is still alive.
 */
#ifndef PRINTK_REGISTRY_H
#define PRINTK_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include <printk/log.h>

#include "base/atomics.h"

#define PK_REGISTRY_ENTRIES (PK_LOG_WRITERS_MAX + 1) /* slot 0 means "no owner" */
#define PK_REGISTRY_GEN_BITS 6	 /* owner code = slot << 6 | generation (16 bits) */
#define PK_REGISTRY_ENTRY_SIZE 64

/* One entry per writer slot, in the file (part of the file's ABI). */
struct pk_registry_entry {
	pk_a32 gen;	  /* bumped by every new owner of the slot */
	pk_a32 pid;	  /* the owner's pid (in its namespace) */
	pk_a64 attach_ns; /* CLOCK_REALTIME when it registered */
	/* Names for readers (zeros in files of older versions): the program
	 * name of the writer that registered with name_pid (at most 15 bytes,
	 * NUL-padded), and of the one before it in this slot, so that a
	 * restarted program still names the records of the run before. */
	pk_a64 comm[2];
	pk_a32 name_pid;
	pk_a32 prev_pid;
	pk_a64 prev_comm[2];
	uint8_t pad[PK_REGISTRY_ENTRY_SIZE - 56];
};
_Static_assert(sizeof(struct pk_registry_entry) == PK_REGISTRY_ENTRY_SIZE, "a registry entry is file format");

struct pk_registry {
	struct pk_registry_entry *entries; /* in the mapping */
	int fd;				   /* holds our OFD lock on our slot's lock byte */
	uint64_t lock_off;		   /* file offset of the lock bytes */
	unsigned nentries;
	/* Non-zero once the mapping was replaced (logfile.c: the file was
	 * truncated): the entries are then zeros, and every record in the
	 * ring that replaced the file's is this process's own. */
	const _Atomic int *lost;
};

/*
 * Take a free slot: one whose lock byte no live process holds, with an
 * open file description of our own (@fd; after fork the child opens a new
 * one). Returns the owner code (slot << 6 | gen & 63, never 0) or a
 * negative errno (-EUSERS when every slot is taken).
 */
int pk_registry_register(struct pk_registry *reg);

/*
 * 1 if the writer with @owner code, which stored @pid in its record, is
 * alive; 0 if it is gone for good. A slot taken over by a later writer has
 * another generation or another pid: the code can name only its own writer,
 * however often the 6-bit generation wraps. Async-signal-safe (fcntl, kill,
 * open/read of /proc).
 */
int pk_registry_owner_alive(struct pk_registry *reg, unsigned owner, uint32_t pid);

/*
 * 1 if a live writer registered with @pid holds a slot other than the one
 * of @my_owner (our own code, 0 if none): an open line written with @pid
 * may still grow. A slot whose lock nobody holds names a dead process even
 * if it had our pid (pids repeat across containers and reboots).
 */
int pk_registry_pid_writes(struct pk_registry *reg, uint32_t pid, unsigned my_owner);

/*
 * The program name of the writer registered with @pid, into @name (16
 * bytes, NUL-terminated; the newest entry if several had that pid).
 * 0, or -ENOENT when no entry has it (never registered, or its slot was
 * taken since). Async-signal-safe; reads only the mapping.
 */
int pk_registry_name(struct pk_registry *reg, uint32_t pid, char name[16]);

/* This process's program name as the kernel keeps it (comm), into @name
 * (16 bytes, NUL-terminated). Async-signal-safe after the first call. */
void pk_registry_own_name(char name[16]);

#endif
