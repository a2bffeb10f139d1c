#!/usr/bin/env bash
# test_view_dir.sh - `proftop view DIR` watching a folder that a "trainer"
# (a python script) keeps writing Kineto-style traces into: a file there
# before the start, one written as tmp + rename, one written slowly (open,
# half of it, a pause longer than the settle time, the rest), one .json.gz,
# plus a broken file and files to ignore. The real screen runs in tmux; the
# pane is polled (never fixed sleeps for the checks): the file and step
# counts grow as files arrive, the half-written file is waited for without
# an error, and the final numbers equal `proftop report` of one file holding
# every event.
# san: skip
# (the TUI under ASan is slow enough to make the polling flaky on 2 cores;
#  the backend's logic runs under ASan in build-san/tests/test_tracedir)
. tests/e2e/lib.sh
command -v tmux >/dev/null || { skip "view DIR screen tests" "no tmux"; done_testing; exit 0; }
command -v python3 >/dev/null || { skip "view DIR screen tests" "no python3"; done_testing; exit 0; }
SOCK="pt-e2e-vd-$$"
TM() { tmux -L "$SOCK" "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
D="$TMP/traces"
mkdir -p "$D"

cat >"$TMP/gen.py" <<'EOF'
# gen.py OUT FIRST LAST [--gz] [--slow] [--tmp] [--all]: a Kineto-style trace of
# steps FIRST..LAST (rank 0, pid 4242): ProfilerStep#N with a dataloader
# range, an aten::mm and a kernel launched from it on GPU 0 stream 7.
# --all: every step FIRST..LAST in one file (the reference for the report).
import gzip, json, os, sys, time
out, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
flags = set(sys.argv[4:])
base = 1700000000000000  # epoch us
ev = []
for n in range(first, last + 1):
    t = base + n * 20000
    dur = 10000 + n * 100
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n,
               "pid": 4242, "tid": 4242, "ts": t, "dur": dur})
    ev.append({"ph": "X", "cat": "user_annotation",
               "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
               "pid": 4242, "tid": 4242, "ts": t + 10, "dur": 2000})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242,
               "ts": t + 2100, "dur": 5000})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242,
               "tid": 4242, "ts": t + 2200, "dur": 20, "args": {"correlation": n}})
    ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
               "ts": t + 2300, "dur": 3000,
               "args": {"device": 0, "stream": 7, "correlation": n}})
doc = {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1},
       "traceEvents": ev, "traceName": out}
text = json.dumps(doc, indent=1).encode()
if "--gz" in flags:
    text = gzip.compress(text)
if "--tmp" in flags:  # the atomic-write pattern: a hidden temporary, then rename
    tmp = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".tmp")
    with open(tmp, "wb") as f:
        f.write(text)
    os.rename(tmp, out)
elif "--slow" in flags:  # half of it, a long pause (the file stays open), the rest
    with open(out, "wb") as f:
        half = len(text) // 2
        f.write(text[:half])
        f.flush()
        open(out + ".half", "w").close()  # tells the test the pause began
        while not os.path.exists(out + ".go"):
            time.sleep(0.05)
        f.write(text[half:])
else:
    with open(out, "wb") as f:
        f.write(text)
EOF
gen() { python3 "$TMP/gen.py" "$@"; }

