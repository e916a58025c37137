// SPDX-License-Identifier: MIT
/*
 * core.c - udmesg --core: the log of a dead process, out of its ELF core.
 *
 * A process that logged to memory only (no log_buf_file=) leaves its log in
 * its core dump and nowhere else, the way a crashed kernel leaves its log
 * in a vmcore. The log describes itself: its region starts with the ring
 * header (magic, ABI version, geometry), followed by the log state, the
 * descriptors and the text, all in one allocation (pk_log_create: one
 * anonymous mapping), so the whole log is one range of the process's
 * addresses. This file finds that range and hands a copy of it to the
 * library (pk_log_open_image), which validates it as it validates a log
 * file; from there on the records are read exactly as from a log file
 * (source.c), every option included.
 *
 * The core is untrusted input: a file of any size and content. Every
 * offset and length read from it is checked against the bytes there are,
 * in arithmetic that cannot overflow; anything that does not add up is one
 * line on stderr and exit status 1. Read: ELF64 little-endian cores of
 * x86-64 and AArch64 (ET_CORE), their PT_LOAD segments (the memory), and of
 * their notes NT_PRPSINFO (the process's pid and name, for --writer) and
 * NT_FILE (the mapped files, to check an EXECUTABLE given after the core).
 *
 * Finding the log: every 64-byte aligned address of the dumped memory is
 * probed (the library looks at 8 bytes first; only a matching magic costs
 * more), except where the file has a hole (SEEK_DATA: the kernel leaves
 * untouched memory out of the file that way, and a sanitizer's reserved
 * shadow makes cores terabytes of holes) or 8 zero bytes. A region that
 * validates is a log; a log's own bytes are not probed again.
 *
 * A process normally has one memory log, printk's. When the core holds
 * several, printk's is read: the log a process made its printk log
 * says so in its state (PK_LOG_ROLE_PRINTK). Failing that, memory logs
 * (pk_log_create, pk_log_create_in) come before the rings of log files a
 * core may also hold (those are read from the file itself, with -B), and
 * of the rest the one whose newest record is the most recent is taken.
 * --core-list shows them all.
 *
 * A core read from a pipe (coredumpctl dump | udmesg --core /dev/stdin) is
 * read into memory first, as far as its ELF and program headers say it
 * reaches (the end of its furthest PT_LOAD or PT_NOTE segment), at most
 * 16 GiB; a file is mapped. Directories and character and block
 * devices are refused before they are opened (/dev/zero would be read
 * until memory ran out).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <printk/log.h>

#include "reader.h"
#include "udmesg.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

#define CORE_MAX_LOGS 16 /* logs listed or compared; more are not looked at */
/* A core read from a pipe is kept in memory: at most this much of it. */
#define CORE_PIPE_MAX	    ((uint64_t)16 << 30)
#define CORE_PIPE_MAX_WORDS "16 GiB"
/* Bytes after the core's last one that are read and dropped. */
#define CORE_PIPE_TAIL (1u << 20)

struct seg {
	uint64_t vaddr, memsz;
	const unsigned char *data; /* the bytes the file holds */
	uint64_t filesz;	   /* as the header says */
	uint64_t have;		   /* as the file holds (less: truncated) */
};

struct core {
	const char *path;
	const unsigned char *buf;
	size_t len;
	bool mapped;
	struct seg *segs;
	size_t nsegs;
	uint32_t pid;
	char comm[17];
	const unsigned char *files; /* NT_FILE's descriptor, checked */
	size_t files_len;
	bool cut; /* a segment ends past the end of the file */
	/* Where a file has data (SEEK_DATA): holes read as zeros and hold no
	 * log, and a core can be mostly holes (untouched memory). */
	uint64_t (*data)[2]; /* [start, end) file offsets, ascending; NULL: all */
	size_t ndata;
};

struct found {
	uint64_t vaddr;
	size_t len;
	bool file, printk; /* as pk_log_image_probe() says */
	uint64_t records, newest_ts;
};

static _Noreturn void core_fatal(const struct core *c, const char *what)
{
	ud_fatal("%s: %s", c->path, what);
}

/* ------------------------------------------------------------ loading -- */

