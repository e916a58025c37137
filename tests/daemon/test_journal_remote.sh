#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pk-forward's journal-remote target against the real
# systemd-journal-remote, started privately on 127.0.0.1:
#   1. records with hostile text and dictionaries (a multi-line text, a
#      tab, control bytes, a byte that is not UTF-8, keys to rename):
#      every field of every entry in the received journal compared exactly
#      (journalctl -o json), the cursor at the end;
#   2. the cursor across restarts: pk-forward following, stopped with
#      SIGTERM, more records written, started again: every record once;
#   3. journal-remote killed (SIGKILL) while pk-forward delivers, more
#      records written while it is away, started again: pk-forward says so
#      once, retries and delivers; no record lost, duplicates at most one
#      batch (1,000 records); then pk-forward killed (SIGKILL) while it
#      delivers and started again: the same;
#   4. a receiver that answers 500 (a Python stand-in: journal-remote
#      cannot be made to): the failure said once in words, the batch sent
#      again byte for byte, the request's head as the protocol wants it;
#   5. the answer's other forms (an interim 100, chunked, HTTP/1.0 to the
#      close, Connection: close) taken, one that is not HTTP refused.
#
# journal-remote gets its listening socket from a Python launcher (socket
# activation, LISTEN_FDS; --listen-http=-3) made with SO_REUSEADDR: it
# sets no such option itself, so after a SIGKILL it could not bind its
# port again while the killed connections sit in TIME_WAIT.
#
# Environment: PRINTK_TEST_BUILD_DIR (tools/pk-forward, tests/pk-emit).
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
emit=$PRINTK_TEST_BUILD_DIR/tests/pk-emit
fwd=$PRINTK_TEST_BUILD_DIR/tools/pk-forward
jr=/lib/systemd/systemd-journal-remote

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $emit ]] || fail "$emit is not built"
[[ -x $fwd ]] || fail "$fwd is not built"
[[ -x $jr ]] || fail "no $jr (Debian package systemd-journal-remote; scripts/setup.sh installs it)"
command -v journalctl >/dev/null || fail "no journalctl"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-journal-remote.XXXXXX")
jr_pid=
fwd_pid=
fake_pid=
cleanup() {
	local p
	for p in "$fwd_pid" "$jr_pid" "$fake_pid"; do
		[[ -n $p ]] || continue
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT

read -r port fake_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
target=journal-remote:http://127.0.0.1:$port
log=$tmp/log
cursor=$tmp/cursor
export PRINTK_OPTS="log_buf_file=$log log_buf_len=4M loglevel=1"

# shellcheck source=tests/daemon/journal_remote_common.sh
. "$(dirname "$0")/journal_remote_common.sh"

# How many entries have each PRINTK_SEQ: "seqs SEQ-COUNT DUPLICATES MISSING"
# for the range [0, $1).
seq_report() {
	entries | python3 -c '
import json, sys, collections
n = int(sys.argv[1])
c = collections.Counter(int(json.loads(l)["PRINTK_SEQ"]) for l in sys.stdin if l.strip())
print(len(c), sum(v - 1 for v in c.values()), sum(1 for s in range(n) if s not in c), max(c.values(), default=0))
' "$1"
}




start_jr

# --------------------------------------------------------- 1. the fields --
"$emit" "${msgs[@]}" >"$tmp/emit.out" 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
read -r _ emit_pid <"$tmp/emit.out"
"$fwd" -o -c "$cursor" "$target" "$log" 2>"$tmp/fwd1.err" || fail "pk-forward: $(cat "$tmp/fwd1.err")"
[[ -s $tmp/fwd1.err ]] && fail "pk-forward said: $(cat "$tmp/fwd1.err")"
[[ $(cursor_seq) == 6 ]] || fail "cursor: next-seq $(cursor_seq), not 6"

entries >"$tmp/fields.json"
python3 "$(dirname "$0")/check_journal_fields.py" "$tmp/fields.json" "$emit_pid" "$(hostname)" "$(tr -d '-' </proc/sys/kernel/random/boot_id)" || fail "fields differ (above)"
echo "ok: every field of 6 entries, the multi-line, control-byte and non-UTF-8 texts exact"

# ---------------------------------------------- 2. the cursor, restarted --
"$fwd" -c "$cursor" "$target" "$log" 2>"$tmp/fwd2.err" &
fwd_pid=$!
mapfile -t bulk < <(for ((i = 0; i < 500; i++)); do echo "1:6::second run $i"; done)
"$emit" "${bulk[@]}" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
wait_for "506 records in the journal" cursor_is 506
kill -TERM "$fwd_pid"
wait "$fwd_pid" || fail "pk-forward exited $? at SIGTERM: $(cat "$tmp/fwd2.err")"
fwd_pid=
mapfile -t bulk < <(for ((i = 0; i < 500; i++)); do echo "1:6::while stopped $i"; done)
"$emit" "${bulk[@]}" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
"$fwd" -o -c "$cursor" "$target" "$log" 2>>"$tmp/fwd2.err" || fail "pk-forward: $(cat "$tmp/fwd2.err")"
[[ -s $tmp/fwd2.err ]] && fail "pk-forward said: $(cat "$tmp/fwd2.err")"
read -r nseq dups missing _ < <(seq_report 1006)
((nseq == 1006 && dups == 0 && missing == 0)) ||
	fail "after a stop and a start: $nseq seqs, $dups duplicates, $missing missing of 1006"
echo "ok: stopped, records written, started again: 1006 records, each once"

# ------------------------------------------- 3. journal-remote killed --
"$fwd" -c "$cursor" "$target" "$log" 2>"$tmp/fwd3.err" &
fwd_pid=$!
mapfile -t bulk < <(for ((i = 0; i < 20000; i++)); do echo "1:6::bulk $i"; done)
"$emit" "${bulk[@]}" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
wait_for "a batch of the 20,000 acknowledged" cursor_past 1006
kill -KILL "$jr_pid"
wait "$jr_pid" 2>/dev/null || true
jr_pid=
at_kill=$(cursor_seq)
mapfile -t bulk < <(for ((i = 0; i < 1000; i++)); do echo "1:6::while away $i"; done)
"$emit" "${bulk[@]}" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
wait_for "pk-forward saying it cannot deliver" grep -qs 'cannot deliver' "$tmp/fwd3.err"
start_jr
wait_for "every record delivered after the restart" cursor_is 22006
read -r nseq dups missing most < <(seq_report 22006)
((nseq == 22006 && missing == 0)) || fail "after the kill: $nseq seqs, $missing missing of 22006"
((dups <= 1000 && most <= 2)) || fail "after the kill: $dups duplicates (at most one batch, 1000, expected)"
kill -TERM "$fwd_pid"
wait "$fwd_pid" || fail "pk-forward exited $? at SIGTERM: $(cat "$tmp/fwd3.err")"
fwd_pid=
want_err="pk-forward: $target: cannot deliver: "
[[ $(grep -c . "$tmp/fwd3.err") == 2 && $(head -1 "$tmp/fwd3.err") == "$want_err"* &&
	$(tail -1 "$tmp/fwd3.err") == "pk-forward: $target: delivering again" ]] ||
	fail "pk-forward's words: $(cat "$tmp/fwd3.err")"
mid=no
((at_kill < 21006)) && mid=yes
echo "ok: journal-remote killed (cursor at $at_kill of 21006: mid-stream $mid) and started again: 22006 records, none lost, $dups sent twice; said: $(head -1 "$tmp/fwd3.err")"

# ------------------------------------------------ pk-forward killed --
# SIGKILL: no commit at the end; started again from the cursor, the batch
# in flight (perhaps written by journal-remote) goes again.
dups_before=$dups
"$fwd" -c "$cursor" "$target" "$log" 2>"$tmp/fwd3b.err" &
fwd_pid=$!
mapfile -t bulk < <(for ((i = 0; i < 20000; i++)); do echo "1:6::killed run $i"; done)
"$emit" "${bulk[@]}" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
wait_for "a batch of the next 20,000 acknowledged" cursor_past 22006
kill -KILL "$fwd_pid"
wait "$fwd_pid" 2>/dev/null || true
fwd_pid=
at_kill=$(cursor_seq)
"$fwd" -o -c "$cursor" "$target" "$log" 2>>"$tmp/fwd3b.err" || fail "pk-forward: $(cat "$tmp/fwd3b.err")"
[[ -s $tmp/fwd3b.err ]] && fail "pk-forward said: $(cat "$tmp/fwd3b.err")"
read -r nseq dups missing most < <(seq_report 42006)
((nseq == 42006 && missing == 0)) || fail "after pk-forward's kill: $nseq seqs, $missing missing of 42006"
((dups - dups_before <= 1000 && most <= 2)) ||
	fail "after pk-forward's kill: $((dups - dups_before)) duplicates (at most one batch, 1000, expected)"
echo "ok: pk-forward killed (cursor at $at_kill of 42006) and started again: none lost, $((dups - dups_before)) sent twice"

# ---------------------------------------- 4. a receiver that says 500 --
cat >"$tmp/fake.py" <<'PY'
import socket, sys
port, out = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
print("ready", flush=True)
n = 0
while True:
    c, _ = s.accept()
    print("accept", flush=True)
    f = c.makefile("rb")
    while True:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            b = f.read(1)
            if not b:
                break
            head += b
        if not head.endswith(b"\r\n\r\n"):
            break
        clen = [int(l.split(b":", 1)[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        body = f.read(clen[0]) if clen else b""
        n += 1
        with open("%s.%d" % (out, n), "wb") as o:
            o.write(head + body)
        if n <= 2:
            c.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 10\r\n\r\ndisk full\n")
        else:
            c.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 4\r\n\r\nOK.\n")
    c.close()
PY
python3 "$tmp/fake.py" "$fake_port" "$tmp/req" >"$tmp/fake.out" 2>&1 &
fake_pid=$!
wait_for "the stand-in receiver" grep -qs ready "$tmp/fake.out"
PRINTK_OPTS="log_buf_file=$tmp/log4 loglevel=1" "$emit" 1:6::one 1:6::two 1:6::three >/dev/null 2>"$tmp/emit.err" ||
	fail "pk-emit: $(cat "$tmp/emit.err")"
ftarget=journal-remote:http://127.0.0.1:$fake_port
"$fwd" -o -c "$tmp/cursor4" "$ftarget" "$tmp/log4" 2>"$tmp/fwd4.err" || fail "pk-forward: $(cat "$tmp/fwd4.err")"
printf '%s\n' "pk-forward: $ftarget: cannot deliver: the receiver answered 500 Internal Server Error: disk full; the batch goes again, retried after 100 ms doubling up to 10 s (said once until it is delivered)" \
	"pk-forward: $ftarget: delivering again" >"$tmp/fwd4.want"
cmp -s "$tmp/fwd4.want" "$tmp/fwd4.err" || fail "pk-forward's words: $(diff "$tmp/fwd4.want" "$tmp/fwd4.err")"
reqs=("$tmp"/req.*)
((${#reqs[@]} == 3)) || fail "requests: ${#reqs[@]} (3 expected: two refused, then the same accepted)"
# Keep-alive: the answers had a length and no "Connection: close".
[[ $(grep -c '^accept$' "$tmp/fake.out") == 1 ]] || fail "connections: $(grep -c '^accept$' "$tmp/fake.out"), not one kept alive"
cmp -s "$tmp/req.1" "$tmp/req.3" || fail "the batch sent again differs from the first"
python3 - "$tmp/req.3" <<'PY' || fail "the request's head"
import sys
data = open(sys.argv[1], "rb").read()
head, body = data.split(b"\r\n\r\n", 1)
lines = head.split(b"\r\n")
assert lines[0] == b"POST /upload HTTP/1.1", lines[0]
h = {l.split(b":", 1)[0].lower(): l.split(b":", 1)[1].strip() for l in lines[1:]}
assert h[b"content-type"] == b"application/vnd.fdo.journal", h
assert int(h[b"content-length"]) == len(body), (h, len(body))
assert h[b"host"].startswith(b"127.0.0.1:"), h
assert h[b"user-agent"] == b"pk-forward", h
assert sorted(h) == [b"content-length", b"content-type", b"host", b"user-agent"], h
entries = body.split(b"\n\n")
assert len(entries) == 4 and entries[3] == b"", body
for e, text in zip(entries, (b"one", b"two", b"three")):
    assert e.startswith(b"__REALTIME_TIMESTAMP=") and b"\nMESSAGE=" + text + b"\n" in e, e
PY
echo "ok: a 500 answer said once, the same batch sent again on the connection kept alive, the request's head"

# -------------------------------- 5. answers in the forms HTTP allows --
# One record per run of pk-forward, one answer form per request: an
# interim 100 then a chunked 202; an HTTP/1.0 200 ending at the close; a
# 202 with Content-Length 0 and Connection: close; something that is not
# HTTP (a failure, said once), then a plain 202 to the same batch again.
cat >"$tmp/fake2.py" <<'PY'
import socket, sys
port, out = int(sys.argv[1]), sys.argv[2]
answers = [
    (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"4\r\nOK.\n\r\n0\r\n\r\n", False),
    (b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nOK.\n", True),
    (b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", True),
    (b"SPDY/9 what\r\n\r\n", True),
    (b"HTTP/1.1 202 Accepted\r\nContent-Length: 4\r\n\r\nOK.\n", False),
]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
print("ready", flush=True)
n = 0
while True:
    c, _ = s.accept()
    f = c.makefile("rb")
    while True:
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            b = f.read(1)
            if not b:
                break
            head += b
        if not head.endswith(b"\r\n\r\n"):
            break
        clen = [int(l.split(b":", 1)[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        body = f.read(clen[0]) if clen else b""
        with open("%s.%d" % (out, n + 1), "wb") as o:
            o.write(body)
        answer, close = answers[min(n, len(answers) - 1)]
        n += 1
        c.sendall(answer)
        if close:
            break
    f.close()
    c.close()
PY
kill -TERM "$fake_pid"
wait "$fake_pid" 2>/dev/null || true
fake_pid=
python3 "$tmp/fake2.py" "$fake_port" "$tmp/ans" >"$tmp/fake2.out" 2>&1 &
fake_pid=$!
wait_for "the second stand-in receiver" grep -qs ready "$tmp/fake2.out"
for i in 1 2 3 4; do
	PRINTK_OPTS="log_buf_file=$tmp/log5 loglevel=1" "$emit" "1:6::answer form $i" >/dev/null 2>"$tmp/emit.err" ||
		fail "pk-emit: $(cat "$tmp/emit.err")"
	"$fwd" -o -c "$tmp/cursor5" "$ftarget" "$tmp/log5" 2>"$tmp/fwd5.err" || fail "pk-forward: $(cat "$tmp/fwd5.err")"
	[[ $(sed -n 's/^next-seq //p' "$tmp/cursor5") == "$i" ]] || fail "answer form $i: cursor $(cat "$tmp/cursor5")"
	if ((i < 4)); then
		[[ -s $tmp/fwd5.err ]] && fail "answer form $i: pk-forward said: $(cat "$tmp/fwd5.err")"
	else
		printf '%s\n' "pk-forward: $ftarget: cannot deliver: the receiver's answer is not HTTP/1.1 as expected; the batch goes again, retried after 100 ms doubling up to 10 s (said once until it is delivered)" \
			"pk-forward: $ftarget: delivering again" >"$tmp/fwd5.want"
		cmp -s "$tmp/fwd5.want" "$tmp/fwd5.err" || fail "answer form 4: $(diff "$tmp/fwd5.want" "$tmp/fwd5.err")"
	fi
done
reqs=("$tmp"/ans.*)
((${#reqs[@]} == 5)) || fail "the second stand-in got ${#reqs[@]} requests, not 5"
cmp -s "$tmp/ans.4" "$tmp/ans.5" || fail "the batch sent again after the answer that is not HTTP differs"
grep -q 'MESSAGE=answer form 4' "$tmp/ans.5" || fail "the last request is not the fourth record's"
echo "ok: 100 then chunked, HTTP/1.0 to the close, Content-Length 0 with Connection: close; an answer that is not HTTP said once and the batch sent again"
echo "PASS"
