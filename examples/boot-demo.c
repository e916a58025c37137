// SPDX-License-Identifier: MIT
/*
 * boot-demo - a program that boots like a kernel.
 *
 * Threads print boot messages at several levels, run self-tests that print
 * "Testing ...: " before the test and "PASSED" after it, and one self-test
 * hangs after its partial line. The console (stderr) shows everything live,
 * the hung test's last words included: that is the lesson of the seeds.
 * Then the demo reads its own log, the still-open line included, and prints
 * what the records hold in /dev/kmsg form.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <printk/printk.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *early_boot(void *arg)
{
	(void)arg;
	pr_notice("Booting Linux on physical CPU 0x0\n");
	pr_notice("Linux version 6.18.0-libprintk (demo@userspace) #1 SMP PREEMPT\n");
	pr_info("Command line: console=stderr loglevel=7\n");
	pr_info("Memory: 24576MB available\n");
	pr_warn("ACPI: BIOS bug: multiple FADT tables, using the first\n");
	pr_debug("this debug message is compiled out without -DDEBUG\n");
	printk(KERN_DEBUG "this one is stored at level 7: readers see it, the console does not\n");
	return NULL;
}

static void *devices(void *arg)
{
	(void)arg;
	sleep_ms(2);
	pr_info("PCI: Using configuration type 1 for base access\n");
	pr_err("i8042: No controller found\n");
	pr_info("Serial: 8250/16550 driver, 4 ports, IRQ sharing enabled\n");
	return NULL;
}

static sem_t clock_go, clock_done;

static void *clocksource(void *arg)
{
	(void)arg;
	sem_wait(&clock_go);
	pr_info("Refined TSC clocksource calibration: 2659.999 MHz.\n");
	pr_info("Switching to clocksource tsc\n");
	sem_post(&clock_done);
	return NULL;
}

static void *self_tests(void *arg)
{
	(void)arg;
	sleep_ms(10);
	pr_info("Testing tracer function: ");
	sleep_ms(150); /* the test runs; its name is already on the console */
	pr_cont("PASSED\n");

	pr_info("Testing dynamic ftrace ops #1: ");
	pr_cont("(1 0 1 1 0) ");
	pr_cont("(1 1 2 1 0) ");
	sem_post(&clock_go); /* another thread prints in the middle of our line */
	sem_wait(&clock_done);
	pr_cont("(2 1 3 1 22) ");
	pr_cont("(2 2 4 1 4044) ");
	pr_cont("PASSED\n");
	return NULL;
}

static sem_t never;

static void *frobnozzle(void *arg)
{
	(void)arg;
	printk("testing the frobnozzle ...");
	sem_wait(&never); /* do_test() hangs for ever */
	pr_cont(" OK\n");
	return NULL;
}

static void dump_log(void)
{
	static struct pk_record rec;
	struct pk_log *log = pk_printk_log();
	uint64_t seq = pk_log_first_seq(log);

	printf("\n--- what the log holds (seq %llu..), /dev/kmsg style ---\n",
	       (unsigned long long)seq);
	while (pk_log_read(log, seq, &rec, PK_READ_UNFINALIZED) == 0) {
		printf("%u,%llu,%llu,%c;%s%s\n", rec.facility << 3 | rec.level,
		       (unsigned long long)rec.seq, (unsigned long long)(rec.ts_nsec / 1000),
		       (rec.flags & PK_REC_CONT) ? 'c' : '-', rec.text,
		       rec.state == PK_REC_UNFINALIZED ? "   <-- open line: its writer never finished it" : "");
		seq = rec.seq + 1;
	}
}

int main(void)
{
	pthread_t t[5];

	sem_init(&clock_go, 0, 0);
	sem_init(&clock_done, 0, 0);
	sem_init(&never, 0, 0);
	fprintf(stderr, "--- the console (stderr), live ---\n");
	pthread_create(&t[0], NULL, early_boot, NULL);
	pthread_create(&t[1], NULL, devices, NULL);
	pthread_create(&t[2], NULL, clocksource, NULL);
	pthread_create(&t[3], NULL, self_tests, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);

	pthread_create(&t[4], NULL, frobnozzle, NULL);
	sleep_ms(300);
	fprintf(stderr, "\n--- the frobnozzle self-test hung; its name is on the console above ---\n");
	fflush(stderr);
	dump_log();
	fflush(stdout);
	return 0; /* the hung thread is still waiting; exit ends it */
}
