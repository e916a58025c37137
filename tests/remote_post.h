// SPDX-License-Identifier: MIT
/*
 * remote_post.h - what test_dyndbg.c and test_module_levels.c share
 * (remote_post.c, compiled into both): another process posts a query to
 * this one's log file, udmesg among them. The test's child logs to a file
 * and applies what was posted; it must exit 0.
 */
#ifndef PRINTK_REMOTE_POST_H
#define PRINTK_REMOTE_POST_H

#include <stddef.h>

#ifdef UDMESG
/* udmesg -B @path @a1 @a2 (@a2 may be NULL), its stderr thrown away: its
 * exit status (-1 if it did not exit); its stdout into @out (NUL-terminated,
 * at most @size - 1 bytes), or read and dropped if @out is NULL. */
int run_udmesg(const char *path, char *out, size_t size, const char *a1, const char *a2);
#endif

/* @child(@how) in a child process (20 s at most) with a fresh test
 * directory @dir: it must exit 0; else its state and output are printed. */
void run_remote(const char *dir, int (*child)(void *), const char *how);

#endif
