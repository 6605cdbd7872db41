"""GIL healthy counterpart of gil_convoy: a reader thread waits in os.read (which
lets the GIL go) on a pipe the main thread writes to every 50 ms, while two
threads compute in Python."""

import os
import threading
import time

import corpus_roles

read_end, write_end = os.pipe()
tids = {}


def read_forever():
    tids["p.reader"] = threading.get_native_id()
    while os.read(read_end, 64):
        pass


def compute(name):
    tids[name] = threading.get_native_id()
    n = 0
    while True:
        n = (n * 31 + 7) % 1000003
        if n == 0:
            time.sleep(0)


threading.Thread(target=read_forever, daemon=True).start()
for name in ("p.compute1", "p.compute2"):
    threading.Thread(target=compute, args=(name,), daemon=True).start()
while len(tids) < 3:
    time.sleep(0.01)
roles = {"p": os.getpid(), "p.main": threading.get_native_id()}
roles.update(tids)
corpus_roles.publish(roles)
while True:
    os.write(write_end, b"tick")
    time.sleep(0.05)
