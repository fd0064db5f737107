"""A race or batch whose model or workflow no session could start with is refused before anything
starts: exit 2 naming the model or workflow (and the task's line), no race recorded, no task run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_a_batch_workflow_flag_is_checked_for_repository_tasks_too(project: Path, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "tasks.jsonl", project,
                   {"id": "remote", "repo": "https://example.invalid/calc.git", "prompt": "fix add"})
    proc = agentcli("batch", str(tasks), "--model", "openai/x", "--workflow", "nosuch", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{tasks}:2: task remote: unknown workflow 'nosuch'" in proc.stderr
    assert "read only from a local clone" in proc.stderr
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
    tasks.with_name("tasks.results.jsonl").write_text(json.dumps({"id": "t1", "status": "error"}) + "\n")
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
