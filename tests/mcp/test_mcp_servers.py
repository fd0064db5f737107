"""Real servers through the client: the published time and git servers and the faulty server
over stdio, the faulty server over streamable HTTP; faults end as notices or error results."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pygit2
import pytest

from agentcli.config import ToolSettings
from agentcli.config_mcp import McpServerSettings
from agentcli.mcp import Connection, McpManager, ServerList, ServerSpec, stderr_log
from agentcli.mcp.budget import share
from agentcli.tools.base import ToolContext
from agentcli.tools.registry import ToolRegistry, default_registry
from tests.mcp.conftest import faulty, git_server, group_alive, time_server
from tests.support.openai_rules import check_chat_request
from tests.support.waiting import eventually


def _manager(workspace: Path, notices: list[str], **servers: McpServerSettings) -> tuple[McpManager, ToolRegistry]:
    registry = ToolRegistry([])
    specs = tuple(ServerSpec(name, settings, "config") for name, settings in servers.items())
    return McpManager(ServerList(specs), workspace, registry, notify=notices.append), registry


def _context(workspace: Path, limit: int = 30_000) -> ToolContext:
    return ToolContext(workspace=workspace, settings=ToolSettings(max_output_chars=limit))


async def test_published_servers_over_stdio(workspace: Path, git_workspace: Path) -> None:
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, time=time_server(), git=git_server(git_workspace))
    manager.start(log_dir=workspace.parent / "logs")
    await registry.ready()
    try:
        assert {s.name: s.state for s in manager.statuses} == {"time": "ready", "git": "ready"}
        assert "mcp__time__get_current_time" in registry and "mcp__git__git_status" in registry
        assert notices[-1].startswith("MCP servers ready in ") and "time (2 tools)" in notices[-1]
        result = await registry.call("mcp__time__get_current_time", '{"timezone": "UTC"}', _context(workspace))
        assert result.ok and json.loads(result.output)["timezone"] == "UTC"
        wrong = await registry.call("mcp__time__get_current_time", '{"timezone": "Nowhere/Land"}', _context(workspace))
        assert not wrong.ok and "Nowhere/Land" in wrong.output
        (git_workspace / "new.txt").write_text("hello\n")
        status = await registry.call("mcp__git__git_status", json.dumps({"repo_path": str(git_workspace)}),
                                     _context(workspace))
        assert status.ok and "new.txt" in status.output
        declarations = registry.declarations
        assert declarations["mcp__git__git_status"].permission == "read"
        assert declarations["mcp__git__git_commit"].permission == "command"
        assert declarations["mcp__git__git_commit"].changes_files == "always"
    finally:
        await manager.aclose()
    assert all(s.state == "stopped" for s in manager.statuses)


async def test_servers_inherit_the_environment_and_get_their_own(workspace: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAULTY_INHERITED", "from the shell")
    manager, registry = _manager(workspace, [], faulty=faulty(env={"FAULTY_SET": "${FAULTY_INHERITED}, and more"}))
    manager.start()
    await registry.ready()
    try:
        inherited = await registry.call("mcp__faulty__getenv", '{"name": "FAULTY_INHERITED"}', _context(workspace))
        own = await registry.call("mcp__faulty__getenv", '{"name": "FAULTY_SET"}', _context(workspace))
        assert inherited.output == "from the shell" and own.output == "from the shell, and more"
    finally:
        await manager.aclose()


async def test_a_server_that_writes_files_commits_through_git(git_workspace: Path) -> None:
    notices: list[str] = []
    manager, registry = _manager(git_workspace, notices, git=git_server(git_workspace))
    manager.start()
    await registry.ready()
    try:
        (git_workspace / "a.txt").write_text("a\n")
        ctx = _context(git_workspace)
        added = await registry.call("mcp__git__git_add", json.dumps({"repo_path": str(git_workspace),
                                                                     "files": ["a.txt"]}), ctx)
        assert added.ok, added.output
        committed = await registry.call("mcp__git__git_commit", json.dumps({"repo_path": str(git_workspace),
                                                                            "message": "add a"}), ctx)
        assert committed.ok, committed.output
        assert pygit2.Repository(str(git_workspace)).head.peel(pygit2.Commit).message.strip() == "add a"
    finally:
        await manager.aclose()


async def test_faults_are_results_and_notices(workspace: Path) -> None:
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, faulty=faulty(call_timeout_s=1),
                                 missing=McpServerSettings(command="no-such-mcp-server-here"))
    manager.start()
    await registry.ready()
    ctx = _context(workspace, limit=2000)
    try:
        assert [n for n in notices if "'missing' is not available" in n and "not found" in n]
        assert [n for n in notices
                if "'faulty': left out the tool broken: its input schema" in n and "not valid JSON Schema" in n]
        assert "mcp__faulty__broken" not in registry
        raised = await registry.call("mcp__faulty__fail", '{"reason": "disk full"}', ctx)
        assert not raised.ok and raised.output.startswith("Error:")
        slow = await registry.call("mcp__faulty__slow", '{"seconds": 30}', ctx)
        assert not slow.ok and "did not answer within 1 s" in slow.output
        picture = await registry.call("mcp__faulty__picture", "{}", ctx)
        assert picture.ok and picture.output.startswith("[image: image/png")
        document = await registry.call("mcp__faulty__document", "{}", ctx)
        assert "memo://notes/1" in document.output and "remember the milk" in document.output
        big = await registry.call("mcp__faulty__big", '{"lines": 5000}', ctx)
        assert big.ok and "characters cut" in big.output and big.output.endswith("line 4999")
        bad = await registry.call("mcp__faulty__echo", '{"text": 5, "extra": true}', ctx)
        assert not bad.ok and "text" in bad.output, bad.output  # the server checks its own schema
    finally:
        await manager.aclose()


async def test_a_crash_mid_call_restarts_the_server_once(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, faulty=faulty(env={"FAULTY_PID_FILE": str(pid_file)}))
    manager.start()
    await registry.ready()
    ctx = _context(workspace)
    try:
        first_pid = int(pid_file.read_text())
        crashed = await registry.call("mcp__faulty__crash", "{}", ctx)
        assert not crashed.ok and "stopped during the call" in crashed.output and "restarted" in crashed.output
        echoed = await registry.call("mcp__faulty__echo", '{"text": "back"}', ctx)  # waits for the restart
        assert echoed.ok and echoed.output == "back"
        assert int(pid_file.read_text()) != first_pid
        assert manager.statuses[0].restarts == 1 and [n for n in notices if "'faulty' restarted" in n]
        again = await registry.call("mcp__faulty__crash", "{}", ctx)
        assert not again.ok and "will not be restarted again" in again.output
        gone = await registry.call("mcp__faulty__echo", '{"text": "x"}', ctx)
        assert not gone.ok and "not running" in gone.output
        assert manager.statuses[0].state == "failed"
    finally:
        await manager.aclose()


async def test_a_server_dying_between_calls_is_restarted_before_the_next(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, faulty=faulty(env={"FAULTY_PID_FILE": str(pid_file)}))
    manager.start()
    await registry.ready()
    try:
        first_pid = int(pid_file.read_text())
        answered = await registry.call("mcp__faulty__exit_later", "{}", _context(workspace))
        assert answered.ok and answered.output == "exiting"
        await eventually(lambda: any("'faulty' restarted" in n for n in notices), what="the restart")
        assert manager.statuses[0].state == "ready" and manager.statuses[0].restarts == 1
        assert int(pid_file.read_text()) != first_pid and not group_alive(first_pid)
        echoed = await registry.call("mcp__faulty__echo", '{"text": "still here"}', _context(workspace))
        assert echoed.ok and echoed.output == "still here"
    finally:
        await manager.aclose()


@pytest.mark.parametrize("legacy", [False, True], ids=["listen-stream", "legacy-notification"])
async def test_a_server_changing_its_tools_changes_the_registry(workspace: Path, legacy: bool) -> None:
    env = {"FAULTY_LEGACY": "1", "FAULTY_CHANGE_SIGNAL": "notification"} if legacy else {"FAULTY_CHANGE_SIGNAL": "listen"}
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, faulty=faulty(env=env))
    manager.start()
    await registry.ready()
    ctx = _context(workspace)
    try:
        client = manager.connections[0]._client
        assert client is not None and (client.protocol_version < "2026") == legacy
        assert "mcp__faulty__sprout" not in registry
        grew = await registry.call("mcp__faulty__grow", '{"name": "sprout"}', ctx)
        assert grew.ok and grew.output == "grew sprout"
        await eventually(lambda: "mcp__faulty__sprout" in registry, what="the new tool in the registry")
        assert any("'faulty' changed its tools: added mcp__faulty__sprout" in n for n in notices)
        assert registry.declarations["mcp__faulty__sprout"].permission == "read"
        answered = await registry.call("mcp__faulty__sprout", "{}", ctx)
        assert answered.ok and answered.output == "I am sprout"
        assert manager.statuses[0].tools == len(manager.tools_of("faulty"))

        pruned = await registry.call("mcp__faulty__prune", '{"name": "sprout"}', ctx)
        assert pruned.ok
        await eventually(lambda: "mcp__faulty__sprout" not in registry, what="the tool gone from the registry")
        assert any("removed mcp__faulty__sprout" in n for n in notices)
        assert not [n for n in notices if "restarted" in n]
    finally:
        await manager.aclose()


async def test_slow_start_within_and_past_the_timeout(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    notices: list[str] = []
    manager, registry = _manager(
        workspace, notices,
        patient=faulty("--slow-start", "1", timeout_s=60),
        hasty=faulty("--slow-start", "120", timeout_s=3, env={"FAULTY_PID_FILE": str(pid_file)}),
    )
    manager.start()
    await registry.ready()
    try:
        states = {s.name: s for s in manager.statuses}
        assert states["patient"].state == "ready" and "mcp__patient__echo" in registry
        assert states["hasty"].state == "failed" and "did not start within 3 s" in (states["hasty"].error or "")
        assert [n for n in notices if "'hasty' is not available" in n]
        # The server given up on is not left running.
        pid = int(pid_file.read_text())
        await eventually(lambda: not group_alive(pid), what="the timed-out server's process group to end")
    finally:
        await manager.aclose()


async def test_closing_leaves_no_process_behind(workspace: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    manager, registry = _manager(workspace, [], faulty=faulty(env={"FAULTY_PID_FILE": str(pid_file)}))
    manager.start()
    await registry.ready()
    pid = int(pid_file.read_text())
    assert os.getpgid(pid) == pid  # a process group of its own
    slow = asyncio.create_task(registry.call("mcp__faulty__slow", '{"seconds": 600}', _context(workspace)))
    await eventually(Path(f"{pid_file}.slow").exists, what="the slow call to be under way")
    await manager.aclose()
    assert not group_alive(pid)
    result = await slow
    assert not result.ok


async def test_streamable_http_with_headers_from_the_environment(workspace: Path, http_url: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAULTY_TOKEN", "s3cret")
    notices: list[str] = []
    settings = McpServerSettings(url=http_url, headers={"Authorization": "Bearer ${FAULTY_TOKEN}"})
    manager, registry = _manager(workspace, notices, remote=settings,
                                 stale=McpServerSettings(url=http_url, headers={"Authorization": "Bearer old"}))
    manager.start()
    await registry.ready()
    try:
        remote, stale = sorted(manager.statuses, key=lambda status: status.name != "remote")
        assert remote.state == "ready" and remote.transport == "http"
        assert stale.state == "failed" and "the server answered HTTP 401 Unauthorized: check the credentials in " \
            "the headers of [mcp.servers.stale]" in (stale.error or "")
        echoed = await registry.call("mcp__remote__echo", '{"text": "over http"}', _context(workspace))
        assert echoed.ok and echoed.output == "over http"
        raised = await registry.call("mcp__remote__fail", "{}", _context(workspace))
        assert not raised.ok
    finally:
        await manager.aclose()


async def test_a_server_that_exits_at_start_says_why(workspace: Path, tmp_path: Path) -> None:
    notices: list[str] = []
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "quiet.log").write_text("an earlier run's last words\n")  # logs outlive runs
    manager, registry = _manager(workspace, notices, broken=faulty("--fail-start", "database URL is not set"),
                                 quiet=McpServerSettings(command=sys.executable, args=["-c", "raise SystemExit(3)"]))
    manager.start(log_dir=tmp_path / "logs")
    await registry.ready()
    broken, quiet = manager.statuses
    assert broken.state == "failed" and "its last words: database URL is not set" in (broken.error or "")
    assert "database URL is not set" in (tmp_path / "logs" / "broken.log").read_text()
    assert [n for n in notices if "'broken' is not available" in n]
    # One that said nothing this time is not given the words of an earlier run, nor a log to read.
    assert quiet.state == "failed" and "earlier run" not in (quiet.error or "") and quiet.log is None
    await manager.aclose()


async def test_an_http_server_that_is_not_there(workspace: Path) -> None:
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, away=McpServerSettings(url="http://127.0.0.1:9/mcp", timeout_s=20))
    manager.start()
    await registry.ready()
    assert manager.statuses[0].state == "failed" and [n for n in notices if "'away' is not available" in n]
    await manager.aclose()


async def test_a_server_listing_more_tools_than_a_request_may_carry_is_cut_to_fit(workspace: Path) -> None:
    notices: list[str] = []
    registry = default_registry()
    own = len(registry.names)
    servers = ServerList((ServerSpec("huge", faulty(env={"FAULTY_MANY": "130"}), "config"),))
    manager = McpManager(servers, workspace, registry, notify=notices.append)
    manager.start()
    await registry.ready()
    try:
        tools = registry.schemas()
        assert len(tools) == 128
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
        assert check_chat_request(body) is None  # OpenAI would take the request
        refused = check_chat_request({**body, "tools": [*tools, tools[-1]]})  # and not one more tool
        assert refused is not None and refused.code == "array_above_max_length"
        assert "mcp__huge__echo" in registry and registry.names[:own] == default_registry().names
        status = manager.statuses[0]
        assert status.tools == 128 - own and status.cut == 142 - (128 - own)
        said = [n for n in notices if "tools left out" in n]
        assert len(said) == 1 and f"'huge': {status.cut} of its 142 tools left out" in said[0]
        assert "allow_tools or deny_tools in [mcp.servers.huge]" in said[0]
    finally:
        await manager.aclose()


def test_the_room_for_tools_is_shared_small_servers_first() -> None:
    assert share(100, {"a": 3, "b": 5}) == {"a": 3, "b": 5}
    assert share(10, {"small": 3, "big": 20, "bigger": 30}) == {"small": 3, "big": 3, "bigger": 4}
    assert share(7, {"x": 20, "y": 20}) == {"x": 3, "y": 4}
    assert share(-5, {"x": 2}) == {"x": 0}


async def test_an_unset_variable_or_a_whole_command_line_says_what_to_fix(workspace: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("R10_NO_SUCH_TOKEN", raising=False)
    notices: list[str] = []
    specs = (ServerSpec("gh", faulty(env={"GITHUB_TOKEN": "${R10_NO_SUCH_TOKEN}"}), ".mcp.json"),
             ServerSpec("docs", McpServerSettings(url="http://127.0.0.1:9/mcp",
                                                  headers={"Authorization": "Bearer ${R10_NO_SUCH_TOKEN}"}), "config"),
             # A command line written whole into `command`, a common slip.
             ServerSpec("whole", McpServerSettings(command=f"{sys.executable} -m mcp_server_time"), ".mcp.json"))
    manager = McpManager(ServerList(specs), workspace, ToolRegistry([]), notify=notices.append)
    manager.start()
    await manager.ready()
    await manager.aclose()
    errors = {status.name: status.error for status in manager.statuses}
    assert errors["gh"] == ("the environment variable R10_NO_SUCH_TOKEN is not set (used as ${R10_NO_SUCH_TOKEN} "
                            "in env.GITHUB_TOKEN of .mcp.json); set it, or write ${R10_NO_SUCH_TOKEN:-default}")
    assert "in headers.Authorization of [mcp.servers.docs])" in (errors["docs"] or "")
    assert errors["whole"] == f"the command was not found ({sys.executable} -m mcp_server_time); " \
        "give its arguments in `args`"


async def test_a_server_flooding_stderr_keeps_a_bounded_log_ending_with_its_last_words(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stderr_log, "MAX_LOG_BYTES", 64_000)
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, loud=faulty("--flood", "2000000"))
    manager.start(log_dir=tmp_path / "logs")
    await registry.ready()
    try:
        assert manager.statuses[0].state == "ready"
        echoed = await registry.call("mcp__loud__echo", '{"text": "heard"}', _context(workspace))
        assert echoed.ok and echoed.output == "heard"
    finally:
        await manager.aclose()
    log = (tmp_path / "logs" / "loud.log").read_bytes()
    assert len(log) <= 64_000 + 65_536  # at most one read past the limit before it is cut
    assert log.startswith(stderr_log.CUT_MARK) and b"flood done\n" in log
    assert log[len(stderr_log.CUT_MARK):].startswith(b"noise ")  # whole lines after the mark


async def test_the_older_sse_transport_and_an_sse_server_configured_as_http(workspace: Path, sse_url: str) -> None:
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, old=McpServerSettings(type="sse", url=sse_url),
                                 mistyped=McpServerSettings(url=sse_url))
    manager.start()
    await registry.ready()
    try:
        statuses = {status.name: status for status in manager.statuses}
        assert statuses["old"].state == "ready" and statuses["old"].transport == "sse"
        echoed = await registry.call("mcp__old__echo", '{"text": "over sse"}', _context(workspace))
        assert echoed.ok and echoed.output == "over sse"
        assert statuses["mistyped"].state == "failed"
        assert "the server answered HTTP 405 Method Not Allowed" in (statuses["mistyped"].error or "")
        assert 'An older HTTP+SSE server needs type = "sse" in [mcp.servers.mistyped]' in (
            statuses["mistyped"].error or "")
    finally:
        await manager.aclose()


async def test_a_server_printing_a_banner_on_stdout_works_and_the_sdks_complaint_goes_to_its_log(
        workspace: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    notices: list[str] = []
    manager, registry = _manager(workspace, notices, chatty=faulty(env={"FAULTY_BANNER": "Starting chatty v1.2"}))
    manager.start(log_dir=tmp_path / "logs")
    await registry.ready()
    try:
        echoed = await registry.call("mcp__chatty__echo", '{"text": "still fine"}', _context(workspace))
        assert echoed.ok and echoed.output == "still fine"
    finally:
        await manager.aclose()
    log = (tmp_path / "logs" / "chatty.log").read_text()
    assert "agentcli: the MCP client error: Failed to parse JSONRPC message from server" in log
    assert "Starting chatty v1.2" in log and "Traceback" not in log
    assert "JSONRPC" not in capfd.readouterr().err  # never over the terminal (or the TUI's screen)


class _SilentClient:
    """A connected server that never answers another tools/list (the network edge, faked)."""

    async def list_tools(self, cursor: str | None = None) -> object:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_server_that_never_answers_a_new_listing_is_given_up_within_its_timeout(workspace: Path) -> None:
    connection = Connection(ServerSpec("mute", faulty(timeout_s=0.2), "config"), workspace, None)
    connection.status.state = "ready"
    connection._client = _SilentClient()  # type: ignore[assignment]
    connection._tools_changed()
    relist = connection._relist
    assert relist is not None
    await asyncio.wait_for(relist, 30)  # ends on its own, at timeout_s, keeping the tools it knew
    assert connection.tools == [] and not relist.cancelled()
