// SPDX-License-Identifier: MIT
/*
 * version.c - pk_version(): the release this library was built as.
 *
 * The string comes from the generated <printk/version.h> of the same build,
 * so a program can tell the library it runs with from the headers it was
 * compiled against. It depends on nothing else in the library.
 */
#include <printk/version.h>

const char *pk_version(void)
{
	return PRINTK_VERSION_STRING;
}
