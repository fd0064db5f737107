"""``agentcli race`` end to end: real processes, real sessions, the scripted model server.

Three attempts with three model names, so the server tells their requests apart; the user's
``.git`` is fingerprinted (bytes and mtimes) before and after race, show, diff and apply.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fleet.conftest import BAD, CHECK, GOOD, Router, agentcli, attempt_key, complete, git_fingerprint, write
from tests.support.openai_server import OpenAIServer


def _race(project: Path, server: OpenAIServer, *extra: str) -> tuple[int, str, str]:
    proc = agentcli("race", "--models", "openai/small,openai/wrong,openai/big", "--api-base", server.base_url,
                    "--check", CHECK, "-j", "2", *extra, "make add() work", cwd=project)
    return proc.returncode, proc.stdout, proc.stderr


def _record(project: Path) -> dict[str, object]:
    proc = agentcli("race", "show", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_race_runs_isolated_attempts_ranks_them_and_applies_the_pick(project: Path, server: OpenAIServer) -> None:
    router = Router({
        "small": [write("calc.py", GOOD), complete("fixed add")],
        "wrong": [write("calc.py", BAD), complete("subtracts")],
        "big": [write("calc.py", GOOD), write("extra.py", "x = 1\n" * 30), complete("fixed, with extras")],
    })
    server.default = router
    before = git_fingerprint(project)
    readme = (project / "README.md").read_text()

    code, out, err = _race(project, server)

    assert code == 0, out + err  # an attempt passed
    assert router.seen == {"small": 2, "wrong": 2, "big": 3}
    race = _record(project)
    attempts = {a["id"]: a for a in race["attempts"]}
    assert [attempts[i]["model"] for i in "123"] == ["openai/small", "openai/wrong", "openai/big"]
    assert all(a["state"] == "done" for a in attempts.values())
    checks = {i: [c["passed"] for c in attempts[i]["report"]["checks"]] for i in "123"}
    assert checks == {"1": [True], "2": [False], "3": [True]}
    assert attempts["3"]["change"]["files"] == 2 and attempts["1"]["change"]["files"] == 1
    # Each attempt started from the workspace as it was: uncommitted edits and untracked files, not ignored ones.
    work = Path(attempts["1"]["workdir"])
    assert (work / "README.md").read_text() == readme and (work / "notes.txt").read_text() == "my notes\n"
    assert not (work / "build").exists() and not (work / ".git").exists()
    assert project not in work.parents
    # Each attempt is a full session of its own, listed and resumable like any other.
    sessions = {a["report"]["session_id"] for a in attempts.values()}
    assert len(sessions) == 3 and None not in sessions
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions"
    for attempt in attempts.values():
        meta = json.loads((data / attempt["report"]["session_id"] / "meta.json").read_text())
        assert meta["workspace"] == attempt["workdir"] and meta["outcome"] == "completed"
    # The user's files are untouched by the race.
    assert (project / "calc.py").read_text().endswith("raise NotImplementedError\n")

    shown = agentcli("race", "show", cwd=project)
    assert shown.returncode == 0
    lines = [line for line in shown.stdout.splitlines() if "openai/" in line]
    assert "★1" in lines[0] and "openai/small" in lines[0]  # passed, and the smallest change
    assert "openai/big" in lines[1] and "openai/wrong" in lines[2]
    assert "1/1 pass" in lines[0] and "0/1 fail" in lines[2]
    assert "agentcli race apply 1" in shown.stdout

    diff = agentcli("race", "diff", "2", cwd=project)
    assert diff.returncode == 0
    assert "-    raise NotImplementedError" in diff.stdout and "+    return a - b" in diff.stdout

    applied = agentcli("race", "apply", "1", cwd=project)
    assert applied.returncode == 0, applied.stderr
    assert (project / "calc.py").read_text() == GOOD
    assert (project / "README.md").read_text() == readme and (project / "notes.txt").read_text() == "my notes\n"
    assert (project / "build" / "out.bin").read_bytes() == b"ignored" and not (project / "extra.py").exists()
    assert git_fingerprint(project) == before

    undone = agentcli("race", "undo", "--yes", cwd=project)
    assert undone.returncode == 0, undone.stderr
    assert (project / "calc.py").read_text().endswith("raise NotImplementedError\n")
    assert git_fingerprint(project) == before

    removed = agentcli("race", "rm", race["id"], cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert "apply stays" not in removed.stdout  # the apply was undone above
    assert not any(Path(a["workdir"]).exists() for a in attempts.values())
    assert "no races in" in agentcli("race", "show", cwd=project).stderr
    assert git_fingerprint(project) == before


def test_apply_keeps_what_the_user_changed_meanwhile(project: Path, server: OpenAIServer) -> None:
    server.default = Router({"1": [write("calc.py", GOOD), write("README.md", "# new readme\n"), complete()]},
                            key=attempt_key)
    proc = agentcli("race", "-n", "1", "--model", "openai/same", "--api-base", server.base_url, "--check", CHECK,
                    "fix add", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (project / "calc.py").write_text("# mine\n" + GOOD)  # the user edits the same file meanwhile

    refused = agentcli("race", "apply", "1", cwd=project)
    assert refused.returncode == 1
    assert "calc.py: changed in the workspace since the race began" in refused.stderr
    assert (project / "calc.py").read_text() == "# mine\n" + GOOD  # kept
    assert (project / "README.md").read_text() == "# calc\n\nAdds numbers.\n"  # nothing half-applied

    forced = agentcli("race", "apply", "1", "--force", cwd=project)
    assert forced.returncode == 0, forced.stderr
    assert (project / "calc.py").read_text() == GOOD and (project / "README.md").read_text() == "# new readme\n"
    assert "forced  calc.py" in forced.stdout


def test_no_attempt_passing_exits_1(project: Path, server: OpenAIServer) -> None:
    server.default = Router({"1": [write("calc.py", BAD), complete()], "2": [write("calc.py", BAD), complete()]},
                            key=attempt_key)
    proc = agentcli("race", "-n", "2", "--model", "openai/same", "--api-base", server.base_url, "--check", CHECK,
                    "fix add", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no attempt passed" in proc.stdout


def test_race_usage_errors_exit_2(project: Path) -> None:
    assert agentcli("race", "-n", "0", "task", cwd=project).returncode == 2
    missing = agentcli("race", "apply", "1", cwd=project)
    assert missing.returncode == 2 and "no races in" in missing.stderr
    # A workflow no attempt could run is refused before any race starts (not N failed attempts).
    unknown = agentcli("race", "-n", "2", "--workflow", "single,nosuch", "--model", "openai/x", "task", cwd=project)
    assert unknown.returncode == 2 and "unknown workflow 'nosuch'" in unknown.stderr
    assert agentcli("race", "list", cwd=project).stdout.strip() == "No races yet."


def test_ctrl_c_cancels_the_attempts_and_their_sessions_pause(project: Path, server: OpenAIServer) -> None:
    import signal
    import subprocess
    import sys

    from tests.support.openai_server import Reply
    from tests.support.waiting import eventually_sync

    # Replies that stream for minutes: the race is interrupted while both attempts are thinking.
    server.default = lambda body: Reply(text="thinking " * 2000, chunk_size=2, delay_s=0.05)
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "race", "-n", "2", "--model", "openai/slow",
                             "--api-base", server.base_url, "--check", CHECK, "fix add"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    races = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "fleet" / "races"

    def thinking() -> bool:
        found = list(races.glob("*/race.json"))
        if not found:
            return False
        record = json.loads(found[0].read_text())
        return all(a["state"] == "running" and a["session_id"] for a in record["attempts"]) \
            and len(server.requests) >= 2

    try:
        eventually_sync(thinking, what="both attempts to be talking to the model")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    assert "race interrupted" in err
    record = _record(project)
    assert [a["state"] for a in record["attempts"]] == ["cancelled", "cancelled"]
    sessions = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions"
    for attempt in record["attempts"]:
        meta = json.loads((sessions / attempt["session_id"] / "meta.json").read_text())
        assert meta["outcome"] == "paused"  # stopped cleanly: `agentcli resume` continues it

    # Taken further with `agentcli resume`, as README says, then applied like any finished attempt.
    server.default = Router({"slow": [write("calc.py", GOOD), complete("finished after the pause")]})
    second = record["attempts"][1]
    resumed = agentcli("resume", second["session_id"], "--headless", "--model", "openai/slow", "--api-base",
                       server.base_url, "finish it", cwd=project)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    diff = agentcli("race", "diff", "2", cwd=project)
    assert diff.returncode == 0 and "+    return a + b" in diff.stdout, diff.stderr
    applied = agentcli("race", "apply", "2", cwd=project)
    assert applied.returncode == 0, applied.stderr
    assert (project / "calc.py").read_text() == GOOD


def test_an_attempt_whose_session_never_ran_skips_the_checks(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "checks-ran"
    # A recording that is not there: nothing checks a replay model up front, its session cannot start.
    missing = tmp_path / "no-such-recording.json"
    proc = agentcli("race", "-n", "1", "--model", f"replay:{missing}", "--check", f"touch {marker}", "fix add",
                    cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    attempt = _record(project)["attempts"][0]
    assert attempt["state"] == "failed" and "no-such-recording.json" in attempt["note"], attempt["note"]
    assert attempt["report"]["checks"] == [] and not marker.exists()

