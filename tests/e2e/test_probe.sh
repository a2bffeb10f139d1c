#!/usr/bin/env bash
# test_probe.sh - the probe seen from outside: a program that speaks NVTX
# (examples/nvtx_client, no CUDA needed) run with LD_PRELOAD=libproftop.so
# leaves a session file whose records hold its NVTX ranges, read back by an
# independent parser (tests/e2e/probe_dump.py). With CUDA's nvtx3 headers
# present, a program using the real nvToolsExt.h is checked as well.
. tests/e2e/lib.sh
BUILD_DIR=$(dirname "$PROFTOP")
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
LIB=$BUILD_DIR/libproftop.so
CLIENT=$BUILD_DIR/examples/nvtx_client
DUMP="python3 tests/e2e/probe_dump.py"
S=$TMP/sessions
mkdir -m 700 "$S"

if [ ! -f "$LIB" ] || [ ! -x "$CLIENT" ]; then
	skip "probe built" "no $LIB or $CLIENT"
	done_testing
	exit 0
fi

out=$(PROFTOP_SESSION_DIR=$S LD_PRELOAD=$LIB "$CLIENT" 3 2>&1)
files=("$S"/*.session)
if [ ${#files[@]} -eq 1 ] && [ -f "${files[0]}" ]; then ok "one session file"; else not_ok "one session file" "$(ls -la "$S")"; fi
f=${files[0]}
check_out "client saw the injection" "injection attached" echo "$out"
mode=$(stat -c %a "$f" 2>/dev/null)
[ "$mode" = 600 ] && ok "session file mode 0600" || not_ok "session file mode 0600" "mode $mode"
dump=$($DUMP "$f" 2>&1)
rc=$?
[ $rc -eq 0 ] && ok "session file parses" || not_ok "session file parses" "$(echo "$dump" | tail -3)"
n() { printf '%s\n' "$dump" | grep -cE -- "$1"; }
[ "$(n 'kind=7 name=matmul ')" = 3 ] && ok "3 matmul ranges (USER_DEFINED)" || not_ok "3 matmul ranges" "$(n 'matmul')"
[ "$(n 'kind=2 name=forward ')" = 3 ] && ok "forward -> Forward phase" || not_ok "forward -> Forward phase"
[ "$(n 'kind=3 name=backward ')" = 3 ] && ok "backward -> Backward phase" || not_ok "backward -> Backward phase"
[ "$(n 'kind=1 name=dataloader ')" = 3 ] && ok "dataloader -> Dataloader phase" || not_ok "dataloader phase"
[ "$(n 'kind=7 name=mydomain: allreduce .*aux=1')" = 3 ] && ok "domain range named 'mydomain: allreduce' at depth 1" || not_ok "domain range" "$(printf '%s\n' "$dump" | grep allreduce | head -2)"
[ "$(n 'kind=14 name=iteration end ')" = 3 ] && ok "marks -> INSTANT" || not_ok "marks"
[ "$(n 'kind=7 name=worker ')" = 1000 ] && ok "worker thread: 1000 ranges in its own ring" || not_ok "worker ranges" "$(n worker)"
main_tid=$(printf '%s\n' "$dump" | awk '/^rec .*name=matmul/ {print $3; exit}')
async_tids=$(printf '%s\n' "$dump" | awk '/name=async/ {print $3}' | sort -u | wc -l)
if [ "$(n 'name=async ')" = 3 ] && ! printf '%s\n' "$dump" | grep -q "^rec [0-9]* $main_tid kind=7 name=async"; then
	ok "start/end ranges recorded on the ending threads ($async_tids tids)"
else
	not_ok "start/end ranges on the ending threads" "$(printf '%s\n' "$dump" | grep async)"
fi
check_out "header: EXITED, no drops" "state=2 .*dropped_no_ring=0 dropped_no_string=0 cmdline=.*nvtx_client 3" echo "$dump"
# nesting and timing: matmul lies inside forward
if printf '%s\n' "$dump" | awk '/name=forward / {fs=$6; sub("start=","",fs); fd=$7; sub("dur=","",fd); f[++nf]=fs" "fs+fd}
	/name=matmul / {ms=$6; sub("start=","",ms); md=$7; sub("dur=","",md); m[++nm]=ms" "ms+md}
	END {for (i=1;i<=nf;i++) {split(f[i],a," "); split(m[i],b," "); if (b[1]<a[1] || b[2]>a[2]) exit 1} exit nf==3?0:1}'; then
	ok "matmul nested inside forward in time"
else
	not_ok "matmul nested inside forward in time"
fi
rm -f "$S"/*

out=$(PROFTOP_DISABLE=1 PROFTOP_SESSION_DIR=$S LD_PRELOAD=$LIB "$CLIENT" 1 2>&1)
if [ -z "$(ls "$S")" ] && echo "$out" | grep -q "not attached"; then ok "PROFTOP_DISABLE=1: no session, NVTX not attached"; else not_ok "PROFTOP_DISABLE=1" "$out"; fi

bad=$TMP/open
mkdir -m 755 "$bad"
out=$(PROFTOP_SESSION_DIR=$bad LD_PRELOAD=$LIB "$CLIENT" 1 2>&1)
rc=$?
lines=$(echo "$out" | grep -c "^proftop: probe disabled:")
if [ $rc -eq 0 ] && [ "$lines" = 1 ] && echo "$out" | grep -q "1 iterations"; then
	ok "unsafe session dir: one warning line, program runs"
else
	not_ok "unsafe session dir" "rc=$rc" "$out"
fi

out=$(NVTX_INJECTION64_PATH=/nonexistent/other.so PROFTOP_SESSION_DIR=$S LD_PRELOAD=$LIB "$CLIENT" 1 2>&1)
# (the probe removes a session that never held an event at exit: check it is loaded)
if echo "$out" | grep -q "not attached" && ! echo "$out" | grep -Eq "cannot be preloaded|probe disabled"; then ok "an existing NVTX_INJECTION64_PATH is left alone"; else not_ok "existing NVTX_INJECTION64_PATH" "$out"; fi
rm -f "$S"/*

# A program using CUDA's real nvtx3 header (compiled on the fly when present).
NVTX_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ -f "$NVTX_INC/nvtx3/nvToolsExt.h" ] && command -v cc >/dev/null; then
	cat >"$TMP/real.c" <<'C'
#include <nvtx3/nvToolsExt.h>
int main(void)
{
	nvtxDomainHandle_t d = nvtxDomainCreateA("realdom");
	for (int i = 0; i < 2; i++) {
		nvtxRangePushA("Forward");
		nvtxRangePushA("real op");
		nvtxMarkA("real mark");
		nvtxRangePop();
		nvtxRangePop();
		nvtxEventAttributes_t a = {0};
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = nvtxDomainRegisterStringA(d, "registered");
		nvtxDomainRangePushEx(d, &a);
		nvtxDomainRangePop(d);
		nvtxRangeEnd(nvtxRangeStartA("real async"));
	}
	return 0;
}
C
	if cc -O1 -I"$NVTX_INC" -o "$TMP/real" "$TMP/real.c" -ldl 2>"$TMP/cc.err"; then
		PROFTOP_SESSION_DIR=$S LD_PRELOAD=$LIB "$TMP/real" >/dev/null 2>&1
		dump=$($DUMP "$S"/*.session 2>&1)
		if [ "$(n 'kind=2 name=Forward ')" = 2 ] && [ "$(n 'kind=7 name=real op .*aux=1')" = 2 ] &&
			[ "$(n 'kind=14 name=real mark ')" = 2 ] && [ "$(n 'kind=7 name=realdom: registered ')" = 2 ] &&
			[ "$(n 'kind=7 name=real async ')" = 2 ]; then
			ok "real nvToolsExt.h program: ranges, phase, mark, registered domain string, start/end"
		else
			not_ok "real nvToolsExt.h program" "$(printf '%s\n' "$dump" | head -12)"
		fi
	else
		not_ok "compile a real nvtx3 program" "$(head -5 "$TMP/cc.err")"
	fi
else
	skip "real nvtx3 header program" "no $NVTX_INC/nvtx3"
fi
done_testing
