#!/usr/bin/env bash
# test_tui_timeline.sh - the real screen in tmux explains a slow step:
# a trace with one deliberately slow operator in one step (S shows the step
# and the operator by name on a row of its own, at 80x24 and 200x50), ruler
# labels pairwise different at five zoom levels, ':' go to step N, search
# in the Timeline; the screen stays when `proftop run` and attached jobs
# end (and quitting prints the summary; --exit-on-end closes it as before);
# an idle live screen within its bytes budget;
# step numbers in "last 10 steps"; a single-process GPU trace is one rank;
# long names told apart at 80 columns; a CJK name drawn as itself; --mouse
# clicks a tab. Polls the pane (no fixed sleeps for results) on its own
# tmux socket, with a private session directory.
# san: skip
# (the TUI under ASan is slow enough to make the polling flaky on 2 cores;
#  the same drawing code runs under ASan in build-san/tests/test_tui_timeline)
. tests/e2e/lib.sh
command -v tmux >/dev/null || { skip "timeline screen tests" "no tmux"; done_testing; exit 0; }
command -v python3 >/dev/null || { skip "timeline screen tests" "no python3"; done_testing; exit 0; }
SOCK="pt-tl-$$"
TM() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
ROOT=$(pwd)
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 -p "$PROFTOP_SESSION_DIR"

