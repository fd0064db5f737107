"""A server's answer to a tool call as the text the model reads.

Text blocks are joined; images, audio and binary resources are described (their bytes would
fill the context with base64; the session attaches images for a model that reads them);
embedded text resources are shown with their URI; a result with
only structured content shows it as JSON. ``is_error`` results become error results the model
reads. The text is cut like any tool's output: head and tail kept, the cut marked.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

from agentcli.tools.base import ToolResult
from agentcli.tools.text import truncate_middle, valid_text

if TYPE_CHECKING:
    from mcp_types import CallToolResult, ContentBlock


MAX_ATTACHMENTS = 4
MAX_ATTACHMENT_CHARS = 6_800_000
"""Base64 of about 5 MB, the largest image the main providers accept."""
_ATTACHABLE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def convert_result(result: CallToolResult, limit: int, *, server: str) -> ToolResult:
    """The model's view of ``result``, cut to ``limit`` characters."""
    parts = [_describe(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    text = valid_text(truncate_middle("\n".join(parts), limit))
    data: dict[str, Any] = {"server": server}
    images = [(block.mime_type, block.data) for block in result.content if block.type == "image"]
    if images:
        data["images"] = [mime for mime, _ in images]
        # Shown to a model that reads images (the session decides); each within what providers take.
        data["attachments"] = [(mime, b64) for mime, b64 in images
                               if mime in _ATTACHABLE and len(b64) <= MAX_ATTACHMENT_CHARS][:MAX_ATTACHMENTS]
    if result.is_error:
        message = text.strip() or "the tool reported an error without a message"
        return ToolResult(ok=False, output=f"Error: {message}", error=message, data=data)
    return ToolResult(ok=True, output=text if text.strip() else "(the tool returned nothing)", data=data)


def _describe(block: ContentBlock) -> str:
    if block.type == "text":
        return block.text
    if block.type == "image":
        return f"[image: {block.mime_type}, {_size(block.data)}]"
    if block.type == "audio":
        return f"[audio: {block.mime_type}, {_size(block.data)}; not shown to the model]"
    if block.type == "resource_link":
        about = f" — {block.description}" if block.description else ""
        return f"[resource: {block.name} <{block.uri}>{about}]"
    resource = block.resource
    mime = f" ({resource.mime_type})" if resource.mime_type else ""
    if hasattr(resource, "text"):
        return f"--- resource {resource.uri}{mime} ---\n{resource.text}"
    return f"[binary resource {resource.uri}{mime}, {_size(resource.blob)}]"


def _size(encoded: str) -> str:
    try:
        size = len(base64.b64decode(encoded, validate=False))
    except (binascii.Error, ValueError):
        size = len(encoded) * 3 // 4
    return f"{size:,} bytes" if size < 10_240 else f"{size / 1024:,.0f} KB"
