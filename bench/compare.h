// SPDX-License-Identifier: MIT
/*
 * compare.h - what bench/compare.c (C) and bench/compare_spdlog.cpp (C++)
 * share: the message every logger under test prints, and the spdlog cases,
 * behind a C interface so that the benchmark itself stays one C program.
 */
#ifndef PRINTK_BENCH_COMPARE_H
#define PRINTK_BENCH_COMPARE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every case prints "worker %d processed %s in %lu us" with
 * (int)(i & 7), cmp_what[i & 3], (unsigned long)i * 3 for message number i.
 */
extern const char *const cmp_what[4];

enum cmp_spdlog_kind {
	CMP_SPDLOG_NULL,  /* null_sink_mt: formats the message, writes nothing */
	CMP_SPDLOG_FILE,  /* basic_file_sink_mt on @path */
	CMP_SPDLOG_ASYNC, /* async_logger (queue 8192, block when full) on a basic_file_sink_mt */
};

/* 0, or -1 with the reason in @why. */
int cmp_spdlog_setup(enum cmp_spdlog_kind kind, const char *path, char *why, size_t len);
void cmp_spdlog_log(long i);
/* Until every message logged so far is in the file (nothing for the null sink). */
void cmp_spdlog_finish(void);
void cmp_spdlog_teardown(void);

#ifdef __cplusplus
}
#endif

#endif
