"""torch_check.py - PyTorch jobs for tests/gpu/run.sh, run under `proftop record`
(the zero-code helper marks steps and phases). Prints one "torch_check: ..."
line per fact run.sh checks.

    python3 torch_check.py compile   a torch.compile'd MLP: its Triton kernels are
                                     launched with cuLaunchKernel (driver API)
    python3 torch_check.py kineto    40 steps, a torch.profiler window over steps
                                     12..24 with CUDA activities
    python3 torch_check.py cycles    50 torch.profiler start/stop cycles, a step each
"""
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "compile"
dev = "cuda"
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.GELU(), torch.nn.LayerNorm(2048),
    torch.nn.Linear(2048, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(512, 1024, device=dev)
y = torch.randint(0, 10, (512,), device=dev)
loss_fn = torch.nn.CrossEntropyLoss()
if mode == "compile":
    model = torch.compile(model)


def step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


def gpu_events(prof):
    from torch.autograd import DeviceType
    return sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA)


if mode == "compile":
    for _ in range(30):
        step()
    torch.cuda.synchronize()
    print("torch_check: steps 30", flush=True)
elif mode == "kineto":
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    for i in range(40):
        if i == 12:
            prof.start()
        if i == 24:
            torch.cuda.synchronize()
            prof.stop()
            print("torch_check: kineto gpu events %d" % gpu_events(prof), flush=True)
        step()
    torch.cuda.synchronize()
    print("torch_check: steps 40", flush=True)
elif mode == "cycles":
    from torch.profiler import ProfilerActivity, profile
    least = None
    for i in range(50):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        n = gpu_events(prof)
        least = n if least is None else min(least, n)
    for _ in range(5):  # after the last cycle: proftop still records
        step()
    torch.cuda.synchronize()
    print("torch_check: cycles 50 least gpu events %d" % least, flush=True)
    print("torch_check: steps 55", flush=True)
