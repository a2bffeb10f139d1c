#!/usr/bin/env bash
# san: skip  (Python and torch dominate; the merge and the control word run under ASan in unit/test_session_capture)
# tests/e2e/test_capture.sh - deep capture on demand with Debian's
# python3-torch: `proftop capture -p PID --steps 3` on an unmodified CNN
# script started under `proftop record`. The capture is saved and opens in
# `proftop report`: aten operators nested under the helper's module
# operators, three steps, torch's FLOPs for the convolutions (the formula on
# the script's shapes). The recording (another reader of the same session)
# merged it too, in the steps the capture line names and no others, and
# the steps after it run without torch's profiler. Then what must be
# refused or ended cleanly, the job going on: a
# second capture while one runs, Ctrl-C on a running capture, a job with no
# torch, a job between epochs (no step boundary), a script that runs its own
# torch.profiler, a job that has exited.
. tests/e2e/lib.sh

. tests/e2e/torch_lib.sh
torch_setup "deep capture"
S=tests/torch
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# job_pid NAME: the pid of the Python process whose session appears first
# after NAME was started (sessions are <pid>.session); waits 60 s at most
job_pid() {
	local before=$1 p
	for _ in $(seq 600); do
		for p in "$PROFTOP_SESSION_DIR"/*.session; do
			[ -e "$p" ] || continue
			p=$(basename "$p" .session)
			case " $before " in *" $p "*) ;; *) echo "$p"; return 0 ;; esac
		done
		sleep 0.1
	done
	return 1
}
sessions() { ls "$PROFTOP_SESSION_DIR" 2>/dev/null | sed -n 's/\.session$//p' | tr '\n' ' '; }

# capture_when_ready PID OUT ARGS...: proftop capture, retried while the job
# has not imported torch yet (no helper answers); its stderr in OUT.err
capture_when_ready() {
	local pid=$1 out=$2 rc
	shift 2
	for _ in $(seq 240); do
		"$PROFTOP" capture -p "$pid" "$@" >"$out.out" 2>"$out.err"
		rc=$?
		grep -q "no PyTorch helper" "$out.err" || return $rc
		sleep 0.5
	done
	return $rc
}

# --- a CNN job under `proftop record`, captured from another command
before=$(sessions)
"$PROFTOP" record -o "$TMP/rec.json" --log "$TMP/rec.log" -- \
	"$PY" $S/cnn_loader.py --steps 100000 --read-ms 0 --mark-after 20 --mark-file "$TMP/warm" \
	>"$TMP/rec.out" 2>&1 &
REC=$!
PIDS+=("$REC")
PID=$(job_pid "$before")
# past its first steps (torch's warm-up): the cost's "before" is steady steps
for _ in $(seq 1200); do [ -e "$TMP/warm" ] && break; sleep 0.1; done
if capture_when_ready "$PID" "$TMP/cap" --steps 3 -o "$TMP/cap.json"; then
	ok "proftop capture -p PID --steps 3 saves the capture"
else
	not_ok "capture" "$(cat "$TMP/cap.err")"
fi
line=$(grep "capture #1 (pid $PID): steps" "$TMP/cap.err")
if [ -n "$line" ] && printf '%s\n' "$line" |
	grep -Eq "during vs [0-9.]+ ms before \(x[0-9.]+\).*start blocked [0-9.]+ ms, stop [0-9.]+ ms"; then
	ok "the capture's cost is said: ${line#proftop: }"
else
	not_ok "the capture's cost" "$(cat "$TMP/cap.err")"
fi
first=$(printf '%s\n' "$line" | sed -n 's/.*: steps \([0-9]*\)-\([0-9]*\),.*/\1/p')
last=$(printf '%s\n' "$line" | sed -n 's/.*: steps \([0-9]*\)-\([0-9]*\),.*/\2/p')
"$PROFTOP" report "$TMP/cap.json" --json >"$TMP/cap.rep" 2>&1
verdict=$("$PY" - "$TMP/cap.rep" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in r["operators"]}
det = r["op_detail"]
def parent_of(i):
    d = det[i]["depth"]
    for j in range(i - 1, -1, -1):
        if det[j]["depth"] == d - 1:
            return det[j]["name"]
nested = any(e["name"] == "aten::conv2d" and e["depth"] > 0 and
             (parent_of(i) or "").endswith("(Conv2d)") for i, e in enumerate(det))
fl = [o for o in r["flops"]["operators"] if o["name"] == "aten::conv2d"]
# cnn_loader: batch 32; conv 3->8 on 16x16 and 8->16 on 8x8, 3x3, padding 1:
# 2*32*8*16*16*3*9 + 2*32*16*8*8*8*9 per step, three steps
want = 3 * (2 * 32 * 8 * 16 * 16 * 3 * 9 + 2 * 32 * 16 * 8 * 8 * 8 * 9)
print("steps=%d conv_calls=%d nested=%d flops_ok=%d" % (
    r["steps"], ops.get("aten::conv2d", {}).get("calls", 0), nested,
    len(fl) == 1 and abs(fl[0]["flops"] - want) <= want * 1e-6))
PYEOF
)
if [ "$verdict" = "steps=3 conv_calls=6 nested=1 flops_ok=1" ]; then
	ok "the saved capture opens in report: 3 steps, aten::conv2d nested under the module, torch's FLOPs"
