// SPDX-License-Identifier: MIT
/*
 * stacktrace.c - the loaded objects and an async-signal-safe unwinder.
 *
 * Owns: the object table (one entry per object dl_iterate_phdr reported at
 * start-up: load bias, PT_LOAD segments, .eh_frame_hdr) and the walk.
 *
 * Invariants:
 *  - the table is written only by pk_stacktrace_init(), from a constructor
 *    (symbols.c's calls it first), and published with one release store of
 *    its count; afterwards it is read-only, so the walk
 *    takes no lock and needs no allocation;
 *  - the walk never dereferences an address itself: every word of stack,
 *    unwind table or code goes through pk_safe_read(), which asks the
 *    kernel to copy it (process_vm_readv on ourselves), so a bad frame
 *    pointer, a corrupt table or an object unloaded since start-up ends the
 *    trace with EFAULT instead of a fault. Where process_vm_readv is
 *    refused (seccomp), reads are allowed only inside the readable segments
 *    of the table and, for the stack, in the 8 MiB above the stack pointer
 *    the walk started from (or found in a signal frame) on pages mincore()
 *    finds mapped (an object unloaded since start-up is then not caught);
 *  - glibc's backtrace() and _Unwind_Backtrace take the loader's lock (and
 *    may allocate on first use), so neither is used.
 *
 * The walk, per frame: an FDE of .eh_frame found through the binary-search
 * table of .eh_frame_hdr (PT_GNU_EH_FRAME) gives the CFA and where the
 * return address and the callee-saved registers were saved; the small CFA
 * interpreter below knows what gcc and clang emit for x86-64 (def_cfa*,
 * offset*, advance_loc*, remember/restore_state, register, same_value,
 * undefined), reading each CIE and FDE through a 64-byte window. Without
 * an FDE (code without unwind tables, or an expression this interpreter
 * does not evaluate) the frame-pointer chain is followed:
 * [rbp] holds the caller's rbp and [rbp + 8] the return address. A return
 * into the signal trampoline (glibc's __restore_rt: mov $15,%rax; syscall)
 * continues from the interrupted state saved in the signal frame, so a
 * trace from a handler reaches the code the signal interrupted.
 *
 * x86-64 gets both; aarch64 follows frame pointers only (the AAPCS64 frame
 * record: [x29] the caller's x29, [x29 + 8] the return address), which
 * needs code built with -fno-omit-frame-pointer; other architectures get
 * an empty trace.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr, process_vm_readv */
#endif

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/stacktrace.h"

static struct pk_obj objs[PK_OBJ_MAX];
static _Atomic int nobjs = -1; /* -1: not filled yet */
static atomic_flag init_busy = ATOMIC_FLAG_INIT;
/* 1: process_vm_readv works on ourselves; 0: refused, check segments. */
static _Atomic int vm_read_ok = 1;
static _Atomic long page_size;
/* The longest single read (a signal frame's registers), for the fallback check. */
#define ENTRY_READ_MAX 256

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	int *n = data;

	(void)size;
	if (*n >= PK_OBJ_MAX)
		return 1;

	struct pk_obj *o = &objs[*n];

	memset(o, 0, sizeof(*o));
	o->base = (uintptr_t)info->dlpi_addr;
	o->lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && o->nseg < PK_OBJ_SEGS) {
			struct pk_obj_seg *s = &o->seg[o->nseg++];

			s->start = o->base + ph->p_vaddr;
			s->end = s->start + ph->p_memsz;
			s->flags = ph->p_flags;
			if (s->start < o->lo)
				o->lo = s->start;
			if (s->end > o->hi)
				o->hi = s->end;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			o->eh_hdr = o->base + ph->p_vaddr;
			o->eh_hdr_len = ph->p_memsz;
		}
	}
	if (!o->nseg)
		return 0;

	const char *name = info->dlpi_name;

	/* The executable comes first with an empty name. */
	if (*n == 0 && (!name || !name[0])) {
		o->is_main = 1;
		name = "/proc/self/exe";
	}
	if (!name || !name[0])
		return 0; /* nothing to call it by */
	size_t len = strnlen(name, sizeof(o->path) - 1);

	memcpy(o->path, name, len);
	o->path[len] = '\0';
	const char *slash = strrchr(o->path, '/');

	o->name = o->is_main ? o->path : (slash ? slash + 1 : o->path);
	(*n)++;
	return 0;
}

