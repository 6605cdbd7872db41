"""A Python thread pool with nothing to do: its four workers wait on the work
queue after the first batch of tasks; the main thread sleeps in a loop."""

import concurrent.futures
import os
import threading
import time

import corpus_roles

tids = set()


def task(n):
    tids.add(threading.get_native_id())
    time.sleep(0.05)
    return n * n


pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
list(pool.map(task, range(16)))
roles = {"p": os.getpid(), "p.main": threading.get_native_id()}
roles.update({"p.worker%d" % i: tid for i, tid in enumerate(sorted(tids))})
corpus_roles.publish(roles)
while True:
    time.sleep(0.2)
