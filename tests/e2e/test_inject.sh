#!/usr/bin/env bash
# san: skip  (gdb and torch dominate; the attach path runs under ASan in test_live)
# tests/e2e/test_inject.sh - attaching to a Python job that was not started
# under proftop. A plain `python3 tests/torch/steady.py` runs; `proftop -p PID`
# says in one line that --inject would help; `record -p PID --inject` loads the
# probe and the zero-code helper into it (gdb) and records its steps and
# phases; the job finishes with the same loss as alone. Then the refusals, each
# a clear line with the job left as it was: not Python, stopped, stopped while
# gdb attaches, gdb missing, a process that is gone, another user's process.
. tests/e2e/lib.sh

PY=${PT_PYTHON:-/usr/bin/python3}
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -p "$PROFTOP_SESSION_DIR"
chmod 700 "$PROFTOP_SESSION_DIR"
unset PROFTOP_LIB PROFTOP_DISABLE PROFTOP_TORCH
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	skip "inject" "torch is not importable by $PY"
	done_testing
	exit 0
fi
if ! command -v gdb >/dev/null; then
	skip "inject" "no gdb (apt-get install gdb)"
	done_testing
	exit 0
fi
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${user_made:-}" ] && userdel -r "$user_made" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# wait_file F: until F exists (60 s at most)
wait_file() {
	for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.1; done
	return 1
}

# Where gdb cannot write a thread's extended CPU state back after a call
# (gdb 13.1 on Linux 6.18), --inject must refuse before touching the job:
# a Python that sleeps 3 s sleeps on, untouched. On such a machine nothing
# else here can be shown, and that is a skip with its reason.
"$PY" -c 'import os, sys, time
open(sys.argv[1], "w").write("%d\n" % os.getpid())
time.sleep(3)
print("slept ok")' "$TMP/sleeper.pid" >"$TMP/sleeper.out" 2>&1 &
sleeper=$!
pids+=("$sleeper")
wait_file "$TMP/sleeper.pid"
"$PROFTOP" -p "$sleeper" --inject --no-screen >"$TMP/sleeper.inj" 2>&1
src=$?
wait "$sleeper"
if grep -q "gdb cannot give a process back its CPU state" "$TMP/sleeper.inj"; then
	if [ $src -eq 1 ] && [ "$(grep -c . "$TMP/sleeper.inj")" -eq 1 ] &&
		grep -qx "slept ok" "$TMP/sleeper.out" && grep -q "was not touched" "$TMP/sleeper.inj"; then
		ok "gdb cannot restore a process's CPU state here: --inject refuses in one line, exit 1, the job sleeps on untouched"
	else
		not_ok "--inject's refusal where gdb cannot restore CPU state" "rc=$src" "$(cat "$TMP/sleeper.inj")" "job: $(cat "$TMP/sleeper.out")"
	fi
	skip "injecting into running jobs" "$(sed 's/^proftop: --inject: //; s/; pid .*//' "$TMP/sleeper.inj")"
	done_testing
	exit 0
fi

"$PY" tests/torch/steady.py --steps 2500 --sleep-ms 0 >"$TMP/alone.out" 2>&1
alone=$(sed -n 's/^RESULT steps=\([0-9]*\) loss=\([0-9.]*\).*/\1 \2/p' "$TMP/alone.out")

# --- the job, started without proftop
"$PY" tests/torch/steady.py --steps 2500 --sleep-ms 2 --pidfile "$TMP/pid" >"$TMP/job.out" 2>&1 &
job=$!
pids+=("$job")
wait_file "$TMP/pid" || not_ok "the job started" "$(cat "$TMP/job.out")"

check_fails "proftop -p PID (no session): exit 1" 1 "$PROFTOP" -p "$job" --no-screen
out=$("$PROFTOP" -p "$job" --no-screen 2>&1)
case "$out" in
*"not started under proftop"*"--inject"*) ok "it says the job was not started under proftop and --inject can help" ;;
*) not_ok "no session message" "$out" ;;
esac

