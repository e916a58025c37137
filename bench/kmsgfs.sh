#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/kmsgfs.sh [BUILD_DIR] - records per second read through pk-kmsgfs:
# util-linux `dmesg -r` over the FUSE file of a full 64 MiB log (one read
# system call, one FUSE round trip per record), against `udmesg -r` on the
# same log (the mapping read directly); and bare reads (kmsgfs-probe rate:
# read() until EAGAIN in one process, nothing printed) of that FUSE file
# against bare reads of this kernel's own /dev/kmsg, measured in the same
# run (its log is small: read REPS times over, lseek SEEK_SET between).
#
# Each figure is the best of RUNS runs (page cache warm), output to
# /dev/null; the dmesg output through the file is first checked to equal
# udmesg's. Figures, not a test: needs root (the mount) and exits 0 unless
# something could not run.
#
# BUILD_DIR defaults to $PRINTK_BUILD_DIR or build/gcc; RUNS to 3, REPS to 200.
# The load average is printed with the figures: on a shared machine the
# FUSE figure (two context switches per record) suffers most.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${PRINTK_BUILD_DIR:-$top/build/gcc}}
runs=${RUNS:-3}
reps=${REPS:-200}
kmsgfs=$build/tools/pk-kmsgfs
udmesg=$build/tools/udmesg
gen=$build/tests/udmesg-testgen
probe=$build/tests/kmsgfs-probe
for b in "$kmsgfs" "$udmesg" "$gen" "$probe"; do
	[[ -x $b ]] || { echo "bench/kmsgfs.sh: $b is not built" >&2; exit 1; }
done
command -v dmesg >/dev/null || { echo "bench/kmsgfs.sh: util-linux dmesg not installed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmsgfs-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/full.log
"$gen" bench "$log" 64 >/dev/null
"$udmesg" -r -k -B "$log" >"$tmp/want"
"$kmsgfs" --exec "$log" -- dmesg -r -k >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" || { echo "bench/kmsgfs.sh: dmesg through pk-kmsgfs differs from udmesg" >&2; exit 1; }
records=$("$udmesg" -r -B "$log" | wc -l)
kernel=$(dmesg -r | wc -l)

# best_ms CMD...: the best wall time of RUNS runs, in milliseconds.
best_ms() {
	local best= t0 t1 ms
	for _ in $(seq "$runs"); do
		t0=$EPOCHREALTIME
		"$@" >/dev/null
		t1=$EPOCHREALTIME
		ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
		if [[ -z $best ]] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$ms
		fi
	done
	echo "$best"
}
# rate_best CMD...: the best records/s of RUNS runs of a kmsgfs-probe rate.
rate_best() {
	local best=0 r
	for _ in $(seq "$runs"); do
		r=$("$@" | awk '{ printf "%.0f", $1 / ($3 / 1e9) }')
		[[ $r -gt $best ]] && best=$r
	done
	echo "$best"
}

fuse_ms=$(best_ms "$kmsgfs" --exec "$log" -- dmesg -r)
udmesg_ms=$(best_ms "$udmesg" -r -B "$log")
fuse_bare=$(rate_best "$kmsgfs" --exec "$log" -- "$probe" rate /dev/kmsg 1)
kernel_bare=$(rate_best "$probe" rate /dev/kmsg "$reps")
rate() { awk -v n="$1" -v ms="$2" 'BEGIN { printf "%.0f", n / (ms / 1000) }'; }

printf 'bench/kmsgfs.sh: a 64 MiB log of %d records; the kernel log of %d records read %d times\n' \
	"$records" "$kernel" "$reps"
printf 'best of %d runs; %d CPUs, load average %s\n' "$runs" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %10s %14s\n' "reader" "best ms" "records/s"
printf '%-34s %10.1f %14s\n' "dmesg -r through pk-kmsgfs" "$fuse_ms" "$(rate "$records" "$fuse_ms")"
printf '%-34s %10.1f %14s\n' "udmesg -r (the mapping)" "$udmesg_ms" "$(rate "$records" "$udmesg_ms")"
printf '%-34s %10s %14s\n' "read() of the pk-kmsgfs file" "" "$fuse_bare"
printf '%-34s %10s %14s\n' "read() of the kernel's /dev/kmsg" "" "$kernel_bare"
