"""tests/gpu/nccl_check.py - all-reduces through NCCL on the GPU, one rank
(a machine of one GPU), with no proftop import, for tests/gpu/run.sh: under
`proftop record` (which sets NCCL_PROFILER_PLUGIN) proftop's plugin in the
probe records each one with its kernel's timing. Prints
"nccl_check: nccl N all-reduces, M ms"."""
import os
import time

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29581")
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(4 << 20, device="cuda")
n = 50
torch.cuda.synchronize()
t0 = time.monotonic()
for _ in range(n):
    dist.all_reduce(x)
torch.cuda.synchronize()
print("nccl_check: nccl %d all-reduces, %.2f ms" % (n, (time.monotonic() - t0) * 1e3), flush=True)
dist.destroy_process_group()
