"""Workflows end to end: phases confined to their tools, plan → build, explore, workflow files."""

from __future__ import annotations

from pathlib import Path

from agentcli.config import CheckSettings, RetrySettings, Settings
from agentcli.events import PlanUpdated, StateChanged, SubagentEvent, ThoughtRecorded, ToolCallFinished
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.session import Session
from agentcli.workflow import PLAN_BUILD
from agentcli.workflow.examples import EXAMPLE_WORKFLOW_TOML
from tests.e2e.test_cli import agentcli, events
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import Recorder

READ_ONLY = {"read_file", "list_files", "glob", "grep"}
CONTROL = {"complete", "clarify", "pause"}


def offered(request: dict[str, object]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}  # type: ignore[index,union-attr]


def system(request: dict[str, object]) -> str:
    return request["messages"][0]["content"]  # type: ignore[index]


async def test_plan_build_explores_plans_implements_and_validates(workspace: Path, server: OpenAIServer) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "check.py").write_text("from calc import add\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n")
    plan = [{"title": "Fix add", "acceptance": "add(2, 3) == 5"}]
    server.add(
        Reply(calls=[Call("explore", {"task": "Where is add defined?"})]),               # analyze
        Reply(calls=[Call("grep", {"pattern": "def add"})]),                              # explore child
        Reply(calls=[Call("complete", {"summary": "add is in calc.py line 1 and subtracts"})]),
        Reply(calls=[Call("finish_phase", {"summary": "the bug is in calc.add"})]),       # analyze → research
        Reply(calls=[Call("think", {"thought": "a - b should be a + b", "thought_number": 1,
                                    "total_thoughts": 1, "next_thought_needed": False})]),
        Reply(calls=[Call("finish_phase", {"summary": "flip the operator"})]),            # research → design
        Reply(calls=[Call("write_file", {"path": "calc.py", "content": "hacked"})]),       # refused in design
        Reply(calls=[Call("create_plan", {"steps": plan})]),                              # design → implement
        Reply(calls=[Call("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a * b"})]),
        Reply(calls=[Call("finish_phase", {"summary": "edited"})]),                       # implement → validate
        Reply(calls=[Call("run_checks", {})]),                                            # fails → implement
        Reply(calls=[Call("edit_file", {"path": "calc.py", "old_string": "a * b", "new_string": "a + b"})]),
        Reply(calls=[Call("update_plan", {"step": 1, "done": True})]),
        Reply(calls=[Call("finish_phase", {"summary": "fixed"})]),
        Reply(calls=[Call("run_checks", {})]),                                            # passes → done
        Reply(calls=[Call("complete", {"summary": "add fixed, checks pass"})]),
    )
    settings = Settings(model="openai/test-model", api_base=server.base_url, retry=RetrySettings(attempts=1),
                        checks=CheckSettings(commands=["python3 check.py"]))
    session = Session(workspace=workspace, settings=settings, workflow=PLAN_BUILD,
                      model_client=LiteLLMClient(settings.retry))
    rec = Recorder()
    session.subscribe(rec)
    ended = await session.run_turn("add() is broken; fix it")
    assert ended.outcome == "completed", ended.reason
    assert "return a + b" in (workspace / "calc.py").read_text()

    requests = server.requests
    analyze = offered(requests[0])
    assert analyze == READ_ONLY | {"explore", "finish_phase"} | CONTROL
    assert offered(requests[1]) == READ_ONLY | CONTROL  # the explore child: read-only
    assert offered(requests[4]) == READ_ONLY | {"think", "finish_phase"} | CONTROL
    assert offered(requests[6]) == READ_ONLY | {"think", "create_plan"} | CONTROL
    implement = offered(requests[8])
    assert {"write_file", "edit_file", "bash", "update_plan"} <= implement and "run_checks" not in implement
    validate = requests[10]
    assert offered(validate) == READ_ONLY | {"run_checks"} | CONTROL
    assert validate["tool_choice"] == {"type": "function", "function": {"name": "run_checks"}}
    assert offered(requests[-1]) == CONTROL and requests[-1]["tool_choice"] == "required"
    # The plan is injected into the build phase's instructions.
    assert "Fix add" in system(requests[8]) and "add(2, 3) == 5" in system(requests[8])

    refused = [f for f in rec.of(ToolCallFinished) if f.name == "write_file"][0]
    assert not refused.ok and "not available in the plan.design phase" in refused.output
    phases = [e.target for e in rec.of(StateChanged) if e.target.startswith("phase_") and e.source != e.target]
    assert phases == ["phase_plan__research", "phase_plan__design", "phase_build__implement", "phase_build__validate",
                      "phase_build__implement", "phase_build__validate", "phase_done"]
    checks = [f for f in rec.of(ToolCallFinished) if f.name == "run_checks"]
    assert [c.ok for c in checks] == [False, True]
    assert "add is wrong" in checks[0].output
    nested = rec.of(SubagentEvent)
    assert any(isinstance(e.event, ToolCallFinished) and e.event.name == "grep" for e in nested)
    explored = [f for f in rec.of(ToolCallFinished) if f.name == "explore"][0]
    assert explored.ok and "calc.py line 1" in explored.output
    assert [t.thought for t in rec.of(ThoughtRecorded)] == ["a - b should be a + b"]
    assert [s.done for s in rec.of(PlanUpdated)[-1].steps] == [True]


