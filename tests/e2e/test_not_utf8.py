"""User files that are not UTF-8 (a UTF-16 save, a stray byte): named with the byte, never a traceback.

Config files stop the command with exit 2; a workflow file is listed as invalid while the others
load; `.mcp.json` is a problem `mcp list` reports (the TUI's theme and keymap files are in
tests/tui).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcli.config_sources import config_home
from tests.e2e.test_cli import agentcli

UTF16_BOM = b"\xff\xfe"


def no_traceback(text: str) -> None:
    assert "Traceback" not in text and "UnicodeDecodeError" not in text, text


@pytest.mark.parametrize("where", ["user", "workspace"])
def test_a_config_file_that_is_not_utf8_exits_2_naming_the_file_and_the_byte(workspace: Path, where: str) -> None:
    path = config_home() / "config.toml" if where == "user" else workspace / ".agentcli.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(UTF16_BOM + 'model = "x"\n'.encode("utf-16-le"))
    proc = agentcli("run", "hi", "--model", "replay:/dev/null", cwd=workspace)
    no_traceback(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    assert f"{path}: not UTF-8 (byte 0xff at offset 0)" in proc.stderr
    assert "UTF-16" in proc.stderr
    assert path.read_bytes().startswith(UTF16_BOM)  # nothing rewritten


def test_a_stray_byte_is_named_where_it_is(workspace: Path) -> None:
    (workspace / ".agentcli.toml").write_bytes(b'model = "caf\xe9"\n')  # latin-1, not UTF-8
    proc = agentcli("mcp", "list", cwd=workspace)
    no_traceback(proc.stderr)
    assert proc.returncode == 2
    assert ".agentcli.toml: not UTF-8 (byte 0xe9 at offset 12)" in proc.stderr


def test_a_workflow_file_that_is_not_utf8_is_listed_and_the_others_still_load(workspace: Path) -> None:
    folder = workspace / ".agentcli" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_bytes(UTF16_BOM)
    (folder / "good.toml").write_text('[[phases]]\nname = "work"\n')
    listing = agentcli("workflows", cwd=workspace)
    no_traceback(listing.stdout + listing.stderr)
    assert listing.returncode == 2  # as for any invalid file
    assert "bad.toml: not UTF-8 (byte 0xff at offset 0)" in listing.stdout
    assert "✓ good" in listing.stdout and "✓ single" in listing.stdout
    run = agentcli("run", "x", "--workflow", "bad", "--model", "replay:/dev/null", cwd=workspace)
    no_traceback(run.stderr)
    assert run.returncode == 2 and "bad.toml" in run.stderr and "not UTF-8" in run.stderr


def test_a_mcp_json_that_is_not_utf8_is_named_by_mcp_list(workspace: Path) -> None:
    (workspace / ".mcp.json").write_bytes(UTF16_BOM + b"{}")
    proc = agentcli("mcp", "list", cwd=workspace)
    no_traceback(proc.stderr)
    assert f"{workspace / '.mcp.json'}: not UTF-8 (byte 0xff at offset 0)" in proc.stderr
    assert os.path.getsize(workspace / ".mcp.json") == 4
