#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg -B: a libprintk log made by udmesg-testgen (fixed timestamps,
# callers and wall-clock offset in the header, so -T and iso are
# reproducible without any test hook). Each option against its golden file;
# --kmsg against libprintk's own kmsg_read; every text format of -B against
# udmesg -K on the --kmsg dump (and util-linux dmesg -K where it exists);
# the parallel dump against the sequential one.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

LOG=$TMP/golden.log
"$TESTGEN" golden "$LOG" || {
	echo "FAIL: udmesg-testgen golden"
	exit 1
}

cases=(
	"log-default|"
	"log-decode|-x"
	"log-raw|-r"
	"log-notime|-t"
	"log-delta|-d"
	"log-reltime|-e"
	"log-ctime|-T"
	"log-ctime-delta|-T -d"
	"log-iso|--time-format iso"
	"log-tf-delta|--time-format delta"
	"log-tf-reltime|--time-format reltime"
	"log-tf-notime|--time-format notime"
	"log-tf-raw|--time-format raw"
	"log-decode-delta|-x -d"
	"log-decode-notime|-t -x"
	"log-kernel|-k"
	"log-userspace|-u"
	"log-level-errplus|-l err+"
	"log-level-pluswarn|-l +warn"
	"log-level-list|-l err,warn"
	"log-facility|-f daemon,local0"
	"log-force-prefix|-p"
	"log-force-prefix-decode|-p -x"
	"log-noescape|--noescape"
	"log-color|-L=always"
	"log-color-decode-reltime|-L=always -x -e"
	"log-human|-H"
	"log-json|-J"
	"log-json-decode|-J -x"
	"log-caller|--caller"
	"log-caller-decode|--caller -x"
	"log-caller-json|--caller -J"
	"log-caller-force-prefix|--caller -p"
	"log-since-until|--since @1700000010 --until @1700003920"
	"log-partial-off|--no-partial"
	"log-dictionary|--dictionary"
	"log-dictionary-prefix|--dictionary -x -p"
	"log-tf-multi|--time-format raw -T --time-format iso -d"
	"log-level-delta|-l err,warn -d"
)

for c in "${cases[@]}"; do
	name=${c%%|*}
	opts=${c#*|}
	# shellcheck disable=SC2086
	golden "$name" "$UDMESG" -B "$LOG" $opts
done

# "now"-relative times: UDMESG_TEST_NOW fixes now (2023-11-14 23:15:20).
golden log-since-relative env UDMESG_TEST_NOW=1700003720 "$UDMESG" -B "$LOG" --since -10min
golden log-until-ago env UDMESG_TEST_NOW=1700003720 "$UDMESG" -B "$LOG" --until "1h 1min ago"
golden log-since-today env UDMESG_TEST_NOW=1700003720 "$UDMESG" -B "$LOG" --since today
# -T and iso follow TZ (POSIX zone strings: no tzdata needed).
golden log-ctime-tz env TZ=EST5EDT,M3.2.0,M11.1.0 "$UDMESG" -B "$LOG" -T
golden log-iso-tz env TZ=IST-5:30 "$UDMESG" -B "$LOG" --time-format iso

# The default log: log_buf_file= of PRINTK_OPTS.
golden log-default env PRINTK_OPTS="log_buf_file=$LOG" "$UDMESG"

# --kmsg: the records exactly as libprintk's kmsg_read returns them.
golden log-kmsg "$UDMESG" -B "$LOG" --kmsg
golden log-kmsg-caller "$UDMESG" -B "$LOG" --kmsg --caller
golden log-kmsg-level "$UDMESG" -B "$LOG" --kmsg -l err+
same "kmsg:library" "$TESTGEN" kmsg "$LOG" -- "$UDMESG" -B "$LOG" --kmsg
same "kmsg:library-caller" "$TESTGEN" kmsg "$LOG" caller -- "$UDMESG" -B "$LOG" --kmsg --caller

# The same records through a --kmsg dump read back with -K: the same text.
# (-K takes the wall clock from the host like util-linux, so -T, iso and
# --since stay out; caller widths follow pid_max there, so they are
# normalised.)
"$UDMESG" -B "$LOG" --kmsg --caller >"$TMP/dump.kmsg"
NORM="sed 's/\\[ *T/[T/g; s/^ \\{8,\\}/<indent>/'"
for c in "${cases[@]}"; do
	name=${c%%|*}
	opts=${c#*|}
	case $name in
	log-ctime*|log-iso*|log-since*|log-partial-off|log-tf-multi) continue ;;
	log-caller*)
		# shellcheck disable=SC2086
		same "roundtrip:$name" sh -c "'$UDMESG' -B '$LOG' $opts | $NORM" -- \
			sh -c "'$UDMESG' -K '$TMP/dump.kmsg' ${opts#--caller} | $NORM"
		continue
		;;
	esac
	# shellcheck disable=SC2086
	same "roundtrip:$name" "$UDMESG" -B "$LOG" $opts -- \
		env UDMESG_TEST_BOOTTIME=1700000000.250000 "$UDMESG" -K <("$UDMESG" -B "$LOG" --kmsg) $opts
