#!/usr/bin/env bash
# tests/gpu/run.sh - the GPU path for real, on a machine with an NVIDIA GPU
# and driver. It needs CUPTI's headers (CUDA_HOME, default /usr/local/cuda;
# else those of PyTorch's nvidia-* pip wheels are found through python3), and
# uses nvcc and a CUDA build of PyTorch when present (each part says SKIP
# when its tool is missing; at least one must run). Checks, each a line
# "ok ..." or "FAIL ...", and the exit status is 1 when one failed:
#
#  - `proftop backends` finds a CUPTI the driver runs, and says which;
#  - gpu_check.cu (nvcc): every kernel launched is recorded (runtime,
#    cuLaunchKernel, cuLaunchKernelEx with a cluster on sm_90+, a CUDA
#    graph), attributed to its op, none before its launch call (clock);
#    copies and memsets attributed; the probe never turned GPU tracing off;
#  - live: a kernel launched while the GPU stays busy is in a trace recorded
#    from the next second on (`record -p --duration 1`);
#  - PyTorch: a torch.compile'd model (Triton launches through the driver
#    API) has under 10% of its kernel time orphaned (no launch call); a
#    torch.profiler window in the middle of a run gets its own GPU events
#    while proftop records kernels in every step; 50 torch.profiler
#    start/stop cycles, and proftop still records after them;
#  - NCCL's profiler plugin in the probe: 50 all-reduces of one rank through
#    NCCL (nccl_check.py) are rows of an "nccl:" group, timed on the device;
#  - NVML against nvidia-smi: the memory total of the process's GPU 0
#    (CUDA_VISIBLE_DEVICES honoured: the last GPU when there are several),
#    and the process's own memory when nvidia-smi lists it.
#
# Environment: BUILD (build dir), CUDA_HOME, PYTHON (default python3),
# KEEP=1 keeps the work folder.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PY=${PYTHON:-python3}
out=$(mktemp -d "${TMPDIR:-/tmp}/proftop-gpu.XXXXXX")
[ "${KEEP:-0}" = 1 ] && echo "work folder: $out" || trap 'rm -rf "$out"' EXIT
export PROFTOP_SESSION_DIR="$out/sessions"
P=$BUILD/proftop
fails=0 ran=0

ok() { echo "ok   $*"; }
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
skip() { echo "SKIP $*"; }

# The log of a recorded job must not say that GPU tracing was turned off.
tracing_on() {
	if grep -h "GPU tracing off" "$@"; then fail "$1: the probe turned GPU tracing off"; else ok "$1: GPU tracing stayed on"; fi
}

# ---- the build, with CUPTI's headers ----
inc=$CUDA_HOME
if [ ! -f "$CUDA_HOME/include/cupti.h" ]; then
	# PyTorch's pip wheels: nvidia/cuda_cupti/include/cupti.h, cuda.h from
	# nvidia/cuda_runtime (or Triton's copy): a folder of links to both
	inc=$out/cuda
	mkdir -p "$inc/include"
	"$PY" - "$inc/include" <<'PY' || true
import glob, os, site, sys
dst = sys.argv[1]
roots = site.getsitepackages() + [site.getusersitepackages()]
want = {"cupti.h": None, "cuda.h": None}
for r in roots:
    for pat in ("nvidia/*/include", "nvidia/*/*/include", "triton/backends/nvidia/include"):
        for d in glob.glob(os.path.join(r, pat)):
            for f in os.listdir(d):
                p = os.path.join(dst, f)
                if not os.path.exists(p):
                    os.symlink(os.path.join(d, f), p)
PY
fi
if [ ! -f "$inc/include/cupti.h" ] || [ ! -f "$inc/include/cuda.h" ]; then
	fail "no CUPTI headers (cupti.h and cuda.h) in $CUDA_HOME/include or PyTorch's nvidia wheels"
	exit 1
fi
if ! make -s BUILD="$BUILD" CUDA_HOME="$inc" "$BUILD/proftop" "$BUILD/libproftop.so" >"$out/make.log" 2>&1; then
	cat "$out/make.log"
	fail "make"
	exit 1
fi
if nm -D "$BUILD/libproftop.so" | grep -q ' T cuptiActivityRegisterCallbacks'; then
	ok "libproftop.so built with the CUPTI headers of $inc"
else
	fail "libproftop.so was built without CUPTI (remove $BUILD/pic and retry)"
fi

# ---- backends ----
"$P" backends | tee "$out/backends.txt"
if grep -Eq '^cupti +process +available +CUPTI [0-9.]+ \(.*\), driver .*\(CUDA [0-9.]+\)' "$out/backends.txt"; then
	ok "backends: a CUPTI this driver runs, and the driver"
else
	fail "backends: no usable CUPTI"
fi

