"""End to end through a session and the scripted model: MCP tools are offered with the first
request, judged by the permission policy, run, followed by a snapshot when they may write, and
their results reach the model; a broken server never breaks the session."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from agentcli.config import PermissionSettings, Settings
from agentcli.config_mcp import McpServerSettings, McpSettings
from agentcli.events import Notice, PermissionRequested, SnapshotCaptured, StuckDetected, ToolCallFinished
from agentcli.llm.replay import ReplayModel
from agentcli.llm.types import ModelRequest, StreamItem
from agentcli.session.factory import new_session
from agentcli.workflow import builtin_workflow
from agentcli.workflow.model import RESEARCH_TOOLS
from tests.mcp.conftest import faulty, time_server
from tests.support.openai_server import Call, OpenAIServer, Reply
from tests.support.sessions import Recorder, replay


class Watching:
    """The scripted model, keeping every request it was sent."""

    def __init__(self, model: ReplayModel) -> None:
        self.model = model
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        async for item in self.model.stream(request):
            yield item

    def offered(self, index: int) -> set[str]:
        return {tool["function"]["name"] for tool in self.requests[index].tools}

    def tool_results(self, index: int) -> list[str]:
        return [str(m["content"]) for m in self.requests[index].messages if m["role"] == "tool"]


def _settings(mode: str = "edits", allow: list[str] | None = None, deny: list[str] | None = None,
              **servers: McpServerSettings) -> Settings:
    return Settings(model="replay:none", mcp=McpSettings(servers=servers),
                    permissions=PermissionSettings(mode=mode, allow=allow or [], deny=deny or []))  # type: ignore[arg-type]


async def test_read_only_tools_run_and_their_results_reach_the_model(git_workspace: Path) -> None:
    model = Watching(replay(("", [("mcp__time__get_current_time", {"timezone": "UTC"})]),
                            ("", [("complete", {"summary": "told the time"})])))
    session = new_session(git_workspace, _settings(time=time_server()), model_client=model)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        ended = await session.run_turn("what time is it in UTC?")
    finally:
        await session.aclose()
    assert ended.outcome == "completed"
    # The first request already offers the server's tools, with their schemas.
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= model.offered(0)
    schema = next(t for t in model.requests[0].tools if t["function"]["name"] == "mcp__time__get_current_time")
    assert "timezone" in schema["function"]["parameters"]["properties"]
    assert not recorder.of(PermissionRequested)  # marked read-only by the server: runs in edits mode
    answer = json.loads(model.tool_results(1)[0])
    assert answer["timezone"] == "UTC"
    assert [n for n in recorder.of(Notice) if n.kind == "mcp" and "time (2 tools)" in n.text]
    assert not [c for c in recorder.of(SnapshotCaptured) if (c.tool_name or "").startswith("mcp__")]


async def test_a_writing_tool_asks_then_runs_and_is_followed_by_a_snapshot(git_workspace: Path) -> None:
    model = Watching(replay(("", [("mcp__faulty__touch", {"path": "made.txt"})]),
                            ("", [("complete", {"summary": "made it"})])))
    session = new_session(git_workspace, _settings(faulty=faulty()), model_client=model)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        ended = await session.run_turn("make a file")
        assert ended.outcome == "approval"
        asked = recorder.of(PermissionRequested)[0]
        assert asked.tool == "mcp__faulty__touch" and "on the MCP server 'faulty'" in asked.summary
        assert not (git_workspace / "made.txt").exists()
        await session.approve("once")
        ended = await session.wait_turn()
    finally:
        await session.aclose()
    assert ended.outcome == "completed"
    assert (git_workspace / "made.txt").read_text() == "written by the faulty server\n"
    assert model.tool_results(1) == ["wrote made.txt"]
    captured = [c for c in recorder.of(SnapshotCaptured) if any(f.path == "made.txt" for f in c.files)]
    assert captured, "a call whose server may write files is followed by a capture"


async def test_rules_allow_and_deny_mcp_tools_by_pattern(git_workspace: Path) -> None:
    model = Watching(replay(("", [("mcp__faulty__touch", {"path": "a.txt"}), ("mcp__faulty__fail", {})]),
                            ("", [("complete", {"summary": "done"})])))
    settings = _settings(allow=["mcp__faulty__*"], deny=["mcp__faulty__fail"], faulty=faulty())
    session = new_session(git_workspace, settings, model_client=model)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        ended = await session.run_turn("go")
    finally:
        await session.aclose()
    assert ended.outcome == "completed" and not recorder.of(PermissionRequested)
    # A tool denied outright is not offered at all (as Claude Code does); a call of it is refused.
    assert "mcp__faulty__touch" in model.offered(0) and "mcp__faulty__fail" not in model.offered(0)
    touched, failed = model.tool_results(1)
    assert touched == "wrote a.txt"
    assert failed.startswith("Error:") and "mcp__faulty__fail" in failed


async def test_a_broken_server_is_a_notice_and_the_session_goes_on(git_workspace: Path) -> None:
    model = Watching(replay(("", [("mcp__gone__anything", {})]), ("", [("complete", {"summary": "fine"})])))
    settings = _settings(gone=McpServerSettings(command="no-such-mcp-server-here"), time=time_server())
    session = new_session(git_workspace, settings, model_client=model)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        ended = await session.run_turn("go")
    finally:
        await session.aclose()
    assert ended.outcome == "completed"
    assert [n for n in recorder.of(Notice) if "MCP server 'gone' is not available" in n.text]
    assert "mcp__time__get_current_time" in model.offered(0)
    unknown = recorder.of(ToolCallFinished)[0]
    assert not unknown.ok and "unknown tool" in unknown.output and "no MCP server 'gone' is connected" in unknown.output
    assert {s.name: s.state for s in session.mcp_statuses} == {"gone": "failed", "time": "stopped"}


async def test_workflow_phases_pick_mcp_tools_by_pattern_and_research_mark(git_workspace: Path) -> None:
    (git_workspace / ".agentcli" / "workflows").mkdir(parents=True)
    (git_workspace / ".agentcli" / "workflows" / "lookup.toml").write_text("""
