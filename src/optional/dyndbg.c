// SPDX-License-Identifier: MIT
/*
 * dyndbg.c - dynamic debug: the table of call sites, the kernel's query
 * language (Linux lib/dynamic_debug.c), the control listing, the message
 * prefixes of the f, l, m, s and t flags, and the mailbox in a log file's
 * shared state through which one process changes the sites of the others.
 *
 * Owns: the list of registered site ranges (one per object, see
 * <printk/dynamic_debug.h>), the PRINTK_OPTS dyndbg= query (applied again
 * to every object registered later), this process's look at the mailbox
 * (the log and the generation of the last posted query it has seen; printk
 * checks it through the pointer it keeps, printk/dyndbg_watch.h).
 *
 * Invariants:
 *  - the ranges are changed, and the sites' flags written, only with
 *    @lock held; a site's flags are read without it (one relaxed load:
 *    the cost of a site that is off);
 *  - the lock is only ever tried from printk (a signal handler may
 *    interrupt its holder): a query that finds it taken is left for the
 *    next look, never waited for; fork() takes it (bounded) and the child
 *    starts with it free;
 *  - parsing works on a copy on the stack and allocates nothing; a query
 *    read from the log file comes from another process: it is copied
 *    whole, bounded, checked against the generation around the copy, and
 *    parsed like any other text.
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <printk/dev_printk.h>
#include <printk/dynamic_debug.h>
#include <printk/printk.h>

#include "base/atomics.h"
#include "base/fast_gate.h"
#include "format/vsprintf.h"
#include "log/log_shared.h"
#include "log/modlevel.h"
#include "optional/dyndbg_internal.h"
#include "printk/dev_internal.h"
#include "printk/printk_internal.h"
#include "startup/setup_hooks.h"

#define MAX_OBJECTS  256
#define MODNAME_MAX  64
#define QUERY_TEXT_MAX 4096 /* the kernel's limit on one write to control */
#define MAX_WORDS    9	    /* keyword/value pairs and the flags, as the kernel */
#define PREFIX_SIZE  PK_DYNDBG_PREFIX_SIZE /* the kernel's room for the prefix */

struct object {
	struct pk_dyndbg *start, *stop;
	char modname[MODNAME_MAX];
};

static struct object objects[MAX_OBJECTS];
static pk_a32 nobjects;
static pk_a32 lock;
static char boot_query[QUERY_TEXT_MAX];

static int try_lock(void)
{
	uint32_t free_ = 0;

	return pk_cas_acq_rel(&lock, &free_, 1);
}

static void take_lock(void)
{
	while (!try_lock())
		sched_yield();
}

static void drop_lock(void)
{
	pk_store_release(&lock, 0);
}

/*
 * fork(): the child has only the forking thread, so a lock another thread
 * held at that moment would stay taken in the child, whose next query or
 * dlopen'ed object would wait for it for good. The lock is taken around
 * the fork, so that the child's table is whole, but for FORK_LOCK_TRIES
 * yields at most: a holder that does not let go by then (one the forking
 * signal handler interrupted never does) is not waited for, and the child
 * frees the lock all the same.
 */
#define FORK_LOCK_TRIES 10000
static _Thread_local int fork_locked; /* the forking thread's: two may fork at once */

static void lock_before_fork(void)
{
	fork_locked = 0;
	for (int i = 0; i < FORK_LOCK_TRIES && !(fork_locked = try_lock()); i++)
		sched_yield();
}

static void unlock_in_parent(void)
{
	if (fork_locked)
		drop_lock();
}

static void unlock_in_child(void)
{
	drop_lock();
}

/* ---- parsing ----------------------------------------------------------- */

struct query {
	const char *filename, *module, *function, *format, *class_name;
	unsigned int first_lineno, last_lineno;
	unsigned int flags, mask;
};

/* Messages are the kernel's, with its "dyndbg: " prefix, at KERN_ERR;
 * @quiet (a query from the mailbox, or one only checked) keeps them in. */
#define DD_ERR(quiet, ...)                                              \
	do {                                                            \
		if (!(quiet))                                           \
			pk_printk(PK_KERN_ERR "dyndbg: " __VA_ARGS__); \
	} while (0)

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static char *skip_spaces(char *s)
{
	while (is_space(*s))
		s++;
	return s;
}

