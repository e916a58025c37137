#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/udmesg.sh [BUILD_DIR [CSV]] - udmesg over a full 64 MiB log, all
# records, against cat of the same text and util-linux dmesg of the same
# records.
#
# udmesg-testgen fills (and wraps) a 64 MiB log with dmesg-like lines of 50
# to 90 bytes; `udmesg -B log` prints it once into a text file, `udmesg -r`
# once into the raw "<prio>[time] text" form dmesg -F reads (dmesg cannot
# read a libprintk log; from that file it prints the same bytes, which is
# checked). Then `udmesg -B log`, `cat text` and `dmesg -F raw` are timed in
# turn, output to /dev/null, RUNS times each (page cache warm), and the best
# and median times and the ratios to cat are printed (the goal for udmesg:
# at most 2). Then the same for a 64 MiB log of deferred records
# (`udmesg-testgen deferred`: printk's pr_info() with no console printing
# it) against cat of the text udmesg prints from it (the goal: at most 3).
# With CSV, the figures also go into that file. Figures, not a test: the
# exit status is 0 unless something could not run; without dmesg that line
# is left out.
#
# BUILD_DIR defaults to $PRINTK_BUILD_DIR or build/gcc; RUNS to 9.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
csv=${2:-}
runs=${RUNS:-9}
udmesg=$build/tools/udmesg
gen=$build/tests/udmesg-testgen
for b in "$udmesg" "$gen"; do
	[[ -x $b ]] || { echo "bench/udmesg.sh: $b is not built (cmake --build $build --target udmesg udmesg-testgen)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/udmesg-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/full.log
text=$tmp/full.txt
raw=$tmp/full.raw

"$gen" bench "$log" 64
"$udmesg" -B "$log" >"$text"
dmesg=$(command -v dmesg || true)
if [[ -n $dmesg ]]; then
	"$udmesg" -r -B "$log" >"$raw"
	"$dmesg" -F "$raw" | cmp -s - "$text" || { echo "bench/udmesg.sh: dmesg -F prints other bytes than udmesg" >&2; exit 1; }
fi
records=$(wc -l <"$text")
bytes=$(wc -c <"$text")

# ms_of CMD...: wall time of one run in milliseconds (output to /dev/null).
ms_of() {
	local t0 t1
	t0=$EPOCHREALTIME
	"$@" >/dev/null
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
}

# stats FILE: "best median" of the numbers in FILE.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f %.1f\n", v[1], v[int((NR + 1) / 2)] }'
}

# time_legs NAME TEXT LOG [RAW]: RUNS rounds of cat TEXT, udmesg -B LOG,
# the same with one thread and (with RAW) dmesg -F RAW, in turn, into
# $tmp/NAME.{cat,udmesg,udmesg1,dmesg}.ms.
time_legs() {
	local name=$1 text=$2 log=$3 raw=${4:-}
	local leg

	for leg in cat udmesg udmesg1 dmesg; do : >"$tmp/$name.$leg.ms"; done
	for _ in $(seq "$runs"); do
		ms_of cat "$text" >>"$tmp/$name.cat.ms"
		ms_of "$udmesg" -B "$log" >>"$tmp/$name.udmesg.ms"
		ms_of env UDMESG_THREADS=1 "$udmesg" -B "$log" >>"$tmp/$name.udmesg1.ms"
		[[ -z $raw ]] || ms_of "$dmesg" -F "$raw" >>"$tmp/$name.dmesg.ms"
	done
}

time_legs full "$text" "$log" "${dmesg:+$raw}"
read -r cat_best cat_med < <(stats "$tmp/full.cat.ms")
read -r ud_best ud_med < <(stats "$tmp/full.udmesg.ms")
read -r ud1_best ud1_med < <(stats "$tmp/full.udmesg1.ms")
[[ -z $dmesg ]] || read -r dm_best dm_med < <(stats "$tmp/full.dmesg.ms")

