"""Secrets are redacted from tool output before the model, the screen or the log see it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.secrets import Redactor, is_secret_name
from agentcli.tools import ToolContext, default_registry
from agentcli.tools.base import ToolResult

REGISTRY = default_registry()
SECRET = "s3cr3t-Value_0123456789"


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
     "MYSQLPASSWORD", "GHTOKEN", "HF_TOKEN", "NPM_AUTH", "SLACK_BOT_TOKEN", "DATABASE_PASS", "gpg_passphrase",
     "PRIVATE_KEY", "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS_JSON"],
)
def test_secret_variable_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "SSH_AUTH_SOCK", "PWD", "OLDPWD", "HOME", "PATH", "KEYMAP",
     "XKB_KEYBOARD", "MONKEY", "TOKENIZERS_PARALLELISM_X", "GIT_SSH_KEY_FILE", "KUBECONFIG", "PAGER"],
)
def test_ordinary_variable_names(name: str) -> None:
    assert not is_secret_name(name)


async def test_an_environment_secret_printed_by_a_command_is_redacted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    redact = Redactor()
    raw = await REGISTRY.call("bash", json.dumps({"command": "echo token=$MY_SERVICE_TOKEN; env | grep MY_SERVICE"}),
                              ToolContext(workspace))
    assert SECRET in raw.output  # the tool itself returns it...
    result = redact.result(raw)  # ...and the runtime redacts it before anyone sees it
    assert SECRET not in result.output
    assert "token=[redacted:MY_SERVICE_TOKEN]" in result.output
    assert result.ok == raw.ok and result.files_changed == raw.files_changed


async def test_an_environment_secret_read_from_a_file_is_redacted(workspace: Path) -> None:
    (workspace / "settings.py").write_text(f'KEY = "{SECRET}"\n')
    redact = Redactor({"STRIPE_SECRET": SECRET})
    raw = await REGISTRY.call("read_file", json.dumps({"path": "settings.py"}), ToolContext(workspace))
    assert "[redacted:STRIPE_SECRET]" in redact.result(raw).output
    grep = redact.result(await REGISTRY.call("grep", json.dumps({"pattern": "KEY"}), ToolContext(workspace)))
    assert SECRET not in grep.output


def test_errors_and_data_are_redacted_too() -> None:
    redact = Redactor({"API_KEY": SECRET})
    result = ToolResult(ok=False, output=f"Error: {SECRET}", error=f"bad {SECRET}",
                        data={"question": f"use {SECRET}?", "options": [SECRET, "no"], "n": 1})
    clean = redact.result(result)
    assert SECRET not in repr(clean)
    assert clean.data["options"] == ["[redacted:API_KEY]", "no"] and clean.data["n"] == 1


def test_a_clean_result_is_returned_as_is() -> None:
    result = ToolResult(ok=True, output="all good")
    assert Redactor({"API_KEY": SECRET}).result(result) is result


def test_json_escaped_values_are_redacted() -> None:
    value = 'pa"ss\\word-123'
    redact = Redactor({"DB_PASSWORD": value})
    line = json.dumps({"output": f"connecting with {value}"})
    assert value not in json.loads(redact(line))["output"]
    assert "[redacted:DB_PASSWORD]" in redact(line)


def test_short_and_non_secret_values_are_left_alone() -> None:
    redact = Redactor({"API_KEY": "1", "DEBUG_TOKEN": "true", "GIT_AUTHOR_NAME": "Jane Developer",
                       "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.42"}, shapes=False)
    text = "Author: Jane Developer, agent /tmp/ssh-XXXX/agent.42, flag true 1"
    assert redact(text) == text


def test_the_longest_secret_wins() -> None:
    redact = Redactor({"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-ijkl"}, shapes=False)
    assert redact("x abcdefgh-ijkl y abcdefgh") == "x [redacted:B_TOKEN] y [redacted:A_TOKEN]"


# -- tokens by their shape, even when not in the environment -------------------------------------------

SHAPED = {
    "openai": ("sk-proj-" + "aB3dE5fG7h" * 6, "api-key"),
    "openai legacy": ("sk-" + "Ab1Cd2Ef3Gh4" * 4, "api-key"),
    "anthropic": ("sk-ant-api03-" + "xY9_zW8-vU7" * 8, "api-key"),
    "github classic": ("ghp_" + "A1b2C3d4E5" * 4, "github-token"),
    "github fine-grained": ("github_pat_11ABCDEFG0" + "a1B2c3D4e5" * 7, "github-token"),
    "gitlab": ("glpat-" + "x1Y2z3W4v5U6t7S8r9Q0", "gitlab-token"),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"),
    "slack": ("xoxb-123456789012-1234567890123-" + "a" * 24, "slack-token"),
    "google": ("AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"),
    "huggingface": ("hf_" + "aBcDeFgHiJ" * 4, "huggingface-token"),
    "stripe": ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
}


@pytest.mark.parametrize("case", list(SHAPED))
def test_known_token_shapes_are_redacted(case: str) -> None:
    token, label = SHAPED[case]
    redact = Redactor({})
    out = redact(f"config: {token}\nnext line")
    assert token not in out and f"[redacted:{label}]" in out and out.endswith("next line")
    assert token not in redact(json.dumps({"output": f"line\n{token}"}))  # in a JSON log line too


def test_private_key_blocks_are_redacted_whole() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAB\n-----END OPENSSH PRIVATE KEY-----"
    out = Redactor({})(f"before\n{block}\nafter")
    assert out == "before\n[redacted:private-key]\nafter"


def test_a_key_block_cut_short_keeps_a_json_log_line_valid() -> None:
    line = json.dumps({"output": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3\n[... 40 lines cut ...]", "n": 1})
    redacted = Redactor({})(line)
    assert "MIIEpAIBAAKCAQEA3" not in redacted
    assert json.loads(redacted)["n"] == 1
    quoted = json.dumps({"output": 'k = "-----BEGIN PRIVATE KEY-----\nMIIEv', "n": 2})
    assert json.loads(Redactor({})(quoted))["n"] == 2


def test_passwords_in_urls_are_redacted_but_not_the_rest() -> None:
    out = Redactor({})("DATABASE_URL=postgres://app:hunter2-long@db.internal:5432/app and ssh://git@github.com/x")
    assert out == "DATABASE_URL=postgres://app:[redacted:url-password]@db.internal:5432/app and ssh://git@github.com/x"


@pytest.mark.parametrize(
    "text",
    [
        "sk-spinner-double-bounce-container-large",  # a CSS class: no digit
        "the disk-usage-report-generator-2024-edition",  # sk- inside a word
        "AKIAIOSFODNN7EXAMPLEX",  # too long for an access key id
        "task-ghp_short",
        "see https://example.com/a:b@c",  # no user:password before @ in the authority... still a URL path
        "public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG user@host",
        "-----BEGIN CERTIFICATE-----",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert Redactor({})(text) == text


def test_shapes_can_be_turned_off() -> None:
    token = SHAPED["github classic"][0]
    assert Redactor({}, shapes=False)(token) == token
