#!/bin/bash
# SPDX-License-Identifier: MIT
# pk-kmsgfs's file, read and written with the system calls of a /dev/kmsg
# client (kmsgfs-probe): the bytes of each read are kmsg_read's (against
# udmesg-testgen kmsg, which reads through the library), one record per
# read, EINVAL for a short buffer (record consumed), EAGAIN, EPIPE after
# overwritten records, blocking reads woken by a new record and ended by
# SIGKILL, poll, lseek, write (and EPERM with --read-only), several logs at
# once, a log truncated or overwritten with garbage while served, and a
# clean stop on SIGTERM with a reader blocked.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

M=$TMP/mnt
L=$TMP/small.log
# A build with small ring ids cannot make these tests' larger logs.
if ! "$TESTGEN" bench "$TMP/probe.log" 4 >/dev/null 2>&1; then
	echo "SKIP: the logs of this build are too small (small ring ids)"
	exit 77
fi
"$TESTGEN" golden "$TMP/golden.log" || exit 1
"$TESTGEN" mixed "$TMP/mixed.log" || exit 1
"$PROBE" store "$L" 4096 6 "record zero" "record one" "record two" || exit 1
start_fs "$M" --log golden="$TMP/golden.log" --log mixed="$TMP/mixed.log" "$L"

# Readers in the background are waited for by what they do, never for a
# fixed time: on a loaded machine one may not even have opened its file
# after a second.
# wait_for FILE PATTERN: up to 30 s for a line of FILE matching PATTERN.
wait_for() {
	for _ in $(seq 600); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "  (waited 30 s for '$2' in $(basename "$1"))"
	return 1
}

# --- the directory and the bytes -------------------------------------------
expect "readdir" "golden.kmsg kmsg mixed.kmsg" "$(ls "$M" | tr '\n' ' ' | sed 's/ $//')"
for n in golden mixed; do
	"$TESTGEN" kmsg "$TMP/$n.log" >"$TMP/$n.want"
	expect_dump "bytes of $n.kmsg are kmsg_read's" "bytes of $n.kmsg differ from kmsg_read's" \
		"$M/$n.kmsg" "$TMP/$n.want" "$TMP/$n.got"
done

start_fs "$TMP/caller" --caller "$TMP/golden.log"
"$TESTGEN" kmsg "$TMP/golden.log" caller >"$TMP/caller.want"
"$PROBE" dump "$TMP/caller/kmsg" >"$TMP/caller.got"
checks=$((checks + 1))
if cmp -s "$TMP/caller.want" "$TMP/caller.got" && grep -q ',caller=T' "$TMP/caller.got"; then
	ok "--caller: the bytes of kmsg_read with printk.caller on"
else
	fail "--caller: bytes differ from kmsg_read's with printk.caller on"
	show_diff "$TMP/caller.want" "$TMP/caller.got"
fi
stop_fs

# --- one record per read, EINVAL, EAGAIN ------------------------------------
expect "one record per read, EINVAL consumes, EAGAIN at the end" \
	"6,0,TS,-;record zero
EINVAL
6,2,TS,-;record two
EAGAIN" "$("$PROBE" reads "$M/kmsg" 65536 10 8192 8192 | sed -E 's/^[0-9]+ bytes: (6,[0-9]+,)[0-9]+/\1TS/')"
len=$("$PROBE" reads "$M/kmsg" 8192 | sed -E 's/ bytes.*//')
expect "a buffer of exactly the record's length" "$len bytes" \
	"$("$PROBE" reads "$M/kmsg" "$len" | sed -E 's/:.*//')"
expect "one byte less is EINVAL" "EINVAL" "$("$PROBE" reads "$M/kmsg" $((len - 1)))"

# --- EPIPE after overwritten records ----------------------------------------
# A reader that read record 0, then 300 records overwrite the ring.
python3 - "$M/kmsg" "$PROBE" "$L" >"$TMP/epipe.out" <<'PY'
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
out = [os.read(fd, 8192).split(b";")[1].decode().strip()]
subprocess.run([sys.argv[2], "store", sys.argv[3], "4096", "5"] + ["overwrite %03d" % i for i in range(300)], check=True)
for _ in range(2):
    try:
        out.append(os.read(fd, 8192).split(b";")[1].decode().strip())
    except OSError as e:
        out.append({32: "EPIPE", 11: "EAGAIN"}.get(e.errno, str(e.errno)))
print(" | ".join(out))
PY
first=$("$UDMESG" -B "$L" --kmsg | tr '\0' '\n' | head -1 | sed 's/^[^;]*;//')
expect "EPIPE once after overwritten records, then the oldest" \
	"record zero | EPIPE | $first" "$(cat "$TMP/epipe.out")"

