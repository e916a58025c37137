// SPDX-License-Identifier: MIT
/*
 * static-configure - a program linked statically against libprintk.a that
 * never prints: it applies argv[1] with pk_printk_configure() and writes
 * the texts of the default log's records to stdout, one a line, then
 * "configure: N". For test_static_optin: without printk in the program,
 * a bad option still leaves its warning record.
 */
#include <stdio.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

int main(int argc, char **argv)
{
	static struct pk_record rec;
	int r = pk_printk_configure(argc > 1 ? argv[1] : "");
	struct pk_log *log = pk_printk_log();

	for (uint64_t seq = pk_log_first_seq(log); pk_log_read(log, seq, &rec, 0) == 0;
	     seq = rec.seq + 1)
		printf("%s\n", rec.text);
	printf("configure: %d\n", r);
	return 0;
}
