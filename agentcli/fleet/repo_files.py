"""A local repository's agentcli files as a batch task's clone will have them, without cloning.

A ``repo`` task runs in a clone checked out at its ``ref`` (the repository's HEAD without one),
not in the repository's working tree, whose ``.agentcli.toml`` and workflow files may be
uncommitted edits or another branch's. Checking the task against the working tree would pass a
workflow the clone lacks and refuse one it has. Cloning every repository up front to read a few
TOML files would cost what the check saves, so the files are read from the repository's objects
(pygit2, nothing checked out, the repository only read) into a scratch folder laid out as the
clone will be: the session factory's own checks then run there unchanged.
"""

from __future__ import annotations

from pathlib import Path

WORKFLOWS = Path(".agentcli") / "workflows"
CONFIG = ".agentcli.toml"


def commit_at(repo: Path, ref: str | None) -> str | None:
    """The commit ``ref`` names in ``repo`` (its HEAD for None), or None when it names none or
    ``repo`` is no repository: the clone then fails with git's own words, naming the task."""
    import pygit2

    try:
        repository = pygit2.Repository(str(repo), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        target = repository.head.target if ref is None else repository.revparse_single(ref).peel(pygit2.Commit).id
    except (pygit2.GitError, KeyError, ValueError, TypeError):
        return None
    return str(target)


def write_files(repo: Path, commit: str, into: Path) -> None:
    """Writes ``.agentcli.toml`` and ``.agentcli/workflows/*.toml`` of ``commit`` under ``into``.

    Only regular files are written, as a checkout would make them; a symlink's target is not
    followed (in the clone it may point anywhere, and the session reports what it finds there).
    """
    import pygit2

    repository = pygit2.Repository(str(repo), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    tree = repository[commit].peel(pygit2.Tree)
    regular = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)
    wanted: list[tuple[str, pygit2.Object]] = []
    if CONFIG in tree and tree[CONFIG].filemode in regular:
        wanted.append((CONFIG, tree[CONFIG]))
    folder = WORKFLOWS.as_posix()
    try:
        workflows = tree[folder]
    except KeyError:
        workflows = None
    if isinstance(workflows, pygit2.Tree):
        wanted += [(f"{folder}/{entry.name}", entry) for entry in workflows
                   if entry.name is not None and entry.name.endswith(".toml") and entry.filemode in regular]
    for path, entry in wanted:
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.peel(pygit2.Blob).data)
