/* SPDX-License-Identifier: MIT */
/*
 * printk/dynamic_debug.h - dynamic debug: every pr_debug(), dev_dbg(),
 * netdev_dbg() and print_hex_dump_debug() call site can be turned on and
 * off while the program runs, with the kernel's query language (Linux
 * lib/dynamic_debug.c, Documentation/admin-guide/dynamic-debug-howto.rst):
 *
 *     pk_dyndbg_query("file net.c +p; func rx_* +pflt");
 *     PRINTK_OPTS='dyndbg="module mydrv +p"' ./prog
 *     udmesg -F /run/app.log --dyndbg 'file net.c +p'
 *
 * A file's call sites are dynamic when it is compiled with DEBUG or
 * PRINTK_DYNAMIC_DEBUG defined before the first libprintk include; with
 * DEBUG they start on (the 'p' flag), otherwise off. Without either, the
 * debug macros compile to nothing, as before. A site that is off costs a
 * load of its flags and a branch.
 *
 * Each site is a static struct pk_dyndbg in the section "pk_dyndbg"; the
 * linker collects them per object (the executable and each shared object)
 * between __start_pk_dyndbg and __stop_pk_dyndbg, and a constructor this
 * header adds to the object hands that range to the library (a destructor
 * takes it back when a shared object is unloaded). A compiler without
 * section attributes, or a target that is not ELF, gets the plain macros:
 * DEBUG prints, no DEBUG compiles out, and no site is listed; so does a
 * file that defines PRINTK_NO_DYNAMIC_DEBUG.
 *
 * The module of a site is KBUILD_MODNAME when the file defines it,
 * otherwise its object's name: the program's short name for the
 * executable, the file name up to its first '.' for a shared object
 * ("libfoo" for libfoo.so.1).
 */
#ifndef PRINTK_DYNAMIC_DEBUG_H
#define PRINTK_DYNAMIC_DEBUG_H

#include <stdio.h>

#include <printk/compiler.h>
#include <printk/log.h>

PK_BEGIN_DECLS

/* The flags of a site, with the kernel's letters and values. */
#define PK_DYNDBG_PRINT		   (1u << 0) /* 'p': the site prints */
#define PK_DYNDBG_INCL_MODNAME	   (1u << 1) /* 'm': "module:" prefix */
#define PK_DYNDBG_INCL_FUNCNAME	   (1u << 2) /* 'f': "function:" prefix */
#define PK_DYNDBG_INCL_LINENO	   (1u << 3) /* 'l': "line:" prefix */
#define PK_DYNDBG_INCL_TID	   (1u << 4) /* 't': "[tid] " prefix */
#define PK_DYNDBG_INCL_SOURCENAME (1u << 5) /* 's': "file:" prefix */

/* Longest query pk_dyndbg_post() takes, its NUL included. */
#define PK_DYNDBG_QUERY_MAX 512

/*
 * One call site. Only the library writes it after start-up (flags; modname
 * once, when the object is registered); a program reads it through
 * pk_dyndbg_write_control().
 */
struct pk_dyndbg {
	const char *modname;  /* KBUILD_MODNAME, or NULL: the object's name */
	const char *function; /* __func__ */
	const char *filename; /* __FILE__ */
	const char *format;   /* the format as written, before pr_fmt() */
	unsigned int lineno;
	unsigned int flags; /* PK_DYNDBG_*; read and written atomically */
};

/*
 * Apply @query (the kernel's syntax: "[file F] [func F] [module M]
 * [format T] [line N[-M]] <+|-|=>flags", several separated by ';' or a
 * newline) to the call sites of this process. Returns the number of sites
 * the queries matched, as the kernel counts (sites whose flags were
 * already so included), or -EINVAL when a query is malformed: the kernel's
 * "dyndbg: ..." error messages are logged at KERN_ERR, the other queries
 * of @query still apply. Objects loaded later get the queries given in
 * PRINTK_OPTS dyndbg=, not these.
 * Context: thread-safe; does not allocate; may wait (spins) while another
 * thread changes the sites; not for signal handlers.
 */
PK_API int pk_dyndbg_query(const char *query);

/*
 * Write the call sites of this process to @f, as the kernel's
 * <debugfs>/dynamic_debug/control reads: the header line
 * "# filename:lineno [module]function flags format", then one line per
 * site, "file:line [module]function =flags \"format\"" with tab, CR and
 * newline escaped as \t, \r and \n. Returns the number of sites, or
 * -errno when writing failed.
 * Context: thread-safe; stdio (locks @f, may allocate): not for signal
 * handlers.
 */
PK_API int pk_dyndbg_write_control(FILE *f);

/*
 * Post @query to every process writing @log's file: each applies it at
 * its next printk (of any level) or pk_dyndbg_poll(), once. A later post
 * replaces one not yet applied. Returns 0; -EINVAL for a malformed query
 * (checked here, nothing logged), -E2BIG when it is
 * PK_DYNDBG_QUERY_MAX bytes or more, -EBUSY when another post has held
 * the mailbox for more than a second.
 * Context: thread-safe; may sleep briefly (another post in progress); not
 * for signal handlers.
 */
PK_API int pk_dyndbg_post(struct pk_log *log, const char *query);

/*
 * Apply a query posted to the default log's file since the last look, now
 * rather than at the next printk. Returns the sites it matched, 0 when
 * there was none.
 * Context: any (async-signal-safe, lock-free: when another thread is
 * changing the sites it leaves the query for the next look).
 */
PK_API int pk_dyndbg_poll(void);

