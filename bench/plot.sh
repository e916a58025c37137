#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/plot.sh BUILD_DIR - the figures and plots of docs/performance.md.
#
# Runs bench/compare (libprintk against spdlog, syslog(3), sd_journal_send,
# /dev/kmsg) and bench/udmesg.sh (udmesg against cat and dmesg), keeps their
# reports and CSV files in docs/perf-loggers.{txt,csv} and
# docs/perf-udmesg.{txt,csv}, and draws docs/perf-loggers.png and
# docs/perf-udmesg.png with gnuplot. Extra arguments go to bench/compare
# (e.g. --quick).
#
# It installs nothing: when gnuplot or what bench/compare needs is missing,
# it names the Debian packages and exits 1. bench/compare, udmesg and
# udmesg-testgen must be built in BUILD_DIR (a Release build: other figures
# mean little).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 ]] || { echo "usage: bench/plot.sh BUILD_DIR [bench/compare options]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
docs=$top/docs

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

missing=()
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
if [[ ! -x $build/bench/compare ]] && command -v dpkg-query >/dev/null; then
	for p in libspdlog-dev libsystemd-dev; do
		installed "$p" || missing+=("$p")
	done
fi
if ((${#missing[@]})); then
	echo "bench/plot.sh: missing packages: ${missing[*]} (apt-get install ${missing[*]}; then reconfigure $build)" >&2
	exit 1
fi
for b in bench/compare tools/udmesg tests/udmesg-testgen; do
	[[ -x $build/$b ]] || {
		echo "bench/plot.sh: $build/$b is not built (cmake -S $top -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build --target bench_compare udmesg udmesg-testgen)" >&2
		exit 1
	}
done
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[[ $btype == Release ]] || echo "bench/plot.sh: warning: $build is a ${btype:-?} build, not Release" >&2

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="$(nproc) CPUs (${cpu:-?}), $(uname -sr)"

# --- the loggers ------------------------------------------------------------
(cd "${TMPDIR:-/tmp}" && "$build/bench/compare" --csv "$docs/perf-loggers.csv" "$@") | tee "$docs/perf-loggers.txt"
load=$(sed -n 's/.*load \([0-9.]*\);.*/\1/p' "$docs/perf-loggers.txt" | head -1)
load_end=$(sed -n 's/^load at the end \([0-9.]*\);.*/\1/p' "$docs/perf-loggers.txt")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One line per case, top to bottom: y, label, ns 1 thread, ns 2 threads,
# lost share 1 thread, 2 threads (-1: not counted).
awk -F, '
	/^#/ || NR == 1 { next }
	!($1 in row) { row[$1] = ++n; name[n] = $2 }
	{ ns[$1, $3] = $4; lost[$1, $3] = $9 == "" ? -1 : $9; key[row[$1]] = $1 }
	END {
		for (i = 1; i <= n; i++) {
			k = key[i]
			printf "%d\t%s\t%s\t%s\t%s\t%s\n", n - i + 1, name[i], ns[k, 1], ns[k, 2], lost[k, 1], lost[k, 2]
		}
	}' "$docs/perf-loggers.csv" >"$tmp/loggers.dat"
ncases=$(wc -l <"$tmp/loggers.dat")
# Cases that did not run, with the first words of the reason.
skipped=$(sed -n 's/^# skipped \([^:]*\): \([^:(]*\).*/\1 (\2)/p' "$docs/perf-loggers.csv" | paste -sd ';' | sed 's/ *)/)/g; s/;/; /g')

gnuplot <<EOF
set terminal pngcairo size 1000,$((140 + 52 * ncases)) font "DejaVu Sans,10" noenhanced
set output "$docs/perf-loggers.png"
set datafile separator "\t"
set title "One log message, the same in every case: ns per message per calling thread (log scale, lower is better)\n$machine; load $load at the start, $load_end at the end"
set logscale x
set xrange [10:200000]
set xlabel "ns per message"
set yrange [0.4:$ncases + 0.6]
set ytics nomirror scale 0
set xtics nomirror
set grid xtics
set key top right box opaque
set bmargin 5
if (strlen("$skipped") > 0) set label 1 "not measured: $skipped" at screen 0.01, screen 0.02 left font ",9"
set style fill solid 0.85 noborder
h = 0.17
lbl(v, l) = l > 0.0005 ? sprintf("%.0f ns, %.0f%% lost", v, 100 * l) : sprintf("%.0f ns", v)
plot "$tmp/loggers.dat" using (\$3):(\$1 + h):(10):(\$3):(\$1 + 0.02):(\$1 + 2 * h):ytic(2) \
	with boxxyerror lc rgb "#3465a4" title "1 thread", \
     "" using (\$4):(\$1 - h):(10):(\$4):(\$1 - 2 * h):(\$1 - 0.02) \
	with boxxyerror lc rgb "#f57900" title "2 threads", \
     "" using (\$3 * 1.08):(\$1 + h):(lbl(\$3, \$5)) with labels left font ",9" notitle, \
     "" using (\$4 * 1.08):(\$1 - h):(lbl(\$4, \$6)) with labels left font ",9" notitle
EOF

# --- udmesg -----------------------------------------------------------------
bash "$top/bench/udmesg.sh" "$build" "$docs/perf-udmesg.csv" | tee "$docs/perf-udmesg.txt"
uload=$(sed -n 's/.*load \([0-9.]*\), best.*/\1/p' "$docs/perf-udmesg.txt")
uhead=$(head -1 "$docs/perf-udmesg.txt" | sed 's/^udmesg bench: //; s/ (build.*//')

awk -F, 'NR > 1 { rows[++n] = $2 "\t" $3 "\t" $5 }
	END { for (i = 1; i <= n; i++) printf "%d\t%s\n", n - i + 1, rows[i] }' \
	"$docs/perf-udmesg.csv" >"$tmp/udmesg.dat"
ntools=$(wc -l <"$tmp/udmesg.dat")

gnuplot <<EOF
set terminal pngcairo size 1000,$((140 + 48 * ntools)) font "DejaVu Sans,10" noenhanced
set output "$docs/perf-udmesg.png"
set datafile separator "\t"
set title "Printing a whole log to /dev/null: $uhead; best of the runs (log scale, lower is better)\n$machine; load $uload at the end"
set logscale x
set xrange [1:100000]
set xlabel "ms"
set yrange [0.4:$ntools + 0.6]
set ytics nomirror scale 0
set xtics nomirror
set grid xtics
set style fill solid 0.85 noborder
plot "$tmp/udmesg.dat" using (\$3):1:(1):(\$3):(\$1 - 0.3):(\$1 + 0.3):ytic(2) \
	with boxxyerror lc rgb "#3465a4" notitle, \
     "" using (\$3 * 1.08):1:(sprintf("%.1f ms (%.2f x cat)", \$3, \$4)) with labels left notitle
EOF
echo "bench/plot.sh: wrote docs/perf-loggers.{txt,csv,png} and docs/perf-udmesg.{txt,csv,png}"
