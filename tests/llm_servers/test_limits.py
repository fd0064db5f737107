"""The limits a call goes with, when a server says more than litellm knows: the window a provider
names in refusing a request, and the window an Ollama server gives a model (``/api/show``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentcli.config import ContextSettings, ModelLimitSettings, ModelRoles, RetrySettings, Settings
from agentcli.events import ContextCompacted, ErrorOccurred, Notice, RetryScheduled
from agentcli.llm.litellm_client import LiteLLMClient
from agentcli.llm.ollama_window import context_length
from agentcli.llm.types import ClientNotice, ModelCallError, ModelRequest
from tests.llm_servers.conftest import API_KEY
from tests.support.anthropic_server import AnthropicServer, Call, Fail, Reply
from tests.support.ollama_server import Call as OllamaCall
from tests.support.ollama_server import OllamaModel, OllamaServer
from tests.support.ollama_server import Reply as OllamaReply
from tests.support.sessions import litellm_session as _session

CLAUDE = "anthropic/claude-sonnet-4-5-20250929"
FAST_RETRY = RetrySettings(attempts=3, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture(autouse=True)
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)


async def test_a_configured_output_limit_the_stated_window_cannot_hold_is_lowered_so_the_retry_fits(
    workspace: Path
) -> None:
    """59,500 output tokens configured, a provider whose window is 60,000: it refuses the first
    request, naming its window. The guard then keeps a quarter of that window for the reply;
    what is sent must be that quarter too, or the retry overflows again and the turn pauses."""
    (workspace / "f1.txt").write_text("file 1\n")
    models = ModelRoles(limits={CLAUDE: ModelLimitSettings(max_output_tokens=59_500)})
    with AnthropicServer(api_key=API_KEY, context_window=60_000) as server:
        server.add(Reply(calls=[Call("read_file", {"path": "f1.txt"})]),
                   Reply(calls=[Call("complete", {"summary": "s"})]))
        session, rec = _session(workspace, Settings(model=CLAUDE, api_base=server.base_url, retry=FAST_RETRY,
                                                    models=models))
        ended = await asyncio.wait_for(session.run_turn("go"), 30)
        assert ended.outcome == "completed", ended.reason
        assert [body["max_tokens"] for body in server.requests] == [59_500, 15_000, 15_000]
        assert [r.status for r in server.responses()] == [400, 200, 200]
    assert session.turn.max_output == 15_000  # what the compaction guard keeps free is what is sent
    lowered = [n for n in rec.of(Notice) if "configured" in n.text]
    said = (f"{CLAUDE}'s context window is 60,000 tokens (its provider said so): replies are limited to 15,000 "
            "tokens, not the 59,500 configured, to leave room for the conversation")
    assert [(n.text, n.severity) for n in lowered] == [(said, "warning")]
    assert not rec.of(RetryScheduled)


async def test_an_output_limit_the_stated_window_holds_is_sent_as_configured(
    anthropic_server: AnthropicServer
) -> None:
    """A refusal for the prompt's size alone lowers nothing that already fits a quarter of the window."""
    anthropic_server.add(Fail(400, "prompt is too long: 70000 tokens > 60000 maximum"), Reply(text="hi"))
    client = LiteLLMClient(FAST_RETRY)
    request = ModelRequest(model=CLAUDE, messages=[{"role": "user", "content": "hi"}],
                           api_base=anthropic_server.base_url, max_tokens=2000)
    with pytest.raises(ModelCallError) as refused:
        [item async for item in client.stream(request)]
    assert (refused.value.kind, refused.value.window) == ("overflow", 60_000)
    limits = await client.model_limits(CLAUDE, anthropic_server.base_url, max_tokens=2000)
    assert (limits.max_output_tokens, limits.context_window, limits.lowered_from) == (2000, 60_000, None)
    items = [item async for item in client.stream(request)]
    assert [body["max_tokens"] for body in anthropic_server.requests] == [2000, 2000]
    assert not [item for item in items if isinstance(item, ClientNotice)]


def _shows(server: OllamaServer, name: str) -> list[int | None]:
    """The statuses of our own ``/api/show`` requests for ``name`` (litellm's say ``name``, not ``model``)."""
    return [entry.status for entry in server.log
            if entry.path == "/api/show" and isinstance(entry.body, dict) and entry.body.get("model") == name]


async def test_ollama_gets_the_models_own_window_when_it_is_smaller_asked_once_per_process(workspace: Path) -> None:
    """An 8k model: ``num_ctx`` 32k would have Ollama allocate a cache the model was never trained
    to use, and the guard budget for text it cannot read well."""
    (workspace / "f1.txt").write_text("file 1\n")
    models = {"tiny8k:1b": OllamaModel(family="llama", capabilities=("completion", "tools"), context_length=8192)}
    with OllamaServer(models=models) as ollama:
        settings = Settings(model="ollama_chat/tiny8k:1b", api_base=ollama.base_url, retry=FAST_RETRY)
        for _ in range(2):  # the second session has a client of its own, in the same process
            ollama.add(OllamaReply(calls=[OllamaCall("read_file", {"path": "f1.txt"})]),
                       OllamaReply(calls=[OllamaCall("complete", {"summary": "read it"})]))
            session, rec = _session(workspace, settings)
            assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
            assert session.turn.window == 8192
        assert [body["options"]["num_ctx"] for body in ollama.requests] == [8192] * 4
        assert [body["options"]["num_predict"] for body in ollama.requests] == [2048] * 4  # a quarter
        assert _shows(ollama, "tiny8k:1b") == [200]
    said = ('litellm knows no limits for ollama_chat/tiny8k:1b: using 2048 output tokens and a 8,192-token '
            'context window (set [models.limits."ollama_chat/tiny8k:1b"] to change them)')
    assert [(n.text, n.severity) for n in rec.of(Notice) if "knows no limits" in n.text] == [(said, "info")]


