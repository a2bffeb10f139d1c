#!/usr/bin/env bash
# san: skip  (it reads the docs; the screen it draws runs in the plain suites)
# tests/e2e/test_docs_true.sh - the docs say what the program does:
#  - README's example screen is what `proftop view` draws of the bundled
#    trace (tools/readme_screen.sh; `make docs` rewrites it);
#  - every command of `proftop --help` is in README's command list and in
#    docs/usage.md (the man page: test_man.sh);
#  - commands meant to be typed on Debian say python3 (Debian has no python);
#  - every page (README.md, examples/README.md, docs/*.md) opens with a
#    paragraph saying what it is for, stays within 300 lines and wraps at 100
#    characters (program output included: shown wrapped where it is longer).
. tests/e2e/lib.sh

if ! command -v tmux >/dev/null; then
	skip "README's screen" "no tmux"
else
	want=$(awk '/^<!-- screen -->$/ { on = 1; next } /^<!-- \/screen -->$/ { on = 0 } on' README.md | sed '1d;$d')
	got=$(PROFTOP=$PROFTOP tools/readme_screen.sh)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "README's example screen is what proftop view draws ($(printf '%s\n' "$got" | wc -l) lines)"
	else
		not_ok "README's example screen (make docs rewrites it)" "$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -n 8)"
	fi
fi

cmds=$("$PROFTOP" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }')
readme_cmds=$(awk '/^## Commands/ { on = 1 } on && /^```$/ { n++; if (n == 2) exit } on' README.md)
miss_r="" miss_u=""
for c in $cmds; do
	grep -q "^proftop $c\b" <<<"$readme_cmds" || miss_r="$miss_r $c"
	grep -q "proftop $c\b" docs/usage.md || miss_u="$miss_u $c"
done
[ -n "$cmds" ] && [ -z "$miss_r" ] && ok "README's command list has every command of --help ($(echo $cmds | wc -w))" ||
	not_ok "README's command list" "missing:$miss_r"
[ -n "$cmds" ] && [ -z "$miss_u" ] && ok "docs/usage.md describes every command of --help" ||
	not_ok "docs/usage.md's commands" "missing:$miss_u"

usage_cmds=$(awk '/^## Commands/ { on = 1 } on && /^```$/ { n++; if (n == 2) exit } on' docs/usage.md)
[ "$readme_cmds" = "$usage_cmds" ] && ok "README and docs/usage.md give one command list" ||
	not_ok "one command list" "$(diff <(printf '%s\n' "$readme_cmds") <(printf '%s\n' "$usage_cmds") | head -n 6)"

bare=$(grep -n -- '-- python \|^python \| python train' README.md docs/*.md | grep -v 'python3\|\.venv/bin/python' | head -n 5)
[ -z "$bare" ] && ok "commands to type say python3" || not_ok "commands to type say python3" "$bare"
# the pages' shape: a title, then what the page is for; <= 300 lines; <= 100 columns
shape=$(python3 - README.md examples/README.md docs/*.md <<'PY'
import sys
for p in sys.argv[1:]:
    lines = open(p, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > 300:
        print("%s: %d lines (300 at most)" % (p, len(lines)))
    for i, l in enumerate(lines):
        if len(l) > 100:
            print("%s:%d: %d characters (100 at most)" % (p, i + 1, len(l)))
    if len(lines) < 3 or not lines[0].startswith("# ") or lines[1] != "" or \
            not lines[2][:1].isalnum() and lines[2][:1] not in "`*(":
        print("%s: does not open with a title and a paragraph saying what it is for" % p)
PY
)
n=$(ls README.md examples/README.md docs/*.md | wc -l)
[ -z "$shape" ] && ok "all $n pages open with what they are for, within 300 lines of 100 columns" ||
	not_ok "the pages' shape" "$(printf '%s\n' "$shape" | head -n 12)"
done_testing
