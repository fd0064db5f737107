"""One classification of model-call failures, at the model edge, in words a user can act on.

litellm raises its own exception classes (mapped from each provider's statuses) and wraps
transport failures; this module turns any of them into a :class:`ModelCallError` with a ``kind``
the chart's guards read, one line of message (what is wrong and what to do), and the raw text
as ``detail`` for the log only. Measured with litellm 1.106.2 against the test servers in
``tests/support`` (see ``tests/llm_servers``): Anthropic's 529 arrives as ``InternalServerError``
500 (litellm matches "Overloaded" in the body), a stream cut mid-way as ``MidStreamFallbackError``
(a ``ServiceUnavailableError``), "prompt is too long" as ``ContextWindowExceededError`` (a
``BadRequestError``: checked first), a repeated chunk as ``InternalServerError``.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from types import ModuleType

from agentcli.llm.types import ErrorKind, ModelCallError

_MAX_LINE = 240

KEY_HELP = "set it in the environment (or the provider's usual key variable), then resume"

# The variables litellm reads a provider's key from (its ``validate_environment``), for the
# providers people use most; another provider's key is looked for as ``<PROVIDER>_API_KEY``.
_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "azure": ("AZURE_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "huggingface": ("HUGGINGFACE_API_KEY",),
    "datarobot": ("DATAROBOT_API_TOKEN",),
}


def key_variables(provider: str) -> tuple[str, ...]:
    return _KEY_VARIABLES.get(provider, (f"{provider.upper()}_API_KEY",))


def key_source(model: str, environ: Mapping[str, str], *, placeholder: bool) -> str | None:
    """Where the key sent for ``model`` came from, in words for the "rejected key" message.

    Args:
        model: The litellm model string called.
        environ: The environment the key was read from.
        placeholder: No key was set and a stand-in was sent (a local OpenAI-compatible server).

    Returns:
        E.g. "ANTHROPIC_API_KEY", "GEMINI_API_KEY or GOOGLE_API_KEY", or None when no known
        variable is set (a key litellm found some other way).
    """
    if placeholder:
        return None
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    present = [name for name in key_variables(provider) if environ.get(name)]
    return " or ".join(present) if present else None


def _rejected_key(provider: str, model: str, raw: str, source: str | None, placeholder: bool) -> str:
    """The one line for a key the provider refused, naming the variable that supplied it."""
    said = _provider_message(raw)
    if placeholder:
        variable = " or ".join(key_variables(provider))
        return f"the server for {model} wants an API key and {variable} is not set; set it, then resume ({said})"
    if source is None:
        return f"{provider} rejected the API key for {model}: check the key litellm found for it, then resume ({said})"
    return f"{provider} rejected the API key for {model} from {source}: check {source}, then resume ({said})"


class StreamStalled(Exception):
    """No bytes arrived from the model for longer than the stall timeout."""


class MissingKey(Exception):
    """The provider needs a key and none is set: not worth a request."""


class StreamEndedEmpty(Exception):
    """The stream ended without text, reasoning or a tool call: the server gave up mid-way."""


class StreamEndedInACall(Exception):
    """The stream ended cleanly in the middle of a tool call's arguments, without a finish reason."""


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def retry_after(error: BaseException) -> float | None:
    """The delay the server asked for, in seconds, if the failure carried a hint: OpenAI's
    ``retry-after-ms`` first (finer, and what its own SDK reads first), then ``Retry-After`` in
    seconds or as an HTTP date (RFC 9110 allows both)."""
    for headers in (getattr(error, "litellm_response_headers", None),
                    getattr(getattr(error, "response", None), "headers", None)):
        if not headers:
            continue
        try:
            millis, value = headers.get("retry-after-ms"), headers.get("retry-after")
        except AttributeError:
            continue
        delay = _seconds(millis, scale=1000.0) if millis is not None else None
        if delay is None and value is not None:
            delay = _seconds(value, scale=1.0)
            if delay is None:
                delay = _until(str(value))
        if delay is not None:
            return delay
    return None


def _seconds(value: object, *, scale: float) -> float | None:
    try:
        return max(0.0, float(str(value)) / scale)
    except ValueError:
        return None


