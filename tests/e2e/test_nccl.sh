#!/usr/bin/env bash
# tests/e2e/test_nccl.sh - NCCL's profiler plugin in the probe (probe_nccl.c),
# loaded the way NCCL loads it, without a GPU: tests/progs/nccl_app stands
# in for NCCL (it dlopens what NCCL_PROFILER_PLUGIN names, takes the newest
# ncclProfiler_vN, and reports each all-reduce's enqueue on the job's thread
# and its kernel's channels on a proxy thread, with a GPU timer 7 s behind
# the host's clock). Two ranks under `proftop record`, which sets
# NCCL_PROFILER_PLUGIN for the job:
# - one rank late by 50 ms a step (the skew's 10 % is then more than a
#   loaded machine's delay in reading a GPU timer): every all-reduce matched (group
#   nccl:world), that rank last at each, the skew within 10 % of the app's
#   own clock, the rank named the straggler with its Dataloader; the same
#   through the v4 interface (an older NCCL);
# - one rank stopped before a collective: `record --hang-after` says the
#   hang while it lasts, within hang_after + 5 s of the app's own mark,
#   with the missing rank, and says when it ended;
# - a NCCL_PROFILER_PLUGIN of the user's own is left alone, and said.
# san: skip (the probe is built without the sanitizers; the plugin runs under
#  ASan in build-san/tests/test_probe_nccl)
. tests/e2e/lib.sh
APP=$PWD/${BUILD:-build}/tests/progs/nccl_app
if [ ! -x "$APP" ] || ! nm -D "$(dirname "$PROFTOP")/libproftop.so" 2>/dev/null | grep -q ncclProfiler_v6; then
	skip "NCCL's profiler plugin" "no nccl_app or no plugin in libproftop.so"
	done_testing
	exit 0
fi
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"
unset NCCL_PROFILER_PLUGIN PROFTOP_LIB

# job NAME ARGS...: two ranks of nccl_app under `proftop record`
job() {
	local name=$1
	shift
	rm -f "$TMP/$name.sync"
	"$PROFTOP" record "${REC_OPTS[@]}" -o "$TMP/$name.json" --log "$TMP/$name.log" -- sh -c \
		'sync=$1; shift; for r in 0 1; do RANK=$r WORLD_SIZE=2 "$0" --sync "$sync" "$@" & done; wait' \
		"$APP" "$TMP/$name.sync" "$@" >"$TMP/$name.out" 2>&1
	local rc=$?
	"$PROFTOP" report "$TMP/$name.json" --json >"$TMP/$name.rep" 2>>"$TMP/$name.out"
	return $rc
}

REC_OPTS=()
for v in 6 4; do
	job late$v --steps 20 --late-rank 1 --late-ms 50 --max-version $v
	rc=$?
	verdict=$(python3 - "$TMP/late$v.rep" "$TMP/late$v.log" "$v" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
v = sys.argv[3]
res = dict(re.findall(r"RESULT rank=0 steps=\d+ plugin=(v\d) skew_ms=([\d.]+)", log))
errs = []
if ("v" + v) not in res:
    errs.append("the app did not load the plugin's v%s: %s" % (v, log.strip()[-200:]))
mine = float(res.get("v" + v, "0") or 0)
ops = [c for c in rep.get("collectives", []) if c["group"] == "nccl:world"]
if len(ops) != 1 or ops[0]["op"] != "all_reduce":
    errs.append("collectives %s" % rep.get("collectives"))
else:
    o = ops[0]
    if o["calls"] != 20 or o["rows"] != 40 or o["last_rank"] != 1 or o["last_count"] != 20:
        errs.append("calls %d rows %d last %s x%d" % (o["calls"], o["rows"], o["last_rank"], o["last_count"]))
    if mine <= 0 or abs(o["skew_ms_avg"] - mine) > 0.1 * mine:
        errs.append("skew %.3f ms, the app's %.3f" % (o["skew_ms_avg"], mine))
    if o["bytes"] != 4 << 20:
        errs.append("bytes %d" % o["bytes"])
rs = rep.get("rank_summary", {})
if rs.get("slowest") != "rank 1" or rs.get("slowest_phase") != "dataloader":
    errs.append("straggler %s/%s" % (rs.get("slowest"), rs.get("slowest_phase")))
cr = {r["rank"]: r for r in rep.get("collective_ranks", [])}
if not cr or not cr[0]["wait_ms"] > cr[1]["wait_ms"]:
    errs.append("waits %s" % cr)
print("FAIL " + "; ".join(errs) if errs else
      "OK skew %.2f ms (the app's %.2f ms)" % (ops[0]["skew_ms_avg"], mine))
PY
)
	if [ $rc -eq 0 ] && [ "${verdict%% *}" = OK ]; then
		ok "through ncclProfiler_v$v: every all-reduce matched on the GPU's timer, rank 1 last and named the straggler, ${verdict#OK }"
	else
		not_ok "through ncclProfiler_v$v" "rc $rc: $verdict" "$(tail -n 3 "$TMP/late$v.out")"
	fi
