// SPDX-License-Identifier: MIT
/*
 * bench/forward_cost - what a forwarding console costs the writer: one
 * thread, the same pr_info() message, against a real rsyslogd this program
 * starts in the foreground (private config and work directory in $TMPDIR,
 * imtcp on a free 127.0.0.1 port, one file action).
 *
 *   filtered   console_loglevel 1: the syslog console filters level 6 out.
 *   forwarded  console_loglevel 7: every record goes to rsyslogd through
 *              the console "syslog:tcp:127.0.0.1:PORT" (RFC 5424, octet
 *              counting). The console is threaded: printk stores and wakes
 *              its thread, which sends.
 *   stopped    the same while rsyslogd is stopped (SIGSTOP): once the
 *              sockets' buffers are full the console's thread cannot send,
 *              records wait in the ring (and are overwritten), and printk
 *              must not wait for it.
 *
 * Only the writer's loop is timed (ns per printk), in wall time and in
 * the writer thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the console's
 * thread and rsyslogd share the machine's CPUs with it, so the wall time
 * also counts the time the writer waited for a CPU, the CPU time only
 * what printk itself did. The runs
 * of filtered and forwarded are interleaved, then those of filtered and
 * stopped; each figure is the median of its runs. Between forwarded runs
 * the console drains (pr_flush, untimed). --quick runs shorter.
 * Goal: forwarded <= 1.2 x filtered; stopped within 10% of forwarded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/printk.h>

#include "bench.h"

#define RUNS 7

extern char **environ;

static long iters = 400000;
static char dir[4096];
static pid_t rs_pid = -1;

static const char *what[4] = { "request", "packet", "job", "frame" };

static void run_printk(long n)
{
	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3],
			(unsigned long)i * 3);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the writer's thread per printk in the last timed() loop. */
static double last_cpu;

/* ns per printk (wall) of one timed loop under console_loglevel @level. */
static double timed(int level)
{
	pk_set_console_loglevel(level);

	uint64_t c0 = thread_cpu_ns();
	uint64_t t0 = mono_ns();

	run_printk(iters);

	uint64_t t1 = mono_ns();

	last_cpu = (double)(thread_cpu_ns() - c0) / (double)iters;
	return (double)(t1 - t0) / (double)iters;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) && !getsockname(fd, (struct sockaddr *)&a, &l))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int port_open(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int ok;

	if (fd < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Start rsyslogd -n with a private config; 0 once it accepts on @port. */
static int start_rsyslogd(int port, char *why, size_t whylen)
{
	char conf[4200], logp[4200], pidp[4200], spool[4200], out[4200];
	const char *bin = access("/usr/sbin/rsyslogd", X_OK) == 0 ? "/usr/sbin/rsyslogd" : "rsyslogd";
	posix_spawn_file_actions_t fa;
	FILE *f;

	path_in(conf, sizeof(conf), "rsyslog.conf");
	path_in(logp, sizeof(logp), "rsyslogd.log");
	path_in(pidp, sizeof(pidp), "rsyslogd.pid");
	path_in(spool, sizeof(spool), "spool");
	path_in(out, sizeof(out), "out.txt");
	if (mkdir(spool, 0700) || !(f = fopen(conf, "w"))) {
		snprintf(why, whylen, "%s: %s", spool, strerror(errno));
		return -1;
	}
	fprintf(f,
		"global(workDirectory=\"%s\" net.enableDNS=\"off\" processInternalMessages=\"on\")\n"
		"module(load=\"imtcp\")\n"
		"input(type=\"imtcp\" address=\"127.0.0.1\" port=\"%d\" "
		"supportOctetCountedFraming=\"on\")\n"
		"template(name=\"m\" type=\"string\" string=\"%%msg%%\\n\")\n"
		"*.* action(type=\"omfile\" file=\"%s\" template=\"m\")\n",
		spool, port, out);
	fclose(f);

	char *argv[] = { (char *)bin, "-n", "-f", conf, "-i", pidp, NULL };

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	int err = posix_spawnp(&rs_pid, bin, &fa, NULL, argv, environ);

	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		rs_pid = -1;
		snprintf(why, whylen, "%s: %s", bin, strerror(err));
		return -1;
	}
	for (int i = 0; i < 200; i++) {
		int st;

		if (waitpid(rs_pid, &st, WNOHANG) == rs_pid) {
			rs_pid = -1;
			snprintf(why, whylen, "rsyslogd exited at start (see its output in %s)", logp);
			return -1;
		}
		if (port_open(port))
			return 0;
		usleep(25000);
	}
	snprintf(why, whylen, "rsyslogd did not listen on 127.0.0.1:%d within 5 s", port);
	return -1;
}

static void stop_rsyslogd(void)
{
	if (rs_pid <= 0)
		return;
	kill(rs_pid, SIGCONT);
	kill(rs_pid, SIGTERM);
	waitpid(rs_pid, NULL, 0);
	rs_pid = -1;
}

static void cleanup_dir(void)
{
	static const char *names[] = { "rsyslog.conf", "rsyslogd.log", "rsyslogd.pid", "out.txt" };
	char p[4200];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path_in(p, sizeof(p), names[i]);
		unlink(p);
	}
	/* rsyslogd may leave state files in its work directory */
	char cmd[4300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "bench/forward_cost: could not remove %s\n", dir);
}