def test_a_user_workflow_file_with_a_custom_tool_trigger(workspace: Path, server: OpenAIServer) -> None:
    folder = workspace / ".agentcli" / "workflows"
    folder.mkdir(parents=True)
    (folder / "review-fix.toml").write_text(EXAMPLE_WORKFLOW_TOML)
    (workspace / ".agentcli.toml").write_text('[checks]\ncommands = ["test -f REVIEW.md"]\n')
    server.add(
        Reply(calls=[Call("write_file", {"path": "REVIEW.md", "content": "1. nothing serious\n"})]),  # → fix.edit
        Reply(calls=[Call("finish_phase", {"summary": "nothing to fix"})]),                           # → fix.check
        Reply(calls=[Call("run_checks", {})]),                                                        # → done
        Reply(calls=[Call("complete", {"summary": "reviewed"})]),
    )
    proc = agentcli("run", "review this", "--workflow", "review-fix", "--model", "openai/m", "--yes",
                    "--api-base", server.base_url, "-o", "jsonl", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert offered(server.requests[0]) == {"read_file", "list_files", "glob", "grep", "write_file"} | CONTROL
    assert "edit_file" in offered(server.requests[1])
    assert offered(server.requests[2]) == {"run_checks"} | CONTROL
    moves = [(e["source"], e["target"]) for e in events(proc.stdout) if e["type"] == "state_changed"
             and str(e["target"]).startswith("phase_")]
    assert moves == [("phase_review", "phase_fix__edit"), ("phase_fix__edit", "phase_fix__check"),
                     ("phase_fix__check", "phase_done")]
    listing = agentcli("workflows", cwd=workspace)
    assert listing.returncode == 0 and "review-fix" in listing.stdout and ".agentcli/workflows/review-fix.toml" in listing.stdout
    drawn = agentcli("workflows", "show", "review-fix", cwd=workspace)
    assert drawn.returncode == 0 and "after write_file" in drawn.stdout and "when checks pass" in drawn.stdout


def test_invalid_workflow_files_are_reported_and_never_crash(workspace: Path) -> None:
    folder = workspace / ".agentcli" / "workflows"
    folder.mkdir(parents=True)
    (folder / "broken.toml").write_text('initial = "nowhere"\n[[phases]]\nname = "work"\n')
    (folder / "tools.toml").write_text('[[phases]]\nname = "work"\ntools = ["teleport"]\n')
    (folder / "syntax.toml").write_text("phases = [\n")
    listing = agentcli("workflows", cwd=workspace)
    assert listing.returncode == 2
    assert "broken.toml: initial: phase 'nowhere' is not defined" in listing.stdout
    assert "tools.toml" in listing.stdout and "teleport" in listing.stdout
    assert "syntax.toml" in listing.stdout
    assert "✓ single" in listing.stdout  # the others still load
    run = agentcli("run", "x", "--workflow", "broken", "--model", "replay:/dev/null", cwd=workspace)
    assert run.returncode == 2 and "broken.toml" in run.stderr and "nowhere" in run.stderr
    unknown = agentcli("run", "x", "--workflow", "nope", cwd=workspace)
    assert unknown.returncode == 2 and "plan-build" in unknown.stderr


BOUNCING_WORKFLOW_TOML = '''\
initial = "a"
terminal = ["done"]

[[phases]]
name = "a"
tools = ["read_file"]

[[phases]]
name = "b"
tools = ["read_file", "grep"]

[[phases]]
name = "done"
tools = []

[[transitions]]
from = "a"
to = "b"
tool = "read_file"

[[transitions]]
from = "b"
to = "a"
tool = "read_file"

[[transitions]]
from = "b"
to = "done"
tool = "grep"
'''


def test_phases_bouncing_on_every_call_do_not_hide_a_loop(workspace: Path, server: OpenAIServer) -> None:
    # Each read moves a → b or b → a; before, every phase change reset the tracker, so the
    # same read ran until the model ran out. A bounce back to a phase already entered with
    # nothing written in between is one stretch of work: the loop is hinted, then halted.
    folder = workspace / ".agentcli" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bounce.toml").write_text(BOUNCING_WORKFLOW_TOML)
    (workspace / "main.py").write_text("print('hello')\n")
    server.add(*[Reply(calls=[Call("read_file", {"path": "main.py"})]) for _ in range(30)])
    proc = agentcli("run", "read it", "--workflow", "bounce", "--model", "openai/m", "--yes", "--max-steps", "100",
                    "--api-base", server.base_url, "-o", "jsonl", cwd=workspace)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    stream = events(proc.stdout)
    reads = [e for e in stream if e["type"] == "tool_call_finished"]
    stuck = [e for e in stream if e["type"] == "stuck"]
    assert [e["severity"] for e in stuck] == ["recover", "halt"], stuck
    assert stuck[0]["rule"] == "identical_call" and "main.py" in stuck[0]["evidence"]
    assert len(reads) <= 6
    assert len([e for e in stream if e["type"] == "state_changed" and e["target"] in ("phase_a", "phase_b")]) >= 3
    ended = [e for e in stream if e["type"] == "turn_ended"]
    assert ended and ended[-1]["outcome"] == "halted"
