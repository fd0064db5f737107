"""Reading tasks files and choosing how many sessions run at once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentcli.fleet.race import default_jobs, plan_attempts
from agentcli.fleet.tasks import TaskFileError, read_tasks


def _write(path: Path, *lines: object) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_own_lines_resolve_workspaces_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    tasks = read_tasks(_write(tmp_path / "t.jsonl",
                              {"workspace": "proj", "prompt": "a"},
                              "",
                              {"id": "b", "repo": "https://example.org/x.git", "ref": "v1", "prompt": "b",
                               "checks": ["make test"], "model": "openai/m", "workflow": "plan-build"}))
    assert tasks[0].id == "line-1" and tasks[0].workspace == str((tmp_path / "proj").resolve())
    assert tasks[1].repo == "https://example.org/x.git" and tasks[1].ref == "v1" and tasks[1].checks == ["make test"]


def test_swe_bench_instances_become_clone_tasks_with_test_checks(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    (repos / "psf__requests").mkdir(parents=True)
    instance = {"instance_id": "psf__requests-1", "repo": "psf/requests", "base_commit": "abc123",
                "problem_statement": "it breaks", "FAIL_TO_PASS": json.dumps(["tests/t.py::test_a b"]),
                "PASS_TO_PASS": ["tests/t.py::test_c"], "test_patch": "diff --git …", "hints_text": "", "version": "2"}
    other = {**instance, "instance_id": "django__django-2", "repo": "django/django", "PASS_TO_PASS": "[]"}
    first, second = read_tasks(_write(tmp_path / "swe.jsonl", instance, other), repos=repos)
    assert first.repo == str((repos / "psf__requests").resolve()) and first.ref == "abc123"
    assert first.prompt == "it breaks" and first.test_patch == "diff --git …"
    assert first.checks == ["python -m pytest -q -p no:cacheprovider 'tests/t.py::test_a b'",
                            "python -m pytest -q -p no:cacheprovider tests/t.py::test_c"]
    assert second.repo == "https://github.com/django/django.git" and len(second.checks or []) == 1


@pytest.mark.parametrize(("lines", "message"), [
    (["not json"], "t.jsonl:1: not JSON"),
    ([[1, 2]], "t.jsonl:1: a task is a JSON object, not list"),
    ([{"workspace": "."}], "t.jsonl:1: prompt: Field required"),
    ([{"prompt": "x", "workspace": ".", "wat": 1}], "t.jsonl:1: wat: not a task field (fields: id, prompt,"),
    ([{"promt": "x", "workspace": "."}],
     "t.jsonl:1: prompt: Field required; promt: not a task field (did you mean 'prompt'?)"),
    ([{"prompt": "x", "workspace": "nope"}], "is not a folder"),
    ([{"prompt": "x", "workspace": ".", "repo": "u://x"}], "not both"),
    ([{"id": "a", "prompt": "x", "workspace": "."}, {"id": "a", "prompt": "y", "workspace": "."}],
     "t.jsonl:2: a second task with id 'a'"),
    ([{"instance_id": "i", "repo": "o/n", "base_commit": "c", "problem_statement": "p", "FAIL_TO_PASS": "{"}],
     "FAIL_TO_PASS is neither a list nor JSON text"),
    ([], "has no tasks"),
])
def test_bad_lines_are_named(tmp_path: Path, lines: list[object], message: str) -> None:
    with pytest.raises(TaskFileError, match=re.escape(message)):
        read_tasks(_write(tmp_path / "t.jsonl", *lines))


def test_plans_cycle_models_and_workflows() -> None:
    plans = plan_attempts(3, ["a", "b"], ["single"])
    assert [(p.model, p.workflow) for p in plans] == [("a", "single"), ("b", "single"), ("a", "single")]
    assert len(plan_attempts(None, ["a", "b"], [])) == 2
    with pytest.raises(ValueError, match="at least 1"):
        plan_attempts(0, [], [])
    # A model named but never run is refused, not dropped.
    with pytest.raises(ValueError, match=re.escape("-n 2 is fewer than the 3 --models given (a, b, c): c would not")):
        plan_attempts(2, ["a", "b", "c"], [])
    with pytest.raises(ValueError, match=re.escape("-n 1 is fewer than the 2 --workflow given")):
        plan_attempts(1, [], ["single", "plan-build"])


def test_default_jobs_respects_cores_and_provider_limits() -> None:
    assert default_jobs(10, ["anthropic/x"], {}, cpus=2) == 4
    assert default_jobs(3, ["anthropic/x"], {}, cpus=8) == 3
    assert default_jobs(5, ["openai/a", "ollama/qwen"], {"ollama": 1}, cpus=8) == 1
