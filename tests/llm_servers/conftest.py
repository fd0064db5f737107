"""Fixtures for the provider wire-format servers: a started Anthropic or Ollama server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.anthropic_server import AnthropicServer
from tests.support.ollama_server import OllamaServer

API_KEY = "test-key"
"""The key the Anthropic fixture requires in ``x-api-key``; litellm sends it from ``api_key=``."""


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicServer]:
    """An Anthropic Messages server that requires :data:`API_KEY`."""
    with AnthropicServer(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def ollama_server() -> Iterator[OllamaServer]:
    """An Ollama server that has ``qwen3:8b`` (completion, tools, thinking) pulled."""
    with OllamaServer() as server:
        yield server
