"""The state every piece of a session's work shares: the conversation, the calls waiting to run,
the totals, and the bookkeeping that keeps the model's history well formed.

The chart decides where the agent is; the work modules (``thinking``, ``calling``,
``capturing``, ``reviewing``) do what a state means, over this one shared state. Nothing here
chooses a next state.

Over 400 lines because it is that one shared state: the bookkeeping that keeps the history well
formed (pairing calls with results, redaction, queued input) must see all of it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import Settings
from agentcli.events import (
    Event,
    ModelNote,
    Outcome,
    ThinkingBlock,
    ToolCallFinished,
    ToolCallRequest,
    ToolCallStarted,
    TurnEnded,
    UserMessage,
)
from agentcli.llm.types import Message, ModelClient
from agentcli.permissions import Decision, Policy
from agentcli.secrets import Redactor
from agentcli.session.context import ContextMeter, Conversation
from agentcli.session.watchdog import Watchdog
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.control import CONTROL_TOOLS
from agentcli.tools.registry import ToolRegistry, parse_arguments
from agentcli.tools.text import valid_text
from agentcli.tools.workflow_tools import PlanStore
from agentcli.workflow.model import ALL_TOOLS, RESEARCH_TOOLS, Phase, Workflow

if TYPE_CHECKING:
    from statemachine import StateChart
    from statemachine.model import Model

    from agentcli.snapshots import SnapshotStore

INTERRUPTED = "Interrupted before it finished: the run was paused. Its effects may be partial."
NOT_RUN = "Not run: the turn ended before this call was reached."


@dataclass
class Totals:
    """Running usage of the session."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    """None once any call had an unknown price: a partial sum would understate the cost."""
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache, of ``input_tokens``."""
    steps: int = 0
    """Model calls made in the current turn."""


def _history_arguments(raw: str) -> str:
    """Arguments as stored in the conversation: always a JSON object.

    Some providers (Anthropic through litellm) reject a history whose arguments are not JSON, so
    a malformed call is kept as an object that still shows the model what it sent.
    """
    try:
        if isinstance(json.loads(raw or "{}"), dict):
            return raw or "{}"
    except (json.JSONDecodeError, RecursionError):
        pass
    return json.dumps({"_malformed_arguments": raw[:2000]})


def assistant_message(text: str, calls: list[ToolCallRequest], thinking: list[ThinkingBlock] | None = None,
                      reasoning: str = "") -> Message:
    """A reply as the conversation keeps it: ``content`` always present (``None`` when only tools
    were called: strict chat templates need the key, and an empty string makes litellm add a text
    block before Anthropic's tool use), a thinking model's signed blocks sent back verbatim, and
    the ``reasoning`` that must go back with a reply that called tools (DeepSeek's, as
    ``reasoning_content``; ``llm.shape`` leaves it out for any other provider)."""
    message: Message = {"role": "assistant", "content": text or None}
    if reasoning and calls:
        message["reasoning_content"] = reasoning
    if thinking:
        message["thinking_blocks"] = [_block(block) for block in thinking]
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _history_arguments(c.arguments)}}
            for c in calls
        ]
    return message