void pk_stacktrace_init(void)
{
	if (atomic_load_explicit(&nobjs, memory_order_acquire) >= 0)
		return;
	if (atomic_flag_test_and_set(&init_busy))
		return; /* another thread fills it; a trace meanwhile is empty */

	int n = 0;

	dl_iterate_phdr(add_object, &n);

	/* A self-read that must work: if it does not, fall back to checks. */
	long probe = 1, got = 0;
	struct iovec l = { &got, sizeof(got) }, r = { &probe, sizeof(probe) };

	atomic_store(&page_size, sysconf(_SC_PAGESIZE));
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(got) || got != 1)
		atomic_store(&vm_read_ok, 0);
	atomic_store_explicit(&nobjs, n, memory_order_release);
}

__attribute__((constructor)) static void stacktrace_ctor(void)
{
	pk_stacktrace_init();
}

int pk_obj_count(void)
{
	int n = atomic_load_explicit(&nobjs, memory_order_acquire);

	return n < 0 ? 0 : n;
}

const struct pk_obj *pk_obj_get(int i)
{
	return i >= 0 && i < pk_obj_count() ? &objs[i] : NULL;
}

const struct pk_obj *pk_obj_find(uintptr_t addr)
{
	int n = pk_obj_count();

	for (int i = 0; i < n; i++) {
		const struct pk_obj *o = &objs[i];

		if (addr < o->lo || addr >= o->hi)
			continue;
		for (int j = 0; j < o->nseg; j++)
			if (addr >= o->seg[j].start && addr < o->seg[j].end)
				return o;
	}
	return NULL;
}

/* ------------------------------------------------------------ reading -- */

/* The stack the current walk started on, for the fallback check. */
struct walk {
	uintptr_t stack_lo, stack_hi;
	pid_t pid;
};

static bool in_readable_segment(uintptr_t addr, size_t n)
{
	int count = pk_obj_count();

	for (int i = 0; i < count; i++) {
		const struct pk_obj *o = &objs[i];

		for (int j = 0; j < o->nseg; j++) {
			const struct pk_obj_seg *s = &o->seg[j];

			if ((s->flags & PF_R) && addr >= s->start && addr <= s->end &&
			    n <= s->end - addr)
				return true;
		}
	}
	return false;
}

/* mincore() fails with ENOMEM on a range that is not mapped. */
static bool pages_mapped(uintptr_t addr, size_t n)
{
	uintptr_t page = (uintptr_t)atomic_load_explicit(&page_size, memory_order_relaxed);
	uintptr_t start = addr & ~(page - 1);
	unsigned char vec[2]; /* a read of at most ENTRY_READ_MAX spans two pages */
	size_t len = (size_t)(addr + n - start);

	if (!page || (len + page - 1) / page > sizeof(vec))
		return false;
	return mincore((void *)start, len, vec) == 0;
}

static int read_mem(const struct walk *w, uintptr_t addr, void *dst, size_t n)
{
	if (!n)
		return 0;
	if (addr + n < addr)
		return -EFAULT;
	if (atomic_load_explicit(&vm_read_ok, memory_order_relaxed)) {
		struct iovec l = { dst, n }, r = { (void *)addr, n };

		if (process_vm_readv(w ? w->pid : getpid(), &l, 1, &r, 1, 0) == (ssize_t)n)
			return 0;
		return -EFAULT;
	}
	bool ok = in_readable_segment(addr, n) ||
		  (w && addr >= w->stack_lo && addr < w->stack_hi && n <= w->stack_hi - addr &&
		   pages_mapped(addr, n));

	if (!ok)
		return -EFAULT;
	memcpy(dst, (const void *)addr, n);
	return 0;
}

void pk_stacktrace_test_checked_reads(int on)
{
	atomic_store(&vm_read_ok, !on);
}

int pk_safe_read(uintptr_t addr, void *dst, size_t n)
{
	return read_mem(NULL, addr, dst, n);
}

static bool read_word(const struct walk *w, uintptr_t addr, uintptr_t *v)
{
	return read_mem(w, addr, v, sizeof(*v)) == 0;
}

