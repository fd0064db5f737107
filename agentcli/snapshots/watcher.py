"""Which paths changed since the last capture, from inotify: hints that spare the tree walk.

A capture after `bash` must find what the command changed; walking and `lstat`-ing the whole
workspace costs 0.3 s at 100k files. The watcher puts one inotify watch on every directory of
the workspace (through `inotify_simple`, a thin wrapper of the system calls) and, when a
capture asks, reads every queued event and turns it into a path to look at.

Why inotify read on demand rather than a watcher thread or `watchfiles`: the kernel queues an
event before the system call that caused it returns, so once a command has exited, reading the
descriptor until it is empty yields every change it made. `watchfiles` (Rust `notify`) hands
events over from its own thread after a debounce, with no way to ask "is that everything?".
No thread is needed either: a command that queues more than the kernel keeps
(`max_queued_events`, 16,384 here) overflows, and the capture walks the tree, which is then the
cheaper way anyway.

The watcher vouches for nothing it cannot see. `take()` answers None — walk the tree — after a
queue overflow, when a watch could not be added (the `max_user_watches` limit), when the
workspace directory itself moved or vanished, or when too many paths changed for hints to pay.
New directories are hinted whole (files created in them before their watch existed are found
by walking them), and so are directories moved in. Inside `.git` nothing is watched; nested
repositories are not watched inside either, and are hinted on every take so a commit made in
one is seen.

Over 400 lines because starting, reading and tearing down the watches share the watch tables
and their invariants; the inotify bindings at the end are the few calls used.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_WATCHED_DIRS = 100_000
"""Beyond this many directories the watcher gives up (each watch pins ~1 KiB of kernel memory)."""

DROP_BYTES_PER_DIR = 8_192
"""Before a walk, more queued event bytes than this per watched directory make watching afresh
cheaper than skimming them (`skim_before_walk`): an event is 16 bytes and its name, ~40 in all,
skimmed in ~0.5 µs; watching a directory afresh costs ~0.1-0.2 ms (a listing, a watch, the
Python around them), and the old descriptor's teardown."""

MAX_HINTS = 20_000
"""More changed paths than this make a tree walk the cheaper capture."""


@dataclass
class Taken:
    """What changed since the previous take."""

    paths: set[str] = field(default_factory=set)
    """Workspace-relative paths (files or directories) to look at."""
    ignore_rules_changed: bool = False
    """A `.gitignore` changed: what is ignored may have changed anywhere below it."""
    attributes: set[str] = field(default_factory=set)
    """The paths of `paths` whose attributes changed (chmod, touch: IN_ATTRIB). A restore
    learns what it wrote from its own descriptors, and none of its writes changes a file's
    attributes after its rename; an attribute change there is another process's."""


