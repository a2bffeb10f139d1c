#!/usr/bin/env bash
# test_lossless.sh - the promise "nothing is lost silently":
#  1. every dropped event is counted: source drops of a flooded live session
#     add up exactly with what was kept; the report header, report --json,
#     the export's otherData and the TUI's session line all say so; memory-cap
#     drops survive export -> report round trips;
#  2. an export or `record -o` killed with SIGKILL at random moments leaves
#     the old file byte for byte or the complete new one, and no temporaries
#     once the next export ran;
#  3. a full disk (a 512 KiB tmpfs; root only) gives a one-line error naming
#     the path and ENOSPC, leaves no partial or temporary file, `record -o`
#     rescues the recording to $TMPDIR, and the TUI's snapshot key shows the
#     error and keeps the session (a snapshot after more room works);
#  4. exports are created 0600 whatever the umask.
# No timed assertions: kill moments are random within a measured run time.
. tests/e2e/lib.sh
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
ROOT=$(pwd)
FLOOD=$ROOT/build/examples/flood
MINITRAIN=$ROOT/build/examples/minitrain
LIB=${PROFTOP_LIB:-$(dirname "$BIN")/libproftop.so}
[ -f "$LIB" ] || { FLOOD=/nonexistent; MINITRAIN=/nonexistent; } # live parts need the probe
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
FULL=$TMP/full
SOCK="pt-lossless-$$"
TM() { tmux -L "$SOCK" "$@"; }
cleanup() {
	TM kill-server 2>/dev/null
	mountpoint -q "$FULL" 2>/dev/null && umount -l "$FULL"
	rm -rf "$TMP"
}
trap cleanup EXIT
ROUNDS=15 N_BIG=500000
case $PROFTOP in *build-san*) ROUNDS=6 N_BIG=200000 ;; esac # ASan: slower, fewer

