// SPDX-License-Identifier: MIT
/*
 * pk-forward - follow a libprintk log file and send every record to a log
 * collector, keeping a cursor so that a restart resumes where the collector
 * last confirmed.
 *
 *   pk-forward [-c CURSOR] [--rfc3164] [--enterprise N] TARGET LOGFILE
 *
 * TARGET is a forwarding console's: journal[:PATH], unix:PATH,
 * udp:HOST:PORT, tcp:HOST:PORT, tls:HOST[:PORT][,OPTIONS] or
 * relp:HOST:PORT[,tls,OPTIONS] (OPTIONS: ca=FILE, cert=FILE, key=FILE,
 * peer=NAME). The records go through a
 * forwarding console that is never registered (<printk/forward.h>), so the
 * wire forms are the consoles' own; names and times come from LOGFILE.
 * Or journal-remote:http(s)://HOST[:PORT]: systemd-journal-remote over HTTP
 * or HTTPS (the same TLS options)
 * (journal_remote.c), the only target that is pk-forward's alone.
 *
 * This file owns the command line: parsed into a struct pkf_opts, then
 * handed to pkf_run() (forward.c); the cursor file is cursor.c's.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <printk/forward.h>

#include "pk-forward.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] TARGET LOGFILE\n"
		"Send every record of a libprintk log file to a log collector.\n\n"
		"TARGET: journal[:PATH], unix:PATH, udp:HOST:PORT, tcp:HOST:PORT, relp:HOST:PORT,\n"
		"        tls:HOST[:PORT] (syslog over TLS, port 6514), relp:HOST:PORT,tls,\n"
		"        journal-remote:http://HOST[:PORT], journal-remote:https://HOST[:PORT];\n"
		"        TLS options: ,ca=FILE ,cert=FILE ,key=FILE ,peer=NAME\n\n"
		"  -c, --cursor FILE     keep the position in FILE; resume from it\n"
		"  -o, --once            stop at the end of the log instead of following it\n"
		"      --rfc3164         send RFC 3164 messages (default RFC 5424)\n"
		"      --enterprise N    the SD-ID's enterprise number (default 32473)\n"
		"  -h, --help            this text\n",
		PKF_NAME);
}

/* 0 and @o filled, or the exit status: 0 after --help, 1 after one message. */
static int parse_options(int argc, char **argv, struct pkf_opts *o, int *exit_status)
{
	static const struct option longopts[] = {
		{ "cursor", required_argument, NULL, 'c' },
		{ "once", no_argument, NULL, 'o' },
		{ "rfc3164", no_argument, NULL, 'R' },
		{ "enterprise", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:oh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cursor_path = optarg;
			break;
		case 'o':
			o->once = 1;
			break;
		case 'R':
			o->format = PK_SYSLOG_RFC3164;
			break;
		case 'E': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !*optarg || v == 0 || v > UINT32_MAX) {
				fprintf(stderr, "%s: invalid enterprise number: %s\n", PKF_NAME,
					optarg);
				*exit_status = 1;
				return -1;
			}
			o->enterprise = (unsigned)v;
			break;
		}
		case 'h':
			usage(stdout);
			*exit_status = 0;
			return -1;
		default:
			usage(stderr);
			*exit_status = 1;
			return -1;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		*exit_status = 1;
		return -1;
	}
	o->target = argv[optind];
	o->log_path = argv[optind + 1];
	return 0;
}

int main(int argc, char **argv)
{
	struct pkf_opts o = { .format = PK_SYSLOG_RFC5424 };
	int status;

	if (parse_options(argc, argv, &o, &status))
		return status;
	return pkf_run(&o);
}
