"""Ranks that call different collectives: rank 0 an all-reduce, rank 1 a broadcast,
of the same size. The Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE and the dump pipe,
set by the launch) shows which."""

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
    dist.broadcast(x, src=1)
torch.cuda.synchronize()
print("rank %d: done (no hang)" % rank, flush=True)
