// SPDX-License-Identifier: MIT
/*
 * kmsgfs-probe.c - the client side of pk-kmsgfs's tests (a test tool,
 * never installed): the system calls a /dev/kmsg reader makes, one
 * command each, with every result printed as a word the test compares
 * ("11 bytes", "EINVAL", "POLLIN", ...), and records stored into a log
 * through the public API.
 *
 *   kmsgfs-probe store LOG SIZE LEVEL TEXT...  one record per TEXT at LEVEL
 *                                   (facility kern; LOG created with a text
 *                                   area of SIZE bytes if missing)
 *   kmsgfs-probe record LOG SIZE FACILITY LEVEL TEXT [KEY=VALUE]...
 *                                   one record with that dictionary
 *   kmsgfs-probe reads FILE SIZE... open O_RDONLY|O_NONBLOCK, one read of
 *                                   each SIZE: "N bytes: RECORD" or the errno
 *   kmsgfs-probe dump FILE          every record up to EAGAIN, each followed
 *                                   by a NUL byte (udmesg-testgen kmsg's form)
 *   kmsgfs-probe block FILE         a blocking read: the record, or the errno
 *   kmsgfs-probe tail FILE          read to the end ("at end"), then one
 *                                   blocking read (fcntl clears O_NONBLOCK)
 *   kmsgfs-probe poll FILE MS       read to the end, poll() for MS ms: the
 *                                   events ("POLLIN ...") or "timeout", then
 *                                   one read
 *   kmsgfs-probe write FILE TEXT    write(TEXT): "N written" or the errno
 *   kmsgfs-probe seek FILE WHENCE... lseek(0, WHENCE: set/end/data/cur/hole)
 *                                   each followed by one read
 *   kmsgfs-probe hold FILE          open and read nothing until stdin ends
 *   kmsgfs-probe follow FILE N      read to the end ("at end"), then N
 *                                   blocking reads, each printed
 *   kmsgfs-probe step FILE          open O_RDONLY|O_NONBLOCK and make one
 *                                   read (8192 bytes) per line of stdin
 *   kmsgfs-probe rate FILE REPS     read every record REPS times (lseek
 *                                   SEEK_SET between): "RECORDS records NS ns"
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <printk/log.h>

static const char *errname(int e)
{
	switch (e) {
	case EINVAL:
		return "EINVAL";
	case EAGAIN:
		return "EAGAIN";
	case EPIPE:
		return "EPIPE";
	case EINTR:
		return "EINTR";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EBADF:
		return "EBADF";
	case ESPIPE:
		return "ESPIPE";
	case ESTALE:
		return "ESTALE";
	case EUCLEAN:
		return "EUCLEAN";
	case EIO:
		return "EIO";
	case ENOTCONN:
		return "ENOTCONN";
	case ENOENT:
		return "ENOENT";
	case EPROTO:
		return "EPROTO";
	case ENOSPC:
		return "ENOSPC";
	case EBADMSG:
		return "EBADMSG";
	default:
		return strerror(e);
	}
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		printf("open: %s\n", errname(errno));
		exit(2);
	}
	return fd;
}

/* One read: prints the result; returns the byte count or -errno. */
static ssize_t one_read(int fd, size_t size)
{
	static char buf[65536];
	ssize_t n = read(fd, buf, size < sizeof(buf) ? size : sizeof(buf));

	if (n < 0) {
		int e = errno;

		printf("%s\n", errname(e));
		return -e;
	}
	printf("%zd bytes: %.*s", n, (int)n, buf);
	if (n == 0 || buf[n - 1] != '\n')
		printf("\n");
	return n;
}

static int cmd_store(char **argv, int argc)
{
	struct pk_log *log;
	int err = pk_log_open_file(&log, argv[0], strtoul(argv[1], NULL, 0), 0);

	if (err) {
		fprintf(stderr, "kmsgfs-probe: %s: %s\n", argv[0], pk_log_strerror(err));
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		err = pk_log_store(log, 0, atoi(argv[2]), argv[i], strlen(argv[i]), NULL, 0);
		if (err) {
			fprintf(stderr, "kmsgfs-probe: store: %s\n", pk_log_strerror(err));
			return 1;
		}
	}
	pk_log_destroy(log);
	return 0;
}

static int cmd_record(char **argv, int argc)
{
	struct pk_log *log;
	char dict[PK_DICT_MAX];
	size_t dlen = 0;
	int err = pk_log_open_file(&log, argv[0], strtoul(argv[1], NULL, 0), 0);

	if (err) {
		fprintf(stderr, "kmsgfs-probe: %s: %s\n", argv[0], pk_log_strerror(err));
		return 1;
	}
	for (int i = 5; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (dlen + n > sizeof(dict))
			break;
		memcpy(dict + dlen, argv[i], n);
		dlen += n;
	}
	if (dlen)
		dlen--; /* separated, not terminated, by NUL bytes */
	err = pk_log_store(log, atoi(argv[2]), atoi(argv[3]), argv[4], strlen(argv[4]), dict, dlen);
	if (err)
		fprintf(stderr, "kmsgfs-probe: store: %s\n", pk_log_strerror(err));
	pk_log_destroy(log);
	return err != 0;
}

