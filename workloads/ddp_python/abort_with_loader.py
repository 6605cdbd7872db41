"""A plain PyTorch DDP job that trains from a real DataLoader and then aborts its
process group, the way a job's error handler does.

The loader's workers are forked (multiprocessing_context="fork") and persistent,
and they are started after NCCL's communicator exists, so each inherits the
proxy's sockets. Over NCCL 2.17.1 (no shutdown() in ncclSocketClose) the abort
then waits in commFree for as long as the workers live: they hold a connection
the proxy thread polls.

    python3 abort_with_loader.py [--device cuda|cpu] [--steps N]

Prints one JSON line {"pid", "workers", "event": "abort_begins"} when the abort
starts and {"event": "abort_done", "seconds"} if it ever returns. The Flight
Recorder is on when TORCH_NCCL_TRACE_BUFFER_SIZE > 0 (the environment's choice).
"""
import argparse
import json
import os
import socket
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset


class Numbers(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, index):
        return torch.full((16,), float(index % 97))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(model, loader, device, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step, batch in enumerate(loader):
        loss = model(batch.to(device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step + 1 >= steps:
            return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    backend = "nccl" if args.device == "cuda" else "gloo"
    device = torch.device("cuda:0" if args.device == "cuda" else "cpu")
    dist.init_process_group(backend, rank=0, world_size=1)
    # DDP's first broadcast creates the communicator: the workers below are forked after it.
    model = DistributedDataParallel(torch.nn.Linear(16, 16).to(device))
    loader = DataLoader(Numbers(), batch_size=32, num_workers=2, persistent_workers=True,
                        multiprocessing_context="fork")
    train(model, loader, device, args.steps)
    workers = [w.pid for w in loader._iterator._workers]
    print(json.dumps({"event": "abort_begins", "pid": os.getpid(), "workers": workers}), flush=True)
    started = time.monotonic()
    dist.distributed_c10d._abort_process_group()
    print(json.dumps({"event": "abort_done", "seconds": round(time.monotonic() - started, 3)}), flush=True)


if __name__ == "__main__":
    main()
