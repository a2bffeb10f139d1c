#!/usr/bin/env bash
# bench_idle_bytes.sh - what an idle live screen sends to its terminal:
# `proftop run -- minitrain --reader-ms 10` (the README's demo, run until
# stopped) in a tmux pane; once steps flow, the
# bytes proftop writes to the pane (tmux pipe-pane) are counted for DUR
# seconds with no key pressed, on Summary, Operators and the Timeline (as
# left, and following the live edge), at 200x50 and 80x24. Prints the median
# and mean bytes per second (one sample a second) beside a reference run of
# the same screen with the idle budget off (PROFTOP_SCREEN_BYTES_PER_S=0:
# every refresh drawn, what the screen sent before the budget), as a ratio.
# The target is at most 2 KB/s.
#
#   BUILD=build bench/bench_idle_bytes.sh [DUR]
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DUR=${1:-15}
BIN=$PWD/$BUILD/proftop
MT=$PWD/$BUILD/examples/minitrain
command -v tmux >/dev/null || { echo "skipped: no tmux"; exit 0; }
[ -x "$MT" ] || { echo "skipped: no $MT"; exit 0; }
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/proftop-bytes.XXXXXX")
mkdir -m 700 "$TMPD/sessions"
SOCK=pt-bytes-$$
TM() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMPD"' EXIT

wait_for() { # wait_for REGEX SECS
	for _ in $(seq $(($2 * 10))); do
		TM capture-pane -p -t b 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

# one W H KEYS BUDGET: prints "median mean" bytes/s
one() {
	local w=$1 h=$2 keys=$3 budget=$4 out=$TMPD/out
	TM new-session -d -s b -x "$w" -y "$h" -c "$TMPD" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PROFTOP_SESSION_DIR=$TMPD/sessions \
		PROFTOP_LIB=$PWD/$BUILD/libproftop.so ${budget:+PROFTOP_SCREEN_BYTES_PER_S=$budget} \
		$BIN run --log $TMPD/mt.log -- $MT --steps 0 --reader-ms 10 --log-every 0; sleep 30"
	wait_for " [1-9][0-9]* steps" 30 || { echo "0 0"; TM kill-session -t b; return; }
	# shellcheck disable=SC2086
	[ -n "$keys" ] && TM send-keys -t b $keys
	sleep 3 # past the key's own redraws
	: >"$out"
	TM pipe-pane -t b -o "cat >>$out"
	local prev=0 samples=()
	for _ in $(seq "$DUR"); do
		sleep 1
		local now
		now=$(wc -c <"$out")
		samples+=($((now - prev)))
		prev=$now
	done
	TM pipe-pane -t b
	TM send-keys -t b q
	wait_for "Perf Summary|EXIT" 20 >/dev/null
	TM kill-session -t b 2>/dev/null
	local med mean
	med=$(printf '%s\n' "${samples[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	mean=$(printf '%s\n' "${samples[@]}" | awk '{ s += $1 } END { printf "%d", s / NR }')
	echo "$med $mean"
}

printf '%-28s %-22s %-26s %s\n' "screen" "proftop (median/mean)" "no budget (median/mean)" "ratio of means"
for size in "200 50" "80 24"; do
	set -- $size
	for v in "Summary:1" "Operators:2" "Timeline:4" "Timeline, following:4 f"; do
		name=${v%%:*}
		keys=${v#*:}
		[ "$1" = 80 ] && [ "$name" != Summary ] && [ "$name" != "Timeline, following" ] && continue
		read -r bm ba < <(one "$1" "$2" "$keys" "")
		read -r rm ra < <(one "$1" "$2" "$keys" 0)
		ratio=$(awk -v a="$ba" -v b="$ra" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
		printf '%-28s %-22s %-26s %s\n' "$name ${1}x$2" "$bm / $ba B/s" "$rm / $ra B/s" "$ratio"
	done
done