# what a proftop killed with -9 during an injection left in TMPDIR (a pid
# that is gone), beside one of a live proftop and a symlink of that shape:
# only the first is removed by the next injection
mkdir -p "$TMP/tmpdir/keep"
dead=$(($(cat /proc/sys/kernel/pid_max) - 3))
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
mkdir "$TMP/tmpdir/proftop-inject.$dead.AbC123" "$TMP/tmpdir/proftop-inject.$$.AbC123"
echo x >"$TMP/tmpdir/proftop-inject.$dead.AbC123/args"
echo x >"$TMP/tmpdir/proftop-inject.$dead.AbC123/status"
ln -s "$TMP/tmpdir/keep" "$TMP/tmpdir/proftop-inject.$dead.link"
TMPDIR=$TMP/tmpdir "$PROFTOP" record -p "$job" --inject -o "$TMP/inj.json" --duration 3 >"$TMP/inj.out" 2>&1
rc=$?
left=$(cd "$TMP/tmpdir" && ls -d proftop-inject.* 2>/dev/null | sort | tr '\n' ' ')
want=$(printf '%s\n' "proftop-inject.$$.AbC123" "proftop-inject.$dead.link" | sort | tr '\n' ' ')
if [ "$left" = "$want" ] && [ -d "$TMP/tmpdir/keep" ]; then
	ok "--inject removes what a killed proftop left in TMPDIR, and its own directory"
else
	not_ok "--inject removes what a killed proftop left in TMPDIR" "left: $left"
fi
if [ $rc -eq 0 ] && grep -q 'injected into pid '"$job"' (Python 3\.[0-9]*) with gdb; the job was paused at most [0-9]* ms' "$TMP/inj.out"; then
	ok "record -p PID --inject: $(grep -o 'paused at most [0-9]* ms' "$TMP/inj.out")"
else
	not_ok "record -p PID --inject" "rc=$rc" "$(cat "$TMP/inj.out")"
fi
"$PROFTOP" report "$TMP/inj.json" --json >"$TMP/inj.rep" 2>&1
if "$PY" - "$TMP/inj.rep" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in j["model_summary"]}
assert j["steps"] >= 10, j["steps"]
for p in ("Dataloader", "Forward", "Backward", "Optimization"):
    assert rows[p]["calls"] == j["steps"], (p, rows[p]["calls"], j["steps"])
names = [r["name"] for r in j["operators"]]
assert "0 (Linear)" in names and "SGD.step" in names, names
assert any("one per optimizer step" in n for n in j["notes"]), j["notes"]
PYEOF
then ok "the injected job's steps, all four phases once per step, and its modules"
else not_ok "injected steps and phases" "$(head -c 800 "$TMP/inj.rep")"; fi

# a second attach finds the session without --inject
out=$(timeout -s INT 3 "$PROFTOP" -p "$job" --every 1s 2>&1)
if printf '%s\n' "$out" | grep -Eq '^proftop: t=[0-9.]+s step=[0-9]+ steps=[1-9]'; then
	ok "afterwards -p PID needs no --inject (and --every prints the job's steps)"
else
	not_ok "a second attach" "$(printf '%s\n' "$out" | head -n 5)"
fi

