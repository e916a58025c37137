#!/bin/bash
# SPDX-License-Identifier: MIT
# The machine's util-linux dmesg reading libprintk logs through
# `pk-kmsgfs --exec LOG -- dmesg ...` (the file bound over /dev/kmsg in a
# private mount namespace): its output equals udmesg's on the same log
# byte for byte for -r and -x, within a few microseconds for
# --time-format iso, and -w follows new records.
#
# util-linux 2.38 (Debian 12) prints facility names only below 16 with -x
# and "<fac|level>" instead of "<fac << 3 | level>" with -r; udmesg does as
# current util-linux does. So -r compares kernel records (-k, or a log of
# them only) and -x logs of facilities below 16 (or -k). udmesg marks an
# unfinished last line " [partial]", which dmesg cannot know: taken out.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

if ! command -v dmesg >/dev/null; then
	echo "SKIP: util-linux dmesg not installed"
	exit 77
fi

# A build with small ring ids cannot make these tests' larger logs.
if ! "$TESTGEN" bench "$TMP/probe.log" 4 >/dev/null 2>&1; then
	echo "SKIP: the logs of this build are too small (small ring ids)"
	exit 77
fi
"$TESTGEN" golden "$TMP/golden.log" || exit 1
"$TESTGEN" mixed "$TMP/mixed.log" || exit 1
"$TESTGEN" bench "$TMP/bench.log" 4 >/dev/null || exit 1
"$PROBE" store "$TMP/kern.log" 65536 6 "kernel only: one" "two" "three, with a tab	here" || exit 1

# compare NAME LOG OPTIONS...: dmesg OPTIONS through the file against udmesg.
compare() {
	local name=$1 log=$2
	shift 2
	checks=$((checks + 1))
	timeout 60 "$KMSGFS" --exec "$log" -- dmesg "$@" >"$TMP/dmesg.out" 2>"$TMP/dmesg.err"
	local rc=$?
	"$UDMESG" -B "$log" "$@" 2>&1 | sed '$ s/ \[partial\]$//' >"$TMP/udmesg.out"
	if [ $rc -ne 0 ]; then
		fail "$name: pk-kmsgfs --exec ... dmesg $* exited $rc"
		head -5 "$TMP/dmesg.err"
	elif [ ! -s "$TMP/udmesg.out" ]; then
		fail "$name: udmesg printed nothing"
	elif cmp -s "$TMP/dmesg.out" "$TMP/udmesg.out"; then
		ok "$name: dmesg $* = udmesg ($(wc -l <"$TMP/dmesg.out") lines)"
	else
		fail "$name: dmesg $* differs from udmesg"
		show_diff "$TMP/udmesg.out" "$TMP/dmesg.out"
	fi
}

compare golden "$TMP/golden.log" -r -k
compare golden "$TMP/golden.log" -x -k
compare mixed "$TMP/mixed.log" -r -k
compare mixed "$TMP/mixed.log" -x
compare bench "$TMP/bench.log" -r -k
compare bench "$TMP/bench.log" -x
compare kern "$TMP/kern.log" -r
compare kern "$TMP/kern.log" -x

# --time-format iso: dmesg takes the boot time from this machine
# (CLOCK_REALTIME - CLOCK_BOOTTIME), udmesg from the log (its writers'
# CLOCK_REALTIME - CLOCK_MONOTONIC): for a log written here they differ by
# the time the machine spent suspended, give or take a few microseconds.
# util-linux 2.38 drops the boot time's microseconds for iso (its
# record_localtime adds whole seconds), so that fraction is allowed too.
checks=$((checks + 1))
# dmesg and this check each read two clocks one after the other, and a
# loaded machine may preempt either between its reads: a run that differs
# is tried again, three times at most (the log's offset, which udmesg
# uses, was read once by its writer and is the same in every try).
iso_ok=0
for _ in 1 2 3; do
	timeout 60 "$KMSGFS" --exec "$TMP/kern.log" -- dmesg --time-format iso >"$TMP/iso.dmesg" 2>&1
	"$UDMESG" -B "$TMP/kern.log" --time-format iso >"$TMP/iso.udmesg" 2>&1
	python3 - "$TMP/iso.dmesg" "$TMP/iso.udmesg" <<'PY' && iso_ok=1 && break
