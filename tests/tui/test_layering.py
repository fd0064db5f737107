"""The TUI talks to the Session only, and stays out of the way of start-up."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentcli.tui

TUI = Path(agentcli.tui.__file__).parent
FORBIDDEN = ("agentcli.llm", "agentcli.tools", "agentcli.snapshots", "litellm", "pygit2")


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_tui_sources_import_nothing_past_the_session() -> None:
    for path in TUI.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"


def test_the_package_entry_point_does_not_import_textual() -> None:
    loaded = _modules_after("import agentcli.tui\nfrom agentcli.tui import run_tui")
    assert "textual" not in loaded


def test_the_app_module_leaves_the_session_layer_for_after_the_first_frame() -> None:
    loaded = _modules_after("import agentcli.tui.app")
    for name in (*FORBIDDEN, "agentcli.session.factory", "statemachine"):
        assert not any(m == name or m.startswith(name + ".") for m in loaded), f"importing the app loaded {name}"


def test_the_tui_names_no_control_state() -> None:
    """Where the session is comes from ``session.view``: a state added to the chart (a baseline
    capture, a reminder, a progress review) needs no TUI change, so no TUI code names one."""
    from agentcli.session.chart import CONTROL_STATES

    for path in TUI.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in CONTROL_STATES}
        assert not named, f"{path.name} names control states {sorted(named)}"
