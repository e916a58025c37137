# SPDX-License-Identifier: MIT
# journal_remote_common.sh - sourced by test_journal_remote.sh and
# test_journal_remote_https.sh after they set tmp and cursor: reading back
# what systemd-journal-remote stored, pk-forward's cursor, waiting, and the
# six hostile records both send (checked by check_journal_fields.py).

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