/* ---------------------------------------------------------- registers -- */

#if defined(__x86_64__)
#define NREGS	 17 /* DWARF numbers: 0-15 the GPRs, 16 the return address */
#define REG_FP	 6  /* rbp */
#define REG_SP	 7  /* rsp */
#define REG_PC	 16 /* rip, the return-address column */
#elif defined(__aarch64__)
#define NREGS	 33 /* x0-x30, sp (31), pc (32, not a DWARF column) */
#define REG_FP	 29
#define REG_SP	 31
#define REG_PC	 32
#else
#define NREGS	 3
#define REG_FP	 0
#define REG_SP	 1
#define REG_PC	 2
#endif

struct regs {
	uintptr_t r[NREGS];
	uint64_t valid; /* bit n: r[n] is known */
};

__attribute__((unused)) static void reg_set(struct regs *rs, int n, uintptr_t v)
{
	rs->r[n] = v;
	rs->valid |= (uint64_t)1 << n;
}

__attribute__((unused)) static bool reg_ok(const struct regs *rs, int n)
{
	return n >= 0 && n < NREGS && (rs->valid >> n & 1);
}

#if defined(__x86_64__)
/* gregs[] index of each DWARF register 0-16. */
static const int greg_of_dwarf[NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8,	 REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

static void regs_from_gregs(struct regs *rs, const greg_t *g)
{
	rs->valid = 0;
	for (int i = 0; i < NREGS; i++)
		reg_set(rs, i, (uintptr_t)g[greg_of_dwarf[i]]);
}

/* Copy the gregs of the ucontext at @uc (another frame's memory) safely. */
static bool regs_from_sigframe(const struct walk *w, struct regs *rs, uintptr_t uc)
{
	greg_t g[NGREG];

	_Static_assert(sizeof(g) <= ENTRY_READ_MAX, "one read");

	if (read_mem(w, uc + offsetof(ucontext_t, uc_mcontext.gregs), g, sizeof(g)))
		return false;
	regs_from_gregs(rs, g);
	return true;
}

/* glibc's __restore_rt: mov $0xf,%rax; syscall. */
static bool is_sigreturn(const struct walk *w, uintptr_t pc)
{
	static const unsigned char code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	unsigned char got[9];

	return read_mem(w, pc, got, sizeof(got)) == 0 && memcmp(got, code, sizeof(code)) == 0;
}
#endif

/* ----------------------------------------------------------- DWARF CFI -- */

#if defined(__x86_64__)

#define DW_EH_PE_omit	 0xff
#define DW_EH_PE_absptr	 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2	 0x02
#define DW_EH_PE_udata4	 0x03
#define DW_EH_PE_udata8	 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2	 0x0a
#define DW_EH_PE_sdata4	 0x0b
#define DW_EH_PE_sdata8	 0x0c
#define DW_EH_PE_pcrel	 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_indirect 0x80

/*
 * A cursor over one CIE or FDE in the target's memory, read through a small
 * window (so a long entry costs no more stack than a short one); the
 * run-time address of the next byte resolves pc-relative fields.
 */
#define CURSOR_WINDOW 64

struct cursor {
	const struct walk *w;
	uintptr_t addr, end; /* the next byte, the end of the entry */
	uintptr_t win;	     /* the address of buf[0] */
	size_t win_len;
	unsigned char buf[CURSOR_WINDOW];
	bool bad;
};

static void cur_init(struct cursor *c, const struct walk *w, uintptr_t addr, uintptr_t end)
{
	c->w = w;
	c->addr = addr;
	c->end = end;
	c->win = 0;
	c->win_len = 0;
	c->bad = addr > end;
}

static int cur_byte(struct cursor *c)
{
	if (c->bad || c->addr >= c->end) {
		c->bad = true;
		return -1;
	}
	if (c->addr < c->win || c->addr - c->win >= c->win_len) {
		size_t n = c->end - c->addr < CURSOR_WINDOW ? (size_t)(c->end - c->addr) : CURSOR_WINDOW;

		if (read_mem(c->w, c->addr, c->buf, n)) {
			c->bad = true;
			return -1;
		}
		c->win = c->addr;
		c->win_len = n;
	}
	return c->buf[c->addr++ - c->win];
}

static bool cur_more(const struct cursor *c)
{
	return !c->bad && c->addr < c->end;
}

static void cur_skip(struct cursor *c, uint64_t n)
{
	if (c->bad || n > c->end - c->addr)
		c->bad = true;
	else
		c->addr += (uintptr_t)n;
}

static uint64_t cur_bytes(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		int b = cur_byte(c);

		if (b < 0)
			return 0;
		v |= (uint64_t)b << (8 * i);
	}
	return v;
}

