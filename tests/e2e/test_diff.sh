#!/usr/bin/env bash
# test_diff.sh - `proftop diff BEFORE AFTER` and the screen's baseline:
# two minitrain runs recorded with proftop record (--workers 0 vs 4, a reader
# twice as slow as the compute step measured here): the diff shows the Dataloader time falling and IPS rising by the
# amounts each run's own report gives and minitrain itself prints; new and
# vanished operators on a synthetic pair; --json parses; --fail-if exits 3 on
# a regression (the runs swapped) and 0 on the improvement; bad command
# lines exit 2; `view AFTER --baseline BEFORE` shows delta columns (tmux),
# and prints the diff off a terminal.
. tests/e2e/lib.sh

BDIR=$(dirname "$PROFTOP")
MT=$BDIR/examples/minitrain
[ -x "$MT" ] || MT=build/examples/minitrain
LIB=$BDIR/libproftop.so
[ -f "$LIB" ] || LIB=build/libproftop.so
LIB=$(cd "$(dirname "$LIB")" 2>/dev/null && pwd)/libproftop.so
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"

# --- command line
check_out "help diff" "Usage: proftop diff BEFORE AFTER" "$PROFTOP" help diff
check_out "diff is listed in --help" "diff BEFORE AFTER" "$PROFTOP" --help
check_fails "one file is a usage error" 2 "$PROFTOP" diff a.json
check_fails "bad --top" 2 "$PROFTOP" diff --top x a b
check_fails "bad --fail-if syntax exits 2 before reading" 2 "$PROFTOP" diff --fail-if 'ips<' a b
check_fails "unknown figure exits 2 before reading" 2 "$PROFTOP" diff --fail-if 'bogus_delta<0' a b
check_fails "missing file exits 1" 1 "$PROFTOP" diff "$TMP/none.json" "$TMP/none2.json"

# --- a synthetic pair: op "gone" only before, op "fresh" only after
cat >"$TMP/s1.json" <<'EOF'
{"traceEvents":[
{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000,"cat":"user_annotation"},
{"ph":"X","name":"both","pid":1,"tid":1,"ts":10,"dur":300,"cat":"cpu_op"},
{"ph":"X","name":"gone","pid":1,"tid":1,"ts":400,"dur":200,"cat":"cpu_op"}
]}
EOF
cat >"$TMP/s2.json" <<'EOF'
{"traceEvents":[
{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000,"cat":"user_annotation"},
{"ph":"X","name":"both","pid":1,"tid":1,"ts":10,"dur":100,"cat":"cpu_op"},
{"ph":"X","name":"fresh","pid":1,"tid":1,"ts":400,"dur":50,"cat":"cpu_op"}
]}
EOF
"$PROFTOP" diff "$TMP/s1.json" "$TMP/s2.json" >"$TMP/s.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -Eq '^gone .*vanished$' "$TMP/s.txt" && grep -Eq '^fresh .*new$' "$TMP/s.txt" &&
	grep -Eq '^both +1 +1 +0\.30 +0\.10 +-0\.20 +-66\.7% +0\.33x' "$TMP/s.txt"; then
	ok "synthetic pair: vanished, new and changed operators"
else
	not_ok "synthetic pair: vanished, new and changed operators" "rc=$rc" "$(sed -n '/Operator Summary/,$p' "$TMP/s.txt")"
fi
if "$PROFTOP" diff "$TMP/s1.json" "$TMP/s2.json" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "proftop.diff/1", d["schema"]
ops = {r["name"]: r for r in d["operators"]}
assert ops["gone"]["status"] == "vanished" and ops["fresh"]["status"] == "new", ops
assert ops["both"]["status"] == "changed"
assert abs(ops["both"]["total_ms"]["delta"] + 0.2) < 1e-9, ops["both"]
assert ops["fresh"]["total_ms"]["ratio"] is None
' 2>"$TMP/py.err"; then
	ok "--json parses: statuses and deltas"
else
	not_ok "--json parses: statuses and deltas" "$(cat "$TMP/py.err")"
fi
check_out "--top 1 keeps one row per table" "^both .*-66\.7%" "$PROFTOP" diff --top 1 "$TMP/s1.json" "$TMP/s2.json"
if [ "$("$PROFTOP" diff --top 1 "$TMP/s1.json" "$TMP/s2.json" | grep -cE '^(gone|fresh) ')" = 0 ]; then
	ok "--top 1 cuts the smaller changes"
else
	not_ok "--top 1 cuts the smaller changes"
fi

# --- the case study: minitrain --workers 0 vs --workers 4
if [ ! -x "$MT" ] || [ ! -f "$LIB" ]; then
	skip "minitrain diff" "no $MT or $LIB"
	done_testing
	exit 0
