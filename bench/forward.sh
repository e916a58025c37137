#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/forward.sh [BUILD_DIR] - records per second forwarded to a real
# rsyslogd: pk-forward over TCP, RELP and TLS, against util-linux logger(1)
# sending the same lines over TCP (octet counting, RFC 5424), and a writer
# logging them through printk's syslog console over TCP, RELP, TLS (RFC
# 5425; rsyslog's imtcp with the ossl driver, certificates made here by
# tests/daemon/tls_certs.sh) and RELP over TLS; to a
# real syslog-ng (when scripts/setup.sh unpacked one): the same writer over
# TCP; to a real systemd-journal-remote over HTTP and HTTPS: pk-forward's
# journal-remote target against systemd-journal-upload(8); and to a real
# systemd-journald: pk-forward, printk's journal console and
# sd_journal_send(3) sending the same records; all in the same run.
#
# udmesg-testgen fills a log of MIB MiB (default 8) with dmesg-like lines;
# rsyslogd (imtcp and imrelp on 127.0.0.1, its default in-memory main queue,
# one file action) is started in a private directory. Each sender sends
# every record once; a run is timed from its start until the last record is
# in rsyslogd's file (end to end), RUNS times (default 3), and the best and
# median rates are printed. pk-forward runs with --once and a fresh cursor,
# so its time includes its commits (over RELP a session close per 1000
# records). logger reads the text udmesg printed from the same log.
#
# journald's paths are fixed, so its legs run in private mount and pid
# namespaces (unshare, as tests/test_daemon_journald.c does): this script
# again, with its directories bound over /run/systemd, /run/log and
# /var/log/journal and its own journald.conf (Storage=volatile, no
# forwarding, no rate limit). There pk-forward sends the log to
# "journal"; bench/journal_send sends the lines udmesg printed, through
# printk with console=journal,lossless (so it sends every record) or
# through sd_journal_send(3). A run ends when journalctl --directory shows
# all of them (entries with _TRANSPORT=journal, counted from a cursor); the
# three legs' runs interleave. Two lines after the table give journald's CPU
# time per entry and the sender's per record (its threads included), for
# the rates are journald's as much as the senders'. If journald cannot be
# started, one line says so (JOURNALD=PATH runs another binary).
# Figures, not a test: the exit status is 0 unless something could not run.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
runs=${RUNS:-3}
mib=${MIB:-8}
fwd=$build/tools/pk-forward
udmesg=$build/tools/udmesg
gen=$build/tests/udmesg-testgen
jsend=$build/bench/journal_send
journald=${JOURNALD:-/lib/systemd/systemd-journald}
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

# Run "$@", then wait until ${want:-$n} messages arrived ($arrived sets
# $got, after $mark); print the seconds. With $exact, more is an error too.
# The sender's CPU time goes to $tmp/cpu.txt.
timed() {
	local start now last=0 stalled
	$mark
	got=0
	start=$(date +%s.%N)
	times >"$tmp/times0.txt"
	"$@" >/dev/null 2>"$tmp/err.txt" || { echo "bench/forward.sh: $1 failed: $(head -1 "$tmp/err.txt")" >&2; exit 1; }
	times >"$tmp/times1.txt"
	# The sender's CPU seconds (user + system) go to $tmp/cpu.txt.
	awk 'FNR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += (a[1] * 60 + a[2]) * (FILENAME ~ /times1[.]txt$/ ? 1 : -1) } }
		END { printf "%.3f\n", s }' "$tmp/times0.txt" "$tmp/times1.txt" >"$tmp/cpu.txt"
	stalled=$(date +%s)
	local w=${want:-$n}
	while $arrived; ((got < w)); do
		sleep 0.01
		((got > last)) && { last=$got; stalled=$(date +%s); }
		if (($(date +%s) - stalled > 30)); then
			echo "bench/forward.sh: $1: only $got of $w arrived" >&2
			exit 1
		fi
	done
	now=$(date +%s.%N)
	if [[ -n $exact ]] && ((got > w)); then
		echo "bench/forward.sh: $1: $got arrived, $w expected" >&2
		exit 1
	fi
	echo "$now - $start" | bc -l
}

