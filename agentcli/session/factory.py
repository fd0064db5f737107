"""Building a ready Session from settings: the one place front ends get sessions from.

Front ends call these instead of constructing model clients, tools or logs themselves, so they
never reach past the session layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentcli import demo
from agentcli.config import Settings, data_home
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.replay import RecordingError, ReplayModel
from agentcli.llm.types import ModelClient
from agentcli.llm.warmup import start_background_import
from agentcli.session.lock import SessionInUse, SessionLock
from agentcli.session.log import SessionEntry, SessionLog, read_events
from agentcli.session.resume import rebuild
from agentcli.session.session import Session, new_session_id
from agentcli.tools.registry import default_registry
from agentcli.tools.workflow_tools import WORKFLOW_TOOL_NAMES
from agentcli.workflow import (
    InvalidWorkflowError,
    UnknownWorkflowError,
    Workflow,
    WorkflowCatalog,
    find_workflow,
    load_workflows,
)

if TYPE_CHECKING:
    from agentcli.permissions import Mode
    from agentcli.snapshots import GcResult, SnapshotStore

REPLAY_PREFIX = "replay:"


class SessionSetupError(Exception):
    """The session cannot be set up as asked (bad recording, unknown workflow...)."""


def warm_up(settings: Settings) -> None:
    """Start importing litellm in the background unless the model is a replay."""
    if not settings.model.startswith(REPLAY_PREFIX):
        start_background_import()


def check_models(settings: Settings, workspace: Path | None = None) -> None:
    """Refuse model strings no provider matches, before a session is created for them: the
    roles', and with ``workspace`` those the workflow's phases name.

    Blocks while litellm is imported: the command line calls it, never the TUI's event loop.

    Raises:
        SessionSetupError: naming the model and how to write it (and the phase that names it),
            or the workflow's own problem.
    """
    from agentcli.llm.check import unknown_model

    if settings.model.startswith(REPLAY_PREFIX):
        return  # a recording plays whatever the roles and phases name
    where = {settings.model_for(role): "" for role in ("plan", "build", "explore", "default")}
    if workspace is not None:
        workflow = workflow_for(settings.workflow, workspace)
        for phase in workflow.phases:
            where.setdefault(settings.model_for(phase.model),
                             f"workflow '{workflow.name}', phase '{phase.name}': ")
    for model in sorted(where):
        if model.startswith(REPLAY_PREFIX):
            continue
        problem = unknown_model(model, settings.api_base)
        if problem is not None:
            raise SessionSetupError(where[model] + problem)


def model_client_for(settings: Settings, *, replay_delay_s: float | None = None) -> ModelClient:
    """``replay:PATH`` plays a recording; anything else is a litellm model string."""
    if settings.model.startswith(REPLAY_PREFIX):
        path = Path(settings.model[len(REPLAY_PREFIX) :]).expanduser()
        try:
            return ReplayModel.from_file(path, chunk_delay_s=replay_delay_s)
        except RecordingError as error:
            raise SessionSetupError(str(error)) from None
    return LiteLLMClient(settings.retry)


KNOWN_TOOLS = frozenset({*default_registry().names, *WORKFLOW_TOOL_NAMES})


def workflow_for(name: str, workspace: Path) -> Workflow:
    """A built-in workflow or one from a workflow file; an invalid file names file, field, problem."""
    try:
        return find_workflow(name, workspace, known_tools=KNOWN_TOOLS)
    except UnknownWorkflowError as error:
        raise SessionSetupError(str(error)) from None
    except InvalidWorkflowError as error:
        raise SessionSetupError(str(error)) from None


def workflow_catalog(workspace: Path) -> WorkflowCatalog:
    """Every workflow that applies in ``workspace``, with the errors of invalid files."""
    return load_workflows(workspace, known_tools=KNOWN_TOOLS)


def snapshot_store(workspace: Path, settings: Settings, data_dir: Path | None = None) -> SnapshotStore | None:
    """The workspace's snapshot store, or None when snapshots are off (imports pygit2)."""
    if not settings.snapshots.enabled:
        return None
    from agentcli.snapshots import SnapshotError, SnapshotStore

    limits = settings.snapshots
    try:
        return SnapshotStore(
            workspace,
            data_dir or data_home(),
            max_file_bytes=limits.max_file_bytes,
            max_untracked_dir_files=limits.max_untracked_dir_files,
            budget_bytes=limits.budget_bytes,
            watch=limits.watch,
        )
    except SnapshotError as error:
        raise SessionSetupError(f"cannot open the snapshot store: {error}") from None


def unsafe_workspace(workspace: Path) -> str | None:
    """Why ``workspace`` is too broad to snapshot without confirmation (home, a filesystem root)."""
    from agentcli.snapshots import is_unsafe_workspace

    return is_unsafe_workspace(workspace)


def check_sandbox(settings: Settings) -> None:
    """With ``sandbox = true``, make sure bubblewrap can run here, or say how to get it."""
    if not settings.sandbox:
        return
    from agentcli.tools.sandbox import SandboxUnavailable, require_sandbox

    try:
        require_sandbox()
    except SandboxUnavailable as error:
        raise SessionSetupError(str(error)) from None


def _session(**kwargs: object) -> Session:
    from agentcli.permissions import RuleError

    try:
        return Session(**kwargs)  # type: ignore[arg-type]
    except RuleError as error:
        raise SessionSetupError(str(error)) from None


