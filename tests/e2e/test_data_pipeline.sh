#!/usr/bin/env bash
# tests/e2e/test_data_pipeline.sh - the Data Pipeline section on the bundled
# trainer: `proftop record -- minitrain --workers 0/1/4` with a reader twice
# the compute step measured here (mt_reader_ms; eight times for the one
# worker). With no workers the stage
# runs on the training thread and there is no queue (said so); one worker
# cannot keep up (the queue is empty more often than with four, and the
# advisor says the workers are saturated, naming the stage); the stage's
# mean per batch is at least --reader-ms (it sleeps that long); shares never
# pass 100 %. `diff` of one worker against four shows both queues and the
# stage matched by name. The screen's Data view (key 0) at 80x24 and 200x50 in tmux:
# the queue's per-step strip, the worker lanes and the stages table; with
# no data pipeline it says so. Relations only: no figure that depends on
# this machine's speed.
. tests/e2e/lib.sh

BDIR=$(dirname "$PROFTOP")
MT=$BDIR/examples/minitrain
LIB=$BDIR/libproftop.so
if [ ! -x "$MT" ] || [ ! -f "$LIB" ]; then
	skip "data pipeline of minitrain" "no $MT or $LIB"
	done_testing
	exit 0
fi
LIB=$(cd "$(dirname "$LIB")" && pwd)/libproftop.so
export PROFTOP_LIB=$LIB
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"
RMS=$(mt_reader_ms "$MT")
# One worker reads for four times as long again (eight compute steps): it
# falls behind even when the recorded steps run much slower than the
# measured one (a sanitizer build's probe on a loaded machine made them, and
# with four compute steps, under the full check's other suites, the worker
# once kept up and rested on a full queue).
RMS1=$(awk -v r="$RMS" 'BEGIN { printf "%.1f\n", 4 * r }')

for w in 0 1 4; do
	rms=$RMS
	[ $w = 1 ] && rms=$RMS1
	"$PROFTOP" record -o "$TMP/w$w.json" --log "$TMP/rec$w.log" -- "$MT" --steps 40 --reader-ms "$rms" \
		--workers $w --log-every 0 >"$TMP/rec$w.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$TMP/w$w.json" ]; then
		ok "proftop record -- minitrain --workers $w"
	else
		not_ok "proftop record -- minitrain --workers $w" "rc=$rc" "$(tail -n 5 "$TMP/rec$w.out" "$TMP/rec$w.log")"
	fi
	"$PROFTOP" report "$TMP/w$w.json" --json >"$TMP/r$w.json" 2>"$TMP/r$w.err"
	"$PROFTOP" report "$TMP/w$w.json" >"$TMP/r$w.txt" 2>&1
done

if out=$(python3 - "$TMP" "$RMS" "$RMS1" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
rms_of = {0: float(sys.argv[2]), 1: float(sys.argv[3]), 4: float(sys.argv[2])}
r = {w: json.load(open("%s/r%d.json" % (d, w))) for w in (0, 1, 4)}
dp = {w: r[w]["data_pipeline"] for w in r}
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
for w in (0, 1, 4):
    p = dp[w]
    want(p is not None, "w%d: a data_pipeline section" % w)
    if p is None:
        continue
    st = {s["name"]: s for s in p["stages"]}
    want("read_batch" in st, "w%d: the read_batch stage (%s)" % (w, list(st)))
    if "read_batch" in st:
        s, rms = st["read_batch"], rms_of[w]
        want(s["calls"] >= 40, "w%d: a call per batch (%d)" % (w, s["calls"]))
        want(s["total_ms"] / s["calls"] >= rms * 0.999, "w%d: each read sleeps --reader-ms (%.3f < %.1f)" % (w, s["total_ms"] / s["calls"], rms))
        want(0 <= s["busy_pct"] <= 100, "w%d: busy_pct in 0..100 (%s)" % (w, s["busy_pct"]))
        want(s["per_sample_ms"] * 64 >= rms * 0.9, "w%d: per sample over the batch's 64 samples (%s)" % (w, s["per_sample_ms"]))
    for l in p["lanes"]:
        want(0 <= l["busy_pct"] <= 100, "w%d: lane busy in 0..100 (%s)" % (w, l))
    want(p["workers"] == w, "w%d: %d worker lanes (%s)" % (w, w, p["workers"]))
want(dp[0]["queue_samples"] == 0 and dp[0]["queue_empty_pct"] is None, "w0: no queue")
want(dp[0]["on_training_thread"] is True, "w0: stages on the training thread")
for w in (1, 4):
    want(dp[w]["queue_samples"] >= 40, "w%d: a queue sample per fetch (%s)" % (w, dp[w]["queue_samples"]))
    want(dp[w]["queue_capacity"] == 2 * w, "w%d: capacity %d (%s)" % (w, 2 * w, dp[w]["queue_capacity"]))
want(dp[1]["queue_empty_pct"] > dp[4]["queue_empty_pct"],
     "empty share: 1 worker (%.1f%%) above 4 workers (%.1f%%)" % (dp[1]["queue_empty_pct"], dp[4]["queue_empty_pct"]))
want(dp[1]["queue_mean"] < dp[4]["queue_mean"], "mean ready: 1 worker below 4 workers")
adv = [a for a in r[1]["advice"] if a["key"] == "data_pipeline"]
want(adv and "saturated" in adv[0]["title"] and "read_batch" in adv[0]["evidence"],
     "w1: the advisor says the worker is saturated, naming read_batch (%s)" % adv)
print("; ".join(bad) if bad else "empty %.1f%% (1 worker) vs %.1f%% (4)" % (dp[1]["queue_empty_pct"], dp[4]["queue_empty_pct"]))
sys.exit(1 if bad else 0)
PY
); then
	ok "data_pipeline relations over --workers 0/1/4 ($out)"
