"""Typing while a side pane or the stream has the focus: the letters go to the prompt (which takes
the focus), and each pane keeps the keys it documents (the timeline's d and u, the graph's ?).
Before, a user who had clicked a pane and started typing lost every key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.llm.replay import ReplayModel
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for, wait_idle

DONE = recording(("Listed the files.", [("list_files", {})]), ("Done.", [("complete", {"summary": "done"})]))


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_letters_typed_in_a_pane_reach_the_prompt_and_pane_keys_stay(
    project: Path, size: tuple[int, int]
) -> None:
    app = make_app(project, make_session(project, ReplayModel(DONE)), initial_prompt="list")
    async with app.run_test(size=size) as pilot:
        await wait_idle(pilot, app)
        prompt = app.prompt.input

        # The timeline: d switches its diff base (its own key), then words go to the prompt.
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list, what="the timeline focused")
        await pilot.press("d")
        await wait_for(pilot, lambda: app.timeline.against_previous, what="d to switch the diff base")
        assert prompt.value == "" and app.focused is app.timeline.option_list
        await pilot.press(*"fix it", "ctrl+j", *"now")
        await wait_for(pilot, lambda: prompt.value == "fix it\nnow", what="the typed words in the prompt")
        assert app.focused is prompt
        if size[0] < 110:
            assert not app.query_one("#sidebar").display, "back to typing closes the overlay"

        # The tool calls: a letter goes to the prompt, after what was there.
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.focused is app.tools.option_list, what="the tool calls focused")
        await pilot.press("!")
        await wait_for(pilot, lambda: prompt.value == "fix it\nnow!", what="the key after the draft")
        assert app.focused is prompt

        # The graph keeps ? for its legend; other letters type.
        if size[0] >= 110:
            app.graph.focus()
            await wait_for(pilot, lambda: app.focused is app.graph, what="the graph focused")
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: app.graph.show_legend, what="the legend")
            assert prompt.value == "fix it\nnow!"
            await pilot.press("space", "x")
            await wait_for(pilot, lambda: prompt.value == "fix it\nnow! x", what="space and x in the prompt")

        # The stream too (a click on a reply focuses it).
        app.conversation.focus()
        await wait_for(pilot, lambda: app.focused is app.conversation, what="the stream focused")
        await pilot.press("y")
        await wait_for(pilot, lambda: prompt.value.endswith("y"), what="y in the prompt")
        assert app.focused is prompt

        # Keys that are not characters keep their meaning where they are.
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.timeline.option_list)
        before = prompt.value
        await pilot.press("up", "down")
        await drain(pilot)
        assert prompt.value == before and app.focused is app.timeline.option_list
