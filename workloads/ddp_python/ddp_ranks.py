"""A plain PyTorch DDP job at any world size, started by torchrun, that trains from
a real DataLoader whose forked, persistent workers start after NCCL's communicator
exists, then aborts its process group as a job's error handler does.

    torchrun --standalone --nproc-per-node 4 ddp_ranks.py --placement shared-gpu

--placement shared-gpu puts every rank on cuda:0 and gives each its own NCCL host
(NCCL_HOSTID, unless the environment sets one), so NCCL joins the ranks through
its network transport, as ranks on different nodes; gpu-per-rank uses
cuda:LOCAL_RANK. The NCCL under test is whatever the process loads: torch's own,
or a build put first with LD_PRELOAD (with the compat shim; see
workloads/ddp_abort/README.md).

Speaks hangbench's phase protocol (workloads/common/phase.hpp) when
HANGBENCH_PHASE_FILE is set: init_done, work_done, teardown_begin, teardown_end,
and the metrics placement, world_size, nccl_hostid, nccl_transport (from
NCCL_DEBUG=INFO output routed to the trial folder), worker_pids, allreduce_correct
and abort_s. Exit codes as every workload's: 0 done, 1 the all-reduce check
failed, 2 usage, 3 no GPU or no NCCL.
"""
import argparse
import json
import os
import re
import socket
import sys
import time

PLACEMENTS = ("gpu-per-rank", "shared-gpu")


def emit(body):
    """One phase-protocol line, written with a single write() on O_APPEND."""
    path = os.environ.get("HANGBENCH_PHASE_FILE")
    if not path:
        return
    body = dict(body, t=time.time(), pid=os.getpid(), rank=int(os.environ.get("RANK", "-1")),
                host=socket.gethostname())
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, (json.dumps(body, separators=(",", ":")) + "\n").encode())
    finally:
        os.close(fd)


def phase(name):
    emit({"phase": name})


def metric(name, value):
    emit({"metric": name, "value": value})


def claim_nccl_host(placement, rank):
    """Shared GPU: one NCCL host per rank (the user's NCCL_HOSTID wins)."""
    if os.environ.get("NCCL_HOSTID"):
        return os.environ["NCCL_HOSTID"]
    if placement != "shared-gpu":
        return ""
    os.environ["NCCL_HOSTID"] = f"hangbench-rank{rank}"
    return os.environ["NCCL_HOSTID"]


def route_nccl_debug_log(rank):
    """NCCL_DEBUG set, no NCCL_DEBUG_FILE: NCCL's log goes to the trial folder."""
    trial_dir = os.environ.get("HANGBENCH_TRIAL_DIR", "")
    if not os.environ.get("NCCL_DEBUG") or os.environ.get("NCCL_DEBUG_FILE") or not trial_dir:
        return ""
    path = os.path.join(trial_dir, f"nccl-debug.rank{rank}.log")
    os.environ["NCCL_DEBUG_FILE"] = path
    return path


def nccl_transports(path):
    """The "via X" transports of NCCL's channel lines, as workloads/common/nccl_debug_log reads them."""
    found = set()
    try:
        with open(path, errors="replace") as log:
            for line in log:
                if "NCCL INFO" in line and "Channel" in line:
                    match = re.search(r" via (\S+)\s*$", line)
                    if match:
                        found.add(match.group(1))
    except OSError:
        pass
    return " ".join(sorted(found)) or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placement", default="gpu-per-rank", choices=PLACEMENTS)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    host = claim_nccl_host(args.placement, rank)  # before torch loads NCCL
    debug_log = route_nccl_debug_log(rank)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")

    import torch  # noqa: E402 (after the NCCL environment is set)
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, Dataset

    class Numbers(Dataset):
        def __len__(self):
            return 1 << 20

        def __getitem__(self, index):
            return torch.full((16,), float(index % 97))

    if not torch.cuda.is_available():
        print(f"ddp_ranks rank {rank}: no CUDA device", file=sys.stderr)
        return 3
    if args.placement == "gpu-per-rank" and local_world > torch.cuda.device_count():
        print(f"ddp_ranks rank {rank}: {local_world} ranks on this node but {torch.cuda.device_count()} GPU(s); "
              "use --placement shared-gpu", file=sys.stderr)
        return 2
    device = torch.device("cuda", 0 if args.placement == "shared-gpu" else local_rank)
    torch.cuda.set_device(device)
    metric("placement", args.placement)
    metric("world_size", world)
    if host:
        metric("nccl_hostid", host)
    metric("nccl_version", ".".join(str(v) for v in torch.cuda.nccl.version()))

    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    # DDP's first broadcast creates the communicator: the workers below are forked after it.
    model = DistributedDataParallel(torch.nn.Linear(16, 16).to(device), device_ids=[device.index])
    phase("init_done")
    loader = DataLoader(Numbers(), batch_size=32, num_workers=args.workers, persistent_workers=True,
                        multiprocessing_context="fork")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step, batch in enumerate(loader):
        loss = model(batch.to(device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step + 1 >= args.steps:
            break
    check = torch.full((1,), float(rank + 1), device=device)
    dist.all_reduce(check)
    correct = abs(check.item() - world * (world + 1) / 2) < 1e-3
    phase("work_done")
    metric("allreduce_correct", 1.0 if correct else 0.0)
    if debug_log:
        metric("nccl_transport", nccl_transports(debug_log))
    metric("worker_pids", " ".join(str(w.pid) for w in loader._iterator._workers))

    # Every rank waits here, through the store (host side, no NCCL), until all have seen
    # their check's result: a rank that aborted while a peer's last all-reduce still needed
    # its proxy left that peer spinning in it (seen on the H200, 2026-12-04: 3 of 20 trials
    # of a fixed build, the other ranks short of work_done).
    store = dist.distributed_c10d._get_default_store()
    store.add("hangbench_work_done", 1)
    while store.add("hangbench_work_done", 0) < world:
        time.sleep(0.005)
    phase("teardown_begin")
    started = time.monotonic()
    dist.distributed_c10d._abort_process_group()
    metric("abort_s", round(time.monotonic() - started, 4))
    phase("teardown_end")
    sys.stdout.flush()
    os._exit(0 if correct else 1)  # no interpreter teardown: what is measured ends at teardown_end


if __name__ == "__main__":
    sys.exit(main())
