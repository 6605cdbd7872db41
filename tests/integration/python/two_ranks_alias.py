"""Two ranks joined by a TCP connection, as NCCL's Socket transport joins ranks on
one host (a different NCCL_HOSTID per rank): rank 0 forks a worker after the
connection exists (a DataLoader worker forked after init), then closes its own end
with close() alone (NCCL before 2.18.1). Rank 1 waits in poll for an EOF that never
comes: the worker still holds rank 0's end. The launcher prints the pids as JSON.

  python3 two_ranks_alias.py            # the launcher
  python3 two_ranks_alias.py rank 1     # rank 1: listens, prints its port, waits for EOF
  python3 two_ranks_alias.py rank 0 P   # rank 0: connects to P, forks the worker, closes
"""
import json
import os
import select
import socket
import subprocess
import sys
import time


def rank1():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    print(listener.getsockname()[1], flush=True)
    conn, _ = listener.accept()
    listener.close()
    waiter = select.poll()
    waiter.register(conn.fileno(), select.POLLIN)
    while True:
        waiter.poll()  # EOF would end it; the worker's duplicate keeps it away
        if not conn.recv(1):
            return


def rank0(port):
    conn = socket.create_connection(("127.0.0.1", port))
    worker = os.fork()
    if worker == 0:
        while os.getppid() != 1:  # lives as long as its rank, like a DataLoader worker
            time.sleep(0.2)
        os._exit(0)
    fd = conn.detach()
    os.close(fd)  # close() alone: not the last reference, nothing reaches rank 1
    print(worker, flush=True)
    while True:  # the rank's teardown goes on elsewhere
        time.sleep(1)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "rank":
        return rank1() if sys.argv[2] == "1" else rank0(int(sys.argv[3]))
    me = os.path.abspath(__file__)
    one = subprocess.Popen([sys.executable, me, "rank", "1"], stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, RANK="1"))
    port = int(one.stdout.readline())
    zero = subprocess.Popen([sys.executable, me, "rank", "0", str(port)], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, RANK="0"))
    worker = int(zero.stdout.readline())
    print(json.dumps({"rank0": zero.pid, "rank1": one.pid, "worker": worker}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
