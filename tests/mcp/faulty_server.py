"""A small MCP server built with the SDK for the cases the published servers do not show:
faults (a slow start, a crash mid-call, a tool that raises, a malformed schema), images,
embedded resources, long output, a tool that writes files, and tools that change the server's
own tool list (and say so, as each protocol version does).

Run as ``python faulty_server.py [--slow-start S] [--http PORT]``: over stdio by default, over
streamable HTTP on 127.0.0.1 with ``--http`` (port 0 picks one and prints ``listening on PORT``).
"""

from __future__ import annotations

import os

if os.environ.get("FAULTY_PID_FILE"):  # first thing, before the SDK's imports take their time
    with open(os.environ["FAULTY_PID_FILE"], "w") as pid_file:
        pid_file.write(str(os.getpid()))

import argparse
import asyncio
import sys
import threading
import time
from collections.abc import Callable
from typing import Any
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import EmbeddedResource, TextResourceContents, ToolAnnotations

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

server = MCPServer("faulty")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text as given."""
    return text


@server.tool()
def fail(reason: str = "it went wrong") -> str:
    """Always raise."""
    raise ValueError(reason)


@server.tool()
def crash() -> str:
    """End the server process in the middle of the call."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def getenv(name: str) -> str:
    """An environment variable of the server process, or (unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
def exit_later() -> str:
    """Answer, then end the server process a moment later (a server dying between calls)."""
    threading.Timer(0.2, os._exit, (4,)).start()
    return "exiting"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def slow(seconds: float) -> str:
    """Answer after a while."""
    if os.environ.get("FAULTY_PID_FILE"):  # tells a test the call is under way
        Path(os.environ["FAULTY_PID_FILE"] + ".slow").touch()  # noqa: ASYNC240 - a tiny test marker
    await asyncio.sleep(seconds)
    return "done"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PNG, format="png")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def document() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        type="resource",
        resource=TextResourceContents(uri="memo://notes/1", mime_type="text/plain", text="remember the milk"),
    )


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def big(lines: int) -> str:
    """Many numbered lines."""
    return "\n".join(f"line {i}" for i in range(lines))


@server.tool()
def touch(path: str, text: str = "written by the faulty server\n") -> str:
    """Write a file relative to the server's working folder."""
    Path(path).write_text(text)
    return f"wrote {path}"


async def _tools_changed(ctx: Context) -> None:
    """Tell the client on a listen stream (2026-07-28) and with a notification (earlier versions);
    ``FAULTY_CHANGE_SIGNAL=listen`` or ``=notification`` sends only the one."""
    signal = os.environ.get("FAULTY_CHANGE_SIGNAL", "both")
    if signal in ("both", "listen"):
        await ctx.notify_tools_changed()
    if signal in ("both", "notification"):
        await ctx.session.send_tool_list_changed()


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool NAME that answers with its own name."""
    def grown() -> str:
        return f"I am {name}"

    server.add_tool(grown, name=name, description=f"The grown tool {name}.",
                    annotations=ToolAnnotations(read_only_hint=True))
    await _tools_changed(ctx)
    return f"grew {name}"


@server.tool()
async def prune(name: str, ctx: Context) -> str:
    """Remove the tool NAME."""
    server.remove_tool(name)
    await _tools_changed(ctx)
    return f"pruned {name}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def broken(x: int) -> str:
    """A tool whose schema is replaced by a malformed one below."""
    return str(x)


server._tool_manager.get_tool("broken").parameters = {  # type: ignore[union-attr]
    "type": "object", "properties": {"x": {"type": "no-such-type"}},
}


def _numbered(number: int) -> Callable[[], str]:
    def tool() -> str:
        return f"tool {number}"

    return tool


for _number in range(int(os.environ.get("FAULTY_MANY", "0"))):
    # A server listing hundreds of tools (as some cloud providers' servers do).
    server.add_tool(_numbered(_number), name=f"many_{_number:03d}", description=f"Numbered tool {_number}.",
                    annotations=ToolAnnotations(read_only_hint=True))


if os.environ.get("FAULTY_LEGACY"):
    # A server from before the 2026-07-28 protocol (as the published servers are): no
    # server/discover and no per-request envelopes, so clients fall back to the initialize
    # handshake and to notifications.
    import mcp.server.runner

    server._lowlevel_server._request_handlers.pop("server/discover")
    mcp.server.runner._has_modern_envelope = lambda params: False


def _requiring(app: Any, authorization: str) -> Any:
    """``app`` answering 401 to a request without the ``Authorization`` header given."""
    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != authorization.encode():
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--fail-start", default=None, help="print this to stderr and exit 1 at once")
    parser.add_argument("--flood", type=int, default=0, help="write this many bytes of lines to stderr first")
    args = parser.parse_args()
    if args.flood:
        line = "noise " + "x" * 93 + "\n"
        sys.stderr.write(line * (args.flood // len(line)) + "flood done\n")
        sys.stderr.flush()
    if args.fail_start:
        print(args.fail_start, file=sys.stderr)
        sys.exit(1)
    if args.slow_start:
        time.sleep(args.slow_start)
    if args.http is None:
        if banner := os.environ.get("FAULTY_BANNER"):
            print(banner, flush=True)  # on stdout, as careless servers do: not JSON-RPC
        server.run("stdio")
        return
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", args.http))
    port = sock.getsockname()[1]
    app = server.sse_app() if os.environ.get("FAULTY_SSE") else server.streamable_http_app()
    if token := os.environ.get("FAULTY_HTTP_TOKEN"):
        app = _requiring(app, f"Bearer {token}")
    print(f"listening on {port}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