def _until(date: str) -> float | None:
    """Seconds from now until an HTTP date (``Wed, 21 Oct 2026 07:28:00 GMT``)."""
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(
    error: BaseException,
    litellm: ModuleType,
    model: str,
    *,
    missing_keys: list[str],
    key_from: str | None = None,
    placeholder_key: bool = False,
) -> ModelCallError:
    """The failure of a call to ``model``, classified, in one line.

    Args:
        error: What the call raised.
        litellm: The litellm module (its exception classes).
        model: The litellm model string called.
        missing_keys: The key variables litellm looks for and did not find (for ``auth``).
        key_from: The variable the key sent came from (see `key_source`), named when it is rejected.
        placeholder_key: No key was set and a stand-in was sent to a custom server.
    """
    raw = " ".join(str(error).split()) or type(error).__name__
    status = status_of(error)
    kind, message = _kind(error, litellm, model, raw, status, missing_keys)
    if kind == "auth" and not missing_keys:
        provider = model.split("/", 1)[0] if "/" in model else "the provider"
        message = _rejected_key(provider, model, raw, key_from, placeholder_key)
    window, prompt = overflow_figures(raw) if kind == "overflow" else (None, None)
    return ModelCallError(_clip(message), kind=kind, status=status, detail=raw, window=window, prompt_tokens=prompt)


_OVERFLOW_FIGURES = (
    # Anthropic: "prompt is too long: 215000 tokens > 200000 maximum"
    re.compile(r"prompt is too long: (?P<prompt>\d+) tokens > (?P<window>\d+) maximum"),
    # Anthropic, the prompt fits but not with the output limit: "input length and `max_tokens`
    # exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` …"
    re.compile(r"exceed context limit: (?P<prompt>\d+) \+ \d+ > (?P<window>\d+)"),
    # OpenAI: "maximum context length is 8192 tokens. However, you requested 9000 tokens (7000 in the messages, …"
    re.compile(r"maximum context length is (?P<window>\d+) tokens.*?(?P<prompt>\d+) in the messages"),
    re.compile(r"maximum context length is (?P<window>\d+) tokens.*?resulted in (?P<prompt>\d+) tokens"),
    re.compile(r"maximum context length is (?P<window>\d+) tokens"),
)


def overflow_figures(raw: str) -> tuple[int | None, int | None]:
    """The window and the prompt's size a provider's overflow message states, when it states them."""
    for pattern in _OVERFLOW_FIGURES:
        found = pattern.search(raw)
        if found:
            figures = found.groupdict()
            prompt = figures.get("prompt")
            return int(figures["window"]), int(prompt) if prompt else None
    return None, None