static uint64_t cur_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		int b = cur_byte(c);

		if (b < 0)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t cur_sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	int b;

	do {
		b = cur_byte(c);
		if (b < 0)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* An encoded pointer; @datarel is the base for DW_EH_PE_datarel. */
static uintptr_t cur_ptr(const struct walk *w, struct cursor *c, unsigned enc, uintptr_t datarel)
{
	uintptr_t field = c->addr, v;

	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = (uintptr_t)cur_bytes(c, 8);
		break;
	case DW_EH_PE_uleb128:
		v = (uintptr_t)cur_uleb(c);
		break;
	case DW_EH_PE_udata2:
		v = (uintptr_t)cur_bytes(c, 2);
		break;
	case DW_EH_PE_sdata2:
		v = (uintptr_t)(intptr_t)(int16_t)cur_bytes(c, 2);
		break;
	case DW_EH_PE_udata4:
		v = (uintptr_t)cur_bytes(c, 4);
		break;
	case DW_EH_PE_sdata4:
		v = (uintptr_t)(intptr_t)(int32_t)cur_bytes(c, 4);
		break;
	case DW_EH_PE_sleb128:
		v = (uintptr_t)cur_sleb(c);
		break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		v += field;
		break;
	case DW_EH_PE_datarel:
		v += datarel;
		break;
	default:
		c->bad = true; /* textrel, funcrel: not emitted for .eh_frame */
		return 0;
	}
	if (enc & DW_EH_PE_indirect) {
		uintptr_t d;

		if (!read_word(w, v, &d)) {
			c->bad = true;
			return 0;
		}
		v = d;
	}
	return v;
}

/* Open the CIE or FDE at @addr: @c starts past its length word. */
static bool open_entry(const struct walk *w, uintptr_t addr, struct cursor *c)
{
	uint32_t len32;

	if (read_mem(w, addr, &len32, 4) || len32 == 0 || len32 == 0xffffffffu ||
	    addr + 4 + len32 < addr)
		return false; /* a terminator or a 64-bit entry */
	cur_init(c, w, addr + 4, addr + 4 + len32);
	return true;
}

/* Find the FDE for @pc in @o's .eh_frame_hdr binary-search table. */
static bool find_fde(const struct walk *w, const struct pk_obj *o, uintptr_t pc, uintptr_t *fde)
{
	unsigned char h[4];

	if (!o->eh_hdr || o->eh_hdr_len < 12 || read_mem(w, o->eh_hdr, h, 4))
		return false;
	/* Version 1, a count as udata4 and a table of datarel sdata4 pairs:
	 * what GNU ld, gold, lld and mold write. Anything else: no CFI. */
	if (h[0] != 1 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
	    h[2] != DW_EH_PE_udata4)
		return false;

	/* The eh_frame_ptr field's size depends on its encoding. */
	size_t ptr_size;

	switch (h[1] & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		ptr_size = 4;
		break;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		ptr_size = 8;
		break;
	default:
		return false;
	}
	if (h[1] == DW_EH_PE_omit)
		return false;

	uintptr_t count_at = o->eh_hdr + 4 + ptr_size, table = count_at + 4;
	uint32_t count;

	if (o->eh_hdr_len < table - o->eh_hdr || read_mem(w, count_at, &count, 4) || !count)
		return false;
	if ((uint64_t)count * 8 > o->eh_hdr_len - (table - o->eh_hdr))
		return false; /* the table would run past the segment */

	int32_t ent[2];
	uint32_t lo = 0, hi = count;

	/* The last entry whose initial location is <= pc. */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (read_mem(w, table + (uintptr_t)mid * 8, ent, 8))
			return false;
		if (o->eh_hdr + (intptr_t)ent[0] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (read_mem(w, table + (uintptr_t)lo * 8, ent, 8))
		return false;
	if (o->eh_hdr + (intptr_t)ent[0] > pc)
		return false;
	*fde = o->eh_hdr + (intptr_t)ent[1];
	return true;
}

enum rule_kind { R_SAME = 0, R_UNDEF, R_OFFSET, R_VAL_OFFSET, R_REGISTER, R_UNKNOWN };

struct rule {
	int32_t arg; /* an offset from the CFA, or a register number */
	unsigned char kind;
};

struct cfa_state {
	int cfa_reg;
	int64_t cfa_off;
	bool cfa_expr; /* DW_CFA_def_cfa_expression: not evaluated */
	struct rule reg[NREGS];
};

#define STATE_STACK 4

/* A rule whose argument does not fit is one we cannot follow. */
static struct rule mkrule(int kind, int64_t arg)
{
	struct rule r = { (int32_t)arg, (unsigned char)kind };

	if (arg < INT32_MIN || arg > INT32_MAX)
		r.kind = R_UNKNOWN;
	return r;
}

struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	unsigned fde_enc;
	bool augz;
	bool signal_frame;
	uintptr_t insns, end; /* the initial instructions */
};