jget() { # jget FILE PYEXPR: evaluates PYEXPR on the JSON object d of FILE
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
have_py=0
command -v python3 >/dev/null && have_py=1
# is_complete FILE: a whole JSON document that proftop reads back
is_complete() {
	[ -s "$1" ] && [ "$(tail -c 2 "$1" | od -An -c | tr -d ' ')" = '}\n' ] || return 1
	if [ $have_py = 1 ]; then python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" 2>/dev/null || return 1; fi
	"$BIN" report "$1" >/dev/null 2>&1
}
tmps() { ls -A "$1" | grep -c '\.tmp\.' ; }

# ---------------------------------------------------------------- 1. drop counts
if [ ! -x "$FLOOD" ] || [ $have_py = 0 ]; then
	skip "drop counts of a flooded session" "needs build/examples/flood, libproftop.so and python3"
else
	log=$TMP/flood.log
	# One thread, no steps (so produced = ranges), 100 k ranges a second for
	# 4 s into a ring of 64 K records. The reader is stopped for 3 s of it
	# (SIGSTOP): the ring overflows whatever the machine's speed (a ring full
	# while the reader is attached drops, one left past the reader's timeout
	# overwrites), and what it keeps is more than --max-mem 1M holds (part 1b).
	PROFTOP_RING_SLOTS=65536 "$BIN" record -o "$TMP/fl.json" --log "$log" -- "$FLOOD" \
		--rate 100000 --seconds 4 --step-every 0 >/dev/null 2>"$TMP/rec.err" &
	rpid=$!
	sleep 0.5
	kill -STOP $rpid
	sleep 3
	kill -CONT $rpid
	wait $rpid
	rc=$?
	if [ $rc -eq 0 ] && is_complete "$TMP/fl.json"; then ok "record of a flood writes a complete trace"
	else not_ok "record of a flood writes a complete trace" "rc=$rc" "$(cat "$TMP/rec.err")"; fi
	produced=$(sed -n 's/.*done events=\([0-9]*\).*/\1/p' "$log")
	# one record a line in an export; otherData is on the first line
	head -n 1 "$TMP/fl.json" | sed 's/"traceEvents":\[$/"traceEvents":[]}/' >"$TMP/fl.head.json"
	kept_probe=$(grep -c '^{"ph":"X"' "$TMP/fl.json")
	# the source's causes (rings full; overwritten while detached; missed) summed
	src_sum="sum(d['otherData']['warnings'].get(k,0) for k in ('dropped_by_source','overwritten_while_detached','missed_by_reader'))"
	read -r by_src total <<<"$(jget "$TMP/fl.head.json" "$src_sum, d['otherData']['events_dropped']")"
	if [ "$by_src" -gt 0 ]; then ok "the flood overran the rings: $by_src dropped by the source"
	else not_ok "the flood overran the rings" "no source drops: $(head -c 300 "$TMP/fl.json")"; fi
	if [ $((kept_probe + by_src)) -eq "$produced" ]; then
		ok "kept + dropped = produced exactly ($kept_probe + $by_src = $produced)"
	else not_ok "kept + dropped = produced" "$kept_probe + $by_src != $produced"; fi
	[ "$total" = "$by_src" ] && ok "otherData.events_dropped sums the kinds" ||
		not_ok "otherData.events_dropped sums the kinds" "$total vs $by_src"
	check_out "record says how many were dropped and where" \
		"wrote .*fl.json \([0-9]+ events; $by_src dropped: $by_src by the source, 0 by the memory cap\)" \
		cat "$TMP/rec.err"
	check_out "report header: dropped, by the source" \
		"^Events: [0-9]+ kept of [0-9]+ seen, $by_src dropped \($by_src by the source, 0 by the memory cap\)" \
		"$BIN" report "$TMP/fl.json"
	check_out "report notes the share the source lost" \
		"^Note: the source lost $by_src events \([0-9.]+% of [0-9]+\) before proftop read them" \
		"$BIN" report "$TMP/fl.json"
	"$BIN" report --json "$TMP/fl.json" >"$TMP/fl.rep.json"
	check_out "report --json: dropped.by_source and events_dropped" "^$by_src 0 $by_src\$" \
		jget "$TMP/fl.rep.json" "d['dropped']['by_source'], d['dropped']['by_memory_cap'], d['events_dropped']"
	# the flooded file re-exported under a memory cap: both kinds, summed
	"$BIN" export "$TMP/fl.json" --max-mem 1M -o "$TMP/fl2.json" 2>/dev/null
	read -r k2 s2 c2 t2 <<<"$(jget "$TMP/fl2.json" "sum(1 for e in d['traceEvents'] if e.get('ph') in ('X','C','i')), $src_sum, d['otherData']['warnings'].get('dropped_by_memory_cap',0), d['otherData']['events_dropped']")"
	k1=$(grep -c '^{"ph":"[XCi]"' "$TMP/fl.json")
	if [ "$s2" = "$by_src" ] && [ "$c2" -gt 0 ] && [ "$t2" -eq $((s2 + c2)) ] && [ $((k2 + c2)) -eq "$k1" ]; then
		ok "re-export under --max-mem: source drops carried, cap drops added ($s2 + $c2 = $t2; $k2 kept)"
	else not_ok "re-export under --max-mem: both kinds summed" "k1=$k1 k2=$k2 s2=$s2 c2=$c2 t2=$t2"; fi
	check_out "report of the re-export names both kinds" \
		"^Events: $k2 kept of $k2 seen, $t2 dropped \($s2 by the source, $c2 by the memory cap\)" \
		"$BIN" report "$TMP/fl2.json"
	"$BIN" report --json "$TMP/fl2.json" >"$TMP/fl2.rep.json"
	check_out "report --json of the re-export" "^$s2 $c2 $t2\$" \
		jget "$TMP/fl2.rep.json" "d['dropped']['by_source'], d['dropped']['by_memory_cap'], d['events_dropped']"
	if command -v tmux >/dev/null; then
		TM new-session -d -s d -x 160 -y 40 -c "$TMP" "env TERM=xterm-256color LANG=C.UTF-8 $BIN view $TMP/fl2.json; sleep 30"
		seen=0
		for _ in $(seq 100); do
			TM capture-pane -p -t d 2>/dev/null | grep -q "| $t2 dropped" && { seen=1; break; }
			sleep 0.1
		done
		[ $seen = 1 ] && ok "TUI session line shows both kinds: $t2 dropped" ||
			not_ok "TUI session line shows $t2 dropped" "$(TM capture-pane -p -t d | head -n 3)"
		tmux_quit "$SOCK" d || not_ok "q quits the view" "$(TM capture-pane -p -t d | tail -n 3)"
		TM kill-session -t d 2>/dev/null
	else
		skip "TUI session line shows the drops" "no tmux"
	fi
fi
check_out "a trace without drops says 0 dropped" "^Events: [0-9]+ kept of [0-9]+ seen, 0 dropped, " \
	"$BIN" report fixtures/dialects/paddle.json

# ---------------------------------------------------------------- 2. SIGKILL during export
# a deterministic trace of tens of MB
awk -v n="$N_BIG" 'BEGIN{printf "{\"traceEvents\":[\n"
	for(i=0;i<n;i++) printf "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op_%d\",\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,\"dur\":2.5,\"args\":{\"correlation\":%d}}%s\n", i%97, i%4, i*3, i%1000, i+1, (i<n-1?",":"")
	printf "]}\n"}' >"$TMP/big.json"
