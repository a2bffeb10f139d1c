#!/usr/bin/env bash
# san: skip  (torch dominates; the C side runs under ASan in unit/test_capture_group)
# tests/e2e/test_capture_ranks.sh - a capture of the same steps on every rank
# of a DistributedDataParallel job (tests/torch/collectives.py, gloo on the
# CPU, unmodified), checked against the script's own clocks:
# - `record --capture-on-straggler`: a rank made slow from step 12 on (a
#   busy loop in its data loading, 15x the steps before) asks for it by
#   itself, once; every rank captures the same three steps (each rank's
#   saved file holds exactly the steps whose all_gather the script timed
#   for those step numbers), saved together (rank-R.json per rank, which
#   `proftop merge` joins, and all-ranks.json), with torch's operators;
# - key T on `proftop run`'s screen (tmux, 2 ranks): the status line
#   follows the group and names its folder, which holds both ranks.
# On .venv's torch 2.x with torchrun (PT_VENV, else PT_PYTHON, else Debian's
# torch 1.13 with tests/torch/launch2.sh).
. tests/e2e/lib.sh
. tests/e2e/torch_lib.sh
if [ -z "${PT_PYTHON:-}" ] && [ -x "${PT_VENV:-.venv}/bin/python" ]; then
	PT_PYTHON=$PWD/${PT_VENV:-.venv}/bin/python
fi
torch_setup "captures of the same steps on every rank"
S=$PWD/tests/torch
ver=$("$PY" -c 'import torch; print(torch.__version__)')
TR=$(dirname "$PY")/torchrun
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
launch() { # launch ARGS...: two ranks of collectives.py on a free port
	if [ "${ver%%.*}" -ge 2 ] && [ -x "$TR" ]; then
		echo "$TR" --nproc_per_node=2 --master_port="$(free_port)" "$S/collectives.py" "$@"
	else
		echo env PYTHON="$PY" SCRIPT=collectives.py MASTER_PORT="$(free_port)" sh "$S/launch2.sh" "$@"
	fi
}

# --- by itself: --capture-on-straggler
mkdir -p "$TMP/rec" "$TMP/clk"
# shellcheck disable=SC2046
(cd "$TMP/rec" && PROFTOP_RING_SLOTS=65536 "$BIN" record --capture-on-straggler=8 \
	--capture-steps 3 -o "$TMP/rec/out.json" --log "$TMP/rec/job.log" -- \
	$(launch --steps 30 --data-ms 40 --slow-rank 1 --slow-ms 600 --slow-from 12 \
		--clocks "$TMP/clk")) >"$TMP/rec.out" 2>&1
