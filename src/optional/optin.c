// SPDX-License-Identifier: MIT
/*
 * optin.c - pk_printk_link_all_options(): the one opt-in, for a program
 * linked statically against libprintk.a, that links what PRINTK_OPTS can
 * name beyond the core: /dev/kmsg (printk.devkmsg=), dynamic debug
 * (dyndbg=) and the forwarding consoles (console=journal,
 * console=syslog:).
 *
 * Owns nothing. The call does nothing when it runs: the references below
 * make the linker take those files, whose constructors then hand start-up
 * what it needs (setup_hooks.h; the forwarding consoles complete their rows
 * of the console kinds, console/console_kinds.h). In the shared library every file is there
 * anyway.
 */
#include <printk/forward.h>
#include <printk/kmsg.h>
#include <printk/printk.h>

#include "optional/dyndbg_internal.h"

/* Kept by "used" even though nothing reads it: its relocations are the point. */
__attribute__((used)) static const void *const linked_features[] = {
	(const void *)pk_set_devkmsg,
	(const void *)pk_dyndbg_boot,
	(const void *)pk_console_journal_create,
};

void pk_printk_link_all_options(void)
{
}
