"""Configuration: user file, then workspace file, then ``AGENTCLI_*`` variables, then flags.

Every layer is validated by the same pydantic model, so a mistake is reported with the file (or
variable) it came from and the field that is wrong. The sources themselves are read by
:mod:`agentcli.config_sources`, which needs no pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentcli.config_mcp import McpSettings
from agentcli.config_sources import (
    WORKSPACE_CONFIG,
    ConfigError,
    Layer,
    config_home,
    data_home,
    merge_layers,
    read_layers,
)

__all__ = ["WORKSPACE_CONFIG", "ConfigError", "Settings", "config_home", "data_home", "load_settings"]

DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelLimitSettings(_Section):
    """A model's limits, when litellm's model information lacks them or they should differ."""

    max_output_tokens: int | None = Field(None, ge=1)
    """Output tokens one call may produce (litellm's figure, capped at 32,000, when unset)."""
    context_window: int | None = Field(None, ge=1)
    """Input tokens the model takes (litellm's figure when unset; 32,768 for an unknown model)."""


ReasoningSetting = Literal["off", "low", "medium", "high"] | int
"""``off``, an effort (``low``, ``medium``, ``high``), or a thinking budget in tokens (1024 or more)."""


class ReasoningRoles(_Section):
    """How much each model role reasons before answering (the `[models.reasoning]` table)."""

    default: ReasoningSetting = "off"
    """For every role that sets nothing of its own."""
    plan: ReasoningSetting | None = None
    build: ReasoningSetting | None = None
    explore: ReasoningSetting | None = None

    @model_validator(mode="after")
    def _budgets(self) -> ReasoningRoles:
        for role in ("default", "plan", "build", "explore"):
            value = getattr(self, role)
            if isinstance(value, int) and not isinstance(value, bool) and value < 1024:
                raise ValueError(f"models.reasoning.{role}: a thinking budget is at least 1024 tokens, not {value}")
        return self

    def for_role(self, role: str) -> ReasoningSetting:
        value = getattr(self, role, None) if role != "default" else None
        return value if value is not None else self.default


class ModelRoles(_Section):
    """litellm model strings per role; an unset role uses the default model."""

    plan: str | None = None
    build: str | None = None
    explore: str | None = None
    limits: dict[str, ModelLimitSettings] = Field(default_factory=dict)
    """Per litellm model string: ``[models.limits."ollama_chat/qwen3:8b"] context_window = 40960``."""
    reasoning: ReasoningRoles = Field(default_factory=ReasoningRoles)


class RetrySettings(_Section):
    """How model calls that fail with 429 or 5xx are retried."""

    attempts: int = Field(4, ge=1, le=20)
    """Total tries, the first included."""
    base_delay_s: float = Field(1.0, ge=0)
    """Delay before the second try; doubled for each later one."""
    max_delay_s: float = Field(30.0, ge=0)
    """The longest wait between tries (a longer ``Retry-After`` from the server is cut to this)."""
    stall_timeout_s: float = Field(120.0, gt=0)
    """A call that sends nothing for this long (no first byte, or a pause mid-stream) is cut off
    and retried: a hanging server costs this much, not the HTTP client's ten minutes."""


class ContextSettings(_Section):
    """When the model's view of a long session is compacted (the `[context]` table)."""

    compact_at: float = Field(0.8, gt=0.1, le=0.95)
    """Share of the model's context window a request may fill before the older part is summarized
    (room for the output limit is always left too)."""
    keep_recent_turns: int = Field(2, ge=1)
    """The latest user turns kept verbatim when compacting (as long as they fit in half the window)."""
    windows: dict[str, int] = Field(default_factory=dict)
    """The context window per model role (``build = 32000``), over the model's own figure."""


class ToolSettings(_Section):
    """Limits that keep tool results readable and the machine safe."""

    bash_timeout_s: float = Field(120.0, gt=0)
    bash_max_timeout_s: float = Field(600.0, gt=0)
    max_output_chars: int = Field(30_000, ge=1000)
    """Longer output keeps its head and tail and marks the cut."""
    max_read_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    """Files larger than this are not read whole; the model is told to page with offset/limit."""
    max_matches: int = Field(500, ge=1)
    """Caps the lines grep and glob return."""


class SnapshotSettings(_Section):
    """The snapshot store's guards (the `[snapshots]` table)."""

    enabled: bool = True
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=1)
    """Untracked files larger than this are not captured (and the skip is reported)."""
    max_untracked_dir_files: int = Field(5000, ge=1)
    """Untracked folders with more files than this are not captured (and the skip is reported)."""
    budget_bytes: int = Field(2 * 1024**3, ge=1024 * 1024)
    """Size budget of one workspace's snapshot store; enforced when a session closes and by
    `agentcli snapshots gc` (the oldest snapshots go first)."""
    watch: bool = True
    """Watch the workspace (inotify, Linux) so the capture after a command looks only at the paths
    it touched; off, or where the watcher cannot run, that capture walks the whole tree."""


