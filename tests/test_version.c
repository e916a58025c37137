// SPDX-License-Identifier: MIT
/*
 * test_version.c - <printk/version.h> and pk_version().
 *   - the generated macros agree with each other: the string is
 *     "MAJOR.MINOR.PATCH" of the three numbers, PRINTK_VERSION_NUMBER is
 *     PRINTK_VERSION() of them, and PRINTK_VERSION() orders releases;
 *   - pk_version() of the library this test links returns that string;
 *   - the shared library of the same build, loaded by its soname
 *     (libprintk.so.MAJOR) in a child process, returns it too.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <printk/version.h>

#include "testutil.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* Compile-time use, as a program would write it. */
#if PRINTK_VERSION_NUMBER < PRINTK_VERSION(0, 1, 0)
#error "PRINTK_VERSION_NUMBER is below the first release"
#endif

static void test_macros_agree(void **state)
{
	char want[32];

	(void)state;
	snprintf(want, sizeof(want), "%d.%d.%d", PRINTK_VERSION_MAJOR, PRINTK_VERSION_MINOR,
		 PRINTK_VERSION_PATCH);
	assert_string_equal(PRINTK_VERSION_STRING, want);
	assert_int_equal(PRINTK_VERSION_NUMBER, PRINTK_VERSION_MAJOR * 65536 +
							PRINTK_VERSION_MINOR * 256 +
							PRINTK_VERSION_PATCH);
	assert_true(PRINTK_VERSION(0, 1, 0) < PRINTK_VERSION(0, 1, 1));
	assert_true(PRINTK_VERSION(0, 1, 255) < PRINTK_VERSION(0, 2, 0));
	assert_true(PRINTK_VERSION(0, 255, 255) < PRINTK_VERSION(1, 0, 0));
	assert_true(PRINTK_VERSION_MINOR < 256 && PRINTK_VERSION_PATCH < 256);
}

static void test_runtime_matches_header(void **state)
{
	(void)state;
	assert_non_null(pk_version());
	assert_string_equal(pk_version(), PRINTK_VERSION_STRING);
	/* A static string: the same pointer every time. */
	assert_ptr_equal(pk_version(), pk_version());
}

/* Loading a second copy of the library runs its start-up code: done in a
 * child, which leaves with _exit() and so never runs that copy's exit path. */
static int shared_child(void *arg)
{
	const char *path = arg;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const char *(*fn)(void);
	const char *v;

	if (!h) {
		printf("dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	*(void **)&fn = dlsym(h, "pk_version");
	if (!fn) {
		printf("dlsym pk_version: %s\n", dlerror());
		return 2;
	}
	v = fn();
	if (strcmp(v, PRINTK_VERSION_STRING) != 0) {
		printf("shared library says %s, header %s\n", v, PRINTK_VERSION_STRING);
		return 3;
	}
	return 0;
}

static void test_shared_library_by_soname(void **state)
{
	const char *build = getenv("PRINTK_TEST_BUILD_DIR");
	struct child_result res;
	char path[4096];

	(void)state;
	if (!build)
		fail_msg("PRINTK_TEST_BUILD_DIR is not set (run through ctest)");
	snprintf(path, sizeof(path), "%s/libprintk.so.%s", build, STR(PRINTK_VERSION_MAJOR));
	run_child_ok(shared_child, path, 10000, &res);
	child_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_macros_agree),
		cmocka_unit_test(test_runtime_matches_header),
		cmocka_unit_test(test_shared_library_by_soname),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
