"""The TUI's widgets, one private module each."""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from agentcli.tui.widgets._agent_block import AgentBlock


def __getattr__(name: str) -> Any:
    if name == "AgentBlock":  # lazy: Markdown is not needed for the first frame
        from agentcli.tui.widgets._agent_block import AgentBlock

        return AgentBlock
    raise AttributeError(name)
