// SPDX-License-Identifier: MIT
/*
 * test_stacktrace_elf.c - the symbol loader reads untrusted ELF files:
 * a well-formed file gives its names; a file with any header, table or name
 * pointing past its end, a wrong entry size, a misaligned table or a name
 * without its NUL is refused (-ENOEXEC) or the name is not given
 * (-ENOENT), never read out of bounds; and thousands of randomly damaged
 * copies load and look up without a fault (run under ASan in CI).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stacktrace.h"
#include "testutil.h"

/* Header, 4 symbols, their strings, 3 section headers. */
struct image {
	Elf64_Ehdr eh;
	Elf64_Sym sym[4];
	char str[32];
	Elf64_Shdr sh[3];
};

static char path[64];

static void make(struct image *im)
{
	static const char strings[32] = "\0good_fn\0next_fn\0sizeless\0";

	memset(im, 0, sizeof(*im));
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_ident[EI_VERSION] = EV_CURRENT;
	im->eh.e_type = ET_DYN;
	im->eh.e_shoff = offsetof(struct image, sh);
	im->eh.e_shentsize = sizeof(Elf64_Shdr);
	im->eh.e_shnum = 3;
	memcpy(im->str, strings, sizeof(strings));
	/* [0] is the null symbol */
	im->sym[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				  .st_shndx = 1, .st_value = 0x1000, .st_size = 0x20 };
	im->sym[2] = (Elf64_Sym){ .st_name = 9, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC),
				  .st_shndx = 1, .st_value = 0x1040, .st_size = 0x10 };
	im->sym[3] = (Elf64_Sym){ .st_name = 17, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				  .st_shndx = 1, .st_value = 0x1080, .st_size = 0 };
	im->sh[1] = (Elf64_Shdr){ .sh_type = SHT_SYMTAB, .sh_offset = offsetof(struct image, sym),
				  .sh_size = sizeof(im->sym), .sh_link = 2,
				  .sh_entsize = sizeof(Elf64_Sym) };
	im->sh[2] = (Elf64_Shdr){ .sh_type = SHT_STRTAB, .sh_offset = offsetof(struct image, str),
				  .sh_size = sizeof(im->str) };
}

static void write_image(const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int lookup(const struct image *im, size_t len, uintptr_t key, char *name)
{
	write_image(im, len);
	return pk_symbols_test_file(path, key, name, 64);
}

static int setup(void **state)
{
	(void)state;
	test_temp_file(path, "/tmp/pk_elfXXXXXX");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_good_file(void **state)
{
	(void)state;
	struct image im;
	char name[64];

	make(&im);
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), 0);
	assert_string_equal(name, "good_fn");
	assert_int_equal(lookup(&im, sizeof(im), 0x104f, name), 0);
	assert_string_equal(name, "next_fn");
	/* past good_fn's size, before next_fn: no symbol */
	assert_int_equal(lookup(&im, sizeof(im), 0x1030, name), -ENOENT);
	assert_int_equal(lookup(&im, sizeof(im), 0xfff, name), -ENOENT);
	/* a size-0 symbol with no symbol after it: no extent, no name */
	assert_int_equal(lookup(&im, sizeof(im), 0x1080, name), -ENOENT);
	/* ... and with one after it, it runs up to it */
	im.sym[2].st_value = 0x10c0;
	assert_int_equal(lookup(&im, sizeof(im), 0x10a0, name), 0);
	assert_string_equal(name, "sizeless");
}

static void test_refused_headers(void **state)
{
	(void)state;
	struct image im;
	char name[64];

	make(&im);
	assert_int_equal(lookup(&im, sizeof(Elf64_Ehdr) - 1, 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_ident[1] = 'X';
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_shoff = sizeof(im);
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_shoff = UINT64_MAX - 16;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_shnum = 60000;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_shentsize = 32;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.eh.e_shoff -= 4; /* inside the file, misaligned */
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	/* the file cut inside the section headers */
	make(&im);
	assert_int_equal(lookup(&im, sizeof(im) - 1, 0x1010, name), -ENOEXEC);
}

static void test_refused_tables(void **state)
{
	(void)state;
	struct image im;
	char name[64];

	make(&im);
	im.sh[1].sh_size = 1u << 30;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_offset = UINT64_MAX - 8;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_entsize = 16;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_offset += 4; /* misaligned */
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_link = 3;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_link = 0; /* the null section is no string table */
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[2].sh_size = sizeof(im);
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
	make(&im);
	im.sh[1].sh_type = SHT_PROGBITS; /* no symbol table at all */
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOEXEC);
}

static void test_bad_names(void **state)
{
	(void)state;
	struct image im;
	char name[64];

	make(&im);
	im.sym[1].st_name = sizeof(im.str);
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOENT);
	make(&im);
	im.sym[1].st_name = 0xffffffffu;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOENT);
	/* a name running to the table's end without a NUL */
	make(&im);
	memset(im.str + 20, 'x', sizeof(im.str) - 20);
	im.sym[1].st_name = 20;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOENT);
	/* an empty name */
	make(&im);
	im.sym[1].st_name = 0;
	assert_int_equal(lookup(&im, sizeof(im), 0x1010, name), -ENOENT);
}

static void test_random_damage(void **state)
{
	(void)state;
	struct image good, im;
	char name[64];
	unsigned seed = 12345;

	make(&good);
	for (int round = 0; round < 3000; round++) {
		im = good;
		int flips = 1 + (int)(rand_r(&seed) % 8);

		for (int i = 0; i < flips; i++)
			((unsigned char *)&im)[rand_r(&seed) % sizeof(im)] = (unsigned char)rand_r(&seed);
		size_t len = rand_r(&seed) % 4 ? sizeof(im) : rand_r(&seed) % sizeof(im);
		int r = lookup(&im, len, 0x1000 + rand_r(&seed) % 0x100, name);

		assert_true(r == 0 || r == -ENOENT || r == -ENOEXEC);
		if (r == 0)
			assert_true(strlen(name) < sizeof(im.str));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_damage, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
