#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg -F: syslog-format text (data/syslog.txt: every level, the
# facilities util-linux 2.38 knows, multi-line records, control bytes,
# UTF-8, a NUL byte, out-of-order times). Each option's output is compared
# with its golden file (current util-linux's behaviour) and, where the
# machine's util-linux dmesg supports the option on -F and agrees with
# current util-linux, with dmesg's output on the same file.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

IN=$DATA/syslog.txt
LOCAL=$DATA/syslog-local.txt
# Goldens that depend on the wall clock use a fixed boot time.
BOOT=1700000000.250000

# name | options (word-split)
cases=(
	"file-default|"
	"file-decode|-x"
	"file-raw|-r"
	"file-notime|-t"
	"file-delta|-d"
	"file-kernel|-k"
	"file-userspace|-u"
	"file-level-err|-l err"
	"file-level-list|-l err,warn"
	"file-level-errplus|-l err+"
	"file-level-pluswarn|-l +warn"
	"file-level-num|-l 3"
	"file-facility|-f daemon,user"
	"file-facility-num|-f 0,10"
	"file-decode-notime|-x -t"
	"file-decode-delta|-x -d"
	"file-notime-delta|-t -d"
	"file-reltime|-e"
	"file-reltime-delta|-e -d"
	"file-human|-H"
	"file-ctime|-T"
	"file-ctime-delta|-T -d"
	"file-iso|--time-format iso"
	"file-tf-ctime|--time-format ctime"
	"file-tf-reltime|--time-format reltime"
	"file-tf-delta|--time-format delta"
	"file-tf-notime|--time-format notime"
	"file-tf-raw|--time-format raw"
	"file-noescape|--noescape"
	"file-color|-L=always"
	"file-color-decode|--color=always -x"
	"file-color-reltime|-L=always -e"
	"file-color-delta|-L=always -d"
	"file-color-never|--color=never"
	"file-since|--since 2023-11-14 22:14:20"
	"file-until|--until 2023-11-14 22:14:20"
	"file-since-until|--since @1700000001 --until @1700000070"
	"file-level-delta|-l err -d"
	"file-kernel-delta|-k -d"
	"file-level-reltime|-l notice -e"
	"file-json|-J"
	"file-json-decode|-J -x"
	"file-nopager|-P"
	"file-bufsize|-s 8192"
)

for c in "${cases[@]}"; do
	name=${c%%|*}
	opts=${c#*|}
	case $name in
	file-since|file-until)
		# One argument with a space in it.
		golden "$name" env UDMESG_TEST_BOOTTIME=$BOOT "$UDMESG" -F "$IN" "${opts%% *}" "${opts#* }"
		;;
	*)
		# shellcheck disable=SC2086
		golden "$name" env UDMESG_TEST_BOOTTIME=$BOOT "$UDMESG" -F "$IN" $opts
		;;
	esac
done

# Facilities beyond ftp (util-linux 2.38 knows 12 names, 2.39+ all 24).
golden file-local-decode "$UDMESG" -F "$LOCAL" -x
golden file-local-facility "$UDMESG" -F "$LOCAL" -f local0,local7
golden file-local-userspace "$UDMESG" -F "$LOCAL" -u
golden file-local-json "$UDMESG" -F "$LOCAL" -J -x

# Locales: what is escaped depends on LC_CTYPE, as in util-linux.
golden file-locale-c env LC_ALL=C "$UDMESG" -F "$IN"