else
	not_ok "saved capture" "$verdict" "$(head -c 600 "$TMP/cap.rep")"
fi
# the steps after it are timed (the figure is shown, not compared: other
# load on the machine moves step times more than a capture does; bench/
# measures the cost in paired medians)
if printf '%s\n' "$line" | grep -Eq "before \(x[0-9.]+\), [0-9.]+ ms after"; then
	ok "the steps after the capture are timed"
else
	not_ok "step time after the capture" "$line"
fi

# --- a second capture while one runs; Ctrl-C withdraws a running one
"$PROFTOP" capture -p "$PID" --steps 1000 -o "$TMP/long.json" >"$TMP/long.out" 2>"$TMP/long.err" &
LONG=$!
PIDS+=("$LONG")
for _ in $(seq 300); do grep -q "running, step" "$TMP/long.err" && break; sleep 0.1; done
check_out "a second capture while one runs is refused, with its progress" \
	"capture #2 is running \([0-9]+ of 1000 steps\)" \
	sh -c "'$PROFTOP' capture -p $PID --steps 2 -o '$TMP/second.json' 2>&1; test \$? -eq 1"
kill -INT "$LONG"
wait "$LONG"
rc=$?
if [ $rc -eq 1 ] && grep -q "withdrawing capture #2" "$TMP/long.err" &&
	grep -q "capture #2 (pid $PID): cancelled: cancelled after" "$TMP/long.err" && [ ! -e "$TMP/long.json" ]; then
	ok "Ctrl-C withdraws a running capture: stopped at a step boundary, nothing saved"
else
	not_ok "Ctrl-C on a running capture" "rc $rc" "$(cat "$TMP/long.err")"
fi
if ls "$PROFTOP_SESSION_DIR" | grep -q "capture-2"; then
	not_ok "a cancelled capture leaves no file" "$(ls "$PROFTOP_SESSION_DIR")"
else
	ok "a cancelled capture leaves no file in the session directory"
fi
check "after that, the next capture works" "$PROFTOP" capture -p "$PID" --steps 2 --no-after -o "$TMP/third.json"

kill -INT "$REC"
wait "$REC"
PIDS=()
# the recording merged capture #1 too, into the steps the line named
"$PROFTOP" report "$TMP/rec.json" --json --steps "$first:$last" >"$TMP/in.rep" 2>&1
"$PROFTOP" report "$TMP/rec.json" --json --steps "0:$((first - 1))" >"$TMP/out.rep" 2>&1
in_calls=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(o["calls"] for o in r["operators"] if o["name"]=="aten::conv2d"))' "$TMP/in.rep" 2>/dev/null)
out_calls=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(o["calls"] for o in r["operators"] if o["name"]=="aten::conv2d"))' "$TMP/out.rep" 2>/dev/null)
if [ "$in_calls" = 6 ] && [ "$out_calls" = 0 ]; then
	ok "the recording has the capture's aten ops in steps $first-$last and none before"