/* The data extents of the file @fd, when the file system tells holes. */
static void find_data(struct core *c, int fd)
{
	size_t cap = 0;
	off_t pos = 0;

	while ((uint64_t)pos < c->len) {
		off_t d = lseek(fd, pos, SEEK_DATA);
		off_t h = d < 0 ? -1 : lseek(fd, d, SEEK_HOLE);

		if (d < 0 && errno == ENXIO)
			break; /* only a hole from here on */
		if (d < 0 || h < 0 || h <= d) {
			free(c->data); /* cannot tell: read everything */
			c->data = NULL;
			c->ndata = 0;
			return;
		}
		if (c->ndata == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint64_t(*nd)[2] = realloc(c->data, ncap * sizeof(*nd));

			if (!nd) {
				free(c->data);
				c->data = NULL;
				c->ndata = 0;
				return;
			}
			c->data = nd;
			cap = ncap;
		}
		c->data[c->ndata][0] = (uint64_t)d;
		c->data[c->ndata][1] = (uint64_t)h;
		c->ndata++;
		pos = h;
	}
	if (!c->data) {
		/* All holes: an empty extent list, not "unknown". */
		c->data = malloc(sizeof(*c->data));
		if (!c->data)
			return;
	}
}

/* The first file offset at or after @off that holds data (c->len: none). */
static uint64_t next_data(const struct core *c, uint64_t off)
{
	size_t lo = 0, hi = c->ndata;

	if (!c->data)
		return off;
	/* The first extent that ends after @off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->data[mid][1] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->ndata)
		return c->len;
	return off < c->data[lo][0] ? c->data[lo][0] : off;
}

/* Kinds of file that are no core and that reading would not end or would
 * make no sense of: NULL for those that may be read. */
static const char *not_a_core(mode_t mode)
{
	if (S_ISDIR(mode))
		return strerror(EISDIR);
	if (S_ISCHR(mode))
		return "a character device, not a core file";
	if (S_ISBLK(mode))
		return "a block device, not a core file";
	return NULL;
}

/* A core from a pipe, as read so far. */
struct pipe_core {
	unsigned char *b;
	size_t len, cap;
	bool eof;
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Read @fd until @p holds @want bytes (at most CORE_PIPE_MAX) or it ends. */
static void pipe_fill(const struct core *c, int fd, struct pipe_core *p, uint64_t want)
{
	if (want > CORE_PIPE_MAX)
		want = CORE_PIPE_MAX;
	while (!p->eof && p->len < want) {
		if (p->len == p->cap) {
			uint64_t ncap = p->cap ? (uint64_t)p->cap * 2 : 1 << 20;
			unsigned char *nb;

			if (ncap > want)
				ncap = want;
			nb = ncap <= SIZE_MAX ? realloc(p->b, (size_t)ncap) : NULL;
			if (!nb) {
				free(p->b);
				ud_fatal("%s: %s", c->path, strerror(ENOMEM));
			}
			p->b = nb;
			p->cap = (size_t)ncap;
		}

		ssize_t n = read(fd, p->b + p->len, p->cap - p->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(p->b);
			ud_fatal("cannot read %s: %s", c->path, strerror(err));
		}
		if (n == 0)
			p->eof = true;
		p->len += (size_t)n;
	}
}

/*
 * How much of the pipe makes the core: the end of the furthest of the ELF
 * header, the program headers (and the section header that counts them
 * when there are more than 65534) and the bytes of every PT_LOAD and
 * PT_NOTE segment, as the headers say; each header is read before it is
 * looked at. Section headers are no part of it: nothing here needs them,
 * and a bent e_shoff must not refuse a core the file form reads. A stream
 * that does not start as a 64-bit little-endian core gets no further than
 * its ELF header (parse_core() says what is wrong). 0 when the headers do
 * not add up.
 */
static uint64_t pipe_extent(const struct core *c, int fd, struct pipe_core *p)
{
	Elf64_Ehdr eh;

	pipe_fill(c, fd, p, sizeof(eh));
	if (p->len < sizeof(eh))
		return 0;
	memcpy(&eh, p->b, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return 0;

	uint64_t end = sizeof(eh), phnum = eh.e_phnum;

	if (phnum == PN_XNUM) {
		/* More than 65534 segments: the count is in section 0. */
		Elf64_Shdr sh;
		uint64_t shend = add_sat(eh.e_shoff, sizeof(sh));

		pipe_fill(c, fd, p, shend);
		if (eh.e_shentsize != sizeof(sh) || p->len < shend)
			return 0;
		end = shend;
		memcpy(&sh, p->b + eh.e_shoff, sizeof(sh));
		phnum = sh.sh_info;
	}

	uint64_t phend = add_sat(eh.e_phoff, phnum * sizeof(Elf64_Phdr));

	end = phend > end ? phend : end;
	pipe_fill(c, fd, p, phend);
	if (p->len < phend)
		return 0;
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p->b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD || ph.p_type == PT_NOTE) {
			uint64_t e = add_sat(ph.p_offset, ph.p_filesz);

			end = e > end ? e : end;
		}
	}
	return end;
}

/*
 * A pipe (coredumpctl dump): into memory, as far as the core's headers
 * reach (a stream that never ends, or headers that claim more than
 * CORE_PIPE_MAX, end in one line instead of using up the memory). What
 * follows the core is read and dropped up to CORE_PIPE_TAIL, so that the
 * writer's last write does not fail; more than that is left unread.
 */
static void load_pipe(struct core *c, int fd)
{
	struct pipe_core p = { NULL, 0, 0, false };
	uint64_t end = pipe_extent(c, fd, &p);

	if (end > CORE_PIPE_MAX) {
		free(p.b);
		core_fatal(c, "the core's headers claim more than " CORE_PIPE_MAX_WORDS
			      " (too much to read from a pipe: give the core as a file)");
	}
	if (end) {
		pipe_fill(c, fd, &p, end);
		for (size_t dropped = 0; !p.eof && dropped < CORE_PIPE_TAIL;) {
			unsigned char sink[4096];
			ssize_t n = read(fd, sink, sizeof(sink));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			dropped += (size_t)n;
		}
	}
	close(fd);
	if (p.len == 0) {
		free(p.b);
		core_fatal(c, "empty file: not an ELF core");
	}
	c->buf = p.b;
	c->len = p.len;
}

static void load_core(struct core *c)
{
	struct stat st;
	const char *why;

	/* Before it is opened: a device's open may have effects. */
	if (stat(c->path, &st) == 0 && (why = not_a_core(st.st_mode)))
		ud_fatal("%s: %s", c->path, why);

	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		ud_fatal("cannot open %s: %s", c->path, strerror(errno));
	if (fstat(fd, &st) < 0)
		ud_fatal("cannot read %s: %s", c->path, strerror(errno));
	if ((why = not_a_core(st.st_mode)))
		ud_fatal("%s: %s", c->path, why);
	if (S_ISREG(st.st_mode)) {
		if (st.st_size == 0)
			core_fatal(c, "empty file: not an ELF core");
		if ((uint64_t)st.st_size > SIZE_MAX)
			core_fatal(c, "file too large");

		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			ud_fatal("cannot map %s: %s", c->path, strerror(errno));
		c->buf = p;
		c->len = (size_t)st.st_size;
		c->mapped = true;
		find_data(c, fd);
		close(fd);
		return;
	}
	load_pipe(c, fd);
}

/* @off and @n name bytes inside the file. */
static bool in_file(const struct core *c, uint64_t off, uint64_t n)
{
	return off <= c->len && n <= c->len - off;
}

static void parse_prpsinfo(struct core *c, const unsigned char *d, uint64_t n)
{
	/* struct elf_prpsinfo of 64-bit Linux: pr_pid at 24, pr_fname[16] at 40. */
	if (n < 56)
		return;

	int32_t pid;

	memcpy(&pid, d + 24, sizeof(pid));
	c->pid = pid > 0 ? (uint32_t)pid : 0;
	memcpy(c->comm, d + 40, 16);
	c->comm[16] = '\0';
}

static void parse_notes(struct core *c, const unsigned char *p, uint64_t n)
{
	uint64_t off = 0;

	while (n - off >= 12) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		off += 12;

		uint64_t name_pad = ((uint64_t)namesz + 3) & ~(uint64_t)3;
		uint64_t desc_pad = ((uint64_t)descsz + 3) & ~(uint64_t)3;

		if (name_pad > n - off)
			return; /* a cut or bogus note: the rest is not read */
		off += name_pad;
		if (descsz > n - off)
			return;

		const unsigned char *d = p + off;

		if (type == NT_PRPSINFO)
			parse_prpsinfo(c, d, descsz);
		else if (type == NT_FILE) {
			c->files = d;
			c->files_len = descsz;
		}
		if (desc_pad > n - off)
			return;
		off += desc_pad;
	}
}

