#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The API manual pages (man/): every symbol libprintk.so exports and every
# lower-case macro and inline function the public headers define (printk,
# pr_info, kmsg_read, pk_dev_info, ...) is named in the NAME or SYNOPSIS
# section of a page and can be looked up by name (a page of that name or an
# alias link, man/aliases); each alias's page names it; each pk_ prototype
# in a SYNOPSIS is the header's, character for character up to white space;
# each page renders with no groff warning (-ww) and through man -l; and the
# install step (component "man") makes every page and alias link.
#
# Environment: PRINTK_TEST_BUILD_DIR (libprintk.so, include/printk/version.h),
# PRINTK_SOURCE_DIR, PRINTK_CMAKE (the cmake that configured the build).
# Exits 77 (skipped) without groff.
set -euo pipefail

: "${PRINTK_TEST_BUILD_DIR:?set PRINTK_TEST_BUILD_DIR to the build directory}"
: "${PRINTK_SOURCE_DIR:?set PRINTK_SOURCE_DIR to the source directory}"
build=$PRINTK_TEST_BUILD_DIR
src=$PRINTK_SOURCE_DIR
mandir=$src/man
cmake=${PRINTK_CMAKE:-cmake}

if ! command -v groff >/dev/null; then
	echo "SKIP: groff not installed (Debian: groff-base)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}
check() { checks=$((checks + 1)); }

