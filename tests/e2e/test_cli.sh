#!/usr/bin/env bash
# tests/e2e/test_cli.sh - the proftop binary end to end: help and errors,
# report and export on bundled and shared real traces, the round trip, bad
# input fixtures, step windows, the memory cap, escaping of hostile names.
. tests/e2e/lib.sh

W0=fixtures/pytorch/resnet50_workers0.pt.trace.json.gz
W4=fixtures/pytorch/resnet50_workers4.pt.trace.json.gz

# --- help, version, usage errors
check_out "--help lists report and export" "report.*" "$PROFTOP" --help
check_out "--help lists export" "export" "$PROFTOP" --help
check_out "--version prints a version" "proftop [0-9]+\.[0-9]+" "$PROFTOP" --version
check_out "report --help" "--steps" "$PROFTOP" report --help
check_out "export --help" "--force" "$PROFTOP" export --help
check_out "help report" "--json" "$PROFTOP" help report
check_fails "unknown command exits 2" 2 "$PROFTOP" frobnicate
check_fails "unknown option exits 2" 2 "$PROFTOP" report --frobnicate "$W0"
check_fails "report without a file exits 2" 2 "$PROFTOP" report
check_fails "--top needs a number" 2 "$PROFTOP" report --top lots "$W0"
check_fails "--sort rejects unknown keys" 2 "$PROFTOP" report --sort colour "$W0"
# the capture options of run and record, refused before anything starts
check_fails "record --capture-steps 0 exits 2" 2 "$PROFTOP" record --capture-steps 0 -o "$TMP/c.json" -- true
check_fails "run --capture-steps 1001 exits 2" 2 "$PROFTOP" run --capture-steps 1001 -- true
check_fails "--capture-on-straggler=1.0 exits 2 (a factor from 1.1)" 2 "$PROFTOP" record \
	--capture-on-straggler=1.0 -o "$TMP/c.json" -- true

# --- file errors: one line naming the file, exit 1
out=$("$PROFTOP" report "$TMP/nope.json" 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q "nope.json"; then
	ok "missing file: one line naming it, exit 1"
else
	not_ok "missing file: one line naming it, exit 1" "rc=$rc out=$out"
fi
check_fails "a directory exits 1" 1 "$PROFTOP" report "$TMP"

# --- the bundled default: Paddle's dataloader case study on real PyTorch traces
"$PROFTOP" report "$W0" --json >"$TMP/w0.json" 2>"$TMP/w0.err"
"$PROFTOP" report "$W4" --json >"$TMP/w4.json" 2>"$TMP/w4.err"
if python3 - "$TMP/w0.json" "$TMP/w4.json" <<'PY'; then ok "resnet50 reader ratio 39.6% -> 1.0%, step avg 174.8 -> 139.7 ms"; else not_ok "resnet50 reader ratio 39.6% -> 1.0%, step avg 174.8 -> 139.7 ms"; fi
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
def row(r, n): return [x for x in r["model_summary"] if x["name"] == n][0]
assert a["steps"] == 6 and b["steps"] == 6, (a["steps"], b["steps"])
assert abs(a["perf_summary"]["reader_ratio_pct"] - 39.6) < 0.3, a["perf_summary"]
assert abs(b["perf_summary"]["reader_ratio_pct"] - 1.02) < 0.1, b["perf_summary"]
assert abs(row(a, "ProfileStep")["cpu_avg_ms"] - 174.829) < 0.01, row(a, "ProfileStep")
assert abs(row(b, "ProfileStep")["cpu_avg_ms"] - 139.692) < 0.01, row(b, "ProfileStep")
assert abs(row(a, "Dataloader")["cpu_avg_ms"] - 69.299) < 0.01, row(a, "Dataloader")
assert b["perf_summary"]["ips"]["avg"] > a["perf_summary"]["ips"]["avg"]
for r in (a, b):
    names = [x["name"] for x in r["model_summary"]]
    assert names == ["ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "Others"], names
    m = {x["name"]: x for x in r["model_summary"]}
    parts = sum(m[n]["cpu_total_ms"] for n in names[1:])
    assert abs(parts - m["ProfileStep"]["cpu_total_ms"]) < 0.01, (parts, m["ProfileStep"])
    assert m["Forward"]["cpu_total_ms"] > 0 and m["Backward"]["cpu_total_ms"] > 0
    assert m["ProfileStep"]["gpu_total_ms"] > 0 and m["Backward"]["gpu_total_ms"] > 0
    assert len(r["operators"]) > 10 and len(r["kernels"]) > 10
    assert r["device"] and 0 < r["device"][0]["utilization_pct"] <= 100
PY
check_out "text report shows the Model Summary" "Model Summary" "$PROFTOP" report "$W0"
check_out "text report shows the Perf Summary" "Reader Ratio: 39\.[0-9]+%" "$PROFTOP" report "$W0"

# --- step windows
check_out "--steps 7:8 keeps two steps" '"steps": *2[,}]' "$PROFTOP" report "$W0" --steps 7:8 --json
check_out "--steps 7 keeps one step" '"steps": *1[,}]' "$PROFTOP" report "$W0" --steps 7 --json
check_fails "--steps outside the trace exits 1" 1 "$PROFTOP" report "$W0" --steps 100:200
check_fails "--steps garbage exits 2" 2 "$PROFTOP" report "$W0" --steps x:y

# --- export and the round trip
check "export writes a file" "$PROFTOP" export "$W0" -o "$TMP/w0.export.json"
check_fails "export refuses to overwrite" 1 "$PROFTOP" export "$W0" -o "$TMP/w0.export.json"
check "export --force overwrites" "$PROFTOP" export "$W0" -o "$TMP/w0.export.json" --force
if ls "$TMP" | grep -q 'tmp\.'; then not_ok "no temporary files left behind" "$(ls "$TMP")"; else ok "no temporary files left behind"; fi
check "export is valid JSON" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['traceEvents']) > 70000" "$TMP/w0.export.json"
"$PROFTOP" report "$TMP/w0.export.json" --json >"$TMP/rt.json" 2>&1
if python3 - "$TMP/w0.json" "$TMP/rt.json" <<'PY'; then ok "report(export(T)) == report(T)"; else not_ok "report(export(T)) == report(T)"; fi
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for k in ("source",):
    a.pop(k, None); b.pop(k, None)
assert a == b, [k for k in a if a.get(k) != b.get(k)]
PY
check_fails "export into a missing directory exits 1" 1 "$PROFTOP" export "$W0" -o "$TMP/no/such/dir/out.json"

# --- every real trace in shared/ loads, and survives the round trip
if [ -d "$PT_TRACES" ]; then
	n=0 bad="" rtbad=""
	while IFS= read -r f; do
		case "$f" in *marey_graph*) continue ;; esac
		n=$((n + 1))
		"$PROFTOP" report "$f" --json >"$TMP/one.json" 2>"$TMP/one.err" || bad="$bad $f"
		python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/one.json" 2>/dev/null || bad="$bad $f(json)"
		"$PROFTOP" export "$f" -o "$TMP/one.export.json" --force 2>>"$TMP/one.err" || rtbad="$rtbad $f(export)"
		"$PROFTOP" report "$TMP/one.export.json" --json >"$TMP/two.json" 2>>"$TMP/one.err" || rtbad="$rtbad $f(re-read)"
		python3 - "$TMP/one.json" "$TMP/two.json" <<'PY' || rtbad="$rtbad $f"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
