"""The agent's statechart: a control region and a phase region, run in parallel.

Reading this module tells every edge the agent can take and why. The control region is the
tool-level loop (every tool call is a transition); the phase region is the workflow, compiled
from its data. The chart decides what happens next: a running state's work (``invoke``) returns
what happened — a model reply, a tool result, a capture — as the data of its completion event
(``done.invoke.<state>``), and the state's transitions pick the next state through named guards.
Leaving a state cancels its work (a pause cuts the stream or kills the command).

Callback names (``think``, ``needs_approval``, ``ask_approval``…) are resolved on the listeners
the Session passes (``session/runtime.py`` lists them: one per state's work, the guards, the
turn endings), so one chart class serves every session of a workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from statemachine import State, StateChart
from statemachine.io import create_machine_class_from_definition
from statemachine.model import Model  # the default model: the chart keeps no state of its own there

from agentcli.workflow.model import Workflow

DONE = "done.invoke"
"""The prefix of a state's completion event: its work returned, with the outcome as ``data``."""


def done(state: str) -> str:
    """The event a state's invoked work sends when it returns (``done.invoke.thinking``)."""
    return f"{DONE}.{state}"


def _t(target: str, **extra: Any) -> dict[str, Any]:
    return {"target": target, **extra}


def _next_call(has_calls: str) -> list[dict[str, Any]]:
    """To run the next call of the reply: ask the user first when the policy says so."""
    return [_t("awaitingPermission", cond="needs_approval", on="ask_approval"), _t("executingTool", cond=has_calls)]


BEGIN = [_t("capturingBaseline", cond="has_snapshots"), *_next_call("has_pending_calls"), _t("thinking")]
"""How every turn starts (a task, an answer, guidance, a verdict): capture what changed while the
agent waited, then run the approved call, or think."""

STOP = {"pause": [_t("paused", on="stop")]}
"""The user stops the agent: leaving a state cancels its work (the stream, the command)."""

COMPACT = [_t("compacting")]
"""The user asks for the model's view to be compacted now (``/compact``, ``agentcli compact``)."""


def _model_call(state: str, *, silent: dict[str, Any]) -> dict[str, Any]:
    """``thinking`` and ``reminded``: one model call, and where its reply leads."""
    return {
        "invoke": "think",
        "exit": "count_model_call",
        # Checked on entry, before the call is made: the step limits are safety nets, not the
        # normal stop; a request that would fill the context window is compacted first.
        "transitions": [
            _t("halted", cond="over_step_limit", on="halt_at_step_limit"),
            _t("compacting", cond="needs_compaction"),
        ],
        "on": {
            done(state): [
                *_next_call("has_tool_calls"),
                _t("compacting", cond="model_overflowed"),  # once: compact, then the same step again
                _t("paused", cond="model_unavailable", on="give_up_on_model"),
                _t("paused", cond="still_overflowing", on="pause_on_overflow"),
                _t("halted", cond="model_refused", on="refused_by_model"),
                _t("halted", cond="model_failed", on="fail_model"),
                silent,  # a reply without any tool call
            ],
            **STOP,
        },
    }


