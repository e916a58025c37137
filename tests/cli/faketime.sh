# SPDX-License-Identifier: MIT
# faketime.sh - sourced after common.sh by the tests that fake the wall
# clock with libfaketime (Debian: faketime): test_time_styles.sh and
# test_console_rotate_time.sh. The host's clock is never touched.
#
# Sets WRITER (tests/time-writer), PRELOAD (what LD_PRELOAD must hold for
# it), BOUND (the time bound every faked writer runs under, so a hang
# fails its check by name, not the run), and defines set_stamp and check.

WRITER=$PRINTK_TEST_BUILD_DIR/tests/time-writer
FAKELIB=
# The multi-threaded build: the writers have printer threads, and the
# plain one reads its timestamp file into static buffers unlocked, so a
# clock read racing another thread's returns the real time.
for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 /usr/lib/*/faketime/libfaketimeMT.so.1 \
	/usr/lib/faketime/libfaketimeMT.so.1; do
	if [ -e "$f" ]; then
		FAKELIB=$f
		break
	fi
done
if [ -z "$FAKELIB" ] || [ ! -x "$WRITER" ]; then
	echo "FAIL: needs libfaketime (Debian: faketime, scripts/setup.sh) and $WRITER"
	exit 1
fi
# A writer built with gcc's ASan loads libasan.so, which must come first in
# the list of loaded objects: it goes before libfaketime.
PRELOAD=$FAKELIB
asanlib=$(ldd "$WRITER" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
[ -n "$asanlib" ] && PRELOAD="$asanlib $FAKELIB"
# ASan's allocator reads CLOCK_MONOTONIC through the C library, that is
# through libfaketime, to pace its returns of memory to the system; when
# the faked clock jumps and libfaketime's own reload of the timestamp file
# allocates, the allocator's clock call waits for the lock libfaketime
# holds, and the process hangs (libfaketime's issue 365). The writers
# have nothing to return to the system.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_release_to_os_interval_ms=-1"
# shellcheck disable=SC2034 # used by the tests that source this file
BOUND="timeout -k 5 120"

# set_stamp TIME: the faked clock's new time, replaced in one rename:
# libfaketime reads the file at every clock read, and one that met it
# truncated would read the real clock.
set_stamp() {
	echo "$1" >"$TMP/stamp.new" && mv -f "$TMP/stamp.new" "$TMP/stamp"
}

# check NAME WANT GOT: two strings equal.
check() {
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1"
		diff -u <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -20
	fi
}
