#!/usr/bin/env bash
# tests/e2e/test_cupti.sh - the probe's GPU path in processes of their own,
# without a GPU: a fake driver (tests/gpu/fake_cuda.c: its cuInit calls the
# injection as the real one does), a fake CUPTI (fake_cupti.c) and a fake
# torch.profiler (fake_kineto.c, linked against that CUPTI) are built into a
# temporary folder; tests/progs/cupti_app trains on them under `proftop
# record`. Checked: every kernel finished is in the trace and attributed to
# the op that launched it (runtime, driver, cluster and graph launches),
# none starts before its launch, the torch.profiler window gets its own
# kernels on its own clock while proftop keeps recording, the ends that skip
# atexit (_exit, SIGTERM) lose nothing complete, kernels still running are
# counted as dropped, CUPTI 11.8 records, a probe loaded after cuInit, a
# driver too old for the CUPTI, and `proftop backends`. Then the real
# CUPTI 12 of PyPI's nvidia-cuda-cupti-cu12 wheel (in .venv, `make venv`),
# with no driver: it loads, says its version, refuses the subscription in
# one line, and the job runs on.
# san: skip (the fakes and the probe are built without the sanitizers)
. tests/e2e/lib.sh
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
APP=$BUILD/tests/progs/cupti_app
PROBE=$PWD/$BUILD/libproftop.so
LIB=$TMP/lib
export PROFTOP_SESSION_DIR=$TMP/sessions

if [ ! -f "$CUDA_HOME/include/cupti.h" ] || [ ! -x "$APP" ] ||
	! nm -D "$PROBE" 2>/dev/null | grep -q ' T cuptiActivityRegisterCallbacks'; then
	skip "GPU path on a fake CUPTI" "needs CUDA's headers and a probe built with them"
	done_testing
	exit 0
fi
mkdir -p "$LIB"
CC=${CC:-cc}
if ! $CC -shared -fPIC -Wl,-Bsymbolic -Wl,-soname,libcupti.so.12 -I"$CUDA_HOME/include" \
	-o "$LIB/libcupti.so.12" tests/gpu/fake_cupti.c -lpthread ||
	! $CC -shared -fPIC -I"$CUDA_HOME/include" -o "$LIB/libfake_kineto.so" \
		tests/gpu/fake_kineto.c -L"$LIB" -l:libcupti.so.12 -Wl,-rpath,"$LIB" ||
	! $CC -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$LIB/libcuda.so.1" tests/gpu/fake_cuda.c; then
	not_ok "build the fake driver, CUPTI and Kineto"
	done_testing
	exit 0
fi

# check_trace DESC JSON LAUNCHED [KINETO_MIN]: every finished kernel in the
# trace, attributed, after its launch; the ops' GPU time; the notes.
check_trace() {
	local desc=$1 json=$2 launched=$3 out
	if out=$(python3 - "$json" "$launched" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
ev = r["traceEvents"]
kern = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "Kernel"]
calls = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "CudaRuntime":
        calls[e.get("args", {}).get("correlation")] = e
assert len(kern) == want, "kernels %d, launched %d" % (len(kern), want)
orphans = [k for k in kern if k["args"]["correlation"] not in calls]
assert not orphans, "kernels with no launch: %s" % orphans[:3]
for k in kern:
    c = calls[k["args"]["correlation"]]
    assert k["ts"] >= c["ts"] - 0.1, "kernel at %f before its launch at %f" % (k["ts"], c["ts"])
    assert k["ts"] < c["ts"] + 1e6, "kernel a second after its launch"
names = {c["name"] for c in calls.values()}
for n in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch"):
    assert n in names, "no %s call" % n
# the driver's cuLaunchKernel inside each cudaLaunchKernel is not a call of its own:
# per step 3 cudaLaunchKernel and 2 cuLaunchKernel, and 2 more cudaLaunchKernel at the end
steps = want // 10
rt = sum(1 for c in calls.values() if c["name"] == "cudaLaunchKernel")
drv = sum(1 for c in calls.values() if c["name"] == "cuLaunchKernel")
assert (rt, drv) == (3 * steps + 2, 2 * steps), "cudaLaunchKernel %d, cuLaunchKernel %d" % (rt, drv)
PY
	); then ok "$desc"; else not_ok "$desc" "$out"; fi
}

