#!/usr/bin/env bash
# san: skip  (Python and torch dominate; the reader paths it uses run under ASan in test_live and test_minitrain)
# tests/e2e/test_torch_zero.sh - unmodified PyTorch scripts (tests/torch/,
# written for these tests; none imports proftop) under `proftop record` with
# Debian's python3-torch. Each script times its own phases with
# time.perf_counter and prints them; proftop's report must agree: the step
# count (optimizer steps, or forwards without an optimizer) exactly, each
# phase's share of the step time within 5 points, IPS within 8 %. Then the
# shapes that must be handled or explained: a shell wrapper, an exec'd
# interpreter, spawn DataLoader workers, threads, a raising forward, no torch,
# torch without a loop, PROFTOP_TORCH=0, and --every's lines.
. tests/e2e/lib.sh

. tests/e2e/torch_lib.sh
torch_setup "zero-code PyTorch"
S=tests/torch


# --- the five shapes, each against its own timing
record cnn0 "$PY" $S/cnn_loader.py --steps 60 --workers 0
compare cnn0 "CNN + DataLoader (workers 0)"
record cnn2 "$PY" $S/cnn_loader.py --steps 60 --workers 2 --read-ms 2
compare cnn2 "CNN + DataLoader (2 fork workers)"
record mlp "$PY" $S/mlp_accum.py --steps 40 --accum 4 --data-ms 1
compare mlp "generator-fed MLP (the generator timed as the Dataloader), 4 micro-batches per step, AdamW"
# 300 steps of about 1 ms, so that one stall of a few ms outside the marked
# phases (the script's timer and the helper's step bookkeeping between them,
# a garbage collection) moves the shares by a point or two: on a loaded
# machine a 60-step loop was once off by 12 points
record nested "$PY" $S/nested.py --steps 300
compare nested "nested modules (ModuleList of blocks)"
record infer "$PY" $S/inference.py --steps 150
compare infer "inference only (steps = forwards)"
# weights updated by hand (no torch.optim), as word_language_model does: one
# step per backward; more than BWD_RULE_AFTER (32) of them, so the rule is
# taken mid-run, and the rule said in a note
record manual "$PY" $S/manual_sgd.py --steps 80
compare manual "weights updated by hand (steps = backwards)" nodata
grep -q "^Note: steps: one per backward" <("$PROFTOP" report "$TMP/manual.json") &&
	ok "a hand-written update: the report says the rule (one step per backward)" ||
	not_ok "the backward rule's note" "$("$PROFTOP" report "$TMP/manual.json" | grep '^Note')"
PYTHON=$PY record wrap $S/wrapper.sh --steps 300
compare wrap "through a shell wrapper that forks python"
# a word-level LSTM language model as PyTorch's word_language_model trains
# one: (seq, batch) slices, weights updated by hand: one step per backward,
# samples = the batch (20), not the sequence length (35)
record lstm "$PY" $S/lstm_lm.py --batches 60
compare lstm "an LSTM language model, (seq, batch) inputs, hand-written update" nodata
"$PY" - "$TMP/lstm.log" "$TMP/lstm.rep" <<'PYEOF' && ok "an LSTM language model: tokens/s beside samples/s ($(cat "$TMP/lstm.tok"))" || not_ok "tokens/s of the LSTM" "$(cat "$TMP/lstm.tok")"
import json, sys
res = dict(kv.split("=", 1) for l in open(sys.argv[1]) if l.startswith("RESULT ") for kv in l.split()[1:])
tps = json.load(open(sys.argv[2]))["perf_summary"].get("tokens_per_s")
want = int(res["tokens"]) / float(res["loop_s"])
open(sys.argv[1].replace(".log", ".tok"), "w").write("%s against the script's %.0f" % (tps and round(tps["avg"]), want))
sys.exit(0 if tps and abs(tps["avg"] - want) <= 0.08 * want else 1)
PYEOF
# a GAN as PyTorch's dcgan example trains one: two optimizers step per batch,
# one iteration per batch; the models' layers apart, named from netG and netD.
# Layers 1024 wide: the script's clock holds the helper's own cost around
# each of the 7 outermost calls a batch, which at 256 wide (~50 us a call)
# was 6 points of Forward on a loaded 2-core machine
record gan "$PY" $S/gan.py --batches 30 --width 1024
compare gan "a GAN: D's and G's optimizers, one step per batch"
"$PY" - "$TMP/gan.rep" <<'PYEOF' && ok "a GAN: the rule said, netG's and netD's layers apart" || not_ok "a GAN's rule and operators" "$(grep -o '"notes": [^]]*]' "$TMP/gan.rep")"
import json, sys
rep = json.load(open(sys.argv[1]))
ops = {o["name"] for o in rep["operators"]}
ok = any(n.startswith("steps: one per batch fetched") for n in rep.get("notes", []))
ok = ok and "netG.0 (Linear)" in ops and "netD.0 (Linear)" in ops and "0 (Linear)" not in ops
sys.exit(0 if ok else 1)
PYEOF

