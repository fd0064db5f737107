"""A key the provider refuses: the headless CLI names the variable the key came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_cli import agentcli, events
from tests.support.openai_server import Fail, OpenAIServer


def _ended(stdout: str) -> dict[str, object]:
    return [e for e in events(stdout) if e["type"] == "turn_ended"][-1]


def test_a_rejected_key_names_the_variable_it_came_from(workspace: Path, server: OpenAIServer) -> None:
    server.add(Fail(401, "Incorrect API key provided"))
    proc = agentcli("run", "go", "--model", "openai/m", "--yes", "--api-base", server.base_url, "-o", "jsonl",
                    cwd=workspace, env={"OPENAI_API_KEY": "sk-wrong"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reason = str(_ended(proc.stdout)["reason"])
    assert "rejected the API key" in reason and "from OPENAI_API_KEY" in reason, reason
    assert "Incorrect API key provided" in reason
    assert "sk-wrong" not in proc.stdout + proc.stderr
    assert len(server.requests) == 1  # a bad key is not retried


def test_a_server_wanting_a_key_none_was_set_for_says_which_to_set(
    workspace: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No key set: a stand-in was sent to the custom server, so "check the key" would point at
    # nothing the user set; the line says which variable to set instead.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.add(Fail(401, "missing bearer token"))
    proc = agentcli("run", "go", "--model", "openai/m", "--yes", "--api-base", server.base_url, "-o", "jsonl",
                    cwd=workspace)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reason = str(_ended(proc.stdout)["reason"])
    assert "wants an API key and OPENAI_API_KEY is not set" in reason, reason
    assert "missing bearer token" in reason
