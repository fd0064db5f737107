"""One long turn in the TUI: 300 steps, each a streamed paragraph and table, then a file read.

What the collector's policy (agentcli/tui/gc_policy.py) holds over a turn that never pauses for
the idle release: resident memory and frozen objects at the end, its full passes and the longest,
event-loop stalls over 100 ms, and what the release then costs. Run it with and without the
policy (``--no-gc-policy``) for the pair; the app is headless at 120x40 with the replay model.

    python bench/tui_long_turn.py [--steps 300] [--no-gc-policy] [--litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path

from agentcli.config import Settings
from agentcli.llm.replay import RecordedCall, RecordedTurn, Recording, ReplayModel
from agentcli.session import Session
from agentcli.tui.app import AgentApp
from agentcli.workflow import builtin_workflow

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gc_report import PolicyOff, report_end, state

STEP = ("## Step {n}\n\nReading `notes{n}.md` to check the **{n}th** claim against the code; "
        "the table lists what was checked so far.\n\n| file | status |\n|---|---|\n"
        "| a.py | ok |\n| b.py | {n} warnings |\n| c.py | failing |\n\n")


class Stalls:
    """Event-loop lag, sampled every 10 ms."""

    def __init__(self) -> None:
        self.lags: list[float] = []

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.01)
            self.lags.append(time.perf_counter() - started - 0.01)


class FullPasses:
    def __init__(self) -> None:
        self.lengths: list[float] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.lengths.append(time.perf_counter() - self._started)


async def run(steps: int, gc_policy: bool) -> None:
    workspace = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    for n in range(steps):  # a file per step: reading the same one again would be stuck detection's
        (workspace / f"notes{n}.md").write_text(f"claim {n}\n" * 200)
    turns = [RecordedTurn(text=STEP.format(n=n), tool_calls=[RecordedCall(name="read_file",
                                                                          arguments={"path": f"notes{n}.md"})],
                          usage=(1000, 100)) for n in range(steps)]
    turns.append(RecordedTurn(text="Done.", tool_calls=[RecordedCall(name="complete", arguments={"summary": "ok"})]))
    model = ReplayModel(Recording(model="replay/long", chunk_chars=12, chunk_delay_s=0.004, turns=turns))
    settings = Settings(model="replay:long.json", theme="agentcli-dark", max_steps=steps + 10)
    session = Session(workspace=workspace, settings=settings, workflow=builtin_workflow("single"), model_client=model)
    gc.freeze()  # as agentcli.tui.run does
    app = AgentApp(workspace=workspace, settings=settings, session=session, warm_up=False)
    if not gc_policy:
        app.gc_policy = PolicyOff()
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.session_ready:
            await pilot.pause(0.01)
        gc.freeze()  # as the litellm warm-up does
        print(f"before the turn: {state()}")
        stalls, passes, stop = Stalls(), FullPasses(), asyncio.Event()
        ticker = asyncio.create_task(stalls.run(stop))
        gc.callbacks.append(passes)
        started = time.perf_counter()
        assert app.session is not None
        await app.session.send_user_message("check every claim")
        while model.position <= steps or app.control_state != "idle" or app.conversation.rendering:
            await asyncio.sleep(0.1)
            if app.view is not None and app.view.waiting_for not in (None, "task"):
                raise SystemExit(f"the turn stopped: waiting for {app.view.waiting_for} at step {model.position}")
        took = time.perf_counter() - started
        gc.callbacks.remove(passes)
        stop.set()
        await ticker
        over = [lag for lag in stalls.lags if lag > 0.1]
        print(f"{steps} steps in {took:.0f} s; event-loop stalls over 100 ms: {len(over)}, longest "
              f"{max(stalls.lags, default=0) * 1000:.0f} ms; full collections: {len(passes.lengths)}, longest "
              f"{max(passes.lengths, default=0) * 1000:.0f} ms")
        report_end(app.gc_policy, enabled=gc_policy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--no-gc-policy", action="store_true", help="run the app without its collector policy")
    parser.add_argument("--litellm", action="store_true", help="import litellm first, frozen as the warm-up does")
    options = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    if options.litellm:
        from agentcli.llm.warmup import import_litellm

        import_litellm()
    asyncio.run(run(options.steps, not options.no_gc_policy))


if __name__ == "__main__":
    main()
