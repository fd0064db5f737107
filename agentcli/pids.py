"""Whether a process id is in use on this machine (a leaf: sessions, races and Ray scratch folders
record the pid that owns them and ask this when they are read)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True while a process with ``pid`` exists here. Another user's process counts as alive:
    the pid is taken, and what it records is not ours to end."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
