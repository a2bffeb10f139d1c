#!/usr/bin/env bash
# tests/e2e/test_harm.sh - promise 1 of docs/reliability.md: the training job is never
# harmed by proftop.
#  a. proftop killed -9 at a random moment of `proftop run -- minitrain`
#     (20 rounds, some while the session is still being attached): the
#     trainer finishes every time with the same steps and loss as alone. The
#     step times are printed (a TAP comment), never asserted: speed is for
#     bench/bench_harm.sh.
#  b. proftop stopped (SIGSTOP) for 10 s under `proftop record`: the trainer
#     keeps stepping (coarse: at least half its pace before the stop); after
#     SIGCONT the lost events are counted in the export's otherData and in
#     the report's warnings. On the screen (tmux): the header says
#     "| N dropped" after a shorter stop.
#  c. tests/progs/harm_* under the probe (LD_PRELOAD and `proftop record`),
#     each under `timeout 30`: a process that forks (children keep calling
#     the API and exit through _exit and exit, grandchildren exec, the forks
#     land while another thread is interning names), one with 200 threads at
#     once (more than the 32 rings: counted as dropped_no_ring), one that
#     calls exit() from signal handlers while threads push ranges, and one
#     whose signal handler names ranges while the interrupted thread is
#     itself interning a name (a lock there deadlocks).
# san: skip
# (heavy: about a minute of trainer runs; the probe is never sanitized, and
#  the ASan proftop is covered by test_faults.sh)
. tests/e2e/lib.sh

case "$PROFTOP" in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac
B=$(dirname "$PROFTOP")
LIB=$B/libproftop.so
MINI=$B/examples/minitrain
PROGS=$B/tests/progs
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
export PROFTOP_LIB=$LIB
DUMP="python3 tests/e2e/probe_dump.py"
if [ ! -f "$LIB" ] || [ ! -x "$MINI" ] || [ ! -x "$PROGS/harm_fork" ]; then
	skip "harm tests" "no libproftop.so, minitrain or tests/progs (make tests)"
	done_testing
	exit 0
fi

done_line() { sed -n 's/.*done steps=\([0-9]*\) loss=\([0-9.e+-]*\).*/\1 \2/p' "$1" | tail -n 1; }
step_ms_of() { sed -n 's/.*done steps=.* step_ms=\([0-9.]*\).*/\1/p' "$1" | tail -n 1; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# alive PID: running and not a zombie (no fork: this polls while the trainer runs)
alive() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
# tagged TAG: the pids whose environment holds PT_HARM_TAG=TAG (one grep)
tagged() {
	grep -lzx -- "PT_HARM_TAG=$1" /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$"
}
# wait_gone PID SECS: 0 once PID has exited
wait_gone() {
	for _ in $(seq $(($2 * 10))); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}
# last_step LOG: the highest "step N" line of minitrain --log-every
last_step() { sed -n 's/^step \([0-9]*\) .*/\1/p' "$1" | tail -n 1; }
now_ms() { date +%s%3N; }

# ---------------------------------------------------------------- a. kill -9
args="--steps 200 --reader-ms 2 --log-every 0"
alone_ms=()
run_alone() {
	# shellcheck disable=SC2086
	"$MINI" $args >"$TMP/alone.out" 2>/dev/null
	alone_ms+=("$(step_ms_of "$TMP/alone.out")")
}
run_alone
want=$(done_line "$TMP/alone.out")
killed_ms=()
bad=() notstarted=0 rounds=20
for r in $(seq $rounds); do
	case $r in
	1) d=0 ;; 2) d=3 ;; 3) d=10 ;; 4) d=25 ;; 5) d=60 ;;
	*) d=$((RANDOM % 1100)) ;;
	esac
	tag="$$-$r"
	log="$TMP/k$r.log"
	# shellcheck disable=SC2086
	PT_HARM_TAG=$tag "$PROFTOP" run --no-screen --log "$log" -- "$MINI" $args >/dev/null 2>&1 &
	ppid_=$!
	sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
	kill -9 $ppid_ 2>/dev/null
	wait $ppid_ 2>/dev/null
	pids=$(tagged "$tag")
	if [ -z "$pids" ] && [ ! -e "$log" ]; then
		notstarted=$((notstarted + 1)) # killed before it forked: no trainer to harm
		continue
	fi
	for p in $pids; do
		wait_gone "$p" 60 || { bad+=("round $r (kill at ${d} ms): trainer $p still running after 60 s"); kill -9 "$p"; }
	done
	got=$(done_line "$log")
	if [ "$got" = "$want" ]; then
		killed_ms+=("$(step_ms_of "$log")")
	else
		bad+=("round $r (kill at ${d} ms): want '$want' got '$got': $(tail -n 2 "$log" | tr '\n' ' ')")
	fi
	[ $((r % 5)) -eq 0 ] && run_alone
