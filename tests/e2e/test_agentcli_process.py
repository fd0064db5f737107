"""The suite's forked agentcli processes (tests/support/agentcli_process.py) behave as fresh ones do.

The end-to-end tests trust them to: same output, exit codes, working folder and environment,
signals that reach the process itself, and a fresh interpreter whenever a variable read at
import differs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support import agentcli_process
from tests.support.agentcli_process import ForkedProcess
from tests.support.openai_server import Call, OpenAIServer, Reply


@pytest.fixture(autouse=True)
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the forked processes: forked even in a run that asks for fresh ones."""
    monkeypatch.delenv("TESTS_FRESH_AGENTCLI", raising=False)


def _both(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    return agentcli_process.run(args, cwd=cwd), agentcli_process.run(args, cwd=cwd, fresh=True)


def test_output_and_exit_codes_are_those_of_a_fresh_process(workspace: Path) -> None:
    for args in (["--version"], ["sessions"], ["sessions", "show", "nosuchsession"], ["run", "--no-such-flag"]):
        forked, fresh = _both(args, workspace)
        assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr), args
    assert fresh.returncode == 2 and "No such option" in fresh.stderr


def test_the_process_runs_in_the_tests_folder_and_environment(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(calls=[Call("write_file", {"path": "here.txt", "content": "x"})]),
               Reply(calls=[Call("complete", {"summary": "written"})]))
    process = agentcli_process.start(["run", "go", "--model", "openai/m", "--api-base", server.base_url, "-o", "jsonl"],
                                     cwd=workspace)
    assert isinstance(process, ForkedProcess) and process.pid != os.getpid()
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert (workspace / "here.txt").read_text() == "x"  # relative paths: the test's folder
    sessions = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions"  # this test's, not the server's
    assert [p.name for p in sessions.iterdir()] == [json.loads(out.splitlines()[0])["session_id"]]


def test_a_signal_reaches_the_process_and_its_exit_says_so(workspace: Path, server: OpenAIServer) -> None:
    server.add(Reply(text="slow " * 400, chunk_size=5, delay_s=0.05))
    process = agentcli_process.start(["run", "go", "--model", "openai/m", "--api-base", server.base_url, "-o", "jsonl"],
                                     cwd=workspace)
    assert process.stdout is not None
    assert process.stdout.readline()  # running: the session has started
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL
    process.communicate(timeout=60)


def test_an_environment_read_at_import_gets_a_fresh_interpreter(workspace: Path) -> None:
    litellm_reads_at_import = {"EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER": "false"}
    changed = agentcli_process.start(["--version"], cwd=workspace, env=litellm_reads_at_import)
    same = agentcli_process.start(["--version"], cwd=workspace, env={"XDG_DATA_HOME": str(workspace)})
    assert isinstance(changed, subprocess.Popen) and isinstance(same, ForkedProcess)
    assert changed.communicate(timeout=60)[0] == same.communicate(timeout=60)[0]


async def test_a_worker_that_ran_a_session_in_process_still_gets_forks(workspace: Path, server: OpenAIServer) -> None:
    """A turn through litellm in this process leaves the variables litellm sets in os.environ
    (most workers run such tests first): the processes started afterwards are still forked."""
    from tests.e2e.test_litellm_stream import _session

    server.add(Reply(text="Counting.", calls=[Call("complete", {"summary": "done"})]))
    session, _ = _session(workspace, server)
    assert (await session.run_turn("count the tokens")).outcome == "completed"
    process = agentcli_process.start(["--version"], cwd=workspace)
    assert isinstance(process, ForkedProcess)
    assert process.communicate(timeout=60)[0].strip()


def test_what_a_process_may_change_unforked_is_not_read_at_import(workspace: Path) -> None:
    """The server records what its imports read: none of the variables the tests change per
    process, and a variable that is read still starts a fresh interpreter."""
    server = agentcli_process._fork_server()
    assert "*" not in server.read, "an import iterated the whole environment"
    assert not server.read & agentcli_process.READ_AT_RUN_TIME
    per_process = {"HOME": str(workspace), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9",
                   "ANTHROPIC_API_KEY": "sk-ant-test", "AGENTCLI_MODEL": "openai/m", "MY_API_TOKEN": "t"}
    assert server.differences({**os.environ, **per_process}) == set()
    read = sorted(server.read)[0]
    assert server.differences({**os.environ, read: "changed"}) == {read}


def test_a_forked_process_reads_the_git_config_of_its_own_home(tmp_path: Path, workspace: Path,
                                                               server: OpenAIServer) -> None:
    """libgit2 finds ~/.gitconfig when pygit2 is imported, in the server, from the server's HOME."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "ignored-here").write_text("*.log\n")
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home / 'ignored-here'}\n")
    (workspace / "kept.txt").write_text("x")
    (workspace / "noise.log").write_text("x")
    server.add(Reply(calls=[Call("list_files", {})]), Reply(calls=[Call("complete", {"summary": "listed"})]))
    process = agentcli_process.start(["run", "list", "--model", "openai/m", "--api-base", server.base_url],
                                     cwd=workspace, env={"HOME": str(home)})
    assert isinstance(process, ForkedProcess)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    listed = next(m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool")
    assert "kept.txt" in listed and "noise.log" not in listed
