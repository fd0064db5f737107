"""think, create_plan, update_plan, finish_phase and run_checks, called as the model would call them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agentcli.config import CheckSettings, ToolSettings
from agentcli.events import PlanStep, ThoughtRecorded
from agentcli.tools.base import ToolContext, ToolResult
from agentcli.tools.registry import ToolRegistry
from agentcli.tools.workflow_tools import (
    WORKFLOW_TOOL_NAMES,
    ExploreArgs,
    PlanStore,
    RunChecks,
    format_plan,
    workflow_tools,
)
from tests.support.waiting import eventually


def registry(plan: PlanStore | None = None, commands: list[str] | None = None, timeout_s: float = 30.0) -> ToolRegistry:
    return ToolRegistry(workflow_tools(plan if plan is not None else PlanStore(), CheckSettings(commands=commands, timeout_s=timeout_s)))


async def call(reg: ToolRegistry, ws: Path, name: str, args: dict[str, object], **limits: int) -> ToolResult:
    return await reg.call(name, json.dumps(args), ToolContext(ws, ToolSettings(**limits)))


def thought(number: int, **extra: object) -> dict[str, object]:
    return {"thought": f"thought {number}", "thought_number": number, "total_thoughts": 3,
            "next_thought_needed": True, **extra}


def test_every_workflow_tool_but_explore_is_built_here() -> None:
    names = registry().names
    assert names == ["think", "create_plan", "update_plan", "run_checks", "finish_phase"]
    assert set(WORKFLOW_TOOL_NAMES) == {*names, "explore"}
    assert ExploreArgs(task="where is X?").task == "where is X?"


# -- think ----------------------------------------------------------------------------------------


async def test_think_acknowledges_and_carries_the_fields_for_thought_recorded(workspace: Path) -> None:
    reg = registry()
    first = await call(reg, workspace, "think", thought(1))
    assert first.ok and first.output == "Thought 1 of 3 recorded. Continue with thought 2."
    event = ThoughtRecorded(call_id="c1", **first.data)
    assert (event.number, event.total, event.next_needed, event.revises, event.branch) == (1, 3, True, None, None)

    revision = await call(reg, workspace, "think", thought(2, is_revision=True, revises_thought=1))
    assert revision.data["revises"] == 1 and "(revises thought 1)" in revision.output
    branch = await call(reg, workspace, "think", thought(3, branch_from_thought=1, branch_id="alt"))
    assert branch.data["branch"] == "alt" and branch.data["branch_from"] == 1
    last = await call(reg, workspace, "think", thought(5, next_thought_needed=False))
    assert last.data["total"] == 5  # running past the estimate raises it
    assert last.output == "Thought 5 of 5 recorded. Thinking done: act on it."


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ({"is_revision": True}, "give revises_thought"),
        ({"revises_thought": 2}, "must be an earlier thought"),
        ({"branch_id": "alt"}, "needs both branch_from_thought and branch_id"),
        ({"branch_from_thought": 3, "branch_id": "alt"}, "must be an earlier thought"),
        ({"thought_number": 0}, "thought_number"),
    ],
)
async def test_think_refuses_inconsistent_arguments(workspace: Path, extra: dict[str, object], fragment: str) -> None:
    result = await call(registry(), workspace, "think", {**thought(2), **extra})
    assert not result.ok and fragment in result.output


# -- the plan -------------------------------------------------------------------------------------


async def test_create_plan_stores_the_steps_for_the_session(workspace: Path) -> None:
    plan = PlanStore()
    result = await call(registry(plan), workspace, "create_plan", {"steps": [
        {"title": "Add  parse_args", "acceptance": "tests/test_cli.py passes"},
        {"title": "Document the flag", "acceptance": "README mentions --fast"},
    ]})
    assert result.ok
    assert [PlanStep(**step) for step in result.data["steps"]] == plan.steps
    assert plan.steps[0] == PlanStep(title="Add parse_args", acceptance="tests/test_cli.py passes")
    assert plan.text() == (
        "1. [ ] Add parse_args (done when: tests/test_cli.py passes)\n"
        "2. [ ] Document the flag (done when: README mentions --fast)"
    )
    assert plan.text() in result.output and "update_plan(step=<number>)" in result.output


@pytest.mark.parametrize(
    ("steps", "fragment"),
    [
        ([], "at least 1 item"),
        ([{"title": "A", "acceptance": "x"}, {"title": " a ", "acceptance": "y"}], "steps 1 and 2 have the same title"),
        ([{"title": "A"}], "acceptance"),
        ([{"title": "", "acceptance": "x"}], "title"),
        ([{"title": "A", "acceptance": "x", "owner": "me"}], "unexpected field"),
    ],
)
async def test_create_plan_refuses_bad_plans(workspace: Path, steps: list[dict[str, str]], fragment: str) -> None:
    plan = PlanStore()
    result = await call(registry(plan), workspace, "create_plan", {"steps": steps})
    assert not result.ok and fragment in result.output
    assert plan.empty


def test_create_plan_schema_inlines_the_step_object() -> None:
    schema = registry().schemas(["create_plan"])[0]["function"]["parameters"]
    assert "$defs" not in json.dumps(schema)
    assert schema["properties"]["steps"]["items"]["required"] == ["title", "acceptance"]


async def test_update_plan_ticks_steps_off_and_reopens_them(workspace: Path) -> None:
    plan = PlanStore([PlanStep(title="A", acceptance="a"), PlanStep(title="B", acceptance="b")])
    reg = registry(plan)
    ticked = await call(reg, workspace, "update_plan", {"step": 1})
    assert ticked.ok and ticked.output == "Step 1 done: A. 1 of 2 steps done. Next: step 2, B."
    assert [s["done"] for s in ticked.data["steps"]] == [True, False]
    everything = await call(reg, workspace, "update_plan", {"step": 2, "done": True})
    assert everything.output.endswith("Every step is done.")
    reopened = await call(reg, workspace, "update_plan", {"step": 1, "done": False})
    assert reopened.ok and [s.done for s in plan.steps] == [False, True]
    assert format_plan(plan.steps).splitlines()[1] == "2. [x] B (done when: b)"


async def test_update_plan_errors_name_the_fix(workspace: Path) -> None:
    no_plan = await call(registry(), workspace, "update_plan", {"step": 1})
    assert not no_plan.ok and "create one with create_plan first" in no_plan.output
    plan = PlanStore([PlanStep(title="A")])
    missing = await call(registry(plan), workspace, "update_plan", {"step": 4})
    assert not missing.ok and "there is no step 4: the plan has steps 1 to 1" in missing.output


async def test_finish_phase_carries_its_summary(workspace: Path) -> None:
    result = await call(registry(), workspace, "finish_phase", {"summary": "Found the parser in cli.py"})
    assert result.ok and result.data == {"summary": "Found the parser in cli.py"} and result.control is None
    assert not (await call(registry(), workspace, "finish_phase", {"summary": ""})).ok


# -- run_checks -----------------------------------------------------------------------------------


async def test_checks_pass_and_fail_by_exit_code_never_by_words(workspace: Path) -> None:
    reg = registry(commands=["echo '1 test FAILED (just a name)'; echo ERROR; exit 0", "echo 'all good, passed'; exit 3"])
    result = await call(reg, workspace, "run_checks", {})
    assert not result.ok and result.data["passed"] is False
    results = result.data["results"]
    assert [(r["command"].split(";")[0], r["exit_code"], r["passed"]) for r in results] == [
        ("echo '1 test FAILED (just a name)'", 0, True),
        ("echo 'all good, passed'", 3, False),
    ]
    assert all(isinstance(r["duration_s"], float) for r in results)
    assert result.output.startswith("1 of 2 checks failed: echo 'all good, passed'; exit 3.")
    assert "FAILED (exit code 3" in result.output and "all good, passed" in result.output


async def test_all_checks_passing_is_ok(workspace: Path) -> None:
    result = await call(registry(commands=["true", "echo fine"]), workspace, "run_checks", {})
    assert result.ok and result.data["passed"] is True and result.data["source"] == "config"
    assert result.output.startswith("All 2 checks passed.")


async def test_checks_run_in_the_workspace(workspace: Path) -> None:
    (workspace / "marker.txt").write_text("here")
    result = await call(registry(commands=["test -f marker.txt"]), workspace, "run_checks", {})
    assert result.data["passed"] is True


async def test_a_failing_check_shows_the_tail_of_long_output(workspace: Path) -> None:
    command = "for i in $(seq 1 20000); do echo line $i; done; exit 1"
    result = await call(registry(commands=[command]), workspace, "run_checks", {}, max_output_chars=4000)
    assert "line 20000" in result.output and "line 1\n" not in result.output
    assert "earlier characters not shown" in result.output
    assert len(result.output) < 5000


async def test_a_check_past_its_timeout_fails_and_its_process_group_is_killed(workspace: Path) -> None:
    command = "sleep 60 & echo $! > child.pid; wait"
    result = await call(registry(commands=[command], timeout_s=0.5), workspace, "run_checks", {})
    assert result.data["passed"] is False
    assert result.data["results"][0]["exit_code"] is None and result.data["results"][0]["timed_out"]
    assert "timed out after 0.5 s" in result.output
    child = int((workspace / "child.pid").read_text())
    # Killed, not left to run out its 60 s (a zombie waiting for init counts as gone).
    await eventually(lambda: not _alive(child), what="the check's child to be killed", timeout=30)


async def test_cancelling_run_checks_kills_the_running_check(workspace: Path) -> None:
    reg = registry(commands=["sleep 60 & echo $! > child.pid; wait"])
    task = asyncio.create_task(call(reg, workspace, "run_checks", {}))
    pid_file = workspace / "child.pid"
    await eventually(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), what="the check to start its child")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    child = int(pid_file.read_text())
    await eventually(lambda: not _alive(child), what="the check's child to be killed", timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie not yet reaped by init still answers kill(0); it is not running.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


async def test_no_checks_anywhere_counts_as_passed_and_says_nothing_was_verified(workspace: Path) -> None:
    detected = await call(registry(), workspace, "run_checks", {})
    assert detected.ok and detected.data == {"passed": True, "results": [], "source": "detected"}
    assert "Nothing was verified" in detected.output and "[checks] commands" in detected.output
    configured_empty = await call(registry(commands=[]), workspace, "run_checks", {})
    assert configured_empty.data["passed"] is True and "list in the config is empty" in configured_empty.output


async def test_detected_checks_run_with_their_reasons(workspace: Path) -> None:
    (workspace / "Makefile").write_text("check:\n\t@echo checking; exit 2\n")
    result = await call(registry(), workspace, "run_checks", {})
    assert result.data["source"] == "detected"
    assert result.data["results"] == [
        {"command": "make check", "exit_code": 2, "passed": False,
         "duration_s": result.data["results"][0]["duration_s"], "timed_out": False, "left_running": False},
    ]
    assert "- make check: Makefile has a 'check' target" in result.output


def test_run_checks_takes_its_commands_from_the_settings() -> None:
    tool = RunChecks.from_settings(CheckSettings(commands=["pytest -q"], timeout_s=12))
    assert (tool.commands, tool.timeout_s) == (["pytest -q"], 12)
    assert RunChecks().commands is None