a.pop("source"); b.pop("source")
sys.exit(0 if a == b else 1)
PY
	done < <(find "$PT_TRACES" -name '*.json' -o -name '*.json.gz' | sort)
	if [ -z "$bad" ] && [ $n -gt 20 ]; then ok "all $n shared traces give a report"; else not_ok "all shared traces give a report" "$bad"; fi
	if [ -z "$rtbad" ] && [ $n -gt 20 ]; then ok "report(export(T)) == report(T) for all $n shared traces"; else not_ok "report(export(T)) == report(T) for all shared traces" "$rtbad"; fi
	check_fails "valid JSON that is not a trace exits 1" 1 "$PROFTOP" report "$PT_TRACES/mindinsight/marey_graph__ascend_marey_timeline_1.json"
else
	skip "all shared traces give a report" "no $PT_TRACES"
	skip "report(export(T)) == report(T) for all shared traces" "no $PT_TRACES"
	skip "valid JSON that is not a trace exits 1" "no $PT_TRACES"
fi

# --- bad input fixtures (tests/e2e/bad_input.txt says what each must give)
listed=""
while IFS='|' read -r file code pat; do
	file=$(echo "$file" | xargs)
	case "$file" in "" | \#*) continue ;; esac
	code=$(echo "$code" | xargs)
	pat=$(echo "$pat" | sed 's/^ *//; s/ *$//')
	listed="$listed $file"
	f=fixtures/bad/$file
	if [ "$code" = 1 ]; then
		out=$("$PROFTOP" report "$f" 2>&1 >/dev/null)
		rc=$?
		if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
			printf '%s' "$out" | grep -qF "$f" && printf '%s' "$out" | grep -qF -- "$pat"; then
			ok "bad input $file: exit 1, one line: $pat"
		else
			not_ok "bad input $file: exit 1, one line: $pat" "rc=$rc: $out"
		fi
	else
		out=$("$PROFTOP" report "$f" --json 2>&1)
		rc=$?
		if [ $rc -eq 0 ] && printf '%s' "$out" | python3 -c "
import json, sys
w = json.load(sys.stdin)['warnings']
want = sys.argv[1]
sys.exit(0 if (w.get(want, 0) > 0 if want != '-' else not w) else 1)" "$pat"; then
			ok "bad events in $file: loads, warns $pat"
		else
			not_ok "bad events in $file: loads, warns $pat" "rc=$rc: $(printf '%s' "$out" | head -c 300)"
		fi
	fi
