#!/usr/bin/env bash
# tests/e2e/test_ranks_live.sh - many live sessions at once, as torchrun's
# ranks on one node: four minitrain processes with the probe preloaded
# (RANK=0..2, the fourth with LOCAL_RANK=3 only), rank 2 slowed on purpose
# (its loader takes 30 ms a batch, the others 2 ms). Then:
#   record --all          one trace, one process per rank; report's Rank
#                         Summary names rank 2 as the slowest
#   record -p A,B         only those two ranks
#   record --all + a rank that starts late and exits early: picked up, kept,
#                         said exited
#   serve --all           /metrics has one step-time series per rank, rank 2's
#                         the highest
#   proftop --all         the text view off a terminal (printed on SIGTERM)
#                         shows every rank and the slowest
# Command-line errors first. Everything started here is killed in a trap.
# No timing assertions: the slow rank is 10x slower, whatever the load.
. tests/e2e/lib.sh

case "$PROFTOP" in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac
LIB=$PWD/build/libproftop.so
MINI=$PWD/build/examples/minitrain
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
export PROFTOP_LIB=$LIB

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	tmux -L "pt-e2e-rl-$$" kill-server 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# --- the command line
check_out "help record mentions --all" "--all" "$PROFTOP" help record
check_out "help attach mentions PID,PID" "PID\[,PID\.\.\.\]" "$PROFTOP" help attach
check_fails "record -p and --all exits 2" 2 "$PROFTOP" record --all -p 1 -o "$TMP/x.json"
check_fails "record -p 1,,2 exits 2" 2 "$PROFTOP" record -p 1,,2 -o "$TMP/x.json"
check_fails "attach -p and --all exits 2" 2 "$PROFTOP" --all -p 1
check_out "record --all without a session" "no live proftop sessions" \
	sh -c "'$PROFTOP' record --all -o '$TMP/x.json' 2>&1; test \$? -eq 1"
check_out "record -p A,B: each must have a session" "no process 999998|no proftop session for pid 999998" \
	sh -c "'$PROFTOP' record -p 999998,999999 -o '$TMP/x.json' 2>&1; test \$? -eq 1"
check_out "attach without a session" "no live proftop session" \
	sh -c "'$PROFTOP' --no-screen 2>&1 </dev/null; test \$? -eq 1"

if [ ! -f "$LIB" ] || [ ! -x "$MINI" ]; then
	skip "live ranks" "no libproftop.so or minitrain"
	done_testing
	exit 0
fi

# --- four ranks
start_rank() { # start_rank VAR=VALUE READER_MS [minitrain args...]
	local env=$1 ms=$2
	shift 2
	env "$env" LD_PRELOAD="$LIB" "$MINI" --reader-ms "$ms" --hidden 32 --batch 16 \
		--log-every 0 "$@" >/dev/null 2>&1 &
	PIDS+=($!)
}
start_rank RANK=0 2
R0=$!
start_rank RANK=1 2
R1=$!
start_rank RANK=2 30
R2=$!
start_rank LOCAL_RANK=3 2
R3=$!
for _ in $(seq 100); do
	[ "$("$PROFTOP" ls | grep -c running)" -ge 4 ] && break
	sleep 0.1
done
check_out "ls shows the four ranks" "running +[0-9a-z]+ +3 " "$PROFTOP" ls
sleep 0.5 # a few steps each

