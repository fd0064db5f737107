"""The agent's statechart: a control region and a phase region, run in parallel.

The control region is the tool-level loop (every tool call is a transition). The phase region is
the workflow, compiled from its data. The chart only decides *where we are*; the work each state
does is the Runtime's, started by the state's ``invoke`` and cancelled when the state is left.
Callback names (``run_thinking``, ``has_pending_calls``…) are resolved on the Runtime, which the
Session passes as a listener, so one chart class serves every session of a workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from statemachine import StateChart
from statemachine.io import create_machine_class_from_definition

from agentcli.workflow.model import Workflow

CONTROL_STATES = (
    "idle",
    "thinking",
    "executingTool",
    "capturingSnapshot",
    "awaitingPermission",
    "awaitingClarification",
    "paused",
    "halted",
)
"""The control region's states."""

WAITING_STATES = frozenset({"idle", "awaitingPermission", "awaitingClarification", "paused", "halted"})
"""States where the agent does nothing until the user acts: a turn has ended."""


def _t(target: str, **extra: Any) -> dict[str, Any]:
    return {"target": target, **extra}


def _start(event: str, then: str = "thinking") -> dict[str, list[dict[str, Any]]]:
    """A turn starts by thinking (or by the approved call), after capturing the workspace when
    this process has not yet: what changed while no agent was watching gets its own entry."""
    return {event: [_t("capturingSnapshot", cond="needs_first_snapshot"), _t(then)]}


def _control_region() -> dict[str, Any]:
    resumable = {**_start("user_message"), **_start("resume")}
    pause = {"pause": [_t("paused")]}
    return {
        "states": {
            "idle": {"initial": True, "on": _start("user_message")},
            "thinking": {
                "invoke": "run_thinking",
                "on": {
                    "tool_call": [_t("executingTool")],
                    # A reply without a control tool: one reminder, which re-enters thinking.
                    "nudge": [_t("thinking")],
                    "step_limit": [_t("halted")],
                    "fail": [_t("halted")],
                    **pause,
                },
            },
            "executingTool": {
                "invoke": "run_tool",
                "on": {
                    "tool_done": [
                        _t("capturingSnapshot", cond="modifies_files"),
                        _t("executingTool", cond="has_pending_calls"),
                        _t("thinking"),
                    ],
                    "permission_needed": [_t("awaitingPermission")],
                    "completed": [_t("idle")],
                    "clarify": [_t("awaitingClarification")],
                    "stuck": [_t("halted")],
                    "fail": [_t("halted")],
                    **pause,
                },
            },
            "capturingSnapshot": {
                "invoke": "run_capture",
                "on": {
                    "snapshot_done": [_t("executingTool", cond="has_pending_calls"), _t("thinking")],
                    "stuck": [_t("halted")],
                    **pause,
                },
            },
            "awaitingPermission": {
                "on": {**_start("approve", "executingTool"), **_start("deny", "executingTool"), **pause}
            },
            "awaitingClarification": {"on": {**_start("answer"), **pause}},
            "paused": {"on": resumable},
            "halted": {"on": resumable},
        }
    }


def _phase_event(transition_tool: str | None, checks: str | None) -> str:
    return f"called_{transition_tool}" if transition_tool else f"checks_{checks}"


def _phase_region(workflow: Workflow) -> dict[str, Any]:
    """Nest dotted phase names (``plan.design``) into compound states."""
    root: dict[str, Any] = {}
    for phase in workflow.phases:
        node = root
        parts = phase.name.split(".")
        for depth, part in enumerate(parts):
            state_id = state_id_for(".".join(parts[: depth + 1]))
            entry = node.setdefault(state_id, {"name": ".".join(parts[: depth + 1])})
            if depth < len(parts) - 1:
                node = entry.setdefault("states", {})
    initial_path = workflow.initial.split(".")
    node = root
    for depth in range(len(initial_path)):
        entry = node[state_id_for(".".join(initial_path[: depth + 1]))]
        entry["initial"] = True
        node = entry.get("states", {})
    for transition in workflow.transitions:
        source = _find(root, transition.source)
        event = _phase_event(transition.tool, transition.checks)
        source.setdefault("on", {}).setdefault(event, []).append(_t(state_id_for(transition.target)))
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
def _chart_class(workflow_json: str) -> type[StateChart]:
    workflow = Workflow.model_validate_json(workflow_json)
    definition = {
        "agent": {
            "parallel": True,
            "initial": True,
            "states": {"control": _control_region(), "phase": _phase_region(workflow)},
        }
    }
    return create_machine_class_from_definition(f"AgentChart_{workflow.name.replace('-', '_')}", definition)


def chart_class(workflow: Workflow) -> type[StateChart]:
    """The chart class for a workflow, built once per distinct workflow definition."""
    return _chart_class(workflow.model_dump_json())


def initial_configuration(chart: type[StateChart]) -> list[str]:
    """The state ids a new chart enters, outermost first: every region of a parallel state, the
    initial child of a compound one."""
    roots = [state for state in chart.states_map.values() if state.parent is None]
    configuration: list[str] = []

    def enter(state: Any) -> None:
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


def control_events(chart: type[StateChart], state_id: str) -> frozenset[str]:
    """The events a control state (with its ancestors in the control region) has transitions for."""
    events: set[str] = set()
    state = chart.states_map.get(state_id)
    while state is not None and state.id != "agent":
        for transition in state.transitions:
            events.update(str(event) for event in transition.events)
        state = state.parent
    return frozenset(events)


def phase_events(workflow: Workflow) -> frozenset[str]:
    """Events the phase region listens to; the runtime sends only these."""
    return frozenset(_phase_event(t.tool, t.checks) for t in workflow.transitions)


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
def chart_graph(chart: type[StateChart]) -> ChartGraph:
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
