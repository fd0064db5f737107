"""Tools the model calls: each is a pydantic argument model plus an async ``run``.

A leaf layer: tools know only the workspace they are given and never import the session,
the model client or the snapshot store.
"""

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.registry import ToolRegistry, default_registry

__all__ = ["Tool", "ToolContext", "ToolError", "ToolResult", "ToolRegistry", "default_registry"]
