#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the Debian packages (debian/) from a copy of the source tree in a
# temporary directory, so that nothing lands in the tree or beside it; check
# what each package holds; extract them with dpkg -x into an empty root and
# build consumer.c against that root through pkg-config (sysroot) as C and
# C++ and through find_package(printk), then run it, the extracted udmesg
# and the Python reader (python/) over the extracted library; finally run
# lintian, which must report no error.
# The package build runs the unit tests (ctest -L unit) unless
# DEB_BUILD_OPTIONS says nocheck.
# usage: deb.sh   (needs dpkg-dev, debhelper, cmake, pkg-config, g++; lintian
# is used when installed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
[[ -n ${PRINTK_DEB_KEEP:-} ]] && echo "deb: keeping $tmp" || trap 'rm -rf "$tmp"' EXIT

fail() { echo "deb: $*"; exit 1; }

version=$(sed -n 's/^project(libprintk VERSION \([0-9.]*\) .*/\1/p' "$top/CMakeLists.txt")
debversion=$(cd "$top" && dpkg-parsechangelog -S Version)
[[ ${debversion%-*} == "$version" ]] ||
	fail "debian/changelog is at $debversion, CMakeLists.txt at $version"

status_before=$(git -C "$top" status --porcelain 2>/dev/null || true)

# The copy: what git tracks plus new files it does not ignore (no build
# directories), or, outside a git checkout, the tree without build/.
src=$tmp/libprintk-$version
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do if [[ -e $f ]]; then printf '%s\0' "$f"; fi; done |
		tar --null -T - -cf -) | tar -xf - -C "$src"
else
	tar -C "$top" --exclude=./build --exclude='./build-*' -cf - . | tar -xf - -C "$src"
fi

log=$tmp/build.log
export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=$(nproc)}
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$log" 2>&1 || { tail -60 "$log"; fail "dpkg-buildpackage failed"; }
grep -E '^[0-9]+% tests passed|tests failed out of' "$log" || true

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in libprintk0 libprintk-dev udmesg; do
	[[ -f $tmp/${p}_${debversion}_$arch.deb ]] || fail "no package $p"
done
need() {
	local pkg=$1 path list
	shift
	list=$(dpkg-deb -c "$tmp/${pkg}_${debversion}_$arch.deb" | awk '{print $6}' | sed 's|^\./|/|')
	for path in "$@"; do
		grep -qx -- "$path" <<<"$list" || fail "$pkg lacks $path"
	done
}
lib=/usr/lib/$multiarch
need libprintk0 "$lib/libprintk.so.0" "$lib/libprintk.so.$version" \
	/usr/share/doc/libprintk0/copyright /usr/share/doc/libprintk0/changelog.Debian.gz
need libprintk-dev "$lib/libprintk.so" "$lib/libprintk.a" "$lib/pkgconfig/printk.pc" \
	/usr/include/printk/printk.h /usr/include/printk/version.h \
	"$lib/cmake/printk/printkConfig.cmake" "$lib/cmake/printk/printkTargets.cmake" \
	/usr/share/doc/libprintk-dev/README.md.gz /usr/share/doc/libprintk-dev/NEWS.md.gz \
	/usr/share/doc/libprintk-dev/examples/boot-demo.c /usr/share/doc/libprintk-dev/copyright \
	/usr/share/man/man3/printk.3.gz /usr/share/man/man3/pk_log_read.3.gz \
	/usr/share/man/man7/printk-opts.7.gz /usr/share/man/man7/libprintk.7.gz
need udmesg /usr/bin/udmesg /usr/share/man/man1/udmesg.1.gz /usr/share/doc/udmesg/copyright \
	/usr/bin/pk-forward /usr/share/man/man1/pk-forward.1.gz
# The library package: its symbols file, from the version script.
dpkg-deb --ctrl-tarfile "$tmp/libprintk0_${debversion}_$arch.deb" | tar -xOf - ./symbols >"$tmp/symbols" ||
	fail "libprintk0 has no symbols file"
grep -qx " pk_version@LIBPRINTK_0.1 0.1.0" "$tmp/symbols" || { cat "$tmp/symbols"; fail "unexpected symbols file"; }
grep -qF "libprintk0 (= $debversion)" <<<"$(dpkg-deb -f "$tmp/libprintk-dev_${debversion}_$arch.deb" Depends)" ||
	fail "libprintk-dev does not depend on its libprintk0"
echo "deb: libprintk0, libprintk-dev and udmesg $debversion built, contents as expected"

# An empty root with the three packages extracted, and consumers built
# against it alone.
root=$tmp/root
for p in libprintk0 libprintk-dev udmesg; do
	dpkg -x "$tmp/${p}_${debversion}_$arch.deb" "$root"
