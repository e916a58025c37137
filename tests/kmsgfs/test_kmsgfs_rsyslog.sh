#!/bin/bash
# SPDX-License-Identifier: MIT
# rsyslogd with imkmsg (which reads /dev/kmsg, a fixed path), in the
# foreground with a private configuration writing JSON lines, reads a
# libprintk log through `pk-kmsgfs --exec LOG -- rsyslogd -n ...`: every
# record arrives once with its facility, severity, text and dictionary
# (imkmsg's $! properties: sequnum, SUBSYSTEM, DEVICE), including the
# records of writers started, killed and restarted while rsyslogd runs.
. "$PRINTK_SOURCE_DIR/tests/kmsgfs/common.sh"

RSYSLOGD=/usr/sbin/rsyslogd
if [ ! -x $RSYSLOGD ]; then
	echo "FAIL: rsyslogd is not installed (CI installs it: scripts/setup.sh)"
	exit 1
fi

D=$TMP/rs
L=$TMP/app.log
mkdir -p "$D/spool"
cat >"$D/rsyslog.conf" <<CONF
global(workDirectory="$D/spool" net.enableDNS="off" processInternalMessages="on"
       parser.escapeControlCharactersOnReceive="off")
module(load="imkmsg")
template(name="j" type="list" option.jsonf="on") {
 property(outname="inputname" name="inputname" format="jsonf")
 property(outname="facility" name="syslogfacility" format="jsonf")
 property(outname="severity" name="syslogseverity" format="jsonf")
 property(outname="msg" name="msg" format="jsonf")
 property(outname="kmsg" name="\$!" format="jsonf")
}
if \$inputname == "imkmsg" then action(type="omfile" file="$D/messages.jsonl" template="j")
CONF

"$PROBE" record "$L" 65536 0 3 "usb 1-1: device descriptor read/64, error -71" \
	SUBSYSTEM=usb DEVICE=c189:1 || exit 1
"$PROBE" record "$L" 65536 3 4 "myd[77]: a daemon's warning" || exit 1

"$KMSGFS" --exec "$L" -- "$RSYSLOGD" -n -f "$D/rsyslog.conf" -i "$D/rsyslogd.pid" \
	>"$TMP/rsyslogd.log" 2>&1 &
ns=$!

# wait_msg TEXT: up to 10 s for a line whose msg is TEXT.
wait_msg() {
	for _ in $(seq 200); do
		grep -qF "\"msg\":\"$1\"" "$D/messages.jsonl" 2>/dev/null && return 0
		kill -0 "$ns" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

checks=$((checks + 1))
if wait_msg "myd[77]: a daemon's warning"; then
	ok "rsyslogd's imkmsg read the log"
else
	fail "rsyslogd's imkmsg read nothing"
	cat "$TMP/rsyslogd.log"
	kill -TERM "$ns"
	finish
fi

# Writers come and go while rsyslogd follows: one stores two records and is
# killed, another stores two more, then one record per short-lived process.
exec 5> >(exec "$TESTGEN" live "$L" >/dev/null)
writer=$!
echo "6 first writer: one" >&5
echo "6 first writer: two" >&5
wait_msg "first writer: two" || true
kill -KILL "$writer" 2>/dev/null
exec 5>&-
exec 5> >(exec "$TESTGEN" live "$L" >/dev/null)
echo "5 second writer: three" >&5
echo "5 second writer: four" >&5
exec 5>&-
for i in 5 6 7; do
	"$PROBE" store "$L" 65536 6 "short writer: $i" || exit 1
done
wait_msg "short writer: 7" || true
rpid=$(cat "$D/rsyslogd.pid" 2>/dev/null)
kill -TERM "$ns"
wait_gone "$ns" 10 || { fail "rsyslogd did not stop"; kill -KILL "$ns"; }
wait "$ns"
[ -n "$rpid" ] && kill -0 "$rpid" 2>/dev/null && kill -KILL "$rpid"

# Every record of the log, once, with its fields.
"$UDMESG" -B "$L" --kmsg >"$TMP/want.kmsg"
python3 - "$TMP/want.kmsg" "$D/messages.jsonl" <<'PY' >"$TMP/check.out"
import json, sys
want = [r for r in open(sys.argv[1], "rb").read().split(b"\0") if r]
got = [json.loads(l) for l in open(sys.argv[2])]
by_seq = {}
for g in got:
    k = json.loads(g["kmsg"]) if g.get("kmsg") else {}
    by_seq.setdefault(int(k.get("sequnum", -1)), []).append((g, k))
bad = 0
for rec in want:
    head, text = rec.decode().split(";", 1)
    lines = text.rstrip("\n").split("\n")
    prio, seq = int(head.split(",")[0]), int(head.split(",")[1])
    entries = by_seq.get(seq, [])
    if len(entries) != 1:
        print("seq %d: %d entries" % (seq, len(entries))); bad += 1; continue
    g, k = entries[0]
    dict_ = dict(l[1:].split("=", 1) for l in lines[1:])
    fields = (g["msg"] == lines[0], int(g["facility"]) == prio >> 3,
              int(g["severity"]) == prio & 7,
              all(k.get(key) == v for key, v in dict_.items()))
    if not all(fields):
        print("seq %d: fields differ: %r %r" % (seq, g, fields)); bad += 1
print("%d records, %d entries, %d bad" % (len(want), len(got), bad))
PY
expect "every record once, with facility, severity, text and dictionary" \
	"9 records, 9 entries, 0 bad" "$(tail -1 "$TMP/check.out")"
grep -v "records," "$TMP/check.out" | head -5

finish
