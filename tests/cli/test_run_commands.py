"""`agentcli run /name args`: custom commands run headless (their front matter choosing the
model), @-mentions attach files, built-in commands are the TUI's and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli import app
from agentcli.events import UserMessage, event_from_dict

runner = CliRunner()


def _recording(path: Path) -> str:
    path.write_text(json.dumps({"turns": [{"tool_calls": [{"name": "complete", "arguments": {"summary": "ok"}}]}]}))
    return f"replay:{path}"


def _user_message(stdout: str) -> UserMessage:
    for line in stdout.splitlines():
        data = json.loads(line)
        if data.get("type") == "user_message":
            event = event_from_dict(data)
            assert isinstance(event, UserMessage)
            return event
    raise AssertionError(f"no user message in {stdout!r}")


def test_a_custom_command_runs_headless_with_its_model_and_mentions(workspace: Path, tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json")
    folder = workspace / ".agentcli" / "commands"
    folder.mkdir(parents=True)
    (folder / "explain.md").write_text(f"---\nmodel: {model}\n---\nExplain @$1 briefly.\n")
    (workspace / "app.py").write_text("print('hi')\n")
    result = runner.invoke(app, ["run", "/explain app.py", "--cwd", str(workspace), "-o", "jsonl"])
    assert result.exit_code == 0, result.output
    message = _user_message(result.stdout)
    assert message.text == "Explain @app.py briefly."
    assert message.files == ["app.py"] and "     1\tprint('hi')" in message.attached


def test_built_in_and_unknown_commands_exit_2_naming_the_problem(workspace: Path, tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json")
    builtin = runner.invoke(app, ["run", "/help", "--cwd", str(workspace), "--model", model])
    assert builtin.exit_code == 2 and "/help is a TUI command" in builtin.stderr
    unknown = runner.invoke(app, ["run", "/nosuch thing", "--cwd", str(workspace), "--model", model])
    assert unknown.exit_code == 2 and "unknown command /nosuch" in unknown.stderr
    (workspace / ".agentcli" / "commands").mkdir(parents=True)
    (workspace / ".agentcli" / "commands" / "bad.md").write_text("---\nfoo: 1\n---\nx")
    bad = runner.invoke(app, ["run", "/bad", "--cwd", str(workspace), "--model", model])
    assert bad.exit_code == 2 and "bad.md: line 2: unknown field 'foo'" in bad.stderr


def test_agentcli_rewind_lists_rewinds_and_undoes(git_workspace: Path, tmp_path: Path) -> None:
    rec = tmp_path / "rec.json"
    turns = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "one\n"}}]},
             {"tool_calls": [{"name": "complete", "arguments": {"summary": "one"}}]},
             {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "two\n"}}]},
             {"tool_calls": [{"name": "complete", "arguments": {"summary": "two"}}]}]
    rec.write_text(json.dumps({"turns": turns}))
    first = runner.invoke(app, ["run", "write one", "--model", f"replay:{rec}", "--cwd", str(git_workspace),
                                "-o", "jsonl"])
    assert first.exit_code == 0, first.output
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    second = runner.invoke(app, ["resume", session_id, "make it two", "--headless"])
    assert second.exit_code == 0, second.output
    assert (git_workspace / "a.txt").read_text() == "two\n"

    listing = runner.invoke(app, ["rewind", session_id])
    assert listing.exit_code == 0 and "  1  write one" in listing.stdout and "  2  make it two" in listing.stdout
    rewound = runner.invoke(app, ["rewind", session_id, "2"])
    assert rewound.exit_code == 0, rewound.output
    assert (git_workspace / "a.txt").read_text() == "one\n"
    assert "  2  " not in runner.invoke(app, ["rewind", session_id]).stdout
    undone = runner.invoke(app, ["rewind", session_id, "--undo"])
    assert undone.exit_code == 0, undone.output
    assert (git_workspace / "a.txt").read_text() == "two\n"
    again = runner.invoke(app, ["rewind", session_id, "--undo"])
    assert again.exit_code == 2 and "no rewind to undo" in again.stderr


def test_a_rewind_of_the_code_alone_is_undone_by_a_later_command(git_workspace: Path, tmp_path: Path) -> None:
    rec = tmp_path / "rec.json"
    turns = [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "one\n"}}]},
             {"tool_calls": [{"name": "complete", "arguments": {"summary": "one"}}]},
             {"tool_calls": [{"name": "complete", "arguments": {"summary": "again"}}]}]
    rec.write_text(json.dumps({"turns": turns}))
    first = runner.invoke(app, ["run", "write one", "--model", f"replay:{rec}", "--cwd", str(git_workspace),
                                "-o", "jsonl"])
    assert first.exit_code == 0, first.output
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]

    rewound = runner.invoke(app, ["rewind", session_id, "1", "--what", "code"])
    assert rewound.exit_code == 0 and "--undo" in rewound.stdout, rewound.output
    assert not (git_workspace / "a.txt").exists()
    assert "  1  write one" in runner.invoke(app, ["rewind", session_id]).stdout  # the conversation stays
    # A new process: the undo is rebuilt from the log (it was only in the rewinding process's memory).
    undone = runner.invoke(app, ["rewind", session_id, "--undo"])
    assert undone.exit_code == 0, undone.output
    assert (git_workspace / "a.txt").read_text() == "one\n"
    again = runner.invoke(app, ["rewind", session_id, "--undo"])
    assert again.exit_code == 2 and "no rewind to undo" in again.stderr


def test_a_quoted_mention_attaches_and_a_missing_one_is_named_on_stderr(workspace: Path, tmp_path: Path) -> None:
    model = _recording(tmp_path / "rec.json")
    (workspace / "my notes.txt").write_text("remember the milk\n")
    result = runner.invoke(app, ["run", 'read @"my notes.txt" and @docs/gone.md', "--cwd", str(workspace),
                                 "--model", model, "-o", "jsonl"])
    assert result.exit_code == 0, result.output
    message = _user_message(result.stdout)
    assert message.files == ["my notes.txt"] and "     1\tremember the milk" in message.attached
    assert "agentcli: @docs/gone.md: not attached (no such file)" in result.stderr


def test_a_demo_quit_in_the_tui_before_it_completes_keeps_its_folder_to_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI is stood in for by a user who quits at the first tool call (the app pauses the
    session as it closes): the folder the listed session needs for `resume` must stay."""
    import asyncio
    import shutil

    import agentcli.cli
    import agentcli.tui
    from agentcli.events import ToolCallStarted
    from agentcli.session import Session

    seen: dict[str, object] = {}

    def quit_half_way(*, workspace: Path, session: Session, initial_prompt: str, **_: object) -> int:
        async def play() -> None:
            started = asyncio.Event()
            session.subscribe(lambda event: started.set() if isinstance(event, ToolCallStarted) else None)
            await session.send_user_message(initial_prompt)
            await started.wait()
            await session.pause("the app closed")
            await session.wait_turn()

        asyncio.run(play())
        session.close()
        seen["workspace"] = workspace
        return 0

    monkeypatch.setattr(agentcli.cli, "_interactive", lambda: True)
    monkeypatch.setattr(agentcli.tui, "run_tui", quit_half_way)
    result = runner.invoke(app, ["demo", "--delay", "0"])
    folder = seen["workspace"]
    assert isinstance(folder, Path)
    assert result.exit_code == 0, result.output
    assert (folder / "textstats.py").is_file(), result.output
    assert f"Demo files kept in {folder}; continue it with: agentcli resume " in result.output
    shutil.rmtree(folder)
