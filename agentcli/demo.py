"""The demo's facts, in one place: what `agentcli demo` plays, and how its sessions run when resumed.

The demo plays a recording (no key, offline) in a throwaway copy of a sample project, so nothing
in it asks for approval. A demo session resumed later (`agentcli resume ID`, after quitting the
demo's TUI) plays on as the demo did: the same recording, and still nothing to approve. Any other
session that ran in mode `all` must be given it anew on resume; the demo is told apart by the
recording its log names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

BUNDLED: Final = Path(__file__).parent / "data" / "demo"
"""The sample project, the recording and the task."""

MODEL: Final = f"replay:{BUNDLED / 'recording.json'}"
"""The model string of every demo session: the bundled recording."""

PERMISSION_MODE: Final = "all"
"""The demo's folder is a throwaway copy: every call runs, as recorded."""


def is_demo(model: str | None) -> bool:
    """Whether a session's model (from its log) is the demo's recording."""
    return model == MODEL


def task() -> str:
    """What the demo asks the agent to do."""
    return (BUNDLED / "task.txt").read_text(encoding="utf-8").strip()
