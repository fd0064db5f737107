"""The header line: workspace, model, workflow phase, control state, tokens (with the share read
from the prompt cache) and cost."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from agentcli.describe import format_cost
from agentcli.tui.calls import NO_PRICE_HELP, format_tokens

if TYPE_CHECKING:  # the session layer is imported after the first frame, not for a type
    from agentcli.session.view import SessionView
    from agentcli.tui.messages import SessionEventPosted


def display_path(path: Path) -> str:
    """The workspace with the home folder shown as ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def display_model(model: str) -> str:
    """A replay model shows its file name, not its whole path."""
    if model.startswith("replay:"):
        return "replay:" + Path(model[len("replay:") :]).name
    return model


def cached_share(read: int, total: int) -> str:
    """The share of input tokens read from the prompt cache, as a whole percentage."""
    return f"{100 * read / total:.0f}%" if total else "0%"


class StatusHeader(Static):
    """One line that says where the agent is and what it has cost."""

    DEFAULT_CSS = """
    StatusHeader {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    workspace: reactive[str] = reactive("")
    """The workspace folder as shown."""
    model: reactive[str] = reactive("")
    """The model string as shown."""
    session_id: reactive[str] = reactive("")
    state: reactive[str] = reactive("")
    """The control state, as the session view says (empty before a session is attached)."""
    phase: reactive[str] = reactive("")
    """The active workflow phase (innermost), by name."""
    waiting_for: reactive[str | None] = reactive("task")
    """What the agent waits for (``task``, ``answer``, ``approval``, ``guidance``); None while it works."""
    input_tokens: reactive[int] = reactive(0)
    """Every input token of the session, read from the prompt cache or not."""
    output_tokens: reactive[int] = reactive(0)
    cache_read_tokens: reactive[int] = reactive(0)
    """Input tokens read from the provider's prompt cache (shown as a share only when some were)."""
    estimated: reactive[bool] = reactive(False)
    """Some call's usage was not reported by the server but estimated: the figures get a ``~``."""
    cost: reactive[float | None] = reactive(0.0)
    """Total dollars; None when any call had no known price. Shown once a call has reported its
    usage: before that, a ``$0.0000`` would claim a price nobody has looked up."""
    context_tokens: reactive[int] = reactive(0)
    """The size of the latest request (or, after a compaction, the estimate of the next)."""
    context_window: reactive[int | None] = reactive(None)
    """The model's context window, once a request has told it."""

    def show_view(self, view: SessionView) -> None:
        """Show where the session is (from ``Session.view``)."""
        self.state = view.control
        self.phase = view.phase or ""
        self.waiting_for = view.waiting_for

    def on_session_event_posted(self, message: SessionEventPosted) -> None:
        # The event types are imported here: the header is in the first frame, events come later.
        from agentcli.events import SessionStarted, UsageReported

        event = message.event
        self.follow_context(event)
        if isinstance(event, UsageReported):
            self.input_tokens = event.total_input_tokens
            self.output_tokens = event.total_output_tokens
            self.cache_read_tokens = event.total_cache_read_tokens
            self.estimated = self.estimated or event.estimated  # the totals hold that estimate from now on
            self.cost = event.total_cost
        elif isinstance(event, SessionStarted):
            self.session_id = event.session_id

    def follow_context(self, event: object) -> None:
        """Where the context window stands, from a request's usage or a compaction."""
        from agentcli.events import ContextCompacted, UsageReported

        if isinstance(event, UsageReported):
            self.context_tokens = event.input_tokens
            self.context_window = event.context_window or self.context_window
        elif isinstance(event, ContextCompacted):
            self.context_tokens = event.tokens_after
            self.context_window = event.window or self.context_window

    def watch_cost(self, cost: float | None) -> None:
        self.tooltip = NO_PRICE_HELP if cost is None else None

    def cost_text(self) -> str:
        """The session's cost; nothing before the first call has reported its usage."""
        if not (self.input_tokens or self.output_tokens):
            return ""
        return format_cost(self.cost)

    def context(self) -> Content:
        """``ctx 42k/200k ▰▰▱▱▱``: the latest request against the window, a bar of five cells that
        turns to the warning colour from 80% (where the view is compacted by default)."""
        window = self.context_window
        if not window or not self.context_tokens:
            return Content("")
        share = min(1.0, self.context_tokens / window)
        filled = max(1, min(5, round(share * 5)))  # a started session shows at least one cell
        bar = "▰" * filled + "▱" * (5 - filled)
        style = "$warning" if share >= 0.8 else "$text-muted"
        return Content.assemble(("ctx ", "$text-muted"),
                                f"{format_tokens(self.context_tokens)}/{format_tokens(window)} ", (bar, style))

    def tokens(self) -> str:
        """``42.1k in (87% cached) / 1.2k out``; ``~`` marks figures that are partly estimates."""
        about = "~" if self.estimated else ""
        read = self.cache_read_tokens
        cached = f" ({cached_share(read, self.input_tokens)} cached)" if read else ""
        return f"{about}{format_tokens(self.input_tokens)} in{cached} / {about}{format_tokens(self.output_tokens)} out"

    def render(self) -> Content:
        running = self.waiting_for is None
        # Working: lit like the graph; waiting on the user (an answer, a verdict, guidance): a
        # warning; ready for a task: calm.
        state_style = "bold $graph-active" if running else (
            "bold $success" if self.waiting_for == "task" else "bold $warning")
        state = Content.styled(f"{'●' if running else '○'} {self.state}", state_style) if self.state else Content("")
        parts = [
            state,
            Content.assemble(("phase ", "$text-muted"), (self.phase or "-", "bold")),
            Content(self.tokens()),
            self.context(),
            Content(self.cost_text()),
            Content.styled(self.model, "$primary"),
            Content(self.workspace),
            Content.styled(self.session_id, "$text-muted"),
        ]
        # Model and session are known only once the session is attached, just after the first frame.
        line = Content.styled("  ·  ", "$text-muted").join(part for part in parts if part.plain)
        width = self.content_size.width
        if not width or line.cell_length <= width:
            return line
        # Too long for the terminal (80 columns): tighter, the phase unlabelled, and the session id
        # (what `agentcli resume` needs) before the workspace the user started in, which the end's
        # ellipsis may cut.
        parts = [state, Content.styled(self.phase or "-", "bold"), *parts[2:6], parts[7], parts[6]]
        return Content.styled(" · ", "$text-muted").join(part for part in parts if part.plain)
