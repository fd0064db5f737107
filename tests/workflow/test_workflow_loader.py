"""Workflow files: precedence, invalid files listed with file/field/problem, the shipped example."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentcli.session.chart import chart_class, chart_graph, state_id_for
from agentcli.tools.registry import default_registry
from agentcli.workflow import InvalidWorkflowError, UnknownWorkflowError, find_workflow, load_workflows
from agentcli.workflow.examples import EXAMPLE_WORKFLOW_NAME, EXAMPLE_WORKFLOW_TOML
from agentcli.workflow.loader import user_workflows_dir

KNOWN = set(default_registry().names) | {"think", "create_plan", "update_plan", "run_checks", "finish_phase", "explore"}

TINY = """\
description = "{description}"
[[phases]]
name = "work"
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def ws_dir(workspace: Path) -> Path:
    return workspace / ".agentcli" / "workflows"


def test_user_folder_follows_xdg_config_home(isolated_dirs: Path) -> None:
    assert user_workflows_dir() == isolated_dirs / "config" / "agentcli" / "workflows"


def test_builtins_are_listed_when_there_are_no_files(workspace: Path) -> None:
    catalog = load_workflows(workspace, known_tools=KNOWN)
    assert [(e.name, e.source, e.origin, e.valid) for e in catalog.active] == [
        ("plan-build", "builtin", "builtin", True),
        ("single", "builtin", "builtin", True),
    ]


def test_workspace_beats_user_beats_builtin(workspace: Path) -> None:
    user = user_workflows_dir()
    write(user, "single", TINY.format(description="user single"))
    write(user, "mine", TINY.format(description="user mine"))
    write(ws_dir(workspace), "mine", TINY.format(description="workspace mine"))
    catalog = load_workflows(workspace)
    assert catalog.names == ["mine", "plan-build", "single"]
    mine = catalog.get("mine")
    assert mine is not None and mine.source == "workspace" and mine.workflow is not None
    assert mine.workflow.description == "workspace mine"
    assert mine.origin == str(ws_dir(workspace) / "mine.toml")
    hidden = catalog.overridden(mine)
    assert hidden is not None and hidden.source == "user" and catalog.shadowed_by(hidden) is mine
    single = catalog.get("single")
    assert single is not None and single.source == "user"
    assert find_workflow("single", workspace).description == "user single"
    assert find_workflow("plan-build", workspace).name == "plan-build"


def test_an_invalid_file_is_listed_with_file_field_and_problem_and_others_still_load(workspace: Path) -> None:
    folder = ws_dir(workspace)
    bad = write(folder, "broken", """\
[[phases]]
name = "review"
tools = ["read_file", "finish_phase"]
max_steps = 0

[[phases]]
name = "fix"

[[transitions]]
from = "review"
to = "fixx"
tool = "finish_phase"
""")
    write(folder, "fine", TINY.format(description="ok"))
    catalog = load_workflows(workspace)
    entry = catalog.get("broken")
    assert entry is not None and not entry.valid and entry.workflow is None
    messages = [str(p) for p in entry.errors]
    assert f"{bad}: phases[0].max_steps: phase 'review': Input should be greater than or equal to 1 (got 0)" in messages
    assert [p.field for p in entry.errors] == ["phases[0].max_steps"]  # structure is checked once fields parse
    fine = catalog.get("fine")
    assert fine is not None and fine.valid
    assert [e.name for e in catalog.invalid] == ["broken"]
    with pytest.raises(InvalidWorkflowError) as caught:
        find_workflow("broken", workspace)
    assert "workflow 'broken' is invalid" in str(caught.value) and str(bad) in str(caught.value)


def test_structural_problems_in_a_file_name_the_field(workspace: Path) -> None:
    bad = write(ws_dir(workspace), "typo", """\
[[phases]]
name = "review"
tools = ["read_file", "finish_phase"]

[[phases]]
name = "fix"

[[transitions]]
from = "review"
to = "fixx"
tool = "finish_phase"
""")
    entry = load_workflows(workspace).get("typo")
    assert entry is not None
    assert [str(p) for p in entry.errors] == [
        f"{bad}: transitions[0].to: phase 'fixx' is not defined (did you mean 'fix'?); phases are: review, fix",
    ]


