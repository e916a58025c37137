#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg --info: a log's geometry, records, console level, loss counters
# and writers, byte for byte (the writers' pids put in by name): two
# writers gone; consoles' own levels set with -n NAME=LEVEL; a writer alive
# inside a record, then gone, and the record it left counted as lost once
# the next writer met it; the lane records a SIGKILLed writer left, not
# merged, then merged; a log without lanes; the errors.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

# expect NAME WANT CMD...: CMD prints exactly WANT (plus a final newline)
# and exits 0.
expect() {
	local name=$1 want=$2
	shift 2
	checks=$((checks + 1))
	local got
	got=$("$@" 2>&1)
	local rc=$?
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ok "$name"
	else
		fail "$name (exit $rc)"
		diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -30
	fi
}

# --- two writers, both gone ----------------------------------------------
WR=$TMP/writers.log
"$TESTGEN" writers "$WR" >"$TMP/writers.pids" || fail "udmesg-testgen writers"
read -r _ apid <<<"$(grep '^alpha ' "$TMP/writers.pids")"
read -r _ bpid <<<"$(grep '^beta ' "$TMP/writers.pids")"
# Made with lanes on, the default: the file holds the lane pool, 4 KiB and
# 16 lanes of 1/16 of the text area (64 KiB at most; docs/lanes.md), so
# 286720 + 69632 bytes here and 13705216 + 1052672 for the 4 MiB log below.
expect "info:writers" "file:           $WR, 356352 bytes
text area:      65536 bytes (log_buf_len)
record slots:   2048
format:         4, 16 lanes of 4096 bytes
records:        2 (seq 0 to 1)
console level:  7
lost:           0 stores refused (oldest record unfinished), 0 records of writers that died, 0 damaged, 0 stalled reservations
lanes:          0 in use, 0 records not merged, 0 merged, 0 stored in the ring (lane full), 0 damaged
writers:        2 known, 0 alive, 1023 slots
  pid $apid alpha gone
  pid $bpid beta gone" "$UDMESG" --info -B "$WR"

# The console level is the one the log keeps (udmesg -n changes it).
"$UDMESG" -B "$WR" -n 4 || fail "udmesg -n 4"
checks=$((checks + 1))
if "$UDMESG" --info -B "$WR" | grep -qx 'console level:  4'; then
	ok "info:console-level"
else
	fail "info:console-level"
fi

# A console's own level by name (-n NAME=LEVEL), listed by --info.
"$UDMESG" -B "$WR" -n applog=8 || fail "udmesg -n applog=8"
"$UDMESG" -B "$WR" -n file0=default || fail "udmesg -n file0=default"
"$UDMESG" -B "$WR" -n applog=2 || fail "udmesg -n applog=2"
checks=$((checks + 1))
got=$("$UDMESG" --info -B "$WR" | grep '^console levels:')
if [ "$got" = "console levels: applog=2, file0=default" ]; then
	ok "info:console-levels"
else
	fail "info:console-levels: $got"
fi

# --- a writer alive inside a record, then gone ----------------------------
# While it lives the records end before the one it is writing (the 3000
# after it are not complete yet, for a reader).
# (Not in builds with small ring ids: their logs are too small for it.)
STUCK=$TMP/stuck.log
if ! "$TESTGEN" bench "$TMP/probe.log" 4 >/dev/null 2>&1; then
	echo "# small ring ids: the 4 MiB log of this part cannot be made here"
else
coproc STUCKGEN { exec "$TESTGEN" stuck "$STUCK"; }
spid=$STUCKGEN_PID
read -r ready <&"${STUCKGEN[0]}" || ready=
if [ "$ready" = ready ]; then
	expect "info:alive" "file:           $STUCK, 14757888 bytes
text area:      4194304 bytes (log_buf_len)
record slots:   131072
format:         4, 16 lanes of 65536 bytes
records:        49443 (seq 23508 to 72950)
console level:  7
lost:           0 stores refused (oldest record unfinished), 0 records of writers that died, 0 damaged, 0 stalled reservations
lanes:          0 in use, 0 records not merged, 0 merged, 0 stored in the ring (lane full), 0 damaged
writers:        1 known, 1 alive, 1023 slots
  pid $spid udmesg-testgen alive" "$UDMESG" --info -B "$STUCK"
	exec {STUCKGEN[1]}>&-
	wait "$spid" 2>/dev/null
	# The next writer meets the record the dead one left: a hole.
	echo "6 after" | "$TESTGEN" live "$STUCK" >"$TMP/live.out" &
	lpid=$!
	wait "$lpid"
	expect "info:gone" "file:           $STUCK, 14757888 bytes