class TreeWatcher:
    """Inotify watches on every directory of a workspace.

    Args:
        workspace: The resolved workspace directory.
        max_dirs: Give up (and report unavailable) beyond this many directories.
        max_hints: `take()` answers None beyond this many changed paths.
    """

    def __init__(self, workspace: Path, *, max_dirs: int = MAX_WATCHED_DIRS, max_hints: int = MAX_HINTS) -> None:
        self.workspace = workspace
        self._max_dirs = max_dirs
        self._max_hints = max_hints
        self._inotify: _INotify | None = None
        self._paths: dict[int, str] = {}  # watch descriptor -> workspace-relative dir ("" = root)
        self._wds: dict[str, int] = {}  # and back
        self._nested: set[str] = set()
        self._lost = False
        self._held: Taken | None = None  # read by `quiet()`, handed out by the next `take()`
        self.unavailable_reason: str | None = None
        """Why the watcher cannot run here (set once; the store then walks the tree every time)."""

    @property
    def running(self) -> bool:
        """Watches are in place."""
        return self._inotify is not None

    def start(self) -> bool:
        """Adds a watch to every directory (walking them once); returns whether it runs.

        A watcher that cannot run (not Linux, too many directories, the kernel's watch limit)
        says why in `unavailable_reason` and is never started again.
        """
        if self._inotify is not None:
            return True
        if self.unavailable_reason is not None:
            return False
        if not sys.platform.startswith("linux"):
            self.unavailable_reason = "inotify is Linux-only"
            return False
        try:
            import inotify_simple  # type: ignore[import-untyped]  # the package ships no type hints

            self._inotify = _INotify(inotify_simple)
        except (ImportError, OSError) as error:
            self.unavailable_reason = f"inotify is unavailable: {error}"
            return False
        self._paths.clear()
        self._wds.clear()
        self._nested.clear()
        self._held = None
        self._lost = False
        try:
            self._watch_tree("")
        except _GiveUp as reason:
            self.close()
            self.unavailable_reason = str(reason)
            return False
        return True

    def start_in_background(self) -> Callable[[], bool]:
        """Starts watching on a thread; returns the wait for it (what `start` returns).

        Watching afresh (a listing and a watch per directory: 17-30 ms at 10k files) overlaps
        the capture's loading of the index and bulk refresh: both spend most of it in system
        calls, which give up the GIL. The caller must wait before it walks the tree — a change
        made from then on is either seen by the walk or queued — and before it uses the
        watcher again. Waiting twice is fine.
        """
        if self._inotify is not None or self.unavailable_reason is not None:
            running = self._inotify is not None
            return lambda: running
        outcome: list[bool] = []
        failure: list[BaseException] = []

        def arm() -> None:
            try:
                outcome.append(self.start())
            except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
                failure.append(error)

        thread = threading.Thread(target=arm, name="watcher-start", daemon=True)
        thread.start()

        def wait() -> bool:
            thread.join()
            if failure:
                raise failure[0]
            return outcome[0]

        return wait

    def skim_before_walk(self) -> None:
        """Before a walk of the tree: empties the event queue, keeping only what the watches
        themselves need; or, when that costs more than watching afresh, stops the watcher
        (`start` then watches every directory again, before the walk).

        The walk makes the queued paths moot, but not what they say about the watches: a new
        or moved directory needs its watch, a removed one's watch is gone, a `.git` makes a
        nested repository, an overflow means directories may lack watches. Those events go to
        `_on_event` as `take` would hand them; every other event (a file written, touched,
        made or removed) is stepped over in its raw bytes. Parsing every event into Python
        objects cost ~17 µs each (175 ms of a 580 ms capture after 10k files were touched),
        and watching afresh instead ~6 ms of a 24 ms capture at 1k files, on a thread that
        takes the GIL from the capture's hashing: stepping over an event costs ~0.5 µs.
        """
        inotify = self._inotify
        if inotify is None:
            return
        queued = inotify.queued_bytes()
        # A file's event is at least 32 bytes (its name is padded to 16): a queue of 32 bytes per
        # event the kernel keeps may have overflowed, and the skim would read ~9 ms of events
        # only to watch afresh after all.
        if queued > DROP_BYTES_PER_DIR * max(1, len(self._wds)) or queued >= 32 * _queue_limit():
            self._drop(inotify)
            return
        scratch = Taken()
        try:
            for event in inotify.structural_events():
                self._on_event(event, scratch)
                if self._lost:
                    break
        except _GiveUp as reason:
            self.close()
            self.unavailable_reason = str(reason)
            return
        if self._lost:
            self.close()  # as `take` does: the caller's `start` watches afresh before the walk
            return
        # What `take` would hand out now is a subset of what the walk sees; nothing is held.
        self._held = None

    def _drop(self, inotify: _INotify) -> None:
        """Stops watching without reading the queue (`start` watches afresh)."""
        watches = len(self._wds)
        self._inotify = None
        self.close()
        if watches * 2 > _watch_limit():
            inotify.close()  # its watches must be gone before `start` adds as many again
            return
        # Closing an inotify descriptor waits for the kernel to tear its watches down (a
        # grace period: 4-20 ms idle, measured with 27 watches), most of a 1k-file walk.
        # Nothing reads it any more, so the capture need not wait, unless the new watches
        # could hit the kernel's limit while the old ones still count (above).
        threading.Thread(target=inotify.close, name="inotify-close", daemon=True).start()

    def close(self) -> None:
        """Removes every watch."""
        if self._inotify is not None:
            self._inotify.close()
        self._inotify = None
        self._paths.clear()
        self._wds.clear()
        self._nested.clear()
        self._held = None

    def take(self) -> Taken | None:
        """Reads every queued event; returns what changed since the last take.

        Returns:
            The changed paths, or None when the watcher cannot vouch for them (not running,
            events lost, too many changes): the caller walks the tree. After None the watcher
            restarts itself on the next call to `start`.
        """
        inotify = self._inotify
        if inotify is None:
            return None
        taken, self._held = self._held or Taken(), None
        try:
            for event in inotify.read():
                self._on_event(event, taken)
                if self._lost or len(taken.paths) > self._max_hints:
                    self._lost = True
                    break
        except _GiveUp as reason:
            self.close()
            self.unavailable_reason = str(reason)
            return None
        if self._lost:
            # Events are gone for good, and directories made meanwhile may lack watches:
            # start over, after the walk the caller now makes.
            self.close()
            return None
        taken.paths.update(self._nested)
        return taken

    def quiet(self) -> bool:
        """Tells whether nothing at all changed since the last take, without consuming anything.

        What is read now is held for the next `take()`, so asking never loses a change. Nested
        repositories count as changes (their HEAD may have moved unseen), so a workspace with
        one is never quiet. This is what lets a restore use the last capture as its undo point.
        """
        taken = self.take()
        if taken is None:
            return False  # stopped: the next take answers None too, and the caller walks
        self._held = taken
        return not taken.paths and not taken.ignore_rules_changed

    def give_back(self, taken: Taken) -> None:
        """Hands what a take returned to the next take again (its caller did not use it)."""
        if self._inotify is None:
            return  # stopped since: the next take answers None and the caller walks
        held = self._held or Taken()
        held.paths.update(taken.paths)
        held.ignore_rules_changed |= taken.ignore_rules_changed
        held.attributes.update(taken.attributes)
        self._held = held

    # -- events -------------------------------------------------------------------------------

    def _on_event(self, event: _Event, taken: Taken) -> None:
        flags = _Flags
        mask = event.mask
        if mask & flags.Q_OVERFLOW:
            self._lost = True
            return
        base = self._paths.get(event.wd)
        if mask & flags.IGNORED:
            gone = self._paths.pop(event.wd, None)
            if gone is not None and self._wds.get(gone) == event.wd:
                del self._wds[gone]
            return
        if base is None:
            return  # a watch dropped earlier (a directory moved away): its subtree is hinted whole
        if mask & (flags.DELETE_SELF | flags.MOVE_SELF | flags.UNMOUNT):
            if base == "":
                raise _GiveUp("the workspace directory itself was moved or removed")
            return  # the parent's event names the path
        if not event.name:
            return  # a directory's own attributes are not recorded
        path = f"{base}/{event.name}" if base else event.name
        taken.paths.add(path)
        if mask & flags.ATTRIB:
            taken.attributes.add(path)
        if event.name == ".gitignore":
            taken.ignore_rules_changed = True
        if event.name == ".git" and base:
            self._nested.add(base)  # `git init` or a clone made this directory a repository
        if mask & flags.ISDIR:
            # A deleted directory's watches go with it (IN_IGNORED); a moved one's stay on its
            # inodes and would report under the old path, so they are dropped.
            if mask & flags.MOVED_FROM:
                self._unwatch(path)
            if mask & (flags.CREATE | flags.MOVED_TO):
                if path in self._wds:
                    self._unwatch(path)  # moved over a directory that was watched
                self._watch_tree(path)

    def _watch_tree(self, top: str) -> None:
        """Watches `top` and every directory below it, except inside repositories."""
        inotify = self._inotify
        assert inotify is not None
        stack = [top]
        while stack:
            rel = stack.pop()
            full = self.workspace / rel if rel else self.workspace
            if rel and _is_repository(full):
                self._nested.add(rel)
                continue
            try:
                wd = inotify.add_watch(full)
            except OSError as error:
                if error.errno == errno.ENOSPC:
                    raise _GiveUp(
                        "the kernel's inotify watch limit is reached (fs.inotify.max_user_watches)"
                    ) from None
                continue  # gone already, or not a directory any more: its parent's event says so
            old = self._paths.get(wd)
            if old is not None and self._wds.get(old) == wd:
                del self._wds[old]  # the same directory, seen under a new path
            self._paths[wd] = rel
            self._wds[rel] = wd
            if len(self._paths) > self._max_dirs:
                raise _GiveUp(f"the workspace has over {self._max_dirs:,} directories")
            try:
                with os.scandir(full) as entries:
                    for entry in entries:
                        if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                            stack.append(f"{rel}/{entry.name}" if rel else entry.name)
            except OSError:
                continue

    def _unwatch(self, rel: str) -> None:
        inotify = self._inotify
        assert inotify is not None
        prefix = rel + "/"
        for wd, path in list(self._paths.items()):
            if path == rel or path.startswith(prefix):
                del self._paths[wd]
                if self._wds.get(path) == wd:
                    del self._wds[path]
                inotify.rm_watch(wd)
        self._nested = {n for n in self._nested if n != rel and not n.startswith(prefix)}


