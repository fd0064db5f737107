"""Whatever a model sends as a tool's arguments, the call gets a result and the run ends.

A property test throws random and hostile arguments (broken JSON, NUL bytes, lone surrogates,
paths to FIFOs, directories, devices and links out of the workspace, binary noise, absurd
numbers) at every tool, through the real runtime and the real permission policy, in each
permission mode. Every call must end with a tool result the model can read, and the turn must
end the way the model asked, never with an internal error and never with a stall.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.config import Settings
from agentcli.events import ToolCallFinished, ToolCallRequest, ToolCallStarted, TurnEnded
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem
from agentcli.config import PermissionSettings
from agentcli.session import Session
from tests.core.test_failures import EVERY_TOOL
from tests.support.sessions import Recorder

HOSTILE_PATHS = [
    "fifo", "dir", "dir/", "link-out", "link-zero", "link-loop", "/dev/zero", "/proc/self/mem", "/etc/passwd",
    "../outside", "a\x00b", "\udcff", "x\ud800y", "~", "~/x", "", " ", ".", "..", ".git/config", "a" * 5000,
    "dir/" * 200 + "x", "new/deep/file.txt", "text.txt", "bin.dat", "\n", "-rf",
]

TEXT = st.one_of(
    st.text(max_size=200),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=50),  # surrogates included
    st.binary(max_size=200).map(lambda raw: raw.decode("latin-1")),
    st.sampled_from(HOSTILE_PATHS),
)
VALUES = st.recursive(
    st.one_of(TEXT, st.integers(), st.floats(allow_nan=True), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=8,
)


def _safe_command() -> st.SearchStrategy[str]:
    """Shell commands that only print: random text, raw bytes, huge output, a failing exit code."""
    printed = TEXT.map(lambda text: f"printf %s {shlex.quote(text.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace'))}")
    raw = st.binary(max_size=64).map(lambda data: "printf '" + "".join(f"\\{byte:03o}" for byte in data) + "'")
    return st.one_of(printed, raw, st.just("head -c 300000 /dev/zero"), st.integers(0, 255).map(lambda n: f"exit {n}"))


def _typed(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Hostile values of the type a schema property asks for (so they get past validation)."""
    kinds = {item.get("type") for item in prop.get("anyOf", [prop])}
    options: list[st.SearchStrategy[Any]] = []
    if "string" in kinds:
        options.append(TEXT)
    if "integer" in kinds:
        options.append(st.integers(min_value=-(2**70), max_value=2**70))
    if "number" in kinds:
        options.append(st.floats(allow_nan=False))
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds:
        item = prop.get("items", {})
        options.append(st.lists(_typed(item) if item.get("type") != "object" else _object(item), max_size=3))
    return st.one_of(*options) if options else VALUES


def _object(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries({name: _typed(props[name]) for name in props if name in required},
                                 optional={name: _typed(prop) for name, prop in props.items() if name not in required})


@st.composite
def arguments(draw: st.DrawFn, tool: str, schema: dict[str, Any]) -> str:
    """A call's arguments as raw text: broken JSON, a non-object, random keys, or the tool's own
    keys with hostile values of the right type (the case that reaches the tool's code)."""
    kind = draw(st.sampled_from(["typed", "typed", "typed", "random", "raw"]))
    if kind == "raw":
        return draw(st.one_of(st.text(max_size=100), st.sampled_from(['{"path": ', "[]", "null", "1", '"x"', "{}}"])))
    if kind == "typed":
        values: dict[str, Any] = draw(_object(schema))
    else:
        names = list(schema.get("properties", {}))
        keys = draw(st.lists(st.one_of(st.sampled_from(names), TEXT) if names else TEXT, max_size=5, unique=True))
        values = {key: draw(VALUES) for key in keys}
    if tool == "bash" and draw(st.booleans()):
        values["command"] = draw(_safe_command())
    elif tool == "bash":
        values.pop("command", None)  # a command of random text could do anything: only printing runs
    return json.dumps(values, ensure_ascii=True, allow_nan=True)


class OneCall:
    """A model that makes one call, then completes whenever it is asked again (the explore child too)."""

    def __init__(self, call: ToolCallRequest) -> None:
        self.call: ToolCallRequest | None = call

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        call, self.call = self.call, None
        calls = [call] if call is not None else [ToolCallRequest(id="end", name="complete", arguments='{"summary": "ok"}')]
        yield ModelResponse(text="", tool_calls=calls, finish_reason="tool_calls", usage=None, cost=None, model="m")


def _hostile_workspace() -> Path:
    workspace = Path(tempfile.mkdtemp(prefix="hostile-")).resolve()
    (workspace / "dir").mkdir()
    (workspace / "text.txt").write_text("hello\nworld\n")
    (workspace / "bin.dat").write_bytes(b"\x00\xff" * 100)
    os.mkfifo(workspace / "fifo")
    os.symlink("/etc", workspace / "link-out")
    os.symlink("/dev/zero", workspace / "link-zero")
    os.symlink("link-loop", workspace / "link-loop")
    return workspace


_SCHEMAS = {schema["function"]["name"]: schema["function"]["parameters"]
            for schema in Session(workspace=Path("."), settings=Settings(), workflow=EVERY_TOOL,
                                  model_client=OneCall(ToolCallRequest(id="x", name="x", arguments=""))).turn.tools.schemas()}


@pytest.mark.parametrize("tool", [*sorted(_SCHEMAS), "no_such_tool"])
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), mode=st.sampled_from(["ask", "edits", "all"]))
def test_every_hostile_call_gets_a_result_and_the_turn_ends(tool: str, data: st.DataObject, mode: str) -> None:
    call = ToolCallRequest(id="hostile", name=tool, arguments=data.draw(arguments(tool, _SCHEMAS.get(tool, {}))))
    workspace = _hostile_workspace()
    session = Session(workspace=workspace, settings=Settings(permissions=PermissionSettings(mode=mode)),  # type: ignore[arg-type]
                      workflow=EVERY_TOOL, model_client=OneCall(call))
    rec = Recorder()
    session.subscribe(rec)

    async def run() -> TurnEnded:
        return await asyncio.wait_for(session.run_turn("go"), 60)

    ended = asyncio.run(run())
    assert ended.outcome in ("completed", "approval", "clarify", "paused"), (call, ended)
    started = [e.call_id for e in rec.of(ToolCallStarted)]
    finished = [e.call_id for e in rec.of(ToolCallFinished)]
    if ended.outcome != "approval":
        assert "hostile" in finished, "the call got a result"
    assert set(started) <= set(finished)
    asked = {c["id"] for m in session.turn.messages if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    answered = {m["tool_call_id"] for m in session.turn.messages if m["role"] == "tool"}
    assert answered == asked - ({"hostile"} if ended.outcome == "approval" else set())
    for event in rec.of(ToolCallFinished):
        event.output.encode("utf-8")  # valid text, whatever the tool read or ran
