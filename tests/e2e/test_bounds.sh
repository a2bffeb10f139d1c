#!/usr/bin/env bash
# test_bounds.sh - promise 4, bounded resources: proftop's memory stays under
# --max-mem plus the documented constant (64 MiB, docs/usage.md, "Memory") on
#   a. a 2 GiB Chrome trace of ~39 million tiny events (tests/progs/gentrace),
#      and a file of 30 million empty objects (the reader's worst case);
#   b. a live session at 10 million events/s (examples/flood, 2 threads)
#      recorded headless, then watched on the screen (tmux): the screen keeps
#      answering keys, says how far back its data reaches, counts the drops.
# The oldest data goes first: gentrace's event i starts at i us, so after the
# cap the data must be complete from exactly "dropped" us on.
# Peak RSS: ru_maxrss of the children (python3) and VmRSS sampled every 0.5 s.
# PT_BOUNDS_SECONDS (default 30 for the screen, a quarter for record) and
# PT_BOUNDS_SIZE (default 2G) shorten it by hand; nothing here is timed.
# san: skip
# (heavy: gigabytes of text and half a minute of flood; ASan adds nothing here)
. tests/e2e/lib.sh
GEN=build/tests/progs/gentrace
FLOOD=build/examples/flood
ROOT=$(pwd)
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
SECS=${PT_BOUNDS_SECONDS:-30}
SIZE=${PT_BOUNDS_SIZE:-2G}
CONST_KB=$((64 * 1024)) # the documented constant
SOCK="pt-bounds-$$"
TM() { tmux -L "$SOCK" "$@"; }
trap 'TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT

command -v python3 >/dev/null || { skip "bounded resources" "needs python3"; done_testing; exit 0; }
[ -x "$GEN" ] || { skip "bounded resources" "build $GEN first (make tests)"; done_testing; exit 0; }

# rss.py OUT CMD...: runs CMD, samples its VmRSS every 0.5 s; writes
# "rc ru_maxrss_kB max_sampled_kB samples" to OUT; exits with CMD's status
cat >"$TMP/rss.py" <<'EOF'
import resource, subprocess, sys, time
p = subprocess.Popen(sys.argv[2:])
peak = n = 0
while p.poll() is None:
    try:
        with open('/proc/%d/status' % p.pid) as f:
            for l in f:
                if l.startswith('VmRSS:'):
                    peak = max(peak, int(l.split()[1])); n += 1
    except OSError:
        pass
    time.sleep(0.5)
hwm = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1], 'w').write('%d %d %d %d\n' % (p.returncode, hwm, peak, n))
sys.exit(p.returncode)
EOF
RSS="python3 $TMP/rss.py"

# under_cap DESC CAP_MB FILE: FILE from rss.py; peak (the larger figure) <= cap + constant
under_cap() {
	local rc hwm peak n lim
	read -r rc hwm peak n <"$3" || { not_ok "$1" "no figures"; return; }
	[ "$peak" -gt "$hwm" ] && hwm=$peak
	lim=$(($2 * 1024 + CONST_KB))
	if [ "$hwm" -le "$lim" ]; then ok "$1: peak RSS $((hwm / 1024)) MiB <= $2 + 64 MiB ($n samples)"
	else not_ok "$1" "peak RSS $((hwm / 1024)) MiB > $2 MiB + 64 MiB"; fi
}

# ------------------------------------------------ a. a 2 GiB trace, 256M cap
free_kb=$(df -Pk "$TMP" | awk 'NR==2{print $4}')
big=$TMP/big.json
if [ "${free_kb:-0}" -gt $((5 * 1024 * 1024)) ]; then
	"$GEN" -s "$SIZE" -o "$big" 2>"$TMP/gen.err"
	how="file"
else # too little disk: the same bytes through a pipe (read the same way)
	mkfifo "$big"
	"$GEN" -s "$SIZE" -o "$big" 2>"$TMP/gen.err" &
	how="pipe"
fi
$RSS "$TMP/a.rss" "$BIN" report --max-mem 256M "$big" >"$TMP/a.out" 2>&1
rc=$?
wait
rm -f "$big"
read -r seen bytes <<<"$(sed -n 's/.*events=\([0-9]*\) bytes=\([0-9]*\).*/\1 \2/p' "$TMP/gen.err")"
[ $rc -eq 0 ] && ok "report of a $((bytes / 1048576)) MiB trace ($how, $seen events) exits 0" ||
	not_ok "report of the big trace exits 0" "rc=$rc" "$(head -n 5 "$TMP/a.out")"
under_cap "$SIZE trace under --max-mem 256M" 256 "$TMP/a.rss"
hdr=$(grep -m1 '^Events:' "$TMP/a.out")
read -r kept dropped <<<"$(echo "$hdr" | sed -n 's/^Events: \([0-9]*\) kept of [0-9]* seen, \([0-9]*\) dropped.*/\1 \2/p')"
if [ -n "$kept" ] && [ "$((kept + dropped))" = "$seen" ] && [ "$dropped" -gt 0 ]; then
	ok "every event kept or counted: $kept kept + $dropped dropped = $seen"
else not_ok "kept + dropped = seen" "$hdr" "seen=$seen"; fi
from_ms=$(sed -n 's/.*complete only from \([0-9.]*\) ms after.*/\1/p' "$TMP/a.out")
# event i starts at i us: keeping the newest means complete from `dropped` us
if [ -n "$from_ms" ] && python3 -c "import sys; f=float(sys.argv[1])*1000; d=int(sys.argv[2]); sys.exit(abs(f-d) > 1+d/1000)" "$from_ms" "${dropped:-0}"; then
	ok "the oldest went first: complete from $from_ms ms = the $dropped dropped events"
