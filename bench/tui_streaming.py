"""Streaming 20,000 tokens at full speed through the TUI: does it keep up, and does input stay live?

A scripted model yields 20,000 markdown tokens (headings, paragraphs, lists, code, tables) as fast
as the event loop lets it, through a real Session into the app (headless, 120x40). While it
streams, a probe types a key into the prompt every 100 ms and times until the Input shows it,
and a ticker measures event-loop lag. Printed:

- how long the model took to emit everything, and how long until the UI had rendered all of
  it, against the same stream through a Session with no UI (baseline, same run);
- the backlog (characters emitted but not yet in the Markdown widget) sampled over the run, and
  whether it grows from the first half of the stream to the second;
- keypress-to-Input latency while streaming, against the same probe with the app idle.

    python bench/tui_streaming.py [--tokens 20000] [--no-tables]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from textual import events

from agentcli.config import Settings
from agentcli.events import ToolCallRequest
from agentcli.llm.types import ModelRequest, ModelResponse, StreamItem, TextChunk, Usage
from agentcli.session import Session
from agentcli.tui.app import AgentApp
from agentcli.tui.widgets._prompt_input import PromptInput
from agentcli.workflow import builtin_workflow


def markdown_tokens(count: int, tables: bool = True) -> list[str]:
    """Word-sized tokens of a long, varied markdown document (a table per section unless not ``tables``)."""
    words = ("the agent reads the file and then runs the tests again to check that nothing else "
             "broke while it was editing the function").split()
    tokens: list[str] = []
    section = 0
    while len(tokens) < count:
        section += 1
        tokens += [f"\n\n## Section {section}\n\n"]
        tokens += [w + " " for w in words * 2]
        tokens += ["\n\n"] + [f"- item {i} " + " ".join(words[i : i + 4]) + "\n" for i in range(5)]
        tokens += ["\n```python\n"] + [f"def f{i}(x):\n    return x * {i}\n" for i in range(4)] + ["```\n"]
        if tables:
            tokens += ["\n| a | b |\n|---|---|\n"] + [f"| {i} | {i * i} |\n" for i in range(3)]
    return tokens[:count]


class FloodModel:
    """Yields the tokens as fast as the loop allows, then completes; counts what it emitted."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.emitted_chars = 0
        self.finished_at: float | None = None
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.calls += 1
        if self.calls > 1:
            call = ToolCallRequest(id="done", name="complete", arguments='{"summary": "streamed"}')
            yield ModelResponse(text="", tool_calls=[call], finish_reason="tool_calls", usage=Usage(1, 1), cost=None,
                                model="flood")
            return
        for token in self.tokens:
            self.emitted_chars += len(token)
            yield TextChunk(token)
            await asyncio.sleep(0)  # a network stream yields to the loop between chunks too
        self.finished_at = time.perf_counter()
        yield ModelResponse(text="".join(self.tokens), tool_calls=[], finish_reason="stop", usage=Usage(10, 20000),
                            cost=None, model="flood")


def make_session(workspace: Path, model: FloodModel) -> Session:
    return Session(workspace=workspace, settings=Settings(model="replay:flood.json"),
                   workflow=builtin_workflow("single"), model_client=model)


async def baseline(workspace: Path, tokens: list[str]) -> float:
    """The same stream through a Session with a no-op subscriber: the cost without any UI."""
    model = FloodModel(tokens)
    session = make_session(workspace, model)
    session.subscribe(lambda event: None)
    started = time.perf_counter()
    await session.send_user_message("stream")
    while model.finished_at is None:
        await asyncio.sleep(0.001)
    return model.finished_at - started


