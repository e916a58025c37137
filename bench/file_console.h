// SPDX-License-Identifier: MIT
/*
 * file_console.h - what bench/file_console.c (C) and
 * bench/file_console_spdlog.cpp (C++) share: the spdlog cases behind a C
 * interface, logging the message the printk cases log with the same bytes
 * on disk.
 */
#ifndef PRINTK_BENCH_FILE_CONSOLE_H
#define PRINTK_BENCH_FILE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Message i is "hello %d world %s" with (int)i and fc_word[i & 3]. */
extern const char *const fc_word[4];

enum fc_spdlog_kind {
	FC_SPDLOG_FILE,	 /* basic_file_sink_mt on @path (synchronous, stdio-buffered) */
	FC_SPDLOG_ASYNC, /* async_logger (queue 8192, one thread, blocks when full) on it */
};

/*
 * 0, or -1 with the reason in @why. The pattern is "%* %v" where %* prints
 * the time as printk's prefix does ("[%5lu.%06lu]", seconds since
 * @boot_ns of CLOCK_MONOTONIC; spdlog's own clock is the wall clock, so
 * @wall_minus_mono_ns converts), so each line has printk's bytes:
 * "[    1.234567] hello 42 world frame\n".
 */
int fc_spdlog_setup(enum fc_spdlog_kind kind, const char *path, int64_t wall_minus_mono_ns, char *why,
		    size_t len);
void fc_spdlog_log(long i);
/* Until every line logged so far is in the file. */
void fc_spdlog_flush(void);
void fc_spdlog_teardown(void);

#ifdef __cplusplus
}
#endif

#endif
