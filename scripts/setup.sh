#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what libprintk needs to build and test on Debian 12, as root.
# Idempotent: it only runs apt-get (update and install) when a package is missing.
#
# syslog-ng, the second syslog receiver of the tests (tests/daemon/
# test_syslog_ng.sh), cannot be installed next to rsyslog (Debian's
# syslog-ng-core conflicts with it): its package is fetched with
# `apt-get download` into $PK_TEST_CACHE (default /var/cache/libprintk-test)
# and unpacked with `dpkg-deb -x` into $PK_TEST_CACHE/syslog-ng-root, never
# installed; the libraries it needs are installed normally (above).
set -euo pipefail

packages=(
	faketime                        # libfaketime: the wall-clock time styles under a faked clock
	gcc g++ make cmake pkg-config   # toolchain, C++ for the header consumer test
	clang libclang-rt-14-dev        # second compiler, sanitizer and fuzzer runtimes
	libcmocka-dev                   # test framework
	util-linux                      # dmesg, the reference for udmesg's output
	python3                         # scripts/layers.py (the layering test)
	jq                              # checks the ,json consoles' lines (tests/test_console_json.c)
	groff-base man-db               # the manual pages' test (tests/man/test_man.sh)
	debhelper dpkg-dev fakeroot lintian   # the Debian packages (tests/install/deb.sh)
	dh-python                       # python3-printk's dependencies and byte-compilation (debian/)
	python3-pytest python3-pip      # the Python reader's tests (python/tests)
	rsyslog systemd                 # real collectors for the forwarding consoles' tests (label daemons)
	rsyslog-relp librelp-dev        # RELP: the collector's module and the optional client library
	fuse3 libfuse3-dev              # pk-kmsgfs (optional at build time; its tests need it)
	gdb                             # gcore: core files for udmesg --core's tests
	logrotate                       # the example daemon's snippet, rotated for real (tests/daemon)
	libivykis0 libnet1 libwrap0     # syslog-ng's libraries not already here (syslog-ng itself: below)
	openssl libssl3                 # TLS: the library loaded at run time, and the tests' CA and certificates
	rsyslog-openssl                 # rsyslog's TLS listeners (RFC 5425 and RELP over TLS) in the tests
	systemd-journal-remote          # the journal-remote receiver pk-forward feeds (tests/daemon)
	libspdlog-dev                   # bench/: spdlog's file sink, the baseline of the file console's figures
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}"
	if [[ $(id -u) -ne 0 ]]; then
		echo "setup: missing packages (${missing[*]}) and not root: run as root or install them" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cache=${PK_TEST_CACHE:-/var/cache/libprintk-test}
if [[ ! -x $cache/syslog-ng-root/usr/sbin/syslog-ng ]]; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "setup: syslog-ng is not unpacked in $cache/syslog-ng-root and not root: run as root" >&2
		exit 1
	fi
	echo "setup: unpacking syslog-ng-core into $cache/syslog-ng-root"
	mkdir -p "$cache/debs"
	# _apt downloads into a directory it can write.
	chown _apt "$cache/debs" 2>/dev/null || true
	(cd "$cache/debs" && apt-get download -qq syslog-ng-core)
	rm -rf "$cache/syslog-ng-root.new"
	debs=("$cache"/debs/syslog-ng-core_*.deb)
	dpkg-deb -x "${debs[-1]}" "$cache/syslog-ng-root.new"
	rm -rf "$cache/syslog-ng-root"
	mv "$cache/syslog-ng-root.new" "$cache/syslog-ng-root"
fi