static void parse_core(struct core *c)
{
	Elf64_Ehdr eh;

	if (c->len < SELFMAG || memcmp(c->buf, ELFMAG, SELFMAG) != 0)
		core_fatal(c, "not an ELF file");
	if (c->len < sizeof(eh))
		core_fatal(c, "truncated ELF header");
	memcpy(&eh, c->buf, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		core_fatal(c, "not a 64-bit little-endian ELF file (udmesg reads x86-64 and "
			      "AArch64 cores)");
	if (eh.e_type != ET_CORE)
		core_fatal(c, "an ELF file but not a core dump");
	if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)
		core_fatal(c, "core of an unsupported machine (udmesg reads x86-64 and AArch64 "
			      "cores)");
	if (eh.e_phentsize != sizeof(Elf64_Phdr))
		core_fatal(c, "bad program header size");

	uint64_t phnum = eh.e_phnum;

	if (phnum == PN_XNUM) {
		/* More than 65534 segments: the count is in section 0. */
		Elf64_Shdr sh;

		if (eh.e_shentsize != sizeof(sh) || !in_file(c, eh.e_shoff, sizeof(sh)))
			core_fatal(c, "truncated or bad section header");
		memcpy(&sh, c->buf + eh.e_shoff, sizeof(sh));
		phnum = sh.sh_info;
	}
	if (phnum == 0)
		core_fatal(c, "no program headers: not a process core");
	if (phnum > c->len / sizeof(Elf64_Phdr) ||
	    !in_file(c, eh.e_phoff, phnum * sizeof(Elf64_Phdr)))
		core_fatal(c, "truncated core file (program headers cut off)");

	c->segs = calloc(phnum, sizeof(*c->segs));
	if (!c->segs)
		core_fatal(c, strerror(ENOMEM));
	for (uint64_t i = 0; i < phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, c->buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE) {
			if (ph.p_offset <= c->len) {
				uint64_t n = c->len - ph.p_offset;

				parse_notes(c, c->buf + ph.p_offset,
					    n < ph.p_filesz ? n : ph.p_filesz);
			}
			continue;
		}
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr || ph.p_filesz > ph.p_memsz)
			core_fatal(
				c,
				"bad program header (segment wraps or holds more than its size)");

		struct seg *s = &c->segs[c->nsegs++];

		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->filesz = ph.p_filesz;
		if (ph.p_offset <= c->len) {
			uint64_t n = c->len - ph.p_offset;

			s->data = c->buf + ph.p_offset;
			s->have = n < ph.p_filesz ? n : ph.p_filesz;
		}
		if (s->have < s->filesz)
			c->cut = true;
	}
}