done
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_LIBDIR=$root$lib/pkgconfig
unset PKG_CONFIG_PATH
cflags=$(pkg-config --cflags printk)
libs=$(pkg-config --libs printk)
[[ $(pkg-config --modversion printk) == "$version" ]] || fail "printk.pc says $(pkg-config --modversion printk)"
[[ $cflags == *"-I$root/usr/include"* ]] || fail "pkg-config --cflags gave '$cflags', outside the root"
for h in "$root"/usr/include/printk/*.h; do
	printf '#include <printk/%s>\nint main(void) { return 0; }\n' "$(basename "$h")" >"$tmp/one.c"
	gcc -std=c11 -Wall -Wextra -Werror -pedantic $cflags -c "$tmp/one.c" -o "$tmp/one.o"
	g++ -std=c++11 -x c++ -Wall -Wextra -Werror $cflags -c "$tmp/one.c" -o "$tmp/one.o"
done
gcc -std=c11 -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_c"
g++ -x c++ -Wall -Wextra -Werror $cflags "$here/consumer.c" $libs -o "$tmp/consumer_cxx"
export LD_LIBRARY_PATH=$root$lib
"$tmp/consumer_c"
"$tmp/consumer_cxx"
# The program really runs with the extracted library.
grep -q "libprintk.so.0 => $root$lib/libprintk.so.0" <<<"$(ldd "$tmp/consumer_c")" ||
	{ ldd "$tmp/consumer_c"; fail "consumer did not load the extracted libprintk.so.0"; }
cmake -S "$here/cmake" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$root/usr" >"$tmp/cm.log" 2>&1 ||
	{ cat "$tmp/cm.log"; fail "find_package(printk) against the extracted tree failed"; }
cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "CMake consumer did not build"; }
"$tmp/cm/consumer"
[[ $("$root/usr/bin/udmesg" --version) == "udmesg from libprintk $version" ]] ||
	fail "extracted udmesg --version says: $("$root/usr/bin/udmesg" --version)"
# The Python reader (python/) over the extracted library, on a log the
# consumer's library wrote.
if [[ -x /usr/bin/python3 ]]; then
	PRINTK_LIBRARY=$root$lib/libprintk.so.0 PYTHONPATH=$top/python PYTHONDONTWRITEBYTECODE=1 \
		/usr/bin/python3 - "$tmp/py.log" "$version" <<'PY' || fail "the Python reader failed on the extracted library"
import ctypes, os, sys
import printk
path, version = sys.argv[1], sys.argv[2]
assert printk.library_version() == version, printk.library_version()
# A child writes, so that this process stays a reader only.
pid = os.fork()
if pid == 0:
    lib = ctypes.CDLL(os.environ["PRINTK_LIBRARY"])
    log = ctypes.c_void_p()
    ok = lib.pk_log_open_file(ctypes.byref(log), path.encode(), ctypes.c_size_t(0), 0) == 0 and \
        lib.pk_log_store(log, 1, 6, b"packaged", ctypes.c_size_t(8), None, ctypes.c_size_t(0)) == 0
    os._exit(0 if ok else 1)
assert os.waitpid(pid, 0)[1] == 0
got = [(r.seq, r.level, r.facility, r.text) for r in printk.open(path)]
assert got == [(0, 6, 1, "packaged")], got
print("python reader ok (libprintk %s)" % version)
PY
fi
echo "deb: consumers built with pkg-config (sysroot) and find_package against the extracted packages"
# Every symbol the extracted library exports is in the symbols file, with
# its version node.
exported=$(nm -D --defined-only "$root$lib/libprintk.so.0" | awk '$2 != "A" {sub("@@", "@", $3); print $3}' | sort)
listed=$(awk '/^ / && $1 !~ /^LIBPRINTK_/ {print $1}' "$tmp/symbols" | sort)
[[ $exported == "$listed" ]] || { diff <(echo "$exported") <(echo "$listed"); fail "symbols file and library disagree"; }
echo "deb: symbols file lists the $(wc -l <<<"$exported") exported symbols"

if command -v lintian >/dev/null; then
	lintian --fail-on error "$tmp"/*_"$arch".changes >"$tmp/lintian.log" 2>&1 ||
		{ cat "$tmp/lintian.log"; fail "lintian reported errors"; }
	sed 's/^/lintian: /' "$tmp/lintian.log"
	echo "deb: lintian: no errors ($(grep -c '^W:' "$tmp/lintian.log" || true) warnings)"
else
	echo "deb: lintian not installed, not run"
fi
[[ $(git -C "$top" status --porcelain 2>/dev/null || true) == "$status_before" ]] ||
	fail "the source tree changed: $(git -C "$top" status --porcelain)"
[[ -z $(find "$top/.." -maxdepth 1 -name 'libprintk*.deb' -newer "$tmp" 2>/dev/null) ]] ||
	fail "a package was written beside the source tree"
echo "deb check ok"
