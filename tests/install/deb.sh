#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the Debian packages (debian/) from a copy of the source tree in a
# temporary directory, so that nothing lands in the tree or beside it; check
# what each package holds and depends on (udmesg and pk-forward without
# FUSE, pk-kmsgfs with it); extract them with dpkg -x into an empty root and
# build consumer.c against that root through pkg-config (sysroot) as C and
# C++ and through find_package(printk), then run it, the extracted udmesg
# and the packaged Python reader (python3-printk) over the extracted
# library; finally run lintian, which must report no error and no warning
# (the overrides in debian/*.lintian-overrides say why each is there).
# The package build runs the unit tests (ctest -L unit) unless
# DEB_BUILD_OPTIONS says nocheck.
# usage: deb.sh   (needs dpkg-dev, debhelper, dh-python, cmake, pkg-config,
# g++, python3 and lintian: scripts/setup.sh installs them)
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
packages=(libprintk0 libprintk-dev udmesg pk-forward pk-kmsgfs python3-printk)
# deb PACKAGE: its file (python3-printk is Architecture: all).
deb() {
	local f=$tmp/${1}_${debversion}_$arch.deb
	[[ -f $f ]] || f=$tmp/${1}_${debversion}_all.deb
	echo "$f"
}
for p in "${packages[@]}"; do
	[[ -f $(deb "$p") ]] || fail "no package $p"
