// SPDX-License-Identifier: MIT
/*
 * sigpipe.h - keeping SIGPIPE from killing the program around a call into
 * a library (librelp, OpenSSL) that may write into a connection the
 * receiver closed: blocked in this thread around the call and, if it was
 * not pending before, taken back afterwards (fwd_socket.c). Our own
 * sockets use MSG_NOSIGNAL instead.
 */
#ifndef PRINTK_FWD_SIGPIPE_H
#define PRINTK_FWD_SIGPIPE_H

#include <signal.h>

struct pk_fwd_pipe_guard {
	sigset_t old;
	int was_pending;
};

void pk_fwd_pipe_block(struct pk_fwd_pipe_guard *g);
void pk_fwd_pipe_restore(struct pk_fwd_pipe_guard *g);

#endif