else
	not_ok "merged into the recording by step" "in $first:$last: $in_calls, before: $out_calls"
fi
# torch's profiler is off again after the capture: the five steps after it
# (the capture command waited for them before the next capture was asked
# for) hold no aten operator, only the helper's modules
"$PROFTOP" report "$TMP/rec.json" --json --steps "$((last + 1)):$((last + 5))" >"$TMP/after.rep" 2>&1
after=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["steps"], sum(o["calls"] for o in r["operators"] if o["name"].startswith("aten::")), sum(o["calls"] for o in r["operators"] if o["name"].endswith("(Conv2d)")))' "$TMP/after.rep" 2>/dev/null)
if [ "$after" = "5 0 10" ]; then
	ok "after the capture the job runs without torch's profiler (5 steps: no aten op, its modules)"
else
	not_ok "profiler off after the capture" "steps, aten calls, Conv2d calls: $after"
fi
check_out "a job that has exited: refused" "has exited|no proftop session" \
	sh -c "'$PROFTOP' capture -p $PID --steps 2 2>&1; test \$? -eq 1"

# --- a Python job without torch: no helper answers
before=$(sessions)
"$PROFTOP" record -o "$TMP/nt.json" --log "$TMP/nt.log" -- "$PY" -c 'import time; time.sleep(8)' \
	>"$TMP/nt.out" 2>&1 &
NT=$!
PIDS+=("$NT")
NPID=$(job_pid "$before")
check_out "a job without torch: says no PyTorch helper answers" "no PyTorch helper answers" \
	sh -c "'$PROFTOP' capture -p $NPID --steps 2 2>&1; test \$? -eq 1"
wait "$NT"
PIDS=()

# --- between epochs: no step boundary within --wait, the request withdrawn
before=$(sessions)
"$PROFTOP" record -o "$TMP/ep.json" --log "$TMP/ep.log" -- "$PY" $S/epochs.py --epochs 2 --steps 30 \
	--pause 6 --pause-file "$TMP/pausing" >"$TMP/ep.out" 2>&1 &
EP=$!
PIDS+=("$EP")
EPID=$(job_pid "$before")
for _ in $(seq 900); do [ -e "$TMP/pausing" ] && break; sleep 0.1; done
check_out "between epochs: no step boundary in --wait, request withdrawn" \
	"reached no step boundary in 1 s.*withdrawing capture #1" \
	sh -c "'$PROFTOP' capture -p $EPID --steps 2 --wait 1 2>&1; test \$? -eq 1"
wait "$EP"
PIDS=()
if grep -q "^RESULT steps=60" "$TMP/ep.log"; then
	ok "the job went on after the pause: all its steps"
else
	not_ok "job after a withdrawn capture" "$(tail -5 "$TMP/ep.log")"
fi
check_out "the withdrawn capture never ran" '"steps": 60' "$PROFTOP" report "$TMP/ep.json" --json

# --- a script with its own torch.profiler running: refused, its profiler intact
cat >"$TMP/own.py" <<'PYEOF'
import os, time, torch
from torch import nn
m = nn.Linear(8, 8)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
with torch.profiler.profile() as prof:
    t = time.time()
    while time.time() - t < 10 and not os.path.exists(os.environ["STOP"]):
        m(torch.randn(4, 8)).sum().backward()
        opt.step()
        opt.zero_grad()
        time.sleep(0.005)
print("RESULT own profiler events=%d" % len(prof.events()), flush=True)
PYEOF
before=$(sessions)
STOP=$TMP/stop "$PROFTOP" record -o "$TMP/own.json" --log "$TMP/own.log" -- "$PY" "$TMP/own.py" \
	>"$TMP/own.out" 2>&1 &
OWN=$!
PIDS+=("$OWN")
OPID=$(job_pid "$before")
capture_when_ready "$OPID" "$TMP/owncap" --steps 2
rc=$?
touch "$TMP/stop"
wait "$OWN"
PIDS=()
if [ $rc -eq 1 ] && grep -q "failed: torch's profiler is already running in this job" "$TMP/owncap.err" &&
	grep -q "^RESULT own profiler events=[1-9]" "$TMP/own.log"; then
	ok "the script's own torch.profiler: refused, and the script's profiler ends normally"
