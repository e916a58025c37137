// SPDX-License-Identifier: MIT
/*
 * modlevel.c - module levels and printk.srcloc: the table of levels this
 * process keeps per module (name or pattern), the generation every call
 * site (<printk/printk_site.h>) caches its decision against, the decision
 * itself (pk__site_resolve), the printk.module= syntax, and the copy of
 * the table a log file shows other processes (udmesg --module-levels).
 *
 * Owns: the table, pk_module_level_gen, the srcloc switch, and
 * pk_set_ignore_loglevel() (settings.c keeps the switch; setting it here
 * moves the generation, since it overrides the levels).
 *
 * Invariants:
 *  - the table and the switches it depends on (srcloc, ignore_loglevel)
 *    change only between two increments of pk_module_level_gen (odd while
 *    they change); a site caches a decision only when the generation was
 *    the same, and even, before and after it read them;
 *  - the table is changed with @lock held; it is read without it (every
 *    word atomic), so a decision may be made in a signal handler; one that
 *    interrupted a change stores the message without caching anything;
 *  - the lock is only tried from printk (a posted query, applied while a
 *    message is stored): a change that finds it taken is left for the
 *    next look; a child of fork() finds it free and the generation even;
 *  - the log's copy is untrusted (any process writes it): read with its
 *    own generation, names checked and bounded.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <printk/printk.h>

#include "base/atomics.h"
#include "log/log_shared.h"
#include "log/modlevel.h"
#include "log/settings.h"

#define NAME_WORDS (PK_MODULE_NAME_MAX / 8)

struct entry {
	pk_a64 name[NAME_WORDS]; /* NUL-padded, eight bytes a word, least significant first */
	pk_a32 level;		 /* 0..15 */
};

static struct entry table[PK_MODULE_LEVELS_MAX];
static pk_a32 count;
static pk_a32 lock;
static pk_a32 srcloc;

unsigned int pk_module_level_gen = PK_SITE_STORE_ALL;

/* ---- names ------------------------------------------------------------- */

static void pack(pk_a64 *words, const char *name)
{
	size_t len = strlen(name);

	for (size_t w = 0; w < NAME_WORDS; w++) {
		uint64_t v = 0;

		for (size_t b = 0; b < 8; b++) {
			size_t i = w * 8 + b;

			v |= (uint64_t)(unsigned char)(i < len ? name[i] : 0) << (8 * b);
		}
		pk_store_relaxed(&words[w], v);
	}
}

static void unpack(pk_a64 *words, char *name)
{
	for (size_t w = 0; w < NAME_WORDS; w++) {
		uint64_t v = pk_load_relaxed(&words[w]);

		for (size_t b = 0; b < 8; b++)
			name[w * 8 + b] = (char)(v >> (8 * b));
	}
	name[PK_MODULE_NAME_MAX - 1] = '\0';
}

int pk_modlevel_valid_name(const char *s, size_t n)
{
	if (n == 0 || n >= PK_MODULE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c == 0x7f || c == ',' || c == ':' || c == ';' || c == '=' || c == '"' ||
		    c == '\'' || c == '#')
			return 0;
	}
	return 1;
}

