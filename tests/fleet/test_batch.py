"""``agentcli batch`` end to end: tasks from a local workspace, a git repository and a SWE-bench
instance; the results file; resuming; and (slow) the same batch on a local Ray head."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.conftest import BAD, CHECK, GOOD, Router, agentcli, complete, git_fingerprint, write
from tests.support.openai_server import OpenAIServer, Reply

TEST_PATCH = """\
diff --git a/test_calc.py b/test_calc.py
new file mode 100644
--- /dev/null
+++ b/test_calc.py
@@ -0,0 +1,4 @@
+import calc
+
+def test_add():
+    assert calc.add(2, 3) == 5
"""


def _tasks(path: Path, project: Path) -> Path:
    lines = [
        {"id": "good", "workspace": str(project), "prompt": "fix add", "model": "openai/good", "checks": [CHECK]},
        {"id": "bad", "workspace": str(project), "prompt": "fix add", "model": "openai/bad", "checks": [CHECK]},
        {"id": "clone", "repo": str(project), "ref": "HEAD", "prompt": "fix add", "model": "openai/clone",
         "checks": [CHECK]},
        {"instance_id": "calc__calc-1", "repo": "calc/calc", "base_commit": "HEAD", "problem_statement": "add() fails",
         "FAIL_TO_PASS": json.dumps(["test_calc.py::test_add"]), "PASS_TO_PASS": [], "test_patch": TEST_PATCH,
         "hints_text": "", "version": "1.0"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _scripts() -> dict[str, list[Reply]]:
    return {
        "good": [write("calc.py", GOOD), complete()],
        "bad": [write("calc.py", BAD), complete()],
        "clone": [write("calc.py", GOOD), complete()],
        "swe": [write("calc.py", GOOD), complete()],
    }


def _repos(tmp_path: Path, project: Path) -> Path:
    """A folder of local clones named as SWE-bench's ``owner__name``."""
    repos = tmp_path / "repos"
    repos.mkdir()
    subprocess.run(["git", "clone", "-q", str(project), str(repos / "calc__calc")], check=True)
    return repos


def _results(path: Path) -> dict[str, dict[str, object]]:
    return {line["id"]: line for line in map(json.loads, path.read_text().splitlines())}


def _batch(tasks: Path, server: OpenAIServer, repos: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return agentcli("batch", str(tasks), "--api-base", server.base_url, "--model", "openai/swe", "--repos", str(repos),
                    "--jobs", "2", *extra, cwd=tasks.parent)


def test_batch_writes_results_and_resumes(project: Path, server: OpenAIServer, tmp_path: Path) -> None:
    server.default = Router(_scripts())
    repos = _repos(tmp_path, project)
    tasks = _tasks(tmp_path / "tasks.jsonl", project)
    before = git_fingerprint(project)

    proc = _batch(tasks, server, repos)

    assert proc.returncode == 1, proc.stdout + proc.stderr  # one task fails its check
    results = _results(tmp_path / "tasks.results.jsonl")
    assert {k: v["status"] for k, v in results.items()} == {
        "good": "passed", "bad": "failed", "clone": "passed", "calc__calc-1": "passed"}
    good = results["good"]
    assert good["outcome"] == "completed" and good["exit_code"] == 0 and good["steps"] == 2
    assert good["input_tokens"] > 0 and good["wall_s"] > 0 and good["session_id"]
    assert "+    return a + b" in str(good["diff"]) and good["change"] == {"files": 1, "added": 1, "removed": 1}
    swe = results["calc__calc-1"]
    assert [c["command"] for c in swe["checks"]] == [
        "python -m pytest -q -p no:cacheprovider test_calc.py::test_add"]
    assert "test_calc.py" not in str(swe["diff"])  # the test patch was taken back: the diff is the agent's
    assert "pass rate" in proc.stdout and "75%" in proc.stdout
    assert git_fingerprint(project) == before and (project / "calc.py").read_text().endswith("NotImplementedError\n")
    # Nothing of the tasks is left in the data dir without --keep: directories, their stores, logs.
    data = Path(os.environ["XDG_DATA_HOME"], "agentcli")
    assert not list((data / "fleet" / "batches").glob("*/*")) and not list((data / "snapshots").glob("work-*"))

    again = _batch(tasks, server, repos)  # resumed: every task already has its line
    assert again.returncode == 1 and "skipped" in again.stdout
    assert len((tmp_path / "tasks.results.jsonl").read_text().splitlines()) == 4


def test_a_batch_of_one_says_task_and_its_summary_fits_80_columns(project: Path, server: OpenAIServer,
                                                                  tmp_path: Path) -> None:
    from tests.support import agentcli_process

    server.default = Router({"one": [write("calc.py", GOOD), complete()]})
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "one", "workspace": str(project), "prompt": "fix add", "model": "openai/one",
                                 "checks": [CHECK]}) + "\n")
    proc = agentcli_process.run(["batch", str(tasks), "--api-base", server.base_url], cwd=tmp_path,
                                env={"COLUMNS": "80"}, timeout=240, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("batch of 1 task, 1 at a time, on local;")
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if "pass rate" in line)
    assert "time (sum)" in header and "skipped" in header, proc.stdout  # one line, nothing folded
    assert max(len(line) for line in lines[lines.index(header) - 1:]) <= 80
    assert "100%" in proc.stdout


