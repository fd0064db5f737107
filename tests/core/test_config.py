"""Configuration layers and their error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import ConfigError, load_settings


def test_layers_in_order_of_precedence(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('model = "user/model"\nmax_steps = 7\n[retry]\nattempts = 2\n')
    (workspace / ".agentcli.toml").write_text('model = "workspace/model"\n[models]\nplan = "plan/model"\n')
    env = {"AGENTCLI_MAX_STEPS": "9", "AGENTCLI_RETRY__BASE_DELAY_S": "0.5"}
    settings = load_settings(workspace, environ=env, user_file=user, overrides={"api_base": "http://x", "model": None})
    assert settings.model == "workspace/model"
    assert settings.max_steps == 9
    assert settings.retry.attempts == 2 and settings.retry.base_delay_s == 0.5
    assert settings.api_base == "http://x"
    assert settings.model_for("plan") == "plan/model" and settings.model_for("build") == "workspace/model"
    flagged = load_settings(workspace, environ=env, user_file=user, overrides={"model": "flag/model"})
    assert flagged.model == "flag/model"


def test_errors_name_the_file_and_the_field(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".agentcli.toml").write_text("[retry]\nattempts = 0\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(workspace, environ={}, user_file=tmp_path / "none.toml")
    assert str(workspace / ".agentcli.toml") in str(caught.value) and "retry.attempts" in str(caught.value)


def test_unknown_fields_and_bad_toml_are_reported(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".agentcli.toml").write_text("modle = 'typo'\n")
    with pytest.raises(ConfigError, match="modle"):
        load_settings(workspace, environ={}, user_file=tmp_path / "none.toml")
    (workspace / ".agentcli.toml").write_text("model = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(workspace, environ={}, user_file=tmp_path / "none.toml")


def test_environment_errors_name_the_variables(workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="environment variables") as caught:
        load_settings(workspace, environ={"AGENTCLI_MAX_STEPS": "many"}, user_file=tmp_path / "none.toml")
    assert "max_steps" in str(caught.value)


def test_permission_rules_add_up_across_layers(workspace: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[permissions]\nallow = ["bash:pytest *"]\ndeny = ["bash:curl *"]\n')
    (workspace / ".agentcli.toml").write_text('[permissions]\nallow = ["bash:make lint", "bash:pytest *"]\n')
    settings = load_settings(workspace, environ={}, user_file=user)
    assert settings.permissions.allow == ["bash:pytest *", "bash:make lint"]
    assert settings.permissions.deny == ["bash:curl *"]
