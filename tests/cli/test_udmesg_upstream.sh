#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg in the cases of current util-linux dmesg's own test suite
# (tests/ts/dmesg): the same commands, each on inputs of ours in the same
# shapes, against golden files (golden/ul-*.out). util-linux runs them with
# a fixed boot time and TZ=GMT; so do we (UDMESG_TEST_BOOTTIME, TZ=UTC), with
# a boot time whose fraction carries into the seconds of some records.
#
#   ul-*        syslog-format text (-F): one record per priority 0..104 and
#               one of local3, times with and without fractions
#   ul-cid-*    the same with caller fields "[  T123]" and "[    C2]"
#   ul-kmsg-*   /dev/kmsg records (-K), NUL-separated
#   ul-cid-kmsg-* the same with caller=T.../C...; the padding of -K callers
#               follows pid_max, so it is taken out as util-linux's tests do
#               (and the indentation of continuation lines, which has it)
#   ul-timestamp-format-* several time formats in one command
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

export UDMESG_TEST_BOOTTIME=1300000000.654321
D=$TMP/in

mkdir -p "$D"
# Record i: priority i (then 158: local3.info), i*i*5 + i%3 seconds, a
# fraction on every third record.
awk 'BEGIN {
	for (i = 0; i <= 105; i++) {
		pri = i <= 104 ? i : 158
		us = (i % 3 == 1) ? (i * 7919) % 1000000 : 0
		t = sprintf("%5d.%06d", i * i * 5 + i % 3, us)
		cid = (i % 10 == 9) ? sprintf("C%d", i % 4) : sprintf("T%d", i * 3 + 1)
		printf "<%d>[%s] sample line %d\n", pri, t, i >"'"$D"'/syslog.txt"
		printf "<%d>[%s] [%6s] sample line %d\n", pri, t, cid, i >"'"$D"'/cid.txt"
		usec = sprintf("%d%06d", i * i * 5 + i % 3, us) + 0
		printf "%d,%d,%.0f,-;sample line %d\n%c", pri, i, usec, i, 0 >"'"$D"'/kmsg.bin"
		printf "%d,%d,%.0f,-,caller=%s;sample line %d\n%c", pri, i, usec, cid, i, 0 >"'"$D"'/cid-kmsg.bin"
	}
}'
printf '<13>[    3.141592] alpha\nbeta\n<28>[    6.283185] gamma\ndelta\nepsilon\n<3>[    9.424777] zeta\n' \
	>"$D/newlines.txt"
printf '<13>[    3.141592] [   T17] alpha\nbeta\n<28>[    6.283185] [    C1] gamma\ndelta\nepsilon\n<3>[    9.424777] [  T204] zeta\n' \
	>"$D/cid-newlines.txt"
printf '13,0,3141592,-;alpha\\x0abeta\n\000''28,1,6283185,-;gamma\n\000''3,2,9424777,-;zeta\n\000' \
	>"$D/kmsg-newlines.bin"
printf '13,0,3141592,-,caller=T17;alpha\\x0abeta\n\000''28,1,6283185,-,caller=C1;gamma\n\000''3,2,9424777,-,caller=T204;zeta\n\000' \
	>"$D/cid-kmsg-newlines.bin"

UNPAD="sed 's/\\[ *T/[T/g; s/\\[ *C/[C/g; s/^ *beta\$/<indent>beta/'"

# run NAME IN CMDS: golden NAME.out of the shell commands CMDS, where $U is
# udmesg and $IN the input, stderr kept out as util-linux's tests keep it.
run() {
	local name=$1 in=$2 cmds=$3
	cmds="{ $cmds; } ; true"
	case $name in cid-kmsg*) cmds="{ $cmds; } | $UNPAD" ;; esac
	golden "ul-$name" env U="$UDMESG" IN="$in" sh -c "$cmds"
}