# --- the overhead proftop shows includes its Python helper's own: what the
# helper measured at start per wrapped call, against the job's own paired
# timing of a module call with the wrapper and without (the function it
# wraps), taken at four moments of the run: within a factor of 2 of those
# (of the least and the most, as a loaded machine's speed moves); with the
# C wrappers and with the Python ones
for fast in "" 0; do
	PROFTOP_TORCH_FAST=$fast PROFTOP_TORCH_DEPTH=0 record hcost "$PY" $S/helper_cost.py
	"$PY" - "$TMP/hcost.log" "$TMP/hcost.rep" >"$TMP/hcost.v" <<'PYEOF'
import json, sys
res = dict(kv.split("=", 1) for l in open(sys.argv[1]) if l.startswith("RESULT ") for kv in l.split()[1:])
o = json.load(open(sys.argv[2]))["overhead"]
mine = o.get("helper_ns_per_call")
lo, hi = float(res["percall_min_ns"]), float(res["percall_max_ns"])
calls = o.get("helper_calls_per_step")
print("helper %s ns a call vs the job's %.0f-%.0f ns, %s calls/step, share %s" % (mine, lo, hi, calls, o.get("share")))
ok = mine and lo > 0 and 0.5 * lo <= mine <= 2 * hi and calls and calls >= 1000
sys.exit(0 if ok else 1)
PYEOF
	rc=$?
	kind=Python
	[ -z "$fast" ] && [ -f "$(dirname "$PROFTOP")/python/_proftop_fast.abi3.so" ] && kind=C
	what="the helper's own cost in the overhead ($kind wrappers)"
	[ $rc -eq 0 ] && ok "$what: $(cat "$TMP/hcost.v")" || not_ok "$what" "$(cat "$TMP/hcost.v")" "$(tail -n 3 "$TMP/hcost.out")"
done

# --- what the report names
grep -q '"notes": \["steps: one per optimizer step' "$TMP/cnn0.rep" &&
	ok "the report says how steps were counted (optimizer steps)" ||
	not_ok "the report says how steps were counted" "$(grep -o '"notes": [^]]*]' "$TMP/cnn0.rep")"
grep -q 'one per outermost model forward' "$TMP/infer.rep" &&
	ok "inference: the report says steps are forwards" || not_ok "inference rule note"
ops=$("$PY" -c 'import json,sys; print("\n".join(r["name"] for r in json.load(open(sys.argv[1]))["operators"]))' "$TMP/cnn0.rep")
for want in "features (Sequential)" "features.0 (Conv2d)" "classifier (Linear)" \
	"loss: CrossEntropyLoss" "SGD.step" "SGD.zero_grad" "StepLR.step"; do
	printf '%s\n' "$ops" | grep -qxF "$want" && ok "operator '$want'" || not_ok "operator '$want'" "$ops"
done
nops=$("$PY" -c 'import json,sys; print("\n".join(r["name"] for r in json.load(open(sys.argv[1]))["operators"]))' "$TMP/nested.rep")
printf '%s\n' "$nops" | grep -qxF "blocks.1.layers.0 (Linear)" && ok "nested: blocks.1.layers.0 (Linear) at depth 3" ||
	not_ok "nested: qualified names" "$nops"
grep -q 'recording pid' "$TMP/wrap.out" && ! grep -q 'no steps' "$TMP/wrap.out" &&
	ok "wrapper: the python below the shell is found" || not_ok "wrapper" "$(cat "$TMP/wrap.out")"