/* ------------------------------------------------------------ memory -- */

/*
 * Copy @n bytes of the process's memory at @vaddr into @dst. 0, or -EFAULT
 * (some of it is not in the core: not mapped, or left out of the dump) or
 * -ENOSPC (it should be in the file, which is cut short).
 */
static int read_mem(const struct core *c, uint64_t vaddr, void *dst, uint64_t n)
{
	unsigned char *out = dst;

	while (n) {
		const struct seg *s = NULL;

		for (size_t i = 0; i < c->nsegs; i++)
			if (vaddr >= c->segs[i].vaddr &&
			    vaddr - c->segs[i].vaddr < c->segs[i].memsz) {
				s = &c->segs[i];
				break;
			}
		if (!s)
			return -EFAULT;

		uint64_t at = vaddr - s->vaddr;

		if (at >= s->filesz)
			return -EFAULT;
		if (at >= s->have)
			return -ENOSPC;

		uint64_t k = s->have - at;

		if (k > n)
			k = n;
		memcpy(out, s->data + at, (size_t)k);
		out += k;
		vaddr += k;
		n -= k;
	}
	return 0;
}

/* A copy of the log region at @vaddr, read-only, page aligned, or NULL and *@err. */
static void *copy_region(const struct core *c, uint64_t vaddr, size_t len, int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = read_mem(c, vaddr, p, len);
	if (!*err && mprotect(p, len, PROT_READ) < 0)
		*err = -errno;
	if (*err) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* Probe @vaddr, whose first @avail bytes are at @p; the header page may
 * continue in another segment. Returns pk_log_image_probe()'s answer. */
static int probe_at(const struct core *c, uint64_t vaddr, const unsigned char *p, uint64_t avail,
		    struct pk_log_image_info *info)
{
	int r = pk_log_image_probe(p, avail, info);

	if (r == -ENOSPC && avail < 4096) {
		static unsigned char page[4096];
		int err = read_mem(c, vaddr, page, sizeof(page));

		if (err)
			return err == -EFAULT ? -EPROTO : err;
		r = pk_log_image_probe(page, sizeof(page), info);
	}
	return r;
}

static const char *image_strerror(int err)
{
	switch (err) {
	case -EFAULT:
		return "part of it is not in the core (left out of the dump: see "
		       "coredump_filter in core(5))";
	case -ENOSPC:
		return "truncated core file (the log is cut off)";
	default:
		return pk_log_strerror(err);
	}
}

/* Open the log @f names (a copy of it) as an image: 0 and *@logp, *@img,
 * or a negative errno (the image is then gone). */
static int open_found(const struct core *c, const struct found *f, struct pk_log **logp, void **img)
{
	int err;

	*img = copy_region(c, f->vaddr, f->len, &err);
	if (!*img)
		return err;
	err = pk_log_open_image(logp, *img, f->len, c->pid, c->comm[0] ? c->comm : NULL);
	if (err) {
		munmap(*img, f->len);
		*img = NULL;
	}
	return err;
}

/* Validate the log @f names; its number of records and its newest one's
 * time tell several logs apart. */
static int measure(const struct core *c, struct found *f)
{
	struct pk_log *log;
	void *img;
	int err = open_found(c, f, &log, &img);

	if (err)
		return err;

	static struct pk_record rec;
	struct pk_log_info info;

	pk_log_info(log, &info);
	f->records = info.next_reserve_seq - info.first_seq;
	f->newest_ts = 0;
	if (info.next_reserve_seq > info.first_seq &&
	    pk_log_read(log, info.next_reserve_seq - 1, &rec, PK_READ_UNFINALIZED) == 0)
		f->newest_ts = rec.ts_nsec;
	pk_log_destroy(log);
	munmap(img, f->len);
	return 0;
}

/* Is @vaddr in one of the @n logs of @f? (A log continued in the next
 * segment: its text is not probed there either.) */
static bool inside(const struct found *f, size_t n, uint64_t vaddr)
{
	for (size_t i = 0; i < n; i++)
		if (vaddr >= f[i].vaddr && vaddr - f[i].vaddr < f[i].len)
			return true;
	return false;
}

/*
 * Every log in the core into @out (at most CORE_MAX_LOGS); returns how many.
 * *@bad gets the first error of a place that looked like a log and was not
 * one after all (or was cut off), for the message when there is none.
 */
static size_t find_logs(const struct core *c, struct found *out, int *bad, uint64_t *bad_at)
{
	size_t nfound = 0;

	*bad = 0;
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct seg *s = &c->segs[i];
		uint64_t at = (64 - (s->vaddr & 63)) & 63;

		for (; at < s->have && nfound < CORE_MAX_LOGS; at += 64) {
			uint64_t off = (uint64_t)(s->data - c->buf) + at;
			uint64_t next = next_data(c, off);

			if (next != off) {
				/* A hole: on at the first aligned place after it. */
				if (next - off >= s->have - at)
					break;
				at += ((next - off + 63) & ~(uint64_t)63) - 64;
				continue;
			}
			/* A log starts with a magic number, never with zeros. */
			static const unsigned char zeros[8];

			if (s->have - at >= 8 && !memcmp(s->data + at, zeros, 8))
				continue;

			struct found *f = &out[nfound];
			struct pk_log_image_info info = {0};
			int r = probe_at(c, s->vaddr + at, s->data + at, s->have - at, &info);
			size_t len = info.region_len;

			if (r == -EPROTO || inside(out, nfound, s->vaddr + at))
				continue;
			if (r == 0) {
				f->vaddr = s->vaddr + at;
				f->len = len;
				f->file = info.file;
				f->printk = info.printk;
				r = measure(c, f);
			}
			if (r == 0) {
				nfound++;
				/* Its records are text: never probed as logs. */
				if (len - 64 >= s->have - at)
					break;
				at += len - 64;
				continue;
			}
			if (!*bad) {
				*bad = r;
				*bad_at = s->vaddr + at;
			}
		}
	}
	return nfound;
}