def _is_repository(directory: Path) -> bool:
    return os.path.lexists(directory / ".git")


class _GiveUp(Exception):
    """The watcher cannot vouch for the workspace any more (the message says why)."""


@dataclass(frozen=True)
class _Event:
    wd: int
    mask: int
    name: str


class _Flags:
    """inotify(7) event bits."""

    MODIFY = 0x002
    ATTRIB = 0x004
    CLOSE_WRITE = 0x008
    MOVED_FROM = 0x040
    MOVED_TO = 0x080
    CREATE = 0x100
    DELETE = 0x200
    DELETE_SELF = 0x400
    MOVE_SELF = 0x800
    UNMOUNT = 0x2000
    Q_OVERFLOW = 0x4000
    IGNORED = 0x8000
    ONLYDIR = 0x01000000
    DONT_FOLLOW = 0x02000000
    EXCL_UNLINK = 0x04000000
    ISDIR = 0x40000000


WATCH_MASK = (
    _Flags.MODIFY
    | _Flags.ATTRIB  # chmod, touch: libgit2 refreshes the stat data
    | _Flags.CLOSE_WRITE
    | _Flags.MOVED_FROM
    | _Flags.MOVED_TO
    | _Flags.CREATE
    | _Flags.DELETE
    | _Flags.DELETE_SELF
    | _Flags.MOVE_SELF
    | _Flags.ONLYDIR
    | _Flags.DONT_FOLLOW  # a symlink to a directory is recorded as a link, never followed
    | _Flags.EXCL_UNLINK
)


