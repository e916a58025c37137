#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg --core: the log of a process that had no log file, read out of its
# core. core-writer logs through printk() and waits with an open line; its
# core is taken with gcore (gdb) and, where core_pattern writes plain files,
# by the kernel after SIGABRT. The same program run with a log file and
# killed is the reference: udmesg prints the core's records byte for byte as
# it prints the file's, in every format, the open line included. Damaged,
# cut and foreign cores end in one line on stderr and exit status 1, never a
# crash or a hang.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

WRITER=$PRINTK_TEST_BUILD_DIR/tests/core-writer
if [ ! -x "$WRITER" ]; then
	echo "FAIL: $WRITER is not built"
	exit 1
fi

# start_writer OUT [ENV...]: run core-writer (with the arguments in $WARGS)
# in the background, its pid in $wpid, and wait until it has logged everything.
WARGS=""
start_writer() {
	local out=$1
	shift
	# shellcheck disable=SC2086 # WARGS is split on purpose
	env "$@" "$WRITER" $WARGS >"$out" 2>/dev/null &
	wpid=$!
	for _ in $(seq 200); do
		grep -q ready "$out" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "core-writer did not get ready"
	return 1
}

stop_writer() {
	kill -9 "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
}

# one_error NAME CMD...: exit status 1 (never a signal), one line on stderr
# that starts with "udmesg: ", within 20 seconds.
one_error() {
	local name=$1
	shift
	checks=$((checks + 1))
	timeout 20 "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne 1 ]; then
		fail "$name: exit $rc, expected 1"
		head -3 "$TMP/err"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q '^udmesg: ' "$TMP/err"; then
		fail "$name: not one line on stderr"
		head -5 "$TMP/err"
	else
		ok "$name"
	fi
}

# one_error_says NAME WORDS CMD...: one_error, and the line holds WORDS.
one_error_says() {
	local name=$1 words=$2
	shift 2
	one_error "$name" "$@"
	grep -qF -- "$words" "$TMP/err" || fail "$name: stderr lacks '$words': $(cat "$TMP/err")"
}

# The reference: the same records in a log file whose writer was killed.
REF=$TMP/ref.log
start_writer "$TMP/ref.out" PRINTK_OPTS="log_buf_file=$REF" || exit 1
stop_writer

# Options compared (one string each, split on spaces).
OPTIONS=("" "-r" "-x" "-J" "--kmsg" "-T" "-d" "-t" "-p" "--dictionary" "-l err,info"
	"-x -T --since @1700000001" "--no-partial" "--time-format iso")

# compare_core NAME CORE: every option prints the same bytes from the core
# as from the reference log file.
compare_core() {
	local name=$1 core=$2 opt
	for opt in "${OPTIONS[@]}"; do
		# shellcheck disable=SC2086 # the options are split on purpose
		same "$name:${opt:-default}" "$UDMESG" -B "$REF" $opt -- "$UDMESG" --core "$core" $opt
	done
	# The open line is there, last, marked.
	checks=$((checks + 1))
	if "$UDMESG" --core "$core" | tail -n 1 |
		grep -qx '\[    [0-9.]*\] the open line, never finished \[partial\]'; then
		ok "$name:open-line"
	else
		fail "$name:open-line"
		"$UDMESG" --core "$core" | tail -n 2
	fi
	# The parallel dump of the default format reads it the same way.
	same "$name:threads" env UDMESG_THREADS=1 "$UDMESG" --core "$core" -- \
		env UDMESG_THREADS=4 "$UDMESG" --core "$core"
}

# ---------------------------------------------- the writer's own core --
# A small core core-writer writes of itself (its log split over two
# segments, a false magic before it): there in every build.
WARGS="40 selfcore $TMP/self.core"
start_writer "$TMP/self.out" || exit 1
WARGS=""
spid=$wpid
stop_writer
SELF=$TMP/self.core
compare_core self "$SELF"
checks=$((checks + 1))
if "$UDMESG" --core "$SELF" --writer | tail -n 1 | grep -q "^\[ *[0-9.]*\] \[$spid:core-writer\] the open line"; then
	ok "self:writer"