done
# files PACKAGE: the paths it holds, directories left out.
files() {
	dpkg-deb -c "$(deb "$1")" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|'
}
need() {
	local pkg=$1 path list
	shift
	list=$(files "$pkg")
	for path in "$@"; do
		grep -qx -- "$path" <<<"$list" || fail "$pkg lacks $path"
	done
}
# only PACKAGE PATH...: the package holds these files and no others.
only() {
	local pkg=$1 got
	shift
	got=$(files "$pkg" | sort)
	[[ $got == "$(printf '%s\n' "$@" | sort)" ]] ||
		{ diff <(printf '%s\n' "$@" | sort) <(echo "$got"); fail "$pkg holds other files than expected"; }
}
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
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
# Every document README.md names as docs/*.md, beside it.
for d in "$top"/docs/*.md; do
	need libprintk-dev "/usr/share/doc/libprintk-dev/docs/$(basename "$d").gz"
done
need libprintk-dev /usr/share/doc/libprintk-dev/docs/perf-loggers.png \
	/usr/share/doc/libprintk-dev/examples/daemon/pk-daemon-demo.c \
	/usr/share/doc/libprintk-dev/examples/daemon/pk-daemon-demo.service \
	/usr/share/doc/libprintk-dev/examples/daemon/pk-daemon-demo.logrotate
# Each program in a package of its own, FUSE only with pk-kmsgfs.
for p in udmesg pk-forward pk-kmsgfs; do
	only "$p" "/usr/bin/$p" "/usr/share/man/man1/$p.1.gz" \
		"/usr/share/doc/$p/copyright" "/usr/share/doc/$p/changelog.Debian.gz" \
		"/usr/share/lintian/overrides/$p"
done
only python3-printk /usr/lib/python3/dist-packages/printk/__init__.py \
	/usr/share/doc/python3-printk/README.md /usr/share/doc/python3-printk/copyright \
	/usr/share/doc/python3-printk/changelog.Debian.gz /usr/share/lintian/overrides/python3-printk
for p in udmesg pk-forward; do
	[[ $(field "$p" Depends) != *fuse* ]] || fail "$p depends on FUSE: $(field "$p" Depends)"
	[[ $(field "$p" Recommends) != *fuse* ]] || fail "$p recommends FUSE: $(field "$p" Recommends)"
done
[[ $(field pk-kmsgfs Depends) == *libfuse3-* && $(field pk-kmsgfs Depends) == *fuse3,* ]] ||
	fail "pk-kmsgfs does not depend on fuse3 and libfuse3: $(field pk-kmsgfs Depends)"
[[ $(field pk-forward Recommends) == *librelp0* ]] ||
	fail "pk-forward does not recommend librelp0 (it opens it for RELP)"
[[ $(field python3-printk Depends) == *"libprintk0 (>= $debversion)"* && $(field python3-printk Depends) == *python3* ]] ||
	fail "python3-printk depends on: $(field python3-printk Depends)"
# The library package: its symbols file, from the version script.
dpkg-deb --ctrl-tarfile "$tmp/libprintk0_${debversion}_$arch.deb" | tar -xOf - ./symbols >"$tmp/symbols" ||
	fail "libprintk0 has no symbols file"
grep -qx " pk_version@LIBPRINTK_0.1 0.1.0" "$tmp/symbols" && grep -qx " pk_snprintf@LIBPRINTK_0.2 0.2.0" "$tmp/symbols" ||
	{ cat "$tmp/symbols"; fail "unexpected symbols file"; }
grep -qF "libprintk0 (= $debversion)" <<<"$(dpkg-deb -f "$tmp/libprintk-dev_${debversion}_$arch.deb" Depends)" ||
	fail "libprintk-dev does not depend on its libprintk0"
echo "deb: ${packages[*]} $debversion built, contents and dependencies as expected"

# An empty root with the packages extracted, and consumers built against it
# alone.
root=$tmp/root
for p in "${packages[@]}"; do
	dpkg -x "$(deb "$p")" "$root"
done
# What the programs load: no FUSE but for pk-kmsgfs.
# (objdump's output taken whole: grep -q in a pipe would end it early, and
# pipefail would count objdump's SIGPIPE.)
needed() { objdump -p "$root/usr/bin/$1" | awk '$1 == "NEEDED" {print $2}'; }
for p in udmesg pk-forward; do
	! grep -q fuse <<<"$(needed "$p")" || fail "$p links libfuse: $(needed "$p" | tr '\n' ' ')"
done
grep -q '^libfuse3\.so' <<<"$(needed pk-kmsgfs)" || fail "pk-kmsgfs does not link libfuse3"

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
# The packaged Python reader (python3-printk) over the extracted library,
# found by its soname as an installed one would be, on a log that library
# wrote.
[[ -x /usr/bin/python3 ]] || fail "no /usr/bin/python3 (scripts/setup.sh installs it)"
env -u PRINTK_LIBRARY PKG_PY=$root/usr/lib/python3/dist-packages PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 -I - "$tmp/py.log" "$version" "$root" <<'PY' || fail "the packaged Python reader failed on the extracted library"
import ctypes, os, sys
sys.path.insert(0, os.environ["PKG_PY"])  # -I: no user site, no PYTHONPATH
import printk
path, version, root = sys.argv[1], sys.argv[2], sys.argv[3]
assert printk.__file__.startswith(root + "/usr/lib/python3/dist-packages/printk/"), printk.__file__
assert printk.library_version() == version, printk.library_version()
with open("/proc/self/maps") as maps:
    loaded = {l.split()[-1] for l in maps if "libprintk.so" in l}
assert loaded and all(f.startswith(root + "/") for f in loaded), loaded
# A child writes, so that this process stays a reader only.
pid = os.fork()
if pid == 0:
    lib = ctypes.CDLL("libprintk.so.0")
    log = ctypes.c_void_p()
    ok = lib.pk_log_open_file(ctypes.byref(log), path.encode(), ctypes.c_size_t(0), 0) == 0 and \
        lib.pk_log_store(log, 1, 6, b"packaged", ctypes.c_size_t(8), None, ctypes.c_size_t(0)) == 0
    os._exit(0 if ok else 1)
assert os.waitpid(pid, 0)[1] == 0
got = [(r.seq, r.level, r.facility, r.text) for r in printk.open(path)]
assert got == [(0, 6, 1, "packaged")], got
print("deb: python3-printk read the log (libprintk %s from the extracted root)" % version)
PY
echo "deb: consumers built with pkg-config (sysroot) and find_package against the extracted packages"
# Every symbol the extracted library exports is in the symbols file, with
# its version node.
exported=$(nm -D --defined-only "$root$lib/libprintk.so.0" | awk '$2 != "A" {sub("@@", "@", $3); print $3}' | sort)
listed=$(awk '/^ / && $1 !~ /^LIBPRINTK_/ {print $1}' "$tmp/symbols" | sort)
[[ $exported == "$listed" ]] || { diff <(echo "$exported") <(echo "$listed"); fail "symbols file and library disagree"; }
echo "deb: symbols file lists the $(wc -l <<<"$exported") exported symbols"

command -v lintian >/dev/null || fail "lintian is not installed (scripts/setup.sh installs it)"
# (--show-overrides would count the overridden tags as failures.)
lintian --fail-on error,warning "$tmp"/*_"$arch".changes >"$tmp/lintian.log" 2>&1 ||
	{ cat "$tmp/lintian.log"; fail "lintian reported errors or warnings"; }
grep -E '^[EW]:' "$tmp/lintian.log" && fail "lintian reported errors or warnings"
echo "deb: lintian: no errors, no warnings (overrides: $(cat "$top"/debian/*.lintian-overrides | grep -v '^#' | sort -u | tr '\n' ' '))"
[[ $(git -C "$top" status --porcelain 2>/dev/null || true) == "$status_before" ]] ||
	fail "the source tree changed: $(git -C "$top" status --porcelain)"
[[ -z $(find "$top/.." -maxdepth 1 -name 'libprintk*.deb' -newer "$tmp" 2>/dev/null) ]] ||
	fail "a package was written beside the source tree"
echo "deb check ok"
