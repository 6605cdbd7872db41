#!/usr/bin/env python3
"""NCCL's bootstrap root alone, without a GPU: what does a connection that is no rank do to it?

ncclGetUniqueId starts the root (a thread of this process) on the address the id carries;
no GPU and no communicator are needed for that. Then a forked child holding none of this
process's descriptors connects to it: --intruder=silent sends nothing and stays; closed
closes at once; wrong-magic sends 8 bytes that are not the job's magic and stays; none:
nobody connects. Then this process connects as a rank's bootstrap does and sends the job's
magic and the bootstrap socket type. A root that waits on the silent connection never reads
the rank's bytes; one that has ended (an error on the intruder's connection ends its thread
and closes its listening socket) refuses the rank; one that went on reads them and waits for
the rank's information.

Two JSON lines on stdout: once set up {"pid", "root_address", "intruder_pid", "rank_connect"
("connected" or "refused")}; 1.5 s later {"rank_bytes_unread"}: the bytes of the rank's
connection the root has not read (from /proc/self/net/tcp{,6}; null when the rank was
refused or the root's end is gone). Then it sleeps until killed (the caller diagnoses it).

  root_probe.py --nccl-lib PATH [--intruder silent|closed|wrong-magic|none]
Exit codes: 2 usage, 3 the library could not make an id (or its root is not IPv4/IPv6).
"""
import argparse
import ctypes
import json
import os
import signal
import socket
import struct
import sys
import time

BOOTSTRAP_SOCKET_TYPE = 1  # enum ncclSocketType: ncclSocketTypeBootstrap, every tag from v2.16.2-1


def root_address(raw):
    """struct ncclBootstrapHandle: an 8-byte magic, then the root's sockaddr."""
    family = struct.unpack_from("=H", raw, 8)[0]
    port = struct.unpack_from("!H", raw, 10)[0]
    if family == socket.AF_INET:
        return socket.AF_INET, (socket.inet_ntop(socket.AF_INET, raw[12:16]), port)
    if family == socket.AF_INET6:
        return socket.AF_INET6, (socket.inet_ntop(socket.AF_INET6, raw[16:32]), port)
    return None, None


def start_intruder(family, address, mode):
    """A child that connects to the root and then, by mode, stays silent, closes, or sends a
    wrong magic and stays. Returns its pid once it is connected (a closed one is reaped)."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        for fd in range(3, 1024):  # a foreign process holds none of the job's descriptors
            if fd != ready_w:
                try:
                    os.close(fd)
                except OSError:
                    pass
        s = socket.socket(family, socket.SOCK_STREAM)
        s.connect(address)
        if mode == "closed":
            s.close()
            os.write(ready_w, b"c")
            os._exit(0)
        if mode == "wrong-magic":
            s.sendall(b"hangbenc")
        os.write(ready_w, b"c")
        signal.pause()
        os._exit(0)
    os.close(ready_w)
    if os.read(ready_r, 1) != b"c":
        raise SystemExit(3)
    if mode == "closed":
        os.waitpid(pid, 0)
    return pid


def unread_bytes(root_port, rank_port):
    """rx_queue of the root's end of the rank's connection (local port root_port, remote
    port rank_port), or None when no such socket is listed."""
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, queues = fields[1], fields[2], fields[4]
            if int(local.split(":")[1], 16) == root_port and int(remote.split(":")[1], 16) == rank_port:
                return int(queues.split(":")[1], 16)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nccl-lib", required=True)
    parser.add_argument("--intruder", choices=["silent", "closed", "wrong-magic", "none"], default="silent")
    args = parser.parse_args()
    try:
        nccl = ctypes.CDLL(args.nccl_lib)
    except OSError as e:
        print("root_probe: cannot load %s: %s" % (args.nccl_lib, e), file=sys.stderr)
        return 3
    uid = ctypes.create_string_buffer(128)
    rc = nccl.ncclGetUniqueId(uid)
    if rc != 0:
        print("root_probe: ncclGetUniqueId returned %d" % rc, file=sys.stderr)
        return 3
    raw = uid.raw
    family, address = root_address(raw)
    if family is None:
        print("root_probe: the id's root is neither IPv4 nor IPv6", file=sys.stderr)
        return 3
    intruder = start_intruder(family, address, args.intruder) if args.intruder != "none" else 0
    time.sleep(0.3)  # the root accepts the intruder first
    rank = socket.socket(family, socket.SOCK_STREAM)
    try:
        rank.connect(address)
        rank.sendall(raw[0:8] + struct.pack("=i", BOOTSTRAP_SOCKET_TYPE))
        connected = "connected"
    except ConnectionRefusedError:
        connected = "refused"
    print(json.dumps({"pid": os.getpid(), "root_address": "%s:%d" % address, "intruder_pid": intruder,
                      "rank_connect": connected}), flush=True)
    time.sleep(1.5)
    unread = unread_bytes(address[1], rank.getsockname()[1]) if connected == "connected" else None
    print(json.dumps({"rank_bytes_unread": unread}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
