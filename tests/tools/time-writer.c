// SPDX-License-Identifier: MIT
/*
 * time-writer - prints its arguments through printk() with whatever
 * PRINTK_OPTS asks for (tests/cli/test_time_styles.sh: the console time
 * styles under a faked wall clock).
 *
 *   time-writer WORD...
 *
 * Each WORD is one line at the default level, except "--wait=FILE": wait
 * (up to 60 s) until FILE exists, so the test can step the faked wall
 * clock between two lines, "--mark=FILE": create FILE, to say that
 * every line before it is stored, "--part=TEXT": TEXT without a newline
 * (a line left open), and "--cont=TEXT": TEXT and a newline as KERN_CONT
 * (the rest of that line). Uses the public API only, as a program
 * would.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/printk.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--wait=", 7)) {
			/* Polled with nanosleep: libfaketime leaves it alone. */
			int n = 0;

			while (access(argv[i] + 7, F_OK) != 0) {
				struct timespec ts = { 0, 10000000 };

				if (++n > 6000) {
					fprintf(stderr, "time-writer: %s never came\n", argv[i] + 7);
					return 1;
				}
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (!strncmp(argv[i], "--mark=", 7)) {
			FILE *f = fopen(argv[i] + 7, "w");

			if (!f || fclose(f)) {
				fprintf(stderr, "time-writer: cannot create %s\n", argv[i] + 7);
				return 1;
			}
			continue;
		}
		if (!strncmp(argv[i], "--part=", 7)) {
			pk_printk("%s", argv[i] + 7);
			continue;
		}
		if (!strncmp(argv[i], "--cont=", 7)) {
			pk_printk(KERN_CONT "%s\n", argv[i] + 7);
			continue;
		}
		pk_printk("%s\n", argv[i]);
	}
	return 0;
}
