// SPDX-License-Identifier: MIT
/*
 * dyndbg_obj.c - the shared object test_dyndbg.c loads: built with DEBUG,
 * so its call sites start on; linked against nothing (the test program
 * exports the library's functions), so its sites register with the
 * program's copy of the library.
 */
#define DEBUG 1

#include <printk/printk.h>

int dyndbg_obj_hello(int x);
int dyndbg_obj_line(void);

int dyndbg_obj_hello(int x)
{
	return pr_debug("obj hello %d\n", x);
}

int dyndbg_obj_line(void)
{
	return __LINE__ - 5;
}