static int cmd_dump(const char *path)
{
	int fd = open_or_die(path, O_RDONLY | O_NONBLOCK);
	char buf[8192];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EPIPE)
			continue;
		if (n < 0) {
			if (errno != EAGAIN)
				fprintf(stderr, "kmsgfs-probe: read: %s\n", errname(errno));
			return errno == EAGAIN ? 0 : 1;
		}
		fwrite(buf, 1, (size_t)n, stdout);
		fputc('\0', stdout);
	}
}

static int cmd_poll(const char *path, int ms)
{
	int fd = open_or_die(path, O_RDONLY | O_NONBLOCK);
	char buf[8192];

	while (read(fd, buf, sizeof(buf)) >= 0 || errno == EPIPE) {
	}
	if (errno != EAGAIN) {
		printf("%s\n", errname(errno));
		return 1;
	}
	printf("at end\n");
	fflush(stdout);

	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r = poll(&p, 1, ms);

	if (r < 0) {
		printf("poll: %s\n", errname(errno));
		return 1;
	}
	if (r == 0) {
		printf("timeout\n");
	} else {
		printf("%s%s%s%s\n", p.revents & POLLIN ? "POLLIN" : "",
		       p.revents & POLLRDNORM ? " POLLRDNORM" : "",
		       p.revents & POLLERR ? " POLLERR" : "",
		       p.revents & POLLPRI ? " POLLPRI" : "");
	}
	one_read(fd, 8192);
	return 0;
}

static int cmd_seek(const char *path, char **whence, int n)
{
	int fd = open_or_die(path, O_RDONLY | O_NONBLOCK);

	for (int i = 0; i < n; i++) {
		int w = !strcmp(whence[i], "set")    ? SEEK_SET
			: !strcmp(whence[i], "end")  ? SEEK_END
			: !strcmp(whence[i], "data") ? SEEK_DATA
			: !strcmp(whence[i], "cur")  ? SEEK_CUR
						     : SEEK_HOLE;
		off_t r = lseek(fd, 0, w);

		if (r < 0)
			printf("lseek %s: %s\n", whence[i], errname(errno));
		else
			printf("lseek %s\n", whence[i]);
		one_read(fd, 8192);
	}
	return 0;
}

static int cmd_rate(const char *path, int reps)
{
	int fd = open_or_die(path, O_RDONLY | O_NONBLOCK);
	char buf[8192];
	unsigned long long records = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < reps; i++) {
		if (lseek(fd, 0, SEEK_SET) < 0) {
			printf("lseek: %s\n", errname(errno));
			return 1;
		}
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n >= 0)
				records++;
			else if (errno != EPIPE)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%llu records %lld ns\n", records,
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 6 && !strcmp(argv[1], "store"))
		return cmd_store(argv + 2, argc - 2);
	if (argc >= 7 && !strcmp(argv[1], "record"))
		return cmd_record(argv + 2, argc - 2);
	if (argc >= 4 && !strcmp(argv[1], "reads")) {
		int fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);

		for (int i = 3; i < argc; i++)
			one_read(fd, strtoul(argv[i], NULL, 0));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return cmd_dump(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "block")) {
		int fd = open_or_die(argv[2], O_RDONLY);

		return one_read(fd, 8192) < 0;
	}
	if (argc == 3 && !strcmp(argv[1], "tail")) {
		int fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		char buf[8192];

		while (read(fd, buf, sizeof(buf)) >= 0 || errno == EPIPE) {
		}
		printf("at end\n");
		fcntl(fd, F_SETFL, 0);
		return one_read(fd, 8192) < 0;
	}
	if (argc == 4 && !strcmp(argv[1], "poll"))
		return cmd_poll(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "write")) {
		int fd = open_or_die(argv[2], O_WRONLY);
		ssize_t n = write(fd, argv[3], strlen(argv[3]));

		if (n < 0)
			printf("%s\n", errname(errno));
		else
			printf("%zd written\n", n);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "seek"))
		return cmd_seek(argv[2], argv + 3, argc - 3);
	if (argc == 4 && !strcmp(argv[1], "rate"))
		return cmd_rate(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "follow")) {
		int fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);

		ssize_t n;

		while ((n = one_read(fd, 8192)) >= 0 || n == -EPIPE) {
		}
		if (n != -EAGAIN)
			return 1;
		printf("at end\n");
		fcntl(fd, F_SETFL, 0);
		for (int i = atoi(argv[3]); i > 0; i--)
			one_read(fd, 8192);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "step")) {
		int fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		char line[64];

		printf("open\n");
		while (fgets(line, sizeof(line), stdin))
			one_read(fd, 8192);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "hold")) {
		int fd = open_or_die(argv[2], O_RDONLY);
		char c;

		printf("holding\n");
		while (read(0, &c, 1) > 0) {
		}
		close(fd);
		return 0;
	}
	fprintf(stderr, "usage: kmsgfs-probe "
			"store|record|reads|dump|block|tail|poll|write|seek|hold|follow|step|rate ...\n");
	return 2;
}