static bool parse_cie(const struct walk *w, uintptr_t addr, struct cie_info *ci)
{
	struct cursor c;
	char aug[8];
	size_t auglen = 0;
	int ch;

	if (!open_entry(w, addr, &c) || cur_bytes(&c, 4) != 0)
		return false; /* not a CIE */
	unsigned version = (unsigned)cur_bytes(&c, 1);

	if (version != 1 && version != 3)
		return false;
	while ((ch = cur_byte(&c)) > 0) {
		if (auglen == sizeof(aug))
			return false; /* longer than any augmentation in use */
		aug[auglen++] = (char)ch;
	}
	if (ch < 0)
		return false;
	ci->code_align = cur_uleb(&c);
	ci->data_align = cur_sleb(&c);
	ci->ra_reg = version == 1 ? cur_bytes(&c, 1) : cur_uleb(&c);
	ci->fde_enc = DW_EH_PE_absptr;
	ci->augz = false;
	ci->signal_frame = false;
	if (auglen && aug[0] == 'z') {
		ci->augz = true;
		uint64_t alen = cur_uleb(&c);
		uintptr_t after = c.addr + (uintptr_t)alen;

		if (c.bad || alen > c.end - c.addr)
			return false;
		for (size_t i = 1; i < auglen; i++) {
			switch (aug[i]) {
			case 'R':
				ci->fde_enc = (unsigned)cur_bytes(&c, 1);
				break;
			case 'L':
				cur_bytes(&c, 1);
				break;
			case 'P': {
				unsigned enc = (unsigned)cur_bytes(&c, 1);

				/* Skip the personality pointer without following it. */
				cur_ptr(w, &c, enc & ~DW_EH_PE_indirect, 0);
				break;
			}
			case 'S':
				ci->signal_frame = true;
				break;
			case 'B':
				break;
			default:
				i = auglen; /* unknown: the length lets us skip the rest */
				break;
			}
		}
		if (c.bad || c.addr > after)
			return false;
		c.addr = after;
	} else if (auglen) {
		return false; /* no 'z': the augmentation cannot be skipped */
	}
	if (c.bad || ci->ra_reg >= NREGS)
		return false;
	ci->insns = c.addr;
	ci->end = c.end;
	return true;
}

