#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and run the log file fuzzer (fuzz_logfile) for a bounded time over a
# copy of the seed corpus in tests/fuzz/corpus. Exits non-zero when libFuzzer
# reports a crash, a sanitizer error, a timeout (hang) or a leak; the input
# that did it is kept in BUILD_DIR/artifacts/.
#
# usage: tests/fuzz/run.sh [BUILD_DIR]
#   BUILD_DIR  where fuzz_logfile is or will be built (default build/fuzz);
#              given the main build directory, it uses the fuzzer built
#              there (tests/fuzz added as a subdirectory) or builds one in
#              BUILD_DIR/fuzz
# environment:
#   FUZZ_SECONDS        total fuzzing time (default 20)
#   FUZZ_TIMEOUT        seconds one input may take before it counts as a hang (5)
#   FUZZ_JOBS           parallel fuzzing processes (1)
#   FUZZ_KEEP_CORPUS=DIR     keep the grown corpus there instead of a temp dir
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build/fuzz}
seconds=${FUZZ_SECONDS:-20}
timeout=${FUZZ_TIMEOUT:-5}
jobs=${FUZZ_JOBS:-1}

# Given the main build directory (another CMake project): use the fuzzer it
# built, if tests/fuzz is one of its subdirectories, or build one below it.
if [[ -f $build/CMakeCache.txt ]] &&
	! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$here" "$build/CMakeCache.txt"; then
	if [[ -x $build/tests/fuzz/fuzz_logfile ]]; then
		bin=$build/tests/fuzz/fuzz_logfile
	else
		build=$build/fuzz
	fi
fi
if [[ -z ${bin:-} ]]; then
	# Configure once, then an incremental build every time (sources change).
	mkdir -p "$build"
	cc=${FUZZ_CC:-clang}
	if ! command -v "$cc" >/dev/null; then
		echo "fuzz: $cc not found: libFuzzer needs clang" >&2
		exit 2
	fi
	if [[ ! -f $build/CMakeCache.txt ]]; then
		cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER="$cc" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
			{ cat "$build.configure.log"; exit 2; }
	fi
	cmake --build "$build" --target fuzz_logfile -j"$(nproc)" >"$build.build.log" 2>&1 ||
		{ tail -40 "$build.build.log"; exit 2; }
	bin=$build/fuzz_logfile
fi

if [[ -n ${FUZZ_KEEP_CORPUS:-} ]]; then
	corpus=$FUZZ_KEEP_CORPUS
	mkdir -p "$corpus"
else
	corpus=$(mktemp -d "${TMPDIR:-/tmp}/pk_fuzz_corpus.XXXXXX")
	trap 'rm -rf "$corpus"' EXIT
fi
cp -n "$here"/corpus/* "$corpus"/
mkdir -p "$build/artifacts"

# Seeds are log files with their trailing zeros cut (~16-29 KiB); leave room
# to grow a little. -rss_limit_mb: every input maps at most a 1 MiB file.
args=(-max_total_time="$seconds" -timeout="$timeout" -max_len=65536 -rss_limit_mb=2048
	-artifact_prefix="$build/artifacts/" -print_final_stats=1 -detect_leaks=1)
if ((jobs > 1)); then
	args+=(-jobs="$jobs" -workers="$jobs")
fi
echo "fuzz: $bin for ${seconds}s (timeout ${timeout}s per input), corpus $corpus"
PRINTK_OPTS="console=none" "$bin" "${args[@]}" "$corpus"
rc=$?
if ((rc != 0)); then
	echo "fuzz: FAILED (libFuzzer exit $rc); reproducer in $build/artifacts/:" >&2
	ls -t "$build/artifacts" | head -5 >&2
	echo "replay: $bin $build/artifacts/<file>" >&2
fi
exit $rc
