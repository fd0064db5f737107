"""Resolving a path argument to a real path that is inside the workspace, and naming secret files.

Every path a tool receives goes through :func:`resolve_in_workspace`: it is the one place that
decides what "inside the workspace" means, so the file tools, the search tools and the permission
policy cannot disagree about it.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from pathlib import Path, PurePosixPath

from agentcli.tools.base import ToolError

PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Kernel views that look like files but are not: refused even when the workspace contains them."""


def resolve_in_workspace(workspace: Path, raw: str, *, must_exist: bool = False) -> Path:
    """Turn a path the model gave into an absolute path inside ``workspace``.

    Relative paths are taken from the workspace; absolute paths are accepted only when they
    point inside it. Symlinks are followed before the check, so a link to ``/etc`` (or a chain
    of links ending there, or a symlinked parent folder) is refused. Device files, FIFOs and
    sockets are refused too: reading a FIFO would hang the tool, and a device is never source.

    Args:
        workspace: The workspace folder, absolute with symlinks resolved.
        raw: The path as the model sent it.
        must_exist: Refuse a path that does not exist.

    Returns:
        The resolved absolute path (symlinks followed, ``..`` removed).

    Raises:
        ToolError: the path is empty, escapes the workspace, uses ``~``, is under ``/proc``,
            ``/sys`` or ``/dev``, is a device, FIFO or socket, runs into a symlink loop, or
            (with ``must_exist``) is missing.
    """
    if not raw or not raw.strip():
        raise ToolError("path is empty")
    if "\x00" in raw:
        raise ToolError("path contains a NUL byte")
    if raw.startswith("~"):
        raise ToolError(f"'{raw}': '~' is not expanded; use a path relative to the workspace {workspace}")
    try:
        os.fsencode(raw)
    except UnicodeEncodeError:
        # A lone surrogate from the model's JSON: no file can have this name.
        raise ToolError(f"{raw!r} is not a valid file name") from None
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = workspace / candidate
    try:
        # strict=False resolves every existing prefix (symlinks included) and keeps the rest as is.
        resolved = Path(os.path.realpath(candidate))
        # At a symlink loop realpath stops resolving and normalises the rest lexically, so
        # `loop/../link-to-etc` comes back as `link-to-etc`, a symlink it never followed. A
        # second pass changes such a path; a fully resolved one is a fixed point.
        unstable = os.path.realpath(resolved) != str(resolved)
    except (OSError, ValueError) as error:
        raise ToolError(f"'{raw}' cannot be resolved: {error}") from None
    if unstable:
        raise ToolError(f"'{raw}' runs into a symlink loop")
    if not resolved.is_relative_to(workspace):
        raise ToolError(f"'{raw}' is outside the workspace {workspace}; only paths inside it can be used")
    if any(resolved.is_relative_to(root) for root in PSEUDO_FILESYSTEMS):
        raise ToolError(f"'{raw}' is under {resolved.parts[0]}{resolved.parts[1]}, which tools may not use")
    try:
        mode = os.stat(resolved).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if must_exist:
            raise ToolError(f"'{raw}' does not exist") from None
        return resolved
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ToolError(f"'{raw}' runs into a symlink loop") from None
        raise ToolError(f"'{raw}' cannot be used: {error.strerror}") from None
    kind = _special_kind(mode)
    if kind:
        raise ToolError(f"'{raw}' is a {kind}; only regular files and folders can be used")
    return resolved


def _special_kind(mode: int) -> str | None:
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def relative(workspace: Path, path: Path) -> str:
    """The workspace-relative form of a resolved path, for messages and snapshot hints."""
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


# -- secret files ---------------------------------------------------------------------------------

_SECRET_NAMES = (
    # dotenv files and direnv (which usually exports secrets)
    ".env", ".env.*", "*.env", ".envrc",
    # private keys and key stores
    "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    # cloud and service credentials
    "credentials", "credentials.*", "client_secret*.json", "service-account*.json",
    "service_account*.json", "secrets", "secrets.json", "secrets.yaml", "secrets.yml",
    "secrets.toml", "secrets.ini", "secrets.env", ".secrets", ".secrets.*",
    # tokens of package managers, git and databases
    ".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".dockercfg", ".htpasswd",
    ".pgpass", ".my.cnf",
    # Terraform state and variables hold provider credentials in plain text
    "*.tfstate", "*.tfstate.backup", "*.tfvars",
)
"""Basenames (matched case-insensitively) of files that likely hold credentials."""

_SECRET_FOLDERS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker"})
"""Folders whose every file is treated as secret (keys, cloud and cluster credentials)."""

_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".tmpl", ".dist", ".pub")
"""Templates (``.env.example``) and public keys are meant to be shared: not secret."""


def is_secret_path(rel: str) -> bool:
    """Whether a workspace-relative path likely holds credentials (``.env``, private keys...).

    Matching is on names only, never on content, so it is cheap enough for every call.

    Args:
        rel: A path relative to the workspace, with ``/`` separators.

    Returns:
        True for dotenv files, private keys, credential and token files, and anything in a
        ``.ssh``, ``.gnupg``, ``.aws``... folder; False for templates such as ``.env.example``
        and for public keys.
    """
    parts = [part.lower() for part in PurePosixPath(rel).parts if part not in ("", ".", "/")]
    if not parts:
        return False
    name = parts[-1]
    if name.endswith(_TEMPLATE_SUFFIXES):
        return False
    if any(folder in _SECRET_FOLDERS for folder in parts[:-1]):
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SECRET_NAMES)
