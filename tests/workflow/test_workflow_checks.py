"""Auto-detection of check commands on small temporary projects."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentcli.tools.checks import DetectedCheck, detect_checks


@pytest.fixture
def no_pytest_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection must not depend on what the machine running the tests has installed."""
    monkeypatch.setattr(shutil, "which", lambda name: None)


def commands(workspace: Path) -> list[str]:
    return [check.command for check in detect_checks(workspace)]


def test_an_empty_project_has_no_checks(workspace: Path) -> None:
    assert detect_checks(workspace) == []


def test_pytest_where_tests_exist_and_pytest_is_configured(workspace: Path, no_pytest_on_path: None) -> None:
    (workspace / "tests").mkdir()
    assert commands(workspace) == []  # tests, but no pytest anywhere: nothing that could run them
    (workspace / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = '-q'\n")
    assert detect_checks(workspace) == [
        DetectedCheck("pytest -q", "tests (a tests/ folder) and pytest configured (pyproject.toml [tool.pytest]); "
                                   "pytest is not on PATH"),
    ]


def test_pytest_on_path_with_test_files_in_a_subfolder(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/pytest" if name == "pytest" else None)
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "test_core.py").write_text("def test_x(): pass\n")
    [check] = detect_checks(workspace)
    assert check.command == "pytest -q" and "pkg/test_core.py" in check.reason


def test_test_files_in_dependencies_do_not_count(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/pytest")
    for folder in ("node_modules/lib", ".venv/lib", "build"):
        (workspace / folder).mkdir(parents=True)
        (workspace / folder / "test_vendor.py").write_text("")
    assert commands(workspace) == []


def test_the_workspace_virtualenv_is_preferred(workspace: Path, no_pytest_on_path: None) -> None:
    (workspace / "tests").mkdir()
    (workspace / ".venv" / "lib" / "python3.11" / "site-packages" / "pytest").mkdir(parents=True)
    (workspace / ".venv" / "bin").mkdir()
    (workspace / ".venv" / "bin" / "ruff").write_text("")
    (workspace / "ruff.toml").write_text("line-length = 100\n")
    assert commands(workspace) == [".venv/bin/ruff check .", ".venv/bin/python -m pytest -q"]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("ruff.toml", "", "ruff.toml"),
        (".ruff.toml", "", ".ruff.toml"),
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", "pyproject.toml [tool.ruff]"),
    ],
)
def test_ruff_where_it_is_configured(workspace: Path, name: str, text: str, where: str) -> None:
    (workspace / name).write_text(text)
    assert detect_checks(workspace) == [DetectedCheck("ruff check .", f"ruff is configured ({where})")]


def test_a_broken_pyproject_is_not_fatal(workspace: Path) -> None:
    (workspace / "pyproject.toml").write_text("[tool.ruff\n")
    assert detect_checks(workspace) == []


def test_npm_test_only_with_a_real_test_script(workspace: Path) -> None:
    package = workspace / "package.json"
    package.write_text(json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}))
    assert commands(workspace) == []
    package.write_text(json.dumps({"scripts": {"build": "tsc"}}))
    assert commands(workspace) == []
    package.write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    assert detect_checks(workspace) == [DetectedCheck("npm test", "package.json has a test script (vitest run)")]
    package.write_text("{not json")
    assert commands(workspace) == []


def test_cargo_and_go(workspace: Path) -> None:
    (workspace / "Cargo.toml").write_text("[package]\nname = 'x'\n")
    (workspace / "go.mod").write_text("module example.com/x\n")
    assert commands(workspace) == ["cargo test", "go test ./..."]


def test_make_prefers_check_over_test_and_ignores_variables(workspace: Path) -> None:
    makefile = workspace / "Makefile"
    makefile.write_text("test := unit\nbuild:\n\tcc x.c\n")
    assert commands(workspace) == []
    makefile.write_text("test:\n\tpytest\ncheck: test lint\n")
    assert detect_checks(workspace) == [DetectedCheck("make check", "Makefile has a 'check' target")]
    makefile.write_text("test :\n\tpytest\n")
    assert commands(workspace) == ["make test"]


def test_rules_combine_lint_first(workspace: Path, no_pytest_on_path: None) -> None:
    (workspace / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    (workspace / "tests").mkdir()
    (workspace / "Makefile").write_text("test:\n\tpytest\n")
    assert commands(workspace) == ["ruff check .", "pytest -q", "make test"]
