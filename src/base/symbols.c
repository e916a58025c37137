// SPDX-License-Identifier: MIT
/*
 * symbols.c - address to "function+0xoff/0xsize [object]", the kernel's
 * kallsyms look-up for a process.
 *
 * Owns: one read-only private mapping of each loaded object's ELF file and
 * the position of its symbol table (.symtab, or .dynsym when the file was
 * stripped) inside that mapping.
 *
 * Invariants:
 *  - the files are opened, mapped and checked only by pk_symbols_init(),
 *    at start-up (a constructor), never in a signal handler; the table is
 *    published by one release store and read-only afterwards, so a look-up
 *    is async-signal-safe, lock-free and allocates nothing;
 *  - the file is untrusted: every offset and size read from it (section
 *    headers, the symbol table, its string table, each name) is checked
 *    against the file's length at init or at the look-up before use;
 *  - the executable's own file is found through /proc/self/exe, so a
 *    program linked without -rdynamic still gets its static functions.
 *
 * Sizes are the symbols' st_size (the kernel's kallsyms, having no sizes,
 * counts to the next symbol and so includes alignment padding); a symbol of
 * size 0 (hand-written assembly) extends to the next one. An address past
 * its symbol's end, in an object without symbols (a stripped file keeps
 * only .dynsym, so only exported functions have names) or in no object at
 * all gets no symbol: %pS then prints the address, as a kernel without
 * kallsyms does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/stacktrace.h"

struct symtab {
	const unsigned char *map; /* the whole file, PROT_READ */
	size_t map_len;
	const ElfW(Sym) *syms;
	size_t nsyms;
	const char *strtab;
	size_t strsz;
};

static struct symtab tabs[PK_OBJ_MAX];
static _Atomic int ntabs = -1;
static atomic_flag init_busy = ATOMIC_FLAG_INIT;

/* Is [off, off + len) inside a file of @size bytes? */
static bool in_file(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

static void load_symtab(struct symtab *t, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return;
	}

	size_t size = (size_t)st.st_size;
	void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);

	close(fd);
	if (map == MAP_FAILED)
		return;

	const unsigned char *f = map;
	const ElfW(Ehdr) *eh = map;

	if (memcmp(f, ELFMAG, SELFMAG) != 0 || f[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || !eh->e_shnum ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), size) ||
	    eh->e_shoff % _Alignof(ElfW(Shdr)))
		goto unmap;

	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(f + eh->e_shoff);
	const ElfW(Shdr) *best = NULL;

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB)
			best = &sh[i];
		else if (sh[i].sh_type == SHT_DYNSYM && !best)
			best = &sh[i];
	}
	if (!best || best->sh_entsize != sizeof(ElfW(Sym)) || best->sh_link >= eh->e_shnum ||
	    !in_file(best->sh_offset, best->sh_size, size) || best->sh_offset % _Alignof(ElfW(Sym)))
		goto unmap;

	const ElfW(Shdr) *str = &sh[best->sh_link];

	if (str->sh_type != SHT_STRTAB || !in_file(str->sh_offset, str->sh_size, size) || !str->sh_size)
		goto unmap;
	t->map = f;
	t->map_len = size;
	t->syms = (const ElfW(Sym) *)(f + best->sh_offset);
	t->nsyms = best->sh_size / sizeof(ElfW(Sym));
	t->strtab = (const char *)f + str->sh_offset;
	t->strsz = str->sh_size;
	return;
unmap:
	munmap(map, size);
}

void pk_symbols_init(void)
{
	if (atomic_load_explicit(&ntabs, memory_order_acquire) >= 0)
		return;
	if (atomic_flag_test_and_set(&init_busy))
		return;
	pk_stacktrace_init();

	int n = pk_obj_count();

	for (int i = 0; i < n; i++) {
		const struct pk_obj *o = pk_obj_get(i);

		memset(&tabs[i], 0, sizeof(tabs[i]));
		if (o->path[0] == '/')
			load_symtab(&tabs[i], o->path); /* linux-vdso.so.1 has no file */
	}
	atomic_store_explicit(&ntabs, n, memory_order_release);
}

