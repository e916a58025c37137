#!/bin/bash
# SPDX-License-Identifier: MIT
# The console time styles (printk.time=STYLE, console=...,time=STYLE) under a
# wall clock faked with libfaketime (Debian: faketime), and udmesg
# --time-format iso on the log file they leave: exact bytes in three zones,
# a daylight-saving change inside a run, a clock step while the log lives,
# and the warnings of bad values. The host's clock is never touched.
# shellcheck source=tests/cli/common.sh
. "$(dirname "$0")/common.sh"

# shellcheck source=tests/cli/faketime.sh
. "$(dirname "$0")/faketime.sh"

# frozen TZ STAMP OPTS WORD...: time-writer's stderr and stdout with both
# clocks frozen at STAMP (local time of TZ): the records' timestamps are
# CLOCK_MONOTONIC, so every byte is known.
frozen() {
	local tz=$1 stamp=$2 opts=$3
	shift 3
	$BOUND env TZ=$tz LD_PRELOAD="$PRELOAD" FAKETIME="$stamp" PRINTK_CLOCK=monotonic PRINTK_OPTS="$opts" \
		"$WRITER" "$@" 2>&1
}

STAMP="2026-12-05 22:49:32.123456"
check iso-utc-zone "2026-12-05T22:49:32.123456+00:00 hello
2026-12-05T22:49:32.123456+00:00 two words" "$(frozen UTC "$STAMP" printk.time=iso hello 'two words')"
check iso-kolkata "2026-12-05T22:49:32.123456+05:30 hello" "$(frozen Asia/Kolkata "$STAMP" printk.time=iso hello)"
check iso-st-johns "2026-12-05T22:49:32.123456-03:30 hello" "$(frozen America/St_Johns "$STAMP" printk.time=iso hello)"
check iso-utc-kolkata "2026-12-05T17:19:32.123456Z hello" "$(frozen Asia/Kolkata "$STAMP" printk.time=iso-utc hello)"
check iso-utc-st-johns "2026-12-06T02:19:32.123456Z hello" \
	"$(frozen America/St_Johns "$STAMP" printk.time=iso-utc hello)"
