#!/usr/bin/env bash
# tests/e2e/test_minitrain.sh - the bundled example trainer, examples/minitrain:
# it trains (the loss goes down, one final line), prefetching workers beat a
# slow synchronous reader, bad options exit 2, SIGINT/SIGTERM stop it cleanly;
# with libproftop.so preloaded the weak API binds to the probe, the result is
# bit for bit the same and a session file is left; under `proftop record` the
# report shows every step, the four phases, the per-layer operators and
# Paddle's dataloader case study (reader ratio high with --workers 0, at most
# half of it with --workers 4, IPS higher). The reader times are multiples of
# the compute step measured here (mt_reader_ms), not figures that assume this
# machine's speed.
. tests/e2e/lib.sh

BDIR=$(dirname "$PROFTOP")
MT=$BDIR/examples/minitrain
[ -x "$MT" ] || MT=build/examples/minitrain
LIB=$BDIR/libproftop.so
[ -f "$LIB" ] || LIB=build/libproftop.so
LIB=$(cd "$(dirname "$LIB")" 2>/dev/null && pwd)/libproftop.so # absolute: LD_PRELOAD, PROFTOP_LIB
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"

final() { grep '^minitrain: done' "$1" | tail -n 1; }
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

if [ ! -x "$MT" ]; then
	not_ok "minitrain is built ($MT)"
	done_testing
	exit 0
fi

# --- trains without proftop
"$MT" --steps 200 --log-every 50 >"$TMP/plain.out" 2>"$TMP/plain.err"
rc=$?
line=$(final "$TMP/plain.out")
if [ $rc -eq 0 ] && [ "$(field "$line" steps)" = 200 ]; then
	ok "runs 200 steps without proftop, final line"
else
	not_ok "runs 200 steps without proftop, final line" "rc=$rc" "$(tail -n 3 "$TMP/plain.out" "$TMP/plain.err")"
fi
if awk '/^step /{ l[n++] = $4 } END { exit !(n == 4 && l[3] < 0.9 * l[0]) }' "$TMP/plain.out"; then
	ok "the loss goes down"
else
	not_ok "the loss goes down" "$(grep '^step ' "$TMP/plain.out")"
