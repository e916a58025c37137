#!/bin/bash
# SPDX-License-Identifier: MIT
# -w / -W on a live log: records written after udmesg started appear without
# busy waiting; SIGINT ends udmesg cleanly (exit 0, output complete); a
# reader that goes away (SIGPIPE) ends it quietly with status 0.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

LOG=$TMP/live.log
mkfifo "$TMP/in"
"$TESTGEN" live "$LOG" <"$TMP/in" >"$TMP/gen.out" &
gen=$!
exec 3>"$TMP/in"

# Readers are waited for by what they do, never for a fixed time: on a
# loaded machine one may not have read the log after a second.
# wait_for FILE PATTERN: up to 30 s.
wait_for() {
	for _ in $(seq 600); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# wait_waiting PID: up to 30 s until udmesg PID waits for the next record
# (on the log's futex word: it has read to the end).
wait_waiting() {
	for _ in $(seq 600); do
		grep -q futex "/proc/$1/wchan" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (pid $1 is not waiting for records: $(cat "/proc/$1/wchan" 2>/dev/null))"
	return 1
}
# wait_exit PID: up to 30 s until PID is gone.
wait_exit() {
	for _ in $(seq 600); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

echo "6 before the readers" >&3
wait_for "$TMP/gen.out" "stored 1"

"$UDMESG" -B "$LOG" -w >"$TMP/follow.out" 2>&1 &
fpid=$!
"$UDMESG" -B "$LOG" -W >"$TMP/follow-new.out" 2>&1 &
npid=$!
"$UDMESG" -B "$LOG" -w -x -J >"$TMP/follow-json.out" 2>&1 &
jpid=$!
wait_for "$TMP/follow.out" "before the readers"
wait_waiting "$fpid"
wait_waiting "$npid" # -W has read the end position
wait_waiting "$jpid"

echo "4 first new record" >&3
echo "open an open line, finished by the next record" >&3
echo "3 second new record" >&3
wait_for "$TMP/gen.out" "stored 4"
wait_for "$TMP/follow.out" "second new record"
wait_for "$TMP/follow-new.out" "second new record"
wait_for "$TMP/follow-json.out" "second new record"

# No busy waiting: well under 0.2 s of CPU in a second of waiting.
t0=$(awk '{print $14 + $15}' "/proc/$fpid/stat")
sleep 1
t1=$(awk '{print $14 + $15}' "/proc/$fpid/stat")
ticks=$(getconf CLK_TCK)
checks=$((checks + 1))
if [ $((t1 - t0)) -lt $((ticks / 5)) ]; then
	ok "no-busy-wait: $((t1 - t0)) ticks"
else
	fail "no-busy-wait: $((t1 - t0)) ticks of CPU in 1 s"
fi

# A reader that goes away: udmesg -W ends the next time it writes.
sh -c '"$0" -B "$1" -W & echo $! >"$3"; wait $!; echo $? >"$2"' \
	"$UDMESG" "$LOG" "$TMP/pipe.rc" "$TMP/pipe.pid" | head -1 >"$TMP/head.out" &
hpid=$!
wait_for "$TMP/pipe.pid" "." && wait_waiting "$(cat "$TMP/pipe.pid")"
echo "6 for head" >&3
wait_for "$TMP/head.out" "for head"
wait_exit "$hpid" # the pipe has no reader now
echo "6 after head is gone" >&3
wait_for "$TMP/pipe.rc" "."
checks=$((checks + 1))
if [ "$(cat "$TMP/pipe.rc" 2>/dev/null)" = 0 ]; then
	ok "sigpipe-exit-0"
else
	fail "sigpipe-exit-0: udmesg -W | head -1: exit '$(cat "$TMP/pipe.rc" 2>/dev/null)'"
fi
wait_for "$TMP/follow.out" "after head is gone"
wait_for "$TMP/follow-new.out" "after head is gone"
wait_for "$TMP/follow-json.out" "after head is gone"

for p in $fpid $npid $jpid; do
	kill -INT "$p"
	wait "$p"
	rc=$?
	checks=$((checks + 1))
	if [ $rc -eq 0 ]; then ok "sigint-exit-0: pid $p"; else fail "sigint-exit-0: pid $p exited $rc"; fi
done
exec 3>&-
wait $gen

for f in follow follow-new follow-json; do
	checks=$((checks + 1))
	if [ "${UDMESG_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMP/$f.out" "$GOLDEN/$f.out"
		echo "updated $f"
	elif cmp -s "$GOLDEN/$f.out" "$TMP/$f.out"; then
		ok "$f"
	else
		fail "$f"
		show_diff "$GOLDEN/$f.out" "$TMP/$f.out"
	fi
done

finish