# Deferred records: udmesg formats each one as it reads it.
dlog=$tmp/deferred.log
dtext=$tmp/deferred.txt
"$gen" deferred "$dlog" 64
"$udmesg" -B "$dlog" >"$dtext"
drecords=$(wc -l <"$dtext")
dbytes=$(wc -c <"$dtext")
time_legs deferred "$dtext" "$dlog"
read -r dcat_best dcat_med < <(stats "$tmp/deferred.cat.ms")
read -r dud_best dud_med < <(stats "$tmp/deferred.udmesg.ms")
read -r dud1_best dud1_med < <(stats "$tmp/deferred.udmesg1.ms")

btype=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
cpus=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
printf 'udmesg bench: 64 MiB log, %d records, %.1f MB of text (build %s, %d CPUs, load %s, best of %d)\n' \
	"$records" "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "${btype:-?}" "$cpus" "$load" "$runs"
printf '  cat text > /dev/null             best %7.1f ms  median %7.1f ms\n' "$cat_best" "$cat_med"
printf '  udmesg -B log > /dev/null        best %7.1f ms  median %7.1f ms\n' "$ud_best" "$ud_med"
printf '  the same, UDMESG_THREADS=1       best %7.1f ms  median %7.1f ms\n' "$ud1_best" "$ud1_med"
[[ -z $dmesg ]] || printf '  dmesg -F raw > /dev/null         best %7.1f ms  median %7.1f ms\n' "$dm_best" "$dm_med"
awk -v u="$ud_best" -v c="$cat_best" -v u1="$ud1_best" 'BEGIN {
	printf "  ratio udmesg/cat: %.2f (one thread: %.2f; goal: at most 2)\n", u / c, u1 / c }'
[[ -z $dmesg ]] || awk -v d="$dm_best" -v c="$cat_best" -v u="$ud_best" 'BEGIN {
	printf "  ratio dmesg/cat: %.2f (dmesg/udmesg: %.2f)\n", d / c, d / u }'
[[ -n $dmesg ]] || echo "  dmesg: not found, left out"
printf 'deferred records: 64 MiB log, %d records, %.1f MB of text\n' \
	"$drecords" "$(awk -v b="$dbytes" 'BEGIN { print b / 1e6 }')"
printf '  cat text > /dev/null             best %7.1f ms  median %7.1f ms\n' "$dcat_best" "$dcat_med"
printf '  udmesg -B log > /dev/null        best %7.1f ms  median %7.1f ms\n' "$dud_best" "$dud_med"
printf '  the same, UDMESG_THREADS=1       best %7.1f ms  median %7.1f ms\n' "$dud1_best" "$dud1_med"
awk -v u="$dud_best" -v c="$dcat_best" -v u1="$dud1_best" 'BEGIN {
	printf "  ratio udmesg/cat: %.2f (one thread: %.2f; goal: at most 3)\n", u / c, u1 / c }'

if [[ -n $csv ]]; then
	{
		echo "tool,label,best_ms,median_ms,ratio_to_cat"
		row() { awk -v t="$1" -v l="$2" -v b="$3" -v m="$4" -v c="$cat_best" \
			'BEGIN { printf "%s,%s,%.1f,%.1f,%.2f\n", t, l, b, m, b / c }'; }
		row cat "cat of the text" "$cat_best" "$cat_med"
		row udmesg "udmesg" "$ud_best" "$ud_med"
		row udmesg_1t "udmesg one thread" "$ud1_best" "$ud1_med"
		[[ -z $dmesg ]] || row dmesg "util-linux dmesg -F" "$dm_best" "$dm_med"
		drow() { awk -v t="$1" -v l="$2" -v b="$3" -v m="$4" -v c="$dcat_best" \
			'BEGIN { printf "%s,%s,%.1f,%.1f,%.2f\n", t, l, b, m, b / c }'; }
		drow cat_deferred "cat of the deferred log's text" "$dcat_best" "$dcat_med"
		drow udmesg_deferred "udmesg, deferred records" "$dud_best" "$dud_med"
		drow udmesg_1t_deferred "udmesg one thread, deferred records" "$dud1_best" "$dud1_med"
	} >"$csv"
fi
