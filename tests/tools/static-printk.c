// SPDX-License-Identifier: MIT
/*
 * static-printk - a program linked statically against libprintk.a that
 * prints one line with pr_info(); built twice, without and with
 * pk_printk_link_all_options() (STATIC_PRINTK_OPTIN), for
 * test_static_optin. With an argument, it then applies it with
 * pk_printk_configure() and prints "configure: N" on stdout.
 */
#include <stdio.h>
#include <unistd.h>

#include <printk/printk.h>

int main(int argc, char **argv)
{
#ifdef STATIC_PRINTK_OPTIN
	pk_printk_link_all_options();
#endif
	pr_info("hello from a static program\n");
	if (argc > 1)
		dprintf(STDOUT_FILENO, "configure: %d\n", pk_printk_configure(argv[1]));
	return 0;
}
