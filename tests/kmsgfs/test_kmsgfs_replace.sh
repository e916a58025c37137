#!/bin/bash
# SPDX-License-Identifier: MIT
# pk-kmsgfs follows a log's name. A served log is truncated, then a new log
# is renamed over its name: the readers open on the truncated one (a
# blocking reader waiting in read, a poller waiting in poll, a non-blocking
# reader) get one EPIPE and then the new log from its first record, numbered
# on after the highest sequence number served (docs/kmsgfs.md, "A log's
# name"); a non-blocking read meanwhile says ESTALE; later opens and
# followers read the new file. A whole log renamed over the name is read by
# later opens, numbered on after the old file's end, while an old reader
# stays on its file. util-linux `dmesg -w` keeps following across the
# replacement.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

M=$TMP/mnt
L=$TMP/app.log
"$PROBE" store "$L" 65536 6 "old zero" "old one" "old two" || exit 1
"$PROBE" store "$TMP/other.log" 65536 6 "other zero" || exit 1
start_fs "$M" --log other="$TMP/other.log" "$L"

# wait_for FILE PATTERN: up to 10 s for a line of FILE matching PATTERN.
wait_for() {
	for _ in $(seq 200); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (waited 10 s for '$2' in $(basename "$1"))"
	return 1
}
# wait_lines FILE N: up to 10 s until FILE has N lines.
wait_lines() {
	for _ in $(seq 200); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "  (waited 10 s for $2 lines in $(basename "$1"))"
	return 1
}
# records FILE: the probe's output with each record's timestamp as TS, after
# checking that every "N bytes: LINE" has N == the line's length.
records() {
	awk '/^[0-9]+ bytes: / {
		n = $1; line = $0; sub(/^[0-9]+ bytes: /, "", line)
		if (n != length(line) + 1) print "LENGTH MISMATCH " n
		sub(/^[0-9]+,[0-9]+,/, "&TS_", line); sub(/TS_[0-9]+,/, "TS,", line)
		print line; next } { print }' "$1"
}
# step N: N non-blocking reads of the stepping reader.
step() {
	local have
	have=$(wc -l <"$TMP/step.out")
	for _ in $(seq "$1"); do
		echo r >&8
	done
	wait_lines "$TMP/step.out" $((have + $1))
}

# --- readers waiting on the log ----------------------------------------------
"$PROBE" follow "$M/kmsg" 3 >"$TMP/follow.out" 2>&1 &
follower=$!
"$PROBE" poll "$M/kmsg" 60000 >"$TMP/poll.out" 2>&1 &
poller=$!
mkfifo "$TMP/step.in"
"$PROBE" step "$M/kmsg" <"$TMP/step.in" >"$TMP/step.out" 2>&1 &
stepper=$!
exec 8>"$TMP/step.in"
wait_lines "$TMP/step.out" 1
step 4
wait_for "$TMP/follow.out" "^at end" && wait_wchan "$follower" request_wait_answer 10
wait_for "$TMP/poll.out" "^at end" && wait_wchan "$poller" poll 10

"$PROBE" follow "$M/other.kmsg" 1 >"$TMP/other.out" 2>&1 &
other=$!
wait_for "$TMP/other.out" "^at end" && wait_wchan "$other" request_wait_answer 10

truncate -s 8192 "$L"
step 1
expect "a non-blocking read of the truncated log says ESTALE" "open
6,0,TS,-;old zero
6,1,TS,-;old one
6,2,TS,-;old two
EAGAIN
ESTALE" "$(records "$TMP/step.out")"
expect "an open of the truncated log fails as pk_log_open_file does" "open: ENOSPC" \
	"$("$PROBE" reads "$M/kmsg" 8192)"

# A record of the other log wakes the loop, which then looks at every
# waiting reader: once the other reader has it, the readers of the truncated
# log have been looked at after the truncation.
"$PROBE" store "$TMP/other.log" 65536 6 "other one" || exit 1
wait_gone "$other" 10 || fail "the reader of the other log was not woken"
checks=$((checks + 1))
if kill -0 "$follower" 2>/dev/null && kill -0 "$poller" 2>/dev/null &&
	[ "$(tail -n 1 "$TMP/follow.out")" = "at end" ] && [ "$(cat "$TMP/poll.out")" = "at end" ]; then
	ok "the blocked reader and the poller wait on while the log is truncated"