class PermissionSettings(_Section):
    """Which tool calls run without asking (the `[permissions]` table)."""

    mode: Literal["ask", "edits", "all"] | None = None
    """ask: approve each command and unusual write; edits: file tools run freely, commands ask;
    all: everything runs. Unset: the TUI asks, headless runs use `edits`."""
    allow: list[str] = Field(default_factory=list)
    """Rules such as `bash:pytest *` or `bash:git status` that run without asking."""
    deny: list[str] = Field(default_factory=list)
    """Rules that are always refused; deny wins over allow."""


class CheckSettings(_Section):
    """The commands `run_checks` runs (the `[checks]` table); auto-detected when unset."""

    commands: list[str] | None = None
    timeout_s: float = Field(600.0, gt=0)


RuleId = Literal[
    "same_error",
    "identical_call",
    "cycle",
    "oscillation",
    "checks_stalled",
    "no_progress",
]
"""Stable identifiers of the stuck rules, as they appear in verdicts, events and config."""

RULE_IDS: tuple[RuleId, ...] = (
    "same_error",
    "identical_call",
    "oscillation",
    "cycle",
    "checks_stalled",
    "no_progress",
)
"""Every rule, in the order they are consulted: the most specific evidence first."""


class ProgressConfig(BaseModel):
    """Thresholds for progress tracking and stuck detection (the `[progress]` table).

    The defaults catch a true loop within a few repeats (a failing edit repeated is
    flagged on its 3rd attempt and halted on its 4th) while a long productive run is
    never flagged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    enabled: bool = True
    """Detect stuck loops at all. When false the tracker still counts and summarises."""

    disabled_rules: frozenset[RuleId] = frozenset()
    """Rules to switch off one by one, e.g. `["checks_stalled"]`, instead of the whole detector."""

    same_error_repeats: int = Field(default=3, ge=2)
    """Failures with the same error on the same target, with no progress in between, that count as stuck."""

    identical_call_repeats: int = Field(default=3, ge=2)
    """Identical calls (tool, arguments) with identical output, with no new file content or
    newly passing check in between, that count as stuck."""

    identical_call_window: int = Field(default=20, ge=2)
    """How many recent actions the identical-call rule looks back over."""

    cycle_min_len: int = Field(default=2, ge=2)
    """Shortest repeating cycle of calls detected (A,B,A,B has length 2)."""

    cycle_max_len: int = Field(default=5, ge=2)
    """Longest repeating cycle of calls detected."""

    cycle_repeats: int = Field(default=2, ge=2)
    """Consecutive times a cycle must appear, all with identical outputs: 2 catches A,B,A,B on
    the 4th call. Identical outputs throughout mean nothing in the world changed, so two full
    rounds are already proof; a third round would only burn more calls."""

    oscillation_returns: int = Field(default=2, ge=1)
    """Times one file's content goes back to an earlier version, with no new content anywhere in
    between, that count as oscillating (edit, undo, edit, undo is 2 returns)."""

    check_stall_runs: int = Field(default=4, ge=1)
    """Consecutive check reports from one source (a test command, run_checks) that neither lower
    the number of failing checks nor newly pass a check, after the first failing report, that
    count as an implement-validate loop that is not converging."""

    no_progress_window: int = Field(default=10, ge=2)
    """Actions in a row without any progress (see `tracker.py`) that count as stuck."""

    escalation_decay: int = Field(default=5, ge=1)
    """Progress actions after a stuck verdict that lift the escalation: until then any further
    verdict halts, afterwards the next one is a recovery hint again."""

    recent_actions: int = Field(default=20, ge=1)
    """How many recent actions the tracker keeps for display and for the recovery message."""

    recent_errors: int = Field(default=10, ge=1)
    """How many recent failed actions the tracker keeps for display."""

    summary_every: int = Field(default=10, ge=1)
    """A progress summary is due after every this many recorded actions."""

    @model_validator(mode="after")
    def _check_ranges(self) -> ProgressConfig:
        """Reject threshold combinations that could never fire."""
        if self.cycle_max_len < self.cycle_min_len:
            raise ValueError(
                f"progress.cycle_max_len ({self.cycle_max_len}) is smaller than "
                f"progress.cycle_min_len ({self.cycle_min_len}); raise cycle_max_len or lower cycle_min_len"
            )
        if self.identical_call_window < self.identical_call_repeats:
            raise ValueError(
                f"progress.identical_call_window ({self.identical_call_window}) is smaller than "
                f"progress.identical_call_repeats ({self.identical_call_repeats}), so the rule could "
                "never fire; make the window at least as large as the repeats"
            )
        return self

    def rule_enabled(self, rule: RuleId) -> bool:
        """Tell whether `rule` may produce verdicts.

        Args:
            rule: The rule identifier.

        Returns:
            True when detection is enabled and the rule is not in `disabled_rules`.
        """
        return self.enabled and rule not in self.disabled_rules


class FleetSettings(_Section):
    """``agentcli race`` and ``agentcli batch``: how many sessions at once, and where (the ``[fleet]`` table)."""

    jobs: int | None = Field(None, ge=1)
    """Sessions run at once; unset: twice the cores, capped by ``provider_jobs``."""
    provider_jobs: dict[str, int] = Field(default_factory=lambda: {"ollama": 1, "ollama_chat": 1})
    """At most this many sessions at once per provider (the model string's prefix)."""
    ray_address: str | None = None
    """Run on this Ray cluster (``auto``, ``HOST:PORT`` or ``ray://HOST:10001``) unless ``--ray`` says otherwise."""
    ray_pip: list[str] = Field(default_factory=list)
    """Packages Ray installs on the workers before a job (its runtime environment), e.g. ``["agentcli==0.1.0"]``;
    empty when agentcli is already installed there."""


class Settings(_Section):
    """Everything agentcli can be configured with."""

    model: str = DEFAULT_MODEL
    """The default model role, a litellm model string such as ``openai/gpt-4o``."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible (or other) server, passed to litellm: ``http://`` or
    ``https://`` and a host (a URL without its scheme reached no server and read as a server error)."""
    max_steps: int = Field(100, ge=1)
    """Model calls allowed per turn before the run halts."""
    workflow: str = "single"
    models: ModelRoles = Field(default_factory=ModelRoles)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    snapshots: SnapshotSettings = Field(default_factory=SnapshotSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    sandbox: bool = False
    """Run `bash` under bubblewrap: workspace writable, the rest read-only, no network."""
    checks: CheckSettings = Field(default_factory=CheckSettings)
    progress: ProgressConfig = Field(default_factory=ProgressConfig)
    mcp: McpSettings = Field(default_factory=McpSettings)
    """MCP servers whose tools the agent offers (see :mod:`agentcli.config_mcp`)."""
    fleet: FleetSettings = Field(default_factory=FleetSettings)
    theme: str = "agentcli-dark"
    """The TUI theme: a name from themes/ or ~/.config/agentcli/themes/."""
    notify: Literal["off", "bell", "osc9", "osc777"] = "bell"
    """How the TUI calls you back when the agent waits for you while the terminal is not focused:
    the bell, or a desktop notification (OSC 9: iTerm2, WezTerm, kitty; OSC 777: foot, rxvt)."""

    @field_validator("api_base")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        # Without its scheme a URL reached no server, and litellm reported a server error 500.
        if value is not None and not re.match(r"https?://[^\s/]", value):
            raise ValueError(f"{value!r} is not an http:// or https:// URL; write it as e.g. http://localhost:11434")
        return value

    def model_for(self, role: str) -> str:
        """The litellm model string for a role (``default``, ``plan``, ``build``, ``explore``), or
        ``role`` itself when it is a model string: a workflow phase may name either."""
        if role in ("plan", "build", "explore"):
            return getattr(self.models, role, None) or self.model
        return self.model if role == "default" else role

    def limits_for(self, model: str) -> ModelLimitSettings:
        """The configured limits of a litellm model string (empty when none are set)."""
        return self.models.limits.get(model, ModelLimitSettings())


def _describe(error: ValidationError, source: str) -> str:
    lines = [f"invalid configuration in {source}:"]
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")  # our validators' own words
        lines.append(f"  {field}: {message}")
    return "\n".join(lines)


def _validate_layer(layer: Mapping[str, Any], source: str) -> None:
    """Check one source on its own so an error names the source it came from."""
    try:
        Settings.model_validate(layer)
    except ValidationError as error:
        raise ConfigError(_describe(error, source)) from None


def load_settings(
    workspace: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> Settings:
    """Merge every source, lowest precedence first, validating each on its own.

    Args:
        workspace: The directory whose ``.agentcli.toml`` applies.
        overrides: Values from command-line flags (``None`` values are ignored).
        environ: The environment to read ``AGENTCLI_*`` from (``os.environ`` by default).
        user_file: The user config file (``~/.config/agentcli/config.toml`` by default).

    Raises:
        ConfigError: naming the file, variable or flag and the field that is wrong.
    """
    return validate_layers(read_layers(workspace, overrides=overrides, environ=environ, user_file=user_file))


def validate_layers(layers: list[Layer]) -> Settings:
    """The settings the layers make, each layer validated on its own first.

    Raises:
        ConfigError: naming the file, variable or flag and the field that is wrong.
    """
    for layer in layers:
        _validate_layer(layer.values, layer.source)
    return Settings.model_validate(merge_layers(layers))
