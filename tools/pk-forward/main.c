// SPDX-License-Identifier: MIT
/*
 * pk-forward - follow a libprintk log file and send every record to a log
 * collector, keeping a cursor so that a restart resumes where the collector
 * last confirmed.
 *
 *   pk-forward [-c CURSOR] [--rfc3164] [--enterprise N] TARGET LOGFILE
 *
 * TARGET is a forwarding console's: journal[:PATH], unix:PATH,
 * udp:HOST:PORT, tcp:HOST:PORT or relp:HOST:PORT. The records go through a
 * forwarding console that is never registered (<printk/forward.h>), so the
 * wire forms are the consoles' own; names and times come from LOGFILE.
 *
 * At least once: the cursor (the log's identity and the next seq) is
 * written (a temporary file, fsync, rename, fsync of the directory) only
 * after pk_console_forward_commit() said the collector accepted everything
 * up to it; a commit that fails rewinds to the last cursor and sends again.
 * The log is opened read-only: the writers never wait for this reader.
 *
 * The cursor is often in a shared directory and pk-forward often root: the
 * cursor and its temporary are opened by the library's rule for symbolic
 * links (reader.h's pk_tool_open), and the cursor is read only from a
 * regular file (a FIFO there would block start-up in open(2) forever).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <printk/console.h>
#include <printk/forward.h>
#include <printk/log.h>

#include "reader.h"

#define COMMIT_RECORDS 1000 /* a commit after this many records... */
#define COMMIT_NS      500000000ull /* ...or this long after the first uncommitted one */
#define IDLE_SLEEP_NS  10000000L

static const char *prog = "pk-forward";
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct cursor {
	uint64_t id[2];
	uint64_t next_seq;
};

/* Words for what pk_tool_open() refused. */
static const char *file_strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link that another user controls (not followed)";
	case -EPROTO:
		return "not a regular file";
	default:
		return strerror(-err);
	}
}

/*
 * The cursor file: three lines,
 *   pk-forward cursor 1
 *   log <32 hex digits>
 *   next-seq <decimal>
 * 1 read, 0 no file, -1 malformed (@why says where).
 */
static int cursor_read(const char *path, struct cursor *c, const char **why)
{
	char buf[256];
	int fd = pk_tool_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0, PK_OPEN_REGULAR);
	ssize_t n;

	if (fd < 0) {
		if (fd == -ENOENT)
			return 0;
		*why = file_strerror(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		*why = strerror(errno);
		return -1;
	}
	buf[n] = '\0';

	char hex[33];
	unsigned long long seq;
	int used = 0;

	*why = "not a pk-forward cursor file";
	if (sscanf(buf, "pk-forward cursor 1\nlog %32[0-9a-f]\nnext-seq %20llu\n%n", hex, &seq,
		   &used) != 2 ||
	    used != n || strlen(hex) != 32 || buf[n - 1] != '\n')
		return -1;

	char half[17];

	memcpy(half, hex, 16);
	half[16] = '\0';
	c->id[0] = strtoull(half, NULL, 16);
	c->id[1] = strtoull(hex + 16, NULL, 16);
	c->next_seq = seq;
	return 1;
}

/*
 * Replace the cursor file: a new temporary file next to it, fsync, rename
 * over it, fsync of the directory. The temporary is made with O_EXCL and
 * never through a symbolic link (pk_tool_open: a link another user planted
 * at CURSOR.tmp would have root write into the file it names); a leftover
 * one of ours is removed first. 0, or -1 after one line on stderr.
 */