name = "lookup"
initial = "look"
[[phases]]
name = "look"
tools = ["read_file", "mcp__time__*", "@research"]
""")
    model = Watching(replay(("", [("complete", {"summary": "ok"})])))
    settings = _settings(time=time_server(), faulty=faulty(research=["echo"]))
    settings = settings.model_copy(update={"workflow": "lookup"})
    session = new_session(git_workspace, settings, model_client=model)
    try:
        await session.run_turn("go")
    finally:
        await session.aclose()
    assert model.offered(0) == {"read_file", "mcp__time__get_current_time", "mcp__time__convert_time",
                                "mcp__faulty__echo", "complete", "clarify", "pause"}
    # plan-build's research phase offers the tools marked for research in the same way.
    assert RESEARCH_TOOLS in builtin_workflow("plan-build").phase("plan.research").tools


async def test_a_model_repeating_an_mcp_call_is_stuck_like_any_other(git_workspace: Path) -> None:
    same = ("", [("mcp__faulty__fail", {"reason": "the repository is locked"})])
    model = Watching(replay(*[same] * 8, ("", [("complete", {"summary": "gave up"})])))
    settings = _settings(mode="all", faulty=faulty()).model_copy(update={"max_steps": 20})
    session = new_session(git_workspace, settings, model_client=model)
    recorder = Recorder()
    session.subscribe(recorder)
    try:
        ended = await session.run_turn("unlock it")
    finally:
        await session.aclose()
    assert ended.outcome == "halted"
    verdicts = recorder.of(StuckDetected)
    assert [v.severity for v in verdicts] == ["recover", "halt"]
    assert "mcp__faulty__fail" in verdicts[0].evidence
    assert len(recorder.of(ToolCallFinished)) < 8


async def test_through_litellms_real_path_the_schemas_are_sent_and_results_return(workspace: Path,
                                                                                 server: OpenAIServer) -> None:
    from agentcli.config import RetrySettings
    from agentcli.llm.litellm_client import LiteLLMClient

    server.add(Reply(calls=[Call("mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00",
                                                             "target_timezone": "Asia/Tokyo"})]),
               Reply(calls=[Call("complete", {"summary": "21:00 in Tokyo"})]))
    settings = Settings(model="openai/test-model", api_base=server.base_url,
                        mcp=McpSettings(servers={"time": time_server()}),
                        retry=RetrySettings(attempts=2, base_delay_s=0.01))
    session = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry))
    try:
        ended = await session.run_turn("noon UTC in Tokyo?")
    finally:
        await session.aclose()
    assert ended.outcome == "completed"
    sent = {tool["function"]["name"]: tool["function"] for tool in server.requests[0]["tools"]}
    assert set(sent["mcp__time__convert_time"]["parameters"]["required"]) == {"source_timezone", "time",
                                                                            "target_timezone"}
    result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]
    assert "Asia/Tokyo" in result["content"] and "21:00" in result["content"]


async def test_images_go_to_a_model_that_reads_them_and_only_to_it(workspace: Path, server: OpenAIServer) -> None:
    from agentcli.config import RetrySettings
    from agentcli.llm.litellm_client import LiteLLMClient

    for model, sees in (("openai/gpt-4o", True), ("openai/test-model", False)):
        server.add(Reply(calls=[Call("mcp__faulty__picture", {})]), Reply(calls=[Call("complete", {"summary": "ok"})]))
        settings = Settings(model=model, api_base=server.base_url, mcp=McpSettings(servers={"faulty": faulty()}),
                            retry=RetrySettings(attempts=2, base_delay_s=0.01))
        session = new_session(workspace, settings, model_client=LiteLLMClient(settings.retry))
        try:
            assert (await session.run_turn("draw")).outcome == "completed"
        finally:
            await session.aclose()
        messages = server.requests[-1]["messages"]
        tool = [m for m in messages if m["role"] == "tool"][-1]
        assert tool["content"].startswith("[image: image/png")
        after = messages[messages.index(tool) + 1:]
        images = [part for m in after if m["role"] == "user" and isinstance(m["content"], list)
                  for part in m["content"] if part.get("type") == "image_url"]
        assert bool(images) is sees, model
        if sees:
            assert images[0]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
