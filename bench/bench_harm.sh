#!/usr/bin/env bash
# bench/bench_harm.sh - what proftop failing costs the training job (docs/reliability.md,
# promise 1). minitrain's mean step time (its own "done ... step_ms=" figure)
# in four settings, run alternately (ROUNDS each, median), printed beside the
# run alone as ratios:
#   alone     no probe
#   probe     LD_PRELOAD=libproftop.so and no reader (flight recorder)
#   killed    under `proftop run --no-screen`, proftop killed -9 at KILL_S
#   stopped   under `proftop run --no-screen`, proftop SIGSTOPped at KILL_S
#             and only continued after the trainer finished
# After a kill or a stop the probe is left without a reader: its records go
# to the flight recorder and nothing ever waits, so killed and stopped should
# read like probe. About 40 s with the defaults.
#
#   bench/bench_harm.sh [ROUNDS]      BUILD=build STEPS=250 KILL_S=0.3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${1:-5}
STEPS=${STEPS:-250}
KILL_S=${KILL_S:-0.3}
B=$PWD/$BUILD
MINI=$B/examples/minitrain
export PROFTOP_LIB=$B/libproftop.so
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proftop-bench-harm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
args="--steps $STEPS --reader-ms 2 --log-every 0"

step_ms() { sed -n 's/.*done steps=.* step_ms=\([0-9.]*\).*/\1/p' "$1" | tail -n 1; }
# wait_done LOG: polls the trainer's log for its last line (60 s at most)
wait_done() {
	for _ in $(seq 600); do
		grep -q "done steps=" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench_harm: the trainer did not finish ($1)" >&2
	return 1
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

alone=() probe=() killed=() stopped=()
for _ in $(seq "$ROUNDS"); do
	# shellcheck disable=SC2086
	"$MINI" $args >"$TMP/a.log" 2>&1
	alone+=("$(step_ms "$TMP/a.log")")
	# shellcheck disable=SC2086
	LD_PRELOAD=$PROFTOP_LIB "$MINI" $args >"$TMP/p.log" 2>&1
	probe+=("$(step_ms "$TMP/p.log")")

	rm -f "$TMP/k.log"
	# shellcheck disable=SC2086
	"$B/proftop" run --no-screen --log "$TMP/k.log" -- "$MINI" $args >/dev/null 2>&1 &
	pid=$!
	sleep "$KILL_S"
	kill -9 $pid
	wait $pid 2>/dev/null || true
	wait_done "$TMP/k.log"
	killed+=("$(step_ms "$TMP/k.log")")

	rm -f "$TMP/s.log"
	# shellcheck disable=SC2086
	"$B/proftop" run --no-screen --log "$TMP/s.log" -- "$MINI" $args >"$TMP/s.out" 2>&1 &
	pid=$!
	sleep "$KILL_S"
	kill -STOP $pid || { cat "$TMP/s.out" "$TMP/s.log"; exit 1; }
	wait_done "$TMP/s.log"
	kill -CONT $pid
	wait $pid 2>/dev/null || true
	stopped+=("$(step_ms "$TMP/s.log")")
done

ma=$(printf '%s\n' "${alone[@]}" | median)
line() { # line LABEL VALUES...
	local label=$1
	shift
	local m
	m=$(printf '%s\n' "$@" | median)
	awk -v l="$label" -v m="$m" -v a="$ma" 'BEGIN { printf "  %-44s %7.3f ms/step  x%.3f\n", l, m, m / a }'
}
echo "minitrain $args, median of $ROUNDS alternating runs each; ratio to alone:"
line "alone" "${alone[@]}"
line "probe preloaded, no reader" "${probe[@]}"
line "proftop run, killed -9 at ${KILL_S} s" "${killed[@]}"
line "proftop run, SIGSTOPped at ${KILL_S} s" "${stopped[@]}"
