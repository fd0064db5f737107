"""git's ignore rules as `agentcli.ignore` applies them, each checked against `git check-ignore`."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentcli.ignore import ExcludeSource, IgnoreRules
from tests.support.gitenv import git, write


# -- git's ignore rules, checked against `git check-ignore` ------------------------------------

IGNORE_FILES = {
    ".gitignore": "*.log\n/build\ndocs/*.tmp\n**/cache/\n!important.log\n\\#hash\n# comment\ntrailing\\ \n[Tt]emp?\nout/**\n",
    "pkg/.gitignore": "!debug.log\ngenerated/\n*.o\n!keep.o\nsub/**/deep.txt\n",
    "pkg/inner/.gitignore": "!*.tmp\n",
    "d/.gitignore": "sub/\n",
    "d/x/.gitignore": "!sub/\n",
}
PATHS = [
    ("a.log", False), ("important.log", False), ("pkg/debug.log", False), ("pkg/other.log", False),
    ("build", True), ("lib/build", False), ("src/build", True), ("docs/a.tmp", False), ("docs/deep/a.tmp", False),
    ("x/cache", True), ("x/cache/f", False), ("cache", False), ("#hash", False), ("trailing ", False),
    ("Temp1", False), ("temp12", False), ("out/a/b", False), ("out", True), ("pkg/generated", True),
    ("pkg/generated/x.py", False), ("pkg/a.o", False), ("pkg/keep.o", False), ("pkg/sub/a/b/deep.txt", False),
    ("pkg/sub/deep.txt", False), ("pkg/inner/n.tmp", False), ("d/sub", True), ("d/sub/f", False),
    ("d/x/sub", True), ("d/x/sub/f", False), ("pkg/inner/z.log", False),
]


def _git_ignored(repo: Path, paths: list[tuple[str, bool]]) -> set[str]:
    for path, is_dir in paths:
        target = repo / path
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=repo,
        input="\0".join(p for p, _ in paths) + "\0",
        capture_output=True,
        text=True,
    )
    return {p for p in proc.stdout.split("\0") if p}


def test_ignore_rules_agree_with_git_check_ignore(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    for rel, text in IGNORE_FILES.items():
        write(ws / rel, text)
    write(ws / ".git" / "info" / "exclude", "*.secret\n")
    expected = _git_ignored(ws, PATHS)
    rules = IgnoreRules(ws, [ExcludeSource(path=ws / ".git" / "info" / "exclude")])
    ours = {p for p, is_dir in PATHS if rules.is_ignored(p, is_dir)}
    assert ours == expected


_ATOMS = [
    "a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "x", "[a-c]", "[]a]", "\\*", "[", "**/", "/**", " ", "[[:alpha:]]",
    "[b-a]", "[[:nope:]]", "[[:x]", "[[:alpha:]-b]", "[a-]", "[a-b-c]",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@example(patterns=[(False, ["a", "**/", "b"])])  # git matches the literal prefix first: `ab` is ignored
@example(patterns=[(False, ["a", "/", "/"])])  # only one trailing slash is stripped: matches nothing
@example(patterns=[(False, ["[b-a]"])])  # a reversed range still matches its first character: `b`
@example(patterns=[(False, ["[[:nope:]]"])])  # an unknown class: wildmatch aborts, nothing matches
@example(patterns=[(False, ["[[:x]"])])  # `[:` without `:]` is a literal `[`
@example(patterns=[(False, ["[[:alpha:]-b]"])])  # after a class, `-` ranges from `]`
@example(patterns=[(False, ["**/", "**/", "b"])])  # `**/**/` is `**/`
@given(
    patterns=st.lists(
        st.tuples(st.booleans(), st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=5)), min_size=1, max_size=4
    )
)
def test_wildmatch_translation_agrees_with_git(tmp_path: Path, patterns: list[tuple[bool, list[str]]]) -> None:
    ws = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis reuses tmp_path across examples
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    text = "".join(("!" if neg else "") + "".join(atoms) + "\n" for neg, atoms in patterns)
    write(ws / ".gitignore", text)
    paths = [
        ("a", False), ("b", False), ("ab", False), ("x/a", False), ("c/b", False),
        ("c/x/b", False), ("ba/x", False), ("xx", True), ("b2/a/x", False),
    ]
    expected = _git_ignored(ws, paths)
    rules = IgnoreRules(ws, [ExcludeSource(path=ws / ".git" / "info" / "exclude")])
    assert {p for p, d in paths if rules.is_ignored(p, d)} == expected, text


def test_in_tree_gitignore_symlinks_are_not_followed_but_exclude_files_are(tmp_path: Path, git_home: Path) -> None:
    # git opens .gitignore files with O_NOFOLLOW, but follows info/exclude and core.excludesFile
    # (a global ignore file kept in a dotfiles repository is usually a symlink).
    ws = tmp_path / "ws"
    git(tmp_path, "init", "-q", str(ws))
    write(tmp_path / "rules" / "a", "*.a\n")
    write(tmp_path / "rules" / "b", "*.b\n")
    write(tmp_path / "rules" / "c", "*.c\n")
    os.symlink(tmp_path / "rules" / "a", ws / ".gitignore")
    (ws / ".git" / "info" / "exclude").unlink(missing_ok=True)
    os.symlink(tmp_path / "rules" / "b", ws / ".git" / "info" / "exclude")
    (git_home / ".config" / "git").mkdir(parents=True)
    os.symlink(tmp_path / "rules" / "c", git_home / ".config" / "git" / "ignore")
    paths = [("f.a", False), ("f.b", False), ("f.c", False)]

    expected = _git_ignored(ws, paths)
    info_exclude = ExcludeSource(path=ws / ".git" / "info" / "exclude")
    rules = IgnoreRules(ws, [info_exclude, ExcludeSource(path=git_home / ".config" / "git" / "ignore")])

    assert expected == {"f.b", "f.c"}
    assert {p for p, d in paths if rules.is_ignored(p, d)} == expected


def test_ignore_case_follows_core_ignorecase(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    git(tmp_path, "init", "-q", str(ws))
    git(ws, "config", "core.ignorecase", "true")
    write(ws / ".gitignore", "*.LOG\nBuild/\n[A-C]x\n")
    paths = [("a.log", False), ("build", True), ("bx", False), ("dx", False)]

    expected = _git_ignored(ws, paths)

    assert expected == {"a.log", "build", "bx"}
    assert {p for p, d in paths if IgnoreRules(ws, ignore_case=True).is_ignored(p, d)} == expected
    assert not any(IgnoreRules(ws).is_ignored(p, d) for p, d in paths)


def test_git_directories_are_never_content(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "!.git\n")
    rules = IgnoreRules(tmp_path)
    for path, is_dir in [(".git", True), ("vendor/lib/.git", True), ("sub/.git", False), (".git/config", False)]:
        assert rules.is_ignored(path, is_dir), path
    assert not rules.is_ignored(".gitignore", False)


def test_a_new_engine_sees_an_edited_ignore_file_even_at_the_same_size(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "a.log\n")
    assert IgnoreRules(tmp_path).is_ignored("a.log", False)

    write(tmp_path / ".gitignore", "b.log\n")  # same size, likely the same mtime tick

    fresh = IgnoreRules(tmp_path)
    assert not fresh.is_ignored("a.log", False) and fresh.is_ignored("b.log", False)


def test_exclude_sources_apply_relative_to_their_base_and_below_the_workspace(tmp_path: Path) -> None:
    # A workspace `pkg` inside a tree rooted at tmp_path: the root's `.gitignore` applies with
    # paths relative to the root; an exclude source based at the workspace anchors there.
    write(tmp_path / ".gitignore", "/pkg/gen/\n*.log\n/top.txt\n")
    rules = IgnoreRules(tmp_path, [ExcludeSource(text="/local/\n", base="pkg")], workspace="pkg")

    assert rules.is_ignored("gen", True) and rules.is_ignored("gen/x.py", False)
    assert rules.is_ignored("a.log", False) and rules.is_ignored("local", True)
    assert not rules.is_ignored("top.txt", False) and not rules.is_ignored("sub/local", True)
    assert not rules.workspace_is_root
