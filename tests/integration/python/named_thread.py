"""A thread that threading names "loader-7" blocks forever on a lock; the main thread joins it.

Prints one JSON line {"pid", "loader_tid"} once the loader runs, then hangs (for
diagnose_python_test's ThreadingNameBesideTheOSName). Runs under 3.9 and later.
"""
import json
import os
import threading

started = threading.Event()
never = threading.Lock()
never.acquire()


def load():
    started.set()
    never.acquire()  # never released: the thread waits here for ever


def main():
    loader = threading.Thread(name="loader-7", target=load, daemon=True)
    loader.start()
    started.wait()
    print(json.dumps({"pid": os.getpid(), "loader_tid": loader.native_id}), flush=True)
    loader.join()


if __name__ == "__main__":
    main()