text area:      4194304 bytes (log_buf_len)
record slots:   131072
format:         4, 16 lanes of 65536 bytes
records:        52445 (seq 23508 to 75952)
console level:  7
lost:           0 stores refused (oldest record unfinished), 1 records of writers that died, 0 damaged, 0 stalled reservations
lanes:          0 in use, 0 records not merged, 0 merged, 0 stored in the ring (lane full), 0 damaged
writers:        2 known, 0 alive, 1023 slots
  pid $spid udmesg-testgen gone
  pid $lpid udmesg-testgen gone" "$UDMESG" --info -B "$STUCK"
else
	checks=$((checks + 1))
	fail "info: udmesg-testgen stuck did not get ready"
	exec {STUCKGEN[1]}>&-
	wait "$spid" 2>/dev/null || true
fi
fi

# --- lanes: a writer SIGKILLed with records in its lanes -------------------
# Its lane records are counted as not merged until a writer merges them;
# every record is there, and a log made with lanes off has no pool.
LN=$TMP/lanes.log
pending=$("$TESTGEN" lanes "$LN" 300 2>/dev/null | sed -n 's/^pending //p')
checks=$((checks + 1))
info=$("$UDMESG" --info -B "$LN")
if [ -n "$pending" ] && grep -qx 'format:         4, 16 lanes of 4096 bytes' <<<"$info" &&
	grep -qx 'records:        900 (seq 0 to 899)' <<<"$info" &&
	grep -q "^lanes:          0 in use, $pending records not merged, [0-9]* merged, 0 stored in the ring (lane full), 0 damaged\$" <<<"$info"; then
	ok "info:lanes-pending"
else
	fail "info:lanes-pending (pending '$pending')"
	printf '%s\n' "$info"
fi
"$TESTGEN" merge "$LN" >/dev/null || fail "udmesg-testgen merge"
checks=$((checks + 1))
info=$("$UDMESG" --info -B "$LN")
merged=$(sed -n 's/^lanes: .* not merged, \([0-9]*\) merged, .*/\1/p' <<<"$info")
if grep -qx 'records:        900 (seq 0 to 899)' <<<"$info" &&
	grep -q "^lanes:          0 in use, 0 records not merged, " <<<"$info" && [ -n "$merged" ] &&
	[ "$merged" -ge "$pending" ] && [ "$merged" -le 900 ]; then
	ok "info:lanes-merged"
else
	fail "info:lanes-merged"
	printf '%s\n' "$info"
fi
L3=$TMP/nolanes.log
PRINTK_OPTS=printk.lanes=0 "$TESTGEN" writers "$L3" >/dev/null || fail "udmesg-testgen writers, lanes off"
checks=$((checks + 1))
info=$("$UDMESG" --info -B "$L3")
if grep -qx 'format:         3, no lanes' <<<"$info" && ! grep -q '^lanes:' <<<"$info" &&
	grep -qx "file:           $L3, 286720 bytes" <<<"$info"; then
	ok "info:no-lanes"
else
	fail "info:no-lanes"
	printf '%s\n' "$info"
fi

# --- errors: one line, exit 1 ---------------------------------------------
err_case() {
	local name=$1 want=$2
	shift 2
	checks=$((checks + 1))
	local got
	got=$("$@" 2>&1 >/dev/null)
	local rc=$?
	if [ $rc -eq 1 ] && [ "$got" = "$want" ]; then
		ok "$name"
	else
		fail "$name (exit $rc): $got"
	fi
}
err_case "info:not-a-log-source" "udmesg: --info shows a libprintk log: give it alone, with -B <file> or none" \
	"$UDMESG" --info -F "$WR"
err_case "info:with-action" "udmesg: --info shows a libprintk log: give it alone, with -B <file> or none" \
	"$UDMESG" --info -C -B "$WR"
err_case "console-level:range" "udmesg: bad console level '16' (0 to 15, or default)" \
	"$UDMESG" -B "$WR" -n applog=16
err_case "console-level:name" "udmesg: bad console name '' (1 to 15 bytes)" \
	"$UDMESG" -B "$WR" -n =3
err_case "console-level:long-name" "udmesg: bad console name 'sixteen_chars_xx' (1 to 15 bytes)" \
	"$UDMESG" -B "$WR" -n sixteen_chars_xx=3
err_case "info:missing" "udmesg: cannot open $TMP/nosuch: No such file or directory" \
	"$UDMESG" --info -B "$TMP/nosuch"

finish
