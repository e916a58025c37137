// SPDX-License-Identifier: MIT
/*
 * console_register.c - pk_register_console(): the top of the console
 * files (console_impl.h). It installs the printer threads' table
 * (console_printer.c, which brings console_lossless.c) before the first
 * threaded or lossless console is registered, then registers through
 * console.c. A file console (console_fd.c) is made lossless here unless it
 * is marked PK_CON_LOSSY (console.c asks console_fd.c). console.c names neither file, so the object graph has no
 * cycle; and since every registration comes through here, a program
 * linked statically that registers any console has the printer threads in
 * it, as a threaded console may be made by the caller's flags alone.
 */
#include <errno.h>

#include <printk/console.h>

#include "console/console_impl.h"
#include "console/console_kinds.h"

int pk_register_console(struct console *con)
{
	if (con && (con->flags & PK_CON_LOSSY) && (con->flags & PK_CON_LOSSLESS))
		return -EINVAL;
	/* A file console keeps every line unless told otherwise. Not on a
	 * console registered before (-EBUSY below leaves it as it is). */
	if (con && !con->state && pk_con_lossless_by_default(con))
		con->flags |= PK_CON_LOSSLESS;
	if (con && (con->flags & (PK_CON_THREADED | PK_CON_LOSSLESS)))
		pk_printer_install();
	int err = pk_con_register(con);

	if (!err) /* a spec's ,loglevel= and ,time= (console_kinds.c) */
		pk_console_kinds_registered(con);
	return err;
}
