"""The permission policy: may this tool call run, must the user approve it, or is it refused?

One call per tool call — ``Policy(settings.permissions, workspace, state=state).decide(name, args)``
— returns a :class:`Decision`. Everything is decided from the call's arguments, the mode, the
rules and the session's answers; nothing runs, nothing is written (``PermissionState.remember``
writes ``always`` answers).

The order, first match wins:

1. **Control tools** (complete, clarify, pause) always run.
2. A path outside the workspace (after symlinks), under ``/proc``, ``/sys``, ``/dev``, or a device
   file is **denied**: no approval can make a file tool leave the workspace.
3. A **deny rule** (config, or refused for the session) matching the call: **denied**.
4. Mode ``all``: **allowed**.
5. An **allow rule** (config, or approved for the session) matching the call: **allowed**.
6. By the tool's declared ``permission`` (``agentcli/tools/base.py``) and the mode:

   ======================  ==========================  ==========================
   call                    ``ask``                     ``edits``
   ======================  ==========================  ==========================
   read, list, search      run                         run
   read a secret file      **ask**                     **ask**
   usual write             run                         run
   protected write         **ask**                     **ask**
   unusual write           **ask**                     run
   commands, other tools   **ask**                     **ask**
   ======================  ==========================  ==========================

"The usual" write is ``write_file``/``edit_file`` on a path inside the workspace that a snapshot
can undo and that does not change what runs besides the code itself. **Protected** (asks in ``ask``
and ``edits``, runs in ``all``): agentcli's own configuration (``.agentcli.toml``, ``.agentcli/`` —
or the agent could grant itself permissions), version-control internals (``.git/``, ``.hg/``…:
hooks and config run code, and snapshots never cover them), likely secret files (``.env``, keys:
usually untracked, so not restorable, and full of credentials), and hard-linked files (writing one
changes its other names, which may be outside the workspace). **Unusual** (asks in ``ask`` only):
dotfiles and anything in a dot folder (``.github/workflows``, ``.vscode/tasks.json``, ``.envrc``,
``.npmrc``, ``.pre-commit-config.yaml``: CI, editor and tool configuration that runs code), and
CI files without a dot (``Jenkinsfile``, ``azure-pipelines.yml``…). ``.gitignore``,
``.dockerignore``, ``.editorconfig`` and ``.gitkeep`` stay usual. File tools never delete; deleting
happens through ``bash``, which asks.

Over 400 lines because the order above is one decision: split across modules, the first-match-wins
sequence could no longer be read top to bottom against this list.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel

from agentcli.config import PermissionSettings
from agentcli.permissions.bash import ParsedCommand, parse_command
from agentcli.permissions.rules import Rule, glob_escape, parse_rule, parse_rules
from agentcli.permissions.runs import what_runs
from agentcli.permissions.state import PermissionState
from agentcli.tools.base import Permission, Tool, ToolError
from agentcli.tools.paths import is_secret_path, relative, resolve_in_workspace

Action = Literal["allow", "deny", "ask"]
Mode = Literal["ask", "edits", "all"]
ToolKind = Permission
"""How a tool is judged: its declaration's ``permission`` (a tool that declares none asks)."""
_VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".jj", ".bzr"})
_AGENTCLI_FILES = frozenset({".agentcli.toml", ".agentcli"})
_HARMLESS_DOTFILES = frozenset({".gitignore", ".dockerignore", ".editorconfig", ".gitkeep", ".keep"})
_CI_FILES = frozenset({
    "jenkinsfile", "azure-pipelines.yml", "azure-pipelines.yaml", "bitbucket-pipelines.yml",
    "cloudbuild.yaml", "cloudbuild.yml", "appveyor.yml", "buildkite.yml", "codemagic.yaml",
})


@dataclass(frozen=True)
class Decision:
    """The verdict on one tool call."""

    action: Action
    """``allow``: run it; ``deny``: answer the model with an error; ``ask``: wait for the user."""
    reason: str
    """Why, in one sentence (shown with the prompt, and to the model when denied)."""
    summary: str
    """What the call would do, in words: ``Run `pytest -q` ``, ``Create docs/x.md (3 lines)``."""
    rules: tuple[str, ...] = ()
    """For ``ask``: the rules that approving "for the session" or "always" adds — escaped so they
    allow exactly this call (one per command of a compound command not yet allowed)."""
    matched: str | None = None
    """The configured or remembered rule that decided, if one did."""

    @property
    def rule(self) -> str:
        """The suggested rules as one line, for display (``PermissionRequested.rule``)."""
        return ", ".join(self.rules)

    @property
    def allowed(self) -> bool:
        return self.action == "allow"

    @property
    def denied(self) -> bool:
        return self.action == "deny"

    @property
    def needs_approval(self) -> bool:
        return self.action == "ask"

    def refusal(self, *, by_user: bool = False) -> str:
        """The error text the model reads when the call does not run."""
        if by_user:
            return (
                f"Permission denied by the user: {self.summary}. Do not retry the same call; "
                "change the approach, or ask the user (clarify) what they want instead."
            )
        return f"Permission denied: {self.reason}. Do not retry the same call; change the approach."


