#!/usr/bin/env bash
# san: skip  (Python and torch dominate; the report paths it uses run under ASan in test_agg and test_live)
# tests/e2e/test_torch2.sh - what PyTorch 2.x brought, on unmodified scripts
# (tests/torch/), each against the script's own clock as test_torch_zero
# does (steps exactly, phases within 5 points, IPS within 8 %):
# - a model wrapped in torch.compile (inductor on the CPU): its compiling
#   steps found (the script tells them by TorchDynamo's own frame counter),
#   shown and left out of the figures, the compiled region an operator,
#   recompiles and graph breaks counted, the advisor naming a model that
#   recompiles every few steps;
# - torchrun with two ranks (gloo): both ranks' sessions with their rank
#   numbers and steps, the job's exit code back, a rank that dies noted and
#   the other's session still read;
# - DataLoader workers started with spawn and forkserver;
# - a real Kineto trace (torch.profiler in the script, torch's own export):
#   every operator's calls and self time as torch's key_averages() gives
#   them, within 1 %.
# It runs under Debian's torch 1.13 too (tests/run.sh runs it under both):
# there the torch.compile and torchrun parts are skipped, with the reason.
. tests/e2e/lib.sh

. tests/e2e/torch_lib.sh
torch_setup "PyTorch 2.x shapes"
S=tests/torch
ver=$("$PY" -c 'import torch; print(torch.__version__)')
jq_py() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$TMP/$1.rep"; }

# --- DataLoader workers started with spawn and forkserver (every torch)
for m in spawn forkserver; do
	record "w$m" "$PY" $S/cnn_loader.py --steps 40 --workers 2 --read-ms 2 --start-method $m
	compare "w$m" "CNN + DataLoader (2 $m workers)"
done

# --- a Kineto trace against torch's own key_averages()
if ! "$PY" -c 'import sys, torch; sys.exit(not torch.autograd.kineto_available())' 2>/dev/null; then
	skip "Kineto trace vs key_averages" "torch $ver has no Kineto"
else
	"$PY" $S/kineto_check.py "$TMP/kin" >"$TMP/kin.out" 2>&1
	"$PROFTOP" report --json "$TMP/kin.json" >"$TMP/kin.rep" 2>>"$TMP/kin.out"
	v=$("$PY" - "$TMP/kin.ops.json" "$TMP/kin.rep" <<'PYEOF'
import json, sys
ops = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in json.load(open(sys.argv[2]))["operators"]}
n = bad = 0
errs = []
for name, (calls, self_us, _) in ops.items():
    r = rows.get(name)
    if r is None:
        # proftop shows these as the step's phases, not operators
        if name.startswith(("Optimizer.", "autograd::engine::evaluate_function",
                            "ProfilerStep#", "enumerate(DataLoader)")):
            continue
        errs.append("%s missing" % name)
        continue
    n += 1
    mine = r["cpu_self_ms"] * 1000.0
    if r["calls"] != calls or abs(mine - self_us) > 0.01 * max(self_us, 1.0):
        errs.append("%s: calls %d/%d self %.1f/%.1f us" % (name, r["calls"], calls, mine, self_us))
print(("FAIL " + "; ".join(errs[:5])) if errs or n < 20 else "OK %d operators" % n)
PYEOF
)
	case "$v" in
	OK*) ok "Kineto trace: ${v#OK } with key_averages()'s calls and self CPU time (within 1 %)" ;;
	*) not_ok "Kineto trace vs key_averages" "$v" "$(tail -n 3 "$TMP/kin.out")" ;;
	esac
fi

# --- torch.compile
if ! "$PY" -c 'import sys, torch; sys.exit(not hasattr(torch, "compile"))'; then
	skip "torch.compile" "torch $ver has no torch.compile (2.0 and later)"
elif ! "$PY" -c 'import sys, torch._dynamo; sys.exit(not hasattr(torch._dynamo, "callback_handler"))'; then
	skip "torch.compile" "torch $ver has no compile callbacks (2.5 and later)"