/* '*' any run, '?' any one character, against @s of @n bytes. */
static int match(const char *pat, const char *s, size_t n)
{
	const char *star = NULL;
	size_t i = 0, resume = 0;

	while (i < n) {
		if (*pat == '*') {
			star = pat++;
			resume = i;
		} else if (*pat && (*pat == '?' || *pat == s[i])) {
			pat++;
			i++;
		} else if (star) {
			pat = star + 1;
			i = ++resume;
		} else {
			return 0;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

void pk_modlevel_site_module(const struct pk_site *site, const char **name, size_t *len)
{
	if (site->modname) {
		*name = site->modname;
		*len = strlen(site->modname);
		return;
	}
	const char *f = site->file ? site->file : "";
	const char *slash = strrchr(f, '/');

	if (slash)
		f = slash + 1;
	*name = f;
	*len = strcspn(f, ".");
}

/* ---- changes ------------------------------------------------------------- */

static int take_lock(int try_only)
{
	for (;;) {
		uint32_t free_ = 0;

		if (pk_cas_acq_rel(&lock, &free_, 1))
			return 0;
		if (try_only)
			return -EAGAIN;
		sched_yield();
	}
}

static void drop_lock(void)
{
	pk_store_release(&lock, 0);
}

/* One generation step: odd between the two of a change. */
#define GEN_STEP PK_SITE_GEN_ODD

static void begin_change(void)
{
	__atomic_fetch_add(&pk_module_level_gen, GEN_STEP, __ATOMIC_SEQ_CST);
}

static void end_change(void)
{
	__atomic_fetch_add(&pk_module_level_gen, GEN_STEP, __ATOMIC_SEQ_CST);
}

/*
 * fork(): the child has only the forking thread; a change another thread
 * was making stays half made, its lock taken and the generation odd, so
 * the child's sites would never cache a decision and its setters would
 * wait for good. The child takes the table as it is (each word is whole)
 * and moves the generation on, even.
 */
static void unlock_in_child(void)
{
	if (pk_load_relaxed(&lock)) {
		if (__atomic_load_n(&pk_module_level_gen, __ATOMIC_RELAXED) & GEN_STEP)
			end_change();
		drop_lock();
	}
}

__attribute__((constructor)) static void install_fork_hook(void)
{
	pthread_atfork(NULL, NULL, unlock_in_child);
}

static void publish_to(struct pk_log_shared *sh);

/* With the lock held: the log's copy follows this process's table. */
static void publish(void)
{
	struct pk_log *log = pk_printk_log_peek();

	if (log)
		publish_to(pk_log_shared(log));
}

int pk_modlevel_set(const char *module, int level, int try_only)
{
	if (!module || !pk_modlevel_valid_name(module, strlen(module)) || level < -1 ||
	    level > PK_MODULE_LEVEL_MAX)
		return -EINVAL;
	if (take_lock(try_only))
		return -EAGAIN;

	uint32_t n = pk_load_relaxed(&count);
	uint32_t at = n;
	char name[PK_MODULE_NAME_MAX];

	for (uint32_t i = 0; i < n; i++) {
		unpack(table[i].name, name);
		if (!strcmp(name, module))
			at = i;
	}
	if (at == n && level < 0) {
		drop_lock();
		return 0;
	}
	if (at == n && n == PK_MODULE_LEVELS_MAX) {
		drop_lock();
		return -ENOSPC;
	}
	begin_change();
	/* The latest setting goes last: it wins over older patterns. */
	if (at < n) {
		for (uint32_t i = at; i + 1 < n; i++) {
			unpack(table[i + 1].name, name);
			pack(table[i].name, name);
			pk_store_relaxed(&table[i].level, pk_load_relaxed(&table[i + 1].level));
		}
		n--;
	}
	if (level >= 0) {
		pack(table[n].name, module);
		pk_store_relaxed(&table[n].level, (uint32_t)level);
		n++;
	}
	pk_store_relaxed(&count, n);
	end_change();
	publish();
	drop_lock();
	return 0;
}

int pk_module_set_level(const char *module, int level)
{
	return pk_modlevel_set(module, level, 0);
}

int pk_module_get_level(const char *module)
{
	char name[PK_MODULE_NAME_MAX];

	if (!module)
		return -EINVAL;
	for (int tries = 0; tries < 100; tries++) {
		uint32_t g = __atomic_load_n(&pk_module_level_gen, __ATOMIC_ACQUIRE);
		int found = -ENOENT;
		uint32_t n = pk_load_relaxed(&count);

		if (g & GEN_STEP) {
			sched_yield();
			continue;
		}
		for (uint32_t i = 0; i < n && i < PK_MODULE_LEVELS_MAX; i++) {
			unpack(table[i].name, name);
			if (!strcmp(name, module))
				found = (int)pk_load_relaxed(&table[i].level);
		}
		pk_fence_acquire();
		if (__atomic_load_n(&pk_module_level_gen, __ATOMIC_RELAXED) == g)
			return found;
	}
	return -EAGAIN;
}

void pk_module_clear_levels(void)
{
	take_lock(0);
	begin_change();
	pk_store_relaxed(&count, 0);
	end_change();
	publish();
	drop_lock();
}

int pk_set_printk_srcloc(int on)
{
	take_lock(0);
	begin_change();
	int prev = (int)atomic_exchange(&srcloc, on ? 1u : 0u);
	end_change();
	drop_lock();
	return prev;
}

int pk_get_printk_srcloc(void)
{
	return (int)pk_load_relaxed(&srcloc);
}

void pk_set_ignore_loglevel(int on)
{
	pk_cfg_store_ignore_loglevel(on);
	/* Every site decides again; an even step keeps a change's parity. */
	__atomic_fetch_add(&pk_module_level_gen, 2 * GEN_STEP, __ATOMIC_SEQ_CST);
}

/* ---- the decision ------------------------------------------------------ */

unsigned int pk__site_resolve(struct pk_site *site)
{
	const char *mod;
	size_t mlen;
	char name[PK_MODULE_NAME_MAX];

	pk_modlevel_site_module(site, &mod, &mlen);
	for (int tries = 0; tries < 4; tries++) {
		uint32_t g = __atomic_load_n(&pk_module_level_gen, __ATOMIC_ACQUIRE);

		if (g & GEN_STEP)
			continue;

		unsigned int thr = PK_SITE_STORE_ALL;
		unsigned int flags = pk_load_relaxed(&srcloc) ? PK_SITE_SRCLOC : 0;

		if (!pk_cfg_ignore_loglevel()) {
			uint32_t n = pk_load_relaxed(&count);

			for (uint32_t i = 0; i < n && i < PK_MODULE_LEVELS_MAX; i++) {
				unpack(table[i].name, name);
				if (match(name, mod, mlen))
					thr = pk_load_relaxed(&table[i].level);
			}
			if (thr > PK_SITE_STORE_ALL)
				thr = PK_SITE_STORE_ALL;
		}
		pk_fence_acquire();
		if (__atomic_load_n(&pk_module_level_gen, __ATOMIC_RELAXED) != g)
			continue;

		unsigned int state = (g & ~(GEN_STEP - 1)) | flags | thr;

		__atomic_store_n(&site->state, state, __ATOMIC_RELAXED);
		return state;
	}
	/* The table is changing under us (a signal handler may have
	 * interrupted the change): store, decide next time. */
	return PK_SITE_STORE_ALL | (pk_load_relaxed(&srcloc) ? PK_SITE_SRCLOC : 0);
}

int pk__site_default_stored(unsigned int state)
{
	return (unsigned int)pk_cfg_default_message_loglevel() < (state & PK_SITE_THRESHOLD_MASK);
}

/* ---- PRINTK_OPTS printk.module= ----------------------------------------- */

static const char *const level_names[] = { "emerg", "alert", "crit", "err",
					   "warn",  "notice", "info", "debug" };

int pk_modlevel_parse_level(const char *v, size_t n, int *level)
{
	if (n == 7 && !memcmp(v, "default", 7)) {
		*level = -1;
		return 0;
	}
	for (int i = 0; i < 8; i++) {
		if (strlen(level_names[i]) == n && !memcmp(v, level_names[i], n)) {
			*level = i + 1; /* as dmesg -n: "err" keeps err and above */
			return 0;
		}
	}
	if (n == 0 || n > 2)
		return -EINVAL;

	int x = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		x = x * 10 + (v[i] - '0');
	}
	if (x > PK_MODULE_LEVEL_MAX)
		return -EINVAL;
	*level = x;
	return 0;
}

int pk_modlevel_parse_list(const char *v, size_t n, int apply)
{
	if (n == 0)
		return -EINVAL;
	/* Checked whole before anything is applied: a word is all or nothing. */
	for (int pass = 0; pass < 1 + !!apply; pass++) {
		size_t i = 0, entries = 0;

		while (i <= n) {
			size_t end = i;

			while (end < n && v[end] != ',')
				end++;

			const char *colon = memchr(v + i, ':', end - i);
			int level;

			if (!colon || !pk_modlevel_valid_name(v + i, (size_t)(colon - (v + i))) ||
			    pk_modlevel_parse_level(colon + 1, (size_t)(v + end - colon - 1), &level))
				return -EINVAL;
			if (++entries > PK_MODULE_LEVELS_MAX)
				return -EINVAL;
			if (pass == 1) {
				char name[PK_MODULE_NAME_MAX];
				size_t len = (size_t)(colon - (v + i));

				memcpy(name, v + i, len);
				name[len] = '\0';
				int r = pk_modlevel_set(name, level, 0);

				if (r)
					return r;
			}
			i = end + 1;
		}
	}
	return 0;
}

/* ---- the log's copy ---------------------------------------------------- */

static void publish_to(struct pk_log_shared *sh)
{
	uint32_t g = pk_load_acquire(&sh->module_levels_gen);

	/* Odd: another process is publishing, or died doing it; this copy
	 * replaces whatever it wrote. */
	if (!pk_cas_acq_rel(&sh->module_levels_gen, &g, g | 1))
		return; /* another publisher raced us: it writes its own table */
	uint32_t n = pk_load_relaxed(&count);

	for (uint32_t i = 0; i < PK_MODULE_LEVELS_MAX; i++) {
		struct pk_log_module_level *e = &sh->module_levels[i];

		for (size_t w = 0; w < NAME_WORDS; w++)
			pk_store_relaxed(&e->name[w], i < n ? pk_load_relaxed(&table[i].name[w]) : 0);
		pk_store_relaxed(&e->level, i < n ? pk_load_relaxed(&table[i].level) : 0);
	}
	pk_store_relaxed(&sh->module_levels_count, n);
	pk_store_release(&sh->module_levels_gen, (g | 1) + 1);
}

int pk_log_module_level(struct pk_log *log, unsigned index, char *name, int *level)
{
	if (!log || !name || !level)
		return -EINVAL;

	struct pk_log_shared *sh = pk_log_shared(log);
	uint32_t g = pk_load_acquire(&sh->module_levels_gen);

	if (g & 1)
		return -EAGAIN;

	uint32_t n = pk_load_relaxed(&sh->module_levels_count);

	if (n > PK_MODULE_LEVELS_MAX)
		n = PK_MODULE_LEVELS_MAX;
	if (index >= n)
		return -ENOENT;

	struct pk_log_module_level *e = &sh->module_levels[index];
	uint32_t lv = pk_load_relaxed(&e->level);

	unpack(e->name, name);
	pk_fence_acquire();
	if (pk_load_relaxed(&sh->module_levels_gen) != g)
		return -EAGAIN;
	if (!pk_modlevel_valid_name(name, strlen(name)) || lv > PK_MODULE_LEVEL_MAX)
		return -EUCLEAN;
	*level = (int)lv;
	return 0;
}
_Static_assert(PK_MODULE_LEVELS_MAX == sizeof(((struct pk_log_shared *)0)->module_levels) / sizeof(struct pk_log_module_level), "a log shows every module level");
