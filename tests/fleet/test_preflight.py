"""A race or batch whose model or workflow no session could start with is refused before anything
starts: exit 2 naming the model or workflow (and the task's line), no race recorded, no task run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.conftest import agentcli


def _races(project: Path) -> str:
    return agentcli("race", "list", cwd=project).stdout.strip()


def test_a_race_with_a_model_no_provider_serves_is_refused_before_it_starts(project: Path) -> None:
    proc = agentcli("race", "--models", "openai/x,nosuchprovider/model-y", "--api-base", "http://127.0.0.1:9",
                    "fix add", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "attempt 2 (nosuchprovider/model-y)" in proc.stderr
    assert "'nosuchprovider/model-y' names no provider litellm knows ('nosuchprovider')" in proc.stderr
    assert "no attempt was started" in proc.stderr and proc.stdout == ""
    assert _races(project) == "No races yet."


_PHASE_MODEL_WORKFLOW = """
initial = "work"
terminal = ["done"]
[[phases]]
name = "work"
model = "nosuchprovider/m"
[[phases]]
name = "done"
tools = []
[[transitions]]
from = "work"
to = "done"
tool = "finish_phase"
"""


def test_a_race_whose_workflow_names_an_unknown_model_is_refused(project: Path) -> None:
    workflows = project / ".agentcli" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "two-models.toml").write_text(_PHASE_MODEL_WORKFLOW)
    proc = agentcli("race", "-n", "2", "--model", "openai/x", "--workflow", "two-models", "fix add", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "attempt 1 (openai/x · two-models)" in proc.stderr
    assert "phase 'work'" in proc.stderr and "'nosuchprovider/m'" in proc.stderr
    assert _races(project) == "No races yet."


def test_a_missing_key_is_named_only_for_providers_that_need_one() -> None:
    """Lenient: never refuses what a session would start (a named server, a keyless provider)."""
    from agentcli.config import Settings
    from agentcli.fleet.preflight import key_problem

    def problem(model: str, api_base: str | None = None, **environ: str) -> str | None:
        return key_problem(Settings(model=model, api_base=api_base), environ)

    assert "no API key for anthropic/claude-sonnet-4-5: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is not set" in (
        problem("anthropic/claude-sonnet-4-5") or "")
    assert problem("anthropic/claude-sonnet-4-5", ANTHROPIC_AUTH_TOKEN="t") is None
    assert problem("openai/gpt-4o") is not None and problem("openai/gpt-4o", OPENAI_API_KEY="k") is None
    assert problem("openai/gpt-4o", api_base="http://127.0.0.1:9") is None
    assert problem("openai/gpt-4o", OPENAI_BASE_URL="http://127.0.0.1:9") is None
    assert problem("ollama_chat/qwen3:8b") is None and problem("replay:/tmp/r.json") is None


def test_a_race_on_a_missing_key_is_refused_before_it_starts(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AGENTCLI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    proc = agentcli("race", "-n", "2", "--model", "anthropic/claude-sonnet-4-5", "fix add", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("agentcli: attempt 1 (anthropic/claude-sonnet-4-5): no API key for "
                                  "anthropic/claude-sonnet-4-5: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is not set")
    assert "no attempt was started" in proc.stderr and _races(project) == "No races yet."


def _tasks(path: Path, project: Path, *lines: dict[str, object]) -> Path:
    path.write_text("// a comment line still counts\n" + "".join(json.dumps(line) + "\n" for line in lines))
    return path


def _no_task_ran(tasks: Path) -> None:
    data = Path(os.environ["XDG_DATA_HOME"]) / "agentcli"
    assert not (tasks.with_name(tasks.stem + ".results.jsonl")).exists()
    assert not (data / "fleet" / "batches").exists() and not (data / "sessions").exists()


def test_a_batch_task_with_an_unknown_workflow_is_refused_naming_its_line(project: Path, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "tasks.jsonl", project,
                   {"id": "fine", "workspace": str(project), "prompt": "fix add", "model": "openai/x"},
                   {"id": "typo", "workspace": str(project), "prompt": "fix add", "model": "openai/x",
                    "workflow": "plan-bild"})
    proc = agentcli("batch", str(tasks), "--api-base", "http://127.0.0.1:9", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tasks}:3: task typo: unknown workflow 'plan-bild'" in proc.stderr
    assert "no task was started" in proc.stderr
    _no_task_ran(tasks)


_GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e"}
_VALID_WORKFLOW = _PHASE_MODEL_WORKFLOW.replace('model = "nosuchprovider/m"', 'tools = ["finish_phase"]')


def _branch(repo: Path) -> str:
    return subprocess.run(["git", "branch", "--show-current"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def _commit_workflows(repo: Path, files: dict[str, str], branch: str | None = None) -> None:
    """Commits ``files`` (name: TOML) under .agentcli/workflows, on a new ``branch`` when given."""
    def git(*argv: str) -> None:
        subprocess.run(["git", *argv], cwd=repo, env=_GIT_ENV, check=True, capture_output=True)

    if branch is not None:
        git("checkout", "-q", "-b", branch)
    folder = repo / ".agentcli" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    git("add", ".agentcli")
    git("commit", "-qm", "workflows")


def test_a_remote_repositorys_own_workflow_is_checked_after_its_clone(project: Path, tmp_path: Path) -> None:
    """A workflow only the remote defines is not refused up front; a missing or invalid one fails
    its task alone, after the clone and before any session, naming the task and the file."""
    _commit_workflows(project, {"review.toml": _VALID_WORKFLOW, "broken.toml": _PHASE_MODEL_WORKFLOW})
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(project), str(remote)], check=True)
    url, branch = remote.as_uri(), _branch(project)
    tasks = _tasks(tmp_path / "tasks.jsonl", project,
                   {"id": "broken", "repo": url, "prompt": "fix add", "workflow": "broken"},
                   {"id": "missing", "repo": url, "ref": branch, "prompt": "fix add", "workflow": "nosuch"})
    proc = agentcli("batch", str(tasks), "--model", "openai/x", "--api-base", "http://127.0.0.1:9", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # not 2: the batch ran, those tasks failed
    results = {line["id"]: line for line in map(json.loads, tasks.with_name("tasks.results.jsonl").read_text()
                                                 .splitlines())}
    broken, missing = results["broken"], results["missing"]  # each its own line: the batch went on
    assert broken["status"] == "error" and broken["session_id"] is None
    assert broken["error"].startswith("task broken: workflow 'broken', phase 'work': 'nosuchprovider/m' names no "
                                      "provider litellm knows")
    assert broken["error"].endswith(f"(in {url}@HEAD:.agentcli/workflows/broken.toml); its session was not started")
    assert missing["error"].startswith("task missing: unknown workflow 'nosuch'")
    assert f"{url}@{branch} has no .agentcli/workflows/nosuch.toml" in missing["error"]
    assert "error  broken: workflow 'broken', phase 'work'" in proc.stdout  # the id once, not twice
    # The remote's valid workflow passes the same check in a clone (the session would start).
    from agentcli.fleet.models import JobSpec
    from agentcli.fleet.preflight import job_problem
    from agentcli.fleet.tasks import BatchTask

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], check=True)
    task = BatchTask(id="review", prompt="fix add", repo=url, workflow="review")
    spec = JobSpec(prompt="fix add", model="openai/x", api_base="http://127.0.0.1:9", workflow="review")
    assert job_problem(task, spec, clone, keys=True) is None
    assert "its session was not started" in (job_problem(task, spec.model_copy(update={"workflow": "broken"}), clone)
                                             or "")


def test_a_local_repository_task_is_checked_at_its_ref_not_its_working_tree(project: Path, tmp_path: Path) -> None:
    """The clone is checked out at ``ref``: a workflow only there is fine, one only in the working
    tree (or broken at the ref) is refused up front naming REPO@REF:FILE."""
    from agentcli.fleet.preflight import task_problem
    from agentcli.fleet.tasks import BatchTask

    default = _branch(project)
    _commit_workflows(project, {"at-ref.toml": _VALID_WORKFLOW, "fixed-later.toml": _PHASE_MODEL_WORKFLOW},
                      branch="release")
    subprocess.run(["git", "checkout", "-q", default], cwd=project, env=_GIT_ENV, check=True)
    workflows = project / ".agentcli" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "tree-only.toml").write_text(_VALID_WORKFLOW)  # uncommitted: no clone has it
    (workflows / "fixed-later.toml").write_text(_VALID_WORKFLOW)  # mended here, still broken at the ref

    def problem(workflow: str, ref: str | None = "release") -> str | None:
        task = BatchTask(id="t", prompt="p", repo=str(project), ref=ref, model="openai/x", workflow=workflow)
        return task_problem(task, tmp_path, {}, {})

    assert problem("at-ref") is None
    assert problem("tree-only") is not None and "unknown workflow 'tree-only'" in (problem("tree-only") or "")
    assert f"{project}@release:.agentcli/workflows/fixed-later.toml" in (problem("fixed-later") or "")
    # Without a ref the clone has the repository's HEAD commit, which lacks both.
    assert "unknown workflow 'at-ref'" in (problem("at-ref", ref=None) or "")
    assert project.joinpath("calc.py").read_text().endswith("NotImplementedError\n")  # the checkout is untouched

    tasks = _tasks(tmp_path / "tasks.jsonl", project,
                   {"id": "local", "repo": str(project), "ref": "release", "prompt": "fix", "workflow": "tree-only"})
    proc = agentcli("batch", str(tasks), "--model", "openai/x", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tasks}:2: task local: unknown workflow 'tree-only'" in proc.stderr
    _no_task_ran(tasks)


def test_a_batch_tasks_unknown_model_is_refused_and_a_finished_task_is_not_checked(project: Path,
                                                                                   tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "tasks.jsonl", project,
                   {"id": "t1", "workspace": str(project), "prompt": "fix add", "model": "nosuchprovider/a"},
                   {"id": "t2", "workspace": str(project), "prompt": "fix add"})
    proc = agentcli("batch", str(tasks), "--model", "openai/x", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tasks}:2: task t1: 'nosuchprovider/a' names no provider litellm knows" in proc.stderr
    _no_task_ran(tasks)
    # A resumed batch skips t1 (its line is in the results): the refusal names the next task at fault.
    tasks.with_name("tasks.results.jsonl").write_text(json.dumps({"id": "t1", "status": "failed"}) + "\n")
    resumed = agentcli("batch", str(tasks), "--model", "nosuchprovider/b", cwd=tmp_path)
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    assert "task t1" not in resumed.stderr
    assert f"{tasks}:3: task t2: 'nosuchprovider/b' names no provider litellm knows" in resumed.stderr


def test_a_listed_provider_is_known_without_importing_litellm() -> None:
    """The check `race` makes for a well-formed model costs no litellm import (seconds of CPU)."""
    code = ("import sys\n"
            "from agentcli.llm.check import unknown_model\n"
            "assert unknown_model('anthropic/claude-sonnet-4-5', None) is None\n"
            "assert unknown_model('served-model', 'http://127.0.0.1:9') is None\n"
            "assert 'litellm' not in sys.modules, 'litellm was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AGENTCLI_NO_WARMUP": "1"})
    assert done.returncode == 0, done.stderr


SIGNING_IN = {"chatgpt", "github_copilot"}
"""Providers whose get_llm_provider starts an OAuth device login (network, minutes of polling):
the listed check spares the user that before a race, and this test spares the network."""


def test_every_listed_provider_is_one_litellm_knows() -> None:
    """The list read from litellm's files says "known" only where litellm itself knows the provider
    (it may still refuse a model name's shape, as ragflow's, which a call reports like a bad name)."""
    from agentcli.llm.check import listed_providers
    from agentcli.llm.warmup import import_litellm

    litellm = import_litellm()
    listed = listed_providers()
    assert {"openai", "anthropic", "ollama_chat", "openrouter", "chatgpt"} <= listed

    def unknown(model: str) -> bool:
        try:
            litellm.get_llm_provider(model)
        except Exception as error:  # noqa: BLE001 - litellm's refusals are of several classes
            return "LLM Provider NOT provided" in str(error)
        return False

    assert unknown("nosuchprovider/some-model")  # what litellm says of a provider it does not know
    assert [provider for provider in sorted(listed - SIGNING_IN) if unknown(f"{provider}/some-model")] == []
