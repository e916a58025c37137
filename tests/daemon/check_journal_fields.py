#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The six entries the journal-remote tests send (test_journal_remote.sh,
test_journal_remote_https.sh), as journalctl -o json reads them back from
what systemd-journal-remote stored: every field exact.

usage: check_journal_fields.py FIELDS.json EMIT_PID HOSTNAME BOOT_ID
Exits 1 with what differed.
"""
import json, sys, time
path, pid, host, boot = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def val(v):
    # journalctl -o json: a string, an array of byte values, or (a field
    # the entry has more than once) an array of those.
    if isinstance(v, str):
        return v.encode()
    if v and all(isinstance(x, int) for x in v):
        return bytes(v)
    return [val(x) for x in v]

got = [{k: val(v) for k, v in json.loads(l).items()} for l in open(path) if l.strip()]
base = {"SYSLOG_IDENTIFIER": b"pk-emit", "SYSLOG_PID": pid.encode(), "TID": pid.encode(),
        "_HOSTNAME": host.encode(), "_BOOT_ID": boot.encode()}
want = [
    dict(MESSAGE=b"daemon warning\nsecond line\tand a tab", PRIORITY=b"4", SYSLOG_FACILITY=b"3",
         SUBSYSTEM=b"net", DEVICE=b"+net-eth0"),
    dict(MESSAGE=b"facility kern goes as user", PRIORITY=b"2", SYSLOG_FACILITY=b"1"),
    dict(MESSAGE="local7 notice café".encode(), PRIORITY=b"5", SYSLOG_FACILITY=b"23",
         MY_KEY=b'a"b]c\\d', X_UNDER=b"1", X9LIVES=b"2", DICT_PRIORITY=b"x", K=[b"1", b"2"]),
    dict(MESSAGE=b"debug goes too: pk-forward sends every level", PRIORITY=b"7", SYSLOG_FACILITY=b"1"),
    dict(MESSAGE=b"ctrl\x01\x1b[31m and a bad byte \xff here", PRIORITY=b"6", SYSLOG_FACILITY=b"1"),
    dict(MESSAGE=b"ends in two newlines\n", PRIORITY=b"6", SYSLOG_FACILITY=b"1"),
]
ok = len(got) == len(want)
if not ok:
    print("entries: got %d, want %d" % (len(got), len(want)))
now = time.time() * 1e6
for i, (g, w) in enumerate(zip(got, want)):
    w = dict(base, **w, PRINTK_SEQ=str(i).encode())
    # The journal's own fields, and the times (checked apart).
    rt = g.pop("__REALTIME_TIMESTAMP")
    mono = g.pop("__MONOTONIC_TIMESTAMP")
    for k in ("__CURSOR", "__SEQNUM", "__SEQNUM_ID"):
        g.pop(k, None)
    usec = g.pop("PRINTK_REALTIME_USEC")
    if rt != usec or abs(int(rt) - now) > 600e6 or int(mono) <= 0:
        print("entry %d: __REALTIME_TIMESTAMP %s, PRINTK_REALTIME_USEC %s, __MONOTONIC_TIMESTAMP %s, now %d"
              % (i, rt, usec, mono, now))
        ok = False
    if g != w:
        print("entry %d:\n  got  %r\n  want %r" % (i, sorted(g.items()), sorted(w.items())))
        ok = False
sys.exit(0 if ok else 1)