pages=("$mandir"/*.3 "$mandir"/*.7)

# The text of a page's NAME and SYNOPSIS sections, one output line per
# roff line: font macros' arguments joined as roff joins them (.B and .I
# with spaces, .BI .BR ... without), escapes and quotes removed,
# continuation lines joined.
synopsis_text() {
	awk '
	/^\.SH / { on = ($0 ~ /^\.SH (NAME|SYNOPSIS)/) ; next }
	!on { next }
	{
		line = $0
		while (line ~ /\\$/ && (getline nxt) > 0)
			line = substr(line, 1, length(line) - 1) nxt
		sep = " "
		if (line ~ /^\.(BI|BR|IB|IR|RB|RI) /)
			sep = ""
		if (line ~ /^\.[A-Za-z]+( |$)/) {
			if (line !~ /^\.(B|I|BI|BR|IB|IR|RB|RI) /)
				next
			sub(/^\.[A-Z]+ /, "", line)
			out = ""
			n = 0
			while (length(line)) {
				if (substr(line, 1, 1) == " ") { line = substr(line, 2); continue }
				if (substr(line, 1, 1) == "\"") {
					end = index(substr(line, 2), "\"")
					if (!end) end = length(line)
					word = substr(line, 2, end - 1)
					line = substr(line, end + 2)
				} else {
					end = index(line, " ")
					if (!end) end = length(line) + 1
					word = substr(line, 1, end - 1)
					line = substr(line, end)
				}
				out = out (n++ ? sep : "") word
			}
			line = out
		}
		gsub(/\\f[BIRP]/, "", line)
		gsub(/\\&/, "", line)
		gsub(/\\-/, "-", line)
		gsub(/\\e/, "\\", line)
		print line
	}' "$1"
}

# --- names each page documents, and the alias list ------------------------
declare -A documented=() alias_page=() page_names=()
for p in "${pages[@]}"; do
	base=$(basename "$p")
	page_names[${base%.*}]=$base
	synopsis_text "$p" >"$tmp/$base.syn"
	for w in $(grep -oE '[A-Za-z_][A-Za-z0-9_]*' "$tmp/$base.syn" | sort -u); do
		documented[$w]+="$base "
	done
done

page=
while IFS= read -r line; do
	[[ $line =~ ^# || $line =~ ^[[:space:]]*$ ]] && continue
	read -ra words <<<"$line"
	if [[ ! $line =~ ^[[:space:]] ]]; then
		page=${words[0]}
		words=("${words[@]:1}")
	fi
	for name in "${words[@]}"; do
		check
		if [[ -n ${alias_page[$name]:-} ]]; then
			fail "alias $name listed twice"
		elif [[ -n ${page_names[$name]:-} ]]; then
			fail "alias $name is also a page"
		elif [[ ! -f $mandir/$page ]]; then
			fail "alias $name: no page man/$page"
		elif [[ " ${documented[$name]:-} " != *" $page "* ]]; then
			fail "alias $name: man/$page does not name it in NAME or SYNOPSIS"
		fi
		alias_page[$name]=$page
	done
done <"$mandir/aliases"

# A name is covered when a page names it and `man NAME` finds a page. The
# names the C library owns (<printk/sprintf.h> defines them on request,
# PRINTK_KERNEL_SPRINTF) get no alias link: it would replace the C
# library's own page; pk_sprintf(3) documents them.
libc_names=" snprintf vsnprintf sprintf vsprintf "
covered() {
	local what=$1 name=$2
	check
	if [[ -z ${documented[$name]:-} ]]; then
		fail "$what $name: in no page's NAME or SYNOPSIS"
	elif [[ $libc_names == *" $name "* ]]; then
		[[ -z ${alias_page[$name]:-} ]] || fail "$what $name: an alias would replace libc's page"
	elif [[ -z ${page_names[$name]:-} && -z ${alias_page[$name]:-} ]]; then
		fail "$what $name: documented in ${documented[$name]}but no page or alias is named after it"
	fi
}

# --- every exported symbol -------------------------------------------------
lib=$build/libprintk.so
[[ -f $lib ]] || { echo "FAIL: $lib is not built"; exit 1; }
symbols=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
nsym=$(wc -w <<<"$symbols")
[[ $nsym -gt 50 ]] || fail "only $nsym symbols exported by $lib"
for s in $symbols; do
	[[ $s == pk_* ]] || fail "exported symbol $s lacks the pk_ prefix"
	covered symbol "$s"
done

# --- every lower-case macro and inline function of the public headers -----
headers=("$src"/include/printk/*.h "$build"/include/printk/version.h)
macros=$(sed -nE 's/^#[[:space:]]*define[[:space:]]+([a-z_][a-z0-9_]*).*/\1/p' "${headers[@]}" | sort -u)
inlines=$(sed -nE 's/^static inline [^(]*[ *](pk_[a-z0-9_]+)\(.*/\1/p' "${headers[@]}" | sort -u)
for m in pr_info printk kmsg_read register_console do_syslog dev_info pr_err_ratelimited; do
	grep -qx "$m" <<<"$macros" || fail "macro $m not found in the headers (is the scan broken?)"
done
for m in $macros $inlines; do
	covered macro "$m"
done

# --- SYNOPSIS prototypes are the headers' -----------------------------------
# The headers as one line: white space squeezed, the attribute macros out.
cat "${headers[@]}" | tr '\n\t' '  ' | tr -s ' ' |
	sed -E 's/PK_API //g; s/ PK_PRINTF\([0-9]+, [0-9]+\)//g; s/PK_NORETURN //g' >"$tmp/headers.txt"
nproto=0
for p in "${pages[@]}"; do
	base=$(basename "$p")
	# Prototypes may span lines: join until the closing ");".
	awk 'buf == "" && /\(/ && /,$/ { buf = $0; next }
	     buf != "" { $0 = buf " " $0; buf = "" }
	     /,$/ && /\(/ { buf = $0; next }
	     { print }' "$tmp/$base.syn" |
		tr -s ' \t' '  ' | sed -E 's/^ //' |
		grep -E '(^| |\*)pk_[A-Za-z0-9_]+\(.*\);$' >"$tmp/$base.proto" || true
	while IFS= read -r proto; do
		check
		nproto=$((nproto + 1))
		if ! grep -qF -- "${proto%;}" "$tmp/headers.txt"; then
			fail "$base: SYNOPSIS prototype not in the headers: $proto"
		fi
	done <"$tmp/$base.proto"
done
[[ $nproto -ge $nsym ]] || fail "only $nproto SYNOPSIS prototypes checked for $nsym symbols"

# --- rendering ----------------------------------------------------------
export LC_ALL=C.UTF-8 MANWIDTH=80
for p in "${pages[@]}"; do
	base=$(basename "$p")
	check
	if ! groff -man -ww -z "$p" >"$tmp/groff.out" 2>&1 || [[ -s $tmp/groff.out ]]; then
		fail "$base: groff -man -ww -z: $(head -5 "$tmp/groff.out")"
	fi
	for sec in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		check
		grep -q "^\.SH $sec\$" "$p" || grep -q "^\.SH \"$sec\"\$" "$p" || fail "$base: no $sec section"
	done
	if [[ $base == *.3 ]]; then
		for sec in CONTEXT "RETURN VALUE" ERRORS; do
			check
			grep -q "^\.SH $sec\$" "$p" || fail "$base: no $sec section"
		done
	fi
	if command -v man >/dev/null; then
		check
		if ! man -l "$p" >"$tmp/man.out" 2>"$tmp/man.err" || [[ -s $tmp/man.err ]] ||
			! grep -q "^NAME" "$tmp/man.out"; then
			fail "$base: man -l: $(head -5 "$tmp/man.err")"
		fi
	fi
done

# --- install: pages and alias links -----------------------------------------
prefix=$tmp/prefix
if "$cmake" --install "$build" --component man --prefix "$prefix" >"$tmp/install.log" 2>&1; then
	mdir=$(find "$prefix" -type d -name man3 -printf '%h\n' | head -1)
	for p in "${pages[@]}"; do
		base=$(basename "$p")
		check
		[[ -f $mdir/man${base##*.}/$base && ! -L $mdir/man${base##*.}/$base ]] ||
			fail "install: $base not installed in $mdir/man${base##*.}"
	done
	for name in "${!alias_page[@]}"; do
		target=${alias_page[$name]}
		link=$mdir/man${target##*.}/$name.${target##*.}
		check
		if [[ ! -L $link || $(readlink "$link") != "$target" || ! -f $link ]]; then
			fail "install: $link is not a link to $target"
		fi
	done
	if command -v man >/dev/null; then
		check
		man -M "$mdir" -w pk_log_read 2>/dev/null | grep -q '/man3/pk_log\.3$' ||
			fail "install: man -M ... -w pk_log_read does not find pk_log.3"
	fi
else
	check
	fail "cmake --install --component man: $(tail -5 "$tmp/install.log")"
fi

echo "test_man: ${#pages[@]} pages, ${#alias_page[@]} aliases, $nsym symbols," \
	"$(wc -w <<<"$macros $inlines") macros and inline functions, $nproto prototypes," \
	"$checks checks, $failures failed"
[[ $failures -eq 0 ]]