static uint64_t sent(const struct console *con)
{
	struct pk_forward_stats st;

	pk_console_forward_stats(con, &st);
	return st.sent;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	struct console *con;
	char why[4400], target[64];
	struct series filt = { 0 }, fwd = { 0 }, filt2 = { 0 }, stop = { 0 };
	struct series filt_cpu = { 0 }, fwd_cpu = { 0 }, filt2_cpu = { 0 }, stop_cpu = { 0 };

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		iters = 50000;
	snprintf(dir, sizeof(dir), "%s/forward-cost.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench/forward_cost: %s: %s\n", dir, strerror(errno));
		return 1;
	}

	int port = free_port();

	if (port < 0 || start_rsyslogd(port, why, sizeof(why))) {
		printf("bench/forward_cost: rsyslogd cannot start: %s\n",
		       port < 0 ? "no free 127.0.0.1 port" : why);
		stop_rsyslogd();
		return 1;
	}
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", port);
	pk_unregister_console(pk_console_stderr());
	if (pk_console_syslog_create(&con, target, PK_SYSLOG_RFC5424, 0) || pk_register_console(con)) {
		printf("bench/forward_cost: cannot make the console syslog:%s\n", target);
		stop_rsyslogd();
		cleanup_dir();
		return 1;
	}

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	printf("bench/forward_cost: %ld printk x %d runs (median), 1 writer, %ld CPUs, log %zu bytes, "
	       "console syslog:%s\n",
	       iters, RUNS, ncpu, pk_log_buf_len(pk_printk_log()), target);

	/* warm up, and make the connection */
	timed(1);
	timed(7);
	pr_flush(10000, 1);
	for (int r = 0; r < RUNS; r++) {
		add(&filt, timed(1));
		add(&filt_cpu, last_cpu);
		add(&fwd, timed(7));
		add(&fwd_cpu, last_cpu);
		pr_flush(10000, 1);
	}

	uint64_t sent_fwd = sent(con);

	/* Stop the collector, then print until the console's thread cannot
	 * send any more (the sockets' buffers are full). */
	kill(rs_pid, SIGSTOP);
	for (int i = 0; i < 100; i++) {
		uint64_t before = sent(con);

		timed(7);
		usleep(200000);
		if (sent(con) == before)
			break;
	}

	uint64_t sent_before = sent(con);

	for (int r = 0; r < RUNS; r++) {
		add(&filt2, timed(1));
		add(&filt2_cpu, last_cpu);
		add(&stop, timed(7));
		add(&stop_cpu, last_cpu);
	}

	uint64_t sent_stopped = sent(con) - sent_before;
	struct pk_forward_stats st;

	pk_console_forward_stats(con, &st);

	double a = median(&filt), b = median(&fwd), a2 = median(&filt2), c = median(&stop);

	printf("filtered   (console_loglevel 1)            %8.1f ns/msg  (min %.1f, max %.1f)\n", a,
	       minimum(&filt), maximum(&filt));
	printf("forwarded  to rsyslogd over TCP            %8.1f ns/msg  (min %.1f, max %.1f)\n", b,
	       minimum(&fwd), maximum(&fwd));
	printf("filtered   (again, rsyslogd stopped)       %8.1f ns/msg  (min %.1f, max %.1f)\n", a2,
	       minimum(&filt2), maximum(&filt2));
	printf("stopped    rsyslogd stopped (SIGSTOP)      %8.1f ns/msg  (min %.1f, max %.1f)\n", c,
	       minimum(&stop), maximum(&stop));
	double ac = median(&filt_cpu), bc = median(&fwd_cpu), a2c = median(&filt2_cpu),
	       cc = median(&stop_cpu);

	printf("writer's thread CPU time per printk (median): filtered %.1f, forwarded %.1f, "
	       "filtered again %.1f, stopped %.1f ns\n",
	       ac, bc, a2c, cc);
	printf("ratio forwarded / filtered = %.2f wall, %.2f writer CPU (goal <= 1.20)\n", b / a,
	       bc / ac);
	printf("ratio stopped / filtered   = %.2f\n", c / a);
	printf("ratio stopped / forwarded  = %.2f (goal 0.90 .. 1.10)\n", c / b);
	printf("console: %llu sent while forwarding, %llu while stopped; %llu dropped, %llu connects\n",
	       (unsigned long long)sent_fwd, (unsigned long long)sent_stopped,
	       (unsigned long long)st.dropped, (unsigned long long)st.connects);

	/* Let rsyslogd go before the console is taken down: exit would
	 * otherwise wait for a thread that cannot send. */
	kill(rs_pid, SIGCONT);
	pk_unregister_console(con);
	pk_console_destroy(con);
	stop_rsyslogd();
	cleanup_dir();
	return 0;
}
