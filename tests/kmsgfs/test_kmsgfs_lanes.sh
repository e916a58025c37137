#!/bin/bash
# SPDX-License-Identifier: MIT
# pk-kmsgfs serving a log written with lanes on (docs/lanes.md) by a writer
# SIGKILLed with records still in its lanes (udmesg-testgen lanes: 3
# threads, 300 lines each, some merged as lanes filled, the rest not):
# through the file every record arrives exactly once, in sequence, with
# kmsg_read's bytes (udmesg-testgen kmsg, which sees the unmerged ones in
# the read-only view); after a writer merged them, the same bytes again
# (the merge gives them the numbers the view gave), through a file system
# that was serving the log all along and through a new one.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

M=$TMP/mnt
L=$TMP/lanes.log
N=300

pending=$("$TESTGEN" lanes "$L" $N 2>"$TMP/gen.err")
case $pending in
"pending "[1-9]*) ;;
*)
	echo "FAIL: udmesg-testgen lanes: '$pending' $(cat "$TMP/gen.err")"
	exit 1
	;;
esac
"$TESTGEN" kmsg "$L" >"$TMP/want" || exit 1

# check_records FILE: NUL-separated kmsg records "6,SEQ,TS,-;lane T line I
# PAD": seqs dense from 0, each of the 3 x N lines once, each thread's in
# order, the pad exact. Prints what is wrong, or "3 x N lines, seq 0-LAST".
check_records() {
	python3 - "$1" $N <<'PY'
import sys
data = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
n = int(sys.argv[2])
pad = b"abcdefghijklmnopqrstuvwxyz0123456789"
nxt = [0, 0, 0]
for k, r in enumerate(data):
    head, _, text = r.rstrip(b"\n").partition(b";")
    seq = int(head.split(b",")[1])
    if seq != k:
        sys.exit("record %d has seq %d" % (k, seq))
    w = text.split(b" ", 5)
    t, i = int(w[1]), int(w[3])
    if (w[0], w[2]) != (b"lane", b"line") or t > 2 or i != nxt[t]:
        sys.exit("seq %d: %r (thread %d expects line %d)" % (seq, text, t, nxt[min(t, 2)]))
    if text != b"lane %d line %d %s" % (t, i, pad[:(i * 7 + t) % 30]):
        sys.exit("seq %d: %r not exact" % (seq, text))
    nxt[t] += 1
if nxt != [n, n, n]:
    sys.exit("lines per thread %r, not %d each" % (nxt, n))
print("3 x %d lines, seq 0-%d" % (n, len(data) - 1))
PY
}

expect "kmsg_read: every record once, in order (unmerged ones in the view)" \
	"3 x $N lines, seq 0-$((3 * N - 1))" "$(check_records "$TMP/want" 2>&1)"

start_fs "$M" "$L"
expect_dump "through pk-kmsgfs: kmsg_read's bytes, unmerged records included" \
	"through pk-kmsgfs: bytes differ from kmsg_read's" "$M/kmsg" "$TMP/want" "$TMP/got"

# A writer merges the lanes: the same records, at the same seqs.
expect "a writer merges them" "next $((3 * N))" "$("$TESTGEN" merge "$L")"
expect_dump "after the merge, the file system serving all along: the same bytes" \
	"after the merge, the file system serving all along: bytes differ" \
	"$M/kmsg" "$TMP/want" "$TMP/got2"
stop_fs
start_fs "$TMP/mnt2" "$L"
expect_dump "after the merge, a new file system: the same bytes" \
	"after the merge, a new file system: bytes differ" "$TMP/mnt2/kmsg" "$TMP/want" "$TMP/got3"
stop_fs
finish
