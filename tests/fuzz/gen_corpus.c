// SPDX-License-Identifier: MIT
/*
 * gen_corpus.c - writes the seed corpus of fuzz_logfile: small, valid log
 * files made with the library itself, each showing one thing a reader must
 * handle, with their trailing zero bytes cut (fuzz_logfile zero-extends an
 * input that is refused as truncated, so a cut seed reads in full).
 *
 *   empty       a fresh 4 KiB log, no record
 *   records     a few records with dictionaries, levels and facilities
 *   open_line   the newest record is an open line (committed, not final)
 *   wrapped     records of mixed sizes, the ring wrapped several times
 *   dead        writers killed at each test point: a claimed record (a
 *               hole to be), an unclaimed slot, a record not committed
 *   big_record  maximum text and dictionary, 8 KiB log
 *
 * usage: gen_corpus OUTDIR    (the committed files are in tests/fuzz/corpus)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <printk/log.h>

#include "log_internal.h"

static char tmpdir[] = "/tmp/pk_gen_corpus.XXXXXX";
static const char *outdir;

static void die(const char *what, int err)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, err ? pk_log_strerror(err) : strerror(errno));
	exit(1);
}

static struct pk_log *fresh(const char *name, size_t len, char *path, size_t size)
{
	struct pk_log *log;
	int err;

	snprintf(path, size, "%s/%s", tmpdir, name);
	unlink(path);
	err = pk_log_open_file(&log, path, len, 0);
	if (err)
		die(path, err);
	return log;
}

static void store(struct pk_log *log, int fac, int level, const char *text, const char *dict,
		  size_t dict_len)
{
	int err = pk_log_store(log, fac, level, text, strlen(text), dict, dict_len);

	if (err)
		die("store", err);
}

/* Copy @path to OUTDIR/@name without its trailing zero bytes. */
static void emit(const char *path, const char *name)
{
	FILE *in = fopen(path, "rb");
	struct stat st;

	if (!in || fstat(fileno(in), &st) < 0)
		die(path, 0);

	unsigned char *buf = malloc((size_t)st.st_size);

	if (!buf || fread(buf, 1, (size_t)st.st_size, in) != (size_t)st.st_size)
		die(path, 0);
	fclose(in);

	size_t len = (size_t)st.st_size;

	while (len > 0 && buf[len - 1] == 0)
		len--;
	len = (len + 15) & ~(size_t)15;

	char out[PATH_MAX];

	snprintf(out, sizeof(out), "%s/%s", outdir, name);

	FILE *f = fopen(out, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		die(out, 0);
	printf("%-12s %6zu bytes (file %lld)\n", name, len, (long long)st.st_size);
	free(buf);
}

static enum prb_testpoint kill_at;

static void die_here(enum prb_testpoint tp)
{
	if (tp == kill_at)
		raise(SIGKILL);
}

static void writer_dies_at(struct pk_log *log, enum prb_testpoint tp, const char *text)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork", 0);
	if (pid == 0) {
		kill_at = tp;
		prb_set_testpoint_hook(die_here);
		pk_log_store(log, 0, 3, text, strlen(text), NULL, 0);
		_exit(0);
	}
	waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], text[PK_TEXT_MAX + 1], dict[PK_DICT_MAX];
	struct pk_log *log;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (!mkdtemp(tmpdir))
		die("mkdtemp", 0);

	log = fresh("empty", 4096, path, sizeof(path));
	pk_log_destroy(log);
	emit(path, "empty");

	log = fresh("records", 4096, path, sizeof(path));
	store(log, 0, 6, "Linux version 6.18.0 (fuzz@corpus)", NULL, 0);
	store(log, 3, 4, "daemon: something odd", "SUBSYSTEM=net\0DEVICE=n2", 23);
	store(log, 0, 0, "", NULL, 0);
	store(log, 23, 7, "local7 debug line with a \x01 control byte", "K=v", 3);
	pk_log_destroy(log);
	emit(path, "records");

	log = fresh("open_line", 4096, path, sizeof(path));
	store(log, 0, 6, "a complete line", NULL, 0);
	{
		struct prb_meta m = { .ts_nsec = 12345, .level = 4 };

		pk_caller_get(&m.caller);
		struct prb *rb = pk_log_ring(log);

		if (prb_store(rb, &m, "testing the frobnozzle ...", 26, NULL, 0, false, NULL) ||
		    prb_extend(rb, &m.caller, " still going", 12, PK_TEXT_MAX, false, 0, NULL))
			die("open line", 0);
	}
	pk_log_destroy(log);
	emit(path, "open_line");

	log = fresh("wrapped", 4096, path, sizeof(path));
	for (unsigned i = 0; i < 700; i++) {
		int k = snprintf(text, sizeof(text), "rec %u ", i);
		size_t n = (size_t)k + (i * 37) % 200;

		memset(text + k, 'a' + (int)(i % 26), n - (size_t)k);
		text[n] = '\0';
		store(log, 0, (int)(i % 8), text, i % 5 ? NULL : "I=x", i % 5 ? 0 : 3);
	}
	pk_log_destroy(log);
	emit(path, "wrapped");

	log = fresh("dead", 4096, path, sizeof(path));
	store(log, 0, 6, "before the crashes", NULL, 0);
	writer_dies_at(log, PRB_TP_CLAIMED, "claimed, never written");
	store(log, 0, 6, "between", NULL, 0);
	writer_dies_at(log, PRB_TP_HEAD_RESERVED, "never claimed");
	store(log, 0, 6, "between again", NULL, 0);
	writer_dies_at(log, PRB_TP_BEFORE_COMMIT, "written, never committed");
	store(log, 0, 6, "after the crashes", NULL, 0);
	pk_log_destroy(log);
	emit(path, "dead");

	log = fresh("big_record", 8192, path, sizeof(path));
	memset(text, 'T', PK_TEXT_MAX);
	text[PK_TEXT_MAX] = '\0';
	memset(dict, 'D', sizeof(dict));
	memcpy(dict, "KEY=", 4);
	store(log, 0, 2, text, dict, sizeof(dict));
	store(log, 0, 2, "small one after it", NULL, 0);
	pk_log_destroy(log);
	emit(path, "big_record");

	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : 1;
}
