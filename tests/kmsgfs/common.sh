# SPDX-License-Identifier: MIT
# common.sh - sourced by pk-kmsgfs's tests (tests/kmsgfs/test_kmsgfs_*.sh),
# on top of the udmesg tests' helpers (tests/cli/common.sh: TMP, ok, fail,
# same, finish, UDMESG, TESTGEN).
#
# Skips (exit 77) when pk-kmsgfs was not built (no libfuse3) or when not
# run as root; as root (CI) a mount that fails is a failure.
. "$PRINTK_SOURCE_DIR/tests/cli/common.sh"

KMSGFS=$PRINTK_TEST_BUILD_DIR/tools/pk-kmsgfs
PROBE=$PRINTK_TEST_BUILD_DIR/tests/kmsgfs-probe

if [ ! -x "$KMSGFS" ]; then
	echo "SKIP: pk-kmsgfs not built (libfuse3 not found; Debian: libfuse3-dev)"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: pk-kmsgfs's tests mount FUSE file systems: they need root"
	exit 77
fi
if [ ! -x "$PROBE" ]; then
	echo "FAIL: $PROBE is not built"
	exit 1
fi

FS_PIDS=()
MNTS=()
kmsgfs_cleanup() {
	local p m
	for p in "${FS_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${FS_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	for m in "${MNTS[@]}"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	rm -rf "$TMP"
}
trap kmsgfs_cleanup EXIT

# start_fs MNT ARGS...: pk-kmsgfs ARGS MNT in the background, FS_PID set,
# back once MNT is a mount point (or fail loudly after 5 s).
start_fs() {
	local mnt=$1
	shift
	mkdir -p "$mnt"
	"$KMSGFS" "$@" "$mnt" 2>"$TMP/fs.err" &
	FS_PID=$!
	FS_PIDS+=("$FS_PID")
	MNTS+=("$mnt")
	for _ in $(seq 100); do
		mountpoint -q "$mnt" && return 0
		kill -0 "$FS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: pk-kmsgfs did not mount on $mnt (FUSE unusable?)"
	cat "$TMP/fs.err"
	exit 1
}

# stop_fs: SIGTERM to the last file system started; its exit status in FS_RC.
stop_fs() {
	kill -TERM "$FS_PID"
	wait "$FS_PID"
	FS_RC=$?
}

# expect NAME WANT GOT: two strings equal.
expect() {
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1"
		echo "  expected: $(printf '%s' "$2" | cat -A | head -20)"
		echo "  got:      $(printf '%s' "$3" | cat -A | head -20)"
	fi
}

# expect_dump OK FAILED KMSG WANT GOT: kmsgfs-probe dumps the file KMSG into
# GOT; one check, "ok OK" if GOT has WANT's bytes, else "FAIL FAILED" and
# how they differ.
expect_dump() {
	"$PROBE" dump "$3" >"$5"
	checks=$((checks + 1))
	if cmp -s "$4" "$5"; then
		ok "$1"
	else
		fail "$2"
		show_diff "$4" "$5"
	fi
}

# wait_wchan PID PATTERN SECONDS: until PID sleeps in a kernel function
# matching PATTERN (request_wait_answer: a FUSE request the file system has
# not answered, i.e. a parked read; poll: in poll(2)), SECONDS at most.
wait_wchan() {
	for _ in $(seq $(($3 * 20))); do
		grep -Eq "$2" "/proc/$1/wchan" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (pid $1 is not waiting in '$2': $(cat "/proc/$1/wchan" 2>/dev/null))"
	return 1
}

# wait_gone PID SECONDS: 0 if PID exited within SECONDS.
wait_gone() {
	local i
	for i in $(seq $(($2 * 20))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}