# pk-forward sends the log's records and, when the generator's log already
# overwrote its first ones, one "** N printk messages dropped **" before them.
fwd_messages() {
	local first
	first=$("$udmesg" -B "$tmp/bench.log" --kmsg | tr '\0' '\n' | awk -F, 'NR == 1 { print $2 }')
	echo $((n + (first > 0)))
}

# summary NAME RATE...: one line of the table.
summary() {
	local name=$1
	shift
	mapfile -t sorted < <(printf '%s\n' "$@" | sort -n)
	printf '%-28s best %9s rec/s   median %9s rec/s\n' "$name" "${sorted[-1]}" "${sorted[$((${#sorted[@]} / 2))]}"
}

# report NAME COMMAND...: RUNS runs of COMMAND, one line of the table; the
# sender's CPU microseconds per record (all runs) are added to $cpu_note.
cpu_note=''
report() {
	local name=$1 cpu=0
	shift
	local -a rates=()
	for _ in $(seq "$runs"); do
		rm -f "$tmp/cursor"
		t=$(timed "$@")
		rates+=("$(echo "$n / $t" | bc)")
		cpu=$(echo "$cpu + $(cat "$tmp/cpu.txt")" | bc)
	done
	summary "$name" "${rates[@]}"
	mapfile -t sorted < <(printf '%s\n' "${rates[@]}" | sort -n)
	median_rate=${sorted[$((${#sorted[@]} / 2))]}
	cpu_us=$(echo "$cpu * 1000000 / ($runs * $n)" | bc -l)
	cpu_note+="${cpu_note:+, }$name $(printf '%.1f' "$cpu_us") us"
}

# --------------------------------------------- journald, in its namespaces --
# shellcheck disable=SC2317 # its functions are called through variables
if [[ -n ${FORWARD_BENCH_JOURNALD:-} ]]; then
	tmp=$FORWARD_BENCH_JOURNALD
	n=$(wc -l <"$tmp/lines.txt")
	d=$tmp/jd
	mkdir -p "$d/run-systemd" "$d/run-log" "$d/var-log-journal"
	cat >"$d/journald.conf" <<CONF
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=0
CONF
	mount --bind "$d/run-systemd" /run/systemd
	mount --bind "$d/run-log" /run/log
	[[ -d /var/log/journal ]] && mount --bind "$d/var-log-journal" /var/log/journal
	mount --bind "$d/journald.conf" /etc/systemd/journald.conf
	SYSTEMD_LOG_TARGET=console "$journald" >"$d/journald.log" 2>&1 &
	jd_pid=$!
	trap 'kill "$jd_pid" 2>/dev/null && wait "$jd_pid" 2>/dev/null' EXIT
	jdir=/run/log/journal/$(cat /etc/machine-id 2>/dev/null || echo none)
	for _ in $(seq 200); do
		[[ -S /run/systemd/journal/socket && -d $jdir ]] && break
		kill -0 "$jd_pid" 2>/dev/null || break
		sleep 0.05
	done
	if ! [[ -S /run/systemd/journal/socket && -d $jdir ]]; then
		why=$(grep -v '^$' "$d/journald.log" | tail -1 || true)
		echo "journald: not measured: $journald did not start${why:+ ($why)}"
		exit 0
	fi
	touch "$d/started"
	# The entries senders made since the last call, added to $got.
	jnew() {
		local k
		k=$(journalctl --directory="$jdir" --cursor-file="$d/jcursor" _TRANSPORT=journal -o cat | wc -l)
		got=$((got + k))
	}
	jmark() { got=0; jnew; }
	mark=jmark arrived=jnew exact=1
	# journald's CPU time (user + system, clock ticks) so far.
	jd_cpu() { awk '{ print $14 + $15 }' "/proc/$jd_pid/stat"; }
	hz=$(getconf CLK_TCK)
	pk_forward() { "$fwd" -o -c "$tmp/cursor" journal "$tmp/bench.log"; }
	printk_journal() { PRINTK_OPTS="console=journal,lossless" "$jsend" printk "$tmp/lines.txt"; }
	sd_journal() { "$jsend" sd "$tmp/lines.txt"; }
	names=("pk-forward journal" "printk console=journal" "sd_journal_send(3)")
	legs=(pk_forward printk_journal sd_journal)
	wants=("$(fwd_messages)" "$n" "$n")
	if ! "$jsend" sd /dev/null 2>/dev/null; then
		echo "sd_journal_send: $jsend was built without libsystemd, left out"
		unset 'names[2]' 'legs[2]' 'wants[2]'
	fi
	echo "journald: systemd $(journalctl --version | head -1 | awk '{print $2}'), Storage=volatile, private namespaces"
	# The legs' runs interleave, each round starting with the next leg, so
	# that a change in the machine's load falls on all of them.
	jrates=() jcpu=() scpu=()
	idx=("${!legs[@]}")
	for r in $(seq 0 $((runs - 1))); do
		for j in "${!idx[@]}"; do
			i=${idx[(j + r) % ${#idx[@]}]}
			rm -f "$tmp/cursor"
			c0=$(jd_cpu)
			t=$(want=${wants[i]} timed "${legs[i]}")
			jrates[i]+=" $(echo "$n / $t" | bc)"
			jcpu[i]=$((${jcpu[i]:-0} + $(jd_cpu) - c0))
			scpu[i]=$(echo "${scpu[i]:-0} + $(cat "$tmp/cpu.txt")" | bc)
		done
	done
	note='' snote=''
	for i in "${!legs[@]}"; do
		# shellcheck disable=SC2086 # the rates are words
		summary "${names[i]}" ${jrates[i]}
		note+="${note:+, }${names[i]} $((jcpu[i] * 1000000 / hz / (runs * wants[i]))) us"
		snote+="${snote:+, }${names[i]} $(echo "${scpu[i]} * 1000000 / ($runs * $n)" | bc) us"
	done
	echo "journald's CPU per entry: $note"
	echo "the sender's CPU per record: $snote"
	exit 0
fi

for b in "$fwd" "$udmesg" "$gen" "$jsend"; do
	[[ -x $b ]] || { echo "bench/forward.sh: $b is not built (cmake --build $build --target pk-forward udmesg udmesg-testgen bench_journal_send)" >&2; exit 1; }
done
rsyslogd=$(command -v rsyslogd || echo /usr/sbin/rsyslogd)
[[ -x $rsyslogd ]] || { echo "bench/forward.sh: rsyslogd not found (Debian: rsyslog, rsyslog-relp)" >&2; exit 1; }
logger=$(command -v logger || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/forward-bench.XXXXXX")
rs_pid='' ng_pid=''
cleanup() {
	[[ -n $ng_pid ]] && kill "$ng_pid" 2>/dev/null && wait "$ng_pid" 2>/dev/null
	[[ -n $rs_pid ]] && kill "$rs_pid" 2>/dev/null && wait "$rs_pid" 2>/dev/null
	[[ -n ${jr_pid:-} ]] && kill "$jr_pid" 2>/dev/null && wait "$jr_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tcp_port=$(port)
relp_port=$(port)
tls_port=$(port)
relptls_port=$(port)
mkdir "$tmp/spool" "$tmp/certs"
bash "$top/tests/daemon/tls_certs.sh" "$tmp/certs" || { echo "bench/forward.sh: the TLS certificates could not be made (Debian: openssl)" >&2; exit 1; }
c=$tmp/certs
cat >"$tmp/rsyslog.conf" <<EOF2
global(workDirectory="$tmp/spool" net.enableDNS="off" processInternalMessages="on"
       maxMessageSize="64k" DefaultNetstreamDriverCAFile="$c/ca.pem"
       DefaultNetstreamDriverCertFile="$c/server.pem" DefaultNetstreamDriverKeyFile="$c/server.key")
module(load="imtcp")
module(load="imrelp" tls.tlslib="openssl")
input(type="imtcp" address="127.0.0.1" port="$tcp_port" supportOctetCountedFraming="on")
input(type="imrelp" address="127.0.0.1" port="$relp_port")
input(type="imtcp" address="127.0.0.1" port="$tls_port" streamDriver.name="ossl"
      streamDriver.mode="1" streamDriver.authMode="anon")
input(type="imrelp" address="127.0.0.1" port="$relptls_port" tls="on" tls.cacert="$c/ca.pem"
      tls.mycert="$c/server.pem" tls.myprivkey="$c/server.key")
template(name="m" type="string" string="%msg%\n")
*.* action(type="omfile" file="$tmp/out.txt" template="m")
EOF2
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
before=0
rmark() { before=$(lines); }
rnew() { got=$(($(lines) - before)); }
mark=rmark arrived=rnew exact=

echo "records: $n ($mib MiB log), runs: $runs, rsyslogd $("$rsyslogd" -v | head -1 | awk '{print $2}'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
want=$(fwd_messages) report "pk-forward tcp" "$fwd" -o -c "$tmp/cursor" "tcp:127.0.0.1:$tcp_port" "$log"
want=$(fwd_messages) report "pk-forward relp" "$fwd" -o -c "$tmp/cursor" "relp:127.0.0.1:$relp_port" "$log"
tls_opts=",ca=$c/ca.pem"
relptls_opts=",tls,ca=$c/ca.pem,cert=$c/client.pem,key=$c/client.key,peer=localhost"
want=$(fwd_messages) report "pk-forward tls" "$fwd" -o -c "$tmp/cursor" "tls:127.0.0.1:$tls_port$tls_opts" "$log"
if [[ -n $logger ]]; then
	report "logger --tcp --octet-count" "$logger" --tcp --octet-count --rfc5424 \
		-n 127.0.0.1 -P "$tcp_port" -t bench -f "$tmp/lines.txt"
else
	echo "logger: not found (Debian: bsdutils), left out"
fi
printk_syslog() { PRINTK_OPTS="console=syslog:$1,lossless" "$jsend" printk "$tmp/lines.txt"; }
report "printk console=syslog:tcp" printk_syslog "tcp:127.0.0.1:$tcp_port"
tcp_rate=$median_rate tcp_cpu=$cpu_us
report "printk console=syslog:relp" printk_syslog "relp:127.0.0.1:$relp_port"
relp_rate=$median_rate relp_cpu=$cpu_us
report "printk console=syslog:tls" printk_syslog "tls:127.0.0.1:$tls_port$tls_opts"
tls_rate=$median_rate tls_cpu=$cpu_us
report "printk syslog:relp,tls" printk_syslog "relp:127.0.0.1:$relptls_port$relptls_opts"
relptls_rate=$median_rate relptls_cpu=$cpu_us
echo "the sender's CPU per record: $cpu_note"
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
echo "printk's writer, RELP / TCP: median rate $(ratio "$relp_rate" "$tcp_rate"), CPU per record $(ratio "$relp_cpu" "$tcp_cpu")"
echo "printk's writer, TLS / TCP: median rate $(ratio "$tls_rate" "$tcp_rate"), CPU per record $(ratio "$tls_cpu" "$tcp_cpu")"
echo "printk's writer, RELP+TLS / RELP: median rate $(ratio "$relptls_rate" "$relp_rate"), CPU per record $(ratio "$relptls_cpu" "$relp_cpu")"

# syslog-ng, from the private root scripts/setup.sh unpacked.
ng_root=${SYSLOG_NG_ROOT:-/var/cache/libprintk-test/syslog-ng-root}
ng_mods=("$ng_root"/usr/lib/syslog-ng/*/libafsocket.so)
ng_mod=$(dirname "${ng_mods[0]}")
if [[ ! -x $ng_root/usr/sbin/syslog-ng || ! -f $ng_mod/libsyslogformat.so ]]; then
	echo "syslog-ng: not measured: no syslog-ng in $ng_root (scripts/setup.sh unpacks it)"
else
	ng_port=$(port)
	cat >"$tmp/syslog-ng.conf" <<EOF2
@version: $(basename "$ng_mod")
options { use_dns(no); dns_cache(no); keep_hostname(yes); stats_freq(0); log_msg_size(65536); };
source s { syslog(ip("127.0.0.1") port($ng_port) transport("tcp") max_connections(10)); };
destination d { file("$tmp/ng.txt" template("\$MSG\n") template_escape(no)); };
log { source(s); destination(d); };
EOF2
	LD_LIBRARY_PATH=$ng_root/usr/lib/syslog-ng "$ng_root/usr/sbin/syslog-ng" -F --no-caps --stderr \
		--module-path="$ng_mod" --cfgfile="$tmp/syslog-ng.conf" --persist-file="$tmp/ng.persist" \
		--pidfile="$tmp/ng.pid" --control="$tmp/ng.ctl" >"$tmp/syslog-ng.log" 2>&1 &
	ng_pid=$!
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$ng_port") 2>/dev/null && break
		kill -0 "$ng_pid" 2>/dev/null || break
		sleep 0.05
	done
	if (exec 3<>"/dev/tcp/127.0.0.1/$ng_port") 2>/dev/null; then
		touch "$tmp/ng.txt"
		nglines() { wc -l <"$tmp/ng.txt"; }
		ngmark() { before=$(nglines); }
		ngnew() { got=$(($(nglines) - before)); }
		mark=ngmark arrived=ngnew cpu_note=''
		echo "syslog-ng $(LD_LIBRARY_PATH=$ng_root/usr/lib/syslog-ng "$ng_root/usr/sbin/syslog-ng" --version 2>/dev/null | awk 'NR == 1 { gsub(/[()]/, "", $3); print $3 }' || true) (private root), syslog() source, one file destination"
		report "printk console=syslog:tcp" printk_syslog "tcp:127.0.0.1:$ng_port"
		echo "the sender's CPU per record: $cpu_note"
		mark=rmark arrived=rnew
	else
		echo "syslog-ng: not measured: it did not start ($(tail -1 "$tmp/syslog-ng.log"))"
	fi
	if kill "$ng_pid" 2>/dev/null; then
		wait "$ng_pid" 2>/dev/null || true
	fi
	ng_pid=
fi

# systemd-journal-remote over HTTP: pk-forward's journal-remote target,
# against systemd-journal-upload(8) sending the same entries (read from the
# journal pk-forward's runs made) to a second journal-remote. Both senders
# exit once every batch was answered, and journal-remote answers after it
# wrote the entries into its file: a run ends when the sender exits, and
# the journals are counted after the runs (exactly RUNS times the records).
jremote=${JOURNAL_REMOTE:-/lib/systemd/systemd-journal-remote}
jupload=${JOURNAL_UPLOAD:-/lib/systemd/systemd-journal-upload}
jr_pid=''
# start_jr DIR [https]: a journal-remote writing DIR/remote.journal on a
# free port ($jr_port, $jr_pid), over HTTPS with the certificates made
# above when asked; 1 if it does not answer within 10 s.
start_jr() {
	local -a listen
	mkdir -p "$1"
	jr_port=$(port)
	listen=(--listen-http="127.0.0.1:$jr_port")
	[[ ${2:-} == https ]] &&
		listen=(--listen-https="127.0.0.1:$jr_port" --key="$tmp/certs/server.key" --cert="$tmp/certs/server.pem")
	"$jremote" "${listen[@]}" --output="$1/remote.journal" --split-mode=none \
		>"$1/jr.log" 2>&1 &
	jr_pid=$!
	for _ in $(seq 200); do
		python3 -c 'import http.client, ssl, sys
if sys.argv[2] == "https":
    c = http.client.HTTPSConnection("127.0.0.1", int(sys.argv[1]), timeout=5,
                                    context=ssl.create_default_context(cafile=sys.argv[3]))
else:
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.request("GET", "/"); c.getresponse()' \
			"$jr_port" "${2:-http}" "$tmp/certs/ca.pem" 2>/dev/null && return 0
		kill -0 "$jr_pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
stop_jr() {
	kill "$jr_pid" 2>/dev/null && wait "$jr_pid" 2>/dev/null
	jr_pid=''
}
jr_cpu() { awk '{ print $14 + $15 }' "/proc/$jr_pid/stat"; }
# Entries in DIR's journal files (journal-remote rotates its output file
# when it is full: remote@....journal).
jr_count() {
	local f c=0
	for f in "$1"/*.journal; do
		c=$((c + $(journalctl --file="$f" -o export | grep -c '^PRINTK_SEQ=')))
	done
	echo "$c"
}
if [[ ! -x $jremote ]] || ! command -v journalctl >/dev/null; then
	echo "journal-remote: not measured: $jremote or journalctl is not installed (Debian: systemd-journal-remote)"
elif ! start_jr "$tmp/jr"; then
	echo "journal-remote: not measured: it did not start ($(tail -1 "$tmp/jr/jr.log"))"
	stop_jr
else
	hz=$(getconf CLK_TCK)
	jrmark() { :; }
	jrdone() { got=${want:-$n}; }
	mark=jrmark arrived=jrdone cpu_note=''
	echo "systemd-journal-remote $("$jremote" --version | awk 'NR == 1 { print $2 }') over HTTP on 127.0.0.1, --split-mode=none, one journal file"
	fwd_n=$(fwd_messages)
	c0=$(jr_cpu)
	want=$fwd_n report "pk-forward journal-remote" "$fwd" -o -c "$tmp/cursor" "journal-remote:http://127.0.0.1:$jr_port" "$log"
	fwd_rate=$median_rate fwd_cpu=$cpu_us
	jr_note="pk-forward $(((($(jr_cpu) - c0) * 1000000 / hz) / (runs * fwd_n))) us"
	stop_jr
	got_n=$(jr_count "$tmp/jr")
	if ((got_n != runs * fwd_n)); then
		echo "bench/forward.sh: journal-remote has $got_n entries, $((runs * fwd_n)) expected" >&2
		exit 1
	fi
	# The same over HTTPS (pk-forward's TLS session, the server verified
	# against the test CA by its address).
	if ! start_jr "$tmp/jrs" https; then
		echo "journal-remote over HTTPS: not measured: it did not start ($(tail -1 "$tmp/jrs/jr.log"))"
		stop_jr
	else
		c0=$(jr_cpu)
		want=$fwd_n report "pk-forward journal-remote https" "$fwd" -o -c "$tmp/cursor" \
			"journal-remote:https://127.0.0.1:$jr_port,ca=$tmp/certs/ca.pem" "$log"
		https_rate=$median_rate https_cpu=$cpu_us
		jr_note+=", pk-forward https $(((($(jr_cpu) - c0) * 1000000 / hz) / (runs * fwd_n))) us"
		stop_jr
		got_n=$(jr_count "$tmp/jrs")
		if ((got_n != runs * fwd_n)); then
			echo "bench/forward.sh: journal-remote over HTTPS has $got_n entries, $((runs * fwd_n)) expected" >&2
			exit 1
		fi
	fi
	if [[ ! -x $jupload ]]; then
		echo "systemd-journal-upload: not found, no baseline"
	elif ! start_jr "$tmp/jr2"; then
		echo "systemd-journal-upload: no baseline: the second journal-remote did not start"
		stop_jr
	else
		# journal-upload sends the whole journal of the runs above:
		# rates are per entry it sent.
		n_saved=$n n=$got_n
		c0=$(jr_cpu)
		report "systemd-journal-upload" "$jupload" -u "http://127.0.0.1:$jr_port" --file="$tmp/jr/*.journal" \
			--follow=no --save-state="$tmp/cursor"
		up_rate=$median_rate up_cpu=$cpu_us
		jr_note+=", systemd-journal-upload $(((($(jr_cpu) - c0) * 1000000 / hz) / (runs * n))) us"
		stop_jr
		up_n=$(jr_count "$tmp/jr2")
		if ((up_n != runs * n)); then
			echo "bench/forward.sh: the second journal-remote has $up_n entries, $((runs * n)) expected" >&2
			exit 1
		fi
		n=$n_saved
	fi
	echo "the sender's CPU per record: $cpu_note"
	echo "journal-remote's CPU per entry: $jr_note"
	if [[ -n ${https_rate:-} ]]; then
		echo "pk-forward journal-remote, HTTPS / HTTP: median rate $(printf '%.2f' "$(echo "$https_rate / $fwd_rate" | bc -l)"), sender's CPU per record $(printf '%.2f' "$(echo "$https_cpu / $fwd_cpu" | bc -l)")"
	fi
	if [[ -n ${up_rate:-} ]]; then
		echo "pk-forward / systemd-journal-upload: median rate $(printf '%.2f' "$(echo "$fwd_rate / $up_rate" | bc -l)"), sender's CPU per record $(printf '%.2f' "$(echo "$fwd_cpu / $up_cpu" | bc -l)")"
	fi
fi

if [[ ! -x $journald ]] || ! command -v journalctl >/dev/null; then
	echo "journald: not measured: systemd-journald or journalctl is not installed (Debian: systemd)"
elif ! FORWARD_BENCH_JOURNALD=$tmp RUNS=$runs \
	unshare --mount --pid --fork --mount-proc --propagation private \
	bash "$self" "$build" 2>"$tmp/unshare.err"; then
	if [[ -e $tmp/jd/started ]]; then
		cat "$tmp/unshare.err" >&2
		exit 1
	fi
	why=$(grep -v '^$' "$tmp/unshare.err" | tail -1 || true)
	echo "journald: not measured: ${why:-its private namespaces could not be made (unshare)}"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