@pytest.mark.parametrize(
    ("text", "field", "fragment"),
    [
        ("[[phases]\nname = 1", "", "invalid TOML: "),
        ("colour = 'red'\n[[phases]]\nname = 'a'\n", "colour", "unknown field 'colour'; allowed fields: name,"),
        ("[[phases]]\nname = 'a'\ntoolz = []\n", "phases[0].toolz", "phase 'a': unknown field 'toolz'"),
        ("[[phases]]\nname = 'Plan Design'\n", "phases[0].name", "is not a phase name"),
        ("[[phases]]\nname = 'a'\n[[transitions]]\nfrom = 'a'\n", "transitions[0].to", "required field is missing"),
        ("[[phases]]\nname = 'a'\n[[transitions]]\nfrom = 'a'\nto = 'a'\n", "transitions[0]", "needs a trigger"),
        ("phases = []\n", "phases", "at least 1 item"),
        ("name = 'other'\n[[phases]]\nname = 'a'\n", "name", "does not match the file name 'wf.toml'"),
    ],
)
def test_each_kind_of_mistake_names_its_field(workspace: Path, text: str, field: str, fragment: str) -> None:
    path = write(ws_dir(workspace), "wf", text)
    entry = load_workflows(workspace).get("wf")
    assert entry is not None and not entry.valid
    assert any(p.field == field and fragment in p.message and p.file == str(path) for p in entry.errors), [
        str(p) for p in entry.errors
    ]


def test_unknown_tools_are_errors_only_when_the_known_tools_are_given(workspace: Path) -> None:
    write(ws_dir(workspace), "wf", "[[phases]]\nname = 'a'\ntools = ['red_file']\n")
    assert load_workflows(workspace).get("wf").valid  # type: ignore[union-attr]
    entry = load_workflows(workspace, known_tools=KNOWN).get("wf")
    assert entry is not None and not entry.valid
    assert "'red_file' is not a known tool (did you mean 'read_file'?)" in entry.errors[0].message


def test_an_invalid_workspace_file_still_wins_over_the_builtin_of_that_name(workspace: Path) -> None:
    write(ws_dir(workspace), "plan-build", "[[phases]]\nname = 'a'\nmax_steps = -1\n")
    with pytest.raises(InvalidWorkflowError, match="max_steps"):
        find_workflow("plan-build", workspace)


def test_unknown_workflow_lists_the_known_ones(workspace: Path) -> None:
    write(ws_dir(workspace), "mine", TINY.format(description="x"))
    with pytest.raises(UnknownWorkflowError, match="known workflows: mine, plan-build, single"):
        find_workflow("theirs", workspace)


def test_warnings_are_kept_but_do_not_invalidate(workspace: Path) -> None:
    write(ws_dir(workspace), "wf", "[[phases]]\nname = 'a'\ninstructions = 'Use {plna}.'\n")
    entry = load_workflows(workspace).get("wf")
    assert entry is not None and entry.valid
    assert "'{plna}' is not a placeholder (did you mean 'plan'?)" in str(entry.warnings[0])


def test_the_example_workflow_loads_compiles_and_uses_a_custom_tool_trigger(workspace: Path) -> None:
    write(ws_dir(workspace), EXAMPLE_WORKFLOW_NAME, EXAMPLE_WORKFLOW_TOML)
    entry = load_workflows(workspace, known_tools=KNOWN).get(EXAMPLE_WORKFLOW_NAME)
    assert entry is not None and entry.valid and entry.warnings == ()
    workflow = entry.workflow
    assert workflow is not None
    assert {(t.source, t.tool) for t in workflow.transitions if t.tool} >= {("review", "write_file")}
    graph = chart_graph(chart_class(workflow))
    assert [n.name for n in graph.children(state_id_for("fix"))] == ["fix.edit", "fix.check"]
    assert (state_id_for("review"), "tool_signal == 'write_file'", state_id_for("fix.edit")) in {
        (e.source, e.cond, e.target) for e in graph.edges
    }
    # The README shows the file as is: it must stay valid TOML on its own.
    assert tomllib.loads(EXAMPLE_WORKFLOW_TOML)["initial"] == "review"
