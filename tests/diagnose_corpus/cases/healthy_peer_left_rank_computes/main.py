"""Rank 0 of two whose peer finished first and left (its connection closed from
the far end) while rank 0 still computes its own last step: no rank is missing
from anything rank 0 waits for."""

import os
import socket
import subprocess
import sys

import corpus_roles


def peer(port):
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"done")
    os._exit(0)


def rank0():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    env = dict(os.environ, RANK="1", WORLD_SIZE="2")
    child = subprocess.Popen([sys.executable, __file__, "peer", str(listener.getsockname()[1])], env=env)
    conn, _ = listener.accept()
    listener.close()
    conn.recv(16)
    child.wait()
    corpus_roles.publish({"r0": os.getpid(), "r0.main": os.getpid()})
    total = 0
    while True:  # its own work, on the CPU
        total = (total * 31 + 7) % 1000003


if __name__ == "__main__":
    if sys.argv[1:2] == ["peer"]:
        peer(int(sys.argv[2]))
    else:
        rank0()
