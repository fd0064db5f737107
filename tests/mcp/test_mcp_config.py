"""`[mcp.servers.NAME]`, `.mcp.json` in Claude Code's format, ``${ENV}`` references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import ConfigError, load_settings
from agentcli.config_mcp import McpSettings
from agentcli.mcp.servers import MissingVariable, expand, resolve_servers, sanitize_server_name


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def test_servers_from_the_workspace_config(workspace: Path) -> None:
    _write(workspace / ".agentcli.toml", """
[mcp.servers.git]
command = "uvx"
args = ["mcp-server-git", "--repository", "."]
timeout_s = 5
deny_tools = ["git_reset"]

[mcp.servers.docs]
url = "https://docs.example/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
research = true
""")
    listing = resolve_servers(load_settings(workspace).mcp, workspace)
    by_name = {spec.name: spec.settings for spec in listing.servers}
    assert by_name["git"].transport == "stdio" and by_name["git"].timeout_s == 5
    assert by_name["git"].deny_tools == ["git_reset"]
    assert by_name["docs"].transport == "http" and by_name["docs"].research is True
    assert by_name["docs"].headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}  # filled in at start


def test_claude_codes_mcp_json_works_unchanged_and_the_config_overrides_it(workspace: Path) -> None:
    _write(workspace / ".mcp.json", json.dumps({"mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"GIT_PAGER": "cat"}},
        "web.search": {"type": "http", "url": "https://search.example/mcp"},
        "old": {"type": "sse", "url": "https://old.example/sse"},
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
    }}))
    _write(workspace / ".agentcli.toml", "[mcp.servers.git]\ntimeout_s = 9\n\n[mcp.servers.fetch]\nenabled = false\n")
    listing = resolve_servers(load_settings(workspace).mcp, workspace)
    by_name = {spec.name: spec for spec in listing.servers}
    assert set(by_name) == {"git", "web_search", "old"} and listing.disabled == ("fetch",)
    git = by_name["git"]
    assert git.settings.command == "uvx" and git.settings.env == {"GIT_PAGER": "cat"}  # from .mcp.json
    assert git.settings.timeout_s == 9 and git.source == ".mcp.json and config"
    assert by_name["old"].settings.transport == "sse"
    assert listing.problems == ()


def test_a_broken_mcp_json_is_a_problem_to_show_not_a_failure(workspace: Path) -> None:
    _write(workspace / ".mcp.json", "{ not json")
    listing = resolve_servers(McpSettings(), workspace)
    assert listing.servers == () and ".mcp.json: not valid JSON" in listing.problems[0]
    assert listing.errors == listing.problems  # it leaves the whole file out
    _write(workspace / ".mcp.json", json.dumps({"mcpServers": {"a": {"args": ["x"]}, "b": {"command": "ok"}}}))
    listing = resolve_servers(McpSettings(), workspace)
    assert [spec.name for spec in listing.servers] == ["b"]
    assert listing.problems[0].endswith(
        ".mcp.json: mcpServers.a: a stdio server needs a `command` (or give a `url` for an HTTP server); "
        "the MCP server 'a' is ignored")
    assert resolve_servers(McpSettings(project_file=False), workspace).servers == ()
    http_without_url = McpSettings.model_validate({"servers": {"web": {"type": "http"}}, "project_file": False})
    assert resolve_servers(http_without_url, workspace).errors == (
        "mcp.servers.web: an http server needs a `url`; the MCP server 'web' is ignored",)


@pytest.mark.parametrize(("toml", "wrong"), [
    ("[mcp.servers.\"my tool\"]\ncommand = \"x\"\n", "server name"),
    ("[mcp.servers.a__b]\ncommand = \"x\"\n", "server name"),
    ("[mcp.servers.web]\ncommand = \"x\"\ntimeout_s = 0\n", "timeout_s"),
    ("[mcp.servers.web]\ncommand = \"x\"\nallow = [\"*\"]\n", "allow"),
])
def test_configuration_mistakes_name_the_file_and_the_field(workspace: Path, toml: str, wrong: str) -> None:
    _write(workspace / ".agentcli.toml", toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(workspace)
    assert ".agentcli.toml" in str(caught.value) and wrong in str(caught.value)


def test_environment_references() -> None:
    env = {"TOKEN": "s3cret", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer s3cret"
    assert expand("${MISSING:-fallback}/${EMPTY:-x}", env) == "fallback/x"
    assert expand("$TOKEN and ${ TOKEN }", env) == "$TOKEN and ${ TOKEN }"  # only ${NAME} is a reference
    with pytest.raises(MissingVariable, match="MISSING"):
        expand("${MISSING}", env)


def test_server_names_from_mcp_json_are_made_fit_for_tool_names() -> None:
    assert sanitize_server_name("web.search") == "web_search"
    assert sanitize_server_name("a__b") == "a_b"
    assert sanitize_server_name("!!!") == "server"


def test_two_mcp_json_names_made_alike_are_refused_not_merged(workspace: Path) -> None:
    _write(workspace / ".mcp.json", json.dumps({"mcpServers": {"my.time": {"command": "a"},
                                                               "my_time": {"command": "b"}}}))
    listing = resolve_servers(McpSettings(), workspace)
    assert [(spec.name, spec.settings.command) for spec in listing.servers] == [("my_time", "a")]
    assert listing.errors == (f"{workspace / '.mcp.json'}: mcpServers.my_time: named like 'my.time' once made fit "
                              "for tool names (both become 'my_time', as in mcp__my_time__TOOL); rename one; "
                              "the MCP server 'my_time' is ignored",)


def test_a_server_the_config_leaves_unreachable_is_named_with_its_file(workspace: Path) -> None:
    _write(workspace / ".agentcli.toml", '[mcp.servers.web]\ntype = "http"\n')
    listing = resolve_servers(load_settings(workspace).mcp, workspace)
    assert listing.errors == (f"{workspace / '.agentcli.toml'}: mcp.servers.web: an http server needs a `url`; "
                              "the MCP server 'web' is ignored",)
