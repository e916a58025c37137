#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The example daemon run as systemd runs it ($INVOCATION_ID set): its lines
# go to the journal's socket, each once with its priority, and neither to
# stderr nor to its log file.
#
# The unit file it ships passes systemd-analyze verify (with ExecStart at
# the built program and no man page to look for).
#
# The journal is a datagram socket of this test's at journald's fixed path
# (/run/systemd/journal/socket), on a tmpfs mounted over /run in a private
# mount namespace (unshare: needs root); what arrives is read as the native
# protocol's KEY=VALUE lines. The console itself is tested against the real
# systemd-journald by test_daemon_journald.
#
# Environment: PRINTK_TEST_BUILD_DIR (examples/pk-daemon-demo),
# PRINTK_SOURCE_DIR.
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
: "${PRINTK_SOURCE_DIR:?set PRINTK_SOURCE_DIR to the source directory}"
daemon=$(realpath -m "$PRINTK_TEST_BUILD_DIR/examples/pk-daemon-demo")

fail() { echo "FAIL: $*"; exit 1; }

[[ -x $daemon ]] || fail "$daemon is not built"
[[ $(id -u) == 0 ]] || fail "needs root (a mount namespace with its own /run)"
command -v python3 >/dev/null || fail "python3 not found"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-daemon-journal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

unit=$PRINTK_SOURCE_DIR/examples/daemon/pk-daemon-demo.service
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found (scripts/setup.sh installs systemd)"
sed -e "s|^ExecStart=.*|ExecStart=$daemon|" -e '/^Documentation=/d' "$unit" >"$tmp/pk-daemon-demo.service"
grep -qx "ExecStart=$daemon" "$tmp/pk-daemon-demo.service" || fail "$unit has no ExecStart="
systemd-analyze verify "$tmp/pk-daemon-demo.service" >"$tmp/verify" 2>&1 || true
[[ ! -s $tmp/verify ]] || { cat "$tmp/verify"; fail "systemd-analyze verify complained about $unit"; }

cat >"$tmp/receiver.py" <<'PY'
# Receive native-protocol datagrams until the daemon's last line, or 120 s.
import socket, sys
out, ready = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/run/systemd/journal/socket")
s.settimeout(120)
open(ready, "w").close()
with open(out, "w") as f:
    while True:
        try:
            data = s.recv(1 << 20)
        except socket.timeout:
            sys.exit("receiver: nothing for 120 s")
        fields = dict(l.split("=", 1) for l in data.decode().split("\n") if "=" in l)
        f.write("%s|%s|%s\n" % (fields.get("PRIORITY"), fields.get("SYSLOG_IDENTIFIER"), fields.get("MESSAGE")))
        f.flush()
        if fields.get("MESSAGE") == "pk-daemon-demo: stopped":
            break
PY

export TMPDIR_TEST=$tmp DAEMON=$daemon
unshare -m bash -euo pipefail -c '
	mount --make-rprivate /
	mount -t tmpfs tmpfs /run
	mkdir -p /run/systemd/journal
	python3 "$TMPDIR_TEST/receiver.py" "$TMPDIR_TEST/got" "$TMPDIR_TEST/ready" &
	rpid=$!
	for ((i = 0; i < 3000; i++)); do
		[[ -e $TMPDIR_TEST/ready ]] && break
		sleep 0.01
	done
	[[ -e $TMPDIR_TEST/ready ]] || { echo "FAIL: the receiver did not start"; exit 1; }
	env -u PRINTK_OPTS -u JOURNAL_STREAM INVOCATION_ID=0123456789abcdef0123456789abcdef \
		"$DAEMON" -t 2 -n 1000 -p 0 "$TMPDIR_TEST/file.log" >"$TMPDIR_TEST/stdout" 2>"$TMPDIR_TEST/stderr"
	wait $rpid
'

[[ ! -e $tmp/file.log ]] || fail "the daemon wrote its log file under systemd"
[[ ! -s $tmp/stderr && ! -s $tmp/stdout ]] || fail "the daemon wrote to stdout or stderr: $(cat "$tmp/stdout" "$tmp/stderr")"
ident=$(basename "$daemon")
expect() {
	echo "6|$ident|pk-daemon-demo: 2 workers started"
	for w in 0 1; do
		for ((n = 1; n <= 1000; n++)); do
			if ((n % 1000 == 0)); then
				echo "4|$ident|worker $w: request $n slow"
			else
				echo "6|$ident|worker $w: request $n"
			fi
		done
		echo "6|$ident|worker $w: done, 1000 requests"
	done
	echo "6|$ident|pk-daemon-demo: stopped"
}
diff <(expect | sort) <(sort "$tmp/got") >"$tmp/diff" || { head -20 "$tmp/diff"; fail "the journal got other lines"; }
echo "ok: the unit verifies; $(wc -l <"$tmp/got") lines in the journal, each once, none in the file or on stderr"
