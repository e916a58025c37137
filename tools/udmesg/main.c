// SPDX-License-Identifier: MIT
/*
 * main.c - udmesg: read a libprintk log the way util-linux dmesg reads the
 * kernel's, so that habits and scripts carry over.
 *
 * This file owns the command line (getopt_long, util-linux's option set,
 * rules and messages: mutually exclusive options, level and facility lists
 * with "err+" / "+warn" ranges, time formats that add up and merge as in
 * current util-linux), picks the source and the action, and runs them:
 * reading goes to source.c, printing to output.c. Three steps, each a
 * function: parse_options() (the command line as given), resolve() (what
 * it means: source, formats, the fast path) and run() (the action).
 *
 * udmesg only reads logs (the syslog actions it runs open their log
 * themselves): PK_READER_ONLY_PROGRAM keeps the library's printk start-up
 * from acting on PRINTK_OPTS, whose log_buf_file= udmesg reads as its
 * default log.
 *
 * Exit status: 0, or 1 after one line on stderr (bad option, unreadable or
 * invalid file, failed action).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <printk/printk.h>

#include "reader.h"
#include "udmesg.h"

#ifndef UDMESG_VERSION
#define UDMESG_VERSION "0"
#endif

static const char *progname = UDMESG_NAME;

_Noreturn void ud_fatal(const char *fmt, ...)
{
	va_list ap;

	out_flush();
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAILURE);
}

void ud_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static _Noreturn void try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	exit(EXIT_FAILURE);
}

static const char usage_text[] =
	"Display or control a libprintk log, the way dmesg(1) does the kernel's.\n"
	"\nSources:\n"
	" -B, --buffer <file>         a libprintk log file\n"
	"                               (default: log_buf_file= of PRINTK_OPTS)\n"
	" -F, --file <file>           syslog-format text (<prio>[time] text lines)\n"
	" -K, --kmsg-file <file>      /dev/kmsg records separated by NUL bytes\n"
	" -S, --syslog                read the log through its syslog actions\n"
	"     --core <core> [<prog>]  the log of a dead process, out of its core file\n"
	"     --core-list             with --core: list the logs in the core\n"
	"\nOptions:\n"
	" -C, --clear                 clear the log buffer\n"
	" -c, --read-clear            read and clear all messages\n"
	" -D, --console-off           disable printing messages to console\n"
	" -E, --console-on            enable printing messages to console\n"
	" -f, --facility <list>       restrict output to defined facilities\n"
	" -H, --human                 human readable output\n"
	" -J, --json                  use JSON output format\n"
	" -k, --kernel                display kernel messages\n"
	" -L, --color[=<when>]        colorize messages (auto, always or never)\n"
	"                               colors are enabled by default\n"
	" -l, --level <list>          restrict output to defined levels\n"
	" -n, --console-level <level> set level of messages printed to console\n"
	" -P, --nopager               do not pipe output into a pager\n"
	" -p, --force-prefix          force timestamp output on each line of multi-line messages\n"
	" -r, --raw                   print the raw message buffer\n"
	"     --noescape              don't escape unprintable character\n"
	" -s, --buffer-size <size>    buffer size to query the log buffer (with -S)\n"
	" -u, --userspace             display userspace messages\n"
	" -w, --follow                wait for new messages\n"
	" -W, --follow-new            wait and print only new messages\n"
	" -x, --decode                decode facility and level to readable string\n"
	" -d, --show-delta            show time delta between printed messages\n"
	" -e, --reltime               show local time and time delta in readable format\n"
	" -T, --ctime                 show human-readable timestamp\n"
	" -t, --notime                don't show any timestamp with messages\n"
	"     --time-format <format>  show timestamp using the given format:\n"
	"                               [delta|reltime|ctime|notime|iso|raw]\n"
	"     --since <time>          display the lines since the specified time\n"
	"     --until <time>          display the lines until the specified time\n"
	"\nBeyond dmesg:\n"
	"     --kmsg                  print records as /dev/kmsg returns them, NUL-separated\n"
	"     --journal-json          one JSON object per record, journald's field names\n"
	"     --partial               also show the unfinalized newest record, marked\n"
	"     --no-partial            never show it (default: shown when all writers are gone)\n"
	"     --caller                show caller ids (T<tid>)\n"
	"     --writer                show each record's process (pid and program name)\n"
	"     --dictionary            show each record's dictionary (KEY=VALUE lines)\n"
	"     --dyndbg <query>        post a dynamic debug query to the log's writers\n"
	"                             ('module <name> level <level>': a module's level)\n"
	"     --module-levels         show the module levels the log's writers keep\n"
	"     --info                  show the log's size, losses and writers\n"
	" -n, --console-level <name>=<level>\n"
	"                             the level of the consoles named <name> (0-15 or default)\n"
	"\n -h, --help                  display this help\n"
	" -V, --version               display version\n";

static const char *const facility_help[UD_NFACILITIES] = {
	"kernel messages",
	"random user-level messages",
	"mail system",
	"system daemons",
	"security/authorization messages",
	"messages generated internally by syslogd",
	"line printer subsystem",
	"network news subsystem",
	"UUCP subsystem",
	"clock daemon",
	"security/authorization messages (private)",
	"FTP daemon",
	"reserved 0",
	"reserved 1",
	"reserved 2",
	"reserved 3",
	"local use 0",
	"local use 1",
	"local use 2",
	"local use 3",
	"local use 4",
	"local use 5",
	"local use 6",
	"local use 7",
};

static const char *const level_help[UD_NLEVELS] = {
	"system is unusable",  "action must be taken immediately",
	"critical conditions", "error conditions",
	"warning conditions",  "normal but significant condition",
	"informational",       "debug-level messages",
};

static _Noreturn void usage(void)
{
	printf("\nUsage:\n %s [options]\n\n", progname);
	fputs(usage_text, stdout);
	fputs("\nSupported log facilities:\n", stdout);
	for (int i = 0; i < UD_NFACILITIES; i++)
		printf(" %7s - %s\n", ud_facility_names[i], facility_help[i]);
	fputs("\nSupported log levels (priorities):\n", stdout);
	for (int i = 0; i < UD_NLEVELS; i++)
		printf(" %7s - %s\n", ud_level_names[i], level_help[i]);
	printf("\nFor more details see %s(1).\n", UDMESG_NAME);
	exit(EXIT_SUCCESS);
}

/* ---------------------------------------------------- lists and levels -- */

