#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The syslog console's tls: target (RFC 5425) and pk-forward's against a
# real syslog-ng, every field of every message checked exactly:
#   1. syslog(transport("tls")) with peer-verify(optional-untrusted): the
#      collector checked by name (peer=localhost) and by address (the
#      default peer, 127.0.0.1), RFC 5424 and RFC 3164;
#   2. peer-verify(required-trusted) with ca-file() the test CA: our client
#      certificate (,cert=,key=) taken; without one, refused by the peer
#      and nothing arrives;
#   3. a wrong CA (,ca= another CA) and a wrong name (,peer=wrong.example):
#      refused with OpenSSL's words, announced, and nothing arrives;
#   4. pk-forward with the same targets: the records of a log file, each
#      once, the cursor at the end; a wrong CA refused, nothing arrives.
# syslog-ng writes $PRI, $FACILITY_NUM, $LEVEL_NUM, $HOST, $PROGRAM, $PID,
# $MSGID, $SDATA and $MSG of each message into a file per source, each
# message ended by <<END>> (as tests/daemon/test_syslog_ng.sh); its TLS is
# libafsocket's (transport("tls"), tls() block).
#
# syslog-ng runs from the private root scripts/setup.sh unpacks (never
# installed: it conflicts with rsyslog), started as test_syslog_ng.sh's
# (tests/daemon/syslog_ng_common.sh); the certificates are
# tests/daemon/tls_certs.sh's (the openssl command).
#
# Environment: PRINTK_TEST_BUILD_DIR (tests/pk-emit, tools/pk-forward);
# PRINTK_SOURCE_DIR (tests/daemon/tls_certs.sh); SYSLOG_NG_ROOT.
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
src_dir=${PRINTK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
emit=$PRINTK_TEST_BUILD_DIR/tests/pk-emit
fwd=$PRINTK_TEST_BUILD_DIR/tools/pk-forward

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $emit ]] || fail "$emit is not built"
[[ -x $fwd ]] || fail "$fwd is not built"
# shellcheck source=tests/daemon/syslog_ng_common.sh
. "$(dirname "$0")/syslog_ng_common.sh"
command -v openssl >/dev/null || fail "no openssl command (Debian: openssl)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-syslog-ng-tls.XXXXXX")
ng_pid=
bg_pid=
cleanup() {
	local p
	for p in "$bg_pid" "$ng_pid"; do
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

# One port per source (each source's file is checked whole, so each case
# has its own).
names=(name addr r3164 req noreq wrongca wrongname fwd fwdbad)
read -r -a ports < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(9)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
declare -A port
for i in "${!names[@]}"; do port[${names[$i]}]=${ports[$i]}; done

conf=$tmp/syslog-ng.conf
{
	ng_conf_head
	for n in "${names[@]}"; do
		verify="peer-verify(optional-untrusted)"
		[[ $n == req || $n == noreq ]] && verify="ca-file(\"$c/ca.pem\") peer-verify(required-trusted)"
		echo "source s_$n { syslog(ip(\"127.0.0.1\") port(${port[$n]}) transport(\"tls\")"
		echo "  tls(key-file(\"$c/server.key\") cert-file(\"$c/server.pem\") $verify)); };"
		ng_to_file "$n"
	done
} >"$conf"

# Ready when every port accepts a TCP connection (the handshake is not
# tried: a connection that sends nothing is only logged by syslog-ng).
ready() {
	local n
	for n in "${names[@]}"; do
		(exec 3<>"/dev/tcp/127.0.0.1/${port[$n]}") 2>/dev/null || return 1
	done
}
start_ng

# count NAME: the messages in NAME's file (0: no file, nothing written).
count() {
	if [[ -e $tmp/$1.txt ]]; then grep -c '<<END>>$' "$tmp/$1.txt" || true; else echo 0; fi
}

# check NAME FORMAT PID FIRST-SEQ: NAME's file holds exactly the four sent
# messages (the debug one below the console level is not sent; pk-forward
# sends it, FIRST-SEQ 0 then), every field; FORMAT 5424 or 3164.
check() {
	ng_check_times "$1"
	ng_want "$2" "$3" "$4" $'\n' >"$tmp/$1.want"
	ng_compare "$1"
}

# wait_count NAME N: until NAME's file has N messages (a minute at most).
wait_count() {
	local got
	for ((t = 0; t < 1200; t++)); do
		got=$(count "$1")
		((got >= $2)) && break
		sleep 0.05
	done
	((got == $2)) || fail "$1: $got of $2 messages arrived: $(tail -3 "$tmp/syslog-ng.log")"
}

# run NAME OPTIONS FORMAT: pk-emit with console=syslog:tls:127.0.0.1:PORT,OPTIONS.
run() {
	local name=$1 target="tls:127.0.0.1:${port[$1]}${2:+,$2}" format=$3 pid
	PRINTK_OPTS="console=syslog:$target" "$emit" "${msgs[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "$name: pk-emit: $(cat "$tmp/$name.err")"
	[[ -s $tmp/$name.err ]] && fail "$name: pk-emit said: $(cat "$tmp/$name.err")"
	read -r _ pid <"$tmp/$name.out"
	wait_count "$name" 4
	check "$name" "$format" "$pid" 1
	echo "ok: $name (console=syslog:$target)"
}

# stop_bg_once COMMAND...: until COMMAND succeeds or bg_pid ended (a minute
# at most); then bg_pid stopped and reaped.
stop_bg_once() {
	for ((t = 0; t < 1200; t++)); do
		"$@" && break
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -TERM "$bg_pid" 2>/dev/null || true
	wait "$bg_pid" 2>/dev/null || true
	bg_pid=
}

# refused NAME OPTIONS WORDS: pk-emit's console announces "cannot reach
# ...: WORDS (" and nothing arrives at NAME's source. pk-emit would wait a
# minute for the console: it is stopped once the line is there.
refused() {
	local name=$1 target="tls:127.0.0.1:${port[$1]},$2" words=$3
	PRINTK_OPTS="console=syslog:$target" "$emit" "${msgs[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	bg_pid=$!
	local want="printk: console [syslog] cannot reach tls:127.0.0.1:${port[$name]}: $words ("
	stop_bg_once grep -qsF "$want" "$tmp/$name.err"
	grep -qsF "$want" "$tmp/$name.err" || fail "$name: not refused as '$want': $(cat "$tmp/$name.err")"
	[[ $(grep -c 'cannot reach' "$tmp/$name.err") == 1 ]] || fail "$name: announced more than once: $(cat "$tmp/$name.err")"
	# Whatever syslog-ng took would be in the file by the time it logged
	# the failed handshake; a second wait covers a slow writer.
	sleep 1
	[[ $(count "$name") == 0 ]] || fail "$name: $(count "$name") messages arrived through a refused session"
	echo "ok: $name refused: $(grep 'cannot reach' "$tmp/$name.err")"
}

# ------------------------------------------------------ 1. verified, fields --
run name "ca=$c/ca.pem,peer=localhost" 5424
run addr "ca=$c/ca.pem" 5424
run r3164 "rfc3164,ca=$c/ca.pem,peer=localhost" 3164

# -------------------------------------------- 2. a client certificate required --
run req "ca=$c/ca.pem,cert=$c/client.pem,key=$c/client.key,peer=localhost" 5424
refused noreq "ca=$c/ca.pem,peer=localhost" "refused by the peer: tlsv13 alert certificate required"

# ------------------------------------------------ 3. wrong CA, wrong name --
refused wrongca "ca=$c/other-ca.pem,peer=localhost" "certificate refused: unable to get local issuer certificate"
refused wrongname "ca=$c/ca.pem,peer=wrong.example" "certificate refused: hostname mismatch"

# -------------------------------------------------------- 4. pk-forward --
log=$tmp/log
PRINTK_OPTS="log_buf_file=$log loglevel=1" "$emit" "${msgs[@]}" >"$tmp/fwd.out" 2>"$tmp/fwd.emit.err" ||
	fail "pk-emit to the log file: $(cat "$tmp/fwd.emit.err")"
read -r _ pid <"$tmp/fwd.out"
target="tls:127.0.0.1:${port[fwd]},ca=$c/ca.pem,peer=localhost"
"$fwd" -o -c "$tmp/cursor" "$target" "$log" 2>"$tmp/fwd.err" || fail "pk-forward: $(cat "$tmp/fwd.err")"
[[ -s $tmp/fwd.err ]] && fail "pk-forward said: $(cat "$tmp/fwd.err")"
wait_count fwd 5
check fwd 5424 "$pid" 0
grep -qx 'next-seq 5' "$tmp/cursor" || fail "pk-forward's cursor: $(cat "$tmp/cursor")"
# Again from the cursor: nothing more is sent.
"$fwd" -o -c "$tmp/cursor" "$target" "$log" 2>"$tmp/fwd.err" || fail "pk-forward again: $(cat "$tmp/fwd.err")"
sleep 1
[[ $(count fwd) == 5 ]] || fail "pk-forward from its cursor sent again: $(count fwd) messages"
echo "ok: pk-forward $target: 5 records, the cursor at 5"

bad="tls:127.0.0.1:${port[fwdbad]},ca=$c/other-ca.pem,peer=localhost"
"$fwd" -c "$tmp/cursor.bad" "$bad" "$log" 2>"$tmp/fwdbad.err" &
bg_pid=$!
# pk-forward's console says what it met in pk-forward's own printk, which
# reaches stderr when pk-forward exits: the condition is syslog-ng's line
# for the handshake our side broke off ("unknown ca" alert), on that port.
ng_refused() {
	grep -B1 -F "tlsv1 alert unknown ca', location='$conf:" "$tmp/syslog-ng.log" |
		grep -qF "local='AF_INET(127.0.0.1:${port[fwdbad]})'"
}
stop_bg_once ng_refused
grep -qsF "printk: console [syslog] cannot reach tls:127.0.0.1:${port[fwdbad]}: certificate refused: unable to get local issuer certificate (" "$tmp/fwdbad.err" ||
	fail "pk-forward to a wrong CA: $(cat "$tmp/fwdbad.err")"
[[ -e $tmp/cursor.bad ]] && fail "pk-forward wrote a cursor for a refused collector: $(cat "$tmp/cursor.bad")"
sleep 1
[[ $(count fwdbad) == 0 ]] || fail "pk-forward: $(count fwdbad) messages arrived through a refused session"
echo "ok: pk-forward refused: $(head -1 "$tmp/fwdbad.err")"

kill -0 "$ng_pid" 2>/dev/null || fail "syslog-ng exited: $(tail -3 "$tmp/syslog-ng.log")"
echo "PASS"
