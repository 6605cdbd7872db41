"""A store-like wait: a small key-value server (like a c10d TCPStore) and two
ranks with RANK and WORLD_SIZE in their environment. Rank 0 asks for the key
"ready" and waits in recv until it is set; rank 1, the one that would set it,
has exited. A launcher starts them all, reaps rank 1 and waits for the rest."""

import os
import select
import socket
import subprocess
import sys

import corpus_roles

WORLD_SIZE = 2


def store(listener):
    """Line protocol: 'SET key value' answers 'OK'; 'GET key' answers the value once the key is set."""
    store, waiting, clients = {}, [], [listener]
    while True:
        readable, _, _ = select.select(clients, [], [])
        for s in readable:
            if s is listener:
                clients.append(listener.accept()[0])
                continue
            line = s.recv(256).decode().strip()
            if not line:
                clients.remove(s)
                continue
            words = line.split()
            if words[0] == "SET":
                store[words[1]] = words[2]
                s.sendall(b"OK\n")
            elif words[0] == "GET":
                waiting.append((s, words[1]))
            for w in [w for w in waiting if w[1] in store]:
                w[0].sendall(store[w[1]].encode() + b"\n")
                waiting.remove(w)


def rank(port):
    me = int(os.environ["RANK"])
    if me == 1:
        sys.exit(1)  # the writer dies before it sets "ready"
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"GET ready\n")
    corpus_roles.publish({"r0": os.getpid(), "r0.main": os.getpid()}, part="rank0")
    conn.recv(256)


def launcher():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(WORLD_SIZE)
    port = listener.getsockname()[1]
    srv = os.fork()
    if srv == 0:
        store(listener)
        os._exit(0)
    listener.close()
    ranks = {}
    for r in range(WORLD_SIZE):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(WORLD_SIZE),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        ranks[r] = subprocess.Popen([sys.executable, __file__, "rank", str(port)], env=env)
    ranks[1].wait()
    corpus_roles.publish({"agent": os.getpid(), "agent.main": os.getpid(), "store": srv, "store.main": srv},
                         part="agent")
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        rank(int(sys.argv[2]))
    else:
        launcher()
