"""The seed's PP cycle with PyTorch pieces only. Rank 0 posts an NCCL send, then waits
for the GPU inside a native call that keeps the GIL (ctypes.PyDLL: cuCtxSynchronize).
Its second Python thread would write the store key that rank 1 waits for before it
posts the matching receive, but cannot get the GIL. Nobody moves."""

import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpu_common  # noqa: E402

rank, torch, dist = gpu_common.start()
store = dist.distributed_c10d._get_default_store()
payload = torch.ones(16 * 1024 * 1024, device="cuda")
# Connect the pair first: the scenario's send must wait for a receive, not for a connection.
if rank == 0:
    dist.send(payload, dst=1)
else:
    dist.recv(payload, src=0)
torch.cuda.synchronize()
dist.barrier()

if rank == 0:
    work = dist.isend(payload, dst=1)  # completes only when rank 1 posts its receive
    helper_tid = []

    def tell_rank_1():
        helper_tid.append(threading.get_native_id())
        time.sleep(0.5)  # by now the main thread holds the GIL in the driver
        store.set("go", "1")  # never reached: the GIL never comes back

    helper = threading.Thread(target=tell_rank_1, name="store-writer")
    helper.start()
    while not helper_tid:
        time.sleep(0.01)
    gpu_common.publish(rank, [("writer", helper_tid[0])])
    libcuda = ctypes.PyDLL("libcuda.so.1")  # PyDLL: the call keeps the GIL
    libcuda.cuCtxSynchronize()
else:
    gpu_common.publish(rank)
    store.wait(["go"])
    dist.recv(payload, src=0)
torch.cuda.synchronize()
print("rank %d: done (no hang)" % rank, flush=True)
