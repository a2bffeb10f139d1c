"""How the distributed test scripts leave (ddp.py, collectives.py, fsdp.py).

leave(): every rank leaves together (a rank that exits while its peer still
tears down gloo's connections can make the peer's teardown fail), then the
exit handlers run and the process ends without the interpreter's teardown:
torch 2.x's gloo can abort a rank there ("terminate called without an
active exception": a C++ thread of its own still joinable at exit; about 1
run in 10 here, with or without proftop)."""
import atexit
import os
import sys

import torch.distributed as dist


def leave():
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)
