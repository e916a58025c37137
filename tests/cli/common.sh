# SPDX-License-Identifier: MIT
# common.sh - sourced by the udmesg tests (tests/cli/test_udmesg_*.sh).
#
# Environment: PRINTK_TEST_BUILD_DIR (the build tree: tools/udmesg and
# tests/udmesg-testgen), PRINTK_SOURCE_DIR (golden/ and data/ live under
# tests/cli). UDMESG_UPDATE_GOLDEN=1 rewrites the golden files instead of
# comparing (review the diff before committing them).
#
# Every check prints "ok NAME" or "FAIL NAME" followed by what differed; a
# test exits 1 if any check failed.

set -u

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
: "${PRINTK_SOURCE_DIR:?set PRINTK_SOURCE_DIR to the source directory}"

UDMESG=$PRINTK_TEST_BUILD_DIR/tools/udmesg
TESTGEN=$PRINTK_TEST_BUILD_DIR/tests/udmesg-testgen
CLI=$PRINTK_SOURCE_DIR/tests/cli
# shellcheck disable=SC2034 # used by the tests that source this file
DATA=$CLI/data
GOLDEN=$CLI/golden

for bin in "$UDMESG" "$TESTGEN"; do
	if [ ! -x "$bin" ]; then
		echo "FAIL: $bin is not built"
		exit 1
	fi
done

# Deterministic output: UTC, a UTF-8 locale, no inherited settings.
export TZ=UTC
if locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
	export LC_ALL=C.UTF-8
else
	export LC_ALL=C
fi
unset PRINTK_OPTS NO_COLOR UDMESG_THREADS UDMESG_TEST_NOW UDMESG_TEST_BOOTTIME LANG LANGUAGE

TMP=$(mktemp -d "${TMPDIR:-/tmp}/udmesg-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

fails=0
checks=0

fail() {
	echo "FAIL $1"
	fails=$((fails + 1))
}

ok() {
	echo "ok $1"
}

# Show how two files differ, control bytes visible.
show_diff() {
	diff -u <(cat -A "$1" 2>/dev/null) <(cat -A "$2" 2>/dev/null) | head -40
}

# golden NAME CMD...: CMD's stdout must equal golden/NAME.out byte for byte
# (and CMD must exit 0).
golden() {
	local name=$1
	shift
	checks=$((checks + 1))
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "${UDMESG_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMP/out" "$GOLDEN/$name.out"
		echo "updated $name"
		return
	fi
	if [ $rc -ne 0 ]; then
		fail "$name (exit $rc)"
		cat "$TMP/err"
		return
	fi
	if cmp -s "$GOLDEN/$name.out" "$TMP/out"; then
		ok "$name"
	else
		fail "$name: output differs from golden/$name.out"
		echo "  command: $*"
		show_diff "$GOLDEN/$name.out" "$TMP/out"
	fi
}

# same NAME CMD1 -- CMD2: both commands print the same bytes.
same() {
	local name=$1
	shift
	local a=() b=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		a+=("$1")
		shift
	done
	shift
	b=("$@")
	checks=$((checks + 1))
	"${a[@]}" >"$TMP/a" 2>&1
	"${b[@]}" >"$TMP/b" 2>&1
	if cmp -s "$TMP/a" "$TMP/b"; then
		ok "$name"
	else
		fail "$name"
		echo "  < ${a[*]}"
		echo "  > ${b[*]}"
		show_diff "$TMP/a" "$TMP/b"
	fi
}

# expect_error NAME STATUS PATTERN CMD...: CMD exits STATUS, prints nothing on
# stdout, and stderr matches the extended regex PATTERN (and is one line
# unless PATTERN says more).
expect_error() {
	local name=$1 status=$2 pattern=$3
	shift 3
	checks=$((checks + 1))
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne "$status" ]; then
		fail "$name: exit $rc, expected $status"
		cat "$TMP/err"
	elif [ -s "$TMP/out" ]; then
		fail "$name: unexpected output on stdout"
		head -5 "$TMP/out"
	elif ! grep -Eq -- "$pattern" "$TMP/err"; then
		fail "$name: stderr does not match /$pattern/"
		cat "$TMP/err"
	else
		ok "$name"
	fi
}

# The machine's util-linux dmesg, if it can read files (-F).
have_dmesg_file() {
	command -v dmesg >/dev/null 2>&1 && dmesg --help 2>/dev/null | grep -q -- '--file'
}

have_dmesg_kmsg_file() {
	command -v dmesg >/dev/null 2>&1 && dmesg --help 2>/dev/null | grep -q -- '--kmsg-file'
}

finish() {
	echo "$checks checks, $fails failed"
	[ $fails -eq 0 ]
	exit $?
}
