// SPDX-License-Identifier: MIT
/*
 * test_stacktrace.c - the unwinder and the symbol look-up. Built three
 * times (tests/CMakeLists.txt): as configured, with -O2
 * -fno-omit-frame-pointer (test_stacktrace_fp, PK_TEST_FRAME_POINTERS) and
 * with -O2 -fomit-frame-pointer (test_stacktrace_nofp):
 *   - a known chain of noinline functions comes out in order, by CFI and
 *     in the automatic mode; by frame pointers alone where they are kept;
 *   - dump_stack() prints the task line and the kernel's Call Trace layout,
 *     starting at its caller;
 *   - %pS of a function prints name+0x0/0xsize, %ps the name, %pB a return
 *     address; an address without a symbol keeps the hexadecimal form;
 *   - a frame in a shared object other than the executable carries
 *     " [libpk_traceobj.so]", and %pS of its function too;
 *   - dump_stack() from a signal handler goes on through the signal frame
 *     into the interrupted function;
 *   - with reads checked against the segments and the stack instead of
 *     copied by the kernel, the same chain comes out;
 *   - a context of garbage registers and stack ends the walk, never faults;
 *   - pk_safe_read() refuses an unmapped address instead of faulting.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <printk/printk.h>

#include "fixture.h"
#include "base/stacktrace.h"
#include "testutil.h"
#include "format/vsprintf.h"

int pk_traceobj_call(int (*fn)(void *), void *arg);

/* Global and called with run-time arguments, so the compiler neither
 * renames them (.constprop clones) nor folds the chain. */
int st_chain1(int mode, struct pk_frame *out);
int st_chain2(int mode, struct pk_frame *out);
int st_chain3(int mode, struct pk_frame *out);
void st_dump1(int depth);
void st_dump2(int depth);
int st_in_object(void *arg);
void st_raiser(int sig);

#define BARRIER() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) int st_chain3(int mode, struct pk_frame *out)
{
	int n = pk_stack_walk(out, PK_STACK_MAX, NULL, 0, (enum pk_unwind_mode)mode);

	BARRIER();
	return n;
}

__attribute__((noinline)) int st_chain2(int mode, struct pk_frame *out)
{
	int n = st_chain3(mode, out);

	BARRIER();
	return n;
}

__attribute__((noinline)) int st_chain1(int mode, struct pk_frame *out)
{
	int n = st_chain2(mode, out);

	BARRIER();
	return n;
}

/* The name of frame @f into @buf ("" when it has none). */
static const char *frame_name(const struct pk_frame *f, char *buf, size_t size)
{
	struct pk_sym sym;
	uintptr_t pc = f->flags & PK_FRAME_EXACT ? f->pc : f->pc - 1;

	buf[0] = '\0';
	if (pk_sym_lookup(pc, &sym) == 0 && sym.name_len < size) {
		memcpy(buf, sym.name, sym.name_len);
		buf[sym.name_len] = '\0';
	}
	return buf;
}

/* Do @want appear among the frames, in this order, each right after the
 * one before? */
static void assert_chain(const struct pk_frame *f, int n, const char *const *want, int nwant)
{
	char name[256];
	int i = 0;

	while (i < n && strcmp(frame_name(&f[i], name, sizeof(name)), want[0]) != 0)
		i++;
	if (i == n)
		fail_msg("%s is not in the trace (%d frames)", want[0], n);
	for (int w = 1; w < nwant; w++) {
		i++;
		if (i >= n || strcmp(frame_name(&f[i], name, sizeof(name)), want[w]) != 0)
			fail_msg("frame %d is \"%s\", not %s", i, i < n ? name : "(end)", want[w]);
	}
}

static volatile int mode_auto = PK_UNWIND_AUTO, mode_cfi = PK_UNWIND_CFI, mode_fp = PK_UNWIND_FP;

static void test_chain_auto(void **state)
{
	(void)state;
	struct pk_frame f[PK_STACK_MAX];
	int n = st_chain1(mode_auto, f);
	static const char *const want[] = { "st_chain3", "st_chain2", "st_chain1", "test_chain_auto" };

	assert_true(n >= 4);
	assert_chain(f, n, want, 4);
	/* The first frame is pk_stack_walk itself, at an exact pc. */
	assert_true(f[0].flags & PK_FRAME_EXACT);
}

static void test_chain_cfi(void **state)
{
	(void)state;
	struct pk_frame f[PK_STACK_MAX];
	int n = st_chain1(mode_cfi, f);
	static const char *const want[] = { "st_chain3", "st_chain2", "st_chain1", "test_chain_cfi" };

	assert_chain(f, n, want, 4);
}

