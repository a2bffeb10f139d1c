#!/usr/bin/env bash
# tests/e2e/test_live.sh - live sessions end to end: `proftop record -- CMD`
# on the minitrain example (20 steps, the phases, per-layer operators in the
# exported trace), exit-code pass-through, `proftop ls` on a running trainer,
# a trainer killed with -9 (reported exited, still exported), attach errors.
# Needs build/libproftop.so and build/examples/minitrain (skipped without).
. tests/e2e/lib.sh

BUILD=${BUILD:-build}
case "$PROFTOP" in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac # the test cds into $TMP
LIB=$PWD/build/libproftop.so
MINI=$PWD/build/examples/minitrain
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
export PROFTOP_LIB=$LIB

# --- needs no probe
check_out "run --help" "--no-screen" "$PROFTOP" run --help
check_out "record --help" "--duration" "$PROFTOP" record --help
check_out "ls --help" "stale|removed" "$PROFTOP" ls --help
check_fails "record without -o exits 2" 2 "$PROFTOP" record -- true
check_fails "run without CMD exits 2" 2 "$PROFTOP" run
check_out "ls with no sessions" "no proftop sessions" "$PROFTOP" ls
out=$("$PROFTOP" 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
	ok "no argument and no session: one line, exit 1"
else
	not_ok "no argument and no session: one line, exit 1" "rc=$rc out=$out"
fi
check_fails "-p of a pid with no session exits 1" 1 "$PROFTOP" -p 999999

if [ ! -f "$LIB" ] || [ ! -x "$MINI" ]; then
	skip "record minitrain" "no libproftop.so or minitrain"
	skip "ls lists a running trainer" "no libproftop.so or minitrain"
	skip "killed -9 is exited and exportable" "no libproftop.so or minitrain"
	done_testing
	exit 0
fi

# --- record -- CMD
cd "$TMP" || exit 1
"$PROFTOP" record -o "$TMP/x.json" -- "$MINI" --steps 20 --reader-ms 10 >"$TMP/rec.out" 2>&1
rc=$?
cd - >/dev/null || exit 1
if [ $rc -eq 0 ] && [ -s "$TMP/x.json" ]; then ok "record minitrain exits 0 and writes a trace"; else not_ok "record minitrain exits 0 and writes a trace" "rc=$rc $(tail -n 3 "$TMP/rec.out")"; fi
check_out "log file named on stderr" "proftop-run-[0-9]+\.log" cat "$TMP/rec.out"
# the job's session, read whole, does not stay behind in the session directory
left=$(ls "$PROFTOP_SESSION_DIR" 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok "record removes its job's session once read" ||
	not_ok "record removes its job's session once read" "left: $left"
"$PROFTOP" report "$TMP/x.json" >"$TMP/x.txt" 2>&1
check_out "report shows 20 steps" "20 steps" cat "$TMP/x.txt"
check_out "report shows the phases" "Dataloader .*20 " cat "$TMP/x.txt"
check_out "report shows Backward" "Backward .*20 " cat "$TMP/x.txt"
check_out "report shows per-layer operators" "linear2 " cat "$TMP/x.txt"
check_out "report shows CPU(Process)" "CPU\(Process\)" cat "$TMP/x.txt"

# --- exit codes pass through (128 + signal too)
cd "$TMP" || exit 1
check_fails "exit code passes through record" 3 "$PROFTOP" record -o "$TMP/e.json" -- sh -c 'exit 3'
check_fails "signal passes through as 128+N" 143 "$PROFTOP" run --no-screen -- sh -c 'kill -TERM $$'
check_fails "a missing CMD exits 127" 127 "$PROFTOP" run --no-screen -- "$TMP/no-such-cmd"
check_out "run --no-screen prints the final summary" "Model Summary" \
	"$PROFTOP" run --no-screen -- "$MINI" --steps 5
cd - >/dev/null || exit 1

# --- a running trainer: ls lists it; attach with record -p; kill -9
LD_PRELOAD=$LIB "$MINI" --reader-ms 5 >/dev/null 2>&1 &
mpid=$!
for _ in $(seq 50); do
	[ -f "$PROFTOP_SESSION_DIR/$mpid.session" ] && break
	sleep 0.1
done
sleep 0.3
check_out "ls lists a running minitrain" "^$mpid +running .*minitrain" "$PROFTOP" ls
"$PROFTOP" record -p $mpid -o "$TMP/k.json" >"$TMP/k.out" 2>&1 &
rpid=$!
sleep 1
kill -9 $mpid
wait $mpid 2>/dev/null
for _ in $(seq 50); do
	kill -0 $rpid 2>/dev/null || break
	sleep 0.1
done
if kill -0 $rpid 2>/dev/null; then
	kill -INT $rpid
	not_ok "attached record ends when the trainer is killed -9"
else
	ok "attached record ends when the trainer is killed -9"
fi
wait $rpid
rc=$?
check_out "it says the process exited" "process $mpid exited" cat "$TMP/k.out"
if [ $rc -eq 0 ] && "$PROFTOP" report "$TMP/k.json" 2>&1 | grep -Eq "[1-9][0-9]* steps"; then
	ok "the killed trainer's trace is exported with steps"
else
	not_ok "the killed trainer's trace is exported with steps" "rc=$rc $(cat "$TMP/k.out")"
fi
check_out "ls shows it exited" "^$mpid +exited" "$PROFTOP" ls
check_out "record -p of the exited session still exports" "wrote" \
	"$PROFTOP" record -p $mpid -o "$TMP/k2.json"

# --- --duration with a CMD: the trace is written early, the exit code still passes
cd "$TMP" || exit 1
out=$("$PROFTOP" record --duration 0.5 -o "$TMP/d.json" -- sh -c "LD_PRELOAD= sleep 1.5; exit 4" 2>&1)
rc=$?
cd - >/dev/null || exit 1
if [ $rc -eq 4 ] && [ -s "$TMP/d.json" ] && printf '%s' "$out" | grep -q "waiting for pid"; then
	ok "--duration stops recording, then waits for CMD's exit code"
else
	not_ok "--duration stops recording, then waits for CMD's exit code" "rc=$rc $out"
fi

done_testing