# --- the machine's util-linux dmesg on the same input -------------------
# Debian 12's dmesg is util-linux 2.38; udmesg follows current util-linux,
# so only the cases where both agree are compared. Skipped, and why:
#  - JSON: 2.38 prints the rest of the buffer in "msg" (fixed in 2.39);
#    2.38 has no --time-format raw, no level ranges, no "@sec" times;
#  - -e -d: 2.38 prints the delta alone, current util-linux the relative
#    time and then the raw time with its delta;
#  - a filter with a delta (-l err -d, -k -d, -l notice -e): current
#    util-linux counts the delta from the record read last, shown or not,
#    2.38 from the record shown last;
#  - iso: 2.38 drops the boot time's fraction (it prints the record's
#    microseconds), current util-linux adds both;
#  - -p: 2.38 ignores it on a file, current util-linux refuses it.
# The other wall-clock formats are compared on a copy of the input whose
# times are whole seconds: there the boot time's fraction cannot carry
# into the seconds, so 2.38 and current util-linux print the same.
if have_dmesg_file; then
	echo "# comparing with $(dmesg --version)"
	WHOLE=$TMP/whole.txt
	sed -E 's/^(<[0-9]+>\[ *[0-9]+)\.[0-9]{6}\]/\1.000000]/' "$IN" >"$WHOLE"
	for c in "${cases[@]}"; do
		name=${c%%|*}
		opts=${c#*|}
		in=$IN
		case $name in
		file-json*|file-tf-raw|file-level-errplus|file-level-pluswarn|file-since-until) continue ;;
		file-reltime-delta|file-level-delta|file-kernel-delta|file-level-reltime) continue ;;
		file-iso) continue ;;
		file-ctime*|file-tf-ctime|file-reltime|file-tf-reltime|file-human|file-color-reltime) in=$WHOLE ;;
		file-since|file-until)
			same "dmesg:$name" dmesg -F "$WHOLE" "${opts%% *}" "${opts#* }" -- \
				"$UDMESG" -F "$WHOLE" "${opts%% *}" "${opts#* }"
			continue
			;;
		esac
		# Without a test boot time both read the host's boot time.
		# shellcheck disable=SC2086
		same "dmesg:$name" dmesg -F "$in" $opts -- "$UDMESG" -F "$in" $opts
	done
	for l in C POSIX; do
		same "dmesg:locale-$l" env LC_ALL=$l dmesg -F "$IN" -- env LC_ALL=$l "$UDMESG" -F "$IN"
		same "dmesg:locale-$l-noescape" env LC_ALL=$l dmesg -F "$IN" --noescape -- \
			env LC_ALL=$l "$UDMESG" -F "$IN" --noescape
	done
	# util-linux's laxness with malformed prefixes, byte for byte, where
	# 2.38 and current util-linux agree ("<6x>" and, with --notime, "[ 12x]"
	# and "[1.2.3]" differ: see file-malformed-current below).
	printf '<>[    1.000000] b\n<6>[ 5] e\n<6>noprefix\n<14>[   12.000000]no space\n<13>[ 3.5] f\n<9999>[ 1.0] big\n<-5>[ 1.0] neg\n\0\0<6>[ 2.0] afternul\n\n\n<6>[ 3.0] blank lines before\nno newline at the end' >"$TMP/odd.txt"
	for opts in "" "-x" "-r" "-l info" "-t" "-d" "-L=always"; do
		# shellcheck disable=SC2086
		same "dmesg:malformed${opts:+ $opts}" dmesg -F "$TMP/odd.txt" $opts -- \
			"$UDMESG" -F "$TMP/odd.txt" $opts
	done
	printf '[ 12x] c\n<6>[1.2.3] d\n' >"$TMP/odd-t.txt"
	for opts in "" "-x" "-r" "-l info" "-d" "-L=always"; do
		# shellcheck disable=SC2086
		same "dmesg:malformed-time${opts:+ $opts}" dmesg -F "$TMP/odd-t.txt" $opts -- \
			"$UDMESG" -F "$TMP/odd-t.txt" $opts
	done
else
	echo "# no util-linux dmesg with --file here: comparison skipped"
fi

# Where current util-linux parses differently from 2.38: "<6x>" is no
# priority (its number must end at the '>'), and --notime still parses the
# time, so a malformed one stays in the text.
printf '<6x>[    1.500000] a\n[ 12x] c\n<6>[1.2.3] d\n<6>[ 4.25] e\n' >"$TMP/odd-current.txt"
golden file-malformed-current sh -c "for o in '' -x -t '-t -x'; do '$UDMESG' -F '$TMP/odd-current.txt' \$o; done"

# --force-prefix needs records; util-linux 2.40+ refuses it on syslog text.
expect_error file-force-prefix 1 'only records support multi-line messages' "$UDMESG" -F "$IN" -p

# -r with a filter cannot work on text (util-linux refuses it too).
expect_error file-raw-level 1 'raw can be used together with --level' "$UDMESG" -F "$IN" -r -l err

finish