/*
 * util-linux's parse_level: a number or a name (any case). With @len 0 (for
 * -n) the number is 1..8 ("less than this level"), else 0..7.
 */
static int parse_level(const char *str, size_t len)
{
	int offset = 0;

	if (!len) {
		len = strlen(str);
		offset = 1;
	}
	if (*str >= '0' && *str <= '9') {
		char *end = NULL;
		long x;

		errno = 0;
		x = strtol(str, &end, 10) - offset;
		if (!errno && end && end > str && (size_t)(end - str) == len && x >= 0 &&
		    x < UD_NLEVELS)
			return (int)x + offset;
	} else {
		for (int i = 0; i < UD_NLEVELS; i++) {
			const char *n = ud_level_names[i];

			if (strncasecmp(str, n, len) == 0 && n[len] == '\0')
				return i + offset;
		}
	}
	ud_fatal("unknown level '%s'", str);
}

static int parse_facility(const char *str, size_t len)
{
	if (*str >= '0' && *str <= '9') {
		char *end = NULL;
		long x;

		errno = 0;
		x = strtol(str, &end, 10);
		if (!errno && end && end > str && (size_t)(end - str) == len && x >= 0 &&
		    x < UD_NFACILITIES)
			return (int)x;
	} else {
		for (int i = 0; i < UD_NFACILITIES; i++) {
			const char *n = ud_facility_names[i];

			if (strncasecmp(str, n, len) == 0 && n[len] == '\0')
				return i;
		}
	}
	ud_fatal("unknown facility '%s'", str);
}

/*
 * util-linux's string_to_bitarray: "a,b,c". With @range, "x+" also sets
 * every bit below x, "+x" every bit above it (up to @range).
 */
