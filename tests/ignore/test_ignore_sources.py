"""Where a workspace's ignore rules come from: a repository's root, a folder inside one, no repository."""

from __future__ import annotations

from pathlib import Path

from agentcli.ignore import NOT_A_REPOSITORY_EXCLUDES, discover
from tests.support.gitenv import git, write


def _ignored(ws: Path, paths: list[tuple[str, bool]]) -> set[str]:
    rules = discover(ws).rules()
    return {p for p, is_dir in paths if rules.is_ignored(p, is_dir)}


def test_a_plain_folder_uses_its_gitignore_files_the_global_excludes_and_agentcli_defaults(
    tmp_path: Path, git_home: Path
) -> None:
    ws = tmp_path / "plain"
    write(ws / ".gitignore", "*.tmp\n!.venv/\n")
    write(git_home / ".config" / "git" / "ignore", "*.secret\n")

    sources = discover(ws)

    assert not sources.in_repository and sources.root == ws and sources.workspace == ""
    assert sources.workspace_excludes() == NOT_A_REPOSITORY_EXCLUDES
    paths = [("a.tmp", False), ("k.secret", False), ("node_modules", True), ("src/__pycache__", True),
             (".venv", True), ("src/app.py", False)]
    assert _ignored(ws, paths) == {"a.tmp", "k.secret", "node_modules", "src/__pycache__"}


def test_a_repository_root_uses_info_exclude_and_no_defaults(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(ws))
    write(ws / ".git" / "info" / "exclude", ".env\n")

    sources = discover(ws)

    assert sources.in_repository and sources.root == ws and sources.workspace == ""
    assert sources.info_exclude == ws / ".git" / "info" / "exclude"
    assert sources.workspace_excludes() == ".env\n"
    assert _ignored(ws, [(".env", False), ("node_modules", True)]) == {".env"}


def test_a_folder_inside_a_repository_uses_the_rules_from_the_repository_root_down(tmp_path: Path) -> None:
    repo = tmp_path / "mono"
    git(tmp_path, "init", "-q", str(repo))
    write(repo / ".gitignore", "*.log\n/pkg/gen/\n/top.txt\n")
    write(repo / ".git" / "info" / "exclude", "/pkg/local.txt\n")
    write(repo / "pkg" / ".gitignore", "!keep.log\n")
    ws = repo / "pkg"
    paths = [("a.log", False), ("keep.log", False), ("gen", True), ("local.txt", False), ("top.txt", False),
             ("src/app.py", False)]
    for rel, is_dir in paths:
        if is_dir:
            (ws / rel).mkdir(parents=True)
        else:
            write(ws / rel)

    sources = discover(ws)
    by_git = {line.removeprefix("pkg/") for line in _check_ignore(repo, [f"pkg/{p}" for p, _ in paths])}

    assert sources.root == repo and sources.workspace == "pkg"
    # What a repository rooted at the workspace may copy: the lines that mean the same there.
    assert sources.workspace_excludes() == "*.log\n"
    assert by_git == {"a.log", "gen", "local.txt"}
    assert _ignored(ws, paths) == by_git
    # The workspace counts as not ignored even where the repository ignores it: the user works there.
    write(repo / ".gitignore", "*.log\n/pkg/gen/\n/top.txt\n/pkg/\n")
    assert _ignored(ws, paths) == by_git


def test_a_linked_worktree_reads_info_exclude_from_the_main_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    git(tmp_path, "init", "-q", str(main))
    git(main, "commit", "-q", "--allow-empty", "-m", "init")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    write(main / ".git" / "info" / "exclude", "*.local\n")
    linked = tmp_path / "linked"

    sources = discover(linked.resolve())

    assert sources.info_exclude == (main / ".git" / "info" / "exclude").resolve()
    assert _ignored(linked.resolve(), [("a.local", False), ("a.txt", False)]) == {"a.local"}


def test_core_excludes_file_relative_absolute_and_default(tmp_path: Path, git_home: Path) -> None:
    ws = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(ws))

    assert discover(ws).excludes_file == git_home / ".config" / "git" / "ignore"
    git(ws, "config", "core.excludesFile", "tools/ignore-list")
    assert discover(ws).excludes_file == ws / "tools" / "ignore-list"
    git(ws, "config", "core.excludesFile", "~/my-ignores")
    assert discover(ws).excludes_file == git_home / "my-ignores"
    write(git_home / "my-ignores", "*.bak\n")
    assert _ignored(ws, [("a.bak", False), ("a.txt", False)]) == {"a.bak"}


def _check_ignore(cwd: Path, paths: list[str]) -> set[str]:
    import subprocess

    proc = subprocess.run(
        ["git", "check-ignore", "--stdin", "-z"], cwd=cwd, input="\0".join(paths) + "\0", capture_output=True, text=True
    )
    return {p for p in proc.stdout.split("\0") if p}


def test_a_workspace_reached_through_a_symlink_is_its_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (tmp_path / "link").symlink_to(repo)

    sources = discover(tmp_path / "link")

    assert sources.root == repo.resolve() and sources.workspace == "" and sources.in_repository
