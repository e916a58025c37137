// SPDX-License-Identifier: MIT
/*
 * boot-demo - a program that boots like a kernel.
 *
 * Threads print boot messages at several levels, run self-tests that print
 * "Testing ...: " before the test and "PASSED" after it, and one self-test
 * hangs after its partial line. The console (stderr) shows everything live,
 * the hung test's last words included: a partial line held back from the
 * console would hide where the code hung (the LWN article "printk()
 * problems", 2012).
 * Then the demo reads its own log, the still-open line included, and prints
 * what the records hold in /dev/kmsg form.
 *
 * Part two shares a log through a file: two writer processes (this program
 * again, with PRINTK_OPTS=log_buf_file=...) print into one log while a
 * reader follows it live; one writer hangs after a partial line and is
 * killed; the post-mortem view of the file still shows its last words.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/kmsg.h>
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

/* A writer process of the shared log: PRINTK_OPTS sent its printk there. */
static int shared_writer(const char *who)
{
	for (int i = 1; i <= 4; i++) {
		pr_info("%s: step %d of 4\n", who, i);
		sleep_ms(60);
	}
	if (strcmp(who, "writer B") == 0) {
		printk("%s: testing the frobnozzle ...", who);
		for (;;)
			pause(); /* hangs until it is killed */
	}
	return 0;
}

static pid_t spawn_writer(const char *self, const char *who, const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		char opts[512];

		snprintf(opts, sizeof(opts), "log_buf_file=%s console=none", path);
		setenv("PRINTK_OPTS", opts, 1);
		execl(self, self, "--writer", who, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Print every record of the log file that can be read now. */
static int drain(struct kmsg_file *f, const char *indent)
{
	char line[2048];
	int n = 0;
	ssize_t len;

	while ((len = kmsg_read(f, line, sizeof(line))) > 0 || len == -EPIPE) {
		if (len > 0) {
			printf("%s%.*s", indent, (int)len, line);
			n++;
		}
	}
	fflush(stdout);
	return n;
}

static void shared_demo(const char *self)
{
	char path[64];
	struct pk_log *log;
	struct kmsg_file *f;
	int status;

	snprintf(path, sizeof(path), "/tmp/boot-demo-%d.log", (int)getpid());
	if (pk_log_open_file(&log, path, 16384, 0)) {
		fprintf(stderr, "boot-demo: cannot create %s\n", path);
		return;
	}
	pk_log_destroy(log); /* the file stays; the writers attach to it */

	printf("\n--- part two: two processes write %s, a reader follows it live ---\n", path);
	pid_t a = spawn_writer(self, "writer A", path);
	pid_t b = spawn_writer(self, "writer B", path);

	if (kmsg_open_file(&f, path, O_RDONLY | O_NONBLOCK) == 0) {
		for (int i = 0; i < 40; i++) {
			drain(f, "  live: ");
			sleep_ms(20);
		}
		kmsg_close(f);
	}
	kill(b, SIGKILL); /* writer B hung in its self-test: kill it */
	waitpid(a, &status, 0);
	waitpid(b, &status, 0);

	printf("\n--- writer B was killed mid-line; every writer is gone: the post-mortem view ---\n");
	if (kmsg_open_file(&f, path, O_RDONLY | O_NONBLOCK) == 0) {
		drain(f, "  post-mortem: ");
		kmsg_close(f);
	}
	unlink(path);
}

int main(int argc, char **argv)
{
	pthread_t t[5];

	if (argc == 3 && strcmp(argv[1], "--writer") == 0)
		return shared_writer(argv[2]);

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
	shared_demo(argv[0]);
	return 0; /* the hung thread is still waiting; exit ends it */
}