CONTROL: dict[str, dict[str, Any]] = {
    "idle": {"initial": True, "on": {"user_message": BEGIN, "compact": COMPACT}},
    "capturingBaseline": {
        "invoke": "capture_baseline",
        "exit": "finish_capture",
        "on": {done("capturingBaseline"): [*_next_call("has_pending_calls"), _t("thinking")], **STOP},
    },
    "thinking": _model_call("thinking", silent=_t("reminded", on="remind")),
    "reminded": _model_call("reminded", silent=_t("paused", on="stop_silent")),
    "compacting": {
        "invoke": "summarize_history",
        "on": {
            done("compacting"): [
                _t("paused", cond="compaction_failed", on="pause_on_failed_compaction"),
                _t("idle", cond="asked_in_idle", on="end_compaction"),
                _t("paused", cond="asked_by_user", on="end_compaction"),
                _t("thinking"),
            ],
            **STOP,
        },
    },
    "executingTool": {
        "invoke": "run_call",
        "exit": "record_cut_off_call",
        "on": {
            done("executingTool"): [
                _t("idle", cond="is_complete", on="complete"),
                _t("awaitingClarification", cond="is_clarify", on="ask"),
                _t("paused", cond="is_pause", on="pause_by_agent"),
                _t("capturingSnapshot", cond="modifies_files"),
                _t("reviewingProgress"),
            ],
            **STOP,
        },
    },
    "capturingSnapshot": {
        "invoke": "capture_after_call",
        "exit": "finish_capture",
        "on": {done("capturingSnapshot"): [_t("reviewingProgress")], **STOP},
    },
    "reviewingProgress": {
        # No work to wait for: the review happens on entry, then the chart moves on at once.
        "enter": "review_progress",
        "exit": "end_review",
        "transitions": [
            _t("halted", cond="is_stuck", on="halt_stuck"),
            *_next_call("has_pending_calls"),
            _t("thinking"),
        ],
    },
    "awaitingPermission": {
        "exit": "set_aside_approval",
        "on": {"approve": BEGIN, "deny": BEGIN, **STOP},
    },
    "awaitingClarification": {
        "exit": "set_aside_question",
        "on": {"answer": BEGIN, **STOP},
    },
    "paused": {"on": {"user_message": BEGIN, "resume": BEGIN, "compact": COMPACT}},
    "halted": {"on": {"user_message": BEGIN, "resume": BEGIN, "compact": COMPACT}},
}
"""The control region: the tool-level loop of seed 001, read top to bottom like its diagram.

``[cond]`` guards choose among a state's transitions in order; ``on`` names what the transition
does (most of them end the turn, saying how). ``transitions`` without an event are taken as soon
as their guard holds: a choice the chart makes on its own.
"""

CONTROL_STATES = tuple(CONTROL)
"""The control region's states."""

WAITING_STATES = frozenset(
    name for name, state in CONTROL.items() if "invoke" not in state and "transitions" not in state
)
"""States where the agent does nothing until the user acts: a turn has ended there."""


def _control_region() -> dict[str, Any]:
    return {
        "states": {name: dict(state) for name, state in CONTROL.items()},
        # Whatever fails, in any state's work or in the chart's own callbacks, ends the turn in
        # `halted` with the error: never a silent stall. Internal, so the phase region stays put.
        "on": {"error.execution": [_t("halted", internal=True, on="fail")]},
    }


def _phase_signal(transition_tool: str | None, checks: str | None) -> str:
    """The guard of a phase transition: the review of a finished call raised its signal."""
    return f"tool_signal == '{transition_tool}'" if transition_tool else f"checks_signal == '{checks}'"


def _phase_region(workflow: Workflow) -> dict[str, Any]:
    """Nest dotted phase names (``plan.design``) into compound states."""
    root: dict[str, Any] = {}
    for phase in workflow.phases:
        node = root
        parts = phase.name.split(".")
        for depth, _part in enumerate(parts):
            state_id = state_id_for(".".join(parts[: depth + 1]))
            entry = node.setdefault(state_id, {"name": ".".join(parts[: depth + 1]), "enter": "enter_phase"})
            if depth < len(parts) - 1:
                node = entry.setdefault("states", {})
    initial_path = workflow.initial.split(".")
    node = root
    for depth in range(len(initial_path)):
        entry = node[state_id_for(".".join(initial_path[: depth + 1]))]
        entry["initial"] = True
        node = entry.get("states", {})
    for transition in workflow.transitions:
        # Taken in the same step as the control region leaves reviewingProgress, so the next
        # model call already sees the new phase.
        source = _find(root, transition.source)
        cond = _phase_signal(transition.tool, transition.checks)
        source.setdefault("transitions", []).append(_t(state_id_for(transition.target), cond=cond))
    for name in workflow.terminal:
        # A new task after reaching a terminal phase starts the workflow again.
        _find(root, name).setdefault("on", {})["user_message"] = [_t(state_id_for(workflow.initial))]
    return {"states": root}