done

# --- the hang, said while it lasts
after=2
REC_OPTS=(--hang-after $after)
job hang --steps 16 --hang-rank 1 --hang-at 10 --hang-s 6 &
jp=$!
# proftop's stderr lines with this machine's monotonic clock, as they come
python3 -u -c 'import sys, time, os
f = sys.argv[1]
pos = 0
end = time.monotonic() + 60
out = open(sys.argv[2], "w")
while time.monotonic() < end:
    try:
        with open(f) as h:
            h.seek(pos); data = h.read(); pos += len(data)
    except OSError:
        data = ""
    for l in data.splitlines(True):
        out.write("%d %s" % (time.monotonic_ns(), l)); out.flush()
    if os.path.exists(sys.argv[3]): break
    time.sleep(0.05)' "$TMP/hang.out" "$TMP/hang.stamped" "$TMP/hang.done" &
sp=$!
wait $jp
rc=$?
: >"$TMP/hang.done"
wait $sp
v=$(python3 - "$TMP/hang.stamped" "$TMP/hang.log" "$after" <<'PY'
import re, sys
lines = [l.split(" ", 1) for l in open(sys.argv[1])]
mark = [int(m) for m in re.findall(r"HANG rank=1 step=10 t_ns=(\d+)", open(sys.argv[2]).read())]
after = int(sys.argv[3])
hang = [(int(t), l) for t, l in lines if l.startswith("proftop: hang: ")]
over = [l for t, l in lines if l.startswith("proftop: hang over")]
if not mark or not hang:
    print("FAIL mark %s, hang lines %d" % (mark, len(hang))); sys.exit()
t, l = hang[0]
late = (t - mark[0]) / 1e9
errs = []
if not (after <= late <= after + 5):
    errs.append("said %.1f s after the rank stopped" % late)
if "in all_reduce #10 (group nccl:world); rank 1 never entered it" not in l:
    errs.append(l.strip())
if not over:
    errs.append("no 'hang over' line")
print("FAIL " + "; ".join(errs) if errs else "OK %.1f s after the rank stopped: %s" % (late, l.strip()[9:]))
PY
)
if [ $rc -eq 0 ] && [ "${v%% *}" = OK ]; then
	ok "the hang in a NCCL collective, said ${v#OK }"
else
	not_ok "the hang in a NCCL collective" "rc $rc: $v" "$(tail -n 5 "$TMP/hang.out")"
fi

# --- a plugin of the user's own is left alone
REC_OPTS=()
NCCL_PROFILER_PLUGIN=/nonexistent/libnccl-profiler-mine.so job own --steps 3
rc=$?
if [ $rc -eq 0 ] && grep -q "NCCL_PROFILER_PLUGIN is already set (/nonexistent/libnccl-profiler-mine.so); leaving it" "$TMP/own.out" &&
	grep -q "plugin=v0" "$TMP/own.log"; then
	ok "a NCCL_PROFILER_PLUGIN of the user's own is left alone, and said"
else
	not_ok "the user's own NCCL_PROFILER_PLUGIN" "rc $rc" "$(cat "$TMP/own.out")" "$(cat "$TMP/own.log")"
fi
done_testing
