"""What typing a line into the prompt costs a TUI test: Textual's ``pilot.press`` (the baseline)
against the suite's wait between keys (tests/support/keys.py, installed by tests/conftest.py).

Textual follows each key with an idle poll of the process (20 ms steps, twice a key); the suite
waits instead until every queue of the app has handled the key. Each pair types the same line
into agentcli's prompt both ways, alternating which side goes first, and checks that the prompt
holds the whole line either way. Prints both sides and baseline ÷ suite per pair, then the
median ratio. Goal: a typed line of 80 characters in well under a second (it took 3-5 s).

    python bench/pilot_keys.py [--pairs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.llm.replay import ReplayModel  # noqa: E402 - the repository root is on the path first
from tests.support.keys import keys_handled_in_turn  # noqa: E402
from tests.tui.helpers import demo_project, make_app, make_session, wait_for  # noqa: E402
from tests.tui.test_prompt_input import DONE  # noqa: E402

LINE = "why does @app.route 404? see @mock.patch and @types/node, then fix the failing test please"


async def _type(project: Path) -> float:
    app = make_app(project, make_session(project, ReplayModel(DONE)))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session_ready)
        app.prompt.input.focus()
        began = time.perf_counter()
        await pilot.press(*LINE)
        took = time.perf_counter() - began
        if app.prompt.input.text != LINE:
            raise SystemExit(f"the prompt holds {app.prompt.input.text!r}, not the line typed")
    return took


async def _pair(project: Path, suite_first: bool) -> tuple[float, float]:
    async def suite() -> float:
        with keys_handled_in_turn():
            return await _type(project)

    if suite_first:
        ours = await suite()
        textual = await _type(project)
    else:
        textual = await _type(project)
        ours = await suite()
    return textual, ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        project = demo_project(Path(folder) / "project")
        for n in range(args.pairs):
            textual, ours = asyncio.run(_pair(project, suite_first=n % 2 == 1))
            ratios.append(textual / ours)
            print(f"pair {n + 1}: textual {textual:.2f} s, suite {ours:.2f} s, textual / suite {textual / ours:.1f}",
                  flush=True)
    print(f"{len(LINE)} keys typed; median textual / suite: {statistics.median(ratios):.1f}")


if __name__ == "__main__":
    main()
