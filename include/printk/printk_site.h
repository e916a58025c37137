/* SPDX-License-Identifier: MIT */
/*
 * printk/printk_site.h - the descriptor every printk(), pr_emerg() ...
 * pr_info() and pr_default() call site gets, and the per-module levels
 * it caches (docs/levels.md):
 *
 *     pk_module_set_level("netd", 4);        // store netd's levels 0..3 only
 *     PRINTK_OPTS='printk.module=netd:4,db:debug' ./prog
 *     udmesg -B /run/app.log --dyndbg 'module netd level 4'
 *
 * The module of a call site is KBUILD_MODNAME when the file defines it
 * (as in the kernel), otherwise the base name of the source file up to its
 * first '.' ("src/netd.c" -> "netd").
 *
 * A module level is a threshold like console_loglevel, applied when the
 * message is made rather than when it is printed: a message of a level
 * not below its module's level is not formatted and not stored, and its
 * arguments are not evaluated (as a pr_debug() that is off). A module with
 * no level stores everything, as before. ignore_loglevel stores and prints
 * every level whatever the module levels say; pr_debug() and the other
 * dynamic debug sites are switched by dynamic debug only (a site turned on
 * prints), pr_cont() goes with the line it continues (held back, in the
 * same thread, after a line held back and left open).
 *
 * The cached decision: each site holds the generation of the module level
 * table it was decided against; while nothing changes, a call costs a load
 * of the site's word, a load of the generation and a compare before the
 * message (or nothing) is made. A change bumps the generation, and each
 * site decides again (out of line) the next time it runs.
 *
 * The site also holds its source location: with printk.srcloc=1
 * (pk_set_printk_srcloc) each record it stores carries CODE_FILE=,
 * CODE_LINE= and CODE_FUNC= dictionary entries.
 *
 * Needs GNU C (statement expressions; gcc and clang): other compilers get
 * the plain calls, with no module levels and no source location. So does
 * a file that defines PRINTK_NO_CALL_SITES before its first libprintk
 * include.
 */
#ifndef PRINTK_PRINTK_SITE_H
#define PRINTK_PRINTK_SITE_H

#include <printk/compiler.h>
#include <printk/log.h>

PK_BEGIN_DECLS

/* Longest module name (or pattern) a level is kept for, its NUL included. */
#define PK_MODULE_NAME_MAX 32
/* Module levels one process keeps (and a log file shows). */
#define PK_MODULE_LEVELS_MAX 16

/*
 * One call site, a static object the macros below make. Only the library
 * writes it (@state, and @format once).
 */
struct pk_site {
	/* The cached decision, read and written atomically:
	 * generation << 5 | PK_SITE_SRCLOC | the store threshold (0..8: a
	 * message is stored when its level is below it), as
	 * pk_module_level_gen encodes it. 8 (generation 0) until the library
	 * decides otherwise. */
	unsigned int state;
	unsigned int line;   /* __LINE__ */
	const char *modname; /* KBUILD_MODNAME, or NULL: the file's base name up to its first '.' */
	const char *file;    /* __FILE__ */
	const char *func;    /* __func__ */
	/* The call site's compiled format: NULL until the site first stores
	 * a message through pk__printk_lit_site(), then set once (atomically)
	 * by the library to its literal's layout, never changed or freed. */
	const void *format;
};

#define PK_SITE_THRESHOLD_MASK 15u
#define PK_SITE_SRCLOC	       16u
#define PK_SITE_GEN_SHIFT      5
#define PK_SITE_GEN_ODD	       (1u << PK_SITE_GEN_SHIFT)
#define PK_SITE_STORE_ALL      8u

/*
 * The generation word of the module level table: generation << 5 |
 * PK_SITE_STORE_ALL, what a site's @state is while its module has no
 * level and no source location is stored (so that case is one compare);
 * the generation is odd while the table changes. The library's, never
 * written by a program.
 */
PK_API extern unsigned int pk_module_level_gen;

/*
 * Give @module a level (0..15, as console_loglevel: its messages of a
 * level below it are stored, the others dropped; 8 and above store every
 * level) or, with @level -1, take its level away (everything stored).
 * @module is a name or a pattern with '*' and '?' (the last level set
 * whose pattern matches a site applies). Returns 0; -EINVAL for a bad
 * level or a name that is empty, PK_MODULE_NAME_MAX bytes or longer or
 * holds white space, ',', ':', ';' or '='; -ENOSPC when
 * PK_MODULE_LEVELS_MAX names already have one.
 * Context: thread-safe; may wait (spins) while another thread changes the
 * levels; not for signal handlers.
 */
PK_API int pk_module_set_level(const char *module, int level);
/* The level set for @module (the exact name or pattern it was set with),
 * or -ENOENT when it has none, -EINVAL for NULL, -EAGAIN when called from
 * a signal handler that interrupted a change of the levels.
 * Context: any (async-signal-safe, lock-free). */
PK_API int pk_module_get_level(const char *module);
/* Take every module's level away.
 * Context: as pk_module_set_level(). */
PK_API void pk_module_clear_levels(void);

