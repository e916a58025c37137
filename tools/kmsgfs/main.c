// SPDX-License-Identifier: MIT
/*
 * main.c - pk-kmsgfs's command line and its two ways to run:
 *
 *   pk-kmsgfs [options] LOGFILE MOUNTPOINT
 *	serve LOGFILE as MOUNTPOINT/kmsg (and each --log NAME=FILE as
 *	MOUNTPOINT/NAME.kmsg) until SIGINT/SIGTERM/SIGHUP or an unmount;
 *   pk-kmsgfs [options] --exec LOGFILE -- COMMAND [ARG]...
 *	run COMMAND in a private mount namespace where /dev/kmsg is LOGFILE's
 *	file; exit with COMMAND's status.
 *
 * Signals arrive through a self-pipe, read by the file system's event loop
 * (kfs_run), so every reaction happens in the one thread that answers FUSE
 * requests. The library's printk start-up is kept away
 * (PK_READER_ONLY_PROGRAM): the logs served are opened here, read-only
 * unless a client writes.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/log.h>
#include <printk/printk.h>

#include "kmsgfs.h"
#include "reader.h"

PK_READER_ONLY_PROGRAM;

static int sig_pipe[2] = { -1, -1 };
/* The signals caught here, and what they did before (for --exec's child). */
static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE };
static struct sigaction caught_before[sizeof(caught) / sizeof(caught[0])];

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " pk-kmsgfs [options] <logfile> <mountpoint>\n"
	      " pk-kmsgfs [options] --exec <logfile> -- <command> [<argument>...]\n"
	      "\n"
	      "Serve a libprintk log file as a /dev/kmsg file through FUSE.\n"
	      "\n"
	      "Options:\n"
	      " -x, --exec               run <command> in a private mount namespace where\n"
	      "                            /dev/kmsg is the log\n"
	      " -l, --log <name>=<file>  also serve <file> as <mountpoint>/<name>.kmsg\n"
	      " -r, --read-only          refuse writes (EPERM)\n"
	      "     --caller             records carry the caller field (caller=T<tid>)\n"
	      " -d, --debug              libfuse's request trace on stderr\n"
	      " -h, --help               display this help\n"
	      " -V, --version            display version\n"
	      "\n"
	      "For more details see pk-kmsgfs(1).\n",
	      out);
}

static void __attribute__((noreturn, format(printf, 1, 2))) fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("pk-kmsgfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void add_log(struct kfs *fs, const char *name, const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	int err;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		fatal("%s: %s", path, strerror(EISDIR));
	/* Readers open the file by name at each open(): absolute, so that
	 * nothing depends on the working directory. */
	if (!realpath(path, real))
		fatal("cannot open %s: %s", path, strerror(errno));
	err = kfs_add_log(fs, name, real);
	if (err == -EEXIST)
		fatal("%s: served twice", name);
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		fatal("cannot open %s: %s", path, strerror(-err));
	if (err)
		fatal("%s: %s", path, pk_log_tool_strerror(err));
}

static bool valid_name(const char *s, size_t n)
{
	if (!n || n > KFS_NAME_MAX - 5 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	ssize_t r = write(sig_pipe[1], &c, 1);

	(void)r;
	errno = saved;
}

static void catch_signals(bool child)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		fatal("pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		sa.sa_handler = caught[i] == SIGPIPE ? SIG_IGN : on_signal;
		if (caught[i] != SIGCHLD || child)
			sigaction(caught[i], &sa, &caught_before[i]);
		else
			sigaction(caught[i], NULL, &caught_before[i]);
	}
}

/* ------------------------------------------------------- mount mode -- */

static bool mount_ctl(struct kfs *fs, void *arg)
{
	unsigned char c;

	(void)arg;
	while (read(sig_pipe[0], &c, 1) == 1) {
	}
	kfs_stop_readers(fs);
	return true;
}

