#!/usr/bin/env bash
# bench/bench_ranks_live.sh - what attaching to many sessions costs proftop
# (the budget: "attaching to 8 sessions costs proftop at most 8x one session's
# CPU, and each additional rank adds no more than 1% of a core at the
# default refresh"). N minitrain ranks (RANK=i, the probe preloaded) run;
# proftop attaches and its CPU (utime + stime of /proc/PID/stat) is read
# over SECS seconds of steady state (after WARM seconds; the final export
# is not counted). Settings, alternated ROUNDS times (median):
#   record -p PID     one session, the single-session loop (the reference)
#   record --all, 1   one session through the multi-session loop
#   record --all, N   N sessions
#   serve --all, 1/N  the exporter at its default refresh (1 s): per-rank
#                     figures and /metrics every second; while the session
#                     is younger than the window (60 s) they are kept
#                     between refreshes (pt_ranks_live_compute)
#   serve, full       the same once the session is older than the 60 s
#                     window: measured from WARM_FULL (62 s) over SECS_FULL
#                     (30 s, so a move of the window, every 30 s, falls in
#                     it); each rank's figures and its next window's are
#                     kept between refreshes
# Printed: % of one core each, the N:1 ratio (target <= N) and the cost
# per added rank, (N - 1 session) / (N - 1) (target <= 1 % of a core).
#
#   bench/bench_ranks_live.sh [ROUNDS]   BUILD=build RANKS=8 SECS=10 WARM=1
#                                        WARM_FULL=62 SECS_FULL=30
#                                        MINI_ARGS="--reader-ms 2 --hidden 64"
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${1:-3}
RANKS=${RANKS:-8}
SECS=${SECS:-10}
WARM=${WARM:-1}
WARM_FULL=${WARM_FULL:-62}
SECS_FULL=${SECS_FULL:-30}
MINI_ARGS=${MINI_ARGS:---reader-ms 2 --hidden 64 --batch 32}
B=$PWD/$BUILD
MINI=$B/examples/minitrain
LIB=$B/libproftop.so
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proftop-bench-ranks.XXXXXX")
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
HZ=$(getconf CLK_TCK)
TRAINERS=()
cleanup() {
	local p
	for p in "${TRAINERS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # proftop's comm has no spaces
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

start_trainers() { # start_trainers N
	TRAINERS=()
	rm -f "$PROFTOP_SESSION_DIR"/*
	for i in $(seq 0 $(($1 - 1))); do
		# shellcheck disable=SC2086
		RANK=$i LD_PRELOAD=$LIB "$MINI" $MINI_ARGS --log-every 0 >/dev/null 2>&1 &
		TRAINERS+=($!)
	done
	for _ in $(seq 100); do
		[ "$("$B/proftop" ls 2>/dev/null | grep -c running)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "bench_ranks_live: the trainers did not start" >&2
	exit 1
}
stop_trainers() {
	local p
	for p in "${TRAINERS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${TRAINERS[@]}"; do wait "$p" 2>/dev/null || true; done
	TRAINERS=()
}

# measure N MODE: prints proftop's CPU in % of one core over SECS
measure() {
	local n=$1 mode=$2 pid warm=$WARM secs=$SECS
	start_trainers "$n"
	case $mode in
	single) "$B/proftop" record -p "${TRAINERS[0]}" -o "$TMP/o.json" >/dev/null 2>&1 & ;;
	all) "$B/proftop" record --all -o "$TMP/o.json" >/dev/null 2>&1 & ;;
	serve) "$B/proftop" serve --all --listen 127.0.0.1:0 >/dev/null 2>"$TMP/serve.err" & ;;
	servefull)
		"$B/proftop" serve --all --listen 127.0.0.1:0 >/dev/null 2>"$TMP/serve.err" &
		warm=$WARM_FULL secs=$SECS_FULL
		;;
	esac
	pid=$!
	sleep "$warm"
	local c0 s0 c1 s1
	c0=$(ticks $pid)
	s0=$(now)
	sleep "$secs"
	c1=$(ticks $pid)
	s1=$(now)
	kill -TERM $pid
	wait $pid 2>/dev/null || true
	stop_trainers
	rm -f "$TMP/o.json"
	awk -v c="$((c1 - c0))" -v hz="$HZ" -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f\n", 100 * c / hz / (b - a) }'
}

single=() all1=() alln=() serve1=() serven=() full1=() fulln=()
for _ in $(seq "$ROUNDS"); do
	single+=("$(measure 1 single)")
	all1+=("$(measure 1 all)")
	alln+=("$(measure "$RANKS" all)")
	serve1+=("$(measure 1 serve)")
	serven+=("$(measure "$RANKS" serve)")
	full1+=("$(measure 1 servefull)")
	fulln+=("$(measure "$RANKS" servefull)")
done
m() { printf '%s\n' "$@" | median; }
ms=$(m "${single[@]}") ma1=$(m "${all1[@]}") man=$(m "${alln[@]}")
mv1=$(m "${serve1[@]}") mvn=$(m "${serven[@]}")
mw1=$(m "${full1[@]}") mwn=$(m "${fulln[@]}")
echo "minitrain $MINI_ARGS; proftop CPU over ${SECS} s, % of one core, median of $ROUNDS ($(nproc) cores):"
awk -v s="$ms" -v a1="$ma1" -v an="$man" -v v1="$mv1" -v vn="$mvn" -v w1="$mw1" -v wn="$mwn" \
	-v wf="$WARM_FULL" -v sf="$SECS_FULL" \
	-v n="$RANKS" 'BEGIN {
	printf "  %-34s %7.2f %%\n", "record -p PID (1 session)", s
	printf "  %-34s %7.2f %%\n", "record --all, 1 session", a1
	printf "  %-34s %7.2f %%   x%.2f of 1 session (target <= %d); +%.2f %% of a core per added rank (target <= 1)\n", "record --all, " n " sessions", an, an / (s > 0 ? s : 0.001), n, (an - s) / (n - 1)
	printf "  %-34s %7.2f %%\n", "serve --all, 1 session", v1
	printf "  %-34s %7.2f %%   x%.2f of 1 session (target <= %d); +%.2f %% of a core per added rank (target <= 1)\n", "serve --all, " n " sessions", vn, vn / (v1 > 0 ? v1 : 0.001), n, (vn - v1) / (n - 1)
	printf "  once the 60 s window is full (from %d s, over %d s):\n", wf, sf
	printf "  %-34s %7.2f %%\n", "serve --all, 1 session", w1
	printf "  %-34s %7.2f %%   x%.2f of 1 session (target <= %d); +%.2f %% of a core per added rank (target <= 1)\n", "serve --all, " n " sessions", wn, wn / (w1 > 0 ? w1 : 0.001), n, (wn - w1) / (n - 1)
}'
