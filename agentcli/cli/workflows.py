"""``agentcli workflows``: list, check and draw the workflows that apply in a workspace."""

from __future__ import annotations

import shutil
from enum import Enum
from typing import Annotated

import typer

from agentcli.cli.common import EXIT_USAGE, fail, workspace
from agentcli.cli.options import CommonOptions, PlainUsage, shared_options

app = typer.Typer(help="List, check and draw workflows.", no_args_is_help=False, rich_markup_mode=None)


class ChartFormat(str, Enum):
    text = "text"
    mermaid = "mermaid"
    dot = "dot"


@app.callback(invoke_without_command=True)
@shared_options("workflows")
def workflows_list(ctx: typer.Context, *, options: CommonOptions) -> None:
    """List the workflows that apply here, where each comes from, and any errors in their files."""
    if ctx.invoked_subcommand is not None:
        return
    from agentcli.session.factory import workflow_catalog

    catalog = workflow_catalog(workspace(options.cwd))
    broken = False
    for entry in catalog.active:
        description = entry.workflow.description if entry.workflow else ""
        mark = "✓" if entry.valid else "✗"
        typer.echo(f"{mark} {entry.name:<16} {entry.origin}")
        if description:
            typer.echo(f"    {description}")
        hidden = catalog.overridden(entry)
        if hidden is not None:
            typer.echo(f"    overrides {hidden.origin}")
        for problem in entry.errors:
            broken = True
            typer.echo(f"    error: {problem}")
        for problem in entry.warnings:
            typer.echo(f"    warning: {problem}")
    for entry in catalog.invalid:
        if catalog.get(entry.name) is not entry:  # an invalid file hidden by another definition
            broken = True
            typer.echo(f"✗ {entry.name:<16} {entry.origin} (overridden)")
            for problem in entry.errors:
                typer.echo(f"    error: {problem}")
    if broken:
        raise typer.Exit(EXIT_USAGE)


@app.command("show", cls=PlainUsage)
@shared_options("workflows show")
def workflows_show(
    name: Annotated[str, typer.Argument(help="The workflow's name.")],
    chart_format: Annotated[ChartFormat, typer.Option(
        "--format", "-f", help="text: the phases, then the chart drawn as in the TUI; mermaid: a "
        "stateDiagram-v2; dot: a Graphviz digraph. Both regions, every transition.")] = ChartFormat.text,
    width: Annotated[int | None, typer.Option(
        "--width", min=40, help="Columns for the text drawing (default: the terminal's, at most 100).")] = None,
    *,
    options: CommonOptions,
) -> None:
    """Draw a workflow's chart (the control loop and the phases), from the chart class it compiles to."""
    from agentcli.chart_drawing import draw_chart, to_dot, to_mermaid
    from agentcli.session.chart import chart_class, chart_graph
    from agentcli.session.factory import SessionSetupError, workflow_for
    from agentcli.workflow.render import render_workflow

    try:
        workflow = workflow_for(name, workspace(options.cwd))
    except SessionSetupError as error:
        raise fail(str(error)) from None
    graph = chart_graph(chart_class(workflow))
    if chart_format is ChartFormat.mermaid:
        typer.echo(to_mermaid(graph), nl=False)
    elif chart_format is ChartFormat.dot:
        typer.echo(to_dot(graph, workflow.name), nl=False)
    else:
        columns = width or max(60, min(100, shutil.get_terminal_size((100, 24)).columns))
        drawing = draw_chart(graph, columns)
        typer.echo(render_workflow(graph, workflow), nl=False)
        typer.echo("\nChart\n" + "\n".join(line.rstrip() for line in drawing.lines))
