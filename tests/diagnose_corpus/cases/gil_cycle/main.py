"""GIL cycle: the holder thread calls libc read() through ctypes.PyDLL (keeping
the GIL) on a pipe that the writer thread would write next, but the writer is a
Python thread and needs the GIL first: holder waits for writer (pipe), writer
waits for holder (GIL)."""

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
go = threading.Event()


def write_later():
    tids["p.writer"] = threading.get_native_id()
    go.wait()
    time.sleep(0.2)  # long enough for the holder to be in read(), then the GIL is needed
    os.write(write_end, b"x")


def hold():
    tids["p.holder"] = threading.get_native_id()
    while len(tids) < 2:
        time.sleep(0.01)
    roles = {"p": os.getpid(), "p.main": main_tid}
    roles.update(tids)
    corpus_roles.publish(roles)
    go.set()
    buf = ctypes.create_string_buffer(1)
    libc.read(read_end, buf, 1)  # blocks holding the GIL


threading.Thread(target=write_later, daemon=True).start()
holder = threading.Thread(target=hold)
holder.start()
holder.join()