else
	record comp "$PY" $S/compiled.py --steps 40 --reshape-at 20 --graph-break
	compare comp "torch.compile'd MLP, steady state (compiling steps left out by both)"
	want=$(sed -n 's/^RESULT .* compiled=\([0-9,]*\) .*/\1/p' "$TMP/comp.log")
	# proftop numbers steps from 0, the script from 1
	got=$(jq_py comp '",".join(str(s["number"] + 1) for s in d["steps_detail"] if s.get("compile_ms"))')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "the compiling steps are the script's own ($want)"
	else
		not_ok "compiling steps" "script: $want" "proftop: $got"
	fi
	c=$(jq_py comp 'd["perf_summary"]["compile"]')
	"$PY" - "$TMP/comp.rep" <<'PYEOF' && ok "compile figures: 2 steps left out, recompiles and graph breaks counted ($c)" || not_ok "compile figures" "$c"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["perf_summary"]["compile"]
assert c["steps"] == 2 and c["left_out"] is True, c
assert c["recompiles"] >= 1 and c["compiles"] > c["recompiles"], c
assert c["graph_breaks"] >= 2, c          # one per compile of the forward, at least
rows = {r["name"]: r for r in d["model_summary"]}
assert rows["ProfileStep"]["calls"] == d["steps"] - 2, rows["ProfileStep"]
PYEOF
	ops=$(jq_py comp '"\n".join(r["name"] for r in d["operators"])')
	printf '%s\n' "$ops" | grep -qxF "(compiled Net)" && ok "the compiled region is the operator '(compiled Net)'" ||
		not_ok "compiled operator" "$ops"
	printf '%s\n' "$ops" | grep -q "^body" && not_ok "modules inside the compiled region are not operators" "$ops" ||
		ok "modules inside the compiled region are not operators"
	"$PROFTOP" report "$TMP/comp.json" >"$TMP/comp.txt"
	grep -q '^torch.compile: 2 of 40 steps compiled (#0 #19, .*left out of the figures' "$TMP/comp.txt" &&
		ok "the report says which steps compiled" || not_ok "compile line" "$(grep -i compile "$TMP/comp.txt")"
	grep -q '^Note: torch.compile is compiling' "$TMP/comp.txt" && ok "the note that it compiles" ||
		not_ok "compiling note" "$(grep '^Note' "$TMP/comp.txt")"
	"$PROFTOP" report --json --with-compile "$TMP/comp.json" >"$TMP/compw.rep"
	n=$(jq_py compw 'd["model_summary"][0]["calls"], d["perf_summary"]["compile"]["left_out"]')
	[ "$n" = "40 False" ] && ok "--with-compile counts them in" || not_ok "--with-compile" "$n"
	# the same job, unchanged: same loss with and without proftop
	if cmp -s <(grep '^RESULT' "$TMP/comp.log" | sed 's/.* loss=/loss=/') \
		<("$PY" $S/compiled.py --steps 40 --reshape-at 20 --graph-break | grep '^RESULT' | sed 's/.* loss=/loss=/'); then
		ok "the compiled script computes the same under proftop (same loss)"
	else
		not_ok "same loss with and without proftop"
	fi
	# inductor with no C++ compiler: the job's own error, unchanged
	PATH=/nonexistent TORCHINDUCTOR_CACHE_DIR=$TMP/ic1 "$PY" $S/compiled.py --steps 3 >"$TMP/nocc1.out" 2>&1
	rc1=$?
	PATH=/nonexistent TORCHINDUCTOR_CACHE_DIR=$TMP/ic2 "$PROFTOP" record -o "$TMP/nocc.json" \
		--log "$TMP/nocc2.out" -- "$PY" $S/compiled.py --steps 3 >/dev/null 2>&1
	rc2=$?
	e1=$(grep -E '^[A-Za-z_.]+(Error|Exception)[A-Za-z_.]*: ' "$TMP/nocc1.out" | tail -n 1)
	e2=$(grep -E '^[A-Za-z_.]+(Error|Exception)[A-Za-z_.]*: ' "$TMP/nocc2.out" | tail -n 1)
	if [ $rc1 -ne 0 ] && [ $rc1 -eq $rc2 ] && [ -n "$e1" ] && [ "$e1" = "$e2" ]; then
		ok "torch.compile failing in the job (no C++ compiler): its own error and exit $rc1, unchanged"
	else
		not_ok "failing compile" "alone: rc $rc1 $e1" "under proftop: rc $rc2 $e2"
	fi
	# a model that recompiles every few steps: the advisor names it
	record recomp "$PY" $S/compiled.py --steps 24 --recompile-every 4
	adv=$(jq_py recomp '[a["evidence"] for a in d["advice"] if a["key"] == "recompile"]')
	case "$adv" in
	*"model (compiled Net) recompiled in 5 of 24 steps"*) ok "advice: $adv" ;;
	*) not_ok "recompile advice" "$adv" ;;
	esac
	# the screen: compiling steps marked, the line under the verdict (the
	# whole line, or its short form where it would not fit)
	if command -v tmux >/dev/null; then
		pane=$(view_pane "$TMP/comp.json" 120 40)
		if printf '%s\n' "$pane" | grep -Eq "^(torch.compile: 2 of 40 steps compiled|compile: 2/40 steps compiling)" &&
			printf '%s\n' "$pane" | grep -q "40 steps (2 compiling)"; then
			ok "the Summary screen shows the compiling steps"
		else
			not_ok "compile on the screen" "$pane"
		fi
	else
		skip "compile on the screen" "no tmux"
	fi