/* Words separated by white space, or quoted with " or ' (no escapes); a
 * word starting with '#' ends the line. */
static int tokenize(char *buf, char *words[], int maxwords, int quiet)
{
	int n = 0;

	for (;;) {
		char *end;

		buf = skip_spaces(buf);
		if (!*buf || *buf == '#')
			break;
		if (*buf == '"' || *buf == '\'') {
			char q = *buf++;

			for (end = buf; *end && *end != q; end++)
				;
			if (!*end) {
				DD_ERR(quiet, "unclosed quote: %s\n", buf);
				return -EINVAL;
			}
		} else {
			for (end = buf; *end && !is_space(*end); end++)
				;
		}
		if (n == maxwords) {
			DD_ERR(quiet, "too many words, legal max <=%d\n", maxwords);
			return -EINVAL;
		}
		words[n++] = buf;
		if (*end)
			*end++ = '\0';
		buf = end;
	}
	return n;
}

/* The kernel's kstrtouint() in base 10: an optional '+', digits, an
 * optional newline; "" means "not given" (0). */
static int parse_lineno(const char *s, unsigned int *val, int quiet)
{
	unsigned long long x = 0;
	const char *p = s;

	if (!*s) {
		*val = 0;
		return 0;
	}
	if (*p == '+')
		p++;
	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (unsigned)(*p - '0');
		if (x > 0xffffffffull)
			goto bad;
	}
	if (*p == '\n')
		p++;
	if (*p)
		goto bad;
	*val = (unsigned int)x;
	return 0;
bad:
	DD_ERR(quiet, "bad line-number: %s\n", s);
	return -EINVAL;
}

static int parse_linerange(struct query *q, char *first, int quiet)
{
	char *last = strchr(first, '-');

	if (q->first_lineno || q->last_lineno) {
		DD_ERR(quiet, "match-spec: line used 2x\n");
		return -EINVAL;
	}
	if (last)
		*last++ = '\0';
	if (parse_lineno(first, &q->first_lineno, quiet))
		return -EINVAL;
	if (!last) {
		q->last_lineno = q->first_lineno;
		return 0;
	}
	if (parse_lineno(last, &q->last_lineno, quiet))
		return -EINVAL;
	if (q->last_lineno == 0)
		q->last_lineno = UINT32_MAX; /* "N-": to the end */
	if (q->last_lineno < q->first_lineno) {
		DD_ERR(quiet, "last-line:%d < 1st-line:%d\n", (int)q->last_lineno,
		       (int)q->first_lineno);
		return -EINVAL;
	}
	return 0;
}

static int check_set(const char **dest, const char *src, const char *name, int quiet)
{
	int rc = 0;

	if (*dest) {
		DD_ERR(quiet, "match-spec:%s val:%s overridden by %s\n", name, *dest, src);
		rc = -EINVAL;
	}
	*dest = src;
	return rc;
}

