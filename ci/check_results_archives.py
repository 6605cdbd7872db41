#!/usr/bin/env python3
"""Opens every compressed file committed under a results folder, fully, and names each that does not open.

Usage: python3 ci/check_results_archives.py [RESULTS_DIR]

A tarball (.tar.xz, .tar.gz, .tgz, .tar) is read by GNU tar to its end, every
member's bytes included (`tar -xOf`, nothing written), so a member whose header
does not match its data fails as `tar -t` would; Python's tarfile stops quietly at
such a header instead. Any other .xz or .gz file is decompressed to its end. Exit 0:
every file opened; 1: the files that did not, each with tar's or the decompressor's
words.
"""
import gzip
import lzma
import os
import subprocess
import sys

TARBALLS = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar")
STREAMS = {".xz": lzma.open, ".gz": gzip.open}


def check_tarball(path):
    try:
        run = subprocess.run(["tar", "-xOf", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        return "tar is not installed: the archive cannot be checked"
    if run.returncode != 0:
        return f"tar exits {run.returncode}: " + " / ".join(run.stderr.strip().splitlines()[-3:])
    return None


def check_stream(path, opener):
    try:
        with opener(path, "rb") as f:
            while f.read(1 << 20):
                pass
    except (OSError, EOFError, lzma.LZMAError) as e:
        return f"does not decompress: {e}"
    return None


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        sys.stdout.write(__doc__)
        return 2
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results"))
    if not os.path.isdir(results):
        print(f"check_results_archives: {results}: not a folder")
        return 1
    checked, broken = 0, []
    for dirpath, dirnames, filenames in os.walk(results):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, results)
            if name.endswith(TARBALLS):
                problem = check_tarball(path)
            else:
                ext = os.path.splitext(name)[1]
                if ext not in STREAMS:
                    continue
                problem = check_stream(path, STREAMS[ext])
            checked += 1
            if problem:
                broken.append(f"{rel}: {problem}")
    print(f"check_results_archives: {checked} compressed file(s) under {results} read to the end")
    if broken:
        print(f"BROKEN: {len(broken)}:")
        for line in broken:
            print(f"  {line}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
