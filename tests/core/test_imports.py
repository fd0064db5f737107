"""Layering rules that keep start-up fast and the core free of the UI."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint('\\n'.join('MODULE ' + m for m in sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return {line.split()[1] for line in out.splitlines() if line.startswith("MODULE ")}


def test_help_imports_neither_litellm_nor_pygit2_nor_textual_nor_pydantic_nor_rich() -> None:
    loaded = _modules_after(
        "import sys\nfrom agentcli.cli import app\nsys.argv=['agentcli','--help']\n"
        "try:\n    app()\nexcept SystemExit:\n    pass"
    )
    for heavy in ("litellm", "pygit2", "textual", "pydantic", "rich"):
        assert heavy not in loaded, f"`agentcli --help` imported {heavy}"


@pytest.mark.parametrize(
    "package",
    ["agentcli.session", "agentcli.session.factory", "agentcli.tools", "agentcli.llm.litellm_client",
     "agentcli.workflow", "agentcli.events", "agentcli.config", "agentcli.headless"],
)
def test_core_never_imports_textual(package: str) -> None:
    assert "textual" not in _modules_after(f"import {package}")


def test_leaves_do_not_import_the_session_or_each_other() -> None:
    leaves = {
        "agentcli.tools": ("agentcli.session", "agentcli.llm", "agentcli.snapshots", "agentcli.progress"),
        "agentcli.llm.litellm_client": ("agentcli.session", "agentcli.tools", "agentcli.snapshots", "agentcli.progress"),
        "agentcli.llm.replay": ("agentcli.session", "agentcli.tools", "agentcli.snapshots", "agentcli.progress"),
    }
    for leaf, forbidden in leaves.items():
        loaded = _modules_after(f"import {leaf}")
        for name in forbidden:
            assert not any(m == name or m.startswith(name + ".") for m in loaded), f"{leaf} imports {name}"


def test_the_other_leaves_do_not_import_the_session_or_each_other() -> None:
    leaves = {
        "agentcli.snapshots": ("agentcli.session", "agentcli.tools", "agentcli.llm", "agentcli.progress"),
        "agentcli.progress": ("agentcli.session", "agentcli.tools", "agentcli.llm", "agentcli.snapshots"),
        "agentcli.ignore": ("agentcli.session", "agentcli.tools", "agentcli.llm", "agentcli.snapshots",
                            "agentcli.progress"),
        "agentcli.describe": ("agentcli.session", "agentcli.tools", "agentcli.llm", "agentcli.snapshots", "rich",
                              "textual"),
    }
    for leaf, forbidden in leaves.items():
        loaded = _modules_after(f"import {leaf}")
        for name in forbidden:
            assert not any(m == name or m.startswith(name + ".") for m in loaded), f"{leaf} imports {name}"


def test_front_ends_reach_the_agent_only_through_the_session() -> None:
    """The TUI and the command line import the session layer and shared types, never the model
    client, the tools, the snapshot store, the progress tracker or the permission policy (DESIGN:
    "they ask the Session")."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "agentcli"
    front_ends = [*root.joinpath("tui").rglob("*.py"), *root.joinpath("cli").rglob("*.py"),
                  root / "headless.py", root / "describe.py"]
    beyond = ("agentcli.llm", "agentcli.tools", "agentcli.snapshots", "agentcli.progress", "agentcli.permissions",
              "agentcli.ignore")
    for path in front_ends:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                assert not name.startswith(beyond), f"{path.relative_to(root)} imports {name}"
