/* SPDX-License-Identifier: MIT */
/*
 * printk/compiler.h - portability macros shared by the public headers.
 * Each has a plain fallback for compilers that lack the attribute.
 */
#ifndef PRINTK_COMPILER_H
#define PRINTK_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define PK_API		       __attribute__((visibility("default")))
#define PK_PRINTF(fmt, args)   __attribute__((format(printf, fmt, args)))
#define PK_COLD		       __attribute__((cold))
#define PK_NORETURN	       __attribute__((noreturn))
#else
#define PK_API
#define PK_PRINTF(fmt, args)
#define PK_COLD
#define PK_NORETURN
#endif

#ifdef __cplusplus
#define PK_BEGIN_DECLS extern "C" {
#define PK_END_DECLS   }
#else
#define PK_BEGIN_DECLS
#define PK_END_DECLS
#endif

#endif