_STRUCTURAL = _Flags.ISDIR | _Flags.IGNORED | _Flags.Q_OVERFLOW | _Flags.DELETE_SELF | _Flags.MOVE_SELF | _Flags.UNMOUNT
"""Event bits that change the watches or what they can vouch for (see `skim_before_walk`)."""

_EVENT_HEAD = struct.Struct("iIII")
"""inotify(7)'s `struct inotify_event` before its name: wd, mask, cookie, the name's length."""


class _INotify:
    """The few calls of `inotify_simple.INotify` used here, typed."""

    def __init__(self, module: object) -> None:
        self._fd = module.INotify(nonblocking=True)  # type: ignore[attr-defined]

    def add_watch(self, path: Path) -> int:
        return int(self._fd.add_watch(path, WATCH_MASK))

    def rm_watch(self, wd: int) -> None:
        try:
            self._fd.rm_watch(wd)
        except OSError:
            pass  # already gone with its directory

    def read(self) -> Iterable[_Event]:
        # timeout=0: everything queued now, without waiting for more.
        while True:
            events = list(self._fd.read(timeout=0))
            if not events:
                return
            for event in events:
                yield _Event(wd=event.wd, mask=event.mask, name=event.name)

    def structural_events(self) -> Iterable[_Event]:
        """Reads everything queued now; yields only the events that concern the watches
        themselves (directories, watches gone, overflow, the workspace itself, `.git`)."""
        fd = self._fd.fileno()
        unpack = _EVENT_HEAD.unpack_from
        head = _EVENT_HEAD.size
        wanted = _STRUCTURAL
        while True:
            try:
                data = os.read(fd, max(4096, self.queued_bytes()))
            except BlockingIOError:
                return
            if not data:
                return
            pos, end = 0, len(data)
            while pos < end:
                wd, mask, _cookie, size = unpack(data, pos)
                name_at = pos + head
                pos = name_at + size
                if mask & wanted or (size and data.startswith(b".git\0", name_at)):
                    name = os.fsdecode(data[name_at:pos].split(b"\0", 1)[0])
                    yield _Event(wd=wd, mask=mask, name=name)

    def queued_bytes(self) -> int:
        """Bytes of events waiting in the kernel's queue (FIONREAD), 0 when it cannot tell."""
        import array
        import fcntl
        import termios

        size = array.array("i", [0])
        try:
            fcntl.ioctl(self._fd.fileno(), termios.FIONREAD, size, True)
        except OSError:
            return 0
        return int(size[0])

    def close(self) -> None:
        self._fd.close()


def _queue_limit() -> int:
    """How many events the kernel queues before it drops them (``fs.inotify.max_queued_events``)."""
    try:
        return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        return 16_384  # the kernel's default


def _watch_limit() -> int:
    """The kernel's per-user inotify watch limit (``fs.inotify.max_user_watches``)."""
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return 8192  # the kernel's smallest default
