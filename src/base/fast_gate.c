// SPDX-License-Identifier: MIT
/*
 * fast_gate.c - the word fast_gate.h describes: printk's lane fast path
 * takes a call only while it is 0 (but for PK_GATE_DYNDBG).
 */
#include "base/fast_gate.h"

pk_a32 pk_fast_gate = PK_GATE_INITIAL;
