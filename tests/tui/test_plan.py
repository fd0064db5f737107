"""The plan pane: hidden until there is a plan, then each step ticked off; restored with the history."""

from __future__ import annotations

from pathlib import Path

from agentcli.config import Settings, data_home
from agentcli.events import PlanStep, PlanUpdated
from agentcli.llm.replay import ReplayModel
from agentcli.session.log import list_sessions
from agentcli.tui.app import AgentApp
from tests.tui.helpers import make_app, make_session, recording, wait_for, write_recording

REC = recording(("Looked.", [("complete", {"summary": "looked"})]))
STEPS = [PlanStep(title="Add parse_args", acceptance="tests/test_cli.py passes"),
         PlanStep(title="Document the flag", acceptance="README mentions --fast")]


def shown(app: AgentApp) -> str:
    return str(app.plan_pane.render())


async def test_the_plan_pane_appears_with_the_plan_and_ticks_steps_off(project: Path) -> None:
    session = make_session(project, ReplayModel(REC))
    app = make_app(project, session)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the session")
        box = app.query_one("#plan-pane")
        assert not box.display, "no plan yet: no pane"

        app._on_session_event(PlanUpdated(steps=STEPS))  # as the session delivers it
        await wait_for(pilot, lambda: box.display, what="the plan pane")
        assert str(app.query_one("#plan-title").render()) == "plan (0/2 done)"
        assert "▸ 1. Add parse_args" in shown(app) and "done when: tests/test_cli.py passes" in shown(app)
        assert "○ 2. Document the flag" in shown(app)

        app._on_session_event(PlanUpdated(steps=[PlanStep(title=STEPS[0].title, done=True), STEPS[1]]))
        await wait_for(pilot, lambda: "1/2" in str(app.query_one("#plan-title").render()), what="step 1 ticked")
        assert "✓ 1. Add parse_args" in shown(app) and "▸ 2. Document the flag" in shown(app)
        assert "done when: README mentions --fast" in shown(app)


async def test_a_resumed_session_shows_its_last_plan(project: Path, tmp_path: Path) -> None:
    model = write_recording(tmp_path / "rec.json", REC)
    old = make_session(project, ReplayModel(REC), session_id="01d5e5510001", record=True, data_dir=data_home(),
                       model=model)
    await old.run_turn("plan it")
    old.log(PlanUpdated(steps=STEPS))
    old.log(PlanUpdated(steps=[PlanStep(title=STEPS[0].title, done=True), STEPS[1]]))
    old.close()
    [entry] = list_sessions(data_home())

    app = make_app(project, None, settings=Settings(model=model))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.session_ready, what="the new session")
        assert not app.query_one("#plan-pane").display
        app.open_session(entry)
        await wait_for(pilot, lambda: app.session is not None and app.session.id == "01d5e5510001",
                       what="the old session")
        await wait_for(pilot, lambda: app.query_one("#plan-pane").display, what="its plan")
        assert "✓ 1. Add parse_args" in shown(app) and "▸ 2. Document the flag" in shown(app)
