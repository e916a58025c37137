/* SPDX-License-Identifier: MIT */
/*
 * printk/sprintf.h - the kernel's string formatting: snprintf, scnprintf,
 * sprintf, kasprintf and their va_list twins, with printk's semantics and
 * every %p extension printk knows (docs/kernel-compat.md, sections 14 and
 * 16: where the kernel's printf differs from C's, these follow the kernel).
 *
 *     char buf[32];
 *     int n = pk_scnprintf(buf, sizeof(buf), "%pM %.0d", mac, 0);
 *
 * Names. The pk_ functions are always declared. The kernel's names that
 * no C library has (scnprintf, vscnprintf, kasprintf, kvasprintf, kfree,
 * gfp_t, GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT) are macros for them unless
 * PRINTK_NO_KERNEL_NAMES (or PRINTK_NO_SPRINTF_NAMES, for this header
 * alone) is defined. The four names the C library owns (snprintf,
 * vsnprintf, sprintf, vsprintf) become the kernel's only when the program
 * defines PRINTK_KERNEL_SPRINTF before including this header, and only in
 * C: <stdio.h> is included first, then each name is an object-like macro
 * for its pk_ twin, so the rest of that translation unit, as kernel code
 * expects, formats the kernel's way. C++ never gets them (std::snprintf
 * must stay the C library's): C++ code calls the pk_ names.
 *
 * Context of every formatting function here but kasprintf and kvasprintf:
 * any (async-signal-safe, thread-safe, no allocation, no locks, errno left
 * alone, the locale never consulted). kasprintf and kvasprintf allocate
 * with malloc: normal context only, whatever gfp flags they are given.
 */
#ifndef PRINTK_SPRINTF_H
#define PRINTK_SPRINTF_H

#include <stdarg.h>
#include <stddef.h>

#include <printk/compiler.h>

PK_BEGIN_DECLS

/*
 * The kernel's vsnprintf(): stores at most @size - 1 bytes and a NUL
 * (nothing when @size is 0; @buf may then be NULL) and returns the length
 * the whole output has, even when it was cut. Never fails: a malformed or
 * unsupported conversion ends the output there, an output longer than
 * INT_MAX returns INT_MAX, and a @size above INT_MAX (a caller's bug the
 * kernel WARNs about) returns 0 and writes nothing.
 * Context: any (async-signal-safe).
 */
PK_API int pk_vsnprintf(char *buf, size_t size, const char *fmt, va_list args) PK_PRINTF(3, 0);
PK_API int pk_snprintf(char *buf, size_t size, const char *fmt, ...) PK_PRINTF(3, 4);

/*
 * The kernel's vscnprintf(): as pk_vsnprintf(), but returns the number of
 * bytes stored in @buf, the NUL not counted: 0 when @size is 0, at most
 * @size - 1. Suits "pos += scnprintf(buf + pos, size - pos, ...)".
 * Context: any (async-signal-safe).
 */
PK_API int pk_vscnprintf(char *buf, size_t size, const char *fmt, va_list args) PK_PRINTF(3, 0);
PK_API int pk_scnprintf(char *buf, size_t size, const char *fmt, ...) PK_PRINTF(3, 4);

/*
 * The kernel's vsprintf(): pk_vsnprintf() with a size of INT_MAX. The
 * caller promises room for the whole output.
 * Context: any (async-signal-safe).
 */
PK_API int pk_vsprintf(char *buf, const char *fmt, va_list args) PK_PRINTF(2, 0);
PK_API int pk_sprintf(char *buf, const char *fmt, ...) PK_PRINTF(2, 3);

/*
 * The kernel's allocation flags. The kernel's allocator may sleep or not
 * as they say; malloc(3) has no such choice, so the value is accepted and
 * ignored. In particular GFP_ATOMIC does not make pk_kasprintf() usable in
 * a signal handler.
 */
typedef unsigned int pk_gfp_t;
#define PK_GFP_KERNEL 0x0cc0u
#define PK_GFP_ATOMIC 0x0820u
#define PK_GFP_NOWAIT 0x0800u

/*
 * The kernel's kvasprintf(): the output in a new buffer of exactly its
 * length plus the NUL, to be released with pk_kfree() (or free()); NULL
 * when the allocation fails or the output would be longer than INT_MAX - 1.
 * Context: normal (malloc); thread-safe.
 */
PK_API char *pk_kvasprintf(pk_gfp_t gfp, const char *fmt, va_list args) PK_PRINTF(2, 0);
PK_API char *pk_kasprintf(pk_gfp_t gfp, const char *fmt, ...) PK_PRINTF(2, 3);

/*
 * The kernel's kfree() for what pk_kasprintf() returned: free(3), except
 * that NULL and the kernel's ZERO_SIZE_PTR ((void *)16) are ignored.
 * Context: normal (free); thread-safe.
 */
PK_API void pk_kfree(const void *p);

PK_END_DECLS

#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_SPRINTF_NAMES)
#define scnprintf  pk_scnprintf
#define vscnprintf pk_vscnprintf
#define kasprintf  pk_kasprintf
#define kvasprintf pk_kvasprintf
#define kfree	   pk_kfree
#define gfp_t	   pk_gfp_t
#define GFP_KERNEL ((pk_gfp_t)PK_GFP_KERNEL)
#define GFP_ATOMIC ((pk_gfp_t)PK_GFP_ATOMIC)
#define GFP_NOWAIT ((pk_gfp_t)PK_GFP_NOWAIT)
#endif

#if defined(PRINTK_KERNEL_SPRINTF) && !defined(__cplusplus)
/* Declared first, so that these macros rename only the calls after them. */
#include <stdio.h>
#undef snprintf
#undef vsnprintf
#undef sprintf
#undef vsprintf
#define snprintf  pk_snprintf
#define vsnprintf pk_vsnprintf
#define sprintf	  pk_sprintf
#define vsprintf  pk_vsprintf
#endif

#endif