/* Run the CFA program from @c until the location passes @pc. */
static bool run_cfa(const struct walk *w, struct cursor *c, const struct cie_info *ci,
		    uintptr_t loc, uintptr_t pc, struct cfa_state *st, const struct cfa_state *initial)
{
	struct cfa_state stack[STATE_STACK];
	int depth = 0;

	while (cur_more(c)) {
		unsigned op = (unsigned)cur_bytes(c, 1);
		unsigned low = op & 0x3f;
		uint64_t reg, delta;
		int64_t off;

		switch (op & 0xc0) {
		case 0x40: /* advance_loc */
			loc += low * ci->code_align;
			if (loc > pc)
				return true;
			continue;
		case 0x80: /* offset */
			off = (int64_t)cur_uleb(c) * ci->data_align;
			if (low < NREGS)
				st->reg[low] = mkrule(R_OFFSET, off);
			continue;
		case 0xc0: /* restore */
			if (low < NREGS && initial)
				st->reg[low] = initial->reg[low];
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			loc = cur_ptr(w, c, ci->fde_enc, 0);
			if (loc > pc)
				return true;
			break;
		case 0x02: /* advance_loc1 */
		case 0x03: /* advance_loc2 */
		case 0x04: /* advance_loc4 */
			delta = cur_bytes(c, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
			loc += delta * ci->code_align;
			if (loc > pc)
				return true;
			break;
		case 0x05: /* offset_extended */
			reg = cur_uleb(c);
			off = (int64_t)cur_uleb(c) * ci->data_align;
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_OFFSET, off);
			break;
		case 0x06: /* restore_extended */
			reg = cur_uleb(c);
			if (reg < NREGS && initial)
				st->reg[reg] = initial->reg[reg];
			break;
		case 0x07: /* undefined */
		case 0x08: /* same_value */
			reg = cur_uleb(c);
			if (reg < NREGS)
				st->reg[reg] = mkrule(op == 0x07 ? R_UNDEF : R_SAME, 0);
			break;
		case 0x09: /* register */
			reg = cur_uleb(c);
			delta = cur_uleb(c);
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_REGISTER, (int64_t)delta);
			break;
		case 0x0a: /* remember_state */
			if (depth >= STATE_STACK)
				return false;
			stack[depth++] = *st;
			break;
		case 0x0b: /* restore_state */
			if (depth <= 0)
				return false;
			*st = stack[--depth]; /* the CFA rule too, as DWARF 5 says */
			break;
		case 0x0c: /* def_cfa */
			st->cfa_reg = (int)cur_uleb(c);
			st->cfa_off = (int64_t)cur_uleb(c);
			st->cfa_expr = false;
			break;
		case 0x0d: /* def_cfa_register */
			st->cfa_reg = (int)cur_uleb(c);
			st->cfa_expr = false;
			break;
		case 0x0e: /* def_cfa_offset */
			st->cfa_off = (int64_t)cur_uleb(c);
			break;
		case 0x0f: { /* def_cfa_expression */
			cur_skip(c, cur_uleb(c));
			st->cfa_expr = true;
			break;
		}
		case 0x10:   /* expression */
		case 0x16: { /* val_expression */
			reg = cur_uleb(c);
			cur_skip(c, cur_uleb(c));
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_UNKNOWN, 0);
			break;
		}
		case 0x11: /* offset_extended_sf */
			reg = cur_uleb(c);
			off = cur_sleb(c) * ci->data_align;
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_OFFSET, off);
			break;
		case 0x12: /* def_cfa_sf */
			st->cfa_reg = (int)cur_uleb(c);
			st->cfa_off = cur_sleb(c) * ci->data_align;
			st->cfa_expr = false;
			break;
		case 0x13: /* def_cfa_offset_sf */
			st->cfa_off = cur_sleb(c) * ci->data_align;
			break;
		case 0x14: /* val_offset */
			reg = cur_uleb(c);
			off = (int64_t)cur_uleb(c) * ci->data_align;
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_VAL_OFFSET, off);
			break;
		case 0x15: /* val_offset_sf */
			reg = cur_uleb(c);
			off = cur_sleb(c) * ci->data_align;
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_VAL_OFFSET, off);
			break;
		case 0x2e: /* GNU_args_size */
			cur_uleb(c);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = cur_uleb(c);
			off = -(int64_t)cur_uleb(c) * ci->data_align;
			if (reg < NREGS)
				st->reg[reg] = mkrule(R_OFFSET, off);
			break;
		default:
			return false; /* an opcode we cannot skip safely */
		}
	}
	return !c->bad;
}

/*
 * One step by CFI. Returns 1 with @rs the caller's registers, 0 when no
 * FDE covers the pc (try frame pointers), -1 when the FDE says the stack
 * ends here or cannot be followed.
 */
