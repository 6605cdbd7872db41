#!/usr/bin/env python3
"""NCCL's bootstrap root alone, without a GPU: does it wait on a silent connection?

ncclGetUniqueId starts the root (a thread of this process) on the address the id carries;
no GPU and no communicator are needed for that. Then, with --intruder=silent, a forked
child holding none of this process's descriptors connects and sends nothing; with
--intruder=none, nobody does. Then this process connects as a rank's bootstrap does and
sends the job's magic and the bootstrap socket type. A root that waits on the silent
connection never reads the rank's bytes; one that does not reads them and waits for the
rank's information. One JSON line on stdout once set up: {"pid", "root_address",
"intruder_pid"}; then it sleeps until killed (the caller diagnoses it).

  root_probe.py --nccl-lib PATH [--intruder silent|none]
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


def start_silent_intruder(family, address):
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
        os.write(ready_w, b"c")
        signal.pause()
        os._exit(0)
    os.close(ready_w)
    if os.read(ready_r, 1) != b"c":
        raise SystemExit(3)
    return pid


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nccl-lib", required=True)
    parser.add_argument("--intruder", choices=["silent", "none"], default="silent")
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
    intruder = start_silent_intruder(family, address) if args.intruder == "silent" else 0
    time.sleep(0.3)  # the root accepts the intruder first
    rank = socket.socket(family, socket.SOCK_STREAM)
    rank.connect(address)
    rank.sendall(raw[0:8] + struct.pack("=i", BOOTSTRAP_SOCKET_TYPE))
    print(json.dumps({"pid": os.getpid(), "root_address": "%s:%d" % address, "intruder_pid": intruder}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
