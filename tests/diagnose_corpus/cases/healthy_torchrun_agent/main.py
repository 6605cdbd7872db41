"""A torchrun-like agent: it waits in waitpid on its two live workers (RANK and
WORLD_SIZE in their environment), which do their work in short sleeps."""

import os
import subprocess
import sys
import time

import corpus_roles

if sys.argv[1:2] == ["worker"]:
    rank = int(os.environ["RANK"])
    corpus_roles.publish({"r%d" % rank: os.getpid(), "r%d.main" % rank: os.getpid()}, part="rank%d" % rank)
    while True:
        time.sleep(0.05)
        sum(range(10000))
else:
    workers = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
        workers.append(subprocess.Popen([sys.executable, __file__, "worker"], env=env))
    corpus_roles.publish({"agent": os.getpid(), "agent.main": os.getpid()}, part="agent")
    os.waitpid(workers[0].pid, 0)
