"""A launcher (like torchrun's agent) starts a rendezvous server and three ranks
with RANK and WORLD_SIZE in their environment. Ranks 0 and 1 check in with the
server and wait in recv for everyone; rank 2 exits at once (a crash before the
barrier), and the launcher reaps it and goes on waiting for the others. The
server waits for the third arrival that never comes."""

import os
import socket
import subprocess
import sys

import corpus_roles

WORLD_SIZE = 3


def server(listener):
    arrived = []
    while len(arrived) < WORLD_SIZE:
        conn, _ = listener.accept()
        conn.recv(16)
        arrived.append(conn)
    for conn in arrived:
        conn.sendall(b"go")


def rank(port):
    me = int(os.environ["RANK"])
    if me == 2:
        sys.exit(1)
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"%d" % me)
    corpus_roles.publish({"r%d" % me: os.getpid(), "r%d.main" % me: os.getpid()}, part="rank%d" % me)
    conn.recv(16)  # the barrier's release


def launcher():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(WORLD_SIZE)
    port = listener.getsockname()[1]
    srv = os.fork()
    if srv == 0:
        server(listener)
        os._exit(0)
    listener.close()
    ranks = {}
    for r in range(WORLD_SIZE):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(WORLD_SIZE),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        ranks[r] = subprocess.Popen([sys.executable, __file__, "rank", str(port)], env=env)
    ranks[2].wait()
    corpus_roles.publish({"agent": os.getpid(), "agent.main": os.getpid(), "server": srv, "server.main": srv},
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