else
	fail "self:writer"
	"$UDMESG" --core "$SELF" --writer | tail -n 1
fi

# A core that is mostly a hole (16 GiB of untouched memory before the log):
# the hole is skipped, not read (a few seconds per GiB read as zeros).
WARGS="40 selfcore $TMP/sparse.core sparse"
start_writer "$TMP/sparse.out" || exit 1
WARGS=""
stop_writer
if [ "$(du -k "$TMP/sparse.core" | cut -f1)" -lt 4096 ]; then
	same "sparse" "$UDMESG" -B "$REF" -x -- timeout 20 "$UDMESG" --core "$TMP/sparse.core" -x
else
	echo "skip sparse: this file system does not keep holes"
fi
rm -f "$TMP/sparse.core"

# A sanitizer's shadow memory would make real cores of the writer gigabytes.
SANITIZED=""
if grep -aqE '__(asan|tsan|msan)_init' "$WRITER"; then
	SANITIZED=1
	echo "skip gcore and SIGABRT cores: core-writer is built with a sanitizer"
fi
# "${BOUNDED[@]}" CMD...: CMD, kept from eating the machine's memory if
# udmesg reads a stream without end (not under a sanitizer, which reserves
# terabytes of address space).
BOUNDED=()
if [ -z "$SANITIZED" ]; then
	BOUNDED=(sh -c 'ulimit -v 2000000 && exec "$@"' bounded)
fi

# ------------------------------------------------------------- gcore --
GCORE=""
if [ -n "$SANITIZED" ]; then
	:
elif command -v gcore >/dev/null 2>&1; then
	start_writer "$TMP/g.out" || exit 1
	gpid=$wpid
	timeout 120 gcore -o "$TMP/gcore" "$gpid" >/dev/null 2>&1
	stop_writer
	if [ -s "$TMP/gcore.$gpid" ]; then
		GCORE=$TMP/gcore.$gpid
	else
		echo "skip gcore: it could not dump a process here (ptrace not permitted?)"
	fi
else
	echo "skip gcore: gdb is not installed"
fi