done

if have_dmesg_kmsg_file; then
	echo "# comparing with $(dmesg --version) -K"
	for opts in "" "-x" "-r" "-t" "-d" "-k" "-u" "-l err,warn" "-p" "-J" "-L=always" "--noescape"; do
		# shellcheck disable=SC2086
		same "dmesg-K:$opts" sh -c "dmesg -K '$TMP/dump.kmsg' $opts | $NORM" -- \
			sh -c "'$UDMESG' -B '$LOG' --caller $opts | $NORM"
	done
else
	echo "# no util-linux dmesg with --kmsg-file here: dmesg -K comparison skipped"
fi

# The parallel dump of a large log prints what the sequential one does.
# (Not in builds with small ring ids: their logs are too small for it.)
BIG=$TMP/big.log
if "$TESTGEN" bench "$BIG" 4 2>/dev/null; then
	same "parallel:4-threads" env UDMESG_THREADS=1 "$UDMESG" -B "$BIG" -- \
		env UDMESG_THREADS=4 "$UDMESG" -B "$BIG"
	same "parallel:2-threads" env UDMESG_THREADS=1 "$UDMESG" -B "$BIG" -- \
		env UDMESG_THREADS=2 "$UDMESG" -B "$BIG"
	same "parallel:decode" env UDMESG_THREADS=1 "$UDMESG" -B "$BIG" -x -- \
		env UDMESG_THREADS=4 "$UDMESG" -B "$BIG" -x
	checks=$((checks + 1))
	n=$("$UDMESG" -B "$BIG" | wc -l)
	if [ "$n" -gt 40000 ]; then
		ok "parallel:records ($n)"
	else
		fail "parallel:records: only $n lines"
	fi

	# Escapes, empty and multi-line records, 1023-byte texts, seconds that
	# grow a digit, an open line at the end: threads or not, and the fast
	# path against the careful one (-K on the --kmsg dump).
	MIXED=$TMP/mixed.log
	"$TESTGEN" mixed "$MIXED"
	same "parallel:mixed" env UDMESG_THREADS=1 "$UDMESG" -B "$MIXED" -- \
		env UDMESG_THREADS=2 "$UDMESG" -B "$MIXED"
	same "parallel:mixed-vs-kmsg" "$UDMESG" -B "$MIXED" -- \
		"$UDMESG" -K <("$UDMESG" -B "$MIXED" --kmsg)
	# The fast path is taken with the default format and nothing else:
	# --time-format raw asks for that format and takes the general path.
	same "fast:vs-general" "$UDMESG" -B "$MIXED" -- "$UDMESG" -B "$MIXED" --time-format raw

	# A live writer stuck inside a record: every reader stops there, as a
	# sequential read of /dev/kmsg would, though 3000 records follow it.
	STUCK=$TMP/stuck.log
	coproc STUCKGEN { "$TESTGEN" stuck "$STUCK"; }
	read -r ready <&"${STUCKGEN[0]}" || ready=
	if [ "$ready" = ready ]; then
		same "parallel:stuck-2" env UDMESG_THREADS=1 "$UDMESG" -B "$STUCK" -- \
			env UDMESG_THREADS=2 "$UDMESG" -B "$STUCK"
		same "parallel:stuck-4" env UDMESG_THREADS=1 "$UDMESG" -B "$STUCK" -- \
			env UDMESG_THREADS=4 "$UDMESG" -B "$STUCK"
		checks=$((checks + 1))
		last=$(env UDMESG_THREADS=2 "$UDMESG" -B "$STUCK" | tail -n 1)
		if [ "$last" = "[   73.950000] the last record before the stuck one" ]; then
			ok "parallel:stuck-stops"
		else
			fail "parallel:stuck-stops: last line: $last"
		fi
	else
		checks=$((checks + 1))
		fail "parallel:stuck: udmesg-testgen stuck did not get ready"
	fi
	exec {STUCKGEN[1]}>&-
	wait "$STUCKGEN_PID" 2>/dev/null || true
