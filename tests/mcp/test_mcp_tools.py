"""Tool names, schema adaptation and results, as the model and the policy see them."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import CallToolResult, EmbeddedResource, ImageContent, TextContent, TextResourceContents, Tool
from mcp_types import ToolAnnotations as Hints

from agentcli.config import PermissionSettings
from agentcli.mcp.declare import declare
from agentcli.mcp.naming import MAX_NAME, offered, server_of, tool_name, tool_prefix
from agentcli.mcp.results import convert_result
from agentcli.mcp.schema import UnusableSchema, adapt_schema
from agentcli.permissions import Policy
from agentcli.permissions.rules import parse_rule


def test_tool_names_fit_every_provider() -> None:
    assert tool_name("git", "git_status") == "mcp__git__git_status"
    assert tool_name("docs", "search.pages v2") == "mcp__docs__search_pages_v2"
    long_a, long_b = tool_name("srv", "x" * 80 + "a"), tool_name("srv", "x" * 80 + "b")
    assert len(long_a) == MAX_NAME and long_a != long_b
    assert server_of("mcp__git__git_status") == "git" and server_of("read_file") is None
    # A long server name is shortened, not the whole name cut: the tool's own name stays readable.
    corporate = "a-very-long-server-name-that-someone-chose-for-their-setup"
    named = tool_name(corporate, "get_current_time")
    assert named.startswith("mcp__a-very-long-server-na_") and named.endswith("__get_current_time")
    assert server_of(named) == tool_prefix(corporate)[len("mcp__"):-2] and len(named) <= MAX_NAME
    assert tool_name(corporate + "2", "x") != tool_name(corporate, "x")
    assert tool_name("a" * 40, "t") == f"mcp__{'a' * 40}__t"  # up to 40 characters, kept whole


def test_allow_and_deny_lists_of_a_server() -> None:
    assert offered("git_status", ["*"], [])
    assert not offered("git_reset", ["*"], ["git_reset"])
    assert not offered("git_log", ["git_status"], [])


def test_schemas_are_adapted_or_refused() -> None:
    plain = adapt_schema({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Args",
                          "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    assert plain == {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert adapt_schema({}) == {"type": "object", "properties": {}}
    merged = adapt_schema({"type": "object", "anyOf": [{"properties": {"id": {"type": "integer"}}, "required": ["id"]},
                                                       {"properties": {"name": {"type": "string"}}}]})
    assert set(merged["properties"]) == {"id", "name"} and "anyOf" not in merged and "required" not in merged
    with pytest.raises(UnusableSchema, match="not an object"):
        adapt_schema({"type": "array", "items": {}})
    with pytest.raises(UnusableSchema, match="not valid JSON Schema"):
        adapt_schema({"type": "object", "properties": {"x": {"type": "no-such-type"}}})
    with pytest.raises(UnusableSchema):
        adapt_schema(["not", "a", "schema"])


def _tool(name: str, read_only: bool | None = None, schema: dict[str, Any] | None = None) -> Tool:
    hints = Hints(read_only_hint=read_only) if read_only is not None else None
    return Tool(name=name, description="Does a thing.", input_schema=schema or {"type": "object"}, annotations=hints)


def test_declarations_carry_the_facts_policy_and_snapshots_read(tmp_path: Any) -> None:
    status = declare("git", _tool("git_status", read_only=True))
    message = {"type": "object", "properties": {"message": {"type": "string"}}}
    commit = declare("git", _tool("git_commit", schema=message))
    quiet = declare("db", _tool("query"), writes_files=False)
    assert status.permission == "read" and status.changes_files == "never"
    assert commit.permission == "command" and commit.changes_files == "always"
    assert quiet.changes_files == "never"
    schema = commit.schema()["function"]
    assert schema["name"] == "mcp__git__git_commit" and "message" in schema["parameters"]["properties"]
    assert commit.summary({"message": "fix"}) == "Call git_commit on the MCP server 'git' (fix)"
    assert declare("docs", _tool("search"), research=["sea*"]).research
    assert not declare("docs", _tool("index"), research=["sea*"]).research


@pytest.mark.parametrize(("mode", "allow", "deny", "status", "commit"), [
    ("ask", [], [], "allow", "ask"),
    ("edits", [], [], "allow", "ask"),
    ("all", [], [], "allow", "allow"),
    ("edits", ["mcp__git__*"], [], "allow", "allow"),
    ("edits", ["mcp__git"], [], "allow", "allow"),
    ("edits", ["mcp__other__*"], [], "allow", "ask"),
    ("all", [], ["mcp__git__git_c*"], "allow", "deny"),
    ("edits", [], ["mcp__git"], "deny", "deny"),
])
def test_permission_policy(tmp_path: Any, mode: str, allow: list[str], deny: list[str], status: str,
                           commit: str) -> None:
    tools = {cls.name: cls for cls in (declare("git", _tool("git_status", read_only=True)),
                                       declare("git", _tool("git_commit")))}
    policy = Policy(PermissionSettings(mode=mode, allow=allow, deny=deny), tmp_path, tools=tools)  # type: ignore[arg-type]
    assert policy.decide("mcp__git__git_status", {}).action == status
    decision = policy.decide("mcp__git__git_commit", {"message": "x"})
    assert decision.action == commit
    if commit == "ask":
        assert decision.rules == ("mcp__git__git_commit",) and "git_commit" in decision.summary
        assert decision.reason.endswith("`mcp__git__git_commit` is an MCP tool its server does not mark read-only "
                                        "and needs approval")


def test_rules_with_tool_patterns_parse() -> None:
    assert parse_rule("mcp__git__*").applies_to("mcp__git__git_log")
    assert not parse_rule("mcp__git").applies_to("mcp__github__x")
    assert not parse_rule("mcp__git").applies_to("bash")


def test_results_become_text_the_model_reads() -> None:
    result = CallToolResult(content=[
        TextContent(text="first"),
        ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri="memo://1", mime_type="text/plain", text="body")),
    ])
    converted = convert_result(result, 10_000, server="s")
    assert converted.ok and converted.output.splitlines()[0] == "first"
    assert "[image: image/png, 8 bytes]" in converted.output
    assert "--- resource memo://1 (text/plain) ---\nbody" in converted.output
    assert converted.data["images"] == ["image/png"]
    structured = convert_result(CallToolResult(content=[], structured_content={"n": 1}), 1000, server="s")
    assert '"n": 1' in structured.output
    error = convert_result(CallToolResult(content=[TextContent(text="no such repo")], is_error=True), 1000, server="s")
    assert not error.ok and error.output == "Error: no such repo" and error.error == "no such repo"
    lines = "\n".join(map(str, range(5000)))
    long = convert_result(CallToolResult(content=[TextContent(text=lines)]), 2000, server="s")
    assert len(long.output) < 2200 and "characters cut" in long.output and long.output.endswith("4999")