"$BIN" export "$TMP/big.json" -o "$TMP/ref.json" 2>/dev/null
"$BIN" export fixtures/dialects/paddle.json -o "$TMP/old.json" 2>/dev/null 
if ! is_complete "$TMP/ref.json" || ! is_complete "$TMP/old.json"; then
	not_ok "reference exports" "$(ls -la "$TMP")"
else
	ok "reference export of a $(($(stat -c %s "$TMP/big.json") / 1000000)) MB trace"
	t0=$(date +%s%N)
	"$BIN" export "$TMP/big.json" -o "$TMP/timed.json" 2>/dev/null
	ms=$((($(date +%s%N) - t0) / 1000000 + 20))
	mkdir "$TMP/k"
	bad=0 n_old=0 n_new=0 n_gone=0 left=0
	for r in $(seq "$ROUNDS"); do
		out=$TMP/k/out.json
		if [ $((r % 3)) = 0 ]; then # without --force into a fresh name: nothing or all
			rm -f "$out"
			force=
		else
			cp "$TMP/old.json" "$out"
			force=-f
		fi
		"$BIN" export "$TMP/big.json" -o "$out" $force 2>/dev/null &
		pid=$!
		d=$((ms * 3 / 10 + RANDOM % (ms * 12 / 10)))
		sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		if [ ! -e "$out" ] && [ -z "$force" ]; then n_gone=$((n_gone + 1))
		elif [ -n "$force" ] && cmp -s "$out" "$TMP/old.json"; then n_old=$((n_old + 1))
		elif cmp -s "$out" "$TMP/ref.json"; then n_new=$((n_new + 1))
		else bad=$((bad + 1)); echo "# round $r (kill at ${d} ms): $(ls -la "$out" 2>&1)"; fi
		left=$((left + $(tmps "$TMP/k")))
	done
	if [ $bad = 0 ]; then ok "$ROUNDS SIGKILLed exports: old file $n_old, complete new $n_new, none $n_gone, partial 0"
	else not_ok "SIGKILLed exports leave old or complete files" "$bad partial of $ROUNDS"; fi
	echo "# temporaries seen right after the kills: $left (a kill between link and rename)"
	"$BIN" export "$TMP/big.json" -o "$TMP/k/out.json" -f 2>/dev/null
	# a stale temporary as a killed writer leaves it, and a live writer's (locked)
	printf 'partial' >"$TMP/k/out.json.tmp.AbC123"
	exec 9>"$TMP/k/out.json.tmp.LiVe99"
	echo partial >&9
	flock -x 9 2>/dev/null || true
	"$BIN" export "$TMP/big.json" -o "$TMP/k/out.json" -f 2>/dev/null
	if [ ! -e "$TMP/k/out.json.tmp.AbC123" ] && cmp -s "$TMP/k/out.json" "$TMP/ref.json"; then
		ok "the next export removes stale temporaries of dead writers"
	else not_ok "the next export removes stale temporaries" "$(ls -A "$TMP/k")"; fi
	if command -v flock >/dev/null; then
		[ -e "$TMP/k/out.json.tmp.LiVe99" ] && ok "and leaves a live (locked) writer's temporary alone" ||
			not_ok "a live writer's temporary stays"
	else
		skip "a live writer's temporary stays" "no flock(1)"
	fi
	exec 9>&-
	rm -f "$TMP/k/out.json.tmp.LiVe99"
	"$BIN" export "$TMP/big.json" -o "$TMP/k/out.json" -f 2>/dev/null
	[ "$(tmps "$TMP/k")" = 0 ] && ok "no temporaries left after the rounds" ||
		not_ok "no temporaries left" "$(ls -A "$TMP/k")"