def new_session(
    workspace: Path,
    settings: Settings,
    *,
    data_dir: Path | None = None,
    model_client: ModelClient | None = None,
    record: bool = True,
    default_permission_mode: Mode = "edits",
) -> Session:
    """A new session in ``workspace``, logged under the data directory when ``record``.

    ``default_permission_mode`` applies when the settings name no mode: headless runs use
    ``edits``, the TUI ``ask``.
    """
    check_sandbox(settings)
    workflow = workflow_for(settings.workflow, workspace)
    session_id = new_session_id()
    session = _session(
        workspace=workspace,
        settings=settings,
        workflow=workflow,
        model_client=model_client or model_client_for(settings),
        session_id=session_id,
        snapshots=snapshot_store(workspace, settings, data_dir),
        default_permission_mode=default_permission_mode,
    )
    session.use_mcp()
    if record:
        try:
            log = SessionLog.create(
                data_dir or data_home(),
                session_id,
                session.workspace,
                model=settings.model,
                api_base=settings.api_base,
                workflow=workflow.name,
            )
        except OSError as error:
            session.close()
            raise SessionSetupError(_unwritable(error)) from None
        session.subscribe(log)
        session.log = log
    return session


def _unwritable(error: OSError) -> str:
    where = error.filename or "the data folder"
    return (f"cannot write the session log at {where}: {error.strerror or error}; "
            "make the folder writable or point XDG_DATA_HOME elsewhere")


def resume_settings_overrides(entry: SessionEntry, flags: dict[str, object]) -> dict[str, object]:
    """A resumed session keeps its own models, api base, workflow and sandbox unless a flag says
    otherwise: a session started in the sandbox never runs a command outside it by a plain resume,
    and a demo plays on without asking, as it did."""
    own: dict[str, object] = {"model": entry.meta.model or None, "api_base": entry.meta.api_base,
                              "workflow": entry.meta.workflow}
    if entry.meta.sandbox:
        own["sandbox"] = True
    if entry.meta.permission_mode == "ask":  # a session that asked goes on asking; `all` is given anew
        own["permissions"] = {"mode": "ask"}
    elif demo.is_demo(entry.meta.model):  # except by the demo itself, which never asked
        own["permissions"] = {"mode": demo.PERMISSION_MODE}
    if entry.meta.models:
        own["models"] = dict(entry.meta.models)
    return {**own, **{key: value for key, value in flags.items() if value is not None}}


def resume_session(
    entry: SessionEntry,
    settings: Settings,
    *,
    model_client: ModelClient | None = None,
    replay_delay_s: float | None = None,
    data_dir: Path | None = None,
    default_permission_mode: Mode = "edits",
    record: bool = True,
) -> Session:
    """Rebuild a session from its log and reopen the log for appending. No tool or model runs.

    With ``record`` the session's lock is taken first, so the log read is the whole of it and no
    other process appends while this one does (another holding it: ``SessionSetupError`` naming
    its pid). Without, nothing is written: for commands that only look (``diff``, ``snapshots``).
    """
    if record:  # a look at the log and the snapshots (diff, snapshots) runs no command
        check_sandbox(settings)
    lock = _lock(entry) if record else None
    try:
        session = _rebuilt_session(entry, settings, model_client, replay_delay_s, data_dir, default_permission_mode)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    if lock is not None:
        try:
            log = SessionLog.reopen(entry.directory, lock=lock)
        except BaseException as error:
            lock.release()
            session.close()
            if isinstance(error, OSError):
                raise SessionSetupError(_unwritable(error)) from None
            raise
        session.subscribe(log)
        session.log = log
    return session


def _lock(entry: SessionEntry) -> SessionLock:
    try:
        return SessionLock.acquire(entry.directory)
    except SessionInUse as error:
        raise SessionSetupError(str(error)) from error
    except FileNotFoundError:
        raise SessionSetupError(f"session {entry.meta.id} was removed") from None
    except OSError as error:
        raise SessionSetupError(_unwritable(error)) from None


def _rebuilt_session(entry: SessionEntry, settings: Settings, model_client: ModelClient | None,
                     replay_delay_s: float | None, data_dir: Path | None, default_permission_mode: Mode) -> Session:
    rebuilt = rebuild(read_events(entry.directory))
    client = model_client or model_client_for(settings, replay_delay_s=replay_delay_s)
    if isinstance(client, ReplayModel):
        client.position = rebuilt.model_calls  # the turns already played are in the history
    workspace = Path(entry.meta.workspace)
    session = _session(
        workspace=workspace,
        settings=settings,
        workflow=workflow_for(settings.workflow, workspace),
        model_client=client,
        session_id=entry.meta.id,
        snapshots=snapshot_store(workspace, settings, data_dir),
        default_permission_mode=default_permission_mode,
    )
    session.load(rebuilt)
    session.use_mcp()
    return session


def collect_garbage(workspace: Path, settings: Settings, data_dir: Path | None = None) -> GcResult:
    """Repack the workspace's snapshot store and enforce its size budget."""
    store = snapshot_store(workspace, settings, data_dir)
    if store is None:
        raise SessionSetupError("snapshots are off ([snapshots] enabled = false)")
    return store.gc()
