"""A Python process hung the way a rank with DataLoader workers hangs, for diagnose's tests.

The main thread waits in recv() for a peer that never writes; a forked child
(the "worker") holds the other end of the socket pair and sleeps in a Python
loop. With --spin a second thread loops in pure Python and so holds the GIL.
Prints one JSON line {"pid", "child", "main_tid", "spin_tid"} once all of it stands.
"""
import json
import os
import socket
import sys
import threading
import time


def _worker_loop(sock):
    while True:
        time.sleep(3600)


def spin_forever(ready):
    ready.set()
    while True:
        pass


def wait_for_peer(sock):
    return sock.recv(1)


def main():
    ours, theirs = socket.socketpair()
    child = os.fork()
    if child == 0:
        _worker_loop(theirs)
    spin_tid = 0
    if "--spin" in sys.argv:
        ready = threading.Event()
        spinner = threading.Thread(target=spin_forever, args=(ready,), name="spinner", daemon=True)
        spinner.start()
        ready.wait()
        spin_tid = spinner.native_id
    report = {"pid": os.getpid(), "child": child, "main_tid": threading.get_native_id(), "spin_tid": spin_tid}
    print(json.dumps(report), flush=True)
    wait_for_peer(ours)


if __name__ == "__main__":
    main()