class Probe:
    """Types into the prompt and times until the prompt has the character."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.latencies: list[float] = []
        self.lags: list[float] = []

    async def type_once(self) -> None:
        field = self.app.query_one("#prompt-input", PromptInput)
        before = len(field.value)
        started = time.perf_counter()
        field.post_message(events.Key("x", "x"))
        while len(field.value) == before:
            await asyncio.sleep(0.001)
        self.latencies.append(time.perf_counter() - started)

    async def lag_ticker(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.01)
            self.lags.append(time.perf_counter() - started - 0.01)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 2 else (max(values) if values else 0.0)


async def run(tokens: list[str]) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    base = await baseline(workspace, tokens)
    total_chars = sum(len(t) for t in tokens)

    model = FloodModel(tokens)
    app = AgentApp(workspace=workspace, settings=Settings(model="replay:flood.json", theme="agentcli-dark"),
                   session=make_session(workspace, model), warm_up=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.session_ready:
            await pilot.pause(0.01)
        probe = Probe(app)
        for _ in range(10):  # idle latency, the baseline for input
            await probe.type_once()
            await asyncio.sleep(0.05)
        idle_latency = list(probe.latencies)
        probe.latencies.clear()
        app.query_one("#prompt-input", PromptInput).value = ""

        stop = asyncio.Event()
        ticker = asyncio.create_task(probe.lag_ticker(stop))
        backlog: list[tuple[float, int, int]] = []
        started = time.perf_counter()
        assert app.session is not None
        await app.session.send_user_message("stream 20k tokens")

        conversation = app.conversation

        def received() -> int:
            return sum(len(r.text) for r in conversation.records if r.kind == "agent")

        def rendered() -> int:
            return received() - conversation.pending_chars

        while True:
            await probe.type_once()
            queued = conversation._message_queue.qsize()
            backlog.append((time.perf_counter() - started, model.emitted_chars - rendered(), queued))
            if model.finished_at is not None and received() >= total_chars and not conversation.rendering:
                break
            if time.perf_counter() - started > 600:
                print("gave up after 600 s")
                break
            await asyncio.sleep(0.1)
        ui_done = time.perf_counter() - started
        stop.set()
        await ticker
        model_done = (model.finished_at or time.perf_counter()) - started

    samples = backlog
    half = len(samples) // 2
    first = statistics.mean(b[1] for b in samples[:half]) if half else 0.0
    second = statistics.mean(b[1] for b in samples[half:]) if samples[half:] else 0.0
    print(f"tokens: {len(tokens):,} ({total_chars:,} characters of markdown)")
    print(f"baseline, session with no UI:        {base:7.2f} s to emit everything")
    print(f"with the TUI, model finished after:   {model_done:7.2f} s  ({model_done / base:.1f}x the baseline)")
    print(f"with the TUI, all of it rendered at:  {ui_done:7.2f} s  (catch-up after the model: {ui_done - model_done:.2f} s)")
    print(f"text backlog (emitted, not yet rendered), sampled every ~100 ms until all rendered: first half avg "
          f"{first:,.0f} chars, second half avg {second:,.0f}, max {max((b[1] for b in samples), default=0):,}")
    queue = [b[2] for b in backlog]
    half_q = len(queue) // 2
    print(f"conversation message queue: max {max(queue, default=0)} pending, first half avg "
          f"{statistics.mean(queue[:half_q]) if half_q else 0:.1f}, second half avg "
          f"{statistics.mean(queue[half_q:]) if queue[half_q:] else 0:.1f}")
    grows = second > first * 1.5 and second - first > 2000
    print(f"text backlog grows after the model stops: {'yes' if grows else 'no'} "
          f"(render rate {total_chars / ui_done / 1000:.1f}k chars/s = {len(tokens) / ui_done:,.0f} tokens/s)")
    print(f"keypress -> Input, idle:      p50 {pct(idle_latency, 50) * 1000:6.1f} ms  p95 {pct(idle_latency, 95) * 1000:6.1f} ms")
    print(f"keypress -> Input, streaming: p50 {pct(probe.latencies, 50) * 1000:6.1f} ms  p95 "
          f"{pct(probe.latencies, 95) * 1000:6.1f} ms  ({len(probe.latencies)} probes)")
    print(f"event-loop lag while streaming: p50 {pct(probe.lags, 50) * 1000:6.1f} ms  p95 {pct(probe.lags, 95) * 1000:6.1f} ms")
    print(f"blocks: {len(conversation.records)} Markdown chunks of ~4k chars; mounted at the end: "
          f"{conversation.mounted_blocks} (weight {conversation.mounted_weight})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--no-tables", action="store_true",
                        help="no table in the sections (finished chunks can then be drawn by one widget)")
    options = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    asyncio.run(run(markdown_tokens(options.tokens, tables=not options.no_tables)))


if __name__ == "__main__":
    main()