static void list_to_bits(const char *list, uint32_t *bits, int (*name2bit)(const char *, size_t),
			 int range, const char *what)
{
	const char *begin = NULL;

	for (const char *p = list; *p; p++) {
		const char *end = NULL;
		int bit, lower = 0, higher = 0;

		if (!begin)
			begin = p;
		if (*p == ',')
			end = p;
		if (p[1] == '\0')
			end = p + 1;
		if (!end)
			continue;
		if (end <= begin)
			ud_fatal("empty item in %s list '%s'", what, list);
		if (range) {
			if (end[-1] == '+') {
				end--;
				lower = 1;
			} else if (*begin == '+') {
				begin++;
				higher = 1;
			}
		}
		bit = name2bit(begin, (size_t)(end - begin));
		*bits |= UINT32_C(1) << bit;
		if (lower)
			while (--bit >= 0)
				*bits |= UINT32_C(1) << bit;
		else if (higher)
			while (++bit < range)
				*bits |= UINT32_C(1) << bit;
		begin = NULL;
		if (!*end)
			break;
	}
	if (!*list)
		ud_fatal("empty %s list", what);
}

/* ------------------------------------------------------------ options -- */

enum {
	OPT_TIME_FORMAT = CHAR_MAX + 1,
	OPT_NOESC,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_KMSG,
	OPT_JOURNAL_JSON,
	OPT_PARTIAL,
	OPT_NO_PARTIAL,
	OPT_CALLER,
	OPT_WRITER,
	OPT_DICT,
	OPT_DYNDBG,
	OPT_MODULE_LEVELS,
	OPT_CORE,
	OPT_CORE_LIST,
	OPT_INFO,
};

static const struct option longopts[] = {
	{"buffer", required_argument, NULL, 'B'},
	{"buffer-size", required_argument, NULL, 's'},
	{"clear", no_argument, NULL, 'C'},
	{"color", optional_argument, NULL, 'L'},
	{"console-level", required_argument, NULL, 'n'},
	{"console-off", no_argument, NULL, 'D'},
	{"console-on", no_argument, NULL, 'E'},
	{"decode", no_argument, NULL, 'x'},
	{"file", required_argument, NULL, 'F'},
	{"facility", required_argument, NULL, 'f'},
	{"follow", no_argument, NULL, 'w'},
	{"follow-new", no_argument, NULL, 'W'},
	{"human", no_argument, NULL, 'H'},
	{"help", no_argument, NULL, 'h'},
	{"json", no_argument, NULL, 'J'},
	{"kernel", no_argument, NULL, 'k'},
	{"kmsg-file", required_argument, NULL, 'K'},
	{"level", required_argument, NULL, 'l'},
	{"since", required_argument, NULL, OPT_SINCE},
	{"syslog", no_argument, NULL, 'S'},
	{"raw", no_argument, NULL, 'r'},
	{"read-clear", no_argument, NULL, 'c'},
	{"reltime", no_argument, NULL, 'e'},
	{"show-delta", no_argument, NULL, 'd'},
	{"ctime", no_argument, NULL, 'T'},
	{"noescape", no_argument, NULL, OPT_NOESC},
	{"notime", no_argument, NULL, 't'},
	{"nopager", no_argument, NULL, 'P'},
	{"until", required_argument, NULL, OPT_UNTIL},
	{"userspace", no_argument, NULL, 'u'},
	{"version", no_argument, NULL, 'V'},
	{"time-format", required_argument, NULL, OPT_TIME_FORMAT},
	{"force-prefix", no_argument, NULL, 'p'},
	{"kmsg", no_argument, NULL, OPT_KMSG},
	{"journal-json", no_argument, NULL, OPT_JOURNAL_JSON},
	{"partial", no_argument, NULL, OPT_PARTIAL},
	{"no-partial", no_argument, NULL, OPT_NO_PARTIAL},
	{"caller", no_argument, NULL, OPT_CALLER},
	{"writer", no_argument, NULL, OPT_WRITER},
	{"dictionary", no_argument, NULL, OPT_DICT},
	{"dyndbg", required_argument, NULL, OPT_DYNDBG},
	{"module-levels", no_argument, NULL, OPT_MODULE_LEVELS},
	{"core", required_argument, NULL, OPT_CORE},
	{"core-list", no_argument, NULL, OPT_CORE_LIST},
	{"info", no_argument, NULL, OPT_INFO},
	{NULL, 0, NULL, 0},
};