__attribute__((constructor)) static void symbols_ctor(void)
{
	pk_symbols_init();
}

static bool is_code_or_data(const ElfW(Sym) *s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS || s->st_shndx >= SHN_LORESERVE)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT;
}

/* Prefer a sized global name over an alias that is local or weak. */
static int rank(const ElfW(Sym) *s)
{
	unsigned bind = ELF64_ST_BIND(s->st_info);

	return (s->st_size ? 4 : 0) + (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0);
}

/* The symbol of @t holding the link-time address @key. */
static int lookup_in(const struct symtab *t, uintptr_t key, struct pk_sym *sym)
{
	const ElfW(Sym) *best = NULL;
	uintptr_t next = UINTPTR_MAX;

	for (size_t i = 0; i < t->nsyms; i++) {
		const ElfW(Sym) *s = &t->syms[i];

		if (!is_code_or_data(s))
			continue;
		if (s->st_value > key) {
			if (s->st_value < next)
				next = s->st_value;
			continue;
		}
		if (!best || s->st_value > best->st_value ||
		    (s->st_value == best->st_value && rank(s) > rank(best)))
			best = s;
	}
	if (!best)
		return -ENOENT;

	uintptr_t size = best->st_size;

	if (!size)
		size = next == UINTPTR_MAX ? 0 : next - best->st_value;
	if (key - best->st_value >= size)
		return -ENOENT;
	if (best->st_name >= t->strsz)
		return -ENOENT;

	const char *name = t->strtab + best->st_name;
	size_t len = strnlen(name, t->strsz - best->st_name);

	if (!len || len == t->strsz - best->st_name)
		return -ENOENT; /* empty, or no NUL before the table's end */
	sym->name = name;
	sym->name_len = len;
	sym->offset = key - best->st_value;
	sym->size = size;
	sym->object = NULL;
	return 0;
}

int pk_sym_lookup(uintptr_t addr, struct pk_sym *sym)
{
	const struct pk_obj *o = pk_obj_find(addr);
	int n = atomic_load_explicit(&ntabs, memory_order_acquire);

	if (!o || n < 0)
		return -ENOENT;

	int idx = (int)(o - pk_obj_get(0));

	if (idx < 0 || idx >= n || !tabs[idx].syms)
		return -ENOENT;
	if (lookup_in(&tabs[idx], addr - o->base, sym) < 0)
		return -ENOENT;
	sym->object = o->is_main ? NULL : o->name;
	return 0;
}

int pk_symbols_test_file(const char *path, uintptr_t key, char *name, size_t size)
{
	struct symtab t;
	struct pk_sym sym;
	int ret = -ENOEXEC;

	memset(&t, 0, sizeof(t));
	load_symtab(&t, path);
	if (!t.map)
		return ret;
	ret = lookup_in(&t, key, &sym);
	if (!ret && size) {
		size_t n = sym.name_len < size - 1 ? sym.name_len : size - 1;

		memcpy(name, sym.name, n);
		name[n] = '\0';
	}
	munmap((void *)t.map, t.map_len);
	return ret;
}

/* Append helpers for pk_sprint_symbol: they never write past @size - 1. */
struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (o->len + 1 < o->size)
			o->buf[o->len] = s[i];
		o->len++;
	}
}

static void put_hex(struct out *o, uintptr_t v)
{
	char tmp[2 + 2 * sizeof(v)];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	put(o, tmp + i, sizeof(tmp) - i);
}

int pk_sprint_symbol(char *buf, size_t size, uintptr_t addr, int add_offset, int backtrace)
{
	struct pk_sym sym;
	struct out o = { buf, size, 0 };

	if (pk_sym_lookup(backtrace ? addr - 1 : addr, &sym) < 0)
		return -ENOENT;
	put(&o, sym.name, sym.name_len);
	if (add_offset) {
		put(&o, "+", 1);
		put_hex(&o, sym.offset + (backtrace ? 1 : 0));
		put(&o, "/", 1);
		put_hex(&o, sym.size);
	}
	if (sym.object) {
		put(&o, " [", 2);
		put(&o, sym.object, strlen(sym.object));
		put(&o, "]", 1);
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}