for kind in "" cid- kmsg- cid-kmsg-; do
	case $kind in
	"") in=$D/syslog.txt nl=$D/newlines.txt src=-F long=--file ;;
	cid-) in=$D/cid.txt nl=$D/cid-newlines.txt src=-F long=--file ;;
	kmsg-) in=$D/kmsg.bin nl=$D/kmsg-newlines.bin src=-K long=--kmsg-file ;;
	cid-kmsg-) in=$D/cid-kmsg.bin nl=$D/cid-kmsg-newlines.bin src=-K long=--kmsg-file ;;
	esac
	run "${kind}colors" "$in" "\$U --color=always $src \"\$IN\" -x 2>/dev/null"
	run "${kind}console-levels" "$in" \
		"for i in -1 0 1 2 3 4 5 6 7 8; do \$U $src \"\$IN\" -l \$i 2>/dev/null; done"
	run "${kind}decode" "$in" "\$U --decode $long \"\$IN\" 2>/dev/null"
	run "${kind}delta" "$in" "\$U --show-delta $long \"\$IN\" 2>/dev/null"
	run "${kind}facilities" "$in" \
		"for i in \$(seq -1 24); do \$U $src \"\$IN\" -f \$i 2>/dev/null; done"
	run "${kind}indentation" "$nl" "\$U $src \"\$IN\" 2>&1; \$U $src \"\$IN\" -x 2>&1
		for f in delta notime reltime ctime iso; do \$U --time-format=\$f $long \"\$IN\" 2>&1; done"
	run "${kind}json" "$in" "\$U -J $src \"\$IN\" 2>/dev/null"
	run "${kind}limit" "$in" "\$U --since @1300000001.2 --until @1300003000 $src \"\$IN\" 2>&1"
done

for kind in "" kmsg-; do
	case $kind in
	"") in=$D/syslog.txt src=-F ;;
	kmsg-) in=$D/kmsg.bin src=-K ;;
	esac
	tf="\$U $src \"\$IN\""
	run "${kind}timestamp-format-multiple" "$in" \
		"$tf --time-format raw --time-format ctime --time-format iso 2>/dev/null"
	run "${kind}timestamp-format-delta" "$in" "$tf --time-format iso --time-format delta 2>/dev/null"
	run "${kind}timestamp-format-delta-ctime" "$in" \
		"$tf --time-format reltime --time-format delta --time-format ctime 2>/dev/null"
	run "${kind}timestamp-format-delta-raw" "$in" \
		"$tf --time-format raw --time-format ctime --time-format delta 2>/dev/null"
	run "${kind}timestamp-format-delta-notime" "$in" "$tf -d -t 2>/dev/null; $tf -t -d 2>/dev/null"
done

# The merging rules one by one (util-linux's order: --notime, -d with -T,
# then a bare delta with raw or ctime; anything else side by side; one
# record is enough).
printf '<6>[   12.500000] x\n' >"$D/one.txt"
checks=$((checks + 1))
: >"$TMP/rules"
for opts in "-t" "-d" "-t -d" "-d -t" "--time-format delta -t" "-T -d" "-d -T" \
	"--time-format delta --time-format raw" "--time-format ctime --time-format delta" \
	"--time-format iso -d" "-e -d" "-T -T" "--time-format raw -d" "-t -T" "-H -x" \
	"--time-format notime --time-format iso" "-J -T -d"; do
	# shellcheck disable=SC2086
	printf '%s: %s\n' "$opts" "$("$UDMESG" -F "$D/one.txt" $opts 2>&1 | tr '\n' '|')" >>"$TMP/rules"
done
cat >"$TMP/rules.expected" <<'EOF'
-t: x|
-d: [   12.500000 <    0.000000>] x|
-t -d: [<    0.000000>] x|
-d -t: [<    0.000000>] x|
--time-format delta -t: [<    0.000000>] x|
-T -d: [Sun Mar 13 07:06:53 2011 <    0.000000>] x|
-d -T: [Sun Mar 13 07:06:53 2011 <    0.000000>] x|
--time-format delta --time-format raw: [   12.500000 <    0.000000>] x|
--time-format ctime --time-format delta: [Sun Mar 13 07:06:53 2011 <    0.000000>] x|
--time-format iso -d: 2011-03-13T07:06:53,154321+00:00 [   12.500000 <    0.000000>] x|
-e -d: [Mar13 07:06] [   12.500000 <    0.000000>] x|
-T -T: [Sun Mar 13 07:06:53 2011] x|
--time-format raw -d: [   12.500000] [   12.500000 <    0.000000>] x|
-t -T: x|
-H -x: kern  :info  : [Mar13 07:06] x|
--time-format notime --time-format iso: x|
-J -T -d: {|   "dmesg": [|      {|         "pri": 6,|         "time":    12.500000,|         "msg": "x"|      }|   ]|}|
EOF
if cmp -s "$TMP/rules.expected" "$TMP/rules"; then
	ok "time-format-rules"
else
	fail "time-format-rules"
	diff -u "$TMP/rules.expected" "$TMP/rules"
fi

finish
