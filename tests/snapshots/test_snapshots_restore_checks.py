"""The plan's quick path check passes exactly the paths `safe_relative_path` keeps as they are."""

from __future__ import annotations

import random

import pytest

from agentcli.snapshots.guards import safe_relative_path
from agentcli.snapshots.restorechecks import plain_path

TRICKY = [
    "a", "a/b.txt", "", "/", "/etc/passwd", "a//b", "a/./b", "./a", "a/..", "../a", "a/../b", ".git",
    ".GIT/config", "x/.Git/y", "x/.gitignore", ".gitx", "a/", "a\0b", "..a", "a..", "...", " .git",
    "d\u00e9j\u00e0/vu", "a\\b", ".git.", "x/.git", "sub/.git/HEAD",
]


@pytest.mark.parametrize("path", TRICKY)
def test_plain_paths_are_exactly_what_safe_relative_path_keeps(path: str) -> None:
    assert plain_path(path) == (safe_relative_path(path) == path)


def test_random_paths_agree() -> None:
    rng = random.Random(7)
    alphabet = ["a", "b", ".", "/", "git", "GIT", "..", "\\", " ", "\u00e9", "\0"]
    for _ in range(20000):
        path = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert plain_path(path) == (safe_relative_path(path) == path), repr(path)
