#!/usr/bin/env bash
# test_tui_ranks.sh - the Ranks view and the rank filter on the real screen
# in tmux: four minitrain ranks recorded at once (RANK=0..3, rank 2 slowed
# by a 60 ms reader; synthetic traces written by python when minitrain or
# the probe is missing), joined by `proftop merge`, opened with `proftop
# view`. The Ranks view lists four ranks and marks rank 2 as the slowest;
# r filters every view to one rank ("rank 0 of 4" in the header, that
# rank's step count in the session line), R goes back to all ranks, Enter
# on a Ranks row opens that rank's Summary. Polls the pane (no fixed sleeps
# for the checks) on a private tmux socket.
# san: skip
# (the TUI under ASan is slow enough to make the polling flaky on 2 cores;
#  the same drawing code runs under ASan in build-san/tests/test_tui_ranks)
. tests/e2e/lib.sh
command -v tmux >/dev/null || { skip "tmux rank screen tests" "no tmux"; done_testing; exit 0; }
SOCK="pt-e2e-ranks-$$"
TM() { tmux -L "$SOCK" "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
BDIR=$(dirname "$BIN")
MT=$BDIR/examples/minitrain
LIB=$BDIR/libproftop.so
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"

wait_for() { # wait_for SESSION REGEX [SECS]
	local s=$1 re=$2 n=$((${3:-10} * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t "$s" 2>/dev/null | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	return 1
}
pane() { TM capture-pane -p -t "$1"; }
start() { # start NAME W H CMD
	TM new-session -d -s "$1" -x "$2" -y "$3" -c "$TMP" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $4; echo EXIT=\$?; sleep 60"
}
expect() { # expect DESC SESSION REGEX [SECS]
	if wait_for "$2" "$3" "${4:-10}"; then ok "$1"; else not_ok "$1" "$(pane "$2" | head -n 30)"; fi
}

# --- four per-rank traces
steps=15
if [ -x "$MT" ] && [ -f "$LIB" ]; then
	export PROFTOP_LIB=$LIB
	pids=""
	for r in 0 1 2 3; do
		ms=2
		[ $r = 2 ] && ms=60
		RANK=$r "$BIN" record -o "$TMP/r$r.json" --log "$TMP/l$r.log" -- "$MT" --steps $steps \
			--reader-ms $ms --log-every 0 >"$TMP/rec$r.out" 2>&1 &
		pids="$pids $!"
	done
	fails=0
	for p in $pids; do wait "$p" || fails=$((fails + 1)); done
	if [ $fails -eq 0 ]; then ok "four minitrain ranks recorded at once"
	else not_ok "four minitrain ranks recorded at once" "$(tail -n 3 "$TMP"/rec*.out)"; fi
else
	# no probe here: four Kineto-like files, rank 2 with 150 ms steps
	python3 - "$TMP" "$steps" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
for r in range(4):
    step, dl = (150000, 60000) if r == 2 else (100000, 20000)
    pid = 4000 + r
    ev = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "python"}}]
    for k in range(n):
        s = 1000000 + k * step
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k,
                   "pid": pid, "tid": pid, "ts": s, "dur": step})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_next_",
                   "pid": pid, "tid": pid, "ts": s, "dur": dl})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid,
                   "ts": s + dl + 10, "dur": 1000})
    json.dump({"distributedInfo": {"rank": r, "world_size": 4}, "traceEvents": ev},
              open("%s/r%d.json" % (d, r), "w"))
PY
	ok "four synthetic ranks written (no minitrain or probe)"
fi
check "merge the four ranks" "$BIN" merge "$TMP/r0.json" "$TMP/r1.json" "$TMP/r2.json" \
	"$TMP/r3.json" -o "$TMP/all.json"

