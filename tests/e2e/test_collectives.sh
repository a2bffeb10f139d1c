#!/usr/bin/env bash
# san: skip  (Python and torch dominate; the analysis runs under ASan in unit/test_colls)
# tests/e2e/test_collectives.sh - a DistributedDataParallel job's collectives
# (tests/torch/collectives.py, gloo on the CPU, unmodified), against the
# script's own clocks:
# - one rank slow in its data loading: it is named the straggler, with its
#   Dataloader as the reason, the last to arrive at every all_gather where the
#   script's own clocks say so (a loaded machine holds another rank up now
#   and then), and
#   the all_gather's arrival skew is the script's within 10 %; DDP's
#   bucketed all-reduce, the all_gather and the broadcast counted once a
#   step; the job's results the same as without proftop;
# - one rank made to hang before a step's collectives: `record --hang-after`
#   says so while it lasts, within hang_after + 5 s of the script's own
#   mark, with the waiting ranks, the missing rank and its open ranges, and
#   says when it ended;
# - FSDP (fully_shard, torch 2.x): its all-gathers and reduce-scatters
#   matched, the slow rank named.
# torchrun with 2 and 4 ranks on torch 2.x; under Debian's torch 1.13 (whose
# torchrun does not start on Python 3.11) two ranks from launch2.sh.
. tests/e2e/lib.sh

. tests/e2e/torch_lib.sh
torch_setup "collectives across ranks"
S=tests/torch
ver=$("$PY" -c 'import torch; print(torch.__version__)')
TR=$(dirname "$PY")/torchrun
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
if [ "${ver%%.*}" -ge 2 ] && [ -x "$TR" ]; then
	RANKS="2 4"
else
	RANKS=2
fi
# launch N ARGS...: the job's command line for N ranks on a free port
launch() {
	local n=$1
	shift
	if [ "${ver%%.*}" -ge 2 ] && [ -x "$TR" ]; then
		echo "$TR" --nproc_per_node="$n" --master_port="$(free_port)" $S/collectives.py "$@"
	else
		echo env PYTHON="$PY" SCRIPT=collectives.py MASTER_PORT="$(free_port)" sh $S/launch2.sh "$@"
	fi
}
rep() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$TMP/$1.rep"; }

for n in $RANKS; do
	slow=$((n - 1))
	mkdir -p "$TMP/clk$n"
	# shellcheck disable=SC2046
	record "slow$n" $(launch "$n" --steps 12 --slow-rank $slow --slow-ms 30 --clocks "$TMP/clk$n")
	rc=$?
	v=$("$PY" - "$TMP/slow$n.rep" "$TMP/clk$n" "$n" "$slow" 2>&1 <<'PYEOF'
import json, os, sys
rep = json.load(open(sys.argv[1]))
if "rank_summary" not in rep:
    print("FAIL no rank_summary: ranks %s" % [r.get("name") for r in rep.get("ranks", [])])
    sys.exit()
clk, n, slow = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
arr = {}
for r in range(n):
    for line in open(os.path.join(clk, "rank%d.txt" % r)):
        op, step, ns = line.split()
        arr.setdefault((op, int(step)), {})[r] = int(ns)
skews = [(max(v.values()) - min(v.values())) / 1e6 for k, v in arr.items()
         if k[0] == "all_gather" and len(v) == n]
mine = sum(skews) / len(skews)
# the calls where the slow rank was last by the script's own clocks (on a
# loaded machine another rank can be held up longer than the slow one, now
# and then; by 2 us or less, the two arrival orders may disagree)
ags = [v for k, v in arr.items() if k[0] == "all_gather" and len(v) == n]
want_last = sum(1 for v in ags if max(v, key=v.get) == slow)
close = sum(1 for v in ags if sorted(v.values())[-1] - sorted(v.values())[-2] < 2000)
ops = {c["op"]: c for c in rep["collectives"] if c["group"] == "0"}
rs = rep["rank_summary"]
errs = []
if rs["slowest"] != "rank %d" % slow or rs["slowest_phase"] != "dataloader":
    errs.append("straggler %s/%s: %s" % (rs["slowest"], rs["slowest_phase"], rs["slowest_reason"]))
ag = ops.get("all_gather")
if not ag or ag["last_rank"] != slow or abs(ag["last_count"] - want_last) > close:
    errs.append("all_gather last %s, the script's clocks: rank %d last at %d of %d"
                % (ag and (ag["last_rank"], ag["last_count"], ag["calls"]), slow, want_last, len(ags)))
elif abs(ag["skew_ms_avg"] - mine) > 0.1 * mine:
    errs.append("skew %.3f ms, the script's %.3f" % (ag["skew_ms_avg"], mine))
for op in ("all_gather", "broadcast", "all_reduce"):
    if op not in ops or ops[op]["calls"] != 12 or ops[op]["rows"] != 12 * n:
        errs.append("%s: %s" % (op, op in ops and (ops[op]["calls"], ops[op]["rows"])))
if ops.get("all_reduce", {}).get("busbw_gb_per_s") is None:
    errs.append("no bus bandwidth for the all-reduce")
print("FAIL " + "; ".join(errs) if errs else
      "OK skew %.2f ms (script %.2f ms), last at %d of %d (script %d)"
      % (ag["skew_ms_avg"], mine, ag["last_count"], ag["calls"], want_last))
PYEOF
)
	if [ $rc -eq 0 ] && [ "${v%% *}" = OK ]; then
		ok "$n ranks, rank $slow slow in its data loading: named with its Dataloader, last at the all_gathers where the script's clocks say so, ${v#OK }, each collective once a step"
	else
		not_ok "$n ranks, a slow rank" "rc $rc: $(printf '%s' "$v" | tail -n 3)" "$(cat "$TMP/slow$n.out")" \
			"$(grep -i -E 'error|Traceback' "$TMP/slow$n.log" | head -n 5)"
	fi
