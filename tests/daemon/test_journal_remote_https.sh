#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pk-forward's journal-remote target over https against the real
# systemd-journal-remote (--listen-https, a certificate of the test CA,
# tests/daemon/tls_certs.sh), started privately on 127.0.0.1:
#   1. the server verified by address (HOST 127.0.0.1, the default peer)
#      against ca=: records with hostile texts and dictionaries, every
#      field of every entry in the received journal compared exactly
#      (journalctl -o json), the cursor at the end;
#   2. by name (peer=localhost), with a client certificate given (Debian's
#      journal-remote asks for none: it cannot check them, its --trust "is
#      not available"): more records, each once;
#   3. the cursor across restarts: pk-forward following, stopped with
#      SIGTERM, more records written, started again: every record once;
#      journal-remote stopped and started again meanwhile: a new session;
#   4. a wrong CA (another CA's file) and a wrong name (peer=wrong.example):
#      refused with OpenSSL's words in pk-forward's one line, nothing
#      arrives, the cursor stays;
#   5. a server that requires a client certificate (openssl s_server
#      -Verify: journal-remote cannot be made to) and gets none: its alert
#      said in the same line ("refused by the peer: tlsv13 alert
#      certificate required"), the cursor stays.
#
# journal-remote gets its listening socket from a Python launcher (socket
# activation, LISTEN_FDS; --listen-https=-3), as in test_journal_remote.sh.
#
# Environment: PRINTK_TEST_BUILD_DIR (tools/pk-forward, tests/pk-emit);
# PRINTK_SOURCE_DIR (tests/daemon/tls_certs.sh).
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
src_dir=${PRINTK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
emit=$PRINTK_TEST_BUILD_DIR/tests/pk-emit
fwd=$PRINTK_TEST_BUILD_DIR/tools/pk-forward
jr=/lib/systemd/systemd-journal-remote

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $emit ]] || fail "$emit is not built"
[[ -x $fwd ]] || fail "$fwd is not built"
[[ -x $jr ]] || fail "no $jr (Debian package systemd-journal-remote; scripts/setup.sh installs it)"
command -v journalctl >/dev/null || fail "no journalctl"
command -v openssl >/dev/null || fail "no openssl command (Debian: openssl)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-journal-remote-https.XXXXXX")
jr_pid=
fwd_pid=
ss_pid=
cleanup() {
	local p
	for p in "$fwd_pid" "$jr_pid" "$ss_pid"; do
		[[ -n $p ]] || continue
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT

c=$tmp/certs
mkdir "$c"
bash "$src_dir/tests/daemon/tls_certs.sh" "$c" || fail "the certificates could not be made"

read -r port ss_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
target=journal-remote:https://127.0.0.1:$port,ca=$c/ca.pem
log=$tmp/log
cursor=$tmp/cursor
export PRINTK_OPTS="log_buf_file=$log log_buf_len=4M loglevel=1"

JR_KEY=$c/server.key
JR_CERT=$c/server.pem
JR_CA=$c/ca.pem

stop_jr() {
	kill -TERM "$jr_pid"
	wait "$jr_pid" || true
	jr_pid=
}

# shellcheck source=tests/daemon/journal_remote_common.sh
. "$(dirname "$0")/journal_remote_common.sh"

# How many entries, how many PRINTK_SEQs twice, how many of [0, $1) missing.
seq_report() {
	entries | python3 -c '
import json, sys, collections
n = int(sys.argv[1])
c = collections.Counter(int(json.loads(l)["PRINTK_SEQ"]) for l in sys.stdin if l.strip())
print(sum(c.values()), sum(v - 1 for v in c.values()), sum(1 for s in range(n) if s not in c))
' "$1"
}



start_jr

# --------------------------------------------- 1. by address, the fields --
"$emit" "${msgs[@]}" >"$tmp/emit.out" 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
read -r _ emit_pid <"$tmp/emit.out"
"$fwd" -o -c "$cursor" "$target" "$log" 2>"$tmp/fwd1.err" || fail "pk-forward: $(cat "$tmp/fwd1.err")"
[[ -s $tmp/fwd1.err ]] && fail "pk-forward said: $(cat "$tmp/fwd1.err")"
[[ $(cursor_seq) == 6 ]] || fail "cursor: next-seq $(cursor_seq), not 6"

entries >"$tmp/fields.json"
python3 "$(dirname "$0")/check_journal_fields.py" "$tmp/fields.json" "$emit_pid" "$(hostname)" "$(tr -d '-' </proc/sys/kernel/random/boot_id)" || fail "fields differ (above)"
echo "ok: $target: every field of 6 entries, the multi-line, control-byte and non-UTF-8 texts exact"

# ------------------------------- 2. by name, a client certificate given --
byname="journal-remote:https://127.0.0.1:$port/,peer=localhost,ca=$c/ca.pem,cert=$c/client.pem,key=$c/client.key"
"$emit" "1:6::by name "{1..94} >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
"$fwd" -o -c "$cursor" "$byname" "$log" 2>"$tmp/fwd2.err" || fail "pk-forward: $(cat "$tmp/fwd2.err")"
[[ -s $tmp/fwd2.err ]] && fail "pk-forward said: $(cat "$tmp/fwd2.err")"
cursor_is 100 || fail "cursor: next-seq $(cursor_seq), not 100"
[[ $(seq_report 100) == "100 0 0" ]] || fail "entries, twice, missing: $(seq_report 100)"
echo "ok: $byname: 100 records, each once"

# ----------------------------------------------- 3. the cursor, restarted --
"$fwd" -c "$cursor" "$target" "$log" 2>"$tmp/fwd3.err" &
fwd_pid=$!
"$emit" "1:6::following "{1..400} >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
wait_for "500 records in the journal" cursor_is 500
kill -TERM "$fwd_pid"
wait "$fwd_pid" || fail "pk-forward exited $? at SIGTERM: $(cat "$tmp/fwd3.err")"
fwd_pid=
stop_jr
"$emit" "1:6::while away "{1..300} >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
start_jr
"$fwd" -o -c "$cursor" "$target" "$log" 2>>"$tmp/fwd3.err" || fail "pk-forward: $(cat "$tmp/fwd3.err")"
[[ -s $tmp/fwd3.err ]] && fail "pk-forward said: $(cat "$tmp/fwd3.err")"
cursor_is 800 || fail "cursor: next-seq $(cursor_seq), not 800"
[[ $(seq_report 800) == "800 0 0" ]] || fail "entries, twice, missing: $(seq_report 800)"
echo "ok: the cursor across a stop and a start of both: 800 records, each once"

# --------------------------------------------- 4. wrong CA, wrong name --
# refused TARGET WORDS: pk-forward says "cannot deliver: WORDS;" once,
# nothing arrives, the cursor stays at $at.
at=800
refused() {
	local tgt=$1 words=$2
	"$emit" "1:6::never sent" >/dev/null 2>"$tmp/emit.err" || fail "pk-emit: $(cat "$tmp/emit.err")"
	# Emptied here, not only by the background start's redirection: the
	# wait below must not find the previous call's words before the new
	# pk-forward has opened the file.
	: >"$tmp/fwd4.err"
	"$fwd" -c "$cursor" "$tgt" "$log" 2>>"$tmp/fwd4.err" &
	fwd_pid=$!
	wait_for "pk-forward saying it cannot deliver to $tgt" grep -qs 'cannot deliver' "$tmp/fwd4.err"
	kill -TERM "$fwd_pid"
	wait "$fwd_pid" || true
	fwd_pid=
	local want="pk-forward: $tgt: cannot deliver: $words; the batch goes again, retried after 100 ms doubling up to 10 s (said once until it is delivered)"
	[[ $(cat "$tmp/fwd4.err") == "$want" ]] || fail "pk-forward's words: $(cat "$tmp/fwd4.err"), not $want"
	cursor_is "$at" || fail "cursor moved: next-seq $(cursor_seq), not $at"
	[[ $(seq_report "$at") == "$at 0 0" ]] || fail "entries, twice, missing: $(seq_report "$at")"
	echo "ok: refused: $(cat "$tmp/fwd4.err")"
}
refused "journal-remote:https://127.0.0.1:$port,ca=$c/other-ca.pem" \
	"certificate refused: unable to get local issuer certificate"
refused "journal-remote:https://127.0.0.1:$port,ca=$c/ca.pem,peer=wrong.example" \
	"certificate refused: hostname mismatch"
# The right one takes the records written meanwhile.
"$fwd" -o -c "$cursor" "$target" "$log" 2>"$tmp/fwd5.err" || fail "pk-forward: $(cat "$tmp/fwd5.err")"
cursor_is 802 || fail "cursor: next-seq $(cursor_seq), not 802"
[[ $(seq_report 802) == "802 0 0" ]] || fail "entries, twice, missing: $(seq_report 802)"
echo "ok: then the right CA: 802 records, each once"

kill -0 "$jr_pid" 2>/dev/null || fail "journal-remote exited: $(tail -3 "$tmp/jr.log")"

# ------------------------------- 5. a client certificate required, none --
openssl s_server -accept "127.0.0.1:$ss_port" -cert "$c/server.pem" -key "$c/server.key" \
	-CAfile "$c/ca.pem" -Verify 1 -www >"$tmp/s_server.log" 2>&1 &
ss_pid=$!
for ((t = 0; t < 1200; t++)); do
	(exec 3<>"/dev/tcp/127.0.0.1/$ss_port") 2>/dev/null && break
	kill -0 "$ss_pid" 2>/dev/null || fail "openssl s_server exited: $(tail -3 "$tmp/s_server.log")"
	sleep 0.05
done
at=802
refused "journal-remote:https://127.0.0.1:$ss_port,ca=$c/ca.pem" \
	"refused by the peer: tlsv13 alert certificate required"
echo "PASS"