/* Which of two logs to read: printk's, a memory log, the one written last. */
static bool better(const struct found *a, const struct found *b)
{
	if (a->printk != b->printk)
		return a->printk;
	if (a->file != b->file)
		return !a->file;
	return a->newest_ts > b->newest_ts;
}

static size_t pick(const struct found *f, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (better(&f[i], &f[best]))
			best = i;
	return best;
}

/* ----------------------------------------------------- the executable -- */

/* Does NT_FILE name a file called like @exe (its last component)? -1: no NT_FILE. */
static int maps_file_named(const struct core *c, const char *exe)
{
	const char *base = strrchr(exe, '/');
	uint64_t count;

	base = base ? base + 1 : exe;
	if (!c->files || c->files_len < 16)
		return -1;
	memcpy(&count, c->files, 8);
	if (count > (c->files_len - 16) / 24)
		return -1;

	const char *names = (const char *)c->files + 16 + count * 24;
	const char *end = (const char *)c->files + c->files_len;

	for (uint64_t i = 0; i < count && names < end; i++) {
		const char *nul = memchr(names, '\0', (size_t)(end - names));

		if (!nul)
			break;

		const char *slash = memrchr(names, '/', (size_t)(nul - names));
		const char *b = slash ? slash + 1 : names;

		if (!strcmp(b, base))
			return 1;
		names = nul + 1;
	}
	return 0;
}

