#!/bin/bash
# SPDX-License-Identifier: MIT
# --partial: a writer killed (SIGKILL) in the middle of a line leaves an
# unfinalized newest record. udmesg shows it, marked, by default once every
# writer of the log is gone; --no-partial hides it, --partial forces it.
# libprintk's kmsg_read returns it from a log with no writer left, marked
# with a ",partial" field; udmesg's --kmsg dump prints exactly that, and -K
# reads the mark back.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

LOG=$TMP/partial.log
("$TESTGEN" partial "$LOG"; exit $?) 2>/dev/null # no "Killed" report
rc=$?
checks=$((checks + 1))
if [ $rc -eq 137 ]; then
	ok "writer-killed"
else
	fail "writer-killed: udmesg-testgen partial exited $rc, not 137 (SIGKILL)"
fi

golden partial-default "$UDMESG" -B "$LOG"
golden partial-forced "$UDMESG" -B "$LOG" --partial
golden partial-off "$UDMESG" -B "$LOG" --no-partial
golden partial-decode "$UDMESG" -B "$LOG" -x -T
golden partial-json "$UDMESG" -B "$LOG" -J
golden partial-kmsg "$UDMESG" -B "$LOG" --kmsg
same "partial:kmsg-roundtrip" "$UDMESG" -B "$LOG" -x -- sh -c "'$UDMESG' -B '$LOG' --kmsg | '$UDMESG' -K /dev/stdin -x"
# --kmsg is the library's kmsg_read, byte for byte (post-mortem: the open
# line included); without the open line, the finalized records only.
same "partial:library-kmsg" "$TESTGEN" kmsg "$LOG" -- "$UDMESG" -B "$LOG" --kmsg
same "partial:library-kmsg-caller" "$TESTGEN" kmsg "$LOG" caller -- \
	"$UDMESG" -B "$LOG" --kmsg --caller
same "partial:kmsg-no-partial" sh -c "'$TESTGEN' kmsg '$LOG' | head -z -n 2" -- \
	"$UDMESG" -B "$LOG" --kmsg --no-partial
# The default log of PRINTK_OPTS is read the same way: udmesg's own start-up
# does not make the dead log look alive.
same "partial:printk-opts" "$UDMESG" -B "$LOG" -- env PRINTK_OPTS="log_buf_file=$LOG" "$UDMESG"

# A log whose writer is alive: the open line is not shown unless asked for.
LIVE=$TMP/live.log
mkfifo "$TMP/in"
"$TESTGEN" live "$LIVE" <"$TMP/in" >"$TMP/gen.out" &
gen=$!
exec 3>"$TMP/in"
echo "6 a complete line" >&3
echo "open an open line" >&3
for _ in $(seq 100); do
	grep -q "stored 2" "$TMP/gen.out" && break
	sleep 0.05
done
golden partial-live-default "$UDMESG" -B "$LIVE"
golden partial-live-forced "$UDMESG" -B "$LIVE" --partial
exec 3>&-
wait $gen

finish
