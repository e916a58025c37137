#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg -K: /dev/kmsg records separated by NUL bytes (data/kmsg.bin:
# escapes, callers T and C, dictionary lines, a continuation flag, an empty
# record, a record without its newline), read as util-linux 2.40+ reads
# them. The dictionary lines show with --dictionary only (-x decodes the
# priority and nothing more, as in dmesg). Caller ids are padded to the width of /proc/sys/kernel/pid_max, as
# util-linux does, so the goldens are normalised: no padding inside the
# brackets, and continuation lines indented by "<indent>".
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

IN=$DATA/kmsg.bin
BOOT=1700000000.250000
NORM="sed 's/\\[ *\\([TC][0-9]\\)/[\\1/g; s/^ \\{8,\\}/<indent>/'"

cases=(
	"kmsg-default|"
	"kmsg-decode|-x"
	"kmsg-raw|-r"
	"kmsg-notime|-t"
	"kmsg-delta|-d"
	"kmsg-reltime|-e"
	"kmsg-ctime|-T"
	"kmsg-iso|--time-format iso"
	"kmsg-force-prefix|-p"
	"kmsg-level|-l +notice"
	"kmsg-facility|-f kern,local0"
	"kmsg-userspace|-u"
	"kmsg-color|-L=always -x"
	"kmsg-noescape|--noescape"
	"kmsg-json|-J"
	"kmsg-json-decode|-J -x"
	"kmsg-raw-level|-r -l err+"
	"kmsg-dictionary|--dictionary"
	"kmsg-dictionary-decode|--dictionary -x -d"
)

for c in "${cases[@]}"; do
	name=${c%%|*}
	opts=${c#*|}
	# shellcheck disable=SC2086
	golden "$name" sh -c "UDMESG_TEST_BOOTTIME=$BOOT '$UDMESG' -K '$IN' $opts | $NORM"
done

# The caller field keeps util-linux's width: the length of pid_max's text.
checks=$((checks + 1))
width=$(wc -c </proc/sys/kernel/pid_max 2>/dev/null || echo 11)
line=$("$UDMESG" -K "$IN" | head -1)
expect=$(printf '[    0.000000] [%*s] Linux' "$width" T1)
if [ "${line#"$expect"}" != "$line" ]; then
	ok "kmsg-caller-width ($width)"
else
	fail "kmsg-caller-width: '$line' does not start with '$expect'"
fi

# An over-long record is refused, as util-linux does.
head -c 3000 /dev/zero | tr '\0' 'x' >"$TMP/long.kmsg"
expect_error kmsg-too-large 1 'record too large' "$UDMESG" -K "$TMP/long.kmsg"

if have_dmesg_kmsg_file; then
	echo "# comparing with $(dmesg --version)"
	for c in "${cases[@]}"; do
		name=${c%%|*}
		opts=${c#*|}
		# Wall clocks come from the host; --dictionary is udmesg's own.
		case $name in kmsg-ctime|kmsg-iso|kmsg-dictionary*) continue ;; esac
		# shellcheck disable=SC2086
		same "dmesg:$name" sh -c "dmesg -K '$IN' $opts | sed 's/\\[ *T/[T/g; s/\\[ *C/[C/g'" -- \
			sh -c "'$UDMESG' -K '$IN' $opts | sed 's/\\[ *T/[T/g; s/\\[ *C/[C/g'"
	done
else
	echo "# no util-linux dmesg with --kmsg-file here: comparison skipped"
fi

finish