static int step_cfi(const struct walk *w, struct regs *rs, uintptr_t lookup_pc)
{
	const struct pk_obj *o = pk_obj_find(lookup_pc);
	uintptr_t fde_addr;
	struct cursor c;

	if (!o || !find_fde(w, o, lookup_pc, &fde_addr) || !open_entry(w, fde_addr, &c))
		return 0;

	uintptr_t cie_field = c.addr;
	uint32_t cie_ptr = (uint32_t)cur_bytes(&c, 4);
	struct cie_info ci;

	/* The CIE pointer counts back from its own field. */
	if (c.bad || cie_ptr == 0 || cie_ptr > cie_field || !parse_cie(w, cie_field - cie_ptr, &ci))
		return 0;

	uintptr_t start = cur_ptr(w, &c, ci.fde_enc, 0);
	uintptr_t range = cur_ptr(w, &c, ci.fde_enc & 0x0f, 0);

	if (c.bad || lookup_pc < start || lookup_pc - start >= range)
		return 0;
	if (ci.augz)
		cur_skip(&c, cur_uleb(&c));
	if (c.bad)
		return 0;

	struct cfa_state st, initial;
	struct cursor ic;

	memset(&st, 0, sizeof(st));
	st.cfa_reg = -1;
	cur_init(&ic, w, ci.insns, ci.end);
	if (!run_cfa(w, &ic, &ci, start, UINTPTR_MAX, &st, NULL))
		return 0;
	initial = st;
	if (!run_cfa(w, &c, &ci, start, lookup_pc, &st, &initial))
		return 0;
	if (st.cfa_expr || !reg_ok(rs, st.cfa_reg))
		return 0;

	uintptr_t cfa = rs->r[st.cfa_reg] + (uintptr_t)st.cfa_off;
	struct regs next = *rs;

	if (st.reg[ci.ra_reg].kind == R_UNDEF)
		return -1; /* the outermost frame (_start, thread start) */
	for (int i = 0; i < NREGS; i++) {
		const struct rule *r = &st.reg[i];
		uintptr_t v;

		switch (r->kind) {
		case R_SAME:
			break;
		case R_UNDEF:
		case R_UNKNOWN:
			next.valid &= ~((uint64_t)1 << i);
			break;
		case R_OFFSET:
			if (!read_word(w, cfa + (uintptr_t)r->arg, &v))
				return -1;
			reg_set(&next, i, v);
			break;
		case R_VAL_OFFSET:
			reg_set(&next, i, cfa + (uintptr_t)r->arg);
			break;
		case R_REGISTER:
			if (!reg_ok(rs, (int)r->arg))
				next.valid &= ~((uint64_t)1 << i);
			else
				reg_set(&next, i, rs->r[r->arg]);
			break;
		}
	}
	if (!reg_ok(&next, (int)ci.ra_reg))
		return -1;
	reg_set(&next, REG_PC, next.r[ci.ra_reg]);
	reg_set(&next, REG_SP, cfa);
	*rs = next;
	return 1;
}
#endif /* __x86_64__ */

/* One step by the frame-pointer chain. */
__attribute__((unused)) static bool step_fp(const struct walk *w, struct regs *rs)
{
	uintptr_t fp, prev_fp, ra;

	if (!reg_ok(rs, REG_FP))
		return false;
	fp = rs->r[REG_FP];
	if (!fp || (fp & (sizeof(uintptr_t) - 1)))
		return false;
	if (reg_ok(rs, REG_SP) && fp < rs->r[REG_SP])
		return false; /* a frame record below the stack pointer: not ours */
	if (!read_word(w, fp, &prev_fp) || !read_word(w, fp + sizeof(uintptr_t), &ra))
		return false;
	reg_set(rs, REG_FP, prev_fp);
	reg_set(rs, REG_SP, fp + 2 * sizeof(uintptr_t));
	reg_set(rs, REG_PC, ra);
	return true;
}

/* ----------------------------------------------------------- the walk -- */

__attribute__((noinline)) int pk_stack_walk(struct pk_frame *out, int max, const void *ucontext, uintptr_t from_ra,
		  enum pk_unwind_mode mode)
{
	struct regs rs;
	struct walk w;
	bool exact = false;
	int n = 0;

