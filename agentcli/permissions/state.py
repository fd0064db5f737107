"""What the user approved or refused during a session, and making an approval permanent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from agentcli.config_sources import WORKSPACE_CONFIG
from agentcli.permissions.persist import add_rules_to_config
from agentcli.permissions.rules import parse_rules

Scope = Literal["once", "session", "always"]
"""How long an answer holds: this call only, the rest of the session, or from now on (written
to the workspace's ``.agentcli.toml``)."""


class _HasRules(Protocol):
    @property
    def rules(self) -> tuple[str, ...]: ...


@dataclass
class PermissionState:
    """Rules the user added while the session runs; the session holds one and passes it to its
    :class:`~agentcli.permissions.policy.Policy`.

    Args:
        workspace: Where ``always`` answers are written (``<workspace>/.agentcli.toml``).
    """

    workspace: Path | None = None
    allow: list[str] = field(default_factory=list)
    """Rules approved "for this session" (and "always", so they hold before a reload)."""
    deny: list[str] = field(default_factory=list)
    """Rules refused "for this session" (and "always")."""

    def remember(self, rules: _HasRules | str | Iterable[str], scope: Scope, *, allowed: bool = True) -> Path | None:
        """Record the user's answer to an ``ask`` decision.

        Args:
            rules: The :class:`~agentcli.permissions.policy.Decision` that asked (its suggested
                ``rules`` are used), one rule, or several.
            scope: ``once`` records nothing; ``session`` adds the rules to this state;
                ``always`` adds them here and to ``[permissions] allow`` (or ``deny``) of the
                workspace's ``.agentcli.toml``, keeping the rest of the file as it was.
            allowed: True for an approval, False for a refusal.

        Returns:
            The config file written for ``always``, else None.

        Raises:
            RuleError: a rule is malformed.
            ConfigWriteError: ``always`` could not update the config file (the session rules
                are still recorded).
            ValueError: ``always`` without a workspace.
        """
        texts = _texts(rules)
        parse_rules(texts, where="rule")
        if scope == "once":
            return None
        target = self.allow if allowed else self.deny
        for text in texts:
            if text not in target:
                target.append(text)
        if scope != "always":
            return None
        if self.workspace is None:
            raise ValueError("an `always` answer needs the workspace its .agentcli.toml belongs to")
        path = self.workspace / WORKSPACE_CONFIG
        add_rules_to_config(path, texts, key="allow" if allowed else "deny")
        return path


def _texts(rules: _HasRules | str | Iterable[str]) -> list[str]:
    if isinstance(rules, str):
        return [rules]
    suggested = getattr(rules, "rules", None)
    if suggested is not None:
        return list(suggested)
    return list(rules)  # type: ignore[arg-type]