/* Options that cannot go together (util-linux's groups, plus the sources). */
static const int excl[][8] = {
	{'B', 'F', 'K', OPT_CORE}, {'C', 'D', 'E', 'c', 'n', 'r'},
	{'F', 'K', 'S'}, {'H', 'r'},
	{'L', 'r'},	 {'S', 'W', 'w'},
	{'T', 'r'},	 {'d', 'r'},
	{'e', 'r'},	 {'r', 'x'},
	{'r', 't'},	 {OPT_KMSG, 'J', 'r', OPT_JOURNAL_JSON},
};
#define NEXCL (sizeof(excl) / sizeof(excl[0]))

static const char *long_name(int c)
{
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static void check_exclusive(int c, int *status)
{
	for (size_t g = 0; g < NEXCL; g++) {
		for (const int *op = excl[g]; *op; op++) {
			if (*op != c)
				continue;
			if (!status[g]) {
				status[g] = c;
			} else if (status[g] != c) {
				out_flush();
				fprintf(stderr, "%s: mutually exclusive arguments:", progname);
				for (op = excl[g]; *op; op++)
					fprintf(stderr, " --%s", long_name(*op));
				fputc('\n', stderr);
				exit(EXIT_FAILURE);
			}
			break;
		}
	}
}

/* The short option of an action, for messages. */
static int action_option(enum ud_action action)
{
	switch (action) {
	case UD_ACT_CLEAR:
		return 'C';
	case UD_ACT_READ_CLEAR:
		return 'c';
	case UD_ACT_CONSOLE_OFF:
		return 'D';
	case UD_ACT_CONSOLE_ON:
		return 'E';
	case UD_ACT_CONSOLE_LEVEL:
		return 'n';
	default:
		return 'S';
	}
}

static enum ud_timefmt which_time_format(const char *s)
{
	if (!strcmp(s, "notime"))
		return UD_TF_NONE;
	if (!strcmp(s, "ctime"))
		return UD_TF_CTIME;
	if (!strcmp(s, "delta"))
		return UD_TF_DELTA;
	if (!strcmp(s, "reltime"))
		return UD_TF_RELTIME;
	if (!strcmp(s, "iso"))
		return UD_TF_ISO;
	if (!strcmp(s, "raw"))
		return UD_TF_TIME;
	ud_fatal("unknown time format: %s", s);
}

enum { COLOR_UNDEF, COLOR_AUTO, COLOR_NEVER, COLOR_ALWAYS };

static int parse_colormode(const char *arg)
{
	const char *p = (arg && *arg == '=') ? arg + 1 : arg;

	if (p && !strcasecmp(p, "auto"))
		return COLOR_AUTO;
	if (p && !strcasecmp(p, "never"))
		return COLOR_NEVER;
	if (p && !strcasecmp(p, "always"))
		return COLOR_ALWAYS;
	ud_fatal("unsupported color mode: '%s'", p ? p : "");
}

/* util-linux colors_init: "always", or a terminal that can show colors. */
static bool want_colors(int mode)
{
	const char *term = getenv("TERM");

	if (mode == COLOR_ALWAYS)
		return true;
	if (mode == COLOR_NEVER || !isatty(STDOUT_FILENO))
		return false;
	if (mode == COLOR_UNDEF && getenv("NO_COLOR"))
		return false;
	return term && *term && strcmp(term, "dumb") != 0;
}

static size_t parse_bufsize(const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*arg == '-')
		errno = ERANGE;
	else
		v = strtoull(arg, &end, 10);
	if (errno == ERANGE || (!errno && v > UINT32_MAX))
		ud_fatal("invalid buffer size argument: '%s': %s", arg, strerror(ERANGE));
	if (errno || end == arg || *end)
		ud_fatal("invalid buffer size argument: '%s'", arg);
	return v < 4096 ? 4096 : (size_t)v;
}

PK_READER_ONLY_PROGRAM;

/* The log of PRINTK_OPTS=log_buf_file=..., if any. */
static const char *default_log_path(void)
{
	static char path[PATH_MAX];

	return pk_opts_log_buf_file(path, sizeof(path)) > 0 ? path : NULL;
}