# ---- gpu_check.cu ----
NVCC=$CUDA_HOME/bin/nvcc
command -v "$NVCC" >/dev/null 2>&1 || NVCC=$(command -v nvcc || true)
if [ -n "$NVCC" ] && "$NVCC" -O2 -Iinclude -o "$out/gpu_check" tests/gpu/gpu_check.cu -lcuda \
	>"$out/nvcc.log" 2>&1; then
	ran=$((ran + 1))
	"$P" record -o "$out/check.json" --log "$out/check.log" -- "$out/gpu_check" 30
	rc=$?
	[ $rc -eq 0 ] && ok "gpu_check recorded (exit 0)" || fail "gpu_check under record: exit $rc"
	cat "$out/check.log"
	tracing_on "$out/check.log"
	n=$(sed -n 's/^gpu_check: launched //p' "$out/check.log")
	[ -n "$n" ] || fail "gpu_check did not say how many kernels it launched"
	"$P" report "$out/check.json" --json >"$out/check.rep.json" &&
		"$P" report "$out/check.json" | head -60
	"$PY" tests/gpu/check_trace.py "$out/check.json" "$out/check.rep.json" --kernels "${n:--1}" \
		--max-orphan-share 0 --ops check::gemm,check::driver,check::cluster,check::graph,check::copy \
		--every-step-from 1 --name "busy_kernel<4>" --no-mangled || fails=$((fails + 1))
	fw=$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print([m['gpu_total_ms'] for m in r['model_summary'] if m['name']=='Forward'][0])" "$out/check.rep.json")
	"$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)" "${fw:-0}" &&
		ok "the Forward phase has GPU time ($fw ms)" || fail "the Forward phase has no GPU time"

	# live: the kernel launched half-way shows up within about a second
	"$P" record -o "$out/live_all.json" --log "$out/live.log" -- "$out/gpu_check" 0 live \
		2>"$out/live.rec" &
	rec=$!
	for _ in $(seq 400); do
		grep -q "gpu_check: marker" "$out/live.log" 2>/dev/null && break
		sleep 0.05
	done
	pid=$(sed -n 's/^proftop: recording pid \([0-9]*\).*/\1/p' "$out/live.rec" | head -n 1)
	if [ -n "$pid" ] && grep -q "gpu_check: marker" "$out/live.log"; then
		"$P" record -p "$pid" --duration 1 -o "$out/live.json" >/dev/null 2>&1
		if "$PY" -c "
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
sys.exit(0 if any(e.get('name') == 'marker_kernel(float*)' for e in ev) else 1)" "$out/live.json"; then
			ok "live: a kernel launched on a busy GPU is in a trace that ends a second later"
		else
			fail "live: the marker kernel did not arrive within a second"
		fi
	else
		fail "live: the job did not start (see $out/live.log)"
	fi
	wait "$rec" || fail "live job under record: exit $?"
	tracing_on "$out/live.log"
else
	skip "gpu_check.cu: no nvcc (or it failed: $(tail -n 3 "$out/nvcc.log" 2>/dev/null))"
fi

# ---- PyTorch ----
if "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
	ran=$((ran + 1))
	for mode in compile kineto cycles; do
		"$P" record -o "$out/$mode.json" --log "$out/$mode.log" -- "$PY" tests/gpu/torch_check.py "$mode"
		rc=$?
		[ $rc -eq 0 ] && ok "torch $mode recorded (exit 0)" || fail "torch $mode under record: exit $rc"
		grep "torch_check:\|proftop:" "$out/$mode.log"
		tracing_on "$out/$mode.log"
		"$P" report "$out/$mode.json" --json >"$out/$mode.rep.json"
	done
	"$PY" tests/gpu/check_trace.py "$out/compile.json" "$out/compile.rep.json" \
		--max-orphan-share 0.10 --every-step-from 3 || fails=$((fails + 1))
	"$PY" tests/gpu/check_trace.py "$out/kineto.json" "$out/kineto.rep.json" \
		--max-orphan-share 0.10 --every-step-from 1 || fails=$((fails + 1))
	k=$(sed -n 's/^torch_check: kineto gpu events //p' "$out/kineto.log")
	if [ "${k:-0}" -gt 0 ]; then
		ok "torch.profiler's window got $k GPU events beside proftop"
	elif grep -q "could not subscribe to CUPTI" "$out/kineto.log" "$out/kineto.rep.json"; then
		echo "WARN torch.profiler got no GPU events: this torch's Kineto needs CUPTI's subscription, which proftop holds (said in a note)"
	else
		fail "torch.profiler's window got no GPU events, and nothing says why"
	fi
	grep -q "started collecting GPU activity" "$out/kineto.rep.json" &&
		ok "a note says torch.profiler's window shared CUPTI" ||
		echo "WARN no note of the torch.profiler window (this Kineto may not use the activity API through the dynamic linker)"
	"$PY" tests/gpu/check_trace.py "$out/cycles.json" "$out/cycles.rep.json" \
		--every-step-from 1 || fails=$((fails + 1))
	least=$(sed -n 's/^torch_check: cycles 50 least gpu events //p' "$out/cycles.log")
	[ -n "$least" ] && ok "50 torch.profiler cycles ran (fewest GPU events in one: $least)" ||
		fail "50 torch.profiler cycles did not finish"
