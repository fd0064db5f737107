"""Tool names: ``mcp__SERVER__TOOL``, fit for every provider, and the server's allow/deny lists.

Providers accept tool names of letters, digits, ``_`` and ``-``, at most 64 characters; a server
may name its tools with dots or spaces, or at length. Such a name is cleaned, and a long one cut
with a short hash of the original so two long names stay apart.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re

PREFIX = "mcp__"
MAX_NAME = 64
_UNFIT = re.compile(r"[^A-Za-z0-9_-]")


MAX_SERVER = 40
"""A longer server name is shortened in tool names (to ``SHORT_SERVER`` characters, a hash of the
whole name included), so every tool keeps ``mcp__SERVER__`` and a readable name of its own: cut
as a whole, ``mcp__a-long-corporate-server-name…_1a2b3c4d`` told neither the server nor the tool."""
SHORT_SERVER = 30


def tool_prefix(server: str) -> str:
    """What the names of a server's tools begin with: ``mcp__SERVER__``."""
    if len(server) > MAX_SERVER:
        digest = hashlib.blake2b(server.encode(), digest_size=4).hexdigest()
        server = f"{server[: SHORT_SERVER - 9]}_{digest}"
    return f"{PREFIX}{server}__"


def tool_name(server: str, tool: str) -> str:
    """The name the model calls a server's tool by."""
    name = f"{tool_prefix(server)}{_UNFIT.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.blake2b(tool.encode(), digest_size=4).hexdigest()
    return f"{name[: MAX_NAME - 9]}_{digest}"


def server_of(name: str) -> str | None:
    """The server part of an MCP tool name, or None for any other tool."""
    if not name.startswith(PREFIX):
        return None
    server, sep, _ = name[len(PREFIX) :].partition("__")
    return server if sep else None


def offered(tool: str, allow: list[str], deny: list[str]) -> bool:
    """Whether the server's tool (by its own name) passes its allow and deny lists."""
    if any(fnmatch.fnmatchcase(tool, pattern) for pattern in deny):
        return False
    return any(fnmatch.fnmatchcase(tool, pattern) for pattern in allow)


def marked(tool: str, research: bool | list[str]) -> bool:
    """Whether the user marked the server's tool as a research tool."""
    if isinstance(research, bool):
        return research
    return any(fnmatch.fnmatchcase(tool, pattern) for pattern in research)