/*
 * Options that leave the default text format as it is. With none but
 * these (and no colors), a log is dumped by the fast path; any other
 * option, one added later included, takes the general path.
 */
static bool keeps_default_format(int c)
{
	switch (c) {
	case 'B': /* the log: the fast path reads logs only */
	case 'c': /* read, then clear */
	case 'P':
	case 'w':
	case 'W':
	case OPT_PARTIAL: /* the open record takes the general path anyway */
	case OPT_NO_PARTIAL:
	case OPT_CORE: /* a log too */
		return true;
	default:
		return false;
	}
}

/* -n NAME=LEVEL: a console of that name gets its own level, 0 to 15, or
 * "default" (-1: it follows the console level again). */
static int parse_console_level(char *arg, const char **name)
{
	char *eq = strchr(arg, '=');
	char *end = NULL;
	long x;

	*eq = '\0';
	if (eq == arg || eq - arg > 15)
		ud_fatal("bad console name '%s' (1 to 15 bytes)", arg);
	*name = arg;
	if (!strcmp(eq + 1, "default"))
		return -1;
	errno = 0;
	x = strtol(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end || x < 0 || x > 15)
		ud_fatal("bad console level '%s' (0 to 15, or default)", eq + 1);
	return (int)x;
}

/* What the command line asked for beyond ctl's fields. */
struct ud_opts {
	int colormode;
	bool syslog_method;  /* -S */
	bool default_format; /* only options that keep the default text format */
};

/* --dyndbg's query: posted instead of reading. */
static const char *dyndbg_query;

/* Post --dyndbg's query to the log's mailbox; every process writing the
 * log applies it at its next printk. */
static void run_dyndbg(const struct ud_ctl *ctl)
{
	struct pk_log *log;
	int err;

	if (ctl->source != UD_SRC_LOG || ctl->action != UD_ACT_READ_ALL)
		ud_fatal("--dyndbg goes alone with a libprintk log (-B <file>)");
	err = pk_log_open_control(&log, ctl->log_path);
	if (err)
		ud_fatal("cannot open %s for writing: %s", ctl->log_path, pk_log_strerror(err));
	err = pk_dyndbg_post(log, dyndbg_query);
	pk_log_destroy(log);
	if (err == -EINVAL)
		ud_fatal("--dyndbg: bad query: %s", dyndbg_query);
	if (err)
		ud_fatal("--dyndbg: %s", strerror(-err));
}

/* --module-levels: list instead of reading. */
static bool module_levels;

/* "NAME LEVEL" per line, as the last writer to change its module levels
 * published them (docs/levels.md); nothing when none has a level. */
static void run_module_levels(const struct ud_ctl *ctl)
{
	struct pk_log *log;
	char name[PK_MODULE_NAME_MAX];
	int level, err = 0;

	if (ctl->source != UD_SRC_LOG || ctl->action != UD_ACT_READ_ALL)
		ud_fatal("--module-levels goes alone with a libprintk log (-B <file>)");
	err = pk_log_open_file(&log, ctl->log_path, 0, PK_LOG_RDONLY);
	if (err)
		ud_fatal("cannot open %s: %s", ctl->log_path, pk_log_strerror(err));
	for (int tries = 0; tries < 1000; tries++) {
		char out[PK_MODULE_LEVELS_MAX * (PK_MODULE_NAME_MAX + 8)];
		size_t len = 0;
		unsigned i;

		for (i = 0; (err = pk_log_module_level(log, i, name, &level)) == 0; i++)
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s %d\n", name, level);
		if (err == -EAGAIN) { /* a writer is publishing: read again */
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
			continue;
		}
		if (err == -ENOENT) {
			fwrite(out, 1, len, stdout);
			err = 0;
		}
		break;
	}
	pk_log_destroy(log);
	if (err == -EUCLEAN)
		ud_fatal("--module-levels: %s holds a damaged module level table", ctl->log_path);
	if (err)
		ud_fatal("--module-levels: %s", strerror(-err));
}