else
	skip "PyTorch part: no CUDA build of torch for $PY"
fi

# ---- NCCL's profiler plugin (probe_nccl.c), one rank ----
if "$PY" -c "import torch, sys; import torch.distributed as d; sys.exit(0 if torch.cuda.is_available() and d.is_nccl_available() else 1)" 2>/dev/null; then
	NCCL_DEBUG=INFO "$P" record -o "$out/nccl.json" --log "$out/nccl.log" -- "$PY" tests/gpu/nccl_check.py
	rc=$?
	grep -h "nccl_check:\|PROFILER\|Profiler" "$out/nccl.log" | head -n 5
	"$P" report "$out/nccl.json" --json >"$out/nccl.rep.json"
	"$PY" - "$out/nccl.rep.json" "$rc" <<'PY' || fails=$((fails + 1))
import json, sys
rep = json.load(open(sys.argv[1]))
rows = [c for c in rep.get("collectives", []) if c["group"].startswith("nccl:")]
n = sum(c["rows"] for c in rows if c["op"] == "all_reduce")
ok = sys.argv[2] == "0" and n >= 50
print(("ok   " if ok else "FAIL ") + "NCCL's plugin: %d all_reduce rows in groups %s (exit %s)"
      % (n, sorted({c["group"] for c in rows}), sys.argv[2]))
sys.exit(0 if ok else 1)
PY
else
	skip "NCCL's profiler plugin: needs a CUDA build of PyTorch with NCCL"
fi

# ---- NVML against nvidia-smi ----
if command -v nvidia-smi >/dev/null 2>&1 && [ -x "$out/gpu_check" ]; then
	last=$(nvidia-smi --query-gpu=index --format=csv,noheader | tail -n 1 | tr -d ' ')
	uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$last" | tr -d ' ')
	total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i "$last" | tr -d ' ')
	CUDA_VISIBLE_DEVICES=$uuid "$P" record -o "$out/nvml.json" --log "$out/nvml.log" -- \
		"$out/gpu_check" 0 live &
	rec=$!
	sleep 6
	apps=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -i "$last")
	wait "$rec"
	"$PY" - "$out/nvml.json" "$total" "$apps" <<'PY' || fails=$((fails + 1))
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
total_mib = float(sys.argv[2])
c = [e for e in ev if e.get("ph") == "C" and e.get("tid") == "NVML GPU 0"]
def vals(name):
    return [e["args"]["value"] for e in c if e["name"] == name]
bad = 0
t = vals("GPU Memory Total bytes")
if t and abs(t[0] / 2**20 - total_mib) <= 1:
    print("ok   NVML GPU 0 is the process's GPU (CUDA_VISIBLE_DEVICES=<uuid>): %.0f MiB, as nvidia-smi" % (t[0] / 2**20))
else:
    print("FAIL NVML GPU 0 memory total %s MiB, nvidia-smi %s" % ([v / 2**20 for v in t[:1]], total_mib)); bad = 1
u = vals("GPU Util(NVML) %")
print(("ok   " if u and max(u) > 0 else "FAIL ") + "NVML utilization while busy: max %s%%" % (max(u) if u else None))
bad |= not (u and max(u) > 0)
pids = {e.get("pid") for e in c}
smi = {}
for line in sys.argv[3].splitlines():
    p = [x.strip() for x in line.split(",")]
    if len(p) == 2 and p[0].isdigit() and p[1].replace(".", "").isdigit():
        smi[int(p[0])] = float(p[1])
m = vals("GPU Memory(Process) bytes")
pid = next(iter(pids)) if pids else None
if pid in smi and m:
    ok = abs(max(m) / 2**20 - smi[pid]) <= max(64, 0.1 * smi[pid])
    print(("ok   " if ok else "FAIL ") + "process memory %.0f MiB, nvidia-smi %.0f MiB" % (max(m) / 2**20, smi[pid]))
    bad |= not ok
elif pid in smi:
    print("FAIL nvidia-smi lists the process, proftop has no process memory"); bad = 1
else:
    print("SKIP process memory: nvidia-smi does not list the process (a container?)")
sys.exit(bad)
PY
else
	skip "NVML against nvidia-smi: needs nvidia-smi and gpu_check"
fi

if [ $ran -eq 0 ]; then
	fail "neither gpu_check.cu (nvcc) nor PyTorch could run: nothing was tested on the GPU"
fi
if [ $fails -ne 0 ]; then
	echo "gpu checks: $fails failed"
	exit 1
fi
echo "gpu checks passed"
