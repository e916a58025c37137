// SPDX-License-Identifier: MIT
/*
 * traceobj.c - a shared object for test_stacktrace: a frame of it in a
 * trace is marked with the object's name, as the kernel marks a module's.
 */
int pk_traceobj_call(int (*fn)(void *), void *arg);

__attribute__((noinline)) int pk_traceobj_call(int (*fn)(void *), void *arg)
{
	int r = fn(arg);

	__asm__ volatile("" ::: "memory"); /* keep the call out of tail position */
	return r + 1;
}
