"""Which tool calls run, which wait for the user's approval, and which are refused.

A pure policy: it reads the call's arguments, the mode, the rules and the session's answers,
and returns a :class:`Decision`; the session acts on it (runs the tool, enters
``awaitingPermission``, or answers the model with an error). Imports only the standard library,
pydantic, :mod:`agentcli.config` and :mod:`agentcli.tools.paths` (so that "inside the workspace"
and "secret file" mean the same here as in the tools).

Typical use, once per tool call::

    policy = Policy(settings.permissions, workspace, state=state, default_mode="edits")
    decision = policy.decide("bash", {"command": "pytest -q"})
    if decision.needs_approval:
        ...  # ask; then state.remember(decision, "session") on "always for this session"
"""

from agentcli.permissions.bash import ParsedCommand, SimpleCommand, parse_command
from agentcli.permissions.persist import ConfigWriteError, add_rules_to_config
from agentcli.permissions.policy import Action, Decision, Mode, Policy, ToolKind
from agentcli.permissions.rules import Rule, RuleError, glob_escape, parse_rule
from agentcli.permissions.state import PermissionState, Scope

__all__ = [
    "Action",
    "ConfigWriteError",
    "Decision",
    "Mode",
    "ParsedCommand",
    "PermissionState",
    "Policy",
    "Rule",
    "RuleError",
    "Scope",
    "SimpleCommand",
    "ToolKind",
    "add_rules_to_config",
    "glob_escape",
    "parse_command",
    "parse_rule",
]