static int cursor_write(const char *path, const struct cursor *c)
{
	char tmp[PATH_MAX], dir[PATH_MAX], buf[128];
	int n = snprintf(buf, sizeof(buf), "pk-forward cursor 1\nlog %016" PRIx64 "%016" PRIx64
					   "\nnext-seq %" PRIu64 "\n",
			 c->id[0], c->id[1], c->next_seq);

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		fprintf(stderr, "%s: %s: cannot save the cursor: %s\n", prog, path,
			strerror(ENAMETOOLONG));
		return -1;
	}

	int fd = pk_tool_open(tmp, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0600, PK_OPEN_NEW);
	int err = 0;

	if (fd < 0) {
		fprintf(stderr, "%s: %s: cannot save the cursor: %s: %s\n", prog, path, tmp,
			fd == -EEXIST ? "exists and is not a file of ours (not removed)"
				      : file_strerror(fd));
		return -1;
	}
	if (write(fd, buf, (size_t)n) != n || fsync(fd) < 0)
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		fprintf(stderr, "%s: %s: cannot save the cursor: %s\n", prog, path, strerror(-err));
		return -1;
	}
	/* The rename itself must survive a crash. */
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');

	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

/* 1 if @path now names another file than @was, which is then @now. */
static int recreated(const char *path, const struct stat *was, struct stat *now)
{
	return stat(path, now) == 0 && (now->st_dev != was->st_dev || now->st_ino != was->st_ino);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] TARGET LOGFILE\n"
		"Send every record of a libprintk log file to a log collector.\n\n"
		"TARGET: journal[:PATH], unix:PATH, udp:HOST:PORT, tcp:HOST:PORT, relp:HOST:PORT\n\n"
		"  -c, --cursor FILE     keep the position in FILE; resume from it\n"
		"  -o, --once            stop at the end of the log instead of following it\n"
		"      --rfc3164         send RFC 3164 messages (default RFC 5424)\n"
		"      --enterprise N    the SD-ID's enterprise number (default 32473)\n"
		"  -h, --help            this text\n",
		prog);
}