fi

# --- torchrun: two ranks
TR=$(dirname "$PY")/torchrun
if [ ! -x "$TR" ]; then
	skip "torchrun" "no torchrun beside $PY"
elif [ "${ver%%.*}" -lt 2 ]; then
	# its launcher fails on Python 3.11 before starting a rank (AttributeError
	# in torch.distributed.elastic); launch2.sh stands in for it in test_torch_zero
	skip "torchrun" "the torchrun of torch $ver does not start on this Python"
else
	# free ports, asked of the kernel
	free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
	# trun NAME ARGS...: torchrun under record on a free port, once more on
	# another when a process of a suite beside took the port in between
	trun() {
		local name=$1 rc
		shift
		for _ in 1 2; do
			record "$name" "$TR" --nproc_per_node=2 --master_port="$(free_port)" "$@"
			rc=$?
			grep -qi 'address already in use' "$TMP/$name.log" || break
		done
		return $rc
	}
	trun trun $S/ddp.py --steps 30
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'recorded 2 sessions.*rank 0\.\.1' "$TMP/trun.out" &&
		[ "$(jq_py trun 'sorted((r["name"], r["steps"]) for r in d["ranks"])')" = "[('rank 0', 30), ('rank 1', 30)]" ]; then
		ok "torchrun --nproc_per_node=2: rank 0 and 1, 30 steps each, exit 0"
	else
		# the run's summary keeps 3 lines of detail: the cause first
		not_ok "torchrun" "rc $rc: $(grep -v '^W[0-9]' "$TMP/trun.log" |
			grep -E 'Error|error|exitcode|Signal|failed|refused|in use' | tail -n 3 | tr '\n' ' ' | cut -c1-400)" \
			"$(cat "$TMP/trun.out")" "$(jq_py trun 'd.get("ranks")')" \
			"$(grep -v '^W[0-9]' "$TMP/trun.log" | tail -n 15)"
	fi
	trun tdie $S/ddp.py --steps 100000 --die-at 20
	rc=$?
	steps1=$(jq_py tdie '[r["steps"] for r in d["ranks"] if r["name"] == "rank 1"]')
	if [ $rc -ne 0 ] && grep -q "^Note: rank 1 (pid [0-9]*) died" <("$PROFTOP" report "$TMP/tdie.json") &&
		[ "$steps1" = "[19]" ]; then
		ok "a rank that dies: exit $rc back, rank 1 noted as died, its 19 closed steps kept (the 20th never ended)"
	else
		not_ok "a rank that dies" "rc $rc steps $steps1" "$(grep '^Note' <("$PROFTOP" report "$TMP/tdie.json"))"
	fi
fi
done_testing