check kernel "[1796510972.123456] hello" "$(frozen UTC "$STAMP" printk.time=kernel hello)"
check none "hello" "$(frozen UTC "$STAMP" printk.time=none hello)"
check time-1 "[1796510972.123456] hello" "$(frozen UTC "$STAMP" printk.time=1 hello)"
check time-0 "hello" "$(frozen UTC "$STAMP" printk.time=0 hello)"
check iso-caller "2026-12-05T22:49:32.123456Z [T$$] hello" \
	"$(frozen UTC "$STAMP" 'printk.time=iso-utc printk.caller=1' hello | sed "s/T[0-9]*\]/T$$]/; s/\[ *T/[T/")"
# Before 1970 and in a leap year's February: the date arithmetic.
check leap-day "2024-02-29T23:59:59.999999Z hello" "$(frozen UTC "2024-02-29 23:59:59.999999" printk.time=iso-utc hello)"
check year-2000 "2000-03-01T00:00:00.000000+00:00 hello" "$(frozen UTC "2000-03-01 00:00:00" printk.time=iso hello)"

# A console's own style overrides printk.time; the others follow it.
frozen UTC "$STAMP" "printk.time=iso console=stderr,time=kernel console=fd:3,name=f3 console=fd:4,time=iso-utc" \
	hello 3>"$TMP/fd3" 4>"$TMP/fd4" >"$TMP/fd2"
check per-console-stderr "[1796510972.123456] hello" "$(cat "$TMP/fd2")"
check per-console-follows "2026-12-05T22:49:32.123456+00:00 hello" "$(cat "$TMP/fd3")"
check per-console-own "2026-12-05T22:49:32.123456Z hello" "$(cat "$TMP/fd4")"

# Bad values: one warning line naming the option (a record, so it has the
# time prefix in force), the rest applied.
check bad-console-time "[1796510972.123456] printk: PRINTK_OPTS: bad console option 'time=isox' (kernel, iso, iso-utc or none), console ignored
[1796510972.123456] hello" "$(frozen UTC "$STAMP" 'console=fd:2,time=isox console=stderr' hello)"
check bad-printk-time "[1796510972.123456] printk: PRINTK_OPTS: bad value in 'printk.time=2', ignored
[1796510972.123456] hello" "$(frozen UTC "$STAMP" 'printk.time=2' hello)"
check bad-printk-time-word "printk: PRINTK_OPTS: bad value in 'printk.time=ISO', ignored
hello" "$(frozen UTC "$STAMP" 'printk.time=0 printk.time=ISO' hello)"

# Daylight saving time starts in New York at 2026-03-08 02:00 local: a run
# that registered its console at 01:59:59 EST prints the next line in EDT
# (the zone's changes are read ahead, not at print time).
set_stamp "2026-03-08 01:59:59"
rm -f "$TMP/go"
$BOUND env TZ=America/New_York LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE=$TMP/stamp FAKETIME_NO_CACHE=1 \
	PRINTK_CLOCK=monotonic PRINTK_OPTS=printk.time=iso "$WRITER" before "--wait=$TMP/go" after >"$TMP/dst" 2>&1 &
writer=$!
for _ in $(seq 600); do
	[ -s "$TMP/dst" ] && break
	sleep 0.1
done
set_stamp "2026-03-08 03:00:01"
touch "$TMP/go"
wait $writer || echo "writer exited with status $?"
check dst-change "2026-03-08T01:59:59.000000-05:00 before
2026-03-08T03:00:01.000000-04:00 after" "$(cat "$TMP/dst")"

# A threaded console that prints late shows when its record was stored,
# not when it printed it: its pipe is full (nobody reads it) when "marker"
# is stored at 22:49:32; the clock then moves to 23:00, and only then is
# the pipe read and the line printed.
set_stamp "2026-12-05 22:49:32"
rm -f "$TMP/go" "$TMP/go2" "$TMP/late" "$TMP/late-err"
filler=()
for i in $(seq 1000); do
	filler+=("$(printf 'filler %04d %090d' "$i" 0)") # 100 KB: more than a pipe holds
done
$BOUND env TZ=UTC LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE=$TMP/stamp FAKETIME_NO_CACHE=1 PRINTK_CLOCK=monotonic \
	PRINTK_OPTS="console=stderr console=fd:3,threaded,time=iso-utc console_drain_ms=120000" \
	"$WRITER" "${filler[@]}" marker "--wait=$TMP/go" 2>"$TMP/late-err" \
	3> >(while [ ! -e "$TMP/go2" ]; do sleep 0.05; done; cat >"$TMP/late") &
writer=$!
for _ in $(seq 600); do
	grep -q '^\[1796510972.000000\] marker$' "$TMP/late-err" 2>/dev/null && break
	sleep 0.1
done
set_stamp "2026-12-05 23:00:00"
touch "$TMP/go2" "$TMP/go"
wait $writer || echo "writer exited with status $?"
for _ in $(seq 1200); do
	[ "$(wc -l <"$TMP/late" 2>/dev/null)" = 1001 ] && break
	sleep 0.1
done
check late-line "2026-12-05T22:49:32.000000Z marker" "$(tail -n 1 "$TMP/late")"

# A clock step while the log lives: CLOCK_REALTIME jumps 11 hours ahead
# between two lines, CLOCK_MONOTONIC goes on. The console prints each line
# with the wall clock of its moment; the log file records the new relation
# (the console that saw the step wrote it), and udmesg --time-format iso
# shows both records with it, the old one too (docs/clock.md). Minutes
# only: the real monotonic time between the lines is not known exactly.
set_stamp "2026-12-05 22:49:32.500000"
rm -f "$TMP/go" "$TMP/log"
$BOUND env TZ=UTC LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE=$TMP/stamp FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
	PRINTK_CLOCK=monotonic PRINTK_OPTS="printk.time=iso-utc log_buf_file=$TMP/log" \
	"$WRITER" before "--wait=$TMP/go" after >"$TMP/step" 2>&1 &
writer=$!
for _ in $(seq 600); do
	[ -s "$TMP/step" ] && break
	sleep 0.1
done
set_stamp "2026-12-06 10:00:00.500000"
touch "$TMP/go"
wait $writer || echo "writer exited with status $?"
check step-console "2026-12-05T22:49 before
2026-12-06T10:00 after" "$(cut -c1-16,28- "$TMP/step")"
check step-udmesg-utc "2026-12-06T10:00+00:00 before
2026-12-06T10:00+00:00 after" "$(TZ=UTC "$UDMESG" -B "$TMP/log" --time-format iso | cut -c1-16,27-)"
check step-udmesg-comma "2" "$(TZ=UTC "$UDMESG" -B "$TMP/log" --time-format iso | grep -c '^2026-12-06T10:00:0[0-9],[0-9]\{6\}+00:00 ')"
check step-udmesg-kolkata "2026-12-06T15:30+05:30 before
2026-12-06T15:30+05:30 after" "$(TZ=Asia/Kolkata "$UDMESG" -B "$TMP/log" --time-format iso | cut -c1-16,27-)"

finish
