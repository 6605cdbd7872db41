"""A rank that leaves the loop: rank 1 goes to sleep outside NCCL while rank 0 waits
in its all-reduce for it."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_common  # noqa: E402

rank, torch, dist = gpu_common.start()
gpu_common.publish(rank)
if rank == 1:
    time.sleep(3600)  # a rank stuck elsewhere: reading a file, waiting on a lock, ...
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("rank %d: done (no hang)" % rank, flush=True)
