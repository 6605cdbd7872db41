#!/usr/bin/env python3
"""Recovers the members of a tar.xz whose data was rewritten after tar wrote it, and packs them again.

Usage: python3 ci/salvage_rewritten_tar.py BROKEN.tar.xz OUT.tar.xz

A text substitution run over a whole tar stream (a working folder's path replaced
by "<out>", say) shortens the members' data but not the sizes their headers give,
so `tar -t` loses its place after the first member ("Skipping to next header").
The headers themselves are intact: each is found by its "ustar" magic and accepted
only if its checksum holds. A member's data is then everything from its header to
the next one, less tar's zero padding. Refuses (exit 1, writing nothing) unless
every member is a regular file or a pax header, the pax headers' own sizes hold,
each file's data is at most its declared size and ends in a newline, and every
file is shorter than declared by the same number of bytes per "<out>" it holds;
prints that number. OUT keeps each member's name, mode, owner and mtime; its data
is what the broken archive held, byte for byte.
"""
import io
import lzma
import re
import sys
import tarfile

BLOCK = 512


def header_ok(block):
    if len(block) < BLOCK or block[257:262] != b"ustar":
        return False
    stored = block[148:156].split(b"\0")[0].strip()
    try:
        want = int(stored or b"x", 8)
    except ValueError:
        return False
    return sum(block[:148]) + 8 * 32 + sum(block[156:BLOCK]) == want


def octal(field):
    return int(field.split(b"\0")[0].strip() or b"0", 8)


def pax_records(data):
    records, i = {}, 0
    while i < len(data):
        space = data.index(b" ", i)
        length = int(data[i:space])
        key, _, value = data[space + 1:i + length - 1].partition(b"=")
        records[key.decode()] = value.decode()
        i += length
    return records


def main():
    if len(sys.argv) != 3:
        sys.stdout.write(__doc__)
        return 2
    broken, out = sys.argv[1], sys.argv[2]
    data = lzma.open(broken).read()
    starts = [m.start() - 257 for m in re.finditer(b"ustar", data) if m.start() >= 257]
    headers = [o for o in starts if header_ok(data[o:o + BLOCK])]
    members, pending_pax, ratios = [], {}, set()
    for index, offset in enumerate(headers):
        block = data[offset:offset + BLOCK]
        kind = block[156:157]
        declared = octal(block[124:136])
        end = headers[index + 1] if index + 1 < len(headers) else len(data)
        body = data[offset + BLOCK:end]
        if kind == b"x":
            if any(body[declared:]):
                sys.exit(f"salvage: the pax header at byte {offset} is not {declared} bytes: refused")
            pending_pax = pax_records(body[:declared])
            continue
        if kind not in (b"0", b"\0"):
            sys.exit(f"salvage: member at byte {offset} is of type {kind!r}, not a regular file: refused")
        content = body.rstrip(b"\0")
        name = pending_pax.get("path") or block[:100].split(b"\0")[0].decode()
        if len(content) > declared or not content.endswith(b"\n"):
            sys.exit(f"salvage: {name}: {len(content)} bytes found for {declared} declared, or no final newline: refused")
        short, outs = declared - len(content), content.count(b"<out>")
        if short:
            if not outs or short % outs:
                sys.exit(f"salvage: {name}: {short} bytes short with {outs} '<out>': not the rewrite explained: refused")
            ratios.add(short // outs)
        members.append((name, content, block, pending_pax))
        pending_pax = {}
    if len(ratios) > 1:
        sys.exit(f"salvage: members are short by {sorted(ratios)} bytes per '<out>': not one rewrite: refused")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content, block, pax in members:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            info.mode = octal(block[100:108])
            info.uid, info.gid = octal(block[108:116]), octal(block[116:124])
            info.uname = block[265:297].split(b"\0")[0].decode()
            info.gname = block[297:329].split(b"\0")[0].decode()
            info.mtime = float(pax.get("mtime", octal(block[136:148])))
            tar.addfile(info, io.BytesIO(content))
    with lzma.open(out, "wb", preset=9) as f:
        f.write(buffer.getvalue())
    per = f"{ratios.pop()} bytes shorter per '<out>'" if ratios else "none shorter than declared"
    print(f"salvage: {len(members)} members recovered from {broken} into {out} ({per})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
