"""Streaming 20,000 tokens through the TUI: does it keep up, and does input stay live?

A scripted model yields 20,000 markdown tokens (headings, paragraphs, lists, code, tables),
either as fast as the event loop lets it (the renderer's ceiling) or paced on a wall clock with
``--rate`` (200 tokens/s is a fast model), through a real Session into the app (headless,
120x40); ``--hog`` keeps a busy process running beside it. While it streams, a probe types a
key into the prompt every 100 ms and times until the Input shows it, a ticker measures
event-loop lag, and every garbage collection is timed. Printed:

- how long the model took to emit everything, and how long until the UI had rendered all of
  it, against the same stream through a Session with no UI (baseline, same run);
- the backlog (characters emitted but not yet in the Markdown widget) sampled over the run, and
  whether it grows from the first half of the stream to the second;
- keypress-to-Input latency while streaming, against the same probe with the app idle;
- event-loop stalls over 100 ms and the longest, and the garbage collector's pauses (a full
  collection walks every widget, strip and cache the stream left alive).

Goals (issue 20): no stall over 100 ms at 200 tokens/s, quiet or with ``--hog``; a ceiling of
at least 1,000 tokens/s with tables.

    python bench/tui_streaming.py [--tokens 20000] [--rate 200] [--hog] [--no-tables] [--objects]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gc_report import PolicyOff, report_end, state


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

    def __init__(self, tokens: list[str], rate: float = 0.0) -> None:
        self.tokens = tokens
        self.rate = rate
        """Tokens per second on a wall clock (0: as fast as the loop allows)."""
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
        started = time.perf_counter()
        for number, token in enumerate(self.tokens):
            if self.rate:
                # Paced on a wall clock, as a model's tokens arrive: a late chunk is not made up
                # for by a burst later (a stall shows as lag, and the backlog it leaves).
                due = started + number / self.rate
                delay = due - time.perf_counter()
                await asyncio.sleep(max(0.0, delay))
            self.emitted_chars += len(token)
            yield TextChunk(token)
            if not self.rate:
                await asyncio.sleep(0)  # a network stream yields to the loop between chunks too
        self.finished_at = time.perf_counter()
        yield ModelResponse(text="".join(self.tokens), tool_calls=[], finish_reason="stop", usage=Usage(10, 20000),
                            cost=None, model="flood")


def make_session(workspace: Path, model: FloodModel) -> Session:
    return Session(workspace=workspace, settings=Settings(model="replay:flood.json"),
                   workflow=builtin_workflow("single"), model_client=model)


async def baseline(workspace: Path, tokens: list[str], rate: float) -> float:
    """The same stream through a Session with a no-op subscriber: the cost without any UI."""
    model = FloodModel(tokens, rate)
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
        self.stalls: list[tuple[float, float]] = []
        """When each tick over 100 ms late started and ended."""

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
            ended = time.perf_counter()
            self.lags.append(ended - started - 0.01)
            if ended - started - 0.01 > 0.1:
                self.stalls.append((started, ended))


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 2 else (max(values) if values else 0.0)


class GcPauses:
    """Times every collection the garbage collector runs (a full one can hold the loop)."""

    def __init__(self, count_objects: bool = False) -> None:
        self.pauses: list[tuple[int, float]] = []
        self.spans: list[tuple[float, float]] = []
        """When each collection ran (perf_counter), to tell the stalls they were in."""
        self.freed: list[int] = []
        self.tracked: list[int] = []
        """Objects each collection freed, and how many the collector tracked when a full one started
        (counted only with --objects: counting holds the loop too, 10-30 ms under load)."""
        self.count_objects = count_objects
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            if info["generation"] == 2 and self.count_objects:
                self.tracked.append(len(gc.get_objects()))  # counted before the clock starts
            self._started = time.perf_counter()
        else:
            ended = time.perf_counter()
            self.pauses.append((info["generation"], ended - self._started))
            self.spans.append((self._started, ended))
            self.freed.append(info["collected"])

    def within(self, start: float, end: float) -> float:
        """Seconds of collection between ``start`` and ``end``."""
        return sum(min(end, b) - max(start, a) for a, b in self.spans if a < end and b > start)


async def run(tokens: list[str], rate: float, objects_report: bool = False, gc_policy: bool = True) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    base = await baseline(workspace, tokens, rate)
    total_chars = sum(len(t) for t in tokens)

    model = FloodModel(tokens, rate)
    gc_pauses = GcPauses(count_objects=objects_report)
    gc.freeze()  # as agentcli.tui.run does before starting the app
    app = AgentApp(workspace=workspace, settings=Settings(model="replay:flood.json", theme="agentcli-dark"),
                   session=make_session(workspace, model), warm_up=False)
    if not gc_policy:
        app.gc_policy = PolicyOff()
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.session_ready:
            await pilot.pause(0.01)
        gc.freeze()  # as the litellm warm-up does after its import, a second or so after start-up
        print(f"before the stream: {state()}")
        probe = Probe(app)
        for _ in range(10):  # idle latency, the baseline for input
            await probe.type_once()
            await asyncio.sleep(0.05)
        idle_latency = list(probe.latencies)
        probe.latencies.clear()
        app.query_one("#prompt-input", PromptInput).value = ""

        stop = asyncio.Event()
        ticker = asyncio.create_task(probe.lag_ticker(stop))
        gc.callbacks.append(gc_pauses)
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
        gc.callbacks.remove(gc_pauses)
        stop.set()
        await ticker  # the reports below hold the loop: not the stream's stalls
        report_end(app.gc_policy, enabled=gc_policy)
        if objects_report:
            # What a full collection has to walk: the objects the stream left alive, by type.
            import collections

            from textual.widget import Widget

            alive = gc.get_objects()
            print(f"most common tracked objects: {collections.Counter(type(o).__name__ for o in alive).most_common(8)}")
            print(f"objects the collector tracks: {len(alive):,}; widgets in the DOM: "
                  f"{len(list(app.screen.walk_children())):,}; most common widgets: "
                  f"{collections.Counter(type(o).__name__ for o in alive if isinstance(o, Widget)).most_common(6)}")
            del alive  # it holds every object, garbage too
            collect_started = time.perf_counter()
            freed = gc.collect()
            print(f"one full collection now: {(time.perf_counter() - collect_started) * 1000:.0f} ms, "
                  f"{freed:,} objects freed; widgets left: {sum(isinstance(o, Widget) for o in gc.get_objects()):,}")
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
    stalls = [lag for lag in probe.lags if lag > 0.1]
    print(f"event-loop stalls over 100 ms: {len(stalls)}, longest {max(probe.lags, default=0) * 1000:.0f} ms "
          f"(goal: none at 200 tokens/s)")
    collected = [gc_pauses.within(a, b) for a, b in probe.stalls]
    if stalls:
        rest = [b - a - 0.01 - c for (a, b), c in zip(probe.stalls, collected, strict=True)]
        print(f"  of those, {sum(c > 0 for c in collected)} had a garbage collection in them; without the collections "
              f"{sum(r > 0.1 for r in rest)} would still be over 100 ms (longest {max(rest) * 1000:.0f} ms)")
        print("  when (s after the prompt, length in ms, collector's ms in it): " + ", ".join(
            f"{a - started:.1f} s {(b - a - 0.01) * 1000:.0f}/{c * 1000:.0f}"
            for (a, b), c in zip(probe.stalls, collected, strict=True)))
    full = [pause for generation, pause in gc_pauses.pauses if generation == 2]
    print(f"garbage collections: {len(gc_pauses.pauses)}, longest {max((p for _, p in gc_pauses.pauses), default=0) * 1000:.0f} ms; "
          f"full ones: {len(full)}, longest {max(full, default=0) * 1000:.0f} ms")
    freed_by = [sum(n for (g, _), n in zip(gc_pauses.pauses, gc_pauses.freed, strict=True) if g == generation)
                for generation in (0, 1, 2)]
    print(f"  cyclic garbage they freed: {freed_by[0]:,} objects in young collections, {freed_by[1]:,} in "
          f"middle ones, {freed_by[2]:,} in full ones")
    longest = max(range(len(gc_pauses.pauses)), key=lambda n: gc_pauses.pauses[n][1], default=None)
    if longest is not None and full and gc_pauses.tracked:
        print(f"  the longest collection freed {gc_pauses.freed[longest]:,} objects; full collections walked "
              f"{min(gc_pauses.tracked):,}-{max(gc_pauses.tracked):,} tracked objects")
    print(f"blocks: {len(conversation.records)} chunks of the reply; mounted at the end: "
          f"{conversation.mounted_blocks} (weight {conversation.mounted_weight})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--rate", type=float, default=0.0,
                        help="tokens per second on a wall clock (default 0: as fast as the loop allows, the ceiling)")
    parser.add_argument("--hog", action="store_true", help="run a CPU hog (a busy Python loop) throughout")
    parser.add_argument("--objects", action="store_true",
                        help="at the end, count the objects a full garbage collection walks and time one")
    parser.add_argument("--no-tables", action="store_true",
                        help="no table in the sections (finished chunks can then be drawn by one widget)")
    parser.add_argument("--litellm", action="store_true",
                        help="import litellm first, frozen as the app's warm-up does (a user's process holds it; "
                             "the idle pass at the end then walks what it must walk there)")
    parser.add_argument("--no-gc-policy", action="store_true",
                        help="uninstall the app's collector policy (agentcli/tui/gc_policy.py), for an A/B")
    options = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    if options.litellm:
        from agentcli.llm.warmup import import_litellm

        import_litellm()
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if options.hog else None
    try:
        asyncio.run(run(markdown_tokens(options.tokens, tables=not options.no_tables), options.rate, options.objects,
                        gc_policy=not options.no_gc_policy))
    finally:
        if hog is not None:
            hog.kill()


if __name__ == "__main__":
    main()
