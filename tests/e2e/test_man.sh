#!/usr/bin/env bash
# tests/e2e/test_man.sh - the man pages stay true to the binary: every
# command that 'proftop --help' lists has a section in docs/proftop.1 or its
# own page docs/proftop-NAME.1 (a '.\" command: NAME' line, 'attach' for
# proftop with no command), that
# section names every long option of 'proftop help NAME' (--help, common
# to all, is under OPTIONS), and every
# section is a command the binary has; every long option of 'proftop
# --help' is on the page; the page renders without warnings; and
# 'make install' puts them under PREFIX/share/man/man1.
# san: skip (texts and the install rule: nothing to sanitize)
. tests/e2e/lib.sh

MAN=docs/proftop.1
PAGES=(docs/proftop.1 docs/proftop-*.1)

# the commands of 'proftop --help': the first word of each line under
# "Commands:" up to the next blank line; "(none)" is attach
cmds=$("$PROFTOP" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit}
	on && /^  [^ ]/ {print ($1 == "(none)") ? "attach" : $1}')
if [ "$(printf '%s\n' "$cmds" | wc -l)" -ge 10 ]; then
	ok "proftop --help lists the commands ($(echo $cmds))"
else
	not_ok "proftop --help lists the commands" "got: $cmds"
fi

# the man page's text with roff's \- as -, one file per command section
cat "${PAGES[@]}" | sed 's/\\-/-/g' >"$TMP/man.txt"
awk -v dir="$TMP" '/^\.\\" command: / {f = dir "/sec." $3; next}
	/^\.SH / {f = ""} f {print > f}' "$TMP/man.txt"

longopts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

for c in $cmds; do
	if [ ! -s "$TMP/sec.$c" ]; then
		not_ok "man page has a section for '$c'"
		continue
	fi
	if [ "$c" = help ]; then
		# 'proftop help help' is the usage itself, checked as a whole below
		ok "man page has a section for 'help'"
		continue
	fi
	if ! help=$("$PROFTOP" help "$c" 2>&1); then
		not_ok "proftop help $c exits 0" "$help"
		continue
	fi
	missing=""
	# --help is every command's, under OPTIONS
	for o in $(printf '%s\n' "$help" | longopts | grep -vx -- --help); do
		grep -qF -- "$o" "$TMP/sec.$c" || missing="$missing $o"
	done
	if [ -z "$missing" ]; then
		ok "man page section '$c' names every option of 'proftop help $c'"
	else
		not_ok "man page section '$c' names every option of 'proftop help $c'" "missing:$missing"
	fi
done

# no section for a command the binary does not have
stale=""
for f in "$TMP"/sec.*; do
	c=${f##*/sec.}
	printf '%s\n' "$cmds" | grep -qx -- "$c" || stale="$stale $c"
done
if [ -z "$stale" ]; then ok "every man page section is a command of proftop --help"; else not_ok "every man page section is a command of proftop --help" "stale:$stale"; fi

missing=""
for o in $("$PROFTOP" --help | longopts); do
	grep -qF -- "$o" "$TMP/man.txt" || missing="$missing $o"
done
if [ -z "$missing" ]; then ok "man page names the options of proftop --help"; else not_ok "man page names the options of proftop --help" "missing:$missing"; fi

# exit statuses: every one that a --help text names is under EXIT STATUS
st=$(awk '/^\.SH EXIT STATUS/ {on = 1; next} /^\.SH / {on = 0} on && prev == ".TP" {print $2} {prev = $0}' "$TMP/man.txt" | tr '\n' ' ')
if [ "$st" = "0 1 2 3 " ]; then ok "EXIT STATUS lists 0 1 2 3"; else not_ok "EXIT STATUS lists 0 1 2 3" "got: $st"; fi

if command -v groff >/dev/null 2>&1; then
	out=""
	for p in "${PAGES[@]}"; do
		o=$(groff -man -Tutf8 -ww -z "$p" 2>&1) || o="$p: groff failed. $o"
		[ -z "$o" ] || out="$out$p: $o "
	done
	if [ -z "$out" ]; then
		ok "groff renders the ${#PAGES[@]} man pages without warnings"
	else
		not_ok "groff renders the man page without warnings" "$out"
	fi
else
	skip "groff renders the man page without warnings" "groff not installed"
fi

# make install: the page under PREFIX/share/man/man1 (into a DESTDIR). The
# built files are taken as they are (-o: never remade), so the test never
# rebuilds the tree under another suite.
b=$(dirname "$PROFTOP")
pages_installed() {
	local p
	for p in "${PAGES[@]}"; do
		cmp -s "$p" "$TMP/root/usr/local/share/man/man1/${p##*/}" || return 1
	done
}
keep=()
for f in "$b"/proftop "$b"/libproftop.so "$b"/examples/*; do keep+=(-o "$f"); done
if make -s "${keep[@]}" install DESTDIR="$TMP/root" PREFIX=/usr/local BUILD="$b" >"$TMP/install.log" 2>&1 &&
	pages_installed; then
	ok "make install puts the ${#PAGES[@]} man pages in PREFIX/share/man/man1"
else
	not_ok "make install puts the man page in PREFIX/share/man/man1" "$(tail -n 5 "$TMP/install.log")"
fi

done_testing
