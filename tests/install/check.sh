#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install a build into a prefix and build consumers against the installed
# tree only: every public header alone as C11 and C++11, a program through
# pkg-config as C and as C++, and one through find_package(printk).
# Also checks the shared library's soname and that it exports only pk_* symbols.
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

for h in "$prefix"/include/printk/*.h; do
	name=$(basename "$h")
	printf '#include <printk/%s>\n#include <printk/%s>\nint main(void) { return 0; }\n' "$name" "$name" >"$tmp/one.c"
	gcc -std=c11 -Wall -Wextra -Werror -pedantic $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	g++ -std=c++11 -x c++ -Wall -Wextra -Werror $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	clang -std=c11 -Wall -Wextra -Werror $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	echo "header $name: C11 and C++11 ok"
done

gcc -std=c11 -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_c"
LD_LIBRARY_PATH=$libdir "$tmp/consumer_c"
g++ -x c++ -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_cxx"
LD_LIBRARY_PATH=$libdir "$tmp/consumer_cxx"
cmake -S "$here/cmake" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/consumer"

soname=$(readelf -d "$libdir/libprintk.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == libprintk.so.0 ]] || { echo "unexpected soname: $soname"; exit 1; }
leaks=$(nm -D --defined-only "$libdir/libprintk.so" | awk '$2 != "A" {print $3}' | grep -v '^pk_' || true)
[[ -z $leaks ]] || { echo "symbols exported without the pk_ prefix:"; echo "$leaks"; exit 1; }
echo "install check ok (soname $soname, $(nm -D --defined-only "$libdir/libprintk.so" | wc -l) exported symbols)"
