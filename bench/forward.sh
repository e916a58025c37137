#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/forward.sh [BUILD_DIR] - records per second forwarded to a real
# rsyslogd: pk-forward over TCP and over RELP, against util-linux logger(1)
# sending the same lines over TCP (octet counting, RFC 5424), in the same
# run.
#
# udmesg-testgen fills a log of MIB MiB (default 8) with dmesg-like lines;
# rsyslogd (imtcp and imrelp on 127.0.0.1, its default in-memory main queue,
# one file action) is started in a private directory. Each sender sends
# every record once; a run is timed from its start until the last record is
# in rsyslogd's file (end to end), RUNS times (default 3), and the best and
# median rates are printed. pk-forward runs with --once and a fresh cursor,
# so its time includes its commits (over RELP a session close per 1000
# records). logger reads the text udmesg printed from the same log.
# Figures, not a test: the exit status is 0 unless something could not run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
runs=${RUNS:-3}
mib=${MIB:-8}
fwd=$build/tools/pk-forward
udmesg=$build/tools/udmesg
gen=$build/tests/udmesg-testgen
for b in "$fwd" "$udmesg" "$gen"; do
	[[ -x $b ]] || { echo "bench/forward.sh: $b is not built (cmake --build $build --target pk-forward udmesg udmesg-testgen)" >&2; exit 1; }
done
rsyslogd=$(command -v rsyslogd || echo /usr/sbin/rsyslogd)
[[ -x $rsyslogd ]] || { echo "bench/forward.sh: rsyslogd not found (Debian: rsyslog, rsyslog-relp)" >&2; exit 1; }
logger=$(command -v logger || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forward-bench.XXXXXX")
rs_pid=
cleanup() {
	[[ -n $rs_pid ]] && kill "$rs_pid" 2>/dev/null && wait "$rs_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tcp_port=$(port)
relp_port=$(port)
mkdir "$tmp/spool"
cat >"$tmp/rsyslog.conf" <<EOF
global(workDirectory="$tmp/spool" net.enableDNS="off" processInternalMessages="on"
       maxMessageSize="64k")
module(load="imtcp")
module(load="imrelp")
input(type="imtcp" address="127.0.0.1" port="$tcp_port" supportOctetCountedFraming="on")
input(type="imrelp" address="127.0.0.1" port="$relp_port")
template(name="m" type="string" string="%msg%\n")
*.* action(type="omfile" file="$tmp/out.txt" template="m")
EOF
"$rsyslogd" -n -f "$tmp/rsyslog.conf" -i "$tmp/rsyslogd.pid" >"$tmp/rsyslogd.log" 2>&1 &
rs_pid=$!
for _ in $(seq 100); do
	[[ -s $tmp/out.txt ]] && break
	sleep 0.05
done

log=$tmp/bench.log
"$gen" bench "$log" "$mib"
"$udmesg" -B "$log" -t >"$tmp/lines.txt"
n=$(wc -l <"$tmp/lines.txt")

lines() { wc -l <"$tmp/out.txt"; }
# Run "$@", wait until $n more lines are in the file; print the seconds.
timed() {
	local before start end
	before=$(lines)
	start=$(date +%s.%N)
	"$@" >/dev/null 2>"$tmp/err.txt" || { echo "bench/forward.sh: $1 failed: $(head -1 "$tmp/err.txt")" >&2; exit 1; }
	while (($(lines) < before + n)); do
		sleep 0.01
		if (($(echo "$(date +%s.%N) - $start > 300" | bc) )); then
			echo "bench/forward.sh: $1: only $(($(lines) - before)) of $n arrived" >&2
			exit 1
		fi
	done
	end=$(date +%s.%N)
	echo "$end - $start" | bc -l
}

report() {
	local name=$1
	shift
	local -a rates=()
	for _ in $(seq "$runs"); do
		rm -f "$tmp/cursor"
		t=$(timed "$@")
		rates+=("$(echo "$n / $t" | bc)")
	done
	mapfile -t sorted < <(printf '%s\n' "${rates[@]}" | sort -n)
	printf '%-28s best %9s rec/s   median %9s rec/s\n' "$name" "${sorted[-1]}" "${sorted[$((${#sorted[@]} / 2))]}"
}

echo "records: $n ($mib MiB log), runs: $runs, rsyslogd $("$rsyslogd" -v | head -1 | awk '{print $2}')"
report "pk-forward tcp" "$fwd" -o -c "$tmp/cursor" "tcp:127.0.0.1:$tcp_port" "$log"
report "pk-forward relp" "$fwd" -o -c "$tmp/cursor" "relp:127.0.0.1:$relp_port" "$log"
if [[ -n $logger ]]; then
	report "logger --tcp --octet-count" "$logger" --tcp --octet-count --rfc5424 \
		-n 127.0.0.1 -P "$tcp_port" -t bench -f "$tmp/lines.txt"
else
	echo "logger: not found (Debian: bsdutils), left out"
fi