else
	not_ok "own profiler" "rc $rc" "$(cat "$TMP/owncap.err")" "$(tail -3 "$TMP/own.log")"
fi

# --- the screen: key T under `proftop run`, at 80x24
if ! command -v tmux >/dev/null; then
	skip "key T on the screen" "no tmux"
	done_testing
	exit 0
fi
SOCK="pt-cap-$$"
TM() { tmux -L "$SOCK" "$@"; }
trap 'tmux_quit "$SOCK" s; TM kill-server 2>/dev/null; cleanup' EXIT
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
ROOT=$(pwd)
mkdir -p "$TMP/scr"
wait_for() { # wait_for REGEX SECS: polls the pane until REGEX shows
	for _ in $(seq $(($2 * 10))); do
		TM capture-pane -p -t s 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
expect() { # expect DESC REGEX [SECS]
	if wait_for "$2" "${3:-20}"; then ok "$1"; else not_ok "$1" "$(TM capture-pane -p -t s | head -n 30)"; fi
}
TM new-session -d -s s -x 80 -y 24 -c "$TMP/scr" \
	"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PROFTOP_SESSION_DIR=$PROFTOP_SESSION_DIR \
	$BIN run -- $PY $ROOT/$S/cnn_loader.py --steps 100000 --read-ms 0 --mark-after 20 \
	--mark-file $TMP/scr-warm; echo EXIT=\$?; sleep 60"
for _ in $(seq 1200); do [ -e "$TMP/scr-warm" ] && break; sleep 0.1; done
# its steps on the screen: the session is open (the Model Summary's row
# "ProfileStep" shows before, with 0 calls; a T then is refused)
expect "the screen shows the job's steps" " [1-9][0-9]* steps [|]"
TM send-keys -t s T
# the capture's line as it moves (asked, running, written, saved); on a
# failure, every state the screen's last line showed, with the seconds since
# the key, is the first line of the message
seen="" last="" t0=$SECONDS got=0
for _ in $(seq 1200); do
	pane=$(TM capture-pane -p -t s 2>/dev/null)
	line=$(printf '%s\n' "$pane" | tail -n 1)
	if [ "$line" != "$last" ]; then
		last=$line
		seen="$seen [$((SECONDS - t0))s] $(printf '%s' "$line" | cut -c1-50)"
	fi
	if printf '%s\n' "$pane" |
		grep -Eq "capture #1: saved proftop-capture-[0-9]+-1\.json, steps [0-9]+-[0-9]+, step time x[0-9.]+"; then
		got=1
		break
	fi
	sleep 0.1
done
if [ $got = 1 ]; then
	ok "key T: the capture's progress, then its file and the step time's ratio"
else
	not_ok "key T: the capture's progress, then its file and the step time's ratio" \
		"after $((SECONDS - t0)) s the last line was: $last" "lines seen:$seen" \
		"$(TM capture-pane -p -t s | head -n 30)" \
		"$(tail -n 20 "$XDG_STATE_HOME"/proftop/proftop-run-*.log 2>/dev/null)"
fi
TM send-keys -t s 2 / c o n v 2 d
expect "the Operators view has the captured aten::conv2d, with TFLOP/s" "aten::conv2d +[0-9]+ .*[0-9]\.[0-9]+ *$"
if ls "$TMP/scr"/proftop-capture-*-1.json >/dev/null 2>&1 &&
	"$PROFTOP" report "$TMP/scr"/proftop-capture-*-1.json --json >"$TMP/scr.rep" 2>&1 &&
	grep -q '"aten::conv2d"' "$TMP/scr.rep"; then
	ok "the screen saved the capture in its directory; it opens in report"
else
	not_ok "screen's capture file" "$(ls "$TMP/scr")"
fi
tmux_quit "$SOCK" s
TM kill-server 2>/dev/null
done_testing