import datetime, sys, time
suspended = time.clock_gettime(time.CLOCK_BOOTTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
boot = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_BOOTTIME)
a, b = (open(p).read().splitlines() for p in sys.argv[1:3])
assert len(a) == len(b) == 3, (a, b)
for x, y in zip(a, b):
    tx, mx = x.split(" ", 1)
    ty, my = y.split(" ", 1)
    assert mx == my, (x, y)
    d = (datetime.datetime.fromisoformat(ty.replace(",", ".")) -
         datetime.datetime.fromisoformat(tx.replace(",", "."))).total_seconds()
    assert min(abs(d - suspended), abs(d - suspended - boot % 1)) < 0.001, (x, y, d, suspended)
PY
done
if [ $iso_ok = 1 ]; then
	ok "--time-format iso: dmesg = udmesg within a millisecond (suspended time apart)"
else
	fail "--time-format iso differs"
	show_diff "$TMP/iso.udmesg" "$TMP/iso.dmesg"
fi

# -w follows: a record stored while dmesg waits shows up.
"$PROBE" store "$TMP/live.log" 65536 6 "before" || exit 1
timeout 20 "$KMSGFS" --exec "$TMP/live.log" -- dmesg -w -r >"$TMP/follow.out" 2>&1 &
follower=$!
for _ in $(seq 100); do
	grep -q before "$TMP/follow.out" && break
	sleep 0.05
done
"$PROBE" store "$TMP/live.log" 65536 3 "after, followed"
for _ in $(seq 100); do
	grep -q "after, followed" "$TMP/follow.out" && break
	sleep 0.05
done
kill -TERM "$follower"
wait "$follower"
rc=$?
expect "dmesg -w follows a new record" "<6>before
<3>after, followed" "$(sed -E 's/\[[ 0-9.]*\] //' "$TMP/follow.out")"
expect "SIGTERM ends --exec with the command's status (killed by SIGTERM)" 143 "$rc"

# --exec passes the command's status on, and says so when it cannot run it.
timeout 20 "$KMSGFS" --exec "$TMP/kern.log" -- sh -c 'test -s /dev/kmsg || exit 3; exit 7' 2>/dev/null
expect "--exec exits with the command's status" 7 "$?"
expect_error "--exec with a missing command" 127 "cannot run no-such-command" \
	timeout 20 "$KMSGFS" --exec "$TMP/kern.log" -- no-such-command
expect_error "a missing log file" 1 "^pk-kmsgfs: cannot open $TMP/none.log: No such file" \
	"$KMSGFS" --exec "$TMP/none.log" -- true
printf 'not a log' >"$TMP/text.log"
expect_error "a file that is not a log" 1 "^pk-kmsgfs: $TMP/text.log: " \
	"$KMSGFS" "$TMP/text.log" "$TMP"
expect_error "a missing mount point" 1 "^pk-kmsgfs: cannot mount on $TMP/nodir: No such file" \
	"$KMSGFS" "$TMP/kern.log" "$TMP/nodir"
expect_error "--log with --exec" 1 "^pk-kmsgfs: --log .*not with --exec" \
	"$KMSGFS" --log x="$TMP/kern.log" --exec "$TMP/kern.log" -- true
# Inside, the file system is on /dev/kmsg, and its mount point in /tmp is
# gone before the command starts (other tests' mounts are copied in too).
expect "--exec: mounted on /dev/kmsg only" "/kmsg /dev/kmsg" \
	"$(timeout 20 "$KMSGFS" --exec "$TMP/kern.log" -- awk '/ - fuse\.pk-kmsgfs / &&
		($5 == "/dev/kmsg" || $5 ~ /^\/tmp\/pk-kmsgfs\./) { print $4, $5 }' /proc/self/mountinfo)"

finish
