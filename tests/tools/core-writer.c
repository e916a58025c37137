// SPDX-License-Identifier: MIT
/*
 * core-writer - a program whose log udmesg --core reads out of its core
 * (tests/cli/test_udmesg_core.sh).
 *
 *   core-writer [N [extra|selfcore FILE [sparse]]]
 *
 * Logs through printk() into the log PRINTK_OPTS gives it (a memory log
 * without log_buf_file=, a log file with it): a few lines of every kind, N
 * numbered ones (default 40), a continued line, and last an open line (no
 * newline). With "extra", a second memory log of its own (pk_log_create)
 * gets a line after all that: the core then holds two logs, printk's
 * written first. With "selfcore FILE", it writes an ELF core of its own
 * into FILE, small whatever the build (a sanitizer's shadow memory makes
 * gcore's cores huge): the notes, a buffer with a false log magic in it,
 * and the log split over two segments; "sparse" puts a segment of 16 GiB
 * before them, all of it a hole in the file (untouched memory, as the
 * kernel leaves it). Then it prints "ready" on stdout and waits to be killed or
 * dumped. Time stamps come from a test clock and the wall-clock offset is
 * fixed, so two runs, one into memory and one into a file, log the same
 * bytes.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "log/log_internal.h"
#include "log/log_shared.h"
#include "log/settings.h"
#include "ring/caller.h"

static uint64_t now_ns = 1000000000ull;

static uint64_t test_clock(void)
{
	return now_ns += 1234567;
}

static int put(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

/* The core of this process as far as udmesg needs it. */
static int selfcore(const char *path, struct pk_log *log, int sparse)
{
	struct prb *rb = pk_log_ring(log);
	const unsigned char *region = (const unsigned char *)rb->hdr;
	size_t half = (rb->region_size / 2) & ~(size_t)4095;
	static _Alignas(4096) unsigned char junk[65536];
	/* A false start of a log: the ring's magic with nothing valid after it. */
	memcpy(junk + 8192, "PRTKLOG1", 8);

	struct {
		uint64_t vaddr;
		const void *data;
		size_t len;
	} loads[] = {
		{0x100000000000ull, NULL, sparse ? (size_t)16 << 30 : 0},
		{(uintptr_t)junk, junk, sizeof(junk)},
		{(uintptr_t)region, region, half},
		{(uintptr_t)region + half, region + half, rb->region_size - half},
	};
	enum { NLOADS = sizeof(loads) / sizeof(loads[0]) };
	unsigned char note[12 + 8 + 136] = {0};
	uint32_t namesz = 5, descsz = 136, type = NT_PRPSINFO;
	int32_t pid = (int32_t)getpid();

	memcpy(note, &namesz, 4);
	memcpy(note + 4, &descsz, 4);
	memcpy(note + 8, &type, 4);
	memcpy(note + 12, "CORE", 5);
	memcpy(note + 20 + 24, &pid, 4);
	memcpy(note + 20 + 40, "core-writer", 11);

	Elf64_Ehdr eh = {0};
	Elf64_Phdr ph[1 + NLOADS];
	/* Odd file offsets, as gcore leaves them: nothing may rely on them. */
	uint64_t off = sizeof(eh) + sizeof(ph) + 8;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
#ifdef __aarch64__
	eh.e_machine = EM_AARCH64;
#else
	eh.e_machine = EM_X86_64;
#endif
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1 + NLOADS;
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_NOTE;
	ph[0].p_offset = off;
	ph[0].p_filesz = sizeof(note);
	off += sizeof(note) + 24;
	for (int i = 0; i < NLOADS; i++) {
		ph[1 + i].p_type = PT_LOAD;
		ph[1 + i].p_flags = PF_R | PF_W;
		ph[1 + i].p_offset = off;
		ph[1 + i].p_vaddr = loads[i].vaddr;
		ph[1 + i].p_filesz = ph[1 + i].p_memsz = loads[i].len;
		off += loads[i].len + 40;
	}

	static const unsigned char pad[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err = fd < 0;

	err = err || put(fd, &eh, sizeof(eh)) || put(fd, ph, sizeof(ph)) || put(fd, pad, 8) ||
	      put(fd, note, sizeof(note)) || put(fd, pad, 24);
	for (int i = 0; i < NLOADS && !err; i++) {
		if (!loads[i].data)
			err = lseek(fd, (off_t)loads[i].len, SEEK_CUR) < 0; /* a hole */
		else
			err = put(fd, loads[i].data, loads[i].len);
		err = err || put(fd, pad, 40);
	}
	if (fd >= 0 && close(fd) < 0)
		err = 1;
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	struct pk_log *log = pk_printk_log();

	/* gcore is not our parent: let it attach where Yama allows only that. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pk_set_test_clock(test_clock);
	atomic_store(&pk_log_shared(log)->realtime_offset_ns, 1700000000ull * 1000000000ull);

	printk(KERN_ERR "core-writer: an error, code %d\n", -5);
	printk(KERN_WARNING "escapes: bell\a tab\there del\x7f utf-8 caf\xc3\xa9\n");
	printk(KERN_NOTICE "multi line1\nline2\nline3\n");
	printk(KERN_DEBUG "a debug line\n");
	printk(KERN_CRIT "critical\n");
	for (int i = 0; i < n; i++)
		printk(KERN_INFO "record %d of %d: %s\n", i, n, i % 7 ? "filler text" : "seventh");
	printk(KERN_NOTICE "start of a line,");
	pr_cont(" continued");
	pr_cont(" and ended\n");
	printk(KERN_INFO "the open line, never finished");
	if (argc > 2 && !strcmp(argv[2], "extra")) {
		static const char text[] = "the program's own log, written last";
		struct pk_log *own;

		if (pk_log_create(&own, 0) ||
		    pk_log_store(own, 1, 6, text, sizeof(text) - 1, NULL, 0))
			return 1;
	}
	if (argc > 3 && !strcmp(argv[2], "selfcore") &&
	    selfcore(argv[3], log, argc > 4 && !strcmp(argv[4], "sparse")) < 0)
		return 1;

	/* "ready" goes out only once everything above is in the log. */
	if (write(STDOUT_FILENO, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
}