if [ -n "$GCORE" ]; then
	compare_core gcore "$GCORE"
	# --writer names the dumped process: its pid and name from the core.
	checks=$((checks + 1))
	if "$UDMESG" --core "$GCORE" --writer | tail -n 1 | grep -q "^\[ *[0-9.]*\] \[$gpid:core-writer\] the open line"; then
		ok "gcore:writer"
	else
		fail "gcore:writer"
		"$UDMESG" --core "$GCORE" --writer | tail -n 1
	fi
	# A core read from a pipe (coredumpctl dump | udmesg --core /dev/stdin).
	same "gcore:pipe" "$UDMESG" --core "$GCORE" -x -- sh -c "cat '$GCORE' | '$UDMESG' --core /dev/stdin -x"
	# Read only as far as its headers reach: a pipe that goes on after the
	# core (forever here) gives the same records, and ends.
	same "gcore:pipe-then-zeros" "$UDMESG" --core "$GCORE" -x -- \
		"${BOUNDED[@]}" timeout 20 sh -c "(cat '$GCORE'; cat /dev/zero) 2>/dev/null | '$UDMESG' --core /dev/stdin -x"
	# Headers that claim more than a pipe is read for: one line, at once.
	cp "$GCORE" "$TMP/claim"
	printf '\x00\x00\x00\x00\x00\x01\x00\x00' | dd of="$TMP/claim" bs=1 seek=72 conv=notrunc status=none
	one_error_says "error:pipe-claims-too-much" "more than 16 GiB" \
		"${BOUNDED[@]}" sh -c "(cat '$TMP/claim'; cat /dev/zero) 2>/dev/null | '$UDMESG' --core /dev/stdin"
	# The program named after the core: no warning when it is the one.
	same "gcore:program" "$UDMESG" --core "$GCORE" -- "$UDMESG" --core "$GCORE" "$WRITER"
	checks=$((checks + 1))
	if "$UDMESG" --core "$GCORE" /bin/sh >"$TMP/out" 2>"$TMP/err" && grep -q "/bin/sh is not among the files" "$TMP/err" && cmp -s "$TMP/out" <("$UDMESG" --core "$GCORE"); then
		ok "gcore:other-program-warns"
	else
		fail "gcore:other-program-warns"
		cat "$TMP/err"
	fi
	# --core-list: the one memory log, its records counted.
	checks=$((checks + 1))
	"$UDMESG" --core "$GCORE" --core-list >"$TMP/list"
	if [ "$(wc -l <"$TMP/list")" -eq 2 ] && grep -Eq '^0x[0-9a-f]{16} +[0-9]+ printk +47 \[ +1\.[0-9]{6}\]$' "$TMP/list"; then
		ok "gcore:list"
	else
		fail "gcore:list"
		cat "$TMP/list"
	fi
	# The actions that change a log refuse a core.
	expect_error "gcore:clear-refused" 1 "^udmesg: --clear changes a log: a core's log is read only$" \
		"$UDMESG" --core "$GCORE" -C
	expect_error "gcore:read-clear-refused" 1 "^udmesg: --read-clear changes a log" \
		"$UDMESG" --core "$GCORE" -c
	expect_error "gcore:with-B" 1 "mutually exclusive" "$UDMESG" --core "$GCORE" -B "$REF"
	# An AArch64 core is read alike (the log does not depend on the machine).
	cp "$GCORE" "$TMP/arm.core"
	printf '\xb7\x00' | dd of="$TMP/arm.core" bs=1 seek=18 conv=notrunc status=none
	same "gcore:aarch64" "$UDMESG" --core "$GCORE" -- "$UDMESG" --core "$TMP/arm.core"
fi

# A log that wrapped (its oldest records overwritten) and is large enough
# for udmesg's parallel dump: 12000 records in 256 KiB.
if [ -n "$GCORE" ]; then
	BIG=$TMP/big.log
	WARGS=12000
	start_writer "$TMP/big-ref.out" PRINTK_OPTS="log_buf_file=$BIG log_buf_len=256K" || exit 1
	stop_writer
	start_writer "$TMP/big.out" PRINTK_OPTS="log_buf_len=256K" || exit 1
	WARGS=""
	bpid=$wpid
	timeout 120 gcore -o "$TMP/bigcore" "$bpid" >/dev/null 2>&1
	stop_writer
	for opt in "" "-x" "-J"; do
		# shellcheck disable=SC2086 # the options are split on purpose
		same "big:${opt:-default}" env UDMESG_THREADS=4 "$UDMESG" -B "$BIG" $opt -- \
			env UDMESG_THREADS=4 "$UDMESG" --core "$TMP/bigcore.$bpid" $opt
	done
	checks=$((checks + 1))
	first=$("$UDMESG" --core "$TMP/bigcore.$bpid" | head -n 1)
	case "$first" in
	*"record 0 of"*) fail "big:wrapped: the oldest records are still there: $first" ;;
	*) ok "big:wrapped" ;;
	esac
fi

# Two logs in one core: printk's is read, though the other was written
# last; --core-list shows both.
if [ -n "$GCORE" ]; then
	WARGS="40 extra"
	start_writer "$TMP/two.out" || exit 1
	WARGS=""
	tpid=$wpid
	timeout 120 gcore -o "$TMP/twocore" "$tpid" >/dev/null 2>&1
	stop_writer
	same "two:printk-log-read" "$UDMESG" -B "$REF" -x -- "$UDMESG" --core "$TMP/twocore.$tpid" -x
	checks=$((checks + 1))
	"$UDMESG" --core "$TMP/twocore.$tpid" --core-list >"$TMP/list"
	if [ "$(wc -l <"$TMP/list")" -eq 3 ] &&
		grep -Eq '^0x[0-9a-f]{16} +[0-9]+ printk +47 \[ +1\.[0-9]{6}\] \(read\)$' "$TMP/list" &&
		grep -Eq '^0x[0-9a-f]{16} +[0-9]+ memory +1 \[ +1\.[0-9]{6}\]$' "$TMP/list"; then
		ok "two:list"
	else
		fail "two:list"
		cat "$TMP/list"
	fi
