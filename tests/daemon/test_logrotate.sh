#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The example daemon's file log rotated by the real logrotate with the
# snippet the example ships (examples/daemon/pk-daemon-demo.logrotate): the
# daemon's workers log numbered requests as fast as they can while
# `logrotate -f` runs ROTATIONS times (default 100); then the daemon is
# stopped, and every line of every worker must be in exactly one of the
# files (rotated, compressed, current): none lost, none doubled.
#
# The snippet is used as shipped but for the path and the number of files
# kept (every rotation's, so that none is dropped before the count).
#
# The snippet keeps logrotate's defaults: rename, then create the new file
# (with O_EXCL: a file the console made first would be moved aside as
# PATH-YYYYMMDDHH.backup, with an error, and fail the count here), no
# copytruncate, no signal. The console opens the file logrotate creates.
#
# Environment: PRINTK_TEST_BUILD_DIR (examples/pk-daemon-demo),
# PRINTK_SOURCE_DIR; LOGROTATE (default: logrotate on PATH or in /usr/sbin);
# ROTATIONS; SNIPPET, another snippet to try (copytruncate in it makes this
# test fail: that is how it was seen to).
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
: "${PRINTK_SOURCE_DIR:?set PRINTK_SOURCE_DIR to the source directory}"
daemon=$PRINTK_TEST_BUILD_DIR/examples/pk-daemon-demo
snippet=${SNIPPET:-$PRINTK_SOURCE_DIR/examples/daemon/pk-daemon-demo.logrotate}
rotations=${ROTATIONS:-100}
workers=4

fail() { echo "FAIL: $*"; exit 1; }

logrotate=${LOGROTATE:-$(PATH=$PATH:/usr/sbin:/sbin command -v logrotate || true)}
[[ -n $logrotate && -x $logrotate ]] || fail "logrotate not found (scripts/setup.sh installs it)"
[[ -x $daemon ]] || fail "$daemon is not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-logrotate.XXXXXX")
pid=
cleanup() {
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

log=$tmp/pk-daemon-demo.log
sed -e "s|^/var/log/pk-daemon-demo.log {|$log {|" \
	-e "s|^\([[:space:]]*\)rotate [0-9]*|\1rotate $((rotations + 10))|" "$snippet" >"$tmp/conf"
grep -q "^$log {" "$tmp/conf" || fail "the snippet names no /var/log/pk-daemon-demo.log"
grep -Eq "^[[:space:]]*rotate $((rotations + 10))$" "$tmp/conf" || fail "the snippet says no rotate N"
grep -Eq "^[[:space:]]*(postrotate|prerotate)" "$tmp/conf" && echo "note: the snippet runs a script"
[[ -n ${SNIPPET:-} ]] || grep -Eq "^[[:space:]]*create$" "$tmp/conf" || fail "the snippet does not say create"

# A lossless console that keeps waiting however loaded the machine is; the
# consoles are the daemon's own choice (no console= here).
unset JOURNAL_STREAM INVOCATION_ID
PRINTK_OPTS="lossless_timeout_ms=600000" "$daemon" -t "$workers" -p 50 "$log" 2>"$tmp/stderr" &
pid=$!

# Each rotation once the daemon wrote to the file the last one left it
# (logrotate created it; the console opens it at its next line), so that
# every rotation moves lines however loaded the machine is.
wait_for_lines() {
	for ((t = 0; t < 3000; t++)); do
		[[ -s $log ]] && return
		kill -0 "$pid" 2>/dev/null || fail "the daemon exited: $(cat "$tmp/stderr")"
		sleep 0.01
	done
	fail "the daemon wrote nothing to $log in 30 s (before rotation $i)"
}
start=$SECONDS
for ((i = 1; i <= rotations; i++)); do
	wait_for_lines
	"$logrotate" -f -s "$tmp/state" "$tmp/conf" >"$tmp/logrotate.out" 2>&1 ||
		{ cat "$tmp/logrotate.out"; fail "logrotate failed at rotation $i"; }
	[[ -s $tmp/logrotate.out ]] && { cat "$tmp/logrotate.out"; fail "logrotate complained at rotation $i"; }
	kill -0 "$pid" 2>/dev/null || fail "the daemon died at rotation $i: $(cat "$tmp/stderr")"
done
elapsed=$((SECONDS - start))
kill -TERM "$pid"
wait "$pid" || fail "the daemon exited with $?: $(cat "$tmp/stderr")"
pid=
[[ -s $tmp/stderr ]] && fail "the daemon said: $(cat "$tmp/stderr")"

# Every file the log went to: the current one, PATH.N and PATH.N.gz, and
# anything else that starts with the name (logrotate's .backup of a file
# it found in the way would show here, and fail the count of files).
shopt -s nullglob
files=("$log" "$log".*)
nfiles=${#files[@]}
for f in "${files[@]}"; do
	[[ $f == "$log" || $f =~ \.[0-9]+(\.gz)?$ ]] || fail "unexpected file $f"
done
((nfiles == rotations + 1)) || fail "$nfiles files after $rotations rotations"
for f in "${files[@]}"; do zcat -f -- "$f"; done >"$tmp/all"

# Each worker: requests 1..N exactly once and its "done, N requests" line.
awk -v workers="$workers" '
	{ sub(/^\[[ 0-9.]+\] /, "") }
	/^worker [0-9]+: request [0-9]+( slow)?$/ { seen[$2 + 0, $4 + 0]++; next }
	/^worker [0-9]+: done, [0-9]+ requests$/ { done[$2 + 0] = $4 + 0; ndone[$2 + 0]++; next }
	/^pk-daemon-demo: (stopped|[0-9]+ workers started)$/ { other[$0]++; next }
	{ printf "unexpected line: %s\n", $0; bad++ }
	END {
		for (w = 0; w < workers; w++) {
			if (ndone[w] != 1) { printf "worker %d: %d done lines\n", w, ndone[w]; bad++; continue }
			for (n = 1; n <= done[w]; n++) {
				if (seen[w, n] != 1) {
					printf "worker %d: request %d seen %d times\n", w, n, seen[w, n]; bad++
				}
				delete seen[w, n]
			}
			total += done[w]
		}
		for (k in seen) { split(k, p, SUBSEP); printf "worker %d: request %d after its last\n", p[1], p[2]; bad++ }
		if (other["pk-daemon-demo: stopped"] != 1) { print "no single stopped line"; bad++ }
		printf "%d requests from %d workers\n", total, workers
		exit bad > 0
	}' "$tmp/all" >"$tmp/check" || { head -20 "$tmp/check"; fail "lines lost or doubled"; }
echo "ok: $(cat "$tmp/check") in $nfiles files, $rotations rotations in ${elapsed}s, none lost or doubled"
