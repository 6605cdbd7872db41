"""NCCL's real bootstrap root held up by a process that is no rank.

The process loads NCCL (HB_CORPUS_NCCL_LIB: its host side only, no GPU) and makes a
unique id, which starts the bootstrap root thread listening on the address the id
carries. A child that holds none of the parent's descriptors connects there and says
nothing; then the parent connects as a rank would and sends the job's magic. The root
accepted the silent connection first and waits for its magic: the rank's connection is
never accepted. Roles: p (the root's process), p.root (its bootstrap root thread),
intruder (the child).
"""
import ctypes
import os
import signal
import socket
import struct
import time

import corpus_roles


def root_thread(pid, before):
    """The thread NCCL started in ncclGetUniqueId: the one not there before."""
    after = set(int(t) for t in os.listdir("/proc/%d/task" % pid))
    new = sorted(after - before)
    return new[0] if new else None


def main():
    nccl = ctypes.CDLL(os.environ["HB_CORPUS_NCCL_LIB"])
    before = set(int(t) for t in os.listdir("/proc/self/task"))
    uid = ctypes.create_string_buffer(128)
    if nccl.ncclGetUniqueId(uid) != 0:
        raise SystemExit("ncclGetUniqueId failed")
    raw = uid.raw
    # struct ncclBootstrapHandle: uint64 magic, then the root's sockaddr (IPv4 here).
    family = struct.unpack_from("=H", raw, 8)[0]
    if family != socket.AF_INET:
        raise SystemExit("the unique id's root is not IPv4 (family %d)" % family)
    port = struct.unpack_from("!H", raw, 10)[0]
    address = socket.inet_ntoa(raw[12:16])

    ready_r, ready_w = os.pipe()
    intruder = os.fork()
    if intruder == 0:
        os.close(ready_r)
        for fd in range(3, 256):  # a foreign process holds none of the job's descriptors
            if fd != ready_w:
                try:
                    os.close(fd)
                except OSError:
                    pass
        s = socket.create_connection((address, port))
        os.write(ready_w, b"c")
        signal.pause()
        os._exit(0)
    os.close(ready_w)
    os.read(ready_r, 1)
    time.sleep(0.3)  # the root accepts it and starts waiting for its magic

    rank = socket.create_connection((address, port))
    rank.sendall(raw[0:8])  # the job's magic, as a rank's bootstrap connection sends it
    corpus_roles.publish({"p": os.getpid(), "p.root": root_thread(os.getpid(), before), "intruder": intruder})
    while True:
        time.sleep(1)


main()
