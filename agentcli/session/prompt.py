"""The system prompt, rebuilt for every model request."""

from __future__ import annotations

import os
import platform
from datetime import UTC, date, datetime
from pathlib import Path

from agentcli.workflow.model import Phase, render_instructions

_RULES = """\
You are agentcli, a coding agent working in the user's workspace through tools.

How to work:
- Explore before you change: list, glob, grep and read the files that matter.
- Make changes with edit_file (small, exact replacements) or write_file (new or rewritten files).
- Verify your work by running it or its tests with bash. Read errors and fix the cause.
- Paths are relative to the workspace; you cannot touch anything outside it.
- Every file change is snapshotted, so the user can undo any step.

How to stop — this is required:
- End every turn by calling exactly one of the control tools:
  - complete(summary): the task is done and verified; summarize what you did.
  - clarify(question, options?): you need a decision or information only the user has.
  - pause(reason): you are blocked or need the user to review before going on.
- Never stop by just writing text: a reply without a tool call is treated as a mistake.
"""

REMINDER = (
    "You stopped without calling a tool. Every turn must end with exactly one of complete, "
    "clarify or pause. If the task is done, call complete with a summary; if you need the user, "
    "call clarify; if you are blocked, call pause. Otherwise continue with the next tool call."
)

TRUNCATED_REMINDER = (
    "Your reply was cut off by the output length limit. Continue with smaller steps, and end "
    "with complete, clarify or pause."
)


def workspace_summary(workspace: Path, limit: int = 40) -> str:
    """The top level of the workspace, folders first: enough for a phase's ``{workspace_summary}``."""
    try:
        entries = sorted(os.scandir(workspace), key=lambda e: (not e.is_dir(), e.name))
    except OSError:
        return ""
    names = [e.name + ("/" if e.is_dir() else "") for e in entries if e.name not in (".git", "__pycache__")]
    shown = ", ".join(names[:limit]) + (f", … ({len(names) - limit} more)" if len(names) > limit else "")
    git = "a git repository" if (workspace / ".git").exists() else "not a git repository"
    return f"{workspace.name}/ ({git}): {shown or 'empty'}"


def system_prompt(
    *, workspace: Path, phase: Phase, tool_names: list[str], plan_text: str = "", summary: str = "",
    today: date | None = None, project: str = "",
) -> str:
    """The instructions for one request: the rules, the environment, the project's instructions
    (``project``: AGENTS.md and the like, see :mod:`agentcli.session.instructions`) and the
    active phase."""
    today = today or date.today()
    sections = [
        _RULES,
        (
            "Environment:\n"
            f"- Workspace: {workspace}\n"
            f"- Platform: {platform.system()} {platform.release()}\n"
            f"- Date: {today.isoformat()}\n"
            f"- Tools available now: {', '.join(tool_names)}"
        ),
    ]
    if project:
        sections.append(project)
    if phase.instructions:
        text = render_instructions(
            phase, date=today, workspace=workspace, workspace_summary=summary, plan_text=plan_text
        )
        sections.append(f"Current phase: {phase.name}\n{text}")
    return "\n\n".join(sections)


def answer_message(question: str, answer: str) -> str:
    """How an answer to a clarify question reads to the model."""
    return f"Answer to your question ({question}): {answer}"


def resumed_note(last_event_at: datetime | None, interrupted: str | None) -> str:
    """What a resumed session tells the model before its first turn: the world may have moved on."""
    ago = ""
    if last_event_at is not None:
        seconds = (datetime.now(UTC) - last_event_at).total_seconds()
        ago = f" {_duration(seconds)} after its last event"
    cut = f" It had been interrupted during {interrupted}." if interrupted else ""
    return (f"This session was resumed{ago}.{cut} Time has passed and files in the workspace may "
            "have changed since; re-read files before you edit them.")


_UNITS = (("second", 1, 90), ("minute", 60, 5400), ("hour", 3600, 129600), ("day", 86400, float("inf")))
"""(unit, its seconds, the bound below which it is used): 90 seconds reads as 2 minutes."""


def _duration(seconds: float) -> str:
    unit, size = next((unit, size) for unit, size, below in _UNITS if seconds < below)
    count = round(seconds / size)
    return f"{count} {unit}{'' if count == 1 else 's'}"