static int make_console(struct console **con, const char *target, int format, unsigned ent)
{
	if (!strcmp(target, "journal"))
		return pk_console_journal_create(con, NULL);
	if (!strncmp(target, "journal:", 8))
		return pk_console_journal_create(con, target + 8);
	return pk_console_syslog_create(con, target, format, ent);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cursor", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'o' },
		{ "rfc3164", no_argument, NULL, 'R' },
		{ "enterprise", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cursor_path = NULL;
	int format = PK_SYSLOG_RFC5424, once = 0, c;
	unsigned enterprise = 0;

	while ((c = getopt_long(argc, argv, "c:oh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cursor_path = optarg;
			break;
		case 'o':
			once = 1;
			break;
		case 'R':
			format = PK_SYSLOG_RFC3164;
			break;
		case 'E': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v == 0 || v > UINT32_MAX) {
				fprintf(stderr, "%s: invalid enterprise number: %s\n", prog, optarg);
				return 1;
			}
			enterprise = (unsigned)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 1;
	}

	const char *target = argv[optind], *log_path = argv[optind + 1];
	struct console *con;
	struct pk_log *log;
	int err;

	if ((err = make_console(&con, target, format, enterprise))) {
		if (err == -EPROTONOSUPPORT)
			fprintf(stderr,
				"%s: %s: RELP is not available: built without librelp's header, "
				"or librelp.so.0 cannot be loaded\n",
				prog, target);
		else
			fprintf(stderr, "%s: %s: invalid target: %s\n", prog, target,
				strerror(-err));
		return 1;
	}
	if ((err = pk_log_open_file(&log, log_path, 0, PK_LOG_RDONLY))) {
		fprintf(stderr, "%s: %s: %s\n", prog, log_path, pk_log_strerror(err));
		pk_console_destroy(con);
		return 1;
	}
	pk_console_forward_set_source(con, log);

	/* The file this log came from: a new file at the path (the log was
	 * deleted and created again) is noticed when there is nothing to read. */
	struct stat st_open, st_now;

	if (stat(log_path, &st_open) < 0)
		memset(&st_open, 0, sizeof(st_open));

	struct cursor cur = { { 0, 0 }, 0 };
	uint64_t id[2];
	const char *why = NULL;

	pk_log_identity(log, id);
	if (cursor_path) {
		int r = cursor_read(cursor_path, &cur, &why);

		if (r < 0) {
			fprintf(stderr, "%s: %s: bad cursor file: %s\n", prog, cursor_path, why);
			pk_console_destroy(con);
			pk_log_destroy(log);
			return 1;
		}
		if (r > 0 && cur.id[0] == id[0] && cur.id[1] == id[1] &&
		    cur.next_seq > pk_log_next_seq(log)) {
			fprintf(stderr,
				"%s: %s: bad cursor file: next-seq %" PRIu64
				" is past the end of the log (%" PRIu64 ")\n",
				prog, cursor_path, cur.next_seq, pk_log_next_seq(log));
			pk_console_destroy(con);
			pk_log_destroy(log);
			return 1;
		}
		if (r > 0 && (cur.id[0] != id[0] || cur.id[1] != id[1])) {
			fprintf(stderr,
				"%s: %s: the log was recreated since the cursor was saved: "
				"starting from its first record\n",
				prog, log_path);
			cur.next_seq = 0;
		}
	}
	cur.id[0] = id[0];
	cur.id[1] = id[1];

	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	static struct pk_record rec;
	uint64_t seq = cur.next_seq, pending = 0, first_pending_ns = 0;
	int status = 0;

	while (!stop) {
		err = pk_log_read(log, seq, &rec, 0);
		if (err == 0) {
			if (rec.seq > seq) {
				uint64_t lost = rec.seq - seq;

				fprintf(stderr,
					"%s: %" PRIu64 " records lost: overwritten before they "
					"were forwarded (seq %" PRIu64 " to %" PRIu64 ")\n",
					prog, lost, seq, rec.seq - 1);
				pk_console_forward_lost(con, lost);
				seq = rec.seq;
			}
			if (pk_console_forward_send(con, &rec) != 0) {
				/* The collector is away: offered again, after a
				 * pause (the console paces its reconnections). */
				struct timespec ts = { 0, 5 * IDLE_SLEEP_NS };

				nanosleep(&ts, NULL);
				continue;
			}
			seq = rec.seq + 1;
			if (!pending++)
				first_pending_ns = now_ns();
			if (pending < COMMIT_RECORDS && now_ns() - first_pending_ns < COMMIT_NS)
				continue;
		} else if (err != -EAGAIN) {
			fprintf(stderr, "%s: %s: %s\n", prog, log_path, pk_log_strerror(err));
			status = 1;
			break;
		} else if (!pending && recreated(log_path, &st_open, &st_now)) {
			struct pk_log *nlog;

			if (pk_log_open_file(&nlog, log_path, 0, PK_LOG_RDONLY) == 0) {
				st_open = st_now;
				pk_log_destroy(log);
				log = nlog;
				pk_console_forward_set_source(con, log);
				pk_log_identity(log, cur.id);
				fprintf(stderr,
					"%s: %s: the log was recreated: starting from its first "
					"record\n",
					prog, log_path);
				seq = cur.next_seq = 0;
				continue;
			}
		} else if (once && !pending) {
			break;
		}
		if (pending) {
			if (pk_console_forward_commit(con) == 0) {
				cur.next_seq = seq;
				if (cursor_path && cursor_write(cursor_path, &cur)) {
					status = 1;
					pending = 0; /* said once: not tried again below */
					break;
				}
			} else {
				seq = cur.next_seq; /* not confirmed: sent again */
			}
			pending = 0;
			continue;
		}
		struct timespec ts = { 0, IDLE_SLEEP_NS };

		nanosleep(&ts, NULL);
	}
	if (pending && pk_console_forward_commit(con) == 0) {
		cur.next_seq = seq;
		if (cursor_path && cursor_write(cursor_path, &cur))
			status = 1;
	}
	pk_console_destroy(con);
	pk_log_destroy(log);
	return status;
}