wait_for() { # wait_for SESSION REGEX [SECS]
	local s=$1 re=$2 n=$((${3:-10} * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t "$s" 2>/dev/null | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	return 1
}
pane() { TM capture-pane -p -t "$1"; }
# still_pane SESSION: the pane once two captures 0.1 s apart agree (a view
# drawn while it was captured must not be read half-drawn); 5 s at most
still_pane() {
	local a b
	a=$(pane "$1")
	for _ in $(seq 50); do
		sleep 0.1
		b=$(pane "$1")
		[ "$a" = "$b" ] && break
		a=$b
	done
	printf '%s\n' "$a"
}
start() { # start NAME W H CMD
	TM new-session -d -s "$1" -x "$2" -y "$3" -c "$TMP" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PROFTOP_SESSION_DIR=$PROFTOP_SESSION_DIR $4; echo EXIT=\$?; sleep 60"
}
expect() { # expect DESC SESSION REGEX [SECS]
	if wait_for "$2" "$3" "${4:-10}"; then ok "$1"; else not_ok "$1" "$(pane "$2" | head -n 40)"; fi
}

# ---- a job with one slow operator in step 17 --------------------------
python3 - "$TMP/slow.json" <<'EOF'
import json, sys
ev = []
def X(name, cat, ts, dur, tid=1, pid=42, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    ev.append(e)
t, corr = 0, 1
for i in range(30):
    slow = i == 17
    ln = 50000 if slow else 10000
    X("ProfilerStep#%d" % i, "user_annotation", t, ln)
    X("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation", t + 10, 900)
    op = t + 1100
    for k, name in enumerate(["aten::linear", "slow_conv_weird_kernel" if slow else "aten::conv2d", "aten::relu"]):
        ol = 40000 if slow and k == 1 else 1000
        X(name, "cpu_op", op, ol)
        X("aten::mm", "cpu_op", op + 10, ol // 2)
        X("cudaLaunchKernel", "cuda_runtime", op + 20, 5, args={"correlation": corr})
        X("gemm_kernel", "kernel", op + 50, ol // 3, tid=7, pid=0, args={"correlation": corr, "device": 0, "stream": 7})
        corr += 1
        op += ol + 100
    X("Optimizer.step#SGD.step", "user_annotation", t + ln - 1700, 1500)
    t += ln + 100
ev.append({"ph": "M", "name": "thread_name", "pid": 42, "tid": 1, "args": {"name": "trainer"}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF

for size in "200 50" "80 24"; do
	set -- $size
	s="s$1"
	start "$s" "$1" "$2" "$BIN view $TMP/slow.json"
	expect "$1x$2: the file opens" "$s" "Summary" 10
	TM send-keys -t "$s" 4
	expect "$1x$2: the Timeline" "$s" "^span " 5
	TM send-keys -t "$s" S
	expect "$1x$2: S jumps to the slowest step, step 17" "$s" "step 17: 50 ms \(slowest #1 of 30" 5
	# the slow operator by name, on a row of its own below the step's
	p=$(pane "$s")
	ys=$(echo "$p" | grep -n "ProfilerStep#17" | head -n1 | cut -d: -f1)
	yo=$(echo "$p" | grep -n "slow_conv" | head -n1 | cut -d: -f1)
	if [ -n "$ys" ] && [ -n "$yo" ] && [ "$yo" -gt "$ys" ] &&
		! echo "$p" | sed -n "${yo}p" | grep -q "ProfilerStep"; then
		ok "$1x$2: slow_conv... named on its own row ($yo, the step on $ys)"
	else
		not_ok "$1x$2: slow_conv named on its own row" "$p"
	fi
	TM send-keys -t "$s" q
	expect "$1x$2: q quits" "$s" "EXIT=0"
done

# ruler labels pairwise different at five zoom levels (200x50)
start r 200 50 "$BIN view $TMP/slow.json"
expect "ruler: the file opens" r "Summary" 10
TM send-keys -t r 4 ]
wait_for r "^span " 5
bad=""
for level in 1 2 3 4 5; do
	sleep 0.3
	line=$(pane r | grep -m1 "^span ")
	labels=$(echo "${line:25}" | sed 's/\([0-9]\) \([a-z]\)/\1\2/g' | tr -s ' ' '\n' | grep -v '^$')
	n=$(echo "$labels" | wc -l)
	u=$(echo "$labels" | sort -u | wc -l)
	if [ "$n" -lt 3 ] || [ "$n" != "$u" ]; then bad="$bad level $level: $line;"; fi
	TM send-keys -t r w w w
done
if [ -z "$bad" ]; then ok "ruler labels differ pairwise at five zoom levels"; else not_ok "ruler labels differ" "$bad"; fi
if pane r | grep -Eq "^at [0-9.]+ (ns|us|ms|s), step [0-9]+ \+"; then ok "the status line says where: time and step"
else not_ok "the status line says where" "$(pane r | tail -n 3)"; fi
# go to step N, then search
TM send-keys -t r : 1 2 Enter
expect "':12' goes to step 12" r "step 12: 10 ms" 5
TM send-keys -t r / s l o w Enter
expect "search goes to the match" r "Search: slow.*Operator 40 ms slow_conv" 5
TM send-keys -t r Enter
expect "Enter: its details, the share of its step" r "80.0% of step 17" 5
TM send-keys -t r Escape Escape q
expect "quits" r "EXIT=0"

# ---- the screen stays when the job ends ---------------------------------
MT=$ROOT/build/examples/minitrain
if [ -x "$MT" ]; then
	start j 120 40 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run --log $TMP/j.log -- $MT --steps 60 --log-every 0"
	if wait_for j "exited \(code 0\)" 60; then
		ok "run: the session line says exited (code 0)"
		sleep 10
		if pane j | grep -q "exited (code 0)" && ! pane j | grep -q "EXIT="; then
			ok "the screen is still there 10 s after the job ended"
		else not_ok "the screen is still there 10 s after the job ended" "$(pane j | tail -n 5)"; fi
		TM send-keys -t j 4
		expect "still browsable: the Timeline" j "^span " 5
		TM send-keys -t j 1 W
		expect "last 10 steps: the job's step numbers (#50..#59)" j "^#59 " 5
		if pane j | grep -q "^#0 "; then not_ok "no #0 in the last 10 steps" "$(pane j | grep '^#')"
		else ok "no #0 in the last 10 steps"; fi
		TM send-keys -t j q
		expect "q prints the final summary and the job's status" j "EXIT=0" 20
		# the summary that fits the terminal: no line wider than its 120 columns
		# (-J: the lines as printed, before the pane wraps them)
		wide=$(TM capture-pane -p -J -S -200 -t j | awk 'length > 120' | head -n 3)
		if pane j | grep -q "^Summary: 60 steps" && pane j | grep -q "^Full tables: --full" &&
			[ -z "$wide" ]; then
			ok "the final summary is printed, no line wider than the terminal"
		else not_ok "the final summary fits the terminal" "$(pane j | tail -n 8)" "wide: $wide"; fi
		start k2 120 40 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run --full --exit-on-end --log $TMP/k2.log -- $MT --steps 20 --log-every 0"
		expect "--full: the Paddle-style tables at the end" k2 "EXIT=0" 30
		TM capture-pane -p -J -S -300 -t k2 | grep -q "Perf Summary" && ok "--full prints the Perf Summary" ||
			not_ok "--full prints the Perf Summary" "$(pane k2 | tail -n 5)"
	else
		not_ok "run: the session line says exited (code 0)" "$(pane j | head -n 5)"
	fi
	# an idle screen stays within its budget: about 2000 bytes a second plus
	# a burst of 6000 (by construction: the bytes are estimated from above)
	start i 200 50 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run --log $TMP/i.log -- $MT --steps 0 --reader-ms 10 --log-every 0"
	if wait_for i " [1-9][0-9]* steps" 30; then
		sleep 3
		: >"$TMP/bytes"
		TM pipe-pane -t i -o "cat >>$TMP/bytes"
		sleep 10
		TM pipe-pane -t i
		b=$(wc -c <"$TMP/bytes")
		if [ "$b" -gt 0 ] && [ "$b" -le $((2000 * 11 + 6000)) ]; then ok "an idle screen sent $b bytes in 10 s (budget 2000/s + 6000)"
		else not_ok "an idle screen stays within 2 KB/s" "$b bytes in 10 s"; fi
	else
		not_ok "the idle screen runs" "$(pane i | head -n 5)"
	fi
	TM send-keys -t i q q # q asks while the job runs; the second q stops it
	expect "the idle screen quits" i "EXIT=" 20
	# --exit-on-end: the old behaviour
	start k 120 40 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run --exit-on-end --log $TMP/k.log -- $MT --steps 30 --log-every 0"
	expect "--exit-on-end closes the screen when the job ends" k "EXIT=0" 60
	# attach: the screen stays when the attached process exits
	PROFTOP_LIB=$ROOT/build/libproftop.so LD_PRELOAD=$ROOT/build/libproftop.so "$MT" --steps 0 --log-every 0 >/dev/null 2>&1 &
	mpid=$!
	for _ in $(seq 100); do [ -e "$PROFTOP_SESSION_DIR/$mpid.session" ] && break; sleep 0.1; done
	start a 120 40 "$BIN -p $mpid"
	expect "attach shows the session" a "running" 20
	kill -INT "$mpid" 2>/dev/null
	wait "$mpid" 2>/dev/null
	if wait_for a " exited " 20 && ! pane a | grep -q "EXIT="; then
		ok "attach: the screen stays when the process exits"
	else
		not_ok "attach: the screen stays when the process exits" "$(pane a | head -n 5)"
	fi
	TM send-keys -t a q
	expect "attach: q quits" a "EXIT=0" 10
	# attach to a job whose small ring wrapped long before: what it
	# overwrote then is said apart ("before attach"), not as dropped
	FLOOD=$ROOT/build/examples/flood
	if [ -x "$FLOOD" ]; then
		PROFTOP_RING_SLOTS=1024 LD_PRELOAD=$ROOT/build/libproftop.so "$FLOOD" --rate 20000 \
			--seconds 60 --step-every 100 >/dev/null 2>&1 &
		fpid=$!
		for _ in $(seq 100); do [ -e "$PROFTOP_SESSION_DIR/$fpid.session" ] && break; sleep 0.1; done
		sleep 2 # 40,000 records through a ring of 1024
		start b 160 40 "$BIN -p $fpid"
		if wait_for b " [1-9][0-9]* before attach" 20; then
			ok "attach: what the job's ring overwrote before it is shown as before attach"
		else
			not_ok "attach: losses before attach said apart" "$(pane b | head -n 3)"
		fi
		# "running" counts from the job's start (2 s and more before the
		# attach), not from the attach
		el=$(pane b | grep -o 'running [0-9][0-9.]*s' | head -n 1 | grep -o '[0-9][0-9.]*')
		if [ -n "$el" ] && awk -v e="$el" 'BEGIN { exit !(e >= 2) }'; then
			ok "attach: the job's run time counts from its start (${el}s)"
		else
			not_ok "attach: run time from the job's start" "$(pane b | sed -n 2p)"
		fi
		kill "$fpid" 2>/dev/null
		wait "$fpid" 2>/dev/null
		TM send-keys -t b q
		expect "attach (wrapped ring): q quits" b "EXIT=0" 10
	fi
else
	skip "the screen stays when the job ends" "no build/examples/minitrain"
fi

# ---- what is shown ---------------------------------------------------------
T1="$PT_TRACES/kineto_tb_plugin/samples__resnet50_autograd_api_num_workers_0__worker0.pt.trace.json.gz"
case $T1 in /*) ;; *) T1="$ROOT/$T1" ;; esac
if [ -f "$T1" ]; then
	start g 200 50 "$BIN view $T1"
	expect "a single-process GPU trace opens" g "Summary" 20
	if pane g | grep -q "\[r\]"; then not_ok "one rank: no rank filter in the tab bar" "$(pane g | sed -n 3,5p)"
	else ok "a single-process GPU trace is one rank (no rank filter)"; fi
	TM send-keys -t g q
	n=$("$BIN" report "$T1" 2>/dev/null | grep -c "^pid ")
	if [ "$n" = 0 ]; then ok "report: no per-rank rows for one process"; else not_ok "report: one rank" "$n pid rows"; fi
else
	skip "a single-process GPU trace is one rank" "no shared traces"
fi

FX=$ROOT/fixtures/pytorch/resnet50_workers0.pt.trace.json.gz
start n 80 24 "$BIN view $FX"
expect "80x24 opens" n "Summary" 10
TM send-keys -t n 2
wait_for n "Calls" 5
# the three cudnn_convolution backward rows end differently (one capture,
# once the table is drawn: two captures could see different rows)
wait_for n "aten::cudnn_" 5
ops=$(still_pane n)
u=$(grep -o "aten::cudnn_[^ ]*" <<<"$ops" | sort -u | wc -l)
t=$(grep -o "aten::cudnn_[^ ]*" <<<"$ops" | wc -l)
if [ "$t" -ge 3 ] && [ "$u" = "$t" ]; then ok "80 columns: the aten::cudnn_ rows read differently ($t)"
else not_ok "80 columns: names told apart" "$t rows, $u different" "$(grep cudnn <<<"$ops")"; fi
if pane n | grep -q "7 User" && ! pane n | grep -q "7 9"; then ok "80 columns: the tab bar names the views"
else not_ok "80 columns: the tab bar" "$(pane n | sed -n 3,5p)"; fi
TM send-keys -t n q

# a CJK and an emoji name, drawn as themselves
printf '{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},{"ph":"X","cat":"cpu_op","name":"\\u524d\\u5411\\u4f20\\u64ad_layer \\ud83d\\udd25","pid":1,"tid":1,"ts":10,"dur":500}]}' >"$TMP/cjk.json"
start c 100 30 "$BIN view $TMP/cjk.json"
expect "CJK: opens" c "Summary" 10
TM send-keys -t c 2
expect "a CJK name is drawn as itself (not ????)" c "前向传播_layer" 5
if pane c | grep -q "????"; then not_ok "no ???? for wide characters" "$(pane c | grep -n '?')"; else ok "no ???? for wide characters"; fi
TM send-keys -t c q

# --mouse: a click on a tab (SGR mouse report, as xterm sends it)
start m 120 30 "$BIN view --mouse $TMP/slow.json"
expect "mouse: opens" m "Summary" 10
x=$(pane m | grep -m1 "1 Summary" | awk '{ print index($0, "4 Timeline") }')
y=$(pane m | grep -n -m1 "1 Summary" | cut -d: -f1)
if [ -n "$x" ] && [ "$x" -gt 0 ]; then
	TM send-keys -t m -l $'\e[<0;'"$((x + 1));$y"'M'
	expect "mouse: a click on '4 Timeline' opens it" m "^span " 5
else
	not_ok "mouse: found the tab" "$(pane m | head -n 5)"
fi
TM send-keys -t m q
expect "mouse: quits, mouse mode off" m "EXIT=0" 5

# --- big traces: a Timeline frame costs what is on screen. Key 4 then q,
# timed against key 1 (the Summary) then q on the same trace, best of two
# each: 16,384 threads (each frame used to walk lanes x tracks: over 200 s)
# and 100,000 events each nested in the one before (quadratic: 14 s)
python3 - "$TMP" <<'EOF'
import json, os, sys
d = sys.argv[1]
n = 16384
ev = [{"ph": "X", "name": "op%d" % (i % 50), "pid": 1, "tid": i + 1, "ts": i * 10, "dur": 5}
      for i in range(n)]
ev.append({"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": n * 10})
json.dump({"traceEvents": ev}, open(os.path.join(d, "threads.json"), "w"))
m = 100000
ev = [{"ph": "X", "name": "n%d" % (i % 7), "pid": 1, "tid": 1, "ts": i, "dur": 2 * m - 2 * i}
      for i in range(m)]
json.dump({"traceEvents": ev}, open(os.path.join(d, "nested.json"), "w"))
EOF
# key_then_q FILE KEY: seconds from KEY (then q at once) to the screen's exit
key_then_q() {
	local s="big$RANDOM" t0 t1
	TM new-session -d -s "$s" -x 200 -y 50 "'$BIN' view '$1'; echo EXIT=\$?; sleep 60"
	if ! wait_for "$s" "Summary" 60; then
		TM kill-session -t "$s" 2>/dev/null
		echo 999
		return
	fi
	t0=$(date +%s.%N)
	TM send-keys -t "$s" "$2" q
	wait_for "$s" "EXIT=" 120 || true
	t1=$(date +%s.%N)
	TM kill-session -t "$s" 2>/dev/null
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}
best2() { local a b; a=$(key_then_q "$1" "$2"); b=$(key_then_q "$1" "$2"); awk -v a="$a" -v b="$b" 'BEGIN { print (a < b ? a : b) }'; }
for f in threads nested; do
	s1=$(best2 "$TMP/$f.json" 1)
	s4=$(best2 "$TMP/$f.json" 4)
	if awk -v a="$s4" -v b="$s1" 'BEGIN { exit !(a <= 5 * b + 1) }'; then
		ok "$f: key 4 then q in ${s4} s, the Summary's in ${s1} s"
	else
		not_ok "$f: key 4 then q within 5x the Summary's time + 1 s" "Timeline ${s4} s, Summary ${s1} s"
	fi
done
done_testing