/* One option of the command line into @ctl and @o. */
static void parse_option(int c, struct ud_ctl *ctl, struct ud_opts *o)
{
	switch (c) {
	case 'B':
		ctl->log_path = optarg;
		ctl->source = UD_SRC_LOG;
		break;
	case 'C':
		ctl->action = UD_ACT_CLEAR;
		break;
	case 'c':
		ctl->action = UD_ACT_READ_CLEAR;
		break;
	case 'D':
		ctl->action = UD_ACT_CONSOLE_OFF;
		break;
	case 'd':
		ud_time_fmt_include(ctl, UD_TF_TIME_DELTA);
		break;
	case 'E':
		ctl->action = UD_ACT_CONSOLE_ON;
		break;
	case 'e':
		ud_time_fmt_include(ctl, UD_TF_RELTIME);
		break;
	case 'F':
		ctl->file_path = optarg;
		ctl->source = UD_SRC_FILE;
		break;
	case 'K':
		ctl->file_path = optarg;
		ctl->source = UD_SRC_KMSG;
		break;
	case 'f':
		ctl->fltr_fac = true;
		list_to_bits(optarg, &ctl->facilities, parse_facility, 0, "facility");
		break;
	case 'H':
		ud_time_fmt_include(ctl, UD_TF_RELTIME);
		o->colormode = COLOR_AUTO;
		break;
	case 'J':
		ctl->json = true;
		break;
	case 'k':
		ctl->fltr_fac = true;
		ctl->facilities |= 1u;
		break;
	case 'L':
		o->colormode = optarg ? parse_colormode(optarg) : COLOR_AUTO;
		break;
	case 'l': {
		uint32_t bits = ctl->levels;

		ctl->fltr_lev = true;
		list_to_bits(optarg, &bits, parse_level, UD_NLEVELS, "level");
		ctl->levels = (uint8_t)bits;
		break;
	}
	case 'n':
		ctl->action = UD_ACT_CONSOLE_LEVEL;
		if (strchr(optarg, '=')) {
			ctl->console_level = parse_console_level(optarg, &ctl->console_name);
			break;
		}
		ctl->console_name = NULL;
		ctl->console_level = parse_level(optarg, 0);
		break;
	case 'P':
		break; /* udmesg never pages */
	case 'p':
		ctl->force_prefix = true;
		break;
	case 'r':
		ctl->raw = true;
		break;
	case 'S':
		o->syslog_method = true;
		break;
	case 's':
		ctl->bufsize = parse_bufsize(optarg);
		break;
	case 'T':
		ud_time_fmt_include(ctl, UD_TF_CTIME);
		break;
	case 't':
		ud_time_fmt_include(ctl, UD_TF_NONE);
		break;
	case 'u':
		ctl->fltr_fac = true;
		for (int i = 1; i < UD_NFACILITIES; i++)
			ctl->facilities |= UINT32_C(1) << i;
		break;
	case 'w':
		ctl->follow = true;
		break;
	case 'W':
		ctl->follow = true;
		ctl->follow_new = true;
		break;
	case 'x':
		ctl->decode = true;
		break;
	case OPT_TIME_FORMAT:
		ud_time_fmt_include(ctl, which_time_format(optarg));
		break;
	case OPT_NOESC:
		ctl->noesc = true;
		break;
	case OPT_SINCE:
		if (ud_parse_timestamp(optarg, &ctl->since) < 0)
			ud_fatal("invalid time value \"%s\"", optarg);
		break;
	case OPT_UNTIL:
		if (ud_parse_timestamp(optarg, &ctl->until) < 0)
			ud_fatal("invalid time value \"%s\"", optarg);
		break;
	case OPT_KMSG:
		ctl->kmsg_out = true;
		break;
	case OPT_JOURNAL_JSON:
		ctl->journal_json = true;
		break;
	case OPT_PARTIAL:
		ctl->partial = 1;
		break;
	case OPT_NO_PARTIAL:
		ctl->partial = 0;
		break;
	case OPT_CALLER:
		ctl->caller = true;
		break;
	case OPT_WRITER:
		ctl->writer = true;
		break;
	case OPT_DICT:
		ctl->dict = true;
		break;
	case OPT_MODULE_LEVELS:
		module_levels = true;
		break;
	case OPT_DYNDBG:
		dyndbg_query = optarg;
		break;
	case OPT_CORE:
		ctl->core_path = optarg;
		ctl->source = UD_SRC_LOG;
		break;
	case OPT_CORE_LIST:
		ctl->core_list = true;
		break;
	case OPT_INFO:
		ctl->info = true;
		break;
	case 'h':
		usage();
	case 'V':
		printf("%s from libprintk %s\n", progname, UDMESG_VERSION);
		exit(EXIT_SUCCESS);
	default:
		try_help();
	}
}