# wait_for SESSION REGEX [SECS]: polls the pane until REGEX shows
wait_for() {
	local s=$1 re=$2 n=$((${3:-10} * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t "$s" 2>/dev/null | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	return 1
}
pane() { TM capture-pane -p -t "$1"; }
expect() { # expect DESC SESSION REGEX [SECS]
	if wait_for "$2" "$3" "${4:-15}"; then ok "$1"; else not_ok "$1" "$(pane "$2" | head -n 12)"; fi
}

# before the start: one complete file, a broken one (old: reported at once),
# and files to ignore
gen "$D/w0.4242.1.pt.trace.json" 1 3
printf '{"traceEvents":[{"ph":"X","name":"x",' >"$D/broken.pt.trace.json"
touch -d '1 hour ago' "$D/broken.pt.trace.json" "$D/w0.4242.1.pt.trace.json"
echo "not a trace" >"$D/notes.txt"
printf '{"traceEvents":[' >"$D/.hidden.json"

# off a terminal: an error that says what to run instead
out=$("$PROFTOP" view "$D" </dev/null 2>&1)
rc=$?
if [ $rc -ne 0 ] && printf '%s' "$out" | grep -q "proftop report"; then ok "off a tty, view DIR fails and suggests proftop report"
else not_ok "off a tty, view DIR fails and suggests proftop report" "rc $rc: $out"; fi
check_fails "view of a missing folder fails" 1 "$PROFTOP" view "$TMP/nope/"
check_out "help view documents DIR" "view \[OPTIONS\] DIR" "$PROFTOP" help view

TM new-session -d -s v -x 200 -y 50 -c "$TMP" \
	"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view -d 0.2 $D; echo EXIT=\$?; sleep 60"
expect "the file already there is read" v "traces: 1 file, watching.*\| 3 steps"
expect "a broken file is named in the session line" v "1 broken \(broken\.pt\.trace\.json\)"

gen "$D/w0.4242.2.pt.trace.json" 4 6 --tmp
expect "a file renamed in is read" v "traces: 2 files, watching.*\| 6 steps"

gen "$D/w0.4242.3.pt.trace.json" 7 9 --slow &
slow=$!
for _ in $(seq 100); do [ -e "$D/w0.4242.3.pt.trace.json.half" ] && break; sleep 0.1; done
# (waiting, or being tried: the read fails and is retried later)
HALF="traces: 2 files, (watching, 1 waiting|reading w0\.4242\.3\.pt\.trace\.json\.\.\.)"
expect "the half-written file is seen and waited for" v "$HALF"
# the pause outlasts the 1 s settle time: proftop tries the file and must stay quiet
sleep 2.5
p=$(pane v)
if printf '%s\n' "$p" | grep -Eq "$HALF.*\| 6 steps" &&
	! printf '%s\n' "$p" | grep -q "2 broken"; then
	ok "no error and no partial steps while the file is half-written"
else
	not_ok "no error and no partial steps while the file is half-written" "$(printf '%s\n' "$p" | sed -n 2p)"
fi
touch "$D/w0.4242.3.pt.trace.json.go"
wait "$slow"
expect "the slow file is read once complete" v "traces: 3 files, watching.*\| 9 steps"

gen "$D/w0.4242.4.pt.trace.json.gz" 10 12 --gz
expect "a .json.gz file is read" v "traces: 4 files, watching.*\| 12 steps"

# the reference: one file with every step
gen "$TMP/all.json" 1 12
ref=$("$PROFTOP" report "$TMP/all.json" 2>/dev/null | awk '$1 == "ProfileStep" {print $2, $3; exit}')
ref_k=$("$PROFTOP" report "$TMP/all.json" 2>/dev/null | awk '$1 == "Kernel" {print $2; exit}')
got=$(pane v | awk '$2 == "ProfileStep" {t = $4; sub(/ms$/, "", t); print $3, t; exit}')
if [ -n "$ref" ] && [ "$ref" = "$got" ]; then ok "steps and step time equal proftop report of all the events ($ref)"
else not_ok "steps and step time equal proftop report of all the events" "report: $ref" "screen: $got"; fi
TM send-keys -t v 3
expect "kernels from every file are there" v "gemm_kernel +$ref_k "
TM send-keys -t v 1

# a complete file rewritten in place is not read twice
printf ' ' >>"$D/w0.4242.2.pt.trace.json"
expect "a file rewritten after reading is said so, not re-read" v "1 rewritten \(not re-read\).*\| 12 steps"

TM send-keys -t v q
expect "q quits with status 0 and a one-line account" v "read 4 trace files from .*traces \(60 events\)"
expect "the broken file's error is printed at the end" v "skipped broken\.pt\.trace\.json: byte [0-9]+: "
expect "exit status 0" v "EXIT=0"
done_testing
