# tests/e2e/torch_lib.sh - what the PyTorch suites share (after lib.sh, with
# PY set to the interpreter under test): recording an unmodified script and
# comparing its own clock with proftop's report.

# torch_setup WHAT: PY (PT_PYTHON, else Debian's python3), a session
# directory of the suite's own, none of the helper's switches from the
# caller's environment; without torch under PY the suite is one skip.
torch_setup() {
	PY=${PT_PYTHON:-/usr/bin/python3}
	export PROFTOP_SESSION_DIR=$TMP/sessions
	mkdir -p "$PROFTOP_SESSION_DIR"
	chmod 700 "$PROFTOP_SESSION_DIR"
	unset PROFTOP_LIB PROFTOP_DISABLE PROFTOP_TORCH PROFTOP_TORCH_DEPTH PROFTOP_BATCH PROFTOP_TORCH_OPS
	if [ ! -x "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
		skip "$1" "torch is not importable by $PY (apt-get install python3-torch; make venv)"
		done_testing
		exit 0
	fi
}

# record NAME CMD... : proftop record -o $TMP/NAME.json; the report's JSON in $TMP/NAME.rep.
# Rings of 65536 records (2 MiB; the default is 16384): a DataLoader's
# __getitem__ ranges come at ~80 k events/s, which fill a default ring in
# ~200 ms, and on a loaded 2-core machine a reader may wait that long for a
# core (the source then drops and counts them, and a step can be among them);
# these suites check what the helper marks, not the drain (test_lossless does)
record() {
	local name=$1
	shift
	PROFTOP_RING_SLOTS=${PROFTOP_RING_SLOTS:-65536} \
		"$PROFTOP" record -o "$TMP/$name.json" --log "$TMP/$name.log" -- "$@" >"$TMP/$name.out" 2>&1
	local rc=$?
	"$PROFTOP" report "$TMP/$name.json" --json >"$TMP/$name.rep" 2>>"$TMP/$name.out"
	return $rc
}

# compare NAME DESC [nodata]: the script's RESULT line against the report.
# nodata: the script fetches no batches (its data sits in tensors): its
# Dataloader must be 0
compare() {
	local name=$1 desc=$2 verdict
	verdict=$("$PY" - "$TMP/$name.log" "$TMP/$name.rep" "${3:-}" <<'PYEOF'
import json, sys
res = None
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        res = dict(kv.split("=", 1) for kv in line.split()[1:])
if res is None:
    print("FAIL no RESULT line from the script"); sys.exit()
rep = json.load(open(sys.argv[2]))
rows = {r["name"]: r for r in rep["model_summary"]}
step_ms = rows["ProfileStep"]["cpu_total_ms"]
loop = float(res["loop_s"])
errs, info = [], []
if rep["steps"] != int(res["steps"]):
    errs.append("steps %d != script's %s" % (rep["steps"], res["steps"]))
info.append("steps %d" % rep["steps"])
nodata = sys.argv[3] == "nodata"
for phase, key in (("Dataloader", "data_s"), ("Forward", "fwd_s"), ("Backward", "bwd_s"),
                   ("Optimization", "opt_s")):
    mine = 100.0 * rows[phase]["cpu_total_ms"] / step_ms if step_ms else 0
    theirs = 100.0 * float(res[key]) / loop
    if nodata and phase == "Dataloader":
        theirs = 0.0  # a generator: not marked
    info.append("%s %.1f%%/%.1f%%" % (phase, mine, theirs))
    if abs(mine - theirs) > 5.0:
        errs.append("%s %.1f%% vs the script's %.1f%%" % (phase, mine, theirs))
ips = rep["perf_summary"]["ips"]["avg"]
want = int(res["samples"]) / loop
info.append("ips %.1f/%.1f" % (ips, want))
if rep["perf_summary"].get("ips_unit") != "samples/s":
    errs.append("ips unit %s" % rep["perf_summary"].get("ips_unit"))
if abs(ips - want) > 0.08 * want:
    errs.append("ips %.1f vs the script's %.1f" % (ips, want))
print(("FAIL " + "; ".join(errs) + " | " if errs else "OK ") + ", ".join(info))
PYEOF
)
	case "$verdict" in
	OK*) ok "$desc: ${verdict#OK }" ;;
	*) not_ok "$desc" "$verdict" "$(tail -n 3 "$TMP/$name.out")" ;;
	esac
}

# view_pane FILE COLS ROWS: `proftop view FILE` in tmux at COLS x ROWS, the
# pane once the Summary is drawn (10 s at most); "" without tmux
view_pane() {
	command -v tmux >/dev/null || return 0
	local sock=pt-vp-$$-$RANDOM pane=""
	tmux -L "$sock" -f /dev/null new-session -d -s s -x "$2" -y "$3" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $PROFTOP view $1; sleep 30"
	for _ in $(seq 100); do
		pane=$(tmux -L "$sock" capture-pane -p -t s 2>/dev/null)
		printf '%s' "$pane" | grep -q "Verdict" && break
		sleep 0.1
	done
	tmux -L "$sock" kill-server 2>/dev/null
	printf '%s\n' "$pane"
}