# --- the screen
start v 120 30 "$BIN view $TMP/all.json"
expect "view opens the merged trace" v "Verdict"
expect "the tab bar offers the Ranks view" v "8 Ranks"
expect "the header says all ranks are shown" v "\[r\] all 4 ranks"
expect "the session line counts every rank's steps" v "$((4 * steps)) steps"
TM send-keys -t v 8
expect "Ranks view: the straggler line names rank 2" v "slowest rank 2 \([0-9.]+ ms/step\) \| spread [0-9.]+x max/median \| median"
n=$(pane v | grep -cE "^[ *] rank [0-3] ")
if [ "$n" = 4 ]; then ok "Ranks view: four rows"; else not_ok "Ranks view: four rows" "$(pane v)"; fi
if pane v | grep -E "^[ *] rank 2 " | grep -q "◀ slowest" &&
	[ "$(pane v | grep -c 'slowest$')" = 1 ]; then
	ok "Ranks view: rank 2's row, and only it, is marked slowest"
else
	not_ok "Ranks view: rank 2's row is marked slowest" "$(pane v)"
fi
# the slow row is drawn bold (SGR 1) in the warning colour
if TM capture-pane -p -e -t v | grep "rank 2 " | grep -q $'\e\\[[0-9;]*1[;m]'; then
	ok "the slow row is highlighted"
else
	not_ok "the slow row is highlighted" "$(TM capture-pane -p -e -t v | grep 'rank 2 ' | cat -v)"
fi
TM send-keys -t v r
expect "r: the header shows rank 0 of 4" v "\[r\] rank 0 of 4"
expect "r: the session line shows one rank's steps" v "\| $steps steps \|"
TM send-keys -t v r
expect "r again: rank 1 of 4" v "\[r\] rank 1 of 4"
TM send-keys -t v R
expect "R: all ranks again" v "\[r\] all 4 ranks"
expect "R: every rank's steps again" v "$((4 * steps)) steps"
# Enter on the third row (rank order: rank 2) opens that rank's Summary
TM send-keys -t v 8 g j j Enter
expect "Enter on rank 2's row filters to rank 2" v "\[r\] rank 2 of 4"
expect "its Summary is shown" v "Model Summary"
expect "rank 2 is input-bound (its slow reader)" v "Verdict: input-bound"
TM send-keys -t v 4
expect "timeline of rank 2 only: one process's lanes" v "span "
wait_for v "^minitrain|^python|^pid" 5
nl=$(pane v | grep -cE "pid [0-9]+" || true)
TM send-keys -t v R
sleep 0.3
wait_for v "\[r\] all 4 ranks" 5
na=$(pane v | grep -cE "pid [0-9]+" || true)
if [ "$nl" -gt 0 ] && [ "$na" -gt "$nl" ]; then ok "timeline: the filter hides other ranks' lanes ($na -> $nl)"
else not_ok "timeline: the filter hides other ranks' lanes" "all $na, one rank $nl"; fi
TM send-keys -t v '?'
expect "help lists the rank keys" v "show the next rank only"
TM send-keys -t v x q
expect "q quits with status 0" v "EXIT=0"

# collectives (tests/e2e/fake_ranks.py: rank 2 late at every all_reduce):
# the straggler the others wait for is marked, with its reason above the table
if [ -f "$LIB" ] && command -v python3 >/dev/null; then
	PROFTOP_SESSION_DIR=$TMP/sessions "$BIN" record -o "$TMP/coll.json" --log "$TMP/coll.log" -- \
		python3 "$PWD/tests/e2e/fake_ranks.py" --ranks 3 --dir "$TMP/bar" --steps 150 \
		--late-rank 2 --late-ms 8 >/dev/null 2>&1
	start c 100 30 "$BIN view $TMP/coll.json"
	TM send-keys -t c 8
	expect "collectives: the Ranks view names the straggler first" c "^straggler rank 2 \\| slowest steps"
	expect "collectives: its reason above the table" c "^straggler: rank 2 arrives [0-9.]+ ms late at .*all_reduce.*Dataloader"
	expect "collectives: its row marked" c "rank 2 .*(◀|<) straggler"
	TM send-keys -t c q
else
	skip "collectives in the Ranks view" "no probe or python3"
fi

# a single trace: no Ranks tab
start s 120 30 "$BIN view $TMP/r0.json"
expect "single rank: the view opens" s "Verdict"
if pane s | grep -q "Ranks\|\[r\]"; then not_ok "single rank: no Ranks tab, no filter" "$(pane s | head -4)"
else ok "single rank: no Ranks tab, no filter"; fi
TM send-keys -t s q
expect "single rank: q quits" s "EXIT=0"
done_testing
