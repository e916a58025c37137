#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg's errors: a bad option gives util-linux's usage message on stderr
# and exit 1; an unreadable or invalid file gives one clear line and exit 1.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

LOG=$TMP/ok.log
"$TESTGEN" golden "$LOG"
IN=$DATA/syslog.txt
TRY="^Try 'udmesg --help' for more information\\.\$"

one_line() {
	# expect_error, plus: exactly one line on stderr.
	local name=$1
	expect_error "$@"
	checks=$((checks + 1))
	if [ "$(wc -l <"$TMP/err")" -eq 1 ]; then
		ok "$name:one-line"
	else
		fail "$name:one-line: $(wc -l <"$TMP/err") lines"
		cat "$TMP/err"
	fi
}

# --- usage errors --------------------------------------------------------
expect_error bad-short-option 1 "invalid option -- 'Z'" "$UDMESG" -B "$LOG" -Z
expect_error bad-short-option-try 1 "$TRY" "$UDMESG" -B "$LOG" -Z
expect_error bad-long-option 1 "unrecognized option '--frobnicate'" "$UDMESG" --frobnicate
expect_error bad-long-option-try 1 "$TRY" "$UDMESG" --frobnicate
expect_error missing-argument 1 "option requires an argument -- 'F'" "$UDMESG" -F
expect_error missing-long-argument 1 "option '--since' requires an argument" "$UDMESG" -B "$LOG" --since
expect_error extra-argument 1 "^udmesg: bad usage\$" "$UDMESG" -B "$LOG" extra
expect_error exclusive-raw-decode 1 "^udmesg: mutually exclusive arguments: --raw --decode\$" \
	"$UDMESG" -B "$LOG" -r -x
expect_error exclusive-actions 1 \
	"^udmesg: mutually exclusive arguments: --clear --console-off --console-on --read-clear --console-level --raw\$" \
	"$UDMESG" -B "$LOG" -C -c
expect_error exclusive-sources 1 "mutually exclusive arguments: --buffer --file --kmsg-file" \
	"$UDMESG" -B "$LOG" -F "$IN"
expect_error exclusive-syslog-follow 1 "mutually exclusive arguments: --syslog --follow-new --follow" \
	"$UDMESG" -B "$LOG" -S -w
expect_error exclusive-kmsg-json 1 "mutually exclusive arguments: --kmsg --json --raw" \
	"$UDMESG" -B "$LOG" --kmsg -J
one_line unknown-level 1 "^udmesg: unknown level 'loud'\$" "$UDMESG" -B "$LOG" -l loud
one_line unknown-level-list 1 "^udmesg: unknown level 'err,'\$" "$UDMESG" -B "$LOG" -l err,
one_line unknown-level-range 1 "^udmesg: unknown level 'x\\+'\$" "$UDMESG" -B "$LOG" -l x+
one_line empty-level-item 1 "empty item in level list" "$UDMESG" -B "$LOG" -l ,err
one_line unknown-facility 1 "^udmesg: unknown facility 'kernel'\$" "$UDMESG" -B "$LOG" -f kernel
one_line facility-range 1 "^udmesg: unknown facility '24'\$" "$UDMESG" -B "$LOG" -f 24
one_line console-level-0 1 "^udmesg: unknown level '0'\$" "$UDMESG" -B "$LOG" -n 0
one_line console-level-9 1 "^udmesg: unknown level '9'\$" "$UDMESG" -B "$LOG" -n 9
one_line time-format 1 "^udmesg: unknown time format: fancy\$" "$UDMESG" -B "$LOG" --time-format fancy
one_line color-mode 1 "^udmesg: unsupported color mode: 'sometimes'\$" "$UDMESG" -B "$LOG" -L=sometimes
one_line since 1 '^udmesg: invalid time value "yesterdayish"$' "$UDMESG" -B "$LOG" --since yesterdayish
one_line until 1 '^udmesg: invalid time value "2023-13-45"$' "$UDMESG" -B "$LOG" --until 2023-13-45
one_line buffer-size 1 "^udmesg: invalid buffer size argument: 'lots'\$" "$UDMESG" -B "$LOG" -S -s lots
one_line buffer-size-range 1 "^udmesg: invalid buffer size argument: '-5': Numerical result out of range\$" \
	"$UDMESG" -B "$LOG" -S -s -5
one_line kmsg-on-text 1 "^udmesg: --kmsg reads a libprintk log" "$UDMESG" -F "$IN" --kmsg
one_line clear-text 1 "^udmesg: --clear acts on a libprintk log" "$UDMESG" -F "$IN" -C
one_line no-source 1 "^udmesg: no log to read" "$UDMESG"

