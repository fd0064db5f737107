"""Which of litellm's call paths agentcli takes to an OpenAI-compatible server, and that a user can
choose the other one.

litellm's own HTTP path skips the OpenAI SDK, whose per-call request transform grows with the
conversation (bench/step_cost.py: 95 ms of CPU per call at 300 steps against 37 ms). The server
records each request's ``User-Agent``, which names the client that sent it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.config import RetrySettings
from agentcli.events import ToolCallFinished
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.warmup import import_litellm
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import make_session


async def test_a_session_reaches_an_openai_server_through_litellms_own_http_client(
    workspace: Path, server: OpenAIServer
) -> None:
    import_litellm()
    server.add(
        Reply(text="Reading it.", calls=[Call("read_file", {"path": "notes.txt"})], chunk_size=3),
        Reply(calls=[Call("complete", {"summary": "read"})]),
    )
    (workspace / "notes.txt").write_text("one\ntwo\n")
    client = LiteLLMClient(RetrySettings(attempts=1))
    session, rec = make_session(workspace, client, model="openai/test-model", api_base=server.base_url)
    ended = await session.run_turn("read notes.txt")
    assert ended.outcome == "completed"
    assert "two" in rec.of(ToolCallFinished)[0].output
    assert server.user_agents and all(agent.startswith("litellm/") for agent in server.user_agents)
    # The flag that skips litellm's MCP gateway (litellm_client.py) is litellm's, never sent on.
    assert server.requests[0]["tools"] and not any("mcp" in key for body in server.requests for key in body)


@pytest.mark.parametrize(("given", "expected"), [(None, "true"), ("false", "false")])
def test_the_call_path_setting_is_ours_only_when_the_user_left_it_unset(given: str | None, expected: str) -> None:
    env = {key: value for key, value in os.environ.items() if key != "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"}
    if given is not None:
        env["EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"] = given
    code = ("import os\nfrom agentcli.llm.warmup import import_litellm\nimport_litellm()\n"
            "print(os.environ['EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == expected