/*
 * The module levels a log shows (udmesg --module-levels): the last
 * process writing @log that changed its module levels published them
 * there. The @index-th (from 0) into @name (PK_MODULE_NAME_MAX bytes) and
 * *@level. Returns 0, -ENOENT past the last, -EAGAIN while a process is
 * publishing (try again), -EINVAL for a bad argument. The log is
 * untrusted: names are checked, cut and NUL-terminated.
 * Context: any (async-signal-safe, lock-free).
 */
PK_API int pk_log_module_level(struct pk_log *log, unsigned index, char *name, int *level);

/*
 * printk.srcloc: each record a call site stores carries CODE_FILE=,
 * CODE_LINE= and CODE_FUNC= dictionary entries (its __FILE__, __LINE__
 * and __func__). Off by default. Returns the previous setting.
 * Context: as pk_module_set_level().
 */
PK_API int pk_set_printk_srcloc(int on);
PK_API int pk_get_printk_srcloc(void);

/* The library's side of the macros below; call them through the macros.
 * Context: as pk_printk(). */
PK_API unsigned int pk__site_resolve(struct pk_site *site);
PK_API int pk__site_default_stored(unsigned int state);
PK_API int pk__printk_site(struct pk_site *site, const char *fmt, ...) PK_PRINTF(2, 3);
/* pk_printk_lit() of a site whose message is stored as it is: @fmt, a
 * literal, is compiled once into @site's format slot (the deferred path's
 * layout; docs/lanes.md), and later calls copy their arguments by it. */
PK_API int pk__printk_lit_site(struct pk_site *site, const char *fmt, ...) PK_PRINTF(2, 3);
/* A message with format @fmt was held back: if it leaves its line open,
 * the calling thread's continuations (pr_cont) are held back with it. */
PK_API void pk__site_held(const char *fmt);

#if (defined(__GNUC__) || defined(__clang__)) && !defined(PRINTK_NO_CALL_SITES)
#define PK_SITES_ON 1

#ifdef KBUILD_MODNAME
#define PK_SITE_MODNAME KBUILD_MODNAME
#else
#define PK_SITE_MODNAME 0
#endif

#define PK_SITE_DEFINE(name) \
	static struct pk_site name = { PK_SITE_STORE_ALL, __LINE__, PK_SITE_MODNAME, __FILE__, __func__, 0 }

/* The level a format's header gives: 0..7, -1 for none (the default
 * level), -2 for a continuation. Folded at compile time for a literal. */
static inline int pk__fmt_level(const char *fmt)
{
	if (fmt && fmt[0] == '\001' && fmt[1] >= '0' && fmt[1] <= '7')
		return fmt[1] - '0';
	if (fmt && fmt[0] == '\001' && fmt[1] == 'c')
		return -2;
	return -1;
}

/* What a site whose @state is not the store-all one does with a message
 * of @level (pk__fmt_level's): 0 drop it, 1 store it, 2 store it with its
 * source location. Decides again first when the table changed. */
static inline int pk__site_how(struct pk_site *site, unsigned int state, int level)
{
	if ((state ^ __atomic_load_n(&pk_module_level_gen, __ATOMIC_RELAXED)) >> PK_SITE_GEN_SHIFT)
		state = pk__site_resolve(site);

	unsigned int thr = state & PK_SITE_THRESHOLD_MASK;

	if (thr < PK_SITE_STORE_ALL && level != -2 &&
	    !(level >= 0 ? (unsigned int)level < thr : pk__site_default_stored(state)))
		return 0;
	return state & PK_SITE_SRCLOC ? 2 : 1;
}

/* A literal format that ends its line: a message of it held back tells
 * the library nothing (it leaves no line open for pr_cont to continue).
 * In the macro, not an inline function: there gcc no longer sees the
 * literal. */
#define PK_FMT_ENDS_LINE(fmt) \
	(__builtin_constant_p(fmt) && __builtin_strlen(fmt) > 0 && (fmt)[__builtin_strlen(fmt) - 1] == '\n')

/* The call of a site: @plain(fmt, args...) when the site stores the
 * message, through pk__printk_site() when it also stores its source
 * location; 0 when the message is not stored. While no level and no
 * source location concern the site: a load of its state, a load of the
 * generation word, a compare. */
#define PK_SITE_CALL(plain, ...)                                                                \
	__extension__({                                                                         \
		PK_SITE_DEFINE(pk_site_);                                                       \
		unsigned int pk_site_st_ = __atomic_load_n(&pk_site_.state, __ATOMIC_RELAXED);  \
		int pk_site_how_ =                                                              \
			__builtin_expect(pk_site_st_ == __atomic_load_n(&pk_module_level_gen,  \
									 __ATOMIC_RELAXED), 1)  \
				? 1                                                             \
				: pk__site_how(&pk_site_, pk_site_st_,                          \
					       pk__fmt_level(PK_FIRST(__VA_ARGS__)));            \
		pk_site_how_ == 1 ? plain(__VA_ARGS__)                                          \
		: pk_site_how_	  ? pk__printk_site(&pk_site_, __VA_ARGS__)                     \
		: PK_FMT_ENDS_LINE(PK_FIRST(__VA_ARGS__))                                       \
			? 0                                                                     \
			: (pk__site_held(PK_FIRST(__VA_ARGS__)), 0);                            \
	})
#else
#define PK_SITES_ON 0
#define PK_SITE_CALL(plain, ...) plain(__VA_ARGS__)
#endif

PK_END_DECLS

#endif
