"""The agent loop's own cost per step, apart from the model and the tools.

Runs 1,000 tool steps through the replay model with a no-op tool and prints
``overhead per step: X ms`` (total time minus time inside the model stream and the tool), then
the same work done by a bare loop with no chart, events or history, as a baseline in the same
run. A second pass under tracemalloc prints peak memory and how memory grows per step next to
the conversation the session must keep (events go to the log, not to memory).

Goal: under 2 ms per step, and no growth per step beyond the events kept.

That figure leaves out litellm, the snapshots and the session log. ``--litellm`` measures the
whole step instead: CPU per model call of the real Session through litellm against a local
server, paired with a stand-in agent loop on plain litellm (``bench/step_cost.py``), at 2 and
300 steps. Goal: at most 0.5x the stand-in at 300 steps, and at most 1.0x at 2 steps.

    python bench/loop_overhead.py [--steps 1000] [--litellm [--pairs 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

from agentcli.config import Settings
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.llm.types import ModelRequest, StreamItem
from agentcli.session import Session
from agentcli.tools.base import Arguments, Tool, ToolContext, ToolResult
from agentcli.tools.control import Complete
from agentcli.tools.registry import ToolRegistry
from agentcli.workflow import builtin_workflow


class NoopArgs(Arguments):
    n: int = 0


class Noop(Tool[NoopArgs]):
    name = "noop"
    description = "Does nothing."
    arguments = NoopArgs

    def __init__(self) -> None:
        self.seconds = 0.0

    async def run(self, args: NoopArgs, ctx: ToolContext) -> ToolResult:
        started = time.perf_counter()
        result = ToolResult(ok=True, output=f"noop {args.n}")
        self.seconds += time.perf_counter() - started
        return result


class TimedReplay:
    """Wraps the replay model and adds up the time spent inside its stream."""

    def __init__(self, inner: ReplayModel) -> None:
        self.inner = inner
        self.seconds = 0.0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        iterator = self.inner.stream(request).__aiter__()
        while True:
            started = time.perf_counter()
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield item


def recording(steps: int) -> Recording:
    turns = [RecordedTurn(tool_calls=[RecordedCall(name="noop", arguments={"n": n})], usage=(10, 2)) for n in range(steps)]
    turns.append(RecordedTurn(tool_calls=[RecordedCall(name="complete", arguments={"summary": "done"})]))
    return Recording(turns=turns)


async def run_session(steps: int, workspace: Path) -> tuple[float, float, float, int, int]:
    noop = Noop()
    model = TimedReplay(ReplayModel(recording(steps)))
    session = Session(
        workspace=workspace,
        settings=Settings(max_steps=steps + 10),
        workflow=builtin_workflow("single"),
        model_client=model,
        tools=ToolRegistry([noop, Complete()]),
    )
    counted = [0]
    session.subscribe(lambda event: counted.__setitem__(0, counted[0] + 1))
    started = time.perf_counter()
    ended = await session.run_turn("go")
    total = time.perf_counter() - started
    assert ended.outcome == "completed", ended
    return total, model.seconds, noop.seconds, counted[0], session.turn.messages.chars


async def bare_loop(steps: int, workspace: Path) -> float:
    """The same model turns and tool calls with nothing of the agent around them."""
    noop = Noop()
    model = ReplayModel(recording(steps))
    ctx = ToolContext(workspace)
    request = ModelRequest(model="replay", messages=[])
    started = time.perf_counter()
    for _ in range(steps + 1):
        async for item in model.stream(request):
            last = item
        for call in last.tool_calls:  # type: ignore[union-attr]
            if call.name == "noop":
                await noop.run(NoopArgs.model_validate(json.loads(call.arguments)), ctx)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--litellm", action="store_true",
                        help="the whole step through litellm against a local server, paired with a stand-in loop")
    parser.add_argument("--pairs", type=int, default=3)
    options = parser.parse_args()
    if options.litellm:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from step_cost import compare

        compare([2, 300], options.pairs)
        return
    steps = options.steps
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-bench-")).resolve()

    asyncio.run(run_session(50, workspace))  # warm caches (chart class, pydantic validators)
    total, model_s, tool_s, event_count, _ = asyncio.run(run_session(steps, workspace))
    baseline = asyncio.run(bare_loop(steps, workspace))
    overhead = (total - model_s - tool_s) / steps
    print(f"steps: {steps}, events emitted: {event_count}")
    print(f"total: {total * 1000:.1f} ms  (model {model_s * 1000:.1f} ms, tools {tool_s * 1000:.1f} ms)")
    print(f"overhead per step: {overhead * 1000:.3f} ms")
    print(f"bare loop (no chart, events or history): {baseline / steps * 1000:.3f} ms per step")
    print(f"ratio agent/bare: {total / baseline:.1f}x   goal: overhead under 2 ms per step")

    gc.collect()
    tracemalloc.start()
    small = asyncio.run(run_session(steps // 4, workspace))
    small_current, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    large = asyncio.run(run_session(steps, workspace))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_step = (peak - small_current) / (steps - steps // 4)
    print(f"peak memory during {steps} steps: {peak / 1024 / 1024:.2f} MiB")
    history_per_step = (large[4] - small[4]) / (steps - steps // 4)
    print(f"growth per step: {per_step / 1024:.2f} KiB; the conversation it must keep grows "
          f"{history_per_step / 1024:.2f} KiB of JSON per step (3 messages); events are not kept in memory")


if __name__ == "__main__":
    main()
