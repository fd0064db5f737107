"""The TUI's widgets, one private module each."""

from agentcli.tui.widgets._conversation import AgentBlock, Conversation, NoticeBlock, ToolCallBlock, UserBlock
from agentcli.tui.widgets._prompt import PromptArea
from agentcli.tui.widgets._state_graph import StateGraph
from agentcli.tui.widgets._status import StatusHeader
from agentcli.tui.widgets._timeline import SnapshotTimeline, TimelineEntry
from agentcli.tui.widgets._tool_panel import ToolPanel

__all__ = [
    "AgentBlock",
    "Conversation",
    "NoticeBlock",
    "PromptArea",
    "SnapshotTimeline",
    "StateGraph",
    "StatusHeader",
    "TimelineEntry",
    "ToolCallBlock",
    "ToolPanel",
    "UserBlock",
]
