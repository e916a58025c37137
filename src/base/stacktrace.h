// SPDX-License-Identifier: MIT
/*
 * stacktrace.h - the loaded objects and the unwinder (stacktrace.c), the
 * symbol look-up over them (symbols.c).
 *
 * The object table is filled once at start-up (a constructor calls
 * dl_iterate_phdr, which takes the loader's lock) and only read afterwards,
 * so everything else here is async-signal-safe, lock-free and allocates
 * nothing.
 */
#ifndef PRINTK_STACKTRACE_H
#define PRINTK_STACKTRACE_H

#include <stddef.h>
#include <stdint.h>

#define PK_OBJ_MAX  128 /* loaded objects remembered at start-up */
#define PK_OBJ_SEGS 8	/* PT_LOAD segments per object */
#define PK_STACK_MAX 64 /* frames in one trace */
#define PK_KSYM_SYMBOL_LEN 512 /* one %pS text, as the kernel's KSYM_SYMBOL_LEN */

struct pk_obj_seg {
	uintptr_t start, end; /* run-time addresses, end exclusive */
	unsigned flags;	      /* PF_R, PF_W, PF_X */
};

struct pk_obj {
	uintptr_t base;	    /* load bias (dlpi_addr) */
	uintptr_t lo, hi;   /* span of the PT_LOAD segments */
	uintptr_t eh_hdr;   /* run-time address of .eh_frame_hdr, 0: none */
	size_t eh_hdr_len;
	struct pk_obj_seg seg[PK_OBJ_SEGS];
	int nseg;
	int is_main;	    /* the executable (its frames carry no [object]) */
	char path[256];	    /* as the loader named it; "/proc/self/exe" for the executable */
	const char *name;   /* basename of path */
};

/* Fill the object table (idempotent). Start-up only: not async-signal-safe. */
void pk_stacktrace_init(void);
/* The objects found at start-up. */
int pk_obj_count(void);
const struct pk_obj *pk_obj_get(int i);
/* The object whose PT_LOAD segments hold @addr, or NULL. */
const struct pk_obj *pk_obj_find(uintptr_t addr);

/* A frame: its pc, and whether it is a return address (look up pc - 1, as
 * the kernel's %pB) or the exact instruction (a faulting or interrupted pc). */
#define PK_FRAME_EXACT 0x1
struct pk_frame {
	uintptr_t pc;
	unsigned flags;
};

enum pk_unwind_mode {
	PK_UNWIND_AUTO = 0, /* CFI where an FDE covers the pc, else frame pointers */
	PK_UNWIND_FP,	    /* frame pointers only */
	PK_UNWIND_CFI,	    /* CFI only: a frame without an FDE ends the trace */
};

/*
 * Walk the calling thread's stack from the caller of this function, or from
 * the interrupted state in @ucontext (a ucontext_t * from a SA_SIGINFO
 * handler; its pc comes first). With @from_ra nonzero, frames above the one
 * whose return address is @from_ra are dropped (the library's own frames).
 * Returns the number of frames stored in @out (at most @max). A read that
 * would fault ends the trace instead. Async-signal-safe.
 */
int pk_stack_walk(struct pk_frame *out, int max, const void *ucontext, uintptr_t from_ra,
		  enum pk_unwind_mode mode);

/* Tests: check reads against the segments and the stack (@on) instead of
 * letting the kernel copy them, as where process_vm_readv is refused. */
void pk_stacktrace_test_checked_reads(int on);

/* Read @n bytes at @addr of this process without faulting: 0 or -EFAULT. */
int pk_safe_read(uintptr_t addr, void *dst, size_t n);

/* ---- symbols.c -- */

struct pk_sym {
	const char *name; /* not NUL-terminated within the object's table: use name_len */
	size_t name_len;
	uintptr_t offset, size;
	const char *object; /* NULL for the executable */
};

/* Map each object's ELF file and find its symbol table (idempotent).
 * Start-up only. */
void pk_symbols_init(void);
/* Tests: load the symbol table of the ELF file @path as at start-up and
 * look up the link-time address @key: 0 with its name in @name, -ENOENT,
 * or -ENOEXEC when the file was refused. */
int pk_symbols_test_file(const char *path, uintptr_t key, char *name, size_t size);
/* The symbol holding @addr: 0, or -ENOENT. Async-signal-safe. */
int pk_sym_lookup(uintptr_t addr, struct pk_sym *sym);
/*
 * "name+0xoff/0xsize [object]" (or without the offset) into @buf, as the
 * kernel's sprint_symbol family: @backtrace looks up @addr - 1 and prints
 * the offset of @addr (a return address). Returns the length, or -ENOENT
 * with nothing written when no symbol holds the address. Async-signal-safe.
 */
int pk_sprint_symbol(char *buf, size_t size, uintptr_t addr, int add_offset, int backtrace);

#endif
