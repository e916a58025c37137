# SPDX-License-Identifier: MIT
# syslog_ng_common.sh - sourced by test_syslog_ng.sh and
# test_syslog_ng_tls.sh once they define fail: syslog-ng from the private
# root scripts/setup.sh unpacks (SYSLOG_NG_ROOT; never installed, it
# conflicts with rsyslog), its configuration's head and the file every
# source writes, its start until the test's ready() says so, the records
# both tests send and the lines syslog-ng must write for them. The tests
# set tmp and conf; start_ng sets ng_pid (the tests' cleanup stops it),
# host and now.
# shellcheck shell=bash disable=SC2154 # tmp and conf: the sourcing test's

root=${SYSLOG_NG_ROOT:-/var/cache/libprintk-test/syslog-ng-root}
[[ -x $root/usr/sbin/syslog-ng ]] || fail "no syslog-ng in $root (scripts/setup.sh unpacks it there)"
mods=("$root"/usr/lib/syslog-ng/*/libafsocket.so)
moddir=$(dirname "${mods[0]}")
[[ -f $moddir/libsyslogformat.so ]] || fail "no syslog-ng modules under $root/usr/lib/syslog-ng"

# One line a message: the sender's time, then every field, ended by <<END>>
# (a text may hold newlines).
# shellcheck disable=SC2016 # syslog-ng's macros, not the shell's
ng_tpl='@$S_UNIXTIME pri=$PRI fac=$FACILITY_NUM lvl=$LEVEL_NUM host=$HOST prog=$PROGRAM pid=$PID msgid=$MSGID sdata=$SDATA msg=$MSG<<END>>\n'

# The configuration's first lines: the version of the modules found, names
# kept as sent.
ng_conf_head() {
	echo "@version: $(basename "$moddir")"
	echo 'options { use_dns(no); dns_cache(no); keep_hostname(yes); chain_hostnames(no); stats_freq(0); create_dirs(no); };'
}

# ng_to_file NAME: source s_NAME's messages into $tmp/NAME.txt.
ng_to_file() {
	echo "destination d_$1 { file(\"$tmp/$1.txt\" template(\"$ng_tpl\") template_escape(no)); };"
	echo "log { source(s_$1); destination(d_$1); };"
}

# syslog-ng on $conf in the foreground, its own files in $tmp, its output
# in $tmp/syslog-ng.log; until ready() (the test's) succeeds, a minute at
# most.
start_ng() {
	LD_LIBRARY_PATH=$root/usr/lib/syslog-ng${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"$root/usr/sbin/syslog-ng" -F --no-caps --stderr \
		--module-path="$moddir" --cfgfile="$conf" --persist-file="$tmp/persist" \
		--pidfile="$tmp/pid" --control="$tmp/ctl" >"$tmp/syslog-ng.log" 2>&1 &
	ng_pid=$!
	for ((t = 0; t < 1200; t++)); do
		ready && break
		kill -0 "$ng_pid" 2>/dev/null || fail "syslog-ng exited: $(tail -3 "$tmp/syslog-ng.log")"
		sleep 0.05
	done
	ready || fail "syslog-ng did not listen within a minute: $(tail -3 "$tmp/syslog-ng.log")"
	host=$(hostname)
	now=$(date +%s)
}

# The records every case sends, as pk-emit's arguments: the first is below
# the console level.
# shellcheck disable=SC2034 # used by the tests that source this file
msgs=(
	'1:7::debug, below the console level: not sent'
	$'3:4:SUBSYSTEM=net;DEVICE=+net-eth0:daemon warning\nsecond line\tand a tab'
	'0:2::facility kern goes as user'
	'23:5:my key=a"b]c\d:local7 notice, escapes caf'$'\xc3\xa9'
	'1:6::plain info'
)

# ng_check_times NAME: every sender's time in NAME's file is within ten
# minutes of the test's.
ng_check_times() {
	local stamp
	while read -r stamp; do
		((stamp > now - 600 && stamp < $(date +%s) + 600)) || fail "$1: sender's time $stamp, now $(date +%s)"
	done < <(grep -o '^@[0-9]* pri=' "$tmp/$1.txt" | tr -dc '0-9\n')
}

# ng_want FORMAT PID FIRST-SEQ NL: the lines (without the sender's time)
# syslog-ng writes for msgs sent by PID in FORMAT (5424 or 3164): from the
# debug record (FIRST-SEQ 0: pk-forward sends every level) or the next
# (1); NL is what a newline inside a text arrives as.
ng_want() {
	local format=$1 pid=$2 seq=$3 nl=$4
	sd() { [[ $format == 3164 ]] || printf '[printk@32473 seq="%s" tid="%s"%s]' "$1" "$pid" "$2"; }
	if ((seq == 0)); then
		printf 'pri=15 fac=1 lvl=7 host=%s prog=pk-emit pid=%s msgid= sdata=%s msg=%s<<END>>\n' \
			"$host" "$pid" "$(sd 0 '')" "debug, below the console level: not sent"
	fi
	printf 'pri=28 fac=3 lvl=4 host=%s prog=pk-emit pid=%s msgid= sdata=%s msg=%s<<END>>\n' \
		"$host" "$pid" "$(sd 1 ' SUBSYSTEM="net" DEVICE="+net-eth0"')" "daemon warning${nl}second line	and a tab"
	printf 'pri=10 fac=1 lvl=2 host=%s prog=pk-emit pid=%s msgid= sdata=%s msg=%s<<END>>\n' \
		"$host" "$pid" "$(sd 2 '')" "facility kern goes as user"
	printf 'pri=189 fac=23 lvl=5 host=%s prog=pk-emit pid=%s msgid= sdata=%s msg=%s<<END>>\n' \
		"$host" "$pid" "$(sd 3 ' my_key="a\"b\]c\\d"')" "local7 notice, escapes caf"$'\xc3\xa9'
	printf 'pri=14 fac=1 lvl=6 host=%s prog=pk-emit pid=%s msgid= sdata=%s msg=%s<<END>>\n' \
		"$host" "$pid" "$(sd 4 '')" "plain info"
}

# ng_compare NAME: NAME's file, the senders' times taken out, is
# $tmp/NAME.want to the byte; else both are shown.
ng_compare() {
	local name=$1
	sed 's/^@[0-9]* pri=/pri=/' "$tmp/$name.txt" >"$tmp/$name.got"
	if ! cmp -s "$tmp/$name.want" "$tmp/$name.got"; then
		diff <(cat -A "$tmp/$name.want") <(cat -A "$tmp/$name.got") || true
		fail "$name: the messages syslog-ng parsed differ from what was sent (above: - expected, + got)"
	fi
}