@dataclass
class Policy:
    """Decides tool calls for one session.

    Args:
        settings: The ``[permissions]`` settings (mode, allow, deny).
        workspace: The workspace folder (resolved here).
        state: The session's remembered answers (a new one for ``workspace`` if omitted).
        default_mode: The mode when ``settings.mode`` is unset: ``ask`` for the TUI, ``edits``
            for headless runs.
        tools: The declarations of the session's tools by name (default: the built-in tools);
            a call to a name not among them is judged as a command.

    Raises:
        RuleError: an allow or deny rule in the settings is malformed (the message names it).
    """

    settings: PermissionSettings
    workspace: Path
    state: PermissionState | None = None
    default_mode: Mode = "ask"
    tools: Mapping[str, type[Tool[Any]]] = field(default_factory=lambda: builtin_declarations())
    mode: Mode = field(init=False)
    """The active mode; front ends may change it while the session runs."""

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.realpath(self.workspace))
        if self.state is None:
            self.state = PermissionState(self.workspace)
        self.mode = self.settings.mode or self.default_mode
        self._allow = parse_rules(self.settings.allow, where="permissions.allow")
        self._deny = parse_rules(self.settings.deny, where="permissions.deny")

    # -- the one call ---------------------------------------------------------------------------

    def decide(self, tool: str, arguments: Mapping[str, Any] | BaseModel | None = None) -> Decision:
        """Judge one tool call.

        Args:
            tool: The tool's name as the model sent it.
            arguments: The parsed JSON arguments (a mapping or the tool's argument model).
                Arguments that do not fit the tool are allowed: the tool refuses them itself.

        Returns:
            The decision, with a reason, a summary and (for ``ask``) the suggested rules.
        """
        args = _as_mapping(arguments)
        declared = self.tools.get(tool, Tool)
        summary = _summary(tool, declared, args)
        if declared.permission == "control":
            return Decision("allow", "control tools always run", summary)
        if declared.target_kind == "command":
            return self._decide_command(tool, declared, args, summary)
        if declared.target_kind == "path":
            return self._decide_path_tool(tool, declared, args, summary)
        return self._decide_other(tool, declared.permission, summary)

    # -- bash -----------------------------------------------------------------------------------

    def _decide_command(self, tool: str, declared: type[Tool[Any]], args: Mapping[str, Any], summary: str) -> Decision:
        """A shell command line: judged by what runs, command by command (``bash:pytest *``)."""
        command = declared.target_of(args)
        if command is None:
            return _invalid(tool, summary)
        parsed = parse_command(command)
        denied = self._deny_command(tool, command, parsed, summary)
        if denied is not None:
            return denied
        if self.mode == "all":
            return Decision("allow", "mode `all`: everything runs", summary)
        allow = self._rules(self._allow, self.state_allow, tool)
        for rule in allow:
            if rule.pattern is None or rule.matches_whole(parsed):
                return Decision("allow", f"allowed by the rule `{rule.text}`", summary, matched=rule.text)
        if not parsed.commands and not parsed.opaque:
            return Decision("allow", "the command is empty or only comments: nothing runs", summary)
        uncovered = []
        used: dict[str, None] = {}
        for part in parsed.commands:
            covering = next((r for r in allow if r.matches_command(part)), None)
            if covering is None:
                uncovered.append(part.text)
            else:
                used[covering.text] = None
        if not uncovered and not parsed.opaque:
            matched = ", ".join(used)
            return Decision("allow", f"every command is allowed by a rule ({matched})", summary, matched=matched)
        return self._ask_command(tool, parsed, uncovered, summary)

    def _deny_command(self, tool: str, command: str, parsed: ParsedCommand, summary: str) -> Decision | None:
        """A deny rule matching anything the line runs (see :mod:`agentcli.permissions.runs`); or,
        while a pattern rule is set, a line where what runs cannot be told from the text."""
        rules = self._rules(self._deny, self.state_deny, tool)
        if not rules:
            return None
        runs = what_runs(command)
        candidates = [*parsed.deny_candidates(), *runs.commands]
        for rule in rules:
            if rule.pattern is None or any(rule.matches_text(text) for text in candidates):
                return Decision("deny", f"the command is denied by the rule `{rule.text}`", summary, matched=rule.text)
        if runs.unknown:
            listed = ", ".join(f"`{rule.text}`" for rule in rules)
            return Decision(
                "deny",
                f"{runs.unknown[0]}, so the deny rule{'s' if len(rules) > 1 else ''} {listed} cannot be "
                "checked against it; spell the command out literally",
                summary,
                matched=rules[0].text,
            )
        return None

    def _ask_command(self, tool: str, parsed: ParsedCommand, uncovered: list[str], summary: str) -> Decision:
        why = f"mode `{self.mode}`: commands need approval"
        if parsed.opaque:
            reasons = " and ".join(parsed.opaque)
            why += f"; it uses {reasons}, which a rule can allow only by naming the whole command"
            return Decision("ask", why, summary, (f"{tool}:{glob_escape(parsed.source)}",))
        if len(uncovered) < len(parsed.commands):
            why += "; not covered by a rule: " + ", ".join(f"`{text}`" for text in uncovered)
        if any(part.writes and part.text in uncovered for part in parsed.commands):
            why += "; a redirection into a file (`>`) is allowed only by a rule whose pattern has a `>`"
        rules = tuple(dict.fromkeys(f"{tool}:{glob_escape(text)}" for text in uncovered))
        return Decision("ask", why, summary, rules)

    # -- file and search tools ------------------------------------------------------------------

    def _decide_path_tool(
        self, tool: str, declared: type[Tool[Any]], args: Mapping[str, Any], summary: str
    ) -> Decision:
        kind = declared.permission
        raw = declared.target_of(args)
        if raw is None:
            return _invalid(tool, summary)
        try:
            path = resolve_in_workspace(self.workspace, raw)
        except ToolError as error:
            return Decision("deny", str(error), summary)
        rel = relative(self.workspace, path)
        lexical = _lexical(self.workspace, raw)
        for rule in self._rules(self._deny, self.state_deny, tool):
            if rule.matches_path(rel, casefold=True) or rule.matches_path(lexical, casefold=True):
                return Decision("deny", f"`{rel}` is denied by the rule `{rule.text}`", summary, matched=rule.text)
        if self.mode == "all":
            return Decision("allow", "mode `all`: everything runs", summary)
        for rule in self._rules(self._allow, self.state_allow, tool):
            if rule.matches_path(rel):
                return Decision("allow", f"allowed by the rule `{rule.text}`", summary, matched=rule.text)
        suggestion = (f"{tool}:{glob_escape(rel)}",)
        if kind == "read":
            file_glob = args.get("glob") if declared.shows_contents else None
            if isinstance(file_glob, str) and _targets_secrets(file_glob):
                return Decision(
                    "ask", f"the files searched ({file_glob!r}) look like secret files; searching them needs approval",
                    summary, (f"{tool}:{glob_escape(rel)}",),
                )
            if declared.shows_contents and (is_secret_path(rel) or is_secret_path(lexical)):
                shown = rel if rel == lexical else f"{lexical}` (→ `{rel}`)"
                return Decision(
                    "ask", f"`{shown}` looks like a secret file (keys, tokens, passwords); reading it needs approval",
                    summary, suggestion,
                )
            links = _hard_links(path) if declared.shows_contents else 0
            if links > 1:
                return Decision(
                    "ask", f"`{rel}` is hard-linked ({links} names); its content may be a file outside the "
                    "workspace, so reading it needs approval", summary, suggestion,
                )
            return Decision("allow", "reading inside the workspace runs freely", summary)
        if kind == "write":
            concern = _protected_write(path, rel, lexical)
            if concern:
                return Decision("ask", concern, summary, suggestion)
            if self.mode == "ask":
                unusual = _unusual_write(rel, lexical)
                if unusual:
                    return Decision("ask", f"mode `ask`: {unusual}", summary, suggestion)
            return Decision(
                "allow", "a write inside the workspace: the snapshot after it can undo it", summary
            )
        return self._decide_other(tool, kind, summary)

    # -- everything else ------------------------------------------------------------------------

    def _decide_other(self, tool: str, kind: ToolKind, summary: str) -> Decision:
        for rule in self._rules(self._deny, self.state_deny, tool):
            if rule.pattern is None:
                return Decision("deny", f"`{tool}` is denied by the rule `{rule.text}`", summary, matched=rule.text)
        if kind in {"internal", "read"}:
            return Decision("allow", f"`{tool}` changes nothing", summary)
        if self.mode == "all":
            return Decision("allow", "mode `all`: everything runs", summary)
        for rule in self._rules(self._allow, self.state_allow, tool):
            if rule.pattern is None:
                return Decision("allow", f"allowed by the rule `{rule.text}`", summary, matched=rule.text)
        does = "is an MCP tool its server does not mark read-only" if tool.startswith("mcp__") else "runs commands"
        return Decision("ask", f"mode `{self.mode}`: `{tool}` {does} and needs approval", summary, (tool,))

    # -- rules ----------------------------------------------------------------------------------

    @property
    def state_allow(self) -> list[str]:
        assert self.state is not None
        return self.state.allow

    @property
    def state_deny(self) -> list[str]:
        assert self.state is not None
        return self.state.deny

    @staticmethod
    def _rules(configured: tuple[Rule, ...], remembered: list[str], tool: str) -> list[Rule]:
        rules = [rule for rule in configured if rule.applies_to(tool)]
        rules += [rule for rule in map(parse_rule, remembered) if rule.applies_to(tool)]
        return rules


