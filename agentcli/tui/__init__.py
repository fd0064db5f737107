"""The Textual front end.

Kept light on purpose: ``agentcli --help`` must not import Textual, so ``cli.py`` imports this
package only inside the command that opens the TUI, and the app module is loaded on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.session.session import Session
    from agentcli.tui.app import AgentApp

__all__ = ["AgentApp", "run_tui"]


def run_tui(
    *,
    workspace: Path,
    settings: Settings | None = None,
    overrides: Mapping[str, object] | None = None,
    session: Session | None = None,
    initial_prompt: str | None = None,
    theme: str | None = None,
) -> int:
    """Run the TUI until the user quits; returns the exit code.

    Args:
        workspace: The folder the agent works in.
        settings: Loaded settings; None loads them (with ``overrides``) after the first frame.
        overrides: Values from command-line flags, for settings the app loads.
        session: A session to open (e.g. resumed, or the demo's replay session); None starts a
            new one after the first frame.
        initial_prompt: A task to send as soon as the session is ready (the demo's task).
        theme: A theme name for this run (``--theme``), overriding ``settings.theme``.

    Returns:
        0 after a normal quit, 1 if the app crashed, 2 for a bad config or a workspace the
        user chose not to open.
    """
    import gc

    from agentcli.tui.app import AgentApp
    from agentcli.tui.css_cache import ParseCache

    # What is loaded by now lives as long as the app: keep it out of the collector's full
    # passes, which would otherwise scan it again (and one lands before the first frame).
    gc.freeze()
    app = AgentApp(workspace=workspace, settings=settings, overrides=overrides, session=session,
                   initial_prompt=initial_prompt, theme=theme, css_cache=ParseCache())
    result = app.run()
    # The app's collector policy unfroze everything as it closed (for apps inside a longer-lived
    # process); this one ends now, and the interpreter's last collections skip frozen objects.
    gc.freeze()
    if app.return_code not in (None, 0):
        return int(app.return_code)
    return int(result or 0)


def __getattr__(name: str) -> Any:
    if name == "AgentApp":
        from agentcli.tui.app import AgentApp

        return AgentApp
    raise AttributeError(name)
