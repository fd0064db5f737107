"""One MCP server: started, listed, called, restarted once, and closed — on the official SDK.

A server may change its tools while it runs: it says so with ``notifications/tools/list_changed``
(protocol versions before 2026-07-28) or on a ``subscriptions/listen`` stream (2026-07-28); either
way the tools are listed again and the manager puts the new set in the registry.

The SDK's client is an async context manager whose task groups must be entered and left by one
task, so each connection has an *owner* task that enters it, publishes the client, and waits to
be told to stop; calls come from the session's tasks. A stdio server runs in a process group of
its own (the SDK starts it with ``start_new_session``) and its shutdown kills the whole group,
so closing a connection leaves no process behind. Its stderr goes to a log file, never to the
terminal a TUI is drawing on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from agentcli.mcp.failures import failure_reason
from agentcli.mcp.http import HttpAnswers
from agentcli.mcp.naming import tool_prefix
from agentcli.mcp.sdk_log import log_to
from agentcli.mcp.servers import ServerSpec, expand, expand_all
from agentcli.mcp.stderr_log import StderrLog, last_words, log_size
from agentcli.mcp.transport import first_of, watched

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, Tool

State = Literal["starting", "ready", "failed", "stopped"]

CLIENT_NAME = "agentcli"


class ServerUnavailable(Exception):
    """The server is not running (failed to start, stopped twice, closed); the message says why."""


@dataclass
class Status:
    """A server as the user sees it in listings."""

    name: str
    transport: str
    state: State = "starting"
    tools: int = 0
    """Tools offered to the model (after the allow/deny lists and schema checks)."""
    error: str | None = None
    restarts: int = 0
    source: str = ""
    skipped: list[str] = field(default_factory=list)
    """Tools left out, each with the reason."""
    cut: int = 0
    """Tools left out because a request would carry too many (``[mcp] max_tools``)."""
    log: str | None = None
    """Where its stderr goes (stdio servers with a log folder)."""

    @property
    def prefix(self) -> str:
        """What its tools' names begin with (``mcp__NAME__``; a long name is shortened)."""
        return tool_prefix(self.name)


