#!/usr/bin/env bash
# tools/readme_screen.sh - README's example screen, made by running it: the
# Summary of `proftop view FIXTURE` in a tmux pane of 100x30, trailing blanks
# trimmed. The block between README's "<!-- screen -->" and "<!-- /screen -->"
# lines is this output in a code fence; `make docs` rewrites it
# (--update README.md) and tests/e2e/test_docs_true.sh checks it.
#
#   tools/readme_screen.sh [--update FILE]
set -eu
BIN=${PROFTOP:-$PWD/build/proftop}
FILE=fixtures/pytorch/resnet50_workers0.pt.trace.json.gz
SOCK=pt-readme-$$
# the server's socket in a directory of our own (tmux leaves it behind)
SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/proftop-readme.XXXXXX")
export TMUX_TMPDIR=$SOCKDIR
TM() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$SOCKDIR"' EXIT
TM new-session -d -s s -x 100 -y 30 "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $FILE; sleep 30"
for _ in $(seq 200); do TM capture-pane -p -t s | grep -q "Verdict" && break; sleep 0.1; done
sleep 0.5
shot=$(TM capture-pane -p -t s | sed 's/ *$//')
TM send-keys -t s q
if [ "${1:-}" != --update ]; then
	printf '%s\n' "$shot"
	exit 0
fi
out=$2
tmp=$(mktemp "$out.XXXXXX")
SHOT=$shot awk '
	/^<!-- screen -->$/ { print; print "```"; print ENVIRON["SHOT"]; print "```"; skip = 1; next }
	/^<!-- \/screen -->$/ { skip = 0 }
	!skip { print }
' "$out" >"$tmp"
mv "$tmp" "$out"