# record --all
"$PROFTOP" record --all -o "$TMP/all.json" --duration 3 >"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "4 sessions: rank 0\.\.3 (pids" "$TMP/rec.err"; then
	ok "record --all records the four sessions"
else
	not_ok "record --all records the four sessions" "rc=$rc" "$(cat "$TMP/rec.err")"
fi
"$PROFTOP" report "$TMP/all.json" >"$TMP/rep.txt" 2>&1
check_out "report: a Rank Summary" "Rank Summary" cat "$TMP/rep.txt"
check_out "report: rank 2 is the slowest" "^Slowest: rank 2 " cat "$TMP/rep.txt"
n=$(grep -cE '^rank [0-3] ' "$TMP/rep.txt")
if [ "$n" -eq 4 ]; then ok "report: one row per rank (rank 3 from LOCAL_RANK)"; else not_ok "one row per rank" "$(grep -A10 'Rank Summary' "$TMP/rep.txt")"; fi
check_out "trace: a process table of four ranks" "ok" python3 -c "
import json, sys
d = json.load(open('$TMP/all.json'))
od = d.get('otherData', {})
r = od.get('ranks', [])
ranks = sorted(x.get('rank') for x in r)
assert ranks == [0, 1, 2, 3], r
pids = {e.get('pid') for e in d['traceEvents'] if e.get('ph') == 'X'}
assert {$R0, $R1, $R2, $R3} <= pids, pids
assert 'rank' not in od or od['rank'] is None, od.get('rank')
print('ok')
"

# record -p A,B
"$PROFTOP" record -p "$R0,$R2" -o "$TMP/two.json" --duration 1.5 >/dev/null 2>"$TMP/two.err"
check_out "record -p A,B says which" "2 sessions: ranks 0,2 \(pids $R0,$R2\)" cat "$TMP/two.err"
"$PROFTOP" report "$TMP/two.json" >"$TMP/two.txt" 2>&1
n=$(grep -cE '^rank [0-3] ' "$TMP/two.txt")
if [ "$n" -eq 2 ] && grep -q "^Slowest: rank 2 " "$TMP/two.txt"; then
	ok "record -p A,B: two ranks, rank 2 the slowest"
else
	not_ok "record -p A,B: two ranks" "$(grep -A10 'Rank Summary' "$TMP/two.txt")"
fi

# record --all while a fifth rank starts late and exits early
"$PROFTOP" record --all -o "$TMP/late.json" --duration 3.5 >/dev/null 2>"$TMP/late.err" &
rpid=$!
PIDS+=($rpid)
sleep 1
start_rank RANK=4 2 --steps 60
wait $rpid
rc=$?
if [ $rc -eq 0 ] && grep -q "5 sessions (1 exited): rank 0\.\.4" "$TMP/late.err"; then
	ok "record --all picks up a rank that starts later; it exited"
else
	not_ok "record --all picks up a late rank" "rc=$rc" "$(cat "$TMP/late.err")"
fi
"$PROFTOP" report "$TMP/late.json" >"$TMP/late.txt" 2>&1
if grep -qE '^rank 4 +[^ ]+ +[1-9]' "$TMP/late.txt"; then
	ok "the exited rank's steps stay in the trace"
else
	not_ok "the exited rank's steps stay" "$(grep -A12 'Rank Summary' "$TMP/late.txt")"
fi

# serve --all
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$PROFTOP" serve --all --listen "127.0.0.1:$port" --refresh 0.5 >/dev/null 2>"$TMP/serve.err" &
spid=$!
PIDS+=($spid)
python3 - "http://127.0.0.1:$port/metrics" "$R0,$R1,$R2,$R3" >"$TMP/prom.txt" 2>&1 <<'EOF'
import re, sys, time, urllib.request
url, want = sys.argv[1], set(sys.argv[2].split(","))
last = ""
for _ in range(100):
    try:
        last = urllib.request.urlopen(url, timeout=5).read().decode()
    except Exception as e:
        last = str(e)
    series = {}
    for line in last.splitlines():
        m = re.match(r'^proftop_step_mean_seconds\{(.*)\} (\S+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            series[labels["pid"]] = (labels.get("rank"), float(m.group(2)))
    if want <= set(series) and all(v[1] > 0 for v in series.values()):
        break
    time.sleep(0.2)
else:
    print("timeout; last:\n" + last[-1500:])
    sys.exit(1)
assert len(series) == len(want), series
ranks = sorted(v[0] for v in series.values())
assert ranks == ["0", "1", "2", "3"], ranks
slow = max(series.values(), key=lambda v: v[1])
assert slow[0] == "2", series
print("per rank: " + " ".join("%s=%.4f" % (r, v) for r, v in sorted(series.values())))
EOF
check_out "serve --all: one step-time series per rank, rank 2 the highest" "^per rank" cat "$TMP/prom.txt"
kill -TERM "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
check_out "serve --all says what it served" "served 4 sessions: rank 0\.\.3" cat "$TMP/serve.err"

# proftop --all off a terminal: the final text view on SIGTERM
"$PROFTOP" --all >"$TMP/attach.out" 2>"$TMP/attach.err" </dev/null &
apid=$!
PIDS+=($apid)
sleep 2.5
kill -TERM "$apid"
wait "$apid"
rc=$?
n=$(grep -cE '^rank [0-3] ' "$TMP/attach.out")
if [ $rc -eq 0 ] && [ "$n" -eq 4 ] && grep -q "^Slowest: rank 2 " "$TMP/attach.out" &&
	grep -q "^proftop: 4 sessions: rank 0\.\.3" "$TMP/attach.out"; then
	ok "proftop --all (text view) shows every rank and the slowest"
else
	not_ok "proftop --all (text view)" "rc=$rc" "$(head -n 3 "$TMP/attach.out")" "$(grep -A10 'Rank Summary' "$TMP/attach.out")" "$(cat "$TMP/attach.err")"
fi

# proftop --all on the screen: the Ranks view follows the running ranks
# (its per-rank figures are kept between refreshes, ranks.h)
if command -v tmux >/dev/null; then
	SOCK="pt-e2e-rl-$$"
	TM() { tmux -L "$SOCK" "$@"; }
	TM new-session -d -s a -x 120 -y 30 \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 '$PROFTOP' --all; echo EXIT=\$?; sleep 30"
	seen=0
	for _ in $(seq 100); do
		TM capture-pane -p -t a | grep -q "8 Ranks" && { seen=1; break; }
		sleep 0.1
	done
	TM send-keys -t a 8
	row0() { TM capture-pane -p -t a | grep -E "^[ *] rank 0 " | head -n 1; }
	first=""
	for _ in $(seq 100); do
		first=$(row0)
		[ -n "$first" ] && TM capture-pane -p -t a | grep -q "slowest rank 2 " && break
		sleep 0.1
	done
	later="$first"
	for _ in $(seq 100); do
		later=$(row0)
		[ "$later" != "$first" ] && break
		sleep 0.1
	done
	n=$(TM capture-pane -p -t a | grep -cE "^[ *] rank [0-3] ")
	if [ $seen = 1 ] && [ "$n" -eq 4 ] && [ -n "$first" ] && [ "$later" != "$first" ]; then
		ok "proftop --all: the Ranks view lists the four live ranks and follows them"
	else
		not_ok "proftop --all: the Ranks view follows the live ranks" "rows $n" "first: $first" \
			"later: $later" "$(TM capture-pane -p -t a | head -n 20)"
	fi
	TM send-keys -t a q
	for _ in $(seq 50); do TM capture-pane -p -t a | grep -q "EXIT=" && break; sleep 0.1; done
	check_out "proftop --all on the screen quits with q" "EXIT=0" TM capture-pane -p -t a
	TM kill-server 2>/dev/null
else
	skip "proftop --all on the screen" "no tmux"
fi

# the ranks end: an attach of -p A,B ends when both have exited
"$PROFTOP" -p "$R0,$R1" --no-screen >"$TMP/end.out" 2>&1 </dev/null &
epid=$!
PIDS+=($epid)
sleep 0.5
kill -TERM "$R0" "$R1"
for _ in $(seq 100); do kill -0 "$epid" 2>/dev/null || break; sleep 0.1; done
if ! kill -0 "$epid" 2>/dev/null && grep -q "2 sessions (2 exited)" "$TMP/end.out"; then
	ok "attach -p A,B ends when both ranks exit"
else
	not_ok "attach -p A,B ends when both ranks exit" "$(head -n 3 "$TMP/end.out")"
fi

done_testing