def _kind(
    error: BaseException, litellm: ModuleType, model: str, raw: str, status: int | None, missing_keys: list[str]
) -> tuple[ErrorKind, str]:
    from litellm.exceptions import MidStreamFallbackError

    provider = model.split("/", 1)[0] if "/" in model else "the provider"
    if isinstance(error, StreamStalled):
        return "stalled", f"{model} sent nothing for {error}; the call was cut off"
    if isinstance(error, StreamEndedEmpty):
        return "cut_stream", f"{model}'s reply ended empty (the server stopped mid-way)"
    if isinstance(error, StreamEndedInACall):
        return "cut_stream", f"{model}'s reply ended in the middle of a tool call (the server stopped mid-way)"
    if isinstance(error, litellm.ContextWindowExceededError):
        return "overflow", (f"the conversation is longer than {model}'s context window; start a new session "
                            "or resume with less history")
    if isinstance(error, (MissingKey, litellm.AuthenticationError)) or status in (401, 403):
        if missing_keys:
            return "auth", f"no API key for {model}: {' or '.join(missing_keys)} is not set; {KEY_HELP}"
        return "auth", f"{provider} rejected the API key for {model}: check the key ({_provider_message(raw)})"
    if isinstance(error, litellm.ContentPolicyViolationError):
        return "refused", f"{provider} declined to answer: {_provider_message(raw)}"
    if isinstance(error, MidStreamFallbackError) and "overloaded" in raw.lower():
        # Anthropic's ``event: error`` of type overloaded_error inside a started stream.
        return "overloaded", f"{provider} is overloaded (its reply broke off mid-stream); try again shortly"
    if isinstance(error, MidStreamFallbackError):
        return "cut_stream", f"{model}'s reply broke off mid-stream ({_cause(error) or 'connection lost'})"
    if isinstance(error, litellm.RateLimitError) or status == 429:
        return "rate_limit", f"{provider} rate limit reached: {_provider_message(raw)}"
    if status == 529 or "overloaded" in raw.lower():
        return "overloaded", f"{provider} is overloaded; try again shortly"
    if "repeating the same chunk" in raw:
        return "cut_stream", f"{model} kept repeating the same output; the stream was stopped"
    if isinstance(error, litellm.NotFoundError) or status == 404:
        return "bad_model", (f"{provider} has no model {model.split('/', 1)[-1]!r} (or the api base is wrong): "
                             f"{_provider_message(raw)}")
    if isinstance(error, litellm.Timeout) or status == 408:
        return "stalled", f"{model} did not answer in time"
    network = _network_cause(error)
    if network is not None:
        return "network", f"cannot reach {provider}: {network}"
    if isinstance(error, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)) or (
        status is not None and status >= 500
    ):
        return "server", f"{provider} server error{f' {status}' if status else ''}: {_provider_message(raw)}"
    if isinstance(error, litellm.APIConnectionError):
        return "network", f"cannot reach {provider}: {_provider_message(raw)}"
    if isinstance(error, litellm.BadRequestError) and "LLM Provider NOT provided" in raw:
        return "bad_model", f"{model!r} names no provider litellm knows (write it as provider/model)"
    return "bad_request", f"{provider} rejected the request: {_provider_message(raw)}"


_DNS = ("Name or service not known", "nodename nor servname", "Temporary failure in name resolution",
        "No address associated", "getaddrinfo")
_REFUSED = ("Connection refused", "ConnectionRefused")
_TLS = ("CERTIFICATE_VERIFY_FAILED", "SSLError", "SSL: ", "certificate verify failed", "TLSV1")
_UNREACHABLE = ("Network is unreachable", "No route to host", "Cannot connect to host", "ConnectError",
                "ClientConnectorError", "ConnectTimeout", "Connection timed out")
_DROPPED = ("Connection reset", "Server disconnected", "RemoteProtocolError", "ServerDisconnectedError",
            "peer closed connection", "Broken pipe")


def _network_cause(error: BaseException) -> str | None:
    """One line of why the server could not be reached, read from the whole chain of causes
    (litellm often wraps an aiohttp or httpx error in a class that says nothing of it)."""
    seen: set[int] = set()
    texts: list[str] = []
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            texts.append("getaddrinfo")
        if isinstance(current, ssl.SSLError):
            texts.append("SSLError")
        if isinstance(current, ConnectionRefusedError):
            texts.append("Connection refused")
        texts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__ or getattr(current, "original_exception", None)
    text = " | ".join(texts)
    if any(marker in text for marker in _DNS):
        return "the host name does not resolve (no network, or a typo in the api base)"
    if any(marker in text for marker in _REFUSED):
        return "the connection was refused (is the server running at the api base?)"
    if any(marker in text for marker in _TLS):
        return "the TLS handshake failed (a proxy, or a certificate problem)"
    if any(marker in text for marker in _UNREACHABLE):
        return "the connection could not be made (no network, or the server is down)"
    if any(marker in text for marker in _DROPPED):
        return "the connection dropped"
    return None


def _cause(error: BaseException) -> str | None:
    original = getattr(error, "original_exception", None)
    return _network_cause(original) if isinstance(original, BaseException) else None


_PROVIDER_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"')
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(?:\w+Exception - |\w+Error - )?")


def _provider_message(raw: str) -> str:
    """The provider's own message when the error body holds one, else litellm's text unprefixed."""
    found = _PROVIDER_MESSAGE.search(raw)
    if found:
        return found.group(1).encode().decode("unicode_escape", errors="replace")
    return _LITELLM_PREFIX.sub("", raw)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 1] + "…"