@pytest.mark.parametrize(("name", "configured", "sent"), [
    ("big128k:8b", None, 32_768),  # the default, below the model's own
    ("big128k:8b-a", 65_536, 65_536),  # configured, below the model's own
    ("big128k:8b-b", 262_144, 131_072),  # configured past what the model was trained for
])
async def test_the_window_sent_to_ollama_is_the_smaller_of_the_models_and_the_configured(
    name: str, configured: int | None, sent: int, workspace: Path
) -> None:
    models = {name: OllamaModel(context_length=131_072)}
    with OllamaServer(models=models) as ollama:
        ollama.add(OllamaReply(calls=[OllamaCall("complete", {"summary": "done"})]))
        model = f"ollama_chat/{name}"
        limits = ModelRoles(limits={model: ModelLimitSettings(context_window=configured)})
        session, rec = _session(workspace, Settings(model=model, api_base=ollama.base_url, retry=FAST_RETRY,
                                                    models=limits))
        assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
        assert ollama.requests[0]["options"]["num_ctx"] == sent
        assert session.turn.window == sent
    if configured is None:
        said = next(n.text for n in rec.of(Notice) if "knows no limits" in n.text)
        assert "a 32,768-token context window; its server runs it with up to 131,072 (set" in said


async def test_a_failing_api_show_falls_back_to_the_default_window_silently(workspace: Path) -> None:
    models = {"quiet:1b": OllamaModel(context_length=8192)}
    with OllamaServer(models=models, show_status=500) as ollama:
        ollama.add(OllamaReply(calls=[OllamaCall("complete", {"summary": "done"})]))
        session, rec = _session(workspace, Settings(model="ollama_chat/quiet:1b", api_base=ollama.base_url,
                                                    retry=FAST_RETRY))
        assert (await asyncio.wait_for(session.run_turn("go"), 30)).outcome == "completed"
        assert ollama.requests[0]["options"]["num_ctx"] == 32_768
        assert _shows(ollama, "quiet:1b") == [500]
    assert not rec.of(ErrorOccurred) and not rec.of(RetryScheduled)
    assert not [n for n in rec.of(Notice) if "show" in n.text or n.severity == "warning"]


def test_the_window_is_read_under_the_models_architecture() -> None:
    info = {"general.architecture": "gemma3", "gemma3.context_length": 131_072, "gemma3.embedding_length": 2560}
    assert context_length({"model_info": info}) == 131_072
    info["gemma3.other.context_length"] = 1024  # another length beside it: the architecture's is the one
    assert context_length({"model_info": info}) == 131_072
    assert context_length({"model_info": {"general.architecture": "x"}}) is None
    assert context_length({"model_info": {"llama.context_length": 8192}}) == 8192  # no architecture named
    assert context_length({"error": "model 'x' not found"}) is None
    assert context_length({"model_info": {"general.architecture": "x", "x.context_length": "8192"}}) is None


async def test_a_summary_request_to_ollama_gets_the_window_the_sessions_calls_get(workspace: Path) -> None:
    """Configured 16k for a 128k model: without the same window, the summary call would be run
    with litellm's default (32k here), a cache and a budget of another size than the session's."""
    (workspace / "f1.txt").write_text("a line of the file\n" * 200)
    model = "ollama_chat/big128k:8b-s"
    with OllamaServer(models={"big128k:8b-s": OllamaModel(context_length=131_072)}) as ollama:
        ollama.add(OllamaReply(calls=[OllamaCall("read_file", {"path": "f1.txt"})]),
                   OllamaReply(calls=[OllamaCall("complete", {"summary": "read it"})]),
                   OllamaReply(calls=[OllamaCall("complete", {"summary": "nothing more"})]),
                   OllamaReply(text="The user asked to read f1.txt; it was read."))
        limits = ModelRoles(limits={model: ModelLimitSettings(context_window=16_384)})
        session, rec = _session(workspace, Settings(model=model, api_base=ollama.base_url, retry=FAST_RETRY,
                                                    models=limits, context=ContextSettings(keep_recent_turns=1)))
        assert (await asyncio.wait_for(session.run_turn("read f1.txt"), 30)).outcome == "completed"
        assert (await asyncio.wait_for(session.run_turn("anything else?"), 30)).outcome == "completed"
        await session.compact()
        await asyncio.wait_for(session.wait_turn(), 30)
        summary = [body for body in ollama.requests if not body.get("tools")]
        assert len(summary) == 1 and "f1.txt" in json.dumps(summary[0]["messages"])
        assert [body["options"]["num_ctx"] for body in ollama.requests] == [16_384] * 4
    assert rec.of(ContextCompacted) and rec.of(ContextCompacted)[-1].reason == "manual"
