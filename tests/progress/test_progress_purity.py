"""`progress/` is a pure leaf: stdlib, pydantic and the shared config types only, no IO."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentcli.progress

PACKAGE_DIR = Path(agentcli.progress.__file__).parent

# Modules a pure rules engine has no business importing: they reach files, processes,
# the network or the terminal.
IO_MODULES = {"os", "pathlib", "io", "shutil", "subprocess", "socket", "tempfile", "asyncio", "logging"}
IO_CALLS = {"open", "print", "input"}


def test_importing_progress_loads_no_other_agentcli_package_and_no_ui_or_io_library() -> None:
    code = (
        "import sys, agentcli.progress; "
        "print('\\n'.join(sorted(m for m in sys.modules)))"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE_DIR.parents[1]
        ).stdout.split()
    )

    ours = {m for m in loaded if m.startswith("agentcli")}
    # agentcli.config holds the shared settings types (the `[progress]` table among them).
    assert ours <= {
        "agentcli", "agentcli.config", "agentcli.config_sources", "agentcli.config_mcp", "agentcli.progress"
    } | {
        f"agentcli.progress.{p.stem}" for p in PACKAGE_DIR.glob("*.py")
    }
    for heavy in ("textual", "rich", "litellm", "pygit2", "statemachine"):
        assert heavy not in loaded, f"importing agentcli.progress loaded {heavy}"


def test_the_source_imports_only_the_stdlib_pydantic_and_itself_and_does_no_io() -> None:
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                roots = [node.module or ""]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in IO_CALLS, f"{path.name}:{node.lineno} calls {node.func.id}()"
                continue
            else:
                continue
            for name in roots:
                top = name.split(".")[0]
                assert top not in IO_MODULES, f"{path.name}:{node.lineno} imports {name}"
                assert (
                    top in sys.stdlib_module_names
                    or top == "pydantic"
                    or name.startswith("agentcli.progress")
                    or name == "agentcli.config"
                ), f"{path.name}:{node.lineno} imports {name}, outside the stdlib and pydantic"
