"""Writes a batch of new objects as one pack file (version 2) with its index.

A capture that adds many objects (the first capture of a directory that is not a git
repository, `npm install` in an unignored directory, a refactor touching 100 files) would
otherwise create one loose object file each, at ~0.5 ms per file on the machines measured
here. A pack is two files whatever the count. Objects are stored whole (no deltas) and
compressed at zlib level 1; gc later repacks them with deltas.

Formats: git's Documentation/gitformat-pack.txt (pack v2, index v2).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

_LARGE_OFFSET = 0x80000000


def _entry_header(object_type: int, size: int) -> bytes:
    """Type and size varint that starts each object in a pack."""
    first = (object_type << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first = size & 0x7F
        size >>= 7
    out.append(first)
    return bytes(out)


def write_pack(pack_dir: Path, objects: Iterable[tuple[bytes, int, bytes]]) -> Path:
    """Writes objects into a new pack in `pack_dir`.

    The `.pack` is renamed into place before the `.idx`: libgit2 and git find packs by their
    index, so a reader never sees a pack whose data is incomplete.

    Args:
        pack_dir: `objects/pack` of the repository.
        objects: (raw 20-byte id, object type, content) for each object; ids must be unique.

    Returns:
        Path of the `.pack` written.
    """
    pack_dir.mkdir(parents=True, exist_ok=True)
    entries: list[tuple[bytes, int, int]] = []  # id, crc32, offset
    tmp_pack = pack_dir / f"tmp_pack_{secrets.token_hex(8)}"
    digest = hashlib.sha1()
    items = list(objects)
    try:
        with open(tmp_pack, "wb") as fh:
            header = b"PACK" + struct.pack(">II", 2, len(items))
            fh.write(header)
            digest.update(header)
            offset = len(header)
            for raw_id, object_type, data in items:
                record = _entry_header(object_type, len(data)) + zlib.compress(data, 1)
                fh.write(record)
                digest.update(record)
                entries.append((raw_id, zlib.crc32(record) & 0xFFFFFFFF, offset))
                offset += len(record)
            pack_sum = digest.digest()
            fh.write(pack_sum)
        name = f"pack-{pack_sum.hex()}"
        final_pack = pack_dir / f"{name}.pack"
        os.replace(tmp_pack, final_pack)
    except BaseException:
        tmp_pack.unlink(missing_ok=True)
        raise

    entries.sort()
    fanout = [0] * 256
    for raw_id, _, _ in entries:
        fanout[raw_id[0]] += 1
    running = 0
    for i in range(256):
        running += fanout[i]
        fanout[i] = running
    small_offsets: list[int] = []
    large_offsets: list[int] = []
    for _, _, off in entries:
        if off < _LARGE_OFFSET:
            small_offsets.append(off)
        else:
            small_offsets.append(_LARGE_OFFSET | len(large_offsets))
            large_offsets.append(off)
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(raw_id for raw_id, _, _ in entries)
    idx += struct.pack(f">{len(entries)}I", *(crc for _, crc, _ in entries))
    idx += struct.pack(f">{len(small_offsets)}I", *small_offsets)
    if large_offsets:
        idx += struct.pack(f">{len(large_offsets)}Q", *large_offsets)
    idx += pack_sum
    idx += hashlib.sha1(idx).digest()
    tmp_idx = pack_dir / f"tmp_idx_{secrets.token_hex(8)}"
    try:
        tmp_idx.write_bytes(bytes(idx))
        os.replace(tmp_idx, pack_dir / f"{name}.idx")
    except BaseException:
        tmp_idx.unlink(missing_ok=True)
        raise
    return final_pack
