#!/bin/bash
# SPDX-License-Identifier: MIT
# File consoles rotating by local time (console=file:PATH,rotate=daily|
# hourly,keep=K) under a wall clock faked with libfaketime (Debian:
# faketime), as tests/cli/test_time_styles.sh fakes it: the exact names
# and bytes of every file across a day's end, an hour's end, days without
# lines, keep=K, the days daylight saving time begins and ends in
# America/New_York (and the hour it skips), a clock stepped back, a size
# as well, a file left from an earlier day, and a lossless console (its
# thread prints the lines). Every line once, in its period's file. The
# host's clock is never touched.
# shellcheck source=tests/cli/common.sh
. "$(dirname "$0")/common.sh"

# shellcheck source=tests/cli/faketime.sh
. "$(dirname "$0")/faketime.sh"
# With FAKETIME_NO_CACHE libfaketime re-reads its timestamp file on every
# clock read; TSan does not see the multi-threaded build's own locking as
# ordering all of it. Not ours, and not what is tested: such reports are
# suppressed (only those from calls libfaketime makes).
printf 'called_from_lib:libfaketimeMT.so.1\n' >"$TMP/tsan.supp"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }suppressions=$TMP/tsan.supp"

# steps NAME TZ OPTS STAMP LINE [STAMP LINE]...: one writer process prints
# each LINE with the faked wall clock (local time of TZ) at its STAMP; the
# clock is moved between two lines, once the writer has stored the one
# before. The file console is $DIR/app.log (OPTS names it). Both clocks
# move together (libfaketime's default), so a record's wall-clock time is
# its STAMP exactly. NO_FAKE_STAT: libfaketime would show the files'
# times as the faked clock's, and a file's time says which period it is of.
steps() {
	local name=$1 tz=$2 opts=$3
	shift 3
	local -a stamps=() args=()
	local n=0
	while [ $# -ge 2 ]; do
		stamps+=("$1")
		args+=("--mark=$TMP/mark$n" "--wait=$TMP/go$n" "$2")
		n=$((n + 1))
		shift 2
	done
	rm -f "$TMP"/mark* "$TMP"/go*
	set_stamp "${stamps[0]}"
	$BOUND env TZ="$tz" LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE="$TMP/stamp" FAKETIME_NO_CACHE=1 NO_FAKE_STAT=1 \
		FAKETIME_FMT="${STAMP_FMT:-%Y-%m-%d %H:%M:%S}" PRINTK_CLOCK=monotonic PRINTK_OPTS="console=none $opts console_drain_ms=60000" \
		"$WRITER" "${args[@]}" >"$TMP/$name.out" 2>&1 &
	local writer=$! i
	for ((i = 0; i < n; i++)); do
		for _ in $(seq 1200); do
			[ -e "$TMP/mark$i" ] && break
			kill -0 $writer 2>/dev/null || break
			sleep 0.05
		done
		set_stamp "${stamps[$i]}"
		touch "$TMP/go$i"
	done
	wait $writer || echo "$name: writer exited with status $?"
	[ -s "$TMP/$name.out" ] && {
		echo "$name: the writer said:"
		cat "$TMP/$name.out"
	}
}

# files: every file in $DIR, each as "NAME: its lines joined by |".
files() {
	local f
	for f in "$DIR"/*; do
		printf '%s: %s\n' "${f##*/}" "$(tr '\n' '|' <"$f")"
	done
}

fresh() {
	DIR=$TMP/d
	rm -rf "$DIR"
	mkdir "$DIR"
}

# A day's end, a day without lines (no file for it), and the wall-clock
# prefix of each line agreeing with the name of its file.
fresh
steps daily UTC "console=file:$DIR/app.log,rotate=daily,time=iso-utc" \
	"2026-12-05 23:59:58" a1 "2026-12-05 23:59:59" a2 "2026-12-06 00:00:00" b1 \
	"2026-12-06 12:00:00" b2 "2026-12-08 00:00:01" c1
check daily "app.log: 2026-12-08T00:00:01.000000Z c1|
app.log.2026-12-05: 2026-12-05T23:59:58.000000Z a1|2026-12-05T23:59:59.000000Z a2|
app.log.2026-12-06: 2026-12-06T00:00:00.000000Z b1|2026-12-06T12:00:00.000000Z b2|" "$(files)"

# The same with a lossless console: its thread prints the lines, each
# dated by when it was stored.
fresh
steps lossless UTC "console=file:$DIR/app.log,rotate=daily,lossless printk.time=0" \
	"2026-12-05 23:59:59" a1 "2026-12-06 00:00:00" b1 "2026-12-06 23:59:59" b2 "2026-12-07 00:00:00" c1
check lossless "app.log: c1|
app.log.2026-12-05: a1|
app.log.2026-12-06: b1|b2|" "$(files)"

# A threaded console still printing when the day ends: 3000 lines stored
# at 23:59:59 go to that day's file, however late its thread prints them
# (the clock moves as soon as they are stored).
fresh
many=()
for i in $(seq 1 3000); do
	many+=("$(printf 'late %04d' "$i")")