fi
export PROFTOP_LIB=$LIB
RMS=$(mt_reader_ms "$MT")
echo "# reader time: $RMS ms (twice the compute step measured here)"
for w in 0 4; do
	"$PROFTOP" record -o "$TMP/w$w.json" --log "$TMP/mt$w.log" -- "$MT" --steps 150 --reader-ms "$RMS" \
		--workers $w --log-every 0 >"$TMP/rec$w.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$TMP/w$w.json" ]; then ok "record minitrain --workers $w"
	else not_ok "record minitrain --workers $w" "rc=$rc" "$(tail -n 5 "$TMP/rec$w.out" "$TMP/mt$w.log")"; fi
	"$PROFTOP" report "$TMP/w$w.json" --json >"$TMP/r$w.json" 2>"$TMP/r$w.err"
done
"$PROFTOP" diff "$TMP/w0.json" "$TMP/w4.json" --json >"$TMP/d.json" 2>"$TMP/d.err"
"$PROFTOP" diff "$TMP/w0.json" "$TMP/w4.json" >"$TMP/d.txt" 2>&1
if out=$(python3 - "$TMP/r0.json" "$TMP/r4.json" "$TMP/d.json" "$TMP/mt0.log" "$TMP/mt4.log" "$RMS" 2>&1 <<'PY'
import json, re, sys
r0, r4, d = (json.load(open(p)) for p in sys.argv[1:4])
rms = float(sys.argv[6])  # the reader's sleep per batch
def printed(path):  # minitrain's own final line: step_ms=.. ips=..
    line = [l for l in open(path) if l.startswith("minitrain: done")][-1]
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", line)}
m0, m4 = printed(sys.argv[4]), printed(sys.argv[5])
def model(r, name):
    return {x["name"]: x for x in r["model_summary"]}[name]
def close(a, b, tol, what, atol=0.0):
    assert abs(a - b) <= max(tol * max(abs(a), abs(b), 1e-12), atol), (what, a, b)
p = d["perf"]
# the diff's figures are each run's own report figures
for side, r in (("before", r0), ("after", r4)):
    close(p["ips"][side], r["perf_summary"]["ips"]["avg"], 1e-6, "ips " + side)
    # the report prints the percentage with 6 decimals: near 0 % that is the precision
    close(p["reader_ratio"][side] * 100, r["perf_summary"]["reader_ratio_pct"], 1e-6, "reader " + side, 1e-6)
    steps = r["steps"]
    dl = model(r, "Dataloader")["cpu_total_ms"] / steps
    close(d["model_summary"][1]["cpu_ms_per_step"][side], dl, 1e-6, "dataloader/step " + side)
    assert d["model_summary"][1]["name"] == "Dataloader"
# and agree with what minitrain measured itself (a few %)
close(p["ips"]["before"], m0["ips"], 0.05, "ips vs minitrain w0")
close(p["ips"]["after"], m4["ips"], 0.05, "ips vs minitrain w4")
close(p["step_ms"]["before"], m0["step_ms"], 0.05, "step_ms vs minitrain w0")
close(p["step_ms"]["after"], m4["step_ms"], 0.05, "step_ms vs minitrain w4")
# the direction and size: the reader (two compute steps) is hidden by the
# workers; relations only, so a loaded machine cannot break them
dl = d["model_summary"][1]["cpu_ms_per_step"]
assert dl["before"] >= 0.9 * rms and dl["after"] < 0.3 * dl["before"], (dl, rms)
assert dl["delta"] < -0.5 * rms, (dl, rms)
assert p["ips"]["delta_pct"] > 20, p["ips"]
close(p["ips"]["delta_pct"], 100 * (m4["ips"] - m0["ips"]) / m0["ips"], 0.1, "ips change vs minitrain")
assert p["reader_ratio"]["before"] > 0.2, p["reader_ratio"]
assert p["reader_ratio"]["after"] <= p["reader_ratio"]["before"] / 2, p["reader_ratio"]
print("Dataloader %.2f -> %.2f ms/step, ips %.0f -> %.0f (%+.0f%%; minitrain %.0f -> %.0f)" % (
    dl["before"], dl["after"], p["ips"]["before"], p["ips"]["after"], p["ips"]["delta_pct"],
    m0["ips"], m4["ips"]))
PY
); then
	ok "minitrain: $out"
else
	not_ok "minitrain: Dataloader falls and IPS rises by the right amounts" "$out"
fi
if grep -Eq '^  Dataloader +[0-9.]+ +[0-9.]+ +-[0-9.]+ +0\.[0-9]+x' "$TMP/d.txt" &&
	grep -Eq '^\| +ips +\|.*\| +\+[0-9.]+% +\|' "$TMP/d.txt"; then
	ok "text diff: Dataloader row falls, ips row rises"
