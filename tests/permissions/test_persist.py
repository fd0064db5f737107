"""`always` answers: rules added to .agentcli.toml, the rest of the file kept byte for byte."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcli.permissions import ConfigWriteError, add_rules_to_config

RULES = ["bash:pytest *", 'bash:echo "a\\b"\tx\n', "write_file:docs/[*].md", "bash:émoji 🎉 \x7f"]

LAYOUTS = {
    "no file": None,
    "empty file": "",
    "no permissions table": 'model = "x"  # keep me\n\n[tools]\nbash_timeout_s = 5\n',
    "no trailing newline": 'model = "x"',
    "table without allow": '[permissions]\nmode = "ask"  # comment\ndeny = ["bash:rm *"]\n\n[tools]\nmax_matches = 3\n',
    "table last, no newline": '[permissions]\nmode = "edits"',
    "inline allow": '[permissions]\nallow = ["bash:git status"]  # mine\n[snapshots]\nenabled = false\n',
    "empty allow": '[permissions]\nallow = []\n',
    "empty allow with spaces": '[permissions]\nallow = [ ]  # none yet\n',
    "multi-line allow with comma": '[permissions]\nallow = [\n    "bash:git status",  # why\n    "bash:ls",\n]\n',
    "multi-line allow without comma": '[permissions]\nallow = [\n  "bash:git status",\n  "bash:ls"  # last\n]\nmode = "ask"\n',
    "multi-line with comments inside": '[permissions]\nallow = [\n  # a comment ]\n  "bash:x",\n  # trailing\n]\n',
    "dotted keys at top": 'permissions.mode = "ask"\nmodel = "y"\n',
    "dotted allow at top": 'permissions.allow = ["bash:ls"]\nmodel = "y"\n',
    "quoted names": '["permissions"]\n"allow" = ["bash:ls"]\n',
    "tricky strings elsewhere": (
        'model = "a]#[permissions]"\n[checks]\ncommands = ["x ]", """multi\n]\n[permissions]\n""", \'lit]\']\n'
        "[permissions]\nmode = 'ask'\n"
    ),
    "crlf": '[permissions]\r\nallow = [\r\n  "bash:ls",\r\n]\r\nmode = "ask"\r\n',
    "array of tables after": '[permissions]\nmode = "ask"\n[[servers]]\nname = "a"\n[[servers]]\nname = "b"\n',
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_rules_are_added_and_everything_else_is_kept(tmp_path: Path, layout: str) -> None:
    path = tmp_path / ".agentcli.toml"
    original = LAYOUTS[layout]
    before: dict[str, object] = {}
    if original is not None:
        path.write_bytes(original.encode())
        before = tomllib.loads(original)
    added = add_rules_to_config(path, RULES)
    assert added == RULES
    text = path.read_bytes().decode()
    after = tomllib.loads(text)
    existing = before.get("permissions", {}).get("allow", [])  # type: ignore[union-attr]
    assert after["permissions"]["allow"] == [*existing, *RULES]
    after["permissions"].pop("allow")
    before.setdefault("permissions", {}).pop("allow", None)  # type: ignore[union-attr]
    assert after == before
    if original:
        # Only insertions: the original text, comments and layout included, is all still there.
        assert _only_inserted(original, text), text
    if layout == "crlf":
        assert "\n" not in text.replace("\r\n", "")


def _only_inserted(original: str, edited: str) -> bool:
    """Whether ``edited`` is ``original`` with characters inserted and none removed or changed."""
    remaining = iter(edited)
    return all(char in remaining for char in original)


def test_adding_again_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".agentcli.toml"
    add_rules_to_config(path, ["bash:ls"])
    first = path.read_bytes()
    assert add_rules_to_config(path, ["bash:ls", "bash:ls"]) == []
    assert path.read_bytes() == first


def test_deny_goes_to_the_deny_list(tmp_path: Path) -> None:
    path = tmp_path / ".agentcli.toml"
    path.write_text('[permissions]\nallow = ["bash:ls"]\n')
    add_rules_to_config(path, ["bash:git push"], key="deny")
    assert tomllib.loads(path.read_text())["permissions"] == {"allow": ["bash:ls"], "deny": ["bash:git push"]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('permissions = { mode = "ask" }\n', "inline table"),
        ('[permissions]\nallow = "bash:ls"\n', "not a list"),
        ("[permissions\n", "cannot add"),
        ('permissions = "x"\n', "not a table"),
    ],
)
def test_files_it_cannot_edit_safely_are_left_alone(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / ".agentcli.toml"
    path.write_text(text)
    with pytest.raises(ConfigWriteError, match=message) as error:
        add_rules_to_config(path, ["bash:ls"])
    assert "bash:ls" in str(error.value)
    assert path.read_text() == text


def test_a_symlinked_config_is_edited_where_it_lives(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "agentcli.toml"
    real.parent.mkdir()
    real.write_text('model = "x"\n')
    os.chmod(real, 0o640)
    link = tmp_path / ".agentcli.toml"
    os.symlink(real, link)
    add_rules_to_config(link, ["bash:ls"])
    assert link.is_symlink()
    assert tomllib.loads(real.read_text())["permissions"]["allow"] == ["bash:ls"]
    assert real.stat().st_mode & 0o777 == 0o640


_rule_text = st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=40)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(existing=st.lists(_rule_text, max_size=3), new=st.lists(_rule_text, min_size=1, max_size=3),
       layout=st.sampled_from(sorted(k for k, v in LAYOUTS.items() if v is not None and "allow" not in v)))
def test_any_rule_text_round_trips(tmp_path: Path, existing: list[str], new: list[str], layout: str) -> None:
    path = tmp_path / "round.toml"
    path.write_bytes(LAYOUTS[layout].encode())  # type: ignore[union-attr]
    path_existing = add_rules_to_config(path, existing)
    add_rules_to_config(path, new)
    allow = tomllib.loads(path.read_text(encoding="utf-8"))["permissions"]["allow"]
    assert allow == list(dict.fromkeys([*path_existing, *new]))
