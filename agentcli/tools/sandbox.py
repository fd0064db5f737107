"""Confining `bash` with bubblewrap: the workspace writable, the rest read-only, no network.

The command runs as ``bwrap <flags> -- bash -c COMMAND``:

- ``--ro-bind / /`` — the whole filesystem, read-only (submounts included), so compilers,
  interpreters and the user's tools are all there but nothing outside the workspace changes;
- ``--bind WS WS`` — the workspace itself, writable, at the same path;
- ``--dev /dev``, ``--proc /proc`` — a minimal private ``/dev`` and a ``/proc`` for the new PID
  namespace (the host's devices and processes are not visible);
- ``--tmpfs /tmp`` — a private, empty, writable ``/tmp`` that disappears with the command;
- ``--unshare-net`` — a network namespace holding only a loopback device: no network at all;
- ``--unshare-pid`` + ``--die-with-parent`` — when bwrap is killed (timeout, pause, cancel) the
  kernel kills everything left in the sandbox's PID namespace, however the command forked,
  double-forked or called ``setsid``; that is what keeps "kill the whole group" true under bwrap;
- no controlling terminal to inject keystrokes into (``TIOCSTI``): the command starts in a
  session of its own with stdin closed (not ``--new-session``, which moved bwrap's child out of
  the process group a pause kills).

Whether bubblewrap works is probed once per process (``bwrap <the same flags> true``): it may be
installed yet unable to create namespaces (containers without user namespaces, hardened kernels).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = (
    "Install bubblewrap: `sudo apt install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` "
    "(Fedora), `sudo pacman -S bubblewrap` (Arch), `sudo zypper install bubblewrap` (openSUSE), "
    "`apk add bubblewrap` (Alpine). Or run without the sandbox (no `--sandbox`, `sandbox = false`)."
)

_PROBE_TIMEOUT_S = 10.0


class SandboxUnavailable(Exception):
    """Sandboxing was asked for but bubblewrap is missing or cannot run here. The message says why and what to do."""


@dataclass(frozen=True)
class SandboxStatus:
    """Whether ``bash`` can run under bubblewrap on this machine, and why not."""

    available: bool
    reason: str
    """Empty when available; otherwise a sentence naming the problem and how to fix it."""
    bwrap: str | None = None
    """The bwrap executable found on PATH."""


def sandbox_flags(workspace: Path) -> list[str]:
    """The bubblewrap flags that confine a command to ``workspace`` (see the module docstring).

    Args:
        workspace: The absolute, resolved workspace folder; it is the only writable place
            besides a private ``/tmp``.
    """
    ws = str(workspace)
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        # /tmp before the workspace: a workspace under /tmp is bound on top of the fresh tmpfs.
        "--tmpfs", "/tmp",
        "--bind", ws, ws,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        # No --new-session: the command is started in a session of its own, with no terminal
        # (so no TIOCSTI), and bwrap's sandboxed child must stay in its process group, which a
        # pause kills whole. With --new-session, a pause that landed while bwrap was starting
        # (before its child had set --die-with-parent) left the whole sandbox running.
        "--chdir", ws,
    ]


def wrap_command(argv: list[str], workspace: Path, *, bwrap: str = "bwrap") -> list[str]:
    """``argv`` prefixed so that it runs inside the sandbox.

    Args:
        argv: The command to confine, e.g. ``["bash", "-c", "make test"]``.
        workspace: The absolute, resolved workspace folder.
        bwrap: The bubblewrap executable (from :func:`sandbox_status`).
    """
    return [bwrap, *sandbox_flags(workspace), "--", *argv]


@functools.lru_cache(maxsize=1)
def sandbox_status() -> SandboxStatus:
    """Probe bubblewrap once: is it installed, and can it create the namespaces we need?

    Blocking (a short subprocess); call it off the event loop the first time.
    """
    if not sys.platform.startswith("linux"):
        return SandboxStatus(
            False,
            f"the sandbox uses bubblewrap, which only runs on Linux (this is {sys.platform}); "
            "run without the sandbox (no `--sandbox`, `sandbox = false`)",
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, f"the sandbox needs bubblewrap (`bwrap`), which is not installed. {INSTALL_HINT}")
    try:
        # The very flags a command gets, on a throwaway workspace: the probe proves that the
        # namespaces and mounts a real call needs can be created.
        with tempfile.TemporaryDirectory(prefix="agentcli-sandbox-probe-") as scratch:
            command = wrap_command(["true"], Path(scratch).resolve(), bwrap=bwrap)
            done = subprocess.run(command, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxStatus(False, f"bubblewrap ({bwrap}) could not be started: {error}", bwrap)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip() or f"exit code {done.returncode}"
        return SandboxStatus(
            False,
            f"bubblewrap ({bwrap}) is installed but cannot create a sandbox here: {detail}. It needs "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
            "an AppArmor profile for bwrap) or a setuid bwrap; inside a container, run the container "
            "with user namespaces allowed. Or run without the sandbox (no `--sandbox`, `sandbox = false`).",
            bwrap,
        )
    return SandboxStatus(True, "", bwrap)


def require_sandbox() -> str:
    """Check at start-up that sandboxing works; return the bwrap executable.

    Raises:
        SandboxUnavailable: with the reason and how to install or enable bubblewrap.
    """
    status = sandbox_status()
    if not status.available or status.bwrap is None:
        raise SandboxUnavailable(status.reason)
    return status.bwrap