# --- a blocking read waits for the next record ------------------------------
"$PROBE" poll "$M/kmsg" 300 >"$TMP/poll0.out"
expect "poll at the end times out" "at end
timeout
EAGAIN" "$(cat "$TMP/poll0.out")"

"$PROBE" tail "$M/kmsg" >"$TMP/block.out" 2>&1 &
blocker=$!
"$PROBE" poll "$M/kmsg" 60000 >"$TMP/poll1.out" &
poller=$!
wait_for "$TMP/block.out" "^at end" && wait_wchan "$blocker" request_wait_answer 30
wait_for "$TMP/poll1.out" "^at end" && wait_wchan "$poller" poll 30
checks=$((checks + 1))
if kill -0 "$blocker" 2>/dev/null && kill -0 "$poller" 2>/dev/null; then
	ok "a blocking read and a poll wait while nothing is new"
else
	fail "a blocking read or a poll returned with nothing new"
	cat "$TMP/block.out" "$TMP/poll1.out"
fi
"$PROBE" store "$L" 4096 3 "woken up"
wait_gone "$blocker" 30 && wait_gone "$poller" 30
expect "a new record ends the blocking read" "at end
TS;woken up" "$(sed -E 's/^[0-9]+ bytes: [^;]*;/TS;/' "$TMP/block.out")"
expect "a new record wakes poll" "at end
POLLIN
TS;woken up" "$(sed -E 's/^[0-9]+ bytes: [^;]*;/TS;/' "$TMP/poll1.out")"

# --- SIGKILL and a plain signal end a blocked reader at once ----------------
"$PROBE" block "$M/golden.kmsg" >/dev/null # warm up the file
python3 - "$M/kmsg" <<'PY' >"$TMP/kill.out" 2>&1
import os, signal, sys, time
path = sys.argv[1]
def blocked_child(handler):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        if handler:
            signal.signal(signal.SIGUSR1, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        while True:
            try:
                os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError:
                pass
        os.set_blocking(fd, True)
        os.write(w, b"r") # the next read is the blocking one
        try:
            os.read(fd, 8192)
        except KeyboardInterrupt:
            os._exit(42)
        os._exit(1)
    os.close(w)
    os.read(r, 1)
    os.close(r)
    return pid
def parked(pid):
    # Blocked in the read, not on its way there (a loaded machine may take
    # seconds): the file system holds the request (FUSE's wait for it).
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            with open("/proc/%d/wchan" % pid) as f:
                if "request_wait_answer" in f.read():
                    return True
        except OSError:
            return False
        time.sleep(0.05)
    return False
for sig, handler, want in ((signal.SIGKILL, False, "killed"), (signal.SIGUSR1, True, "exit 42")):
    pid = blocked_child(handler)
    if not parked(pid):
        print("%s: the child never blocked in its read" % signal.Signals(sig).name)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        continue
    t = time.time()
    os.kill(pid, sig)
    # At once: a read that waited for a record instead would not end at
    # all (nothing is stored); 10 s leaves a loaded machine its slack.
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done or time.time() - t > 10:
            break
        time.sleep(0.01)
    took = time.time() - t
    if not done:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("%s: still blocked after %.1f s" % (signal.Signals(sig).name, took))
        continue
    got = "killed" if os.WIFSIGNALED(st) else "exit %d" % os.WEXITSTATUS(st)
    print("%s: %s" % (signal.Signals(sig).name, got))
PY
expect "a signal ends a blocked read at once" "SIGKILL: killed
SIGUSR1: exit 42" "$(cat "$TMP/kill.out")"

# --- lseek ------------------------------------------------------------------
# SEEK_DATA goes to the first record after the last clear (0 here, long
# overwritten: EPIPE, then the oldest, as /dev/kmsg does).
first=$("$UDMESG" -B "$L" -t | head -1)
expect "SEEK_END, SEEK_SET, SEEK_DATA, SEEK_HOLE" "lseek end
EAGAIN
lseek set
TS;$first
lseek data
EPIPE
lseek hole: EINVAL
TS;$first" \
	"$("$PROBE" seek "$M/kmsg" end set data hole | sed -E 's/^[0-9]+ bytes: [^;]*;/TS;/')"
"$UDMESG" -C -B "$L"
expect "SEEK_DATA after a clear: nothing" "lseek data
EAGAIN" "$("$PROBE" seek "$M/kmsg" data)"

# --- write ------------------------------------------------------------------
expect "write stores a record" "16 written" "$("$PROBE" write "$M/kmsg" $'<3>hello, world\n')"
expect "the written record, with kmsg_write's <N> rules" "<11> hello, world" \
	"$("$UDMESG" -B "$L" -r | tail -1 | sed -E 's/\[[ 0-9.]*\]//')"
start_fs "$TMP/ro" --read-only "$L"
expect "--read-only: write fails with EPERM" "EPERM" "$("$PROBE" write "$TMP/ro/kmsg" "<3>no")"
stop_fs
expect "the read-only file system stops with status 0" 0 "$FS_RC"

# --- a reader that never reads does not block the others --------------------
mkfifo "$TMP/hold.in"
"$PROBE" hold "$M/kmsg" <"$TMP/hold.in" >"$TMP/hold.out" &
holder=$!
exec 9>"$TMP/hold.in"
wait_for "$TMP/hold.out" "^holding"
expect "another reader reads while one holds the file open" "EAGAIN" \
	"$("$PROBE" seek "$M/kmsg" end | tail -1)"
exec 9>&-
wait "$holder"

# --- a log damaged while served ----------------------------------------------
cp "$TMP/mixed.log" "$TMP/victim.log"
start_fs "$TMP/bad" --log other="$TMP/golden.log" "$TMP/victim.log"
# A reader has read from it (the file system has it open) before the cut.
"$PROBE" reads "$TMP/bad/kmsg" 8192 >/dev/null
truncate -s 8192 "$TMP/victim.log"
got=$(python3 - "$TMP/bad/kmsg" <<'PY'
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
except OSError as e:
    print("open", errno.errorcode[e.errno]); sys.exit()
res = set()
for _ in range(100000):
    try:
        os.read(fd, 8192)
    except OSError as e:
        res.add(errno.errorcode[e.errno])
        if e.errno != errno.EPIPE:
            break
print(" ".join(sorted(res)) or "no error")
PY
)
checks=$((checks + 1))
case $got in
"open ENOSPC" | "open EPROTO" | "open EBADMSG" | ESTALE | EIO | EUCLEAN) ok "a truncated log gives its readers an error ($got)" ;;
*) fail "a truncated log: readers got '$got'" ;;
esac
dd if=/dev/urandom of="$TMP/victim.log" bs=4096 count=2 conv=notrunc status=none
"$PROBE" reads "$TMP/bad/kmsg" 8192 >/dev/null 2>&1
checks=$((checks + 1))
if kill -0 "$FS_PID" 2>/dev/null && "$PROBE" dump "$TMP/bad/other.kmsg" | cmp -s - "$TMP/golden.want"; then
	ok "the file system survives a damaged log and serves the others"
