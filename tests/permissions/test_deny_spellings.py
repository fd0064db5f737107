"""A deny rule matches what runs, whatever the spelling: wrappers, paths, quotes, nested shells.

``deny = ["bash:rm *"]`` must refuse every way of running ``rm`` that the README lists, and a
command whose name is only known when it runs (``$x -rf d``) is refused while such a rule is set:
the rule cannot be checked against it. A few spellings really run (mode ``all``) to show the
folder survives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcli.config import PermissionSettings, Settings
from agentcli.permissions import Policy
from agentcli.permissions.runs import what_runs
from agentcli.session.factory import new_session
from tests.support.sessions import replay

RM_SPELLINGS = [
    "rm -rf d",
    "command rm -rf d",
    "command -p rm -rf d",
    "\\rm -rf d",
    "'rm' -rf d",
    '"rm" -rf d',
    "r''m -rf d",
    "r\\m -rf d",
    "/bin/rm -rf d",
    "/usr/bin/rm -rf d",
    "./../../../bin/rm -rf d",
    "env rm -rf d",
    "env -i rm -rf d",
    "env -u HOME rm -rf d",
    "env FOO=1 rm -rf d",
    "env -S 'rm -rf d'",
    "FOO=1 rm -rf d",
    "sudo rm -rf d",
    "sudo -u root rm -rf d",
    "nohup rm -rf d",
    "time rm -rf d",
    "timeout 5 rm -rf d",
    "timeout -s KILL 5 rm -rf d",
    "timeout -k 1 5 rm -rf d",
    "nice -n 5 rm -rf d",
    "exec rm -rf d",
    "busybox rm -rf d",
    "stdbuf -o0 rm -rf d",
    "setsid rm -rf d",
    "echo d | xargs rm -rf",
    "echo d | xargs -0 rm -rf",
    "echo d | xargs -I{} rm -rf {}",
    "xargs rm -rf <<< d",
    "find d -delete",
    "find . -name d -exec rm -rf {} +",
    "find . -name d -execdir rm -rf {} \\;",
    "sh -c 'rm -rf d'",
    'bash -c "rm -rf d"',
    "bash -lc 'rm -rf d'",
    "sh -ec 'rm -rf d'",
    "/bin/sh -c 'rm -rf d'",
    "eval 'rm -rf d'",
    "eval rm -rf d",
    "(rm -rf d)",
    "{ rm -rf d; }",
    "true && rm -rf d",
    "false || rm -rf d",
    "if true; then rm -rf d; fi",
    "for x in 1; do rm -rf d; done",
    "rm -rf d &",
    "echo $(rm -rf d)",
    "echo `rm -rf d`",
    'echo "$(rm -rf d)"',
    "cat <(rm -rf d)",
    "f() { rm -rf d; }; f",
    "trap 'rm -rf d' EXIT",
    "true\nrm -rf d",
    "x=rm; $x -rf d",
    '"$(echo rm)" -rf d',
    "${RM:-rm} -rf d",
    "rm${IFS}-rf${IFS}d",
    "{rm,-rf,d}",
    "/bin/r? -rf d",
    "echo 'rm -rf d' | sh",
    "echo 'rm -rf d' | bash -s",
    "bash <<< 'rm -rf d'",
    "sh <<EOF\nrm -rf d\nEOF",
    "xargs -a list sh -c 'rm -rf d'",
    "sudo sh -c 'cd / && rm -rf d'",
]


def _policy(workspace: Path, mode: str = "all", deny: tuple[str, ...] = ("bash:rm *",)) -> Policy:
    return Policy(PermissionSettings(mode=mode, deny=list(deny)), workspace)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", RM_SPELLINGS)
def test_every_spelling_of_rm_is_denied(workspace: Path, command: str) -> None:
    decision = _policy(workspace).decide("bash", {"command": command})
    assert decision.denied, f"{command!r} was not denied: {decision.reason}"
    assert "rm *" in decision.reason or "cannot" in decision.reason


@pytest.mark.parametrize(
    "command",
    ["ls -la", "echo rm is a word", "git rm --cached x", "grep -r 'rm -rf' .", "python -m pytest", "echo $HOME",
     "cat \"$FILE\"", "mkdir -p src/a", "find . -name '*.py'", "xargs echo < list", "sh script.sh"],
)
def test_commands_that_run_no_rm_are_not_denied(workspace: Path, command: str) -> None:
    decision = _policy(workspace).decide("bash", {"command": command})
    assert not decision.denied, f"{command!r} was denied: {decision.reason}"


def test_a_computed_command_name_runs_when_no_rule_could_match(workspace: Path) -> None:
    # Without a bash deny rule a `$x` command is judged as any other: the mode decides.
    assert _policy(workspace, deny=()).decide("bash", {"command": "x=ls; $x"}).allowed
    # A bare `bash` deny denies everything; a rule for another tool does not involve bash.
    assert _policy(workspace, deny=("write_file:*.lock",)).decide("bash", {"command": "$x"}).allowed


def test_the_refusal_tells_the_model_why_and_what_to_do(workspace: Path) -> None:
    decision = _policy(workspace).decide("bash", {"command": "x=rm; $x -rf d"})
    assert decision.denied
    assert "`$x`" in decision.reason and "bash:rm *" in decision.reason


@pytest.mark.parametrize(
    "command", ["command rm -rf d", "\\rm -rf d", "/bin/rm -rf d", "env rm -rf d", "echo d | xargs rm -rf",
                "find d -delete", "sh -c 'rm -rf d'", "x=rm; $x -rf d"],
)
async def test_denied_spellings_leave_the_folder_in_place(
    workspace: Path, isolated_dirs: Path, command: str
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d" / "keep.txt").write_text("keep\n")
    client = replay(("", [("bash", {"command": command})]), ("", [("complete", {"summary": "done"})]))
    settings = Settings(permissions=PermissionSettings(mode="all", deny=["bash:rm *"]))
    session = new_session(workspace, settings, model_client=client, data_dir=isolated_dirs / "data")
    await session.run_turn("delete d")
    session.close()
    assert (workspace / "d" / "keep.txt").read_text() == "keep\n"


_PIECES = [*"rm -$(){}'\"\\`;|&<>\n\x00ab*?", "\ud800", "\udcff", "sh -c ", "xargs "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES)).map("".join))
def test_any_text_gets_a_verdict(command: str) -> None:
    # Whatever the model sends, the parse ends with a list, never an exception.
    runs = what_runs(command)
    assert all(isinstance(text, str) for text in (*runs.commands, *runs.unknown))
