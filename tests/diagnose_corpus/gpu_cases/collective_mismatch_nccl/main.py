"""Ranks that call different operations: rank 0 an all-reduce, rank 1 a send to rank 0
(an all-reduce beside a broadcast of the same size completed on the H100: NCCL does not
check that ranks agree). The Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE and the dump
pipe, set by the launch) shows which."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_common  # noqa: E402

rank, torch, dist = gpu_common.start()
gpu_common.publish(rank)
x = torch.ones(1 << 20, device="cuda")
if rank == 0:
    dist.all_reduce(x)
else:
    dist.send(x, dst=0)
torch.cuda.synchronize()
print("rank %d: done (no hang)" % rank, flush=True)