/* Where process_vm_readv is refused: reads checked against the segments
 * and the stack give the same chain; an address outside both is refused. */
static void test_chain_checked_reads(void **state)
{
	(void)state;
	struct pk_frame f[PK_STACK_MAX];
	static const char *const want[] = { "st_chain3", "st_chain2", "st_chain1",
					    "test_chain_checked_reads" };
	uint64_t got;

	pk_stacktrace_test_checked_reads(1);
	int n = st_chain1(mode_auto, f);

	assert_int_equal(pk_safe_read(8, &got, sizeof(got)), -EFAULT);
	assert_int_equal(pk_safe_read((uintptr_t)&got, &got, sizeof(got)), -EFAULT); /* no walk */
	assert_int_equal(pk_safe_read((uintptr_t)st_chain1, &got, sizeof(got)), 0); /* code */
#ifdef PK_TEST_FRAME_POINTERS
	struct pk_frame g[PK_STACK_MAX];
	int m = st_chain1(mode_fp, g);
#endif
	pk_stacktrace_test_checked_reads(0);
	assert_chain(f, n, want, 4);
#ifdef PK_TEST_FRAME_POINTERS
	assert_chain(g, m, want, 4);
#endif
}

static void test_chain_frame_pointers(void **state)
{
	(void)state;
#ifdef PK_TEST_FRAME_POINTERS
	struct pk_frame f[PK_STACK_MAX];
	int n = st_chain1(mode_fp, f);
	static const char *const want[] = { "st_chain3", "st_chain2", "st_chain1",
					    "test_chain_frame_pointers" };

	assert_chain(f, n, want, 4);
#else
	(void)mode_fp;
	skip();
#endif
}

__attribute__((noinline)) void st_dump2(int depth)
{
	if (depth)
		dump_stack();
	BARRIER();
}

__attribute__((noinline)) void st_dump1(int depth)
{
	st_dump2(depth + 1);
	BARRIER();
}

static void test_dump_stack_layout(void **state)
{
	(void)state;
	static volatile int zero;

	st_dump1(zero);
	/* The task line, then the trace from dump_stack's caller on; the rest
	 * of the stack (cmocka, libc) varies. */
	assert_match(capture_text(&cap), "CPU: 0 UID: # PID: # Comm: * Not tainted libprintk *\n"
					 "Call Trace:\n"
					 " <TASK>\n"
					 " st_dump2+0x%/0x%\n"
					 " st_dump1+0x%/0x%\n"
					 " test_dump_stack_layout+0x%/0x%\n"
					 "*"
					 " </TASK>\n");
}

static void test_symbol_formats(void **state)
{
	(void)state;
	char buf[512], want[512];
	struct pk_sym sym;

	assert_int_equal(pk_sym_lookup((uintptr_t)st_chain1, &sym), 0);
	assert_true(sym.size > 0);
	assert_null(sym.object);
	snprintf(want, sizeof(want), "st_chain1+0x0/0x%lx", (unsigned long)sym.size);
	pk_scnprintf(buf, sizeof(buf), "%pS", (void *)st_chain1);
	assert_string_equal(buf, want);
	pk_scnprintf(buf, sizeof(buf), "%ps|%pSR", (void *)st_chain1, (void *)st_chain1);
	snprintf(want, sizeof(want), "st_chain1|st_chain1+0x0/0x%lx", (unsigned long)sym.size);
	assert_string_equal(buf, want);
	/* %pB: a return address, looked up one byte back. */
	pk_scnprintf(buf, sizeof(buf), "%pB", (void *)((char *)st_chain1 + 1));
	snprintf(want, sizeof(want), "st_chain1+0x1/0x%lx", (unsigned long)sym.size);
	assert_string_equal(buf, want);
	/* The width applies to the whole text, as the kernel's string(). */
	pk_scnprintf(buf, sizeof(buf), "[%12ps|%-12ps]", (void *)st_chain1, (void *)st_chain1);
	assert_string_equal(buf, "[   st_chain1|st_chain1   ]");
	/* No symbol: the kernel-without-kallsyms form stays. */
	pk_scnprintf(buf, sizeof(buf), "%pS", (void *)0x1000);
	assert_string_equal(buf, "0x0000000000001000");
	/* The record through printk. */
	printk("%ps\n", (void *)st_chain2);
	assert_string_equal(capture_text(&cap), "st_chain2\n");
}

__attribute__((noinline)) int st_in_object(void *arg)
{
	struct pk_frame *f = arg;
	int n = pk_stack_walk(f, PK_STACK_MAX, NULL, 0, (enum pk_unwind_mode)mode_auto);

	BARRIER();
	return n;
}