done

# the job's results with and without proftop
# shellcheck disable=SC2046
$(launch 2 --steps 12 --slow-rank 1 --slow-ms 5) >"$TMP/alone.log" 2>&1
# shellcheck disable=SC2046
record same $(launch 2 --steps 12 --slow-rank 1 --slow-ms 5)
a=$(grep -ho 'RESULT rank=[0-9]* steps=[0-9]* loss=[0-9.e-]*' "$TMP/alone.log" | sort)
b=$(grep -ho 'RESULT rank=[0-9]* steps=[0-9]* loss=[0-9.e-]*' "$TMP/same.log" | sort)
if [ -n "$a" ] && [ "$a" = "$b" ]; then
	ok "the job's losses are the same under proftop (DDP's buckets through proftop's comm hook)"
else
	not_ok "the same losses" "alone: $a" "under proftop: $b"
fi

# --- FSDP (torch 2.x fully_shard): its all-gathers and reduce-scatters, the slow rank
if [ "${ver%%.*}" -lt 2 ] || ! "$PY" -c 'from torch.distributed.fsdp import fully_shard' 2>/dev/null; then
	skip "FSDP" "torch $ver has no fully_shard (torch 2.x's FSDP)"
else
	# shellcheck disable=SC2046
	record fsdp "$TR" --nproc_per_node=2 --master_port="$(free_port)" $S/fsdp.py --steps 10 \
		--slow-rank 1 --slow-ms 30
	rc=$?
	v=$(rep fsdp '"%s %s %s" % (d["rank_summary"]["slowest"].replace(" ", ""), sum(c["calls"] for c in d["collectives"] if c["op"].startswith(("all_gather", "_all_gather"))), sum(c["calls"] for c in d["collectives"] if c["op"].startswith(("reduce_scatter", "_reduce_scatter"))))')
	set -- $v
	if [ $rc -eq 0 ] && [ "${1:-}" = rank1 ] && [ "${2:-0}" -ge 30 ] && [ "${3:-0}" -ge 10 ]; then
		ok "FSDP (fully_shard, 2 ranks): $2 all-gathers and $3 reduce-scatters matched, rank 1 named the straggler"
	else
		not_ok "FSDP" "rc $rc: $v" "$(rep fsdp 'd["rank_summary"]')" "$(grep -i -E 'error|Traceback' "$TMP/fsdp.log" | head -n 3)"
	fi
fi

# --- the hang, said while it lasts
for n in $RANKS; do
	h=$((n - 1))
	after=3
	# proftop's stderr lines stamped with this machine's monotonic clock (the
	# script's HANG line carries the same clock)
	# shellcheck disable=SC2046
	PROFTOP_RING_SLOTS=65536 "$PROFTOP" record --hang-after $after -o "$TMP/hang$n.json" \
		--log "$TMP/hang$n.log" -- $(launch "$n" --steps 8 --hang-rank $h --hang-at 4 --hang-s 12) 2>&1 |
		"$PY" -u -c 'import sys, time
for l in sys.stdin: print(time.monotonic_ns(), l, end="")' >"$TMP/hang$n.err"
	v=$("$PY" - "$TMP/hang$n.err" "$TMP/hang$n.log" "$n" "$h" "$after" <<'PYEOF'
import re, sys
err, log, n, h, after = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
mark = [int(m.group(1)) for m in re.finditer(r"HANG rank=\d+ step=\d+ t_ns=(\d+)", open(log).read())]
lines = [l.split(" ", 1) for l in open(err)]
hang = [(int(t), l) for t, l in lines if l.startswith("proftop: hang: ")]
over = [l for t, l in lines if l.startswith("proftop: hang over")]
if not mark or not hang:
    print("FAIL mark %s, hang lines %d: %s" % (mark, len(hang), [l for _, l in lines][:4])); sys.exit()
t, l = hang[0]
delay = (t - mark[0]) / 1e9
waiting = "rank 0 has" if n == 2 else "ranks 0-%d have" % (n - 2)
want = [waiting + " waited", " in all_gather #", "(group 0); rank %d never entered it" % h,
        "its open ranges: Dataloader"]
miss = [w for w in want if w not in l]
if miss or delay > after + 5 or delay < after - 0.5 or len(hang) != 1 or not over:
    print("FAIL delay %.1f s, missing %s, %d hang lines, over %s: %s" % (delay, miss, len(hang), over, l.strip()))
else:
    print("OK %.1f s after the rank stopped" % delay)
PYEOF
)
	if [ "${v%% *}" = OK ]; then
		ok "$n ranks, rank $h hangs before a step's collectives: said ${v#OK } (--hang-after $after), waiting and missing ranks and what the missing one has open; its end said too"
	else
		not_ok "$n ranks, the hang" "$v" "$(head -c 600 "$TMP/hang$n.err")"
	fi
done
done_testing
