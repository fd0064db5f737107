"""The HTTP transports (streamable HTTP, the older HTTP+SSE) with what the server answered.

The SDK turns an HTTP error into "Server returned an error response" and drops the status, so
a wrong token (401), a forbidden endpoint (403) or an SSE server configured as streamable HTTP
(405) all read alike. A response hook on the HTTP client keeps the last error status, and a
failed start names it with what to change.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2


@dataclass
class HttpAnswers:
    """The last HTTP error status a server answered, if any."""

    status: int | None = None
    reason: str = ""

    async def record(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.status, self.reason = response.status_code, response.reason_phrase

    def explain(self, transport: str, fields: str) -> str:
        """What the last error answer says to the user (empty when there was none).

        Args:
            transport: ``http`` or ``sse``.
            fields: Where the server is configured (``.mcp.json``, ``[mcp.servers.NAME]``).
        """
        if self.status is None:
            return ""
        said = f"; the server answered HTTP {self.status} {self.reason}".rstrip()
        if self.status in (401, 403):
            return said + f": check the credentials in the headers of {fields} (Authorization = \"Bearer ${{TOKEN}}\")"
        if self.status in (404, 405) and transport == "http":
            return said + f": is the url right? An older HTTP+SSE server needs type = \"sse\" in {fields}"
        if self.status in (404, 405):
            return said + f": is the url right? A streamable HTTP server needs type = \"http\" in {fields}"
        return said

    def _factory(self, headers: dict[str, str] | None = None, timeout: Any = None,
                 auth: Any = None) -> httpx2.AsyncClient:
        """The SDK's HTTP client, with the hook (the SSE transport takes a factory)."""
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(self.record)
        return client

    def sse(self, url: str, headers: dict[str, str], timeout_s: float) -> Any:
        from mcp.client.sse import sse_client

        return sse_client(url, headers=headers or None, timeout=timeout_s, httpx_client_factory=self._factory)

    @contextlib.asynccontextmanager
    async def streamable_http(self, url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
        """The SDK's streamable HTTP transport with our headers; the SDK leaves closing an HTTP
        client it was given to its owner, so it is closed here."""
        from mcp.client.streamable_http import streamable_http_client

        async with self._factory(headers=headers or None) as client:
            async with streamable_http_client(url, http_client=client) as streams:
                yield streams