static void test_shared_object_frame(void **state)
{
	(void)state;
	struct pk_frame f[PK_STACK_MAX];
	char buf[512];
	int n = pk_traceobj_call(st_in_object, f) - 1;
	int found = 0;

	for (int i = 0; i < n; i++) {
		pk_scnprintf(buf, sizeof(buf), "%pB", (void *)f[i].pc);
		if (test_match(buf, "pk_traceobj_call+0x%/0x% [libpk_traceobj.so]")) {
			found = 1;
			/* called from here: the next frame is ours, unmarked */
			assert_true(i + 1 < n);
			pk_scnprintf(buf, sizeof(buf), "%pB", (void *)f[i + 1].pc);
			assert_match(buf, "test_shared_object_frame+0x%/0x%");
		}
	}
	assert_true(found);
	pk_scnprintf(buf, sizeof(buf), "%pS", (void *)pk_traceobj_call);
	assert_match(buf, "pk_traceobj_call+0x0/0x% [libpk_traceobj.so]");
}

static volatile int in_handler;

static void usr1_handler(int sig)
{
	(void)sig;
	in_handler = 1;
	dump_stack();
	BARRIER();
}

__attribute__((noinline)) void st_raiser(int sig)
{
	raise(sig);
	BARRIER();
}

static void test_trace_through_signal_frame(void **state)
{
	(void)state;
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	st_raiser(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	assert_true(in_handler);
	/* The handler, the libc frames of raise(), then the raiser and us. */
	assert_match(capture_text(&cap), "CPU: *\nCall Trace:\n <TASK>\n usr1_handler+0x%/0x%\n"
					 "*\n st_raiser+0x%/0x%\n"
					 " test_trace_through_signal_frame+0x%/0x%\n*");
}

#if defined(__x86_64__)
#include <ucontext.h>

/* A context from garbage: a pc in real code or anywhere, a stack of random
 * words (some pointing back into it, some into code), a random rbp. The
 * walk ends, without a fault, within PK_STACK_MAX frames. */
static void test_garbage_context(void **state)
{
	(void)state;
	static uintptr_t fake[512];
	struct pk_frame f[PK_STACK_MAX];
	unsigned seed = 4242;

	for (int round = 0; round < 2000; round++) {
		ucontext_t uc;

		memset(&uc, 0, sizeof(uc));
		for (size_t i = 0; i < 512; i++) {
			switch (rand_r(&seed) % 4) {
			case 0:
				fake[i] = (uintptr_t)&fake[rand_r(&seed) % 512];
				break;
			case 1:
				fake[i] = (uintptr_t)st_chain2 + rand_r(&seed) % 64;
				break;
			case 2:
				fake[i] = (uintptr_t)rand_r(&seed) << (rand_r(&seed) % 40);
				break;
			default:
				fake[i] = 0;
				break;
			}
		}
		uc.uc_mcontext.gregs[REG_RIP] = rand_r(&seed) % 2 ? (greg_t)((uintptr_t)st_chain1 + rand_r(&seed) % 32)
								  : (greg_t)rand_r(&seed);
		uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&fake[rand_r(&seed) % 512];
		uc.uc_mcontext.gregs[REG_RBP] = rand_r(&seed) % 2 ? (greg_t)(uintptr_t)&fake[rand_r(&seed) % 512]
								  : (greg_t)rand_r(&seed);
		int n = pk_stack_walk(f, PK_STACK_MAX, &uc, 0, (enum pk_unwind_mode)(round % 3));

		assert_true(n >= 0 && n <= PK_STACK_MAX);
	}
}
#else
static void test_garbage_context(void **state)
{
	(void)state;
	skip();
}
#endif

static void test_safe_read(void **state)
{
	(void)state;
	uint64_t v = 0x1122334455667788ULL, got = 0;

	assert_int_equal(pk_safe_read((uintptr_t)&v, &got, sizeof(got)), 0);
	assert_true(got == v);
	assert_int_equal(pk_safe_read(8, &got, sizeof(got)), -EFAULT);
	assert_int_equal(pk_safe_read(UINTPTR_MAX - 3, &got, sizeof(got)), -EFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_auto),
		cmocka_unit_test(test_chain_cfi),
		cmocka_unit_test(test_chain_frame_pointers),
		cmocka_unit_test(test_chain_checked_reads),
		cmocka_unit_test_setup_teardown(test_dump_stack_layout, setup_capture, teardown_capture),
		cmocka_unit_test_setup_teardown(test_symbol_formats, setup_capture, teardown_capture),
		cmocka_unit_test(test_shared_object_frame),
		cmocka_unit_test_setup_teardown(test_trace_through_signal_frame, setup_capture,
						teardown_capture),
		cmocka_unit_test(test_safe_read),
		cmocka_unit_test(test_garbage_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