	if (!out || max <= 0)
		return 0;
	/* No pk_stacktrace_init() here: dl_iterate_phdr is not for signal
	 * handlers. Before the constructors ran, no object is known: frame
	 * pointers only, no names. */
	memset(&rs, 0, sizeof(rs));
	w.pid = getpid();
	/* Our own frame record lies above our locals: the fallback check
	 * allows it until the stack pointer is known. */
	w.stack_lo = (uintptr_t)&rs;
	w.stack_hi = w.stack_lo + ((uintptr_t)8 << 20);

#if defined(__x86_64__)
	if (ucontext) {
		const ucontext_t *uc = ucontext;

		regs_from_gregs(&rs, uc->uc_mcontext.gregs);
		exact = true;
	} else {
		uintptr_t pc, sp, fp = (uintptr_t)__builtin_frame_address(0);

		__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1" : "=r"(pc), "=r"(sp));
		reg_set(&rs, REG_PC, pc);
		reg_set(&rs, REG_SP, sp);
		reg_set(&rs, REG_FP, fp);
		exact = true;
		if (mode == PK_UNWIND_FP) {
			/* Our own frame record: start from our caller. */
			if (!step_fp(&w, &rs))
				return 0;
			exact = false;
		}
	}
#elif defined(__aarch64__)
	if (ucontext) {
		const ucontext_t *uc = ucontext;

		reg_set(&rs, REG_PC, (uintptr_t)uc->uc_mcontext.pc);
		reg_set(&rs, REG_SP, (uintptr_t)uc->uc_mcontext.sp);
		reg_set(&rs, REG_FP, (uintptr_t)uc->uc_mcontext.regs[29]);
		exact = true;
	} else {
		reg_set(&rs, REG_FP, (uintptr_t)__builtin_frame_address(0));
		reg_set(&rs, REG_SP, (uintptr_t)__builtin_frame_address(0));
		if (!step_fp(&w, &rs))
			return 0;
		exact = false;
	}
	(void)mode;
#else
	(void)ucontext;
	(void)mode;
	(void)from_ra;
	(void)exact;
	(void)w;
	return 0;
#endif

#if defined(__x86_64__) || defined(__aarch64__)
	/* The fallback check allows reads from here up: the stack the walk
	 * started on (a signal frame may lead to another one, below). */
	w.stack_lo = rs.r[REG_SP];
	w.stack_hi = rs.r[REG_SP] + ((uintptr_t)8 << 20);
	if (w.stack_hi < w.stack_lo)
		w.stack_hi = UINTPTR_MAX;

	bool keeping = !from_ra;

	for (int steps = 0; steps < 4 * PK_STACK_MAX && n < max; steps++) {
		uintptr_t pc = rs.r[REG_PC];

		if (!reg_ok(&rs, REG_PC) || pc < 4096)
			break;
		if (!keeping && !exact && pc == from_ra)
			keeping = true;
		if (keeping) {
			out[n].pc = pc;
			out[n].flags = exact ? PK_FRAME_EXACT : 0;
			n++;
		}

		uintptr_t old_sp = rs.r[REG_SP];
		int got = 0;

#if defined(__x86_64__)
		if (!exact && is_sigreturn(&w, pc)) {
			/* rsp points at the ucontext of the signal frame. */
			if (keeping)
				n--; /* the trampoline is not a caller */
			if (!reg_ok(&rs, REG_SP) || !regs_from_sigframe(&w, &rs, rs.r[REG_SP]))
				break;
			/* The interrupted stack may be another one (the handler
			 * ran on an alternate stack): the fallback check moves. */
			w.stack_lo = rs.r[REG_SP];
			w.stack_hi = rs.r[REG_SP] + ((uintptr_t)8 << 20);
			if (w.stack_hi < w.stack_lo)
				w.stack_hi = UINTPTR_MAX;
			exact = true;
			continue;
		}
		if (mode != PK_UNWIND_FP) {
			got = step_cfi(&w, &rs, exact ? pc : pc - 1);
			if (got < 0)
				break;
		}
		if (!got && mode == PK_UNWIND_CFI)
			break;
#endif
		if (!got && !step_fp(&w, &rs))
			break;
		exact = false;
		/* The stack grows down: a caller's frame lies above. */
		if (rs.r[REG_SP] <= old_sp)
			break;
	}
	if (!keeping) {
		/* @from_ra never showed up (inlined or tail-called away):
		 * better the whole trace than none. */
		return pk_stack_walk(out, max, ucontext, 0, mode);
	}
#endif
	return n;
}