wait "$job"
job_rc=$?
got=$(sed -n 's/^RESULT steps=\([0-9]*\) loss=\([0-9.]*\).*/\1 \2/p' "$TMP/job.out")
gap=$(sed -n 's/.*maxgap_ms=\([0-9.]*\).*/\1/p' "$TMP/job.out")
want_loss=${alone#* }
if [ $job_rc -eq 0 ] && [ "${got#* }" = "$want_loss" ]; then
	ok "the job finished normally with the same loss as alone ($want_loss; its longest gap ${gap} ms)"
else
	not_ok "the job after injection" "rc=$job_rc got '$got' alone '$alone'" "$(tail -n 5 "$TMP/job.out")"
fi

# --- an attach while the job is importing torch (held in the middle of
# torch/__init__ by tests/torch/slow_import.py), on a machine where proftop
# never ran (no session directory yet): the directory is made (0700), the
# helper waits for the import to end, and the steps are found.
nd=$TMP/fresh/sessions
mkdir -p "$TMP/fresh"
chmod 700 "$TMP/fresh"
rm -f "$TMP/held"
PROFTOP_SESSION_DIR=$nd "$PY" tests/torch/slow_import.py --marker "$TMP/held" --hold 3 \
	tests/torch/steady.py --steps 100000 --sleep-ms 2 --sched onecycle --pidfile "$TMP/ipid" >"$TMP/ijob.out" 2>&1 &
ijob=$!
pids+=("$ijob")
wait_file "$TMP/held" || not_ok "the job reached torch's import" "$(cat "$TMP/ijob.out")"
# recorded until the job has trained a while (its import takes what the
# machine gives it): Ctrl-C then, as a user would
PROFTOP_SESSION_DIR=$nd "$PROFTOP" record -p "$ijob" --inject -o "$TMP/iinj.json" >"$TMP/iinj.out" 2>&1 &
rec=$!
wait_file "$TMP/ipid" || not_ok "the held job started training" "$(cat "$TMP/ijob.out")"
sleep 2
kill -INT "$rec"
wait "$rec"
irc=$?
kill "$ijob" 2>/dev/null
wait "$ijob" 2>/dev/null
"$PROFTOP" report "$TMP/iinj.json" --json >"$TMP/iinj.rep" 2>&1
mode=$(stat -c %a "$nd" 2>/dev/null)
isteps=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$TMP/iinj.rep" 2>/dev/null)
if [ $irc -eq 0 ] && [ "$mode" = 700 ] && grep -q "torch is being imported" "$TMP/iinj.out" &&
	[ "${isteps:-0}" -ge 10 ]; then
	ok "attach during torch's import (a OneCycleLR job), no session directory yet: made 0700, $isteps steps after the import"
else
	not_ok "attach during torch's import" "rc=$irc mode=$mode steps=$isteps" "$(cat "$TMP/iinj.out")" \
		"$(tail -n 3 "$TMP/ijob.out")"
fi

# --- an attach that finds no steps says why on the screen and in the report:
# a loop of forward passes alone (no backward, no optimizer step, no fetch)
rm -f "$TMP/mpid"
PROFTOP_ATTACH_NO_STEP_S=3 "$PY" tests/torch/manual_sgd.py --forward-only --pidfile "$TMP/mpid" >"$TMP/mjob.out" 2>&1 &
mjob=$!
pids+=("$mjob")
wait_file "$TMP/mpid" || not_ok "the hand-written loop started" "$(cat "$TMP/mjob.out")"
"$PROFTOP" record -p "$mjob" --inject -o "$TMP/minj.json" --duration 6 >"$TMP/minj.out" 2>&1
kill "$mjob" 2>/dev/null
wait "$mjob" 2>/dev/null
if "$PROFTOP" report "$TMP/minj.json" 2>&1 | grep -q "^Note: no steps 3 s after the attach: the model ran, but no step ended"; then
	ok "an attach that finds no steps says why (forward passes alone)"
else
	not_ok "no steps after an attach: the reason" "$("$PROFTOP" report "$TMP/minj.json" 2>&1 | head -n 6)" "$(cat "$TMP/minj.out")"
fi

# --- a job with an LR scheduler, made with its optimizer before the attach:
# the scheduler replaced optimizer.step on the instance, which the class's
# wrapper never reaches (torch 2.x's global step hooks see it; on 1.x the
# helper wraps the instance's step). Its steps are found and its loss is
# the same as alone, with no warning from the scheduler.
# (StepLR, stepped each 100 steps, and OneCycleLR, stepped every step)
for sc in step onecycle; do
	cls=StepLR
	[ $sc = onecycle ] && cls=OneCycleLR
	"$PY" tests/torch/steady.py --steps 1500 --sleep-ms 0 --sched "$sc" >"$TMP/salone$sc.out" 2>&1
	rm -f "$TMP/spid$sc"
	"$PY" tests/torch/steady.py --steps 1500 --sleep-ms 2 --sched "$sc" --pidfile "$TMP/spid$sc" >"$TMP/sjob$sc.out" 2>&1 &
	sjob=$!
	pids+=("$sjob")
	wait_file "$TMP/spid$sc" || not_ok "the scheduler job started" "$(cat "$TMP/sjob$sc.out")"
	"$PROFTOP" record -p "$sjob" --inject -o "$TMP/sinj$sc.json" --duration 2 >"$TMP/sinj$sc.out" 2>&1
	"$PROFTOP" report "$TMP/sinj$sc.json" --json >"$TMP/sinj$sc.rep" 2>&1
	wait "$sjob"
	sjob_rc=$?
	if "$PY" - "$TMP/sinj$sc.rep" "$cls" <<-'PYEOF'
	import json, sys
	j = json.load(open(sys.argv[1]))
	rows = {r["name"]: r for r in j["model_summary"]}
	assert j["steps"] >= 10, j["steps"]
	assert rows["Optimization"]["calls"] == j["steps"], rows["Optimization"]
	names = [r["name"] for r in j["operators"]]
	assert "SGD.step" in names and sys.argv[2] + ".step" in names, names
	PYEOF
	then
		ok "$cls made before the attach: its optimizer's steps are found ($(grep -o '"steps": [0-9]*' "$TMP/sinj$sc.rep"))"
	else
		not_ok "attach with an LR scheduler" "$(head -c 600 "$TMP/sinj$sc.rep")" "$(cat "$TMP/sinj$sc.out")"
	fi
	want=$(sed -n 's/^RESULT steps=[0-9]* loss=\([0-9.]*\).*/\1/p' "$TMP/salone$sc.out")
	got=$(sed -n 's/^RESULT steps=[0-9]* loss=\([0-9.]*\).*/\1/p' "$TMP/sjob$sc.out")
	if [ $sjob_rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && ! grep -q "overridden" "$TMP/sjob$sc.out"; then
		ok "the $cls job finished with the same loss as alone ($want), no warning"
	else
		not_ok "the scheduler job after injection" "rc=$sjob_rc got '$got' alone '$want'" "$(tail -n 5 "$TMP/sjob$sc.out")"
	fi
done

# --- refusals
sleep 30 &
sl=$!
pids+=("$sl")
out=$("$PROFTOP" record -p "$sl" --inject -o "$TMP/x.json" --duration 1 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "is not a Python process" && kill -0 "$sl" 2>/dev/null; then
	ok "--inject on a process that is not Python: one line, exit 1, the process untouched"
else
	not_ok "--inject on sleep" "rc=$rc" "$out"
fi

"$PY" -c 'import time; time.sleep(60)' &
st=$!
pids+=("$st")
sleep 0.5
kill -STOP "$st"
# the stop takes effect when the job next runs: wait until it has
for _ in $(seq 100); do
	[ "$(awk '{print $3}' "/proc/$st/stat" 2>/dev/null)" = T ] && break
	sleep 0.05
done
out=$("$PROFTOP" -p "$st" --inject --no-screen 2>&1)
rc=$?
state=$(awk '{print $3}' "/proc/$st/stat" 2>/dev/null)
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "is stopped" && [ "$state" = T ]; then
	ok "--inject on a stopped process: says to continue it; left stopped"
else
	not_ok "--inject on a stopped process" "rc=$rc state=$state" "$out"
fi
kill -CONT "$st"

# stopped just as gdb attaches (a kill -STOP racing the injection): gdb's
# calls into the job are undone, it stays stopped, and once continued it
# runs on (it used to crash: gdb left it inside the interrupted call)
wrap=$TMP/gdbwrap
mkdir -p "$wrap"
cat >"$wrap/gdb" <<EOF
#!/bin/sh
for a in "\$@"; do case "\$prev" in -p) kill -STOP "\$a" ;; esac; prev=\$a; done
exec $(command -v gdb) "\$@"
EOF
chmod +x "$wrap/gdb"
"$PY" -c 'import time; time.sleep(60)' &
sj=$!
pids+=("$sj")
sleep 0.5
out=$(PATH="$wrap:$PATH" "$PROFTOP" -p "$sj" --inject --no-screen 2>&1)
rc=$?
state=$(awk '{print $3}' "/proc/$sj/stat" 2>/dev/null)
kill -CONT "$sj"
# until it sleeps again (S), or is dead (Z: it crashed on resuming)
for _ in $(seq 100); do
	after=$(awk '{print $3}' "/proc/$sj/stat" 2>/dev/null)
	[ "$after" = S ] || [ "$after" = Z ] && break
	sleep 0.05
done
sleep 0.2
after=$(awk '{print $3}' "/proc/$sj/stat" 2>/dev/null)
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -Eq "stopped or signaled during the injection|was sent SIGSTOP while gdb held it" &&
	[ "$state" = T ] && [ "$after" = S ]; then
	ok "stopped while gdb attaches: one line, exit 1, the job left stopped and runs on once continued"
else
	not_ok "stopped during the injection" "rc=$rc state=$state after=$after" "$out"
fi
kill "$sj" 2>/dev/null
wait "$sj" 2>/dev/null

# a signal sent to the job while gdb holds it (state t): a scheduler's
# SIGTERM, a kill -STOP. gdb catches it and drops it when it unwinds the
# call it was making; proftop sends it again once gdb has let go, so the
# job ends (TERM) or stops (STOP) as it was told to
for sig in TERM STOP; do
	"$PY" -c 'import time
while True: time.sleep(0.005)' &
	sj=$!
	pids+=("$sj")
	sleep 0.5
	"$PROFTOP" record -p "$sj" --inject -o "$TMP/sig.json" --duration 2 >"$TMP/sig.out" 2>&1 &
	rp=$!
	seen=""
	for _ in $(seq 5000); do
		st_now=$(awk '{print $3}' "/proc/$sj/stat" 2>/dev/null)
		[ "$st_now" = t ] && { seen=1; break; }
		[ -z "$st_now" ] && break
	done
	kill -$sig "$sj"
	wait "$rp"
	rc=$?
	if [ -z "$seen" ]; then
		skip "SIG$sig sent while gdb holds the job" "gdb had let go before the test saw the job held"
	else
		after=""
		for _ in $(seq 100); do # 10 s at most
			after=$(awk '{print $3}' "/proc/$sj/stat" 2>/dev/null)
			[ $sig = TERM ] && { [ -z "$after" ] || [ "$after" = Z ]; } && break
			[ $sig = STOP ] && [ "$after" = T ] && break
			sleep 0.1
		done
		wst=""
		if [ $sig = TERM ]; then
			wait "$sj" 2>/dev/null
			wst=$?
		fi
		if { [ $sig = TERM ] && [ "$wst" = 143 ]; } || { [ $sig = STOP ] && [ "$after" = T ]; }; then
			ok "SIG$sig sent while gdb holds the job reaches it (record exit $rc)"
		else
			not_ok "SIG$sig sent while gdb holds the job reaches it" "state after: ${after:-gone}, wait status ${wst:-}" "$(head -n 3 "$TMP/sig.out")"
		fi
	fi
	kill -CONT "$sj" 2>/dev/null
	kill -9 "$sj" 2>/dev/null
	wait "$sj" 2>/dev/null
done

out=$(env PATH=/nonexistent "$PROFTOP" -p "$st" --inject --no-screen 2>&1)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "gdb is not installed"; then
	ok "without gdb: says to install it"
else
	not_ok "without gdb" "rc=$rc" "$out"
fi
kill "$st"
wait "$st" 2>/dev/null
check_fails "--inject on a pid that is gone: exit 1" 1 "$PROFTOP" -p "$st" --inject --no-screen
out=$("$PROFTOP" -p "$st" --inject --no-screen 2>&1)
printf '%s' "$out" | grep -q "no process $st" && ok "a pid that is gone: 'no process'" || not_ok "gone pid" "$out"

# a job that exits while gdb works on it: a clear line, never a hang
"$PY" -c 'import time; time.sleep(0.25)' &
ex=$!
sleep 0.15
out=$(timeout 60 "$PROFTOP" -p "$ex" --inject --no-screen 2>&1)
rc=$?
wait "$ex" 2>/dev/null
case "$rc:$out" in
1:*"exited"* | 1:*"no process"* | 1:*"gdb could not attach"* | 1:*"not a Python process"*) ok "a job that exits during the injection: exit 1 with a reason" ;;
0:*) ok "a job that exits during the injection: injected before it exited" ;;
*) not_ok "a job exiting during injection" "rc=$rc" "$out" ;;
esac

# another user's process (as root: a user made for the test)
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v runuser >/dev/null; then
	user_made=ptinj$$
	if useradd -M -s /bin/sh "$user_made" 2>/dev/null; then
		"$PY" -c 'import time; time.sleep(30)' &
		mine=$!
		pids+=("$mine")
		sleep 0.3
		chmod 755 "$TMP"
		out=$(runuser -u "$user_made" -- env PROFTOP_SESSION_DIR="$TMP/other" "$PROFTOP" -p "$mine" --inject --no-screen 2>&1)
		rc=$?
		if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "belongs to"; then
			ok "another user's process: refused in one line"
		else
			not_ok "another user's process" "rc=$rc" "$out"
		fi
		kill "$mine"
	else
		skip "another user's process" "useradd failed"
		user_made=
	fi
else
	skip "another user's process" "needs root, useradd and runuser"
fi
done_testing
