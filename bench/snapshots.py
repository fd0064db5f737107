"""Benchmark of the snapshot store against the git CLI doing the same work on its own shadow index.

    python bench/snapshots.py                      # 10,000 and 100,000 files
    python bench/snapshots.py --sizes 10000 --repeat 7

For each size a tree is generated, committed in a real git repository and packed (`git gc`),
so the seeded path (alternates + the user's index) is what gets measured. Then, side by side
in the same run, with the same workspace changes:

- ours: `SnapshotStore.capture / restore / diff`;
- git: `git --git-dir=<shadow> --work-tree=<ws> add -A && git write-tree` on its own index,
  `read-tree` + `checkout-index -a -f` for restores, `git diff` for diffs. Its shadow borrows
  the user's objects too (alternates), and turns filters off like ours.

Medians are printed with the ratio ours/git, then the store size against the repository's `.git`.
No test asserts any of these times; the goals are printed next to the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.snapshots import SnapshotStore  # noqa: E402
from agentcli.snapshots.gc import dir_size  # noqa: E402

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Runs a command, failing loudly."""
    proc = subprocess.run(args, cwd=cwd, env=env or GIT_ENV, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def generate_tree(root: Path, files: int, seed: int = 1) -> list[str]:
    """Writes `files` source-like text files in nested directories; returns their paths."""
    rng = random.Random(seed)
    paths: list[str] = []
    per_dir = 40
    for i in range(files):
        d = i // per_dir
        rel = f"pkg{d // 100:03d}/mod{d % 100:02d}/file{i:06d}.py"
        lines = rng.randint(5, 80)
        body = "".join(
            f"def f{j}():  # {' '.join(rng.choices(WORDS, k=rng.randint(2, 8)))}\n    return {j}\n"
            for j in range(lines // 2)
        )
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
        paths.append(rel)
    (root / ".gitignore").write_text("*.log\n__pycache__/\nbuild/\n")
    return paths


@dataclass
class GitShadow:
    """The git CLI's own shadow repository and index for the same workspace."""

    workspace: Path
    gitdir: Path

    @classmethod
    def create(cls, workspace: Path, where: Path, seed_index: bool) -> GitShadow:
        gitdir = where / "git-shadow.git"
        if gitdir.exists():
            shutil.rmtree(gitdir)
        run("git", "init", "-q", "--bare", str(gitdir))
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text("* -text -filter -ident -working-tree-encoding\n")
        (gitdir / "objects" / "info" / "alternates").write_text(str(workspace / ".git" / "objects") + "\n")
        if seed_index:
            shutil.copy2(workspace / ".git" / "index", gitdir / "index")
        return cls(workspace=workspace, gitdir=gitdir)

    def git(self, *args: str) -> str:
        env = {**GIT_ENV, "GIT_INDEX_FILE": str(self.gitdir / "index")}
        return run("git", "--git-dir", str(self.gitdir), "--work-tree", str(self.workspace), *args, env=env)

    def capture(self) -> str:
        self.git("add", "-A")
        return self.git("write-tree").strip()

    def restore(self, tree: str) -> None:
        self.git("read-tree", tree)
        self.git("checkout-index", "-a", "-f")


def _file_size(path: Path) -> int:
    """Disk space of one file, counted like `dir_size` counts (allocated blocks)."""
    try:
        st = path.stat()
    except OSError:
        return 0
    return st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


@dataclass
class Row:
    """One line of the results table."""

    label: str
    ours: list[float] = field(default_factory=list)
    git: list[float] = field(default_factory=list)
    goal: str = ""

    def line(self) -> str:
        ours = statistics.median(self.ours)
        if self.git:
            theirs = statistics.median(self.git)
            git_text, ratio = f"{theirs:10.1f}", f"{ours / theirs:8.2f}"
        else:
            git_text, ratio = f"{'-':>10}", f"{'-':>8}"
        return f"  {self.label:<38}{ours:10.1f}{git_text}{ratio}   {self.goal}"


class Mutator:
    """Changes k files of the workspace, differently every time."""

    def __init__(self, workspace: Path, paths: list[str]) -> None:
        self.workspace = workspace
        self.paths = paths
        self.counter = 0

    def change(self, k: int) -> list[str]:
        chosen = [self.paths[(self.counter * 7919 + i * 104729) % len(self.paths)] for i in range(k)]
        self.counter += 1
        for rel in chosen:
            with open(self.workspace / rel, "a") as fh:
                fh.write(f"# change {self.counter}\n")
        return chosen


def bench_size(files: int, repeat: int, workdir: Path) -> list[str]:
    """Runs every measurement for one tree size; returns the report lines."""
    base = workdir / f"n{files}"
    if base.exists():
        shutil.rmtree(base)
    ws = base / "ws"
    ws.mkdir(parents=True)
    t0 = time.perf_counter()
    paths = generate_tree(ws, files)
    run("git", "init", "-q", "-b", "main", cwd=ws)
    run("git", "config", "gc.auto", "0", cwd=ws)  # no background gc racing the explicit one
    run("git", "add", "-A", cwd=ws)
    run("git", "commit", "-q", "-m", "generated", cwd=ws)
    run("git", "gc", "-q", cwd=ws)
    run("git", "status", "--porcelain", cwd=ws)  # refresh the user's index stat data, as any user's would be
    setup_s = time.perf_counter() - t0
    git_size = dir_size(ws / ".git")
    rows: list[Row] = []

    # First capture of the committed, clean repository: a fresh store each time.
    first = Row("first capture (clean, committed)", goal="goal < 150 ms at 10k")
    git_first_seeded = Row("  git with a copy of the user's index")
    store_size = index_size = rest_size = packed_index_size = 0
    for i in range(repeat):
        data = base / f"data{i}"
        store = SnapshotStore(ws, data)
        first.ours.append(timed(lambda: store.capture(session_id="bench", reason="session start")))
        store_size = store.size_bytes()
        index_size = _file_size(store.path / "index")
        store.close()  # the session ends: the index is packed at rest
        rest_size = store.size_bytes()
        packed_index_size = _file_size(store.path / "index.z")
        shadow = GitShadow.create(ws, base, seed_index=False)
        first.git.append(timed(shadow.capture))
        seeded = GitShadow.create(ws, base, seed_index=True)
        git_first_seeded.ours.append(first.ours[-1])
        git_first_seeded.git.append(timed(seeded.capture))
        if i < repeat - 1:
            shutil.rmtree(data)
    git_shadow_size = dir_size(shadow.gitdir)
    rows += [first, git_first_seeded]

    # From here on: one store and one git shadow, both warm.
    store = SnapshotStore(ws, base / f"data{repeat - 1}")
    shadow = GitShadow.create(ws, base, seed_index=True)
    shadow.capture()
    mutate = Mutator(ws, paths)

    def both(row: Row, ours: Callable[[], object], theirs: Callable[[], object], i: int) -> None:
        # Same change seen by both; who goes first alternates, so neither always gets a warm cache.
        if i % 2:
            row.git.append(timed(theirs))
            row.ours.append(timed(ours))
        else:
            row.ours.append(timed(ours))
            row.git.append(timed(theirs))

    for k in (0, 1, 100):
        row = Row(f"incremental capture, {k} changed", goal="goal < 150 ms at 10k, <= git")
        # Cheap operations get more runs: this machine's timings are noisy at the 10 ms scale.
        for i in range(repeat * 2 if k < 100 else repeat):
            mutate.change(k)
            both(row, lambda: store.capture(session_id="bench", reason="bash"), shadow.capture, i)
        rows.append(row)
    hinted = Row("incremental, 1 changed, path hint")
    for i in range(repeat * 2):
        changed = mutate.change(1)
        both(
            hinted,
            lambda: store.capture(session_id="bench", reason="edit_file", paths_hint=changed),
            shadow.capture,
            i,
        )
    rows.append(hinted)

    # Restore k changed files back to a snapshot.
    for k in (1, 10, 100):
        row = Row(f"restore, {k} changed files", goal="goal < 100 ms" if k == 10 else "")
        for _ in range(repeat):
            # Both sides capture the target state, the same k files change, each restores it.
            # (The agent captures after every tool call, so the changed state is captured first.)
            target = store.capture(session_id="bench", reason="target")
            target_snap = target.snapshot or store.timeline("bench")[-1]
            git_target = shadow.capture()
            mutate.change(k)
            store.capture(session_id="bench", reason="changed")
            shadow.capture()
            row.ours.append(timed(lambda: store.restore(target_snap, session_id="bench")))
            mutate.change(k)
            shadow.capture()
            row.git.append(timed(lambda: shadow.restore(git_target)))
        rows.append(row)

    # Diff with 100 changed files: two snapshots, and a snapshot against the working tree.
    a = store.capture(session_id="bench", reason="diff a")
    a_snap = a.snapshot or store.timeline("bench")[-1]
    git_a = shadow.capture()
    mutate.change(100)
    b_snap = store.capture(session_id="bench", reason="diff b").snapshot
    git_b = shadow.capture()
    diff_trees = Row("diff two snapshots (100 files)")
    for _ in range(repeat):
        diff_trees.ours.append(timed(lambda: store.diff(a_snap, b_snap)))
        diff_trees.git.append(timed(lambda: shadow.git("diff", "--find-renames", git_a, git_b)))
    rows.append(diff_trees)
    diff_work = Row("diff snapshot vs working tree")
    for _ in range(repeat):
        diff_work.ours.append(timed(lambda: store.diff(a_snap)))
        diff_work.git.append(timed(lambda: shadow.git("diff", git_a)))
    rows.append(diff_work)

    if files <= 20_000:
        # The same tree without its .git: nothing to borrow, every object is new. (Skipped at
        # 100k: the git side alone writes 100k loose objects, minutes on these disks.)
        plain = Row("first capture, not a git repository")
        away = base / "dotgit-away"  # outside the workspace, or it would be captured
        (ws / ".git").rename(away)
        try:
            for i in range(max(1, repeat // 2)):
                data = base / f"plain-data{i}"
                plain_store = SnapshotStore(ws, data)
                plain.ours.append(timed(lambda: plain_store.capture(session_id="bench", reason="start")))
                shutil.rmtree(data)
                gitdir = base / f"plain-git{i}"
                run("git", "init", "-q", "--bare", str(gitdir))
                env = {**GIT_ENV, "GIT_INDEX_FILE": str(gitdir / "index")}
                args = ("git", "--git-dir", str(gitdir), "--work-tree", str(ws))
                plain.git.append(
                    timed(lambda: (run(*args, "add", "-A", env=env), run(*args, "write-tree", env=env)))
                )
                shutil.rmtree(gitdir)
        finally:
            away.rename(ws / ".git")
        rows.append(plain)

    gc_row = Row("gc (pack loose objects)")
    gc_row.ours.append(timed(store.gc))
    gc_row.git.append(timed(lambda: shadow.git("gc", "-q")))
    rows.append(gc_row)

    lines = [
        f"N = {files:,} files (tree generated, committed and packed in {setup_s:.0f} s); "
        f"medians of {repeat} runs, milliseconds",
        f"  {'operation':<38}{'ours':>10}{'git':>10}{'ours/git':>8}",
    ]
    lines += [row.line() for row in rows]
    lines.append(
        f"  store after first capture, at rest (closed): {rest_size / 1024:,.0f} KiB = "
        f"{100 * rest_size / git_size:.1f}% of the repository's .git ({git_size / 1024 / 1024:,.1f} MiB)   goal < 10%"
    )
    lines.append(f"    of which the packed index (index.z): {packed_index_size / 1024:,.0f} KiB")
    lines.append(
        f"  store after first capture, in use: {store_size / 1024:,.0f} KiB = {100 * store_size / git_size:.1f}%"
    )
    user_index = _file_size(ws / ".git" / "index")
    rest = store_size - index_size
    lines.append(
        f"    of which the index (stat cache; the user's own is {user_index / 1024:,.0f} KiB): "
        f"{index_size / 1024:,.0f} KiB; objects, refs and metadata: {rest / 1024:,.0f} KiB = "
        f"{100 * rest / git_size:.1f}%"
    )
    lines.append(f"  git shadow after its unseeded first capture: {git_shadow_size / 1024:,.0f} KiB")
    lines.append(f"  store after the whole run (gc'ed): {store.size_bytes() / 1024:,.0f} KiB")
    return lines


def main() -> None:
    """Parses arguments and prints the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median is printed)")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate trees (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated trees")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"git {run('git', '--version').split()[-1]}, python {sys.version.split()[0]}, workdir {workdir}")
    try:
        for size in args.sizes:
            for line in bench_size(size, args.repeat, workdir):
                print(line, flush=True)
            print(flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