def _find(root: dict[str, Any], name: str) -> dict[str, Any]:
    parts = name.split(".")
    node: dict[str, Any] = {"states": root}
    for depth in range(len(parts)):
        node = node["states"][state_id_for(".".join(parts[: depth + 1]))]
    return node


def state_id_for(phase_name: str) -> str:
    """The chart state id of a phase: dots become double underscores (ids must be identifiers)."""
    return "phase_" + phase_name.replace(".", "__")


@lru_cache(maxsize=32)
def _chart_class(workflow_json: str) -> type[StateChart[Model]]:
    workflow = Workflow.model_validate_json(workflow_json)
    definition: dict[str, Any] = {
        "agent": {
            "parallel": True,
            "initial": True,
            "states": {"control": _control_region(), "phase": _phase_region(workflow)},
        }
    }
    return create_machine_class_from_definition(f"AgentChart_{workflow.name.replace('-', '_')}", definition)


def chart_class(workflow: Workflow) -> type[StateChart[Model]]:
    """The chart class for a workflow, built once per distinct workflow definition."""
    return _chart_class(workflow.model_dump_json())


def initial_configuration(chart: type[StateChart[Model]]) -> list[str]:
    """The state ids a new chart enters, outermost first: every region of a parallel state, the
    initial child of a compound one."""
    roots = [state for state in chart.states_map.values() if state.parent is None]
    configuration: list[str] = []

    def enter(state: State) -> None:
        configuration.append(state.id)
        children = list(state.states)
        if state.parallel:
            for child in children:
                enter(child)
        elif children:
            enter(next((child for child in children if child.initial), children[0]))

    for root in roots:
        if root.initial:
            enter(root)
    return configuration


def control_events(chart: type[StateChart[Model]], state_id: str) -> frozenset[str]:
    """The events a control state (with its ancestors in the control region) has transitions for."""
    events: set[str] = set()
    state = chart.states_map.get(state_id)
    while state is not None and state.id != "agent":
        for transition in state.transitions:
            events.update(str(event) for event in transition.events)
        state = state.parent
    return frozenset(events)


NodeKind = Literal["atomic", "compound", "parallel"]


@dataclass(frozen=True)
class GraphNode:
    id: str
    name: str
    parent: str | None
    kind: NodeKind
    initial: bool
    final: bool


@dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    event: str
    cond: str | None


@dataclass(frozen=True)
class ChartGraph:
    """The chart's own definition as data: what the TUI draws and tests check."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]

    def node(self, node_id: str) -> GraphNode:
        return next(node for node in self.nodes if node.id == node_id)

    def children(self, node_id: str) -> list[GraphNode]:
        return [node for node in self.nodes if node.parent == node_id]


@lru_cache(maxsize=32)
def chart_graph(chart: type[StateChart[Model]]) -> ChartGraph:
    """Read nodes and edges from a chart class (never from a hand-kept copy); once per class."""
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    for state in chart.states_map.values():
        kind: NodeKind = "parallel" if state.parallel else ("compound" if state.states else "atomic")
        nodes.append(
            GraphNode(
                id=state.id,
                name=state.name if state.id.startswith("phase_") else state.id,
                parent=state.parent.id if state.parent else None,
                kind=kind,
                initial=bool(state.initial),
                final=bool(state.final),
            )
        )
        for transition in state.transitions:
            if transition.initial:
                continue  # the implicit entry into an initial child is not an edge a user takes
            conds = [str(spec.func) for spec in transition.cond] if transition.cond else []
            for target in transition.targets:
                edges.append(
                    GraphEdge(
                        source=state.id,
                        target=target.id,
                        event=" ".join(transition.events),
                        cond=" and ".join(conds) or None,
                    )
                )
    return ChartGraph(nodes=nodes, edges=edges)