/* The kernel's string_unescape_inplace() with UNESCAPE_SPACE, _OCTAL and
 * _SPECIAL: \f \n \r \t \v, \NNN (one to three octal digits), \\ \" \a \e;
 * any other backslash stays as it is. */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (*s != '\\' || !s[1]) {
			*out++ = *s++;
			continue;
		}
		char c = s[1];
		const char *from = "fnrtv\\\"ae", *to = "\f\n\r\t\v\\\"\a\033";
		const char *hit = strchr(from, c);

		if (hit) {
			*out++ = to[hit - from];
			s += 2;
		} else if (c >= '0' && c <= '7') {
			unsigned v = 0;
			int i = 1;

			for (; i <= 3 && s[i] >= '0' && s[i] <= '7'; i++)
				v = v * 8 + (unsigned)(s[i] - '0');
			*out++ = (char)v;
			s += i;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int parse_query(char *words[], int nwords, struct query *q, int quiet)
{
	int rc = 0;

	if (nwords % 2) {
		DD_ERR(quiet, "expecting pairs of match-spec <value>\n");
		return -EINVAL;
	}
	for (int i = 0; i < nwords; i += 2) {
		const char *kw = words[i];
		char *arg = words[i + 1];

		if (!strcmp(kw, "func")) {
			rc = check_set(&q->function, arg, "func", quiet);
		} else if (!strcmp(kw, "file")) {
			if (check_set(&q->filename, arg, "file", quiet))
				return -EINVAL;
			/* "file F:func" or "file F:N-M" */
			char *tail = strchr(arg, ':');

			if (!tail)
				continue;
			*tail++ = '\0';
			if (is_alpha(*tail) || *tail == '*' || *tail == '?') {
				if (check_set(&q->function, tail, "func", quiet))
					return -EINVAL;
			} else if (parse_linerange(q, tail, quiet)) {
				return -EINVAL;
			}
		} else if (!strcmp(kw, "module")) {
			rc = check_set(&q->module, arg, "module", quiet);
		} else if (!strcmp(kw, "format")) {
			unescape(arg);
			rc = check_set(&q->format, arg, "format", quiet);
		} else if (!strcmp(kw, "line")) {
			if (parse_linerange(q, arg, quiet))
				return -EINVAL;
		} else if (!strcmp(kw, "class")) {
			rc = check_set(&q->class_name, arg, "class", quiet);
		} else {
			DD_ERR(quiet, "unknown keyword \"%s\"\n", kw);
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static const struct {
	unsigned int flag;
	char letter;
} letters[] = {
	{ PK_DYNDBG_PRINT, 'p' },	     { PK_DYNDBG_INCL_MODNAME, 'm' },
	{ PK_DYNDBG_INCL_FUNCNAME, 'f' },   { PK_DYNDBG_INCL_SOURCENAME, 's' },
	{ PK_DYNDBG_INCL_LINENO, 'l' },     { PK_DYNDBG_INCL_TID, 't' },
	{ 0, '_' },
};
#define NLETTERS (sizeof(letters) / sizeof(letters[0]))

static int parse_flags(const char *s, struct query *q, int quiet)
{
	char op = *s;

	if (op != '+' && op != '-' && op != '=') {
		DD_ERR(quiet, "bad flag-op %c, at start of %s\n", op, s);
		return -EINVAL;
	}
	for (s++; *s; s++) {
		size_t i;

		for (i = 0; i < NLETTERS && letters[i].letter != *s; i++)
			;
		if (i == NLETTERS) {
			DD_ERR(quiet, "unknown flag '%c'\n", *s);
			return -EINVAL;
		}
		q->flags |= letters[i].flag;
	}
	if (op == '=') {
		q->mask = 0;
	} else if (op == '+') {
		q->mask = ~0u;
	} else {
		q->mask = ~q->flags;
		q->flags = 0;
	}
	return 0;
}

/* ---- matching ---------------------------------------------------------- */

/* '*' matches any run of characters, '?' any one (the kernel's
 * match_wildcard()). Iterative, with one backtrack point. */
static int match_wildcard(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (*pat == '?' || *pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int site_matches(const struct query *q, const struct pk_dyndbg *d)
{
	if (q->filename && !match_wildcard(q->filename, d->filename) &&
	    !match_wildcard(q->filename, base_name(d->filename)))
		return 0;
	if (q->function && !match_wildcard(q->function, d->function))
		return 0;
	if (q->format) {
		if (*q->format == '^') {
			if (strncmp(d->format, q->format + 1, strlen(q->format + 1)))
				return 0;
		} else if (!strstr(d->format, q->format)) {
			return 0;
		}
	}
	if (q->first_lineno && d->lineno < q->first_lineno)
		return 0;
	if (q->last_lineno && d->lineno > q->last_lineno)
		return 0;
	return 1;
}

/* Apply @q to the sites of @obj, or of every object; the lock is held.
 * Returns the sites matched. */
static int change(const struct query *q, const struct object *obj)
{
	uint32_t n = pk_load_acquire(&nobjects);
	int found = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct object *o = &objects[i];

		if (obj && o != obj)
			continue;
		if (q->module && !match_wildcard(q->module, o->modname))
			continue;
		/* No site belongs to a class: a class query matches none, as
		 * the kernel's for a class no module declared. */
		if (q->class_name)
			continue;
		for (struct pk_dyndbg *d = o->start; d < o->stop; d++) {
			if (!site_matches(q, d))
				continue;
			found++;
			unsigned int old = __atomic_load_n(&d->flags, __ATOMIC_RELAXED);

			__atomic_store_n(&d->flags, (old & q->mask) | q->flags, __ATOMIC_RELAXED);
		}
	}
	return found;
}

enum { RUN_APPLY, RUN_CHECK };

/*
 * "module M level L": the level of a module's printk sites
 * (docs/levels.md), not a dynamic debug flag; L is 0..15, a level name
 * (emerg .. debug) or "default" (no level). Returns 1 (one module set), or
 * -EINVAL; -EAGAIN when @quiet (a posted query, applied from printk) found
 * the levels being changed: the caller looks again later.
 */
static int level_query(char *words[], int nwords, int how, int quiet)
{
	int level;

	if (nwords != 4 || strcmp(words[0], "module")) {
		DD_ERR(quiet, "level goes with one module: \"module NAME level LEVEL\"\n");
		return -EINVAL;
	}
	if (!pk_modlevel_valid_name(words[1], strlen(words[1]))) {
		DD_ERR(quiet, "bad module name for a level: %s\n", words[1]);
		return -EINVAL;
	}
	if (pk_modlevel_parse_level(words[3], strlen(words[3]), &level)) {
		DD_ERR(quiet, "bad level: %s (0..15, emerg..debug or default)\n", words[3]);
		return -EINVAL;
	}
	if (how == RUN_CHECK)
		return 0;

	int r = pk_modlevel_set(words[1], level, quiet);

	if (r == -ENOSPC)
		DD_ERR(quiet, "no room for the level of %s\n", words[1]);
	return r < 0 ? r : 1;
}

/*
 * Run every query of @text (separated by ';' or newlines; empty ones and
 * '#' comments skipped) against @obj (NULL: all). As the kernel's
 * ddebug_exec_queries(): a bad query does not stop the others; returns
 * the last error, else the sites matched. @how RUN_CHECK only parses.
 * With @locked the caller holds the lock; otherwise it is taken here
 * (tried only, with @quiet: -EAGAIN when busy).
 */
static int exec_queries(const char *text, const struct object *obj, int how, int quiet, int locked)
{
	char buf[QUERY_TEXT_MAX];
	size_t len = strlen(text);
	int err = 0, found = 0;

	if (len >= sizeof(buf)) {
		if (!quiet) /* a warning, as the kernel's */
			pk_printk(PK_KERN_WARNING "dyndbg: expected <%d bytes into control\n",
				  QUERY_TEXT_MAX);
		return -E2BIG;
	}
	memcpy(buf, text, len + 1);

	char *next;

	for (char *s = buf; s; s = next) {
		next = strpbrk(s, ";\n");
		if (next)
			*next++ = '\0';
		s = skip_spaces(s);
		if (!*s || *s == '#')
			continue;

		char *words[MAX_WORDS];
		struct query q = { 0 };
		int nwords = tokenize(s, words, MAX_WORDS, quiet);

		if (nwords <= 0) {
			DD_ERR(quiet, "tokenize failed\n");
			err = -EINVAL;
			continue;
		}
		if (nwords >= 2 && !strcmp(words[nwords - 2], "level")) {
			/* Levels are the process's, not an object's: a boot
			 * query applied to an object loaded later leaves them. */
			int r = level_query(words, nwords, obj ? RUN_CHECK : how, quiet);

			if (r == -EAGAIN)
				return r;
			if (r < 0)
				err = r;
			else
				found += r;
			continue;
		}
		if (parse_flags(words[nwords - 1], &q, quiet)) {
			DD_ERR(quiet, "flags parse failed\n");
			err = -EINVAL;
			continue;
		}
		if (parse_query(words, nwords - 1, &q, quiet)) {
			DD_ERR(quiet, "query parse failed\n");
			err = -EINVAL;
			continue;
		}
		if (how == RUN_CHECK)
			continue;
		if (!locked) {
			if (quiet) {
				if (!try_lock())
					return -EAGAIN;
			} else {
				take_lock();
			}
		}
		found += change(&q, obj);
		if (!locked)
			drop_lock();
	}
	return err ? err : found;
}

int pk_dyndbg_query(const char *query)
{
	if (!query)
		return -EINVAL;
	return exec_queries(query, NULL, RUN_APPLY, 0, 0);
}

/* ---- the objects' ranges ------------------------------------------------- */

struct find_object {
	const void *addr;
	char *name;
};

static int find_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_object *f = data;
	uintptr_t a = (uintptr_t)f->addr;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || a < lo || a - lo >= ph->p_memsz)
			continue;
		/* The program has no name here: its short name stands in. */
		const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name :
									  program_invocation_short_name;
		const char *base = base_name(path);
		size_t n = strcspn(base, ".");

		if (n >= MODNAME_MAX)
			n = MODNAME_MAX - 1;
		memcpy(f->name, base, n);
		f->name[n] = '\0';
		return 1;
	}
	return 0;
}

void pk_dyndbg_register(struct pk_dyndbg *start, struct pk_dyndbg *stop)
{
	char name[MODNAME_MAX] = "";
	struct find_object f = { start, name };

	if (!start || stop <= start)
		return;
	dl_iterate_phdr(find_object_cb, &f);
	take_lock();

	uint32_t n = pk_load_relaxed(&nobjects);

	for (uint32_t i = 0; i < n; i++) {
		if (objects[i].start == start) {
			drop_lock();
			return;
		}
	}
	if (n == MAX_OBJECTS) {
		drop_lock();
		return; /* its sites keep their compiled-in state */
	}
	struct object *o = &objects[n];

	o->start = start;
	o->stop = stop;
	memcpy(o->modname, name, sizeof(name));
	for (struct pk_dyndbg *d = start; d < stop; d++)
		if (!d->modname)
			d->modname = o->modname;
	pk_store_release(&nobjects, n + 1);
	if (boot_query[0])
		exec_queries(boot_query, o, RUN_APPLY, 1, 1);
	drop_lock();
}

void pk_dyndbg_unregister(struct pk_dyndbg *start, struct pk_dyndbg *stop)
{
	(void)stop;
	if (!start)
		return;
	take_lock();

	uint32_t n = pk_load_relaxed(&nobjects);

	for (uint32_t i = 0; i < n; i++) {
		if (objects[i].start != start)
			continue;
		/* The sites' modname may point at this slot: keep their
		 * object's name valid until the object is gone. The object
		 * is being unloaded, so nobody prints from it any more. */
		objects[i] = objects[n - 1];
		for (struct pk_dyndbg *d = objects[i].start; i != n - 1 && d < objects[i].stop; d++)
			if (d->modname == objects[n - 1].modname)
				d->modname = objects[i].modname;
		pk_store_release(&nobjects, n - 1);
		break;
	}
	drop_lock();
}

int pk_dyndbg_boot(const char *query)
{
	size_t len = strlen(query);

	if (len >= sizeof(boot_query))
		return -E2BIG;
	/* The messages once, here; the good queries still apply, to the
	 * objects of now and to those registered later. */
	int checked = exec_queries(query, NULL, RUN_CHECK, 0, 0);

	take_lock();
	memcpy(boot_query, query, len + 1);
	int r = exec_queries(boot_query, NULL, RUN_APPLY, 1, 1);
	drop_lock();
	return checked < 0 ? checked : r;
}

/* ---- the listing ------------------------------------------------------- */

static const char *describe_flags(unsigned int flags, char *buf)
{
	char *p = buf;

	for (size_t i = 0; i < NLETTERS; i++)
		if (flags & letters[i].flag)
			*p++ = letters[i].letter;
	if (p == buf)
		*p++ = '_';
	*p = '\0';
	return buf;
}

int pk_dyndbg_write_control(FILE *f)
{
	int count = 0, bad = 0;

	if (!f)
		return -EINVAL;
	take_lock();
	bad |= fputs("# filename:lineno [module]function flags format\n", f) < 0;

	uint32_t n = pk_load_acquire(&nobjects);

	for (uint32_t i = 0; i < n; i++) {
		for (const struct pk_dyndbg *d = objects[i].start; d < objects[i].stop; d++) {
			char fl[NLETTERS + 1];

			bad |= fprintf(f, "%s:%u [%s]%s =%s \"", d->filename, d->lineno,
				       objects[i].modname, d->function,
				       describe_flags(__atomic_load_n(&d->flags, __ATOMIC_RELAXED), fl)) < 0;
			for (const char *c = d->format; *c; c++) {
				const char *esc = *c == '\t' ? "\\t" : *c == '\r' ? "\\r" : *c == '\n' ? "\\n" : NULL;

				bad |= (esc ? fputs(esc, f) : fputc(*c, f)) < 0;
			}
			bad |= fputs("\"\n", f) < 0;
			count++;
		}
	}
	drop_lock();
	if (bad || fflush(f))
		return ferror(f) && errno ? -errno : -EIO;
	return count;
}

/* ---- printing ----------------------------------------------------------- */

/* The kernel's __dynamic_emit_prefix(): "[tid] " then "module:",
 * "function:", "file:", "line:" and one space after any of these. */
const char *pk_dyndbg_prefix(const struct pk_dyndbg *d, char *buf)
{
	unsigned int flags = __atomic_load_n(&d->flags, __ATOMIC_RELAXED);
	int pos = 0, after_tid;

	buf[0] = '\0';
	if (!(flags & (PK_DYNDBG_INCL_TID | PK_DYNDBG_INCL_MODNAME | PK_DYNDBG_INCL_FUNCNAME |
		       PK_DYNDBG_INCL_SOURCENAME | PK_DYNDBG_INCL_LINENO)))
		return buf;
#define ROOM (pos < PREFIX_SIZE ? (size_t)(PREFIX_SIZE - pos) : 0)
	if (flags & PK_DYNDBG_INCL_TID)
		pos += pk_scnprintf(buf + pos, ROOM, "[%d] ", (int)syscall(SYS_gettid));
	after_tid = pos;
	if (flags & PK_DYNDBG_INCL_MODNAME)
		pos += pk_scnprintf(buf + pos, ROOM, "%s:", d->modname ? d->modname : "");
	if (flags & PK_DYNDBG_INCL_FUNCNAME)
		pos += pk_scnprintf(buf + pos, ROOM, "%s:", d->function);
	if (flags & PK_DYNDBG_INCL_SOURCENAME)
		pos += pk_scnprintf(buf + pos, ROOM, "%s:", d->filename);
	if (flags & PK_DYNDBG_INCL_LINENO)
		pos += pk_scnprintf(buf + pos, ROOM, "%u:", d->lineno);
	if (pos != after_tid)
		pos += pk_scnprintf(buf + pos, ROOM, " ");
#undef ROOM
	return buf;
}

int pk__dynamic_pr_debug(struct pk_dyndbg *site, const char *fmt, ...)
{
	char prefix[PREFIX_SIZE];
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	int r = pk_printk(PK_KERN_DEBUG "%s%pV", pk_dyndbg_prefix(site, prefix), &vaf);
	va_end(ap);
	return r;
}

int pk__dynamic_dev_dbg(struct pk_dyndbg *site, const struct pk_device *dev, const char *fmt, ...)
{
	char prefix[PREFIX_SIZE];
	struct va_format vaf;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	if (!dev)
		r = pk_printk(PK_KERN_DEBUG "(NULL device *): %pV", &vaf);
	else
		r = pk_dev_emit(PK_LOGLEVEL_DEBUG, dev, "%s%s %s: %pV", pk_dyndbg_prefix(site, prefix),
				pk_dev_driver_string(dev), pk_dev_name(dev), &vaf);
	va_end(ap);
	return r;
}

/* ---- the mailbox in the log file ----------------------------------------- */

#define WORDS (PK_DYNDBG_QUERY_MAX / 4)
_Static_assert(sizeof(((struct pk_log_shared *)0)->dyndbg_text) == PK_DYNDBG_QUERY_MAX,
	       "the log's mailbox holds the longest query");

int pk_dyndbg_post(struct pk_log *log, const char *query)
{
	if (!log || !query)
		return -EINVAL;

	size_t len = strlen(query);

	if (len >= PK_DYNDBG_QUERY_MAX)
		return -E2BIG;
	if (exec_queries(query, NULL, RUN_CHECK, 1, 0) < 0)
		return -EINVAL;

	struct pk_log_shared *sh = pk_log_shared(log);
	uint32_t g = pk_load_acquire(&sh->dyndbg_gen), writing;

	/* An odd generation: another post is writing. One that still is
	 * after a second died doing it; take over. */
	for (int waited = 0;; waited++) {
		if (g & 1 && waited < 1000) {
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
			g = pk_load_acquire(&sh->dyndbg_gen);
			continue;
		}
		writing = g & 1 ? g + 2 : g + 1;
		if (pk_cas_acq_rel(&sh->dyndbg_gen, &g, writing))
			break;
	}
	for (size_t w = 0; w < WORDS; w++) {
		uint32_t v = 0;

		for (size_t b = 0; b < 4; b++) {
			size_t i = w * 4 + b;

			v |= (uint32_t)(unsigned char)(i < len ? query[i] : 0) << (8 * b);
		}
		pk_store_relaxed(&sh->dyndbg_text[w], v);
	}
	pk_store_release(&sh->dyndbg_gen, writing + 1);
	return 0;
}

/* Copy the posted text; 0 when a post changed it meanwhile. */
static int read_mailbox(struct pk_log_shared *sh, uint32_t gen, char *buf)
{
	for (size_t w = 0; w < WORDS; w++) {
		uint32_t v = pk_load_relaxed(&sh->dyndbg_text[w]);

		for (size_t b = 0; b < 4; b++)
			buf[w * 4 + b] = (char)(v >> (8 * b));
	}
	buf[PK_DYNDBG_QUERY_MAX - 1] = '\0';
	pk_fence_acquire();
	return pk_load_relaxed(&sh->dyndbg_gen) == gen;
}

static void poll_hook(struct pk_log_shared *sh);

/* This process's look at the log's mailbox (printk/dyndbg_watch.h). */
static struct pk_dyndbg_watch watch = { .poll = poll_hook };

static int poll_shared(struct pk_log_shared *sh)
{
	uint32_t gen = pk_load_acquire(&sh->dyndbg_gen);
	uint32_t seen = pk_load_relaxed(&watch.seen_gen);
	char text[PK_DYNDBG_QUERY_MAX];

	/* The first look at a log only learns where it stands: posts made
	 * before are not for this process. */
	if (atomic_load_explicit(&watch.seen_log, memory_order_relaxed) != sh) {
		pk_store_relaxed(&watch.seen_gen, gen);
		atomic_store_explicit(&watch.seen_log, sh, memory_order_relaxed);
		return 0;
	}
	if (gen == seen || gen & 1 || !read_mailbox(sh, gen, text))
		return 0;
	if (!try_lock())
		return 0; /* the next printk looks again */
	int r = 0;

	if (pk_cas_relaxed(&watch.seen_gen, &seen, gen)) {
		r = exec_queries(text, NULL, RUN_APPLY, 1, 1);
		/* The module levels were being changed: the whole query
		 * again at the next look (its flag changes are idempotent). */
		if (r == -EAGAIN)
			pk_cas_relaxed(&watch.seen_gen, &gen, seen);
	}
	drop_lock();
	return r < 0 ? 0 : r;
}

static void poll_hook(struct pk_log_shared *sh)
{
	poll_shared(sh);
}

/* printk looks at the mailbox, and start-up applies PRINTK_OPTS dyndbg=,
 * only when this file is in the program; both before start-up runs
 * (setup_hooks.h). */
__attribute__((constructor(PK_SETUP_HOOK_PRIORITY))) static void install_hook(void)
{
	atomic_store_explicit(&pk_printk_dyndbg_watch, &watch, memory_order_relaxed);
	pk_fast_gate_set(PK_GATE_DYNDBG);
	pk_setup_hooks.dyndbg_boot = pk_dyndbg_boot;
	pthread_atfork(lock_before_fork, unlock_in_parent, unlock_in_child);
}

int pk_dyndbg_poll(void)
{
	struct pk_log *log = pk_printk_log();

	return log ? poll_shared(pk_log_shared(log)) : 0;
}
