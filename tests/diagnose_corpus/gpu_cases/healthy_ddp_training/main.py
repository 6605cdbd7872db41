"""A healthy job: two ranks all-reducing in a loop, with a short pause per step."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_common  # noqa: E402

rank, torch, dist = gpu_common.start()
x = torch.ones(1 << 20, device="cuda")
for step in range(100000):
    dist.all_reduce(x)
    torch.cuda.synchronize()
    if step == 20:
        gpu_common.publish(rank)
    time.sleep(0.002)