done
rm -f "$TMP"/mark* "$TMP"/go*
set_stamp "2026-12-05 23:59:59"
$BOUND env TZ=UTC LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE="$TMP/stamp" FAKETIME_NO_CACHE=1 NO_FAKE_STAT=1 \
	PRINTK_CLOCK=monotonic PRINTK_OPTS="console=none console=file:$DIR/app.log,rotate=daily,threaded printk.time=0 console_drain_ms=60000" \
	"$WRITER" "${many[@]}" "--mark=$TMP/mark0" "--wait=$TMP/go0" next >"$TMP/late.out" 2>&1 &
writer=$!
for _ in $(seq 1200); do
	[ -e "$TMP/mark0" ] && break
	sleep 0.05
done
set_stamp "2026-12-06 00:00:01"
touch "$TMP/go0"
wait $writer || echo "late: writer exited with status $?"
check late-lines "$(printf '%s\n' "${many[@]}")" "$(cat "$DIR/app.log.2026-12-05" 2>&1)"
check late-next "next" "$(cat "$DIR/app.log" 2>&1)"

# Two processes appending to one file rotate it once at midnight: each
# day's file has both processes' lines of that day, each once.
fresh
rm -f "$TMP"/mark* "$TMP"/go*
set_stamp "2026-12-05 23:59:59"
pids=()
for w in a b; do
	$BOUND env TZ=UTC LD_PRELOAD="$PRELOAD" FAKETIME_TIMESTAMP_FILE="$TMP/stamp" FAKETIME_NO_CACHE=1 NO_FAKE_STAT=1 \
		PRINTK_CLOCK=monotonic PRINTK_OPTS="console=none console=file:$DIR/app.log,rotate=daily printk.time=0" \
		"$WRITER" "$w-1" "$w-2" "--mark=$TMP/mark-$w" "--wait=$TMP/go" "$w-3" "$w-4" >"$TMP/shared-$w.out" 2>&1 &
	pids+=($!)
done
for w in a b; do
	for _ in $(seq 1200); do
		[ -e "$TMP/mark-$w" ] && break
		sleep 0.05
	done
done
set_stamp "2026-12-06 00:00:01"
touch "$TMP/go"
for p in "${pids[@]}"; do
	wait "$p" || echo "shared: a writer exited with status $?"
done
check shared "app.log: a-3|a-4|b-3|b-4|
app.log.2026-12-05: a-1|a-2|b-1|b-2|" "$(for f in "$DIR"/*; do printf '%s: %s\n' "${f##*/}" "$(sort "$f" | tr '\n' '|')"; done)"

# An hour's end, in a zone half an hour off UTC.
fresh
steps hourly Asia/Kolkata "console=file:$DIR/app.log,rotate=hourly printk.time=0" \
	"2026-12-05 22:59:59" x1 "2026-12-05 23:00:00" y1 "2026-12-05 23:59:59" y2 "2026-12-06 00:30:00" z1
check hourly "app.log: z1|
app.log.2026-12-05-22: x1|
app.log.2026-12-05-23: y1|y2|" "$(files)"

# keep=2: the two newest dated files stay; an older one left by an
# earlier run is removed too; files of other names are not touched.
fresh
echo old >"$DIR/app.log.2020-01-01"
echo notes >"$DIR/app.log.notes"
echo zipped >"$DIR/app.log.2026-12-01.gz"
steps keep UTC "console=file:$DIR/app.log,rotate=daily,keep=2 printk.time=0" \
	"2026-12-01 10:00:00" d1 "2026-12-02 10:00:00" d2 "2026-12-03 10:00:00" d3 \
	"2026-12-04 10:00:00" d4 "2026-12-05 10:00:00" d5
check keep "app.log: d5|
app.log.2026-12-01.gz: zipped|
app.log.2026-12-03: d3|
app.log.2026-12-04: d4|
app.log.notes: notes|" "$(files)"

# New York: the day daylight saving time begins has 23 hours, the day it
# ends 25; each ends at its local midnight (04:00 and 05:00 UTC).
fresh
steps dst-days America/New_York "console=file:$DIR/app.log,rotate=daily,time=iso" \
	"2026-03-07 23:59:59" a "2026-03-08 23:59:59" b "2026-03-09 00:00:00" c \
	"2026-11-01 00:00:00" d "2026-11-01 23:30:00" e "2026-11-02 00:00:00" f
check dst-days "app.log: 2026-11-02T00:00:00.000000-05:00 f|
app.log.2026-03-07: 2026-03-07T23:59:59.000000-05:00 a|
app.log.2026-03-08: 2026-03-08T23:59:59.000000-04:00 b|
app.log.2026-03-09: 2026-03-09T00:00:00.000000-04:00 c|
app.log.2026-11-01: 2026-11-01T00:00:00.000000-04:00 d|2026-11-01T23:30:00.000000-05:00 e|" "$(files)"

