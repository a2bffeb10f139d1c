#!/usr/bin/env bash
# tools/screenshots.sh - the text captures of docs/screens.md and
# docs/timeline.md: each view of `proftop view FILE` in a tmux pane of W x H
# (default 100x30), trailing blanks trimmed, printed as Markdown sections.
# Review, then paste.
#
#   tools/screenshots.sh [FILE] [W] [H] [KEYS-PER-VIEW...]
set -eu
BIN=${PROFTOP:-$PWD/build/proftop}
FILE=${1:-fixtures/pytorch/resnet50_workers0.pt.trace.json.gz}
W=${2:-100}
H=${3:-30}
SOCK=pt-shots-$$
TM() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'TM kill-server 2>/dev/null' EXIT
TM new-session -d -s s -x "$W" -y "$H" "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $FILE; sleep 30"
for _ in $(seq 100); do TM capture-pane -p -t s | grep -q "Summary" && break; sleep 0.1; done
shot() { # shot TITLE KEYS...
	local title=$1
	shift
	[ $# -gt 0 ] && TM send-keys -t s "$@"
	sleep 0.5
	printf '### %s\n\n```\n' "$title"
	TM capture-pane -p -t s | sed 's/ *$//' | cat -s
	printf '```\n\n'
}
shot "1 Summary" 1
shot "2 Operators" 2
shot "3 Kernels" 3
shot "4 Timeline" 4
shot "Timeline, S: the slowest step" S
shot "Timeline, G Right Enter: the details of a kernel" G Right Right Enter
shot "5 Memory" Escape Escape 5
shot "6 Distributed" 6
shot "7 UserDefined" 7
shot "9 Advice" 9
shot "Operators, after typing \`/conv\`" 2 / c o n v
TM send-keys -t s Escape q
