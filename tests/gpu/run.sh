#!/usr/bin/env bash
# tests/gpu/run.sh - the whole GPU path for real, on a machine with an NVIDIA
# GPU, driver, CUDA toolkit (nvcc, CUPTI) and python3: builds proftop with
# the CUDA headers, builds tests/gpu/gpu_check.cu, records it with
# `proftop record`, and checks the report: kernels present with demangled
# names, plausible kernel-busy utilization, kernel time attributed to the op
# and phase that launched it, copies and memsets seen, no "GPU tracing off".
# Optional: PYTORCH=1 also records a small PyTorch model (needs torch+CUDA).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
out=$(mktemp -d "${TMPDIR:-/tmp}/proftop-gpu.XXXXXX")
trap 'rm -rf "$out"' EXIT
export PROFTOP_SESSION_DIR="$out/sessions"

make -s BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" "$BUILD/proftop" "$BUILD/libproftop.so"
"$BUILD/proftop" backends
"$BUILD/proftop" backends | grep -E '^cupti +process +available' >/dev/null ||
	{ echo "FAIL: cupti not available here"; exit 1; }
"$CUDA_HOME/bin/nvcc" -O2 -Iinclude -o "$out/gpu_check" tests/gpu/gpu_check.cu
"$BUILD/proftop" record -o "$out/trace.json" -- "$out/gpu_check" 2>"$out/stderr" || true
cat "$out/stderr"
if grep -q "GPU tracing off" "$out/stderr" "$out"/*.log 2>/dev/null; then
	echo "FAIL: the probe turned GPU tracing off"; exit 1
fi
"$BUILD/proftop" report "$out/trace.json" --json >"$out/report.json"
"$BUILD/proftop" report "$out/trace.json" | head -80
python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: fails.append(what)
def rows(key):
    v = r.get(key)
    return v if isinstance(v, list) else (v or {}).get("rows", [])
kernels = rows("kernels")
names = [k.get("name", "") for k in kernels]
check(any("busy_kernel<4>" in n for n in names), "kernel present, demangled (busy_kernel<4>...)")
check(not any(n.startswith("_Z") for n in names), "no mangled kernel names")
dev = rows("device")
utils = [d.get("utilization_pct", 0) for d in dev if d.get("device", -1) >= 0]
check(bool(utils) and 5 <= max(utils) <= 100, "kernel-busy utilization plausible: %s" % utils)
ops = {o.get("name"): o for o in rows("operators")}
g = ops.get("check::gemm", {})
check(g.get("gpu_total_ms", 0) > 0, "kernel time attributed to op check::gemm")
c = ops.get("check::copy", {})
check(c.get("gpu_total_ms", 0) > 0, "copy/memset time attributed to op check::copy")
ms = {m.get("name"): m for m in rows("model_summary")}
fw = ms.get("Forward", {})
check(fw.get("gpu_total_ms", fw.get("gpu_ms", 0)) > 0, "Forward phase has GPU time")
sys.exit(1 if fails else 0)
PY
if [ "${PYTORCH:-0}" = 1 ]; then
	cat >"$out/torch_check.py" <<'PY'
import torch
m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
x = torch.randn(256, 1024, device="cuda")
for _ in range(20):
    with torch.cuda.nvtx.range("Forward"):
        loss = m(x).sum()
    with torch.cuda.nvtx.range("Backward"):
        loss.backward()
    opt.step(); opt.zero_grad()
torch.cuda.synchronize()
PY
	"$BUILD/proftop" record -o "$out/torch.json" -- python3 "$out/torch_check.py"
	"$BUILD/proftop" report "$out/torch.json" | head -60
fi
echo "gpu checks passed"