else
	not_ok "data_pipeline relations over --workers 0/1/4" "$out"
fi

check_out "text: no workers, no queue, said so" "Queue: none: the loader has no workers" cat "$TMP/r0.txt"
check_out "text: the Data Pipeline Summary with the stage" "read_batch +[0-9]+ " cat "$TMP/r1.txt"
check_out "text: the worker lane by its thread name" "loader-0 +worker" cat "$TMP/r1.txt"

# --- diff: one worker -> four
"$PROFTOP" diff "$TMP/w1.json" "$TMP/w4.json" >"$TMP/diff.txt" 2>&1
"$PROFTOP" diff "$TMP/w1.json" "$TMP/w4.json" --json >"$TMP/diff.json" 2>&1
if out=$(python3 - "$TMP/diff.json" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["data_pipeline"]
b, a = d["before"], d["after"]
ok = b["workers"] == 1 and a["workers"] == 4 and b["queue_empty_pct"] > a["queue_empty_pct"] \
    and [s["name"] for s in b["stages"]] == ["read_batch"] == [s["name"] for s in a["stages"]]
print("empty %.1f%% -> %.1f%%" % (b["queue_empty_pct"], a["queue_empty_pct"]) if ok else json.dumps(d)[:600])
sys.exit(0 if ok else 1)
PY
); then ok "diff --json: data_pipeline before/after ($out)"; else not_ok "diff --json: data_pipeline" "$out"; fi
check_out "diff: the Data Pipeline part, stage matched by name" "^read_batch +[0-9.]+ +[0-9.]+ +[+-][0-9.]+%" cat "$TMP/diff.txt"
check_out "diff: the queue's empty share before -> after" "Queue empty at a fetch: [0-9.]+% -> [0-9.]+%" cat "$TMP/diff.txt"

# --- the Data view, in tmux
if command -v tmux >/dev/null; then
	SOCK="pt-e2e-data-$$"
	TM() { tmux -L "$SOCK" "$@"; }
	trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
	BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
	wait_for() { # wait_for SESSION REGEX
		for _ in $(seq 100); do
			TM capture-pane -p -t "$1" 2>/dev/null | grep -Eq -- "$2" && return 0
			sleep 0.1
		done
		return 1
	}
	expect() { # expect DESC SESSION REGEX
		if wait_for "$2" "$3"; then ok "$1"; else not_ok "$1" "$(TM capture-pane -p -t "$2" | head -n 30)"; fi
	}
	for size in 80x24 200x50; do
		TM new-session -d -s "d$size" -x "${size%x*}" -y "${size#*x}" \
			"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $TMP/w4.json; echo EXIT=\$?; sleep 60"
		wait_for "d$size" "0 Data" && TM send-keys -t "d$size" 0
		expect "$size: the Data view's queue and its strip of steps" "d$size" "^steps [0-9+.]{10,}"
		expect "$size: four worker lanes" "d$size" "loader-3 +worker"
		expect "$size: the stages table" "d$size" "read_batch +[0-9]+ "
		tmux_quit "$SOCK" "d$size"
	done
	TM new-session -d -s none -x 80 -y 24 \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $PWD/fixtures/dialects/paddle.json; echo EXIT=\$?; sleep 60"
	wait_for none "1 Sum" && TM send-keys -t none 0
	expect "a trace without a data pipeline: the Data view says so" none "No data pipeline in this window"
	tmux_quit "$SOCK" none
	TM kill-server 2>/dev/null
else
	skip "the Data view" "no tmux"
fi

done_testing
