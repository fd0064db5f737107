"""Splitting command lines: rules see each command, and what cannot be judged is opaque."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcli.permissions import parse_command


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("git status", ["git status"]),
        ("git   status  ", ["git status"]),
        ("git status; rm -rf ~", ["git status", "rm -rf ~"]),
        ("git status && rm -rf ~", ["git status", "rm -rf ~"]),
        ("false || rm -rf ~", ["false", "rm -rf ~"]),
        ("cat a | sh", ["cat a", "sh"]),
        ("cat a |& sh", ["cat a", "sh"]),
        ("sleep 1 & rm -rf ~", ["sleep 1", "rm -rf ~"]),
        ("git status\nrm -rf ~", ["git status", "rm -rf ~"]),
        ("(cd src && rm -rf build)", ["cd src", "rm -rf build"]),
        ("{ git status; rm x; }", ["git status", "rm x"]),
        ("if git diff --quiet; then rm x; else echo no; fi", ["git diff --quiet", "rm x", "echo no"]),
        ("while true; do rm x; done", ["true", "rm x"]),
        ("echo 'a; b && c'", ["echo 'a; b && c'"]),
        ('echo "a; b | c"', ['echo "a; b | c"']),
        ("echo a\\;b", ["echo a\\;b"]),
        ("echo $'a\\'; rm'", ["echo $'a\\'; rm'"]),
        ("ls # ; rm -rf ~", ["ls"]),
        ("ls a#b; rm", ["ls a#b", "rm"]),
        ("make 2>&1 | tee log", ["make 2>&1", "tee log"]),
        ("echo hi &> out; ls", ["echo hi &> out", "ls"]),
        ("echo hi >| out", ["echo hi >| out"]),
        ("git \\\n  status", ["git status"]),
        ("", []),
        ("   # only a comment", []),
    ],
)
def test_compound_commands_split_into_simple_ones(command: str, parts: list[str]) -> None:
    parsed = parse_command(command)
    assert [part.text for part in parsed.commands] == parts
    assert not parsed.opaque


@pytest.mark.parametrize(
    ("command", "why", "nested"),
    [
        ("echo $(rm -rf ~)", "command substitution", "rm -rf ~"),
        ('echo "$(rm -rf ~)"', "command substitution", "rm -rf ~"),
        ("echo `rm -rf ~`", "command substitution", "rm -rf ~"),
        ("diff <(rm -rf ~) b", "process substitution", "rm -rf ~"),
        ("echo $((1 + $(rm -rf ~)))", "arithmetic", None),
        ("cat <<EOF\nhello\nEOF", "here-document", None),
        ("f() { rm -rf ~; }; f", "function definition", None),
        ("case $x in a) rm;; esac", "case", None),
        ("echo 'unterminated", "unterminated", None),
        ("echo $(echo $(rm -rf ~))", "command substitution", "echo $(rm -rf ~)"),
    ],
)
def test_what_cannot_be_judged_is_opaque(command: str, why: str, nested: str | None) -> None:
    parsed = parse_command(command)
    assert any(why in reason for reason in parsed.opaque), parsed.opaque
    if nested is not None:
        assert nested in parsed.nested


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("make > build.log", True),
        ("make >> build.log", True),
        ("make &> build.log", True),
        ("make >| build.log", True),
        ("make > /dev/null 2>&1", False),
        ("make 2>/dev/null", False),
        ("make 2>&1", False),
        ("echo err >&2", False),
        ("sort < in.txt", False),
        ("echo '>' x", True),  # a quoted `>` looks the same after unquoting: stricter, never looser
    ],
)
def test_output_redirections_are_noticed(command: str, writes: bool) -> None:
    assert parse_command(command).commands[0].writes is writes


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("sudo rm -rf /", "rm -rf /"),
        ("sudo -u bob rm -rf /", "rm -rf /"),
        ("env FOO=1 rm -rf /", "rm -rf /"),
        ("FOO=1 BAR=2 rm -rf /", "rm -rf /"),
        ("timeout 5 rm -rf /", "rm -rf /"),
        ("nice -n 10 rm -rf /", "rm -rf /"),
        ("xargs rm -rf", "rm -rf"),
        ("bash -c 'rm -rf /'", "rm -rf /"),
        ("sh -c \"cd x; rm -rf /\"", "rm -rf /"),
        ("eval rm -rf /", "rm -rf /"),
        ("echo $(rm -rf /)", "rm -rf /"),
    ],
)
def test_deny_rules_see_through_wrappers(command: str, inner: str) -> None:
    assert inner in parse_command(command).deny_candidates()


@given(st.text(max_size=200))
def test_any_text_parses(command: str) -> None:
    parsed = parse_command(command)
    for part in parsed.commands:
        assert part.text and part.text == part.text.strip()
    parsed.deny_candidates()


@given(
    st.lists(st.sampled_from(["git status", "ls -la", "rm -rf ~", "echo 'a;b'", "pytest -q"]), min_size=1, max_size=5),
    st.lists(st.sampled_from([";", "&&", "||", "|", "&", "\n", " ; "]), min_size=4, max_size=4),
)
def test_every_joined_command_is_seen(commands: list[str], separators: list[str]) -> None:
    line = commands[0]
    for command, separator in zip(commands[1:], separators, strict=False):
        line += separator + command
    assert [part.text for part in parse_command(line).commands] == commands
