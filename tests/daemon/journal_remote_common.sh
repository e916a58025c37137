# SPDX-License-Identifier: MIT
# journal_remote_common.sh - sourced by test_journal_remote.sh and
# test_journal_remote_https.sh after they set tmp, port, jr and cursor:
# starting systemd-journal-remote (http, or https when JR_KEY, JR_CERT and
# JR_CA are set), reading back what it stored, pk-forward's cursor,
# waiting, and the six hostile records both send (checked by
# check_journal_fields.py).

# Ready when it answers (any status: a GET of / is refused); over https the
# probe trusts JR_CA.
jr_answers() {
	python3 - "$1" "${JR_CA:-}" <<'PY' 2>/dev/null
import http.client, ssl, sys
if sys.argv[2]:
    ctx = ssl.create_default_context(cafile=sys.argv[2])
    c = http.client.HTTPSConnection("localhost", int(sys.argv[1]), timeout=5, context=ctx)
else:
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
c.request("GET", "/")
c.getresponse()
PY
}

start_jr() {
	python3 "$(dirname "$0")/jr_launch.py" "$port" "$tmp/remote.journal" "$jr" \
		${JR_KEY:+"$JR_KEY" "$JR_CERT"} >>"$tmp/jr.log" 2>&1 &
	jr_pid=$!
	for ((t = 0; t < 1200; t++)); do
		jr_answers "$port" && return 0
		kill -0 "$jr_pid" 2>/dev/null || fail "journal-remote exited: $(tail -3 "$tmp/jr.log")"
		sleep 0.05
	done
	fail "journal-remote did not answer within a minute: $(tail -3 "$tmp/jr.log")"
}

# The entries of every journal file (a killed journal-remote's file is
# renamed *.journal~ at its next start), one JSON object per line; file by
# file, so that journalctl's merging of files cannot hide an entry.
entries() {
	local f
	for f in "$tmp"/*.journal*; do
		[[ -e $f ]] || continue
		journalctl --file="$f" -o json 2>/dev/null || true
	done
}

cursor_seq() {
	sed -n 's/^next-seq \([0-9]*\)$/\1/p' "$cursor" 2>/dev/null || true
}

cursor_is() { [[ $(cursor_seq) == "$1" ]]; }
cursor_past() { local c; c=$(cursor_seq); [[ -n $c ]] && ((c > $1)); }

wait_for() { # DESCRIPTION COMMAND...: until COMMAND succeeds, a minute at most
	local what=$1
	shift
	for ((t = 0; t < 1200; t++)); do
		"$@" && return 0
		sleep 0.05
	done
	fail "$what: not within a minute"
}

# The records pk-emit stores for the field checks: FACILITY:LEVEL:DICT:TEXT.
# shellcheck disable=SC2034 # used by the tests that source this file
msgs=(
	$'3:4:SUBSYSTEM=net;DEVICE=+net-eth0:daemon warning\nsecond line\tand a tab'
	'0:2::facility kern goes as user'
	'23:5:my key=a"b]c\d;_under=1;9lives=2;PRIORITY=x;K=1;k=2:local7 notice caf'$'\xc3\xa9'
	'1:7::debug goes too: pk-forward sends every level'
	'1:6::ctrl'$'\x01\x1b''[31m and a bad byte '$'\xff'' here'
	$'1:6::ends in two newlines\n\n'
)
