"""A training-like loop that makes progress: a loader thread fills a bounded
queue with batches, the main thread takes them and computes (busy CPU)."""

import os
import queue
import random
import threading

import corpus_roles

batches = queue.Queue(maxsize=4)
loader_tid = []


def load():
    loader_tid.append(threading.get_native_id())
    while True:
        batches.put([random.random() for _ in range(2000)])


threading.Thread(target=load, daemon=True).start()
weights = [0.0] * 2000
step = 0
while True:
    batch = batches.get()
    weights = [w - 0.01 * (w - x) for w, x in zip(weights, batch)]
    step += 1
    if step == 20:
        corpus_roles.publish({"p": os.getpid(), "p.main": threading.get_native_id(), "p.loader": loader_tid[0]})
