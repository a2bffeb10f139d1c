#!/usr/bin/env bash
# test_readers.sh - nothing lost silently when several readers share one live
# session, or when one of them stalls:
#  1. two `proftop record -p` on one running minitrain: each trace has every
#     step (each reader has a cursor of its own), or says what it lost;
#  2. the same on a flood of events: for each reader, the events it kept plus
#     the ones it counted as lost (rings full, overwritten while detached,
#     missed) equal what the flood produced, exactly;
#  3. a reader stopped with SIGSTOP for 5 s while the flood runs: its loss is
#     counted by cause (the probe overwrote once its heartbeat went stale),
#     in the report, the JSON and the trace's metadata, and kept + counted =
#     produced; a reader that attached first and kept going missed nothing
#     (it lost only what the stalled one held back), and the stalled one
#     counts what the other read while it was away as missed;
#  4. the only reader of a minitrain stopped for 5 s: every step is in its
#     trace, or the loss is counted (the probe dropped, then overwrote).
# No timed assertions: the stall is long (5 s) against the 2 s heartbeat
# timeout and the flood far faster than a ring; every check is a relation.
. tests/e2e/lib.sh
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
ROOT=$(pwd)
FLOOD=$ROOT/build/examples/flood
MINI=$ROOT/build/examples/minitrain
LIB=${PROFTOP_LIB:-$(dirname "$BIN")/libproftop.so}
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
PIDS=()
cleanup() { # only this shell's children still running
	for p in $(jobs -p); do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if [ ! -f "$LIB" ] || [ ! -x "$FLOOD" ] || [ ! -x "$MINI" ] || ! command -v python3 >/dev/null; then
	skip "two readers, stalled reader" "needs libproftop.so, flood, minitrain and python3"
	done_testing
	exit 0
fi

jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# the session of the only process started under the probe, once it is there
session_pid() {
	local f
	for _ in $(seq 200); do
		f=$(ls "$PROFTOP_SESSION_DIR" 2>/dev/null | head -n 1)
		[ -n "$f" ] && { echo "${f%.session}"; return 0; }
		sleep 0.05
	done
	return 1
}
# lost FILE: what the report says the source lost, and its causes
lost_of() {
	"$BIN" report --json "$1" >"$1.rep"
	jget "$1.rep" "d['dropped']['by_source'], d['dropped']['rings_full'], d['dropped']['overwritten_while_detached'], d['dropped']['missed_by_reader'], d['steps']"
}
# kept FILE: events of the flood in an export (one record a line)
kept_of() { grep -c '^{"ph":"X"' "$1"; }

# ---------------------------------------------------------------- 1. two readers, minitrain
rm -f "$PROFTOP_SESSION_DIR"/*
STEPS=3000
LD_PRELOAD=$LIB "$MINI" --steps $STEPS --hidden 64 --log-every 0 >"$TMP/mt.out" 2>&1 &
PIDS+=($!)
P=$(session_pid)
"$BIN" record -p "$P" -o "$TMP/a.json" 2>"$TMP/a.err" &
A=$!
"$BIN" record -p "$P" -o "$TMP/b.json" 2>"$TMP/b.err" &
B=$!
wait "$A"; ra=$?
wait "$B"; rb=$?
wait "${PIDS[0]}"
if [ $ra -eq 0 ] && [ $rb -eq 0 ]; then ok "two readers of one minitrain both write a trace"
else not_ok "two readers both write a trace" "rc $ra $rb" "$(cat "$TMP/a.err" "$TMP/b.err")"; fi
for x in a b; do
	read -r src full over missed steps <<<"$(lost_of "$TMP/$x.json")"
	if [ "$steps" -eq $STEPS ] || [ "$src" -gt 0 ]; then
		ok "reader $x: $steps of $STEPS steps, $src counted as lost"
	else
		not_ok "reader $x: every step, or the loss counted" "steps=$steps lost=$src"
	fi
done
read -r sa _ <<<"$(lost_of "$TMP/a.json")"
read -r sb _ <<<"$(lost_of "$TMP/b.json")"
read -r _ _ _ _ na <<<"$(lost_of "$TMP/a.json")"
read -r _ _ _ _ nb <<<"$(lost_of "$TMP/b.json")"
# before per-reader cursors the two traces split the steps between them
if [ $((na + nb)) -gt $STEPS ] || [ $((sa + sb)) -gt 0 ]; then
	ok "the readers do not split the steps between them ($na + $nb)"
else
	not_ok "the readers do not split the steps" "$na + $nb steps of $STEPS, nothing counted"
fi

# ---------------------------------------------------------------- 2. two readers, exact counts
rm -f "$PROFTOP_SESSION_DIR"/*
LD_PRELOAD=$LIB "$FLOOD" --rate 300000 --seconds 3 --step-every 0 >"$TMP/fl.log" 2>&1 &
PIDS+=($!)
P=$(session_pid)
"$BIN" record -p "$P" -o "$TMP/c.json" 2>"$TMP/c.err" &
A=$!
sleep 0.5 # the second one attaches later: what went before it is counted too
"$BIN" record -p "$P" -o "$TMP/d.json" 2>"$TMP/d.err" &
B=$!
wait "$A" "$B" "${PIDS[1]}"
produced=$(sed -n 's/.*done events=\([0-9]*\).*/\1/p' "$TMP/fl.log")
for x in c d; do
	read -r src full over missed _ <<<"$(lost_of "$TMP/$x.json")"
	kept=$(kept_of "$TMP/$x.json")
	if [ -n "$produced" ] && [ $((kept + src)) -eq "$produced" ] &&
		[ "$src" -eq $((full + over + missed)) ]; then
		ok "reader $x of two: kept $kept + lost $src ($full rings full, $over overwritten, $missed missed) = produced $produced"
	else
		not_ok "reader $x of two: kept + lost = produced" "kept=$kept lost=$src produced=$produced ($full/$over/$missed)"
	fi
done

# ---------------------------------------------------------------- 3. a stalled reader
rm -f "$PROFTOP_SESSION_DIR"/*
LD_PRELOAD=$LIB "$FLOOD" --rate 200000 --seconds 9 --step-every 0 >"$TMP/fl2.log" 2>&1 &
PIDS+=($!)
P=$(session_pid)
# k attaches first (nothing read before it by another reader), then s
"$BIN" record -p "$P" -o "$TMP/k.json" 2>"$TMP/k.err" &
K=$!
sleep 0.5
"$BIN" record -p "$P" -o "$TMP/s.json" 2>"$TMP/s.err" &
S=$!
sleep 1
kill -STOP "$S"
sleep 5
kill -CONT "$S"
wait "$S" "$K" "${PIDS[2]}"
produced=$(sed -n 's/.*done events=\([0-9]*\).*/\1/p' "$TMP/fl2.log")
read -r src full over missed _ <<<"$(lost_of "$TMP/s.json")"
kept=$(kept_of "$TMP/s.json")
if [ -n "$produced" ] && [ $((kept + src)) -eq "$produced" ]; then
	ok "stalled reader: kept $kept + lost $src = produced $produced"
else
	not_ok "stalled reader: kept + lost = produced" \
		"kept=$kept lost=$src ($full/$over/$missed) produced=$produced; s: $(tail -c 400 "$TMP/s.err" | tr '\n' ' ')"
fi
if [ "$src" -gt 0 ] && [ $((missed + over)) -gt 0 ]; then
	ok "stalled reader: the loss is counted by cause ($full rings full, $over overwritten, $missed missed)"
else
	not_ok "stalled reader: loss counted by cause" "lost=$src full=$full over=$over missed=$missed"
fi
check_out "report header names the causes" \
	"^Note: the source lost $src events .*before proftop read them: .*(overwritten while detached|missed)" \
	"$BIN" report "$TMP/s.json"
head -n 1 "$TMP/s.json" | sed 's/"traceEvents":\[$/"traceEvents":[]}/' >"$TMP/s.head.json"
check_out "the trace's metadata keeps each cause" "^$full $over $missed$" \
	jget "$TMP/s.head.json" "d['otherData']['warnings'].get('dropped_by_source',0), d['otherData']['warnings'].get('overwritten_while_detached',0), d['otherData']['warnings'].get('missed_by_reader',0)"
check_out "record says what was lost, by cause" "^proftop: lost by the source: " cat "$TMP/s.err"
read -r ksrc kfull kover kmissed _ <<<"$(lost_of "$TMP/k.json")"
kkept=$(kept_of "$TMP/k.json")
if [ $((kkept + ksrc)) -eq "$produced" ] && [ "$kmissed" -eq 0 ]; then
	ok "the reader that kept going: kept $kkept + lost $ksrc = produced, nothing missed"
else
	not_ok "the reader that kept going" \
		"kept=$kkept lost=$ksrc ($kfull/$kover/$kmissed) produced=$produced; k: $(tail -c 400 "$TMP/k.err" | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- 4. a lone stalled reader
# minitrain for about as long as the stall and more; the only reader stops
rm -f "$PROFTOP_SESSION_DIR"/*
STEPS=8000
LD_PRELOAD=$LIB "$MINI" --steps $STEPS --hidden 64 --log-every 0 >"$TMP/mt2.out" 2>&1 &
M=$!
P=$(session_pid)
"$BIN" record -p "$P" -o "$TMP/l.json" 2>"$TMP/l.err" &
L=$!
sleep 1
kill -STOP "$L"
sleep 5
kill -CONT "$L"
wait "$L" "$M"
read -r src full over missed steps <<<"$(lost_of "$TMP/l.json")"
if [ "$steps" -eq $STEPS ] || [ "$src" -gt 0 ]; then
	ok "lone stalled reader: $steps of $STEPS steps, $src lost ($full rings full, $over overwritten while detached, $missed missed)"
else
	not_ok "lone stalled reader: every step, or the loss counted" "steps=$steps lost=$src"
fi
if grep -q "done steps=$STEPS" "$TMP/mt2.out" && [ "$steps" -lt $STEPS ] && [ $((over + full)) -eq 0 ]; then
	not_ok "lone stalled reader: missing steps come with rings-full or overwritten counts" "$over $full"
else
	ok "lone stalled reader: missing steps come with rings-full or overwritten counts"
fi
done_testing
