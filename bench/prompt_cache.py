"""Prompt caching over a long session: what the same 100-step run is billed with and without it.

A Session with the real ``LiteLLMClient`` runs against the scripted Anthropic server
(``tests/support/anthropic_server.py``): litellm's own request builder and SSE parser run, and the
server accounts for the prompt cache as the API does (breakpoints, a 20-block lookback, prefixes
under Sonnet's 1,024-token minimum never cached). Each step reads a different small file; the
last one completes. The run is made twice in this process, on fresh servers:

* **with caching** — the default for ``anthropic/`` models: ``cache_control`` breakpoints on the
  last tool, the system prompt and the two latest user/tool messages (``agentcli/llm/cache.py``);
* **without** — the same client told the model takes no breakpoints (``ModelLimits.cache_control``
  is False, the one fact ``LiteLLMClient`` reads before adding them), so the requests are the same
  but unmarked and the server caches nothing: what a provider without caching would bill.

Printed for each run: input tokens billed at full price, cache reads, cache writes, output, the
share of input read from the cache after the first few calls (the first writes the prefix, the
next ones start reading it), and the cost from litellm's prices (cache reads and writes at their
own rates). Goal: at least 75% of input tokens read from the cache after the first few calls.

    python bench/prompt_cache.py [--steps 100] [--warmup 3]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's bundled prices; no network

from agentcli.config import RetrySettings, Settings
from agentcli.events import Event, UsageReported
from agentcli.llm.limits import ModelLimits
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.types import ModelRequest
from agentcli.session import Session
from agentcli.workflow import builtin_workflow
from tests.support.anthropic_server import AnthropicServer, Call, Reply

MODEL = "anthropic/claude-sonnet-4-5-20250929"
API_KEY = "bench-key"
MIN_CACHEABLE = 1024
"""Sonnet 4.x caches no prefix shorter than this (the server models it)."""
GOAL = 0.75


class UncachedClient(LiteLLMClient):
    """The same client, told the model takes no ``cache_control`` breakpoints."""

    async def limits(self, litellm: Any, model: str, request: ModelRequest) -> ModelLimits:
        return dataclasses.replace(await super().limits(litellm, model, request), cache_control=False)


@dataclass
class Run:
    """What one run was billed, call by call."""

    label: str
    calls: list[UsageReported] = field(default_factory=list)
    outcome: str = ""

    def __call__(self, event: Event) -> None:
        if isinstance(event, UsageReported):
            self.calls.append(event)

    def full_price(self, start: int = 0) -> int:
        return sum(c.input_tokens - c.cache_read_tokens - c.cache_write_tokens for c in self.calls[start:])

    def reads(self, start: int = 0) -> int:
        return sum(c.cache_read_tokens for c in self.calls[start:])

    def writes(self) -> int:
        return sum(c.cache_write_tokens for c in self.calls)

    def share_read(self, start: int) -> float:
        total = sum(c.input_tokens for c in self.calls[start:])
        return self.reads(start) / total if total else 0.0

    @property
    def cost(self) -> float | None:
        costs = [c.cost for c in self.calls]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def make_workspace(root: Path, files: int) -> Path:
    """Small source-like files, one per step."""
    workspace = root / "ws"
    workspace.mkdir()
    for number in range(1, files + 1):
        lines = [f"# module {number}", *(f"VALUE_{number}_{k} = {number * k}  # setting {k} of module {number}"
                                         for k in range(1, 16))]
        (workspace / f"m{number:03}.py").write_text("\n".join(lines) + "\n")
    return workspace


async def run(label: str, client: LiteLLMClient, workspace: Path, steps: int) -> Run:
    with AnthropicServer(api_key=API_KEY, min_cacheable_tokens=MIN_CACHEABLE) as server:
        server.add(*[Reply(text=f"Reading module {n}.", calls=[Call("read_file", {"path": f"m{n:03}.py"})])
                     for n in range(1, steps + 1)],
                   Reply(calls=[Call("complete", {"summary": f"read {steps} modules"})]))
        settings = Settings(model=MODEL, api_base=server.base_url, max_steps=steps + 10,
                            retry=RetrySettings(attempts=2, base_delay_s=0.01))
        session = Session(workspace=workspace, settings=settings, workflow=builtin_workflow("single"),
                          model_client=client)
        result = Run(label)
        session.subscribe(result)
        ended = await asyncio.wait_for(session.run_turn("Read every module, one per step, then complete."),
                                       60 + steps)
        session.close()
        refused = [entry.status for entry in server.responses() if entry.status != 200]
        if refused:
            raise SystemExit(f"{label}: the server refused {len(refused)} requests ({refused[:3]})")
        result.outcome = ended.outcome
        return result


def money(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def report(cached: Run, uncached: Run, steps: int, warmup: int) -> None:
    print(f"prompt cache: {steps} read_file steps + complete ({len(cached.calls)} model calls), {MODEL}")
    print(f"scripted Anthropic server, prefixes under {MIN_CACHEABLE:,} tokens not cached; "
          f"outcomes: {cached.outcome} / {uncached.outcome}")
    print()
    rows = [
        ("input billed at full price", f"{cached.full_price():,}", f"{uncached.full_price():,}"),
        ("cache reads", f"{cached.reads():,}", f"{uncached.reads():,}"),
        ("cache writes", f"{cached.writes():,}", f"{uncached.writes():,}"),
        ("output", f"{sum(c.output_tokens for c in cached.calls):,}",
         f"{sum(c.output_tokens for c in uncached.calls):,}"),
        (f"input read from cache after call {warmup}", f"{cached.share_read(warmup):.1%}",
         f"{uncached.share_read(warmup):.1%}"),
        ("input read from cache, all calls", f"{cached.share_read(0):.1%}", f"{uncached.share_read(0):.1%}"),
        ("cost (litellm prices)", money(cached.cost), money(uncached.cost)),
    ]
    width = max(len(row[0]) for row in rows)
    print(f"{'':{width}}  {'with cache':>12}  {'without':>12}")
    for name, with_cache, without in rows:
        print(f"{name:{width}}  {with_cache:>12}  {without:>12}")
    print()
    share = cached.share_read(warmup)
    verdict = "met" if share >= GOAL else "MISSED"
    print(f"read from cache after the first {warmup} calls: {share:.1%} (goal >= {GOAL:.0%}: {verdict})")
    if cached.cost is not None and uncached.cost:
        print(f"cost with caching: {cached.cost / uncached.cost:.2f}x the cost without "
              f"({money(cached.cost)} vs {money(uncached.cost)})")


async def main(steps: int, warmup: int) -> None:
    os.environ["ANTHROPIC_API_KEY"] = API_KEY
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        os.environ["XDG_DATA_HOME"] = str(root / "data")  # no session of the bench lands in the user's data
        workspace = make_workspace(root, steps)
        cached = await run("with cache", LiteLLMClient(), workspace, steps)
        uncached = await run("without", UncachedClient(), workspace, steps)
    report(cached, uncached, steps, warmup)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="read_file steps before complete")
    parser.add_argument("--warmup", type=int, default=3, help="first model calls left out of the cache share")
    args = parser.parse_args()
    asyncio.run(main(args.steps, args.warmup))
