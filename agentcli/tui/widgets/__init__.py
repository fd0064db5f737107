"""The TUI's widgets, one private module each.

Each name is imported from its module on first use (PEP 562 ``__getattr__``), not with the
package: importing one widget module imports this package first, and the first frame needs
only the header, the stream and the prompt, not the state graph's drawing code or the side panes.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "AgentBlock",
    "Conversation",
    "GraphStrip",
    "GraphTrail",
    "McpPane",
    "NoticeBlock",
    "PlanPane",
    "PromptArea",
    "ReasoningBlock",
    "SnapshotTimeline",
    "StateGraph",
    "StatusHeader",
    "TimelineEntry",
    "ToolCallBlock",
    "ToolPanel",
    "UserBlock",
]

_MODULES = {
    "AgentBlock": "_agent_block",
    "Conversation": "_conversation",
    "GraphStrip": "_graph_strip",
    "GraphTrail": "_graph_strip",
    "McpPane": "_mcp",
    "NoticeBlock": "_blocks",
    "PlanPane": "_plan",
    "PromptArea": "_prompt",
    "ReasoningBlock": "_blocks",
    "SnapshotTimeline": "_timeline",
    "StateGraph": "_state_graph",
    "StatusHeader": "_status",
    "TimelineEntry": "_timeline",
    "ToolCallBlock": "_blocks",
    "ToolPanel": "_tool_panel",
    "UserBlock": "_blocks",
}

if TYPE_CHECKING:
    from agentcli.tui.widgets._agent_block import AgentBlock
    from agentcli.tui.widgets._blocks import NoticeBlock, ReasoningBlock, ToolCallBlock, UserBlock
    from agentcli.tui.widgets._conversation import Conversation
    from agentcli.tui.widgets._graph_strip import GraphStrip, GraphTrail
    from agentcli.tui.widgets._mcp import McpPane
    from agentcli.tui.widgets._plan import PlanPane
    from agentcli.tui.widgets._prompt import PromptArea
    from agentcli.tui.widgets._state_graph import StateGraph
    from agentcli.tui.widgets._status import StatusHeader
    from agentcli.tui.widgets._timeline import SnapshotTimeline, TimelineEntry
    from agentcli.tui.widgets._tool_panel import ToolPanel


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once imported, an ordinary module attribute
    return value