if cmp -s <(grep '^RESULT' "$TMP/nested.log" | sed 's/ loop_s.*loss/ loss/') \
	<("$PY" $S/nested.py --steps 300 | sed 's/ loop_s.*loss/ loss/'); then
	ok "the script computes the same under proftop (same loss)"
else
	not_ok "same loss with and without proftop"
fi

# --- python -m, and a script run through its shebang line
abs_proftop=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
(cd $S && "$abs_proftop" record -o "$TMP/m.json" --log "$TMP/m.log" -- "$PY" -m nested --steps 20 \
	>"$TMP/m.out" 2>&1)
"$PROFTOP" report "$TMP/m.json" --json >"$TMP/m.rep" 2>/dev/null
steps_of() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$TMP/$1.rep"; }
[ "$(steps_of m)" = 20 ] && ok "python -m nested: 20 steps" || not_ok "python -m" "$(cat "$TMP/m.out")"
# (inference.py's #! names /usr/bin/python3; a copy names $PY)
if [ "$PY" = /usr/bin/python3 ]; then
	sb=$S/inference.py
else
	sb=$TMP/inference.py
	{ echo "#!$PY"; tail -n +2 $S/inference.py; } >"$sb"
	chmod +x "$sb"
fi
record shebang "$sb" --steps 20
[ "$(steps_of shebang)" = 20 ] && ok "a script run through its #!$PY line: 20 steps" ||
	not_ok "shebang" "$(cat "$TMP/shebang.out")"

# --- the screen says how steps were counted
if command -v tmux >/dev/null; then
	pane=$(view_pane "$TMP/cnn0.json" 100 30)
	printf '%s\n' "$pane" | grep -q "^Note: steps: one per optimizer step (torch" &&
		ok "the Summary screen shows the note under the verdict" ||
		not_ok "note on the screen" "$pane"
else
	skip "note on the screen" "no tmux"
fi

# --- shapes that must be handled or explained
record ex "$PY" $S/execs.py
[ "$(steps_of ex)" = 20 ] && ok "a script that execs another python: 20 steps" ||
	not_ok "exec'd python" "steps $(steps_of ex)" "$(cat "$TMP/ex.out")"
record spawn "$PY" $S/spawn_workers.py
if [ "$(steps_of spawn)" = 20 ] && ! grep -q 'sessions' "$TMP/spawn.out" &&
	! grep -q 'no training loop' "$TMP/spawn.rep"; then
	ok "spawn DataLoader workers make no session of their own; the trainer's 20 steps"
else
	not_ok "spawn workers" "steps $(steps_of spawn)" "$(cat "$TMP/spawn.out")"
fi
record threads "$PY" $S/threads.py
[ "$(steps_of threads)" = 80 ] && ok "two threads calling the model: 80 steps, one per forward" ||
	not_ok "threads" "steps $(steps_of threads)"
record raises "$PY" $S/raises.py
want=$(sed -n 's/^RESULT steps=\([0-9]*\) caught=6$/\1/p' "$TMP/raises.log")
fwd=$("$PY" -c 'import json,sys; print([r["calls"] for r in json.load(open(sys.argv[1]))["operators"] if r["name"] == "flaky (Flaky)"][0])' "$TMP/raises.rep")
if [ -n "$want" ] && [ "$(steps_of raises)" = "$want" ] && [ "$fwd" = 30 ]; then
	ok "a raising forward: the script catches it unchanged; $want steps, 30 calls of the raising module closed"
else
	not_ok "raising forward" "script: $(cat "$TMP/raises.log")" "steps $(steps_of raises) forwards $fwd"
fi
record notorch "$PY" $S/no_torch.py
if grep -q '^RESULT done' "$TMP/notorch.log" && grep -q 'no steps: pid .* recorded nothing' "$TMP/notorch.out" &&
	grep -q 'CPU(Process)' <("$PROFTOP" report "$TMP/notorch.json"); then
	ok "no torch import: runs, CPU meters, and one line says why there are no steps"
else
	not_ok "no torch" "$(cat "$TMP/notorch.out")"
fi
record noloop "$PY" $S/no_loop.py
grep -q 'no steps: torch .* was imported, but no model forward' "$TMP/noloop.rep" &&
	ok "torch without a training loop: the report says so" || not_ok "no loop" "$(cat "$TMP/noloop.rep" | head -c 600)"
