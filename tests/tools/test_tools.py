"""Every tool's success and failure paths, through the registry as the model would call them."""

from __future__ import annotations

import json
import os
import signal
import tracemalloc
import uuid
from pathlib import Path

import pygit2
import pytest

from agentcli.config import ToolSettings
from agentcli.tools import ToolContext, default_registry
from agentcli.tools.base import ToolResult
from tests.support.waiting import eventually, processes_with

REGISTRY = default_registry()


async def call(ws: Path, name: str, args: dict[str, object] | str, **limits: int | float) -> ToolResult:
    raw = args if isinstance(args, str) else json.dumps(args)
    return await REGISTRY.call(name, raw, ToolContext(ws, ToolSettings(**limits)))


# -- the registry: what a model can get wrong -------------------------------------------------


async def test_unknown_tool_names_the_available_ones(workspace: Path) -> None:
    result = await call(workspace, "delete_everything", {})
    assert not result.ok and "unknown tool 'delete_everything'" in result.output and "read_file" in result.output


async def test_malformed_json_is_an_error_the_model_reads(workspace: Path) -> None:
    result = await call(workspace, "read_file", '{"path": "a.py"')
    assert not result.ok and "not valid JSON" in result.output


async def test_non_object_arguments(workspace: Path) -> None:
    result = await call(workspace, "read_file", '["a.py"]')
    assert not result.ok and "must be a JSON object" in result.output


async def test_schema_violations_name_the_field(workspace: Path) -> None:
    missing = await call(workspace, "write_file", {"path": "a.txt"})
    assert not missing.ok and "content" in missing.output
    wrong_type = await call(workspace, "read_file", {"path": "a", "offset": "first"})
    assert not wrong_type.ok and "offset" in wrong_type.output
    extra = await call(workspace, "read_file", {"path": "a", "colour": "red"})
    assert not extra.ok and "unexpected field 'colour'" in extra.output


def test_schemas_are_openai_function_tools() -> None:
    schemas = {s["function"]["name"]: s for s in REGISTRY.schemas()}
    assert set(schemas) == {
        "read_file", "write_file", "edit_file", "list_files", "glob", "grep", "bash", "complete", "clarify", "pause",
    }
    edit = schemas["edit_file"]["function"]["parameters"]
    assert edit["type"] == "object"
    assert set(edit["required"]) == {"path", "old_string", "new_string"}
    assert "replace_all" in edit["properties"]


# -- paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "~/.bashrc", "sub/../../x", ""])
async def test_paths_outside_the_workspace_are_refused(workspace: Path, path: str) -> None:
    for name, args in [("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"})]:
        result = await call(workspace, name, args)
        assert not result.ok, (name, path)
    assert not (workspace.parent / "outside.txt").exists()


async def test_symlink_escaping_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (workspace / "link").symlink_to(secret)
    (workspace / "dirlink").symlink_to(tmp_path)
    assert "outside the workspace" in (await call(workspace, "read_file", {"path": "link"})).output
    assert "outside the workspace" in (await call(workspace, "write_file", {"path": "dirlink/x", "content": "y"})).output
    assert secret.read_text() == "top secret"