def _block(block: ThinkingBlock) -> dict[str, str]:
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def tool_message(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


class Turn:
    """One session's working state, shared by the work of every state."""

    def __init__(
        self,
        *,
        workspace: Path,
        settings: Settings,
        workflow: Workflow,
        model_client: ModelClient,
        tools: ToolRegistry,
        emit: Callable[[Event], None],
        plan: PlanStore,
        policy: Policy,
        snapshots: SnapshotStore | None = None,
        session_id: str = "",
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.workflow = workflow
        self.model_client = model_client
        self.tools = tools
        self.emit = emit
        self.plan = plan
        self.policy = policy
        self.chart: StateChart[Model] | None = None
        self.messages = Conversation()
        """The model's view of the conversation (without the system prompt, rebuilt per request)."""
        self.meter = ContextMeter()
        """How many tokens that view takes: measured per request, estimated in between."""
        self.window: int | None = None
        """The active model's context window in tokens, once known (from the first request)."""
        self.max_output: int = 0
        """The active model's output limit, left free in the window."""
        self.learned_window: int | None = None
        """The window a provider stated when it refused a request as too long (believed over any
        figure from the config or litellm)."""
        self.compacted_since_call = False
        """A compaction ran since the last model call: another waits for a call to measure it."""
        self.overflow_compacted = False
        """The last model call overflowed and the view was compacted for it: a second overflow
        pauses instead of compacting again."""
        self.pending: deque[ToolCallRequest] = deque()
        """Calls of the latest reply not yet run, in order."""
        self.totals = Totals()
        self.phase_steps = 0
        """Model calls in the current visit of the active phase, against its ``max_steps``."""
        self.verdicts: dict[str, bool] = {}
        """The user's answers to permission requests, by call id, until the call runs."""
        self._decisions: dict[str, Decision] = {}
        self.redact = Redactor()
        self.watchdog = Watchdog(workspace, settings.progress)
        self.snapshots = snapshots
        """The snapshot store, when snapshots are on."""
        self.session_id = session_id
        self.resumed = False
        """The session was rebuilt from its log by this process."""
        self.captures = 0
        """Captures this process has made (names the first one: session start or resumed)."""
        self.clock: Callable[[], float] = time.monotonic
        """Times tool calls; tests that compare screens fix it so durations do not vary."""
        self.tool_context = ToolContext(workspace=workspace, settings=settings.tools, sandbox=settings.sandbox)
        self.ending: TurnEnded | None = None
        """How the turn ends, set by the transition into a waiting state and announced after it."""
        self.task: asyncio.Task[Any] | None = None
        """The task doing the current state's work (a pause waits for it to wind down)."""
        self.doing: str | None = None
        """What that work is doing, in words, for an error that cuts it short."""
        self.queued: deque[UserMessage] = deque()
        """Messages the user typed while the agent worked, for the next step boundary."""
        self.instruction_files: list[str] = []
        """The project instructions files the last request carried (to announce a change)."""
        self._deferred_notes: list[tuple[str, str, list[tuple[str, str]]]] = []
        """Notes for the model held back until every call of the current reply has its result."""

    # -- set-up ----------------------------------------------------------------------------------

    def load(self, messages: list[Message], pending: list[ToolCallRequest], totals: Totals) -> None:
        """Continue from a session rebuilt from its log: its conversation, its calls still waiting
        for a verdict, its usage so far."""
        for message in messages:
            self.messages.append(message)
        self.pending.extend(pending)
        self.totals = totals
        self.resumed = True

    def attach(self, chart: StateChart[Model]) -> None:
        """The chart this work serves (where the workflow is, read from its configuration)."""
        self.chart = chart

    def decide(self, call_id: str, allowed: bool) -> None:
        """The user's verdict on the call waiting for approval; a new turn starts with it."""
        self.verdicts[call_id] = allowed
        self.new_turn()

    # -- where the workflow is -----------------------------------------------------------------

    @property
    def active_phase(self) -> Phase:
        if self.chart is None:
            return self.workflow.phase(self.workflow.initial)
        names = {state.id: state.name for state in self.chart.configuration}
        for phase in reversed(self.workflow.phases):
            if any(names[sid] == phase.name for sid in names if sid.startswith("phase_")):
                return phase
        return self.workflow.phase(self.workflow.initial)

    def phase_tools(self, phase: Phase) -> list[str]:
        """The tools a phase offers: its own list (where ``mcp__docs__*`` names a server's tools
        and ``@research`` the MCP tools marked for research), plus the control tools, which
        always end a turn."""
        if ALL_TOOLS in phase.tools:
            return self.tools.names
        chosen = list(dict.fromkeys(name for entry in phase.tools for name in self._matching(entry)))
        return chosen + [name for name in self.tools.names if name in CONTROL_TOOLS and name not in chosen]

    def _matching(self, entry: str) -> list[str]:
        if entry == RESEARCH_TOOLS:
            declarations = self.tools.declarations
            return [name for name in self.tools.names if declarations[name].research]
        if "*" in entry or "?" in entry or "[" in entry:
            return [name for name in self.tools.names if fnmatch.fnmatchcase(name, entry)]
        return [entry] if entry in self.tools else []

    def refusal(self, call: ToolCallRequest) -> str | None:
        """Why ``call`` must not run, or None: not a tool of this phase, denied by a rule or by the user."""
        if call.name not in self.tools:
            return None  # the registry answers an unknown name with the list of tools
        phase = self.active_phase
        allowed = self.phase_tools(phase)
        if call.name not in allowed:
            return f"'{call.name}' is not available in the {phase.name} phase; its tools are: {', '.join(allowed)}"
        verdict = self.verdicts.get(call.id)
        decision = self.decision(call)
        if verdict is False:
            return decision.refusal(by_user=True)
        if verdict is None and decision.denied:
            return decision.refusal()
        return None

    def approved(self, call: ToolCallRequest) -> bool:
        """The user approved ``call``, a rule allowed it, or mode ``all`` runs everything: more
        than the default allowance, which a tool must not stretch (a file hard-linked since)."""
        if self.verdicts.get(call.id) is True or self.policy.mode == "all":
            return True
        decision = self.decision(call)
        return decision.allowed and decision.matched is not None

    def needs_approval(self, call: ToolCallRequest) -> bool:
        """The policy asks the user about ``call`` and they have not answered yet."""
        if call.id in self.verdicts or call.name not in self.tools or self.refusal(call) is not None:
            return False
        return self.decision(call).needs_approval

    def decision(self, call: ToolCallRequest) -> Decision:
        """The permission policy's verdict on ``call``, decided once per call."""
        decision = self._decisions.get(call.id)
        if decision is None:
            arguments = parse_arguments(call.arguments)
            decision = self.policy.decide(call.name, arguments if not isinstance(arguments, str) else None)
            self._decisions[call.id] = decision
        return decision

    # -- the context window ----------------------------------------------------------------------

    def request_window(self, role: str) -> int | None:
        """The context window a request for ``role``'s model is sent with (None: litellm's figure):
        the one configured for the role or the model, never above the one a provider stated. The
        session's calls and its summary requests alike: for Ollama it is the ``num_ctx`` sent, and
        a summary run with another would be read in another window (litellm's default, not ours)."""
        settings = self.settings
        window = settings.context.windows.get(role) or settings.limits_for(settings.model_for(role)).context_window
        if self.learned_window is not None:
            window = min(window or self.learned_window, self.learned_window)
        return window

    def context_tokens(self) -> int:
        """The next request's input tokens, as measured and estimated."""
        return self.meter.estimate(self.messages.chars)

    def context_budget(self) -> int | None:
        """How many input tokens a request may take before the view is compacted."""
        if not self.window:
            return None
        share = round(self.window * self.settings.context.compact_at)
        return max(1, min(share, self.window - self.max_output))

    def output_limit(self) -> int:
        """The characters a single tool output may take: no more than a quarter of the window, so
        on a small local model a read of a big file cannot overflow the next request by itself."""
        limit = self.settings.tools.max_output_chars
        if self.window:
            limit = max(2000, min(limit, round(self.window * 0.25 * self.meter.chars_per_token)))
        return limit

    def fit_tool_output(self) -> None:
        """The tools cut their outputs to ``output_limit``."""
        limit = self.output_limit()
        if limit != self.tool_context.settings.max_output_chars:
            settings = self.tool_context.settings.model_copy(update={"max_output_chars": limit})
            self.tool_context = replace(self.tool_context, settings=settings)

    def needs_compaction(self) -> bool:
        """The next request would pass the budget, and no compaction has run since the last call
        (one that could not shrink the view enough is not retried until a call measures it)."""
        budget = self.context_budget()
        return (budget is not None and not self.compacted_since_call and len(self.messages) > 1
                and self.context_tokens() > budget)

    # -- the conversation ------------------------------------------------------------------------

    def begin_turn(self, text: str | None) -> None:
        """A user message (or a plain resume) starts a new turn with a fresh step count.

        The caller has emitted the event that carries ``text`` (UserMessage, ClarificationAnswered).
        """
        self.new_turn()
        if text is not None:
            self.watchdog.reset("user message")
            self.messages.append({"role": "user", "content": text})
        elif not len(self.messages) or self.messages[-1]["role"] == "assistant":
            self.add_note("continue", "Continue where you left off.")

    def new_turn(self) -> None:
        """The step count starts again (a verdict on a waiting call starts a turn too)."""
        self.totals.steps = 0
        self.ending = None

    def add_note(self, kind: str, text: str, images: list[tuple[str, str]] | None = None) -> None:
        """Tell the model something as a user message, recorded so a resume sees it too.

        While calls of the last reply still wait for their results, the note waits too: a user
        message between a call and its result would break the pairing providers require.
        ``images`` (MIME type, base64 data) go with the text to a model that reads images; the log
        keeps the text only (a resumed conversation goes on without the pictures).
        """
        if self.pending:
            self._deferred_notes.append((kind, text, images or []))
            return
        content: str | list[dict[str, Any]] = text
        if images:
            content = [{"type": "text", "text": text}, *(
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}} for mime, data in images)]
        self.messages.append({"role": "user", "content": content})
        self.emit(ModelNote(kind=kind, text=text))

    def defer_note(self, kind: str, text: str, images: list[tuple[str, str]] | None = None) -> None:
        """A note for the model once every call of the current reply has its result."""
        self._deferred_notes.append((kind, text, images or []))

    async def attach_images(self, tool: str, images: list[tuple[str, str]]) -> None:
        """Show the images a tool returned (an MCP tool's screenshot) to a model that reads
        images, in a message after the reply's results; other models read only their description
        in the result."""
        from agentcli.llm.vision import takes_images

        model = self.settings.model_for(self.active_phase.model)
        if images and await takes_images(model, self.settings.api_base):
            self.defer_note("images", f"The image{'s' if len(images) > 1 else ''} {tool} returned:", images)

    def flush_notes(self) -> None:
        notes, self._deferred_notes = self._deferred_notes, []
        for kind, text, images in notes:
            self.add_note(kind, text, images)

    def user_message(self, text: str, attached: str = "", files: list[str] | None = None, *,
                     queued: bool = False) -> UserMessage:
        """The user's words as an event, redacted: sent, queued or given as guidance, a key typed
        into the prompt must neither be shown as is nor reach the model."""
        # Bytes that are not UTF-8 (an argument, a file name) as their escapes: neither the log
        # nor a model API can encode a lone surrogate.
        return UserMessage(text=valid_text(self.redact(text)), attached=valid_text(self.redact(attached)),
                           files=[valid_text(f) for f in files or []], queued=queued)

    def announce_call(self, call_id: str, name: str, arguments: str) -> None:
        """A call starts: shown redacted (the tool itself gets the arguments as written)."""
        self.emit(ToolCallStarted(call_id=call_id, name=name, arguments=self.redact(arguments),
                                  preview=self.redact(self.tools.preview(name, arguments))))

    def deliver_queued(self) -> None:
        """A step boundary: messages typed while the agent worked join the conversation now
        (after the results of the last reply's calls, so no call loses its result's place)."""
        if self.pending:
            return
        while self.queued:
            message = self.queued.popleft()
            self.emit(message)
            self.watchdog.reset("user message")
            self.messages.append({"role": "user", "content": message.model_text})

    def finish_call(
        self, call: ToolCallRequest, result: ToolResult, duration: float, *, interrupted: bool = False
    ) -> None:
        """Give a call its result: in the conversation, and as an event."""
        self.messages.append(tool_message(call.id, result.output))
        self._decisions.pop(call.id, None)
        self.verdicts.pop(call.id, None)
        self.emit(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                ok=result.ok,
                output=result.output,
                error=result.error,
                duration_s=round(duration, 6),
                files_changed=list(result.files_changed),
                interrupted=interrupted,
            )
        )

    def drop_pending(self, why: str) -> None:
        """Every call gets a result, even those a turn's end left unrun (no orphan calls)."""
        while self.pending:
            call = self.pending.popleft()
            self.finish_call(call, ToolResult.failure(why), 0.0)

    # -- the end of a turn -------------------------------------------------------------------------

    def end_turn(self, outcome: Outcome, reason: str) -> None:
        """The turn ends as the chart enters a waiting state; announced once the transition is done.

        Calls still waiting get their results, except when the turn waits for an approval of the
        first of them.
        """
        if outcome != "approval":
            self.drop_pending(NOT_RUN)
        self.ending = TurnEnded(outcome=outcome, reason=reason, steps=self.totals.steps)

    def take_ending(self) -> TurnEnded | None:
        """The turn's end, stamped now: it is announced after the transition into the waiting
        state, whose ``state_changed`` it must not seem to precede in the log."""
        ending, self.ending = self.ending, None
        return None if ending is None else replace(ending, ts=datetime.now(UTC))

    def start_work(self, doing: str) -> None:
        """A state's work begins in the current task (the one a pause cancels and waits for)."""
        self.task = asyncio.current_task()
        self.doing = doing

    def end_work(self) -> None:
        self.doing = None

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait for a cancelled state's work to wind down (a killed command to be reaped)."""
        task = self.task
        if task is not None and not task.done() and task is not asyncio.current_task():
            await asyncio.wait([task], timeout=timeout)
