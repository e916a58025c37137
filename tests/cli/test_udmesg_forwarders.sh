#!/bin/bash
# SPDX-License-Identifier: MIT
# udmesg --info on a shared log shows the forwarding consoles of the
# processes writing it, as those last published their state: a TCP console
# whose collector refuses it, one that delivers to a listening peer, and
# what is left when the writer is gone.
# shellcheck source=tests/cli/common.sh
. "$(dirname "$0")/common.sh"

# time-writer waits at most 60 s for its --wait file: no writer outlives
# the test.
WRITER=$PRINTK_TEST_BUILD_DIR/tests/time-writer
[ -x "$WRITER" ] || { echo "FAIL: $WRITER is not built"; exit 1; }

# wait_info PATTERN: until udmesg --info's forwarding lines hold a line
# equal to PATTERN (60 s at most; the printer thread publishes as it goes).
wait_info() {
	for _ in $(seq 600); do
		"$UDMESG" --info -B "$TMP/log" 2>/dev/null | grep -qxF "$1" && return 0
		sleep 0.1
	done
	"$UDMESG" --info -B "$TMP/log" | sed -n '/^forwarding:/,$p'
	return 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A collector that refuses: nothing delivered, the three records of the
# run waiting (two lines and the console's own notice), the reason in words.
port=$(free_port)
rm -f "$TMP/go"
PRINTK_OPTS="log_buf_file=$TMP/log console=syslog:tcp:127.0.0.1:$port console_drain_ms=500" \
	"$WRITER" one two "--wait=$TMP/go" >"$TMP/out" 2>&1 &
writer=$!
checks=$((checks + 1))
if wait_info "  pid $writer [syslog] cannot connect: 0 delivered, 3 waiting, 0 lost, 1 state change, last error: Connection refused"; then
	ok refused-alive
else
	fail refused-alive
fi
touch "$TMP/go"
wait $writer
checks=$((checks + 1))
if wait_info "  pid $writer [syslog] cannot connect: 0 delivered, 3 waiting, 0 lost, 1 state change, last error: Connection refused (process gone)"; then
	ok refused-gone
else
	fail refused-gone
fi

# A peer that reads: every record delivered, nothing waiting. It keeps
# what it read, to count the messages (octet-counted frames).
rm -f "$TMP/log" "$TMP/go" "$TMP/port"
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
with open(sys.argv[2], "wb") as out:
    while True:
        b = c.recv(65536)
        if not b:
            break
        out.write(b); out.flush()
' "$TMP/port" "$TMP/received" &
peer=$!
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PRINTK_OPTS="log_buf_file=$TMP/log console=syslog:tcp:127.0.0.1:$(cat "$TMP/port")" \
	"$WRITER" one two three "--wait=$TMP/go" >"$TMP/out" 2>&1 &
writer=$!
checks=$((checks + 1))
if wait_info "  pid $writer [syslog] delivering: 3 delivered, 0 waiting, 0 lost, 0 state changes"; then
	ok delivering
else
	fail delivering
fi
touch "$TMP/go"
wait $writer
wait $peer
checks=$((checks + 1))
n=$(grep -ao ' time-writer [0-9]* - \[printk@32473 seq="[0-2]"' "$TMP/received" | wc -l)
if [ "$n" = 3 ]; then ok peer-read-three; else fail peer-read-three; echo "the peer read $n messages"; fi

finish
