"""``agentcli workflows show NAME --format text|mermaid|dot`` draws the chart the workflow compiles to."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.session.chart import chart_class, chart_graph
from agentcli.workflow import builtin_workflow


def show(workspace: Path, *args: str) -> tuple[int, str]:
    from agentcli.cli import app

    result = CliRunner().invoke(app, ["workflows", "show", *args, "--cwd", str(workspace)])
    return result.exit_code, result.output


def test_text_lists_the_phases_then_draws_both_regions(tmp_path: Path) -> None:
    code, out = show(tmp_path, "plan-build", "--width", "80")
    assert code == 0, out
    assert out.startswith("plan-build: ") and "\nTransitions\n" in out and "\nChart\n" in out
    chart = out.split("\nChart\n", 1)[1].splitlines()
    assert chart[0].startswith("╭─ control ") and any(line.startswith("╭─ phase ") for line in chart)
    assert all(len(line) <= 80 for line in chart)
    assert any("[ awaitingClarification ]" in line for line in chart)
    assert any("╭─ plan " in line for line in chart)


@pytest.mark.parametrize("workflow", ["single", "plan-build"])
def test_mermaid_and_dot_name_every_transition(tmp_path: Path, workflow: str) -> None:
    graph = chart_graph(chart_class(builtin_workflow(workflow)))
    code, mermaid = show(tmp_path, workflow, "--format", "mermaid")
    assert code == 0 and mermaid.startswith("stateDiagram-v2\n")
    assert sum(1 for line in mermaid.splitlines() if line.startswith("    ") and " --> " in line
               and "[*]" not in line) == len(graph.edges)
    code, dot = show(tmp_path, workflow, "-f", "dot")
    assert code == 0 and dot.startswith(f'digraph "{workflow}" {{') and dot.rstrip().endswith("}")


def test_a_bad_format_or_workflow_is_a_usage_error(tmp_path: Path) -> None:
    code, out = show(tmp_path, "single", "--format", "png")
    assert code == 2 and "png" in out
    code, out = show(tmp_path, "nope", "--format", "dot")
    assert code == 2
