#!/usr/bin/env bash
# tests/e2e/test_python.sh - python/proftop.py and proftop.torch with Debian's
# /usr/bin/python3 (python3-torch is installed for it, not for a pyenv python on
# PATH): the unit tests in tests/python/ (no-op path, a fake probe that logs
# every call, the PyTorch hooks), then examples/torch_train.py without
# proftop, with libproftop.so preloaded, and under `proftop record`, whose
# report must show the steps with their samples, the four phases and one
# operator per child module. Skips what needs torch when it is missing.
. tests/e2e/lib.sh

PY=${PT_PYTHON:-/usr/bin/python3}
BDIR=$(dirname "$PROFTOP")
LIB=$BDIR/libproftop.so
[ -f "$LIB" ] || LIB=build/libproftop.so
LIB=$(cd "$(dirname "$LIB")" 2>/dev/null && pwd)/libproftop.so # absolute: LD_PRELOAD, PROFTOP_LIB
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"
unset PROFTOP_LIB PROFTOP_DISABLE

if [ ! -x "$PY" ]; then
	skip "python helper" "no $PY"
	done_testing
	exit 0
fi

# --- unit tests (tests/python), one TAP line each: with the helper's C
# wrappers (_proftop_fast, when it is built), then test_auto (the wrappers'
# tests; the others do not depend on them) with its pure-Python ones
FAST=$BDIR/python/_proftop_fast.abi3.so
unit_pass() { # LABEL PROFTOP_TORCH_FAST [MODULE]
	if [ -n "${3:-}" ]; then
		(cd tests/python && PROFTOP_TORCH_FAST=$2 "$PY" -m unittest -v "$3") >"$TMP/unit.out" 2>&1
	else
		PROFTOP_TORCH_FAST=$2 "$PY" -m unittest discover -s tests/python -v >"$TMP/unit.out" 2>&1
	fi
	urc=$?
	while IFS= read -r line; do
		case "$line" in
		*" ... ok") ok "python$1: ${line% ... ok}" ;;
		*" ... skipped"*) skip "python$1: ${line%% ... skipped*}" "${line##* ... skipped }" ;;
		*" ... FAIL" | *" ... ERROR") not_ok "python$1: ${line% ... *}" "$(grep -A 12 "^[A-Z]*: ${line%% (*}" "$TMP/unit.out" | head -n 14)" ;;
		esac
	done <"$TMP/unit.out"
	if [ $urc -eq 0 ]; then ok "python$1 unit tests pass ($(grep -E '^Ran ' "$TMP/unit.out"))"; else not_ok "python$1 unit tests pass" "$(tail -n 15 "$TMP/unit.out")"; fi
}
if [ -n "${PT_SAN_PASS:-}" ]; then
	# they load a fake probe and the helper, nothing the sanitizer build made
	skip "python: the unit tests (the sanitizer pass)" "they run in e2e/test_python.sh"
elif [ -f "$FAST" ]; then
	unit_pass " (C wrappers)" "$(cd "$(dirname "$FAST")" && pwd)/$(basename "$FAST")"
	unit_pass "" 0 test_auto
else
	skip "python (C wrappers): the unit tests" "$FAST is not built (no Python headers: apt-get install python3-dev)"
	unit_pass "" 0
fi

# --- the no-op path in a fresh interpreter
check_out "proftop.enabled() is False without the library" "^False$" \
	env PYTHONPATH=python "$PY" -c 'import proftop; proftop.step(1); print(proftop.enabled())'

if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	skip "examples/torch_train.py" "torch is not importable by $PY (apt-get install python3-torch)"
	done_testing
	exit 0
fi

final() { grep '^torch_train: done' "$1" | tail -n 1; }

"$PY" examples/torch_train.py --steps 40 --log-every 10 >"$TMP/plain.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && final "$TMP/plain.out" | grep -q 'steps=40 '; then
	ok "torch_train.py trains without proftop"
else
	not_ok "torch_train.py trains without proftop" "rc=$rc" "$(tail -n 5 "$TMP/plain.out")"
fi
if awk '/^step /{ l[n++] = $4 } END { exit !(n == 4 && l[3] < l[0]) }' "$TMP/plain.out"; then
	ok "torch_train.py: the loss goes down"
else
	not_ok "torch_train.py: the loss goes down" "$(grep '^step ' "$TMP/plain.out")"
