#!/bin/bash
# SPDX-License-Identifier: MIT
# pk-forward's journal-remote target parsed strictly: each malformed URL is
# one line on stderr naming what is wrong, status 1, nothing sent; an
# https:// target whose files cannot be used, or without libssl.so.3, is
# refused when it is made. The real receiver's tests are
# tests/daemon/test_journal_remote.sh and test_journal_remote_https.sh. Then the syslog TLS targets' refusals
# (their receivers' tests: tests/test_daemon_tls.c).
# shellcheck source=tests/cli/common.sh
. "$(dirname "$0")/common.sh"

FWD=$PRINTK_TEST_BUILD_DIR/tools/pk-forward
[ -x "$FWD" ] || { echo "FAIL: $FWD is not built"; exit 1; }
# A log to name (any file: the target is refused before the log is read,
# or right after it is opened).
PRINTK_OPTS="log_buf_file=$TMP/log loglevel=1" "$PRINTK_TEST_BUILD_DIR/tests/pk-emit" 1:6::x >/dev/null 2>&1 ||
	{ echo "FAIL: pk-emit did not make a log"; exit 1; }

# refused TARGET WORDS: pk-forward TARGET exits 1 with exactly
# "pk-forward: TARGET: WORDS" on stderr and nothing on stdout.
refused() {
	local target=$1 words=$2 rc
	checks=$((checks + 1))
	timeout 60 "$FWD" -o "$target" "$TMP/log" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	printf 'pk-forward: %s: %s\n' "$target" "$words" >"$TMP/want"
	if [ $rc -eq 1 ] && cmp -s "$TMP/want" "$TMP/err" && [ ! -s "$TMP/out" ]; then
		ok "refused $target"
	else
		fail "refused $target (exit $rc)"
		show_diff "$TMP/want" "$TMP/err"
	fi
}

only='bad target: only http(s)://HOST[:PORT][/] is taken: no path, query or user (the receiver'"'"'s path is /upload)'
refused journal-remote:ftp://h 'bad target: the URL must start with http:// or https://'
refused journal-remote:HTTP://h 'bad target: the URL must start with http:// or https://'
refused journal-remote:h:19532 'bad target: the URL must start with http:// or https://'
refused journal-remote: 'bad target: the URL must start with http:// or https://'
refused journal-remote:http:// 'bad target: no host'
refused journal-remote:http://:19532 'bad target: no host'
refused journal-remote:http://h:0 'bad target: the port must be a number from 1 to 65535'
refused journal-remote:http://h:65536 'bad target: the port must be a number from 1 to 65535'
refused journal-remote:http://h:019532x 'bad target: the port must be a number from 1 to 65535'
refused journal-remote:http://h: 'bad target: the port must be a number from 1 to 65535'
refused journal-remote:http://h:+1 'bad target: the port must be a number from 1 to 65535'
refused journal-remote:http://h:12a "$only"
refused journal-remote:http://h/upload "$only"
refused journal-remote:http://h/? "$only"
refused journal-remote:http://user@h "$only"
refused 'journal-remote:http://h:19532 ' "$only"
refused 'journal-remote:http://[::1' "bad target: an IPv6 address needs its closing ']'"
refused 'journal-remote:http://[]' "bad target: an IPv6 address needs its closing ']'"
refused 'journal-remote:http://[h::1]' 'bad target: not an IPv6 address in the brackets'
refused journal-remote:http://h,ca=/x 'bad target: ca=, cert=, key= and peer= are for https:// only'
refused journal-remote:http://h,peer=x 'bad target: ca=, cert=, key= and peer= are for https:// only'
refused journal-remote:http://h,bom=no 'bad target: unknown option (ca=FILE, cert=FILE, key=FILE and peer=NAME, https only)'
refused journal-remote:https://h,ca= 'bad target: ca= needs a file name'
refused journal-remote:https://h,ca=/a,ca=/b 'bad target: ca= given twice'
refused journal-remote:https://h,cert=/c 'bad target: cert= and key= go together'
refused journal-remote:https://h,key=/k 'bad target: cert= and key= go together'
refused journal-remote:https://h, 'bad target: unknown option (ca=FILE, cert=FILE, key=FILE and peer=NAME, https only)'
refused journal-remote:https://h,peer= 'bad target: peer= needs a name'
refused journal-remote:https://h,peer=a,peer=b 'bad target: peer= given twice'
refused journal-remote:https://h:19532,ca=/a,cert=/c,key=/k 'unusable: ca=/a: No such file or directory'
refused journal-remote:https://127.0.0.1,cert=/etc/hostname,key=/etc/hostname 'unusable: cert=/etc/hostname: no start line'
refused journal-remote:https://h 'h does not resolve: Name or service not known'
PRINTK_TLS_LIBSSL=/nonexistent/libssl.so.3 refused journal-remote:https://127.0.0.1 'TLS needs libssl.so.3 (Debian: libssl3)'

# The syslog TLS targets (console_net.c's, docs/forwarding.md "TLS"): a bad
# option, a missing file, or RELP over TLS without a client certificate is
# one line; without libssl.so.3 (PRINTK_TLS_LIBSSL names a missing file)
# the line says what to install.
tls_bad='invalid target: a TLS option is not one of tls, ca=FILE, cert=FILE, key=FILE, peer=NAME, or names a file that is not a readable PEM file, or relp: with ,tls lacks cert= and key='
refused tls:127.0.0.1,cafile=/x "$tls_bad"
refused tls:127.0.0.1,ca=/a,ca=/b "$tls_bad"
refused tls:127.0.0.1,ca=$TMP/missing.pem "$tls_bad"
refused tls:127.0.0.1,cert=/c "$tls_bad"
refused relp:127.0.0.1:2514,tls,ca=/x "$tls_bad"
refused relp:127.0.0.1:2514,ca=/x "$tls_bad"
PRINTK_TLS_LIBSSL=/nonexistent/libssl.so.3 refused tls:127.0.0.1 'TLS needs libssl.so.3 (Debian: libssl3)'

finish