rc=$?
v=$("$PY" - "$TMP/rec.out" "$TMP/rec" "$TMP/clk" "$BIN" 2>&1 <<'PYEOF'
import glob, json, os, re, subprocess, sys
out, d, clk, binp = sys.argv[1:5]
text = open(out).read()
st = re.findall(r"proftop: straggler: step (\d+) took ([\d.]+) ms on rank (\d+), ([\d.]+)x the "
                r"ranks' median ([\d.]+) ms; capturing steps (\d+)-(\d+) on 2 ranks", text)
saved = re.findall(r"proftop: capture of steps (\d+)-(\d+) on 2 ranks: saved (\S+)/", text)
if len(st) != 1 or len(saved) != 1:
    print("FAIL straggler lines %d, saved lines %d" % (len(st), len(saved))); sys.exit()
step, a, b = int(st[0][0]), int(st[0][5]), int(st[0][6])
errs = []
if step < 12:
    errs.append("the trigger named step %d, before the slow ones" % step)
if float(st[0][3]) < 8:
    errs.append("ratio %s under 8" % st[0][3])
if b - a != 2 or a <= step or saved[0][:2] != (str(a), str(b)):
    errs.append("steps %d-%d after step %d, saved %s" % (a, b, step, saved[0][:2]))
folder = os.path.join(d, saved[0][2])
files = sorted(os.path.basename(p) for p in glob.glob(folder + "/*"))
if files != ["all-ranks.json", "rank-0.json", "rank-1.json"]:
    errs.append("files %s" % files)
# the script's own clock of each step's all_gather, per rank
ag = {}
for r in (0, 1):
    for line in open(os.path.join(clk, "rank%d.txt" % r)):
        op, s, ns = line.split()
        if op == "all_gather":
            ag[(r, int(s))] = int(ns) / 1000.0  # us, the trace's unit and clock
for r in (0, 1):
    if errs:
        break
    tr = json.load(open(os.path.join(folder, "rank-%d.json" % r)))
    if tr.get("distributedInfo", {}).get("rank") != r:
        errs.append("rank-%d.json says rank %s" % (r, tr.get("distributedInfo")))
    ev = tr["traceEvents"]
    steps = [e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith(("ProfileStep", "ProfilerStep"))]
    pids = {e.get("pid") for e in ev if e.get("ph") == "X"}
    aten = [e for e in ev if e.get("name", "").startswith("aten::")]
    inside = sorted(s for (rr, s), t in ag.items() if rr == r and
                    any(e["ts"] <= t <= e["ts"] + e["dur"] for e in steps))
    if len(steps) != 3 or len(pids) != 1 or not aten or inside != [a, a + 1, a + 2]:
        errs.append("rank %d: %d steps, pids %s, %d aten ops, the script's steps inside: %s"
                    % (r, len(steps), pids, len(aten), inside))
if not errs:
    m = subprocess.run([binp, "merge", folder + "/rank-0.json", folder + "/rank-1.json", "-o",
                        os.path.join(d, "merged.json")], capture_output=True, text=True)
    rep = subprocess.run([binp, "report", os.path.join(d, "merged.json"), "--json"],
                         capture_output=True, text=True)
    ranks = [x["name"] for x in json.loads(rep.stdout).get("ranks", [])] if rep.returncode == 0 else []
    if m.returncode != 0 or ranks != ["rank 0", "rank 1"]:
        errs.append("merge rc %d, ranks %s: %s" % (m.returncode, ranks, m.stderr[-300:]))
print("FAIL " + "; ".join(errs) if errs else
      "OK step %d (%s ms, %sx the median) -> steps %d-%d on both ranks, the script's clocks inside"
      % (step, st[0][1], st[0][3], a, b))
PYEOF
)
if [ $rc -eq 0 ] && [ "${v%% *}" = OK ]; then
	ok "record --capture-on-straggler (torch $ver): ${v#OK }; saved together, merge-ready"
else
	not_ok "record --capture-on-straggler" "rc $rc: $v" "$(tail -n 6 "$TMP/rec.out")" \
		"$(grep -i -E 'error|Traceback' "$TMP/rec/job.log" | head -n 5)"
fi

# --- key T on the screen
if ! command -v tmux >/dev/null; then
	skip "key T on a job of two ranks" "no tmux"
	done_testing
	exit 0
fi
SOCK="pt-e2e-capranks-$$"
TM() { tmux -L "$SOCK" "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
wait_for() { # wait_for REGEX SECS
	local n=$(($2 * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t cr 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
mkdir -p "$TMP/tui"
cmd="$BIN run --capture-steps 2 --log $TMP/tui/job.log -- $(launch --steps 400 --data-ms 40)"
TM new-session -d -s cr -x 160 -y 40 -c "$TMP/tui" \
	"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PROFTOP_RING_SLOTS=65536 $cmd; echo EXIT=\$?; sleep 60"
if wait_for "2 ranks|ranks: 2|rank 1" 60 && sleep 2 && TM send-keys -t cr T &&
	wait_for "capture of steps [0-9]+-[0-9]+ on 2 ranks: saved proftop-capture-steps-[0-9]+-[0-9]+/" 60; then
	line=$(TM capture-pane -p -t cr | grep -Eo "capture of steps [0-9]+-[0-9]+ on 2 ranks: saved proftop-capture-steps-[0-9]+-[0-9]+")
	dir=$TMP/tui/${line##* }
	n=$(ls "$dir" 2>/dev/null | tr '\n' ' ')
	if [ "$n" = "all-ranks.json rank-0.json rank-1.json " ]; then
		ok "key T on a job of two ranks: \"$line\" ($n)"
	else
		not_ok "key T on a job of two ranks" "$line: files $n"
	fi
else
	not_ok "key T on a job of two ranks" "$(TM capture-pane -p -t cr | head -n 40)"
fi
TM send-keys -t cr q
sleep 0.5
TM send-keys -t cr y
wait_for "EXIT=" 60 || TM send-keys -t cr C-c
TM kill-server 2>/dev/null
done_testing