static void check_executable(const struct core *c, const char *exe)
{
	if (access(exe, R_OK) < 0)
		ud_fatal("cannot open %s: %s", exe, strerror(errno));
	if (maps_file_named(c, exe) == 0)
		ud_warn("%s: %s is not among the files the process had mapped (another "
			"program's core?)",
			c->path, exe);
}

static const char *kind_name(const struct found *f)
{
	if (f->printk)
		return "printk";
	return f->file ? "file" : "memory";
}

/* ---------------------------------------------------------- the entry -- */

int ud_core_open(struct ud_ctl *ctl)
{
	static struct core c;
	static struct found logs[CORE_MAX_LOGS];
	int bad = 0;
	uint64_t bad_at = 0;

	c.path = ctl->core_path;
	load_core(&c);
	parse_core(&c);
	if (ctl->core_exe)
		check_executable(&c, ctl->core_exe);

	size_t n = find_logs(&c, logs, &bad, &bad_at);

	if (ctl->core_list) {
		printf("%-18s %12s %-7s %10s %s\n", "ADDRESS", "BYTES", "KIND", "RECORDS",
		       "NEWEST");
		for (size_t i = 0; i < n; i++)
			printf("0x%016" PRIx64 " %12zu %-7s %10" PRIu64 " [%5" PRIu64 ".%06" PRIu64
			       "]%s\n",
			       logs[i].vaddr, logs[i].len, kind_name(&logs[i]), logs[i].records,
			       logs[i].newest_ts / 1000000000u,
			       logs[i].newest_ts % 1000000000u / 1000u,
			       n > 1 && i == pick(logs, n) ? " (read)" : "");
		exit(n ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	if (!n && bad) {
		char at[32];

		snprintf(at, sizeof(at), "0x%" PRIx64, bad_at);
		ud_fatal("%s: the log at %s: %s", c.path, at, image_strerror(bad));
	}
	if (!n && c.cut)
		ud_fatal("%s: no libprintk log in what there is of this truncated core file",
			 c.path);
	if (!n)
		ud_fatal("%s: no libprintk log in this core (the process had none, or the core "
			 "left out its memory: see coredump_filter in core(5))",
			 c.path);

	const struct found *f = &logs[pick(logs, n)];
	struct pk_log *log;
	void *img;
	int err = open_found(&c, f, &log, &img);

	if (err)
		ud_fatal("%s: the log at 0x%" PRIx64 ": %s", c.path, f->vaddr, image_strerror(err));
	ctl->log = log;
	/* What read errors name. */
	ctl->log_path = c.path;
	ctl->follow = ctl->follow_new = false; /* a core does not grow: -w reads it once */
	/* The log reads its own copy (which goes at exit): the core is done. */
	if (c.mapped)
		munmap((void *)c.buf, c.len);
	else
		free((void *)c.buf);
	free(c.segs);
	free(c.data);
	c.data = NULL;
	c.buf = NULL;
	c.files = NULL;
	return 0;
}
