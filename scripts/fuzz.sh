#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build (with clang, if needed) and run one libFuzzer target of tests/fuzz.
#
# usage: scripts/fuzz.sh TARGET SECONDS
#   TARGET   logfile, reader, writer, lanes, opts, format, udmesg (or fuzz_<name>)
#   SECONDS  how long to fuzz
# Prints executions, executions per second and coverage at the end. Exits
# non-zero on any crash, hang (an input running longer than FUZZ_TIMEOUT),
# sanitizer report, leak or out-of-memory; the input that did it is kept in
# BUILD_DIR/artifacts/TARGET/ and the command to replay it is printed.
#
# environment:
#   FUZZ_BUILD_DIR   build directory (default build/fuzz), a CMake build of
#                    tests/fuzz made with clang
#   FUZZ_CC          compiler (default clang)
#   FUZZ_TIMEOUT     seconds one input may take before it counts as a hang (5)
#   FUZZ_CORPUS      the working corpus (default BUILD_DIR/corpus/TARGET: it
#                    grows from run to run); the seeds in
#                    tests/fuzz/corpus/TARGET are copied in first
#   FUZZ_JOBS        parallel fuzzing processes (1)
#   FUZZ_ARGS        more libFuzzer options
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/tests/fuzz

if (($# != 2)); then
	echo "usage: $0 TARGET SECONDS" >&2
	exit 2
fi
name=${1#fuzz_}
seconds=$2
target=fuzz_$name
if [[ ! -f $here/$target.c ]]; then
	echo "fuzz: no target $target (tests/fuzz/$target.c)" >&2
	exit 2
fi
build=${FUZZ_BUILD_DIR:-$top/build/fuzz}
timeout=${FUZZ_TIMEOUT:-5}
jobs=${FUZZ_JOBS:-1}

# Configure once, then an incremental build every time (sources change).
mkdir -p "$build"
if [[ ! -f $build/CMakeCache.txt ]]; then
	cc=${FUZZ_CC:-clang}
	if ! command -v "$cc" >/dev/null; then
		echo "fuzz: $cc not found: libFuzzer needs clang" >&2
		exit 2
	fi
	cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER="$cc" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
		{ cat "$build/configure.log"; exit 2; }
fi
cmake --build "$build" --target "$target" -j"$(nproc)" >"$build/build-$target.log" 2>&1 ||
	{ tail -40 "$build/build-$target.log"; exit 2; }
bin=$build/$target

corpus=${FUZZ_CORPUS:-$build/corpus/$target}
artifacts=$build/artifacts/$target
mkdir -p "$corpus" "$artifacts"
# The seeds replace older copies of themselves: a working corpus kept from a
# run before a format change would otherwise hold only refused inputs.
if [[ -d $here/corpus/$target ]]; then
	cp -f "$here/corpus/$target"/* "$corpus"/ 2>/dev/null
fi

# Log images are large (a 4 KiB log is a 16 KiB region, an 84 KiB file;
# the "lanes" seed, a 32 KiB log with its lane pool, 147 KiB); the text
# inputs are small.
case $name in
logfile | reader | writer | lanes) max_len=163840 ;;
*) max_len=4096 ;;
esac

args=(-max_total_time="$seconds" -timeout="$timeout" -max_len="$max_len" -rss_limit_mb=2048
	-artifact_prefix="$artifacts/" -print_final_stats=1 -detect_leaks=1)
if ((jobs > 1)); then
	args+=(-jobs="$jobs" -workers="$jobs")
fi
# shellcheck disable=SC2206 # FUZZ_ARGS is a list of options
args+=(${FUZZ_ARGS:-})

log=$build/$target.log
echo "fuzz: $target for ${seconds}s (timeout ${timeout}s per input), corpus $corpus"
# console=none: nothing the library prints reaches the fuzzer's output.
PRINTK_OPTS="console=none" "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
if [[ -z $execs ]]; then
	# -fork mode (FUZZ_ARGS=-fork=N) prints no final stats: its last status line
	last=$(grep -aE '^#[0-9]+: cov:' "$log" | tail -1)
	execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
	secs=$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")
	if [[ -n $execs && -n $secs ]] && ((secs > 0)); then
		rate=$((execs / secs))
	fi
	# with -ignore_crashes/-ignore_timeouts it goes on (and exits 0) after findings
	found=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+\/[0-9]+\/[0-9]+).*/\1/p' <<<"$last")
	if [[ -n $found && $found != 0/0/0 ]]; then
		echo "fuzz: $target: oom/timeout/crash $found" >&2
		((rc != 0)) || rc=1
	fi
fi
cov=$(grep -aoE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
echo "fuzz: $target: ${execs:-?} executions, ${rate:-?} exec/s, ${cov:-no coverage line}"
if ((rc != 0)); then
	grep -aE '^==[0-9]+==|ERROR|SUMMARY|^fuzz_|Test unit written|deadly' "$log" | head -20 >&2
	echo "fuzz: $target FAILED (libFuzzer exit $rc); full log $log" >&2
	for f in $(ls -t "$artifacts" | head -3); do
		echo "replay: $bin $artifacts/$f" >&2
	done
fi
exit $rc