# --- unreadable and invalid files ----------------------------------------
one_line missing-log 1 "^udmesg: cannot open $TMP/nope: No such file or directory\$" \
	"$UDMESG" -B "$TMP/nope"
one_line missing-file 1 "^udmesg: cannot open $TMP/nope: No such file or directory\$" \
	"$UDMESG" -F "$TMP/nope"
one_line missing-kmsg 1 "^udmesg: cannot open $TMP/nope: No such file or directory\$" \
	"$UDMESG" -K "$TMP/nope"
one_line directory-log 1 "^udmesg: $TMP: Is a directory\$" "$UDMESG" -B "$TMP"
one_line directory-file 1 "^udmesg: cannot read $TMP: Is a directory\$" "$UDMESG" -F "$TMP"
# A device is no text log (/dev/zero used to be read until memory ran out:
# the address space is bounded here, but for a sanitizer's build, which
# reserves terabytes); a pipe is read.
BOUNDED=(sh -c 'ulimit -v 2000000 && exec "$@"' bounded)
if grep -aqE '__(asan|tsan|msan)_init' "$UDMESG"; then
	BOUNDED=()
fi
one_line device-file 1 "^udmesg: /dev/zero: a character device, not a log file\$" \
	timeout 20 "${BOUNDED[@]}" "$UDMESG" -F /dev/zero
one_line device-kmsg-file 1 "^udmesg: /dev/zero: a character device, not a log file\$" \
	timeout 20 "${BOUNDED[@]}" "$UDMESG" -K /dev/zero
one_line tty-file 1 "^udmesg: /dev/stdin: a character device, not a log file\$" \
	timeout 20 sh -c "'$UDMESG' -F /dev/stdin </dev/null"
same "pipe-file" "$UDMESG" -F "$IN" -- sh -c "cat '$IN' | '$UDMESG' -F /dev/stdin"
cp "$IN" "$TMP/text.log"
one_line invalid-log 1 "^udmesg: $TMP/text.log: not a libprintk log" "$UDMESG" -B "$TMP/text.log"
: >"$TMP/empty.log"
one_line empty-log 1 "^udmesg: $TMP/empty.log: " "$UDMESG" -B "$TMP/empty.log"
head -c 8192 "$LOG" >"$TMP/truncated.log"
one_line truncated-log 1 "^udmesg: $TMP/truncated.log: .*truncated" "$UDMESG" -B "$TMP/truncated.log"
cp "$LOG" "$TMP/corrupt.log"
printf 'XXXXXXXX' | dd of="$TMP/corrupt.log" bs=1 seek=2048 conv=notrunc status=none
one_line corrupt-log 1 "^udmesg: $TMP/corrupt.log: corrupted libprintk log header\$" \
	"$UDMESG" -B "$TMP/corrupt.log"
if [ "$(id -u)" -ne 0 ]; then
	cp "$LOG" "$TMP/private.log"
	chmod 000 "$TMP/private.log"
	one_line unreadable-log 1 "^udmesg: cannot open $TMP/private.log: Permission denied\$" \
		"$UDMESG" -B "$TMP/private.log"
fi
# The default log of PRINTK_OPTS is udmesg's to read: the library's printk
# start-up does not open it as a writer in udmesg (PK_READER_ONLY_PROGRAM).
one_line missing-default-log 1 "^udmesg: cannot open $TMP/nope: No such file or directory\$" \
	env PRINTK_OPTS="log_buf_file=$TMP/nope" "$UDMESG"
# Reading never creates or changes a log.
checks=$((checks + 1))
if [ ! -e "$TMP/nope" ]; then ok "missing-log-not-created"; else fail "missing-log-not-created"; fi
same "reading-default-changes-nothing" cat "$LOG" -- \
	sh -c "PRINTK_OPTS='log_buf_file=$LOG' '$UDMESG' -x >/dev/null; cat '$LOG'"
same "reading-changes-nothing" cat "$LOG" -- sh -c "'$UDMESG' -B '$LOG' -x -T -J >/dev/null; cat '$LOG'"

# --- help and version ----------------------------------------------------
checks=$((checks + 1))
if "$UDMESG" --help | grep -q '^ udmesg \[options\]$' && "$UDMESG" -h | grep -q -- '--kmsg'; then
	ok "help"
else
	fail "help"
fi
checks=$((checks + 1))
if "$UDMESG" -V | grep -Eq '^udmesg from libprintk [0-9]+\.[0-9]+'; then
	ok "version"
else
	fail "version"
fi

finish
