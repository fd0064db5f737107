"""The `[mcp]` configuration section: the MCP servers whose tools a session offers.

Kept beside :mod:`agentcli.config` (which includes it as ``Settings.mcp``) so that module stays
one screen of sections; like it, this imports nothing of agentcli's but pydantic models.

A server is written as Claude Code's ``.mcp.json`` writes it, in TOML::

    [mcp.servers.git]
    command = "uvx"
    args = ["mcp-server-git", "--repository", "."]

    [mcp.servers.docs]
    url = "https://example.com/mcp"
    headers = { Authorization = "Bearer ${DOCS_TOKEN}" }

``${VAR}`` and ``${VAR:-default}`` in ``command``, ``args``, ``env``, ``cwd``, ``url`` and
``headers`` are filled from the environment when the server starts (so secrets stay out of the
file); a variable that is unset and has no default keeps that server from starting.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""What a server name may hold: it becomes part of tool names (``mcp__NAME__tool``), which
providers restrict to these characters."""

Transport = Literal["stdio", "http", "sse"]
"""``stdio``: a command agentcli starts; ``http``: streamable HTTP; ``sse``: the older HTTP+SSE."""


class McpServerSettings(BaseModel):
    """One MCP server (a `[mcp.servers.NAME]` table, or an entry of `.mcp.json`)."""

    model_config = ConfigDict(extra="forbid")

    type: Transport | None = None
    """How to reach it; unset: ``stdio`` with a ``command``, ``http`` with a ``url``."""
    command: str | None = None
    """The program to start (stdio), found on ``PATH``."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """Variables for the server, over the environment agentcli runs in (which it inherits)."""
    cwd: str | None = None
    """The server's working folder (relative to the workspace); the workspace when unset."""
    url: str | None = None
    """The endpoint (http, sse)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request (http, sse): ``Authorization = "Bearer ${TOKEN}"``."""
    enabled: bool = True
    timeout_s: float = Field(30.0, gt=0)
    """How long the server may take to start and list its tools before it is given up."""
    call_timeout_s: float = Field(300.0, gt=0)
    """How long one tool call may take before it is answered with an error."""
    allow_tools: list[str] = Field(default_factory=lambda: ["*"])
    """The server's tools offered to the model, by their own names (``fnmatch`` patterns)."""
    deny_tools: list[str] = Field(default_factory=list)
    """The server's tools never offered; deny wins over allow."""
    research: bool | list[str] = False
    """Offer these tools in research phases (the ``@research`` entry of a phase's tools, which
    `plan-build`'s ``plan.research`` has): ``true`` for all of them, or a list of patterns."""
    writes_files: bool | None = None
    """Whether its tools may change files in the workspace (a snapshot follows each call that
    may). Unset: every tool not marked read-only by the server may."""

    def unreachable(self) -> str | None:
        """Why the server cannot be reached as configured, or None.

        Checked on the merged settings, not per layer: a workspace may set only ``timeout_s``
        for a server whose command comes from the user's file or `.mcp.json`.
        """
        kind = self.transport
        if kind == "stdio" and not self.command:
            return "a stdio server needs a `command` (or give a `url` for an HTTP server)"
        if kind in ("http", "sse") and not self.url:
            return f"an {kind} server needs a `url`"
        return None

    @property
    def transport(self) -> Transport:
        if self.type is not None:
            return self.type
        return "http" if self.url and not self.command else "stdio"


class McpSettings(BaseModel):
    """The MCP servers (the `[mcp]` table)."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    """By name: ``[mcp.servers.git]``. A server of the same name in `.mcp.json` is the base these
    fields override one by one (``[mcp.servers.git] enabled = false`` turns one off)."""
    project_file: bool = True
    """Read the workspace's `.mcp.json` (Claude Code's format) too."""
    max_tools: int = Field(128, ge=1)
    """The most tools one model request carries, agentcli's own included (OpenAI refuses more
    than 128); servers listing more share what is left, and the rest are left out with a notice."""

    @model_validator(mode="after")
    def _names(self) -> McpSettings:
        for name in self.servers:
            if not SERVER_NAME.fullmatch(name) or "__" in name:
                raise ValueError(
                    f"mcp.servers.{name}: a server name holds only letters, digits, '-' and '_' "
                    "(no '__': tools are named mcp__SERVER__TOOL)"
                )
        return self