else
	fail "the file system did not survive a damaged log"
	cat "$TMP/fs.err"
fi
stop_fs
expect "a file system with a damaged log stops with status 0" 0 "$FS_RC"

# --- a log file replaced under its name while served --------------------------
"$PROBE" store "$TMP/rot.log" 65536 6 "old file" || exit 1
start_fs "$TMP/rot" "$TMP/rot.log"
mv "$TMP/rot.log" "$TMP/rot.log.1"
"$PROBE" store "$TMP/rot.log" 65536 6 "new file" || exit 1
"$PROBE" tail "$TMP/rot/kmsg" >"$TMP/rot.out" 2>&1 &
rotated=$!
# At the end of the new file before the next record comes, or the record
# is before its end and nothing wakes it.
wait_for "$TMP/rot.out" "^at end" && wait_wchan "$rotated" request_wait_answer 30
"$PROBE" store "$TMP/rot.log" 65536 6 "new file, later" || exit 1
wait_gone "$rotated" 30
expect "a reader of a replaced file is woken by its new records" "at end
TS;new file, later" "$(sed -E 's/^[0-9]+ bytes: [^;]*;/TS;/' "$TMP/rot.out")"
kill "$rotated" 2>/dev/null
stop_fs

# --- SIGTERM: a blocked reader gets an error, the mount goes ----------------
"$PROBE" tail "$M/kmsg" >"$TMP/term.out" &
blocked=$!
wait_for "$TMP/term.out" "^at end" && wait_wchan "$blocked" request_wait_answer 30
FS_PID=${FS_PIDS[0]}
stop_fs
wait_gone "$blocked" 30
wait "$blocked"
expect "SIGTERM: the blocked reader gets ENOTCONN" "at end
ENOTCONN" "$(cat "$TMP/term.out")"
expect "SIGTERM: status 0" 0 "$FS_RC"
checks=$((checks + 1))
if mountpoint -q "$M"; then fail "SIGTERM: still mounted"; else ok "SIGTERM: unmounted"; fi

finish