report_json() { "$PROFTOP" report "$1" --json; }

# json_get JSON PYEXPR: evaluates PYEXPR over the report (as r)
json_get() {
	report_json "$1" | python3 -c "import json,sys; r=json.load(sys.stdin); print($2)"
}

# 1. CUPTI 13.1, a torch.profiler window in the middle, a normal exit
FAKE_CUPTI_VERSION=130100 "$PROFTOP" record -o "$TMP/a.json" --log "$TMP/a.log" -- \
	"$APP" "$LIB" 12 exit kineto >"$TMP/a.out" 2>&1
check "record on the fake GPU exits 0" test $? -eq 0
launched=$(sed -n 's/^launched //p' "$TMP/a.log")
check "the job launched 120 kernels" test "${launched:-0}" -eq 120
check_trace "every kernel recorded, attributed, after its launch (CUPTI 13.1)" "$TMP/a.json" 120
ops=$(json_get "$TMP/a.json" "' '.join(o['name'] for o in r['operators'] if o['gpu_total_ms'] > 0)")
check_out "runtime, driver, cluster, graph and copy launches attributed to their op" \
	"app::gemm.*app::triton|app::triton.*app::gemm" echo "$ops"
for op in app::gemm app::triton app::cluster app::graph app::copy; do
	case " $ops " in *" $op "*) ok "$op has GPU time" ;; *) not_ok "$op has GPU time" "$ops" ;; esac
done
kin=$(sed -n 's/^kineto //p' "$TMP/a.log")
check "torch.profiler's window got its 40 kernels on its own clock" test "${kin:-0}" -eq 40
notes=$(json_get "$TMP/a.json" "'|'.join(r['notes'])")
check_out "a note says CUPTI was shared" "started collecting GPU activity" echo "$notes"
check_out "a note says the window ended" "GPU collection ended" echo "$notes"
check_out "the kernels still running at the end are said and counted" \
	"2 GPU activities were still running" echo "$notes"
check_out "... as dropped by the source" "^2$" json_get "$TMP/a.json" "r['dropped']['by_source']"
fw=$(json_get "$TMP/a.json" "[m['gpu_total_ms'] for m in r['model_summary'] if m['name'] == 'Forward'][0]")
check "the Forward phase has GPU time" python3 -c "assert $fw > 0"

# 2. os._exit: no atexit; the probe's _exit runs the last flush
FAKE_CUPTI_VERSION=130100 "$PROFTOP" record -o "$TMP/b.json" --log "$TMP/b.log" -- \
	"$APP" "$LIB" 6 _exit >/dev/null 2>&1
check "record after _exit exits 0" test $? -eq 0
check_trace "_exit: every finished kernel is there" "$TMP/b.json" 60

# 3. SIGTERM with its default action: flushed, then the process dies by it
FAKE_CUPTI_VERSION=130100 "$PROFTOP" record -o "$TMP/c.json" --log "$TMP/c.log" -- \
	"$APP" "$LIB" 6 sigterm >/dev/null 2>&1
rc=$?
check "the job still dies by SIGTERM (exit $rc)" test $rc -eq 143
check_trace "SIGTERM: every finished kernel is there" "$TMP/c.json" 60

# 4. CUPTI 11.8 records (Kernel8, Memcpy5), its timestamp callback refused (CLOCK_REALTIME)
FAKE_CUPTI_VERSION=18 FAKE_CUPTI_REFUSE_CLOCK=1 "$PROFTOP" record -o "$TMP/d.json" \
	--log "$TMP/d.log" -- "$APP" "$LIB" 6 exit >/dev/null 2>&1
check "record with CUPTI 11.8 exits 0" test $? -eq 0
check_trace "CUPTI 11.8 on CLOCK_REALTIME: every kernel recorded after its launch" "$TMP/d.json" 60

# 5. the probe loaded after cuInit (ctypes.CDLL late in a Python job), read by attaching
FAKE_CUPTI_VERSION=130100 "$APP" "$LIB" 6 "wait:$TMP/go" late="$PROBE" >"$TMP/e.log" 2>&1 &
app=$!
for _ in $(seq 100); do grep -q launched "$TMP/e.log" && break; sleep 0.1; done
"$PROFTOP" record -p "$app" -o "$TMP/e.json" >/dev/null 2>&1 &
rec=$!
sleep 1
touch "$TMP/go"
wait "$app"
wait "$rec"
check "attached record of the late probe exits 0" test $? -eq 0
check_trace "a probe loaded after cuInit starts CUPTI itself" "$TMP/e.json" 60

