#!/bin/bash
# SPDX-License-Identifier: MIT
# tls_certs.sh DIR - the certificates the TLS tests use, made with the
# openssl command in DIR (which must exist): a test CA (ca.pem) and, signed
# by it, server.pem/server.key (subjectAltName DNS:localhost and
# IP:127.0.0.1), wrongname.pem/.key (DNS:wrong.example only),
# expired.pem/.key (valid in 2020 only) and client.pem/.key (a client
# certificate, CN and DNS name "client"); another CA (other-ca.pem) and
# other.pem/.key signed by it, names as server.pem's. Keys are EC P-256:
# quick to make. Exits non-zero, saying which step, if one fails.
set -euo pipefail
d=$1
cd "$d"
q() { "$@" >/dev/null 2>>openssl.err || { echo "tls_certs.sh: failed: $*" >&2; cat openssl.err >&2; exit 1; }; }

key() { q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }

ca() { # NAME CN
	key "$1"
	q openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 3650 -subj "/CN=$2" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

cert() { # NAME CA SAN EXTKEYUSAGE [STARTDATE ENDDATE]
	key "$1"
	q openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$1"
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=%s\n%s\n' \
		"$4" "${3:+subjectAltName=$3}" >"$1.ext"
	if [ $# -ge 6 ]; then
		# openssl x509 of 3.0 cannot set dates in the past: the ca command can
		mkdir -p "ca-$1"; : >"ca-$1/index.txt"; echo 01 >"ca-$1/serial"
		cat >"ca-$1/ca.cnf" <<CNF
[ca]
default_ca = c
[c]
database = ca-$1/index.txt
serial = ca-$1/serial
new_certs_dir = ca-$1
default_md = sha256
policy = p
copy_extensions = none
[p]
commonName = supplied
CNF
		q openssl ca -batch -notext -config "ca-$1/ca.cnf" -cert "$2.pem" -keyfile "$2.key" \
			-in "$1.csr" -out "$1.pem" -startdate "$5" -enddate "$6" -extfile "$1.ext"
	else
		q openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial \
			-out "$1.pem" -days 3650 -sha256 -extfile "$1.ext"
	fi
}

ca ca "printk test CA"
ca other-ca "another CA"
cert server ca "DNS:localhost,IP:127.0.0.1" serverAuth
cert wrongname ca "DNS:wrong.example" serverAuth
cert expired ca "DNS:localhost,IP:127.0.0.1" serverAuth 20200101000000Z 20200102000000Z
cert client ca "DNS:client" clientAuth
cert other other-ca "DNS:localhost,IP:127.0.0.1" serverAuth
chmod 600 ./*.key