fi
check_out "says proftop is not loaded" "proftop not loaded" cat "$TMP/plain.err"
for k in loss step_ms ips; do
	v=$(field "$line" $k)
	if [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then ok "final line has $k ($v)"; else not_ok "final line has $k" "$line"; fi
done

# --- same seed, same loss, whatever the number of workers
a=$(field "$(final "$TMP/plain.out")" loss)
b=$("$MT" --steps 200 --workers 3 --log-every 0 2>/dev/null | grep '^minitrain: done')
if [ -n "$a" ] && [ "$(field "$b" loss)" = "$a" ]; then
	ok "workers give the same loss bit for bit ($a)"
else
	not_ok "workers give the same loss bit for bit" "$a vs $b"
fi

# --- Paddle's case study without proftop: prefetching hides the slow reader.
# The reader sleeps ten compute steps (measured here): with two cores shared
# with other jobs, the workers' batches and the compute thread compete, and
# a compute step may take three times what was measured a moment before.
# A step then takes 10 + 3 = 13 measured steps without workers and at most
# max(3, 10 / 4 + batch) with four: far beyond the 1.5 asked for. (With a
# reader of twice the step, that load left 1.28.)
SLOW=$(awk -v s="$(mt_step_ms "$MT")" 'BEGIN { r = 10 * s; if (r < 5) r = 5; printf "%.1f\n", r }')
echo "# reader time: $SLOW ms (ten compute steps measured here)"
w0=$("$MT" --steps 40 --reader-ms "$SLOW" --workers 0 --log-every 0 2>/dev/null | grep '^minitrain: done')
w4=$("$MT" --steps 40 --reader-ms "$SLOW" --workers 4 --log-every 0 2>/dev/null | grep '^minitrain: done')
i0=$(field "$w0" ips)
i4=$(field "$w4" ips)
if [ -n "$i0" ] && [ -n "$i4" ] && awk -v a="$i0" -v b="$i4" 'BEGIN { exit !(b > 1.5 * a) }'; then
	ok "--workers 4 beats --workers 0 with --reader-ms $SLOW (ips $i0 -> $i4)"
else
	not_ok "--workers 4 beats --workers 0 with --reader-ms $SLOW" "w0: $w0" "w4: $w4"
fi
if awk -v s="$(field "$w0" step_ms)" -v r="$SLOW" 'BEGIN { exit !(s + 0 >= r) }'; then
	ok "--reader-ms $SLOW makes a synchronous step take >= $SLOW ms"
else
	not_ok "--reader-ms $SLOW makes a synchronous step take >= $SLOW ms" "$w0"
fi

# --- command line
check_out "--help" "--reader-ms" "$MT" --help
check_fails "unknown option exits 2" 2 "$MT" --frobnicate
check_fails "--steps needs a number" 2 "$MT" --steps many
check_fails "--steps without a value" 2 "$MT" --steps
check_fails "negative --workers" 2 "$MT" --workers -1
check_fails "too many --workers" 2 "$MT" --workers 1000
check_fails "--batch 0" 2 "$MT" --batch 0
check_fails "--reader-ms nan" 2 "$MT" --reader-ms nan
check_fails "a stray argument" 2 "$MT" 10
out=$("$MT" --frobnicate 2>&1)
if [ "$(printf '%s\n' "$out" | head -n 1)" = "minitrain: unknown option: --frobnicate" ]; then
	ok "bad option message names it"
else
	not_ok "bad option message names it" "$out"
fi

# --- signals: stop after the current step, final line, exit 0
# stop_with SIG WORKERS: runs until stopped, sends SIG once it is training.
stop_with() {
	local sig=$1 workers=$2 out=$TMP/sig.$1.$2
	"$MT" --reader-ms 2 --workers "$workers" --log-every 1 >"$out" 2>&1 &
	local pid=$! i
	for i in $(seq 100); do
		grep -q '^step 3 ' "$out" 2>/dev/null && break
		sleep 0.05
	done
	kill -"$sig" $pid
	wait $pid
	local rc=$?
	if [ $rc -eq 0 ] && grep -q '^minitrain: done steps=[1-9].*(stopped)$' "$out"; then
		ok "SIG$sig stops cleanly (workers $workers)"
	else
		not_ok "SIG$sig stops cleanly (workers $workers)" "rc=$rc" "$(tail -n 2 "$out")"
	fi
}
stop_with INT 0
stop_with INT 4
stop_with TERM 2

# --- with the probe preloaded: the weak API binds to it, results unchanged
if [ ! -f "$LIB" ]; then
	skip "preloaded probe" "no $LIB"
else
	LD_PRELOAD=$LIB "$MT" --steps 200 --log-every 50 >"$TMP/pre.out" 2>"$TMP/pre.err" &
	pid=$!
	wait $pid
	rc=$?
	if [ $rc -eq 0 ] && grep -q "proftop recording" "$TMP/pre.err"; then
		ok "under LD_PRELOAD the weak symbols bind to libproftop.so (recording)"
	else
		not_ok "under LD_PRELOAD the weak symbols bind to libproftop.so (recording)" "rc=$rc" "$(cat "$TMP/pre.err")"
	fi
	a=$(field "$(final "$TMP/plain.out")" loss)
	b=$(field "$(final "$TMP/pre.out")" loss)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "same final loss with and without proftop ($a)"
	else
		not_ok "same final loss with and without proftop" "$a vs $b"
	fi
	if [ -f "$PROFTOP_SESSION_DIR/$pid.session" ]; then
		ok "leaves $pid.session in PROFTOP_SESSION_DIR"
	else
		not_ok "leaves <pid>.session in PROFTOP_SESSION_DIR" "$(ls -la "$PROFTOP_SESSION_DIR")"
	fi
	PROFTOP_DISABLE=1 LD_PRELOAD=$LIB "$MT" --steps 5 >"$TMP/dis.out" 2>"$TMP/dis.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "loaded, not recording" "$TMP/dis.err"; then
		ok "PROFTOP_DISABLE=1: loaded, not recording"
	else
		not_ok "PROFTOP_DISABLE=1: loaded, not recording" "rc=$rc" "$(cat "$TMP/dis.err")"
	fi
fi

# --- under `proftop record`: the report shows Paddle's case study
if [ ! -f "$LIB" ] || ! "$PROFTOP" record --help >/dev/null 2>&1; then
	skip "proftop record of minitrain" "no proftop record or no $LIB"
else
	export PROFTOP_LIB=$LIB
	RMS=$(mt_reader_ms "$MT")
	echo "# reader time: $RMS ms (twice the compute step measured here)"
	for w in 0 4; do
		"$PROFTOP" record -o "$TMP/w$w.json" --log "$TMP/rec$w.log" -- "$MT" --steps 30 --reader-ms "$RMS" --workers $w \
			--log-every 0 >"$TMP/rec$w.out" 2>&1
		rc=$?
		if [ $rc -eq 0 ] && [ -s "$TMP/w$w.json" ]; then
			ok "proftop record -- minitrain --workers $w"
		else
			not_ok "proftop record -- minitrain --workers $w" "rc=$rc" "$(tail -n 5 "$TMP/rec$w.out" "$TMP/rec$w.log")"
		fi
		"$PROFTOP" report "$TMP/w$w.json" --json >"$TMP/r$w.json" 2>"$TMP/r$w.err"
	done
	if out=$(python3 - "$TMP/r0.json" "$TMP/r4.json" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for r in (a, b):
    # proftop_step_begin() before the loop: 30 proftop_step() calls are 30 steps
    assert r["steps"] == 30, ("steps", r["steps"])
    m = {x["name"]: x for x in r["model_summary"]}
    for ph in ("Dataloader", "Forward", "Backward", "Optimization"):
        assert ph in m and m[ph]["cpu_total_ms"] > 0, (ph, m.get(ph))
        assert m[ph]["calls"] >= 30, (ph, m[ph])
    ops = {x["name"] for x in r["operators"]}
    for op in ("linear1", "relu1", "linear2", "relu2", "linear3", "softmax_xent",
               "softmax_xent_grad", "linear3_grad", "relu2_grad", "linear1_grad", "sgd"):
        assert op in ops, (op, sorted(ops))
    inner = {x["name"] for x in r["op_detail"] if x["depth"] > 0}
    assert {"matmul", "bias_add"} <= inner, sorted(inner)
ra, rb = a["perf_summary"]["reader_ratio_pct"], b["perf_summary"]["reader_ratio_pct"]
ia, ib = a["perf_summary"]["ips"]["avg"], b["perf_summary"]["ips"]["avg"]
# the reader takes two compute steps: input-bound by the advisor's 20% whatever
# the load; four workers at least halve the ratio and raise IPS
assert ra > 20, ("workers 0 reader ratio", ra)
assert rb <= ra / 2, ("workers 4 reader ratio", rb, ra)
assert ib > 1.2 * ia, ("ips", ia, ib)
print("reader ratio %.1f%% -> %.1f%%, ips %.1f -> %.1f %s" % (ra, rb, ia, ib,
      a["perf_summary"].get("ips_unit", "")))
PY
	); then
		ok "report: 30 steps, 4 phases, layer ops; $out"
	else
		not_ok "report: 30 steps, 4 phases, layer operators, reader ratio and IPS" "$out"
	fi
fi

done_testing
