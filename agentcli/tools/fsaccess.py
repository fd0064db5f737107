"""Opening workspace files so that what was checked is what gets used.

:func:`agentcli.tools.paths.resolve_in_workspace` checks a path; between that check and the open,
another process may swap a folder for a symlink to ``/etc`` or a file for a FIFO. Opening the
checked path by name would then follow the swap out of the workspace (or block on the FIFO). So
every file tool opens through here instead:

- from a descriptor of the workspace folder, one component at a time, each with ``O_NOFOLLOW``
  (a folder that became a symlink fails with ``ELOOP``/``ENOTDIR`` rather than being followed);
- with ``O_NONBLOCK`` and ``O_NOCTTY``, so a FIFO or a terminal swapped in cannot block the open;
- and the opened descriptor is checked with ``fstat``: only a regular file is read or written,
  and its size is known before a byte is read, so nothing is read whole before the checks.

``openat2(RESOLVE_BENEATH)`` would do the walk in one call, but Python has no binding for it and
it needs Linux 5.6; the walk is portable to every POSIX system ``O_NOFOLLOW`` exists on.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentcli.tools.base import ToolError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_SWAPPED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)
"""What opening with ``O_NOFOLLOW`` says when a component is (now) a symlink."""


def _parts(workspace: Path, path: Path) -> list[str]:
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        raise ToolError(f"'{path}' is outside the workspace {workspace}") from None
    parts = list(rel.parts)
    if not parts:
        raise ToolError(f"'{path}' is the workspace folder itself, not a file; list_files shows what it holds")
    if any(part in ("", ".", "..") for part in parts):
        raise ToolError(f"'{path}' does not name a file inside the workspace")
    return parts


def _changed(display: str) -> ToolError:
    return ToolError(
        f"'{display}' changed while it was being opened (a folder or file on its path was replaced by a "
        "symlink or something else); nothing was read or written. Check the path and try again"
    )


@contextmanager
def _parent_fd(workspace: Path, parts: list[str], display: str, *, create: bool) -> Iterator[int]:
    """A descriptor of the folder holding the last component, reached without following links."""
    fd = os.open(workspace, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise ToolError(f"'{display}' does not exist") from None
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made by someone else meanwhile: opened (and checked) below all the same
                try:
                    child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                except OSError as error:
                    if error.errno in _SWAPPED:
                        raise _changed(display) from None
                    raise
            except OSError as error:
                if error.errno in _SWAPPED:
                    raise _changed(display) from None
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def open_dir(workspace: Path, path: Path, display: str) -> int:
    """Open a checked workspace folder (or the workspace itself) without following a link.

    Listing by name would list whatever a swapped-in symlink points at; the listing tools
    list this descriptor instead (``os.scandir(fd)``, ``os.fwalk(dir_fd=...)``).

    Raises:
        ToolError: the folder changed since it was checked, or is not a folder.
    """
    try:
        if path == workspace:
            return os.open(workspace, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        parts = _parts(workspace, path)
        with _parent_fd(workspace, parts, display, create=False) as parent:
            return open_subdir(parent, parts[-1], display)
    except ToolError:
        raise
    except OSError as error:
        raise ToolError(f"'{display}' cannot be listed: {error.strerror}") from None


def open_subdir(parent: int, name: str, display: str) -> int:
    """Open the folder ``name`` in the folder ``parent`` is open on, never through a symlink."""
    try:
        return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    except FileNotFoundError:
        raise ToolError(f"'{display}' does not exist") from None
    except OSError as error:
        if error.errno in _SWAPPED:
            raise _changed(display) from None
        raise


def _require_regular(fd: int, display: str) -> os.stat_result:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{display}' is a directory; use list_files to see what it holds")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"'{display}' is not a regular file (a device, FIFO or socket); it cannot be used")
    return info


def open_regular(
    workspace: Path, path: Path, display: str, *, write: bool = False, create: bool = False, links: bool = True
) -> int:
    """Open a checked workspace path as a regular file, never following a symlink on the way.

    Args:
        workspace: The workspace folder (absolute, symlinks resolved).
        path: The path as :func:`resolve_in_workspace` returned it (inside ``workspace``).
        display: How the path is named in messages.
        write: Open for reading and writing (the file is not truncated: see :func:`rewrite`).
        create: Create the file and its missing parent folders (implies ``write``).
        links: Accept a file with more than one name (a hard link, maybe to a file outside).

    Returns:
        An open descriptor of a regular file; the caller closes it.

    Raises:
        ToolError: the path changed since it was checked, or is not a regular file.
    """
    parts = _parts(workspace, path)
    flags = _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK | _NOCTTY
    flags |= os.O_RDWR if (write or create) else os.O_RDONLY
    if create:
        flags |= os.O_CREAT
    try:
        with _parent_fd(workspace, parts, display, create=create) as parent:
            try:
                fd = os.open(parts[-1], flags, 0o666, dir_fd=parent)
            except FileNotFoundError:
                raise ToolError(f"'{display}' does not exist") from None
            except IsADirectoryError:
                raise ToolError(f"'{display}' is a directory; use list_files to see what it holds") from None
            except OSError as error:
                if error.errno in _SWAPPED:
                    raise _changed(display) from None
                if error.errno == errno.ENXIO:  # a FIFO nobody reads, opened for writing
                    raise ToolError(f"'{display}' is not a regular file (a FIFO); it cannot be used") from None
                raise
    except ToolError:
        raise
    except OSError as error:
        raise ToolError(f"'{display}' cannot be opened: {error.strerror}") from None
    try:
        info = _require_regular(fd, display)
        if info.st_nlink > 1 and not links:
            raise ToolError(
                f"'{display}' is hard-linked ({info.st_nlink} names), so its content may be a file outside "
                "the workspace; using it needs approval, which this call did not have (it was linked after "
                "the permission check). Call the tool again to be asked"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(fd: int, max_bytes: int, display: str) -> bytes:
    """The whole content of an open regular file, refused before reading if over ``max_bytes``."""
    size = os.fstat(fd).st_size
    if size > max_bytes:
        raise ToolError(
            f"'{display}' is {size:,} bytes, over the {max_bytes:,}-byte limit; "
            "read a part with offset and limit, or search it with grep"
        )
    chunks: list[bytes] = []
    total = 0
    # Read to end of file but never past the limit: the file may grow while it is read.
    while total <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > max_bytes:
        raise ToolError(f"'{display}' grew past the {max_bytes:,}-byte limit while it was read")
    return b"".join(chunks)


def rewrite(fd: int, data: bytes) -> None:
    """Replace the content of an open regular file in place (its mode and other names kept)."""
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
