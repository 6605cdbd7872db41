"""Rank 0 of two starts its peer itself (as NCCL's own tests and this project's
nccl_peer_death do, with no launcher), talks to it over TCP, and reaps it when it
dies. Then it polls in short sleeps for an error its library never reports (NCCL
2.26.2 to 2.27.7 drop a failed network operation and return success), never
reading the connection again: only the connection, closed from the far end, says
that its peer is gone."""

import os
import socket
import subprocess
import sys
import time

import corpus_roles


def peer(port):
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"ready")
    conn.recv(16)
    os._exit(9)  # dies with its connection open: the kernel closes it


def rank0():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    env = dict(os.environ, RANK="1", WORLD_SIZE="2")
    child = subprocess.Popen([sys.executable, __file__, "peer", str(listener.getsockname()[1])], env=env)
    conn, _ = listener.accept()
    listener.close()
    conn.recv(16)
    conn.sendall(b"go")
    child.wait()
    corpus_roles.publish({"r0": os.getpid(), "r0.main": os.getpid()})
    while True:  # the error never comes
        time.sleep(0.01)


if __name__ == "__main__":
    if sys.argv[1:2] == ["peer"]:
        peer(int(sys.argv[2]))
    else:
        rank0()
