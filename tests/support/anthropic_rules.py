"""What the Anthropic Messages API rejects, checked the way the real API checks it.

Each rule answers with the real API's status, error type and wording where the wording could be
found in public bug reports (GitHub issues quoting the API's 400 bodies); the few rules whose real
wording was not found say so in their docstring. The error body the server sends is the real shape:
``{"type": "error", "error": {"type": "invalid_request_error", "message": "..."}, "request_id": "req_..."}``.

Thinking blocks are signed with an HMAC of their text under the server's secret (see
:class:`ThinkingSigner`), so a thinking block sent back unchanged verifies and an edited one does
not, as with the real API's opaque signatures.

Roles: the current API combines consecutive turns of the same role into one turn ("Consecutive
user or assistant turns in your request will be combined into a single turn", Messages API
reference), so by default a run of same-role messages is accepted and the tool rules below look at
turns, not messages. ``strict_alternation=True`` restores the API's older rejection
(``messages: roles must alternate between "user" and "assistant", but found multiple "user" roles
in a row``), useful to prove litellm merges same-role messages before sending.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

EXTENDED_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

MAX_OUTPUT_TOKENS: dict[str, int] = {
    "claude-sonnet-4-5": 64_000,
    "claude-haiku-4-5": 64_000,
    "claude-opus-4-5": 64_000,
    "claude-sonnet-4": 64_000,
    "claude-opus-4-1": 32_000,
    "claude-opus-4": 32_000,
    "claude-3-7-sonnet": 64_000,
    "claude-3-5-haiku": 8_192,
    "claude-3-haiku": 4_096,
}
"""Each model's largest ``max_tokens`` (the models overview's "max output"), by name prefix; a
model not listed is not checked. The API refuses more rather than lowering it."""


@dataclass(frozen=True)
class ApiError:
    """An error answer: HTTP status, Anthropic error type and message, extra headers."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, request_id: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.error_type, "message": self.message}, "request_id": request_id}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


class ThinkingSigner:
    """Signs thinking text and redacted-thinking payloads so the server can verify them later.

    Args:
        secret: The server's key; two servers with the same secret accept each other's blocks.
    """

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._redacted = itertools.count(1)

    def _mac(self, data: bytes) -> bytes:
        return hmac.new(self._secret, data, hashlib.sha256).digest()

    def sign(self, thinking: str) -> str:
        """The signature the server issues for this thinking text."""
        return base64.b64encode(b"sig1" + self._mac(b"thinking\x00" + thinking.encode())).decode()

    def verify(self, thinking: str, signature: str) -> bool:
        return hmac.compare_digest(self.sign(thinking), signature)

    def redacted_data(self) -> str:
        """A fresh opaque ``data`` payload for a ``redacted_thinking`` block."""
        payload = f"redacted-{next(self._redacted)}".encode()
        return base64.b64encode(payload + b"|" + self._mac(b"redacted\x00" + payload)).decode()

    def verify_redacted(self, data: str) -> bool:
        try:
            raw = base64.b64decode(data.encode(), validate=True)
        except ValueError:
            return False
        payload, sep, mac = raw.partition(b"|")
        return bool(sep) and hmac.compare_digest(mac, self._mac(b"redacted\x00" + payload))


@dataclass(frozen=True)
class _Located:
    """A content block with its position in the request (``messages.{message}.content.{index}``)."""

    message: int
    index: int
    block: dict[str, Any]


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _turns(messages: list[dict[str, Any]]) -> list[tuple[str, list[int]]]:
    """Consecutive same-role messages grouped into turns: (role, message indexes)."""
    turns: list[tuple[str, list[int]]] = []
    for index, message in enumerate(messages):
        role = str(message.get("role"))
        if turns and turns[-1][0] == role:
            turns[-1][1].append(index)
        else:
            turns.append((role, [index]))
    return turns


def _turn_blocks(messages: list[dict[str, Any]], indexes: list[int]) -> Iterator[_Located]:
    for message_index in indexes:
        for block_index, block in enumerate(_blocks(messages[message_index])):
            yield _Located(message_index, block_index, block)


