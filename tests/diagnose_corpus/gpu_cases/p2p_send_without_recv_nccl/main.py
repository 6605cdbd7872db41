"""A send without its receive: rank 0 sends to rank 1, which calls an all-reduce
instead. NCCL connects a send's pair on first use, so rank 0 waits in that
connection for a rank that never makes it; rank 1's all-reduce waits for rank 0."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_common  # noqa: E402

rank, torch, dist = gpu_common.start()
gpu_common.publish(rank)
x = torch.ones(1 << 20, device="cuda")
if rank == 0:
    dist.send(x, dst=1)
else:
    dist.all_reduce(x)
torch.cuda.synchronize()
print("rank %d: done (no hang)" % rank, flush=True)
