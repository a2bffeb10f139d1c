#!/usr/bin/env bash
# tests/e2e/test_gate.sh - the CI gate and the Markdown report: `report
# --fail-if` exits 3 with a one-line reason when the condition holds, 0 when
# not, 2 on a bad expression (with the column) or an unknown figure (with the
# list), 1 on a figure the trace cannot give; `report --format md|json|text`;
# `record --fail-if` on a minitrain run; and the probe's own-overhead figure
# (measured cost per event) in report, --json and a re-read export.
. tests/e2e/lib.sh

F=fixtures/pytorch/resnet50_workers0.pt.trace.json.gz

# --- report --fail-if: exit codes and the reason line
out=$("$PROFTOP" report "$F" --fail-if 'ips<120 || reader_ratio>0.2' 2>"$TMP/err" >/dev/null)
rc=$?
if [ $rc -eq 3 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -Eq '^proftop: --fail-if: ips 5\.72 < 120 \|\| reader_ratio 0\.39[0-9]* > 0\.2$' "$TMP/err"; then
	ok "report --fail-if holds: exit 3, one line naming the figures"
else
	not_ok "report --fail-if holds: exit 3, one line naming the figures" "rc=$rc" "$(cat "$TMP/err")"
fi
check "report --fail-if does not hold: exit 0" "$PROFTOP" report "$F" --fail-if 'ips<1 || step_p99_ms>1000'
"$PROFTOP" report "$F" --fail-if 'reader_ratio > 30%' >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 3 ] && grep -q 'reader_ratio 39.64% > 30%' "$TMP/err" && grep -q 'Perf Summary' "$TMP/out"; then
	ok "percent limits print as percent; the report is still printed"
else
	not_ok "percent limits print as percent; the report is still printed" "rc=$rc" "$(cat "$TMP/err")"
fi
"$PROFTOP" report "$F" --fail-if 'ips < x' >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "at column 7: expected a number after '<'" "$TMP/err"; then
	ok "a bad expression: exit 2 with the column"
else
	not_ok "a bad expression: exit 2 with the column" "rc=$rc" "$(cat "$TMP/err")"
fi
"$PROFTOP" report "$F" --fail-if 'ipz < 3' >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "ipz: unknown figure" "$TMP/err" && grep -q "step_p99_ms" "$TMP/err"; then
	ok "an unknown figure: exit 2 with the known names"
else
	not_ok "an unknown figure: exit 2 with the known names" "rc=$rc" "$(cat "$TMP/err")"
fi
check_fails "unknown figure is refused before loading (no such file needed)" 2 \
	"$PROFTOP" report /nonexistent.json --fail-if 'nope>1'
check_out "help report lists the figures and exit 3" "dropped_ratio.*[[:space:]]" "$PROFTOP" report --help
check_out "help report documents exit status 3" "3 the --fail-if condition held" "$PROFTOP" report --help

# --- --format
check_fails "--format bogus is a usage error" 2 "$PROFTOP" report "$F" --format bogus
a=$("$PROFTOP" report "$F" --format json --top 3 | md5sum)
b=$("$PROFTOP" report "$F" --json --top 3 | md5sum)
[ "$a" = "$b" ] && ok "--format json = --json" || not_ok "--format json = --json"
a=$("$PROFTOP" report "$F" --format text --top 3 | md5sum)
b=$("$PROFTOP" report "$F" --top 3 | md5sum)
[ "$a" = "$b" ] && ok "--format text = default" || not_ok "--format text = default"
"$PROFTOP" report "$F" --format md --top 3 >"$TMP/md"
if grep -q '^## Model Summary' "$TMP/md" && grep -q '^| ProfileStep | 6 |' "$TMP/md" &&
	grep -q '^## Operator Summary' "$TMP/md" && grep -q '^## Kernel Summary' "$TMP/md" &&
	grep -q '^| :--- | ---: |' "$TMP/md"; then
	ok "--format md: headings and pipe tables"
else
	not_ok "--format md: headings and pipe tables" "$(head -n 20 "$TMP/md")"
fi
# hostile names: a table cell can neither be split nor carry HTML or escapes
cat >"$TMP/evil.json" <<'J'
{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"a|b`c<script>x</script>\u001b[31m*_","pid":1,"tid":1,"ts":0,"dur":10},
{"ph":"X","cat":"cpu_op","name":"plain","pid":1,"tid":1,"ts":20,"dur":10}
]}
J
"$PROFTOP" report "$TMP/evil.json" --format md >"$TMP/evil.md"
if grep -qF '| a\|b\`c\<script\>x\</script\>\\e\[31m\*\_ | 1 |' "$TMP/evil.md" &&
	! grep -q $'\x1b' "$TMP/evil.md" && ! grep -q '<script>' "$TMP/evil.md"; then
	ok "--format md escapes | \` < and control characters in names"
