#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The syslog console against a real syslog-ng, every field of every message
# checked exactly: RFC 5424 over TCP with octet counting (syslog() source),
# with and without the BOM; with LF framing (network() source,
# flags(syslog-protocol)), where a newline inside a text must arrive as
# #012 in one message; RFC 3164 over both framings; RFC 5424 and RFC 3164
# over UDP. syslog-ng writes $PRI, $FACILITY_NUM, $LEVEL_NUM, $HOST,
# $PROGRAM, $PID, $MSGID, $SDATA and $MSG of each message into a file per
# source, each message ended by <<END>>; the sender's time ($S_UNIXTIME)
# must be within ten minutes of the test's.
#
# Debian's syslog-ng-core conflicts with rsyslog, so it is not installed:
# scripts/setup.sh unpacks its package into a private root, and syslog-ng
# runs from there with its own module path, configuration, persist file,
# pid file and control socket (docs/forwarding.md, "syslog-ng as receiver";
# tests/daemon/syslog_ng_common.sh starts it).
#
# Environment: PRINTK_TEST_BUILD_DIR (tests/pk-emit); SYSLOG_NG_ROOT (the
# private root, default /var/cache/libprintk-test/syslog-ng-root).
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
emit=$PRINTK_TEST_BUILD_DIR/tests/pk-emit

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $emit ]] || fail "$emit is not built"
# shellcheck source=tests/daemon/syslog_ng_common.sh
. "$(dirname "$0")/syslog_ng_common.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-syslog-ng.XXXXXX")
ng_pid=
cleanup() {
	if [[ -n $ng_pid ]]; then
		kill -TERM "$ng_pid" 2>/dev/null || true
		wait "$ng_pid" 2>/dev/null || true
	fi
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT

# Eight ports the kernel says are free now (bound and released at once; a
# clash with another program in between makes syslog-ng fail to start,
# loudly).
read -r p_oct p_lf p_lf3164 p_udp p_oct_nobom p_lf_bom p_oct3164 p_udp3164 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(8)]
for s in ss: s.bind(("127.0.0.1", 0))
ports = [s.getsockname()[1] for s in ss]
for p in ports:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", p)); u.close()
print(*ports)')

conf=$tmp/syslog-ng.conf
{
	ng_conf_head
	src() { # NAME DRIVER-AND-OPTIONS
		echo "source s_$1 { $2; };"
		ng_to_file "$1"
	}
	src oct "syslog(ip(\"127.0.0.1\") port($p_oct) transport(\"tcp\"))"
	src oct_nobom "syslog(ip(\"127.0.0.1\") port($p_oct_nobom) transport(\"tcp\"))"
	src lf "network(ip(\"127.0.0.1\") port($p_lf) transport(\"tcp\") flags(syslog-protocol))"
	src lf_bom "network(ip(\"127.0.0.1\") port($p_lf_bom) transport(\"tcp\") flags(syslog-protocol))"
	src lf3164 "network(ip(\"127.0.0.1\") port($p_lf3164) transport(\"tcp\"))"
	src oct3164 "syslog(ip(\"127.0.0.1\") port($p_oct3164) transport(\"tcp\"))"
	src udp "syslog(ip(\"127.0.0.1\") port($p_udp) transport(\"udp\"))"
	src udp3164 "syslog(ip(\"127.0.0.1\") port($p_udp3164) transport(\"udp\"))"
} >"$conf"

# Ready when every TCP port accepts a connection and a UDP probe reached
# its file.
ready() {
	local p
	for p in "$p_oct" "$p_oct_nobom" "$p_lf" "$p_lf_bom" "$p_lf3164" "$p_oct3164"; do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || return 1
	done
	echo "<14>1 $(date -u +%Y-%m-%dT%H:%M:%SZ) h probe - - - probe" >"/dev/udp/127.0.0.1/$p_udp"
	echo "<14>1 $(date -u +%Y-%m-%dT%H:%M:%SZ) h probe - - - probe" >"/dev/udp/127.0.0.1/$p_udp3164"
	[[ -s $tmp/udp.txt && -s $tmp/udp3164.txt ]]
}
start_ng

# run NAME OPTIONS FORMAT: send msgs with console=syslog:OPTIONS, wait until
# NAME's file has them all, and compare every field; FORMAT is 5424 or
# 3164. syslog-ng drops the BOM from $MSG, in both sources.
run() {
	local name=$1 target=$2 format=$3 file=$tmp/$1.txt pid n=$((${#msgs[@]} - 1)) got
	PRINTK_OPTS="console=syslog:$target" "$emit" "${msgs[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "$name: pk-emit: $(cat "$tmp/$name.err")"
	[[ -s $tmp/$name.err ]] && fail "$name: pk-emit said: $(cat "$tmp/$name.err")"
	read -r _ pid <"$tmp/$name.out"
	for ((t = 0; t < 1200; t++)); do
		got=$(grep -v '^@[0-9]* pri=14 .* prog=probe ' "$file" 2>/dev/null | grep -c '<<END>>$' || true)
		((got >= n)) && break
		sleep 0.05
	done
	((got == n)) || fail "$name: $got of $n messages arrived: $(tail -3 "$tmp/syslog-ng.log")"
	# The sender's time, then the rest exactly.
	ng_check_times "$name"
	local nl=$'\n'
	[[ $target == *framing=lf* ]] && nl='#012'
	{
		# The readiness probes: one or more, before the console's messages.
		if [[ $name == udp* ]]; then
			grep -o '^@[0-9]* pri=14 fac=1 lvl=6 host=h prog=probe pid= msgid= sdata= msg=probe<<END>>$' "$file" |
				sed 's/^@[0-9]* pri=/pri=/'
		fi
		ng_want "$format" "$pid" 1 "$nl"
	} >"$tmp/$name.want"
	ng_compare "$name"
	echo "ok: $name (console=syslog:$target)"
}

run oct "tcp:127.0.0.1:$p_oct" 5424
run oct_nobom "tcp:127.0.0.1:$p_oct_nobom,bom=no" 5424
run lf "tcp:127.0.0.1:$p_lf,framing=lf,bom=no" 5424
run lf_bom "tcp:127.0.0.1:$p_lf_bom,framing=lf" 5424
run lf3164 "tcp:127.0.0.1:$p_lf3164,rfc3164,framing=lf" 3164
run oct3164 "tcp:127.0.0.1:$p_oct3164,rfc3164" 3164
run udp "udp:127.0.0.1:$p_udp" 5424
run udp3164 "udp:127.0.0.1:$p_udp3164,rfc3164" 3164
kill -0 "$ng_pid" 2>/dev/null || fail "syslog-ng exited: $(tail -3 "$tmp/syslog-ng.log")"
echo "PASS"
