#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install a build into a prefix and build consumers against the installed
# tree only: every public header alone as C11 and C++11, a program through
# pkg-config as C and as C++, and one through find_package(printk).
# Also checks the shared library's soname and that it exports only pk_* symbols,
# and that a project including the source tree with add_subdirectory() builds
# the library alone by default (no tests, tools, benchmarks or examples), and
# an example when it turns that option on.
# usage: check.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1
prefix=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libprintk.so' | head -1)")
export PKG_CONFIG_PATH=$libdir/pkgconfig
cflags=$(pkg-config --cflags printk)
libs=$(pkg-config --libs printk)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The generated header is installed with the others (the loop below compiles it).
[[ -f $prefix/include/printk/version.h ]] || { echo "printk/version.h not installed"; exit 1; }
[[ $(pkg-config --modversion printk) == "$(sed -n 's/^#define PRINTK_VERSION_STRING "\(.*\)"$/\1/p' \
	"$prefix/include/printk/version.h")" ]] || { echo "printk.pc and version.h disagree"; exit 1; }

for h in "$prefix"/include/printk/*.h; do
	name=$(basename "$h")
	printf '#include <printk/%s>\n#include <printk/%s>\nint main(void) { return 0; }\n' "$name" "$name" >"$tmp/one.c"
	gcc -std=c11 -Wall -Wextra -Werror -pedantic $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	g++ -std=c++11 -x c++ -Wall -Wextra -Werror $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	clang -std=c11 -Wall -Wextra -Werror $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	echo "header $name: C11 and C++11 ok"
done

# The kernel's snprintf on request: in C the four names the C library owns
# become the kernel's (a zero with precision 0 prints "0", %pM is a MAC);
# in C++ they stay the C library's, std::snprintf included.
cat >"$tmp/knames.c" <<'EOF'
#define PRINTK_KERNEL_SPRINTF
#include <printk/printk.h>
#include <string.h>
#ifdef __cplusplus
#include <cstdio>
#endif
int main(void)
{
	static const unsigned char mac[6] = {1, 2, 3, 4, 5, 6};
	char buf[64], *p;
	int n = scnprintf(buf, sizeof(buf), "%.0d|%pM", 0, mac);
#ifdef __cplusplus
	if (n != 19 || strcmp(buf, "0|01:02:03:04:05:06"))
		return 1;
	if (std::snprintf(buf, sizeof(buf), "%.0d|", 0) != 1 || snprintf(buf, 4, "%.0d", 0) != 0)
		return 2;
#else
	if (snprintf(buf, sizeof(buf), "%.0d|%pM", 0, mac) != n || strcmp(buf, "0|01:02:03:04:05:06"))
		return 1;
	if (sprintf(buf, "%#x", 0u) != 3 || strcmp(buf, "0x0"))
		return 2;
#endif
	p = kasprintf(GFP_KERNEL, "%s%d", "eth", 0);
	if (!p || strcmp(p, "eth0"))
		return 3;
	kfree(p);
	return 0;
}
EOF
gcc -std=c11 -Wall -Wextra -Werror -pedantic $cflags "$tmp/knames.c" $libs -o "$tmp/knames_c"
LD_LIBRARY_PATH=$libdir "$tmp/knames_c" || { echo "PRINTK_KERNEL_SPRINTF in C: wrong output ($?)"; exit 1; }
g++ -std=c++11 -x c++ -Wall -Wextra -Werror $cflags "$tmp/knames.c" $libs -o "$tmp/knames_cxx"
LD_LIBRARY_PATH=$libdir "$tmp/knames_cxx" || { echo "PRINTK_KERNEL_SPRINTF in C++: wrong output ($?)"; exit 1; }
echo "kernel string names: C gets the kernel's snprintf, C++ keeps std::snprintf"

gcc -std=c11 -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_c"
LD_LIBRARY_PATH=$libdir "$tmp/consumer_c"
g++ -x c++ -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_cxx"
LD_LIBRARY_PATH=$libdir "$tmp/consumer_cxx"
# Linked statically, a program that only calls printk still starts the
# library (the constructor lives in a file printk itself does not need).
printf '#include <printk/printk.h>\nint main(void) { pr_info("static ok\\n"); return 0; }\n' >"$tmp/static.c"
gcc -std=c11 -Wall -Werror $cflags "$tmp/static.c" "$libdir/libprintk.a" -lpthread -o "$tmp/static"
out=$(PRINTK_OPTS=printk.time=0 "$tmp/static" 2>&1)
[[ $out == "static ok" ]] || { echo "statically linked printk printed '$out', not 'static ok'"; exit 1; }
echo "static consumer ok"
cmake -S "$here/cmake" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/consumer"

# add_subdirectory(): with the defaults, the only programs built are the
# consumer's own; no test, tool, benchmark or example is even a target.
sub=$tmp/sub
cmake -S "$here/subdir" -B "$sub" >"$tmp/sub.log" || { cat "$tmp/sub.log"; exit 1; }
cmake --build "$sub" -j2 >>"$tmp/sub.log" || { tail -30 "$tmp/sub.log"; exit 1; }
"$sub/consumer"
progs=$(find "$sub" -path "$sub/CMakeFiles" -prune -o -path "$sub/libprintk/CMakeFiles" -prune -o \
	-type f -perm -u+x ! -name '*.so*' -print | sed "s|^$sub/||" | sort)
[[ $progs == consumer ]] || { echo "add_subdirectory built more than the library:"; echo "$progs"; exit 1; }
extra=$(cmake --build "$sub" --target help | grep -E 'test_|stress_|udmesg|bench_|-demo|printk_testutil' || true)
[[ -z $extra ]] || { echo "add_subdirectory defined targets beyond the library:"; echo "$extra"; exit 1; }
[[ -f $sub/libprintk/libprintk.a && -f $sub/libprintk/libprintk.so ]] ||
	{ echo "add_subdirectory did not build libprintk.a and libprintk.so"; exit 1; }
# An option set by the including project still turns its part on.
cmake -S "$here/subdir" -B "$sub" -DPRINTK_BUILD_EXAMPLES=ON >>"$tmp/sub.log" || { cat "$tmp/sub.log"; exit 1; }
cmake --build "$sub" -j2 >>"$tmp/sub.log" || { tail -30 "$tmp/sub.log"; exit 1; }
[[ -x $sub/libprintk/examples/ring-demo ]] ||
	{ echo "add_subdirectory with PRINTK_BUILD_EXAMPLES=ON built no examples"; exit 1; }
echo "add_subdirectory: the library alone by default, examples on request"

soname=$(readelf -d "$libdir/libprintk.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == libprintk.so.0 ]] || { echo "unexpected soname: $soname"; exit 1; }
# Each function is in the version node of the release that added it
# (docs/abi.md): the functions added in 0.2.0 in LIBPRINTK_0.2, the rest
# in 0.1.
vers=$(objdump -T "$libdir/libprintk.so" | awk 'NF >= 2 && $(NF - 1) ~ /^LIBPRINTK_/ && $NF ~ /^pk_/ {print $NF, $(NF - 1)}')
for f in pk_snprintf pk_vsnprintf pk_scnprintf pk_vscnprintf pk_sprintf pk_vsprintf pk_kasprintf \
	pk_kvasprintf pk_kfree pk_printk_link_all_options pk_console_stats pk_console_syslog_set_framing \
	pk_console_syslog_set_bom pk_console_create pk_set_lanes pk_lanes pk_set_lane_clock_ordered pk_lane_clock_ordered pk_set_printk_time_style pk_get_printk_time_style pk_console_set_time_style \
	pk_console_get_time_style pk_log_realtime_offset pk_module_set_level pk_module_get_level \
	pk_module_clear_levels pk_module_level_gen pk_log_module_level pk_set_printk_srcloc pk_get_printk_srcloc \
	pk__site_resolve pk__site_default_stored pk__printk_site pk__printk_lit_site pk__site_held pk_console_set_rotate_time; do
	grep -qx "$f LIBPRINTK_0.2" <<<"$vers" || { echo "$f is not in LIBPRINTK_0.2"; exit 1; }
done
grep -qx "pk_printk LIBPRINTK_0.1" <<<"$vers" || { echo "pk_printk is not in LIBPRINTK_0.1"; exit 1; }
leaks=$(nm -D --defined-only "$libdir/libprintk.so" | awk '$2 != "A" {print $3}' | grep -v '^pk_' || true)
[[ -z $leaks ]] || { echo "symbols exported without the pk_ prefix:"; echo "$leaks"; exit 1; }
echo "install check ok (soname $soname, $(nm -D --defined-only "$libdir/libprintk.so" | wc -l) exported symbols)"
