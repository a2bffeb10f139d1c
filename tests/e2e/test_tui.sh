#!/usr/bin/env bash
# test_tui.sh - the real screen in tmux: `proftop view` on a real trace and
# on a trace with escape sequences in its names, and `proftop run` on
# minitrain. Polls the pane (never fixed sleeps) and uses its own tmux
# socket so the user's tmux is untouched.
# san: skip
# (the TUI under ASan is slow enough to make the polling flaky on 2 cores;
#  the same drawing code runs under ASan in build-san/tests/test_tui_screen)
. tests/e2e/lib.sh
command -v tmux >/dev/null || { skip "tmux screen tests" "no tmux"; done_testing; exit 0; }
SOCK="pt-e2e-$$"
TM() { tmux -L "$SOCK" "$@"; }
# the job a test leaves running on purpose (run, q, d) carries --seed $$
trap 'TM kill-server 2>/dev/null; pkill -f "minitrain --steps 0 --seed $$\$"; rm -rf "$TMP"' EXIT
TRACE="$PT_TRACES/kineto_tb_plugin/samples__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
ROOT=$(pwd)
case $TRACE in /*) ;; *) TRACE="$ROOT/$TRACE" ;; esac

# wait_for SESSION REGEX [SECS]: polls the pane until REGEX shows
wait_for() {
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

if [ ! -f "$TRACE" ]; then
	skip "view tests" "no shared traces"
else
	start v 200 50 "$BIN view $TRACE"
	expect "summary view shows the model summary" v "Model Summary"
	expect "summary shows the verdict" v "Verdict: input-bound"
	expect "session line with steps and reader ratio" v "6 steps .* reader 39\.6%"
	TM send-keys -t v 2
	expect "operators view ranks operators" v "aten::conv2d"
	n_all=$(pane v | grep -c "aten::")
	TM send-keys -t v / c o n v 2 d
	expect "search line shows the pattern" v "Search: conv2d"
	n_match=$(pane v | grep -c "aten::")
	if [ "$n_match" -gt 0 ] && [ "$n_match" -lt "$n_all" ]; then ok "search narrows the list ($n_all -> $n_match)"
	else not_ok "search narrows the list" "$n_all -> $n_match"; fi
	if TM capture-pane -p -e -t v | grep -q $'\e\\[[0-9;]*4[0-9;]*m'; then ok "matched letters highlighted (underline)"
	else not_ok "matched letters highlighted"; fi
	TM send-keys -t v Escape 3
	expect "kernels view" v "GPU Total.*GPU Avg"
	TM send-keys -t v 5
	expect "memory view" v "Memcpy|memcpy"
	TM send-keys -t v 6
	expect "distributed view" v "Communication"
	TM send-keys -t v 4
	expect "timeline shows lanes" v "GPU 0 stream 7"
	r0=$(pane v | grep -m1 '^span')
	TM send-keys -t v w
	wait_for v "^span" 2
	sleep 0.3
	r1=$(pane v | grep -m1 '^span')
	TM send-keys -t v s
	sleep 0.3
	wait_for v "^span" 2
	r2=$(pane v | grep -m1 '^span')
	if [ "$r0" != "$r1" ] && [ "$r0" = "$r2" ]; then ok "w then s returns to the same zoom"
	else not_ok "w then s returns to the same zoom" "$r0" "$r1" "$r2"; fi
	TM send-keys -t v w w d
	sleep 0.3
	r3=$(pane v | grep -m1 '^span')
	TM send-keys -t v a a
	sleep 0.3
	r4=$(pane v | grep -m1 '^span')
	if [ "$r3" != "$r4" ]; then ok "a/d move the visible range"; else not_ok "a/d move the visible range" "$r3"; fi
	TM send-keys -t v e
	expect "e exports a snapshot and names its full path" v "exported [0-9]+ events to /[^ ]*/proftop-[0-9]{8}-[0-9]{6}\.json"
	snap=$(ls "$TMP"/proftop-*.json 2>/dev/null | head -n1)
	if [ -n "$snap" ]; then
		a=$("$PROFTOP" report "$TRACE" 2>/dev/null | grep -E "^ *(ProfileStep|Dataloader|Backward)" | head -3)
		b=$("$PROFTOP" report "$snap" 2>/dev/null | grep -E "^ *(ProfileStep|Dataloader|Backward)" | head -3)
		if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "the snapshot reports the same numbers"
		else not_ok "the snapshot reports the same numbers" "$a" "$b"; fi
	else
		not_ok "the snapshot file exists"
	fi
	# e twice within a second: two more files, never "use --force"
	TM send-keys -t v e e
	for _ in $(seq 50); do [ "$(ls "$TMP"/proftop-*.json 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.1; done
	nsnap=$(ls "$TMP"/proftop-*.json 2>/dev/null | wc -l)
	if [ "$nsnap" -eq 3 ] && ! pane v | grep -q "force"; then ok "e twice in a second: a second file, no --force"
	else not_ok "e twice in a second: a second file, no --force" "$nsnap files" "$(pane v | tail -n 2)"; fi
	TM send-keys -t v 1
	TM resize-window -t v -x 80 -y 24 2>/dev/null || TM resize-pane -t v -x 80 -y 24
	sleep 0.3
	expect "80x24 after resize stays readable" v "Verdict"
	if pane v | grep -q "too small"; then not_ok "no too-small notice at 80x24"; else ok "no too-small notice at 80x24"; fi
	TM resize-window -t v -x 30 -y 8 2>/dev/null
	expect "below the minimum: a clear notice" v "terminal too small"
	TM resize-window -t v -x 200 -y 50 2>/dev/null
	TM send-keys -t v q
	expect "q quits with status 0" v "EXIT=0"
fi

# a trace whose names carry escape sequences
printf '{"traceEvents":[{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},{"ph":"X","cat":"cpu_op","name":"evil\\u001b]0;PWNED\\u0007\\u001b[2Jx","pid":1,"tid":1,"ts":10,"dur":50}]}' >"$TMP/evil.json"
start e 120 30 "$BIN view $TMP/evil.json"
# no Dataloader in its step: the reader figures are n/a, not 0, as in report
expect "no Dataloader: reader_cost n/a" e "reader_cost n/a \| batch_cost"
expect "no Dataloader: reader ratio n/a" e "\| reader ratio n/a \|"
TM send-keys -t e 2
expect "escaped names are shown literally" e 'evil\\e\]0;PWNED'
TM send-keys -t e 4
sleep 0.3
TM send-keys -t e q
expect "the escaped trace quits cleanly" e "EXIT=0"
if TM display-message -p -t e '#{pane_title}' | grep -q PWNED; then not_ok "the title was not changed"; else ok "the title was not changed"; fi

# a trace with shapes (FLOPs): the Summary's MFU line says what report says
mfu=$("$BIN" report fixtures/pytorch/resnet50_workers0.pt.trace.json.gz | sed -n 's/^     = \([0-9.]*%\) of the \([a-z0-9]*\) dense peak.*/\1 of the \2/p')
start mf 200 50 "$BIN view $PWD/fixtures/pytorch/resnet50_workers0.pt.trace.json.gz"
if [ -n "$mfu" ]; then
	expect "the Summary's MFU line, as report's ($mfu)" mf "^MFU ${mfu//./\\.} dense peak \\(Tesla V100-DGXS-32GB\\), [0-9.]+ TFLOP/s a step; [0-9.]+% of device time has FLOPs"
else
	not_ok "report's MFU of the resnet50 fixture" "none found"
fi
TM send-keys -t mf q
expect "the FLOPs trace quits cleanly" mf "EXIT=0"
TM kill-session -t mf 2>/dev/null

# -n: the real screen exits by itself
start n 100 30 "$BIN view -n 3 -d 0.2 $TMP/evil.json"
expect "-n N exits after N refreshes" n "EXIT=0" 15

# SIGTERM leaves the terminal clean (the pane shows the shell's output again)
start k 100 30 "$BIN view $TMP/evil.json"
expect "view started" k "1 Summary"
pid=$(TM list-panes -t k -F '#{pane_pid}')
pkid=$(pgrep -P "$pid" -f "proftop view" | head -n1)
[ -n "$pkid" ] && kill -TERM "$pkid"
expect "SIGTERM ends the screen" k "EXIT=0"
if TM display-message -p -t k '#{alternate_on}' | grep -q 0; then ok "terminal left the alternate screen"
else not_ok "terminal left the alternate screen"; fi

# a job that fails at once: the screen shows the end of its output and
# where the log is; the summary after q says it again
start f 100 30 "$BIN run -- sh -c 'echo reading /data/train; echo \"ValueError: no such split\" >&2; exit 3'"
expect "a failing job: the screen shows the end of its output" f "The job failed; the end of its output \(" 20
if pane f | grep -q "| ValueError: no such split" && pane f | grep -q "| reading /data/train" &&
	pane f | grep -q "exited (code 3)"; then
	ok "a failing job: its last lines and exit code on the Summary"
else
	not_ok "a failing job's lines on the screen" "$(pane f | head -n 12)"
fi
TM send-keys -t f q
expect "... and the exit status is CMD's" f "EXIT=3" 20
# (-J: the lines as printed, not as wrapped at 100 columns)
if TM capture-pane -p -J -t f | grep -Eq "^proftop: CMD exited with code 3; its output is in /.*/proftop-run-[0-9]+\.log, ending:$" &&
	TM capture-pane -p -J -t f | grep -q "^  | ValueError: no such split$"; then
	ok "a failing job: the summary after q names the log and its end"
else
	not_ok "a failing job: the summary after q" "$(TM capture-pane -p -J -t f | tail -n 8)"
fi

# the live screen on minitrain
if [ -x "$ROOT/build/examples/minitrain" ]; then
	start r 160 40 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run -d 0.5 -- $ROOT/build/examples/minitrain"
	expect "run shows the live screen" r "running" 20
	expect "run shows steps from minitrain" r "[1-9][0-9]* steps" 20
	TM send-keys -t r 2
	expect "run: operators view" r "Name .*Calls" 10
	# q asks; any other key stays, the job running
	TM send-keys -t r q
	expect "run: q asks before it stops the job" r "Stop the job\? q/y: stop it \(SIGINT\) \| d: leave it running \| other key: stay" 10
	mpid=$(pgrep -f "^$ROOT/build/examples/minitrain$" | head -n1)
	TM send-keys -t r x
	expect "run: another key stays" r "the job runs on; the screen stays" 10
	sleep 0.5
	if [ -n "$mpid" ] && kill -0 "$mpid" 2>/dev/null && ! pane r | grep -q "EXIT="; then
		ok "run: after q and another key the job still runs (pid $mpid)"
	else
		not_ok "run: the job runs on after q, x" "pid '$mpid'" "$(pane r | tail -n 3)"
	fi
	TM send-keys -t r q q
	expect "run: q, q stops the command and prints the summary" r "EXIT=" 30
	# d leaves the job running; proftop exits 0 and says how to watch it again
	start d 160 40 "PROFTOP_LIB=$ROOT/build/libproftop.so $BIN run -d 0.5 --log $TMP/d.log -- $ROOT/build/examples/minitrain --steps 0 --seed $$"
	expect "run (to be left running) shows steps" d "[1-9][0-9]* steps" 20
	TM send-keys -t d q d
	expect "run: q, d closes proftop with exit 0" d "EXIT=0" 30
	dpid=$(pane d | sed -n "s/.*left pid \([0-9]*\) running.*/\1/p" | head -n1)
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null &&
		[ "$(readlink "/proc/$dpid/exe")" = "$ROOT/build/examples/minitrain" ]; then
		ok "run: q, d left the job running (pid $dpid), the way back named"
		kill "$dpid"
	else
		not_ok "run: q, d leaves the job running" "pid '$dpid'" "$(pane d | tail -n 4)"
	fi
else
	skip "run on minitrain" "no build/examples/minitrain"
fi
done_testing
