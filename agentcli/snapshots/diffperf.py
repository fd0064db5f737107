"""libgit2's count of the files a diff hashed (`git_diff_get_perfdata`), which pygit2 does not expose.

Called through ctypes on the very library pygit2 loaded (found in /proc/self/maps, its version
checked), for the split walk (`splitwalk.py`): a read-only diff that hashed more files than it
can account for left stat data stale, and its group is walked again by the updating diff.
"""

from __future__ import annotations

import ctypes
import os
import sys

import pygit2


class PerfData(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("stat_calls", ctypes.c_size_t), ("oid_calculations", ctypes.c_size_t)]


def _function() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """`git_diff_get_perfdata` of the libgit2 pygit2 loaded, or None where it cannot be found.

    Only a library already mapped into this process is used (read from /proc/self/maps), and
    only when its version is pygit2's: a different libgit2 would misread the diff.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/self/maps") as fh:
            mapped = {line.split(None, 5)[-1].strip() for line in fh if "libgit2" in line}
    except OSError:
        return None
    for path in sorted(p for p in mapped if p.startswith("/") and os.path.basename(p).startswith("libgit2")):
        try:
            lib = ctypes.CDLL(path)
            major, minor, rev = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            lib.git_libgit2_version(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(rev))
            if (major.value, minor.value, rev.value) != tuple(pygit2.LIBGIT2_VER):
                continue
            fn = lib.git_diff_get_perfdata
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.POINTER(PerfData), ctypes.c_void_p]
        fn.restype = ctypes.c_int
        return fn
    return None


_PERFDATA: list[ctypes._CFuncPtr | None] = []  # type: ignore[name-defined]


def perfdata() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not _PERFDATA:
        _PERFDATA.append(_function())
    return _PERFDATA[0]
