#!/bin/bash
# SPDX-License-Identifier: MIT
# A private systemd-journald with ReadKMsg=yes imports a libprintk log
# through `pk-kmsgfs --exec LOG -- ...`: journald runs in the namespace
# pk-kmsgfs makes (plus its own pid namespace, unshare), with its fixed
# paths (/run/systemd, /run/log, /var/log/journal, journald.conf) bound to
# this test's directory, as tests/test_daemon_journald.c runs it. Every
# record arrives with its PRIORITY and SYSLOG_FACILITY, the kernel's
# dictionary keys as _KERNEL_SUBSYSTEM/_KERNEL_DEVICE, a "name[pid]:"
# prefix of a non-kernel facility as SYSLOG_IDENTIFIER/SYSLOG_PID; a
# record stored while journald runs arrives too (epoll on the file); and
# after the log is truncated and a new log renamed over its name, the new
# log's records arrive, with no "Missed" report.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

JOURNALD=/lib/systemd/systemd-journald
if [ ! -x $JOURNALD ] || ! command -v journalctl >/dev/null; then
	echo "FAIL: systemd-journald is not installed (CI installs it: scripts/setup.sh)"
	exit 1
fi

D=$TMP/jd
L=$TMP/app.log
mkdir -p "$D/run-systemd" "$D/run-log" "$D/var-log-journal"
cat >"$D/journald.conf" <<CONF
[Journal]
Storage=volatile
ReadKMsg=yes
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=0
CONF
cat >"$D/inner.sh" <<SH
set -e
mount -t proc proc /proc
mount --bind $D/run-systemd /run/systemd
mount --bind $D/run-log /run/log
if [ -d /var/log/journal ]; then mount --bind $D/var-log-journal /var/log/journal; fi
mount --bind $D/journald.conf /etc/systemd/journald.conf
exec env SYSTEMD_LOG_TARGET=console $JOURNALD
SH

"$PROBE" record "$L" 65536 0 3 "usb 1-1: device descriptor read/64, error -71" \
	SUBSYSTEM=usb DEVICE=c189:1 || exit 1
"$PROBE" record "$L" 65536 0 6 "plain kernel line" || exit 1
"$PROBE" record "$L" 65536 3 4 "myd[77]: a daemon's warning" || exit 1
"$PROBE" record "$L" 65536 16 7 "local0 debug line" || exit 1

"$KMSGFS" --exec "$L" -- unshare --pid --fork --kill-child=SIGTERM sh "$D/inner.sh" \
	>"$TMP/journald.log" 2>&1 &
ns=$!