else
	not_ok "--format md escapes names" "$(grep -a 'script' "$TMP/evil.md")"
fi

"$PROFTOP" report "$TMP/evil.json" --fail-if 'gpu_util < 0.5' >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "gpu_util: not available" "$TMP/err"; then
	ok "gpu_util without device data: exit 1, not a pass"
else
	not_ok "gpu_util without device data: exit 1, not a pass" "rc=$rc" "$(cat "$TMP/err")"
fi
# --- record --fail-if and the measured overhead, on minitrain
BDIR=$(dirname "$PROFTOP")
MT=$BDIR/examples/minitrain
[ -x "$MT" ] || MT=build/examples/minitrain
LIB=$BDIR/libproftop.so
[ -f "$LIB" ] || LIB=build/libproftop.so
export PROFTOP_LIB=$(cd "$(dirname "$LIB")" && pwd)/libproftop.so
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR" && chmod 700 "$PROFTOP_SESSION_DIR"
if [ ! -x "$MT" ]; then
	skip "record --fail-if on minitrain" "minitrain not built"
	done_testing
	exit 0
fi
check_fails "record: a bad --fail-if is refused before the command starts" 2 \
	"$PROFTOP" record -o "$TMP/never.json" --fail-if 'ips <' -- "$MT" --steps 5
[ ! -e "$TMP/never.json" ] && ok "...and nothing was recorded" || not_ok "...and nothing was recorded"
"$PROFTOP" record -o "$TMP/mt.json" --log "$TMP/mt.log" --fail-if 'steps > 1 && ips > 0' -- \
	"$MT" --steps 60 --log-every 0 >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 3 ] && grep -Eq '^proftop: --fail-if: steps [0-9]+ > 1 && ips [0-9.]+ > 0$' "$TMP/err" && [ -s "$TMP/mt.json" ]; then
	ok "record --fail-if holds: exit 3 after writing the trace"
else
	not_ok "record --fail-if holds: exit 3 after writing the trace" "rc=$rc" "$(cat "$TMP/err")"
fi
check "record --fail-if that does not hold: exit 0" "$PROFTOP" record -o "$TMP/mt2.json" \
	--log "$TMP/mt2.log" --fail-if 'steps < 1' -- "$MT" --steps 20 --log-every 0
check_fails "record: CMD's own failure code wins over the gate" 2 "$PROFTOP" record \
	-o "$TMP/mt3.json" --log "$TMP/mt3.log" --fail-if 'steps >= 0' -- "$MT" --bogus-option

# the overhead: measured by the probe, carried through the export, plausible
"$PROFTOP" report "$TMP/mt.json" --json >"$TMP/mt.report.json"
if python3 - "$TMP/mt.report.json" <<'P'
import json, sys
o = json.load(open(sys.argv[1]))["overhead"]
ok = o["ns_per_event"] is not None and 0 < o["ns_per_event"] < 10000 \
    and o["events_per_step"] > 0 and o["share"] is not None and 0 < o["share"] < 0.10
print(o)
sys.exit(0 if ok else 1)
P
then
	ok "minitrain under record: overhead measured and plausible ($(python3 -c "import json;o=json.load(open('$TMP/mt.report.json'))['overhead'];print('%.1f ev/step x %.1f ns = %.4f%%'%(o['events_per_step'],o['ns_per_event'],o['share']*100))"))"
else
	not_ok "minitrain under record: overhead measured and plausible" "$(grep -o '"overhead".*' "$TMP/mt.report.json")"
fi
check_out "report's header shows the overhead" '^Profiling overhead ≈ [0-9.]+% \([0-9]+ events/step × [0-9]+ ns\)' \
	"$PROFTOP" report "$TMP/mt.json"
check_out "--fail-if overhead_ratio works on a recording" '' "$PROFTOP" report "$TMP/mt.json" --fail-if 'overhead_ratio > 0.5'
"$PROFTOP" report "$F" --json | python3 -c '
import json, sys
o = json.load(sys.stdin)["overhead"]
sys.exit(0 if o["ns_per_event"] is None and o["share"] is None and o["events_per_step"] > 0 else 1)' &&
	ok "a foreign trace: events/step only, no cost" || not_ok "a foreign trace: events/step only, no cost"
done_testing