def test_a_bad_tasks_file_names_the_line(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"prompt": "x", "workspace": "."}\n{"prompt": "y"}\n')
    proc = agentcli("batch", str(tasks), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{tasks}:2: give either \"workspace\"" in proc.stderr
    before = tasks.read_text()
    itself = agentcli("batch", str(tasks), "--results", str(tasks), cwd=tmp_path)
    assert itself.returncode == 2 and "is the tasks file itself" in itself.stderr, itself.stderr
    assert tasks.read_text() == before


def test_a_task_that_cannot_be_prepared_is_an_error_line_and_the_batch_goes_on(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "gone", "repo": str(tmp_path / "no-such-repo"), "prompt": "x"}) + "\n")
    proc = agentcli("batch", str(tasks), "--model", "openai/unused", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = _results(tmp_path / "tasks.results.jsonl")["gone"]
    assert result["status"] == "error" and "cloning" in str(result["error"]) and result["session_id"] is None
    assert "error  gone: cloning" in proc.stdout


def test_ray_without_ray_installed_exits_2_with_the_install_command(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"prompt": "x", "workspace": "."}\n')
    blocker = tmp_path / "noray"
    blocker.mkdir()
    (blocker / "ray.py").write_text("raise ImportError('no ray here')\n")
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    proc = subprocess.run([sys.executable, "-m", "agentcli", "batch", str(tasks), "--ray", "auto"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "pip install 'agentcli[ray]'" in proc.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def ray_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Ray head on 127.0.0.1 with 2 CPUs, started as a user starts one, and only it stopped after.

    ``ray start --block`` keeps the head's processes as its children in a process group of our own,
    so the test stops exactly those (``ray stop`` would stop every Ray on the machine). Token
    authentication (on by default for local clusters since Ray 2.59) uses a token of the test's own,
    given to the head and to agentcli through the environment, as on a real cluster.
    """
    import secrets
    import signal

    pytest.importorskip("ray")
    ray = shutil.which("ray", path=str(Path(sys.executable).parent))
    if ray is None:
        pytest.skip("the ray command is not installed next to this Python")
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(16))
    port = _free_port()
    temp = Path("/tmp") / f"ray-agentcli-{port}"  # Ray's socket paths must stay short
    log = (tmp_path / "ray-head.log").open("w")
    head = subprocess.Popen([ray, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
                             "--num-cpus", "2", "--include-dashboard", "false", "--temp-dir", str(temp),
                             "--disable-usage-stats"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        from tests.support.waiting import eventually_sync

        def up() -> bool:
            assert head.poll() is None, (tmp_path / "ray-head.log").read_text()
            return "Ray runtime started" in (tmp_path / "ray-head.log").read_text()

        eventually_sync(up, what="the Ray head to start", timeout=180)
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _comparable(result: dict[str, object]) -> dict[str, object]:
    keys = ("id", "status", "exit_code", "outcome", "reason", "steps", "change", "diff", "model")
    checks = [(c["command"], c["passed"]) for c in result["checks"]]  # type: ignore[union-attr]
    return {**{k: result[k] for k in keys}, "checks": checks}


@pytest.mark.slow
@pytest.mark.may_skip(reason="needs the ray extra (pip install 'agentcli[ray]')")
def test_a_batch_on_a_local_ray_head_gives_the_local_results(project: Path, server: OpenAIServer, tmp_path: Path,
                                                              ray_head: str) -> None:
    server.default = Router(_scripts())
    repos = _repos(tmp_path, project)
    local_tasks = _tasks(tmp_path / "local.jsonl", project)
    ray_tasks = _tasks(tmp_path / "ray.jsonl", project)
    local = _batch(local_tasks, server, repos)
    server.default = Router(_scripts())
    on_ray = _batch(ray_tasks, server, repos, "--ray", ray_head, "--keep")
    assert local.returncode == on_ray.returncode == 1, on_ray.stdout + on_ray.stderr
    here, there = _results(tmp_path / "local.results.jsonl"), _results(tmp_path / "ray.results.jsonl")
    assert {k: _comparable(v) for k, v in here.items()} == {k: _comparable(v) for k, v in there.items()}
    assert all(v["backend"] == f"ray {ray_head}" for v in there.values())
    # The sessions came back: stored here, pointed at the local directories, resumable.
    good = there["good"]
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "sessions" / str(good["session_id"])
    meta = json.loads((data / "meta.json").read_text())
    assert meta["workspace"] == good["workdir"] and Path(str(good["workdir"]), "calc.py").read_text() == GOOD
    listed = agentcli("sessions", "--all", cwd=tmp_path)
    assert str(good["session_id"]) in listed.stdout




@pytest.mark.slow
@pytest.mark.may_skip(reason="needs the ray extra (pip install 'agentcli[ray]')")
def test_a_race_on_ray_is_shown_and_applied_as_a_local_one(project: Path, server: OpenAIServer,
                                                           ray_head: str) -> None:
    server.default = Router({"good": [write("calc.py", GOOD), complete()], "bad": [write("calc.py", BAD), complete()]})
    before = git_fingerprint(project)
    proc = agentcli("race", "--models", "openai/good,openai/bad", "--api-base", server.base_url, "--check", CHECK,
                    "--ray", ray_head, "fix add", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    race = json.loads(agentcli("race", "show", "--json", cwd=project).stdout)
    assert race["backend"] == f"ray {ray_head}"
    assert [a["report"]["checks"][0]["passed"] for a in race["attempts"]] == [True, False]
    assert "★1" in agentcli("race", "show", cwd=project).stdout
    assert agentcli("race", "apply", "1", cwd=project).returncode == 0
    assert (project / "calc.py").read_text() == GOOD and git_fingerprint(project) == before


@pytest.mark.slow
@pytest.mark.may_skip(reason="needs the ray extra (pip install 'agentcli[ray]')")
def test_ctrl_c_cancels_the_ray_tasks(project: Path, server: OpenAIServer, ray_head: str) -> None:
    import secrets
    import signal

    from tests.support.waiting import eventually_sync, processes_with

    marker = f"fix add {secrets.token_hex(4)}"  # in each remote session's command line
    server.default = lambda body: Reply(text="thinking " * 2000, chunk_size=2, delay_s=0.05)
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "race", "-n", "2", "--model", "openai/slow",
                             "--api-base", server.base_url, "--check", CHECK, "--ray", ray_head, marker], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        eventually_sync(lambda: len(processes_with(marker)) >= 3 and len(server.requests) >= 2,
                        what="both remote sessions to be talking to the model", timeout=180)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    eventually_sync(lambda: not processes_with(marker), what="the remote sessions to be stopped", timeout=120)
    race = json.loads(agentcli("race", "show", "--json", cwd=project).stdout)
    assert [a["state"] for a in race["attempts"]] == ["cancelled", "cancelled"]


def test_a_repo_task_checks_out_a_branch_that_is_not_the_default(project: Path, tmp_path: Path) -> None:
    """A fresh clone has a local branch only for the default one; ``ref`` may name any branch."""
    from agentcli.fleet.workdir import WorkdirError, from_git

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    for argv in (["git", "switch", "-qc", "feature"], ["git", "add", "-A"], ["git", "commit", "-qm", "feature"],
                 ["git", "switch", "-q", "-"]):
        subprocess.run(argv, cwd=project, env=env, check=True)
    data = tmp_path / "data"
    prepared = from_git(str(project), "feature", tmp_path / "feature" / "work", data)
    assert (prepared.workdir / "notes.txt").read_text() == "my notes\n"  # committed on the branch only
    with pytest.raises(WorkdirError, match="has no commit, tag or branch 'nosuch'"):
        from_git(str(project), "nosuch", tmp_path / "nosuch" / "work", data)


@pytest.mark.may_skip(reason="needs the ray extra (pip install 'agentcli[ray]')")
def test_a_ray_address_nobody_answers_at_exits_2_at_once(tmp_path: Path) -> None:
    """Ray itself retries such an address for minutes; the user learns at once that no head is there."""
    pytest.importorskip("ray")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"prompt": "x", "workspace": "."}\n')
    address = f"127.0.0.1:{_free_port()}"  # nothing listens there
    proc = agentcli("batch", str(tasks), "--ray", address, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"cannot reach the Ray cluster at {address}" in proc.stderr
    assert not (tmp_path / "tasks.results.jsonl").exists()


def test_a_results_path_that_cannot_be_written_exits_2_before_any_task(project: Path, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t", "workspace": str(project), "prompt": "x", "model": "openai/none"}) + "\n")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    proc = agentcli("batch", str(tasks), "--results", str(folder), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"cannot write the results file {folder}: Is a directory" in proc.stderr
    assert "Traceback" not in proc.stderr and "batch of" not in proc.stdout  # nothing ran


def test_a_ray_jobs_folder_left_by_a_killed_worker_is_swept(tmp_path: Path) -> None:
    """Cancelling a Ray job kills its worker before it can clean up; the next job on the node does."""
    from agentcli.fleet.ray_backend import SCRATCH_PREFIX, sweep_scratch

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # a worker that is gone
    left = tmp_path / f"{SCRATCH_PREFIX}{child.pid}-abc123"
    (left / "work").mkdir(parents=True)
    (left / "work" / "calc.py").write_text(GOOD)
    running = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def456"  # a worker still at work
    running.mkdir()
    other = tmp_path / "agentcli-ray-notapid"
    other.mkdir()
    sweep_scratch(tmp_path)
    assert not left.exists() and running.exists() and other.exists()


def test_a_resumed_batch_runs_again_the_tasks_that_could_not_run(project: Path, tmp_path: Path) -> None:
    """An `error` line (a clone that failed, a key not set) is not a verdict: the next run takes
    that task again, and the results file still ends with one line per task."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(project), str(remote)], check=True)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "repo": remote.as_uri(), "ref": "v9", "prompt": "fix add"}) + "\n"
                     + json.dumps({"id": "t2", "workspace": str(project), "prompt": "fix add"}) + "\n")
    results = tmp_path / "tasks.results.jsonl"
    results.write_text(json.dumps({"id": "t1", "status": "error", "error": "cloning failed: network down"}) + "\n"
                       + json.dumps({"id": "t2", "status": "passed"}) + "\n" + "not a result, kept as is\n")
    proc = agentcli("batch", str(tasks), "--model", "openai/x", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("batch of 2 tasks (1 done before; 1 that could not run runs again), 1 at a time")
    assert "  error  t1: " in proc.stdout and "has no commit, tag or branch 'v9'" in proc.stdout
    assert "WorkdirError" not in proc.stdout  # the message says what failed; the class name says nothing more
    lines = results.read_text().splitlines()
    assert lines[:2] == [json.dumps({"id": "t2", "status": "passed"}), "not a result, kept as is"]
    assert len(lines) == 3 and json.loads(lines[2])["id"] == "t1" and "network down" not in lines[2]


def test_a_second_batch_on_the_same_results_file_is_refused(project: Path, tmp_path: Path) -> None:
    """Two batches on one results file would run each task twice and could lose each other's lines."""
    from agentcli.fleet.batch import lock_results

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t", "workspace": str(project), "prompt": "fix add"}) + "\n")
    results = tmp_path / "tasks.results.jsonl"
    held = lock_results(Path(os.environ["XDG_DATA_HOME"]) / "agentcli", results)  # the first batch, still running
    try:
        proc = agentcli("batch", str(tasks), "--model", "openai/x", "--api-base", "http://127.0.0.1:9", cwd=tmp_path)
    finally:
        held.close()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"another `agentcli batch` (pid {os.getpid()}) is writing {results}" in proc.stderr
    assert not results.exists()


def test_batch_lines_say_no_price_as_every_front_end_does_and_a_dash_for_a_task_that_never_ran(
        capsys: pytest.CaptureFixture[str]) -> None:
    from agentcli.cli.batch import _print_result, _print_summary
    from agentcli.fleet.batch import BatchResult, Summary

    priced = BatchResult(id="a", status="passed", outcome="completed", cost=0.0123)
    unpriced = BatchResult(id="b", status="failed", outcome="completed", cost=None)
    never_ran = BatchResult(id="c", status="error", error="task c: clone failed", cost=None)
    for result in (priced, unpriced, never_ran):
        _print_result(result)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("$0.0123") and lines[1].endswith("no price") and lines[2].endswith("—")
    _print_summary(Summary(results=[priced, unpriced, never_ran], skipped=0))
    assert "$0.0123 + no price" in capsys.readouterr().out
    _print_summary(Summary(results=[never_ran], skipped=0))
    out = capsys.readouterr().out
    assert "unknown" not in out and "no price" not in out and "—" in out