else
	echo "# a 4 MiB log is not possible in this build: parallel dump not tested"
fi

# --- --writer: each record's process -------------------------------------
# Two processes with names of their own wrote a log and are gone: the log's
# writer table still names them. Without --writer nothing changes.
WR=$TMP/writers.log
"$TESTGEN" writers "$WR" >"$TMP/writers.pids" || fail "udmesg-testgen writers"
read -r _ apid <<<"$(grep '^alpha ' "$TMP/writers.pids")"
read -r _ bpid <<<"$(grep '^beta ' "$TMP/writers.pids")"
checks=$((checks + 1))
want=$(printf '[%s:alpha] from alpha\n[%s:beta] from beta' "$apid" "$bpid")
got=$("$UDMESG" -B "$WR" -t --writer)
[[ $got == "$want" ]] && ok "writer-text" || { fail "writer-text"; printf '%s\n---\n%s\n' "$got" "$want"; }
checks=$((checks + 1))
got=$("$UDMESG" -B "$WR" -J --writer | tr -d ' \n')
# (the times are the writers' own clocks: not compared)
[[ $got == '{"dmesg":[{"pri":6,"time":'*',"pid":'"$apid"',"program":"alpha","msg":"fromalpha"},{"pri":6,"time":'*',"pid":'"$bpid"',"program":"beta","msg":"frombeta"}]}' ]] &&
	ok "writer-json" || { fail "writer-json"; echo "$got"; }
checks=$((checks + 1))
[[ $("$UDMESG" -B "$WR" -t) == $'from alpha\nfrom beta' ]] && ok "writer-off" || fail "writer-off"

# --- times at the ends of their ranges ----------------------------------
# A log (or -F input) may hold any 64-bit time: the realtime offset at
# INT64_MAX, a timestamp of 2^64 - 1 ns, seconds near LONG_MAX. Every time
# format prints them without overflowing (UBSan aborts the sanitizer
# build on a signed overflow).
FAR=$TMP/far.log
"$TESTGEN" far "$FAR"
printf '<6>[9223372036854775807.999999] far seconds\n<6>[-9223372036854775807.0] negative\n' \
	>"$TMP/far.txt"
golden far-times sh -c "for o in '' -T -d '-T -d' --time-format=iso --time-format=reltime -J; do
	echo \"== \$o\"; '$UDMESG' -B '$FAR' \$o || echo \"exit \$?\"
	UDMESG_TEST_BOOTTIME=1700000000.250000 '$UDMESG' -F '$TMP/far.txt' \$o || echo \"exit \$?\"
done"

finish
