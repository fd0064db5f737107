"""A 1,000-step scripted session under a small context window: does it go on, and at what cost?

Runs the real Session and litellm's OpenAI code path against the local test server, which
refuses any request whose prompt plus max_tokens passes its limit (OpenAI's own 400) and counts
the prompt the same way every time. Each step reads a file of about 2,000 tokens. Prints how many
compactions ran, the peak request size against the window, the median request size, refused
requests, and the agent's own time per compaction (the model's summary request excluded: the
scripted server answers it at once, so what remains is the agent's work around it).

    .venv/bin/python bench/long_session.py [--steps 1000] [--window 8192]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.config import ModelLimitSettings, ModelRoles, RetrySettings, Settings  # noqa: E402
from agentcli.events import ContextCompacted, Event, StateChanged  # noqa: E402
from agentcli.session.factory import new_session  # noqa: E402
from tests.support.openai_server import Call, OpenAIServer, Reply, count_tokens  # noqa: E402

MODEL = "openai/bench-model"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--window", type=int, default=8192)
    args = parser.parse_args()
    asyncio.run(run(args.steps, args.window))


async def run(steps: int, window: int) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="long-session-")).resolve()
    for number in range(1, steps + 1):
        (workspace / f"f{number}.txt").write_text("\n".join(f"{number:05d} {'x' * 70}" for _ in range(100)) + "\n")
    progress = {"step": 0}

    def answer(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text=f"Read files 1 to {progress['step']}; each line holds its file's number. Next: read on.")
        progress["step"] += 1
        if progress["step"] > steps:
            return Reply(calls=[Call("complete", {"summary": f"read {steps} files"})])
        return Reply(calls=[Call("read_file", {"path": f"f{progress['step']}.txt"})])

    compacting_since: list[float] = []
    compaction_seconds: list[float] = []

    def timing(event: Event) -> None:
        if isinstance(event, StateChanged) and event.target == "compacting":
            compacting_since.append(time.perf_counter())
        elif isinstance(event, StateChanged) and event.source == "compacting" and compacting_since:
            compaction_seconds.append(time.perf_counter() - compacting_since.pop())

    events: list[Event] = []
    with OpenAIServer(context_limit=window).start() as server:
        server.default = answer
        settings = Settings(model=MODEL, api_base=server.base_url, max_steps=steps + 10,
                            retry=RetrySettings(attempts=2, base_delay_s=0.01),
                            models=ModelRoles(limits={MODEL: ModelLimitSettings(context_window=window)}))
        session = new_session(workspace, settings, data_dir=workspace / ".data", record=False,
                              default_permission_mode="all")
        session.subscribe(events.append)
        session.subscribe(timing)
        started = time.perf_counter()
        ended = await session.run_turn("read every file")
        wall = time.perf_counter() - started
        requests = [count_tokens(body) for body in server.requests if body.get("tools")]
        summaries = [body for body in server.requests if not body.get("tools")]
        rejected = len(server.rejected)
    compactions = [e for e in events if isinstance(e, ContextCompacted)]
    print(f"long session: {steps} steps of ~2,000-token outputs, a {window:,}-token window")
    print(f"  outcome: {ended.outcome} ({ended.reason}) in {wall:.1f} s")
    print(f"  compactions: {len(compactions)} ({len(summaries)} summary requests), refused requests: {rejected}")
    print(f"  request tokens: peak {max(requests):,} ({100 * max(requests) / window:.0f}% of the window), "
          f"median {statistics.median(requests):,.0f}")
    if compactions:
        print(f"  tokens per compaction: median {statistics.median(c.tokens_before for c in compactions):,.0f} → "
              f"{statistics.median(c.tokens_after for c in compactions):,.0f}")
    if compaction_seconds:
        print(f"  agent time per compaction: median {1000 * statistics.median(compaction_seconds):.1f} ms, "
              f"p95 {1000 * sorted(compaction_seconds)[int(len(compaction_seconds) * 0.95)]:.1f} ms")


if __name__ == "__main__":
    main()
