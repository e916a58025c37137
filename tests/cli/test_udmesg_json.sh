#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg --journal-json: one JSON object per record with journald's field
# names (docs/json.md), the golden log's control bytes, invalid UTF-8 and
# dictionary included; every line an object for jq and Python's json; the
# filters apply; the option reads logs only and goes with no other output
# format. And console=fd:1,json through PRINTK_OPTS as a program gets it,
# with one warning line for a use it does not take.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

for tool in jq python3; do
	if ! command -v "$tool" >/dev/null; then
		echo "FAIL: $tool is not installed (scripts/setup.sh installs it)"
		exit 1
	fi
done

LOG=$TMP/golden.log
"$TESTGEN" golden "$LOG" || { echo "FAIL: udmesg-testgen golden"; exit 1; }

golden journal-json "$UDMESG" -B "$LOG" --journal-json
golden journal-json-level "$UDMESG" -B "$LOG" --journal-json -l err,warn

# Every line valid JSON, an object, for both parsers.
checks=$((checks + 1))
"$UDMESG" -B "$LOG" --journal-json >"$TMP/j" 2>&1
lines=$(wc -l <"$TMP/j")
if [ "$lines" -gt 0 ] &&
	[ "$(jq -c 'select(type == "object")' "$TMP/j" | wc -l)" = "$lines" ] &&
	python3 -c 'import json, sys
for l in sys.stdin.buffer:
    assert isinstance(json.loads(l.decode("utf-8", "strict")), dict)' <"$TMP/j"; then
	ok "journal-json-parses ($lines lines)"
else
	fail "journal-json-parses"
	head -5 "$TMP/j"
fi

expect_error journal-json-file 1 'journal-json reads a libprintk log' \
	"$UDMESG" -F "$DATA/syslog.txt" --journal-json
expect_error journal-json-kmsg-file 1 'journal-json reads a libprintk log' \
	"$UDMESG" -K "$DATA/kmsg.bin" --journal-json
expect_error journal-json-with-json 1 'mutually exclusive' \
	"$UDMESG" -B "$LOG" --journal-json -J
expect_error journal-json-with-kmsg 1 'mutually exclusive' \
	"$UDMESG" -B "$LOG" --journal-json --kmsg

# A program's console through PRINTK_OPTS.
PROG=$PRINTK_TEST_BUILD_DIR/tests/static-printk-plain
if [ -x "$PROG" ]; then
	checks=$((checks + 1))
	msg=$(PRINTK_OPTS='console=fd:1,json' "$PROG" 2>"$TMP/err" | jq -r 'select(.PRIORITY == "6") | .MESSAGE')
	if [ "$msg" = "hello from a static program" ] && [ ! -s "$TMP/err" ]; then
		ok "console-fd-json"
	else
		fail "console-fd-json: '$msg'"
		cat "$TMP/err"
	fi
	for opts in 'console=journal,json|for stderr, fd: and file: consoles only' \
		'console=fd:2,json,extended|not with ,extended'; do
		checks=$((checks + 1))
		PRINTK_OPTS=${opts%%|*} "$PROG" >/dev/null 2>"$TMP/err"
		want="printk: PRINTK_OPTS: bad console option 'json' (${opts#*|}), console ignored"
		if [ "$(grep -c 'PRINTK_OPTS' "$TMP/err")" = 1 ] && grep -qF "$want" "$TMP/err"; then
			ok "console-json-warns ${opts%%|*}"
		else
			fail "console-json-warns ${opts%%|*}"
			cat "$TMP/err"
		fi
	done
else
	fail "static-printk-plain is not built"
fi

finish
