"""GIL convoy: one Python thread calls libc read() through ctypes.PyDLL, which
keeps the GIL for the whole call, on a pipe nobody writes (the process holds the
write end itself, so no EOF comes); two other Python threads want the GIL to run
their loops and wait for it behind the holder."""

import ctypes
import os
import threading
import time

import corpus_roles

read_end, write_end = os.pipe()
libc = ctypes.PyDLL(None)
libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
tids = {}
main_tid = threading.get_native_id()  # may wait for the GIL too (in join or start)


def spin(name):
    tids[name] = threading.get_native_id()
    n = 0
    while True:
        n += 1


def hold():
    tids["p.holder"] = threading.get_native_id()
    while len(tids) < 3:
        time.sleep(0.01)
    roles = {"p": os.getpid(), "p.main": main_tid}
    roles.update(tids)
    corpus_roles.publish(roles)
    buf = ctypes.create_string_buffer(1)
    libc.read(read_end, buf, 1)  # blocks holding the GIL


for name in ("p.waiter1", "p.waiter2"):
    threading.Thread(target=spin, args=(name,), daemon=True).start()
holder = threading.Thread(target=hold)
holder.start()
holder.join()