else
	not_ok "text diff: Dataloader row falls, ips row rises" "$(head -n 40 "$TMP/d.txt")"
fi

# --- the gate
check_fails "--fail-if 'ips_delta<-5%' holds on a regression: exit 3" 3 \
	"$PROFTOP" diff "$TMP/w4.json" "$TMP/w0.json" --fail-if 'ips_delta<-5%'
err=$("$PROFTOP" diff "$TMP/w4.json" "$TMP/w0.json" --fail-if 'ips_delta<-5%' 2>&1 >/dev/null)
if [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ "$err" == *"ips_delta"* ]]; then
	ok "one-line reason on stderr ($err)"
else
	not_ok "one-line reason on stderr" "$err"
fi
check_fails "--fail-if 'ips_delta<-5%' on the improvement: exit 0" 0 \
	"$PROFTOP" diff "$TMP/w0.json" "$TMP/w4.json" --fail-if 'ips_delta<-5%'
check_fails "AFTER's own figures: reader_ratio>0.2 holds for workers 0" 3 \
	"$PROFTOP" diff "$TMP/w4.json" "$TMP/w0.json" --fail-if 'reader_ratio>0.2'
check_fails "an undefined figure exits 1 (no GPU)" 1 \
	"$PROFTOP" diff "$TMP/w0.json" "$TMP/w4.json" --fail-if 'gpu_util_delta<0'
check_out "--steps applies to both runs" "Before .*: .*, 51 steps \(50 to 100\)" \
	"$PROFTOP" diff --steps 50:100 "$TMP/w0.json" "$TMP/w4.json"

# --- the screen's baseline
check_out "view --baseline off a terminal prints the diff" "Model Summary \(diff\)" \
	"$PROFTOP" view "$TMP/w4.json" --baseline "$TMP/w0.json"
check_fails "view --baseline with a missing file exits 1" 1 \
	"$PROFTOP" view "$TMP/w4.json" --baseline "$TMP/none.json"
check_fails "run --baseline with a missing file exits 1 before starting CMD" 1 \
	"$PROFTOP" run --no-screen --baseline "$TMP/none.json" -- touch "$TMP/started"
if [ ! -e "$TMP/started" ]; then ok "... and CMD did not start"; else not_ok "... and CMD did not start"; fi
check "run --baseline FILE --no-screen -- minitrain" \
	"$PROFTOP" run --no-screen --log "$TMP/run.log" --baseline "$TMP/w0.json" -- "$MT" --steps 5 --log-every 0
if ! command -v tmux >/dev/null; then
	skip "view --baseline in tmux" "no tmux"
else
	SOCK="pt-diff-$$"
	TM() { tmux -L "$SOCK" "$@"; }
	trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
	BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
	TM new-session -d -s v -x 160 -y 40 -c "$TMP" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $TMP/w4.json --baseline $TMP/w0.json; echo EXIT=\$?; sleep 60"
	wait_for() {
		for _ in $(seq 100); do
			TM capture-pane -p -t v 2>/dev/null | grep -Eq -- "$1" && return 0
			sleep 0.1
		done
		return 1
	}
	if wait_for "vs baseline" && wait_for "ips [0-9.]+ -> [0-9.]+ \(\+[0-9.]+%\)" &&
		wait_for "Dataloader .* -[0-9.]+ms -[0-9]+%"; then
		ok "Summary: per-step deltas and ips before -> after"
	else
		not_ok "Summary: per-step deltas and ips before -> after" "$(TM capture-pane -p -t v | head -n 25)"
	fi
	TM send-keys -t v 2
	if wait_for "Delta +Delta%" && wait_for "linear1 .* [+-][0-9.]+(us|ms) +[+-][0-9.]+%"; then
		ok "Operators: Delta and Delta% columns"
	else
		not_ok "Operators: Delta and Delta% columns" "$(TM capture-pane -p -t v | head -n 15)"
	fi
	TM send-keys -t v 7
	if wait_for "read_batch .* [+-][0-9.]+(us|ms|ns)"; then ok "UserDefined: delta column"
	else not_ok "UserDefined: delta column" "$(TM capture-pane -p -t v | head -n 10)"; fi
	TM send-keys -t v q
	if wait_for "EXIT=0"; then ok "quits cleanly"; else not_ok "quits cleanly" "$(TM capture-pane -p -t v | tail -n 5)"; fi
	TM kill-server 2>/dev/null
fi

# attach takes --baseline too, and reads it before looking for sessions
check_fails "attach --baseline with a missing file stops before attaching" 1 \
	"$PROFTOP" --baseline "$TMP/does-not-exist.json" --no-screen
check_out "attach --help names --baseline" "--baseline FILE" "$PROFTOP" help attach

done_testing