# 6. a driver older than the CUPTI: one line, and the job runs on
FAKE_CUDA_VERSION=12040 FAKE_CUPTI_VERSION=130100 "$PROFTOP" record -o "$TMP/f.json" \
	--log "$TMP/f.log" -- "$APP" "$LIB" 3 exit >/dev/null 2>&1
check "record with a driver too old exits 0" test $? -eq 0
check_out "the probe says why GPU tracing is off" \
	"GPU tracing off: .*CUPTI 13.1 needs a driver for CUDA 13 \(R580 or newer\); this one supports 12.4" \
	cat "$TMP/f.log"
check_out "the job ran its steps" "^3$" json_get "$TMP/f.json" "r['steps']"

# 7. proftop backends names the CUPTI and the driver it found
check_out "backends: CUPTI 12.4 and the driver" \
	"^cupti +process +available +CUPTI 12.4 \(.*libcupti.so.12\), driver .*\(CUDA 12.4\)" \
	env LD_LIBRARY_PATH="$LIB" FAKE_CUDA_VERSION=12040 FAKE_CUPTI_VERSION=22 \
	PROFTOP_CUPTI="$LIB/libcupti.so.12" "$PROFTOP" backends
check_out "backends: a CUPTI the driver cannot run" \
	"CUPTI 13.1 needs a driver for CUDA 13" \
	env LD_LIBRARY_PATH="$LIB" FAKE_CUDA_VERSION=12040 FAKE_CUPTI_VERSION=130100 \
	PROFTOP_CUPTI="$LIB/libcupti.so.12" "$PROFTOP" backends

# 8. the real CUPTI of PyPI's wheel (what `pip install torch` for CUDA 12
# brings), on the fake driver: no GPU behind it
REAL=$(ls "${PT_VENV:-.venv}"/lib/python3*/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12 2>/dev/null | head -n 1)
if [ -z "$REAL" ]; then
	skip "the real CUPTI 12 of the wheel" "no ${PT_VENV:-.venv} with nvidia-cuda-cupti-cu12 (make venv)"
else
	L2=$TMP/lib12
	mkdir -p "$L2"
	cp "$REAL" "$L2/libcupti.so.12"
	cp "$LIB/libcuda.so.1" "$L2/"
	"$PROFTOP" record -o "$TMP/g.json" --log "$TMP/g.log" -- \
		"$BUILD/tests/progs/cupti_real" "$L2" 5 >/dev/null 2>&1
	check "a job on the real CUPTI 12 without a GPU exits 0" test $? -eq 0
	check_out "it loaded the real library: CUPTI API version 28 (12.9)" "^cupti version 2[0-9] \\(rc 0\\)" cat "$TMP/g.log"
	n=$(grep -c 'GPU tracing off' "$TMP/g.log")
	check_out "one line says why GPU tracing is off ($n)" \
		"^proftop: GPU tracing off: .*libcupti.so.12 \\(CUPTI 12\\.[0-9]+\\): cuptiSubscribe: CUPTI_ERROR_[A-Z_]+ \\([0-9]+\\); is the NVIDIA driver installed" \
		sh -c "[ $n -eq 1 ] && cat '$TMP/g.log'"
	check_out "the job ran its 5 steps, recorded" "^5$" json_get "$TMP/g.json" "r['steps']"
	check_out "backends: the wheel's CUPTI 12.9 by its version" \
		"CUPTI 12\\.[0-9]+ +.*libcupti.so.12" env PROFTOP_CUPTI="$REAL" "$PROFTOP" backends
	# an activated venv: its wheels' CUPTIs are found; one that crashes in
	# cuptiGetVersion without a driver (13.2 does) is listed, not fatal
	venv=${REAL%/lib/python3*}
	check_out "backends with \$VIRTUAL_ENV: the wheels' CUPTIs listed" \
		"^ +\\(the CUDA wheels of \\\$VIRTUAL_ENV" env -u PROFTOP_CUPTI VIRTUAL_ENV="$venv" "$PROFTOP" backends
fi
done_testing
