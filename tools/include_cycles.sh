#!/usr/bin/env bash
# tools/include_cycles.sh - finds circles of files that include each other.
# A file and its header are one unit (src/live/live.c and live.h: "live");
# unit A uses unit B when one of A's files includes one of B's headers. A
# circle is a set of units that all reach each other that way: each needs
# the others, so none can be read, tested or moved alone. The fix is a
# header of types both read (live/live_opts.h), a function moved down to
# the file that needs it, or the two units becoming one.
#
#   tools/include_cycles.sh [DIR...]   (default: src backends tui)
#
# Prints one line per circle ("circle: src/live/live src/live/live_multi")
# and exits 1, or prints nothing and exits 0.
set -u
[ $# -gt 0 ] || set -- src backends tui
files=$(find "$@" -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "include_cycles: no .c or .h files in $*" >&2; exit 2; }
for f in $files; do
	# "FILE TARGET" for every quoted include
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r t; do echo "$f $t"; done
done | awk -v files="$files" '
function unit(p) { sub(/\.[ch]$/, "", p); return p }
function dir(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
function base(p) { sub(/.*\//, "", p); return p }
# Tarjan: idx/low per unit, a stack; each component of 2+ units is a circle.
function visit(v,    i, w, c, n) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v; onst[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (onst[w] && idx[w] < low[v]) low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		c = ""; n = 0
		do { w = stack[sp--]; onst[w] = 0; c = w " " c; n++ } while (w != v)
		if (n > 1) circles[++ncircles] = c
	}
}
BEGIN {
	nf = split(files, fl, "\n")
	for (i = 1; i <= nf; i++) {
		have[fl[i]] = 1; nbase[base(fl[i])]++; bybase[base(fl[i])] = fl[i]
	}
}
{
	f = $1; t = $2; to = ""
	# relative to the file, then to src/ (-Isrc), then by a unique base name
	c1 = dir(f) "/" t; c2 = "src/" t
	if (c1 in have) to = c1
	else if (c2 in have) to = c2
	else if (t in have) to = t
	else if (nbase[base(t)] == 1) to = bybase[base(t)]
	if (to == "") next
	a = unit(f); b = unit(to)
	if (a == b || ((a, b) in seen)) next
	seen[a, b] = 1; out[a, ++nout[a]] = b; units[a] = 1; units[b] = 1
}
END {
	for (u in units) if (!(u in idx)) visit(u)
	for (i = 1; i <= ncircles; i++) {
		n = split(circles[i], m, " "); s = ""
		# sorted, for a stable message
		for (j = 1; j <= n; j++)
			for (k = j + 1; k <= n; k++)
				if (m[k] < m[j]) { x = m[j]; m[j] = m[k]; m[k] = x }
		for (j = 1; j <= n; j++) s = s " " m[j]
		print "circle:" s
	}
	exit ncircles > 0
}'
