#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every fuzz target (scripts/fuzz.sh) for a short, fixed time each over
# its seed corpus in tests/fuzz/corpus/<target>. Every target runs even
# after one fails; exits non-zero if any reported a crash, a hang, a
# sanitizer error or a leak (the inputs are kept in BUILD_DIR/artifacts/).
#
# usage: tests/fuzz/run.sh [BUILD_DIR]
#   BUILD_DIR  the fuzz build directory (default build/fuzz); given a build
#              directory of the main project, BUILD_DIR/fuzz is used
# environment:
#   FUZZ_SECONDS  seconds per target (default 10)
#   FUZZ_TARGETS  the targets to run (default: every tests/fuzz/fuzz_*.c)
#   and those of scripts/fuzz.sh (FUZZ_TIMEOUT, FUZZ_JOBS...)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build/fuzz}
seconds=${FUZZ_SECONDS:-10}

if [[ -f $build/CMakeCache.txt ]] &&
	! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$here" "$build/CMakeCache.txt"; then
	build=$build/fuzz
fi
if [[ -n ${FUZZ_TARGETS:-} ]]; then
	read -ra targets <<<"$FUZZ_TARGETS"
else
	targets=()
	for src in "$here"/fuzz_*.c; do
		n=$(basename "$src" .c)
		targets+=("${n#fuzz_}")
	done
fi

# A fresh working corpus per run (the seeds only): the same run every time.
work=$(mktemp -d "${TMPDIR:-/tmp}/pk_fuzz_run.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=()
for t in "${targets[@]}"; do
	FUZZ_BUILD_DIR=$build FUZZ_CORPUS=$work/$t bash "$top/scripts/fuzz.sh" "$t" "$seconds" ||
		failed+=("$t")
done
if ((${#failed[@]})); then
	echo "fuzz: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds}s each: no finding"