"$PROFTOP" record --torch-ops -o "$TMP/ops.json" --log "$TMP/ops.log" -- "$PY" $S/nested.py --steps 10 \
	>"$TMP/ops.out" 2>&1
if "$PY" -c 'import torch,sys; sys.exit(torch.version.cuda is not None)'; then
	grep -q 'aten operators are not available: torch .* was built without CUDA' \
		<("$PROFTOP" report "$TMP/ops.json") && ok "--torch-ops on a CPU-only torch says aten operators are not available" ||
		not_ok "--torch-ops on CPU torch" "$("$PROFTOP" report "$TMP/ops.json" | head -n 6)"
elif "$PY" -c 'import torch,sys; sys.exit(torch.cuda.is_available())'; then
	# a CUDA build (PyPI's) on a machine without a driver: torch's own
	# reason, in one note, and the job runs on
	grep -q "torch-ops: torch's NVTX emission failed: .*NVIDIA driver" \
		<("$PROFTOP" report "$TMP/ops.json") && grep -q '^RESULT steps=10 ' "$TMP/ops.log" &&
		ok "--torch-ops on a CUDA torch without a GPU: torch's reason in a note, the job's 10 steps" ||
		not_ok "--torch-ops without a GPU" "$("$PROFTOP" report "$TMP/ops.json" | head -n 6)"
else
	skip "--torch-ops message" "this torch has CUDA and sees a GPU (tests/gpu/run.sh covers it)"
fi
PROFTOP_TORCH=0 record off "$PY" $S/nested.py --steps 10
[ "$(steps_of off)" = 0 ] && ok "PROFTOP_TORCH=0 turns the helper off" || not_ok "PROFTOP_TORCH=0" "steps $(steps_of off)"

# --- two ranks started by a launcher script (as torchrun does): one process per rank,
# the shell that started them is not one
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PYTHON=$PY MASTER_PORT=$port record ddp $S/launch2.sh --steps 30
if grep -q 'recorded 2 sessions.*rank 0\.\.1' "$TMP/ddp.out" && "$PY" - "$TMP/ddp.json" <<'PYEOF'
import json, subprocess, sys, os
rep = json.loads(subprocess.run([os.environ["PROFTOP"], "report", sys.argv[1], "--json"],
                                capture_output=True, text=True).stdout)
ranks = {r["name"]: r["steps"] for r in rep["ranks"]}
assert ranks == {"rank 0": 30, "rank 1": 30}, ranks
PYEOF
then
	ok "a launcher script's two DDP ranks: rank 0 and 1, 30 steps each, the shell not a rank"
else
	not_ok "two ranks" "$(cat "$TMP/ddp.out")" "$(tail -n 5 "$TMP/ddp.log")"
fi

# --- --every: one line per period, stable fields, all steps counted once
"$PROFTOP" record -o "$TMP/every.json" --every 0.5s --log "$TMP/every.log" -- \
	"$PY" $S/cnn_loader.py --steps 40 --read-ms 1 >"$TMP/every.out" 2>&1
lines=$(grep -c '^proftop: t=' "$TMP/every.out")
sum=$(grep '^proftop: t=' "$TMP/every.out" | sed -n 's/.* steps=\([0-9]*\).*/\1/p' | paste -sd+ | bc)
re='^proftop: t=[0-9.]+s step=[0-9]+ steps=[0-9]+ ips=[0-9.]+ reader_cost_ms=[0-9.]+ batch_cost_ms=[0-9.]+ reader_ratio=[0-9.]+% dataloader=[0-9.]+% forward=[0-9.]+% backward=[0-9.]+% optimization=[0-9.]+% others=[0-9.]+% dropped=[0-9]+$'
if [ "$lines" -ge 2 ] && [ "$sum" = 40 ] && grep '^proftop: t=' "$TMP/every.out" | grep ' steps=[1-9]' | grep -Evq "$re"; then
	not_ok "--every: lines of a stable form" "$(grep '^proftop: t=' "$TMP/every.out" | grep -Ev "$re" | head -3)"
elif [ "$lines" -ge 2 ] && [ "$sum" = 40 ]; then
	ok "--every 0.5s: $lines lines, their steps add up to 40, every field present"
else
	not_ok "--every" "lines $lines sum $sum" "$(head -n 5 "$TMP/every.out")"
fi
done_testing