/* The kernel's struct tags, as <printk/dev_printk.h> and
 * <printk/netdevice.h> name them (identical definitions). */
#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_DEVICE_NAME)
#define pk_device device
#endif
#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_NET_DEVICE_NAME)
#define pk_net_device net_device
#endif

/* The printing ends of the macros below; call them through the macros. */
PK_API int pk__dynamic_pr_debug(struct pk_dyndbg *site, const char *fmt, ...) PK_PRINTF(2, 3);
struct pk_device;
PK_API int pk__dynamic_dev_dbg(struct pk_dyndbg *site, const struct pk_device *dev,
			       const char *fmt, ...) PK_PRINTF(3, 4);
struct pk_net_device;
PK_API void pk__dynamic_netdev_dbg(struct pk_dyndbg *site, const struct pk_net_device *dev,
				   const char *fmt, ...) PK_PRINTF(3, 4);

/* The library's side of the per-object registration below.
 * Context: constructors and destructors. */
PK_API void pk_dyndbg_register(struct pk_dyndbg *start, struct pk_dyndbg *stop);
PK_API void pk_dyndbg_unregister(struct pk_dyndbg *start, struct pk_dyndbg *stop);

#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) && \
	(defined(DEBUG) || defined(PRINTK_DYNAMIC_DEBUG)) && !defined(PRINTK_NO_DYNAMIC_DEBUG)
#define PK_DYNDBG_ON 1

#ifdef KBUILD_MODNAME
#define PK_DYNDBG_MODNAME KBUILD_MODNAME
#else
#define PK_DYNDBG_MODNAME 0
#endif
#ifdef DEBUG
#define PK_DYNDBG_FLAGS_DEFAULT PK_DYNDBG_PRINT
#else
#define PK_DYNDBG_FLAGS_DEFAULT 0u
#endif

/* Hidden: each object sees its own section, never another's. */
extern struct pk_dyndbg __start_pk_dyndbg[] __attribute__((weak, visibility("hidden")));
extern struct pk_dyndbg __stop_pk_dyndbg[] __attribute__((weak, visibility("hidden")));

/* One pair per file that includes this header: the library ignores a
 * range it already holds, so an object registers once however many of
 * its files do it. */
__attribute__((constructor, used)) static void pk_dyndbg_object_ctor(void)
{
	pk_dyndbg_register(__start_pk_dyndbg, __stop_pk_dyndbg);
}
__attribute__((destructor, used)) static void pk_dyndbg_object_dtor(void)
{
	pk_dyndbg_unregister(__start_pk_dyndbg, __stop_pk_dyndbg);
}

#define PK_DYNDBG_SITE(name, fmt)                                                      \
	static struct pk_dyndbg name __attribute__((section("pk_dyndbg"), used, aligned(8))) = \
		{ PK_DYNDBG_MODNAME, __func__, __FILE__, (fmt), __LINE__,                  \
		  PK_DYNDBG_FLAGS_DEFAULT }
#define PK_DYNDBG_ENABLED(site) \
	__builtin_expect(!!(__atomic_load_n(&(site).flags, __ATOMIC_RELAXED) & PK_DYNDBG_PRINT), 0)

/* Declare a site for @fmt and run @call (which may use pk_dd_site_) when
 * it is on. */
#define PK_DYNDBG_CALL(fmt, call)                     \
	do {                                          \
		PK_DYNDBG_SITE(pk_dd_site_, fmt);     \
		if (PK_DYNDBG_ENABLED(pk_dd_site_))   \
			call;                         \
	} while (0)
/* The same as an expression: the value of @call (an int) when the site
 * is on, else 0; pr_debug() and dev_dbg() return what they stored, as
 * without dynamic debug. */
#define PK_DYNDBG_EXPR(fmt, call)                                  \
	__extension__({                                            \
		PK_DYNDBG_SITE(pk_dd_site_, fmt);                  \
		PK_DYNDBG_ENABLED(pk_dd_site_) ? (call) : 0;       \
	})
#else
#define PK_DYNDBG_ON 0
#endif

/* The kernel's names for code that declares its own sites (the kernel's
 * DEFINE_DYNAMIC_DEBUG_METADATA(), DYNAMIC_DEBUG_BRANCH() and
 * __dynamic_pr_debug()) or calls dynamic_pr_debug() ... by name. Without
 * dynamic debug in the file a branch is never taken, as in a kernel built
 * without CONFIG_DYNAMIC_DEBUG. */
#ifndef PRINTK_NO_KERNEL_NAMES
#if PK_DYNDBG_ON
#define DEFINE_DYNAMIC_DEBUG_METADATA(name, fmt) PK_DYNDBG_SITE(name, fmt)
#define DYNAMIC_DEBUG_BRANCH(descriptor)	 PK_DYNDBG_ENABLED(descriptor)
#else
#define DEFINE_DYNAMIC_DEBUG_METADATA(name, fmt)
#define DYNAMIC_DEBUG_BRANCH(descriptor) 0
#endif
#define __dynamic_pr_debug  pk__dynamic_pr_debug
#define __dynamic_dev_dbg   pk__dynamic_dev_dbg
#define __dynamic_netdev_dbg pk__dynamic_netdev_dbg
#define dynamic_pr_debug    pk_pr_debug
#define dynamic_dev_dbg	    pk_dev_dbg
#define dynamic_netdev_dbg  pk_netdev_dbg
#define dynamic_hex_dump    pk_print_hex_dump_debug
#endif

PK_END_DECLS

#endif