done
n_ok=${#killed_ms[@]}
if [ ${#bad[@]} -eq 0 ] && [ -n "$want" ] && [ "$n_ok" -ge $((rounds / 2)) ]; then
	ok "proftop killed -9 in $rounds rounds: the trainer finished $n_ok times with '$want' ($notstarted killed before the trainer started)"
else
	not_ok "proftop killed -9: the trainer always finishes with the same result" \
		"want '$want', $n_ok good, $notstarted not started" "${bad[@]}"
fi
ma=$(printf '%s\n' "${alone_ms[@]}" | median)
mk=$(printf '%s\n' "${killed_ms[@]}" | median)
echo "# step_ms alone (median of ${#alone_ms[@]}): $ma; with proftop killed -9 mid-run (median of $n_ok): $mk;" \
	"ratio $(awk -v a="$ma" -v k="$mk" 'BEGIN { if (a > 0) printf "%.3f", k / a; else print "nan" }')"
echo "# step_ms per killed round: ${killed_ms[*]} (kill rounds done at ${SECONDS} s)"

# ---------------------------------------------------------------- b. SIGSTOP
# Small rings, so ten seconds of steps overflow them for sure.
mlog="$TMP/stop.log"
PROFTOP_RING_SLOTS=1024 "$PROFTOP" record -o "$TMP/stop.json" --log "$mlog" -- \
	"$MINI" --steps 0 --reader-ms 2 --log-every 10 >"$TMP/stop.out" 2>&1 &
rpid=$!
tpid=""
for _ in $(seq 200); do
	[ -n "$(last_step "$mlog" 2>/dev/null)" ] && [ "$(last_step "$mlog")" -ge 50 ] && break
	sleep 0.1
done
for f in "$PROFTOP_SESSION_DIR"/*.session; do
	p=$(basename "$f" .session)
	grep -q minitrain "/proc/$p/cmdline" 2>/dev/null && tpid=$p
done
s0=$(last_step "$mlog")
t0=$(now_ms)
sleep 2
s1=$(last_step "$mlog")
t1=$(now_ms)
kill -STOP $rpid
sleep 10
s2=$(last_step "$mlog")
t2=$(now_ms)
stopped_state=$(sed 's/^[0-9]* (.*) \(.\) .*/\1/' "/proc/$rpid/stat" 2>/dev/null)
kill -CONT $rpid
sleep 1
[ -n "$tpid" ] && kill -INT "$tpid"
wait $rpid
rrc=$?
if [ -z "$tpid" ] || [ -z "$s0" ] || [ -z "$s2" ]; then
	not_ok "the trainer keeps stepping while proftop is stopped" "no trainer/steps: tpid=$tpid s0=$s0 s2=$s2" "$(tail -n 3 "$mlog")"
else
	before=$(awk -v a="$s0" -v b="$s1" -v ta="$t0" -v tb="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 / (tb - ta) }')
	during=$(awk -v a="$s1" -v b="$s2" -v ta="$t1" -v tb="$t2" 'BEGIN { printf "%.1f", (b - a) * 1000 / (tb - ta) }')
	echo "# steps/s before the stop: $before, while proftop was stopped ($stopped_state): $during (at ${SECONDS} s)"
	if [ "$stopped_state" = T ] && awk -v b="$before" -v d="$during" 'BEGIN { exit !(b > 0 && d >= b / 2) }'; then
		ok "the trainer keeps stepping while proftop is stopped for 10 s ($before -> $during steps/s)"
	else
		not_ok "the trainer keeps stepping while proftop is stopped for 10 s" "state '$stopped_state', $before -> $during steps/s"
	fi
fi
if [ $rrc -eq 0 ] && python3 - "$TMP/stop.json" <<'PY'; then ok "after SIGCONT the export counts the lost events (otherData.events_dropped)"; else not_ok "after SIGCONT the export counts the lost events" "record exit $rrc: $(tail -n 3 "$TMP/stop.out")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
n = d["otherData"]["events_dropped"]
assert n > 0, d["otherData"]
print("# events_dropped", n)
PY
check_out "the report warns about the events lost by the source, by cause" \
	'^Note: the source lost [1-9][0-9]* events .* before proftop read them: [1-9][0-9]* (dropped|overwritten)' \
	"$PROFTOP" report "$TMP/stop.json"

# The screen: a shorter stop, then the header's drop count.
if command -v tmux >/dev/null; then
	SOCK="pt-harm-$$"
	trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
	tlog="$TMP/tui.log"
	tmux -L "$SOCK" new-session -d -s h -x 160 -y 40 -c "$TMP" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 PROFTOP_RING_SLOTS=256 PT_HARM_TAG=tui$$ $PROFTOP run -d 0.3 --log $tlog -- $MINI --steps 0 --reader-ms 2 --log-every 10; echo EXIT=\$?; sleep 60"
	pane() { tmux -L "$SOCK" capture-pane -p -t h 2>/dev/null; }
	for _ in $(seq 200); do pane | grep -Eq "[1-9][0-9]* steps" && break; sleep 0.1; done
	tp=$(tagged "tui$$")
	ppid_="" mp=""
	for p in $tp; do
		if [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$MINI" ]; then mp=$p; else ppid_=$p; fi
	done
	if [ -n "$ppid_" ] && [ -n "$mp" ]; then
		kill -STOP "$ppid_"
		sleep 4
		kill -CONT "$ppid_"
		seen=""
		for _ in $(seq 100); do pane | grep -Eq '\| [1-9][0-9]* dropped' && { seen=1; break; }; sleep 0.1; done
		if [ -n "$seen" ]; then ok "the screen's header shows the dropped events after SIGCONT"
		else not_ok "the screen's header shows the dropped events after SIGCONT" "$(pane | head -n 5)"; fi
		kill -INT "$mp"
		tmux -L "$SOCK" send-keys -t h q
		for _ in $(seq 100); do pane | grep -q "EXIT=" && break; sleep 0.1; done
	else
		not_ok "the screen's header shows the dropped events after SIGCONT" "no proftop/trainer pids ($tp)" "$(pane | head -n 5)"
	fi
	for p in $tp; do kill -9 "$p" 2>/dev/null; done
	tmux -L "$SOCK" kill-server 2>/dev/null
else
	skip "the screen's header shows the dropped events after SIGCONT" "no tmux"
fi

# ---------------------------------------------------------------- c. hostile programs
echo "# hostile programs from ${SECONDS} s"
S=$PROFTOP_SESSION_DIR
# session_of CMDLINE_REGEX: the session file whose header cmdline matches
session_of() {
	local f
	for f in "$S"/*.session; do
		$DUMP "$f" 2>/dev/null | head -n 1 | grep -Eq "cmdline=$1\$" && { echo "$f"; return; }
	done
}
# recorded NAME CMD...: `proftop record` of CMD under timeout 30; checks the
# exit status is EXPECT (default 0) and the trace parses with `proftop report`.
recorded() {
	local name=$1 expect=$2
	shift 2
	timeout 30 "$PROFTOP" record -o "$TMP/$name.json" --log "$TMP/$name.log" -- "$@" >"$TMP/$name.out" 2>&1
	local rc=$?
	if [ $rc -eq "$expect" ] && "$PROFTOP" report "$TMP/$name.json" >"$TMP/$name.rep" 2>&1; then
		ok "proftop record of $name: exit $rc, the trace parses"
	else
		not_ok "proftop record of $name: exit $expect and a trace that parses" "exit $rc" \
			"$(tail -n 3 "$TMP/$name.out" "$TMP/$name.log" "$TMP/$name.rep" 2>/dev/null)"
	fi
}

rm -f "$S"/*.session
out=$(LD_PRELOAD=$LIB timeout 30 "$PROGS/harm_fork" 60 2>&1)
rc=$?
f=$(session_of "[^ ]*harm_fork 60")
parent=$([ -n "$f" ] && $DUMP "$f" 2>/dev/null)
if [ $rc -eq 0 ] && echo "$out" | grep -q "done forks=60 bad=0"; then ok "fork: 60 children (_exit, exit, exec'ing grandchildren) all exit 7, no deadlock"
else not_ok "fork: 60 children all exit 7, no deadlock" "exit $rc (124 = timeout)" "$(echo "$out" | tail -n 3)"; fi
np=$(printf '%s\n' "$parent" | grep -c 'name=parent_fork ')
nc=$(printf '%s\n' "$parent" | grep -c 'name=child')
if [ "$np" = 60 ] && [ "$nc" = 0 ]; then ok "fork: the parent's rings hold its 60 ranges and nothing from the children"
else not_ok "fork: the parent's rings hold its 60 ranges and nothing from the children" "parent_fork=$np child=$nc file=$f"; fi
leaves=0
for g in "$S"/*.session; do
	$DUMP "$g" 2>/dev/null | grep -q 'name=leaf_range_19 ' && leaves=$((leaves + 1))
done
if [ $leaves -ge 1 ]; then ok "fork: an exec'd grandchild gets a session of its own ($leaves)"
else not_ok "fork: an exec'd grandchild gets a session of its own"; fi
# /bin/true grandchildren inherit LD_PRELOAD: their empty sessions (17 MB of
# tmpfs each) must not outlive them
empty=0
for g in "$S"/*.session; do
	$DUMP "$g" 2>/dev/null | head -n 1 | grep -q 'cmdline=true$' && empty=$((empty + 1))
done
if [ $empty -eq 0 ]; then ok "fork: exec'd programs that never emitted an event leave no session behind"
else not_ok "fork: exec'd programs that never emitted an event leave no session behind" "$empty left: $(ls "$S")"; fi
recorded harm_fork 0 "$PROGS/harm_fork" 30

rm -f "$S"/*.session
out=$(LD_PRELOAD=$LIB timeout 30 "$PROGS/harm_threads" 200 2 2>&1)
rc=$?
f=$(session_of "[^ ]*harm_threads 200 2")
hdr=$([ -n "$f" ] && $DUMP "$f" 2>/dev/null | head -n 1)
nr=$(echo "$hdr" | sed -n 's/.*dropped_no_ring=\([0-9]*\).*/\1/p')
if [ $rc -eq 0 ] && echo "$out" | grep -q "done threads=200"; then ok "200 threads (2 waves, all alive at once) push ranges and exit: no crash, no deadlock"
else not_ok "200 threads push ranges and exit: no crash, no deadlock" "exit $rc (124 = timeout)" "$(echo "$out" | tail -n 3)"; fi
if [ -n "$nr" ] && [ "$nr" -gt 0 ]; then ok "threads beyond the 32 rings are counted as dropped_no_ring ($nr)"
else not_ok "threads beyond the 32 rings are counted as dropped_no_ring" "header: $hdr"; fi
recorded harm_threads 0 "$PROGS/harm_threads" 200 2
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["otherData"]["events_dropped"] > 0' "$TMP/harm_threads.json" 2>/dev/null; then
	ok "proftop record: the threads without a ring show up in events_dropped"
else
	not_ok "proftop record: the threads without a ring show up in events_dropped" "$(head -c 300 "$TMP/harm_threads.json" 2>/dev/null | tail -c 200)"
fi

# exit() from a signal handler while threads push: SIGTERM -> exit(3), SIGUSR1 -> range + exit(4)
sig_run() { # sig_run SIGNAL WANT [record]
	local sig=$1 want=$2 how=${3:-preload}
	local log="$TMP/sig-$sig-$how.log" pid rc
	if [ "$how" = record ]; then
		timeout 30 "$PROFTOP" record -o "$TMP/sig-$sig.json" --log "$log" -- "$PROGS/harm_sig" exit 4 >/dev/null 2>&1 &
	else
		LD_PRELOAD=$LIB timeout 30 "$PROGS/harm_sig" exit 4 >"$log" 2>&1 &
	fi
	pid=$!
	for _ in $(seq 200); do grep -q ready "$log" 2>/dev/null && break; sleep 0.05; done
	sleep 0.2
	local target
	target=$(for f in "$S"/*.session; do p=$(basename "$f" .session); [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$PROGS/harm_sig" ] && alive "$p" && echo "$p"; done | head -n 1)
	[ -n "$target" ] && kill "-$sig" "$target"
	wait $pid
	rc=$?
	if [ "$how" = record ] && [ $rc -eq "$want" ] && ! "$PROFTOP" report "$TMP/sig-$sig.json" >/dev/null 2>&1; then rc="$rc, trace does not parse"; fi
	if [ "$rc" = "$want" ]; then ok "exit() from a $sig handler while 5 threads push ranges ($how): exit $want"
	else not_ok "exit() from a $sig handler while 5 threads push ranges ($how): exit $want" "got $rc (124 = timeout), target '$target'" "$(tail -n 3 "$log")"; fi
}
rm -f "$S"/*.session
sig_run TERM 3
sig_run USR1 4
sig_run TERM 3 record
sig_run USR1 4 record

out=$(LD_PRELOAD=$LIB timeout 30 "$PROGS/harm_sig" reenter 2 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "reenter done"; then ok "a signal handler names ranges while its thread is interning names: no deadlock"
else not_ok "a signal handler names ranges while its thread is interning names: no deadlock" "exit $rc (124 = timeout)" "$(echo "$out" | tail -n 2)"; fi
recorded harm_sig_reenter 0 "$PROGS/harm_sig" reenter 1

done_testing