fi
check_fails "torch_train.py rejects a bad option" 2 "$PY" examples/torch_train.py --steps lots

if [ ! -f "$LIB" ]; then
	skip "torch_train.py with the probe" "no $LIB"
	done_testing
	exit 0
fi

# --- preloaded: the helper finds the library by its soname
check_out "under LD_PRELOAD proftop.enabled() is True" "^True$" \
	env LD_PRELOAD="$LIB" PYTHONPATH=python "$PY" -c 'import proftop; print(proftop.enabled())'
check_out "PROFTOP_LIB loads the library" "^True$" \
	env PROFTOP_LIB="$LIB" PYTHONPATH=python "$PY" -c 'import proftop; print(proftop.enabled())'
check_out "PROFTOP_DISABLE=1 keeps it off" "^False$" \
	env PROFTOP_DISABLE=1 LD_PRELOAD="$LIB" PYTHONPATH=python "$PY" -c 'import proftop; print(proftop.enabled())'
for w in 0 2; do
	LD_PRELOAD=$LIB "$PY" examples/torch_train.py --steps 40 --num-workers $w --log-every 10 \
		>"$TMP/pre$w.out" 2>&1 &
	pid=$!
	wait $pid
	rc=$?
	if [ $rc -eq 0 ] && final "$TMP/pre$w.out" | grep -q 'steps=40 ' && [ -f "$PROFTOP_SESSION_DIR/$pid.session" ]; then
		ok "torch_train.py --num-workers $w under LD_PRELOAD: trains, leaves a session"
	else
		not_ok "torch_train.py --num-workers $w under LD_PRELOAD: trains, leaves a session" "rc=$rc" \
			"$(tail -n 5 "$TMP/pre$w.out")" "$(ls "$PROFTOP_SESSION_DIR")"
	fi
done
a=$(final "$TMP/plain.out" | sed 's/.* loss=\([^ ]*\).*/\1/')
b=$(final "$TMP/pre0.out" | sed 's/.* loss=\([^ ]*\).*/\1/')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "same final loss with and without proftop ($a)"; else not_ok "same final loss with and without proftop" "$a vs $b"; fi

# --- under `proftop record`: steps, samples, phases, operators
if ! "$PROFTOP" record --help >/dev/null 2>&1; then
	skip "proftop record of torch_train.py" "no proftop record"
	done_testing
	exit 0
fi
export PROFTOP_LIB=$LIB
for w in 0 2; do
	"$PROFTOP" record -o "$TMP/t$w.json" --log "$TMP/rec$w.log" -- \
		"$PY" examples/torch_train.py --steps 30 --num-workers $w --log-every 0 >"$TMP/rec$w.out" 2>&1
	rc=$?
	"$PROFTOP" report "$TMP/t$w.json" --json >"$TMP/r$w.json" 2>"$TMP/r$w.err"
	if [ $rc -eq 0 ] && out=$(python3 - "$TMP/r$w.json" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# one step per optimizer.step(); the first starts at the first fetch
assert r["steps"] == 30, ("steps", r["steps"])
m = {x["name"]: x for x in r["model_summary"]}
for ph in ("Dataloader", "Forward", "Backward", "Optimization"):
    assert ph in m and m[ph]["cpu_total_ms"] > 0, (ph, m.get(ph))
    assert m[ph]["calls"] >= 30, (ph, m[ph])
ops = {x["name"] for x in r["operators"]}
for op in ("conv1 (Conv2d)", "relu1 (ReLU)", "pool2 (MaxPool2d)", "fc (Linear)"):
    assert op in ops, (op, sorted(ops))
assert r["perf_summary"]["ips_unit"] == "samples/s", r["perf_summary"]
assert all(s["samples"] == 32 for s in r["steps_detail"]), r["steps_detail"][:3]
print("reader ratio %.1f%%, ips %.0f samples/s" % (r["perf_summary"]["reader_ratio_pct"],
      r["perf_summary"]["ips"]["avg"]))
PY
	); then
		ok "proftop record -- torch_train.py --num-workers $w: 30 steps, 4 phases, module ops; $out"
	else
		not_ok "proftop record -- torch_train.py --num-workers $w" "rc=$rc" "${out:-}" \
			"$(tail -n 5 "$TMP/rec$w.out" "$TMP/rec$w.log" "$TMP/r$w.err")"
	fi
done

done_testing