done <tests/e2e/bad_input.txt
missing=""
for f in fixtures/bad/*; do
	case " $listed " in *" $(basename "$f") "*) ;; *) missing="$missing $(basename "$f")" ;; esac
done
if [ -z "$missing" ]; then ok "every bad-input fixture has an expectation"; else not_ok "every bad-input fixture has an expectation" "$missing"; fi

# --- hostile names never reach the terminal raw
printf '[{"ph":"X","name":"evil\\u001b]0;pwned\\u0007\\u001b[31mred\\u009b","cat":"cpu_op","pid":1,"tid":1,"ts":1,"dur":5}]' >"$TMP/evil.json"
"$PROFTOP" report "$TMP/evil.json" >"$TMP/evil.out" 2>&1
if [ -s "$TMP/evil.out" ] && ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/evil.out" && ! grep -q $'\xc2\x9b' "$TMP/evil.out"; then
	ok "control characters in names are escaped in the text report"
else
	not_ok "control characters in names are escaped in the text report" "$(od -c "$TMP/evil.out" | head -n 5)"
fi

# --- the memory cap
check_out "--max-mem small drops the oldest and says so" "dropp" "$PROFTOP" report "$W0" --max-mem 1M
check_fails "--max-mem garbage exits 2" 2 "$PROFTOP" report "$W0" --max-mem lots

# --- names with invalid UTF-8: two names that differ only there stay two
# through export (each byte used to become one U+FFFD, merging them)
printf '{"traceEvents":[{"ph":"X","name":"op\377","pid":1,"tid":1,"ts":0,"dur":5},{"ph":"X","name":"op\376","pid":1,"tid":1,"ts":10,"dur":7},{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":20}]}' >"$TMP/bad8.json"
"$PROFTOP" export "$TMP/bad8.json" -o "$TMP/bad8.out.json" >/dev/null 2>&1
a=$("$PROFTOP" report "$TMP/bad8.json" 2>&1 | tail -n +2)
b=$("$PROFTOP" report "$TMP/bad8.out.json" 2>&1 | tail -n +2)
if [ -n "$a" ] && [ "$a" = "$b" ] && grep -q 'op\\xff' <<<"$b" && grep -q 'op\\xfe' <<<"$b"; then
	ok "invalid UTF-8 names: report of the export equals the original's"
else
	not_ok "invalid UTF-8 names: report of the export equals the original's" "$(diff <(echo "$a") <(echo "$b") | head -n 6)"
fi

# --- --batch N: a foreign trace's steps carry no samples; N each makes ips samples/s
"$PROFTOP" report --json "$W0" >"$TMP/nb.json" 2>/dev/null
"$PROFTOP" report --json --batch 32 "$W0" >"$TMP/b32.json" 2>/dev/null
"$PROFTOP" report --json --batch 32 "$PT_FIXTURES/dialects/proftop_export.json" >"$TMP/bown.json" 2>/dev/null
"$PROFTOP" report --json "$PT_FIXTURES/dialects/proftop_export.json" >"$TMP/own.json" 2>/dev/null
if python3 - "$TMP/nb.json" "$TMP/b32.json" "$TMP/own.json" "$TMP/bown.json" <<'PYEOF'; then
import json, sys
a, b, own, bown = (json.load(open(p))["perf_summary"] for p in sys.argv[1:])
assert a["ips_unit"] == "steps/s" and b["ips_unit"] == "samples/s", (a["ips_unit"], b["ips_unit"])
for k in ("avg", "max", "min"):
    assert abs(b["ips"][k] - 32 * a["ips"][k]) <= 1e-6 * b["ips"][k], (k, a["ips"][k], b["ips"][k])
assert own["ips"] == bown["ips"], (own["ips"], bown["ips"])  # samples the trace has win
PYEOF
	ok "report --batch 32: ips in samples/s, 32x the steps/s; a trace's own sample counts win"
else
	not_ok "report --batch 32" "$(head -c 300 "$TMP/b32.json")"
fi
for bad in 0 x -3; do
	"$PROFTOP" report --batch "$bad" "$W0" >/dev/null 2>"$TMP/bb.err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^proftop: --batch: '$bad' is not a number of samples" "$TMP/bb.err" &&
		ok "report --batch $bad: usage error" || not_ok "report --batch $bad: exit 2 and why" "rc=$rc $(cat "$TMP/bb.err")"
done

# --- output that cannot be written is an error, never a silent exit 0
if [ -w /dev/full ]; then
	for args in "backends" "ls" "--help" "report $W0" "report --json $W0"; do
		# shellcheck disable=SC2086 # the words of args are the command's
		out=$("$PROFTOP" $args 2>&1 >/dev/full)
		rc=$?
		if [ $rc -ne 0 ] && grep -Eq "No space left on device|writing the .*: output error" <<<"$out" &&
			[ "$(grep -c '^proftop:' <<<"$out")" -eq 1 ]; then # (a sanitizer may add its own lines)
			ok "$args >/dev/full: exit $rc, says why"
		else
			not_ok "$args >/dev/full: exit non-zero, says why" "rc=$rc" "$out"
		fi
	done
else
	skip "output to /dev/full" "no writable /dev/full"
fi

done_testing
