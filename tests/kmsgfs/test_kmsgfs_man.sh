#!/bin/bash
# SPDX-License-Identifier: MIT
# man/pk-kmsgfs.1 renders without a groff warning and documents every
# option pk-kmsgfs --help lists. Skipped (77) without groff or pk-kmsgfs.
set -u
: "${PRINTK_TEST_BUILD_DIR:?}" "${PRINTK_SOURCE_DIR:?}"
page=$PRINTK_SOURCE_DIR/man/pk-kmsgfs.1
bin=$PRINTK_TEST_BUILD_DIR/tools/pk-kmsgfs
if ! command -v groff >/dev/null || [ ! -x "$bin" ]; then
	echo "SKIP: groff or pk-kmsgfs missing"
	exit 77
fi
fails=0
out=$(groff -man -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	echo "FAIL groff -ww: $out"
	fails=$((fails + 1))
fi
text=$(LC_ALL=C.UTF-8 MANWIDTH=200 groff -man -Tutf8 -P-cbou "$page" 2>/dev/null)
for opt in $("$bin" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	if ! grep -qF -- "$opt" <<<"$text"; then
		echo "FAIL $opt is not in man/pk-kmsgfs.1"
		fails=$((fails + 1))
	fi
done
echo "test_kmsgfs_man: $fails failed"
[ $fails -eq 0 ]