/* The command line as given: options into @ctl and @o, or exit. */
static void parse_options(int argc, char *argv[], struct ud_ctl *ctl, struct ud_opts *o)
{
	int excl_st[NEXCL] = {0};
	int c;

	while ((c = getopt_long(argc, argv, "B:CcDdEeF:f:HhJK:kL::l:n:PprSs:TtuVWwx", longopts,
				NULL)) != -1) {
		check_exclusive(c, excl_st);
		if (!keeps_default_format(c))
			o->default_format = false;
		parse_option(c, ctl, o);
	}
	if (ctl->core_path && argc - optind == 1)
		ctl->core_exe = argv[optind++]; /* --core CORE PROGRAM */
	if (argc != optind) {
		ud_warn("bad usage");
		try_help();
	}
}

/* Where the records come from: the default log, or exit with why not. */
static void resolve_source(struct ud_ctl *ctl, const struct ud_opts *o)
{
	if (o->syslog_method)
		ctl->source = UD_SRC_SYSLOG;
	if (ctl->action != UD_ACT_READ_ALL &&
	    (ctl->source == UD_SRC_FILE || ctl->source == UD_SRC_KMSG))
		ud_fatal("--%s acts on a libprintk log: give it with -B <file>",
			 long_name(action_option(ctl->action)));
	if (ctl->core_list && !ctl->core_path)
		ud_fatal("--core-list lists the logs in a core: give it with --core <core>");
	if (ctl->core_path) {
		if (ctl->action != UD_ACT_READ_ALL)
			ud_fatal("--%s changes a log: a core's log is read only",
				 long_name(action_option(ctl->action)));
		ud_core_open(ctl);
	}
	if ((ctl->source == UD_SRC_LOG || ctl->source == UD_SRC_SYSLOG) && !ctl->log_path) {
		ctl->log_path = default_log_path();
		if (!ctl->log_path)
			ud_fatal("no log to read: give -B <file>, -F <file> or -K <file>, "
				 "or set log_buf_file= in PRINTK_OPTS");
	}
	if ((ctl->kmsg_out || ctl->journal_json) && ctl->source != UD_SRC_LOG)
		ud_fatal("--%s reads a libprintk log (-B), not %s", ctl->kmsg_out ? "kmsg" : "journal-json",
			 ctl->source == UD_SRC_SYSLOG ? "--syslog" : "a text file");
}

/* The time formats and their base, as current util-linux resolves them. */
static void resolve_time(struct ud_ctl *ctl)
{
	bool need_wall = ud_time_fmt_is(ctl, UD_TF_RELTIME) || ud_time_fmt_is(ctl, UD_TF_CTIME) ||
			 ud_time_fmt_is(ctl, UD_TF_CTIME_DELTA) || ud_time_fmt_is(ctl, UD_TF_ISO) ||
			 ctl->since || ctl->until;

	ud_time_fmts_resolve(ctl);
	if (need_wall && (ctl->source == UD_SRC_FILE || ctl->source == UD_SRC_KMSG)) {
		int64_t sec, usec;

		/* Without a boot time the stamps count from the epoch, as in
		 * util-linux 2.40+ (2.38 dropped them). */
		ctl->base_by_usec = true;
		if (ud_host_boot_time(&sec, &usec) != 0)
			ud_warn("failed to determine boot time, timestamps will be inaccurate");
		else
			ctl->base_ns = sec * 1000000000 + usec * 1000;
	}
}

