"""The shared options: declared once, taken where they apply, honoured before the command.

In-process through typer's CliRunner; the commands are stopped before they start a session (a
missing workspace, an unknown session), so what is checked is how the options were read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agentcli.cli import app, every_command
from agentcli.cli.options import NAMES, ROOT, TAKES, CommonOptions, OutputFormat, PermissionMode, flag, shared_options

runner = CliRunner()


def _paths(command: object, prefix: str = "") -> set[str]:
    """Every command path below ``agentcli`` (groups too: their callbacks run as commands)."""
    found = {prefix}
    for name, sub in getattr(command, "commands", {}).items():
        found |= _paths(sub, f"{prefix} {name}".strip())
    return found


def test_every_command_says_which_shared_options_it_takes() -> None:
    assert _paths(every_command()) == {"" if key == ROOT else key for key in TAKES}


def test_each_option_is_offered_exactly_where_it_applies() -> None:
    root = every_command()
    for path, takes in TAKES.items():
        command = root
        for part in ([] if path == ROOT else path.split()):
            command = command.commands[part]  # type: ignore[attr-defined]
        declared = {param.name for param in command.params if param.name in NAMES}
        # restore's own --yes confirms a restore; it is not the shared one.
        assert declared - ({"yes"} if path == "restore" else set()) == (set(NAMES) if path == ROOT else takes), path


def test_settings_overrides_convert_each_option_once() -> None:
    assert CommonOptions().settings_overrides() == {"model": None, "api_base": None, "max_steps": None,
                                                    "workflow": None, "sandbox": None}
    chosen = CommonOptions(model="openai/m", api_base="http://x/v1", max_steps=3, workflow="plan-build",
                           permission_mode=PermissionMode.ask, sandbox=False)
    assert chosen.settings_overrides() == {"model": "openai/m", "api_base": "http://x/v1", "max_steps": 3,
                                           "workflow": "plan-build", "sandbox": False,
                                           "permissions": {"mode": "ask"}}
    approve_all = CommonOptions(yes=True, permission_mode=PermissionMode.ask)  # --yes is --permission-mode all
    assert approve_all.settings_overrides()["permissions"] == {"mode": "all"}


def test_flags_are_read_from_the_declarations() -> None:
    assert [flag(name) for name in ("model", "api_base", "sandbox", "output")] == [
        "--model", "--api-base", "--sandbox/--no-sandbox", "--output"]


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--cwd", "{missing}", "run", "go"], "before"),
        (["run", "go", "--cwd", "{missing}"], "after"),
        (["--cwd", "{here}", "run", "go", "--cwd", "{missing}"], "after wins"),
        (["--cwd", "{missing}", "resume", "--last", "go"], "before resume"),
        (["--cwd", "{missing}", "sessions"], "before a group"),
        (["--cwd", "{here}", "snapshots", "--cwd", "{missing}"], "the group's own wins"),
        (["--cwd", "{missing}", "snapshots", "gc"], "through a group to its command"),
        (["--cwd", "{missing}", "diff", "1"], "before diff"),
    ],
)
def test_cwd_is_honoured_wherever_it_is_written(tmp_path: Path, args: list[str], where: str) -> None:
    missing = tmp_path / "missing"
    args = [arg.format(missing=missing, here=tmp_path) for arg in args]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (where, result.output)
    assert f"workspace '{missing}' is not a folder" in result.stderr, where


@pytest.mark.parametrize(
    ("args", "option", "goes_with"),
    [
        (["--theme", "agentcli-light", "run", "go"], "--theme", ["`agentcli` (the TUI)", "`agentcli demo`",
                                                                 "`agentcli resume`"]),
        (["-w", "plan-build", "resume", "--last"], "--workflow", ["`agentcli` (the TUI)", "`agentcli run`"]),
        (["-m", "openai/x", "demo"], "--model", ["`agentcli run`", "`agentcli resume`"]),
        (["-m", "openai/x", "sessions", "show", "abc"], "--model", ["`agentcli run`"]),
        (["--cwd", ".", "sessions", "rm", "abc"], "--cwd", ["`agentcli sessions`", "`agentcli diff`"]),
        (["sessions", "--cwd", ".", "show", "abc"], "--cwd", ["`agentcli sessions`"]),
        (["--no-sandbox", "workflows"], "--sandbox/--no-sandbox", ["`agentcli run`"]),
        (["-o", "jsonl"], "--output", ["`agentcli run`", "`agentcli demo`"]),
    ],
)
def test_an_option_the_command_does_not_take_exits_2_naming_where_it_goes(
    args: list[str], option: str, goes_with: list[str]
) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    message = result.stderr
    assert message.startswith(f"agentcli: {option} does not apply to ")
    assert all(command in message for command in goes_with), message


def test_restore_own_yes_is_not_the_shared_one() -> None:
    result = runner.invoke(app, ["-y", "restore", "1"])
    assert result.exit_code == 2
    assert "`agentcli restore` has a --yes of its own" in result.stderr
    assert "agentcli restore … --yes" in result.stderr


def _probe(seen: list[CommonOptions]) -> typer.Typer:
    """A command line with the real root options and a `run` that only records its options."""
    probe = typer.Typer()

    @probe.callback(invoke_without_command=True)
    @shared_options(ROOT)
    def root(ctx: typer.Context) -> None:
        pass

    @probe.command("run")
    @shared_options("run")
    def run(prompt: str, *, options: CommonOptions) -> None:
        seen.append(options)

    return probe


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-o", "jsonl", "--permission-mode", "ask", "--cwd", "/tmp", "run", "go"],
         CommonOptions(output=OutputFormat.jsonl, permission_mode=PermissionMode.ask, cwd=Path("/tmp"))),
        (["-m", "openai/before", "run", "go", "-m", "openai/after"], CommonOptions(model="openai/after")),
        (["-m", "openai/before", "--api-base", "http://b/v1", "run", "go", "-m", "openai/after"],
         CommonOptions(model="openai/after", api_base="http://b/v1")),
        (["--sandbox", "run", "go", "--no-sandbox"], CommonOptions(sandbox=False)),
        (["-y", "--max-steps", "7", "run", "go"], CommonOptions(yes=True, max_steps=7)),
        (["run", "go"], CommonOptions()),
    ],
)
def test_the_command_gets_its_own_values_else_those_before_it_typed_alike(
    args: list[str], expected: CommonOptions
) -> None:
    seen: list[CommonOptions] = []
    result = runner.invoke(_probe(seen), args)
    assert result.exit_code == 0, result.output
    assert seen == [expected]
    # A str-valued enum equals its string: compare the types too ("jsonl" is not OutputFormat.jsonl).
    assert [type(getattr(seen[0], name)) for name in NAMES] == [type(getattr(expected, name)) for name in NAMES]
