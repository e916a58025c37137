// SPDX-License-Identifier: MIT
/*
 * modlevel.h - module levels (modlevel.c) for the layers above: start-up's
 * printk.module= and printk.srcloc=, dynamic debug's "module M level N"
 * queries, printk's source location entries.
 */
#ifndef PRINTK_MODLEVEL_H
#define PRINTK_MODLEVEL_H

#include <stddef.h>

#include <printk/printk_site.h>

/* Highest level a module takes (console_loglevel's). */
#define PK_MODULE_LEVEL_MAX 15

/* pk_module_set_level(); with @try_only the lock is only tried (-EAGAIN
 * when another thread holds it): the form printk's own path uses. */
int pk_modlevel_set(const char *module, int level, int try_only);

/* A module name or pattern of @n bytes that pk_module_set_level() takes. */
int pk_modlevel_valid_name(const char *s, size_t n);

/* A level word: 0..15, a level name (emerg .. debug: that level and the
 * more important ones, as dmesg -n) or "default" (-1: no level). */
int pk_modlevel_parse_level(const char *v, size_t n, int *level);

/* printk.module=NAME:LEVEL[,NAME:LEVEL...] (@n bytes at @v): checked
 * whole, then with @apply set. 0 or -EINVAL (nothing applied). */
int pk_modlevel_parse_list(const char *v, size_t n, int apply);

/* The module of @site: KBUILD_MODNAME, else its file's base name up to
 * the first '.' (@len bytes at @name, not NUL-terminated). */
void pk_modlevel_site_module(const struct pk_site *site, const char **name, size_t *len);

#endif
