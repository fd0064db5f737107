"""Options given before the command: `agentcli --model M --api-base URL run "…"` runs model M.

A user coming from git or docker puts options wherever they like; each test here runs the real
process against the local server and reads which model the server was asked for.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cli import agentcli, events
from tests.support.openai_server import Call, OpenAIServer, Reply


def test_model_and_api_base_before_run_are_used(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "root options honoured"})]))
    proc = agentcli("--model", "openai/root-model", "--api-base", server.base_url, "run", "go", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [request["model"] for request in server.requests] == ["root-model"]


def test_the_commands_own_option_wins_over_the_one_before_it(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("complete", {"summary": "own option wins"})]))
    proc = agentcli("-m", "openai/root-model", "--api-base", server.base_url, "-o", "jsonl",
                    "run", "go", "--model", "openai/own-model", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [request["model"] for request in server.requests] == ["own-model"]
    assert events(proc.stdout)[-1]["outcome"] == "completed"  # -o jsonl before `run` applied too


def test_options_before_resume_are_used(workspace: Path, server: OpenAIServer, tmp_path: Path) -> None:
    server.add(Reply(calls=[Call("pause", {"reason": "over to you"})]))
    first = agentcli("--model", "openai/first-model", "--api-base", server.base_url, "--output", "jsonl",
                     "run", "start", cwd=workspace)
    assert first.returncode == 5, first.stdout + first.stderr
    session_id = str(events(first.stdout)[0]["session_id"])
    server.add(Reply(calls=[Call("complete", {"summary": "resumed on another model"})]))
    resumed = agentcli("--model", "openai/second-model", "resume", session_id, "go on", cwd=workspace)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert [request["model"] for request in server.requests] == ["first-model", "second-model"]


def test_an_option_the_command_does_not_take_exits_2_naming_where_it_goes(workspace: Path) -> None:
    themed = agentcli("--theme", "agentcli-light", "run", "go", cwd=workspace)
    assert themed.returncode == 2
    assert "--theme" in themed.stderr and "run" in themed.stderr and "resume" in themed.stderr
    workflow = agentcli("--workflow", "plan-build", "resume", "--last", "go", cwd=workspace)
    assert workflow.returncode == 2 and "--workflow" in workflow.stderr and "run" in workflow.stderr
    # `restore --yes` confirms a restore; `--yes` before `restore` (approve every tool call) is not it.
    restore = agentcli("--yes", "restore", "1", cwd=workspace)
    assert restore.returncode == 2 and "agentcli restore … --yes" in restore.stderr
    listing = agentcli("--model", "openai/x", "sessions", cwd=workspace)
    assert listing.returncode == 2 and "--model" in listing.stderr


def test_yes_and_a_permission_mode_other_than_all_exclude_each_other(workspace: Path, server: OpenAIServer) -> None:
    for mode, before in (("ask", False), ("edits", False), ("ask", True)):
        args = ["run", "touch made.txt", "--permission-mode", mode, "--model", "openai/m", "--api-base", server.base_url]
        proc = agentcli(*(["-y", *args] if before else [*args, "-y"]), cwd=workspace)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"-y and --permission-mode {mode} exclude each other" in proc.stderr
    assert server.requests == [] and not (workspace / "made.txt").exists()  # nothing ran
    tui = agentcli("-y", "--permission-mode", "ask", cwd=workspace)  # the bare command (the TUI) too
    assert tui.returncode == 2 and "exclude each other" in tui.stderr
    server.add(Reply(calls=[Call("bash", {"command": "touch made.txt"})]),
               Reply(calls=[Call("complete", {"summary": "made"})]))
    agreed = agentcli("run", "touch made.txt", "--permission-mode", "all", "-y", "--model", "openai/m",
                      "--api-base", server.base_url, cwd=workspace)
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    assert (workspace / "made.txt").exists()


def test_run_help_names_prompt_and_every_exit_code() -> None:
    proc = agentcli("run", "--help", cwd=Path.cwd())
    assert proc.returncode == 0
    assert "agentcli run [OPTIONS] PROMPT\n" in proc.stdout
    assert "  PROMPT  The task for the agent." in proc.stdout
    assert "5 paused or waiting for approval" in " ".join(proc.stdout.split())
    missing = agentcli("run", cwd=Path.cwd())
    assert missing.returncode == 2 and "Missing argument 'PROMPT'" in missing.stderr
    called = agentcli("mcp", "call", "--help", cwd=Path.cwd())
    assert "agentcli mcp call [OPTIONS] SERVER TOOL [ARGUMENTS]\n" in called.stdout


def test_every_usage_line_names_its_arguments_in_capitals() -> None:
    expected = {
        ("sessions", "show"): "agentcli sessions show [OPTIONS] ID\n",
        ("workflows", "show"): "agentcli workflows show [OPTIONS] NAME\n",
        ("race", "start"): "agentcli race start [OPTIONS] TASK\n",
        ("diff",): "agentcli diff [OPTIONS] A [B]\n",
        ("restore",): "agentcli restore [OPTIONS] SNAPSHOT\n",
    }
    for command, usage in expected.items():
        proc = agentcli(*command, "--help", cwd=Path.cwd())
        assert proc.returncode == 0 and usage in proc.stdout, proc.stdout