else
	fail "a waiting reader ended on the truncation"
	cat "$TMP/follow.out" "$TMP/poll.out"
fi

"$PROBE" store "$TMP/new.log" 65536 6 "new zero" "new one" || exit 1
mv -f "$TMP/new.log" "$L"

checks=$((checks + 1))
if wait_gone "$follower" 10; then
	ok "the blocked reader is answered when a new log takes the name"
else
	fail "the blocked reader still waits after the replacement"
	kill "$follower"
fi
expect "the blocked reader: one EPIPE, then the new log from its first record, numbered on" \
	"6,0,TS,-;old zero
6,1,TS,-;old one
6,2,TS,-;old two
EAGAIN
at end
EPIPE
6,3,TS,-;new zero
6,4,TS,-;new one" "$(records "$TMP/follow.out")"
checks=$((checks + 1))
if wait_gone "$poller" 10; then
	ok "the poller is woken when a new log takes the name"
else
	fail "the poller still waits after the replacement"
	kill "$poller"
fi
# (poll(2) keeps POLLRDNORM and POLLPRI out: the probe asks for POLLIN.)
expect "the poller: POLLIN with POLLERR (records lost), then EPIPE" "at end
POLLIN POLLERR
EPIPE" "$(records "$TMP/poll.out")"
step 4
expect "the non-blocking reader: one EPIPE, then the new log from its first record" "EPIPE
6,3,TS,-;new zero
6,4,TS,-;new one
EAGAIN" "$(records "$TMP/step.out" | tail -n 4)"
expect "a later open reads the new log, numbered on" "6,3,TS,-;new zero
6,4,TS,-;new one
EAGAIN" "$(records <("$PROBE" reads "$M/kmsg" 8192 8192 8192))"

# A follower of the new file is woken by its new records.
"$PROBE" follow "$M/kmsg" 1 >"$TMP/follow2.out" 2>&1 &
follower=$!
wait_for "$TMP/follow2.out" "^at end" && wait_wchan "$follower" request_wait_answer 10
"$PROBE" store "$L" 65536 3 "new two" || exit 1
checks=$((checks + 1))
if wait_gone "$follower" 10; then
	ok "a reader blocked on the new log is woken by its record"
else
	fail "a reader blocked on the new log was not woken"
	kill "$follower"
fi
expect "a record stored into the new log" "6,3,TS,-;new zero
6,4,TS,-;new one
EAGAIN
at end
3,5,TS,-;new two" "$(records "$TMP/follow2.out")"

# --- a whole log renamed over the name -----------------------------------------
"$PROBE" store "$TMP/third.log" 65536 6 "third zero" || exit 1
mv -f "$TMP/third.log" "$L"
expect "a later open reads the file that took the name, numbered after the old file's end" \
	"6,6,TS,-;third zero
EAGAIN" "$(records <("$PROBE" reads "$M/kmsg" 8192 8192))"
step 2
expect "a reader of the whole old file stays on it" "3,5,TS,-;new two
EAGAIN" "$(records "$TMP/step.out" | tail -n 2)"
exec 8>&-
wait_gone "$stepper" 10
stop_fs
expect "the file system stops with status 0" 0 "$FS_RC"
expect "pk-kmsgfs wrote nothing on stderr (sanitizer builds: no report)" "" "$(cat "$TMP/fs.err")"

# --- dmesg -w keeps following --------------------------------------------------
"$PROBE" store "$TMP/live.log" 65536 6 "before" || exit 1
timeout 60 "$KMSGFS" --exec "$TMP/live.log" -- dmesg -w -r >"$TMP/dmesg.out" 2>&1 &
dmesg_ns=$!
wait_for "$TMP/dmesg.out" before
truncate -s 8192 "$TMP/live.log"
"$PROBE" store "$TMP/live.new" 65536 4 "after the replacement" || exit 1
mv -f "$TMP/live.new" "$TMP/live.log"
wait_for "$TMP/dmesg.out" "after the replacement"
"$PROBE" store "$TMP/live.log" 65536 3 "stored into the new log" || exit 1
wait_for "$TMP/dmesg.out" "stored into the new log"
kill -TERM "$dmesg_ns"
wait "$dmesg_ns"
expect "dmesg -w follows the new log after the truncated one" "<6>before
<4>after the replacement
<3>stored into the new log" "$(sed -E 's/\[[ 0-9.]*\] //' "$TMP/dmesg.out")"

finish
