"""A command people try from other tools gets where it is here, not only "no such command"."""

from __future__ import annotations

from typer.testing import CliRunner

from agentcli.cli import app


def test_undo_points_to_restore_and_rewind() -> None:
    result = CliRunner().invoke(app, ["undo"])
    assert result.exit_code == 2
    assert "agentcli restore N" in result.output and "agentcli rewind ID --undo" in result.output
    assert "No such command 'frobnicate'" in CliRunner().invoke(app, ["frobnicate"]).output