fi

# ---------------------------------------------------------------- 2b. SIGKILL during record's final write
if [ ! -x "$FLOOD" ]; then
	skip "SIGKILLed record -o" "no build/examples/flood or libproftop.so"
else
	mkdir "$TMP/r"
	out=$TMP/r/out.json
	t0=$(date +%s%N)
	fl_args="--rate 100000000 --seconds 0.15 --step-every 0"
	"$BIN" record -o "$out" --log "$TMP/r.log" -- "$FLOOD" $fl_args >/dev/null 2>&1
	ms=$((($(date +%s%N) - t0) / 1000000))
	bad=0 n_old=0 n_new=0 left=0
	rr=$((ROUNDS / 2))
	for r in $(seq "$rr"); do
		cp "$TMP/old.json" "$out"
		"$BIN" record -o "$out" --log "$TMP/r.log" -- "$FLOOD" $fl_args >/dev/null 2>"$TMP/r.err" &
		pid=$!
		# between the end of the flood and a little after the measured finish
		d=$((ms * 6 / 10 + RANDOM % (ms * 5 / 10 + 1)))
		sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		cpid=$(sed -n 's/.*recording pid \([0-9]*\).*/\1/p' "$TMP/r.err")
		[ -n "$cpid" ] && while kill -0 "$cpid" 2>/dev/null; do sleep 0.1; done
		if cmp -s "$out" "$TMP/old.json"; then n_old=$((n_old + 1))
		elif is_complete "$out" && grep -q '"generator":"proftop' "$out"; then n_new=$((n_new + 1))
		else bad=$((bad + 1)); echo "# round $r (kill at ${d} of ${ms} ms): $(ls -la "$out" 2>&1)"; fi
		left=$((left + $(tmps "$TMP/r")))
	done
	if [ $bad = 0 ]; then ok "$rr SIGKILLed record -o: old file $n_old, complete new $n_new, partial 0"
	else not_ok "SIGKILLed record -o leaves old or complete files" "$bad partial of $rr"; fi
	echo "# temporaries seen right after the kills: $left"
fi

# ---------------------------------------------------------------- 3. full disk
mkdir "$FULL"
if [ "$(id -u)" != 0 ]; then
	skip "full-disk tests" "not root: cannot mount a tmpfs"
elif ! mount -t tmpfs -o size=512k,mode=700 tmpfs "$FULL" 2>"$TMP/mount.err"; then
	skip "full-disk tests" "mount -t tmpfs not permitted: $(cat "$TMP/mount.err")"
