"""The workspace's folders as descriptors, for a restore's writes: no link is ever followed.

The plan checks every folder a restore writes into (`restorechecks.py`), but that check is by
name, before the writes: a process that swaps `src/` for a symlink to `/etc` afterwards would
have the writes land in `/etc` if they were made by name from the root, since `O_NOFOLLOW`
guards only a path's last component. So every folder is opened one component at a time from a
descriptor of the workspace root (`O_DIRECTORY | O_NOFOLLOW`), and every create, rename,
unlink, mkdir and chmod is made relative to its folder's descriptor: once a folder is open, a
swap of any folder above it no longer matters, and a link (or a file) met where a folder should
be stops the restore (`RestoreStoppedError`) before anything is written through it.

Each folder is opened once per restore and shared by all its files (the lookups this spares
each write measured no faster: a write's new inode and rename cost far more). The descriptors
are closed by the caller's `close` — only when no write into them is under way — and trimmed at
points the caller knows to be quiet, so a restore over thousands of
folders holds at most about `OPEN_MAX` at once.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from types import TracebackType

from agentcli.snapshots.errors import RestoreStoppedError

OPEN_MAX = 256
"""Past this many open folders, `trim` closes them all (but the root): well under the usual
1,024 descriptors a process may hold, and more than a restore's folders at a time in practice."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Folders:
    """Descriptors of a workspace's folders, each opened from its parent's without following links.

    Args:
        workspace: The workspace directory (the root itself is opened as named).
    """

    def __init__(self, workspace: Path | str) -> None:
        self._root = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        self._fds: dict[str, int] = {"": self._root}

    def __enter__(self) -> Folders:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def open(self, rel: str, *, create: bool = False) -> int | None:
        """The descriptor of folder `rel` (workspace-relative, `""` for the root).

        Args:
            rel: The folder.
            create: Make it (and the folders above it) where missing, as `mkdir` does.

        Returns:
            Its descriptor (owned here: never close it), or None when it is missing and not
            `create`d.

        Raises:
            RestoreStoppedError: A symlink, a file or anything but a folder stands where a
                folder of `rel` should be.
        """
        fd = self._fds.get(rel)
        if fd is not None:
            return fd
        parent_rel, _, name = rel.rpartition("/")
        parent = self.open(parent_rel, create=create)
        if parent is None:
            return None
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(name, dir_fd=parent)
            except FileExistsError:
                pass  # made meanwhile: opened (and judged) below like any other
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except OSError as error:
                raise self._stopped(parent, rel, name, error) from error
        except OSError as error:
            raise self._stopped(parent, rel, name, error) from error
        self._fds[rel] = fd
        return fd

    def _stopped(self, parent: int, rel: str, name: str, error: OSError) -> OSError | RestoreStoppedError:
        """The error for a folder that could not be opened: what stands there, when it is not one."""
        if error.errno not in (errno.ENOTDIR, errno.ELOOP):
            return error  # a permission or I/O error, raised as it is
        try:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:
            mode = 0
        what = "a symbolic link" if stat.S_ISLNK(mode) else "a file" if stat.S_ISREG(mode) else "not a folder"
        return RestoreStoppedError(
            f"restore stopped: {rel} is now {what}, where the restore expected a folder (something changed it "
            "while the restore ran); nothing was written through it and every file written so far is whole. "
            f"Make {rel} a folder again (or remove it) and restore again: the state before this restore was "
            "recorded first",
            rel,
        )

    def forget(self, rel: str) -> None:
        """Closes folder `rel` and those below it (it was removed: a folder made there later is
        another one); call it only where no write into them is under way."""
        prefix = rel + "/"
        for path in [p for p in self._fds if p == rel or p.startswith(prefix)]:
            os.close(self._fds.pop(path))

    def trim(self) -> None:
        """Closes every folder but the root once more than `OPEN_MAX` are open; call it only where
        no write into them is under way."""
        if len(self._fds) > OPEN_MAX:
            self._close_all_but_root()

    def close(self) -> None:
        """Closes every descriptor (call once no write into them is under way)."""
        self._close_all_but_root()
        if self._root >= 0:
            os.close(self._root)
            self._root = -1
            self._fds.clear()

    def _close_all_but_root(self) -> None:
        for rel, fd in list(self._fds.items()):
            if rel:
                os.close(fd)
                del self._fds[rel]
