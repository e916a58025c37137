/* SPDX-License-Identifier: MIT */
/*
 * printk/err.h - error pointers, as the kernel's <linux/err.h>: a function
 * that returns a pointer returns ERR_PTR(-errno) on failure, and printk's
 * %pe prints such a value by name.
 *
 *     struct frob *f = frob_open(name);
 *     if (IS_ERR(f))
 *             pr_err("frob %s: %pe\n", name, f);   // "frob x: -ENOENT"
 *
 * The top PK_MAX_ERRNO (4095) addresses are error pointers: no object can
 * live there, and every -errno fits. These are the values %p prints
 * unhashed, and the %s and %p extensions print as "(efault)" instead of
 * reading them (docs/kernel-compat.md, section 14).
 *
 * Everything is an inline function (the kernel's are too): no symbol of
 * the library is used. The kernel's names are defined unless
 * PRINTK_NO_KERNEL_NAMES or PRINTK_NO_ERR_NAMES is; the pk_ ones always.
 * Context: any.
 */
#ifndef PRINTK_ERR_H
#define PRINTK_ERR_H

#include <stdbool.h>
#include <stdint.h>

#define PK_MAX_ERRNO 4095

/* @x: an integer (the kernel's unsigned long) or a pointer. */
#define PK_IS_ERR_VALUE(x) ((uintptr_t)(x) >= (uintptr_t)-PK_MAX_ERRNO)

/* @error: a negative errno, -PK_MAX_ERRNO..-1. */
static inline void *pk_err_ptr(long error)
{
	return (void *)(intptr_t)error;
}

/* The errno an error pointer holds (meaningful only where pk_is_err()). */
static inline long pk_ptr_err(const void *ptr)
{
	return (long)(intptr_t)ptr;
}

static inline bool pk_is_err(const void *ptr)
{
	return PK_IS_ERR_VALUE(ptr);
}

static inline bool pk_is_err_or_null(const void *ptr)
{
	return !ptr || pk_is_err(ptr);
}

/* An error pointer as another pointer type (C has no const to drop here). */
static inline void *pk_err_cast(const void *ptr)
{
	return (void *)(uintptr_t)ptr;
}

/* The errno of an error pointer, else 0 (NULL included). */
static inline int pk_ptr_err_or_zero(const void *ptr)
{
	return pk_is_err(ptr) ? (int)pk_ptr_err(ptr) : 0;
}

#if !defined(PRINTK_NO_KERNEL_NAMES) && !defined(PRINTK_NO_ERR_NAMES)
#define MAX_ERRNO	   PK_MAX_ERRNO
#define IS_ERR_VALUE(x)	   PK_IS_ERR_VALUE(x)
#define ERR_PTR(error)	   pk_err_ptr(error)
#define PTR_ERR(ptr)	   pk_ptr_err(ptr)
#define IS_ERR(ptr)	   pk_is_err(ptr)
#define IS_ERR_OR_NULL(ptr) pk_is_err_or_null(ptr)
#define ERR_CAST(ptr)	   pk_err_cast(ptr)
#define PTR_ERR_OR_ZERO(ptr) pk_ptr_err_or_zero(ptr)
#endif

#endif