static int run_mount(struct kfs *fs, const char *mountpoint, bool debug)
{
	struct stat st;

	/* Said here in one line, before libfuse says it in its words. */
	if (stat(mountpoint, &st) != 0)
		fatal("cannot mount on %s: %s", mountpoint, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		fatal("cannot mount on %s: %s", mountpoint, strerror(ENOTDIR));
	catch_signals(false);
	if (kfs_mount(fs, mountpoint, debug) != 0)
		exit(1); /* kfs_mount said why */

	int err = kfs_run(fs, sig_pipe[0], mount_ctl, NULL);

	kfs_destroy(fs, true);
	return err ? 1 : 0;
}

/* -------------------------------------------------------- exec mode -- */

struct exec_state {
	pid_t child;
	int status;
	bool exited;
	bool signalled; /* a stop signal was passed on already */
};

static bool exec_ctl(struct kfs *fs, void *arg)
{
	struct exec_state *x = arg;
	unsigned char c;

	while (read(sig_pipe[0], &c, 1) == 1) {
		if (c == SIGCHLD)
			continue;
		/* Pass the first signal on (blocked readers fail rather than
		 * hang); a second one means now: SIGKILL. */
		kill(x->child, x->signalled ? SIGKILL : c);
		x->signalled = true;
		kfs_stop_readers(fs);
	}
	if (waitpid(x->child, &x->status, WNOHANG) == x->child) {
		x->exited = true;
		return true;
	}
	return false;
}

/* In the child, between fork and exec: only system calls and writes. */
static void __attribute__((noreturn)) child_fail(const char *what, const char *arg, int err)
{
	dprintf(2, "pk-kmsgfs: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "", strerror(err));
	_exit(err == ENOENT && !strcmp(what, "cannot run") ? 127 : 126);
}

static int run_exec(struct kfs *fs, char **cmd, bool debug)
{
	char dir[] = "/tmp/pk-kmsgfs.XXXXXX";
	char file[sizeof(dir) + 8];
	struct exec_state x = { 0 };

	if (unshare(CLONE_NEWNS) != 0)
		fatal("cannot make a mount namespace: %s (root needed)", strerror(errno));
	/* Nothing mounted here leaks to the parent namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fatal("cannot make / private: %s", strerror(errno));
	if (!mkdtemp(dir))
		fatal("cannot make a mount point in /tmp: %s", strerror(errno));
	snprintf(file, sizeof(file), "%s/kmsg", dir);
	catch_signals(true);
	if (kfs_mount(fs, dir, debug) != 0) {
		rmdir(dir);
		exit(1); /* kfs_mount said why */
	}

	sigset_t all, old;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	x.child = fork();
	if (x.child < 0) {
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		fatal("fork: %s", strerror(errno));
	}
	if (x.child == 0) {
		/* COMMAND gets the dispositions pk-kmsgfs was given. */
		for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
			sigaction(caught[i], &caught_before[i], NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* The parent answers the lookups this needs. The bind mount
		 * keeps the file system alive after its own mount point is
		 * gone, so nothing is left in /tmp while COMMAND runs. */
		if (mount(file, "/dev/kmsg", NULL, MS_BIND, NULL) != 0)
			child_fail("cannot bind over /dev/kmsg", NULL, errno);
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		execvp(cmd[0], cmd);
		child_fail("cannot run", cmd[0], errno);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	int err = kfs_run(fs, sig_pipe[0], exec_ctl, &x);

	if (!x.exited) {
		/* The file system ended first: the command keeps its status. */
		kill(x.child, SIGTERM);
		while (waitpid(x.child, &x.status, 0) < 0 && errno == EINTR) {
		}
	}
	umount2("/dev/kmsg", MNT_DETACH);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	kfs_destroy(fs, false);
	if (err)
		return 1;
	if (WIFEXITED(x.status))
		return WEXITSTATUS(x.status);
	return 128 + WTERMSIG(x.status);
}

/* ------------------------------------------------------------- main -- */

int main(int argc, char **argv)
{
	enum { OPT_CALLER = 256 };
	static const struct option longopts[] = {
		{ "exec", no_argument, NULL, 'x' },	{ "log", required_argument, NULL, 'l' },
		{ "read-only", no_argument, NULL, 'r' }, { "caller", no_argument, NULL, OPT_CALLER },
		{ "debug", no_argument, NULL, 'd' },	{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },	{ NULL, 0, NULL, 0 },
	};
	bool exec_mode = false, read_only = false, debug = false;
	char **extra = calloc((size_t)argc + 1, sizeof(char *));
	int nextra = 0, c;

	if (!extra)
		fatal("%s", strerror(ENOMEM));
	while ((c = getopt_long(argc, argv, "+xl:rdhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			exec_mode = true;
			break;
		case 'l': {
			const char *eq = strchr(optarg, '=');

			if (!eq || !valid_name(optarg, (size_t)(eq - optarg)) || !eq[1])
				fatal("--log wants NAME=FILE, NAME of letters, digits, '-', '_', '.': %s",
				      optarg);
			extra[nextra++] = optarg;
			break;
		}
		case 'r':
			read_only = true;
			break;
		case OPT_CALLER:
			pk_set_printk_caller(1);
			break;
		case 'd':
			debug = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pk-kmsgfs from libprintk %s\n", KMSGFS_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'pk-kmsgfs --help' for more information.\n");
			return 1;
		}
	}

	int rest = argc - optind;

	if (exec_mode) {
		/* LOGFILE -- COMMAND...; getopt stopped at LOGFILE ("+"). */
		if (rest < 3 || strcmp(argv[optind + 1], "--"))
			fatal("--exec wants LOGFILE -- COMMAND [ARGUMENT]...");
		if (nextra)
			fatal("--log serves files beside kmsg at a mount point: not with --exec");
	} else if (rest != 2) {
		fatal("wants LOGFILE MOUNTPOINT (or --exec LOGFILE -- COMMAND); see --help");
	}

	struct kfs *fs = kfs_new(read_only);

	if (!fs)
		fatal("%s", strerror(ENOMEM));
	add_log(fs, "kmsg", argv[optind]);
	for (int i = 0; i < nextra; i++) {
		char name[KFS_NAME_MAX + 1];
		const char *eq = strchr(extra[i], '=');

		snprintf(name, sizeof(name), "%.*s.kmsg", (int)(eq - extra[i]), extra[i]);
		add_log(fs, name, eq + 1);
	}
	free(extra);
	if (exec_mode)
		return run_exec(fs, argv + optind + 2, debug);
	return run_mount(fs, argv[optind + 1], debug);
}
