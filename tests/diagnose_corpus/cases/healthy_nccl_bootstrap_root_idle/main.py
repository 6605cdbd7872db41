"""NCCL's bootstrap root waiting for its ranks, with nobody connected yet: healthy.

The process loads NCCL (HB_CORPUS_NCCL_LIB: its host side only, no GPU) and makes a
unique id, which starts the bootstrap root thread in accept(); the ranks have not come
yet (they start when a launcher hands them the id). A root between connections waits
for the ranks, which is no hang. Roles: p (the process).
"""
import ctypes
import os
import time

import corpus_roles


def main():
    nccl = ctypes.CDLL(os.environ["HB_CORPUS_NCCL_LIB"])
    uid = ctypes.create_string_buffer(128)
    if nccl.ncclGetUniqueId(uid) != 0:
        raise SystemExit("ncclGetUniqueId failed")
    corpus_roles.publish({"p": os.getpid()})
    while True:
        time.sleep(1)


main()