async def test_absolute_path_inside_the_workspace_is_fine(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    result = await call(workspace, "read_file", {"path": str(workspace / "a.txt")})
    assert result.ok and "hello" in result.output


# -- read_file --------------------------------------------------------------------------------


async def test_read_numbers_lines_and_pages(workspace: Path) -> None:
    (workspace / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    whole = await call(workspace, "read_file", {"path": "a.txt"})
    assert whole.output.splitlines()[0] == "     1\tline 1"
    page = await call(workspace, "read_file", {"path": "a.txt", "offset": 4, "limit": 2})
    assert page.output.splitlines()[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "[lines 4-5 of 10]" in page.output
    past = await call(workspace, "read_file", {"path": "a.txt", "offset": 50})
    assert not past.ok and "past the end of 'a.txt' (10 lines)" in past.output
    (workspace / "one.txt").write_text("only\n")
    beyond = await call(workspace, "read_file", {"path": "one.txt", "offset": 5})
    assert not beyond.ok and "past the end of 'one.txt' (1 line)" in beyond.output


async def test_read_missing_binary_undecodable_and_huge_files(workspace: Path) -> None:
    assert "does not exist" in (await call(workspace, "read_file", {"path": "nope.py"})).output
    (workspace / "img.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    assert "binary" in (await call(workspace, "read_file", {"path": "img.bin"})).output
    (workspace / "latin.txt").write_bytes("café".encode("latin-1"))
    assert "not UTF-8" in (await call(workspace, "read_file", {"path": "latin.txt"})).output
    (workspace / "big.txt").write_text("x\n" * 5000)
    huge = await call(workspace, "read_file", {"path": "big.txt"}, max_read_bytes=1024)
    assert not huge.ok and "offset and limit" in huge.output
    paged = await call(workspace, "read_file", {"path": "big.txt", "offset": 4999, "limit": 5}, max_read_bytes=1024)
    assert paged.ok and "  4999\tx" in paged.output
    (workspace / "d").mkdir()
    assert "directory" in (await call(workspace, "read_file", {"path": "d"})).output


# -- write_file and edit_file -------------------------------------------------------------------


async def test_write_creates_parents_and_reports_the_change(workspace: Path) -> None:
    result = await call(workspace, "write_file", {"path": "pkg/sub/mod.py", "content": "a = 1\nb = 2\n"})
    assert result.ok and result.files_changed == ("pkg/sub/mod.py",)
    assert result.output == "Created pkg/sub/mod.py (2 lines)"
    assert (workspace / "pkg/sub/mod.py").read_text() == "a = 1\nb = 2\n"
    again = await call(workspace, "write_file", {"path": "pkg/sub/mod.py", "content": "c\r\n"})
    assert again.output == "Overwrote pkg/sub/mod.py (1 line)"  # one line, said in the singular
    assert (workspace / "pkg/sub/mod.py").read_bytes() == b"c\r\n"  # written exactly, no newline translation


async def test_edit_replaces_exactly_one_occurrence(workspace: Path) -> None:
    (workspace / "m.py").write_text("x = 1\ny = 2\n")
    result = await call(workspace, "edit_file", {"path": "m.py", "old_string": "y = 2", "new_string": "y = 3"})
    assert result.ok and result.files_changed == ("m.py",)
    assert (workspace / "m.py").read_text() == "x = 1\ny = 3\n"


async def test_edit_failures_leave_the_file_untouched(workspace: Path) -> None:
    target = workspace / "m.py"
    target.write_text("a = 1\na = 1\n")
    absent = await call(workspace, "edit_file", {"path": "m.py", "old_string": "b = 1", "new_string": "c"})
    assert not absent.ok and "old_string not found in m.py" in absent.output
    ambiguous = await call(workspace, "edit_file", {"path": "m.py", "old_string": "a = 1", "new_string": "c"})
    assert not ambiguous.ok and "occurs 2 times" in ambiguous.output
    same = await call(workspace, "edit_file", {"path": "m.py", "old_string": "a", "new_string": "a"})
    assert not same.ok
    empty = await call(workspace, "edit_file", {"path": "m.py", "old_string": "", "new_string": "z"})
    assert not empty.ok
    missing = await call(workspace, "edit_file", {"path": "none.py", "old_string": "a", "new_string": "b"})
    assert not missing.ok and "does not exist" in missing.output
    assert target.read_text() == "a = 1\na = 1\n"


async def test_edit_replace_all_and_crlf_files(workspace: Path) -> None:
    (workspace / "m.py").write_text("a = 1\na = 1\n")
    result = await call(workspace, "edit_file", {"path": "m.py", "old_string": "a = 1", "new_string": "b", "replace_all": True})
    assert result.ok and "2 occurrences" in result.output
    assert (workspace / "m.py").read_text() == "b\nb\n"
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    crlf = await call(workspace, "edit_file", {"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"})
    assert crlf.ok
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


# -- list_files, glob, grep --------------------------------------------------------------------


def _tree(ws: Path) -> None:
    for rel in ["src/app.py", "src/util/helpers.py", "docs/guide.md", "build/out.py", "README.md"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"# {rel}\ndef handler():\n    return 'TODO'\n")
    (ws / ".gitignore").write_text("build/\n")
    pygit2.init_repository(str(ws))


async def test_list_files_as_a_tree_without_ignored_paths(workspace: Path) -> None:
    _tree(workspace)
    result = await call(workspace, "list_files", {"depth": 3})
    lines = result.output.splitlines()
    assert "src/" in lines and "  util/" in lines and "    helpers.py" in lines
    assert not any("build" in line for line in lines) and ".git/" not in lines
    shallow = await call(workspace, "list_files", {"path": "src", "depth": 1})
    assert "helpers.py" not in shallow.output and "app.py" in shallow.output
    assert not (await call(workspace, "list_files", {"path": "README.md"})).ok


async def test_glob_matches_at_any_depth_and_skips_ignored(workspace: Path) -> None:
    _tree(workspace)
    all_py = (await call(workspace, "glob", {"pattern": "**/*.py"})).output.splitlines()
    assert all_py == ["src/app.py", "src/util/helpers.py"]
    assert (await call(workspace, "glob", {"pattern": "*.md"})).output.splitlines() == ["README.md", "docs/guide.md"]
    assert (await call(workspace, "glob", {"pattern": "src/*.py"})).output == "src/app.py"
    assert "No files match" in (await call(workspace, "glob", {"pattern": "*.rs"})).output


async def test_grep_finds_lines_filters_by_glob_and_reports_bad_regex(workspace: Path) -> None:
    _tree(workspace)
    hits = (await call(workspace, "grep", {"pattern": r"def \w+", "glob": "*.py"})).output.splitlines()
    assert hits == ["src/app.py:2:def handler():", "src/util/helpers.py:2:def handler():"]
    one_file = await call(workspace, "grep", {"pattern": "TODO", "path": "docs/guide.md"})
    assert one_file.output == "docs/guide.md:3:    return 'TODO'"
    bad = await call(workspace, "grep", {"pattern": "(unclosed"})
    assert not bad.ok and "invalid regular expression" in bad.output
    capped = await call(workspace, "grep", {"pattern": "."}, max_matches=2)
    assert "more than 2 matches" in capped.output


# -- bash -------------------------------------------------------------------------------------


async def test_the_workspace_folder_itself_is_named_as_a_folder(workspace: Path) -> None:
    for name, args in (("read_file", {"path": "."}), ("write_file", {"path": "./", "content": "x"})):
        result = await call(workspace, name, args)
        assert not result.ok and "is the workspace folder itself, not a file" in result.output, result.output


async def test_bash_runs_in_the_workspace_and_returns_the_exit_code(workspace: Path) -> None:
    ok = await call(workspace, "bash", {"command": "pwd; echo err >&2"})
    assert ok.ok and str(workspace) in ok.output and "err" in ok.output and "[exit code 0" in ok.output
    failed = await call(workspace, "bash", {"command": "exit 7"})
    assert not failed.ok and failed.error == "exit code 7" and "[exit code 7" in failed.output


async def test_bash_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    marker = workspace / "child-survived"
    child = f"sleep 2.{uuid.uuid4().int % 10**6:06d}"  # in the background subshell's command line too
    result = await call(workspace, "bash", {"command": f"({child}; touch {marker}) & sleep 30", "timeout_s": 0.5})
    assert not result.ok and "timed out after 0.5 s" in result.output
    # Wait for the background subshell to be gone rather than for its 2 s to pass: killed, it
    # never touches the marker; had it survived, it would have touched it before exiting.
    await eventually(lambda: not processes_with(child), what="the background subshell to end")
    assert not marker.exists()


async def test_bash_truncates_keeping_head_and_tail(workspace: Path) -> None:
    result = await call(workspace, "bash", {"command": "seq 1 100000"}, max_output_chars=2000)
    assert result.output.startswith("1\n2\n3\n")
    assert "100000" in result.output and "characters cut" in result.output
    assert len(result.output) < 2300


async def test_bash_keeps_only_head_and_tail_of_a_flood_in_memory(workspace: Path) -> None:
    # 8 s of `yes` once left agentcli 15.8 GB resident: every byte was kept until the end.
    tracemalloc.start()
    try:
        result = await call(workspace, "bash", {"command": "head -c 100000000 /dev/zero | tr '\\0' y"},
                            max_output_chars=2000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"{peak:,} bytes held for 100 MB of output"
    assert result.ok and result.output.startswith("y" * 1000)
    # The mark counts everything cut, what went by unkept included: 100,000,000 - 2,000 kept.
    assert "[... 1 line, 99,998,000 characters cut ...]" in result.output
    assert len(result.output) < 2300


async def test_bash_cut_counts_lines_and_characters_that_were_never_kept(workspace: Path) -> None:
    result = await call(workspace, "bash", {"command": "seq 1 1000000"}, max_output_chars=2000)
    text = "".join(f"{n}\n" for n in range(1, 1000001))
    cut = text[1000 : len(text) - 1000]
    assert f"[... {cut.count(chr(10)) + 1:,} lines, {len(cut):,} characters cut ...]" in result.output
    assert result.output.startswith("1\n2\n") and "1000000" in result.output


async def test_bash_returns_when_the_command_ends_leaving_a_background_job(workspace: Path) -> None:
    marker = f"sleep 600.{uuid.uuid4().int % 10**6:06d}"
    try:
        # The background job holds the output open; waiting for it to close held the call until
        # the timeout, which then killed the job the command meant to leave running.
        result = await call(workspace, "bash", {"command": f"{marker} & echo started", "timeout_s": 20})
        assert result.ok, result.output
        assert "started" in result.output and "timed out" not in result.output
        assert "background process" in result.output
        assert processes_with(marker), "the background job was killed"
    finally:
        for line in processes_with(marker):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


async def test_a_check_that_starts_a_server_in_the_background_returns_when_it_ends(workspace: Path) -> None:
    from agentcli.tools.run_checks import RunChecks

    marker = f"sleep 600.{uuid.uuid4().int % 10**6:06d}"
    try:
        # As bash: waiting for the server to close the output held the check until its timeout,
        # which then killed the server and failed the check.
        result = await RunChecks([f"{marker} & echo serving"], timeout_s=20).run(
            RunChecks.arguments(), ToolContext(workspace, ToolSettings()))
        assert result.ok, result.output
        assert result.data["results"][0]["left_running"] and not result.data["results"][0]["timed_out"]
        assert "serving" in result.output and "background process" in result.output
        assert processes_with(marker), "the server the check started was killed"
    finally:
        for line in processes_with(marker):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


async def test_bash_gets_no_stdin(workspace: Path) -> None:
    result = await call(workspace, "bash", {"command": "read line; echo got:$line", "timeout_s": 5})
    assert "got:" in result.output and "timed out" not in result.output


# -- control tools ------------------------------------------------------------------------------


async def test_control_tools_signal_the_end_of_a_turn(workspace: Path) -> None:
    done = await call(workspace, "complete", {"summary": "all good"})
    assert done.control == "complete" and done.data == {"summary": "all good"}
    ask = await call(workspace, "clarify", {"question": "Which DB?", "options": ["pg", "sqlite"]})
    assert ask.control == "clarify" and ask.data["options"] == ["pg", "sqlite"]
    stop = await call(workspace, "pause", {"reason": "need review"})
    assert stop.control == "pause" and stop.data["reason"] == "need review"
    assert not (await call(workspace, "complete", {})).ok  # a summary is required


async def test_grep_skips_secret_files_unless_named(workspace: Path) -> None:
    (workspace / ".env").write_text("API_TOKEN=hunter2hunter2\n")
    (workspace / "app.py").write_text("token = 'API_TOKEN'\n")
    broad = await call(workspace, "grep", {"pattern": "API_TOKEN"})
    assert broad.output == "app.py:1:token = 'API_TOKEN'"
    named = await call(workspace, "grep", {"pattern": "API_TOKEN", "path": ".env"})
    assert ".env:1:" in named.output


async def test_an_mcp_tool_whose_server_is_not_here_says_so(workspace: Path) -> None:
    """A resumed session's history holds calls to a server since removed from the config."""
    result = await call(workspace, "mcp__github__create_issue", {})
    assert not result.ok and "unknown tool 'mcp__github__create_issue' (no MCP server 'github' is connected" in \
        result.output and "read_file" in result.output
    assert "MCP" not in (await call(workspace, "mcp_nope", {})).output