fi

# ------------------------------------------------- the kernel's dump --
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
KCORE=""
[ -z "$SANITIZED" ] || pattern="(a sanitizer build)"
case "$pattern" in
"" | "|"* | */* | "("*)
	echo "skip SIGABRT core: core_pattern '$pattern' does not write a file here"
	;;
*)
	mkdir "$TMP/abrt"
	(
		cd "$TMP/abrt" || exit 1
		ulimit -c unlimited 2>/dev/null
		start_writer "$TMP/abrt.out" || exit 1
		kill -ABRT "$wpid"
		wait "$wpid" 2>/dev/null
		exit 0
	)
	KCORE=$(find "$TMP/abrt" -maxdepth 1 -type f -name 'core*' | head -n 1)
	if [ -z "$KCORE" ]; then
		echo "skip SIGABRT core: no core file was written (ulimit -c, or a container's settings)"
	fi
	;;
esac
if [ -n "$KCORE" ]; then
	compare_core abrt "$KCORE"
fi

# ------------------------------------------------------------ errors --
one_error "error:missing" "$UDMESG" --core "$TMP/no-such-core"
: >"$TMP/empty"
one_error "error:empty" "$UDMESG" --core "$TMP/empty"
echo "not a core" >"$TMP/text"
one_error "error:text" "$UDMESG" --core "$TMP/text"
one_error "error:executable" "$UDMESG" --core "$UDMESG"
one_error "error:directory" "$UDMESG" --core "$TMP"
one_error "error:pipe-empty" sh -c "true | '$UDMESG' --core /dev/stdin"

# Devices are refused before a byte is read (/dev/zero was read until
# memory ran out), and so is a pipe that never ends: a stream that is no
# core ends at its ELF header.
one_error_says "error:dev-zero" "udmesg: /dev/zero: a character device, not a core file" \
	"${BOUNDED[@]}" "$UDMESG" --core /dev/zero
one_error_says "error:stdin-dev-null" "udmesg: /dev/stdin: a character device, not a core file" \
	"${BOUNDED[@]}" sh -c "'$UDMESG' --core /dev/stdin </dev/null"
blockdev=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1)
if [ -n "$blockdev" ]; then
	one_error_says "error:block-device" "udmesg: $blockdev: a block device, not a core file" \
		"${BOUNDED[@]}" "$UDMESG" --core "$blockdev"
else
	echo "skip error:block-device: no block device in /dev"
fi
one_error_says "error:directory-words" "udmesg: $TMP: Is a directory" "$UDMESG" --core "$TMP"
one_error_says "error:pipe-zeros" "not an ELF file" \
	"${BOUNDED[@]}" sh -c "cat /dev/zero 2>/dev/null | '$UDMESG' --core /dev/stdin"
one_error "error:list-alone" "$UDMESG" --core-list

# The damage is done to gcore's core, or else to the writer's own.
CORE=${GCORE:-$SELF}
if [ -n "$CORE" ]; then
	size=$(stat -c %s "$CORE")
	# Where the log's header is in the file (neither gcore nor core-writer
	# aligns the segments' file offsets): its magic, the last one in the
	# core (the writer's own core has a false one before it).
	hdr=$(LC_ALL=C grep -obUa 'PRTKLOG1' "$CORE" | tail -n 1 | cut -d: -f1)
	checks=$((checks + 1))
	if [ -n "$hdr" ]; then
		ok "core:header-found"
	else
		fail "core:header-found: the ring's magic is not in the core"
		hdr=0
	fi

	# Cut anywhere: in the ELF header, the program headers, the notes, the
	# log's header, its descriptors, its text.
	for cut in 10 63 64 100 1000 4096 $((hdr + 4)) $((hdr + 100)) $((hdr + 5000)) \
		$((hdr + 40000)) $((hdr + 300000)); do
		[ "$cut" -lt "$size" ] || continue
		head -c "$cut" "$CORE" >"$TMP/cut"
		one_error "error:cut-at-$cut" "$UDMESG" --core "$TMP/cut"
	done

	# No log: every magic gone.
	cp "$CORE" "$TMP/nolog"
	for at in $(LC_ALL=C grep -obUa 'PRTKLOG1' "$CORE" | cut -d: -f1); do
		printf 'XXXXXXXX' | dd of="$TMP/nolog" bs=1 seek="$at" conv=notrunc status=none
	done
	one_error "error:no-log" "$UDMESG" --core "$TMP/nolog"
	grep -q "no libprintk log in this core" "$TMP/err" || fail "error:no-log: $(cat "$TMP/err")"
	# Another ABI version, a bent geometry: the library's words for them.
	cp "$CORE" "$TMP/abi"
	printf '\x63' | dd of="$TMP/abi" bs=1 seek=$((hdr + 8)) conv=notrunc status=none
	one_error "error:abi" "$UDMESG" --core "$TMP/abi"
	cp "$CORE" "$TMP/geom"
	printf '\x07' | dd of="$TMP/geom" bs=1 seek=$((hdr + 24)) conv=notrunc status=none
	one_error "error:geometry" "$UDMESG" --core "$TMP/geom"
	# A 32-bit or foreign-machine core.
	cp "$CORE" "$TMP/ia32"
	printf '\x03\x00' | dd of="$TMP/ia32" bs=1 seek=18 conv=notrunc status=none
	one_error "error:machine" "$UDMESG" --core "$TMP/ia32"
	# Program headers that point past the end of the file, or wrap.
	cp "$CORE" "$TMP/phoff"
	printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$TMP/phoff" bs=1 seek=32 conv=notrunc status=none
	one_error "error:phoff" "$UDMESG" --core "$TMP/phoff"
	cp "$CORE" "$TMP/phnum"
	printf '\xfe\xff' | dd of="$TMP/phnum" bs=1 seek=56 conv=notrunc status=none
	one_error "error:phnum" "$UDMESG" --core "$TMP/phnum"

	# Fuzz: random bytes over the ELF headers, the notes and the log (a
	# fixed seed: the same cores every run). Anything may be printed, but
	# the exit is 0, or 1 after one line; never a signal, never a hang.
	RANDOM=4242
	for i in $(seq 40); do
		cp "$CORE" "$TMP/fuzz"
		case $((i % 4)) in
		0) off=$((RANDOM % 4096)) ;;
		1) off=$((hdr + RANDOM % 4096)) ;;
		2) off=$((hdr + 4096 + (RANDOM * 32768 + RANDOM) % 200000)) ;;
		*) off=$(((RANDOM * 32768 + RANDOM) % size)) ;;
		esac
		len=$((1 + RANDOM % 64))
		bytes=""
		for _ in $(seq "$len"); do
			bytes+=$(printf '\\x%02x' $((RANDOM % 256)))
		done
		# shellcheck disable=SC2059 # the bytes are escapes on purpose
		printf "$bytes" | dd of="$TMP/fuzz" bs=1 seek="$off" conv=notrunc status=none
		checks=$((checks + 1))
		timeout 20 "$UDMESG" --core "$TMP/fuzz" -x >/dev/null 2>"$TMP/err"
		rc=$?
		if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; }; then
			ok "fuzz-$i"
		else
			fail "fuzz-$i: $len bytes at $off: exit $rc"
			head -3 "$TMP/err"
		fi
	done
fi

finish