/* What the options mean together: source, formats, the fast path. */
static void resolve(struct ud_ctl *ctl, const struct ud_opts *o)
{
	resolve_source(ctl, o);
	if (ctl->json) {
		ctl->force_prefix = false;
		ctl->raw = false;
		ctl->noesc = true;
	}
	resolve_time(ctl);
	if (!ctl->json && !ctl->kmsg_out && !ctl->journal_json)
		ctl->color = want_colors(o->colormode);
	if (ctl->kmsg_out)
		pk_set_printk_caller(ctl->caller); /* kmsg_read's caller field */
	if (ctl->source == UD_SRC_KMSG)
		ctl->caller_width = ud_kmsg_caller_width();
	else if (ctl->source == UD_SRC_FILE || ctl->source == UD_SRC_SYSLOG)
		ctl->caller_width = 6; /* util-linux: the length of SHRT_MAX's "0x7fff" */
	if (ctl->follow && ctl->source != UD_SRC_LOG)
		ctl->follow = ctl->follow_new = false; /* files do not grow under us */
	ctl->fast = o->default_format && !ctl->color && ctl->source == UD_SRC_LOG;
}

/* Read the records from the source (-B, -F, -K, -S), then -c's clear. */
static void run_read(struct ud_ctl *ctl)
{
	if (ctl->raw && (ctl->source == UD_SRC_FILE || ctl->source == UD_SRC_SYSLOG) &&
	    (ctl->fltr_lev || ctl->fltr_fac))
		ud_fatal("--raw can be used together with --level or --facility only when "
			 "reading messages from a log or kmsg records");
	if (ctl->force_prefix && (ctl->source == UD_SRC_FILE || ctl->source == UD_SRC_SYSLOG))
		ud_fatal("only records support multi-line messages: --force-prefix reads a log "
			 "(-B) or kmsg records (-K)");
	switch (ctl->source) {
	case UD_SRC_LOG:
		ud_read_log(ctl);
		break;
	case UD_SRC_FILE:
		ud_read_syslog_file(ctl);
		break;
	case UD_SRC_KMSG:
		ud_read_kmsg_file(ctl);
		break;
	case UD_SRC_SYSLOG:
		ud_read_syslog_action(ctl);
		break;
	}
	out_flush();
	if (ctl->action == UD_ACT_READ_CLEAR)
		ud_log_action(ctl, UD_ACT_CLEAR, 0);
}

/* The action. */
static void run(struct ud_ctl *ctl)
{
	if (ctl->info) {
		if (ctl->source != UD_SRC_LOG || ctl->action != UD_ACT_READ_ALL)
			ud_fatal("--info shows a libprintk log: give it alone, with -B <file> or none");
		ud_print_info(ctl);
		return;
	}
	switch (ctl->action) {
	case UD_ACT_READ_ALL:
	case UD_ACT_READ_CLEAR:
		run_read(ctl);
		break;
	case UD_ACT_CLEAR:
	case UD_ACT_CONSOLE_OFF:
	case UD_ACT_CONSOLE_ON:
		ud_log_action(ctl, (int)ctl->action, 0);
		break;
	case UD_ACT_CONSOLE_LEVEL:
		if (ctl->console_name)
			ud_set_console_level(ctl);
		else
			ud_log_action(ctl, (int)ctl->action, ctl->console_level);
		break;
	}
	out_flush();
}

int main(int argc, char *argv[])
{
	static struct ud_ctl ctl = {
		.action = UD_ACT_READ_ALL,
		.source = UD_SRC_LOG,
		.partial = -1,
	};
	struct ud_opts o = {.colormode = COLOR_UNDEF, .default_format = true};

	if (argv[0]) {
		const char *slash = strrchr(argv[0], '/');

		progname = slash ? slash + 1 : argv[0];
		argv[0] = (char *)progname; /* getopt's messages say "udmesg: ..." */
	}
	setlocale(LC_ALL, "");
	tzset();
	signal(SIGPIPE, SIG_IGN); /* a closed pipe ends us quietly (out_write) */
	out_init();

	parse_options(argc, argv, &ctl, &o);
	resolve(&ctl, &o);
	if (dyndbg_query) {
		run_dyndbg(&ctl);
		return EXIT_SUCCESS;
	}
	if (module_levels) {
		run_module_levels(&ctl);
		return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	run(&ctl);
	return EXIT_SUCCESS;
}
