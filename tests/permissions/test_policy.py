"""The policy: each mode, each kind of tool, rules (deny over allow), compound commands, scopes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import PermissionSettings, load_settings
from agentcli.permissions import Decision, PermissionState, Policy, RuleError
from agentcli.tools.files import WriteFileArgs


def policy(ws: Path, mode: str | None = "ask", allow: list[str] | None = None, deny: list[str] | None = None,
           **kwargs: Any) -> Policy:
    settings = PermissionSettings(mode=mode, allow=allow or [], deny=deny or [])  # type: ignore[arg-type]
    return Policy(settings, ws, **kwargs)


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    (workspace / ".env").write_text("API_KEY=abc\n")
    (workspace / ".git").mkdir()
    return workspace


# -- modes, by kind of tool (no rules) --------------------------------------------------------------

CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": ("read_file", {"path": "src/app.py"}),
    "list": ("list_files", {}),
    "glob": ("glob", {"pattern": "**/*.py"}),
    "grep": ("grep", {"pattern": "hi", "path": "src"}),
    "read secret": ("read_file", {"path": ".env"}),
    "grep secret": ("grep", {"pattern": "KEY", "path": ".env"}),
    "list secret folder": ("list_files", {"path": ".git"}),
    "grep secret glob": ("grep", {"pattern": "KEY", "glob": ".env*"}),
    "grep key glob": ("grep", {"pattern": "BEGIN", "glob": "**/*.pem"}),
    "grep code glob": ("grep", {"pattern": "KEY", "glob": "*.py"}),
    "grep catch-all glob": ("grep", {"pattern": "KEY", "glob": "*.*"}),
    "write": ("write_file", {"path": "src/new.py", "content": "x = 1\n"}),
    "edit": ("edit_file", {"path": "src/app.py", "old_string": "hi", "new_string": "ho"}),
    "write docs": ("write_file", {"path": "docs/guide.md", "content": "# guide\n"}),
    "write gitignore": ("write_file", {"path": ".gitignore", "content": "*.pyc\n"}),
    "write ci": ("write_file", {"path": ".github/workflows/ci.yml", "content": "on: push\n"}),
    "write vscode": ("write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
    "write jenkinsfile": ("write_file", {"path": "Jenkinsfile", "content": "pipeline {}"}),
    "write git hook": ("write_file", {"path": ".git/hooks/pre-commit", "content": "rm -rf ~"}),
    "edit git config": ("edit_file", {"path": ".git/config", "old_string": "a", "new_string": "b"}),
    "write agentcli config": ("write_file", {"path": ".agentcli.toml", "content": "[permissions]\nmode='all'"}),
    "write workflow": ("write_file", {"path": ".agentcli/workflows/x.toml", "content": ""}),
    "write env": ("write_file", {"path": ".env", "content": "A=1"}),
    "write key": ("write_file", {"path": "certs/server.pem", "content": "x"}),
    "bash": ("bash", {"command": "pytest -q"}),
    "empty bash": ("bash", {"command": "  # nothing"}),
    "run_checks": ("run_checks", {}),
    "unknown tool": ("deploy_to_prod", {"env": "prod"}),
    "think": ("think", {"thought": "hmm"}),
    "complete": ("complete", {"summary": "done"}),
    "clarify": ("clarify", {"question": "which?"}),
    "pause": ("pause", {"reason": "wait"}),
}

# expected action in modes (ask, edits, all)
EXPECTED: dict[str, tuple[str, str, str]] = {
    "read": ("allow", "allow", "allow"),
    "list": ("allow", "allow", "allow"),
    "glob": ("allow", "allow", "allow"),
    "grep": ("allow", "allow", "allow"),
    "read secret": ("ask", "ask", "allow"),
    "grep secret": ("ask", "ask", "allow"),
    "list secret folder": ("allow", "allow", "allow"),
    "grep secret glob": ("ask", "ask", "allow"),
    "grep key glob": ("ask", "ask", "allow"),
    "grep code glob": ("allow", "allow", "allow"),
    "grep catch-all glob": ("allow", "allow", "allow"),
    "write": ("allow", "allow", "allow"),
    "edit": ("allow", "allow", "allow"),
    "write docs": ("allow", "allow", "allow"),
    "write gitignore": ("allow", "allow", "allow"),
    "write ci": ("ask", "allow", "allow"),
    "write vscode": ("ask", "allow", "allow"),
    "write jenkinsfile": ("ask", "allow", "allow"),
    "write git hook": ("ask", "ask", "allow"),
    "edit git config": ("ask", "ask", "allow"),
    "write agentcli config": ("ask", "ask", "allow"),
    "write workflow": ("ask", "ask", "allow"),
    "write env": ("ask", "ask", "allow"),
    "write key": ("ask", "ask", "allow"),
    "bash": ("ask", "ask", "allow"),
    "empty bash": ("allow", "allow", "allow"),
    "run_checks": ("ask", "ask", "allow"),
    "unknown tool": ("ask", "ask", "allow"),
    "think": ("allow", "allow", "allow"),
    "complete": ("allow", "allow", "allow"),
    "clarify": ("allow", "allow", "allow"),
    "pause": ("allow", "allow", "allow"),
}


@pytest.mark.parametrize("mode_index", [0, 1, 2], ids=["ask", "edits", "all"])
@pytest.mark.parametrize("case", list(CALLS))
def test_each_mode_and_kind_of_call(ws: Path, case: str, mode_index: int) -> None:
    mode = ("ask", "edits", "all")[mode_index]
    tool, args = CALLS[case]
    decision = policy(ws, mode).decide(tool, args)
    assert decision.action == EXPECTED[case][mode_index], decision
    assert decision.reason and decision.summary
    if decision.needs_approval:
        assert decision.rules, "an ask must suggest the rule that approving always would add"


def test_unset_mode_uses_the_front_ends_default(ws: Path) -> None:
    ci = ("write_file", {"path": ".github/workflows/ci.yml", "content": ""})
    assert policy(ws, None).decide(*ci).action == "ask"  # the TUI's default is ask
    assert policy(ws, None, default_mode="edits").decide(*ci).action == "allow"
    assert policy(ws, "ask", default_mode="edits").decide(*ci).action == "ask"


def test_the_mode_can_change_while_the_session_runs(ws: Path) -> None:
    p = policy(ws, "ask")
    assert p.decide("bash", {"command": "ls"}).action == "ask"
    p.mode = "all"
    assert p.decide("bash", {"command": "ls"}).action == "allow"


# -- confinement comes first ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["ask", "edits", "all"])
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": "/etc/passwd"}),
        ("write_file", {"path": "~/.bashrc", "content": "x"}),
        ("edit_file", {"path": "/proc/self/environ", "old_string": "a", "new_string": "b"}),
        ("list_files", {"path": "/"}),
        ("grep", {"pattern": "root", "path": "/etc"}),
        ("write_file", {"path": "link/x", "content": "x"}),
    ],
)
def test_paths_outside_are_denied_in_every_mode_even_when_a_rule_allows(
    ws: Path, mode: str, tool: str, args: dict[str, Any]
) -> None:
    os.symlink("/tmp", ws / "link")
    decision = policy(ws, mode, allow=[tool, f"{tool}:*"]).decide(tool, args)
    assert decision.denied, decision
    assert "outside the workspace" in decision.reason or "'~'" in decision.reason


def test_a_symlink_inside_is_judged_by_its_target(ws: Path) -> None:
    os.symlink(".env", ws / "notes.txt")
    os.symlink(".git", ws / "gitdir")
    p = policy(ws, "edits", allow=["write_file:docs/*"])
    assert p.decide("read_file", {"path": "notes.txt"}).needs_approval
    assert p.decide("write_file", {"path": "gitdir/hooks/pre-push", "content": ""}).needs_approval
    (ws / "docs").mkdir()
    os.symlink("../.git/config", ws / "docs" / "cfg")
    # `docs/*` allows docs/, but docs/cfg is really .git/config
    assert p.decide("write_file", {"path": "docs/cfg", "content": ""}).needs_approval


def test_a_hard_link_needs_approval_to_write(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    os.link(outside, ws / "innocent.txt")
    decision = policy(ws, "edits").decide("write_file", {"path": "innocent.txt", "content": "x"})
    assert decision.needs_approval and "hard-linked" in decision.reason


# -- rules -----------------------------------------------------------------------------------------

RULE_CASES = [
    # (allow, deny, tool, args, expected)
    (["bash:pytest *"], [], "bash", {"command": "pytest -q tests"}, "allow"),
    (["bash:pytest *"], [], "bash", {"command": "pytest"}, "ask"),
    (["bash:pytest*"], [], "bash", {"command": "pytest"}, "allow"),
    (["bash:git status"], [], "bash", {"command": "git status"}, "allow"),
    (["bash:git status"], [], "bash", {"command": "git  status "}, "allow"),
    (["bash:git status"], [], "bash", {"command": "git status --short"}, "ask"),
    (["bash:git status"], [], "bash", {"command": "git status; rm -rf ~"}, "ask"),
    (["bash:git status"], [], "bash", {"command": "git status && rm -rf ~"}, "ask"),
    (["bash:git status"], [], "bash", {"command": "git status\nrm -rf ~"}, "ask"),
    (["bash:git status"], [], "bash", {"command": "git status | sh"}, "ask"),
    (["bash:git status", "bash:ls *"], [], "bash", {"command": "git status && ls -la"}, "allow"),
    (["bash:git *"], [], "bash", {"command": "git log $(rm -rf ~)"}, "ask"),
    (["bash:echo *"], [], "bash", {"command": "echo `id`"}, "ask"),
    (["bash:echo $(date)"], [], "bash", {"command": "echo $(date)"}, "allow"),
    (["bash"], [], "bash", {"command": "echo $(date); rm -rf build"}, "allow"),
    (["bash:cat *"], [], "bash", {"command": "cat a > b"}, "ask"),
    (["bash:cat * > *"], [], "bash", {"command": "cat a > b"}, "allow"),
    (["bash:make *"], [], "bash", {"command": "make test 2>&1"}, "allow"),
    (["bash:make *"], [], "bash", {"command": "make test > /dev/null"}, "allow"),
    (["bash:*"], ["bash:rm *"], "bash", {"command": "ls && rm -rf build"}, "deny"),
    (["bash"], ["bash:rm *"], "bash", {"command": "echo $(rm -rf build)"}, "deny"),
    ([], ["bash:rm *"], "bash", {"command": "sudo rm -rf /"}, "deny"),
    ([], ["bash:rm *"], "bash", {"command": "bash -c 'rm -rf /'"}, "deny"),
    ([], ["bash:git push*"], "bash", {"command": "git add . && git push --force"}, "deny"),
    ([], ["bash"], "bash", {"command": "ls"}, "deny"),
    (["write_file:docs/*"], [], "write_file", {"path": ".github/x.md", "content": ""}, "ask"),
    (["write_file:.github/*"], [], "write_file", {"path": ".github/workflows/ci.yml", "content": ""}, "allow"),
    (["write_file:.github/*"], [], "edit_file", {"path": ".github/ci.yml", "old_string": "a", "new_string": "b"}, "ask"),
    (["write_file"], [], "write_file", {"path": ".git/hooks/x", "content": ""}, "allow"),
    (["read_file:.env"], [], "read_file", {"path": ".env"}, "allow"),
    (["read_file:.env"], [], "read_file", {"path": "config/.env"}, "allow"),
    (["read_file:config/.env"], [], "read_file", {"path": ".env"}, "ask"),
    (["read_file:.env"], [], "read_file", {"path": ".env.local"}, "ask"),
    ([], ["read_file:*.lock"], "read_file", {"path": "deps/poetry.lock"}, "deny"),
    ([], ["write_file:migrations/"], "write_file", {"path": "migrations/0001.py", "content": ""}, "deny"),
    ([], ["write_file:Migrations/*"], "write_file", {"path": "migrations/0001.py", "content": ""}, "deny"),
    (["edit_file:src/*"], ["edit_file:src/vendor/*"], "edit_file",
     {"path": "src/vendor/x.py", "old_string": "a", "new_string": "b"}, "deny"),
    (["write_file:*"], ["write_file:*.pem"], "write_file", {"path": "a.pem", "content": ""}, "deny"),
    (["run_checks"], [], "run_checks", {}, "allow"),
    ([], ["think"], "think", {"thought": "x"}, "deny"),
    ([], ["complete", "pause"], "complete", {"summary": "x"}, "allow"),  # control tools always run
]


@pytest.mark.parametrize(("allow", "deny", "tool", "args", "expected"), RULE_CASES)
def test_rules(ws: Path, allow: list[str], deny: list[str], tool: str, args: dict[str, Any], expected: str) -> None:
    decision = policy(ws, "ask", allow=allow, deny=deny).decide(tool, args)
    assert decision.action == expected, decision


def test_deny_wins_over_allow_and_over_mode_all(ws: Path) -> None:
    p = policy(ws, "all", allow=["bash:rm *", "bash"], deny=["bash:rm -rf *"])
    decision = p.decide("bash", {"command": "rm -rf build"})
    assert decision.denied and decision.matched == "bash:rm -rf *"
    assert "bash:rm -rf *" in decision.refusal()
    assert p.decide("bash", {"command": "rm build.log"}).allowed


def test_a_decision_names_the_rule_that_decided(ws: Path) -> None:
    p = policy(ws, "ask", allow=["bash:git status", "bash:pytest *"])
    decision = p.decide("bash", {"command": "git status && pytest -x"})
    assert decision.allowed and decision.matched == "bash:git status, bash:pytest *"


def test_compound_commands_ask_only_for_what_no_rule_covers(ws: Path) -> None:
    decision = policy(ws, "ask", allow=["bash:git status"]).decide("bash", {"command": "git status && rm -rf build"})
    assert decision.needs_approval
    assert decision.rules == ("bash:rm -rf build",)
    assert "`rm -rf build`" in decision.reason


def test_suggested_rules_are_escaped_to_allow_exactly_the_call(ws: Path) -> None:
    p = policy(ws, "ask")
    decision = p.decide("bash", {"command": "rm *.pyc"})
    assert decision.rules == ("bash:rm [*].pyc",)
    p.state.remember(decision, "session")  # type: ignore[union-attr]
    assert p.decide("bash", {"command": "rm *.pyc"}).allowed
    assert p.decide("bash", {"command": "rm -rf / .pyc"}).needs_approval
    opaque = p.decide("bash", {"command": "echo $(git rev-parse HEAD) [x]"})
    assert opaque.rules == ("bash:echo $(git rev-parse HEAD) [[]x]",)
    p.state.remember(opaque, "session")  # type: ignore[union-attr]
    assert p.decide("bash", {"command": "echo $(git rev-parse HEAD) [x]"}).allowed
    assert p.decide("bash", {"command": "echo $(rm -rf ~) [x]"}).needs_approval


def test_invalid_rules_are_reported_with_their_key(ws: Path) -> None:
    with pytest.raises(RuleError, match=r"permissions\.allow\[1\]"):
        policy(ws, allow=["bash:ls", "bash:"])
    with pytest.raises(RuleError, match=r"permissions\.deny\[0\].*not a tool name"):
        policy(ws, deny=["rm -rf *"])


def test_arguments_that_do_not_fit_are_left_to_the_tool(ws: Path) -> None:
    p = policy(ws, "ask")
    assert p.decide("bash", {"command": 42}).allowed
    assert p.decide("write_file", {"content": "x"}).allowed
    assert p.decide("read_file", None).allowed


def test_argument_models_are_accepted(ws: Path) -> None:
    decision = policy(ws, "ask").decide("write_file", WriteFileArgs(path=".env", content="x"))
    assert decision.needs_approval and decision.summary == "Write .env (1 line)"


def test_refusal_texts_for_the_model(ws: Path) -> None:
    decision = policy(ws, "ask").decide("bash", {"command": "curl x | sh"})
    assert "denied by the user" in decision.refusal(by_user=True)
    assert "curl x | sh" in decision.refusal(by_user=True)


# -- scopes -----------------------------------------------------------------------------------------


def test_once_remembers_nothing(ws: Path) -> None:
    p = policy(ws, "ask")
    decision = p.decide("bash", {"command": "make"})
    assert p.state.remember(decision, "once") is None  # type: ignore[union-attr]
    assert p.decide("bash", {"command": "make"}).needs_approval
    assert not (ws / ".agentcli.toml").exists()


def test_session_scope_lasts_for_the_state_only(ws: Path) -> None:
    state = PermissionState(ws)
    p = policy(ws, "ask", state=state)
    decision = p.decide("bash", {"command": "make"})
    state.remember(decision, "session")
    assert p.decide("bash", {"command": "make"}).allowed
    assert p.decide("bash", {"command": "make install"}).needs_approval
    assert policy(ws, "ask").decide("bash", {"command": "make"}).needs_approval  # a new session
    assert not (ws / ".agentcli.toml").exists()


def test_a_refusal_for_the_session_denies_the_same_call_again(ws: Path) -> None:
    p = policy(ws, "all")
    decision = p.decide("write_file", {"path": "src/gen.py", "content": "x"})
    p.state.remember("write_file:src/gen.py", "session", allowed=False)  # type: ignore[union-attr]
    assert p.decide("write_file", {"path": "src/gen.py", "content": "y"}).denied
    assert decision.allowed


def test_always_writes_the_workspace_config_and_it_loads_back(ws: Path, tmp_path: Path) -> None:
    (ws / ".agentcli.toml").write_text(
        '# my project\nmodel = "openai/gpt-4o"  # the default\n\n[permissions]\nallow = ["bash:git status"]\n'
        "\n[tools]\nbash_timeout_s = 30\n"
    )
    settings = load_settings(ws, environ={}, user_file=tmp_path / "none.toml")
    state = PermissionState(ws)
    p = Policy(settings.permissions, ws, state=state)
    decision = p.decide("bash", {"command": "pytest -q && git status"})
    assert decision.rules == ("bash:pytest -q",)
    written = state.remember(decision, "always")
    assert written == ws / ".agentcli.toml"
    assert p.decide("bash", {"command": "pytest -q && git status"}).allowed  # at once, no reload

    reloaded = load_settings(ws, environ={}, user_file=tmp_path / "none.toml")
    assert reloaded.permissions.allow == ["bash:git status", "bash:pytest -q"]
    assert reloaded.model == "openai/gpt-4o" and reloaded.tools.bash_timeout_s == 30
    text = (ws / ".agentcli.toml").read_text()
    assert "# my project" in text and "# the default" in text
    assert Policy(reloaded.permissions, ws).decide("bash", {"command": "pytest -q"}).allowed


def test_always_creates_the_config_when_there_is_none(ws: Path, tmp_path: Path) -> None:
    state = PermissionState(ws)
    p = Policy(PermissionSettings(), ws, state=state)
    read = p.decide("read_file", {"path": ".env"})
    state.remember(read, "always")
    denied = p.decide("bash", {"command": "git push"})
    state.remember(denied, "always", allowed=False)
    loaded = load_settings(ws, environ={}, user_file=tmp_path / "none.toml")
    assert loaded.permissions.allow == ["read_file:.env"]
    assert loaded.permissions.deny == ["bash:git push"]
    fresh = Policy(loaded.permissions, ws)
    assert fresh.decide("read_file", {"path": ".env"}).allowed
    assert fresh.decide("bash", {"command": "git push"}).denied


def test_remember_validates_rules(ws: Path) -> None:
    with pytest.raises(RuleError):
        PermissionState(ws).remember("", "session")
    with pytest.raises(ValueError, match="workspace"):
        PermissionState().remember("bash:ls", "always")


def test_decision_rule_is_a_display_line() -> None:
    decision = Decision("ask", "why", "Run `a && b`", ("bash:a", "bash:b"))
    assert decision.rule == "bash:a, bash:b"


# -- purity -----------------------------------------------------------------------------------------


def test_the_policy_imports_no_session_model_client_snapshot_store_or_ui() -> None:
    script = "import agentcli.permissions, sys; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split())
    for name in ("agentcli.session", "agentcli.llm", "agentcli.snapshots", "agentcli.progress", "agentcli.tui",
                 "textual", "litellm", "pygit2"):
        assert not any(m == name or m.startswith(name + ".") for m in loaded), name
