"""The system prompt of an OpenAI o-series reasoning model goes as a ``developer`` message: given
a ``system`` one, litellm makes it a *user* message for the models its map does not mark as taking
system messages (o3, o3-mini, o4-mini), so the agent's instructions would read as the user's."""

from __future__ import annotations

import pytest

from agentcli.config import RetrySettings
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.types import ModelRequest, ModelResponse
from tests.support.openai_server import OpenAIServer, Reply

SYSTEM = "You are a coding agent."


@pytest.mark.parametrize(("model", "role"), [
    ("openai/o3", "developer"),
    ("openai/o4-mini", "developer"),
    ("openai/o3-mini-2025-01-31", "developer"),
    ("openai/o1", "developer"),
    ("openai/gpt-4o", "system"),  # takes a system message as it is
    ("openai/o1-mini", "system"),  # takes neither: left as litellm sends it
])
async def test_the_system_prompt_goes_in_the_role_the_model_takes(model: str, role: str) -> None:
    with OpenAIServer().start() as server:
        server.add(Reply(text="ok"))
        request = ModelRequest(model=model, api_base=server.base_url, messages=[
            {"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}])
        items = [item async for item in LiteLLMClient(RetrySettings(attempts=1)).stream(request)]
        assert isinstance(items[-1], ModelResponse) and items[-1].text == "ok"
        assert not server.refused, server.refused
        assert server.requests[0]["messages"] == [{"role": role, "content": SYSTEM}, {"role": "user", "content": "hi"}]
