#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/static_size.sh [BUILD_DIR [LIB]] - what libprintk.a costs a program
# that calls only pr_info(), and what a filtered pr_info() costs in
# instructions.
#
#  1. `size` of that program linked against LIB (default
#     BUILD_DIR/libprintk.a), once with the C library shared and once fully
#     static (-static), and the library's objects the linker took;
#  2. the same program with pk_printk_link_all_options() (the opt-in that
#     links what PRINTK_OPTS can name beyond the core), for comparison;
#  3. callgrind's instruction count per filtered pr_info() (console_loglevel
#     1, bench/printk's "filtered" message): the difference between 20000 and
#     10000 calls, divided by 10000, so start-up and exit cancel out. Against
#     LIB, and against BUILD_DIR/libprintk.so when LIB is the default.
# Figures, not a test. Needs gcc; valgrind for 3 (left out without it, or
# with CALLGRIND=0).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
lib=${2:-$build/libprintk.a}
[[ -f $lib ]] || { echo "bench/static_size.sh: $lib is not built" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/static-size.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
inc=(-I"$top/include" -I"$build/include")

cat >"$tmp/only.c" <<'C'
#include <printk/printk.h>
int main(void)
{
	pr_info("hello %d\n", 1);
	return 0;
}
C
cat >"$tmp/optin.c" <<'C'
#include <printk/printk.h>
int main(void)
{
	pk_printk_link_all_options();
	pr_info("hello %d\n", 1);
	return 0;
}
C
cat >"$tmp/driver.c" <<'C'
#include <stdlib.h>
#include <printk/printk.h>
static const char *const what[4] = { "request", "packet", "job", "frame" };
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;

	pk_set_console_loglevel(1);
	for (long i = 0; i < n; i++)
		pr_info("worker %d processed %s in %lu us\n", (int)(i & 7), what[i & 3],
			(unsigned long)i * 3);
	return 0;
}
C

objects() {
	gcc -O2 "${inc[@]}" "$1" "$lib" -lpthread -o "$tmp/x" -Wl,-Map="$tmp/map" >/dev/null 2>&1
	grep -oE "^[^ ]*libprintk[^ ]*\.a\([a-z_]+\.c\.o\)" "$tmp/map" | sed 's/.*(//;s/\.c\.o)//' | sort -u | tr '\n' ' '
}

for prog in only optin; do
	if [[ $prog == optin && $(nm "$lib" 2>/dev/null | grep -c ' T pk_printk_link_all_options$') == 0 ]]; then
		continue
	fi
	gcc -O2 "${inc[@]}" "$tmp/$prog.c" "$lib" -lpthread -o "$tmp/$prog.dyn"
	gcc -O2 -static "${inc[@]}" "$tmp/$prog.c" "$lib" -lpthread -o "$tmp/$prog.static" 2>/dev/null
	echo "== $prog.c ($( [[ $prog == only ]] && echo 'pr_info() only' || echo 'with pk_printk_link_all_options()'))"
	size "$tmp/$prog.dyn" "$tmp/$prog.static" | sed "s|$tmp/||"
	echo "objects: $(objects "$tmp/$prog.c")"
done

if [[ ${CALLGRIND:-1} != 0 ]] && command -v valgrind >/dev/null; then
	per_call() { # program [env...]
		local a b
		a=$(env "${@:2}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" 10000 2>&1 |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		b=$(env "${@:2}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" 20000 2>&1 |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		echo "scale=1; ($b - $a) / 10000" | bc
	}
	gcc -O2 "${inc[@]}" "$tmp/driver.c" "$lib" -lpthread -o "$tmp/driver.a"
	echo "callgrind, instructions per filtered pr_info, $(basename "$lib"): $(per_call "$tmp/driver.a")"
	if [[ $# -lt 2 && -f $build/libprintk.so ]]; then
		gcc -O2 "${inc[@]}" "$tmp/driver.c" -L"$build" -lprintk -lpthread -o "$tmp/driver.so"
		echo "callgrind, instructions per filtered pr_info, libprintk.so: $(per_call "$tmp/driver.so" LD_LIBRARY_PATH="$build")"
	fi
fi
