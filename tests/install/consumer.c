// SPDX-License-Identifier: MIT
/*
 * consumer.c - a program built against the *installed* libprintk, as C and
 * as C++ (tests/install/check.sh): every public header must compile in both
 * languages, and the library must link and work, and be the release its
 * headers name. Its pr_*() calls are call sites (<printk/printk_site.h>),
 * in C++ too: module "consumer" at level 4 keeps pr_err, drops pr_info.
 */
#include <printk/log.h>
#include <printk/printk.h>
#include <printk/version.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	struct pk_log *log;
	struct pk_record *rec = (struct pk_record *)calloc(1, sizeof(*rec));

	if (strcmp(pk_version(), PRINTK_VERSION_STRING) != 0) {
		printf("library %s, headers %s\n", pk_version(), PRINTK_VERSION_STRING);
		return 4;
	}
	if (!rec || pk_log_create(&log, 0) != 0)
		return 1;
	if (pk_log_store(log, 1, 6, "installed", 9, NULL, 0) != 0)
		return 2;
	if (pk_log_read(log, 0, rec, 0) != 0 || strcmp(rec->text, "installed") != 0)
		return 3;
	pk_log_destroy(log);
	free(rec);
	pk_set_console_loglevel(0); /* stored, not printed */
	if (pk_module_set_level("consumer", 4) != 0 || pr_info("dropped %d\n", 1) != 0 ||
	    pr_err("kept %d\n", 2) <= 0 || pk_module_set_level("consumer", -1) != 0 ||
	    pr_info("kept %d\n", 3) <= 0) {
		printf("module level of a call site: wrong\n");
		return 1;
	}
	pk_printk_exit();
	printf("consumer ok (libprintk %s)\n", pk_version());
	return 0;
}
