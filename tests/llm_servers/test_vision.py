"""Whether a model reads images is asked without blocking the event loop: an Ollama model by the
capabilities its own server lists (asynchronously, at the configured server), never by litellm's
lookup, which would ask ``/api/show`` synchronously at localhost; any other model by litellm's map,
in a worker thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agentcli.llm import vision
from agentcli.llm.vision import takes_images
from agentcli.llm.warmup import load_litellm
from tests.support.ollama_server import OllamaModel, OllamaServer


@pytest.fixture(autouse=True)
def fresh_answers() -> Iterator[None]:
    vision._known.clear()
    yield
    vision._known.clear()


@pytest.fixture
async def lookups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """litellm's ``supports_vision`` calls, as (model, thread id), answered as litellm answers."""
    litellm = await load_litellm()
    real = litellm.supports_vision
    seen: list[tuple[str, int]] = []

    def recording(*args: Any, **kwargs: Any) -> bool:
        seen.append((kwargs.get("model") or args[0], threading.get_ident()))
        return bool(real(*args, **kwargs))

    monkeypatch.setattr(litellm, "supports_vision", recording)
    return seen


async def test_an_ollama_model_is_judged_by_what_its_server_lists(lookups: list[tuple[str, int]]) -> None:
    models = {"llava-v:7b": OllamaModel(family="llama", capabilities=("completion", "vision")),
              "coder-v:7b": OllamaModel(capabilities=("completion", "tools"))}
    with OllamaServer(models=models) as ollama:
        assert await takes_images("ollama_chat/llava-v:7b", ollama.base_url) is True
        assert await takes_images("ollama_chat/coder-v:7b", ollama.base_url) is False
        assert await takes_images("ollama_chat/llava-v:7b", ollama.base_url) is True  # asked once
        shows = [entry.body for entry in ollama.log if entry.path == "/api/show"]
    assert shows == [{"model": "llava-v:7b"}, {"model": "coder-v:7b"}]
    assert lookups == []


async def test_an_ollama_server_that_cannot_say_means_no_images(lookups: list[tuple[str, int]]) -> None:
    with OllamaServer(models={"llava-q:7b": OllamaModel(capabilities=("vision",))}, show_status=500) as ollama:
        assert await takes_images("ollama_chat/llava-q:7b", ollama.base_url) is False
    assert lookups == []


async def test_another_models_lookup_runs_off_the_event_loop(lookups: list[tuple[str, int]]) -> None:
    loop_thread = threading.get_ident()
    assert await takes_images("openai/gpt-4o", None) is True
    assert await takes_images("test-model", "http://127.0.0.1:9/v1") is False  # spoken to as openai/test-model
    assert await takes_images("openai/gpt-4o", None) is True  # the answer is kept
    assert await takes_images("replay:demo", None) is False
    assert [model for model, _ in lookups] == ["openai/gpt-4o", "openai/test-model"]
    assert all(thread != loop_thread for _, thread in lookups)
