#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg -F and -K on malformed files (inputs tests/fuzz/fuzz_udmesg found):
# each is read within its buffer and printed as defined below, where
# util-linux dmesg reads or copies past its buffer and prints whatever
# memory follows, or crashes. Caller ids from a file are escaped like the
# text.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

# expect_out NAME EXPECTED FILE OPTIONS...: udmesg's stdout is EXPECTED
# (printf-style escapes) byte for byte, and it exits 0.
expect_out() {
	local name=$1 expected=$2
	shift 2
	checks=$((checks + 1))
	printf -- "$expected" >"$TMP/expected"
	"$UDMESG" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name (exit $rc)"
		head -5 "$TMP/err"
	elif cmp -s "$TMP/expected" "$TMP/out"; then
		ok "$name"
	else
		fail "$name: output differs"
		show_diff "$TMP/expected" "$TMP/out"
	fi
}

# -F: "<N" without its '>'. Current util-linux takes a priority only when
# its '>' is in the record (2.38 took the number and skipped the byte after
# it, past the record's end here): the text keeps what follows the '<'
# when the priority is wanted, and nothing when the prefix is skipped.
printf '<6\n' >"$TMP/pri-last"
expect_out pri-unclosed-last '\n' -F "$TMP/pri-last"
expect_out pri-unclosed-last-decode '[    0.000000] 6\n' -F "$TMP/pri-last" -x
expect_out pri-unclosed-last-json '{\n   "dmesg": [\n      {\n         "time":     0.000000,\n         "msg": "6"\n      }\n   ]\n}\n' -F "$TMP/pri-last" -J
expect_out pri-unclosed-last-raw '<6\n' -F "$TMP/pri-last" -r
printf '<6' >"$TMP/pri-eof"
expect_out pri-unclosed-eof-decode '[    0.000000] 6\n' -F "$TMP/pri-eof" -x
printf '<6\n<6>x\n' >"$TMP/pri-next"
expect_out pri-unclosed-next '\n[    0.000000] x\n' -F "$TMP/pri-next"
expect_out pri-unclosed-next-decode '[    0.000000] 6\nkern  :info  : [    0.000000] x\n' -F "$TMP/pri-next" -x

# -F: a caller field at the end of the last record. util-linux's text
# length goes below zero when its ']' is the last byte before the newline,
# and with no ']' and nothing but spaces it copies a caller id of length -1:
# here the record is empty.
printf '<6>[    1.000000] [T1]\n' >"$TMP/caller-last"
expect_out caller-at-end '\n' -F "$TMP/caller-last"
printf '<6>[    1.000000] [    ' >"$TMP/caller-open"
expect_out caller-unclosed '\n' -F "$TMP/caller-open"
# A caller id too long for util-linux's field is dropped; its field is
# skipped all the same.
printf '<6>[    1.000000] [T123456789012345678901] x\n' >"$TMP/caller-long"
expect_out caller-too-long '[    1.000000] x\n' -F "$TMP/caller-long"
# An escape sequence in a caller id is escaped like the text.
printf '<6>[    1.000000] [T\033[31m] x\n' >"$TMP/caller-esc-file"
expect_out caller-escaped-file '[    1.000000] [T\\x1b[31m] x\n' -F "$TMP/caller-esc-file"

# -F: microseconds at the ends of strtol's range, added to a boot time's
# fraction (util-linux adds them in unsigned arithmetic): a time far away.
printf '<6>[ -5.-32222222222222222222222] negative\n<6>[ 2.99999999999999999999999] overflow\n' \
	>"$TMP/usec-range"
UDMESG_TEST_BOOTTIME=1700000000.25 expect_out usec-range-iso \
	'-290254-11-05T18:12:20,474192+00:00 -5.-32222222222222222222222] negative\n294300-11-24T02:14:16,775807+00:00 2.99999999999999999999999] overflow\n' \
	-F "$TMP/usec-range" --time-format iso

# -K: a record ending in "caller=": util-linux copies a length of -1.
printf '6,1,2,-,caller=;' >"$TMP/caller-end"
expect_out kmsg-caller-at-end '[    0.000002] ;\n' -K "$TMP/caller-end"

# -K: a one-byte record (util-linux reads the byte before its buffer; an
# ASan build catches that).
printf 'X\0' >"$TMP/one-byte"
expect_out kmsg-one-byte '[    0.000000] X\n' -K "$TMP/one-byte"
expect_out kmsg-one-byte-decode '[    0.000000] X\n' -K "$TMP/one-byte" -x

# -K: a caller id with an escape sequence in it, padded to util-linux's
# width (the length of pid_max's text) before it is escaped.
width=$(wc -c </proc/sys/kernel/pid_max 2>/dev/null || echo 11)
pad=$(printf '%*s' $((width > 6 ? width - 6 : 0)) '')
printf '6,1,2,-,caller=T\033[31m;x\n\0' >"$TMP/caller-esc"
expect_out kmsg-caller-escaped "[    0.000002] [${pad}T\\\\x1b[31m] x\\n" -K "$TMP/caller-esc"

finish