# journal ENTRIES: every entry as JSON, one per line (empty until it exists).
entries() {
	local j
	for j in "$D"/run-log/journal/*/; do
		[ -d "$j" ] && journalctl --directory="$j" -o json 2>/dev/null
	done
}
# wait_entry TEXT: up to 10 s for an entry whose MESSAGE is TEXT.
wait_entry() {
	for _ in $(seq 200); do
		entries | grep -qF "\"MESSAGE\":\"$1\"" && return 0
		kill -0 "$ns" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

checks=$((checks + 1))
if wait_entry "local0 debug line"; then
	ok "journald imported the log's records"
else
	fail "journald imported nothing"
	cat "$TMP/journald.log"
	entries | head
	finish
fi
"$PROBE" record "$L" 65536 0 2 "stored while journald runs" || exit 1
checks=$((checks + 1))
if wait_entry "stored while journald runs"; then
	ok "journald follows: a new record arrives"
else
	fail "a record stored while journald runs did not arrive"
fi

# The log is truncated, then a new log is renamed over its name: journald
# stops at nothing and stores the new log's records. They are numbered on
# after the last one it read (it drops a record whose number is not above
# that), so it reports no missed kernel messages either ("journald missed
# no record" below).
cp "$L" "$TMP/first.log" # for the fields' checks
truncate -s 8192 "$L"
"$PROBE" record "$TMP/new.log" 65536 0 5 "first record of the new log" || exit 1
"$PROBE" record "$TMP/new.log" 65536 0 6 "second record of the new log" || exit 1
mv -f "$TMP/new.log" "$L"
checks=$((checks + 1))
if wait_entry "first record of the new log" && wait_entry "second record of the new log"; then
	ok "journald stores the records of a log renamed over the truncated one"
else
	fail "journald did not store the new log's records"
	entries | grep -o '"MESSAGE":"[^"]*"'
fi
"$PROBE" record "$L" 65536 0 4 "stored into the new log while journald runs" || exit 1
checks=$((checks + 1))
if wait_entry "stored into the new log while journald runs"; then
	ok "journald follows the new log"
else
	fail "a record stored into the new log did not arrive"
fi
entries >"$TMP/entries.json"
# unshare ignores SIGTERM while it waits: stop journald, its child, and
# pk-kmsgfs ends with the command.
ushare=$(cat "/proc/$ns/task/$ns/children" 2>/dev/null)
jd=$(cat "/proc/${ushare% }/task/${ushare% }/children" 2>/dev/null)
checks=$((checks + 1))
if [ -n "$jd" ] && kill -TERM $jd && wait_gone "$ns" 10; then
	ok "pk-kmsgfs --exec ends when its command does"
else
	fail "pk-kmsgfs --exec did not end after journald"
	kill -KILL "$ns"
fi
wait "$ns"

# field ENTRY-TEXT KEY: the value of KEY in the entry whose MESSAGE is TEXT
# (from one flat "MESSAGE<TAB>KEY<TAB>VALUE" file: one python3 run).
python3 - "$TMP/entries.json" >"$TMP/fields.tsv" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    m = e.get("MESSAGE")
    if isinstance(m, str):
        for k, v in e.items():
            if isinstance(v, str):
                print("%s\t%s\t%s" % (m, k, v))
PY
field() {
	awk -F '\t' -v m="$1" -v k="$2" '$1 == m && $2 == k { print $3; found = 1; exit }
		END { if (!found) print "-" }' "$TMP/fields.tsv"
}
m1="usb 1-1: device descriptor read/64, error -71"
expect "kernel record: PRIORITY" 3 "$(field "$m1" PRIORITY)"
expect "kernel record: SYSLOG_FACILITY" 0 "$(field "$m1" SYSLOG_FACILITY)"
expect "kernel record: _TRANSPORT" kernel "$(field "$m1" _TRANSPORT)"
expect "kernel record: _KERNEL_SUBSYSTEM" usb "$(field "$m1" _KERNEL_SUBSYSTEM)"
expect "kernel record: _KERNEL_DEVICE" c189:1 "$(field "$m1" _KERNEL_DEVICE)"
expect "kernel record: SYSLOG_IDENTIFIER" kernel "$(field "$m1" SYSLOG_IDENTIFIER)"
expect "kernel record: _SOURCE_MONOTONIC_TIMESTAMP is the record's" \
	"$("$UDMESG" -B "$TMP/first.log" --kmsg | tr '\0' '\n' | grep -F ";$m1" | cut -d, -f3)" \
	"$(field "$m1" _SOURCE_MONOTONIC_TIMESTAMP)"
expect "plain record: PRIORITY" 6 "$(field "plain kernel line" PRIORITY)"
expect "facility 3: PRIORITY" 4 "$(field "a daemon's warning" PRIORITY)"
expect "facility 3: SYSLOG_FACILITY" 3 "$(field "a daemon's warning" SYSLOG_FACILITY)"
expect "facility 3: SYSLOG_IDENTIFIER" myd "$(field "a daemon's warning" SYSLOG_IDENTIFIER)"
expect "facility 3: SYSLOG_PID" 77 "$(field "a daemon's warning" SYSLOG_PID)"
expect "local0: SYSLOG_FACILITY" 16 "$(field "local0 debug line" SYSLOG_FACILITY)"
expect "local0: PRIORITY" 7 "$(field "local0 debug line" PRIORITY)"
expect "a record stored while journald ran: PRIORITY" 2 "$(field "stored while journald runs" PRIORITY)"
checks=$((checks + 1))
if grep -q "Missed" "$TMP/entries.json"; then
	fail "journald says it missed kernel messages"
	grep "Missed" "$TMP/entries.json" | head -3
else
	ok "journald missed no record"
fi

finish