else
	out=$("$BIN" export "$TMP/big.json" -o "$FULL/out.json" 2>&1)
	rc=$?
	if [ $rc != 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
		printf '%s' "$out" | grep -q "$FULL/out.json: No space left on device (ENOSPC)"; then
		ok "export to a full disk: one line naming the path and ENOSPC, exit $rc"
	else not_ok "export to a full disk: one clear line" "rc=$rc" "$out"; fi
	[ -z "$(ls -A "$FULL")" ] && ok "no partial file, no temporary" || not_ok "no partial file" "$(ls -la "$FULL")"
	"$BIN" export fixtures/dialects/paddle.json -o "$FULL/out.json" 2>/dev/null
	cp "$FULL/out.json" "$TMP/small_before.json"
	check_fails "export -f over a file on a full disk fails" 1 "$BIN" export "$TMP/big.json" -o "$FULL/out.json" -f
	if cmp -s "$FULL/out.json" "$TMP/small_before.json" && [ "$(ls -A "$FULL")" = out.json ]; then
		ok "the old file is untouched, no temporary"
	else not_ok "the old file is untouched" "$(ls -la "$FULL")"; fi
	rm -f "$FULL/out.json"

	if [ -x "$MINITRAIN" ]; then
		mkdir "$TMP/rescue"
		err=$(TMPDIR=$TMP/rescue "$BIN" record -o "$FULL/out.json" --log "$TMP/mt.log" -- \
			"$MINITRAIN" --steps 200 --log-every 0 2>&1 >/dev/null)
		rc=$?
		resc=$(ls "$TMP"/rescue/proftop-rescue-*.json 2>/dev/null | head -n1)
		if [ $rc != 0 ] && printf '%s' "$err" | grep -q "cannot write the trace: $FULL/out.json: No space left on device (ENOSPC)" &&
			printf '%s' "$err" | grep -q "the recording was saved instead to $resc "; then
			ok "record -o to a full disk: clear error, exit $rc, says where the rescue went"
		else not_ok "record -o to a full disk: error and rescue" "rc=$rc" "$err"; fi
		check_out "the rescued recording is whole (200 steps)" "200 steps \(0 to 199\)" "$BIN" report "$resc"
		[ -n "$resc" ] && [ "$(stat -c %a "$resc")" = 600 ] && ok "the rescue file is 0600" || not_ok "rescue 0600"
		[ -z "$(ls -A "$FULL")" ] && ok "nothing left on the full disk" || not_ok "nothing left on the full disk" "$(ls -la "$FULL")"
		check_out "record --help documents the rescue" "proftop-rescue-PID-TIME.json in \\\$TMPDIR" "$BIN" record --help
	else
		skip "record -o to a full disk" "no build/examples/minitrain or libproftop.so"
	fi

	if command -v tmux >/dev/null; then
		TM new-session -d -s f -x 200 -y 40 -c "$FULL" \
			"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN view $TMP/big.json; echo EXIT=\$?; sleep 30"
		wait_pane() { # wait_pane REGEX
			for _ in $(seq 150); do
				TM capture-pane -p -t f 2>/dev/null | grep -Eq -- "$1" && return 0
				sleep 0.1
			done
			return 1
		}
		if wait_pane "Operator|Summary"; then
			TM send-keys -t f e
			if wait_pane "export failed: proftop-[0-9-]+\.json: No space left on device \(ENOSPC\); data kept"; then
				ok "TUI snapshot to a full disk: the error is on screen"
			else not_ok "TUI snapshot error on screen" "$(TM capture-pane -p -t f | tail -n 3)"; fi
			[ -z "$(ls -A "$FULL")" ] && ok "no partial snapshot, no temporary" || not_ok "no partial snapshot" "$(ls -la "$FULL")"
			TM send-keys -t f 2
			wait_pane "op_[0-9]+" && ok "the session keeps running with its data" ||
				not_ok "the session keeps running" "$(TM capture-pane -p -t f | head -n 5)"
			mount -o remount,size=256m "$FULL"
			TM send-keys -t f e
			if wait_pane "exported [0-9]+ events to /[^ ]*/proftop-"; then
				snap=$(ls "$FULL"/proftop-*.json | head -n1)
				check_out "with room again, the next snapshot works and is whole" \
					"Events: $N_BIG kept of $N_BIG seen, 0 dropped" "$BIN" report "$snap"
			else not_ok "with room again, the next snapshot works" "$(TM capture-pane -p -t f | tail -n 3)"; fi
			TM send-keys -t f q
			wait_pane "EXIT=0" && ok "the TUI quits normally afterwards" || not_ok "TUI quits with 0"
		else
			not_ok "TUI view starts" "$(TM capture-pane -p -t f | head -n 5)"
		fi
		tmux_quit "$SOCK" f
		TM kill-session -t f 2>/dev/null
	else
		skip "TUI snapshot to a full disk" "no tmux"
	fi
	umount "$FULL" || umount -l "$FULL"
fi

# ---------------------------------------------------------------- 4. 0600
for m in 022 000; do
	rm -f "$TMP/perm.json"
	(umask $m && "$BIN" export "$TMP/old.json" -o "$TMP/perm.json" 2>/dev/null)
	[ "$(stat -c %a "$TMP/perm.json" 2>/dev/null)" = 600 ] && ok "export under umask $m is 0600" ||
		not_ok "export under umask $m is 0600" "$(ls -la "$TMP/perm.json" 2>&1)"
done
install -m 644 "$TMP/old.json" "$TMP/perm.json"
(umask 000 && "$BIN" export "$TMP/old.json" -o "$TMP/perm.json" -f 2>/dev/null)
[ "$(stat -c %a "$TMP/perm.json")" = 600 ] && ok "export -f over a 0644 file leaves 0600" ||
	not_ok "export -f over a 0644 file leaves 0600" "$(ls -la "$TMP/perm.json")"
if [ -f "$TMP/fl.json" ]; then
	[ "$(stat -c %a "$TMP/fl.json")" = 600 ] && ok "record -o writes 0600" || not_ok "record -o writes 0600"
fi
done_testing
