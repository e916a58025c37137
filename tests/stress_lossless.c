// SPDX-License-Identifier: MIT
/*
 * stress_lossless.c - test_console_lossless.c with the burst of the daemon
 * that lost 36-45% of its lines: 2 threads x 200,000 lines to one file
 * console with the default log (fewer lines under the sanitizers).
 */
#if defined(PRINTK_TSAN) || defined(PRINTK_SANITIZER_ADDRESS)
#define LOSSLESS_LINES 20000
#else
#define LOSSLESS_LINES 200000
#endif
#define LOSSLESS_THREADS 2
#include "test_console_lossless.c"
