"""What the GPU cases share: every rank on cuda:0 as its own NCCL host (NCCL_HOSTID,
as ranks on different nodes; see facts of the project), the process group, and
the roles contract (../corpus_roles.py)."""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import corpus_roles  # noqa: E402


def start():
    rank = int(os.environ["RANK"])
    os.environ.setdefault("NCCL_HOSTID", "node%d" % rank)
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    warm = torch.ones(1024, device="cuda")
    dist.all_reduce(warm)
    torch.cuda.synchronize()
    return rank, torch, dist


def publish(rank, threads=()):
    """This rank's process and main thread, and any named threads ({name: native id})."""
    roles = {"r%d" % rank: os.getpid(), "r%d.main" % rank: threading.get_native_id()}
    for name, tid in threads:
        roles["r%d.%s" % (rank, name)] = tid
    corpus_roles.publish(roles, part="rank%d" % rank)
