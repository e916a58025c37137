#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/count.sh [BUILD_DIR] - instructions per filtered
# pr_info("worker %d processed %s in %lu us\n", ...) with callgrind, against
# spdlog's null sink counted in the same run (counts do not move with the
# machine's load, so this is the figure to compare; docs/lanes.md).
#
# Each case runs twice, with N1 and N2 calls: per call = the difference of
# the totals over N2 - N1, so start-up and exit cancel out (but for the
# "whole program" line, which keeps the merges and the exit's pass over the
# log: that is the point of it).
#   lanes, writer   printk_count N lanes, counted only inside main()
#   lanes, whole    printk_count N lanes: writer and every merge
#   ring            printk_count N: lanes off, the shared ring's deferred record
#   printed         printk_count N printed: formatted and written to /dev/null
#   spdlog null     lanes --count-spdlog N: spdlog's null sink (formats, writes nothing)
# Ratios: the writer and the whole program to spdlog's null sink (targets
# 0.3 for the writer in time, 0.5 for writer plus merge in CPU).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
count=$build/bench/printk_count
lanes=$build/bench/lanes
command -v valgrind >/dev/null || { echo "bench/count.sh: needs valgrind (Debian: valgrind)" >&2; exit 1; }
[[ -x $count ]] || { echo "bench/count.sh: $count is not built" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-count.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# total OUT_FILE CMD...: the program's instructions (callgrind's total).
total() {
	local out=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$out.err" ||
		{ echo "bench/count.sh: $* failed: $(tail -1 "$out.err")" >&2; exit 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# per_call NAME N1 N2 [VALGRIND_OPTION] -- CMD (N goes after CMD's first word)
per_call() {
	local name=$1 n1=$2 n2=$3 opt=$4
	shift 5
	local cmd=$1
	shift
	local a b
	a=$(total "$tmp/$name.$n1" $opt "$cmd" "$n1" "$@")
	b=$(total "$tmp/$name.$n2" $opt "$cmd" "$n2" "$@")
	awk -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.1f\n", (b - a) / (n2 - n1) }'
}

writer=$(per_call writer 500 1000 --toggle-collect=main -- "$count" lanes)
whole=$(per_call whole 10000 20000 "" -- "$count" lanes)
ring=$(per_call ring 10000 20000 "" -- "$count")
printed=$(per_call printed 10000 20000 "" -- "$count" printed)
spd=
if [[ -x $lanes ]] && "$lanes" --count-spdlog 1 2>/dev/null; then
	# spdlog's own start-up cancels out as printk's does.
	spd=$(total "$tmp/spdlog.10000" "$lanes" --count-spdlog 10000)
	spd2=$(total "$tmp/spdlog.20000" "$lanes" --count-spdlog 20000)
	spd=$(awk -v a="$spd" -v b="$spd2" 'BEGIN { printf "%.1f\n", (b - a) / 10000 }')
fi

printf 'instructions per filtered pr_info (callgrind, %s)\n' "$build"
printf '  lanes, the writer                 %8s\n' "$writer"
printf '  lanes, writer and every merge     %8s\n' "$whole"
printf '  shared ring (lanes off)           %8s\n' "$ring"
printf '  printed on /dev/null              %8s\n' "$printed"
if [[ -n $spd ]]; then
	printf '  spdlog null sink                  %8s\n' "$spd"
	awk -v w="$writer" -v t="$whole" -v r="$ring" -v s="$spd" 'BEGIN {
		printf "  ratio writer/spdlog %.2f, writer+merge/spdlog %.2f, ring/spdlog %.2f\n", w / s, t / s, r / s }'
else
	echo "  spdlog null sink: not built (bench/lanes without spdlog)"
fi