class Connection:
    """One configured server and, while it runs, the SDK client talking to it."""

    def __init__(self, spec: ServerSpec, workspace: Path, log_dir: Path | None,
                 on_change: Callable[[Connection], None] = lambda _: None,
                 on_tools: Callable[[Connection], None] = lambda _: None) -> None:
        self.spec = spec
        self.workspace = workspace
        self.log_dir = log_dir
        self.status = Status(spec.name, spec.settings.transport, source=spec.source)
        self.tools: list[Tool] = []
        """The tools the server lists (all of them; the manager filters)."""
        self._on_change = on_change
        self._on_tools = on_tools
        """Called when the running server listed a different set of tools."""
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._restart: asyncio.Task[None] | None = None
        self._relist: asyncio.Task[None] | None = None
        self._relist_again = False
        self._closed = False
        self._log_from = 0
        """The size of the stderr log when the server last started."""
        self._http = HttpAnswers()
        """What an HTTP server last answered with an error (named when it fails to start)."""

    @property
    def name(self) -> str:
        return self.spec.name

    # -- starting ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and list the tools, within the server's ``timeout_s``; a failure is recorded
        in :attr:`status` (never raised: a broken server must not break the session)."""
        self.status.log = str(self.log_path) if self.log_path is not None else None
        self._log_from = log_size(self.log_path)  # the log may hold an earlier run's words: only this start's count
        self._set("starting")
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-{self.name}")
        timeout = self.spec.settings.timeout_s
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            ready.cancel()  # nobody waits for it any more: the owner must not set an exception on it
            await self._end_owner()
            self._set("failed", f"did not start within {timeout:g} s (timeout_s){self._stderr_tail()}")
        except Exception as error:  # noqa: BLE001 - whatever the server or SDK raised is the reason shown
            await self._end_owner()
            answered = self._http.explain(self.spec.settings.transport, self.spec.written_in)
            self._set("failed", failure_reason(error) + answered + self._stderr_tail())
        else:
            self._set("ready")

    async def _own(self, ready: asyncio.Future[None]) -> None:
        """The owner task: enter the client, list the tools, hold the connection until stopped."""
        try:
            from mcp import Client

            gone = asyncio.Event()
            async with self._errlog() as errlog:
                log_to(errlog)
                target = watched(self._target(errlog), gone.set)
                async with Client(target, client_info=_client_info(), message_handler=self._on_message) as client:
                    self.tools = await _list_all(client)
                    self._client = client
                    if not ready.done():
                        ready.set_result(None)
                    async with self._listening(client):
                        await first_of(self._stop.wait(), gone.wait())
                    if gone.is_set() and not self._stop.is_set():
                        self._client = None
                        self._died()  # it ended on its own: restarted once, by another task
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else ConnectionError(str(error)))
            if not isinstance(error, Exception):
                raise
        finally:
            self._client = None

    # -- a server changing its tools -------------------------------------------------------

    async def _on_message(self, message: object) -> None:
        """The SDK's message handler (on its receive loop: it must not wait for a reply here)."""
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._tools_changed()

    @contextlib.asynccontextmanager
    async def _listening(self, client: Client) -> AsyncIterator[None]:
        """Follow the server's tool changes on a ``subscriptions/listen`` stream where the
        protocol has one (2026-07-28); older servers send notifications instead."""
        async with contextlib.AsyncExitStack() as stack:
            follower: asyncio.Task[None] | None = None
            try:
                subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            except Exception:  # noqa: BLE001 - an older protocol (ListenNotSupportedError) or a server that cannot listen: it still serves its tools
                pass
            else:
                if subscription.honored.tools_list_changed:
                    follower = asyncio.create_task(self._follow(subscription), name=f"mcp-{self.name}-listen")
            try:
                yield
            finally:
                if follower is not None:
                    follower.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await follower

    async def _follow(self, subscription: AsyncIterator[object]) -> None:
        with contextlib.suppress(Exception):  # the stream ended: changes go unseen, calls still work
            async for _event in subscription:
                self._tools_changed()

    def _tools_changed(self) -> None:
        """List the tools again, in a task of its own; changes arriving meanwhile list once more."""
        if self._closed:
            return
        if self._relist is not None and not self._relist.done():
            self._relist_again = True
            return
        self._relist = asyncio.get_running_loop().create_task(self._list_again(), name=f"mcp-{self.name}-relist")

    async def _list_again(self) -> None:
        while True:
            self._relist_again = False
            client = self._client
            if client is None or self.status.state != "ready":
                return
            try:
                # Bounded like the first listing: a server that never answers must not leave this
                # task waiting for the whole session (and later changes unseen behind it).
                async with asyncio.timeout(self.spec.settings.timeout_s):
                    tools = await _list_all(client)
            except Exception:  # noqa: BLE001 - keep the tools known so far; a dead server is noticed by calls
                return
            if client is not self._client or self._closed:
                return
            if tools != self.tools:
                self.tools = tools
                self._on_tools(self)
            if not self._relist_again:
                return

    def _target(self, errlog: TextIO) -> Any:
        """What the SDK's ``Client`` connects to: a started command, or an HTTP transport."""
        settings = self.spec.settings
        of = f" of {self.spec.written_in}"
        if settings.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert settings.command is not None  # the settings model requires one for stdio
            cwd = self.workspace / expand(settings.cwd, where=f"cwd{of}") if settings.cwd else self.workspace
            # The whole environment, as Claude Code and other clients pass it: a server configured
            # for them (a GITHUB_TOKEN read from the environment) works unchanged. The SDK's own
            # default would pass only PATH, HOME and a few more.
            params = StdioServerParameters(
                command=expand(settings.command, where=f"command{of}"),
                args=[expand(arg, where=f"args[{index}]{of}") for index, arg in enumerate(settings.args)],
                env={**os.environ, **expand_all(settings.env, where="env", source=of)}, cwd=cwd)
            return stdio_client(params, errlog=errlog)
        assert settings.url is not None
        url = expand(settings.url, where=f"url{of}")
        headers = expand_all(settings.headers, where="headers", source=of)
        self._http = HttpAnswers()
        if settings.transport == "sse":
            return self._http.sse(url, headers, settings.timeout_s)
        return self._http.streamable_http(url, headers)

    @contextlib.asynccontextmanager
    async def _errlog(self) -> AsyncIterator[TextIO]:
        path = self.log_path
        if path is None:
            with open(os.devnull, "w", encoding="utf-8") as sink:  # noqa: ASYNC230 - /dev/null never blocks
                yield sink
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        log = StderrLog(path)
        try:
            yield log.open()
        finally:
            await log.close()

    @property
    def log_path(self) -> Path | None:
        """Where the server's stderr goes (stdio servers)."""
        if self.log_dir is None or self.spec.settings.transport != "stdio":
            return None
        return self.log_dir / f"{self.name}.log"

    def _stderr_tail(self) -> str:
        last = last_words(self.log_path, self._log_from) if self.log_path is not None else None
        if last is None:
            self.status.log = None  # it said nothing this time: no file to point at
        return f"; its last words: {last[:200]}" if last else ""

    # -- calling ----------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool by the server's own name.

        Raises:
            ServerUnavailable: the server is not running, or stopped during the call (it is
                restarted once in the background).
            TimeoutError: no answer within ``call_timeout_s``.
            mcp.shared.exceptions.MCPError: the server refused the call.
        """
        from mcp.shared.exceptions import MCPError
        from mcp_types.jsonrpc import CONNECTION_CLOSED

        if self._restart is not None and not self._restart.done():
            await asyncio.shield(self._restart)
        client = self._client
        if client is None or self.status.state != "ready":
            why = self.status.error or self.status.state
            raise ServerUnavailable(f"the MCP server '{self.name}' is not running ({why})")
        timeout = self.spec.settings.call_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await client.call_tool(tool, arguments)
        except MCPError as error:
            if error.code != CONNECTION_CLOSED:
                raise
            self._died()
            raise ServerUnavailable(
                f"the MCP server '{self.name}' stopped during the call (connection closed); "
                + ("it is being restarted: call again if the call is safe to repeat"
                   if self.status.restarts <= 1 and self._restart is not None else "it will not be restarted again")
            ) from None

    def _died(self) -> None:
        """The server's connection ended under a call: restart it once, in the background."""
        if self._closed or (self._restart is not None and not self._restart.done()):
            return
        if self.status.restarts >= 1:
            self._set("failed", "stopped again after its restart")
            self._restart = None
            asyncio.get_running_loop().create_task(self._end_owner())
            return
        self.status.restarts += 1
        self._restart = asyncio.get_running_loop().create_task(self._restart_once(), name=f"mcp-{self.name}-restart")

    async def _restart_once(self) -> None:
        await self._end_owner()
        if not self._closed:
            await self.start()

    # -- closing ----------------------------------------------------------------------------

    async def _end_owner(self) -> None:
        owner, self._owner = self._owner, None
        if owner is None:
            return
        self._stop.set()
        if self._client is None and not owner.done():
            # Still connecting: nothing to close politely. Cancelling runs the SDK's shielded
            # shutdown, which kills the process group.
            owner.cancel()
        try:
            # A clean stop lets the SDK close stdin, wait, then kill the process group.
            await asyncio.wait_for(asyncio.shield(owner), 8.0)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await owner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not owner.cancelled() or (current is not None and current.cancelling()):
                raise  # our own caller is being cancelled, not just the owner we cancelled
        except Exception:  # noqa: BLE001 - the owner already recorded how it ended
            pass

    async def close(self) -> None:
        """Stop the server (its whole process group) and wait until it is gone."""
        self._closed = True
        for task in (self._restart, self._relist):
            if task is not None:
                task.cancel()
        await self._end_owner()
        if self.status.state != "failed":
            self._set("stopped")

    def close_soon(self) -> None:
        """Ask the owner task to stop without waiting (from synchronous code); the event loop
        finishes the shutdown, and ``asyncio.run`` waits for it before it returns."""
        self._closed = True
        self._stop.set()

    def _set(self, state: State, error: str | None = None) -> None:
        self.status.state = state
        self.status.error = error
        self._on_change(self)


async def _list_all(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever is cut off
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _client_info() -> Any:
    from importlib.metadata import PackageNotFoundError, version

    from mcp_types import Implementation

    try:
        own = version("agentcli")
    except PackageNotFoundError:
        own = "0"
    return Implementation(name=CLIENT_NAME, version=own)
