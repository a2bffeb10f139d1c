#!/usr/bin/env bash
# tests/e2e/test_faults.sh - the live path's promises, end to end:
#  - a program annotated only with NVTX reports its ranges through
#    `proftop record` (examples/nvtx_client; and a program built with CUDA's
#    real nvtx3 header when that header is present);
#  - proftop killed with -9 while the trainer runs: the trainer finishes
#    normally, with the same result as without proftop;
#  - the probe left alone after its reader died goes back to flight
#    recording: a new `proftop record -p` can still attach.
. tests/e2e/lib.sh

case "$PROFTOP" in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac
LIB=$PWD/build/libproftop.so
MINI=$PWD/build/examples/minitrain
CLIENT=$PWD/build/examples/nvtx_client
export PROFTOP_SESSION_DIR="$TMP/sessions"
mkdir -m 700 "$PROFTOP_SESSION_DIR"
export PROFTOP_LIB=$LIB
if [ ! -f "$LIB" ] || [ ! -x "$MINI" ] || [ ! -x "$CLIENT" ]; then
	skip "live fault tests" "no libproftop.so, minitrain or nvtx_client"
	done_testing
	exit 0
fi

# --- NVTX ranges with no code change
"$PROFTOP" record -o "$TMP/n.json" --log "$TMP/n.log" -- "$CLIENT" 3 >"$TMP/n.out" 2>&1
rc=$?
"$PROFTOP" report "$TMP/n.json" --json >"$TMP/n.rep" 2>&1
if [ $rc -eq 0 ] && python3 - "$TMP/n.rep" <<'PY'; then ok "NVTX ranges reach the report through proftop record"; else not_ok "NVTX ranges reach the report through proftop record" "rc=$rc $(head -c 400 "$TMP/n.rep")"; fi
import json, sys
r = json.load(open(sys.argv[1]))
ud = {x["name"]: x["calls"] for x in r["user_defined"]}
assert ud.get("worker") == 1000, ud
assert ud.get("mydomain: allreduce") == 3, ud
assert ud.get("matmul") == 3, ud
PY

NVTX_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ -f "$NVTX_INC/nvtx3/nvToolsExt.h" ] && command -v cc >/dev/null; then
	cat >"$TMP/real.c" <<'C'
#include <nvtx3/nvToolsExt.h>
int main(void)
{
	for (int i = 0; i < 5; i++) {
		nvtxRangePushA("forward");
		nvtxRangePushA("real op");
		nvtxRangePop();
		nvtxRangePop();
	}
	return 0;
}
C
	if cc -I"$NVTX_INC" -o "$TMP/real" "$TMP/real.c" -ldl 2>"$TMP/real.err"; then
		"$PROFTOP" record -o "$TMP/r.json" --log "$TMP/r.log" -- "$TMP/real" >/dev/null 2>&1
		check_out "a program using CUDA's nvtx3 header reports its ranges" \
			'"name": *"real op", *"calls": *5' "$PROFTOP" report "$TMP/r.json" --json
	else
		not_ok "a program using CUDA's nvtx3 header reports its ranges" "$(cat "$TMP/real.err")"
	fi
else
	skip "a program using CUDA's nvtx3 header reports its ranges" "no nvtx3 headers"
fi

# --- proftop killed -9 mid-run: the trainer does not notice
args="--steps 150 --reader-ms 2 --log-every 0"
# shellcheck disable=SC2086
want=$("$MINI" $args 2>/dev/null | sed -n 's/.*done steps=\([0-9]*\) loss=\([0-9.]*\).*/\1 \2/p')
# shellcheck disable=SC2086
"$PROFTOP" run --no-screen --log "$TMP/k.log" -- "$MINI" $args >/dev/null 2>&1 &
ppid_=$!
mpid=""
for _ in $(seq 100); do
	mpid=$(ls "$PROFTOP_SESSION_DIR" 2>/dev/null | sed -n 's/^\([0-9]*\)\.session$/\1/p' | while read -r p; do
		grep -q minitrain "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done | head -n 1)
	[ -n "$mpid" ] && break
	sleep 0.1
done
sleep 0.3
kill -9 $ppid_ 2>/dev/null
wait $ppid_ 2>/dev/null
if [ -z "$mpid" ]; then
	not_ok "the trainer finishes after proftop is killed -9" "no trainer session appeared"
else
	for _ in $(seq 300); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
	got=$(sed -n 's/.*done steps=\([0-9]*\) loss=\([0-9.]*\).*/\1 \2/p' "$TMP/k.log")
	if ! kill -0 "$mpid" 2>/dev/null && [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "the trainer finishes after proftop is killed -9, same result ($got)"
	else
		not_ok "the trainer finishes after proftop is killed -9" "want '$want' got '$got'; $(tail -n 3 "$TMP/k.log")"
		kill -9 "$mpid" 2>/dev/null
	fi
fi

# --- a reader killed -9; another attaches to the same running trainer
LD_PRELOAD=$LIB "$MINI" --steps 0 --reader-ms 1 --log-every 0 >/dev/null 2>&1 &
tpid=$!
for _ in $(seq 100); do [ -e "$PROFTOP_SESSION_DIR/$tpid.session" ] && break; sleep 0.1; done
"$PROFTOP" record -p $tpid -o "$TMP/a.json" --duration 5 >/dev/null 2>&1 &
rpid=$!
sleep 0.5
kill -9 $rpid 2>/dev/null
wait $rpid 2>/dev/null
"$PROFTOP" record -p $tpid -o "$TMP/b.json" --duration 0.5 >"$TMP/b.out" 2>&1
rc=$?
kill -INT $tpid 2>/dev/null
wait $tpid
trc=$?
if [ $rc -eq 0 ] && "$PROFTOP" report "$TMP/b.json" 2>/dev/null | grep -Eq "[1-9][0-9]* steps"; then
	ok "after a reader is killed -9, another attaches and records steps"
else
	not_ok "after a reader is killed -9, another attaches and records steps" "rc=$rc $(cat "$TMP/b.out")"
fi
if [ $trc -eq 0 ]; then ok "the trainer outlives both readers and stops cleanly on SIGINT"; else not_ok "the trainer outlives both readers and stops cleanly on SIGINT" "exit $trc"; fi

done_testing