# Hourly across the skipped hour: 01:59:59 EST is followed by 03:00:00
# EDT, and there is no file of the hour 02.
fresh
steps dst-hour America/New_York "console=file:$DIR/app.log,rotate=hourly,time=iso" \
	"2026-03-08 01:30:00" a "2026-03-08 01:59:59" b "2026-03-08 03:00:00" c "2026-03-08 03:59:59" d \
	"2026-03-08 04:00:00" e
check dst-hour "app.log: 2026-03-08T04:00:00.000000-04:00 e|
app.log.2026-03-08-01: 2026-03-08T01:30:00.000000-05:00 a|2026-03-08T01:59:59.000000-05:00 b|
app.log.2026-03-08-03: 2026-03-08T03:00:00.000000-04:00 c|2026-03-08T03:59:59.000000-04:00 d|" "$(files)"

# Hourly across the hour repeated when daylight saving time ends: 01:30
# EDT and 01:30 EST are one period, which ends at 02:00 EST. The stamps
# are seconds since the epoch (FAKETIME_FMT=%s): local ones would be
# ambiguous.
fresh
STAMP_FMT=%s steps dst-repeat America/New_York "console=file:$DIR/app.log,rotate=hourly,time=iso" \
	1793507400 a 1793511000 b 1793514600 c 1793516399 d 1793516400 e
check dst-repeat "app.log: 2026-11-01T02:00:00.000000-05:00 e|
app.log.2026-11-01-00: 2026-11-01T00:30:00.000000-04:00 a|
app.log.2026-11-01-01: 2026-11-01T01:30:00.000000-04:00 b|2026-11-01T01:30:00.000000-05:00 c|2026-11-01T01:59:59.000000-05:00 d|" "$(files)"

# A clock stepped back across midnight does not rotate again: the lines
# before the new midnight go on to the current file, and the next
# rotation is at the end of the current period.
fresh
steps step-back UTC "console=file:$DIR/app.log,rotate=daily printk.time=0" \
	"2026-12-05 23:59:59" a "2026-12-06 00:00:01" b "2026-12-05 23:59:50" c \
	"2026-12-06 00:00:05" d "2026-12-07 00:00:00" e
check step-back "app.log: e|
app.log.2026-12-05: a|
app.log.2026-12-06: b|c|d|" "$(files)"

# A line begun before midnight and ended after it is finished in the old
# day's file; the next line starts the new one.
fresh
steps open-line UTC "console=file:$DIR/app.log,rotate=daily printk.time=0" \
	"2026-12-05 23:59:58" a "2026-12-05 23:59:59" --part=half "2026-12-06 00:00:01" --cont=-rest \
	"2026-12-06 00:00:02" b
check open-line "app.log: b|
app.log.2026-12-05: a|half-rest|" "$(files)"

# With a size as well: the pieces of a day, numbered in the order written.
fresh
steps size UTC "console=file:$DIR/app.log,rotate=daily,size=20 printk.time=0" \
	"2026-12-05 10:00:00" line-0001 "2026-12-05 10:00:01" line-0002 "2026-12-05 10:00:02" line-0003 \
	"2026-12-05 10:00:03" line-0004 "2026-12-05 10:00:04" line-0005 "2026-12-06 00:00:00" line-0006
check size "app.log: line-0006|
app.log.2026-12-05: line-0001|line-0002|
app.log.2026-12-05.1: line-0003|line-0004|
app.log.2026-12-05.2: line-0005|" "$(files)"

# Pieces beyond nine, and keep=5 among them: the newest by index.
fresh
args=()
for i in $(seq 1 12); do
	args+=("2026-12-05 10:00:00" "$(printf 'line-%04d' "$i")")
done
steps pieces UTC "console=file:$DIR/app.log,rotate=daily,size=10,keep=5 printk.time=0" "${args[@]}"
check pieces "app.log: line-0012|
app.log.2026-12-05.10: line-0011|
app.log.2026-12-05.6: line-0007|
app.log.2026-12-05.7: line-0008|
app.log.2026-12-05.8: line-0009|
app.log.2026-12-05.9: line-0010|" "$(files)"

# A file left at PATH by a run on an earlier day is that day's: the first
# line of the new run rotates it under its day's name.
fresh
echo "yesterday" >"$DIR/app.log"
touch -d "2026-12-04 18:00:00 UTC" "$DIR/app.log"
steps restart UTC "console=file:$DIR/app.log,rotate=daily printk.time=0" \
	"2026-12-05 09:00:00" today
check restart "app.log: today|
app.log.2026-12-04: yesterday|" "$(files)"

# ... and one of the same day is written on.
fresh
echo "earlier" >"$DIR/app.log"
touch -d "2026-12-05 08:00:00 UTC" "$DIR/app.log"
steps same-day UTC "console=file:$DIR/app.log,rotate=daily printk.time=0" \
	"2026-12-05 09:00:00" later
check same-day "app.log: earlier|later|" "$(files)"

# A bad value: one warning naming the option; the console is ignored.
check bad-rotate "printk: PRINTK_OPTS: bad console option 'rotate=weekly' (daily or hourly), console ignored" \
	"$(PRINTK_OPTS="console=file:$TMP/x.log,rotate=weekly console=stderr printk.time=0" "$WRITER" 2>&1)"

finish