# -- helpers ---------------------------------------------------------------------------------------


def _as_mapping(arguments: Mapping[str, Any] | BaseModel | None) -> Mapping[str, Any]:
    if isinstance(arguments, BaseModel):
        return arguments.model_dump()
    if isinstance(arguments, Mapping):
        return arguments
    return {}  # None (or anything else an untyped caller passes)


def _invalid(tool: str, summary: str) -> Decision:
    # Nothing can run: the registry validates the arguments against the tool's schema first.
    return Decision("allow", f"the arguments do not fit `{tool}`; the tool will refuse them", summary)


def _lexical(workspace: Path, raw: str) -> str:
    """``raw`` made workspace-relative without following symlinks (what the model meant)."""
    joined = os.path.normpath(os.path.join(workspace, raw))
    try:
        return PurePosixPath(os.path.relpath(joined, workspace)).as_posix()
    except ValueError:
        return raw


def _parts(*rels: str) -> list[tuple[str, ...]]:
    return [tuple(part.lower() for part in PurePosixPath(rel).parts if part not in ("", ".")) for rel in rels]


_SECRET_EXAMPLES = (
    ".env", ".env.local", ".envrc", "id_rsa", "id_ed25519", "server.pem", "server.key", "credentials",
    "credentials.json", ".npmrc", ".pypirc", ".netrc", "secrets.yaml", "terraform.tfstate", "prod.tfvars",
)


