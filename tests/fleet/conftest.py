"""Fixtures for the fleet: a project with uncommitted work, a model server that tells attempts apart.

Attempts run in parallel against one scripted server, so a single queue of replies would hand
them out in whatever order the requests arrive. :class:`Router` keeps one script per attempt
instead, keyed by the model name the attempt was given (``openai/<name>``, so the request says
``<name>``) or, when they share a model, by the attempt's directory named in the system prompt.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentcli.fleet import records
from agentcli.fleet.models import Attempt, CheckOutcome, JobReport, Race
from agentcli.fleet.workdir import capture_workspace, collect, from_snapshot
from tests.support import agentcli_process
from tests.support.openai_server import Call, Fail, Reply


def agentcli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    # Wide enough that rich never folds a table cell: the tests read rows by line.
    return agentcli_process.run(list(args), cwd=cwd, env={"COLUMNS": "200"}, timeout=timeout, stdin=subprocess.DEVNULL)


class Router:
    """One script per attempt; a request's key is its model name, else its attempt directory."""

    def __init__(self, scripts: dict[str, Iterable[Reply]], key: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.scripts = {name: deque(replies) for name, replies in scripts.items()}
        self.seen: dict[str, int] = {}
        self.key = key or (lambda body: str(body.get("model")))
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply | Fail:
        name = self.key(body)
        with self._lock:
            self.seen[name] = self.seen.get(name, 0) + 1
            script = self.scripts.get(name)
            if not script:
                return Fail(500, f"no reply scripted for {name!r}")
            return script.popleft()


def attempt_key(body: dict[str, Any]) -> str:
    """The attempt number, from the attempt's directory in the system prompt (…/<race>/<n>/work)."""
    system = next(m["content"] for m in body["messages"] if m["role"] == "system")
    text = system if isinstance(system, str) else " ".join(part.get("text", "") for part in system)
    found = re.search(r"/race-[^/\s]+/(\d+)/work", text)
    return found.group(1) if found else "?"


def write(path: str, content: str, text: str = "") -> Reply:
    return Reply(text=text, calls=[Call("write_file", {"path": path, "content": content})])


def complete(summary: str = "done") -> Reply:
    return Reply(calls=[Call("complete", {"summary": summary})])


def git_fingerprint(repo: Path) -> str:
    """Every file under .git, its bytes and its mtime: any write at all changes this."""
    digest = hashlib.sha256()
    git = repo / ".git"
    for path in sorted(p for p in git.rglob("*")):
        stat = path.lstat()
        digest.update(str(path.relative_to(git)).encode())
        digest.update(str(stat.st_mtime_ns).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"
CHECK = "python3 -c 'import calc; assert calc.add(2, 2) == 4'"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with a commit, a changed tracked file and an untracked one (uncommitted work)."""
    repo = tmp_path / "project"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    (repo / "calc.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    (repo / "README.md").write_text("# calc\n")
    (repo / ".gitignore").write_text("build/\n")
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=repo, env=env, check=True)
    (repo / "README.md").write_text("# calc\n\nAdds numbers.\n")  # modified, not committed
    (repo / "notes.txt").write_text("my notes\n")  # untracked
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"ignored")
    return repo.resolve()


RACE_ID = "race-20260101-120000-abcd"


def _attempt(project: Path, data: Path, tree: str, number: str, calc: str, passed: bool, model: str) -> Attempt:
    workdir = records.attempt_dir(data, RACE_ID, number) / "work"
    prepared = from_snapshot(project, tree, workdir, data)
    (workdir / "calc.py").write_text(calc)
    collected = collect(workdir, data)
    report = JobReport(exit_code=0, session_id=f"s{number}", outcome="completed", reason="done", steps=2,
                       input_tokens=1200, output_tokens=80, cost=0.0123,
                       checks=[CheckOutcome(command="pytest", passed=passed, exit_code=0 if passed else 1,
                                            duration_s=0.5)])
    return Attempt(id=number, model=model, workdir=str(workdir), state="done", report=report,
                   base_tree=prepared.base_tree, final_tree=collected.final_tree, change=collected.change)


@pytest.fixture
def finished_race(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A race of two attempts (one passing) over ``project``; returns (data dir, project)."""
    # HOME stays the test process's: a changed HOME makes every `agentcli` process these tests
    # start a fresh one instead of a fork (tests/support/agentcli_process.py).
    home = project.parent
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    data = home / "data" / "agentcli"
    tree, snapshot = capture_workspace(project, data, RACE_ID, "race start")
    attempts = [_attempt(project, data, tree, "1", BAD, False, "openai/first"),
                _attempt(project, data, tree, "2", GOOD, True, "openai/second")]
    race = Race(id=RACE_ID, workspace=str(project), task="make add() work", base_tree=tree, base_snapshot=snapshot,
                jobs=2, attempts=attempts, created=datetime(2026, 1, 1, tzinfo=UTC),
                ended=datetime(2026, 1, 1, 0, 1, tzinfo=UTC))
    records.save(data, race)
    return data, project