def _ids(messages: list[dict[str, Any]], indexes: list[int], kind: str, key: str) -> set[Any]:
    """The ``key`` of every ``kind`` block in the given messages (tool_use ids, tool_result ids)."""
    return {located.block.get(key) for located in _turn_blocks(messages, indexes) if located.block.get("type") == kind}


def count_cache_breakpoints(body: dict[str, Any]) -> int:
    """Blocks carrying ``cache_control`` in tools, system and messages (tool_result content included)."""

    def marked(block: Any) -> int:
        if not isinstance(block, dict):
            return 0
        inner = block.get("content")
        nested = sum(marked(item) for item in inner) if isinstance(inner, list) else 0
        return (1 if block.get("cache_control") is not None else 0) + nested

    system = body.get("system")
    total = sum(marked(tool) for tool in body.get("tools") or [])
    total += sum(marked(block) for block in system) if isinstance(system, list) else 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        total += sum(marked(block) for block in content) if isinstance(content, list) else 0
    return total


def check_request(body: Any, signer: ThinkingSigner, strict_alternation: bool = False) -> ApiError | None:
    """The first rule the request breaks, or ``None`` when the real API would accept it."""
    if not isinstance(body, dict):
        return invalid("Request body must be a JSON object")  # wording not found; ours
    for name in ("model", "messages", "max_tokens"):
        if name not in body:
            return invalid(f"{name}: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return invalid("max_tokens: Input should be greater than or equal to 1")
    ceiling = output_ceiling(str(body["model"]))
    if ceiling is not None and max_tokens > ceiling:
        return invalid(f"max_tokens: {max_tokens} > {ceiling}, which is the maximum allowed number of output tokens "
                       f"for {body['model']}")
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return invalid("messages: at least one message is required")
    for rule in (_thinking_budget, _roles, _content, _cache_limit, _tools_defined, _signatures, _tool_pairs):
        error = rule(body, messages, signer, strict_alternation)
        if error is not None:
            return error
    return _final_assistant(body, messages)


def output_ceiling(model: str) -> int | None:
    """The largest ``max_tokens`` the API takes for ``model`` (longest listed prefix), if listed."""
    prefixes = [prefix for prefix in MAX_OUTPUT_TOKENS if model.startswith(prefix)]
    return MAX_OUTPUT_TOKENS[max(prefixes, key=len)] if prefixes else None


def _thinking_enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _thinking_budget(body: dict[str, Any], _m: list[dict[str, Any]], _s: ThinkingSigner, _a: bool) -> ApiError | None:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if budget is None:
        return invalid("thinking.enabled.budget_tokens: Field required")
    if not isinstance(budget, int) or budget < 1024:
        return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
    if budget >= body["max_tokens"]:
        return invalid(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
            f"{EXTENDED_THINKING_DOCS}#max-tokens-and-context-window-size"
        )
    return None


def _roles(_b: dict[str, Any], messages: list[dict[str, Any]], _s: ThinkingSigner, strict: bool) -> ApiError | None:
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return invalid(f"messages.{index}.role: Input should be 'user' or 'assistant'")
    if not strict:
        return None
    if messages[0]["role"] != "user":
        return invalid('messages: first message must use the "user" role')
    for previous, current in itertools.pairwise(messages):
        if previous["role"] == current["role"]:
            role = current["role"]
            return invalid(f'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row')
    return None


def _content(_b: dict[str, Any], messages: list[dict[str, Any]], _s: ThinkingSigner, _a: bool) -> ApiError | None:
    last = len(messages) - 1
    for index, message in enumerate(messages):
        content = message.get("content")
        if content in ("", []) and not (index == last and message["role"] == "assistant"):
            return invalid(
                f"messages.{index}: all messages must have non-empty content except for the optional final assistant message"
            )
        texts = [str(block.get("text", "")) for block in _blocks(message) if block.get("type") == "text"]
        if "" in texts and isinstance(content, list):
            return invalid("messages: text content blocks must be non-empty")
        if texts and not any(text.strip() for text in texts):
            # Whitespace is refused unless another text block of the message says something (a
            # string content counts as a text block); tool blocks do not help.
            return invalid("messages: text content blocks must contain non-whitespace text")
    return None


def _cache_limit(body: dict[str, Any], _m: list[dict[str, Any]], _s: ThinkingSigner, _a: bool) -> ApiError | None:
    found = count_cache_breakpoints(body)
    if found > 4:
        return invalid(f"A maximum of 4 blocks with cache_control may be provided. Found {found}.")
    return None


def _tools_defined(body: dict[str, Any], messages: list[dict[str, Any]], _s: ThinkingSigner, _a: bool) -> ApiError | None:
    uses_tools = any(block.get("type") in ("tool_use", "tool_result") for message in messages for block in _blocks(message))
    if uses_tools and not body.get("tools"):
        return invalid("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    return None


def _signatures(_b: dict[str, Any], messages: list[dict[str, Any]], signer: ThinkingSigner, _a: bool) -> ApiError | None:
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        for block_index, block in enumerate(_blocks(message)):
            where = f"messages.{index}.content.{block_index}"
            if block.get("type") == "thinking":
                signature = block.get("signature")
                if signature is None:
                    return invalid(f"{where}.thinking.signature: Field required")
                if not isinstance(signature, str) or not signer.verify(str(block.get("thinking", "")), signature):
                    return invalid(f"{where}: Invalid `signature` in `thinking` block")
            elif block.get("type") == "redacted_thinking":
                data = block.get("data")
                if not isinstance(data, str) or not signer.verify_redacted(data):
                    # The real wording for a tampered redacted block was not found; modelled on the signature one.
                    return invalid(f"{where}: Invalid `data` in `redacted_thinking` block")
    return None


def _tool_pairs(_b: dict[str, Any], messages: list[dict[str, Any]], _s: ThinkingSigner, _a: bool) -> ApiError | None:
    turns = _turns(messages)
    for position, (role, indexes) in enumerate(turns):
        previous = turns[position - 1] if position > 0 else None
        if role == "user":
            offered = _ids(messages, previous[1], "tool_use", "id") if previous is not None and previous[0] == "assistant" else set()
            for located in _turn_blocks(messages, indexes):
                if located.block.get("type") == "tool_result" and located.block.get("tool_use_id") not in offered:
                    return invalid(
                        f"messages.{located.message}.content.{located.index}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {located.block.get('tool_use_id')}. Each `tool_result` block must have "
                        "a corresponding `tool_use` block in the previous message."
                    )
            continue
        uses = [located for located in _turn_blocks(messages, indexes) if located.block.get("type") == "tool_use"]
        if not uses:
            continue
        following = turns[position + 1] if position + 1 < len(turns) else None
        answered = _ids(messages, following[1], "tool_result", "tool_use_id") if following is not None else set()
        missing = [str(located.block.get("id")) for located in uses if located.block.get("id") not in answered]
        if missing:
            return invalid(
                f"messages.{uses[-1].message}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
            )
    return None


def _final_assistant(body: dict[str, Any], messages: list[dict[str, Any]]) -> ApiError | None:
    """The rules about the last assistant message: thinking first when on, none when off, no trailing space."""
    assistant_indexes = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    if _thinking_enabled(body) and assistant_indexes:
        # The API checks the final assistant message, the one that opened the current tool loop.
        index = assistant_indexes[-1]
        blocks = _blocks(messages[index])
        if any(block.get("type") == "tool_use" for block in blocks):
            first = blocks[0].get("type") if blocks else "nothing"
            if first not in ("thinking", "redacted_thinking"):
                return invalid(
                    f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. "
                    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
                    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
                    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
                    f"our documentation at {EXTENDED_THINKING_DOCS}"
                )
    if messages[-1]["role"] != "assistant":
        return None
    index = len(messages) - 1
    blocks = _blocks(messages[index])
    if not _thinking_enabled(body):
        for block_index, block in enumerate(blocks):
            if block.get("type") in ("thinking", "redacted_thinking"):
                return invalid(
                    f"messages.{index}.content.{block_index}: When thinking is disabled, an `assistant` message in the "
                    "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
                )
    if blocks and blocks[-1].get("type") == "text" and str(blocks[-1].get("text", "")) != str(blocks[-1].get("text", "")).rstrip():
        return invalid("messages: final assistant content cannot end with trailing whitespace")
    return None