def _targets_secrets(file_glob: str) -> bool:
    """Whether a grep ``glob`` singles out secret files (``.env*``, ``*.pem``); a catch-all such
    as ``*`` or ``*.*`` does not, or every unfiltered search would ask."""
    name = file_glob.rsplit("/", 1)[-1]
    if not any(char.isalnum() for char in name):
        return False
    return is_secret_path(name) or any(fnmatch.fnmatchcase(example, name) for example in _SECRET_EXAMPLES)


def _protected_write(path: Path, rel: str, lexical: str) -> str | None:
    """Why a write needs approval even in ``edits`` mode, or None."""
    for parts in _parts(rel, lexical):
        if any(part in _AGENTCLI_FILES for part in parts):
            return "it changes agentcli's own configuration (permissions, workflows); that needs approval"
        vcs = next((part for part in parts if part in _VCS_FOLDERS), None)
        if vcs:
            return (
                f"it writes inside {vcs}/, whose hooks and config run code, and which snapshots "
                "cannot undo; that needs approval"
            )
    if is_secret_path(rel) or is_secret_path(lexical):
        return (
            f"`{rel}` looks like a secret file; it is usually not in version control, so a snapshot "
            "may not restore it; writing it needs approval"
        )
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return (
            f"`{rel}` is hard-linked ({info.st_nlink} names); writing it changes the other names too, "
            "which may be outside the workspace; that needs approval"
        )
    return None


def _hard_links(path: Path) -> int:
    """How many names a regular file has (0 for anything else): a name beyond the one in the
    workspace may be outside it, and no path check can tell where."""
    try:
        info = os.stat(path)
    except OSError:
        return 0
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 0


def _unusual_write(rel: str, lexical: str) -> str | None:
    """Why a write is outside "the usual" in ``ask`` mode, or None."""
    for parts in _parts(rel, lexical):
        if not parts:
            continue
        if parts[-1] in _CI_FILES:
            return f"`{rel}` is a CI configuration, which runs with the repository's secrets; that needs approval"
        dotted = [part for part in parts if part.startswith(".")]
        if dotted and not (dotted == [parts[-1]] and parts[-1] in _HARMLESS_DOTFILES):
            return (
                f"`{rel}` is a dotfile or in a dot folder (tool, editor or CI configuration, which may "
                "run code); that needs approval"
            )
    return None


def _summary(tool: str, declared: type[Tool[Any]], args: Mapping[str, Any]) -> str:
    """What the call would do, in words, as its tool declares it."""
    if declared is Tool:
        return f"Call {tool}"
    return declared.summary(args)


def builtin_declarations() -> dict[str, type[Tool[Any]]]:
    """The declarations of the built-in tools (core and workflow tools), by name."""
    from agentcli.tools.registry import builtin_declarations as declarations

    return declarations()