else not_ok "the oldest went first" "$(grep -m1 'complete only' "$TMP/a.out")" "dropped=$dropped"; fi

# the reader's worst case: 30 million "{}" (each is skipped and counted)
python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('['); b = '{},' * 1000000
    for _ in range(30): f.write(b)
    f.write('{}]')" "$TMP/empty.json"
$RSS "$TMP/e.rss" "$BIN" report --max-mem 1M "$TMP/empty.json" >"$TMP/e.out" 2>&1
rc=$?
rm -f "$TMP/empty.json"
# nothing kept: exit 1, saying how many were skipped and why
[ $rc -eq 1 ] && grep -q "no event kept: all 30000001 were skipped (30000001 events with missing" "$TMP/e.out" &&
	ok "30 M empty objects: read, skipped and counted (exit 1: nothing kept)" ||
	not_ok "30 M empty objects" "rc=$rc" "$(tail -n 3 "$TMP/e.out")"
under_cap "30 M empty objects under --max-mem 1M" 1 "$TMP/e.rss"

# ------------------------------------------------ b. live, 10 M events/s
if [ ! -x "$FLOOD" ] || [ ! -f build/libproftop.so ]; then
	skip "live session at 10 M events/s" "needs $FLOOD and build/libproftop.so"
	done_testing
	exit 0
fi
SD=$TMP/sessions
mkdir -m 700 "$SD"
export PROFTOP_SESSION_DIR=$SD PROFTOP_LIB=$ROOT/build/libproftop.so

# b1. headless: record
rsecs=$(((SECS + 3) / 4))
$RSS "$TMP/r.rss" "$BIN" record --max-mem 128M -o "$TMP/live.json" --log "$TMP/rflood.log" -- \
	"$ROOT/$FLOOD" --rate 10000000 --seconds "$rsecs" --threads 2 >"$TMP/r.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "record of ${rsecs} s at 10 M events/s exits 0 ($(tail -n 1 "$TMP/rflood.log"))" ||
	not_ok "record of the flood exits 0" "rc=$rc" "$(tail -n 3 "$TMP/r.out")"
under_cap "record --max-mem 128M" 128 "$TMP/r.rss"
if grep -Eq "wrote .*live.json \([0-9]+ events; [0-9]+ dropped: [0-9]+ by the source, [1-9][0-9]* by the memory cap\)" "$TMP/r.out"; then
	ok "record counts both kinds of drops: $(grep -o '([0-9]* events;.*)' "$TMP/r.out")"
else not_ok "record counts the drops" "$(cat "$TMP/r.out")"; fi
check_out "the recording says its cap dropped the oldest" "memory cap .* dropped its [0-9]+ oldest events" \
	"$BIN" report "$TMP/live.json"

# b2. the screen
if ! command -v tmux >/dev/null; then
	skip "the screen at 10 M events/s" "no tmux"
	done_testing
	exit 0
fi
wait_for() { # wait_for REGEX SECS
	local n=$(($2 * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t r 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
pane() { TM capture-pane -p -t r; }
TM new-session -d -s r -x 200 -y 50 -c "$TMP" \
	"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $RSS $TMP/t.rss $BIN run --exit-on-end --max-mem 128M \
	--log $TMP/tflood.log -- $ROOT/$FLOOD --rate 10000000 --seconds $SECS --threads 2; \
	echo EXIT=\$?; sleep 120"
t0=$(date +%s)
wait_for "Model Summary" 30 && ok "the screen comes up under the flood" ||
	not_ok "the screen comes up" "$(pane | head -n 8)"
# twice, a third and two thirds in: switch to view 7 and back
for frac in 1 2; do
	while [ $(($(date +%s) - t0)) -lt $((SECS * frac / 3)) ]; do sleep 1; done
	s0=$(date +%s%N)
	TM send-keys -t r 7
	if wait_for "^Name +Calls" 10; then
		s1=$(date +%s%N)
		TM send-keys -t r 1
		if wait_for "Model Summary" 10; then
			ok "keys answered at $((frac * 100 / 3))% of the flood (view 7 in $(((s1 - s0) / 1000000)) ms, back in $((($(date +%s%N) - s1) / 1000000)) ms)"
		else not_ok "key 1 answered mid-flood" "$(pane | head -n 8)"; fi
	else
		not_ok "key 7 answered mid-flood" "$(pane | head -n 8)"
	fi
done
line=$(pane | grep -m1 -E " running [0-9]")
if echo "$line" | grep -Eq "\| [0-9]+ dropped" && echo "$line" | grep -Eq "\| since -[0-9.]+(ns|us|ms|s)"; then
	ok "the header says how far back it reaches and counts drops: $(echo "$line" | grep -Eo '[0-9]+ dropped \| since -[0-9.]+[a-z]+')"
else not_ok "the header says how far back it reaches" "$line"; fi
if wait_for "^EXIT=" $((SECS + 60)); then
	ok "the screen ends with the flood ($(pane | grep -m1 '^EXIT='))"
else not_ok "the screen ends with the flood" "$(pane | tail -n 5)"; fi
if pane | grep -Eq "[0-9]+ oldest events dropped by the memory cap"; then
	ok "final summary counts the cap's drops"
else not_ok "final summary counts the cap's drops" "$(pane | tail -n 8)"; fi
under_cap "run (screen) --max-mem 128M" 128 "$TMP/t.rss"
done_testing
