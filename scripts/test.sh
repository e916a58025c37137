#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build everything and run every test: unit, stress and CLI suites with gcc
# (-Werror), then the same suites rebuilt with clang under ASan+UBSan and
# under TSan, a build with small ring ids (wrap-around within seconds), and a
# consumer built against the installed headers as C and C++, the Python
# reader's tests (python/tests) and the Debian packages built and used.
# Ends with one summary line: "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh || exit 1

jobs=$(nproc)
out=${PRINTK_BUILD_ROOT:-$top/build}
passed=0
failed=0
failures=()

note() { printf '\n=== %s\n' "$*"; }

# run_suite NAME CMAKE-ARGS...: configure, build, ctest; count the results.
run_suite() {
	local name=$1
	shift
	local dir=$out/$name
	note "$name: configure and build"
	mkdir -p "$dir"
	if ! cmake -S "$top" -B "$dir" -DPRINTK_WERROR=ON "$@" >"$dir.configure.log" 2>&1; then
		cat "$dir.configure.log"
		failed=$((failed + 1)); failures+=("$name: configure")
		return
	fi
	if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
		tail -50 "$dir.build.log"
		failed=$((failed + 1)); failures+=("$name: build")
		return
	fi
	note "$name: tests"
	local log=$dir.ctest.log
	# The tests with real collectors (label daemons) run in the gcc build only.
	local only=()
	[[ $name == gcc ]] || only=(-LE daemons)
	ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${only[@]}" 2>&1 | tee "$log"
	local summary
	summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -1)
	if [[ -z $summary ]]; then
		failed=$((failed + 1)); failures+=("$name: ctest did not finish")
		return
	fi
	local total fail
	total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$summary")
	fail=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$summary")
	passed=$((passed + total - fail))
	failed=$((failed + fail))
	((fail == 0)) || failures+=("$name: $fail failed")
}

mkdir -p "$out"
run_suite gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc
run_suite clang-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DPRINTK_SANITIZE=address \
	-DPRINTK_BUILD_BENCH=OFF
run_suite clang-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DPRINTK_SANITIZE=thread \
	-DPRINTK_BUILD_BENCH=OFF -DPRINTK_BUILD_EXAMPLES=OFF
run_suite small-ids-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc -DPRINTK_SANITIZE=address \
	-DPRINTK_RING_SMALL_IDS=ON -DPRINTK_BUILD_BENCH=OFF -DPRINTK_BUILD_EXAMPLES=OFF

note "python: the printk reader package (python/) over the gcc build's libprintk.so.0"
pylog=$out/python.log
PRINTK_LIBRARY=$out/gcc/libprintk.so.0 PYTHONDONTWRITEBYTECODE=1 \
	/usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests 2>&1 | tee "$pylog"
pysummary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|errors?|skipped).* in [0-9.]+s' "$pylog" | tail -1)
pypass=0 pyfail=0
[[ $pysummary =~ ([0-9]+)\ passed ]] && pypass=${BASH_REMATCH[1]}
[[ $pysummary =~ ([0-9]+)\ failed ]] && pyfail=${BASH_REMATCH[1]}
[[ $pysummary =~ ([0-9]+)\ error ]] && pyfail=$((pyfail + BASH_REMATCH[1]))
if [[ -z $pysummary ]]; then
	failed=$((failed + 1)); failures+=("python: pytest did not finish")
else
	passed=$((passed + pypass))
	failed=$((failed + pyfail))
	((pyfail == 0)) || failures+=("python: $pyfail failed")
fi

note "install: consumer built against the installed headers (C and C++)"
if bash tests/install/check.sh "$out/gcc" "$out/install"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); failures+=("install consumer")
fi

note "deb: Debian packages built, extracted into an empty root and linked against"
if bash tests/install/deb.sh; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); failures+=("debian packages")
fi

note "fuzz: every target for ${FUZZ_SECONDS:-10}s over tests/fuzz/corpus/<target>"
if bash tests/fuzz/run.sh "$out/fuzz"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); failures+=("fuzz")
fi

note "summary"
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
((failed == 0))
