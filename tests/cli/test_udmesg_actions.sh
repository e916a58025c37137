#!/bin/bash
# SPDX-License-Identifier: MIT
# The syslog actions on the log's shared state: -C, -c, -D, -E, -n, and -S
# (reading through SYSLOG_ACTION_READ_ALL, which prints what dmesg -S prints:
# every line of a record with its own prefix). udmesg-testgen state shows
# the shared state; the wall-clock offset must survive every action.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

LOG=$TMP/actions.log
"$TESTGEN" golden "$LOG"

if "$UDMESG" -B "$LOG" -S 2>&1 >/dev/null | grep -q 'not in this build'; then
	echo "SKIP: udmesg was built without the syslog actions (src/readers/syslog.c)"
	exit 0
fi

state() {
	"$TESTGEN" state "$LOG"
}

# state_is NAME EXPECTED: the shared state after an action.
state_is() {
	checks=$((checks + 1))
	local got
	got=$(state)
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		fail "$1: state '$got', expected '$2'"
	fi
}

OFF=realtime_offset_ns=1700000000250000000
state_is initial "console_loglevel=7 saved_console_loglevel=-1 clear_seq=0 $OFF"

# -S: read through the syslog actions.
golden actions-syslog "$UDMESG" -B "$LOG" -S
golden actions-syslog-decode "$UDMESG" -B "$LOG" -S -x -T
golden actions-syslog-raw "$UDMESG" -B "$LOG" -S -r
golden actions-syslog-bufsize "$UDMESG" -B "$LOG" -S -s 4096
golden actions-syslog-json "$UDMESG" -B "$LOG" -S -J
# dmesg -S on the same text: what READ_ALL returned, read as -F.
if have_dmesg_file; then
	"$UDMESG" -B "$LOG" -S -r >"$TMP/syslog.txt"
	# (no -x: dmesg 2.38 has no names for local0..local7)
	for opts in "" "-t" "-d" "-L=always" "-l err,warn"; do
		# shellcheck disable=SC2086
		same "dmesg:syslog${opts:+ $opts}" dmesg -F "$TMP/syslog.txt" $opts -- "$UDMESG" -B "$LOG" -S $opts
	done
fi

# -D, -E, -n: console_loglevel, saved_console_loglevel.
"$UDMESG" -B "$LOG" -D
state_is console-off "console_loglevel=1 saved_console_loglevel=7 clear_seq=0 $OFF"
"$UDMESG" -B "$LOG" --console-off
state_is console-off-twice "console_loglevel=1 saved_console_loglevel=7 clear_seq=0 $OFF"
"$UDMESG" -B "$LOG" -E
state_is console-on "console_loglevel=7 saved_console_loglevel=-1 clear_seq=0 $OFF"
"$UDMESG" -B "$LOG" -n 3
state_is console-level-3 "console_loglevel=3 saved_console_loglevel=-1 clear_seq=0 $OFF"
"$UDMESG" -B "$LOG" --console-level debug
state_is console-level-debug "console_loglevel=8 saved_console_loglevel=-1 clear_seq=0 $OFF"
"$UDMESG" -B "$LOG" -n ERR
state_is console-level-err "console_loglevel=4 saved_console_loglevel=-1 clear_seq=0 $OFF"

# -c prints everything, then clears; -C clears; reading starts after the clear.
golden actions-read-clear "$UDMESG" -B "$LOG" -c
state_is read-clear "console_loglevel=4 saved_console_loglevel=-1 clear_seq=22 $OFF"
golden actions-after-clear "$UDMESG" -B "$LOG"
golden actions-after-clear-syslog "$UDMESG" -B "$LOG" -S
"$UDMESG" -B "$LOG" -C
state_is clear "console_loglevel=4 saved_console_loglevel=-1 clear_seq=22 $OFF"
# The default log of PRINTK_OPTS.
env PRINTK_OPTS="log_buf_file=$LOG" "$UDMESG" -n 5
state_is default-log "console_loglevel=5 saved_console_loglevel=-1 clear_seq=22 $OFF"

# Someone else's log cannot be changed.
if [ "$(id -u)" -ne 0 ]; then
	:
elif command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$TMP"
	chmod 644 "$LOG"
	expect_error foreign-log 1 "^udmesg: cannot open $LOG for writing: Permission denied\$" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$UDMESG" -B "$LOG" -C
	chmod 600 "$LOG"
fi

finish
